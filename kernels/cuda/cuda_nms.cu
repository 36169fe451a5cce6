/* Two-phase bitmask NMS over candidates already in (score desc, index
 * asc) order.
 *
 * Phase 1 (nms_mask_kernel) follows torchvision's nms_kernel.cu: 64x64
 * tiles, the 64 column boxes staged in shared memory, one thread per row
 * box, one 64-bit word per (row box, column tile); blocks loop over the
 * tiles of the upper triangle that the device-side count needs. Bit j of row i
 * is set when j > i, the classes match (or class-agnostic) and
 * cnms_iou(i, j) > iou -- the CPU backend's exact test.
 *
 * The warp-ballot alternative (nms_mask_ballot_kernel, CNMS_PHASE1=ballot)
 * writes the same words from two 32-lane ballots each.
 *
 * Phase 2 (nms_resolve_kernel) walks the greedy order in one block with
 * the "removed" bitmap in shared memory. Per 64-box tile it takes the 64
 * diagonal words (loaded one tile ahead), resolves the tile serially in a
 * register (only kept boxes cost an iteration), writes the kept records,
 * then ORs the kept rows into the later words with one (kept row, word)
 * pair per thread and shared-memory atomicOr, so the loads of a tile are
 * all in flight together; a tile costs three barriers whatever it keeps.
 * It stops at max_keep. */
#include "cnms_cuda_device.cuh"

/* Dynamic shared memory a block may use without opting in. */
#define CNMS_DEFAULT_SMEM (48 * 1024)

/* After a CUB sort: keeps the first min(count, cap) sorted candidates
 * (boxes and classes for phase 1, see cnms_gather). */
__global__ void __launch_bounds__ (CNMS_BLOCK)
gather_kernel (cnms_gather g, const uint32_t *__restrict__ order)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t count = g.hdr[CNMS_HDR_COUNT];
  const int n = cnms_clamp_count (count, g.cap);

  if (k == 0)
    cnms_gather_headers (g, count, n);
  if (k < n)
    cnms_gather_one (g, k, order[k], count);
}

cudaError_t
cnms_cuda_gather (const cnms_gather *g, const uint32_t *d_order,
    cudaStream_t stream)
{
  gather_kernel <<<cnms_ceil_div (g->cap, CNMS_BLOCK), CNMS_BLOCK, 0,
      stream>>> (*g, d_order);
  return cudaGetLastError ();
}

/* end2end: the sorted candidates are the detections; copy the first
 * min(count, cap, max_keep) of them and fill the output header. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
copy_top_kernel (const int32_t *__restrict__ hdr,
    const cnms_det *__restrict__ recs, const uint32_t *__restrict__ order,
    int cap, int max_keep, int32_t *__restrict__ out_hdr,
    cnms_det *__restrict__ out)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t count = hdr[CNMS_HDR_COUNT];
  const int n = min (cnms_clamp_count (count, cap), max_keep);

  if (k == 0) {
    out_hdr[CNMS_OUT_KEPT] = n;
    out_hdr[CNMS_OUT_CANDIDATES] = count;
  }
  if (k < n) {
    const uint32_t pos = order[k];
    if (pos < (uint32_t) count)
      out[k] = recs[pos];
  }
}

cudaError_t
cnms_cuda_copy_top (const void *d_cand, const uint32_t *d_order, int cap,
    int max_keep, void *d_out, cudaStream_t stream)
{
  copy_top_kernel <<<cnms_ceil_div (max_keep, CNMS_BLOCK), CNMS_BLOCK, 0,
      stream>>> ((const int32_t *) d_cand,
      (const cnms_det *) ((const char *) d_cand + CNMS_HEADER_BYTES),
      d_order, cap, max_keep, (int32_t *) d_out,
      (cnms_det *) ((char *) d_out + CNMS_HEADER_BYTES));
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
 * the device-side count n needs (the grid is sized for the host-side
 * cap, so a small n costs a small grid's worth of work). Each tile
 * writes mask[i * col_blocks + col] for its row boxes i. */
