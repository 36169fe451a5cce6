/* The arithmetic that defines cudanms's results, shared verbatim by the CPU
 * backend (C, -ffp-contract=off) and the CUDA kernels (explicit _rn
 * intrinsics). Every float operation below is one IEEE-754 round-to-nearest
 * operation on both sides, so the two backends agree bit for bit.
 * Change nothing here without running the gpu suite. */
#ifndef CNMS_MATH_H
#define CNMS_MATH_H

#include <math.h>
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

/* Float to IEEE half, rounded to nearest even (what numpy's astype does):
 * subnormals, infinities and NaN (payload kept, made quiet) included. */
CNMS_HD uint16_t cnms_float_to_half (float f)
{
  uint32_t x = cnms_float_bits (f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  uint32_t m, rem, halfway;
  int e, shift;

  if (exp == 0xffu)
    return (uint16_t) (sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  e = (int) exp - 112;
  if (e >= 31)
    return (uint16_t) (sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10)
      return (uint16_t) sign;
    man |= 0x800000u;
    shift = 14 - e;
    m = man >> shift;
    rem = man & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (m & 1)))
      m++;
    return (uint16_t) (sign | m);
  }
  m = man >> 13;
  rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1)))
    m++;
  /* a carry out of the mantissa rounds up into the exponent, or to inf */
  return (uint16_t) (sign | (((uint32_t) e << 10) + m));
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
  float den;
  /* no overlap: the quotient would be a zero (its sign aside: every
   * caller compares the IoU with a threshold >= 0) or the 0-denominator
   * case; skipping the division spares the slowest operation */
  if (inter == 0.0f)
    return 0.0f;
  den = cnms_fsub (cnms_fadd (area_a, area_b), inter);
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
  float min_w, min_h;           /* the least box a candidate has (0: any) */
} cnms_map;

/* The model->frame mapping of a model_w x model_h input for a frame_w x
 * frame_h frame: ultralytics' scale_boxes letterbox (one gain, symmetric
 * padding rounded with the same -0.1 bias), or a plain stretch. */
CNMS_HD void cnms_map_init (cnms_map *m, int model_w, int model_h,
    int frame_w, int frame_h, int letterbox)
{
  float fw = (float) frame_w, fh = (float) frame_h;
  float mw = (float) model_w, mh = (float) model_h;

  m->frame_w = fw;
  m->frame_h = fh;
  m->min_w = 0.0f;
  m->min_h = 0.0f;
  if (letterbox) {
    float gain = cnms_fmin (cnms_fdiv (mw, fw), cnms_fdiv (mh, fh));
    m->gain_x = gain;
    m->gain_y = gain;
    m->pad_x = roundf (cnms_fsub (cnms_fmul (cnms_fsub (mw,
                    cnms_fmul (fw, gain)), 0.5f), 0.1f));
    m->pad_y = roundf (cnms_fsub (cnms_fmul (cnms_fsub (mh,
                    cnms_fmul (fh, gain)), 0.5f), 0.1f));
  } else {
    m->gain_x = cnms_fdiv (mw, fw);
    m->gain_y = cnms_fdiv (mh, fh);
    m->pad_x = 0.0f;
    m->pad_y = 0.0f;
  }
}

CNMS_HD float cnms_map_coord (float m, float pad, float gain, float limit)
{
  float f = cnms_fdiv (cnms_fsub (m, pad), gain);
  return cnms_fmin (cnms_fmax (f, 0.0f), limit);
}

/* Maps a model-space box (x1 y1 x2 y2) into out[4]. Returns 1 when it is a
 * candidate box: finite on input, and x2 > x1 and y2 > y1 after clipping,
 * with x2 - x1 >= min_w and y2 - y1 >= min_h. */
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
  return out[2] > out[0] && out[3] > out[1]
      && cnms_fsub (out[2], out[0]) >= m->min_w
      && cnms_fsub (out[3], out[1]) >= m->min_h;
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

/* Best class: the first maximum, NaN scores ignored; -inf (class 0) when
 * none. A scan folds class scores in increasing class order; partial
 * maxima of disjoint class sets (parallel scans) combine with
 * cnms_best_merge into the same (score, class) as one scan. */
#define CNMS_BEST_CLASS_INIT (-__builtin_inff ())
#define CNMS_INF (__builtin_inff ())

CNMS_HD void cnms_best_fold (float v, int32_t c, float *best, int32_t *cls)
{
  if (v > *best) {
    *best = v;
    *cls = c;
  }
}

