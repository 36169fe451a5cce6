/* The heads of the kept records on the CPU (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"): keypoints gathered and mapped,
 * instance masks from the prototypes. The arithmetic is cnms_heads.h's,
 * shared with the CUDA kernels. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#include <xmmintrin.h>
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

/* Prefetches the bytes [p, p + n) into the caches (a hint: no effect on
 * any value). */
static inline void
prefetch_span (const void *p, size_t n)
{
#ifdef __SSE2__
  const char *c = (const char *) ((uintptr_t) p & ~(uintptr_t) 63);
  const char *e = (const char *) p + n;

  for (; c < e; c += 64)
    _mm_prefetch (c, _MM_HINT_T0);
#else
  (void) p;
  (void) n;
#endif
}

#include <stdlib.h>
/* How many planes ahead a window's rows are prefetched: enough that
 * about PREFETCH_BYTES are in flight, at least one plane. */
static int
prefetch_planes (size_t window_bytes)
{
  static long want = -1;
  size_t k;

  if (want < 0) {
    const char *e = getenv ("SEGPF");
    want = e ? atol (e) : 8192;
  }
  k = window_bytes > 0 ? ((size_t) want + window_bytes - 1) / window_bytes : 1;
  return k < 1 ? 1 : k > 32 ? 32 : (int) k;
}

/* l[x] = l[x] + c * p[x] for x < n: one rounded product and one rounded
 * sum per element (SSE2's mulps and addps are those IEEE operations). */
static void
axpy_rounded (float *l, float c, const float *p, int n)
{
  int x = 0;

#ifdef __SSE2__
  const __m128 cv = _mm_set1_ps (c);

  for (; x + 8 <= n; x += 8) {
    _mm_storeu_ps (l + x, _mm_add_ps (_mm_loadu_ps (l + x),
            _mm_mul_ps (cv, _mm_loadu_ps (p + x))));
    _mm_storeu_ps (l + x + 4, _mm_add_ps (_mm_loadu_ps (l + x + 4),
            _mm_mul_ps (cv, _mm_loadu_ps (p + x + 4))));
  }
  for (; x + 4 <= n; x += 4)
    _mm_storeu_ps (l + x, _mm_add_ps (_mm_loadu_ps (l + x),
            _mm_mul_ps (cv, _mm_loadu_ps (p + x))));
#endif
  for (; x < n; x++)
    l[x] = cnms_fadd (l[x], cnms_fmul (c, p[x]));
}

/* The logits of a window of wh rows of ww prototype pixels: lg[y ww + x] =
 * cnms_mask_logit's sum over m ascending from 0 of coef[m] times plane m's
 * pixel (prow: row stride, plane: plane stride, in floats). Plane by
 * plane (each logit still sums m ascending), plane m + 1's row prefetched
 * as plane m's row is added, so that the prototypes stream in while the
 * sums run instead of each short row waiting for memory. */
static void
window_logits (const float *protos, size_t prow, size_t plane,
    const float *coef, int mc, int ww, int wh, float *lg)
{
  const size_t rowb = (size_t) ww * sizeof (float);
  const int ahead = prefetch_planes (rowb * (size_t) wh);
  int m, y, x;

  for (y = 0; y < wh; y++) {
    float *l = lg + (size_t) y * ww;

    for (x = 0; x < ww; x++)
      l[x] = 0.0f;
  }
  for (m = 0; m < ahead && m < mc; m++)
    for (y = 0; y < wh; y++)
      prefetch_span (protos + (size_t) m * plane + (size_t) y * prow, rowb);
  for (m = 0; m < mc; m++) {
    const float *pm = protos + (size_t) m * plane;

    for (y = 0; y < wh; y++) {
      if (m + ahead < mc)
        prefetch_span (pm + (size_t) ahead * plane + (size_t) y * prow,
            rowb);
      axpy_rounded (lg + (size_t) y * ww, coef[m], pm + (size_t) y * prow,
          ww);
    }
  }
}

/* A window of float16 prototypes as floats, plane by plane: out[(m wh + y)
 * ww + x] = plane m's pixel (x, y) from src (prow, plane: strides in
 * halfs). */
static void
window_halfs (const uint16_t *src, size_t prow, size_t plane, int mc,
    int ww, int wh, float *out)
{
  const size_t rowb = (size_t) ww * sizeof (uint16_t);
  const int ahead = prefetch_planes (rowb * (size_t) wh);
  int m, y;

  for (m = 0; m < ahead && m < mc; m++)
    for (y = 0; y < wh; y++)
      prefetch_span (src + (size_t) m * plane + (size_t) y * prow, rowb);
  for (m = 0; m < mc; m++) {
    const uint16_t *pm = src + (size_t) m * plane;

    for (y = 0; y < wh; y++) {
      if (m + ahead < mc)
        prefetch_span (pm + (size_t) ahead * plane + (size_t) y * prow,
            rowb);
      cnms_cpu_halfs_to_floats (pm + (size_t) y * prow, ww,
          out + ((size_t) m * wh + y) * ww);
    }
  }
}

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
  }
