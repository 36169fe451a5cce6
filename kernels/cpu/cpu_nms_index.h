/* Part of cpu_nms.c, included only there: the greedy walk's index, its
 * types and the inline pieces that cpu_nms_walk.h puts together. The
 * comment at the top of cpu_nms.c says why they never miss a suppressor. */
#ifndef CNMS_CPU_NMS_INDEX_H
#define CNMS_CPU_NMS_INDEX_H

#include <math.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CNMS_HAVE_AVX_PATH 1
#endif

#include "cpu_priv.h"

/* A cell's kept boxes: a block of the arena holding cap boxes as
 * CELL_ARRAYS arrays, x1 y1 x2 y2 area (oriented boxes: hull and
 * position, then the cx cy ux uy vx vy area of their cnms_obb, the
 * operands of obb_may_exceed: CELL_ARRAYS_OBB arrays; lanes: rectangle
 * and position), so that 4 (SSE2) or 8 (AVX) are compared with the query
 * at a time. A full block moves to one twice as large: the cell stays
 * contiguous. */
#define CELL_ARRAYS 5
#define CELL_ARRAYS_OBB 12

typedef struct {
  int32_t off;                  /* first float of the block in the arena */
  int32_t n, cap;               /* boxes held, room (a multiple of 8) */
} cell;

typedef struct {
#ifdef __SSE2__
  __m128 origin4, scale4, limit4;       /* origin, scale, limit as below */
#endif
  float origin[4];              /* least x1, y1, x1, y1 */
  float scale[4];               /* cells per unit of x, y, x, y */
  float limit[4];               /* last cell of x, y, x, y */
  int32_t gx, gy;               /* cells per axis */
  int32_t max_cells;            /* a box over more cells goes to big */
  int32_t last;                 /* last kept box that can overlap (klink) */
  int32_t list;                 /* no grid: big is the one cell */
  int32_t cap0;                 /* a cell's first room: what most need */
  cell big;                     /* the boxes filed nowhere else */
} grid;

/* One walk: what every class's run shares. */
typedef struct {
  cnms_backend_ctx *ctx;
  cnms_greedy_ws *ws;
  double margin;                /* t (1 - 2^-10), or 0: no shrinking */
  float iou;
  int32_t cap0;                 /* the grid's cap0 */
  int may_grow;                 /* the arena may grow (see grow_cell) */
  int geom;                     /* CNMS_GEOM_* */
  int na;                       /* arrays of a cell's block: CELL_ARRAYS,
                                 * or CELL_ARRAYS_OBB */
  const cnms_obb *obbs;         /* oriented boxes made ready, by position */
  const cnms_lane_ref *lanes;   /* lanes made ready, by position */
  int n_strips;                 /* lanes: S - 1 */
  size_t used;                  /* floats of the arena in use */
} walk;

/* One query: is box b suppressed? For oriented boxes b is its hull, for
 * lanes its rectangle (cnms_lane_rect: its rows by its x range, widened),
 * and the fifth array of the cells (karea, area) holds each one's
 * position in obbs or lanes (its bits as a float) instead of an area. */
typedef struct {
  const float *kbox, *karea;
  const float *b;
  float area, iou;
  const float *q;
  int geom;                     /* CNMS_GEOM_* */
  const cnms_obb *obbs;         /* oriented boxes: every box, by position */
  const cnms_obb *bo;           /* oriented boxes: b's */
  const cnms_lane_ref *lanes;   /* lanes: every lane, by position */
  const cnms_lane_ref *bl;      /* lanes: b's */
  int n_strips;
  int bound;                    /* boxes, iou >= CORE_MIN_IOU: the lanes'
                                 * IoU bound applies (iou_bound) */
  float k1, k2;                 /* its factors: 1 + iou, iou (1 - 2^-10) */
  int obb_bound;                /* oriented boxes, iou >= 1/16 and b's area
                                 * in [2^-40, 2^40]: obb_may_exceed
                                 * applies */
  float ok;                     /* its factor 4 (1 + iou) */
  float blu, blv;               /* b's |u|^2, |v|^2 as the rule has them */
  uint64_t *tests;              /* pairs handed to the rule (oriented
                                 * boxes, lanes) */
} probe;

#define CORE_MIN_IOU 0x1p-14f
#define CORE_MAX_COORD 0x1p40f
#define CORE_MIN_SIZE 0x1p-40f

