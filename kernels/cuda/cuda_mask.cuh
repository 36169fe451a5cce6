/* The engine's second phase (included by cuda_engine.cu): the suppression
 * bitmask of the first n sorted boxes, as torchvision's nms_kernel.cu
 * lays it out: 64-box tiles, one 64-bit word per (row box, column tile),
 * nb = ceil(n / 64) words per row, the upper triangle only. Bit j of row
 * i is set when j > i and cnms_box4_suppresses (i, j): the engine's one
 * suppression test, kept (earlier) box first, as the CPU backend calls
 * it. Every thread of the grid takes (tile, row) tasks in turn; the 64
 * rows of a tile read the same column box at each step (one broadcast
 * load from L1). */
#ifndef CNMS_CUDA_MASK_CUH
#define CNMS_CUDA_MASK_CUH

#include "cnms_cuda_device.cuh"

/* Tile t of the upper triangle, column by column: column c holds tiles
 * (0, c) .. (c, c), so t = c (c + 1) / 2 + row. */
__device__ __forceinline__ void
cnms_triangle_tile (long long t, int *row, int *col)
{
  long long c = (long long) ((sqrt (8.0 * (double) t + 1.0) - 1.0) / 2.0);

  while (c * (c + 1) / 2 > t)
    c--;
  while ((c + 1) * (c + 2) / 2 <= t)
    c++;
  *col = (int) c;
  *row = (int) (t - c * (c + 1) / 2);
}

__device__ __forceinline__ void
cnms_build_mask (const cnms_engine_args &g, int n)
{
  const long long nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tasks = nb * (nb + 1) / 2 * CNMS_TILE;
  const long long step = (long long) gridDim.x * blockDim.x;

  for (long long task = (long long) blockIdx.x * blockDim.x + threadIdx.x;
      task < tasks; task += step) {
    int row_blk, col_blk;
    cnms_triangle_tile (task / CNMS_TILE, &row_blk, &col_blk);
    const int r = (int) (task % CNMS_TILE);
    const int i = row_blk * CNMS_TILE + r;
    const int col_start = col_blk * CNMS_TILE;
    const int col_size = min (n - col_start, CNMS_TILE);
    uint64_t bits = 0;

    if (i >= n)
      continue;
    const float4 b = g.boxes[i];
    const float area = cnms_box4_area (b);
    const int32_t c = g.cls[i];
    for (int k = row_blk == col_blk ? r + 1 : 0; k < col_size; k++) {
      const float4 o = g.boxes[col_start + k];
      if (cnms_box4_suppresses (b, area, c, o, cnms_box4_area (o),
              g.cls[col_start + k], g.a.iou, g.a.agnostic))
        bits |= 1ull << k;
    }
    g.mask[(size_t) i * nb + col_blk] = bits;
  }
}

#endif /* CNMS_CUDA_MASK_CUH */
