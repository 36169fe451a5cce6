/* Tiles (docs/contracts.md, "Tiles"): the slices of a large frame as
 * SAHI's get_slice_bboxes makes them (cnms_slice_grid), and the merge of
 * their detections in the frame by SAHI's postprocess (cnms_merge): a
 * first pass in float32 that decides the keepers and what each absorbs
 * (NMS, greedy NMM, NMM; IoU or IoS; by class or not), then, for the
 * merging rules, a pass in float64 that re-checks each absorbed box
 * against the box merged so far and merges it. Every rule is SAHI's
 * current code's, the ones the contract calls SAHI's bugs included.
 * The arithmetic is core/cnms_merge.h's; a backend with a merge of its
 * own (cnms_backend_ops.merge: the CUDA backend's) runs it instead of the
 * host's below where it takes the records, with the same bits. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cnms_merge.h"
#include "front.h"

typedef cnms_merge_rec merge_rec;

/* The context's records as the first pass sees them. */
#define RECS(ctx) ((merge_rec *) (ctx)->merge_f)

/* The window after [*a, *b) on one axis of get_slice_bboxes (start with
 * *a = *b = 0): slc pixels starting overlap pixels before the end of the
 * last; the first that would pass the edge is moved back to end at it
 * and is the last. FALSE when the axis is done. */
static int
next_span (int size, int slc, int overlap, int *a, int *b)
{
  if (*b >= size)
    return 0;
  if (*b > 0)
    *a = *b - overlap;
  *b = *a + slc;
  if (*b > size) {
    *b = size;
    *a = size - slc > 0 ? size - slc : 0;
  }
  return 1;
}

int
cnms_slice_grid (int frame_width, int frame_height, int slice_width,
    int slice_height, double overlap_width, double overlap_height,
    cnms_slice *out, int max_slices)
{
  int ox, oy, x1 = 0, x2 = 0, y1 = 0, y2 = 0, k = 0;

  if (frame_width < 1 || frame_height < 1 || slice_width < 1
      || slice_height < 1 || frame_width > CNMS_SIZE_MAX
      || frame_height > CNMS_SIZE_MAX || slice_width > CNMS_SIZE_MAX
      || slice_height > CNMS_SIZE_MAX || !(overlap_width >= 0.0)
      || !(overlap_width < 1.0) || !(overlap_height >= 0.0)
      || !(overlap_height < 1.0) || max_slices < 0
      || (max_slices > 0 && out == NULL))
    return -1;
  /* int (ratio * size): the double product truncated */
  ox = (int) (overlap_width * slice_width);
  oy = (int) (overlap_height * slice_height);
  /* row by row from the top, left to right in a row */
  while (next_span (frame_height, slice_height, oy, &y1, &y2)) {
    x1 = x2 = 0;
    while (next_span (frame_width, slice_width, ox, &x1, &x2)) {
      if (k < max_slices) {
        out[k].x1 = x1;
        out[k].y1 = y1;
        out[k].x2 = x2;
        out[k].y2 = y2;
      }
      if (k == INT_MAX)
        return -1;
      k++;
    }
  }
  return k;
}

void
cnms_merge_params_init (cnms_merge_params *m)
{
  if (m == NULL)
    return;
  memset (m, 0, sizeof *m);
  m->rule = CNMS_MERGE_GREEDY_NMM;
  m->metric = CNMS_MATCH_IOS;
  m->threshold = 0.5;
  m->class_agnostic = 0;
}

/* Grows the merge's tables to n records. */
static cnms_status
reserve (cnms_ctx *ctx, int n)
{
  const size_t nn = (size_t) (n > 0 ? n : 1);
  void *p;

  if (nn <= ctx->merge_cap)
    return CNMS_OK;
#define GROW(field, size)                                                   \
  do {                                                                      \
    p = realloc (ctx->field, nn * (size));                                  \
    if (p == NULL)                                                          \
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,                        \
          "cannot allocate the merge of %d records", n);                    \
    ctx->field = p;                                                         \
  } while (0)
  GROW (merge_f, sizeof (merge_rec));
  GROW (merge_idx, sizeof (int));
  GROW (merge_order, sizeof (int));
  GROW (merge_state, sizeof (int));
  GROW (merge_next, sizeof (int));
  GROW (merge_group, sizeof (int));
  GROW (merge_head, sizeof (int));
  GROW (merge_tail, sizeof (int));
  GROW (merge_out, sizeof (cnms_det));
  GROW (merge_pairs, sizeof (int));
  GROW (merge_pos, sizeof (int));
