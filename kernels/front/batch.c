/* cnms_detect_batch: the frames of a batch, their agreement (one layout,
 * the same dims but N), each frame's own checks, then the backend's batch
 * (one job a frame) or, where it has none for the layout, cnms_detect
 * frame by frame. A frame's result points into the backend's batch output
 * for what the backend's batch made (its records; the heads' values and
 * their table where they fit the front end's table), valid until the
 * next call; the rest (a single detect's records, the heads the heads call
 * made, a table the backend gave none of) is copied into the context's
 * batch tables, which only grow. */
#include <stdlib.h>
#include <string.h>

#include "front.h"

/* Grows *buf (of *cap elements of size bytes) to hold at least n; each
 * growth counts as an allocation of ctx (cnms_ctx_alloc_count). */
static int
grow (cnms_ctx *ctx, void **buf, size_t *cap, size_t n, size_t size)
{
  void *p;
  size_t c = *cap ? *cap : 16;

  if (n <= *cap)
    return 1;
  while (c < n)
    c *= 2;
  p = realloc (*buf, c * size);
  if (p == NULL)
    return 0;
  ctx->b.alloc_count++;
  *buf = p;
  *cap = c;
  return 1;
}

/* Frame i of a batch tensor [B, ...]: its slice, with dims[0] = 1. */
static void
slice (const cnms_tensor *batch, int b, int i, cnms_tensor *out)
{
  const size_t each = batch->size / (size_t) b;

  *out = *batch;
  out->dims[0] = 1;
  out->size = each;
  out->data = batch->data != NULL ?
      (const char *) batch->data + (size_t) i * each : NULL;
}

/* A batch tensor: at least 3 dims (4 for prototypes), B = dims[0] frames,
 * its size exactly the dims' bytes. */
static cnms_status
check_batch_tensor (cnms_ctx *ctx, const cnms_tensor *t, const char *what,
    int least_dims, int n_frames)
{
  size_t bytes = cnms_dtype_size (t->dtype);
  int i;

  if (t->n_dims < least_dims || t->n_dims > CNMS_MAX_DIMS)
    return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
        "the batch's %s has %d dims, expected %d ([B, ...])", what,
        t->n_dims, least_dims);
  if (t->dims[0] != n_frames)
    return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
        "the batch's %s holds %lld frames, n_frames is %d", what,
        (long long) t->dims[0], n_frames);
  for (i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || (t->dims[i] > 0
            && bytes > (size_t) -1 / (size_t) t->dims[i]))
      return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
          "the batch's %s has a bad dim %d (%lld)", what, i,
          (long long) t->dims[i]);
    bytes *= (size_t) t->dims[i];
  }
  if (t->size != bytes)
    return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
        "the batch's %s holds %zu bytes, its dims make %zu", what, t->size,
        bytes);
  if (t->data == NULL && bytes > 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "the batch's %s has no data", what);
  return CNMS_OK;
}

/* Does frame t agree with the first frame ref (its layout row r): dtype,
 * place, and the trailing dims but the anchors'? */
static int
agrees (const cnms_tensor *ref, const cnms_tensor *t,
    const cnms_layout_row *r, const char **what)
{
  int64_t ra, ta;

  if (t->dtype != ref->dtype) {
    *what = "dtype";
    return 0;
  }
  if (!t->on_device != !ref->on_device) {
    *what = "memory (host or device)";
    return 0;
  }
  if (t->n_dims < 2 || ref->n_dims < 2) {
    *what = "dims";
    return t->n_dims == ref->n_dims;
  }
  /* the values of a row: the dim that is not the anchors' */
  ra = r->anchors_last ? ref->dims[ref->n_dims - 2] :
      ref->dims[ref->n_dims - 1];
  ta = r->anchors_last ? t->dims[t->n_dims - 2] : t->dims[t->n_dims - 1];
  *what = "values a row";
  return ra == ta;
}

