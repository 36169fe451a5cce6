/* The calls that run NMS: cnms_detect for every layout (the checks, the
 * job for the backend, the heads and the payload of what it kept), and
 * plain NMS on host arrays (boxes, oriented boxes, lanes). */
#include <string.h>

#include "front.h"

cnms_status
cnms_check_lane_distance (cnms_ctx *ctx, float distance)
{
  if (!(distance >= 0.0f) || !cnms_isfinite (distance))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "lane distance %g is not a finite value >= 0", (double) distance);
  if (ctx->ops->nms_lanes == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend does not run lanes", ctx->ops->name);
  return CNMS_OK;
}

/* The checks of a detect that need no tensor: the parameters, the lane
 * distance, and that device tensors come to a CUDA context (the shape
 * rules check the rest, keypoint_dims among them). */
static cnms_status
check_call (cnms_ctx *ctx, const cnms_tensor *t, const cnms_tensor *protos,
    cnms_layout layout, const cnms_params *p)
{
  cnms_status st = cnms_check_params (ctx, p);

  if (st != CNMS_OK)
    return st;
  if (layout == CNMS_LAYOUT_LANEATT) {
    st = cnms_check_lane_distance (ctx, p->lane_distance);
    if (st != CNMS_OK)
      return st;
  }
  if ((t->on_device || (protos != NULL && protos->on_device))
      && ctx->backend != CNMS_BACKEND_CUDA)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "a device tensor needs the CUDA backend (context is %s)",
        ctx->ops->name);
  return CNMS_OK;
}

/* The first rows rows of a [1, a, N] / [a, N] tensor t (strided by N),
 * its first n_classes score rows after cx cy w h: a yolov8 tensor
 * [1, rows, N] of its own, at the same address. */
static void
row_prefix (const cnms_tensor *t, int rows, int n_classes, cnms_tensor *sub,
    cnms_shape *shape)
{
  *sub = *t;
  sub->dims[sub->n_dims - 2] = rows;
  sub->size = (size_t) rows * (size_t) t->dims[t->n_dims - 1]
      * cnms_dtype_size (t->dtype);
  memset (shape, 0, sizeof *shape);
  shape->layout = CNMS_LAYOUT_YOLOV8;
  shape->n_anchors = (int) t->dims[t->n_dims - 1];
  shape->n_classes = n_classes;
  shape->n_values = rows;
}