#undef GROW
  ctx->merge_cap = nn;
  ctx->b.alloc_count++;
  return CNMS_OK;
}

/* What the orders read: SAHI's float32 records, the caller's values (the
 * consistent rules), and the keepers (keepers_by_score). */
typedef struct {
  const merge_rec *recs;
  const double *boxes, *scores;
  const int32_t *classes;
  const int *keepers;
  int consistent;
} sort_view;

/* An order of records a and b: < 0, a first; > 0, b first. */
typedef int (*sort_cmp) (const sort_view *v, int a, int b);

/* Sorts a[0 .. n) by cmp, a total order, through tmp (room for n): a
 * bottom-up merge sort that keeps no state outside its arguments (two
 * contexts may merge on two threads at once). */
static void
sort_ints (int *a, int *tmp, int n, sort_cmp cmp, const sort_view *v)
{
  int w, lo;

  for (w = 1; w < n; w *= 2) {
    for (lo = 0; lo < n; lo += 2 * w) {
      const int mid = lo + w < n ? lo + w : n;
      const int hi = lo + 2 * w < n ? lo + 2 * w : n;
      int p = lo, q = mid, o = lo;

      while (p < mid && q < hi)
        tmp[o++] = cmp (v, a[p], a[q]) <= 0 ? a[p++] : a[q++];
      while (p < mid)
        tmp[o++] = a[p++];
      while (q < hi)
        tmp[o++] = a[q++];
    }
    memcpy (a, tmp, (size_t) n * sizeof *a);
  }
}

/* The walk's order. SAHI's (np.lexsort ((y2, x2, y1, x1, -score))): score
 * descending, then x1, y1, x2, y2 ascending (float32), then the index;
 * the consistent rules' the same on the caller's doubles. */
static int
by_score (const sort_view *v, int a, int b)
{
  const int c = v->consistent ?
      cnms_merge_order64 (v->boxes + 4 * (size_t) a, v->scores[a],
      v->boxes + 4 * (size_t) b, v->scores[b]) :
      cnms_merge_order32 (&v->recs[a], &v->recs[b]);

  if (c != 0)
    return c;
  return a < b ? -1 : a > b;
}

/* Are records a and b of one class (SAHI: float32 ids; consistent: the
 * caller's)? */
static int
same_class (const sort_view *v, int a, int b)
{
  return v->consistent ? v->classes[a] == v->classes[b] :
      v->recs[a].cls == v->recs[b].cls;
}

