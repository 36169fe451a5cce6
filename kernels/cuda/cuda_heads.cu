/* The heads of the kept records on the CUDA backend (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"), after the engine has returned
 * them: the arithmetic is cnms_heads.h's, shared with the CPU backend, so
 * both give the same bits.
 *
 * Pose: a device tensor's keypoints are gathered and mapped by one kernel
 * straight into mapped pinned host memory (the kept anchors read from
 * there too); a host tensor's on the host, as the CPU backend does.
 *
 * Masks: one batched pass for every kept record. The host lays out a job
 * per record (its pixel rectangle, the window of prototype pixels that
 * rectangle samples, where its logits and bytes go; the coefficients too
 * when the tensor is on the host) in mapped pinned memory, which the
 * first kernel reads (no upload): it computes the logits of every window
 * (each a dot product over m ascending), a second the bytes of every pixel
 * of every mask (bilinear, > 0), and one copy brings all the bytes to the
 * host. Prototypes on the host are uploaded first.
 *
 * Ahead: when the tensor (and for masks the prototypes) lies on the
 * device, the detect enqueues the heads behind its engine and its caps
 * (cnms_cuda_heads_ahead), so that one synchronisation serves
 * both. The kernels then find the kept records through the engine's
 * kept_dev (their count and sort values in device memory: reads of the
 * mapped output would each cross the bus): the keypoints of every kept
 * record go straight into mapped memory; for masks a one-block kernel
 * makes the jobs (each
 * record's rectangle, window and offsets, in record order, the offsets
 * by a prefix sum) and their totals, and the masks' bytes go straight
 * into mapped memory too. The room for the bytes and logits is the last
 * frame's and a quarter more: a frame over it writes nothing and its
 * masks are made again after the detect, as without ahead, with the
 * room grown for the next. cnms_cuda_heads takes the masks only when
 * the jobs equal the front end's table, record for record.
 *
 * The masks' jobs, logits and bytes are made by cuda_heads.cuh's device
 * functions, which a batch's masks (cuda_heads_batch.cu) share. */
#include <stddef.h>
#include <string.h>

#include "cuda_heads.cuh"

/* Keypoints: thread i is keypoint i % k of kept record r = i / k, whose
 * anchor is anchors[r], or with sel that of record sel[1 + r] of recs
 * (the engine's kept sort values). out is mapped host memory, where every
 * store crosses the bus: a block's keypoints are staged in shared memory
 * and go out in 16-byte pieces, consecutive threads' pieces consecutive
 * (out is 16-byte aligned; a block's 3 CNMS_BLOCK floats are whole
 * pieces; the last piece may reach 3 floats past the keypoints, which
 * out has room for). */
static __device__ __forceinline__ void
pose_block (const void *tensor, int f16, size_t n_anchors, int d, int k,
    const int32_t *anchors, const cnms_det *recs, const int32_t *sel, int n,
    const cnms_map &map, float *out)
{
  /* behind another kernel (the engine, or the heads' last): what it
   * wrote is read only after it has completed */
  cnms_pdl_wait ();
  __shared__ __align__ (16) float st[3 * CNMS_BLOCK];
  const long long first = (long long) blockIdx.x * CNMS_BLOCK;
  const long long i = first + threadIdx.x;
  const long long total = (long long) kept_count (sel, n) * k;

  if (first >= total)
    return;
  if (i < total) {
    const long long r = i / k;
    const int32_t a = sel != NULL ? recs[sel[1 + r]].anchor : anchors[r];

    cnms_pose_keypoint (tensor, f16, n_anchors, d, (int) (i % k),
        (size_t) (uint32_t) a, &map, st + 3 * threadIdx.x);
  } else {
    st[3 * threadIdx.x] = st[3 * threadIdx.x + 1] =
        st[3 * threadIdx.x + 2] = 0.0f;
  }
  __syncthreads ();
  {
    const long long floats = 3 * ((total - first) < CNMS_BLOCK ?
        total - first : CNMS_BLOCK);
    const int pieces = (int) ((floats + 3) / 4);

    if ((int) threadIdx.x < pieces)
      ((float4 *) (out + 3 * first))[threadIdx.x] =
          ((const float4 *) st)[threadIdx.x];
  }
}

