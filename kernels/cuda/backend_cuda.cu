/* The CUDA backend: per call, at most one upload from pinned staging, the
 * kernels and one cudaStreamSynchronize, all on the context's stream. The
 * engine writes [header | kept results] straight into mapped pinned host
 * memory (zero-copy), so that no copy follows the kernels.
 *
 *   decode (YOLOv5, end2end; YOLOv8, YOLOv8-OBB and LaneATT are decoded,
 *   and plain NMS's boxes filtered, by the engine's first phase; plain
 *   lane NMS has a filter kernel) -> engine (sort, cap, bitmask, resolve:
 *   one cooperative kernel, its results into host memory) -> for a pose
 *   or seg tensor on the device, the heads' kernels (cuda_heads.cu)
 *
 * The geometry (cnms_internal.h: boxes, oriented boxes for a YOLOv8-OBB
 * tensor and cnms_nms_rotated, lanes) picks the engine's instantiation
 * (cuda_geom.cuh) and the room of the sorted boxes.
 *
 * The candidate count stays on the device; the engine sizes its work from
 * it, and zeroes it for the next call once every block has read it (the
 * host zeroes it only in a new buffer or after a failed call). With
 * timing on, CUDA events bracket the stream work from the upload to the
 * engine's end (its results are then in host memory).
 *
 * The candidate buffer holds every anchor, so nothing is lost to the
 * atomic race; the cap to max_candidates is taken after the sort, which
 * keeps the best ones exactly as the CPU backend does. */
#include <string.h>

#include "cnms_cuda.cuh"
#include "cnms_lanes.h"

/* Bytes of a host tensor copied to pinned staging per upload. */
#define CNMS_STAGE_CHUNK ((size_t) 256 * 1024)

static size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Reserves the sort and phase buffers for n slots and cap sorted boxes
 * of geometry geom (suppress: NMS, not end2end). */
static cnms_status
reserve_buffers (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int geom, int n,
    int cap, bool suppress)
{
  /* a box, or an oriented box's hull and its cnms_obb */
  const size_t box_bytes = sizeof (float4)
      + (geom == CNMS_GEOM_OBB ? sizeof (cnms_obb) : 0)
      + (geom == CNMS_GEOM_LANE ? sizeof (int4) : 0);
  const size_t nn = (size_t) n;
  const size_t col_blocks = (size_t) cnms_ceil_div (cap, CNMS_TILE);

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_keys,
          nn * sizeof (uint64_t), "sort keys"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_vals,
          nn * sizeof (uint32_t), "sort values"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_order,
          nn * sizeof (uint32_t), "sorted order"));
  if (!suppress)
    return CNMS_OK;
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_boxes,
          (size_t) cap * box_bytes, "sorted boxes"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cls,
          (size_t) cap * sizeof (int32_t), "sorted classes"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_rows, (size_t) cap *
          (sizeof (int32_t) + sizeof (uint64_t) + CNMS_ROW_LIST *
              (sizeof (int32_t) + sizeof (uint64_t))), "NMS row lists"));
  {
    /* a new grid's state words must be zeroed before the engine runs */
    const void *old = s->d_grid.p;
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_grid,
            cnms_grid_bytes (cap), "NMS grid"));
    if (s->d_grid.p != old)
      s->hdr_dirty = true;
  }
  return cnms_cuda_reserve_device (ctx, &s->d_mask,
      (size_t) cap * col_blocks * sizeof (uint64_t), "NMS suppression mask");
}

/* Reserves the buffers (reserve_buffers) and sizes the engine launch of
 * geometry geom for cap candidates (plain: cnms_nms, cnms_nms_rotated):
 * its shared memory, and its blocks, at least min_blocks (the fused
 * decode's) and as many as fit at once at most. */