/* By class, ascending, then the index. */
static int
by_class (const sort_view *v, int a, int b)
{
  if (!same_class (v, a, b))
    return (v->consistent ? v->classes[a] < v->classes[b] :
        v->recs[a].cls < v->recs[b].cls) ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Keepers g and h (places in v->keepers) by score descending (float32, or
 * the caller's for the consistent rules), then by place: Python's stable
 * sort of the per-class NMS keepers. */
static int
keepers_by_score (const sort_view *v, int g, int h)
{
  const int a = v->keepers[g], b = v->keepers[h];
  const double sa = v->consistent ? v->scores[a] : v->recs[a].score;
  const double sb = v->consistent ? v->scores[b] : v->recs[b].score;

  if (sa != sb)
    return sa > sb ? -1 : 1;
  return g < h ? -1 : g > h;
}

/* The merge's state while it runs. */
typedef struct {
  cnms_ctx *ctx;
  const cnms_merge_params *m;
  const double *boxes, *scores;
  float thr;
  int consistent;               /* CNMS_MERGE_RULES_CONSISTENT */
  int n_groups;                 /* keepers so far, in output order */
  sort_view view;               /* what the orders read */
} merge_run;

/* Do records i and j match in the first pass? */
static int
match (const merge_run *r, int i, int j)
{
  const merge_rec *f = RECS (r->ctx);

  if (r->consistent)
    return cnms_merge_metric64 (r->boxes + 4 * (size_t) i,
        r->boxes + 4 * (size_t) j, r->m->metric) >= r->m->threshold;
  return cnms_merge_match32 (&f[i], &f[j], r->m->metric, r->thr);
}

/* May record i claim record j in NMM? SAHI: it dominates j; the consistent
 * rules: j comes after i in the walk (pos: each record's place in it). */
static int
may_claim (const merge_run *r, const int *pos, int i, int j)
{
  const merge_rec *f = RECS (r->ctx);

  return r->consistent ? pos[j] > pos[i] :
      cnms_merge_dominates (&f[i], &f[j]);
}

/* A new keeper k (its group, empty). */
static void
new_group (merge_run *r, int k)
{
  cnms_ctx *ctx = r->ctx;

  ctx->merge_group[r->n_groups++] = k;
  ctx->merge_head[k] = ctx->merge_tail[k] = -1;
}

/* Appends j to keeper k's merge list. */
static void
absorb (merge_run *r, int k, int j)
{
  cnms_ctx *ctx = r->ctx;

  ctx->merge_next[j] = -1;
  if (ctx->merge_tail[k] < 0)
    ctx->merge_head[k] = j;
  else
    ctx->merge_next[ctx->merge_tail[k]] = j;
  ctx->merge_tail[k] = j;
}

/* The first pass on the records set[0 .. n) (ascending indices). */
static void
first_pass (merge_run *r, const int *set, int n)
{
  cnms_ctx *ctx = r->ctx;
  const merge_rec *f = RECS (ctx);
  int *order = ctx->merge_order, *state = ctx->merge_state;
  int p, q;

  memcpy (order, set, (size_t) n * sizeof *order);
  sort_ints (order, ctx->merge_pairs, n, by_score, &r->view);
  for (p = 0; p < n; p++) {
    state[set[p]] = -1;
    ctx->merge_pos[order[p]] = p;
  }

  switch (r->m->rule) {
    case CNMS_MERGE_NMS:
      /* a box not yet suppressed is kept and suppresses what it matches */
      for (p = 0; p < n; p++) {
        const int i = order[p];

        if (state[i] >= 0)
          continue;
        new_group (r, i);
        for (q = 0; q < n; q++)
          if (state[set[q]] < 0 && match (r, i, set[q]))
            state[set[q]] = i;
        state[i] = i;
      }
      break;
    case CNMS_MERGE_GREEDY_NMM:
      /* a keeper takes every later free box that matches its own box, in
       * score order */
      for (p = 0; p < n; p++) {
        const int i = order[p];

        if (state[i] >= 0)
          continue;
        state[i] = i;
        new_group (r, i);
        for (q = p + 1; q < n; q++) {
          const int j = order[q];

          if (state[j] < 0 && match (r, i, j)) {
            state[j] = i;
            absorb (r, i, j);
          }
        }
      }
      break;
    case CNMS_MERGE_NMM:
      if (!r->consistent && !(r->m->threshold > 0.0)) {
        /* every pair matches (SAHI's nmm_match_all): the first box takes
         * every box of a lower score and its exact duplicates; every other
         * box of the top score keeps nothing */
        const merge_rec *t = &f[order[0]];

        new_group (r, order[0]);
        for (q = 0; q < n; q++) {
          const int j = set[q];
          const int tied = f[j].score == t->score;
          const int dup = tied && f[j].x1 == t->x1 && f[j].y1 == t->y1
              && f[j].x2 == t->x2 && f[j].y2 == t->y2;

          if (j != order[0] && (!tied || dup))
            absorb (r, order[0], j);
        }
        for (p = 1; p < n; p++) {
          const merge_rec *c = &f[order[p]];

          if (c->score == t->score && !(c->x1 == t->x1 && c->y1 == t->y1
                  && c->x2 == t->x2 && c->y2 == t->y2))
            new_group (r, order[p]);
        }
        break;
      }
      /* walked in score order; an unclaimed box is a keeper; every box
       * claims for its keeper the unclaimed boxes it dominates and
       * matches, by ascending index (transitively) */
      for (p = 0; p < n; p++) {
        const int i = order[p];
        int k;

        if (state[i] < 0) {
          state[i] = i;
          new_group (r, i);
        }
        k = state[i];
        for (q = 0; q < n; q++) {
          const int j = set[q];

          if (state[j] < 0 && j != i
              && may_claim (r, ctx->merge_pos, i, j) && match (r, i, j)) {
            state[j] = k;
            absorb (r, k, j);
          }
        }
      }
      break;
  }
}

cnms_status
cnms_merge (cnms_ctx *ctx, const double *boxes, const double *scores,
    const int32_t *classes, int n, const cnms_merge_params *m,
    const cnms_det **dets, int *n_dets)
{
  merge_run r;
  cnms_status st;
  int i, g, n_in = 0, n_out = 0;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  if (dets == NULL || n_dets == NULL || m == NULL
      || (n > 0 && (boxes == NULL || scores == NULL || classes == NULL)))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_merge: NULL argument");
  *dets = ctx->merge_out;
  *n_dets = 0;
  if (n < 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG, "cnms_merge: n = %d",
        n);
  if ((int) m->rule < CNMS_MERGE_GREEDY_NMM || (int) m->rule > CNMS_MERGE_NMS
      || (int) m->metric < CNMS_MATCH_IOS || (int) m->metric > CNMS_MATCH_IOU
      || (int) m->rules < CNMS_MERGE_RULES_SAHI
      || (int) m->rules > CNMS_MERGE_RULES_CONSISTENT)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_merge: unknown rule %d, metric %d or rules %d", (int) m->rule,
        (int) m->metric, (int) m->rules);
  if (!(m->threshold >= 0.0 && m->threshold <= 1.0))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_merge: the match threshold %g is outside [0, 1]",
        m->threshold);
  st = reserve (ctx, n);
  if (st != CNMS_OK)
    return st;
  *dets = ctx->merge_out;

  /* the backend's merge, where it has one and takes these records; the
   * same bits as the host's below */
  if (n > 0 && ctx->ops->merge != NULL && !ctx->host_merge) {
    st = ctx->ops->merge (&ctx->b, boxes, scores, classes, n, m,
        ctx->merge_out, n_dets);
    if (st != CNMS_ERR_UNSUPPORTED) {
      if (st != CNMS_OK)
        *n_dets = 0;
      return st;
    }
  }
  /* the host's merge: no GPU time */
  ctx->b.last_gpu_us = -1.0;

  /* the records that take part (finite values), as float32 */
  for (i = 0; i < n; i++) {
    const double *b = boxes + 4 * (size_t) i;

    RECS (ctx)[i] = cnms_merge_rec_of (b, scores[i], classes[i]);
    if (cnms_merge_takes_part (b, scores[i]))
      ctx->merge_idx[n_in++] = i;
  }
  memset (&r, 0, sizeof r);
  r.ctx = ctx;
  r.m = m;
  r.thr = (float) m->threshold;
  r.boxes = boxes;
  r.scores = scores;
  r.consistent = m->rules == CNMS_MERGE_RULES_CONSISTENT;
  r.view.recs = RECS (ctx);
  r.view.boxes = boxes;
  r.view.scores = scores;
  r.view.classes = classes;
  r.view.consistent = r.consistent;
  if (n_in == 0)
    return CNMS_OK;

  if (m->class_agnostic) {
    first_pass (&r, ctx->merge_idx, n_in);
  } else {
    /* each class alone, ascending (float32 ids) */
    int a = 0;

    sort_ints (ctx->merge_idx, ctx->merge_pairs, n_in, by_class, &r.view);
    while (a < n_in) {
      int b = a + 1;

      while (b < n_in && same_class (&r.view, ctx->merge_idx[a],
              ctx->merge_idx[b]))
        b++;
      /* the class's records in ascending index: their order in idx */
      first_pass (&r, ctx->merge_idx + a, b - a);
      a = b;
    }
    if (m->rule == CNMS_MERGE_NMS) {
      /* the keepers by score, stably (Python's sort, reverse=True):
       * equal scores stay class by class */
      int *places = ctx->merge_state, *sorted = ctx->merge_order;

      for (g = 0; g < r.n_groups; g++)
        places[g] = g;
      r.view.keepers = ctx->merge_group;
      sort_ints (places, ctx->merge_pairs, r.n_groups, keepers_by_score,
          &r.view);
      for (g = 0; g < r.n_groups; g++)
        sorted[g] = ctx->merge_group[places[g]];
      memcpy (ctx->merge_group, sorted, (size_t) r.n_groups * sizeof *sorted);
    }
  }

  /* the merge pass: each keeper's list in order, each box re-checked
   * against the keeper as merged so far (float64): SAHI's rules drop a box
   * that fails, the consistent ones keep it alone after its keeper */
  for (g = 0; g < r.n_groups; g++) {
    const int k = ctx->merge_group[g];
    const double *kb = boxes + 4 * (size_t) k;
    double box[4] = { kb[0], kb[1], kb[2], kb[3] };
    double score = scores[k];
    int32_t cls = classes[k];
    const int at = n_out++;

    if (m->rule != CNMS_MERGE_NMS)
      for (i = ctx->merge_head[k]; i >= 0; i = ctx->merge_next[i]) {
        const double *jb = boxes + 4 * (size_t) i;

        if (!cnms_merge_takes (box, jb, m->metric, m->threshold,
                r.consistent)) {
          if (r.consistent)
            ctx->merge_out[n_out++] = cnms_merge_det (jb, scores[i],
                classes[i], i);
          continue;
        }
        cnms_merge_absorb (box, &score, &cls, jb, scores[i], classes[i],
            r.consistent);
      }
    ctx->merge_out[at] = cnms_merge_det (box, score, cls, k);
  }
  *n_dets = n_out;
  return CNMS_OK;
}