static inline int
nonempty (const float *b)
{
  return b[0] < b[2] && b[1] < b[3];
}

/* The cells of v = (x1, y1, x2, y2) on the grid's axes: for each,
 * clamp (floor ((v - origin) * scale), 0, cells - 1), monotone in v (each
 * step is; NaN never occurs, and would give cell 0). */
static inline void
cells_of (const grid *g, float v0, float v1, float v2, float v3, int32_t *c)
{
#ifdef __SSE2__
  __m128 t = _mm_mul_ps (_mm_sub_ps (_mm_setr_ps (v0, v1, v2, v3),
          g->origin4), g->scale4);

  t = _mm_min_ps (_mm_max_ps (t, _mm_setzero_ps ()), g->limit4);
  _mm_storeu_si128 ((__m128i *) c, _mm_cvttps_epi32 (t));
#else
  const float v[4] = { v0, v1, v2, v3 };
  int i;

  for (i = 0; i < 4; i++) {
    float t = (v[i] - g->origin[i]) * g->scale[i];
    c[i] = !(t > 0.0f) ? 0 : t >= g->limit[i] ? (int32_t) g->limit[i]
        : (int32_t) t;
  }
#endif
}

/* The float next to f towards -inf / +inf (f finite). */
static inline float
float_below (float f)
{
  uint32_t u = cnms_float_bits (f);

  if (f == 0.0f)
    return -0x1p-149f;
  return cnms_bits_float ((u & 0x80000000u) ? u + 1 : u - 1);
}

static inline float
float_above (float f)
{
  uint32_t u = cnms_float_bits (f);

  if (f == 0.0f)
    return 0x1p-149f;
  return cnms_bits_float ((u & 0x80000000u) ? u - 1 : u + 1);
}

/* d rounded down / up to a float (|d| far below FLT_MAX). */
static inline float
float_down (double d)
{
  float f = (float) d;
  return (double) f > d ? float_below (f) : f;
}

static inline float
float_up (double d)
{
  float f = (float) d;
  return (double) f < d ? float_above (f) : f;
}

/* q = (lo_x, lo_y, hi_x, hi_y): every kept a that can suppress b has
 * a.x2 > lo_x, a.x1 < hi_x, a.y2 > lo_y, a.y1 < hi_y (steps 2 and 3 of
 * the comment at the top). */
static inline void
query_rect (const float *b, double margin, float *q)
{
  float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];

  if (margin > 0 && fabsf (b0) <= CORE_MAX_COORD && fabsf (b1) <= CORE_MAX_COORD
      && fabsf (b2) <= CORE_MAX_COORD && fabsf (b3) <= CORE_MAX_COORD
      && b2 - b0 >= CORE_MIN_SIZE && b3 - b1 >= CORE_MIN_SIZE) {
    double mw = margin * ((double) b2 - b0);
    double mh = margin * ((double) b3 - b1);
    b0 = float_down (b0 + mw);
    b1 = float_down (b1 + mh);
    b2 = float_up (b2 - mw);
    b3 = float_up (b3 - mh);
  }
  q[0] = b0;
  q[1] = b1;
  q[2] = b2;
  q[3] = b3;
}

/* Does the kept box (a0 a1 a2 a3: its corners, or an oriented box's
 * hull; a4: its area or position) suppress p->b? The geometry's overlap
 * rule from cnms_math.h, the one the CUDA mask asks too; the index and
 * the vector compares before it only skip boxes that cannot. */
static inline int
kept_suppresses (float a0, float a1, float a2, float a3, float a4,
    const probe *p)
{
  const float a[4] = { a0, a1, a2, a3 };

  if (p->geom == CNMS_GEOM_OBB) {
    (*p->tests)++;
    return cnms_obb_iou_above (&p->obbs[cnms_float_bits (a4)], a, p->bo,
        p->b, p->iou);
  }
  if (p->geom == CNMS_GEOM_LANE) {
    const cnms_lane_ref *l = &p->lanes[cnms_float_bits (a4)];
    (*p->tests)++;
    return cnms_lane_close (l->x, l->start, l->end, p->bl->x, p->bl->start,
        p->bl->end, p->n_strips, p->iou);
  }
  return cnms_iou_above (a, a4, p->b, p->area, p->iou);
}