static cnms_status
reserve_stages (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int geom, int n,
    int cap, bool suppress, bool plain, int min_blocks, int *blocks,
    size_t *smem)
{
  /* plain NMS: every box is a candidate. Up to 1024 boxes (the all-pairs
   * mask) the bitmask wants four blocks per tile of its upper triangle,
   * so that cnms_build_mask splits each tile's rows in halves, in one
   * round; above (the pruned mask, a warp a row) a block per two tiles
   * (docs/performance.md, "Choices in the code"). Decode: the count
   * is far below the anchors, a block per 256 of them, at least 64 above
   * 2048 (a YOLOv8 frame's ~500 candidates make 45 tiles: one round of the
   * mask phase). As many as fit at most. */
  const long long tiles = cnms_ceil_div (cap, CNMS_TILE);
  const long long want_plain = cap <= 1024 ? 2 * tiles * (tiles + 1) :
      tiles * (tiles + 1) / 4;
  const long long want_decode = cap > 8 * 256 ? cnms_ceil_div (cap, 256) : 8;
  const long long want_cap = plain ? (want_plain > 8 ? want_plain : 8) :
      (cap > 8 * 256 && want_decode < 64 ? 64 : want_decode);
  /* lanes: a pair test walks up to S rows, so the mask wants a block per
   * eighth of a tile (cnms_build_mask_lanes splits tiles in eight when
   * the grid has the blocks), and the block-local front of a LaneATT
   * tensor one per sixteenth (cnms_mask_lanes_quads): for the last
   * frame's count, or the cap */
  const long long lane_tiles = cnms_ceil_div (!plain && s->last_count > 0
      && s->last_count < cap ? s->last_count : cap, CNMS_TILE);
  const long long want_lane = geom == CNMS_GEOM_LANE ? (plain ? 4 : 8)
      * lane_tiles * (lane_tiles + 1) : 0;
  const long long want_all = want_cap > want_lane ? want_cap : want_lane;
  const long long want = want_all > min_blocks ? want_all : min_blocks;

  /* the cached resolve's room: the last frame's count and a quarter more,
   * in steps of 256 (so that the launch is not resized every frame), the
   * whole cap before the first frame; less shared memory a block fits
   * more engines of concurrent streams on the GPU at once */
  const int last = s->last_count;
  const int grow = last + last / 4;
  const int expect = plain || last < 0 ? cap :
      (grow < 256 ? 256 : cnms_ceil_div (grow, 256) * 256);

  CNMS_TRY (reserve_buffers (ctx, s, geom, n, cap, suppress));
  if (cnms_cuda_engine_smem_min (cap) > s->smem_budget)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "CUDA: %d candidates need %zu bytes of shared memory in the NMS "
        "resolve, the device allows %zu", cap,
        cnms_cuda_engine_smem_min (cap), s->smem_budget);
  *smem = cnms_cuda_engine_smem_bytes (cap, plain, s->smem_budget, expect);
  /* lanes: the mask phase stages the candidates' x there
   * (cnms_build_mask_lanes), the 72 rows of LaneATT at once; a LaneATT
   * tensor small enough for the block-local front (cuda_lane_local.cuh)
   * its candidates too */
  if (geom == CNMS_GEOM_LANE) {
    const size_t least = cnms_cuda_lane_smem_least (!plain
        && n <= CNMS_LANE_LOCAL_ANCHORS, s->smem_budget);

    if (*smem < least)
      *smem = least;
  }
  if (*smem != s->occ_smem || geom != s->occ_geom) {
    int per_sm = 0;
    CNMS_CUDA_TRY (ctx, cnms_cuda_engine_max_blocks (geom, *smem, &per_sm),
        "sizing the NMS engine");
    if (per_sm < 1)
      return cnms_fail (ctx, CNMS_ERR_CUDA,
          "CUDA: the NMS engine does not fit on a multiprocessor with %zu "
          "bytes of shared memory", *smem);
    s->occ_smem = *smem;
    s->occ_geom = geom;
    s->occ_per_sm = per_sm;
  }
  *blocks = want < s->occ_per_sm * s->sms ? (int) want :
      s->occ_per_sm * s->sms;
  if (*blocks < 1)
    *blocks = 1;
  return CNMS_OK;
}

/* Reserves the output header + body in mapped pinned memory. */
static cnms_status
reserve_out (cnms_backend_ctx *ctx, cnms_cuda_priv *s, size_t bytes)
{
  return cnms_cuda_reserve_pinned (ctx, &s->h_out, bytes, "results");
}

/* Enqueues the engine of geometry geom on the n candidate slots in
 * d_keys/d_vals (count in d_hdr), decoding them first when dec is given,
 * or filtering plain NMS's boxes into them when filt is; report: the
 * decode's row counts (detect), or NULL (plain NMS); kept_dev:
 * cnms_engine_args's, or NULL. */
static cnms_status
enqueue_engine (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int geom,
    const cnms_engine_decode *dec, const cnms_engine_filter *filt,
    const cnms_cand_src *src, int n, const cnms_nms_args *a, int32_t *d_hdr,
    int32_t *report, int32_t *kept_dev, int blocks, size_t smem)
{
  cnms_engine_args g;

  memset (&g, 0, sizeof g);
  if (dec != NULL)
    g.dec = *dec;
  if (filt != NULL)
    g.filt = *filt;
  g.src = *src;
  g.keys = (const uint64_t *) s->d_keys.p;
  g.vals = (const uint32_t *) s->d_vals.p;
  g.hdr = d_hdr;
  g.capacity = n;
  g.a = *a;
  g.cache_max = s->force_large ? -1 : CNMS_CACHE_MAX;
  g.row_list_max = s->force_large ? 0 : CNMS_ROW_LIST;
  g.report = report;
  g.kept_dev = kept_dev;
  g.order = (uint32_t *) s->d_order.p;
  g.boxes = (float4 *) s->d_boxes.p;
  /* [hulls cap | cnms_obb cap] for oriented boxes */
  g.obbs = geom == CNMS_GEOM_OBB ? (cnms_obb *) (g.boxes + a->cap) : NULL;
  /* [rectangles cap | int4 cap] for lanes */
  g.lanes = geom == CNMS_GEOM_LANE ? (int4 *) (g.boxes + a->cap) : NULL;
  g.cls = (int32_t *) s->d_cls.p;
  g.mask = (uint64_t *) s->d_mask.p;
  /* [bits cap x L | next words cap | words cap x L | counts cap]: 8-byte
   * words first */
  g.list_b = (uint64_t *) s->d_rows.p;
  g.row_next = g.list_b + (size_t) a->cap * CNMS_ROW_LIST;
  g.list_w = (int32_t *) (g.row_next + a->cap);
  g.row_cnt = g.list_w + (size_t) a->cap * CNMS_ROW_LIST;
  /* cnms_grid_bytes's parts */
  g.grid_state = (uint32_t *) s->d_grid.p;
  g.grid_cells = (int32_t *) (g.grid_state + CNMS_GRID_STATE);
  g.grid_fill = g.grid_cells + CNMS_GRID_CELLS_MAX + 1;
  g.grid_by = (uint64_t *) (g.grid_fill + CNMS_GRID_CELLS_MAX + 1);
  g.grid_range = (int2 *) (g.grid_by + a->cap);
  g.grid_entries = (int32_t *) (g.grid_range + a->cap);
  g.grid_big = g.grid_entries + (size_t) a->cap * CNMS_GRID_SPAN;
  g.out = (char *) s->h_out.dev;
  CNMS_CUDA_TRY (ctx, cnms_cuda_engine (&g, geom, blocks, smem, s->stream),
      "NMS engine kernel");
  return CNMS_OK;
}