int
cnms_tiles_records (const cnms_frame_result *res, const cnms_slice *slices,
    int n_slices, int frame_width, int frame_height, double *boxes,
    double *scores, int32_t *classes)
{
  int i, r, k = 0;

  for (i = 0; i < n_slices; i++) {
    const double ox = slices[i].x1, oy = slices[i].y1;

    for (r = 0; r < res[i].n_dets; r++) {
      const cnms_det *e = &res[i].dets[r];
      double x1 = e->x1 > 0.0f ? e->x1 : 0.0, y1 = e->y1 > 0.0f ? e->y1 : 0.0;
      double x2 = e->x2 > 0.0f ? e->x2 : 0.0, y2 = e->y2 > 0.0f ? e->y2 : 0.0;

      x1 = x1 < frame_width ? x1 : frame_width;
      x2 = x2 < frame_width ? x2 : frame_width;
      y1 = y1 < frame_height ? y1 : frame_height;
      y2 = y2 < frame_height ? y2 : frame_height;
      if (!(x1 < x2 && y1 < y2))
        continue;
      boxes[4 * k] = x1 + ox;
      boxes[4 * k + 1] = y1 + oy;
      boxes[4 * k + 2] = x2 + ox;
      boxes[4 * k + 3] = y2 + oy;
      scores[k] = e->score;
      classes[k] = e->class_id;
      k++;
    }
  }
  return k;
}