/* Lanes set in bits (from base i) of the five arrays: does one of their
 * boxes suppress p->b? */
static inline int
lanes_suppress (unsigned bits, const float *x1, const float *y1,
    const float *x2, const float *y2, const float *ar, int i, const probe *p)
{
  while (bits != 0) {
    const int l = i + __builtin_ctz (bits);

    if (kept_suppresses (x1[l], y1[l], x2[l], y2[l], ar[l], p))
      return 1;
    bits &= bits - 1;
  }
  return 0;
}

/* The IoU bound of box lanes. cnms_iou_above alone decides; before it,
 * this drops lanes whose IoU with p->b cannot exceed t = p->iou. With the
 * float inter I = w h of the rule, S = area_a + area_b and u = 2^-24:
 * fl (I / fl (fl (S) - I)) > t (t >= 2^-14, every quantity normal) gives
 * I (1 + t) > t (1 - u) S, and the float products below differ from
 * I (1 + t) and t (1 - 2^-10) S by at most three roundings each, far
 * less than the slack 2^-10: a lane with fl (I k1) < fl (fl (S) k2) is
 * not above t. Where that right side is below 2^-60 (t S too small for
 * the error terms to be relative) no lane is dropped; an infinite S
 * (the rule's IoU is then 0) is dropped. */
#define IOU_BOUND_MIN 0x1p-60f

#ifdef __SSE2__
static inline unsigned
iou_bound (__m128 ax1, __m128 ay1, __m128 ax2, __m128 ay2, __m128 aar,
    const probe *p)
{
  const __m128 zero = _mm_setzero_ps ();
  __m128 w = _mm_max_ps (_mm_sub_ps (_mm_min_ps (_mm_set1_ps (p->b[2]),
              ax2), _mm_max_ps (_mm_set1_ps (p->b[0]), ax1)), zero);
  __m128 h = _mm_max_ps (_mm_sub_ps (_mm_min_ps (_mm_set1_ps (p->b[3]),
              ay2), _mm_max_ps (_mm_set1_ps (p->b[1]), ay1)), zero);
  __m128 lhs = _mm_mul_ps (_mm_mul_ps (w, h), _mm_set1_ps (p->k1));
  __m128 rhs = _mm_mul_ps (_mm_add_ps (aar, _mm_set1_ps (p->area)),
      _mm_set1_ps (p->k2));

  return (unsigned) _mm_movemask_ps (_mm_or_ps (_mm_cmpge_ps (lhs, rhs),
          _mm_cmplt_ps (rhs, _mm_set1_ps (IOU_BOUND_MIN))));
}
#endif

#ifdef CNMS_HAVE_AVX_PATH
__attribute__ ((target ("avx")))
static inline unsigned
iou_bound_avx (__m256 ax1, __m256 ay1, __m256 ax2, __m256 ay2, __m256 aar,
    const probe *p)
{
  const __m256 zero = _mm256_setzero_ps ();
  __m256 w = _mm256_max_ps (_mm256_sub_ps (_mm256_min_ps (_mm256_set1_ps
              (p->b[2]), ax2), _mm256_max_ps (_mm256_set1_ps (p->b[0]),
              ax1)), zero);
  __m256 h = _mm256_max_ps (_mm256_sub_ps (_mm256_min_ps (_mm256_set1_ps
              (p->b[3]), ay2), _mm256_max_ps (_mm256_set1_ps (p->b[1]),
              ay1)), zero);
  __m256 lhs = _mm256_mul_ps (_mm256_mul_ps (w, h), _mm256_set1_ps (p->k1));
  __m256 rhs = _mm256_mul_ps (_mm256_add_ps (aar, _mm256_set1_ps (p->area)),
      _mm256_set1_ps (p->k2));

  return (unsigned) _mm256_movemask_ps (_mm256_or_ps (_mm256_cmp_ps (lhs,
              rhs, _CMP_GE_OQ), _mm256_cmp_ps (rhs,
              _mm256_set1_ps (IOU_BOUND_MIN), _CMP_LT_OQ)));
}
#endif