/* Waits for whatever a failed call left queued, so that the next call
 * never overwrites staging that a copy still reads; the count header may
 * then hold a count no engine zeroed. */
static cnms_status
drain (cnms_cuda_priv *s, cnms_status st)
{
  if (st != CNMS_OK) {
    (void) cudaStreamSynchronize (s->stream);
    (void) cudaGetLastError ();
    s->hdr_dirty = true;
    s->ahead_kind = 0;
    s->rules_bytes = 0;         /* their upload may not have run */
  }
  return st;
}

/* rules with its tables in device memory (dev), uploaded when they differ
 * from what d_rules holds: a stream whose rules do not change uploads
 * them once. */
cnms_status
cnms_cuda_upload_rules (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const cnms_class_rules *r, cnms_class_rules *dev)
{
  /* [thr n | iou n | cap n] */
  const size_t part = (size_t) r->n * sizeof (float), bytes = 3 * part;

  *dev = *r;
  if (r->n == 0)
    return CNMS_OK;
  if (bytes != s->rules_bytes || memcmp (s->rules_now, r->thr, part) != 0
      || memcmp ((const char *) s->rules_now + part, r->iou, part) != 0
      || memcmp ((const char *) s->rules_now + 2 * part, r->cap, part)
      != 0) {
    float *now = (float *) realloc (s->rules_now, bytes);

    if (now == NULL)
      return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
          "cannot allocate the rules of %d classes", r->n);
    s->rules_now = now;
    s->rules_bytes = 0;
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_rules, bytes,
            "class rules"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_rules, bytes,
            "class rules staging"));
    memcpy (now, r->thr, part);
    memcpy ((char *) now + part, r->iou, part);
    memcpy ((char *) now + 2 * part, r->cap, part);
    memcpy (s->h_rules.p, now, bytes);
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_rules.p, s->h_rules.p, bytes,
            cudaMemcpyHostToDevice, s->stream), "uploading the class rules");
    s->rules_bytes = bytes;
  }
  dev->thr = (const float *) s->d_rules.p;
  dev->iou = dev->thr + r->n;
  dev->cap = (const int32_t *) (dev->iou + r->n);
  return CNMS_OK;
}

/* Reserves the count-header buffer d_cand (bytes); a new one must be
 * zeroed. */
static cnms_status
reserve_count_buffer (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    size_t bytes, const char *what)
{
  const void *old = s->d_cand.p;
  const size_t old_cap = s->d_cand.cap;

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand, bytes, what));
  if (s->d_cand.p != old || s->d_cand.cap != old_cap)
    s->hdr_dirty = true;
  return CNMS_OK;
}

/* Waits for the call's work; on failure the count header is suspect. */
static cnms_status
finish (cnms_backend_ctx *ctx, cnms_cuda_priv *s)
{
  const cudaError_t e = cudaStreamSynchronize (s->stream);

  if (e != cudaSuccess) {
    s->hdr_dirty = true;
    return cnms_cuda_error (ctx, e, "running the kernels");
  }
  return CNMS_OK;
}

/* Zeroes the count header, the decode's row counts and the grid's state
 * when no engine left them zero. */
