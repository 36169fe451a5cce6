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

/* Double-precision steps, one IEEE-754 round-to-nearest operation each
 * on both sides (the oriented-box trigonometry below). */
CNMS_HD double cnms_dadd (double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dadd_rn (a, b);
#else
  return a + b;
#endif
}

CNMS_HD double cnms_dsub (double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dsub_rn (a, b);
#else
  return a - b;
#endif
}

CNMS_HD double cnms_dmul (double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dmul_rn (a, b);
#else
  return a * b;
#endif
}

CNMS_HD double cnms_ddiv (double a, double b)
{
#ifdef __CUDA_ARCH__
  return __ddiv_rn (a, b);
#else
  return a / b;
#endif
}

CNMS_HD double cnms_dsqrt (double a)
{
#ifdef __CUDA_ARCH__
  return __dsqrt_rn (a);
#else
  return sqrt (a);
#endif
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

/* One axis of ultralytics' scale_boxes padding, as Python computes it:
 * round ((model - frame * gain) / 2 - 0.1) in double, gain the double
 * min of model / frame over the axes, round () to nearest, ties to even
 * (rint in the default rounding mode), an integer. Each operation is its
 * own statement: no contraction. */
CNMS_HD float cnms_letterbox_pad (int model, int frame, double gain)
{
  double span = (double) frame * gain;
  double side = ((double) model - span) / 2.0;

  side = side - 0.1;
  /* + 0.0: a pad of -0 (rint (-0.1)) is Python's integer 0 */
  return (float) (rint (side) + 0.0);
}

/* The model->frame mapping of a model_w x model_h input for a frame_w x
 * frame_h frame: ultralytics' scale_boxes letterbox (one gain, symmetric
 * padding, cnms_letterbox_pad), or a plain stretch. The gain is the
 * float32 min of the float32 quotients: the float32 rounding of the
 * double gain, which a float32 tensor divided by Python's gain uses. */
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
    const double gx = (double) model_w / (double) frame_w;
    const double gy = (double) model_h / (double) frame_h;
    const double gd = gx < gy ? gx : gy;
    float gain = cnms_fmin (cnms_fdiv (mw, fw), cnms_fdiv (mh, fh));
    m->gain_x = gain;
    m->gain_y = gain;
    m->pad_x = cnms_letterbox_pad (model_w, frame_w, gd);
    m->pad_y = cnms_letterbox_pad (model_h, frame_h, gd);
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
 * cnms_params: the score threshold, the class-aware IoU and the cap of
 * class c are thr[c], iou[c] and cap[c] for 0 <= c < n, thr_rest,
 * iou_rest and cap_rest for any other id. thr, iou, cap: n entries where
 * the backend reads them (device memory on the CUDA backend); NULL when n
 * is 0. */
typedef struct {
  const float *thr;
  const float *iou;
  const int32_t *cap;           /* kept records of the class at most, the
                                 * first in kept order; 0: no cap */
  int n;
  float thr_rest, iou_rest;
  int32_t cap_rest;
  int caps;                     /* some class has a cap: the kept list
                                 * goes through cnms_class_cap */
  float thr_min;                /* the least threshold of any class: a score
                                 * not above it passes none */
} cnms_class_rules;

/* The cap of class c: the most kept records of the class that a detect
 * returns, the first in kept order (0: none). A record beyond its class's
 * cap is left out of the output only: NMS kept it, so it has suppressed
 * what it overlaps. Then max_detections takes the first of the rest. */
CNMS_HD int32_t cnms_class_cap (const cnms_class_rules *r, int32_t c)
{
  return c >= 0 && c < r->n && r->cap[c] > 0 ? r->cap[c] : r->cap_rest;
}

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

/* The overlap rule of boxes: IoU strictly above iou. The one place where
 * it is decided: the CPU walk asks it of every kept box that its index
 * and vector compares did not rule out, the CUDA mask through
 * cnms_suppresses. */
CNMS_HD int cnms_iou_above (const float *a, float area_a, const float *b,
    float area_b, float iou)
{
  return cnms_iou (a, area_a, b, area_b) > iou;
}

/* The suppression test of the engine for boxes: does kept box a (corners,
 * area, class) suppress a later box b? Each geometry has one
 * (cnms_obb_suppresses for oriented boxes); the engine around it (sort,
 * cap, mask, resolve, output) is the same for all. The CPU walk, which
 * walks each class on its own, asks the overlap part directly. */
CNMS_HD int cnms_suppresses (const float *a, float area_a, int32_t cls_a,
    const float *b, float area_b, int32_t cls_b, float iou, int agnostic)
{
  return (agnostic || cls_a == cls_b)
      && cnms_iou_above (a, area_a, b, area_b, iou);
}

/* ---------------------------------------------------------------------
 * Oriented boxes (docs/contracts.md, "Oriented boxes").
 *
 * A box is its centre (cx, cy), its size (w, h) and its angle r in
 * radians, ultralytics' xywhr: the w side runs along (cos r, sin r) in
 * image coordinates (y down, so a positive r turns clockwise on screen),
 * the h side along (-sin r, cos r). Its corners are c + u + v, c - u + v,
 * c - u - v, c + u - v with u = w/2 (cos r, sin r), v = h/2 (-sin r,
 * cos r).
 *
 * Sine and cosine are computed here, in double with fixed steps (fdlibm's
 * kernels after a Cody-Waite reduction), so that both backends get the
 * same bits from any finite angle; the overlap is the area of the
 * intersection polygon (Sutherland-Hodgman clipping of a by b's four
 * sides, then the shoelace sum, in float32, in a's centred frame) over
 * the union. */

/* sin and cos of a finite angle in double: |error| below 1e-15 for
 * |angle| < 2^19; a larger angle is first taken modulo the double nearest
 * 2 pi (fmod, exact on both sides); NaN for both when the angle is NaN
 * or infinite. */
CNMS_HD void cnms_sincos_d (double x, double *sn, double *cs)
{
  const double pio2_1 = 1.57079632673412561417e+00;   /* 33 bits of pi/2 */
  const double pio2_1t = 6.07710050650619224932e-11;  /* pi/2 - pio2_1 */
  const double two_over_pi = 6.36619772367581382433e-01;
  double k, r, z, ps, pc, sr, cr;
  int q;

  if (!(x - x == 0.0)) {
    /* NaN or +-Inf: no angle */
    *sn = *cs = x - x;
    return;
  }
  if (!(x > -524288.0 && x < 524288.0))
    x = fmod (x, 6.28318530717958647692e+00);
  k = floor (cnms_dadd (cnms_dmul (x, two_over_pi), 0.5));
  r = cnms_dsub (cnms_dsub (x, cnms_dmul (k, pio2_1)), cnms_dmul (k, pio2_1t));
  q = ((int) k) & 3;
  z = cnms_dmul (r, r);
  /* fdlibm __kernel_sin and __kernel_cos on [-pi/4, pi/4] */
  ps = cnms_dadd (-2.50507602534068634195e-08,
      cnms_dmul (z, 1.58969099521155010221e-10));
  ps = cnms_dadd (2.75573137070700676789e-06, cnms_dmul (z, ps));
  ps = cnms_dadd (-1.98412698298579493134e-04, cnms_dmul (z, ps));
  ps = cnms_dadd (8.33333333332248946124e-03, cnms_dmul (z, ps));
  /* sin r = r + r z (S1 + z ps) */
  sr = cnms_dadd (r, cnms_dmul (cnms_dmul (r, z),
          cnms_dadd (-1.66666666666666324348e-01, cnms_dmul (z, ps))));
  pc = cnms_dadd (2.08757232129817482790e-09,
      cnms_dmul (z, -1.13596475577881948265e-11));
  pc = cnms_dadd (-2.75573143513906633035e-07, cnms_dmul (z, pc));
  pc = cnms_dadd (2.48015872894767294178e-05, cnms_dmul (z, pc));
  pc = cnms_dadd (-1.38888888888741095749e-03, cnms_dmul (z, pc));
  pc = cnms_dadd (4.16666666666666019037e-02, cnms_dmul (z, pc));
  /* cos r = (1 - z / 2) + z^2 pc */
  cr = cnms_dadd (cnms_dsub (1.0, cnms_dmul (0.5, z)),
      cnms_dmul (cnms_dmul (z, z), pc));
  switch (q) {
    case 0:
      *sn = sr;
      *cs = cr;
      break;
    case 1:
      *sn = cr;
      *cs = -sr;
      break;
    case 2:
      *sn = -sr;
      *cs = -cr;
      break;
    default:
      *sn = -cr;
      *cs = sr;
      break;
  }
}

/* atan of a finite x in double (fdlibm's atan, its four reduction
 * intervals and its polynomial). */
CNMS_HD double cnms_atan_d (double x)
{
  const double ax = fabs (x);
  double t, z, w, s1, s2, hi, lo, r;
  int id;

  if (ax < 0.4375) {
    id = -1;
    t = ax;
  } else if (ax < 0.6875) {
    id = 0;
    t = cnms_ddiv (cnms_dsub (cnms_dmul (2.0, ax), 1.0), cnms_dadd (2.0, ax));
  } else if (ax < 1.1875) {
    id = 1;
    t = cnms_ddiv (cnms_dsub (ax, 1.0), cnms_dadd (ax, 1.0));
  } else if (ax < 2.4375) {
    id = 2;
    t = cnms_ddiv (cnms_dsub (ax, 1.5), cnms_dadd (1.0, cnms_dmul (1.5, ax)));
  } else {
    id = 3;
    t = cnms_ddiv (-1.0, ax);
  }
  z = cnms_dmul (t, t);
  w = cnms_dmul (z, z);
  /* s1 = z (aT0 + w (aT2 + w (aT4 + w (aT6 + w (aT8 + w aT10))))) */
  s1 = cnms_dadd (4.97687799461593236017e-02,
      cnms_dmul (w, 1.62858201153657823623e-02));
  s1 = cnms_dadd (6.66107313738753120669e-02, cnms_dmul (w, s1));
  s1 = cnms_dadd (9.09088713343650656196e-02, cnms_dmul (w, s1));
  s1 = cnms_dadd (1.42857142725034663711e-01, cnms_dmul (w, s1));
  s1 = cnms_dadd (3.33333333333329318027e-01, cnms_dmul (w, s1));
  s1 = cnms_dmul (z, s1);
  /* s2 = w (aT1 + w (aT3 + w (aT5 + w (aT7 + w aT9)))) */
  s2 = cnms_dadd (-5.83357013379057348645e-02,
      cnms_dmul (w, -3.65315727442169155270e-02));
  s2 = cnms_dadd (-7.69187620504482999495e-02, cnms_dmul (w, s2));
  s2 = cnms_dadd (-1.11111104054623557880e-01, cnms_dmul (w, s2));
  s2 = cnms_dadd (-1.99999999998764832476e-01, cnms_dmul (w, s2));
  s2 = cnms_dmul (w, s2);
  if (id < 0) {
    r = cnms_dsub (t, cnms_dmul (t, cnms_dadd (s1, s2)));
  } else {
    hi = id == 0 ? 4.63647609000806093515e-01 : id == 1 ?
        7.85398163397448278999e-01 : id == 2 ? 9.82793723247329054082e-01 :
        1.57079632679489655800e+00;
    lo = id == 0 ? 2.26987774529616870924e-17 : id == 1 ?
        3.06161699786838301793e-17 : id == 2 ? 1.39033110312309984516e-17 :
        6.12323399573676603587e-17;
    r = cnms_dsub (hi, cnms_dsub (cnms_dsub (cnms_dmul (t, cnms_dadd (s1,
                        s2)), lo), t));
  }
  return x < 0.0 ? -r : r;
}

/* atan2 (y, x) in (-pi, pi] for finite y and x; 0 when both are 0. */
CNMS_HD double cnms_atan2_d (double y, double x)
{
  const double pi = 3.14159265358979311600e+00;
  const double pio2 = 1.57079632679489655800e+00;
  double r;

  if (x == 0.0 && y == 0.0)
    return 0.0;
  if (fabs (y) <= fabs (x)) {
    r = cnms_atan_d (cnms_ddiv (y, x));
    if (x < 0.0)
      r = y < 0.0 ? cnms_dsub (r, pi) : cnms_dadd (r, pi);
    return r;
  }
  r = cnms_atan_d (cnms_ddiv (x, y));
  return y > 0.0 ? cnms_dsub (pio2, r) : cnms_dsub (-pio2, r);
}

/* An oriented box made ready for the overlap test (32 bytes): centre,
 * the half-side vectors u and v (see above) and the area w h. */
typedef struct {
  float cx, cy, ux, uy, vx, vy, area, pad;
} cnms_obb;

/* The box (cx, cy, w, h, r) made ready: o, and its axis-aligned hull
 * x1 y1 x2 y2 widened by a margin that covers the clip's rounding (the
 * overlap test's first, cheap, bound). A box without w > 0 and h > 0, or
 * with a value that is not finite, gets the empty hull (+inf, +inf, -inf,
 * -inf): it overlaps nothing. */
CNMS_HD void cnms_obb_prepare (float cx, float cy, float w, float h,
    float r, cnms_obb *o, float *hull)
{
  double sd, cd;
  float sn, cs, hw, hh, ex, ey, mx, my;

  o->cx = cx;
  o->cy = cy;
  o->pad = 0.0f;
  if (!(w > 0.0f && h > 0.0f) || !cnms_isfinite (w) || !cnms_isfinite (h)
      || !cnms_isfinite (cx) || !cnms_isfinite (cy) || !cnms_isfinite (r)) {
    o->ux = o->uy = o->vx = o->vy = o->area = 0.0f;
    hull[0] = hull[1] = CNMS_INF;
    hull[2] = hull[3] = -CNMS_INF;
    return;
  }
  cnms_sincos_d ((double) r, &sd, &cd);
  sn = (float) sd;
  cs = (float) cd;
  hw = cnms_fmul (w, 0.5f);
  hh = cnms_fmul (h, 0.5f);
  o->ux = cnms_fmul (hw, cs);
  o->uy = cnms_fmul (hw, sn);
  o->vx = -cnms_fmul (hh, sn);
  o->vy = cnms_fmul (hh, cs);
  o->area = cnms_fmul (w, h);
  ex = cnms_fadd (fabsf (o->ux), fabsf (o->vx));
  ey = cnms_fadd (fabsf (o->uy), fabsf (o->vy));
  /* 2^-16 of the extent and of the centre's magnitude: far more than the
   * few roundings between a corner and a clipped vertex */
  mx = cnms_fmul (cnms_fadd (ex, fabsf (cx)), 0x1p-16f);
  my = cnms_fmul (cnms_fadd (ey, fabsf (cy)), 0x1p-16f);
  ex = cnms_fadd (ex, mx);
  ey = cnms_fadd (ey, my);
  hull[0] = cnms_fsub (cx, ex);
  hull[1] = cnms_fsub (cy, ey);
  hull[2] = cnms_fadd (cx, ex);
  hull[3] = cnms_fadd (cy, ey);
}

/* Do two hulls (x1 y1 x2 y2) overlap with positive area? */
CNMS_HD int cnms_hulls_meet (const float *a, const float *b)
{
  return a[0] < b[2] && a[2] > b[0] && a[1] < b[3] && a[3] > b[1];
}

/* Most vertices the clip keeps: a rectangle clipped by four lines has at
 * most 8; the rest is room for the duplicates that rounding can make
 * (past it, further vertices are dropped, on both backends alike). */
#define CNMS_CLIP_MAX 16

/* One Sutherland-Hodgman step: the polygon (x, y)[0..n) clipped to the
 * half-plane lim - ((p - d) . nrm) * sgn >= 0, into (ox, oy). Returns the
 * new vertex count. */
CNMS_HD int cnms_clip_side (const float *x, const float *y, int n, float dx,
    float dy, float nx, float ny, float lim, float sgn, float *ox, float *oy)
{
  int i, m = 0;
  float fp, fc;
  float px, py;

  if (n == 0)
    return 0;
  px = x[n - 1];
  py = y[n - 1];
  fp = cnms_fsub (lim, cnms_fmul (sgn, cnms_fadd (cnms_fmul (cnms_fsub (px,
                  dx), nx), cnms_fmul (cnms_fsub (py, dy), ny))));
  for (i = 0; i < n; i++) {
    const float cx = x[i], cy = y[i];
    fc = cnms_fsub (lim, cnms_fmul (sgn, cnms_fadd (cnms_fmul (cnms_fsub (cx,
                    dx), nx), cnms_fmul (cnms_fsub (cy, dy), ny))));
    if ((fp >= 0.0f) != (fc >= 0.0f) && m < CNMS_CLIP_MAX) {
      /* the edge crosses: fp / (fp - fc) lies in [0, 1] */
      const float t = cnms_fdiv (fp, cnms_fsub (fp, fc));
      ox[m] = cnms_fadd (px, cnms_fmul (t, cnms_fsub (cx, px)));
      oy[m] = cnms_fadd (py, cnms_fmul (t, cnms_fsub (cy, py)));
      m++;
    }
    if (fc >= 0.0f && m < CNMS_CLIP_MAX) {
      ox[m] = cx;
      oy[m] = cy;
      m++;
    }
    px = cx;
    py = cy;
    fp = fc;
  }
  return m;
}

/* Area of the intersection of oriented boxes a and b: a's rectangle
 * clipped by b's four sides, in a's centred frame (b's centre at d = b.c -
 * a.c), then the shoelace sum in vertex order. */
CNMS_HD float cnms_obb_inter (const cnms_obb *a, const cnms_obb *b)
{
  float x0[CNMS_CLIP_MAX], y0[CNMS_CLIP_MAX];
  float x1[CNMS_CLIP_MAX], y1[CNMS_CLIP_MAX];
  const float dx = cnms_fsub (b->cx, a->cx), dy = cnms_fsub (b->cy, a->cy);
  const float lu = cnms_fadd (cnms_fmul (b->ux, b->ux),
      cnms_fmul (b->uy, b->uy));
  const float lv = cnms_fadd (cnms_fmul (b->vx, b->vx),
      cnms_fmul (b->vy, b->vy));
  float sum = 0.0f;
  int n, i;

  x0[0] = cnms_fadd (a->ux, a->vx);
  y0[0] = cnms_fadd (a->uy, a->vy);
  x0[1] = cnms_fsub (a->vx, a->ux);
  y0[1] = cnms_fsub (a->vy, a->uy);
  x0[2] = -x0[0];
  y0[2] = -y0[0];
  x0[3] = -x0[1];
  y0[3] = -y0[1];
  n = cnms_clip_side (x0, y0, 4, dx, dy, b->ux, b->uy, lu, 1.0f, x1, y1);
  n = cnms_clip_side (x1, y1, n, dx, dy, b->ux, b->uy, lu, -1.0f, x0, y0);
  n = cnms_clip_side (x0, y0, n, dx, dy, b->vx, b->vy, lv, 1.0f, x1, y1);
  n = cnms_clip_side (x1, y1, n, dx, dy, b->vx, b->vy, lv, -1.0f, x0, y0);
  if (n < 3)
    return 0.0f;
  for (i = 0; i < n; i++) {
    const int j = i + 1 < n ? i + 1 : 0;
    sum = cnms_fadd (sum, cnms_fsub (cnms_fmul (x0[i], y0[j]),
            cnms_fmul (x0[j], y0[i])));
  }
  return cnms_fmul (fabsf (sum), 0.5f);
}

/* Overlap of [-l, l] and [c - e, c + e]: 0 when they do not meet. */
CNMS_HD float cnms_span_overlap (float l, float c, float e)
{
  return cnms_fmax (0.0f, cnms_fsub (cnms_fmin (l, cnms_fadd (c, e)),
          cnms_fmax (-l, cnms_fsub (c, e))));
}

/* Can a's and b's IoU exceed t (t >= 1/16)? 0 only when it cannot: the
 * intersection lies in the rectangle, in a's own axes, of a's extent and
 * b's projection onto them, whose area is 4 Ou Ov / area_a (Ou, Ov: the
 * projections' overlaps in units of |u_a|^2, |v_a|^2), and likewise in
 * b's axes; with that bound I, IoU <= I / (A + B - I), so IoU > t needs
 * 4 Ou Ov (1 + t) > t (A + B) area_a. The slack 2^-10 exceeds the few
 * roundings of either side and the clip's own error relative to the
 * intersection for t >= 1/16 and areas in [2^-40, 2^40] (otherwise 1). */
CNMS_HD int cnms_obb_may_exceed (const cnms_obb *a, const cnms_obb *b,
    float t)
{
  const float dx = cnms_fsub (b->cx, a->cx), dy = cnms_fsub (b->cy, a->cy);
  const float k = cnms_fmul (4.0f, cnms_fadd (1.0f, t));
  const float rhs = cnms_fmul (cnms_fmul (t, cnms_fadd (a->area, b->area)),
      1.0f - 0x1p-10f);
  const cnms_obb *o[2] = { a, b };
  const cnms_obb *q[2] = { b, a };
  int i;

  if (!(a->area > 0x1p-40f && a->area < 0x1p40f && b->area > 0x1p-40f
          && b->area < 0x1p40f))
    return 1;
  for (i = 0; i < 2; i++) {
    /* in o's axes u, v: q's centre at +-d */
    const cnms_obb *f = o[i], *g = q[i];
    const float sx = i == 0 ? dx : -dx, sy = i == 0 ? dy : -dy;
    const float lu = cnms_fadd (cnms_fmul (f->ux, f->ux),
        cnms_fmul (f->uy, f->uy));
    const float lv = cnms_fadd (cnms_fmul (f->vx, f->vx),
        cnms_fmul (f->vy, f->vy));
    const float cu = cnms_fadd (cnms_fmul (sx, f->ux), cnms_fmul (sy, f->uy));
    const float cv = cnms_fadd (cnms_fmul (sx, f->vx), cnms_fmul (sy, f->vy));
    const float eu = cnms_fadd (fabsf (cnms_fadd (cnms_fmul (g->ux, f->ux),
                cnms_fmul (g->uy, f->uy))), fabsf (cnms_fadd (cnms_fmul (g->vx,
                    f->ux), cnms_fmul (g->vy, f->uy))));
    const float ev = cnms_fadd (fabsf (cnms_fadd (cnms_fmul (g->ux, f->vx),
                cnms_fmul (g->uy, f->vy))), fabsf (cnms_fadd (cnms_fmul (g->vx,
                    f->vx), cnms_fmul (g->vy, f->vy))));
    const float ou = cnms_span_overlap (lu, cu, eu);
    const float ov = cnms_span_overlap (lv, cv, ev);

    if (cnms_fmul (cnms_fmul (k, ou), ov) < cnms_fmul (rhs, f->area))
      return 0;
  }
  return 1;
}

/* The overlap rule of oriented boxes: IoU strictly above iou, where IoU =
 * inter / (area_a + area_b - inter); 0 when the hulls do not meet, when
 * (iou >= 1/16) cnms_obb_may_exceed shows it cannot be above iou, or when
 * inter or that denominator is not above 0. The one place where it is
 * decided: the CPU walk and the CUDA mask both call it. */
CNMS_HD int cnms_obb_iou_above (const cnms_obb *a, const float *hull_a,
    const cnms_obb *b, const float *hull_b, float iou)
{
  float inter, den;

  if (!cnms_hulls_meet (hull_a, hull_b))
    return 0;
  if (iou >= 0.0625f && !cnms_obb_may_exceed (a, b, iou))
    return 0;
  inter = cnms_obb_inter (a, b);
  if (!(inter > 0.0f))
    return 0;
  den = cnms_fsub (cnms_fadd (a->area, b->area), inter);
  if (!(den > 0.0f))
    return 0;
  return cnms_fdiv (inter, den) > iou;
}

/* The suppression test of the engine for oriented boxes (cnms_suppresses
 * for boxes). */
CNMS_HD int cnms_obb_suppresses (const cnms_obb *a, const float *hull_a,
    int32_t cls_a, const cnms_obb *b, const float *hull_b, int32_t cls_b,
    float iou, int agnostic)
{
  return (agnostic || cls_a == cls_b)
      && cnms_obb_iou_above (a, hull_a, b, hull_b, iou);
}

/* The axis-aligned hull of oriented box b (cx cy w h r) clipped to
 * [0, fw] x [0, fh], into hull (x1 y1 x2 y2): the ROI of a kept oriented
 * box. Its corners are the exact ones above (no margin); a box wholly
 * outside the frame gives an empty hull. */
CNMS_HD void cnms_obb_hull_clipped (const float *b, float fw, float fh,
    float *hull)
{
  double sd, cd;
  float sn, cs, hw, hh, ex, ey;

  cnms_sincos_d ((double) b[4], &sd, &cd);
  sn = (float) sd;
  cs = (float) cd;
  hw = cnms_fmul (b[2], 0.5f);
  hh = cnms_fmul (b[3], 0.5f);
  ex = cnms_fadd (fabsf (cnms_fmul (hw, cs)), fabsf (cnms_fmul (hh, sn)));
  ey = cnms_fadd (fabsf (cnms_fmul (hw, sn)), fabsf (cnms_fmul (hh, cs)));
  hull[0] = cnms_fmin (cnms_fmax (cnms_fsub (b[0], ex), 0.0f), fw);
  hull[1] = cnms_fmin (cnms_fmax (cnms_fsub (b[1], ey), 0.0f), fh);
  hull[2] = cnms_fmin (cnms_fmax (cnms_fadd (b[0], ex), 0.0f), fw);
  hull[3] = cnms_fmin (cnms_fmax (cnms_fadd (b[1], ey), 0.0f), fh);
}

/* Model pixels -> frame pixels for an oriented box (cx cy w h r) into
 * out[5]. The centre maps as a box coordinate, not clipped. With equal
 * gains (any letterbox) w and h divide by the gain and r is kept. With
 * unequal gains (a plain stretch of another aspect) the sides u and v map
 * to the non-perpendicular sides u' = (ux / gx, uy / gy), v' likewise: the
 * result is the rectangle with w = 2 |u'|, h = 2 |v'| and r = atan2 (u'y,
 * u'x), in (-pi, pi]. Returns 1 when it is a candidate box: every input
 * finite, w and h above 0 and at least min_w, min_h, and its hull clipped
 * to the frame (written to hull) not empty. */
CNMS_HD int cnms_map_obb (const cnms_map *m, float cx, float cy, float w,
    float h, float r, float *out, float *hull)
{
  if (!cnms_isfinite (cx) || !cnms_isfinite (cy) || !cnms_isfinite (w)
      || !cnms_isfinite (h) || !cnms_isfinite (r) || !(w > 0.0f)
      || !(h > 0.0f))
    return 0;
  out[0] = cnms_fdiv (cnms_fsub (cx, m->pad_x), m->gain_x);
  out[1] = cnms_fdiv (cnms_fsub (cy, m->pad_y), m->gain_y);
  if (m->gain_x == m->gain_y) {
    out[2] = cnms_fdiv (w, m->gain_x);
    out[3] = cnms_fdiv (h, m->gain_y);
    out[4] = r;
  } else {
    double sd, cd, ux, uy, vx, vy;
    const double gx = (double) m->gain_x, gy = (double) m->gain_y;
    cnms_sincos_d ((double) r, &sd, &cd);
    ux = cnms_ddiv (cnms_dmul ((double) w, cd), gx);
    uy = cnms_ddiv (cnms_dmul ((double) w, sd), gy);
    vx = cnms_ddiv (cnms_dmul ((double) h, -sd), gx);
    vy = cnms_ddiv (cnms_dmul ((double) h, cd), gy);
    out[2] = (float) cnms_dsqrt (cnms_dadd (cnms_dmul (ux, ux),
            cnms_dmul (uy, uy)));
    out[3] = (float) cnms_dsqrt (cnms_dadd (cnms_dmul (vx, vx),
            cnms_dmul (vy, vy)));
    out[4] = (float) cnms_atan2_d (uy, ux);
  }
  if (!cnms_isfinite (out[0]) || !cnms_isfinite (out[1])
      || !cnms_isfinite (out[2]) || !cnms_isfinite (out[3])
      || !(out[2] > 0.0f) || !(out[3] > 0.0f)
      || !(out[2] >= m->min_w) || !(out[3] >= m->min_h))
    return 0;
  cnms_obb_hull_clipped (out, m->frame_w, m->frame_h, hull);
  return hull[2] > hull[0] && hull[3] > hull[1];
}

/* ---------------------------------------------------------------------
 * Lanes (docs/contracts.md, "Lanes"): LaneATT's proposals, a row of 5 + S
 * floats: two class logits (background, lane), start_y (a fraction of
 * the n = S - 1 strips, from the bottom row), start_x, length (strips),
 * then the lane's x in model pixels at each of the S rows, row 0 the
 * bottom one. The overlap is LaneATT's devIoU (lib/nms/src/nms_kernel.cu)
 * with its float and double steps. */

/* The largest |start_y n| and |length| of a lane that takes part: the
 * casts below stay in int. */
#define CNMS_LANE_MAX 1048576.0f

/* exp of a double (fdlibm's exp: k ln2 reduction, its polynomial, 2^k by
 * the exponent bits); +inf above 709.78, 0 below -745.13; finite x. */
CNMS_HD double cnms_exp_d (double x)
{
  const double ln2_hi = 6.93147180369123816490e-01;
  const double ln2_lo = 1.90821492927058770002e-10;
  const double inv_ln2 = 1.44269504088896338700e+00;
  double k, hi, lo, r, t, c, y, scale;
  int ki;

  if (x > 709.782712893383973096)
    return CNMS_INF;
  if (x < -745.13321910194110842)
    return 0.0;
  k = floor (cnms_dadd (cnms_dmul (x, inv_ln2), 0.5));
  hi = cnms_dsub (x, cnms_dmul (k, ln2_hi));
  lo = cnms_dmul (k, ln2_lo);
  r = cnms_dsub (hi, lo);
  t = cnms_dmul (r, r);
  c = cnms_dadd (-1.65339022054652515390e-06, cnms_dmul (t,
          4.13813679705723846039e-08));
  c = cnms_dadd (6.61375632143793436117e-05, cnms_dmul (t, c));
  c = cnms_dadd (-2.77777777770155933842e-03, cnms_dmul (t, c));
  c = cnms_dadd (1.66666666666666019037e-01, cnms_dmul (t, c));
  c = cnms_dsub (r, cnms_dmul (t, c));
  y = cnms_dsub (1.0, cnms_dsub (cnms_dsub (lo, cnms_ddiv (cnms_dmul (r, c),
                  cnms_dsub (2.0, c))), hi));
  ki = (int) k;
  /* 2^ki in two exact steps (ki in [-1075, 1024]) */
  if (ki > 1000) {
    y = cnms_dmul (y, 0x1p1000);
    ki -= 1000;
  } else if (ki < -1000) {
    y = cnms_dmul (y, 0x1p-1000);
    ki += 1000;
  }
#ifdef __CUDA_ARCH__
  scale = __longlong_as_double ((long long) (ki + 1023) << 52);
#else
  {
    uint64_t bits = (uint64_t) (ki + 1023) << 52;
    memcpy (&scale, &bits, sizeof scale);
  }
#endif
  return cnms_dmul (y, scale);
}

/* A lane's score: softmax (l0, l1)[1] = 1 / (1 + e^(l0 - l1)), in double,
 * rounded once to float. NaN when a logit is not finite. */
CNMS_HD float cnms_lane_score (float l0, float l1)
{
  if (!cnms_isfinite (l0) || !cnms_isfinite (l1))
    return cnms_bits_float (0x7fc00000u);
  return (float) cnms_ddiv (1.0, cnms_dadd (1.0,
          cnms_exp_d (cnms_dsub ((double) l0, (double) l1))));
}

/* LaneATT's first row of a lane: (int) (start_y n + 0.5), the product in
 * float, the sum in double, truncated toward zero. */
CNMS_HD int cnms_lane_start (float start_y, int n)
{
  return (int) cnms_dadd ((double) cnms_fmul (start_y, (float) n), 0.5);
}

/* LaneATT's last row: (int) (start + length - 1 + 0.5 - (length - 1 < 0)),
 * start + length - 1 in float, the rest in double, truncated toward
 * zero. Not clipped to the rows (the overlap clips). */
CNMS_HD int cnms_lane_end (int start, float length)
{
  const float e = cnms_fsub (cnms_fadd ((float) start, length), 1.0f);
  const double neg = cnms_fsub (length, 1.0f) < 0.0f ? 1.0 : 0.0;

  return (int) cnms_dsub (cnms_dadd ((double) e, 0.5), neg);
}

/* Does a lane take part? Finite start_y and length within
 * CNMS_LANE_MAX, and its first row in [0, n]. Writes its rows. */
CNMS_HD int cnms_lane_rows (float start_y, float length, int n, int32_t *start,
    int32_t *end)
{
  if (!cnms_isfinite (start_y) || !cnms_isfinite (length)
      || !(fabsf (cnms_fmul (start_y, (float) n)) <= CNMS_LANE_MAX)
      || !(fabsf (length) <= CNMS_LANE_MAX))
    return 0;
  *start = cnms_lane_start (start_y, n);
  if (*start < 0 || *start > n)
    return 0;
  *end = cnms_lane_end (*start, length);
  return 1;
}

/* The overlap rule of lanes, LaneATT's devIoU: with their rows [sa, ea]
 * and [sb, eb], s = max (sa, sb), e = min (ea, eb, n); none when e < s;
 * else dist = the float sum over i = s .. e, in order, of |xa[i] - xb[i]|
 * (the larger minus the smaller), and b is suppressed by kept a iff
 * dist < distance (e - s + 1), the product in float. xa, xb: the S x of
 * each (the proposal row from offset 5). */
CNMS_HD int cnms_lane_close (const float *xa, int32_t sa, int32_t ea,
    const float *xb, int32_t sb, int32_t eb, int n, float distance)
{
  const int32_t s = sa > sb ? sa : sb;
  int32_t e = ea < eb ? ea : eb;
  float dist = 0.0f;
  int32_t i;

  if (e > n)
    e = n;
  if (e < s)
    return 0;
  for (i = s; i <= e; i++)
    dist = cnms_fadd (dist, xa[i] < xb[i] ? cnms_fsub (xb[i], xa[i])
        : cnms_fsub (xa[i], xb[i]));
  return dist < cnms_fmul (distance, (float) (e - s + 1));
}

/* The largest finite float. */
#define CNMS_FLT_MAX 0x1.fffffep127f

/* The float next to f towards +inf (f not NaN; +inf stays +inf). */
CNMS_HD float cnms_next_up (float f)
{
  const uint32_t u = cnms_float_bits (f);

  if (f == 0.0f)
    return 0x1p-149f;
  if (u == 0x7f800000u)
    return f;
  return cnms_bits_float ((u & 0x80000000u) ? u - 1u : u + 1u);
}

/* The float next to f towards -inf (f not NaN; -inf stays -inf). */
CNMS_HD float cnms_next_down (float f)
{
  return -cnms_next_up (-f);
}

/* The rectangle (x1 y1 x2 y2) that the spatial index of either backend
 * files a lane by (cpu_nms.c, cuda_geom.cuh): x over its rows, from
 * start - 0.5 to min (end, n) + 0.5; y over its x, from lo - h to hi + h,
 * where lo and hi are the least and the greatest finite x[i] of those
 * rows and h = distance 9/16 rounded up, each edge rounded outward to a
 * float and kept within [-FLT_MAX, FLT_MAX]. Empty (+inf +inf -inf -inf)
 * when the lane has no row, no finite x in its rows, or distance is not
 * above 0 (or NaN): cnms_lane_close then closes nothing for it (dist is
 * >= 0 or NaN, the threshold <= 0 or NaN).
 *
 * Two lanes a, b that cnms_lane_close calls close have rectangles that
 * overlap with positive area (a.x1 < b.x2, b.x1 < a.x2, likewise in y),
 * so an index that skips every pair whose rectangles do not misses none.
 * With u = 2^-24, s .. e the shared rows and c = e - s + 1: c <= 2^20
 * (a lane's rows, cnms_lane_rows, number at most 2^20). Every term of
 * dist is finite: a NaN or infinite x, or a difference that overflows,
 * makes dist NaN or +inf, below no threshold. So the x of both over
 * s .. e are finite, inside their lane's [lo, hi] (s .. e lie in both
 * lanes' rows). Rows: a.x1 = sa - 0.5 < e + 0.5 <= b.x2, likewise. The x:
 * say lo_b > hi_a, with the gap g = lo_b - hi_a. Each term
 * fl (xb[i] - xa[i]) >= fl (g) >= g (1 - u) (rounding is monotone; a
 * difference of floats that is subnormal is exact), each sum of two
 * nonnegative floats loses at most a factor 1 - u (the first, 0 + term,
 * none), so dist >= c g (1 - u)^c. The threshold fl (distance c) is at
 * most distance c (1 + u) (a subnormal product of a float and an integer
 * is exact), or +inf when distance c > FLT_MAX >= dist. So
 * g < distance (1 + u) / (1 - u)^(2^20) < 1.0646 distance < 2 h. Hence,
 * in exact arithmetic, lo_a - h < hi_b + h and lo_b - h < hi_a + h (when
 * the ranges meet, as h > 0). The float edges lie outside these exact
 * values: fl (lo - h) rounded to nearest, then the float next below it,
 * is at most lo - h (no float lies between the nearest one and the exact
 * value), likewise above; h = the float next above fl (distance 9/16) is
 * at least distance 9/16. An edge clamped to -FLT_MAX (or FLT_MAX) keeps
 * the strict inequalities: -FLT_MAX < hi_b + h and lo_a - h < FLT_MAX as
 * every lo, hi is finite and h > 0. */
CNMS_HD void cnms_lane_rect (const float *x, int32_t start, int32_t end,
    int n, float distance, float *rect)
{
  const int32_t e = end < n ? end : n;
  float lo = CNMS_INF, hi = -CNMS_INF, h;
  int32_t i;

  rect[0] = rect[1] = CNMS_INF;
  rect[2] = rect[3] = -CNMS_INF;
  if (e < start || !(distance > 0.0f))
    return;
  for (i = start; i <= e; i++) {
    if (cnms_isfinite (x[i])) {
      lo = cnms_fmin (lo, x[i]);
      hi = cnms_fmax (hi, x[i]);
    }
  }
  if (!(lo <= hi))
    return;
  h = cnms_next_up (cnms_fmul (distance, 0.5625f));
  lo = cnms_fsub (lo, h);
  hi = cnms_fadd (hi, h);
  rect[0] = cnms_fsub ((float) start, 0.5f);
  rect[1] = lo > -CNMS_FLT_MAX ? cnms_next_down (lo) : -CNMS_FLT_MAX;
  rect[2] = cnms_fadd ((float) e, 0.5f);
  rect[3] = hi < CNMS_FLT_MAX ? cnms_next_up (hi) : CNMS_FLT_MAX;
}

#endif /* CNMS_MATH_H */
