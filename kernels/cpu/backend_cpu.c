/* The exact CPU backend: the reference that the CUDA backend must match
 * bit for bit. Pipeline per call: decode -> sort -> cap -> greedy NMS.
 * Buffers live in the context and only grow with the input, so a warm
 * context allocates nothing. */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cpu_priv.h"
#include "cnms_cpu.h"

typedef struct {
  cnms_buf cand;                /* [header | N records] */
  cnms_buf scratch;             /* float16 rows converted to float */
  cnms_buf best, best_cls;      /* yolov8 per-anchor class maximum */
  cnms_buf keys, perm, tmp_keys, tmp_perm;
  cnms_buf classes;             /* class of each candidate in sorted order */
  cnms_buf kept;
  cnms_greedy_ws greedy;
  cnms_buf table_keys, table_vals;      /* class id -> dense id */
  cnms_buf out;                 /* kept records of cnms_detect */
  cnms_buf class_iou;           /* [n_classes] class-aware thresholds */
  cnms_buf cap_ids, cap_counts; /* per-class caps: kept records by class */
  cnms_lane_ws lanes;           /* cpu_lanes.c */
  cnms_heads_ws heads;          /* cpu_heads.c */
  int no_avx;                   /* CNMS_TEST_CPU_NO_AVX */
} cpu_state;

#define ALL_BUFS(s) { &(s)->cand, &(s)->scratch, &(s)->best, &(s)->best_cls, \
    &(s)->keys, &(s)->perm, &(s)->tmp_keys, &(s)->tmp_perm, \
    &(s)->classes, &(s)->kept, CNMS_GREEDY_BUFS (&(s)->greedy), \
    &(s)->table_keys, &(s)->table_vals, &(s)->out, &(s)->class_iou, \
    &(s)->cap_ids, &(s)->cap_counts, \
    CNMS_LANE_BUFS (&(s)->lanes), CNMS_HEADS_BUFS (&(s)->heads) }
#define N_BUFS (16 + CNMS_GREEDY_N_BUFS + CNMS_LANE_N_BUFS + CNMS_HEADS_N_BUFS)

static cnms_status
cpu_create (cnms_backend_ctx *ctx, int device_id)
{
  (void) device_id;
  ctx->priv = calloc (1, sizeof (cpu_state));
  if (ctx->priv == NULL)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "cannot allocate the CPU backend state");
  return CNMS_OK;
}

static void
cpu_destroy (cnms_backend_ctx *ctx)
{
  cpu_state *s = ctx->priv;
  int i;

  if (s == NULL)
    return;
  {
    cnms_buf *bufs[N_BUFS] = ALL_BUFS (s);
    for (i = 0; i < N_BUFS; i++)
      cnms_buf_release (ctx, bufs[i]);
  }
  free (s);
  ctx->priv = NULL;
}

/* Reserves the sort and gather buffers for n boxes (the greedy walk
 * reserves its own). */
static cnms_status
reserve_common (cnms_backend_ctx *ctx, cpu_state *s, size_t n)
{
  cnms_status st = CNMS_OK;

#define RESERVE(buf, bytes) \
  if (st == CNMS_OK) st = cnms_buf_reserve (ctx, &s->buf, (bytes))
  RESERVE (keys, n * sizeof (uint64_t));
  RESERVE (tmp_keys, n * sizeof (uint64_t));
  RESERVE (perm, n * sizeof (uint32_t));
  RESERVE (tmp_perm, n * sizeof (uint32_t));
  RESERVE (classes, n * sizeof (int32_t));
  RESERVE (kept, n * sizeof (int32_t));
#undef RESERVE
  return st;
}

/* The kept records out[0 .. n) in kept order through the per-class caps
 * (cnms_class_cap), then max_keep: the records that pass, in place.
 * Records are counted by class in an open-addressing table of a power of
 * two >= 2 n slots keyed by class id (ids of kept records are >= 0). */
static cnms_status
apply_caps (cnms_backend_ctx *ctx, cpu_state *s,
    const cnms_class_rules *rules, cnms_det *out, int n, int max_keep,
    int *n_out)
{
  size_t slots = 16, mask, j;
  int32_t *ids;
  int *counts;
  int i, k = 0;
  cnms_status st;

  while (slots < 2 * (size_t) n)
    slots *= 2;
  st = cnms_buf_reserve (ctx, &s->cap_ids, slots * sizeof (int32_t));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &s->cap_counts, slots * sizeof (int));
  if (st != CNMS_OK)
    return st;
  ids = s->cap_ids.p;
  counts = s->cap_counts.p;
  mask = slots - 1;
  for (j = 0; j < slots; j++)
    ids[j] = -1;
  for (i = 0; i < n && k < max_keep; i++) {
    const int32_t c = out[i].class_id;
    const int32_t cap = cnms_class_cap (rules, c);

    if (cap > 0) {
      /* Fibonacci hashing */
      size_t h = ((uint32_t) c * 2654435769u) & mask;

      while (ids[h] != -1 && ids[h] != c)
        h = (h + 1) & mask;
      if (ids[h] == -1) {
        ids[h] = c;
        counts[h] = 0;
      }
      if (counts[h]++ >= cap)
        continue;
    }
    out[k++] = out[i];
  }
  *n_out = k;
  return CNMS_OK;
}

