/* Internal to the CUDA backend: the per-context state, the buffers it
 * grows, error mapping, and the C++ launchers of each pipeline stage (one
 * file per stage). Every launcher enqueues on the stream it is given and
 * returns the cudaError_t of the launch. */
#ifndef CNMS_CUDA_CUH
#define CNMS_CUDA_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cnms_internal.h"

/* Threads per block of the grid-wide element-wise kernels. */
#define CNMS_BLOCK 256
/* Boxes per NMS tile: one bit per box in a 64-bit mask word. */
#define CNMS_TILE 64
/* Resident phase 1 blocks per SM aimed at (64-thread tile blocks). */
#define CNMS_MASK_BLOCKS_PER_SM 16
/* Warp-ballot phase 1: threads per block (one warp per row box) and
 * resident blocks per SM aimed at. */
#define CNMS_BALLOT_BLOCK 256
#define CNMS_BALLOT_BLOCKS_PER_SM 8
/* Single-block sort: threads, and the most slots it sorts (a power of
 * two; 8 bytes of shared memory each, so fewer where the device has less). */
#define CNMS_BLOCK_SORT_THREADS 1024
#define CNMS_BLOCK_SORT_MAX 16384
/* Threads of the single-block resolve kernel (phase 2). */
#define CNMS_RESOLVE_BLOCK 512
/* Header of every count-header buffer: one record wide, so that the
 * records behind it stay 32-byte aligned. */
#define CNMS_HEADER_BYTES 32

/* Header fields (int32 words). */
#define CNMS_HDR_COUNT 0        /* decode: candidates found (atomic) */
#define CNMS_HDR_N 1            /* candidates taken after the cap */

/* Output header fields (int32 words). */
#define CNMS_OUT_KEPT 0         /* kept records behind the header */
#define CNMS_OUT_CANDIDATES 1   /* candidates found before the cap */

/* a / b rounded up, for a >= 0, b > 0; no overflow near INT_MAX. */
static inline __host__ __device__ int
cnms_ceil_div (int a, int b)
{
  return a / b + (a % b != 0);
}

/* Phase 1 scheme (CNMS_PHASE1=tile|ballot, read once per context). Both
 * write the same mask, bit for bit. */
typedef enum {
  CNMS_PHASE1_TILE = 0,         /* torchvision's 64x64 shared-memory tile */
  CNMS_PHASE1_BALLOT = 1        /* one warp per row box, two ballots a word */
} cnms_phase1;
/* The scheme used when CNMS_PHASE1 is unset: the faster one measured by
 * tests/gpu/bench_phase1 on the H200. */
#define CNMS_PHASE1_DEFAULT CNMS_PHASE1_TILE

/* Candidate sort (CNMS_SORT=auto|cub, read once per context). auto: the
 * single-block sort of the device-side count when the slot count fits
 * in it, CUB over every slot otherwise; cub: always CUB. Same order. */
typedef enum {
  CNMS_SORT_AUTO = 0,
  CNMS_SORT_CUB = 1
} cnms_sort_mode;

/* A device or pinned buffer owned by a context; it only ever grows. */
typedef struct {
  void *p;
  size_t cap;                   /* bytes */
} cnms_cuda_buf;

typedef struct {
  int device;
  cudaStream_t stream;
  size_t smem_optin;            /* max dynamic shared memory per block */
  int sms;                      /* multiprocessors: phase 1 grid sizes */
  cnms_phase1 phase1;
  cnms_sort_mode sort_mode;
  int block_sort_max;           /* most slots the single-block sort takes */
  cudaEvent_t ev_start, ev_stop;  /* GPU timing, made on first use */
  bool events;
  size_t resolve_smem_set;      /* dynamic smem the resolve kernel may use */

  cnms_cuda_buf d_in;           /* uploaded tensor / nms input arrays */
  cnms_cuda_buf d_cand;         /* [header | cnms_det x N] decode output */
  cnms_cuda_buf d_keys[2];      /* sort keys, double buffer */
  cnms_cuda_buf d_vals[2];      /* sort values (candidate position), double buffer */
  cnms_cuda_buf d_sort_tmp;     /* CUB temp storage */
  cnms_cuda_buf d_boxes;        /* float4 x cap, in sorted order */
  cnms_cuda_buf d_cls;          /* int32 x cap, in sorted order */
  cnms_cuda_buf d_mask;         /* uint64 x cap x col_blocks */
  cnms_cuda_buf d_out;          /* [header | records or int64 indices] */

  cnms_cuda_buf h_stage;        /* pinned upload staging */
  cnms_cuda_buf h_out;          /* pinned download */
} cnms_cuda_priv;