static cnms_status
enqueue_zero_count (cnms_backend_ctx *ctx, cnms_cuda_priv *s)
{
  if (!s->hdr_dirty)
    return CNMS_OK;
  CNMS_CUDA_TRY (ctx, cudaMemsetAsync (s->d_cand.p, 0, CNMS_HEADER_BYTES,
          s->stream), "zeroing the candidate count");
  /* made by the first detect (plain NMS has none), which zeroes it */
  if (s->d_report.p != NULL)
    CNMS_CUDA_TRY (ctx, cudaMemsetAsync (s->d_report.p, 0,
            CNMS_REPORT_BYTES, s->stream), "zeroing the decode's row counts");
  /* the engine leaves the grid's state zero after each call */
  if (s->d_grid.p != NULL)
    CNMS_CUDA_TRY (ctx, cudaMemsetAsync (s->d_grid.p, 0,
            CNMS_GRID_STATE_BYTES, s->stream), "zeroing the NMS grid");
  s->hdr_dirty = false;
  return CNMS_OK;
}

/* Enqueues decode .. engine of one tensor, then its caps and the heads
 * behind them where they can run there; *out_bytes: the output's, *max_out:
 * the kept records at most. */
static cnms_status
enqueue_detect (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const cnms_job *job, size_t *out_bytes, int *max_out)
{
  const cnms_tensor *t = job->t;
  const cnms_shape *shape = &job->shape;
  const cnms_params *p = job->p;
  const cnms_map *map = &job->map;
  const int n = shape->n_anchors;
  const int cap = n < p->max_candidates ? n : p->max_candidates;
  const bool e2e = !job->suppress;
  const bool caps = job->rules.caps != 0;
  const bool fused = cnms_cuda_engine_decodes (shape);
  const int geom = job->geom;
  const size_t in_bytes = cnms_shape_bytes (shape, t->dtype);
  cnms_engine_decode dec;
  cnms_nms_args a;
  cnms_cand_src src;
  const void *d_tensor = t->data;
  int32_t *d_hdr;
  int blocks = 1;
  size_t smem = 0;
  bool ahead = false;

  a.cap = cap;
  *max_out = p->max_detections < cap ? p->max_detections : cap;
  /* with caps the engine keeps every box NMS keeps: the caps come after */
  a.max_keep = caps ? cap : *max_out;
  a.iou = p->iou;
  memset (&a.rules, 0, sizeof a.rules);
  a.agnostic = p->class_agnostic;
  a.suppress = !e2e;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) a.max_keep * sizeof (cnms_det);
  CNMS_TRY (reserve_count_buffer (ctx, s,
          CNMS_HEADER_BYTES + (size_t) n * sizeof (cnms_det),
          "candidate buffer"));
  if (s->d_report.p == NULL) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_report, CNMS_REPORT_BYTES,
            "decode report"));
    s->hdr_dirty = true;
  }
  CNMS_TRY (reserve_stages (ctx, s, geom, n, cap, !e2e, false, fused ?
          cnms_ceil_div (cnms_ceil_div (n, 32), CNMS_FUSED_V8_GROUPS) : 1,
          &blocks, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));
  if (!t->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes, "tensor"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
            "tensor staging"));
  }
  if (caps) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_kept,
            ((size_t) a.max_keep + 1) * sizeof (int32_t), "kept records"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_caps,
            cnms_caps_table_bytes (a.max_keep), "class caps"));
  }
  if (job->heads != NULL)
    CNMS_TRY (cnms_cuda_heads_ahead_reserve (ctx, job->heads, *max_out,
            &ahead));
  d_hdr = (int32_t *) s->d_cand.p;
  CNMS_TRY (cnms_cuda_upload_rules (ctx, s, &job->rules, &a.rules));

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!t->on_device) {
    /* chunk by chunk: the copy of a chunk into pinned staging overlaps the
     * upload of the one before */
    for (size_t off = 0; off < in_bytes; off += CNMS_STAGE_CHUNK) {
      const size_t len = in_bytes - off < CNMS_STAGE_CHUNK ? in_bytes - off :
          CNMS_STAGE_CHUNK;
      memcpy ((char *) s->h_stage.p + off, (const char *) t->data + off, len);
      CNMS_CUDA_TRY (ctx, cudaMemcpyAsync ((char *) s->d_in.p + off,
              (const char *) s->h_stage.p + off, len, cudaMemcpyHostToDevice,
              s->stream), "uploading the tensor");
    }
    d_tensor = s->d_in.p;
  }
  CNMS_TRY (enqueue_zero_count (ctx, s));
  memset (&dec, 0, sizeof dec);
  dec.tensor = d_tensor;
  dec.f16 = t->dtype == CNMS_DTYPE_FLOAT16;
  dec.n_anchors = n;
  dec.n_classes = shape->n_classes;
  dec.map = *map;
  dec.rules = a.rules;
  dec.abits = cnms_cuda_key_bits (n);
  dec.recs = (cnms_det *) ((char *) s->d_cand.p + CNMS_HEADER_BYTES);
  dec.keys = (uint64_t *) s->d_keys.p;
  dec.vals = (uint32_t *) s->d_vals.p;
  dec.report = (int32_t *) s->d_report.p;
  if (!fused)
    CNMS_CUDA_TRY (ctx, cnms_cuda_decode (d_tensor, t->dtype, shape, map,
            &dec.rules, p->score_threshold, dec.abits, s->d_cand.p, dec.keys,
            dec.vals, dec.report, s->stream), "decode kernel");
  memset (&src, 0, sizeof src);
  src.recs = dec.recs;
  CNMS_TRY (enqueue_engine (ctx, s, geom, fused ? &dec : NULL, NULL, &src,
          n, &a, d_hdr, dec.report, ahead || caps ? (int32_t *) s->d_kept.p :
          NULL, blocks, smem));
  if (caps)
    CNMS_CUDA_TRY (ctx, cnms_cuda_caps (dec.recs, (int32_t *) s->d_kept.p,
            (char *) s->h_out.dev, &a.rules, *max_out, a.max_keep,
            s->d_caps.p, s->stream), "class caps kernel");
  if (ahead)
    CNMS_TRY (cnms_cuda_heads_ahead (ctx, job->heads, *max_out));
  return cnms_cuda_timing_end (ctx);
}

