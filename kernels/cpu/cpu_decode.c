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
halfs_to_floats_f16c (const uint16_t *h, int n, float *out)
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
cnms_cpu_halfs_to_floats (const uint16_t *h, int n, float *out)
{
  int i;

#ifdef CNMS_HAVE_F16C_PATH
  if (cpu_has_f16c ()) {
    halfs_to_floats_f16c (h, n, out);
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
  cnms_cpu_halfs_to_floats ((const uint16_t *) data + start, n, scratch);
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
  r->reserved = 0;
}

/* Best class of one row: the first maximum, NaN ignored. */
static inline float
best_of (const float *cls, int n_classes, int32_t *best_cls)
{
  float best = CNMS_BEST_CLASS_INIT;
  int32_t bc = 0;
  int c;

  for (c = 0; c < n_classes; c++) {
    if (cls[c] > best) {
      best = cls[c];
      bc = c;
    }
  }
  *best_cls = bc;
  return best;
}

/* [1, N, 5+C]: anchors are rows, score = objectness x best class. */
static int
decode_yolov5 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    float thr, float *scratch, cnms_det *recs)
{
  int stride = 5 + s->n_classes;
  int n, count = 0;
  int32_t cls;
  float box[4];

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * stride,
        stride, scratch);
    float score = cnms_fmul (row[4], best_of (row + 5, s->n_classes, &cls));

    if (!cnms_score_ok (score, thr))
      continue;
    if (!cnms_map_cxcywh (m, row[0], row[1], row[2], row[3], box))
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
  for (; i < n; i++) {
    if (row[i] > best[i]) {
      best[i] = row[i];
      best_cls[i] = c;
    }
  }
}

/* [1, 4+C, N]: anchors are columns. The class maximum is taken row by row
 * so that memory is read once and sequentially. */
static int
decode_yolov8 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    float thr, float *scratch, float *best, int32_t *best_cls,
    cnms_det *recs)
{
  int n_anchors = s->n_anchors;
  size_t stride = (size_t) n_anchors;
  int n, n0, c, count = 0;
  float box[4];

  for (n = 0; n < n_anchors; n++) {
    best[n] = CNMS_BEST_CLASS_INIT;
    best_cls[n] = 0;
  }
  /* Blocks of anchors keep best/best_cls in L1 while the class rows
   * stream past. */
  for (n0 = 0; n0 < n_anchors; n0 += ANCHOR_BLOCK) {
    int len = n_anchors - n0 < ANCHOR_BLOCK ? n_anchors - n0 : ANCHOR_BLOCK;
    for (c = 0; c < s->n_classes; c++) {
      const float *row = load_span (t->data, t->dtype,
          (4 + c) * stride + n0, len, scratch);
      fold_class_row (row, best + n0, best_cls + n0, c, len);
    }
  }
  for (n = 0; n < n_anchors; n++) {
    if (!cnms_score_ok (best[n], thr))
      continue;
    if (!cnms_map_cxcywh (m, load (t->data, t->dtype, n),
            load (t->data, t->dtype, stride + n),
            load (t->data, t->dtype, 2 * stride + n),
            load (t->data, t->dtype, 3 * stride + n), box))
      continue;
    put_record (&recs[count++], best[n], box, best_cls[n], n);
  }
  return count;
}

/* [1, K, 6]: x1 y1 x2 y2 score class, already suppressed upstream. */
static int
decode_end2end (const cnms_tensor *t, const cnms_shape *s,
    const cnms_map *m, float thr, float *scratch, cnms_det *recs)
{
  int n, count = 0;
  int32_t cls;
  float box[4];

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * 6, 6,
        scratch);

    if (!cnms_score_ok (row[4], thr))
      continue;
    if (!cnms_class_from_float (row[5], &cls))
      continue;
    if (!cnms_map_box (m, row[0], row[1], row[2], row[3], box))
      continue;
    put_record (&recs[count++], row[4], box, cls, n);
  }
  return count;
}

int
cnms_cpu_decode (const cnms_tensor *t, const cnms_shape *shape,
    const cnms_map *map, float score_threshold, float *scratch, float *best,
    int32_t *best_cls, cnms_det *recs)
{
  switch (shape->layout) {
    case CNMS_LAYOUT_YOLOV5:
      return decode_yolov5 (t, shape, map, score_threshold, scratch, recs);
    case CNMS_LAYOUT_YOLOV8:
      return decode_yolov8 (t, shape, map, score_threshold, scratch, best,
          best_cls, recs);
    case CNMS_LAYOUT_END2END:
      return decode_end2end (t, shape, map, score_threshold, scratch, recs);
    default:
      return 0;
  }
}