static cnms_status
cpu_detect (cnms_backend_ctx *ctx, const cnms_job *job, cnms_backend_out *res)
{
  cpu_state *s = ctx->priv;
  const cnms_shape *shape = &job->shape;
  const cnms_params *p = job->p;
  const cnms_class_rules *rules = &job->rules;
  size_t n = (size_t) shape->n_anchors;
  size_t row = (size_t) shape->n_classes + 6;
  /* with caps the walk keeps every box NMS keeps: the caps come after */
  const int max_keep = rules->caps ? p->max_candidates : p->max_detections;
  cnms_cand_header *hdr;
  cnms_det *recs, *out;
  uint64_t *keys;
  uint32_t *perm;
  int32_t *classes, *kept;
  cnms_status st;
  int count, k, i, n_out;
  const float *class_iou = NULL;

  if (job->geom == CNMS_GEOM_LANE)
    return cnms_cpu_detect_lanes (ctx, &s->lanes, &s->greedy, job, res);
  st = cnms_buf_reserve (ctx, &s->cand, sizeof *hdr + n * sizeof *recs);
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &s->scratch,
        (n > row ? n : row) * sizeof (float));
  if (st == CNMS_OK && (shape->layout == CNMS_LAYOUT_YOLOV8
          || shape->layout == CNMS_LAYOUT_YOLOV8_OBB)) {
    st = cnms_buf_reserve (ctx, &s->best, n * sizeof (float));
    if (st == CNMS_OK)
      st = cnms_buf_reserve (ctx, &s->best_cls, n * sizeof (int32_t));
  }
  if (st == CNMS_OK)
    st = reserve_common (ctx, s, n);
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &s->out, n * sizeof (cnms_det));
  if (st != CNMS_OK)
    return st;

  hdr = s->cand.p;
  recs = (cnms_det *) (hdr + 1);
  hdr->count = count = cnms_cpu_decode (job->t, shape, &job->map, rules,
      p->score_threshold, s->no_avx, s->scratch.p, s->best.p, s->best_cls.p,
      recs, &ctx->report);
  ctx->report.candidates = count;

  keys = s->keys.p;
  perm = s->perm.p;
  for (i = 0; i < count; i++) {
    keys[i] = cnms_sort_key (recs[i].score, (uint32_t) recs[i].anchor);
    perm[i] = (uint32_t) i;
  }
  cnms_cpu_sort (keys, perm, s->tmp_keys.p, s->tmp_perm.p, count);
  /* Overflow keeps the best max_candidates in sorted order. */
  k = count < p->max_candidates ? count : p->max_candidates;

  out = s->out.p;
  if (!job->suppress) {
    n_out = k < max_keep ? k : max_keep;
    for (i = 0; i < n_out; i++)
      out[i] = recs[perm[i]];
  } else {
    cnms_box_src src;

    classes = s->classes.p;
    kept = s->kept.p;
    /* the class-aware thresholds of the tensor's classes */
    if (rules->n > 0 && !p->class_agnostic) {
      float *ci;

      st = cnms_buf_reserve (ctx, &s->class_iou,
          (size_t) shape->n_classes * sizeof (float));
      if (st != CNMS_OK)
        return st;
      ci = s->class_iou.p;
      for (i = 0; i < shape->n_classes; i++)
        ci[i] = cnms_class_iou (rules, i);
      class_iou = ci;
    }
    if (!p->class_agnostic) {
      for (i = 0; i < k; i++)
        classes[i] = recs[perm[i]].class_id;
    }
    /* the boxes straight from the records: x1 y1 x2 y2 (cx cy w h) are
     * adjacent, the angle 6 floats on */
    src.base = &recs[0].x1;
    src.stride = sizeof (cnms_det) / sizeof (float);
    src.rows = perm;
    src.geom = job->geom;
    src.angle_off = (int) ((&recs[0].angle - &recs[0].x1));
    src.n_strips = 0;
    st = cnms_cpu_greedy (ctx, &s->greedy, &src,
        p->class_agnostic ? NULL : classes, shape->n_classes, k, p->iou,
        class_iou, max_keep, kept, &n_out);
    if (st != CNMS_OK)
      return st;
    for (i = 0; i < n_out; i++)
      out[i] = recs[perm[kept[i]]];
  }
  if (rules->caps) {
    st = apply_caps (ctx, s, rules, out, n_out, p->max_detections, &n_out);
    if (st != CNMS_OK)
      return st;
  }
  res->dets = out;
  res->n_dets = n_out;
  res->payload = NULL;
  return CNMS_OK;
}

