/* The arithmetic that defines cudanms's results, shared verbatim by the CPU
 * backend (C, -ffp-contract=off) and the CUDA kernels (explicit _rn
 * intrinsics). Every float operation below is one IEEE-754 round-to-nearest
 * operation on both sides, so the two backends agree bit for bit.
 * Change nothing here without running the gpu suite. */
#ifndef CNMS_MATH_H
#define CNMS_MATH_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CNMS_HD static __host__ __device__ __forceinline__
#else
#define CNMS_HD static inline
#endif

CNMS_HD float cnms_fadd (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn (a, b);
#else
  return a + b;
#endif
}

CNMS_HD float cnms_fsub (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fsub_rn (a, b);
#else
  return a - b;
#endif
}

CNMS_HD float cnms_fmul (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fmul_rn (a, b);
#else
  return a * b;
#endif
}

CNMS_HD float cnms_fdiv (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fdiv_rn (a, b);
#else
  return a / b;
#endif
}

/* Same selection as std::min/std::max on finite values. */
CNMS_HD float cnms_fmin (float a, float b) { return (b < a) ? b : a; }
CNMS_HD float cnms_fmax (float a, float b) { return (a < b) ? b : a; }

CNMS_HD uint32_t cnms_float_bits (float f)
{
#ifdef __CUDA_ARCH__
  return __float_as_uint (f);
#else
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
#endif
}

CNMS_HD float cnms_bits_float (uint32_t u)
{
#ifdef __CUDA_ARCH__
  return __uint_as_float (u);
#else
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
#endif
}

/* Finite test by bit pattern: immune to -ffast-math style assumptions. */
CNMS_HD int cnms_isfinite (float f)
{
  return (cnms_float_bits (f) & 0x7f800000u) != 0x7f800000u;
}

/* IEEE half to float; exact (every half is a float). */
CNMS_HD float cnms_half_to_float (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;

  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    /* subnormal half: normalise */
    exp = 113u;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      exp--;
    }
    bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
  }
  return cnms_bits_float (bits);
}

/* Sort key: ascending key order == (score descending, index ascending).
 * -0.0 is folded into +0.0 so that equal scores tie on the index. */
CNMS_HD uint64_t cnms_sort_key (float score, uint32_t index)
{
  uint32_t u = cnms_float_bits (score);
  if (u == 0x80000000u)
    u = 0;
  /* order-preserving map float -> uint32 */
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((uint64_t) (~u) << 32) | index;
}

CNMS_HD float cnms_box_area (float x1, float y1, float x2, float y2)
{
  return cnms_fmul (cnms_fsub (x2, x1), cnms_fsub (y2, y1));
}

/* IoU of a kept box a and a later box b, torchvision's formula:
 * inter / (area_a + area_b - inter); 0 when that denominator is 0. */
CNMS_HD float cnms_iou (const float *a, float area_a, const float *b,
    float area_b)
{
  float w = cnms_fmax (0.0f, cnms_fsub (cnms_fmin (a[2], b[2]),
          cnms_fmax (a[0], b[0])));
  float h = cnms_fmax (0.0f, cnms_fsub (cnms_fmin (a[3], b[3]),
          cnms_fmax (a[1], b[1])));
  float inter = cnms_fmul (w, h);
  float den = cnms_fsub (cnms_fadd (area_a, area_b), inter);
  if (den == 0.0f)
    return 0.0f;
  return cnms_fdiv (inter, den);
}

/* Model pixels -> frame pixels: f = (m - pad) / gain, then clip to
 * [0, frame]. Stretch is gain = model/frame per axis and pad 0. */
typedef struct {
  float gain_x, gain_y;
  float pad_x, pad_y;
  float frame_w, frame_h;
} cnms_map;

CNMS_HD float cnms_map_coord (float m, float pad, float gain, float limit)
{
  float f = cnms_fdiv (cnms_fsub (m, pad), gain);
  return cnms_fmin (cnms_fmax (f, 0.0f), limit);
}

/* Maps a model-space box (x1 y1 x2 y2) into out[4]. Returns 1 when it is a
 * candidate box: finite on input, and x2 > x1 and y2 > y1 after clipping. */
CNMS_HD int cnms_map_box (const cnms_map *m, float x1, float y1, float x2,
    float y2, float *out)
{
  if (!cnms_isfinite (x1) || !cnms_isfinite (y1) || !cnms_isfinite (x2)
      || !cnms_isfinite (y2))
    return 0;
  out[0] = cnms_map_coord (x1, m->pad_x, m->gain_x, m->frame_w);
  out[1] = cnms_map_coord (y1, m->pad_y, m->gain_y, m->frame_h);
  out[2] = cnms_map_coord (x2, m->pad_x, m->gain_x, m->frame_w);
  out[3] = cnms_map_coord (y2, m->pad_y, m->gain_y, m->frame_h);
  return out[2] > out[0] && out[3] > out[1];
}

/* Centre form (cx cy w h) to corners, then map. */
CNMS_HD int cnms_map_cxcywh (const cnms_map *m, float cx, float cy, float w,
    float h, float *out)
{
  float hw = cnms_fmul (w, 0.5f);
  float hh = cnms_fmul (h, 0.5f);
  if (!cnms_isfinite (hw) || !cnms_isfinite (hh))
    return 0;
  return cnms_map_box (m, cnms_fsub (cx, hw), cnms_fsub (cy, hh),
      cnms_fadd (cx, hw), cnms_fadd (cy, hh), out);
}

/* Score test shared by every layout: finite and strictly above threshold. */
CNMS_HD int cnms_score_ok (float score, float threshold)
{
  return cnms_isfinite (score) && score > threshold;
}

/* End2end class field: finite, 0 <= c < 2^24 (exact in float). */
CNMS_HD int cnms_class_from_float (float c, int32_t *out)
{
  if (!cnms_isfinite (c) || c < 0.0f || c >= 16777216.0f)
    return 0;
  *out = (int32_t) c;
  return 1;
}

/* Best class: the first maximum, NaN scores ignored; -inf when none. */
#define CNMS_BEST_CLASS_INIT (-__builtin_inff ())

#endif /* CNMS_MATH_H */