static __global__ void
pose_kernel (const void *tensor, int f16, size_t n_anchors, int d, int k,
    const int32_t *anchors, const cnms_det *recs, const int32_t *sel, int n,
    cnms_map map, float *out)
{
  pose_block (tensor, f16, n_anchors, d, k, anchors, recs, sel, n, map, out);
}

/* A batch's keypoints: row y of blocks is frame y's. */
static __global__ void
pose_batch_kernel (const cnms_pose_frame *frames, int k, int d, int f16)
{
  const cnms_pose_frame &f = frames[blockIdx.y];

  pose_block (f.tensor, f16, (size_t) f.n_anchors, d, k, NULL, f.recs, f.sel,
      f.n, f.map, f.out);
}

cudaError_t
cnms_cuda_pose_batch (const cnms_pose_frame *d_frames, int n, int most,
    int k, int d, int f16, cudaStream_t stream)
{
  const long long threads = (long long) most * k;

  if (threads > 0x7fffffffLL - CNMS_BLOCK)
    return cudaErrorInvalidValue;
  if (threads == 0)
    return cudaSuccess;
  pose_batch_kernel <<< dim3 ((unsigned) cnms_ceil_div ((int) threads,
              CNMS_BLOCK), (unsigned) n), CNMS_BLOCK, 0, stream >>>
      (d_frames, k, d, f16);
  return cudaGetLastError ();
}

/* The masks' jobs of an engine's kept records (mask_jobs_block) into
 * djobs and (for the host's check) hjobs; the totals into dsum and hsum,
 * over when they pass the room. */
static __global__ void
jobs_kernel (const cnms_det *recs, const int32_t *sel, int max_keep,
    cnms_mask_axis ax, cnms_mask_axis ay, long long room_bytes,
    long long room_logits, cnms_mask_sum *dsum, cnms_mask_job *djobs,
    cnms_mask_sum *hsum, cnms_mask_job *hjobs)
{
  /* behind another kernel (the engine, or the heads' last): what it
   * wrote is read only after it has completed */
  cnms_pdl_wait ();
  cnms_pdl_launch_next ();
  cnms_mask_sum sum;

  mask_jobs_block (recs, sel, max_keep, ax, ay, djobs, hjobs, NULL, &sum);
  if (threadIdx.x == 0) {
    sum.over = sum.bytes > room_bytes || sum.logits > room_logits;
    *dsum = sum;
    *hsum = sum;
  }
}

/* The jobs a mask kernel takes: n, or those of sum when it is given
 * (none when they are over their room). */
static __device__ int
jobs_count (const cnms_mask_sum *sum, int n)
{
  return sum == NULL ? n : sum->over ? 0 : sum->n;
}

/* The logits of every job's window (mask_logits_job): blockIdx.y strides
 * the jobs (n, or sum's), the block's threads its window's pixels. The
 * jobs are read one thread per block from hjobs: mapped pinned memory
 * written by the host (no upload), then copied to device memory (djobs)
 * for pixels_kernel, or the device jobs themselves (hjobs == djobs). The
 * coefficients come from the device tensor (rows row0 .., strided by
 * n_anchors) or, for a host tensor, from coefs ([job][mc], mapped). */
static __global__ void
logits_kernel (const cnms_mask_job *hjobs, cnms_mask_job *djobs, int n,
    const cnms_mask_sum *sum, const void *protos, int f16, int wp,
    size_t plane, int mc, const void *tensor, int row0, size_t n_anchors,
    const float *coefs, float *logits)
{
  /* behind another kernel (the engine, or the heads' last): what it
   * wrote is read only after it has completed */
  cnms_pdl_wait ();
  cnms_pdl_launch_next ();
  __shared__ float c[CNMS_COEF_CHUNK];
  __shared__ cnms_mask_job sj;
  const int jobs = jobs_count (sum, n);

  for (int k = blockIdx.y; k < jobs; k += gridDim.y) {
    if (threadIdx.x == 0) {
      sj = hjobs[k];
      if (blockIdx.x == 0 && hjobs != djobs)
        djobs[k] = sj;
    }
    __syncthreads ();
    const cnms_mask_job j = sj;

    mask_logits_job (j, protos, f16, wp, plane, mc, tensor, row0, n_anchors,
        coefs != NULL ? coefs + (size_t) k * mc : NULL, logits, c);
    /* sj is read above until here */
    __syncthreads ();
  }
}