/* Do two prototypes tensors agree (dtype, place, M Hp Wp)? */
static int
protos_agree (const cnms_tensor *a, const cnms_tensor *b)
{
  int i;

  if (a->dtype != b->dtype || !a->on_device != !b->on_device
      || a->n_dims < 3 || b->n_dims < 3)
    return a->n_dims == b->n_dims && a->dtype == b->dtype;
  for (i = 1; i <= 3; i++)
    if (a->dims[a->n_dims - i] != b->dims[b->n_dims - i])
      return 0;
  return 1;
}

/* The batch's results for n frames: room, and every frame reset. */
static cnms_status
reset_results (cnms_ctx *ctx, int n)
{
  int i;

  if (!grow (ctx, (void **) &ctx->batch, &ctx->batch_cap, (size_t) n,
          sizeof *ctx->batch)
      || !grow (ctx, (void **) &ctx->batch_at, &ctx->batch_at_cap, (size_t) n,
          sizeof *ctx->batch_at)
      || !grow (ctx, (void **) &ctx->batch_err, &ctx->batch_err_cap, (size_t) n,
          sizeof *ctx->batch_err))
    return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
        "cannot allocate the results of %d frames", n);
  if (n > 0) {
    memset (ctx->batch, 0, (size_t) n * sizeof *ctx->batch);
    memset (ctx->batch_at, 0, (size_t) n * sizeof *ctx->batch_at);
  }
  for (i = 0; i < n; i++)
    ctx->batch_err[i][0] = '\0';
  ctx->batch_n = n;
  return CNMS_OK;
}

/* Files the context's last detect (its records, report and payload) as
 * frame i's result. direct: what the backend's batch gave for the frame
 * (valid until the next call), whose records, and heads' values and table
 * where the front end took them (direct->payload, payload_table), stay in
 * place; NULL: a single detect's. The rest is copied into the batch's
 * tables. */
static cnms_status
keep_frame (cnms_ctx *ctx, int i, const cnms_det *dets, int n,
    const cnms_backend_out *direct, size_t *n_dets, size_t *n_table,
    size_t *n_bytes)
{
  cnms_frame_result *r = &ctx->batch[i];
  cnms_batch_at *at = &ctx->batch_at[i];
  cnms_payloads pl;
  size_t dets_n, table_n, bytes_n;

  cnms_ctx_payload (ctx, &pl);
  memset (at, 0, sizeof *at);
  if (direct != NULL) {
    at->direct = dets;
    if (direct->payload != NULL) {
      at->direct_data = pl.data;
      at->direct_table = direct->payload_table;
      ctx->batch_heads_made++;
    }
  }
  dets_n = at->direct != NULL ? 0 : (size_t) n;
  table_n = at->direct_table != NULL ? 0 : (size_t) pl.n;
  bytes_n = at->direct_data != NULL ? 0 : pl.size;
  if (!grow (ctx, (void **) &ctx->batch_dets, &ctx->batch_dets_cap,
          *n_dets + dets_n, sizeof *ctx->batch_dets)
      || !grow (ctx, (void **) &ctx->batch_table, &ctx->batch_table_cap,
          *n_table + table_n, sizeof *ctx->batch_table)
      || !grow (ctx, (void **) &ctx->batch_data, &ctx->batch_data_cap,
          *n_bytes + bytes_n, 1)) {
    memset (at, 0, sizeof *at);
    return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
        "cannot allocate the results of frame %d (%d records, %zu payload "
        "bytes)", i, n, pl.size);
  }
  if (dets_n > 0)
    memcpy (ctx->batch_dets + *n_dets, dets, dets_n * sizeof *dets);
  if (table_n > 0)
    memcpy (ctx->batch_table + *n_table, pl.records,
        table_n * sizeof *pl.records);
  if (bytes_n > 0)
    memcpy (ctx->batch_data + *n_bytes, pl.data, bytes_n);
  r->status = CNMS_OK;
  r->n_dets = n;
  r->report = ctx->b.report;
  r->payload.head = pl.head;
  r->payload.n = pl.n;
  r->payload.size = pl.size;
  at->dets = *n_dets;
  at->table = *n_table;
  at->bytes = *n_bytes;
  *n_dets += dets_n;
  *n_table += table_n;
  *n_bytes += bytes_n;
  return CNMS_OK;
}

