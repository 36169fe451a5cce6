/* The heads of the kept records on the CPU (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"): keypoints gathered and mapped,
 * instance masks from the prototypes. The arithmetic is cnms_heads.h's,
 * shared with the CUDA kernels. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CNMS_HEADS_AVX 1
#endif

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
    const cnms_det *dets, int n, const void **payload)
{
  const int k = h->shape.n_keypoints;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->shape.n_anchors;
  float *out;
  int i, j;

  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->keypoints,
          ((size_t) n * (size_t) k + 1) * 3 * sizeof (float)));
  out = w->keypoints.p;
  for (i = 0; i < n; i++)
    for (j = 0; j < k; j++)
      cnms_pose_keypoint (h->t->data, f16, na, h->shape.keypoint_dims, j,
          (size_t) (uint32_t) dets[i].anchor, &h->map,
          out + 3 * ((size_t) i * k + j));
  *payload = out;
  return CNMS_OK;
}

/* Prefetches the bytes [p, p + n) towards the core (a hint: no effect on
 * any value), as T2 (docs/performance.md, "Choices in the code"). */
static inline void
prefetch_span (const void *p, size_t n)
{
#ifdef __SSE2__
  const char *c = (const char *) ((uintptr_t) p & ~(uintptr_t) 63);
  const char *e = (const char *) p + n;

  for (; c < e; c += 64)
    _mm_prefetch (c, _MM_HINT_T2);
#else
  (void) p;
  (void) n;
#endif
}

/* Planes per group of logits_row. */
#define SEG_GROUP 4
/* A row of logits: l[x] = sum over m ascending of c[m] p[m stride + x]
 * for x < n, from 0 when init, else from l[x] as it is (the sum of the
 * planes before p), one rounded product and one rounded sum each
 * (cnms_mask_logit's operations; SSE2's mulps and addps are those IEEE
 * operations). The sums stay in registers over SEG_GROUP planes at a time
 * and go through l (exactly) between groups: 160x160 prototypes' planes
 * are 100 KiB apart, a multiple of 4 KiB, so the same x of every plane
 * falls in one L1 set; all 32 at once evict each other (the group of 4:
 * docs/performance.md, "Choices in the code"). */
static void
logits_row (float *l, const float *p, size_t stride, const float *c, int mc,
    int init, int n)
{
  int m0, m, x;

  for (m0 = 0; m0 < mc; m0 += SEG_GROUP) {
    const int m1 = m0 + SEG_GROUP < mc ? m0 + SEG_GROUP : mc;

    x = 0;
#ifdef __SSE2__
    for (; x + 16 <= n; x += 16) {
      __m128 a0, a1, a2, a3;
      const float *q = p + (size_t) m0 * stride + x;

      if (init && m0 == 0) {
        a0 = a1 = a2 = a3 = _mm_setzero_ps ();
      } else {
        a0 = _mm_loadu_ps (l + x);
        a1 = _mm_loadu_ps (l + x + 4);
        a2 = _mm_loadu_ps (l + x + 8);
        a3 = _mm_loadu_ps (l + x + 12);
      }
      for (m = m0; m < m1; m++, q += stride) {
        const __m128 cv = _mm_set1_ps (c[m]);

        a0 = _mm_add_ps (a0, _mm_mul_ps (cv, _mm_loadu_ps (q)));
        a1 = _mm_add_ps (a1, _mm_mul_ps (cv, _mm_loadu_ps (q + 4)));
        a2 = _mm_add_ps (a2, _mm_mul_ps (cv, _mm_loadu_ps (q + 8)));
        a3 = _mm_add_ps (a3, _mm_mul_ps (cv, _mm_loadu_ps (q + 12)));
      }
      _mm_storeu_ps (l + x, a0);
      _mm_storeu_ps (l + x + 4, a1);
      _mm_storeu_ps (l + x + 8, a2);
      _mm_storeu_ps (l + x + 12, a3);
    }
    for (; x + 4 <= n; x += 4) {
      __m128 a0 = init && m0 == 0 ? _mm_setzero_ps () : _mm_loadu_ps (l + x);
      const float *q = p + (size_t) m0 * stride + x;

      for (m = m0; m < m1; m++, q += stride)
        a0 = _mm_add_ps (a0, _mm_mul_ps (_mm_set1_ps (c[m]),
                _mm_loadu_ps (q)));
      _mm_storeu_ps (l + x, a0);
    }
#endif
    for (; x < n; x++) {
      float a = init && m0 == 0 ? 0.0f : l[x];

      for (m = m0; m < m1; m++)
        a = cnms_fadd (a, cnms_fmul (c[m], p[(size_t) m * stride + x]));
      l[x] = a;
    }
  }
}

