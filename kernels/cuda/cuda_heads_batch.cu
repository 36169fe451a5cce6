/* A batch's segmentation masks on the CUDA backend, made in the batch's
 * own launches (cuda_batch.cu) behind its engine and its caps when the
 * frames' tensors and prototypes lie on the device: four launches and the
 * batch's one wait, whatever the number of frames.
 *
 *   jobs_batch_kernel (a block a frame: the frame's jobs and totals from
 *   its engine's kept_dev, as jobs_kernel makes a single frame's) ->
 *   scan_batch_kernel (one block: each frame's place in the batch's bytes
 *   and logits and its first job, by a prefix sum over the frames; the
 *   batch's totals, and whether they pass the room) ->
 *   logits_batch_kernel -> pixels_batch_kernel (the jobs of every frame,
 *   one after the other, blockIdx.y striding them: a job's frame found by
 *   a binary search of the frames' first jobs; the work of each job is the
 *   single frame's, by cuda_heads.cuh's device functions, so the same
 *   bits), the bytes straight into mapped pinned memory
 *
 * Each frame's bytes start at a 16-byte boundary of the batch's, so that
 * the pixels kernel stores whole pieces of a mask 16 bytes at a time. The
 * room for the bytes and logits is the last totals that passed it and a
 * quarter more (at least 64 KiB of bytes and 16 Ki logits), grow-only: a
 * batch over it writes nothing, its frames' masks come from the heads
 * call, frame by frame, and the room grows for the next batch. The host
 * reads back each frame's table (its records' rectangles and offsets, as
 * the front end's table has them), which the front end compares with its
 * own before it takes the frame's masks. */
#include <stddef.h>
#include <string.h>

#include "cuda_heads.cuh"

/* The most jobs (frames times their records at most) of a batch whose
 * masks its launches make; a larger batch's come from the heads call. */
#define SEG_BATCH_JOBS_MAX (1 << 22)

/* One frame, as the batch's upload holds it. */
typedef struct {
  const cnms_det *recs;         /* the engine's records */
  const int32_t *sel;           /* its kept_dev: [count | sort values] */
  const void *tensor;           /* the frame's whole tensor */
  const void *protos;           /* its prototypes */
  unsigned long long n_anchors;
  cnms_mask_axis ax, ay;        /* the frame's sampling of the prototypes */
  int max_keep;                 /* its kept records at most */
  int pad_;
} seg_frame;

/* A frame's totals and place in the batch. */
typedef struct {
  long long bytes, logits;      /* its masks' bytes and windows' logits */
  long long at_bytes;           /* where they start in the batch's */
  long long at_logits;
  int n;                        /* its jobs: its kept records */
  int first;                    /* its first job in the batch's order */
  int most_win, most_pix;       /* its largest window and rectangle */
} seg_frame_sum;

/* Bytes of d_sums and h_sums for n frames: the batch's totals, then each
 * frame's. */
static size_t
sums_bytes (int n)
{
  return CNMS_SUM_BYTES + (size_t) n * sizeof (seg_frame_sum);
}

/* The jobs of frame blockIdx.x into its keep_max jobs of djobs and of the
 * table htab (mapped), its totals into fsum. */
static __global__ void
jobs_batch_kernel (const seg_frame *frames, int keep_max,
    cnms_mask_job *djobs, cnms_payload *htab, seg_frame_sum *fsum)
{
  /* behind the engine or the caps: what it wrote is read only after it
   * has completed */
  cnms_pdl_wait ();
  cnms_pdl_launch_next ();
  const seg_frame f = frames[blockIdx.x];
  const size_t at = (size_t) blockIdx.x * (size_t) keep_max;
  cnms_mask_sum sum;

  mask_jobs_block (f.recs, f.sel, f.max_keep, f.ax, f.ay, djobs + at, NULL,
      htab + at, &sum);
  if (threadIdx.x == 0) {
    seg_frame_sum fs;

    memset (&fs, 0, sizeof fs);
    fs.bytes = sum.bytes;
    fs.logits = sum.logits;
    fs.n = sum.n;
    fs.most_win = sum.most_win;
    fs.most_pix = sum.most_pix;
    fsum[blockIdx.x] = fs;
  }
}

/* The places of the n frames of fsum (into fsum and, for the host, hfsum:
 * each frame's bytes at a 16-byte boundary, its logits and first job
 * after the frames before it), and the batch's totals into dsum and hsum,
 * over when they pass the room; one block. */