/* The bound of oriented boxes: cnms_obb_may_exceed (a, p->bo, p->iou)
 * for the kept boxes a set in bits (their cnms_obb values at o: cx, then
 * cy cap floats on, and so on), 4 (SSE2) or 8 (AVX) at a time; a bit it
 * clears is a box that cannot suppress b. For iou >= 1/16 the rule
 * (cnms_obb_iou_above) is 0 wherever cnms_obb_may_exceed is, and this is
 * cnms_obb_may_exceed: the same float operations on the same operands in
 * the same order (the minimum and the maximum select as cnms_fmin and
 * cnms_fmax do, NaN included; b's |u|^2 and |v|^2 and the factor
 * 4 (1 + iou) computed once, as the rule computes them; its early returns
 * folded into the mask), so the same answer, bit for bit. b's area lies
 * in [2^-40, 2^40] (p->obb_bound). The entries whose bit is not set may
 * hold stale values: their results are masked off. */
#ifdef __SSE2__
static inline __m128
obb_span (__m128 l, __m128 c, __m128 e)
{
  /* cnms_span_overlap: fmax (0, fmin (l, c + e) - fmax (-l, c - e)) */
  return _mm_max_ps (_mm_sub_ps (_mm_min_ps (_mm_add_ps (c, e), l),
          _mm_max_ps (_mm_sub_ps (c, e), _mm_xor_ps (l, _mm_set1_ps
                  (-0.0f)))), _mm_setzero_ps ());
}

static inline __m128
obb_abs (__m128 v)
{
  return _mm_andnot_ps (_mm_set1_ps (-0.0f), v);
}

/* x * y + z * w */
static inline __m128
obb_dot (__m128 x, __m128 y, __m128 z, __m128 w)
{
  return _mm_add_ps (_mm_mul_ps (x, y), _mm_mul_ps (z, w));
}

static inline unsigned
obb_may_exceed (unsigned bits, const float *o, size_t cap, const probe *p)
{
  const cnms_obb *bo = p->bo;
  const __m128 bux = _mm_set1_ps (bo->ux), buy = _mm_set1_ps (bo->uy);
  const __m128 bvx = _mm_set1_ps (bo->vx), bvy = _mm_set1_ps (bo->vy);
  const __m128 k = _mm_set1_ps (p->ok), sign = _mm_set1_ps (-0.0f);
  const __m128 cx = _mm_loadu_ps (o), cy = _mm_loadu_ps (o + cap);
  const __m128 ux = _mm_loadu_ps (o + 2 * cap);
  const __m128 uy = _mm_loadu_ps (o + 3 * cap);
  const __m128 vx = _mm_loadu_ps (o + 4 * cap);
  const __m128 vy = _mm_loadu_ps (o + 5 * cap);
  const __m128 ar4 = _mm_loadu_ps (o + 6 * cap);
  __m128 dx, dy, rhs, ou, ov, c0, c1, in;

  in = _mm_and_ps (_mm_cmpgt_ps (ar4, _mm_set1_ps (0x1p-40f)),
      _mm_cmplt_ps (ar4, _mm_set1_ps (0x1p40f)));
  dx = _mm_sub_ps (_mm_set1_ps (bo->cx), cx);
  dy = _mm_sub_ps (_mm_set1_ps (bo->cy), cy);
  rhs = _mm_mul_ps (_mm_mul_ps (_mm_set1_ps (p->iou), _mm_add_ps (ar4,
              _mm_set1_ps (bo->area))), _mm_set1_ps (1.0f - 0x1p-10f));
  /* in a's axes, b's centre at d */
  ou = obb_span (obb_dot (ux, ux, uy, uy), obb_dot (dx, ux, dy, uy),
      _mm_add_ps (obb_abs (obb_dot (bux, ux, buy, uy)),
          obb_abs (obb_dot (bvx, ux, bvy, uy))));
  ov = obb_span (obb_dot (vx, vx, vy, vy), obb_dot (dx, vx, dy, vy),
      _mm_add_ps (obb_abs (obb_dot (bux, vx, buy, vy)),
          obb_abs (obb_dot (bvx, vx, bvy, vy))));
  c0 = _mm_cmpnlt_ps (_mm_mul_ps (_mm_mul_ps (k, ou), ov), _mm_mul_ps (rhs,
          ar4));
  /* in b's axes, a's centre at -d */
  dx = _mm_xor_ps (dx, sign);
  dy = _mm_xor_ps (dy, sign);
  ou = obb_span (_mm_set1_ps (p->blu), obb_dot (dx, bux, dy, buy),
      _mm_add_ps (obb_abs (obb_dot (ux, bux, uy, buy)),
          obb_abs (obb_dot (vx, bux, vy, buy))));
  ov = obb_span (_mm_set1_ps (p->blv), obb_dot (dx, bvx, dy, bvy),
      _mm_add_ps (obb_abs (obb_dot (ux, bvx, uy, bvy)),
          obb_abs (obb_dot (vx, bvx, vy, bvy))));
  c1 = _mm_cmpnlt_ps (_mm_mul_ps (_mm_mul_ps (k, ou), ov), _mm_mul_ps (rhs,
          _mm_set1_ps (bo->area)));
  return bits & ((unsigned) _mm_movemask_ps (_mm_and_ps (c0, c1))
      | (~(unsigned) _mm_movemask_ps (in) & 15u));
}
#endif