/* Grows the tiles' own tables to n slices and k records. */
static cnms_status
reserve_tiles (cnms_ctx *ctx, int n, size_t k)
{
  void *p;

  if ((size_t) n > ctx->tiles_frames_cap) {
    p = realloc (ctx->tiles_frames, (size_t) n * sizeof (cnms_frame));
    if (p == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the frames of %d slices", n);
    ctx->tiles_frames = p;
    ctx->tiles_frames_cap = (size_t) n;
    ctx->b.alloc_count++;
  }
  if (k > ctx->tiles_cap) {
    double *b = realloc (ctx->tiles_boxes, k * 5 * sizeof (double));
    int32_t *c;

    if (b == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the %zu records of the slices", k);
    ctx->tiles_boxes = b;
    c = realloc (ctx->tiles_classes, k * sizeof (int32_t));
    if (c == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the %zu records of the slices", k);
    ctx->tiles_classes = c;
    ctx->tiles_cap = k;
    ctx->b.alloc_count++;
  }
  return CNMS_OK;
}

cnms_status
cnms_detect_tiles (cnms_ctx *ctx, const cnms_tensor *batch,
    const cnms_frame *frames, const cnms_slice *slices, int n_slices,
    int frame_width, int frame_height, cnms_layout layout,
    const cnms_params *p, const cnms_merge_params *m, const cnms_det **dets,
    int *n_dets)
{
  const cnms_frame_result *res = NULL;
  const cnms_layout_desc *d = cnms_layout_info (layout);
  cnms_frame *fr;
  cnms_status st;
  double *boxes, *scores, gpu_us;
  size_t total = 0, k = 0;
  int i;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  if (dets == NULL || n_dets == NULL || slices == NULL || p == NULL
      || m == NULL || (batch == NULL && frames == NULL))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_tiles: NULL argument");
  *dets = NULL;
  *n_dets = 0;
  if (n_slices < 1 || n_slices > CNMS_BATCH_MAX)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "n_slices = %d is outside [1, %d]", n_slices, CNMS_BATCH_MAX);
  if (frame_width < 1 || frame_height < 1 || frame_width > CNMS_SIZE_MAX
      || frame_height > CNMS_SIZE_MAX)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "the frame size %dx%d is outside [1, %d]", frame_width,
        frame_height, CNMS_SIZE_MAX);
  /* boxes whose tensor holds nothing else: the merge takes boxes */
  if (d == NULL || d->head != CNMS_HEAD_NONE || d->oriented)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "tiles take the layouts of boxes (yolov8, yolov5, end2end, or "
        "auto choosing one), not %s", cnms_layout_name (layout));
  for (i = 0; i < n_slices; i++) {
    const cnms_slice *s = &slices[i];

    if (s->x1 < 0 || s->y1 < 0 || s->x2 > frame_width
        || s->y2 > frame_height || s->x1 >= s->x2 || s->y1 >= s->y2)
      return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
          "slice %d (%d,%d)-(%d,%d) is not a rectangle of the %dx%d frame",
          i, s->x1, s->y1, s->x2, s->y2, frame_width, frame_height);
  }
  st = reserve_tiles (ctx, n_slices, 0);
  if (st != CNMS_OK)
    return st;

  /* each slice a frame of its own size */
  fr = ctx->tiles_frames;
  for (i = 0; i < n_slices; i++) {
    memset (&fr[i], 0, sizeof fr[i]);
    if (frames != NULL && batch == NULL)
      fr[i] = frames[i];
    fr[i].frame_width = slices[i].x2 - slices[i].x1;
    fr[i].frame_height = slices[i].y2 - slices[i].y1;
  }
  st = cnms_detect_batch (ctx, batch, NULL, fr, n_slices, layout, p, &res);
  if (st != CNMS_OK)
    return st;
  for (i = 0; i < n_slices; i++) {
    if (res[i].status != CNMS_OK)
      return cnms_fail (&ctx->b, res[i].status, "slice %d: %s", i,
          res[i].error);
    d = cnms_layout_info (res[i].report.shape.layout);
    if (d == NULL || d->head != CNMS_HEAD_NONE || d->oriented)
      return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
          "tiles take the layouts of boxes, and the slices' tensors are %s",
          cnms_layout_name (res[i].report.shape.layout));
    total += (size_t) res[i].n_dets;
  }
  st = reserve_tiles (ctx, n_slices, total);
  if (st != CNMS_OK)
    return st;

  boxes = ctx->tiles_boxes;
  scores = boxes + 4 * total;
  k = (size_t) cnms_tiles_records (res, slices, n_slices, frame_width,
      frame_height, boxes, scores, ctx->tiles_classes);
  /* the call's GPU time: the batch's, and the merge's when it ran on the
   * GPU */
  gpu_us = ctx->b.last_gpu_us;
  st = cnms_merge (ctx, boxes, scores, ctx->tiles_classes, (int) k, m,
      dets, n_dets);
  if (gpu_us >= 0.0 && ctx->b.last_gpu_us >= 0.0)
    gpu_us += ctx->b.last_gpu_us;
  ctx->b.last_gpu_us = gpu_us;
  return st;
}
