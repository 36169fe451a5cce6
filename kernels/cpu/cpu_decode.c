/* CPU decode: raw YOLO tensors -> candidate records in anchor order.
 * All arithmetic comes from cnms_math.h so that CUDA matches it. */
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define CNMS_HAVE_F16C_PATH 1
#endif

#include "cpu_priv.h"

/* Anchors per block of the YOLOv8 class maximum (16 KiB of state). */
#define ANCHOR_BLOCK 2048

/* One element of a float32 or float16 tensor as float (exact). */
static inline float
load (const void *data, cnms_dtype dtype, size_t i)
{
  if (dtype == CNMS_DTYPE_FLOAT16)
    return cnms_half_to_float (((const uint16_t *) data)[i]);
  return ((const float *) data)[i];
}

#ifdef CNMS_HAVE_F16C_PATH
/* The hardware conversion, 8 at a time. Every half is exactly a float, so
 * the values equal cnms_half_to_float's; only a signalling NaN comes out
 * quieted, and NaN never becomes a candidate nor wins a class maximum. */
__attribute__ ((target ("avx,f16c")))
static void
halves_to_floats_f16c (const uint16_t *h, int n, float *out)
{
  int i = 0;

  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (out + i,
        _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (h + i))));
  for (; i < n; i++)
    out[i] = cnms_half_to_float (h[i]);
}
#endif

#ifdef CNMS_HAVE_F16C_PATH
/* F16C and AVX in CPUID and the YMM state enabled by the OS (XGETBV).
 * Asked of CPUID itself: clang 14's __builtin_cpu_supports does not know
 * "f16c". */
static int
cpu_has_f16c (void)
{
  /* 0: not asked yet, 1: no, 2: yes; every thread computes the same */
  static int cached;
  int v = __atomic_load_n (&cached, __ATOMIC_RELAXED);

  if (v == 0) {
    unsigned int eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;
    const unsigned int need = bit_F16C | bit_AVX | bit_OSXSAVE;

    v = 1;
    if (__get_cpuid (1, &eax, &ebx, &ecx, &edx) && (ecx & need) == need) {
      __asm__ ("xgetbv" : "=a" (xcr0_lo), "=d" (xcr0_hi) : "c" (0));
      if ((xcr0_lo & 6) == 6)
        v = 2;
    }
    __atomic_store_n (&cached, v, __ATOMIC_RELAXED);
  }
  return v == 2;
}
#endif

void
cnms_cpu_halves_to_floats (const uint16_t *h, int n, float *out)
{
  int i;

#ifdef CNMS_HAVE_F16C_PATH
  if (cpu_has_f16c ()) {
    halves_to_floats_f16c (h, n, out);
    return;
  }
#endif
  for (i = 0; i < n; i++)
    out[i] = cnms_half_to_float (h[i]);
}

/* Elements [start, start + n) as floats: in place for float32, converted
 * into scratch for float16. */
static const float *
load_span (const void *data, cnms_dtype dtype, size_t start, int n,
    float *scratch)
{
  if (dtype == CNMS_DTYPE_FLOAT32)
    return (const float *) data + start;
  cnms_cpu_halves_to_floats ((const uint16_t *) data + start, n, scratch);
  return scratch;
}

static inline void
put_record (cnms_det *r, float score, const float *box, int32_t cls,
    int anchor)
{
  r->score = score;
  r->x1 = box[0];
  r->y1 = box[1];
  r->x2 = box[2];
  r->y2 = box[3];
  r->class_id = cls;
  r->anchor = anchor;
  r->angle = 0.0f;
}

/* Best class of one row: the first maximum, NaN ignored. */
static float
best_of (const float *cls, int n_classes, int32_t *best_cls)
{
  float best = CNMS_BEST_CLASS_INIT;
  int32_t bc = 0;
  int c;

  for (c = 0; c < n_classes; c++)
    cnms_best_fold (cls[c], c, &best, &bc);
  *best_cls = bc;
  return best;
}