/* The bytes of every job's rectangle (n jobs, or sum's) into out
 * (mask_pixels_job). */
static __global__ void
pixels_kernel (const cnms_mask_job *jobs, int n, const cnms_mask_sum *sum,
    cnms_mask_axis ax, cnms_mask_axis ay, const float *logits, uint8_t *out)
{
  /* behind another kernel (the engine, or the heads' last): what it
   * wrote is read only after it has completed */
  cnms_pdl_wait ();
  const int count_jobs = jobs_count (sum, n);

  for (int k = blockIdx.y; k < count_jobs; k += gridDim.y) {
    const cnms_mask_job j = jobs[k];

    mask_pixels_job (j, ax, ay, logits, out);
  }
}


/* Timing of the heads' stream work, added to the detect's. */
static cnms_status
timing_done (cnms_backend_ctx *ctx, double before)
{
  CNMS_TRY (cnms_cuda_timing_read (ctx));
  if (ctx->timing && before >= 0.0)
    ctx->last_gpu_us += before;
  return CNMS_OK;
}

static cnms_status
pose (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_heads_args *h,
    const cnms_det *dets, int n, const void **payload)
{
  const int k = h->shape.n_keypoints;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->shape.n_anchors;
  const long long threads = (long long) n * k;
  const double before = ctx->last_gpu_us;
  float *out;
  int32_t *anchors;

  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
          ((size_t) threads + 1) * 3 * sizeof (float), "keypoints"));
  out = (float *) s->h_heads.p;
  if (!h->t->on_device || n == 0) {
    /* a host tensor: on the host, as the CPU backend */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < k; j++)
        cnms_pose_keypoint (h->t->data, f16, na, h->shape.keypoint_dims, j,
            (size_t) (uint32_t) dets[i].anchor, &h->map,
            out + 3 * ((size_t) i * k + j));
    *payload = out;
    return CNMS_OK;
  }
  /* one thread a keypoint: a grid of int threads */
  if (threads > 0x7fffffffLL - CNMS_BLOCK)
    return cnms_fail (ctx, CNMS_ERR_INVALID_ARG, "%lld keypoints of kept "
        "records from device memory: at most %d", threads,
        0x7fffffff - CNMS_BLOCK);
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_hjobs,
          (size_t) n * sizeof (int32_t), "kept anchors"));
  anchors = (int32_t *) s->h_hjobs.p;
  for (int i = 0; i < n; i++)
    anchors[i] = dets[i].anchor;
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  pose_kernel <<< (unsigned) cnms_ceil_div ((int) threads, CNMS_BLOCK),
      CNMS_BLOCK, 0, s->stream >>> (h->t->data, f16, na, h->shape.keypoint_dims,
      k, (const int32_t *) s->h_hjobs.dev, NULL, NULL, n, h->map,
      (float *) s->h_heads.dev);
  CNMS_CUDA_TRY (ctx, cudaGetLastError (), "keypoint kernel");
  CNMS_TRY (cnms_cuda_timing_end (ctx));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "gathering the keypoints");
  CNMS_TRY (timing_done (ctx, before));
  *payload = out;
  return CNMS_OK;
}