static __global__ void
scan_batch_kernel (seg_frame_sum *fsum, int n, long long room_bytes,
    long long room_logits, cnms_mask_sum *dsum, cnms_mask_sum *hsum,
    seg_frame_sum *hfsum)
{
  cnms_pdl_wait ();
  cnms_pdl_launch_next ();
  __shared__ long long sb[CNMS_BLOCK], sl[CNMS_BLOCK];
  __shared__ int sj[CNMS_BLOCK];
  __shared__ long long base_b, base_l;
  __shared__ int base_j, most_w, most_p;
  const int t = threadIdx.x;

  if (t == 0) {
    base_b = base_l = 0;
    base_j = most_w = most_p = 0;
  }
  __syncthreads ();
  for (int c = 0; c < n; c += CNMS_BLOCK) {
    const int i = c + t;
    seg_frame_sum fs;
    long long b = 0, l = 0;
    int j = 0;

    memset (&fs, 0, sizeof fs);
    if (i < n) {
      fs = fsum[i];
      b = (fs.bytes + CNMS_MASK_PIECE - 1) / CNMS_MASK_PIECE
          * CNMS_MASK_PIECE;
      l = fs.logits;
      j = fs.n;
    }
    sb[t] = b;
    sl[t] = l;
    sj[t] = j;
    __syncthreads ();
    /* inclusive scan of the block's frames */
    for (int off = 1; off < CNMS_BLOCK; off <<= 1) {
      const long long vb = t >= off ? sb[t - off] : 0;
      const long long vl = t >= off ? sl[t - off] : 0;
      const int vj = t >= off ? sj[t - off] : 0;

      __syncthreads ();
      sb[t] += vb;
      sl[t] += vl;
      sj[t] += vj;
      __syncthreads ();
    }
    if (i < n) {
      fs.at_bytes = base_b + sb[t] - b;
      fs.at_logits = base_l + sl[t] - l;
      fs.first = base_j + sj[t] - j;
      fsum[i] = fs;
      hfsum[i] = fs;
      atomicMax (&most_w, fs.most_win);
      atomicMax (&most_p, fs.most_pix);
    }
    __syncthreads ();
    if (t == CNMS_BLOCK - 1) {
      base_b += sb[t];
      base_l += sl[t];
      base_j += sj[t];
    }
    __syncthreads ();
  }
  if (t == 0) {
    cnms_mask_sum sum;

    sum.bytes = base_b;
    sum.logits = base_l;
    sum.n = base_j;
    sum.most_win = most_w;
    sum.most_pix = most_p;
    sum.over = base_b > room_bytes || base_l > room_logits;
    *dsum = sum;
    *hsum = sum;
  }
}

/* The frame of job k of the batch's order: the last of the n frames
 * (n >= 1) whose first job is at most k (a frame without jobs has the
 * first job of the frame after it). */