/* Points each frame's result into the batch's tables, now that they no
 * longer move. */
static void
point_results (cnms_ctx *ctx)
{
  static const cnms_det none[1];
  int i;

  for (i = 0; i < ctx->batch_n; i++) {
    cnms_frame_result *r = &ctx->batch[i];
    const cnms_batch_at *at = &ctx->batch_at[i];

    r->error = ctx->batch_err[i];
    if (r->status != CNMS_OK) {
      r->dets = NULL;
      continue;
    }
    r->dets = at->direct != NULL ? at->direct : ctx->batch_dets != NULL ?
        ctx->batch_dets + at->dets : none;
    if (r->payload.n > 0)
      r->payload.records = at->direct_table != NULL ? at->direct_table :
          ctx->batch_table + at->table;
    if (r->payload.size > 0)
      r->payload.data = at->direct_data != NULL ? at->direct_data :
          ctx->batch_data + at->bytes;
  }
}

/* A frame that failed on its own: its status and reason, no records. */
static void
frame_failed (cnms_ctx *ctx, int i, cnms_status st, const char *why)
{
  ctx->batch[i].status = st;
  ctx->batch[i].n_dets = 0;
  memcpy (ctx->batch_err[i], why, sizeof ctx->batch_err[i]);
  ctx->batch_err[i][sizeof ctx->batch_err[i] - 1] = '\0';
}

