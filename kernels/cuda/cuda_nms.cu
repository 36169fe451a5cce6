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
 * Phase 2 (nms_resolve_kernel) walks the greedy order in one block with
 * the "removed" bitmap in shared memory. Per 64-box tile it loads the 64
 * diagonal words once, resolves the tile serially in a register (only
 * kept boxes cost an iteration), writes the kept records, then ORs the
 * kept rows into the later words, each thread owning fixed words, so a
 * tile costs two barriers whatever it keeps. It stops at max_keep. */
#include "cnms_cuda_device.cuh"

/* Dynamic shared memory a block may use without opting in. */
#define CNMS_DEFAULT_SMEM (48 * 1024)

/* Keeps the first min(count, cap) sorted candidates: boxes and classes
 * for phase 1, n in the header, the raw count in the output header. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
gather_dets_kernel (int32_t *__restrict__ hdr,
    const cnms_det *__restrict__ recs, const uint32_t *__restrict__ order,
    int cap, float4 *__restrict__ boxes, int32_t *__restrict__ cls,
    int32_t *__restrict__ out_hdr)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t count = hdr[CNMS_HDR_COUNT];
  const int n = cnms_clamp_count (count, cap);

  if (k == 0) {
    hdr[CNMS_HDR_N] = n;
    out_hdr[CNMS_OUT_CANDIDATES] = count;
  }
  if (k < n) {
    const uint32_t pos = order[k];
    if (pos < (uint32_t) count) {
      const cnms_det r = recs[pos];
      boxes[k] = make_float4 (r.x1, r.y1, r.x2, r.y2);
      cls[k] = r.class_id;
    }
  }
}

cudaError_t
cnms_cuda_gather_dets (void *d_cand, const uint32_t *d_order, int cap,
    float4 *d_boxes, int32_t *d_cls, int32_t *d_out_header,
    cudaStream_t stream)
{
  gather_dets_kernel <<<cnms_ceil_div (cap, CNMS_BLOCK), CNMS_BLOCK, 0,
      stream>>> ((int32_t *) d_cand,
      (const cnms_det *) ((const char *) d_cand + CNMS_HEADER_BYTES),
      d_order, cap, d_boxes, d_cls, d_out_header);
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

cudaError_t
cnms_cuda_nms_mask (const float4 *d_boxes, const int32_t *d_cls,
    const int32_t *d_hdr, int cap, float iou, int class_agnostic,
    int max_blocks, uint64_t *d_mask, cudaStream_t stream)
{
  const long long col_blocks = cnms_ceil_div (cap, CNMS_TILE);
  const long long tiles = col_blocks * (col_blocks + 1) / 2;
  const int grid = (int) (tiles < max_blocks ? tiles : max_blocks);

  nms_mask_kernel <<<grid, CNMS_TILE, 0, stream>>> (d_boxes, d_cls, d_hdr,
      cap, iou, class_agnostic, d_mask);
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
  const int col_blocks = cnms_ceil_div (cap, CNMS_TILE);
  const int n = cnms_clamp_count (hdr[CNMS_HDR_N], cap);
  const int n_blocks = cnms_ceil_div (n, CNMS_TILE);
  const int tid = threadIdx.x;
  char *body = out + CNMS_HEADER_BYTES;
  int kept = 0;

  for (int w = tid; w < n_blocks; w += blockDim.x)
    s_removed[w] = 0;
  __syncthreads ();

  for (int blk = 0; blk < n_blocks && kept < max_keep; blk++) {
    const int base = blk * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
    uint64_t avail = ~s_removed[blk] & valid;
    uint64_t kept_bits = 0;
    int k = kept;

    /* a tile removed entirely costs nothing (uniform branch) */
    if (avail == 0)
      continue;
    if (tid < size)
      s_diag[tid] = mask[(size_t) (base + tid) * col_blocks + blk];
    __syncthreads ();

    /* every thread resolves the tile redundantly: no broadcast needed */
    while (avail != 0 && k < max_keep) {
      const int b = __ffsll ((long long) avail) - 1;
      kept_bits |= 1ull << b;
      k++;
      avail &= ~(s_diag[b] | (1ull << b));
    }

    if (tid < CNMS_TILE && ((kept_bits >> tid) & 1))
      write_kept (kept + __popcll (kept_bits & ((1ull << tid) - 1)),
          base + tid, order, recs, body);
    kept = k;

    for (int w = blk + 1 + tid; w < n_blocks; w += blockDim.x) {
      uint64_t acc = s_removed[w];
      uint64_t bits = kept_bits;
      while (bits != 0) {
        const int b = __ffsll ((long long) bits) - 1;
        acc |= mask[(size_t) (base + b) * col_blocks + w];
        bits &= bits - 1;
      }
      s_removed[w] = acc;
    }
    __syncthreads ();
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