#ifdef CNMS_HAVE_AVX_PATH
__attribute__ ((target ("avx")))
static inline __m256
obb_span_avx (__m256 l, __m256 c, __m256 e)
{
  return _mm256_max_ps (_mm256_sub_ps (_mm256_min_ps (_mm256_add_ps (c, e),
              l), _mm256_max_ps (_mm256_sub_ps (c, e), _mm256_xor_ps (l,
                  _mm256_set1_ps (-0.0f)))), _mm256_setzero_ps ());
}

__attribute__ ((target ("avx")))
static inline __m256
obb_abs_avx (__m256 v)
{
  return _mm256_andnot_ps (_mm256_set1_ps (-0.0f), v);
}

__attribute__ ((target ("avx")))
static inline __m256
obb_dot_avx (__m256 x, __m256 y, __m256 z, __m256 w)
{
  return _mm256_add_ps (_mm256_mul_ps (x, y), _mm256_mul_ps (z, w));
}

/* obb_may_exceed 8 at a time (the same operations). */
__attribute__ ((target ("avx")))
static inline unsigned
obb_may_exceed_avx (unsigned bits, const float *o, size_t cap,
    const probe *p)
{
  const cnms_obb *bo = p->bo;
  const __m256 bux = _mm256_set1_ps (bo->ux), buy = _mm256_set1_ps (bo->uy);
  const __m256 bvx = _mm256_set1_ps (bo->vx), bvy = _mm256_set1_ps (bo->vy);
  const __m256 k = _mm256_set1_ps (p->ok), sign = _mm256_set1_ps (-0.0f);
  const __m256 cx = _mm256_loadu_ps (o), cy = _mm256_loadu_ps (o + cap);
  const __m256 ux = _mm256_loadu_ps (o + 2 * cap);
  const __m256 uy = _mm256_loadu_ps (o + 3 * cap);
  const __m256 vx = _mm256_loadu_ps (o + 4 * cap);
  const __m256 vy = _mm256_loadu_ps (o + 5 * cap);
  const __m256 ar8 = _mm256_loadu_ps (o + 6 * cap);
  __m256 dx, dy, rhs, ou, ov, c0, c1, in;

  in = _mm256_and_ps (_mm256_cmp_ps (ar8, _mm256_set1_ps (0x1p-40f),
          _CMP_GT_OQ), _mm256_cmp_ps (ar8, _mm256_set1_ps (0x1p40f),
          _CMP_LT_OQ));
  dx = _mm256_sub_ps (_mm256_set1_ps (bo->cx), cx);
  dy = _mm256_sub_ps (_mm256_set1_ps (bo->cy), cy);
  rhs = _mm256_mul_ps (_mm256_mul_ps (_mm256_set1_ps (p->iou),
          _mm256_add_ps (ar8, _mm256_set1_ps (bo->area))),
      _mm256_set1_ps (1.0f - 0x1p-10f));
  ou = obb_span_avx (obb_dot_avx (ux, ux, uy, uy), obb_dot_avx (dx, ux, dy,
          uy), _mm256_add_ps (obb_abs_avx (obb_dot_avx (bux, ux, buy, uy)),
          obb_abs_avx (obb_dot_avx (bvx, ux, bvy, uy))));
  ov = obb_span_avx (obb_dot_avx (vx, vx, vy, vy), obb_dot_avx (dx, vx, dy,
          vy), _mm256_add_ps (obb_abs_avx (obb_dot_avx (bux, vx, buy, vy)),
          obb_abs_avx (obb_dot_avx (bvx, vx, bvy, vy))));
  c0 = _mm256_cmp_ps (_mm256_mul_ps (_mm256_mul_ps (k, ou), ov),
      _mm256_mul_ps (rhs, ar8), _CMP_NLT_UQ);
  dx = _mm256_xor_ps (dx, sign);
  dy = _mm256_xor_ps (dy, sign);
  ou = obb_span_avx (_mm256_set1_ps (p->blu), obb_dot_avx (dx, bux, dy,
          buy), _mm256_add_ps (obb_abs_avx (obb_dot_avx (ux, bux, uy, buy)),
          obb_abs_avx (obb_dot_avx (vx, bux, vy, buy))));
  ov = obb_span_avx (_mm256_set1_ps (p->blv), obb_dot_avx (dx, bvx, dy,
          bvy), _mm256_add_ps (obb_abs_avx (obb_dot_avx (ux, bvx, uy, bvy)),
          obb_abs_avx (obb_dot_avx (vx, bvx, vy, bvy))));
  c1 = _mm256_cmp_ps (_mm256_mul_ps (_mm256_mul_ps (k, ou), ov),
      _mm256_mul_ps (rhs, _mm256_set1_ps (bo->area)), _CMP_NLT_UQ);
  return bits & ((unsigned) _mm256_movemask_ps (_mm256_and_ps (c0, c1))
      | (~(unsigned) _mm256_movemask_ps (in) & 255u));
}
#endif