/* The failure of the whole batch (the device's): nothing left behind. */
static cnms_status
batch_failed (cnms_ctx *ctx, cnms_status st, const char *fmt, int i)
{
  char why[sizeof ctx->b.error];

  memcpy (why, ctx->b.error, sizeof why);
  cnms_payload_clear (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  ctx->batch_n = 0;
  ctx->batch_heads_made = 0;
  return cnms_fail (&ctx->b, st, fmt, i, why);
}

/* The payload of frame f after the backend's batch (job: its engine's,
 * engine: what the batch gave, with the heads' values where it made
 * them): the payload as cnms_detect makes it, the values the batch's
 * where they fit the table, else the heads call's; filed by keep_frame
 * (the batch's records and values in place). A device failure fails the
 * batch. */
static cnms_status
frame_heads (cnms_ctx *ctx, const cnms_layout_row *row, int f,
    const cnms_job *job, const cnms_backend_out *engine, size_t *n_dets,
    size_t *n_table, size_t *n_bytes)
{
  const cnms_report rep = ctx->batch[f].report;
  cnms_backend_out out = *engine;
  cnms_status st;

  st = cnms_payload_finish (ctx, job, row->d.head, &ctx->batch_heads[f],
      &ctx->batch_shape[f], &out);
  /* in place where the records are still the batch's (the lanes' rule
   * may have moved the frame's lanes and points into the front end's own
   * arrays, which the next frame reuses: then they are copied) */
  if (st == CNMS_OK)
    st = keep_frame (ctx, f, out.dets, out.n_dets, out.dets == engine->dets ?
        &out : NULL, n_dets, n_table, n_bytes);
  if (st == CNMS_ERR_CUDA || st == CNMS_ERR_NO_DEVICE)
    return batch_failed (ctx, st, "frame %d: %s", f);
  if (st != CNMS_OK) {
    frame_failed (ctx, f, st, ctx->b.error);
    ctx->b.error[0] = '\0';
  } else {
    ctx->batch[f].report = rep;
    if (row->d.head == CNMS_HEAD_LANE) {
      /* the lanes that the lanes' rule left */
      ctx->batch[f].report.lanes_without_points =
          ctx->b.report.lanes_without_points;
      ctx->batch[f].report.kept = out.n_dets;
    }
  }
  cnms_payload_clear (ctx);
  return CNMS_OK;
}

/* The frames whose status is OK through the backend's detect_batch (one
 * job a frame; an empty end2end frame needs none), then, for a layout
 * with a head, each frame's payload: the heads after NMS (keypoints,
 * masks) where the backend did not make them, the lanes' rule on the
 * lanes' points: each result as cnms_detect's. CNMS_ERR_UNSUPPORTED when
 * the backend does not take them, and for lanes under a distance that
 * cnms_detect refuses (each frame's detect then refuses it). */
static cnms_status
backend_batch (cnms_ctx *ctx, const cnms_layout_row *row,
    const cnms_tensor *ts, const cnms_tensor *const *protos, int n_frames,
    size_t *n_dets, size_t *n_table, size_t *n_bytes)
{
  static const cnms_det none[1];
  const size_t nf = (size_t) (n_frames > 0 ? n_frames : 1);
  cnms_tensor *subs = ctx->batch_t + 2 * (size_t) n_frames;
  cnms_status st;
  int i, n = 0, heads = 0;

  if (!grow (ctx, (void **) &ctx->batch_jobs, &ctx->batch_jobs_cap, nf,
          sizeof *ctx->batch_jobs)
      || !grow (ctx, (void **) &ctx->batch_frame, &ctx->batch_frame_cap, nf,
          sizeof *ctx->batch_frame)
      || !grow (ctx, (void **) &ctx->batch_out, &ctx->batch_out_cap, nf,
          sizeof *ctx->batch_out)
      || !grow (ctx, (void **) &ctx->batch_rep, &ctx->batch_rep_cap, nf,
          sizeof *ctx->batch_rep)
      || !grow (ctx, (void **) &ctx->batch_heads, &ctx->batch_heads_cap, nf,
          sizeof *ctx->batch_heads))
    return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
        "cannot allocate the jobs of %d frames", n_frames);
  if (row->geom == CNMS_GEOM_LANE
      && cnms_check_lane_distance (ctx, ctx->batch_p[0].lane_distance)
      != CNMS_OK)
    return CNMS_ERR_UNSUPPORTED;
  for (i = 0; i < n_frames; i++) {
    cnms_frame_result *r = &ctx->batch[i];
    cnms_job *job = &ctx->batch_jobs[n];

    if (r->status != CNMS_OK)
      continue;
    if (ctx->batch_shape[i].n_anchors == 0) {
      /* an empty end2end result */
      r->report.shape = ctx->batch_shape[i];
      ctx->batch_at[i].direct = none;
      continue;
    }
    st = cnms_job_init (ctx, &ts[i], &ctx->batch_shape[i], &ctx->batch_p[i],
        job);
    if (st != CNMS_OK)
      return st;
    /* the engine's job, with its heads: the backend makes them where it
     * can, else they come after the batch, frame by frame */
    heads = cnms_job_heads (job, row->d.head, &ts[i], protos[i],
        &ctx->batch_shape[i], &ctx->batch_heads[i], &subs[i]);
    ctx->batch_frame[n++] = i;
  }
  /* one frame: the single call is the batch */
  if (n == 1)
    return CNMS_ERR_UNSUPPORTED;
  if (n > 0) {
    st = ctx->ops->detect_batch (&ctx->b, ctx->batch_jobs, n,
        ctx->batch_out, ctx->batch_rep);
    if (st != CNMS_OK) {
      for (i = 0; i < n_frames; i++)
        memset (&ctx->batch_at[i], 0, sizeof ctx->batch_at[i]);
      return st;
    }
  }
  for (i = 0; i < n; i++) {
    const int f = ctx->batch_frame[i];
    const cnms_params *fp = &ctx->batch_p[f];
    cnms_frame_result *r = &ctx->batch[f];

    r->report = ctx->batch_rep[i];
    r->report.shape = ctx->batch_shape[f];
    r->report.candidates_dropped = r->report.candidates > fp->max_candidates
        ? r->report.candidates - fp->max_candidates : 0;
    r->report.kept = ctx->batch_out[i].n_dets;
    r->n_dets = ctx->batch_out[i].n_dets;
    if (!heads && row->d.head != CNMS_HEAD_LANE) {
      ctx->batch_at[f].direct = ctx->batch_out[i].dets;
      continue;
    }
    /* the heads, then the frame filed: the batch's records and values in
     * place, what the heads call made copied (the next frame's heads
     * reuse its buffers) */
    st = frame_heads (ctx, row, f, &ctx->batch_jobs[i], &ctx->batch_out[i],
        n_dets, n_table, n_bytes);
    if (st != CNMS_OK)
      return st;
  }
  return CNMS_OK;
}

