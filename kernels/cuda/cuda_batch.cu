/* The CUDA backend's batch (cnms_backend_ops.detect_batch): the frames of
 * one layout of boxes or oriented boxes (their engine's jobs: for
 * yolov8-pose and yolov8-seg the box and score rows, and their heads
 * where the tensors lie on the device; the heads of host tensors come
 * after, frame by frame, from the front end) or of LaneATT lanes, in a
 * fixed number of launches whatever their number:
 *
 *   one upload ([every frame's engine arguments | decode arguments | caps
 *   arguments | keypoints or masks arguments | the host tensors], from
 *   pinned staging) -> where the engine does not decode, one decode
 *   launch (a row of blocks a frame) -> one engine launch (a row of blocks
 *   a frame, each row its own grid barrier: cuda_engine.cu) -> with
 *   per-class caps, one caps launch (a block a frame: cuda_caps.cu) -> for
 *   yolov8-pose on device tensors, one keypoints launch (a row of blocks a
 *   frame: cuda_heads.cu); for yolov8-seg on device tensors and
 *   prototypes, four masks launches (the frames' jobs, their places in the
 *   batch's bytes, the logits, the bytes: cuda_heads_batch.cu) -> one
 *   wait -> for lanes, each frame's kept lanes' points on the host
 *   (cnms_cuda_lane_points, as a single frame's)
 *
 * Each frame has its own part of every buffer (the count header and
 * records, the sort, the mask, the grid, the output; for lanes the
 * candidates' rows, the kept rows of a device tensor and the points), one
 * stride apart, so that its engine runs exactly as a launch of that frame
 * alone: the same kept records, report and bits. The engine launch is
 * cooperative; when more frames come than blocks fit on the device at
 * once, a frame gets one block, whose barriers wait for no other block,
 * and the frames go in as many cooperative launches as it takes (with
 * CNMS_TEST_CUDA_UNPROVEN: one ordinary launch of them all). The engine leaves each frame's count,
 * row counts, grid state and barrier zero; they are zeroed here only when
 * the buffers or their strides change, and after a failed call.
 *
 * LaneATT frames are decoded by the lane engine (cnms_engine_decode's lane
 * fields, lane_frame_args); the launch has the single path's shared memory
 * for lanes (cnms_cuda_lane_smem_least), the block-local front's where
 * every frame's proposals are few enough for it (then a frame whose
 * candidates do not fit the front decodes again through the global
 * phases, as a single frame does). The front and the global phases keep
 * the same lanes: the same candidates (cnms_lane_score, cnms_score_ok and
 * cnms_lane_rows on the same element conversion), the same order (the
 * unique compact keys), the same mask words (each pair's float sum over
 * its shared rows in order from 0.0f, tested as cnms_lane_close), the same
 * greedy resolve, the same records (score and anchor, the rest 0) and
 * report (the candidates and the nonfinite scores; no class rows). */
#include <string.h>

#include "cnms_cuda.cuh"

/* Alignment of each frame's part of a buffer. */
#define BATCH_ALIGN ((size_t) 256)

static size_t
align_up (size_t v)
{
  return (v + BATCH_ALIGN - 1) / BATCH_ALIGN * BATCH_ALIGN;
}

/* The strides of one call: each frame's part of each buffer. */
typedef struct {
  size_t cand, report, keys, vals, order, boxes, cls, rows, grid, mask, out;
  size_t kept, caps, kp;
  size_t lane_rows, lane_kept, lane_pts;        /* lanes */
} batch_strides;

/* Does the batch take these jobs? Boxes or oriented boxes that the engine
 * decodes or a batch decode does (of their heads the batch makes the
 * keypoints and masks of device tensors; the front end asks the heads
 * call for the others), and LaneATT lanes (the lane engine decodes them). */
static bool
batch_takes (const cnms_cuda_priv *s, const cnms_job *jobs, int n)
{
  const cnms_job *j0 = &jobs[0];

  if (j0->geom != CNMS_GEOM_BOX && j0->geom != CNMS_GEOM_OBB
      && j0->geom != CNMS_GEOM_LANE)
    return false;
  /* lanes: only with CNMS_TEST_CUDA_UNPROVEN (not yet run on a GPU) */
  if (j0->geom == CNMS_GEOM_LANE && !s->unproven)
    return false;
  if (j0->geom != CNMS_GEOM_LANE && !cnms_cuda_engine_decodes (&j0->shape)
      && !cnms_cuda_decode_batch_takes (&j0->shape))
    return false;
  for (int i = 0; i < n; i++)
    if (jobs[i].shape.n_anchors <= 0)
      return false;
  return true;
}