/* The decode's row counts from the output header into the report. */
static void
read_report (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const int32_t *hdr)
{
  ctx->report.candidates = hdr[CNMS_OUT_CANDIDATES];
  ctx->report.nonfinite_scores = hdr[CNMS_OUT_NONFINITE];
  ctx->report.invalid_classes = hdr[CNMS_OUT_INVALID];
  ctx->report.fractional_classes = hdr[CNMS_OUT_FRACTIONAL];
  memcpy (&ctx->report.first_invalid_class, &hdr[CNMS_OUT_FIRST_INVALID],
      sizeof (float));
  memcpy (&ctx->report.first_fractional_class,
      &hdr[CNMS_OUT_FIRST_FRACTIONAL], sizeof (float));
  s->last_count = ctx->report.candidates;
}

static cnms_status cuda_detect_lanes (cnms_backend_ctx *ctx,
    const cnms_job *job, cnms_backend_out *res);

static cnms_status
cuda_detect (cnms_backend_ctx *ctx, const cnms_job *job,
    cnms_backend_out *res)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  const int32_t *hdr;
  size_t out_bytes = 0;
  int kept, max_out = 0;

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  if (job->geom == CNMS_GEOM_LANE)
    return cuda_detect_lanes (ctx, job, res);
  s->ahead_kind = 0;
  CNMS_TRY (drain (s, enqueue_detect (ctx, s, job, &out_bytes, &max_out)));
  CNMS_TRY (finish (ctx, s));
  CNMS_TRY (cnms_cuda_timing_read (ctx));
  CNMS_TRY (cnms_cuda_heads_ahead_done (ctx));

  hdr = (const int32_t *) s->h_out.p;
  kept = hdr[CNMS_OUT_KEPT];
  read_report (ctx, s, hdr);
  res->dets = (const cnms_det *) ((const char *) s->h_out.p
      + CNMS_HEADER_BYTES);
  res->n_dets = kept < 0 ? 0 : (kept < max_out ? kept : max_out);
  res->payload = NULL;
  return CNMS_OK;
}

/* Enqueues upload .. engine of a plain NMS call of geometry geom (boxes
 * [n][4], or oriented boxes [n][5]); in_bytes of staging: boxes at 0,
 * scores, then (class-aware only) classes, 16-byte aligned. */
