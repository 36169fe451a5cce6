/* The large path's two-phase bitmask NMS over candidates already in
 * (score desc, index asc) order (cuda_sort.cu), for device-side counts
 * above the fast path's (cuda_fast.cu). Every kernel here returns at once
 * when the count is not above args.min_count.
 *
 * Phase 1 (nms_mask_kernel) follows torchvision's nms_kernel.cu: 64x64
 * tiles, the 64 column boxes staged in shared memory, one thread per row
 * box, one 64-bit word per (row box, column tile); blocks loop over the
 * tiles of the upper triangle that the device-side count needs. Bit j of
 * row i is set when j > i and cnms_box4_suppresses (i, j): the engine's
 * one suppression test.
 *
 * Phase 2 (nms_resolve_kernel) walks the greedy order in one block with
 * the "removed" bitmap in shared memory. When the upper triangle of the
 * mask fits in the kernel's dynamic shared memory (the device's opt-in
 * maximum, set once per device), the block first copies it there with
 * coalesced loads, and every later read is shared memory. Per 64-box tile
 * it takes the 64 diagonal words (loaded one tile ahead), resolves the
 * tile in registers (cnms_resolve_tile), writes the kept records, then
 * ORs the kept rows into the later words: threads fold their rows into a
 * register and do one shared atomicOr per word (OR is order-free, so the
 * bitmap is deterministic). It stops at max_keep. */
#include "cnms_cuda_device.cuh"

/* end2end: the sorted candidates are the detections; copy the first
 * min(n, max_keep) of them and fill the kept count. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
copy_top_kernel (const int32_t *__restrict__ hdr,
    const cnms_det *__restrict__ recs, const uint32_t *__restrict__ order,
    cnms_nms_args a, char *__restrict__ out)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;

  if (hdr[CNMS_HDR_COUNT] <= a.min_count)
    return;
  const int n = min (cnms_clamp_count (hdr[CNMS_HDR_N], a.cap), a.max_keep);
  if (k == 0)
    ((int32_t *) out)[CNMS_OUT_KEPT] = n;
  if (k < n)
    cnms_write_kept (out + CNMS_HEADER_BYTES, k, order[k], recs);
}

cudaError_t
cnms_cuda_copy_top (const cnms_det *d_recs, const uint32_t *d_order,
    const int32_t *d_hdr, const cnms_nms_args *a, void *d_out,
    cudaStream_t stream)
{
  copy_top_kernel <<<cnms_ceil_div (a->max_keep, CNMS_BLOCK), CNMS_BLOCK, 0,
      stream>>> (d_hdr, d_recs, d_order, *a, (char *) d_out);
  return cudaGetLastError ();
}

/* Tile t of the upper triangle, column by column: column c holds tiles
 * (0, c) .. (c, c), so t = c (c + 1) / 2 + row. */
__device__ __forceinline__ void
triangle_tile (long long t, int *row, int *col)
{
  long long c = (long long) ((sqrt (8.0 * (double) t + 1.0) - 1.0) / 2.0);

  while (c * (c + 1) / 2 > t)
    c--;
  while ((c + 1) * (c + 2) / 2 <= t)
    c++;
  *col = (int) c;
  *row = (int) (t - c * (c + 1) / 2);
}

/* Phase 1: a grid-stride loop over the tiles of the upper triangle that
 * the device-side n needs. Each tile writes mask[i * col_blocks + col]
 * for its row boxes i. */