/* Does the batch make the keypoints of job (a device tensor's)? */
static bool
batch_kp (const cnms_cuda_priv *s, const cnms_job *job)
{
  return job->heads != NULL && job->heads->kind == CNMS_HEAD_KEYPOINTS
      && job->heads->t->on_device && !s->no_batch_heads;
}

/* Reserves every buffer for n frames of strides st and in_bytes of
 * upload; marks the states dirty when a buffer moved. */
static cnms_status
reserve_batch (cnms_backend_ctx *ctx, cnms_cuda_batch *b, int n,
    const batch_strides *st, bool suppress, bool caps, bool kp,
    size_t in_bytes, size_t out)
{
  const size_t nn = (size_t) n;
  const void *cand = b->d_cand.p, *rep = b->d_report.p, *grid = b->d_grid.p,
      *bars = b->d_bars.p;

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_cand, nn * st->cand,
          "batch candidate buffers"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_report, nn * st->report,
          "batch decode reports"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_keys, nn * st->keys,
          "batch sort keys"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_vals, nn * st->vals,
          "batch sort values"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_order, nn * st->order,
          "batch sorted order"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_bars,
          nn * 2 * sizeof (uint32_t), "batch barriers"));
  if (suppress) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_boxes, nn * st->boxes,
            "batch sorted boxes"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_cls, nn * st->cls,
            "batch sorted classes"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_rows, nn * st->rows,
            "batch NMS row lists"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_grid, nn * st->grid,
            "batch NMS grids"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_mask, nn * st->mask,
            "batch suppression masks"));
  }
  if (st->kept != 0)
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_kept, nn * st->kept,
            "batch kept records"));
  if (caps)
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_caps, nn * st->caps,
            "batch class caps"));
  if (kp)
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &b->h_kp, nn * st->kp,
            "batch keypoints"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_in, in_bytes,
          "batch upload"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &b->h_stage, in_bytes,
          "batch upload staging"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &b->h_out, nn * out,
          "batch results"));
  if (b->d_cand.p != cand || b->d_report.p != rep || b->d_grid.p != grid
      || b->d_bars.p != bars)
    b->dirty = true;
  return CNMS_OK;
}

/* Reserves the lanes' buffers for n frames of strides st: the candidates'
 * rows (and kept_dev), a device tensor's kept rows, the points. */
static cnms_status
reserve_lanes (cnms_backend_ctx *ctx, cnms_cuda_batch *b, int n,
    const batch_strides *st)
{
  const size_t nn = (size_t) n;

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &b->d_lane_rows,
          nn * st->lane_rows, "batch lane rows"));
  if (st->lane_kept > 0)
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &b->h_lane_rows,
            nn * st->lane_kept, "batch kept lane rows"));
  return cnms_cuda_reserve_pinned (ctx, &b->h_lane_pts, nn * st->lane_pts,
      "batch lane points");
}

/* Zeroes every frame's count header, row counts, grid state and barrier
 * (n frames of strides st). */
static cnms_status
zero_states (cnms_backend_ctx *ctx, cudaStream_t stream, cnms_cuda_batch *b,
    int n, const batch_strides *st, bool suppress)
{
  CNMS_CUDA_TRY (ctx, cudaMemset2DAsync (b->d_cand.p, st->cand, 0,
          CNMS_HEADER_BYTES, (size_t) n, stream),
      "zeroing the batch's candidate counts");
  CNMS_CUDA_TRY (ctx, cudaMemsetAsync (b->d_report.p, 0,
          (size_t) n * st->report, stream),
      "zeroing the batch's decode reports");
  CNMS_CUDA_TRY (ctx, cudaMemsetAsync (b->d_bars.p, 0,
          (size_t) n * 2 * sizeof (uint32_t), stream),
      "zeroing the batch's barriers");
  if (suppress)
    CNMS_CUDA_TRY (ctx, cudaMemset2DAsync (b->d_grid.p, st->grid, 0,
            CNMS_GRID_STATE_BYTES, (size_t) n, stream),
        "zeroing the batch's NMS grids");
  return CNMS_OK;
}