/* Makes dev current for the calling thread for one scope and restores
 * the previous current device after it, so that the library never leaves
 * the application's thread on another device. */
struct cnms_device_scope {
  int prev;
  bool changed;
  cudaError_t err;
  explicit cnms_device_scope (int dev) : prev (-1), changed (false),
      err (cudaSuccess)
  {
    err = cudaGetDevice (&prev);
    if (err == cudaSuccess && prev != dev) {
      err = cudaSetDevice (dev);
      changed = err == cudaSuccess;
    }
  }
  ~cnms_device_scope ()
  {
    if (changed)
      (void) cudaSetDevice (prev);
  }
  cnms_device_scope (const cnms_device_scope &) = delete;
  cnms_device_scope & operator= (const cnms_device_scope &) = delete;
};

/* cuda_context.cu */
cnms_status cnms_cuda_create (cnms_backend_ctx *ctx, int device_id);
void cnms_cuda_destroy (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_error (cnms_backend_ctx *ctx, cudaError_t e, const char *what);
cnms_status cnms_cuda_reserve_device (cnms_backend_ctx *ctx, cnms_cuda_buf *b,
    size_t bytes, const char *what);
cnms_status cnms_cuda_reserve_pinned (cnms_backend_ctx *ctx, cnms_cuda_buf *b,
    size_t bytes, const char *what);
/* Lets the resolve kernel use smem_bytes of dynamic shared memory. */
cnms_status cnms_cuda_resolve_smem (cnms_backend_ctx *ctx, size_t smem_bytes);
/* GPU timing of one call (ctx->timing): begin records the start event
 * (events made on first use), end the stop event, both on the stream;
 * read, after the stream synchronisation, sets ctx->last_gpu_us (-1 when
 * timing is off). */
cnms_status cnms_cuda_timing_begin (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_timing_end (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_timing_read (cnms_backend_ctx *ctx);

/* Checks a CUDA call; on failure records the message and returns. */
#define CNMS_CUDA_TRY(ctx, call, what)                                      \
  do {                                                                      \
    cudaError_t e_ = (call);                                                \
    if (e_ != cudaSuccess)                                                  \
      return cnms_cuda_error ((ctx), e_, (what));                           \
  } while (0)

/* Checks a cnms_status; returns it on failure. */
#define CNMS_TRY(call)                                                      \
  do {                                                                      \
    cnms_status s_ = (call);                                                \
    if (s_ != CNMS_OK)                                                      \
      return s_;                                                            \
  } while (0)

/* cuda_decode.cu: zeroes the header count (and with fill_keys sets every
 * key to the "empty" key, for a sort over all slots), then decodes every
 * anchor of d_tensor into the count-header buffer d_cand, writing the
 * compact sort key and the record position of each candidate into
 * keys/vals. abits: bits of the anchor half of the compact key
 * (cnms_cuda_key_bits). */
cudaError_t cnms_cuda_decode (const void *d_tensor, cnms_dtype dtype,
    const cnms_shape *shape, const cnms_map *map, float score_threshold,
    int abits, bool fill_keys, void *d_cand, uint64_t *d_keys,
    uint32_t *d_vals, cudaStream_t stream);

/* cuda_sort.cu */
/* Bits needed for an index in [0, n): the anchor half of a compact key. */
int cnms_cuda_key_bits (int n);
/* Compact key: cnms_sort_key's order in 32 + abits bits. */
static inline __host__ __device__ uint64_t
cnms_cuda_compact_key (float score, uint32_t index, int abits)
{
  uint64_t k = cnms_sort_key (score, index);
  return ((k >> 32) << abits) | (k & 0xffffffffu);
}
/* Zeroes the count in hdr and fills keys[0..n) with the key that sorts
 * last, so that n pairs can be sorted whatever the device-side count
 * (n = 0: only the count). */
cudaError_t cnms_cuda_sort_prepare (int32_t *d_hdr, uint64_t *d_keys, int n,
    cudaStream_t stream);
/* Temp storage bytes for sorting n key/value pairs. */
cudaError_t cnms_cuda_sort_temp_bytes (int n, int abits, size_t *bytes);
/* Sorts n pairs ascending by key; *which (0/1) tells which of the double
 * buffers holds the result afterwards. */
cudaError_t cnms_cuda_sort (void *d_temp, size_t temp_bytes,
    uint64_t *d_keys[2], uint32_t *d_vals[2], int n, int abits, int *which,
    cudaStream_t stream);

/* What happens to the sorted candidates before phase 1: the first
 * n = min(count, cap) of them have their boxes and classes gathered in
 * sorted order, n goes into hdr[CNMS_HDR_N] and the raw count into
 * out_hdr[CNMS_OUT_CANDIDATES]. */
typedef struct {
  int32_t *hdr;                 /* count header (count in, n out) */
  const cnms_det *recs;         /* decode: records at the sorted values */
  const float4 *boxes_in;       /* plain NMS (recs NULL): input boxes */
  const int32_t *classes_in;    /* plain NMS: input classes, or NULL */
  int cap;
  float4 *boxes;                /* NULL: nothing to gather (end2end) */
  int32_t *cls;
  int32_t *out_hdr;             /* NULL: no output header to fill */
} cnms_gather;

/* Sorts the first min(count, n) slots of keys/vals in one block, writes
 * the sorted values back into vals[0..count) and gathers as g says; the
 * count is read on the device, so the cost follows it. For n up to
 * block_sort_max and abits <= 16 (key and value share a 64-bit word). */
cudaError_t cnms_cuda_block_sort (const uint64_t *d_keys, uint32_t *d_vals,
    int n, int abits, const cnms_gather *g, cudaStream_t stream);
/* Lets the single-block sort use 8 x max_slots bytes of shared memory. */
cudaError_t cnms_cuda_block_sort_allow (int max_slots);

/* cuda_nms.cu */
/* Gathers after a CUB sort: d_order holds the sorted values. */
cudaError_t cnms_cuda_gather (const cnms_gather *g, const uint32_t *d_order,
    cudaStream_t stream);
/* end2end: no NMS; copies the first min(count, cap, max_keep) sorted
 * records of d_cand behind the output header. */
cudaError_t cnms_cuda_copy_top (const void *d_cand, const uint32_t *d_order,
    int cap, int max_keep, void *d_out, cudaStream_t stream);
/* Phase 1: the suppression bitmask of the first n = hdr[CNMS_HDR_N]
 * boxes (at most cap), ceil(cap / 64) words per row, by either scheme;
 * the grid is sized for sms multiprocessors. */
cudaError_t cnms_cuda_nms_mask (cnms_phase1 scheme, const float4 *d_boxes,
    const int32_t *d_cls, const int32_t *d_hdr, int cap, float iou,
    int class_agnostic, int sms, uint64_t *d_mask, cudaStream_t stream);
/* Phase 2: greedy resolve in one block; writes the kept records (when
 * d_cand != NULL: d_cand records through d_order) or the kept input
 * indices (d_order values as int64) behind the output header. */
cudaError_t cnms_cuda_nms_resolve (const uint64_t *d_mask,
    const int32_t *d_hdr, int cap, int max_keep, const uint32_t *d_order,
    const void *d_cand, void *d_out, size_t smem_bytes, cudaStream_t stream);
/* Dynamic shared memory the resolve kernel needs for cap boxes. */
size_t cnms_cuda_resolve_smem_bytes (int cap);
/* Raises the resolve kernel's dynamic shared memory limit to bytes. */
cudaError_t cnms_cuda_resolve_allow_smem (size_t bytes);

/* cuda_filter.cu: plain NMS input. Keeps the boxes with finite
 * coordinates and score: their keys and input indices go to keys/vals
 * (count in d_hdr; fill_keys as for cnms_cuda_decode). */
cudaError_t cnms_cuda_filter (const float *d_boxes, const float *d_scores,
    int n, int abits, bool fill_keys, int32_t *d_hdr, uint64_t *d_keys,
    uint32_t *d_vals, cudaStream_t stream);

#endif /* CNMS_CUDA_CUH */