#ifdef CNMS_HAVE_F16C_PATH
/* The maximum of cls[0..n), NaN ignored (_mm256_max_ps (v, m) is
 * v > m ? v : m, so NaN never wins); -inf when there is none. Equals
 * best_of's value but for the sign of a zero maximum. */
__attribute__ ((target ("avx")))
static float
max_of_avx (const float *cls, int n_classes)
{
  __m256 m = _mm256_set1_ps (CNMS_BEST_CLASS_INIT), m1 = m, m2 = m, m3 = m;
  float best;
  int c = 0;

  /* four chains: the maximum does not depend on the order */
  for (; c + 32 <= n_classes; c += 32) {
    m = _mm256_max_ps (_mm256_loadu_ps (cls + c), m);
    m1 = _mm256_max_ps (_mm256_loadu_ps (cls + c + 8), m1);
    m2 = _mm256_max_ps (_mm256_loadu_ps (cls + c + 16), m2);
    m3 = _mm256_max_ps (_mm256_loadu_ps (cls + c + 24), m3);
  }
  for (; c + 8 <= n_classes; c += 8)
    m = _mm256_max_ps (_mm256_loadu_ps (cls + c), m);
  m = _mm256_max_ps (_mm256_max_ps (m, m1), _mm256_max_ps (m2, m3));
  m = _mm256_max_ps (m, _mm256_permute2f128_ps (m, m, 1));
  m = _mm256_max_ps (m, _mm256_shuffle_ps (m, m, 0x4e));
  m = _mm256_max_ps (m, _mm256_shuffle_ps (m, m, 0xb1));
  best = _mm256_cvtss_f32 (m);
  for (; c < n_classes; c++) {
    if (cls[c] > best)
      best = cls[c];
  }
  return best;
}

/* best_of from the maximum max_of_avx found: the first class equal to it
 * is best_of's class, and its value best_of's bits. */
static float
best_of_max (const float *cls, float max, int32_t *best_cls)
{
  int c = 0;

  *best_cls = 0;
  /* no class above -inf: best_of keeps class 0 */
  if (max == CNMS_BEST_CLASS_INIT)
    return max;
  while (cls[c] != max)
    c++;
  *best_cls = c;
  return cls[c];
}
#endif

/* [1, N, 5+C]: anchors are rows, score = objectness x best class. */
static int
decode_yolov5 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    const cnms_class_rules *r, int no_avx, float *scratch, cnms_det *recs,
    cnms_report *rep)
{
  int stride = 5 + s->n_classes;
  int n, count = 0, per_class = r->n > 0;
  int32_t cls;
  float box[4], thr = r->thr_rest;
#ifdef CNMS_HAVE_F16C_PATH
  int avx = !no_avx && __builtin_cpu_supports ("avx");
#endif

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * stride,
        stride, scratch);
    float score;

#ifdef CNMS_HAVE_F16C_PATH
    if (avx) {
      /* the class only for a row that passes: obj x max passes exactly
       * when obj x best_of does (they differ at most in a zero's sign) */
      float max = max_of_avx (row + 5, s->n_classes);
      float lead = cnms_fmul (row[4], max);

      /* as finite as the score: the two differ at most in a zero's sign;
       * a score not above the least class threshold passes none */
      rep->nonfinite_scores += !cnms_isfinite (lead);
      if (!cnms_score_ok (lead, per_class ? r->thr_min : thr))
        continue;
      score = cnms_yolov5_score (row[4], best_of_max (row + 5, max, &cls));
    } else
#endif
    {
      score = cnms_yolov5_score (row[4], best_of (row + 5, s->n_classes,
              &cls));
      rep->nonfinite_scores += !cnms_isfinite (score);
    }
    /* the per-anchor rule, shared with the CUDA decode */
    if (!cnms_anchor_candidate (m, score, per_class ? cnms_class_thr (r, cls)
            : thr, row[0], row[1], row[2], row[3], box))
      continue;
    put_record (&recs[count++], score, box, cls, n);
  }
  return count;
}

/* Folds class row c into the running maximum of every anchor. The strict
 * > keeps the first maximum and skips NaN (a NaN compare is false), in the
 * SIMD path exactly as in the scalar one. This loop is the whole cost of a
 * YOLOv8 frame, and -O2 does not vectorise it by itself. */
