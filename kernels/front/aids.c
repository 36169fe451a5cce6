/* cudanms_static.h: what the project's own programs (tests, benchmarks,
 * the CLI, tensorinject) take from the static library besides the API:
 * sizes, the box mapping and the half conversions they build inputs with,
 * oriented corners, and a context's counters and test options. */
#include <stdlib.h>

#include "front.h"

cnms_status
cnms_parse_size (const char *s, int *width, int *height)
{
  char *end = NULL;
  long long w, h;

  if (s == NULL || width == NULL || height == NULL)
    return CNMS_ERR_INVALID_ARG;
  /* digits only: strtoll would also take signs and spaces */
  if (*s < '0' || *s > '9')
    return CNMS_ERR_INVALID_ARG;
  w = strtoll (s, &end, 10);
  if (*end != 'x' && *end != 'X')
    return CNMS_ERR_INVALID_ARG;
  s = end + 1;
  if (*s < '0' || *s > '9')
    return CNMS_ERR_INVALID_ARG;
  h = strtoll (s, &end, 10);
  if (*end != '\0' || w < 1 || h < 1 || w > CNMS_SIZE_MAX
      || h > CNMS_SIZE_MAX)
    return CNMS_ERR_INVALID_ARG;
  *width = (int) w;
  *height = (int) h;
  return CNMS_OK;
}

int
cnms_map_centre_box (const cnms_params *p, float cx, float cy, float w,
    float h, float out[4])
{
  cnms_map map;

  if (p == NULL || out == NULL || p->model_width < 1 || p->model_height < 1
      || p->frame_width < 1 || p->frame_height < 1)
    return 0;
  cnms_map_init (&map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  return cnms_map_cxcywh (&map, cx, cy, w, h, out);
}

void
cnms_floats_to_halves (const float *f, size_t n, uint16_t *h)
{
  size_t i;

  for (i = 0; i < n; i++)
    h[i] = cnms_float_to_half (f[i]);
}

void
cnms_halves_to_floats (const uint16_t *h, size_t n, float *f)
{
  size_t i;

  for (i = 0; i < n; i++)
    f[i] = cnms_half_to_float (h[i]);
}

void
cnms_obb_corners (float cx, float cy, float w, float h, float angle,
    float out[8])
{
  double sd, cd;
  float sn, cs, ux, uy, vx, vy;

  cnms_sincos_d ((double) angle, &sd, &cd);
  sn = (float) sd;
  cs = (float) cd;
  ux = cnms_fmul (cnms_fmul (w, 0.5f), cs);
  uy = cnms_fmul (cnms_fmul (w, 0.5f), sn);
  vx = -cnms_fmul (cnms_fmul (h, 0.5f), sn);
  vy = cnms_fmul (cnms_fmul (h, 0.5f), cs);
  out[0] = cnms_fadd (cx, cnms_fadd (ux, vx));
  out[1] = cnms_fadd (cy, cnms_fadd (uy, vy));
  out[2] = cnms_fadd (cx, cnms_fsub (vx, ux));
  out[3] = cnms_fadd (cy, cnms_fsub (vy, uy));
  out[4] = cnms_fsub (cx, cnms_fadd (ux, vx));
  out[5] = cnms_fsub (cy, cnms_fadd (uy, vy));
  out[6] = cnms_fsub (cx, cnms_fsub (vx, ux));
  out[7] = cnms_fsub (cy, cnms_fsub (vy, uy));
}

uint64_t
cnms_ctx_alloc_count (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.alloc_count : 0;
}

int
cnms_ctx_batch_heads_made (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->batch_heads_made : 0;
}

void
cnms_ctx_memory (const cnms_ctx *ctx, size_t *host_bytes,
    size_t *pinned_bytes, size_t *device_bytes)
{
  if (host_bytes)
    *host_bytes = ctx ? ctx->b.host_bytes : 0;
  if (pinned_bytes)
    *pinned_bytes = ctx ? ctx->b.pinned_bytes : 0;
  if (device_bytes)
    *device_bytes = ctx ? ctx->b.device_bytes : 0;
}

void
cnms_ctx_set_timing (cnms_ctx *ctx, int on)
{
  if (ctx != NULL) {
    ctx->b.timing = on != 0;
    ctx->b.last_gpu_us = -1.0;
  }
}

double
cnms_ctx_last_gpu_us (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.last_gpu_us : -1.0;
}

void
cnms_ctx_test_option (cnms_ctx *ctx, int option, int value)
{
  if (ctx == NULL)
    return;
  /* the front end's own */
  if (option == CNMS_TEST_HOST_MERGE)
    ctx->host_merge = value != 0;
  else if (ctx->ops->test_option != NULL)
    ctx->ops->test_option (&ctx->b, option, value);
}
