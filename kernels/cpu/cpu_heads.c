/* The heads of the kept records on the CPU (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"): keypoints gathered and mapped,
 * instance masks from the prototypes. The arithmetic is cnms_heads.h's,
 * shared with the CUDA kernels. */
#include <string.h>

#include "cpu_priv.h"
#include "cnms_heads.h"

/* Returns a failed cnms_status. */
#define CNMS_TRY_CPU(call)                                                  \
  do {                                                                      \
    cnms_status s_ = (call);                                                \
    if (s_ != CNMS_OK)                                                      \
      return s_;                                                            \
  } while (0)

/* The keypoints of the kept records: 3 floats each of K per record. */
static cnms_status
pose (cnms_backend_ctx *ctx, cnms_heads_ws *w, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  const int k = h->n_keypoints;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->n_anchors;
  float *out;
  int i, j;

  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->keypoints,
          ((size_t) n * (size_t) k + 1) * 3 * sizeof (float)));
  out = w->keypoints.p;
  for (i = 0; i < n; i++)
    for (j = 0; j < k; j++)
      cnms_pose_keypoint (h->t->data, f16, na, h->keypoint_dims, j,
          (size_t) (uint32_t) dets[i].anchor, &h->map,
          out + 3 * ((size_t) i * k + j));
  ctx->keypoints = out;
  return CNMS_OK;
}

/* The samples of n frame pixels from x on one axis. */
static void
axis_samples (const cnms_mask_axis *a, int x, int n, int32_t *i0,
    int32_t *i1, float *w0, float *w1)
{
  int i;

  for (i = 0; i < n; i++) {
    int lo, hi;

    cnms_mask_sample (a, x + i, &lo, &hi, &w0[i], &w1[i]);
    i0[i] = lo;
    i1[i] = hi;
  }
}

/* The masks of the kept records: per record, the logits of the window of
 * prototype pixels its rectangle samples (m outermost: each logit still
 * sums m ascending from 0), then each pixel's bilinear logit > 0. */
static cnms_status
seg (cnms_backend_ctx *ctx, cnms_heads_ws *w, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  const int mc = h->n_coeffs, hp = h->proto_h, wp = h->proto_w;
  const size_t plane = (size_t) hp * (size_t) wp;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->n_anchors;
  const float *protos;
  cnms_mask_axis ax, ay;
  int maxw = 1, maxh = 1, i;
  uint8_t *bytes;

  for (i = 0; i < n; i++) {
    if (h->masks[i].width > maxw)
      maxw = h->masks[i].width;
    if (h->masks[i].height > maxh)
      maxh = h->masks[i].height;
  }
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->mask_bytes,
          h->mask_bytes > 0 ? h->mask_bytes : 1));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->cols,
          (size_t) maxw * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->rows,
          (size_t) maxh * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->coef,
          (size_t) mc * sizeof (float)));
  /* a window is at most the prototypes' plane */
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->logits, plane * sizeof (float)));
  if (f16) {
    CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->protos,
            (size_t) mc * plane * sizeof (float)));
    cnms_cpu_halfs_to_floats (h->protos->data, (int) ((size_t) mc * plane),
        w->protos.p);
    protos = w->protos.p;
  } else {
    protos = h->protos->data;
  }
  bytes = w->mask_bytes.p;
  cnms_mask_axis_init (&ax, h->map.gain_x, h->map.pad_x, wp, h->model_w);
  cnms_mask_axis_init (&ay, h->map.gain_y, h->map.pad_y, hp, h->model_h);

  for (i = 0; i < n; i++) {
    const cnms_mask *r = &h->masks[i];
    const size_t a = (size_t) (uint32_t) dets[i].anchor;
    int32_t *cx0 = w->cols.p, *cx1 = cx0 + maxw;
    float *wx0 = (float *) (cx1 + maxw), *wx1 = wx0 + maxw;
    int32_t *ry0 = w->rows.p, *ry1 = ry0 + maxh;
    float *wy0 = (float *) (ry1 + maxh), *wy1 = wy0 + maxh;
    float *coef = w->coef.p, *lg = w->logits.p;
    uint8_t *dst = bytes + r->offset;
    int ix0, iy0, ww, wh, x, y, m;

    if (r->width == 0 || r->height == 0)
      continue;
    axis_samples (&ax, r->x, r->width, cx0, cx1, wx0, wx1);
    axis_samples (&ay, r->y, r->height, ry0, ry1, wy0, wy1);
    ix0 = cx0[0];
    iy0 = ry0[0];
    ww = cx1[r->width - 1] - ix0 + 1;
    wh = ry1[r->height - 1] - iy0 + 1;
    for (m = 0; m < mc; m++)
      coef[m] = cnms_tensor_value (h->t->data, f16,
          ((size_t) h->row0 + (size_t) m) * na + a);
    /* the window's logits: sum over m ascending, from 0 */
    for (y = 0; y < wh; y++) {
      float *lrow = lg + (size_t) y * ww;
      const float *prow = protos + (size_t) (iy0 + y) * wp + ix0;

      for (x = 0; x < ww; x++)
        lrow[x] = 0.0f;
      for (m = 0; m < mc; m++) {
        const float c = coef[m];
        const float *pm = prow + (size_t) m * plane;

        for (x = 0; x < ww; x++)
          lrow[x] = cnms_fadd (lrow[x], cnms_fmul (c, pm[x]));
      }
    }
    for (y = 0; y < r->height; y++) {
      const float *l0 = lg + (size_t) (ry0[y] - iy0) * ww;
      const float *l1 = lg + (size_t) (ry1[y] - iy0) * ww;
      uint8_t *drow = dst + (size_t) y * r->width;

      for (x = 0; x < r->width; x++) {
        const int a0 = cx0[x] - ix0, a1 = cx1[x] - ix0;

        drow[x] = cnms_mask_bilinear (l0[a0], l0[a1], l1[a0], l1[a1],
            wx0[x], wx1[x], wy0[y], wy1[y]) > 0.0f;
      }
    }
  }
  ctx->mask_data = bytes;
  return CNMS_OK;
}

cnms_status
cnms_cpu_heads (cnms_backend_ctx *ctx, cnms_heads_ws *w,
    const cnms_heads_args *h, const cnms_det *dets, int n)
{
  if (h->kind == CNMS_HEAD_POSE)
    return pose (ctx, w, h, dets, n);
  return seg (ctx, w, h, dets, n);
}