__global__ void __launch_bounds__ (CNMS_TILE)
nms_mask_kernel (const float4 *__restrict__ boxes,
    const int32_t *__restrict__ cls, const int32_t *__restrict__ hdr,
    cnms_nms_args a, uint64_t *__restrict__ mask)
{
  __shared__ float4 s_box[CNMS_TILE];
  __shared__ float s_area[CNMS_TILE];
  __shared__ int32_t s_cls[CNMS_TILE];
  const int col_blocks = cnms_ceil_div (a.cap, CNMS_TILE);
  const int tid = threadIdx.x;

  if (hdr[CNMS_HDR_COUNT] <= a.min_count)
    return;
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], a.cap);
  const long long nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = nb * (nb + 1) / 2;

  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    int row_blk, col_blk;
    triangle_tile (t, &row_blk, &col_blk);
    const int row_start = row_blk * CNMS_TILE;
    const int col_start = col_blk * CNMS_TILE;
    const int row_size = min (n - row_start, CNMS_TILE);
    const int col_size = min (n - col_start, CNMS_TILE);

    if (tid < col_size) {
      const float4 b = boxes[col_start + tid];
      s_box[tid] = b;
      s_area[tid] = cnms_box4_area (b);
      s_cls[tid] = cls[col_start + tid];
    }
    __syncthreads ();

    if (tid < row_size) {
      const int i = row_start + tid;
      const float4 b = boxes[i];
      const float area = cnms_box4_area (b);
      const int32_t c = cls[i];
      const int start = (row_blk == col_blk) ? tid + 1 : 0;
      uint64_t bits = 0;

      for (int k = start; k < col_size; k++) {
        if (cnms_box4_suppresses (b, area, c, s_box[k], s_area[k], s_cls[k],
                a.iou, a.agnostic))
          bits |= 1ull << k;
      }
      mask[(size_t) i * col_blocks + col_blk] = bits;
    }
    /* the next tile overwrites the staged boxes */
    __syncthreads ();
  }
}

cudaError_t
cnms_cuda_nms_mask (const float4 *d_boxes, const int32_t *d_cls,
    const int32_t *d_hdr, const cnms_nms_args *a, int sms, uint64_t *d_mask,
    cudaStream_t stream)
{
  const long long col_blocks = cnms_ceil_div (a->cap, CNMS_TILE);
  const long long tiles = col_blocks * (col_blocks + 1) / 2;
  const long long most = (long long) sms * CNMS_MASK_BLOCKS_PER_SM;

  nms_mask_kernel <<<(int) (tiles < most ? tiles : most), CNMS_TILE, 0,
      stream>>> (d_boxes, d_cls, d_hdr, *a, d_mask);
  return cudaGetLastError ();
}

/* Sort value of sorted box pos, or 0 past the n boxes. */
__device__ __forceinline__ uint32_t
order_at (const uint32_t *__restrict__ order, int pos, int n)
{
  return pos < n ? order[pos] : 0;
}

/* Mask word w of sorted box row, or 0 past the n boxes. */
__device__ __forceinline__ uint64_t
mask_word (const uint64_t *__restrict__ mask, int row, int n, int col_blocks,
    int w)
{
  return row < n ? mask[(size_t) row * col_blocks + w] : 0;
}

/* Where phase 2 reads the later words of kept rows: the global mask, or
 * (cached) a shared-memory copy of the upper triangle of its n_blocks
 * tiles, tile row b as 64 rows of the words b .. n_blocks - 1. */
typedef struct {
  const uint64_t *g;            /* global mask, col_blocks words a row */
  const uint64_t *s;            /* shared copy, or NULL */
  int col_blocks;
  int n_blocks;
} resolve_src;

/* First word of tile row b in the shared copy of nb tile rows (and, for
 * b = nb, the words of all of it). */
__device__ __forceinline__ long long
slab_offset (int b, int nb)
{
  return 64LL * ((long long) b * nb - (long long) b * (b - 1) / 2);
}

/* Word w (w >= row / 64) of sorted box row (row < 64 n_blocks). */
__device__ __forceinline__ uint64_t
src_word (const resolve_src &m, int row, int w)
{
  if (m.s != NULL) {
    const int b = row / CNMS_TILE;
    return m.s[slab_offset (b, m.n_blocks) + (long long) (row - CNMS_TILE *
            b) * (m.n_blocks - b) + (w - b)];
  }
  return m.g[(size_t) row * m.col_blocks + w];
}

