/* The masks' work that a frame's heads (cuda_heads.cu) and a batch's
 * (cuda_heads_batch.cu) share: a mask's job, and the device functions
 * that make a block's jobs, the logits of a job's window and the bytes of
 * its rectangle, so that both paths do the same operations and give the
 * same bits (cnms_heads.h's arithmetic). Included by those two files
 * only. */
#ifndef CNMS_CUDA_HEADS_CUH
#define CNMS_CUDA_HEADS_CUH

#include <string.h>

#include <utility>

#include "cnms_cuda.cuh"
#include "cnms_cuda_device.cuh"
#include "cnms_heads.h"

/* One mask's work. */
typedef struct {
  int x, y, w, h;               /* the pixel rectangle (cnms_payload) */
  int wx, wy, ww, wh;           /* the window of prototype pixels */
  long long out;                /* its bytes' offset */
  long long lg;                 /* its window's offset in the logits */
  int anchor;
  int pad_;
} cnms_mask_job;

/* The totals of the masks' jobs made on the device (jobs_kernel; of a
 * batch, its scan), ahead of the jobs in d_hjobs and h_hjobs. */
typedef struct {
  long long bytes;              /* all masks' bytes */
  long long logits;             /* all windows' logits */
  int n;                        /* kept records */
  int most_win, most_pix;       /* the largest window and rectangle */
  int over;                     /* bytes or logits over the room: the
                                 * kernels wrote nothing */
} cnms_mask_sum;

/* Bytes before the jobs: the totals, rounded up to keep the jobs
 * aligned. */
#define CNMS_SUM_BYTES 64

/* Coefficients staged in shared memory per block, at most this many at
 * a time. */
#define CNMS_COEF_CHUNK 256

/* Output bytes a pixels kernel's thread makes: one 16-byte piece. */
#define CNMS_MASK_PIECE 16

/* The window of prototype pixels that job j's rectangle samples (none
 * when the rectangle is empty). */
static inline __host__ __device__ void
mask_window (const cnms_mask_axis *ax, const cnms_mask_axis *ay,
    cnms_mask_job *j)
{
  int lo, hi, unused;
  float w0, w1;

  j->wx = j->wy = j->ww = j->wh = 0;
  if (j->w <= 0 || j->h <= 0)
    return;
  cnms_mask_sample (ax, j->x, &lo, &unused, &w0, &w1);
  cnms_mask_sample (ax, j->x + j->w - 1, &unused, &hi, &w0, &w1);
  j->wx = lo;
  j->ww = hi - lo + 1;
  cnms_mask_sample (ay, j->y, &lo, &unused, &w0, &w1);
  cnms_mask_sample (ay, j->y + j->h - 1, &unused, &hi, &w0, &w1);
  j->wy = lo;
  j->wh = hi - lo + 1;
}

/* How many kept records: n, or when sel (an engine's kept_dev) is given
 * its count clamped to [0, n]. */
static __device__ __forceinline__ int
kept_count (const int32_t *sel, int n)
{
  if (sel == NULL)
    return n;
  const int c = sel[0];
  return c < 0 ? 0 : (c < n ? c : n);
}

/* The masks' jobs of an engine's kept records (recs[sel[1 + r]] for
 * r < sel[0], at most max_keep), by the whole block of CNMS_BLOCK
 * threads: each record's rectangle (cnms_mask_rect of its box, as the
 * front end's table) and window, its bytes' and logits' offsets by a
 * prefix sum in record order, into djobs and, for the host's check, into
 * hjobs (as jobs) or htab (as the front end's table: cnms_payload), each
 * NULL or not; the totals (over 0) into *sum, in thread 0. */