#ifdef CNMS_HEADS_AVX
/* logits_row 8 floats a vector (AVX's vmulps and vaddps are the same IEEE
 * operations; no FMA). */
__attribute__ ((target ("avx"), always_inline))
static inline void
logits_row_avx_body (float *l, const float *p, size_t stride, const float *c,
    int mc, int init, int n)
{
  int m0, m, x;

  if (n < 8) {
    logits_row (l, p, stride, c, mc, init, n);
    return;
  }
  for (m0 = 0; m0 < mc; m0 += SEG_GROUP) {
    const int m1 = m0 + SEG_GROUP < mc ? m0 + SEG_GROUP : mc;
    /* the last 8 (n mod 8 > 0): computed first from l as it is, stored
     * last; the ones they share with the last full 8 get the same value
     * twice */
    const int tail = n - 8, has_tail = (n & 7) != 0;
    __m256 t = _mm256_setzero_ps ();

    if (has_tail) {
      const float *q = p + (size_t) m0 * stride + tail;

      if (!(init && m0 == 0))
        t = _mm256_loadu_ps (l + tail);
      for (m = m0; m < m1; m++, q += stride)
        t = _mm256_add_ps (t, _mm256_mul_ps (_mm256_broadcast_ss (c + m),
                _mm256_loadu_ps (q)));
    }
    for (x = 0; x + 32 <= n; x += 32) {
      __m256 a0, a1, a2, a3;
      const float *q = p + (size_t) m0 * stride + x;

      if (init && m0 == 0) {
        a0 = a1 = a2 = a3 = _mm256_setzero_ps ();
      } else {
        a0 = _mm256_loadu_ps (l + x);
        a1 = _mm256_loadu_ps (l + x + 8);
        a2 = _mm256_loadu_ps (l + x + 16);
        a3 = _mm256_loadu_ps (l + x + 24);
      }
      for (m = m0; m < m1; m++, q += stride) {
        const __m256 cv = _mm256_broadcast_ss (c + m);

        a0 = _mm256_add_ps (a0, _mm256_mul_ps (cv, _mm256_loadu_ps (q)));
        a1 = _mm256_add_ps (a1, _mm256_mul_ps (cv, _mm256_loadu_ps (q + 8)));
        a2 = _mm256_add_ps (a2, _mm256_mul_ps (cv, _mm256_loadu_ps (q + 16)));
        a3 = _mm256_add_ps (a3, _mm256_mul_ps (cv, _mm256_loadu_ps (q + 24)));
      }
      _mm256_storeu_ps (l + x, a0);
      _mm256_storeu_ps (l + x + 8, a1);
      _mm256_storeu_ps (l + x + 16, a2);
      _mm256_storeu_ps (l + x + 24, a3);
    }
    for (; x + 8 <= n; x += 8) {
      __m256 a0 = init && m0 == 0 ? _mm256_setzero_ps ()
          : _mm256_loadu_ps (l + x);
      const float *q = p + (size_t) m0 * stride + x;

      for (m = m0; m < m1; m++, q += stride)
        a0 = _mm256_add_ps (a0, _mm256_mul_ps (_mm256_broadcast_ss (c + m),
                _mm256_loadu_ps (q)));
      _mm256_storeu_ps (l + x, a0);
    }
    if (has_tail)
      _mm256_storeu_ps (l + tail, t);
  }
}

/* logits_row_avx_body with init a constant in each copy, rather than one
 * copy testing init (docs/performance.md, "Choices in the code"). */