/* Copies the upper triangle of the mask of n boxes (nb tiles) into s
 * (slab_offset layout; rows past n as 0), with the whole block: eight
 * independent loads in flight per thread and step. */
__device__ __forceinline__ void
cache_mask (const uint64_t *__restrict__ mask, int n, int nb, int col_blocks,
    uint64_t *s)
{
  const long long total = slab_offset (nb, nb);
  const int threads = blockDim.x;
  int b = 0;                    /* tile row of this thread's element */

  for (long long e0 = threadIdx.x; e0 < total; e0 += 8LL * threads) {
    uint64_t v[8];
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const long long e = e0 + (long long) u * threads;
      v[u] = 0;
      if (e < total) {
        while (e >= slab_offset (b + 1, nb))
          b++;
        const int width = nb - b;
        const long long r = e - slab_offset (b, nb);
        const int row = CNMS_TILE * b + (int) (r / width);
        const int w = b + (int) (r % width);
        if (row < n)
          v[u] = mask[(size_t) row * col_blocks + w];
      }
    }
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const long long e = e0 + (long long) u * threads;
      if (e < total)
        s[e] = v[u];
    }
  }
}

/* ORs the mask rows of the n_kept boxes kept in tile blk (tile positions
 * in s_kept) into the later words blk + 1 .. n_blocks - 1 of s_removed.
 * Threads are split into groups of consecutive words (coalesced loads):
 * with L later words, each word gets blockDim / L groups that take every
 * groups-th kept row; with L >= blockDim, one group and each thread owns
 * words tid + k blockDim. */
__device__ __forceinline__ void
or_kept_rows (const resolve_src &m, int base, int blk, int n_blocks,
    const int *s_kept, int n_kept, uint64_t *s_removed)
{
  const int threads = blockDim.x;
  const int tid = threadIdx.x;
  const int later = n_blocks - blk - 1;

  if (later <= 0 || n_kept == 0)
    return;
  const bool wide = later >= threads;
  const int groups = wide ? 1 : threads / later;
  const int g = wide ? 0 : tid / later;

  if (g >= groups)
    return;
  for (int wo = wide ? tid : tid % later; wo < later; wo += threads) {
    const int w = blk + 1 + wo;
    uint64_t acc = 0;
    int kb = g;

    /* eight independent loads in flight per step */
    for (; kb + 7 * groups < n_kept; kb += 8 * groups) {
      uint64_t v[8];
#pragma unroll
      for (int u = 0; u < 8; u++)
        v[u] = src_word (m, base + s_kept[kb + u * groups], w);
#pragma unroll
      for (int u = 0; u < 8; u++)
        acc |= v[u];
    }
    for (; kb < n_kept; kb += groups)
      acc |= src_word (m, base + s_kept[kb], w);
    if (acc != 0)
      atomicOr ((unsigned long long *) &s_removed[w],
          (unsigned long long) acc);
  }
}

/* Phase 2: greedy resolve in a single block (see the file comment). The
 * dynamic shared memory holds the removed bitmap (ceil(n / 64) words),
 * then the cached mask when it fits in smem_words. */