static cnms_status
seg (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_heads_args *h,
    const cnms_det *dets, int n, const void **payload)
{
  const int mc = h->shape.n_coeffs;
  const size_t plane = (size_t) h->shape.proto_height
      * (size_t) h->shape.proto_width;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t esize = f16 ? 2 : 4;
  const size_t proto_bytes = (size_t) mc * plane * esize;
  const bool host_coefs = !h->t->on_device;
  const size_t jobs_bytes = (size_t) n * sizeof (cnms_mask_job);
  const size_t table_bytes = jobs_bytes
      + (host_coefs ? (size_t) n * mc * sizeof (float) : 0);
  const double before = ctx->last_gpu_us;
  cnms_mask_axis ax, ay;
  cnms_mask_job *jobs;
  const void *d_protos = h->protos->data;
  long long lg = 0;
  int most_win = 0, most_pix = 0;

  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
          h->mask_bytes > 0 ? h->mask_bytes : 1, "masks"));
  if (n == 0) {
    *payload = s->h_heads.p;
    return CNMS_OK;
  }
  cnms_mask_axis_init (&ax, h->map.gain_x, h->map.pad_x,
      h->shape.proto_width, h->model_w);
  cnms_mask_axis_init (&ay, h->map.gain_y, h->map.pad_y,
      h->shape.proto_height, h->model_h);
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_hjobs, table_bytes,
          "mask jobs"));
  jobs = (cnms_mask_job *) s->h_hjobs.p;
  for (int i = 0; i < n; i++) {
    const cnms_payload *r = &h->masks[i];
    cnms_mask_job *j = &jobs[i];

    memset (j, 0, sizeof *j);
    j->x = r->x;
    j->y = r->y;
    j->w = r->width;
    j->h = r->height;
    j->out = (long long) r->offset;
    j->lg = lg;
    j->anchor = dets[i].anchor;
    mask_window (&ax, &ay, j);
    if (r->width > 0 && r->height > 0) {
      lg += (long long) j->ww * j->wh;
      if (j->ww * j->wh > most_win)
        most_win = j->ww * j->wh;
      if (r->width * r->height > most_pix)
        most_pix = r->width * r->height;
    }
  }
  if (host_coefs) {
    float *coefs = (float *) ((char *) s->h_hjobs.p + jobs_bytes);
    for (int i = 0; i < n; i++)
      for (int m = 0; m < mc; m++)
        coefs[(size_t) i * mc + m] = cnms_tensor_value (h->t->data, f16,
            ((size_t) h->row0 + m) * (size_t) h->shape.n_anchors
            + (size_t) (uint32_t) dets[i].anchor);
  }
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_hjobs, jobs_bytes,
          "mask jobs"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_logits,
          ((size_t) lg + 1) * sizeof (float), "mask logits"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_masks,
          h->mask_bytes > 0 ? h->mask_bytes : 1, "masks"));
  if (!h->protos->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_protos, proto_bytes,
            "prototypes"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_protos, proto_bytes,
            "prototype staging"));
    d_protos = s->d_protos.p;
  }

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!h->protos->on_device) {
    memcpy (s->h_protos.p, h->protos->data, proto_bytes);
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_protos.p, s->h_protos.p,
            proto_bytes, cudaMemcpyHostToDevice, s->stream),
        "uploading the prototypes");
  }
  if (most_win > 0) {
    logits_kernel <<< job_grid (n, most_win), CNMS_BLOCK, 0, s->stream >>>
        ((const cnms_mask_job *) s->h_hjobs.dev,
        (cnms_mask_job *) s->d_hjobs.p, n, NULL, d_protos, f16,
        h->shape.proto_width,
        plane, mc, host_coefs ? NULL : h->t->data, h->row0,
        (size_t) h->shape.n_anchors,
        host_coefs ? (const float *) ((const char *) s->h_hjobs.dev
            + jobs_bytes) : NULL, (float *) s->d_logits.p);
    CNMS_CUDA_TRY (ctx, cudaGetLastError (), "mask logits kernel");
    pixels_kernel <<< job_grid (n, most_pix / CNMS_MASK_PIECE + 2),
        CNMS_BLOCK, 0, s->stream >>>
        ((const cnms_mask_job *) s->d_hjobs.p, n, NULL, ax, ay,
        (const float *) s->d_logits.p, (uint8_t *) s->d_masks.p);
    CNMS_CUDA_TRY (ctx, cudaGetLastError (), "mask pixels kernel");
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_heads.p, s->d_masks.p,
            h->mask_bytes, cudaMemcpyDeviceToHost, s->stream),
        "copying the masks back");
  }
  CNMS_TRY (cnms_cuda_timing_end (ctx));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "assembling the masks");
  CNMS_TRY (timing_done (ctx, before));
  *payload = s->h_heads.p;
  return CNMS_OK;
}