CNMS_HD void cnms_best_merge (float v, int32_t c, float *best, int32_t *cls)
{
  if (v > *best || (v == *best && c < *cls)) {
    *best = v;
    *cls = c;
  }
}

/* The per-anchor rule of the YOLO layouts: an anchor with this score and
 * centre box (model pixels) is a candidate when the score passes and the
 * box maps to a non-empty frame box (written to box). score is the best
 * class score (yolov8), or objectness x best class score (yolov5:
 * cnms_yolov5_score). */
CNMS_HD int cnms_anchor_candidate (const cnms_map *m, float score, float thr,
    float cx, float cy, float w, float h, float *box)
{
  return cnms_score_ok (score, thr) && cnms_map_cxcywh (m, cx, cy, w, h, box);
}

CNMS_HD float cnms_yolov5_score (float objectness, float best_class)
{
  return cnms_fmul (objectness, best_class);
}

/* What the class field of an end2end row with a candidate's score is: a
 * class id, no class id (dropped: cnms_class_from_float fails), or a
 * fractional value (truncated to an id). Rows without a candidate's score
 * are none of these. */
enum {
  CNMS_E2E_CLASS_NONE = 0,      /* not a candidate's score, or an integer id */
  CNMS_E2E_CLASS_INVALID,
  CNMS_E2E_CLASS_FRACTIONAL
};

CNMS_HD int cnms_end2end_class_kind (const float *row, float thr)
{
  int32_t c;

  if (!cnms_score_ok (row[4], thr))
    return CNMS_E2E_CLASS_NONE;
  if (!cnms_class_from_float (row[5], &c))
    return CNMS_E2E_CLASS_INVALID;
  return (float) c != row[5] ? CNMS_E2E_CLASS_FRACTIONAL : CNMS_E2E_CLASS_NONE;
}

/* The per-class rules of a call, resolved by the front end from
 * cnms_params: the score threshold and the class-aware IoU of class c are
 * thr[c] and iou[c] for 0 <= c < n, thr_rest and iou_rest for any other
 * id. thr, iou: n entries where the backend reads them (device memory on
 * the CUDA backend); NULL when n is 0. */
typedef struct {
  const float *thr;
  const float *iou;
  int n;
  float thr_rest, iou_rest;
  float thr_min;                /* the least threshold of any class: a score
                                 * not above it passes none */
} cnms_class_rules;

CNMS_HD float cnms_class_thr (const cnms_class_rules *r, int32_t c)
{
  return c >= 0 && c < r->n ? r->thr[c] : r->thr_rest;
}

CNMS_HD float cnms_class_iou (const cnms_class_rules *r, int32_t c)
{
  return c >= 0 && c < r->n ? r->iou[c] : r->iou_rest;
}

/* The end2end row rule: x1 y1 x2 y2 score class, already suppressed; the
 * score is tested against its class's threshold. */
CNMS_HD int cnms_end2end_candidate (const cnms_map *m, const float *row,
    const cnms_class_rules *r, float *box, int32_t *cls)
{
  return cnms_class_from_float (row[5], cls)
      && cnms_score_ok (row[4], cnms_class_thr (r, *cls))
      && cnms_map_box (m, row[0], row[1], row[2], row[3], box);
}

/* The overlap rule of the suppression test: IoU strictly above iou. The
 * CPU walk's scalar comparisons call this; its SIMD lanes compute the same
 * operations in the same order with the same strict compare (tested bit
 * for bit against this, cpu_nms_index.h). */
CNMS_HD int cnms_iou_above (const float *a, float area_a, const float *b,
    float area_b, float iou)
{
  return cnms_iou (a, area_a, b, area_b) > iou;
}

/* The suppression test of the NMS engine, the one place where overlap is
 * defined: does kept box a (corners, area, class) suppress a later box b?
 * The CUDA mask builder calls this; the CPU walk, which walks each class
 * on its own, calls its overlap rule cnms_iou_above. A rotated-box or
 * lane overlap would replace it, not the engine around it. */
CNMS_HD int cnms_suppresses (const float *a, float area_a, int32_t cls_a,
    const float *b, float area_b, int32_t cls_b, float iou, int agnostic)
{
  return (agnostic || cls_a == cls_b)
      && cnms_iou_above (a, area_a, b, area_b, iou);
}

#endif /* CNMS_MATH_H */