#endif
  for (; x < n; x++)
    out[x] = cnms_fadd (cnms_fmul (wy0, h0[x]), cnms_fmul (wy1, h1[x]))
        > 0.0f;
}

/* Two rows of row_lerp's results, by window row (-1: none). */
typedef struct {
  int row[2];
  float *h[2];
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
  row_lerp (lg + (size_t) r * ww, a0, a1, w0, w1, n, c->h[i]);
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

/* The masks of the kept records: per record, the logits of the window of
 * prototype pixels its rectangle samples (each logit sums m ascending from
 * 0), then each pixel's bilinear logit > 0. Float16 prototypes: only each
 * window's are converted, as it is needed. */
static cnms_status
seg (cnms_backend_ctx *ctx, cnms_heads_ws *w, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  const int mc = h->n_coeffs, hp = h->proto_h, wp = h->proto_w;
  const size_t plane = (size_t) hp * (size_t) wp;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->n_anchors;
  cnms_mask_axis ax, ay;
  int maxw = 1, maxh = 1, i;
  uint8_t *bytes;
  lerp_cache cache;

  for (i = 0; i < n; i++) {
    if (h->masks[i].width > maxw)
      maxw = h->masks[i].width;
    if (h->masks[i].height > maxh)
      maxh = h->masks[i].height;
  }
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->mask_bytes,
          h->mask_bytes > 0 ? h->mask_bytes : 1));
  bytes = w->mask_bytes.p;
  ctx->mask_data = bytes;
  if (n == 0)
    return CNMS_OK;
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->cols,
          (size_t) maxw * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->rows,
          (size_t) maxh * 2 * (sizeof (int32_t) + sizeof (float))));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->coef,
          (size_t) mc * sizeof (float)));
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->lerp,
          (size_t) maxw * 2 * sizeof (float)));
  /* a window is at most the prototypes' plane */
  CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->logits, plane * sizeof (float)));
  if (f16)
    CNMS_TRY_CPU (cnms_buf_reserve (ctx, &w->protos,
            (size_t) mc * plane * sizeof (float)));
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
    size_t at;
    int ix0, iy0, ww, wh, x, y, m;

    if (r->width == 0 || r->height == 0)
      continue;
    axis_samples (&ax, r->x, r->width, cx0, cx1, wx0, wx1);
    axis_samples (&ay, r->y, r->height, ry0, ry1, wy0, wy1);
    ix0 = cx0[0];
    iy0 = ry0[0];
    ww = cx1[r->width - 1] - ix0 + 1;
    wh = ry1[r->height - 1] - iy0 + 1;
    at = (size_t) iy0 * wp + ix0;
    for (m = 0; m < mc; m++)
      coef[m] = cnms_tensor_value (h->t->data, f16,
          ((size_t) h->row0 + (size_t) m) * na + a);
    /* the window's logits: sum over m ascending, from 0 */
    if (f16) {
      const size_t area = (size_t) ww * (size_t) wh;

      window_halfs ((const uint16_t *) h->protos->data + at, wp, plane, mc,
          ww, wh, w->protos.p);
      window_logits (w->protos.p, ww, area, coef, mc, ww, wh, lg);
    } else {
      window_logits ((const float *) h->protos->data + at, wp, plane, coef,
          mc, ww, wh, lg);
    }
    /* each pixel is cnms_mask_bilinear's value: the window's rows sampled
     * at the columns once each (rows only advance with y), then per row
     * the two weighted by wy */
    for (x = 0; x < r->width; x++) {
      cx0[x] -= ix0;
      cx1[x] -= ix0;
    }
    cache.row[0] = cache.row[1] = -1;
    cache.h[0] = w->lerp.p;
    cache.h[1] = cache.h[0] + maxw;
    for (y = 0; y < r->height; y++) {
      const int r0 = ry0[y] - iy0, r1 = ry1[y] - iy0;
      const float *h0 = lerp_row (&cache, r0, r1, lg, ww, cx0, cx1, wx0,
          wx1, r->width);
      const float *h1 = lerp_row (&cache, r1, r0, lg, ww, cx0, cx1, wx0,
          wx1, r->width);

      row_bytes (h0, h1, wy0[y], wy1[y], r->width,
          dst + (size_t) y * r->width);
    }
  }
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