__attribute__ ((target ("avx")))
static void
logits_row_avx (float *l, const float *p, size_t stride, const float *c,
    int mc, int init, int n)
{
  if (init)
    logits_row_avx_body (l, p, stride, c, mc, 1, n);
  else
    logits_row_avx_body (l, p, stride, c, mc, 0, n);
}
#endif

/* A row of logits l sampled at a mask's columns: h[x] = wx0 l[a0] +
 * wx1 l[a1], the inner sums of cnms_mask_bilinear (the same operations). */
static void
row_lerp (const float *l, const int32_t *a0, const int32_t *a1,
    const float *w0, const float *w1, int n, float *h)
{
  int x = 0;

#ifdef __SSE2__
  for (; x + 4 <= n; x += 4) {
    const __m128 v0 = _mm_setr_ps (l[a0[x]], l[a0[x + 1]], l[a0[x + 2]],
        l[a0[x + 3]]);
    const __m128 v1 = _mm_setr_ps (l[a1[x]], l[a1[x + 1]], l[a1[x + 2]],
        l[a1[x + 3]]);

    _mm_storeu_ps (h + x, _mm_add_ps (_mm_mul_ps (_mm_loadu_ps (w0 + x), v0),
            _mm_mul_ps (_mm_loadu_ps (w1 + x), v1)));
    /* the last 4, overlapping: each value depends on its x alone */
    if (x + 4 < n && x + 8 > n && n >= 8)
      x = n - 8;
  }
#endif
  for (; x < n; x++)
    h[x] = cnms_fadd (cnms_fmul (w0[x], l[a0[x]]), cnms_fmul (w1[x],
            l[a1[x]]));
}

#ifdef __SSE2__
/* 4 pixels of a mask row: wy0 h0 + wy1 h1 > 0 as lanes of all ones or
 * zeros (the operations of row_bytes' scalar loop). */
static inline __m128i
row_gt4 (const float *h0, const float *h1, __m128 a, __m128 b)
{
  return _mm_castps_si128 (_mm_cmpgt_ps (_mm_add_ps (_mm_mul_ps (a,
                  _mm_loadu_ps (h0)), _mm_mul_ps (b, _mm_loadu_ps (h1))),
          _mm_setzero_ps ()));
}
#endif

/* A mask row: out[x] = wy0 h0[x] + wy1 h1[x] > 0, the outer sum of
 * cnms_mask_bilinear (NaN is not > 0 on either path). */
static void
row_bytes (const float *h0, const float *h1, float wy0, float wy1, int n,
    uint8_t *out)
{
  int x = 0;

#ifdef __SSE2__
  const __m128 a = _mm_set1_ps (wy0), b = _mm_set1_ps (wy1);
  const __m128i one = _mm_set1_epi8 (1);

  /* 16 at a time: the lanes (-1 or 0) packed to bytes, then & 1 */
  for (; x + 16 <= n; x += 16) {
    const __m128i lo = _mm_packs_epi32 (row_gt4 (h0 + x, h1 + x, a, b),
        row_gt4 (h0 + x + 4, h1 + x + 4, a, b));
    const __m128i hi = _mm_packs_epi32 (row_gt4 (h0 + x + 8, h1 + x + 8, a,
            b), row_gt4 (h0 + x + 12, h1 + x + 12, a, b));

    _mm_storeu_si128 ((__m128i *) (out + x),
        _mm_and_si128 (_mm_packs_epi16 (lo, hi), one));
    /* the last 16, overlapping: each byte depends on its x alone */
    if (x + 16 < n && x + 32 > n)
      x = n - 32;
  }
#endif
  for (; x < n; x++)
    out[x] = cnms_fadd (cnms_fmul (wy0, h0[x]), cnms_fmul (wy1, h1[x]))
        > 0.0f;
}

#ifdef CNMS_HEADS_AVX
/* row_lerp 8 columns at a time where their 16 samples lie within 8
 * logits (an enlarging map): the 8 loaded at once and permuted into place
 * (AVX2), else fetched one by one. Reads up to 7 floats past a row's
 * last sample (the logits buffer has room for them; they are never
 * used). */