static cnms_status
cpu_nms (cnms_backend_ctx *ctx, int geom, const float *boxes,
    const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  cpu_state *s = ctx->priv;
  int aware = classes != NULL && !class_agnostic;
  size_t slots = 0;
  uint64_t *keys;
  uint32_t *perm;
  int32_t *kept, *dense = NULL, cmin = INT32_MAX, cmax = -1;
  int i, m, n_kept, n_classes = 0;
  const int obb = geom == CNMS_GEOM_OBB;
  const size_t stride = obb ? 5 : 4;
  cnms_box_src src;
  cnms_status st;

  if (aware) {
    /* open addressing stays short at a load factor of at most 1/2 */
    slots = 64;
    while (slots < 2 * (size_t) n)
      slots *= 2;
  }
  st = reserve_common (ctx, s, (size_t) n);
  if (st == CNMS_OK && aware) {
    st = cnms_buf_reserve (ctx, &s->table_keys, slots * sizeof (int32_t));
    if (st == CNMS_OK)
      st = cnms_buf_reserve (ctx, &s->table_vals, slots * sizeof (int32_t));
  }
  if (st != CNMS_OK)
    return st;

  /* torchvision takes every box; only non-finite input is left out,
   * since no order or overlap is defined for it. */
  keys = s->keys.p;
  perm = s->perm.p;
  for (i = 0, m = 0; i < n; i++) {
    const float *b = boxes + stride * (size_t) i;
#ifdef __SSE2__
    /* all four coordinates' exponents at once */
    const __m128i inf = _mm_set1_epi32 (0x7f800000);
    __m128i e = _mm_and_si128 (_mm_loadu_si128 ((const __m128i *) b), inf);
    if (_mm_movemask_epi8 (_mm_cmpeq_epi32 (e, inf)) != 0
        || !cnms_isfinite (scores[i]) || (obb && !cnms_isfinite (b[4])))
      continue;
#else
    if (!cnms_isfinite (scores[i]) || (obb && !cnms_isfinite (b[4]))
        || !cnms_isfinite (b[0])
        || !cnms_isfinite (b[1]) || !cnms_isfinite (b[2])
        || !cnms_isfinite (b[3]))
      continue;
#endif
    keys[m] = cnms_sort_key (scores[i], (uint32_t) i);
    perm[m++] = (uint32_t) i;
    if (aware) {
      cmin = classes[i] < cmin ? classes[i] : cmin;
      cmax = classes[i] > cmax ? classes[i] : cmax;
    }
  }
  cnms_cpu_sort (keys, perm, s->tmp_keys.p, s->tmp_perm.p, m);

  src.base = boxes;
  src.stride = stride;
  src.rows = perm;
  src.geom = geom;
  src.angle_off = 4;
  src.n_strips = 0;
  if (aware) {
    dense = s->classes.p;
    /* small non-negative ids (the usual 0 .. C-1) serve as they are; any
     * numbering gives the same result, classes only need telling apart */
    if (cmin >= 0 && (int64_t) cmax <= 2 * (int64_t) m + 255) {
      for (i = 0; i < m; i++)
        dense[i] = classes[perm[i]];
      n_classes = cmax + 1;
    } else {
      n_classes = cnms_cpu_dense_classes (classes, perm, m, dense,
          s->table_keys.p, s->table_vals.p, (uint32_t) (slots - 1));
    }
  }
  kept = s->kept.p;
  st = cnms_cpu_greedy (ctx, &s->greedy, &src, dense, n_classes, m, iou,
      NULL, max_detections > 0 ? max_detections : m, kept, &n_kept);
  if (st != CNMS_OK)
    return st;
  for (i = 0; i < n_kept; i++)
    keep[i] = perm[kept[i]];
  *n_keep = n_kept;
  return CNMS_OK;
}

static cnms_status
cpu_nms_lanes (cnms_backend_ctx *ctx, const float *proposals, int n_offsets,
    const float *scores, int n, float distance, int max_detections,
    int64_t *keep, int *n_keep)
{
  cpu_state *s = ctx->priv;

  return cnms_cpu_nms_lanes (ctx, &s->lanes, &s->greedy, proposals,
      n_offsets, scores, n, distance, max_detections, keep, n_keep);
}

static void
cpu_test_option (cnms_backend_ctx *ctx, int option, int value)
{
  cpu_state *s = ctx->priv;

  if (option == CNMS_TEST_CPU_NO_AVX)
    s->no_avx = s->greedy.no_avx = s->heads.no_avx = value != 0;
}

static cnms_status
cpu_heads (cnms_backend_ctx *ctx, const cnms_job *job,
    const cnms_heads_args *h, const cnms_det *dets, int n,
    const void **payload)
{
  cpu_state *s = ctx->priv;

  (void) job;
  return cnms_cpu_heads (ctx, &s->heads, h, dets, n, payload);
}

const cnms_backend_ops cnms_cpu_ops = {
  "cpu",
  cpu_create,
  cpu_destroy,
  cpu_detect,
  cpu_heads,
  cpu_nms,
  cpu_nms_lanes,
  cpu_test_option,
  NULL,
};