static cnms_status
enqueue_nms (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int geom,
    const float *boxes, const float *scores, const int32_t *classes, int n,
    float iou, int max_keep, size_t *out_bytes)
{
  const size_t nn = (size_t) n;
  const size_t values = geom == CNMS_GEOM_OBB ? 5 : 4;
  const size_t off_scores = nn * values * sizeof (float);
  const size_t off_classes = align_up (off_scores + nn * sizeof (float), 16);
  const size_t in_bytes = classes != NULL ?
      off_classes + nn * sizeof (int32_t) : off_scores + nn * sizeof (float);
  cnms_nms_args a;
  cnms_engine_filter filt;
  cnms_cand_src src;
  char *d_in, *h_in;
  int32_t *d_hdr;
  int blocks = 1;
  size_t smem = 0;

  a.cap = n;
  a.max_keep = max_keep;
  a.iou = iou;
  memset (&a.rules, 0, sizeof a.rules);
  a.rules.iou_rest = iou;
  a.agnostic = classes == NULL;
  a.suppress = 1;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (int64_t);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes,
          "NMS input"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
          "NMS input staging"));
  CNMS_TRY (reserve_count_buffer (ctx, s, CNMS_HEADER_BYTES,
          "count header"));
  CNMS_TRY (reserve_stages (ctx, s, geom, n, n, true, true, 1, &blocks,
          &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  h_in = (char *) s->h_stage.p;
  d_in = (char *) s->d_in.p;
  d_hdr = (int32_t *) s->d_cand.p;
  memcpy (h_in, boxes, off_scores);
  memcpy (h_in + off_scores, scores, nn * sizeof (float));
  if (classes != NULL)
    memcpy (h_in + off_classes, classes, nn * sizeof (int32_t));
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the boxes");
  CNMS_TRY (enqueue_zero_count (ctx, s));
  /* the engine's first phase filters the boxes */
  memset (&filt, 0, sizeof filt);
  filt.boxes = (const float *) d_in;
  filt.scores = (const float *) (d_in + off_scores);
  filt.n = n;
  filt.abits = cnms_cuda_key_bits (n);
  filt.keys = (uint64_t *) s->d_keys.p;
  filt.vals = (uint32_t *) s->d_vals.p;
  memset (&src, 0, sizeof src);
  if (geom == CNMS_GEOM_OBB)
    src.obbs_in = (const float *) d_in;
  else
    src.boxes_in = (const float4 *) d_in;
  src.classes_in = classes != NULL ?
      (const int32_t *) (d_in + off_classes) : NULL;
  CNMS_TRY (enqueue_engine (ctx, s, geom, NULL, &filt, &src, n, &a, d_hdr,
          NULL, NULL, blocks, smem));
  return cnms_cuda_timing_end (ctx);
}

/* The kept input indices of a plain NMS (boxes, oriented boxes or lanes)
 * from the output the engine wrote, at most max_keep. */
static void
read_keep (const cnms_cuda_priv *s, int max_keep, int64_t *keep, int *n_keep)
{
  int kept = ((const int32_t *) s->h_out.p)[CNMS_OUT_KEPT];

  kept = kept < 0 ? 0 : (kept < max_keep ? kept : max_keep);
  memcpy (keep, (const char *) s->h_out.p + CNMS_HEADER_BYTES,
      (size_t) kept * sizeof (int64_t));
  *n_keep = kept;
}

static cnms_status
cuda_nms (cnms_backend_ctx *ctx, int geom, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int class_agnostic, int max_detections, int64_t *keep, int *n_keep)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  const int max_keep = max_detections > 0 && max_detections < n ?
      max_detections : n;
  size_t out_bytes = 0;

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  /* class ids only matter when suppression is class-aware */
  CNMS_TRY (drain (s, enqueue_nms (ctx, s, geom, boxes, scores,
              class_agnostic ? NULL : classes, n, iou, max_keep,
              &out_bytes)));
  CNMS_TRY (finish (ctx, s));
  CNMS_TRY (cnms_cuda_timing_read (ctx));

  read_keep (s, max_keep, keep, n_keep);
  return CNMS_OK;
}


/* Enqueues upload .. engine of cnms_nms_lanes: proposals [n][5 + S] at 0
 * of the staging, then the scores, 16-byte aligned. */
static cnms_status
enqueue_nms_lanes (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const float *proposals, int n_offsets, const float *scores, int n,
    float distance, int max_keep, size_t *out_bytes)
{
  const size_t nn = (size_t) n;
  const size_t stride = 5 + (size_t) n_offsets;
  const size_t off_scores = align_up (nn * stride * sizeof (float), 16);
  const size_t in_bytes = off_scores + nn * sizeof (float);
  cnms_nms_args a;
  cnms_cand_src src;
  char *d_in, *h_in;
  int32_t *d_hdr;
  int blocks = 1;
  size_t smem = 0;

  a.cap = n;
  a.max_keep = max_keep;
  a.iou = distance;
  memset (&a.rules, 0, sizeof a.rules);
  a.rules.iou_rest = distance;
  a.agnostic = 1;
  a.suppress = 1;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (int64_t);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes,
          "lane NMS input"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
          "lane NMS input staging"));
  CNMS_TRY (reserve_count_buffer (ctx, s, CNMS_HEADER_BYTES,
          "count header"));
  CNMS_TRY (reserve_stages (ctx, s, CNMS_GEOM_LANE, n, n, true, true, 1,
          &blocks, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  h_in = (char *) s->h_stage.p;
  d_in = (char *) s->d_in.p;
  d_hdr = (int32_t *) s->d_cand.p;
  memcpy (h_in, proposals, nn * stride * sizeof (float));
  memcpy (h_in + off_scores, scores, nn * sizeof (float));
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the proposals");
  CNMS_TRY (enqueue_zero_count (ctx, s));
  CNMS_CUDA_TRY (ctx, cnms_cuda_filter_lanes ((const float *) d_in,
          (int) stride, n_offsets - 1, (const float *) (d_in + off_scores),
          n, cnms_cuda_key_bits (n), d_hdr, (uint64_t *) s->d_keys.p,
          (uint32_t *) s->d_vals.p, s->stream), "lane filter kernel");
  memset (&src, 0, sizeof src);
  src.lanes_in = (const float *) d_in;
  src.lane_stride = (int) stride;
  src.lane_n = n_offsets - 1;
  CNMS_TRY (enqueue_engine (ctx, s, CNMS_GEOM_LANE, NULL, NULL, &src, n, &a,
          d_hdr, NULL, NULL, blocks, smem));
  return cnms_cuda_timing_end (ctx);
}

static cnms_status
cuda_nms_lanes (cnms_backend_ctx *ctx, const float *proposals,
    int n_offsets, const float *scores, int n, float distance,
    int max_detections, int64_t *keep, int *n_keep)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  const int max_keep = max_detections > 0 && max_detections < n ?
      max_detections : n;
  size_t out_bytes = 0;

  *n_keep = 0;
  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  if (n <= 0)
    return CNMS_OK;
  CNMS_TRY (drain (s, enqueue_nms_lanes (ctx, s, proposals, n_offsets,
              scores, n, distance, max_keep, &out_bytes)));
  CNMS_TRY (finish (ctx, s));
  CNMS_TRY (cnms_cuda_timing_read (ctx));

  read_keep (s, max_keep, keep, n_keep);
  return CNMS_OK;
}