static void
fold_class_row (const float *row, float *best, int32_t *best_cls, int c,
    int n)
{
  int i = 0;
#ifdef __SSE2__
  __m128i cv = _mm_set1_epi32 (c);

  for (; i + 4 <= n; i += 4) {
    __m128 v = _mm_loadu_ps (row + i);
    __m128 b = _mm_loadu_ps (best + i);
    __m128 gt = _mm_cmpgt_ps (v, b);
    __m128i gti = _mm_castps_si128 (gt);
    __m128i bc = _mm_loadu_si128 ((const __m128i *) (best_cls + i));

    _mm_storeu_ps (best + i, _mm_or_ps (_mm_and_ps (gt, v),
            _mm_andnot_ps (gt, b)));
    _mm_storeu_si128 ((__m128i *) (best_cls + i),
        _mm_or_si128 (_mm_and_si128 (gti, cv), _mm_andnot_si128 (gti, bc)));
  }
#endif
  for (; i < n; i++)
    cnms_best_fold (row[i], c, &best[i], &best_cls[i]);
}

#ifdef CNMS_HAVE_F16C_PATH
/* fold_class_row 8 anchors at a time: _mm256_max_ps (v, b) is
 * v > b ? v : b, the scalar update exactly. AVX2, not AVX: GCC 12 turns
 * the class blend into scalar branches without it. */
__attribute__ ((target ("avx2")))
static void
fold_class_row_avx2 (const float *row, float *best, int32_t *best_cls, int c,
    int n)
{
  const __m256 cv = _mm256_castsi256_ps (_mm256_set1_epi32 (c));
  int i = 0;

  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps (row + i);
    __m256 b = _mm256_loadu_ps (best + i);
    __m256 gt = _mm256_cmp_ps (v, b, _CMP_GT_OQ);

    _mm256_storeu_ps (best + i, _mm256_max_ps (v, b));
    _mm256_storeu_ps ((float *) (best_cls + i), _mm256_blendv_ps
        (_mm256_loadu_ps ((const float *) (best_cls + i)), cv, gt));
  }
  for (; i < n; i++)
    cnms_best_fold (row[i], c, &best[i], &best_cls[i]);
}
#endif

#ifdef CNMS_HAVE_F16C_PATH
/* The class maximum of every anchor of a float32 [1, 4+C, N] tensor, the
 * class rows read whole and in order (the best streams of memory: whole
 * rows rather than blocks of anchors across the rows):
 * best[n] = the maximum by fold_class_row_avx2's update (_mm256_max_ps (v,
 * b) is v > b ? v : b, the scalar one's), in the same class order, so the
 * same bits; the class is left to class_of, for the anchors that need
 * one. */
__attribute__ ((target ("avx2")))
static void
max_rows_avx2 (const float *data, size_t stride, int n_classes, int n_anchors,
    float *best)
{
  int n, c0 = 0, c, k;

  for (n = 0; n < n_anchors; n++)
    best[n] = CNMS_BEST_CLASS_INIT;
  /* 8 class rows at a time, each anchor's maximum through them in class
   * order in a register: 8 streams in, best read and written once per 8
   * rows (a quarter less time on a frame from memory than row by row) */
  for (; c0 < n_classes; c0 += k) {
    const float *row = data + (4 + (size_t) c0) * stride;

    k = n_classes - c0 >= 8 ? 8 : 1;
    for (n = 0; n + 8 <= n_anchors; n += 8) {
      __m256 b = _mm256_loadu_ps (best + n);

      for (c = 0; c < k; c++)
        b = _mm256_max_ps (_mm256_loadu_ps (row + (size_t) c * stride + n),
            b);
      _mm256_storeu_ps (best + n, b);
    }
    for (; n < n_anchors; n++)
      for (c = 0; c < k; c++)
        if (row[(size_t) c * stride + n] > best[n])
          best[n] = row[(size_t) c * stride + n];
  }
}
#endif