__global__ void __launch_bounds__ (CNMS_RESOLVE_BLOCK, 1)
nms_resolve_kernel (const uint64_t *__restrict__ mask,
    const int32_t *__restrict__ hdr, cnms_nms_args a,
    const uint32_t *__restrict__ order, const cnms_det *__restrict__ recs,
    char *__restrict__ out, long long smem_words)
{
  extern __shared__ uint64_t s_dyn[];
  uint64_t *const s_removed = s_dyn;
  __shared__ uint64_t s_diag[CNMS_TILE];
  __shared__ int s_kept[CNMS_TILE];
  const int tid = threadIdx.x;

  /* uniform: the fast path took this count */
  if (hdr[CNMS_HDR_COUNT] <= a.min_count)
    return;
  const int col_blocks = cnms_ceil_div (a.cap, CNMS_TILE);
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], a.cap);
  const int n_blocks = cnms_ceil_div (n, CNMS_TILE);
  const int max_keep = a.max_keep;
  char *body = out + CNMS_HEADER_BYTES;
  /* diagonal word and sort value of box (tile base + tid), one tile
   * ahead */
  uint64_t diag = tid < CNMS_TILE ? mask_word (mask, tid, n, col_blocks, 0)
      : 0;
  uint32_t src = tid < CNMS_TILE ? order_at (order, tid, n) : 0;
  int kept = 0;

  /* uniform: the mask of the n boxes is cached when it fits behind the
   * removed bitmap */
  const bool cached = n_blocks + slab_offset (n_blocks, n_blocks)
      <= smem_words;
  const resolve_src src_m = { mask, cached ? s_dyn + n_blocks : NULL,
    col_blocks, n_blocks
  };

  for (int w = tid; w < n_blocks; w += blockDim.x)
    s_removed[w] = 0;
  if (cached)
    cache_mask (mask, n, n_blocks, col_blocks, s_dyn + n_blocks);

  for (int blk = 0; blk < n_blocks && kept < max_keep; blk++) {
    const int base = blk * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
    uint64_t next = 0;
    uint32_t next_src = 0;

    if (tid < CNMS_TILE) {
      s_diag[tid] = diag;
      /* the next tile's diagonal and sort values do not depend on this
       * tile: load them now */
      if (blk + 1 < n_blocks) {
        next = mask_word (mask, base + CNMS_TILE + tid, n, col_blocks,
            blk + 1);
        next_src = order_at (order, base + CNMS_TILE + tid, n);
      }
    }
    __syncthreads ();

    /* uniform: s_removed[blk] is final since the last barrier */
    uint64_t avail = ~s_removed[blk] & valid;
    if (avail != 0) {
      const uint64_t kept_bits = cnms_resolve_tile < 16 > (s_diag, avail,
          kept, max_keep);
      const int n_kept = __popcll (kept_bits);
      const bool mine = tid < CNMS_TILE && ((kept_bits >> tid) & 1);
      const int rank = mine ? kept + __popcll (kept_bits
          & ((1ull << (tid & (CNMS_TILE - 1))) - 1)) : 0;

      if (mine)
        s_kept[rank - kept] = tid;
      kept += n_kept;
      __syncthreads ();

      if (mine)
        cnms_write_kept (body, rank, src, recs);
      or_kept_rows (src_m, base, blk, n_blocks, s_kept, n_kept, s_removed);
    }
    /* s_removed, s_diag and s_kept are reused by the next tile */
    __syncthreads ();
    diag = next;
    src = next_src;
  }
  if (tid == 0)
    ((int32_t *) out)[CNMS_OUT_KEPT] = kept;
}

size_t
cnms_cuda_resolve_smem_min (int cap)
{
  return (size_t) cnms_ceil_div (cap, CNMS_TILE) * sizeof (uint64_t);
}

cudaError_t
cnms_cuda_resolve_allow_smem (size_t max_dynamic)
{
  return cudaFuncSetAttribute (nms_resolve_kernel,
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
}

cudaError_t
cnms_cuda_nms_resolve (const uint64_t *d_mask, const int32_t *d_hdr,
    const cnms_nms_args *a, const uint32_t *d_order, const cnms_det *d_recs,
    void *d_out, size_t smem_bytes, cudaStream_t stream)
{
  nms_resolve_kernel <<<1, CNMS_RESOLVE_BLOCK, smem_bytes, stream>>> (d_mask,
      d_hdr, *a, d_order, d_recs, (char *) d_out,
      (long long) (smem_bytes / sizeof (uint64_t)));
  return cudaGetLastError ();
}

cudaError_t
cnms_cuda_image_check (void)
{
  cudaFuncAttributes attr;

  /* fails with cudaErrorNoKernelImageForDevice (or an invalid-PTX error)
   * when no machine code or PTX of this build runs on the device */
  return cudaFuncGetAttributes (&attr, nms_resolve_kernel);
}