/* Whether heads h can run behind the engine (max_keep records at most),
 * and their grid's threads (pose). */
static bool
ahead_possible (const cnms_cuda_priv *s, const cnms_heads_args *h,
    int max_keep)
{
  if (!h->t->on_device || max_keep < 1 || s->no_ahead)
    return false;
  if (h->kind == CNMS_HEAD_KEYPOINTS)
    /* past an int grid the heads' own call says why */
    return (long long) max_keep * h->shape.n_keypoints
        <= 0x7fffffffLL - CNMS_BLOCK;
  return h->protos->on_device;
}

/* The jobs' bytes in d_hjobs and h_hjobs: the totals, then the jobs. */
static size_t
ahead_jobs_bytes (int max_keep)
{
  return CNMS_SUM_BYTES + (size_t) max_keep * sizeof (cnms_mask_job);
}

cnms_status
cnms_cuda_heads_ahead_reserve (cnms_backend_ctx *ctx,
    const cnms_heads_args *h, int max_keep, bool *ahead)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  *ahead = false;
  if (!ahead_possible (s, h, max_keep))
    return CNMS_OK;
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_kept,
          ((size_t) max_keep + 1) * sizeof (int32_t), "kept records"));
  if (h->kind == CNMS_HEAD_KEYPOINTS) {
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
            ((size_t) max_keep * h->shape.n_keypoints + 1) * 3 * sizeof (float),
            "keypoints"));
  } else {
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
            mask_room (s->ahead_bytes, (size_t) 1 << 16), "masks"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_logits,
            mask_room (s->ahead_logits, (size_t) 1 << 14) * sizeof (float),
            "mask logits"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_hjobs,
            ahead_jobs_bytes (max_keep), "mask jobs"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_hjobs,
            ahead_jobs_bytes (max_keep), "mask jobs"));
  }
  *ahead = true;
  return CNMS_OK;
}


cnms_status
cnms_cuda_heads_ahead (cnms_backend_ctx *ctx, const cnms_heads_args *h,
    int max_keep)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->shape.n_anchors;
  /* the engine's kept records, in device memory */
  const cnms_det *recs = (const cnms_det *) ((const char *) s->d_cand.p
      + CNMS_HEADER_BYTES);
  const int32_t *sel = (const int32_t *) s->d_kept.p;

  if (h->kind == CNMS_HEAD_KEYPOINTS) {
    const int k = h->shape.n_keypoints;
    const int threads = max_keep * k;

    CNMS_CUDA_TRY (ctx, launch_behind (s, pose_kernel,
            dim3 ((unsigned) cnms_ceil_div (threads, CNMS_BLOCK)),
            h->t->data, f16, na, h->shape.keypoint_dims, k,
            (const int32_t *) NULL, recs, sel, max_keep, h->map,
            (float *) s->h_heads.dev), "keypoint kernel");
    s->ahead_kind = CNMS_HEAD_KEYPOINTS;
    return CNMS_OK;
  }
  {
    const size_t plane = (size_t) h->shape.proto_height
        * (size_t) h->shape.proto_width;
    const int rows = s->ahead_n + s->ahead_n / 4;
    const int gy = rows < 8 ? 8 : (rows < max_keep ? rows : max_keep);
    cnms_mask_axis ax, ay;
    cnms_mask_sum *dsum = (cnms_mask_sum *) s->d_hjobs.p;
    cnms_mask_job *djobs = (cnms_mask_job *) ((char *) s->d_hjobs.p
        + CNMS_SUM_BYTES);

    cnms_mask_axis_init (&ax, h->map.gain_x, h->map.pad_x,
        h->shape.proto_width, h->model_w);
    cnms_mask_axis_init (&ay, h->map.gain_y, h->map.pad_y,
        h->shape.proto_height, h->model_h);
    CNMS_CUDA_TRY (ctx, launch_behind (s, jobs_kernel, dim3 (1), recs, sel,
            max_keep, ax, ay, (long long) s->h_heads.cap,
            (long long) (s->d_logits.cap / sizeof (float)), dsum, djobs,
            (cnms_mask_sum *) s->h_hjobs.dev,
            (cnms_mask_job *) ((char *) s->h_hjobs.dev + CNMS_SUM_BYTES)),
        "mask jobs kernel");
    /* the grids of the last frame's jobs; the kernels stride over more */
    CNMS_CUDA_TRY (ctx, launch_behind (s, logits_kernel,
            job_grid (gy, s->ahead_win), (const cnms_mask_job *) djobs,
            djobs, 0, (const cnms_mask_sum *) dsum, h->protos->data, f16,
            h->shape.proto_width, plane, h->shape.n_coeffs, h->t->data,
            h->row0, na,
            (const float *) NULL, (float *) s->d_logits.p),
        "mask logits kernel");
    CNMS_CUDA_TRY (ctx, launch_behind (s, pixels_kernel,
            job_grid (gy, s->ahead_pix / CNMS_MASK_PIECE + 2),
            (const cnms_mask_job *) djobs, 0, (const cnms_mask_sum *) dsum,
            ax, ay, (const float *) s->d_logits.p,
            (uint8_t *) s->h_heads.dev), "mask pixels kernel");
    s->ahead_kind = CNMS_HEAD_MASK;
  }
  return CNMS_OK;
}