static __device__ __forceinline__ void
mask_jobs_block (const cnms_det *recs, const int32_t *sel, int max_keep,
    const cnms_mask_axis &ax, const cnms_mask_axis &ay, cnms_mask_job *djobs,
    cnms_mask_job *hjobs, cnms_payload *htab, cnms_mask_sum *sum)
{
  __shared__ long long sb[CNMS_BLOCK], sl[CNMS_BLOCK];
  __shared__ long long base_b, base_l;
  __shared__ int most_w, most_p;
  const int t = threadIdx.x;
  const int kept = kept_count (sel, max_keep);

  if (t == 0) {
    base_b = base_l = 0;
    most_w = most_p = 0;
  }
  __syncthreads ();
  for (int c = 0; c < kept; c += CNMS_BLOCK) {
    const int i = c + t;
    cnms_mask_job j;
    long long pix = 0, win = 0;

    memset (&j, 0, sizeof j);
    if (i < kept) {
      const cnms_det d = recs[sel[1 + i]];

      cnms_mask_rect (d.x1, d.y1, d.x2, d.y2, &j.x, &j.y, &j.w, &j.h);
      mask_window (&ax, &ay, &j);
      j.anchor = d.anchor;
      pix = (long long) j.w * j.h;
      win = (long long) j.ww * j.wh;
    }
    sb[t] = pix;
    sl[t] = win;
    __syncthreads ();
    /* inclusive scan of the block's counts */
    for (int off = 1; off < CNMS_BLOCK; off <<= 1) {
      const long long vb = t >= off ? sb[t - off] : 0;
      const long long vl = t >= off ? sl[t - off] : 0;

      __syncthreads ();
      sb[t] += vb;
      sl[t] += vl;
      __syncthreads ();
    }
    if (i < kept) {
      j.out = base_b + sb[t] - pix;
      j.lg = base_l + sl[t] - win;
      djobs[i] = j;
      if (hjobs != NULL)
        hjobs[i] = j;
      if (htab != NULL) {
        cnms_payload e;

        memset (&e, 0, sizeof e);
        e.offset = (size_t) j.out;
        e.x = j.x;
        e.y = j.y;
        e.width = j.w;
        e.height = j.h;
        htab[i] = e;
      }
      atomicMax (&most_w, (int) win);
      atomicMax (&most_p, (int) pix);
    }
    __syncthreads ();
    if (t == CNMS_BLOCK - 1) {
      base_b += sb[t];
      base_l += sl[t];
    }
    __syncthreads ();
  }
  if (t == 0) {
    sum->bytes = base_b;
    sum->logits = base_l;
    sum->n = kept;
    sum->most_win = most_w;
    sum->most_pix = most_p;
    sum->over = 0;
  }
}

/* The logits of job j's window, by the whole block (j the same in every
 * thread; blockIdx.x and gridDim.x stride its pixels), at logits + j.lg:
 * each a dot product over m ascending of the coefficients, which come
 * from the device tensor (rows row0 .., strided by n_anchors, at the
 * job's anchor) or, when tensor is NULL, from coefs (the job's mc), with
 * the prototypes at the pixel. c: CNMS_COEF_CHUNK floats of shared
 * memory. */
static __device__ __forceinline__ void
mask_logits_job (const cnms_mask_job &j, const void *protos, int f16,
    int wp, size_t plane, int mc, const void *tensor, int row0,
    size_t n_anchors, const float *coefs, float *logits, float *c)
{
  const int count = j.ww * j.wh;

  for (int base = blockIdx.x * blockDim.x; base < count;
      base += gridDim.x * blockDim.x) {
    const int p = base + threadIdx.x;
    const bool on = p < count;
    const size_t idx = on ? (size_t) (j.wy + p / j.ww) * wp
        + (size_t) (j.wx + p % j.ww) : 0;
    float l = 0.0f;

    for (int m0 = 0; m0 < mc; m0 += CNMS_COEF_CHUNK) {
      const int mn = mc - m0 < CNMS_COEF_CHUNK ? mc - m0 : CNMS_COEF_CHUNK;

      __syncthreads ();
      for (int t = threadIdx.x; t < mn; t += blockDim.x)
        c[t] = tensor != NULL ? cnms_tensor_value (tensor, f16,
            ((size_t) row0 + m0 + t) * n_anchors + (size_t) j.anchor)
            : coefs[m0 + t];
      __syncthreads ();
      if (on)
        for (int m = 0; m < mn; m++)
          l = cnms_fadd (l, cnms_fmul (c[m], cnms_tensor_value (protos,
                      f16, (size_t) (m0 + m) * plane + idx)));
    }
    if (on)
      logits[j.lg + p] = l;
  }
}

/* Pixel (col, row) of job j's rectangle: bilinear logit > 0 (lg: the
 * job's window of logits). */