/* Does a box of cell c suppress p->b? Lanes past c->n (up to c->cap) hold
 * stale values and are masked out. */
static inline int
scan_cell (const float *arena, const cell *c, const probe *p)
{
  const float *x1 = arena + c->off, *y1 = x1 + c->cap, *x2 = y1 + c->cap;
  const float *y2 = x2 + c->cap, *ar = y2 + c->cap;
  int i, n = c->n;
#ifdef __SSE2__
  const __m128 lx = _mm_set1_ps (p->q[0]), ly = _mm_set1_ps (p->q[1]);
  const __m128 hx = _mm_set1_ps (p->q[2]), hy = _mm_set1_ps (p->q[3]);

  for (i = 0; i < n; i += 4) {
    __m128 ax1 = _mm_loadu_ps (x1 + i), ay1 = _mm_loadu_ps (y1 + i);
    __m128 ax2 = _mm_loadu_ps (x2 + i), ay2 = _mm_loadu_ps (y2 + i);
    __m128 m = _mm_and_ps (_mm_and_ps (_mm_cmplt_ps (ax1, hx),
            _mm_cmpgt_ps (ax2, lx)), _mm_and_ps (_mm_cmplt_ps (ay1, hy),
            _mm_cmpgt_ps (ay2, ly)));
    /* the stale lanes' bits masked off before any branch on them */
    unsigned bits = (unsigned) _mm_movemask_ps (m)
        & (n - i >= 4 ? 15u : (1u << (n - i)) - 1);

    if (bits && p->bound)
      bits &= iou_bound (ax1, ay1, ax2, ay2, _mm_loadu_ps (ar + i), p);
    if (bits && p->obb_bound)
      bits = obb_may_exceed (bits, ar + c->cap + i, (size_t) c->cap, p);
    if (bits && lanes_suppress (bits, x1, y1, x2, y2, ar, i, p))
      return 1;
  }
#else
  for (i = 0; i < n; i++) {
    const float a[4] = { x1[i], y1[i], x2[i], y2[i] };
    if (a[0] < p->q[2] && a[2] > p->q[0] && a[1] < p->q[3]
        && a[3] > p->q[1] && kept_suppresses (a[0], a[1], a[2], a[3], ar[i],
            p))
      return 1;
  }
#endif
  return 0;
}

