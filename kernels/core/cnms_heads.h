/* The heads of a kept record (docs/contracts.md, "Keypoints" and
 * "Segmentation masks"): the arithmetic shared verbatim by the CPU backend
 * and the CUDA kernels (cnms_math.h's operations: one IEEE-754
 * round-to-nearest operation each, no FMA), so that both give the same
 * bits. */
#ifndef CNMS_HEADS_H
#define CNMS_HEADS_H

#include "cnms_math.h"

/* A keypoint (x, y in model pixels) into the frame: (v - pad) / gain per
 * axis, the arithmetic of a box's coordinates, not clipped. */
CNMS_HD void cnms_map_keypoint (const cnms_map *m, float x, float y,
    float *fx, float *fy)
{
  *fx = cnms_fdiv (cnms_fsub (x, m->pad_x), m->gain_x);
  *fy = cnms_fdiv (cnms_fsub (y, m->pad_y), m->gain_y);
}

/* The pixel rectangle of a mask: the frame pixels X, Y (integers) with
 * x1 <= X < x2 and y1 <= Y < y2, i.e. X in [ceil (x1), ceil (x2)). A kept
 * box lies in [0, frame] (clipped), so the rectangle lies in the frame;
 * it is empty (width or height 0) when no integer falls in a side.
 * cnms_ceil_int: ceil (v) as an int, out of range the nearest int, NaN
 * 0. */
CNMS_HD int cnms_ceil_int (float v)
{
  const float c = ceilf (v);

  /* in range before the conversion: a frame of 2^31 - 64 pixels or more
   * clips a box's x2 to 2^31 in float */
  if (!(c > -2147483648.0f))
    return c < 0.0f ? INT32_MIN : 0;
  return c < 2147483648.0f ? (int) c : INT32_MAX;
}

CNMS_HD void cnms_mask_rect (float x1, float y1, float x2, float y2, int *x,
    int *y, int *width, int *height)
{
  const int cx1 = cnms_ceil_int (x1), cy1 = cnms_ceil_int (y1);
  const int cx2 = cnms_ceil_int (x2), cy2 = cnms_ceil_int (y2);

  *x = cx1;
  *y = cy1;
  *width = cx2 > cx1 ? cx2 - cx1 : 0;
  *height = cy2 > cy1 ? cy2 - cy1 : 0;
}

/* One axis of the sampling of the prototypes at frame pixels: frame pixel
 * X's centre to model pixels, u = (X + 0.5) gain + pad (the box mapping
 * f = (u - pad) / gain, undone), then to prototype coordinates with the
 * align_corners=False rule, v = u s - 0.5 where s = P / model (P the
 * prototypes' size on this axis), v clamped below at 0 (torch's
 * upsample_bilinear2d). */
typedef struct {
  float gain, pad, scale;
  int n;                        /* P */
} cnms_mask_axis;

CNMS_HD void cnms_mask_axis_init (cnms_mask_axis *a, float gain, float pad,
    int protos, int model)
{
  a->gain = gain;
  a->pad = pad;
  a->scale = cnms_fdiv ((float) protos, (float) model);
  a->n = protos;
}

/* The two prototype indices i0 <= i1 (i1 = i0 + 1, but at the last one)
 * and their weights w0 = 1 - w1, w1 = v - i0 of frame pixel X on axis a:
 * torch's upsample_bilinear2d (align_corners=False) at v. */
CNMS_HD void cnms_mask_sample (const cnms_mask_axis *a, int x, int *i0,
    int *i1, float *w0, float *w1)
{
  float u = cnms_fadd (cnms_fmul (cnms_fadd ((float) x, 0.5f), a->gain),
      a->pad);
  float v = cnms_fsub (cnms_fmul (u, a->scale), 0.5f);
  int i;

  if (!(v > 0.0f))
    v = 0.0f;
  if (v >= (float) (a->n - 1))
    i = a->n - 1;
  else
    i = (int) v;
  *i0 = i;
  *i1 = i < a->n - 1 ? i + 1 : i;
  *w1 = cnms_fsub (v, (float) i);
  *w0 = cnms_fsub (1.0f, *w1);
}

/* The logit of a prototype pixel: sum over m ascending of coef[m] times
 * the pixel's value in plane m (protos[m * plane]), from 0, each product
 * and sum rounded. */
CNMS_HD float cnms_mask_logit (const float *coef, const float *protos,
    size_t plane, int n_coeffs)
{
  float l = 0.0f;
  int m;

  for (m = 0; m < n_coeffs; m++)
    l = cnms_fadd (l, cnms_fmul (coef[m], protos[(size_t) m * plane]));
  return l;
}

/* Bilinear interpolation of four logits (v_yx: rows y0, y1, columns x0,
 * x1), in torch's order: wy0 (wx0 v00 + wx1 v01) + wy1 (wx0 v10 + wx1 v11). */
CNMS_HD float cnms_mask_bilinear (float v00, float v01, float v10, float v11,
    float wx0, float wx1, float wy0, float wy1)
{
  return cnms_fadd (cnms_fmul (wy0, cnms_fadd (cnms_fmul (wx0, v00),
              cnms_fmul (wx1, v01))), cnms_fmul (wy1,
          cnms_fadd (cnms_fmul (wx0, v10), cnms_fmul (wx1, v11))));
}

/* Element i of a float32 or float16 tensor, as a float (exact). */
CNMS_HD float cnms_tensor_value (const void *data, int f16, size_t i)
{
  return f16 ? cnms_half_to_float (((const uint16_t *) data)[i])
      : ((const float *) data)[i];
}

/* Keypoint j of anchor a of a yolov8-pose tensor [5 + K D, N] (data
 * row-major, strided by N; d = D) into out[3]: x, y mapped to the frame
 * (cnms_map_keypoint) and the visibility score as it is (NaN for D = 2). */
CNMS_HD void cnms_pose_keypoint (const void *data, int f16, size_t n,
    int d, int j, size_t a, const cnms_map *m, float *out)
{
  const size_t r = 5 + (size_t) j * (size_t) d;

  cnms_map_keypoint (m, cnms_tensor_value (data, f16, r * n + a),
      cnms_tensor_value (data, f16, (r + 1) * n + a), &out[0], &out[1]);
  out[2] = d == 3 ? cnms_tensor_value (data, f16, (r + 2) * n + a)
      : cnms_bits_float (0x7fc00000u);
}

#endif /* CNMS_HEADS_H */