/* Enqueues decode .. engine of a LaneATT tensor [N][5 + S]; from a
 * device tensor the kept lanes' rows then go to h_lane_rows, in kept
 * order (their points are computed on the host). */
static cnms_status
enqueue_detect_lanes (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const cnms_tensor *t, const cnms_shape *shape, const cnms_params *p,
    float distance, size_t *out_bytes)
{
  const int n = shape->n_anchors;
  const int cap = n < p->max_candidates ? n : p->max_candidates;
  const int stride = 5 + shape->n_lane_rows;
  const size_t in_bytes = cnms_shape_bytes (shape, t->dtype);
  cnms_nms_args a;
  cnms_cand_src src;
  cnms_engine_decode dec;
  const void *d_tensor = t->data;
  int32_t *kept_dev = NULL;
  cnms_det *recs;
  int32_t *d_hdr;
  int blocks = 1;
  size_t smem = 0;

  a.cap = cap;
  a.max_keep = p->max_detections < cap ? p->max_detections : cap;
  a.iou = distance;
  memset (&a.rules, 0, sizeof a.rules);
  a.rules.iou_rest = distance;
  a.agnostic = 1;
  a.suppress = 1;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) a.max_keep * sizeof (cnms_det);
  CNMS_TRY (reserve_count_buffer (ctx, s,
          CNMS_HEADER_BYTES + (size_t) n * sizeof (cnms_det),
          "candidate buffer"));
  if (s->d_report.p == NULL) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_report, CNMS_REPORT_BYTES,
            "decode report"));
    s->hdr_dirty = true;
  }
  /* [candidates' rows as floats n x stride | the engine's kept_dev: kept
   * count, max_keep sort values] */
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_lane_rows, (size_t) n *
          (size_t) stride * sizeof (float) + (size_t) (1 + a.max_keep)
          * sizeof (int32_t), "lane rows"));
  CNMS_TRY (reserve_stages (ctx, s, CNMS_GEOM_LANE, n, cap, true, false, 1,
          &blocks, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));
  if (!t->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes, "tensor"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
            "tensor staging"));
  } else {
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_lane_rows,
            (size_t) a.max_keep * CNMS_KEPT_ROW_STRIDE (in_bytes / (size_t)
                n), "kept lane rows"));
  }
  d_hdr = (int32_t *) s->d_cand.p;

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!t->on_device) {
    for (size_t off = 0; off < in_bytes; off += CNMS_STAGE_CHUNK) {
      const size_t len = in_bytes - off < CNMS_STAGE_CHUNK ? in_bytes - off :
          CNMS_STAGE_CHUNK;
      memcpy ((char *) s->h_stage.p + off, (const char *) t->data + off, len);
      CNMS_CUDA_TRY (ctx, cudaMemcpyAsync ((char *) s->d_in.p + off,
              (const char *) s->h_stage.p + off, len, cudaMemcpyHostToDevice,
              s->stream), "uploading the tensor");
    }
    d_tensor = s->d_in.p;
  }
  CNMS_TRY (enqueue_zero_count (ctx, s));
  recs = (cnms_det *) ((char *) s->d_cand.p + CNMS_HEADER_BYTES);
  /* decoded by the engine's first phase (cnms_decode_lane) */
  memset (&dec, 0, sizeof dec);
  dec.tensor = d_tensor;
  dec.f16 = t->dtype == CNMS_DTYPE_FLOAT16;
  dec.n_anchors = n;
  dec.n_classes = shape->n_lane_rows;
  dec.abits = cnms_cuda_key_bits (n);
  dec.recs = recs;
  dec.keys = (uint64_t *) s->d_keys.p;
  dec.vals = (uint32_t *) s->d_vals.p;
  dec.report = (int32_t *) s->d_report.p;
  dec.lane_thr = p->score_threshold;
  dec.lane_rows = (float *) s->d_lane_rows.p;
  dec.lane_local = n <= CNMS_LANE_LOCAL_ANCHORS
      && smem >= CNMS_LANE_LOCAL_SMEM;
  memset (&src, 0, sizeof src);
  src.recs = recs;
  src.lanes_in = (const float *) s->d_lane_rows.p;
  src.lane_stride = stride;
  src.lane_n = shape->n_lane_rows - 1;
  if (t->on_device) {
    /* the engine copies the kept rows out itself (cnms_copy_kept_rows) */
    const size_t row_bytes = in_bytes / (size_t) n;

    src.kept_tensor = (const uint16_t *) d_tensor;
    src.kept_row_units = (int) (row_bytes / 2);
    src.kept_dst_units = (int) (CNMS_KEPT_ROW_STRIDE (row_bytes) / 2);
    src.kept_dst = (uint16_t *) s->h_lane_rows.dev;
    kept_dev = (int32_t *) ((float *) s->d_lane_rows.p + (size_t) n
        * (size_t) stride);
  }
  CNMS_TRY (enqueue_engine (ctx, s, CNMS_GEOM_LANE, &dec, NULL, &src, n, &a,
          d_hdr, (int32_t *) s->d_report.p, kept_dev, blocks, smem));
  return cnms_cuda_timing_end (ctx);
}