#ifdef CNMS_HAVE_AVX_PATH
/* scan_cell 8 lanes at a time (the same operations). */
__attribute__ ((target ("avx")))
static inline int
scan_cell_avx (const float *arena, const cell *c, const probe *p)
{
  const float *x1 = arena + c->off, *y1 = x1 + c->cap, *x2 = y1 + c->cap;
  const float *y2 = x2 + c->cap, *ar = y2 + c->cap;
  const __m256 lx = _mm256_set1_ps (p->q[0]), ly = _mm256_set1_ps (p->q[1]);
  const __m256 hx = _mm256_set1_ps (p->q[2]), hy = _mm256_set1_ps (p->q[3]);
  int i, n = c->n;

  for (i = 0; i < n; i += 8) {
    __m256 ax1 = _mm256_loadu_ps (x1 + i), ay1 = _mm256_loadu_ps (y1 + i);
    __m256 ax2 = _mm256_loadu_ps (x2 + i), ay2 = _mm256_loadu_ps (y2 + i);
    __m256 m = _mm256_and_ps (_mm256_and_ps (_mm256_cmp_ps (ax1, hx,
                _CMP_LT_OQ), _mm256_cmp_ps (ax2, lx, _CMP_GT_OQ)),
        _mm256_and_ps (_mm256_cmp_ps (ay1, hy, _CMP_LT_OQ),
            _mm256_cmp_ps (ay2, ly, _CMP_GT_OQ)));
    unsigned bits = (unsigned) _mm256_movemask_ps (m)
        & (n - i >= 8 ? 255u : (1u << (n - i)) - 1);

    if (bits && p->bound)
      bits &= iou_bound_avx (ax1, ay1, ax2, ay2, _mm256_loadu_ps (ar + i),
          p);
    if (bits && p->obb_bound)
      bits = obb_may_exceed_avx (bits, ar + c->cap + i, (size_t) c->cap, p);
    if (bits && lanes_suppress (bits, x1, y1, x2, y2, ar, i, p))
      return 1;
  }
  return 0;
}
#endif

/* Does a kept box of the klink chain from i suppress p->b? */
static int
scan_list (const int32_t *klink, int32_t i, const probe *p)
{
  for (; i >= 0; i = klink[i]) {
    const float *a = p->kbox + 4 * (size_t) i;
    if (a[0] < p->q[2] && a[2] > p->q[0] && a[1] < p->q[3] && a[3] > p->q[1]
        && kept_suppresses (a[0], a[1], a[2], a[3], p->karea[i], p))
      return 1;
  }
  return 0;
}

/* Gives full grid cell c a block twice as large, or its first one, at the
 * arena's end. The arena grows (keeping its contents) only for an input at
 * least as large as any before (w->may_grow), so that a warm context
 * allocates nothing for inputs that are not larger. Returns 1 when there
 * is no room: the caller files the box in the big cell instead. */
static int
grow_cell (walk *w, cell *c)
{
  int32_t cap = c->cap ? 2 * c->cap : w->cap0;
  size_t need = w->used + (size_t) w->na * (size_t) cap;
  float *arena;
  int a;

  if (need * sizeof (float) > w->ws->arena.cap) {
    if (!w->may_grow || need > 0x7fffffff)
      return 1;
    if (cnms_buf_grow (w->ctx, &w->ws->arena, need * sizeof (float))
        != CNMS_OK)
      return -1;
  }
  arena = w->ws->arena.p;
  for (a = 0; a < w->na && c->n > 0; a++)
    memcpy (arena + w->used + (size_t) a * cap, arena + c->off +
        (size_t) a * c->cap, (size_t) c->n * sizeof (float));
  c->off = (int32_t) w->used;
  c->cap = cap;
  w->used = need;
  return 0;
}

/* Stores box v (its na values: x1 y1 x2 y2 area, and an oriented box's
 * cnms_obb values) in cell c of block base, which has room. */
static inline void
put_box (float *base, cell *c, const float *v, int na)
{
  float *x1 = base + c->off + c->n;
  int a;

  x1[0] = v[0];
  x1[c->cap] = v[1];
  x1[2 * (size_t) c->cap] = v[2];
  x1[3 * (size_t) c->cap] = v[3];
  x1[4 * (size_t) c->cap] = v[4];
  for (a = CELL_ARRAYS; a < na; a++)
    x1[(size_t) a * c->cap] = v[a];
  c->n++;
}

/* Files box v in grid cell c: 0, or grow_cell's 1 or -1. */
static inline int
file_in (walk *w, cell *c, const float *v)
{
  if (c->n == c->cap) {
    int r = grow_cell (w, c);
    if (r != 0)
      return r;
  }
  put_box (w->ws->arena.p, c, v, w->na);
  return 0;
}

#endif /* CNMS_CPU_NMS_INDEX_H */