__attribute__ ((target ("avx2")))
static void
row_lerp_avx2 (const float *l, const int32_t *a0, const int32_t *a1,
    const float *w0, const float *w1, int n, float *h)
{
  int x = 0;

  if (n < 8) {
    row_lerp (l, a0, a1, w0, w1, n, h);
    return;
  }
  for (;; x += 8) {
    const int b = a0[x];
    __m256 v0, v1;

    if (a1[x + 7] - b <= 7) {
      const __m256i base = _mm256_set1_epi32 (b);
      const __m256 v = _mm256_loadu_ps (l + b);

      v0 = _mm256_permutevar8x32_ps (v, _mm256_sub_epi32 (_mm256_loadu_si256
              ((const __m256i *) (a0 + x)), base));
      v1 = _mm256_permutevar8x32_ps (v, _mm256_sub_epi32 (_mm256_loadu_si256
              ((const __m256i *) (a1 + x)), base));
    } else {
      v0 = _mm256_setr_ps (l[a0[x]], l[a0[x + 1]], l[a0[x + 2]],
          l[a0[x + 3]], l[a0[x + 4]], l[a0[x + 5]], l[a0[x + 6]],
          l[a0[x + 7]]);
      v1 = _mm256_setr_ps (l[a1[x]], l[a1[x + 1]], l[a1[x + 2]],
          l[a1[x + 3]], l[a1[x + 4]], l[a1[x + 5]], l[a1[x + 6]],
          l[a1[x + 7]]);
    }
    _mm256_storeu_ps (h + x, _mm256_add_ps (_mm256_mul_ps (_mm256_loadu_ps
                (w0 + x), v0), _mm256_mul_ps (_mm256_loadu_ps (w1 + x), v1)));
    if (x + 8 == n)
      break;
    /* the last 8, overlapping: each value depends on its x alone */
    if (x + 16 > n)
      x = n - 16;
  }
}

/* row_bytes 16 pixels at a time in two 8-lane halves (AVX). */
__attribute__ ((target ("avx")))
static void
row_bytes_avx (const float *h0, const float *h1, float wy0, float wy1, int n,
    uint8_t *out)
{
  const __m256 a = _mm256_set1_ps (wy0), b = _mm256_set1_ps (wy1);
  const __m256 zero = _mm256_setzero_ps ();
  const __m128i one = _mm_set1_epi8 (1);
  int x = 0;

  if (n < 16) {
    row_bytes (h0, h1, wy0, wy1, n, out);
    return;
  }
  for (;; x += 16) {
    const __m256 g0 = _mm256_cmp_ps (_mm256_add_ps (_mm256_mul_ps (a,
                _mm256_loadu_ps (h0 + x)), _mm256_mul_ps (b,
                _mm256_loadu_ps (h1 + x))), zero, _CMP_GT_OQ);
    const __m256 g1 = _mm256_cmp_ps (_mm256_add_ps (_mm256_mul_ps (a,
                _mm256_loadu_ps (h0 + x + 8)), _mm256_mul_ps (b,
                _mm256_loadu_ps (h1 + x + 8))), zero, _CMP_GT_OQ);
    const __m128i lo = _mm_packs_epi32 (_mm_castps_si128
        (_mm256_castps256_ps128 (g0)), _mm_castps_si128
        (_mm256_extractf128_ps (g0, 1)));
    const __m128i hi = _mm_packs_epi32 (_mm_castps_si128
        (_mm256_castps256_ps128 (g1)), _mm_castps_si128
        (_mm256_extractf128_ps (g1, 1)));

    _mm_storeu_si128 ((__m128i *) (out + x),
        _mm_and_si128 (_mm_packs_epi16 (lo, hi), one));
    if (x + 16 == n)
      break;
    /* the last 16, overlapping: each byte depends on its x alone */
    if (x + 32 > n)
      x = n - 32;
  }
}
#endif

typedef void (*row_lerp_fn) (const float *l, const int32_t *a0,
    const int32_t *a1, const float *w0, const float *w1, int n, float *h);
typedef void (*row_bytes_fn) (const float *h0, const float *h1, float wy0,
    float wy1, int n, uint8_t *out);

/* Two rows of row_lerp's results, by window row (-1: none). */
typedef struct {
  int row[2];
  float *h[2];
  row_lerp_fn lerp;
} lerp_cache;