cnms_status
cnms_detect_batch (cnms_ctx *ctx, const cnms_tensor *batch,
    const cnms_tensor *protos, const cnms_frame *frames, int n_frames,
    cnms_layout layout, const cnms_params *p,
    const cnms_frame_result **results)
{
  static const cnms_frame_result none[1];
  const cnms_layout_row *row = NULL;
  cnms_tensor *ts, *ps;
  const cnms_tensor **pp;
  cnms_params fp;
  cnms_status st;
  size_t n_dets = 0, n_table = 0, n_bytes = 0;
  double gpu_us;
  int i, ref = -1;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  cnms_payload_clear (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  ctx->batch_n = 0;
  ctx->batch_heads_made = 0;
  if (results == NULL || p == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_batch: NULL argument");
  *results = NULL;
  if (n_frames < 0 || n_frames > CNMS_BATCH_MAX)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "n_frames = %d is outside [0, %d]", n_frames, CNMS_BATCH_MAX);
  if (cnms_layout_info (layout) == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "unknown layout %d", (int) layout);
  if (batch == NULL && frames == NULL && n_frames > 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_batch: neither a batch tensor nor frames");
  if (batch == NULL && protos != NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "batch prototypes without a batch tensor: give each frame's");
  st = cnms_check_params (ctx, p);
  if (st != CNMS_OK)
    return st;
  if (batch != NULL) {
    st = check_batch_tensor (ctx, batch, "tensor", 3, n_frames);
    if (st == CNMS_OK && protos != NULL)
      st = check_batch_tensor (ctx, protos, "prototypes", 4, n_frames);
    if (st != CNMS_OK)
      return st;
  }
  st = reset_results (ctx, n_frames);
  if (st != CNMS_OK)
    return st;
  {
    const size_t nf = (size_t) (n_frames > 0 ? n_frames : 1);

    if (!grow (ctx, (void **) &ctx->batch_t, &ctx->batch_t_cap, 3 * nf,
            sizeof *ctx->batch_t)
        || !grow (ctx, (void **) &ctx->batch_pp, &ctx->batch_pp_cap, nf,
            sizeof *ctx->batch_pp)
        || !grow (ctx, (void **) &ctx->batch_shape, &ctx->batch_shape_cap, nf,
            sizeof *ctx->batch_shape)
        || !grow (ctx, (void **) &ctx->batch_p, &ctx->batch_p_cap, nf,
            sizeof *ctx->batch_p))
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the tensors of %d frames", n_frames);
  }
  ts = ctx->batch_t;
  ps = ctx->batch_t + n_frames;
  pp = ctx->batch_pp;

  /* each frame's tensors, and its size */
  for (i = 0; i < n_frames; i++) {
    const cnms_frame *f = frames != NULL ? &frames[i] : NULL;

    if (f != NULL && (f->frame_width < 0 || f->frame_height < 0))
      return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
          "frame %d: size %dx%d is negative", i, f->frame_width,
          f->frame_height);
    if (batch != NULL) {
      if (f != NULL && (f->tensor != NULL || f->protos != NULL))
        return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
            "frame %d has a tensor of its own and a batch tensor", i);
      slice (batch, n_frames, i, &ts[i]);
      if (protos != NULL)
        slice (protos, n_frames, i, &ps[i]);
    } else {
      if (f->tensor == NULL)
        return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
            "frame %d has no tensor", i);
      ts[i] = *f->tensor;
      if (f->protos != NULL)
        ps[i] = *f->protos;
    }
    pp[i] = (batch != NULL ? protos : f->protos) != NULL ? &ps[i] : NULL;
  }

  /* the layout: the first frame that fits it; the others must agree */
  fp = *p;
  for (i = 0; i < n_frames; i++) {
    cnms_shape shape;
    const char *what = "";
    char why[sizeof ctx->batch_err[0]];

    if (ref >= 0 && !agrees (&ts[ref], &ts[i], row, &what))
      return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
          "frame %d does not agree with frame %d (its %s differs): a batch "
          "has one layout and the same dims but N", i, ref, what);
    if (ref >= 0 && pp[ref] != NULL && pp[i] != NULL
        && !protos_agree (pp[ref], pp[i]))
      return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
          "frame %d's prototypes do not agree with frame %d's", i, ref);
    st = cnms_tensor_shape (&ts[i], pp[i], ref >= 0 ?
        row->d.layout : layout, p, &shape, why, sizeof why);
    ctx->batch_shape[i] = shape;
    if (st != CNMS_OK) {
      if (st == CNMS_ERR_INVALID_ARG)
        /* prototypes where the layout has none, or none for seg */
        return cnms_fail (&ctx->b, st, "frame %d: %s", i, why);
      frame_failed (ctx, i, st, why);
      continue;
    }
    if (ref < 0) {
      int j;

      ref = i;
      row = cnms_layout_row_of (shape.layout);
      /* the frames before, which failed on their own, against this one */
      for (j = 0; j < i; j++)
        if (!agrees (&ts[ref], &ts[j], row, &what))
          return cnms_fail (&ctx->b, CNMS_ERR_BAD_TENSOR,
              "frame %d does not agree with frame %d (its %s differs): a "
              "batch has one layout and the same dims but N", j, ref, what);
    }
  }

  /* each frame's p: its size */
  for (i = 0; i < n_frames; i++) {
    fp = *p;
    if (frames != NULL && frames[i].frame_width > 0)
      fp.frame_width = frames[i].frame_width;
    if (frames != NULL && frames[i].frame_height > 0)
      fp.frame_height = frames[i].frame_height;
    ctx->batch_p[i] = fp;
  }

  /* the backend's batch, where it takes the frames */
  if (ctx->ops->detect_batch != NULL && row != NULL
      && cnms_head_batched (row->d.head)) {
    st = backend_batch (ctx, row, ts, pp, n_frames, &n_dets, &n_table,
        &n_bytes);
    if (st == CNMS_OK)
      goto done;
    if (st != CNMS_ERR_UNSUPPORTED) {
      char why[sizeof ctx->b.error];

      memcpy (why, ctx->b.error, sizeof why);
      ctx->batch_n = 0;
      return cnms_fail (&ctx->b, st, "the batch of %d frames: %s", n_frames,
          why);
    }
    ctx->b.error[0] = '\0';
  }

  /* the frames that passed, one by one; a timing backend's GPU time is
   * their sum */
  gpu_us = 0.0;
  for (i = 0; i < n_frames; i++) {
    const cnms_det *dets;
    int n;

    if (ctx->batch[i].status != CNMS_OK)
      continue;
    st = cnms_detect (ctx, &ts[i], pp[i], row->d.layout,
        &ctx->batch_p[i], &dets, &n);
    if (st == CNMS_OK && ctx->b.last_gpu_us >= 0.0 && gpu_us >= 0.0)
      gpu_us += ctx->b.last_gpu_us;
    else if (st == CNMS_OK)
      gpu_us = -1.0;
    if (st == CNMS_OK)
      st = keep_frame (ctx, i, dets, n, NULL, &n_dets, &n_table, &n_bytes);
    if (st == CNMS_ERR_CUDA || st == CNMS_ERR_NO_DEVICE) {
      /* the device failed: no frame after it would fare better */
      char why[sizeof ctx->b.error];

      memcpy (why, ctx->b.error, sizeof why);
      cnms_payload_clear (ctx);
      memset (&ctx->b.report, 0, sizeof ctx->b.report);
      ctx->batch_n = 0;
      return cnms_fail (&ctx->b, st, "frame %d: %s", i, why);
    }
    if (st != CNMS_OK)
      frame_failed (ctx, i, st, ctx->b.error);
  }
  ctx->b.last_gpu_us = gpu_us;
done:
  cnms_payload_clear (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  ctx->b.error[0] = '\0';
  point_results (ctx);
  *results = ctx->batch != NULL ? ctx->batch : none;
  return CNMS_OK;
}