#ifdef CNMS_HAVE_F16C_PATH
/* The anchors n < n_anchors whose best[n] passes cnms_score_ok (best[n],
 * thr), in order, into idx; their count returned; the non-finite best[n]
 * added to *nonfinite. 8 at a time: finite is the exponent not all ones,
 * and _CMP_GT_OQ is > (false for NaN). */
__attribute__ ((target ("avx2")))
static int
passing_avx2 (const float *best, int n_anchors, float thr, int32_t *idx,
    int *nonfinite)
{
  const __m256i expo = _mm256_set1_epi32 (0x7f800000);
  const __m256 t = _mm256_set1_ps (thr);
  int n = 0, count = 0, bad = 0;

  for (; n + 8 <= n_anchors; n += 8) {
    const __m256 b = _mm256_loadu_ps (best + n);
    const __m256i inf = _mm256_cmpeq_epi32 (_mm256_and_si256
        (_mm256_castps_si256 (b), expo), expo);
    const int nf = _mm256_movemask_ps (_mm256_castsi256_ps (inf));
    int pass = _mm256_movemask_ps (_mm256_cmp_ps (b, t, _CMP_GT_OQ)) & ~nf;

    bad += __builtin_popcount ((unsigned) nf);
    while (pass != 0) {
      idx[count++] = n + __builtin_ctz ((unsigned) pass);
      pass &= pass - 1;
    }
  }
  for (; n < n_anchors; n++) {
    bad += !cnms_isfinite (best[n]);
    if (cnms_score_ok (best[n], thr))
      idx[count++] = n;
  }
  *nonfinite += bad;
  return count;
}
#endif

/* The class of anchor n whose class maximum is max (max_rows_avx2): the
 * first class equal to it, the one the strict > of the fold keeps (a
 * later class equal to an earlier maximum never replaces it); class 0
 * when no class is above -inf. */
static int32_t
class_of (const float *data, size_t stride, size_t n, float max)
{
  const float *v = data + 4 * stride + n;
  int32_t c = 0;

  if (max == CNMS_BEST_CLASS_INIT)
    return 0;
  while (v[(size_t) c * stride] != max)
    c++;
  return c;
}

/* [1, 4+C, N] (and the oriented [1, 4+C+1, N], its angle the last row):
 * anchors are columns. The class maximum is taken row by row so that
 * memory is read once and sequentially. */