cnms_status
cnms_job_init (cnms_ctx *ctx, const cnms_tensor *t, const cnms_shape *shape,
    const cnms_params *p, cnms_job *job)
{
  const cnms_layout_row *row = cnms_layout_row_of (shape->layout);
  cnms_status st;

  memset (job, 0, sizeof *job);
  job->t = t;
  job->shape = *shape;
  job->p = p;
  job->geom = row->geom;
  job->suppress = !row->decode_only;
  job->lane_distance = p->lane_distance;
  cnms_map_init (&job->map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  job->map.min_w = p->min_width;
  job->map.min_h = p->min_height;
  st = cnms_resolve_rules (ctx, p, &job->rules);
  if (st != CNMS_OK)
    return st;
  if (row->geom == CNMS_GEOM_LANE)
    job->rules.caps = 0;        /* a lane has no class of its own */
  return CNMS_OK;
}

int
cnms_job_heads (cnms_job *job, cnms_head head, const cnms_tensor *t,
    const cnms_tensor *protos, const cnms_shape *shape, cnms_heads_args *h,
    cnms_tensor *sub)
{
  if (!cnms_heads_init (h, job, head, t, protos, shape))
    return 0;
  /* the engine takes the yolov8 tensor of the box and score rows */
  row_prefix (t, 4 + shape->n_classes, shape->n_classes, sub, &job->shape);
  job->t = sub;
  job->heads = h;
  return 1;
}

/* A failed call leaves nothing behind. */
static cnms_status
fail_clear (cnms_ctx *ctx, cnms_status st, const cnms_det **dets,
    int *n_dets)
{
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  cnms_payload_clear (ctx);
  *dets = NULL;
  *n_dets = 0;
  return st;
}

cnms_status
cnms_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_tensor *protos,
    cnms_layout layout, const cnms_params *p, const cnms_det **dets,
    int *n_dets)
{
  const cnms_layout_row *row;
  cnms_shape shape;
  cnms_tensor sub;
  cnms_heads_args h;
  cnms_backend_out out;
  cnms_job job;
  cnms_status st;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  cnms_payload_clear (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  if (t == NULL || p == NULL || dets == NULL || n_dets == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect: NULL argument");
  *dets = NULL;
  *n_dets = 0;
  if (cnms_layout_info (layout) == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "unknown layout %d", (int) layout);
  st = check_call (ctx, t, protos, layout, p);
  if (st != CNMS_OK)
    return st;
  st = cnms_tensor_shape (t, protos, layout, p, &shape, ctx->b.error,
      sizeof ctx->b.error);
  if (st != CNMS_OK)
    return st;
  if (shape.n_anchors == 0) {
    /* an empty end2end result: nothing for a backend to do */
    static const cnms_det none[1];

    ctx->b.report.shape = shape;
    *dets = none;
    return CNMS_OK;
  }

  row = cnms_layout_row_of (shape.layout);
  st = cnms_job_init (ctx, t, &shape, p, &job);
  if (st != CNMS_OK)
    return st;
  cnms_job_heads (&job, row->d.head, t, protos, &shape, &h, &sub);

  memset (&out, 0, sizeof out);
  st = ctx->ops->detect (&ctx->b, &job, &out);
  if (st != CNMS_OK)
    return fail_clear (ctx, st, dets, n_dets);
  ctx->b.report.shape = shape;
  ctx->b.report.candidates_dropped =
      ctx->b.report.candidates > p->max_candidates ?
      ctx->b.report.candidates - p->max_candidates : 0;

  st = cnms_payload_finish (ctx, &job, row->d.head, &h, &shape, &out);
  if (st != CNMS_OK)
    return fail_clear (ctx, st, dets, n_dets);
  ctx->b.report.kept = out.n_dets;
  *dets = out.dets;
  *n_dets = out.n_dets;
  return CNMS_OK;
}

/* The checks every plain NMS call shares: its output count, n, and its
 * arrays (rows: boxes or proposals) when n > 0. */
static cnms_status
plain_begin (cnms_ctx *ctx, const char *fn, const char *rows,
    const void *in, const float *scores, int n, int64_t *keep, int *n_keep)
{
  ctx->b.error[0] = '\0';
  cnms_payload_clear (ctx);
  if (n_keep == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: n_keep is NULL", fn);
  *n_keep = 0;
  if (n < 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: n = %d is negative", fn, n);
  if (n > 0 && (in == NULL || scores == NULL || keep == NULL))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: NULL %s, scores or keep", fn, rows);
  return CNMS_OK;
}

/* cnms_nms and cnms_nms_rotated: the checks, then the backend. */
static cnms_status
plain_nms (cnms_ctx *ctx, int geom, const char *fn, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int class_agnostic, int max_detections, int64_t *keep, int *n_keep)
{
  cnms_status st;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  st = plain_begin (ctx, fn, "boxes", boxes, scores, n, keep, n_keep);
  if (st != CNMS_OK)
    return st;
  if (!(iou >= 0.0f && iou <= 1.0f))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "iou %g is outside [0, 1]", (double) iou);
  if (n == 0)
    return CNMS_OK;
  return ctx->ops->nms (&ctx->b, geom, boxes, scores, classes, n, iou,
      class_agnostic, max_detections, keep, n_keep);
}

cnms_status
cnms_nms (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  return plain_nms (ctx, CNMS_GEOM_BOX, "cnms_nms", boxes, scores, classes,
      n, iou, class_agnostic, max_detections, keep, n_keep);
}

cnms_status
cnms_nms_rotated (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  return plain_nms (ctx, CNMS_GEOM_OBB, "cnms_nms_rotated", boxes, scores,
      classes, n, iou, class_agnostic, max_detections, keep, n_keep);
}

cnms_status
cnms_nms_lanes (cnms_ctx *ctx, const float *proposals, int n_offsets,
    const float *scores, int n, float distance, int max_detections,
    int64_t *keep, int *n_keep)
{
  cnms_status st;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  st = plain_begin (ctx, "cnms_nms_lanes", "proposals", proposals, scores, n,
      keep, n_keep);
  if (st == CNMS_OK && (n_offsets < 2 || n_offsets > (1 << 20)))
    st = cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_nms_lanes: n_offsets = %d is outside [2, 2^20]", n_offsets);
  if (st == CNMS_OK)
    st = cnms_check_lane_distance (ctx, distance);
  if (st != CNMS_OK || n == 0)
    return st;
  return ctx->ops->nms_lanes (&ctx->b, proposals, n_offsets, scores, n,
      distance, max_detections, keep, n_keep);
}