static __device__ int
frame_of (const seg_frame_sum *fsum, int n, int k)
{
  int lo = 0, hi = n - 1;

  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;

    if (fsum[mid].first <= k)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Job k of the batch (its frame's jobs keep_max apart in djobs), its
 * frame and that frame's totals, into the block's shared memory by thread
 * 0; the block then waits for them. */
static __device__ __forceinline__ void
load_job (const seg_frame *frames, const seg_frame_sum *fsum, int n,
    int keep_max, const cnms_mask_job *djobs, int k, cnms_mask_job *sj,
    seg_frame *sf, seg_frame_sum *ss)
{
  if (threadIdx.x == 0) {
    const int f = frame_of (fsum, n, k);

    *ss = fsum[f];
    *sf = frames[f];
    *sj = djobs[(size_t) f * (size_t) keep_max + (size_t) (k - ss->first)];
  }
  __syncthreads ();
}

/* The logits of every job of the batch (sum's, none when over the room)
 * into its frame's logits: blockIdx.y strides the jobs, the block's
 * threads its window's pixels (mask_logits_job). */
static __global__ void
logits_batch_kernel (const seg_frame *frames, const seg_frame_sum *fsum,
    int n, int keep_max, const cnms_mask_job *djobs,
    const cnms_mask_sum *sum, int f16, int wp, size_t plane, int mc,
    int row0, float *logits)
{
  cnms_pdl_wait ();
  cnms_pdl_launch_next ();
  __shared__ float c[CNMS_COEF_CHUNK];
  __shared__ cnms_mask_job sj;
  __shared__ seg_frame sf;
  __shared__ seg_frame_sum ss;
  const int jobs = sum->over ? 0 : sum->n;

  for (int k = blockIdx.y; k < jobs; k += gridDim.y) {
    load_job (frames, fsum, n, keep_max, djobs, k, &sj, &sf, &ss);
    const cnms_mask_job j = sj;
    const void *const protos = sf.protos, *const tensor = sf.tensor;
    const size_t na = (size_t) sf.n_anchors;
    float *const lg = logits + ss.at_logits;

    /* the shared job is read above until here */
    __syncthreads ();
    mask_logits_job (j, protos, f16, wp, plane, mc, tensor, row0, na, NULL,
        lg, c);
  }
}

/* The bytes of every job of the batch (sum's, none when over the room)
 * into its frame's bytes of out (mapped, 16-byte aligned), from its
 * frame's logits (mask_pixels_job). */
static __global__ void
pixels_batch_kernel (const seg_frame *frames, const seg_frame_sum *fsum,
    int n, int keep_max, const cnms_mask_job *djobs,
    const cnms_mask_sum *sum, const float *logits, uint8_t *out)
{
  cnms_pdl_wait ();
  __shared__ cnms_mask_job sj;
  __shared__ seg_frame sf;
  __shared__ seg_frame_sum ss;
  const int jobs = sum->over ? 0 : sum->n;

  for (int k = blockIdx.y; k < jobs; k += gridDim.y) {
    load_job (frames, fsum, n, keep_max, djobs, k, &sj, &sf, &ss);
    const cnms_mask_job j = sj;
    const cnms_mask_axis ax = sf.ax, ay = sf.ay;
    const float *const lg = logits + ss.at_logits;
    uint8_t *const o = out + ss.at_bytes;

    /* the shared job is read above until here */
    __syncthreads ();
    mask_pixels_job (j, ax, ay, lg, o);
  }
}

bool
cnms_cuda_seg_batch_takes (const cnms_cuda_priv *s, const cnms_job *j0,
    int n, int keep_max)
{
  const cnms_heads_args *h = j0->heads;

  return h != NULL && h->kind == CNMS_HEAD_MASK && !s->no_batch_heads
      && s->unproven
      && h->t->on_device && h->protos != NULL && h->protos->on_device
      && n >= 1 && keep_max >= 1
      && (long long) n * keep_max <= SEG_BATCH_JOBS_MAX;
}

size_t
cnms_cuda_seg_batch_frame_bytes (void)
{
  return sizeof (seg_frame);
}

void
cnms_cuda_seg_batch_frame (const cnms_job *job, const cnms_det *recs,
    const int32_t *sel, int max_keep, void *dst)
{
  const cnms_heads_args *h = job->heads;
  seg_frame *f = (seg_frame *) dst;

  memset (f, 0, sizeof *f);
  f->recs = recs;
  f->sel = sel;
  f->tensor = h->t->data;
  f->protos = h->protos->data;
  f->n_anchors = (unsigned long long) h->shape.n_anchors;
  cnms_mask_axis_init (&f->ax, h->map.gain_x, h->map.pad_x,
      h->shape.proto_width, h->model_w);
  cnms_mask_axis_init (&f->ay, h->map.gain_y, h->map.pad_y,
      h->shape.proto_height, h->model_h);
  f->max_keep = max_keep;
}

cnms_status
cnms_cuda_seg_batch_reserve (cnms_backend_ctx *ctx, int n, int keep_max)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_cuda_seg_batch *g = &s->batch.seg;
  const size_t jobs = (size_t) n * (size_t) keep_max;

  g->keep_max = keep_max;
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &g->d_jobs,
          jobs * sizeof (cnms_mask_job), "batch mask jobs"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &g->h_table,
          jobs * sizeof (cnms_payload), "batch mask table"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &g->d_sums, sums_bytes (n),
          "batch mask totals"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &g->h_sums, sums_bytes (n),
          "batch mask totals"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &g->d_logits,
          mask_room (g->want_logits, (size_t) 1 << 14) * sizeof (float),
          "batch mask logits"));
  return cnms_cuda_reserve_pinned (ctx, &g->h_masks,
      mask_room (g->want_bytes, (size_t) 1 << 16), "batch masks");
}

