/* The context: its backend, what the last call left (the error, the
 * report), and the names of the public enums. */
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "cnms_cpu.h"
#if HAVE_CUDA
#include "cnms_cuda.h"
#endif

cnms_status
cnms_ctx_new (cnms_backend backend, int device_id, cnms_ctx **out)
{
  cnms_ctx *ctx;
  cnms_status st;

  if (out == NULL)
    return CNMS_ERR_INVALID_ARG;
  *out = NULL;
  if (backend != CNMS_BACKEND_CPU && backend != CNMS_BACKEND_CUDA)
    return CNMS_ERR_INVALID_ARG;

  ctx = calloc (1, sizeof *ctx);
  if (ctx == NULL)
    return CNMS_ERR_NO_MEMORY;
  ctx->backend = backend;
  ctx->b.last_gpu_us = -1.0;
#if HAVE_CUDA
  ctx->ops = backend == CNMS_BACKEND_CPU ? &cnms_cpu_ops : &cnms_cuda_ops;
#else
  if (backend == CNMS_BACKEND_CUDA) {
    free (ctx);
    return CNMS_ERR_UNSUPPORTED;
  }
  ctx->ops = &cnms_cpu_ops;
#endif
  st = ctx->ops->create (&ctx->b, device_id);
  if (st != CNMS_OK) {
    free (ctx);
    return st;
  }
  *out = ctx;
  return CNMS_OK;
}

void
cnms_ctx_free (cnms_ctx *ctx)
{
  if (ctx == NULL)
    return;
  ctx->ops->destroy (&ctx->b);
  free (ctx->rule_thr);
  free (ctx->rule_iou);
  free (ctx->rule_caps);
  free (ctx->payload);
  free (ctx->lane_dets);
  free (ctx->lane_points);
  free (ctx->batch);
  free (ctx->batch_at);
  free (ctx->batch_err);
  free (ctx->batch_t);
  free (ctx->batch_pp);
  free (ctx->batch_heads);
  free (ctx->batch_shape);
  free (ctx->batch_p);
  free (ctx->batch_jobs);
  free (ctx->batch_frame);
  free (ctx->batch_out);
  free (ctx->batch_rep);
  free (ctx->batch_dets);
  free (ctx->batch_table);
  free (ctx->batch_data);
  free (ctx->merge_f);
  free (ctx->merge_idx);
  free (ctx->merge_order);
  free (ctx->merge_state);
  free (ctx->merge_next);
  free (ctx->merge_group);
  free (ctx->merge_head);
  free (ctx->merge_tail);
  free (ctx->merge_out);
  free (ctx->merge_pairs);
  free (ctx->merge_pos);
  free (ctx->tiles_frames);
  free (ctx->tiles_boxes);
  free (ctx->tiles_classes);
  free (ctx);
}

cnms_backend
cnms_ctx_backend (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->backend : CNMS_BACKEND_CPU;
}

const char *
cnms_ctx_error (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.error : "no context";
}

const cnms_report *
cnms_ctx_report (const cnms_ctx *ctx)
{
  static const cnms_report none;

  return ctx != NULL ? &ctx->b.report : &none;
}

cnms_status
cnms_ctx_set_cuda_stream (cnms_ctx *ctx, void *stream)
{
  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  if (ctx->ops->set_stream == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend has no CUDA stream", ctx->ops->name);
  return ctx->ops->set_stream (&ctx->b, stream);
}

int
cnms_cuda_device_count (void)
{
#if HAVE_CUDA
  return cnms_cuda_backend_device_count ();
#else
  return 0;
#endif
}

void
cnms_obb_hull (const cnms_det *d, int frame_width, int frame_height,
    float out[4])
{
  float b[5];

  if (d == NULL || out == NULL)
    return;
  b[0] = d->cx;
  b[1] = d->cy;
  b[2] = d->w;
  b[3] = d->h;
  b[4] = d->angle;
  cnms_obb_hull_clipped (b, (float) frame_width, (float) frame_height, out);
}

const char *
cnms_status_str (cnms_status s)
{
  switch (s) {
    case CNMS_OK:
      return "ok";
    case CNMS_ERR_INVALID_ARG:
      return "invalid argument";
    case CNMS_ERR_BAD_TENSOR:
      return "bad tensor";
    case CNMS_ERR_NO_MEMORY:
      return "out of memory";
    case CNMS_ERR_NO_DEVICE:
      return "no CUDA device";
    case CNMS_ERR_UNSUPPORTED:
      return "unsupported";
    case CNMS_ERR_CUDA:
      return "CUDA error";
    default:
      return "unknown status";
  }
}