cnms_status
cnms_cuda_heads_ahead_done (cnms_backend_ctx *ctx)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  const cnms_mask_sum *sum = (const cnms_mask_sum *) s->h_hjobs.p;

  if (s->ahead_kind != CNMS_HEAD_MASK)
    return CNMS_OK;
  s->ahead_n = sum->n;
  s->ahead_win = sum->most_win;
  s->ahead_pix = sum->most_pix;
  if (!sum->over)
    return CNMS_OK;
  /* made again by cnms_cuda_heads; the room grows now, so that the next
   * frame allocates nothing (past CNMS_MASK_BYTES_MAX the front end fails
   * the call) */
  s->ahead_kind = 0;
  if (sum->bytes > (long long) CNMS_MASK_BYTES_MAX
      || sum->logits > (long long) CNMS_MASK_BYTES_MAX)
    return CNMS_OK;
  s->ahead_bytes = (size_t) sum->bytes;
  s->ahead_logits = (size_t) sum->logits;
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
          mask_room (s->ahead_bytes, (size_t) 1 << 16), "masks"));
  return cnms_cuda_reserve_device (ctx, &s->d_logits,
      mask_room (s->ahead_logits, (size_t) 1 << 14) * sizeof (float),
      "mask logits");
}

/* Whether the heads made ahead (cnms_cuda_heads_ahead) are h's for the n
 * records: then they are the call's. */
static bool
take_ahead (cnms_cuda_priv *s, const cnms_heads_args *h, int n,
    const void **payload)
{
  const int kind = s->ahead_kind;
  const cnms_mask_sum *sum = (const cnms_mask_sum *) s->h_hjobs.p;
  const cnms_mask_job *jobs;

  s->ahead_kind = 0;
  if (kind != h->kind)
    return false;
  if (kind == CNMS_HEAD_KEYPOINTS) {
    *payload = s->h_heads.p;
    return true;
  }
  if (sum->n != n || sum->bytes != (long long) h->mask_bytes)
    return false;
  jobs = (const cnms_mask_job *) ((const char *) s->h_hjobs.p
      + CNMS_SUM_BYTES);
  for (int i = 0; i < n; i++) {
    const cnms_payload *r = &h->masks[i];

    if (jobs[i].x != r->x || jobs[i].y != r->y || jobs[i].w != r->width
        || jobs[i].h != r->height || jobs[i].out != (long long) r->offset)
      return false;
  }
  *payload = s->h_heads.p;
  return true;
}

extern "C" cnms_status
cnms_cuda_heads (cnms_backend_ctx *ctx, const cnms_job *job,
    const cnms_heads_args *h, const cnms_det *dets, int n,
    const void **payload)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);

  (void) job;
  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  if (take_ahead (s, h, n, payload))
    return CNMS_OK;
  if (h->kind == CNMS_HEAD_KEYPOINTS)
    return pose (ctx, s, h, dets, n, payload);
  return seg (ctx, s, h, dets, n, payload);
}