static __device__ __forceinline__ uint8_t
mask_pixel (const cnms_mask_job &j, const cnms_mask_axis &ax,
    const cnms_mask_axis &ay, const float *lg, int col, int row)
{
  int x0, x1, y0, y1;
  float wx0, wx1, wy0, wy1;
  const float *r0, *r1;

  cnms_mask_sample (&ax, j.x + col, &x0, &x1, &wx0, &wx1);
  cnms_mask_sample (&ay, j.y + row, &y0, &y1, &wy0, &wy1);
  r0 = lg + (size_t) (y0 - j.wy) * j.ww;
  r1 = lg + (size_t) (y1 - j.wy) * j.ww;
  x0 -= j.wx;
  x1 -= j.wx;
  return cnms_mask_bilinear (r0[x0], r0[x1], r1[x0], r1[x1], wx0, wx1, wy0,
      wy1) > 0.0f;
}

/* The bytes of job j's rectangle at out + j.out, mask_pixel each
 * (logits: where j.lg counts from), by the whole block (blockIdx.x and
 * gridDim.x stride its pieces). out may be mapped host memory, where every
 * store crosses the bus: a thread makes the job's bytes of one 16-byte
 * aligned piece of out and stores the piece whole when it lies inside the
 * job (out is 16-byte aligned), byte by byte at the job's two ends (the
 * neighbours' bytes there are theirs). */
static __device__ __forceinline__ void
mask_pixels_job (const cnms_mask_job &j, const cnms_mask_axis &ax,
    const cnms_mask_axis &ay, const float *logits, uint8_t *out)
{
  const long long start = j.out, end = j.out + (long long) j.w * j.h;
  const long long first = start / CNMS_MASK_PIECE;
  const long long pieces = (end + CNMS_MASK_PIECE - 1) / CNMS_MASK_PIECE
      - first;
  const float *lg = logits + j.lg;

  if (end <= start)
    return;
  for (long long c = blockIdx.x * blockDim.x + threadIdx.x; c < pieces;
      c += (long long) gridDim.x * blockDim.x) {
    const long long b0 = (first + c) * CNMS_MASK_PIECE;
    const long long p0 = b0 > start ? b0 - start : 0;
    const int u0 = (int) (start + p0 - b0);
    int col = (int) (p0 % j.w), row = (int) (p0 / j.w);
    union {
      uint4 q;
      uint8_t b[CNMS_MASK_PIECE];
    } v;
    uint8_t *const vb = v.b;

    v.q = make_uint4 (0, 0, 0, 0);
    for (int u = u0; u < CNMS_MASK_PIECE && b0 + u < end; u++) {
      vb[u] = mask_pixel (j, ax, ay, lg, col, row);
      if (++col == j.w) {
        col = 0;
        row++;
      }
    }
    if (b0 >= start && b0 + CNMS_MASK_PIECE <= end)
      *(uint4 *) (out + b0) = v.q;
    else
      for (int u = u0; u < CNMS_MASK_PIECE && b0 + u < end; u++)
        out[b0 + u] = vb[u];
  }
}

/* Grid of a kernel over n jobs of at most most items each. */
static inline dim3
job_grid (int n, int most)
{
  int bx = cnms_ceil_div (most > 0 ? most : 1, CNMS_BLOCK);

  return dim3 (bx < 1024 ? bx : 1024, n < 65535 ? n : 65535, 1);
}

/* The room of the masks made behind the engine, grown to a quarter more
 * than v. */
static inline size_t
mask_room (size_t v, size_t least)
{
  const size_t r = v + v / 4;

  return r < least ? least : r;
}

/* Launches kernel behind the stream's last kernel on grid x CNMS_BLOCK
 * threads, programmatically dependent where the device has it (s->pdl):
 * scheduled before that one ends, waiting for it in cnms_pdl_wait. */
template <typename... P, typename... A>
static cudaError_t
launch_behind (const cnms_cuda_priv *s, void (*kernel) (P...), dim3 grid,
    A &&... args)
{
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr = {};

  cfg.gridDim = grid;
  cfg.blockDim = dim3 (CNMS_BLOCK);
  cfg.stream = s->stream;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = s->pdl ? 1 : 0;
  return cudaLaunchKernelEx (&cfg, kernel, std::forward <A> (args)...);
}

#endif /* CNMS_CUDA_HEADS_CUH */