__global__ void __launch_bounds__ (CNMS_TILE)
nms_mask_kernel (const float4 *__restrict__ boxes,
    const int32_t *__restrict__ cls, const int32_t *__restrict__ hdr,
    int cap, float iou, int class_agnostic, uint64_t *__restrict__ mask)
{
  __shared__ float s_box[CNMS_TILE][4];
  __shared__ float s_area[CNMS_TILE];
  __shared__ int32_t s_cls[CNMS_TILE];
  const int col_blocks = cnms_ceil_div (cap, CNMS_TILE);
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], cap);
  const long long nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = nb * (nb + 1) / 2;
  const int tid = threadIdx.x;

  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    int row_blk, col_blk;
    triangle_tile (t, &row_blk, &col_blk);
    const int row_start = row_blk * CNMS_TILE;
    const int col_start = col_blk * CNMS_TILE;
    const int row_size = min (n - row_start, CNMS_TILE);
    const int col_size = min (n - col_start, CNMS_TILE);

    if (tid < col_size) {
      const float4 b = boxes[col_start + tid];
      s_box[tid][0] = b.x;
      s_box[tid][1] = b.y;
      s_box[tid][2] = b.z;
      s_box[tid][3] = b.w;
      s_area[tid] = cnms_box_area (b.x, b.y, b.z, b.w);
      s_cls[tid] = cls[col_start + tid];
    }
    __syncthreads ();

    if (tid < row_size) {
      const int i = row_start + tid;
      const float4 b = boxes[i];
      const float a[4] = { b.x, b.y, b.z, b.w };
      const float area = cnms_box_area (b.x, b.y, b.z, b.w);
      const int32_t c = cls[i];
      const int start = (row_blk == col_blk) ? tid + 1 : 0;
      uint64_t bits = 0;

      for (int k = start; k < col_size; k++) {
        if ((class_agnostic || s_cls[k] == c)
            && cnms_iou (a, area, s_box[k], s_area[k]) > iou)
          bits |= 1ull << k;
      }
      mask[(size_t) i * col_blocks + col_blk] = bits;
    }
    /* the next tile overwrites the staged boxes */
    __syncthreads ();
  }
}

/* One vote of the ballot scheme: does row box i (box a, area, class c)
 * suppress column box j? The tile kernel's test, argument for argument,
 * so both schemes set the same bits. */
__device__ __forceinline__ bool
ballot_vote (const float4 *__restrict__ boxes,
    const int32_t *__restrict__ cls, int i, const float *a, float area,
    int32_t c, int j, int n, float iou, int class_agnostic)
{
  if (j <= i || j >= n)
    return false;
  if (!class_agnostic && cls[j] != c)
    return false;
  const float4 b = boxes[j];
  const float bb[4] = { b.x, b.y, b.z, b.w };
  return cnms_iou (a, area, bb, cnms_box_area (b.x, b.y, b.z, b.w)) > iou;
}

/* Phase 1, warp-ballot scheme: one warp per row box i (grid-stride over
 * the device-side count n). Word w of row i covers boxes 64 w .. 64 w + 63
 * as two 32-lane ballots, low half first; lanes with j <= i vote 0. The
 * row starts at word i / 64, the diagonal word phase 2 reads, and the
 * low ballot of that word is skipped when all of its boxes are <= i (the
 * word-aligned start (i + 1) & ~31 of 32-bit words). */