void
cnms_cuda_lane_points (const cnms_job *job, const void *kept_rows,
    cnms_det *out, int kept, float *pts, float *row)
{
  const cnms_tensor *t = job->t;
  const cnms_params *p = job->p;
  const int s_rows = job->shape.n_lane_rows, n_strips = s_rows - 1;
  const size_t stride = 5 + (size_t) s_rows;
  const bool f16 = t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t esize = f16 ? 2 : 4;
  const void *rows = t->on_device ? kept_rows : t->data;

  for (int i = 0; i < kept; i++) {
    /* a host tensor's row by its anchor; a device tensor's kept rows in
     * kept order, CNMS_KEPT_ROW_STRIDE apart */
    const size_t off = t->on_device ? (size_t) i * CNMS_KEPT_ROW_STRIDE
        (stride * esize) : (size_t) (uint32_t) out[i].anchor * stride * esize;
    const void *src = (const char *) rows + off;
    const float *r;
    float rect[4];

    if (f16) {
      const uint16_t *h = (const uint16_t *) src;
      for (size_t j = 0; j < stride; j++)
        row[j] = cnms_half_to_float (h[j]);
      r = row;
    } else {
      r = (const float *) src;
    }
    cnms_lane_points (r, n_strips, &job->map, (float) p->model_width,
        (float) p->model_height, pts + (size_t) i * s_rows * 2, rect);
    out[i].x1 = rect[0];
    out[i].y1 = rect[1];
    out[i].x2 = rect[2];
    out[i].y2 = rect[3];
  }
}

static cnms_status
cuda_detect_lanes (cnms_backend_ctx *ctx, const cnms_job *job,
    cnms_backend_out *res)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  const size_t s_rows = (size_t) job->shape.n_lane_rows;
  const int32_t *hdr;
  cnms_det *out;
  float *pts;
  size_t out_bytes = 0;
  int kept, max_keep;

  CNMS_TRY (drain (s, enqueue_detect_lanes (ctx, s, job->t, &job->shape,
              job->p, job->lane_distance, &out_bytes)));
  CNMS_TRY (finish (ctx, s));
  CNMS_TRY (cnms_cuda_timing_read (ctx));

  hdr = (const int32_t *) s->h_out.p;
  max_keep = (int) ((out_bytes - CNMS_HEADER_BYTES) / sizeof (cnms_det));
  kept = hdr[CNMS_OUT_KEPT];
  kept = kept < 0 ? 0 : (kept < max_keep ? kept : max_keep);
  read_report (ctx, s, hdr);

  /* the kept lanes' points on the host: their rows from the host tensor,
   * or from its copy; one row of floats behind them */
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_lane_pts,
          (((size_t) kept + 1) * s_rows * 2 + 5 + s_rows) * sizeof (float),
          "lane points"));
  pts = (float *) s->h_lane_pts.p;
  out = (cnms_det *) ((char *) s->h_out.p + CNMS_HEADER_BYTES);
  cnms_cuda_lane_points (job, s->h_lane_rows.p, out, kept, pts,
      pts + ((size_t) kept + 1) * s_rows * 2);
  res->dets = out;
  res->n_dets = kept;
  res->payload = pts;
  return CNMS_OK;
}

static void
cuda_test_option (cnms_backend_ctx *ctx, int option, int value)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  if (option == CNMS_TEST_FORCE_LARGE_PATH)
    s->force_large = value != 0;
  else if (option == CNMS_TEST_NO_HEADS_AHEAD)
    s->no_ahead = value != 0;
  else if (option == CNMS_TEST_NO_BATCH_HEADS)
    s->no_batch_heads = value != 0;
  else if (option == CNMS_TEST_CUDA_UNPROVEN)
    s->unproven = value != 0;
}

static cnms_status
cuda_set_stream (cnms_backend_ctx *ctx, void *stream)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  /* what was queued on the old stream must not overlap the new one's use
   * of the same buffers */
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "finishing the previous stream's work");
  s->stream = stream != NULL ? (cudaStream_t) stream : s->own_stream;
  return CNMS_OK;
}

extern "C" const cnms_backend_ops cnms_cuda_ops = {
  "cuda",
  cnms_cuda_create,
  cnms_cuda_destroy,
  cuda_detect,
  cnms_cuda_heads,
  cuda_nms,
  cuda_nms_lanes,
  cuda_test_option,
  cuda_set_stream,
  cnms_cuda_detect_batch,
  cnms_cuda_merge,
};