cnms_status
cnms_cuda_seg_batch_enqueue (cnms_backend_ctx *ctx, const cnms_job *j0,
    const void *d_frames, int n)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_cuda_seg_batch *g = &s->batch.seg;
  const cnms_heads_args *h = j0->heads;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t plane = (size_t) h->shape.proto_height
      * (size_t) h->shape.proto_width;
  const seg_frame *frames = (const seg_frame *) d_frames;
  cnms_mask_sum *dsum = (cnms_mask_sum *) g->d_sums.p;
  seg_frame_sum *dfs = (seg_frame_sum *) ((char *) g->d_sums.p
      + CNMS_SUM_BYTES);
  cnms_mask_sum *hsum = (cnms_mask_sum *) g->h_sums.dev;
  seg_frame_sum *hfs = (seg_frame_sum *) ((char *) g->h_sums.dev
      + CNMS_SUM_BYTES);
  cnms_mask_job *djobs = (cnms_mask_job *) g->d_jobs.p;
  /* the grids of the last batch's jobs; the kernels stride over more */
  const long long rows = (long long) g->last_jobs + g->last_jobs / 4;
  const int gy = rows < 8 ? 8 : (rows < 65535 ? (int) rows : 65535);

  CNMS_CUDA_TRY (ctx, launch_behind (s, jobs_batch_kernel,
          dim3 ((unsigned) n), frames, g->keep_max, djobs,
          (cnms_payload *) g->h_table.dev, dfs), "batch mask jobs kernel");
  CNMS_CUDA_TRY (ctx, launch_behind (s, scan_batch_kernel, dim3 (1), dfs,
          n, (long long) g->h_masks.cap,
          (long long) (g->d_logits.cap / sizeof (float)), dsum, hsum, hfs),
      "batch mask scan kernel");
  CNMS_CUDA_TRY (ctx, launch_behind (s, logits_batch_kernel,
          job_grid (gy, g->last_win), frames, (const seg_frame_sum *) dfs,
          n, g->keep_max, (const cnms_mask_job *) djobs,
          (const cnms_mask_sum *) dsum, f16, h->shape.proto_width, plane,
          h->shape.n_coeffs, h->row0, (float *) g->d_logits.p),
      "batch mask logits kernel");
  CNMS_CUDA_TRY (ctx, launch_behind (s, pixels_batch_kernel,
          job_grid (gy, g->last_pix / CNMS_MASK_PIECE + 2), frames,
          (const seg_frame_sum *) dfs, n, g->keep_max,
          (const cnms_mask_job *) djobs, (const cnms_mask_sum *) dsum,
          (const float *) g->d_logits.p, (uint8_t *) g->h_masks.dev),
      "batch mask pixels kernel");
  g->made = true;
  return CNMS_OK;
}

cnms_status
cnms_cuda_seg_batch_done (cnms_backend_ctx *ctx, cnms_backend_out *outs,
    int n)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_cuda_seg_batch *g = &s->batch.seg;
  const cnms_mask_sum *sum = (const cnms_mask_sum *) g->h_sums.p;
  const seg_frame_sum *fs = (const seg_frame_sum *) ((const char *)
      g->h_sums.p + CNMS_SUM_BYTES);

  if (!g->made)
    return CNMS_OK;
  g->made = false;
  g->last_jobs = sum->n;
  g->last_win = sum->most_win;
  g->last_pix = sum->most_pix;
  if (sum->over) {
    /* made by the heads call, frame by frame; the room grows now, so
     * that the next batch allocates nothing (past CNMS_MASK_BYTES_MAX it
     * stays: those batches' masks come frame by frame) */
    if (sum->bytes > (long long) CNMS_MASK_BYTES_MAX
        || sum->logits > (long long) CNMS_MASK_BYTES_MAX)
      return CNMS_OK;
    g->want_bytes = (size_t) sum->bytes;
    g->want_logits = (size_t) sum->logits;
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &g->h_masks,
            mask_room (g->want_bytes, (size_t) 1 << 16), "batch masks"));
    return cnms_cuda_reserve_device (ctx, &g->d_logits,
        mask_room (g->want_logits, (size_t) 1 << 14) * sizeof (float),
        "batch mask logits");
  }
  for (int i = 0; i < n; i++) {
    /* the jobs of the records the frame kept (else the heads call makes
     * its masks) */
    if (fs[i].n != outs[i].n_dets)
      continue;
    outs[i].payload = (const uint8_t *) g->h_masks.p + fs[i].at_bytes;
    outs[i].payload_bytes = (size_t) fs[i].bytes;
    outs[i].payload_table = (const cnms_payload *) g->h_table.p
        + (size_t) i * (size_t) g->keep_max;
  }
  return CNMS_OK;
}