__global__ void __launch_bounds__ (CNMS_BALLOT_BLOCK)
nms_mask_ballot_kernel (const float4 *__restrict__ boxes,
    const int32_t *__restrict__ cls, const int32_t *__restrict__ hdr,
    int cap, float iou, int class_agnostic, uint64_t *__restrict__ mask)
{
  const int warps_per_block = CNMS_BALLOT_BLOCK / 32;
  const int col_blocks = cnms_ceil_div (cap, CNMS_TILE);
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], cap);
  const int n_words = cnms_ceil_div (n, CNMS_TILE);
  const int lane = threadIdx.x & 31;
  const int stride = gridDim.x * warps_per_block;

  for (int i = blockIdx.x * warps_per_block + (int) (threadIdx.x >> 5);
      i < n; i += stride) {
    const float4 b = boxes[i];
    const float a[4] = { b.x, b.y, b.z, b.w };
    const float area = cnms_box_area (b.x, b.y, b.z, b.w);
    const int32_t c = cls[i];
    uint64_t *row = mask + (size_t) i * col_blocks;

    for (int w = i / CNMS_TILE; w < n_words; w++) {
      const int base = w * CNMS_TILE;
      unsigned lo = 0, hi;

      /* warp-uniform: i and base are the same on every lane */
      if (base + 32 > i + 1)
        lo = __ballot_sync (CNMS_FULL_WARP, ballot_vote (boxes, cls, i, a,
                area, c, base + lane, n, iou, class_agnostic));
      hi = __ballot_sync (CNMS_FULL_WARP, ballot_vote (boxes, cls, i, a,
              area, c, base + 32 + lane, n, iou, class_agnostic));
      if (lane == 0)
        row[w] = ((uint64_t) hi << 32) | lo;
    }
  }
}

cudaError_t
cnms_cuda_nms_mask (cnms_phase1 scheme, const float4 *d_boxes,
    const int32_t *d_cls, const int32_t *d_hdr, int cap, float iou,
    int class_agnostic, int sms, uint64_t *d_mask, cudaStream_t stream)
{
  if (scheme == CNMS_PHASE1_BALLOT) {
    const int rows_per_block = CNMS_BALLOT_BLOCK / 32;
    const int want = cnms_ceil_div (cap, rows_per_block);
    const int most = sms * CNMS_BALLOT_BLOCKS_PER_SM;

    nms_mask_ballot_kernel <<<want < most ? want : most, CNMS_BALLOT_BLOCK, 0,
        stream>>> (d_boxes, d_cls, d_hdr, cap, iou, class_agnostic, d_mask);
  } else {
    const long long col_blocks = cnms_ceil_div (cap, CNMS_TILE);
    const long long tiles = col_blocks * (col_blocks + 1) / 2;
    const long long most = (long long) sms * CNMS_MASK_BLOCKS_PER_SM;

    nms_mask_kernel <<<(int) (tiles < most ? tiles : most), CNMS_TILE, 0,
        stream>>> (d_boxes, d_cls, d_hdr, cap, iou, class_agnostic, d_mask);
  }
  return cudaGetLastError ();
}

/* Writes kept box pos (sorted position) as output number rank: its
 * record when recs is given, else its input index as int64. */
__device__ __forceinline__ void
write_kept (int rank, int pos, const uint32_t *order, const cnms_det *recs,
    char *out_body)
{
  const uint32_t src = order[pos];

  if (recs != NULL)
    ((cnms_det *) out_body)[rank] = recs[src];
  else
    ((int64_t *) out_body)[rank] = (int64_t) src;
}

/* Mask word w of sorted box row, or 0 past the n boxes. */
__device__ __forceinline__ uint64_t
mask_word (const uint64_t *__restrict__ mask, int row, int n, int col_blocks,
    int w)
{
  return row < n ? mask[(size_t) row * col_blocks + w] : 0;
}

/* Phase 2: greedy resolve in a single block (see the file comment).
 * s_removed holds one bit per candidate, ceil(n / 64) words. */
