/* LaneATT lanes on the CPU backend: decode (softmax score, the rows of a
 * lane), the lane NMS on the greedy walk of cpu_nms.c (geometry
 * CNMS_GEOM_LANE: cnms_lane_close decides), and the kept lanes' points.
 * The rules are in cnms_math.h and docs/contracts.md ("Lanes"). */
#include <string.h>

#include "cpu_priv.h"
#include "cnms_lanes.h"

static cnms_status
reserve (cnms_backend_ctx *ctx, cnms_lane_ws *lw, size_t n, size_t stride)
{
  cnms_status st = CNMS_OK;

#define RESERVE(buf, bytes) \
  if (st == CNMS_OK) st = cnms_buf_reserve (ctx, &lw->buf, (bytes))
  RESERVE (rows, n * stride * sizeof (float));
  RESERVE (recs, n * sizeof (cnms_det));
  RESERVE (keys, n * sizeof (uint64_t));
  RESERVE (tmp_keys, n * sizeof (uint64_t));
  RESERVE (perm, n * sizeof (uint32_t));
  RESERVE (tmp_perm, n * sizeof (uint32_t));
  RESERVE (kept, n * sizeof (int32_t));
#undef RESERVE
  return st;
}

/* The greedy walk over the first k sorted lanes of src. */
static cnms_status
walk (cnms_backend_ctx *ctx, cnms_greedy_ws *gw, const float *base,
    size_t stride, const uint32_t *perm, int n, int k, float distance,
    int max_keep, int32_t *kept, int *n_kept)
{
  cnms_box_src src;

  src.base = base;
  src.stride = stride;
  src.rows = perm;
  src.geom = CNMS_GEOM_LANE;
  src.angle_off = 0;
  src.n_strips = n;
  return cnms_cpu_greedy (ctx, gw, &src, NULL, 1, k, distance, NULL,
      max_keep, kept, n_kept);
}

cnms_status
cnms_cpu_detect_lanes (cnms_backend_ctx *ctx, cnms_lane_ws *lw,
    cnms_greedy_ws *gw, const cnms_job *job, cnms_backend_out *res)
{
  const cnms_tensor *t = job->t;
  const cnms_shape *shape = &job->shape;
  const cnms_params *p = job->p;
  const cnms_map *map = &job->map;
  const int s_rows = shape->n_lane_rows, n = s_rows - 1;
  const size_t stride = 5 + (size_t) s_rows;
  const int f16 = t->dtype == CNMS_DTYPE_FLOAT16;
  float *rows, *pts;
  cnms_det *recs, *out;
  uint64_t *keys;
  uint32_t *perm;
  int32_t *kept;
  int a, count = 0, k, n_kept, i;
  cnms_status st;

  st = reserve (ctx, lw, (size_t) shape->n_anchors, stride);
  if (st != CNMS_OK)
    return st;
  rows = lw->rows.p;
  recs = lw->recs.p;
  keys = lw->keys.p;
  perm = lw->perm.p;
  for (a = 0; a < shape->n_anchors; a++) {
    const float *r;
    float score;
    int32_t start, end;

    if (f16) {
      /* converted straight into the next candidate's slot (a row that is
       * no candidate is overwritten by the next) */
      float *slot = rows + (size_t) count * stride;
      cnms_cpu_halves_to_floats ((const uint16_t *) t->data + (size_t) a *
          stride, (int) stride, slot);
      r = slot;
    } else {
      r = (const float *) t->data + (size_t) a * stride;
    }
    score = cnms_lane_score (r[0], r[1]);
    ctx->report.nonfinite_scores += !cnms_isfinite (score);
    if (!cnms_score_ok (score, p->score_threshold)
        || !cnms_lane_rows (r[2], r[4], n, &start, &end))
      continue;
    if (!f16)
      memcpy (rows + (size_t) count * stride, r, stride * sizeof (float));
    memset (&recs[count], 0, sizeof recs[count]);
    recs[count].score = score;
    recs[count].anchor = a;
    keys[count] = cnms_sort_key (score, (uint32_t) a);
    perm[count] = (uint32_t) count;
    count++;
  }
  ctx->report.candidates = count;
  cnms_cpu_sort (keys, perm, lw->tmp_keys.p, lw->tmp_perm.p, count);
  k = count < p->max_candidates ? count : p->max_candidates;
  kept = lw->kept.p;
  n_kept = 0;
  if (k > 0) {
    st = walk (ctx, gw, rows, stride, perm, n, k, job->lane_distance,
        p->max_detections, kept, &n_kept);
    if (st != CNMS_OK)
      return st;
  }
  st = cnms_buf_reserve (ctx, &lw->out, ((size_t) n_kept + 1) *
      sizeof (cnms_det));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &lw->points, ((size_t) n_kept + 1) *
        (size_t) s_rows * 2 * sizeof (float));
  if (st != CNMS_OK)
    return st;
  out = lw->out.p;
  pts = lw->points.p;
  for (i = 0; i < n_kept; i++) {
    const uint32_t c = perm[kept[i]];
    float rect[4];

    out[i] = recs[c];
    cnms_lane_points (rows + (size_t) c * stride, n, map,
        (float) p->model_width, (float) p->model_height,
        pts + (size_t) i * s_rows * 2, rect);
    out[i].x1 = rect[0];
    out[i].y1 = rect[1];
    out[i].x2 = rect[2];
    out[i].y2 = rect[3];
  }
  res->dets = out;
  res->n_dets = n_kept;
  res->payload = pts;
  return CNMS_OK;
}

cnms_status
cnms_cpu_nms_lanes (cnms_backend_ctx *ctx, cnms_lane_ws *lw,
    cnms_greedy_ws *gw, const float *proposals, int n_offsets,
    const float *scores, int n, float distance, int max_detections,
    int64_t *keep, int *n_keep)
{
  const size_t stride = 5 + (size_t) n_offsets;
  uint64_t *keys;
  uint32_t *perm;
  int32_t *kept;
  int i, m = 0, n_kept = 0;
  cnms_status st;

  st = reserve (ctx, lw, (size_t) n, 0);
  if (st != CNMS_OK)
    return st;
  keys = lw->keys.p;
  perm = lw->perm.p;
  for (i = 0; i < n; i++) {
    const float *r = proposals + (size_t) i * stride;
    int32_t start, end;

    /* LaneATT takes every proposal; only what has no order or no rows
     * stays out */
    if (!cnms_isfinite (scores[i])
        || !cnms_lane_rows (r[2], r[4], n_offsets - 1, &start, &end))
      continue;
    keys[m] = cnms_sort_key (scores[i], (uint32_t) i);
    perm[m++] = (uint32_t) i;
  }
  cnms_cpu_sort (keys, perm, lw->tmp_keys.p, lw->tmp_perm.p, m);
  kept = lw->kept.p;
  if (m > 0) {
    st = walk (ctx, gw, proposals, stride, perm, n_offsets - 1, m, distance,
        max_detections > 0 ? max_detections : m, kept, &n_kept);
    if (st != CNMS_OK)
      return st;
  }
  for (i = 0; i < n_kept; i++)
    keep[i] = perm[kept[i]];
  *n_keep = n_kept;
  return CNMS_OK;
}