/* Sizes the engine launch: its shared memory for cap candidates (least
 * at least) and the blocks of a frame's row, want at most, as many as fit
 * for n frames at once (at least one: a row of one block waits for no
 * other, cnms_cuda_engine_batch). */
static cnms_status
size_launch (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int geom, int cap,
    long long want, int n, size_t least, size_t *smem, int *blocks)
{
  cnms_cuda_batch *b = &s->batch;
  const int last = b->last_count;
  const int grow = last + last / 4;
  const int expect = last < 0 ? cap :
      (grow < 256 ? 256 : cnms_ceil_div (grow, 256) * 256);
  long long total;

  if (cnms_cuda_engine_smem_min (cap) > s->smem_budget)
    return CNMS_ERR_UNSUPPORTED;
  *smem = cnms_cuda_engine_smem_bytes (cap, false, s->smem_budget, expect);
  if (*smem < least)
    *smem = least;
  if (*smem != b->occ_smem || geom != b->occ_geom) {
    int per_sm = 0;

    CNMS_CUDA_TRY (ctx, cnms_cuda_engine_batch_max_blocks (geom, *smem,
            &per_sm), "sizing the batch engine");
    if (per_sm < 1)
      return cnms_fail (ctx, CNMS_ERR_CUDA,
          "CUDA: the batch engine does not fit on a multiprocessor with %zu "
          "bytes of shared memory", *smem);
    b->occ_smem = *smem;
    b->occ_geom = geom;
    b->occ_per_sm = per_sm;
  }
  total = (long long) b->occ_per_sm * s->sms;
  *blocks = total >= n ? (int) (want < total / n ? want : total / n) : 1;
  if (*blocks < 1)
    *blocks = 1;
  return CNMS_OK;
}

/* The kept records of job at most. */
static int
max_out_of (const cnms_job *job)
{
  const int n = job->shape.n_anchors;
  const int cap = n < job->p->max_candidates ? n : job->p->max_candidates;

  return job->p->max_detections < cap ? job->p->max_detections : cap;
}

/* Frame f's engine arguments (its parts of the buffers, base: device
 * addresses; its kept_dev where st has one), its decode's when the engine
 * decodes it (fused), with caps (then the engine keeps every box NMS
 * keeps) the caps', and with keypoints the keypoints' (pf). */