__global__ void __launch_bounds__ (CNMS_RESOLVE_BLOCK)
nms_resolve_kernel (const uint64_t *__restrict__ mask,
    const int32_t *__restrict__ hdr, int cap, int max_keep,
    const uint32_t *__restrict__ order, const cnms_det *__restrict__ recs,
    char *__restrict__ out)
{
  extern __shared__ uint64_t s_removed[];
  __shared__ uint64_t s_diag[CNMS_TILE];
  __shared__ int s_kept[CNMS_TILE];
  const int col_blocks = cnms_ceil_div (cap, CNMS_TILE);
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], cap);
  const int n_blocks = cnms_ceil_div (n, CNMS_TILE);
  const int tid = threadIdx.x;
  char *body = out + CNMS_HEADER_BYTES;
  /* diagonal word of row (tile base + tid), one tile ahead */
  uint64_t diag = tid < CNMS_TILE ? mask_word (mask, tid, n, col_blocks, 0)
      : 0;
  int kept = 0;

  for (int w = tid; w < n_blocks; w += blockDim.x)
    s_removed[w] = 0;

  for (int blk = 0; blk < n_blocks && kept < max_keep; blk++) {
    const int base = blk * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
    uint64_t next = 0;

    if (tid < CNMS_TILE) {
      s_diag[tid] = diag;
      /* the next tile's diagonal does not depend on this one: load it now */
      if (blk + 1 < n_blocks)
        next = mask_word (mask, base + CNMS_TILE + tid, n, col_blocks,
            blk + 1);
    }
    __syncthreads ();

    /* uniform: s_removed[blk] is final since the last barrier */
    uint64_t avail = ~s_removed[blk] & valid;
    if (avail != 0) {
      uint64_t kept_bits = 0;
      int k = kept;

      /* every thread resolves the tile redundantly: no broadcast needed */
      while (avail != 0 && k < max_keep) {
        const int b = __ffsll ((long long) avail) - 1;
        kept_bits |= 1ull << b;
        k++;
        avail &= ~(s_diag[b] | (1ull << b));
      }
      if (tid < CNMS_TILE && ((kept_bits >> tid) & 1)) {
        const int rank = __popcll (kept_bits & ((1ull << tid) - 1));
        write_kept (kept + rank, base + tid, order, recs, body);
        s_kept[rank] = tid;
      }
      kept = k;
      __syncthreads ();

      /* OR the kept rows into the later words: one (kept row, word) pair
       * per thread, so that all the loads are in flight at once */
      const int later = n_blocks - blk - 1;
      const int pairs = __popcll (kept_bits) * later;
      for (int q = tid; q < pairs; q += blockDim.x) {
        const int kb = q / later;
        const int w = blk + 1 + (q - kb * later);
        const uint64_t m = mask[(size_t) (base + s_kept[kb]) * col_blocks + w];
        if (m != 0)
          atomicOr ((unsigned long long *) &s_removed[w],
              (unsigned long long) m);
      }
    }
    /* s_removed, s_diag and s_kept are reused by the next tile */
    __syncthreads ();
    diag = next;
  }
  if (tid == 0)
    ((int32_t *) out)[CNMS_OUT_KEPT] = kept;
}

size_t
cnms_cuda_resolve_smem_bytes (int cap)
{
  return (size_t) cnms_ceil_div (cap, CNMS_TILE) * sizeof (uint64_t);
}

cudaError_t
cnms_cuda_resolve_allow_smem (size_t bytes)
{
  if (bytes <= CNMS_DEFAULT_SMEM)
    return cudaSuccess;
  return cudaFuncSetAttribute (nms_resolve_kernel,
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) bytes);
}

cudaError_t
cnms_cuda_nms_resolve (const uint64_t *d_mask, const int32_t *d_hdr, int cap,
    int max_keep, const uint32_t *d_order, const void *d_cand, void *d_out,
    size_t smem_bytes, cudaStream_t stream)
{
  const cnms_det *recs = d_cand != NULL ?
      (const cnms_det *) ((const char *) d_cand + CNMS_HEADER_BYTES) : NULL;

  nms_resolve_kernel <<<1, CNMS_RESOLVE_BLOCK, smem_bytes, stream>>> (d_mask,
      d_hdr, cap, max_keep, d_order, recs, (char *) d_out);
  return cudaGetLastError ();
}