/* Window row r sampled at the columns, from the cache or computed into
 * the slot that does not hold row keep. */
static const float *
lerp_row (lerp_cache *c, int r, int keep, const float *lg, int ww,
    const int32_t *a0, const int32_t *a1, const float *w0, const float *w1,
    int n)
{
  int i;

  for (i = 0; i < 2; i++)
    if (c->row[i] == r)
      return c->h[i];
  i = c->row[0] == keep ? 1 : 0;
  c->lerp (lg + (size_t) r * ww, a0, a1, w0, w1, n, c->h[i]);
  c->row[i] = r;
  return c->h[i];
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

/* A kept record's window: the prototype pixels its rectangle samples,
 * columns x0 .. x0 + ww - 1 and rows y0 .. y0 + wh - 1, their logits at
 * logits + at (row-major, ww a row); ww = 0: an empty mask. */
typedef struct {
  int x0, y0, ww, wh;
  size_t at;
} seg_window;

/* How many prototype rows ahead the sweep prefetches. */
#define SEG_ROWS_AHEAD 3
/* Planes per pass of the sweep: each pass reads its planes' rows in
 * order, SEG_PASS streams (docs/performance.md, "Choices in the code";
 * the windows' partial sums stay in the caches between passes). */
#define SEG_PASS 8

typedef void (*logits_row_fn) (float *l, const float *p, size_t stride,
    const float *c, int mc, int init, int n);

/* Planes m0 .. m0 + mc - 1 of the window rows of prototype row y of the
 * active records: per record, l[x] = l[x] (0 when m0 = 0) + the sum over
 * those m ascending of coef[m] times plane m's pixel, cnms_mask_logit's
 * operations in its order (the prototypes' row y of plane m at planes +
 * (m - m0) plane + (x - px0)). */
static void
sweep_row (logits_row_fn row, const seg_window *win, const int32_t *active,
    int n_active, int y, const float *planes, size_t plane, int px0,
    const float *coef, int m0, int mc, int mc_all, float *logits)
{
  int k;

  for (k = 0; k < n_active; k++) {
    const int i = active[k];
    const seg_window *v = &win[i];

    row (logits + v->at + (size_t) (y - v->y0) * v->ww, planes + (v->x0
            - px0), plane, coef + (size_t) i * mc_all + m0, mc, m0 == 0,
        v->ww);
  }
}

/* The masks of the kept records. First every record's window of logits
 * (each logit sums m ascending from 0), in passes of SEG_PASS planes down
 * the prototype rows: each row's span that windows take is asked for
 * SEG_ROWS_AHEAD rows ahead in the pass's planes, and every window on the
 * row adds the pass's planes to its part while they are in cache (float16
 * spans converted first; the partial sums are exact floats between
 * passes, so each logit's operations are cnms_mask_logit's in its order).
 * Then each pixel's bilinear logit > 0, record by record: the window rows
 * sampled at the columns, then two of them weighted by the row's samples.
 * Nothing of it runs when no record is kept. */
static cnms_status
seg (cnms_backend_ctx *ctx, cnms_heads_ws *w, const cnms_heads_args *h,
    const cnms_det *dets, int n, const void **payload)
{
  const int mc = h->shape.n_coeffs, hp = h->shape.proto_height;
  const int wp = h->shape.proto_width;
  const size_t plane = (size_t) hp * (size_t) wp;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->shape.n_anchors;
  cnms_mask_axis ax, ay;
  int maxw = 1, maxh = 1, i, y, k, m, m0, n_active, next;
  size_t total = 0;
  seg_window *win;
  int32_t *order, *active, *starts, *rlo, *rhi;
  float *coef, *logits, *rows;
  uint8_t *bytes;
  lerp_cache cache;
  logits_row_fn row = logits_row;
  row_bytes_fn bytes_fn = row_bytes;

  cache.lerp = row_lerp;
#ifdef CNMS_HEADS_AVX
  if (!w->no_avx && __builtin_cpu_supports ("avx")) {
    row = logits_row_avx;
    bytes_fn = row_bytes_avx;
  }
  if (!w->no_avx && __builtin_cpu_supports ("avx2"))
    cache.lerp = row_lerp_avx2;
#endif
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->mask_bytes,
          h->mask_bytes > 0 ? h->mask_bytes : 1));
  bytes = w->mask_bytes.p;
  *payload = bytes;
  if (n == 0)
    return CNMS_OK;
  for (i = 0; i < n; i++) {
    if (h->masks[i].width > maxw)
      maxw = h->masks[i].width;
    if (h->masks[i].height > maxh)
      maxh = h->masks[i].height;
  }
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->cols,
          (size_t) maxw * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->rows,
          (size_t) maxh * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->coef,
          (size_t) n * (size_t) mc * sizeof (float)));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->lerp,
          (size_t) maxw * 2 * sizeof (float)));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->plan,
          (size_t) n * sizeof (seg_window) + ((size_t) 3 * n
              + (size_t) 3 * hp + 1) * sizeof (int32_t)));
  win = w->plan.p;
  order = (int32_t *) (win + n);
  active = order + n;
  starts = active + n;          /* hp + 1 */
  rlo = starts + hp + 1;        /* hp */
  rhi = rlo + hp;               /* hp */
  cnms_mask_axis_init (&ax, h->map.gain_x, h->map.pad_x, wp, h->model_w);
  cnms_mask_axis_init (&ay, h->map.gain_y, h->map.pad_y, hp, h->model_h);

  /* the windows (the samples are monotonic: a window spans its first
   * pixel's first index to its last pixel's second), and per prototype
   * row the columns the windows take there */
  for (y = 0; y < hp; y++) {
    rlo[y] = wp;
    rhi[y] = -1;
    starts[y] = 0;
  }
  starts[hp] = 0;
  coef = w->coef.p;
  for (i = 0; i < n; i++) {
    const cnms_payload *r = &h->masks[i];
    seg_window *v = &win[i];
    int lo, hi, x1, y1;
    float w0, w1;

    v->ww = v->wh = 0;
    v->at = total;
    if (r->width == 0 || r->height == 0)
      continue;
    cnms_mask_sample (&ax, r->x, &v->x0, &hi, &w0, &w1);
    cnms_mask_sample (&ax, r->x + r->width - 1, &lo, &x1, &w0, &w1);
    cnms_mask_sample (&ay, r->y, &v->y0, &hi, &w0, &w1);
    cnms_mask_sample (&ay, r->y + r->height - 1, &lo, &y1, &w0, &w1);
    v->ww = x1 - v->x0 + 1;
    v->wh = y1 - v->y0 + 1;
    total += (size_t) v->ww * (size_t) v->wh;
    for (y = v->y0; y <= y1; y++) {
      if (v->x0 < rlo[y])
        rlo[y] = v->x0;
      if (x1 > rhi[y])
        rhi[y] = x1;
    }
    starts[v->y0 + 1]++;
    /* the coefficients are strided by N: ask for them all at once */
    for (m = 0; m < mc; m++)
      prefetch_span ((const char *) h->t->data + (((size_t) h->row0
                  + (size_t) m) * na + (size_t) (uint32_t) dets[i].anchor)
          * (f16 ? 2 : 4), 1);
  }
  /* 8 floats more: row_lerp_avx2 may read 7 past a window's last */
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->logits,
          (total + 8) * sizeof (float)));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->protos,
          (size_t) mc * ((size_t) wp + 32) * sizeof (float)));
  rows = w->protos.p;
  logits = w->logits.p;
  for (i = 0; i < n; i++) {
    const size_t a = (size_t) (uint32_t) dets[i].anchor;

    for (m = 0; m < mc; m++)
      coef[(size_t) i * mc + m] = cnms_tensor_value (h->t->data, f16,
          ((size_t) h->row0 + (size_t) m) * na + a);
  }
  /* the records by first window row (counting sort) */
  for (y = 0; y < hp; y++)
    starts[y + 1] += starts[y];
  for (i = 0; i < n; i++)
    if (win[i].ww > 0)
      order[starts[win[i].y0]++] = i;
  /* starts[y] is now the end of row y's records in order */

  /* the sweep: SEG_PASS planes at a time down the rows, each plane's rows
   * read in order */
  for (m0 = 0; m0 < mc; m0 += SEG_PASS) {
    const int nm = mc - m0 < SEG_PASS ? mc - m0 : SEG_PASS;

    n_active = 0;
    next = 0;
    for (y = 0; y < hp; y++) {
      const int ya = y + SEG_ROWS_AHEAD;
      int span;
      size_t sp;

      /* the records that end above y leave, those starting at y join */
      for (k = 0; k < n_active; k++)
        if (win[active[k]].y0 + win[active[k]].wh <= y)
          active[k--] = active[--n_active];
      for (; next < starts[y]; next++)
        active[n_active++] = order[next];
      if (ya < hp && rhi[ya] >= 0) {
        const size_t len = (size_t) (rhi[ya] - rlo[ya] + 1) << (f16 ? 1 : 2);

        for (m = m0; m < m0 + nm; m++)
          prefetch_span ((const char *) h->protos->data + ((size_t) m * plane
                  + (size_t) ya * wp + rlo[ya]) * (f16 ? 2 : 4), len);
      }
      if (n_active == 0)
        continue;
      if (!f16) {
        sweep_row (row, win, active, n_active, y, (const float *)
            h->protos->data + (size_t) m0 * plane + (size_t) y * wp + rlo[y],
            plane, rlo[y], coef, m0, nm, mc, logits);
        continue;
      }
      /* float16: row y's span of the pass's planes converted */
      span = rhi[y] - rlo[y] + 1;
      sp = (size_t) (((span + 15) / 16) | 1) * 16;
      for (m = 0; m < nm; m++)
        cnms_cpu_halves_to_floats ((const uint16_t *) h->protos->data
            + (size_t) (m0 + m) * plane + (size_t) y * wp + rlo[y], span,
            rows + (size_t) m * sp);
      sweep_row (row, win, active, n_active, y, rows, sp, rlo[y], coef, m0,
          nm, mc, logits);
    }
  }

  /* each pixel is cnms_mask_bilinear's value: the window's rows sampled at
   * the columns once each (rows only advance with y), then per row the two
   * weighted by wy */
  for (i = 0; i < n; i++) {
    const cnms_payload *r = &h->masks[i];
    const seg_window *v = &win[i];
    int32_t *cx0 = w->cols.p, *cx1 = cx0 + maxw;
    float *wx0 = (float *) (cx1 + maxw), *wx1 = wx0 + maxw;
    int32_t *ry0 = w->rows.p, *ry1 = ry0 + maxh;
    float *wy0 = (float *) (ry1 + maxh), *wy1 = wy0 + maxh;
    const float *lg = logits + v->at;
    uint8_t *dst = bytes + r->offset;
    int x;

    if (v->ww == 0)
      continue;
    axis_samples (&ax, r->x, r->width, cx0, cx1, wx0, wx1);
    axis_samples (&ay, r->y, r->height, ry0, ry1, wy0, wy1);
    for (x = 0; x < r->width; x++) {
      cx0[x] -= v->x0;
      cx1[x] -= v->x0;
    }
    cache.row[0] = cache.row[1] = -1;
    cache.h[0] = w->lerp.p;
    cache.h[1] = cache.h[0] + maxw;
    for (y = 0; y < r->height; y++) {
      const int r0 = ry0[y] - v->y0, r1 = ry1[y] - v->y0;
      const float *h0 = lerp_row (&cache, r0, r1, lg, v->ww, cx0, cx1, wx0,
          wx1, r->width);
      const float *h1 = lerp_row (&cache, r1, r0, lg, v->ww, cx0, cx1, wx0,
          wx1, r->width);

      bytes_fn (h0, h1, wy0[y], wy1[y], r->width,
          dst + (size_t) y * r->width);
    }
  }
  return CNMS_OK;
}

cnms_status
cnms_cpu_heads (cnms_backend_ctx *ctx, cnms_heads_ws *w,
    const cnms_heads_args *h, const cnms_det *dets, int n,
    const void **payload)
{
  if (h->kind == CNMS_HEAD_KEYPOINTS)
    return pose (ctx, w, h, dets, n, payload);
  return seg (ctx, w, h, dets, n, payload);
}