static void
frame_args (const cnms_cuda_priv *s, const cnms_job *job, int f,
    const batch_strides *st, const void *d_tensor,
    const cnms_class_rules *rules, bool fused, bool caps, size_t smem,
    cnms_engine_args *g, cnms_decode_frame *df, cnms_caps_frame *cf,
    cnms_pose_frame *pf)
{
  const cnms_cuda_batch *b = &s->batch;
  const size_t ff = (size_t) f;
  const int n = job->shape.n_anchors;
  const int cap = n < job->p->max_candidates ? n : job->p->max_candidates;
  const int max_out = job->p->max_detections < cap ?
      job->p->max_detections : cap;
  char *cand = (char *) b->d_cand.p + ff * st->cand;
  cnms_det *recs = (cnms_det *) (cand + CNMS_HEADER_BYTES);
  uint64_t *keys = (uint64_t *) ((char *) b->d_keys.p + ff * st->keys);
  uint32_t *vals = (uint32_t *) ((char *) b->d_vals.p + ff * st->vals);
  int32_t *report = (int32_t *) ((char *) b->d_report.p + ff * st->report);
  const bool suppress = job->suppress;

  memset (g, 0, sizeof *g);
  g->a.cap = cap;
  g->a.max_keep = caps ? cap : max_out;
  g->a.iou = job->p->iou;
  g->a.rules = *rules;
  g->a.agnostic = job->p->class_agnostic;
  g->a.suppress = suppress;
  if (fused) {
    g->dec.tensor = d_tensor;
    g->dec.f16 = job->t->dtype == CNMS_DTYPE_FLOAT16;
    g->dec.n_anchors = n;
    g->dec.n_classes = job->shape.n_classes;
    g->dec.map = job->map;
    g->dec.rules = *rules;
    g->dec.abits = cnms_cuda_key_bits (n);
    g->dec.recs = recs;
    g->dec.keys = keys;
    g->dec.vals = vals;
    g->dec.report = report;
  }
  memset (df, 0, sizeof *df);
  df->tensor = d_tensor;
  df->n_anchors = n;
  df->abits = cnms_cuda_key_bits (n);
  df->map = job->map;
  df->hdr = (int32_t *) cand;
  df->recs = recs;
  df->keys = keys;
  df->vals = vals;
  df->report = report;

  g->src.recs = recs;
  g->keys = keys;
  g->vals = vals;
  g->hdr = (int32_t *) cand;
  g->capacity = n;
  g->cache_max = s->force_large ? -1 : CNMS_CACHE_MAX;
  g->row_list_max = s->force_large ? 0 : CNMS_ROW_LIST;
  g->report = report;
  g->kept_dev = NULL;
  g->order = (uint32_t *) ((char *) b->d_order.p + ff * st->order);
  if (suppress) {
    g->boxes = (float4 *) ((char *) b->d_boxes.p + ff * st->boxes);
    g->obbs = job->geom == CNMS_GEOM_OBB ? (cnms_obb *) (g->boxes + cap) :
        NULL;
    g->cls = (int32_t *) ((char *) b->d_cls.p + ff * st->cls);
    g->mask = (uint64_t *) ((char *) b->d_mask.p + ff * st->mask);
    g->list_b = (uint64_t *) ((char *) b->d_rows.p + ff * st->rows);
    g->row_next = g->list_b + (size_t) cap * CNMS_ROW_LIST;
    g->list_w = (int32_t *) (g->row_next + cap);
    g->row_cnt = g->list_w + (size_t) cap * CNMS_ROW_LIST;
    g->grid_state = (uint32_t *) ((char *) b->d_grid.p + ff * st->grid);
    g->grid_cells = (int32_t *) (g->grid_state + CNMS_GRID_STATE);
    g->grid_fill = g->grid_cells + CNMS_GRID_CELLS_MAX + 1;
    g->grid_by = (uint64_t *) (g->grid_fill + CNMS_GRID_CELLS_MAX + 1);
    g->grid_range = (int2 *) (g->grid_by + cap);
    g->grid_entries = (int32_t *) (g->grid_range + cap);
    g->grid_big = g->grid_entries + (size_t) cap * CNMS_GRID_SPAN;
  }
  g->out = (char *) b->h_out.dev + ff * st->out;
  g->smem_words = (long long) (smem / sizeof (uint64_t));
  if (st->kept != 0)
    g->kept_dev = (int32_t *) ((char *) b->d_kept.p + ff * st->kept);
  if (pf != NULL) {
    const cnms_heads_args *h = job->heads;

    memset (pf, 0, sizeof *pf);
    pf->tensor = h->t->data;
    pf->recs = recs;
    pf->sel = g->kept_dev;
    pf->out = (float *) ((char *) b->h_kp.dev + ff * st->kp);
    pf->n_anchors = h->shape.n_anchors;
    pf->map = h->map;
    pf->n = max_out;
  }
  if (caps) {
    memset (cf, 0, sizeof *cf);
    cf->recs = recs;
    cf->kept = g->kept_dev;
    cf->out = (char *) g->out;
    cf->table = (int32_t *) ((char *) b->d_caps.p + ff * st->caps);
    cf->max_out = max_out;
  }
}

/* Frame f's lane engine arguments, over frame_args's parts of the
 * buffers (g): its decode (the engine decodes LaneATT), its candidates'
 * rows, the distance, and from a device tensor its kept rows out, as
 * enqueue_detect_lanes sets them for one frame; the block-local front
 * where its proposals are few enough and the launch (smem) has its room. */