static int
decode_yolov8 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    const cnms_class_rules *r, int no_avx, float *scratch, float *best,
    int32_t *best_cls, cnms_det *recs, cnms_report *rep)
{
  const int per_class = r->n > 0;
  const float frame_thr = r->thr_rest;
  int n_anchors = s->n_anchors;
  size_t stride = (size_t) n_anchors;
  int n, n0, c, k, count = 0, lazy = 0, n_iter = s->n_anchors;
  float box[4];
  void (*fold) (const float *row, float *best, int32_t *best_cls, int c,
      int n) = fold_class_row;

#ifdef CNMS_HAVE_F16C_PATH
  if (!no_avx && __builtin_cpu_supports ("avx2"))
    fold = fold_class_row_avx2;
#endif

  n0 = 0;
#ifdef CNMS_HAVE_F16C_PATH
  if (t->dtype == CNMS_DTYPE_FLOAT32 && fold == fold_class_row_avx2) {
    max_rows_avx2 (t->data, stride, s->n_classes, n_anchors, best);
    lazy = 1;
    n0 = n_anchors;
  }
#endif
  for (n = n0; n < n_anchors; n++) {
    best[n] = CNMS_BEST_CLASS_INIT;
    best_cls[n] = 0;
  }
  /* Blocks of anchors keep best/best_cls in L1 while the class rows
   * stream past. */
  for (; n0 < n_anchors; n0 += ANCHOR_BLOCK) {
    int len = n_anchors - n0 < ANCHOR_BLOCK ? n_anchors - n0 : ANCHOR_BLOCK;
    for (c = 0; c < s->n_classes; c++) {
      const float *row = load_span (t->data, t->dtype,
          (4 + c) * stride + n0, len, scratch);
      fold (row, best + n0, best_cls + n0, c, len);
    }
  }
#ifdef CNMS_HAVE_F16C_PATH
  /* the anchors above the least threshold listed (in best_cls, which
   * the lazy path leaves unused), the non-finite maxima counted */
  if (lazy)
    n_iter = passing_avx2 (best, n_anchors, per_class ? r->thr_min
        : frame_thr, best_cls, &rep->nonfinite_scores);
#endif
  for (k = 0; k < n_iter; k++) {
    /* the score first, so that only a passing anchor loads its box; then
     * the per-anchor rule, shared with the CUDA decode */
    int32_t cls;
    float thr;

    if (lazy) {
      n = best_cls[k];
      cls = class_of (t->data, stride, (size_t) n, best[n]);
    } else {
      n = k;
      rep->nonfinite_scores += !cnms_isfinite (best[n]);
      cls = best_cls[n];
    }
    thr = per_class ? cnms_class_thr (r, cls) : frame_thr;
    if (!cnms_score_ok (best[n], thr))
      continue;
    if (s->layout == CNMS_LAYOUT_YOLOV8_OBB) {
      float obb[5], hull[4];

      /* the oriented anchor rule, shared with the CUDA decode */
      if (!cnms_map_obb (m, load (t->data, t->dtype, n),
              load (t->data, t->dtype, stride + n),
              load (t->data, t->dtype, 2 * stride + n),
              load (t->data, t->dtype, 3 * stride + n),
              load (t->data, t->dtype, (4 + (size_t) s->n_classes) * stride
                  + n), obb, hull))
        continue;
      put_record (&recs[count], best[n], obb, cls, n);
      recs[count++].angle = obb[4];
      continue;
    }
    if (!cnms_anchor_candidate (m, best[n], thr, load (t->data, t->dtype, n),
            load (t->data, t->dtype, stride + n),
            load (t->data, t->dtype, 2 * stride + n),
            load (t->data, t->dtype, 3 * stride + n), box))
      continue;
    put_record (&recs[count++], best[n], box, cls, n);
  }
  return count;
}

/* [1, K, 6]: x1 y1 x2 y2 score class, already suppressed upstream. */
static int
decode_end2end (const cnms_tensor *t, const cnms_shape *s,
    const cnms_map *m, const cnms_class_rules *r, float thr, float *scratch,
    cnms_det *recs, cnms_report *rep)
{
  int n, count = 0;
  int32_t cls;
  float box[4];

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * 6, 6,
        scratch);

    rep->nonfinite_scores += !cnms_isfinite (row[4]);
    /* a candidate's score whose class is no class id, or a fractional one
     * (the rule of cnms_end2end_class_kind, shared with the CUDA decode) */
    switch (cnms_end2end_class_kind (row, thr)) {
      case CNMS_E2E_CLASS_INVALID:
        if (rep->invalid_classes++ == 0)
          rep->first_invalid_class = row[5];
        break;
      case CNMS_E2E_CLASS_FRACTIONAL:
        if (rep->fractional_classes++ == 0)
          rep->first_fractional_class = row[5];
        break;
      default:
        break;
    }
    /* the end2end row rule, shared with the CUDA decode */
    if (!cnms_end2end_candidate (m, row, r, box, &cls))
      continue;
    put_record (&recs[count++], row[4], box, cls, n);
  }
  return count;
}

int
cnms_cpu_decode (const cnms_tensor *t, const cnms_shape *shape,
    const cnms_map *map, const cnms_class_rules *rules, float score_threshold,
    int no_avx, float *scratch, float *best, int32_t *best_cls,
    cnms_det *recs, cnms_report *report)
{
  switch (shape->layout) {
    case CNMS_LAYOUT_YOLOV5:
      return decode_yolov5 (t, shape, map, rules, no_avx, scratch, recs,
          report);
    case CNMS_LAYOUT_YOLOV8:
    case CNMS_LAYOUT_YOLOV8_OBB:
      return decode_yolov8 (t, shape, map, rules, no_avx, scratch, best,
          best_cls, recs, report);
    case CNMS_LAYOUT_END2END:
      return decode_end2end (t, shape, map, rules, score_threshold, scratch,
          recs, report);
    default:
      return 0;
  }
}