static void
lane_frame_args (const cnms_cuda_priv *s, const cnms_job *job, int f,
    const batch_strides *st, const void *d_tensor, size_t smem,
    cnms_engine_args *g)
{
  const cnms_cuda_batch *b = &s->batch;
  const int n = job->shape.n_anchors;
  const int stride = 5 + job->shape.n_lane_rows;
  const size_t row_bytes = (size_t) stride
      * cnms_dtype_size (job->t->dtype);
  float *rows = (float *) ((char *) b->d_lane_rows.p + (size_t) f
      * st->lane_rows);

  g->a.iou = job->lane_distance;
  memset (&g->a.rules, 0, sizeof g->a.rules);
  g->a.rules.iou_rest = job->lane_distance;
  g->a.agnostic = 1;
  g->a.suppress = 1;
  memset (&g->dec, 0, sizeof g->dec);
  g->dec.tensor = d_tensor;
  g->dec.f16 = job->t->dtype == CNMS_DTYPE_FLOAT16;
  g->dec.n_anchors = n;
  g->dec.n_classes = job->shape.n_lane_rows;
  g->dec.abits = cnms_cuda_key_bits (n);
  /* frame_args's parts of the candidate buffers */
  g->dec.recs = (cnms_det *) g->src.recs;
  g->dec.keys = (uint64_t *) g->keys;
  g->dec.vals = (uint32_t *) g->vals;
  g->dec.report = g->report;
  g->dec.lane_thr = job->p->score_threshold;
  g->dec.lane_rows = rows;
  g->dec.lane_local = n <= CNMS_LANE_LOCAL_ANCHORS
      && smem >= CNMS_LANE_LOCAL_SMEM;
  g->src.lanes_in = rows;
  g->src.lane_stride = stride;
  g->src.lane_n = job->shape.n_lane_rows - 1;
  /* [rectangles cap | int4 cap] */
  g->lanes = (int4 *) (g->boxes + g->a.cap);
  if (job->t->on_device) {
    /* the engine copies the kept rows out itself; its kept_dev behind the
     * candidates' rows */
    g->src.kept_tensor = (const uint16_t *) d_tensor;
    g->src.kept_row_units = (int) (row_bytes / 2);
    g->src.kept_dst_units = (int) (CNMS_KEPT_ROW_STRIDE (row_bytes) / 2);
    g->src.kept_dst = (uint16_t *) ((char *) b->h_lane_rows.dev + (size_t) f
        * st->lane_kept);
    g->kept_dev = (int32_t *) (rows + (size_t) n * (size_t) stride);
  }
}

/* A failed call: wait for what it queued; the states are suspect. */
static cnms_status
drain (cnms_cuda_priv *s, cnms_status st)
{
  if (st != CNMS_OK && st != CNMS_ERR_UNSUPPORTED) {
    (void) cudaStreamSynchronize (s->stream);
    (void) cudaGetLastError ();
    s->batch.dirty = true;
    s->rules_bytes = 0;
  }
  return st;
}

/* Enqueues the batch; *st_out: its strides, for the results. */
static cnms_status
enqueue_batch (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_job *jobs,
    int n, batch_strides *stp)
{
  cnms_cuda_batch *b = &s->batch;
  const cnms_job *j0 = &jobs[0];
  const bool fused = cnms_cuda_engine_decodes (&j0->shape);
  const bool suppress = j0->suppress;
  const bool caps = j0->rules.caps != 0;
  /* the keypoints of device tensors, behind the engine (and the caps) */
  const bool kp = batch_kp (s, j0);
  const int n_kp = kp ? j0->heads->shape.n_keypoints : 0;
  const bool host = !j0->t->on_device;
  const int geom = j0->geom;
  const bool lanes = geom == CNMS_GEOM_LANE;
  /* a box, an oriented box's hull and its cnms_obb, or a lane's
   * rectangle and its int4 */
  const size_t box_bytes = sizeof (float4)
      + (geom == CNMS_GEOM_OBB ? sizeof (cnms_obb) : 0)
      + (lanes ? sizeof (int4) : 0);
  size_t off_dec, off_caps, off_kp, off_seg, off_t, in_bytes, smem = 0,
      least = 0;
  int n_max = 0, cap_max = 0, keep_max = 0, blocks = 1;
  bool seg;
  long long want = 8;
  batch_strides st;
  cnms_class_rules rules;
  cnms_engine_args *ga;
  cnms_decode_frame *da;
  cnms_caps_frame *ca;
  cnms_pose_frame *pa;
  char *stage;

  for (int i = 0; i < n; i++) {
    const int an = jobs[i].shape.n_anchors;
    const int cap = an < j0->p->max_candidates ? an : j0->p->max_candidates;
    const int keep = j0->p->max_detections < cap ? j0->p->max_detections :
        cap;
    const long long w = cap > 8 * 256 ?
        (cnms_ceil_div (cap, 256) < 64 ? 64 : cnms_ceil_div (cap, 256)) : 8;
    const long long wd = fused ? cnms_ceil_div (cnms_ceil_div (an, 32),
        CNMS_FUSED_V8_GROUPS) : 1;

    n_max = an > n_max ? an : n_max;
    cap_max = cap > cap_max ? cap : cap_max;
    keep_max = keep > keep_max ? keep : keep_max;
    want = w > want ? w : want;
    want = wd > want ? wd : want;
  }
  /* the masks of device tensors and prototypes, behind them */
  seg = cnms_cuda_seg_batch_takes (s, j0, n, keep_max);
  if (lanes) {
    /* as reserve_stages for one frame: a block an eighth of a tile of the
     * last batch's count (or the cap), a sixteenth for the block-local
     * front; its shared memory */
    const int last = b->last_count;
    const long long lt = cnms_ceil_div (last > 0 && last < cap_max ? last :
        cap_max, CNMS_TILE);

    want = 8 * lt * (lt + 1) > want ? 8 * lt * (lt + 1) : want;
    least = cnms_cuda_lane_smem_least (n_max <= CNMS_LANE_LOCAL_ANCHORS,
        s->smem_budget);
  }
  memset (&st, 0, sizeof st);
  st.cand = align_up (CNMS_HEADER_BYTES + (size_t) n_max * sizeof (cnms_det));
  st.report = align_up (CNMS_REPORT_BYTES);
  st.keys = align_up ((size_t) n_max * sizeof (uint64_t));
  st.vals = align_up ((size_t) n_max * sizeof (uint32_t));
  st.order = st.vals;
  if (suppress) {
    st.boxes = align_up ((size_t) cap_max * box_bytes);
    st.cls = align_up ((size_t) cap_max * sizeof (int32_t));
    st.rows = align_up ((size_t) cap_max * (sizeof (int32_t)
            + sizeof (uint64_t) + CNMS_ROW_LIST * (sizeof (int32_t)
                + sizeof (uint64_t))));
    st.grid = align_up (cnms_grid_bytes (cap_max));
    st.mask = align_up ((size_t) cap_max * (size_t) cnms_ceil_div (cap_max,
            CNMS_TILE) * sizeof (uint64_t));
  }
  /* with caps the engine writes every kept record, the caps keep_max */
  st.out = align_up (CNMS_HEADER_BYTES + (size_t) (caps ? cap_max : keep_max)
      * sizeof (cnms_det));
  if (caps || kp || seg)
    st.kept = align_up (((size_t) cap_max + 1) * sizeof (int32_t));
  if (caps)
    st.caps = align_up (cnms_caps_table_bytes (cap_max));
  if (kp)
    st.kp = align_up (((size_t) keep_max * (size_t) n_kp + 1) * 3
        * sizeof (float));
  if (lanes) {
    const size_t s_rows = (size_t) j0->shape.n_lane_rows;
    const size_t row_bytes = (5 + s_rows) * cnms_dtype_size (j0->t->dtype);

    /* [the candidates' rows as floats | kept_dev: count, keep_max values];
     * a device tensor's kept rows; [the points of keep_max + 1 lanes | a
     * row of floats] */
    st.lane_rows = align_up ((size_t) n_max * (5 + s_rows) * sizeof (float)
        + ((size_t) keep_max + 1) * sizeof (int32_t));
    st.lane_kept = host ? 0 : align_up ((size_t) keep_max
        * CNMS_KEPT_ROW_STRIDE (row_bytes));
    st.lane_pts = align_up ((((size_t) keep_max + 1) * s_rows * 2 + 5
            + s_rows) * sizeof (float));
  }
  *stp = st;

  /* the upload: [engine arguments | decode arguments | caps arguments |
   * keypoints or masks arguments | host tensors] */
  off_dec = align_up ((size_t) n * sizeof (cnms_engine_args));
  off_caps = off_dec + align_up ((size_t) n * sizeof (cnms_decode_frame));
  off_kp = off_caps + (caps ? align_up ((size_t) n * sizeof (cnms_caps_frame))
      : 0);
  off_seg = off_kp + (kp ? align_up ((size_t) n * sizeof (cnms_pose_frame))
      : 0);
  off_t = off_seg + (seg ? align_up ((size_t) n
          * cnms_cuda_seg_batch_frame_bytes ()) : 0);
  in_bytes = off_t;
  if (host)
    for (int i = 0; i < n; i++)
      in_bytes += align_up (cnms_shape_bytes (&jobs[i].shape,
              jobs[i].t->dtype));

  {
    cnms_status r = size_launch (ctx, s, geom, cap_max, want, n, least,
        &smem, &blocks);
    if (r != CNMS_OK)
      return r;
  }
  CNMS_TRY (reserve_batch (ctx, b, n, &st, suppress, caps, kp, in_bytes,
          st.out));
  if (seg)
    CNMS_TRY (cnms_cuda_seg_batch_reserve (ctx, n, keep_max));
  if (lanes)
    CNMS_TRY (reserve_lanes (ctx, b, n, &st));
  CNMS_TRY (cnms_cuda_upload_rules (ctx, s, &j0->rules, &rules));

  stage = (char *) b->h_stage.p;
  ga = (cnms_engine_args *) stage;
  da = (cnms_decode_frame *) (stage + off_dec);
  ca = (cnms_caps_frame *) (stage + off_caps);
  pa = (cnms_pose_frame *) (stage + off_kp);
  {
    size_t at = off_t;

    for (int i = 0; i < n; i++) {
      const void *d_tensor = jobs[i].t->data;

      if (host) {
        const size_t bytes = cnms_shape_bytes (&jobs[i].shape,
            jobs[i].t->dtype);

        memcpy (stage + at, jobs[i].t->data, bytes);
        d_tensor = (char *) b->d_in.p + at;
        at += align_up (bytes);
      }
      frame_args (s, &jobs[i], i, &st, d_tensor, &rules, fused, caps, smem,
          &ga[i], &da[i], caps ? &ca[i] : NULL, kp ? &pa[i] : NULL);
      if (seg)
        cnms_cuda_seg_batch_frame (&jobs[i], ga[i].src.recs, ga[i].kept_dev,
            max_out_of (&jobs[i]), stage + off_seg + (size_t) i
            * cnms_cuda_seg_batch_frame_bytes ());
      if (lanes)
        lane_frame_args (s, &jobs[i], i, &st, d_tensor, smem, &ga[i]);
    }
  }

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (b->d_in.p, b->h_stage.p, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the batch");
  /* the states the engine left zero are where these strides put them */
  if (st.cand != b->z_cand || st.report != b->z_report
      || (suppress && (st.grid != b->z_grid || !b->z_grids))
      || n > b->z_frames)
    b->dirty = true;
  if (b->dirty) {
    CNMS_TRY (zero_states (ctx, s->stream, b, n, &st, suppress));
    b->dirty = false;
    b->z_cand = st.cand;
    b->z_report = st.report;
    b->z_grid = st.grid;
    b->z_grids = suppress;
    b->z_frames = n;
  }
  if (!fused && !lanes)
    CNMS_CUDA_TRY (ctx, cnms_cuda_decode_batch ((const cnms_decode_frame *)
            ((char *) b->d_in.p + off_dec), n, n_max, j0->t->dtype,
            &j0->shape, &rules, j0->p->score_threshold, s->stream),
        "batch decode kernel");
  if (s->unproven) {
    /* one launch, an ordinary one of a block a frame when the frames do
     * not fit at once (CNMS_TEST_CUDA_UNPROVEN) */
    CNMS_CUDA_TRY (ctx, cnms_cuda_engine_batch ((const cnms_engine_args *)
            b->d_in.p, (uint32_t *) b->d_bars.p, geom, n, blocks, smem,
            true, s->stream), "batch NMS engine");
  } else {
    /* cooperative launches of as many frames as fit at once */
    const long long fit = (long long) b->occ_per_sm * s->sms;
    const int per_launch = fit >= n ? n : (int) fit;

    for (int f0 = 0; f0 < n; f0 += per_launch) {
      const int frames = n - f0 < per_launch ? n - f0 : per_launch;

      CNMS_CUDA_TRY (ctx, cnms_cuda_engine_batch ((const cnms_engine_args *)
              b->d_in.p + f0, (uint32_t *) b->d_bars.p + 2 * (size_t) f0,
              geom, frames, blocks, smem, false, s->stream),
          "batch NMS engine");
    }
  }
  if (caps)
    CNMS_CUDA_TRY (ctx, cnms_cuda_caps_batch ((const cnms_caps_frame *)
            ((char *) b->d_in.p + off_caps), n, &rules, cap_max, s->stream),
        "batch class caps kernel");
  if (kp)
    CNMS_CUDA_TRY (ctx, cnms_cuda_pose_batch ((const cnms_pose_frame *)
            ((char *) b->d_in.p + off_kp), n, keep_max, n_kp,
            j0->heads->shape.keypoint_dims,
            j0->heads->t->dtype == CNMS_DTYPE_FLOAT16, s->stream),
        "batch keypoint kernel");
  if (seg)
    CNMS_TRY (cnms_cuda_seg_batch_enqueue (ctx, j0, (char *) b->d_in.p
            + off_seg, n));
  return cnms_cuda_timing_end (ctx);
}

cnms_status
cnms_cuda_detect_batch (cnms_backend_ctx *ctx, const cnms_job *jobs, int n,
    cnms_backend_out *outs, cnms_report *reps)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  batch_strides st;
  cudaError_t e;
  int most = 0;

  if (n < 1 || !batch_takes (s, jobs, n))
    return CNMS_ERR_UNSUPPORTED;
  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  /* no heads were made ahead for these frames */
  s->ahead_kind = 0;
  s->batch.seg.made = false;
  CNMS_TRY (drain (s, enqueue_batch (ctx, s, jobs, n, &st)));
  e = cudaStreamSynchronize (s->stream);
  if (e != cudaSuccess) {
    s->batch.dirty = true;
    return cnms_cuda_error (ctx, e, "running the batch's kernels");
  }
  CNMS_TRY (cnms_cuda_timing_read (ctx));

  for (int i = 0; i < n; i++) {
    const cnms_job *job = &jobs[i];
    const int an = job->shape.n_anchors;
    const int cap = an < job->p->max_candidates ? an :
        job->p->max_candidates;
    const int max_out = job->p->max_detections < cap ?
        job->p->max_detections : cap;
    const int32_t *hdr = (const int32_t *) ((const char *) s->batch.h_out.p
        + (size_t) i * st.out);
    const int kept = hdr[CNMS_OUT_KEPT];
    cnms_report *r = &reps[i];

    memset (r, 0, sizeof *r);
    r->candidates = hdr[CNMS_OUT_CANDIDATES];
    r->nonfinite_scores = hdr[CNMS_OUT_NONFINITE];
    r->invalid_classes = hdr[CNMS_OUT_INVALID];
    r->fractional_classes = hdr[CNMS_OUT_FRACTIONAL];
    memcpy (&r->first_invalid_class, &hdr[CNMS_OUT_FIRST_INVALID],
        sizeof (float));
    memcpy (&r->first_fractional_class, &hdr[CNMS_OUT_FIRST_FRACTIONAL],
        sizeof (float));
    most = r->candidates > most ? r->candidates : most;
    outs[i].dets = (const cnms_det *) ((const char *) hdr
        + CNMS_HEADER_BYTES);
    outs[i].n_dets = kept < 0 ? 0 : (kept < max_out ? kept : max_out);
    outs[i].payload = NULL;
    outs[i].payload_bytes = 0;
    outs[i].payload_table = NULL;
    if (batch_kp (s, job)) {
      outs[i].payload = (const char *) s->batch.h_kp.p + (size_t) i * st.kp;
      outs[i].payload_bytes = (size_t) outs[i].n_dets
          * (size_t) job->heads->shape.n_keypoints * 3 * sizeof (float);
    }
    if (job->geom == CNMS_GEOM_LANE) {
      /* the kept lanes' points, and their records' boxes */
      float *pts = (float *) ((char *) s->batch.h_lane_pts.p + (size_t) i
          * st.lane_pts);

      cnms_cuda_lane_points (job, (const char *) s->batch.h_lane_rows.p
          + (size_t) i * st.lane_kept, (cnms_det *) outs[i].dets,
          outs[i].n_dets, pts, pts + ((size_t) outs[i].n_dets + 1)
          * (size_t) job->shape.n_lane_rows * 2);
      outs[i].payload = pts;
    }
  }
  s->batch.last_count = most;
  /* the masks made in the batch's launches */
  return cnms_cuda_seg_batch_done (ctx, outs, n);
}
