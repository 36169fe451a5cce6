/* The engine's second phase for the counts that the cached resolve takes
 * (included by cuda_engine.cu; the others have cuda_prune.cuh): the
 * suppression bitmask of the first n sorted boxes in 64-box tiles, one
 * 64-bit word per (row box, column tile), the upper triangle only, in the
 * slab layout (cnms_slab_offset) that the cached resolve copies to shared
 * memory as it is. Bit j of row i is set when j > i and box i suppresses
 * box j by the geometry's test (cuda_geom.cuh: cnms_suppresses for boxes,
 * cnms_obb_suppresses for oriented boxes): the engine's one suppression
 * test, kept (earlier) box first, as the CPU backend calls it. The
 * diagonal word of row i (its own tile) also holds, below bit i, the
 * earlier boxes j of the tile that suppress i (the same test, j first):
 * the boxes that would remove i.
 *
 * A block takes a tile (or, when the grid has blocks to spare, half or a
 * quarter of its rows) at a time: its 64 column boxes are staged in shared
 * memory, and 4 threads (8, 16) test each row box against 16 columns each
 * (8, 4), their partial words meeting by shuffles. */
#ifndef CNMS_CUDA_MASK_CUH
#define CNMS_CUDA_MASK_CUH

#include "cuda_geom.cuh"

/* Threads per row box of a whole tile (CNMS_ENGINE_THREADS = 64 x this). */
#define CNMS_MASK_SPLIT 4

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

#include "cuda_mask_lanes.cuh"

template <int GEOM>
__device__ __forceinline__ void
cnms_build_mask (const cnms_engine_args &g, int n)
{
  typedef cnms_geom <GEOM> G;
  __shared__ typename G::tile s_tile;
  __shared__ int32_t s_cls[CNMS_TILE];
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = (long long) nb * (nb + 1) / 2;
  const int tid = threadIdx.x;
  /* a grid with blocks to spare splits each tile's rows in h parts (so
   * that a frame's few tiles spread over more multiprocessors): a row gets
   * CNMS_MASK_SPLIT h threads of 16 / h columns each */
  int h = 1;
  while (h < 4 && tiles * 2 * h <= gridDim.x)
    h <<= 1;
  const int lanes = CNMS_MASK_SPLIT * h;
  const int r = tid / lanes;
  const int part = tid % lanes;
  const int per = CNMS_TILE / lanes;
  const long long items = tiles * h;

  /* uniform per block: the loop has barriers */
  for (long long t = blockIdx.x; t < items; t += gridDim.x) {
    int row_blk, col_blk;
    cnms_triangle_tile (t / h, &row_blk, &col_blk);
    const int rr = (int) (t % h) * (CNMS_TILE / h) + r;
    const int i = row_blk * CNMS_TILE + rr;
    const int col_start = col_blk * CNMS_TILE;
    const int col_size = min (n - col_start, CNMS_TILE);
    uint64_t bits = 0;

    if (tid < col_size) {
      G::stage (s_tile, tid, G::load (g, col_start + tid));
      s_cls[tid] = g.cls[col_start + tid];
    }
    __syncthreads ();
    if (i < n) {
      const typename G::item b = G::load (g, i);
      const int32_t c = g.cls[i];
      /* row i's threshold: class-aware, only boxes of its class suppress
       * it or are suppressed by it, all under its class's */
      const float iou = g.a.agnostic ? g.a.iou :
          cnms_class_iou (&g.a.rules, c);
#pragma unroll G::MASK_UNROLL
      for (int q = 0; q < per; q++) {
        const int k = part * per + q;
        if (k >= col_size || col_start + k == i)
          continue;
        /* later boxes that i suppresses; in a diagonal tile also the
         * earlier ones that suppress i (the same test, the earlier box
         * first) */
        if (col_start + k > i ? G::row_suppresses (b, c, s_tile, k,
                s_cls[k], iou, g.a.agnostic)
            : col_blk == row_blk
            && G::col_suppresses (s_tile, k, s_cls[k], b, c, iou,
                g.a.agnostic))
          bits |= 1ull << k;
      }
    }
    /* the parts of a row are consecutive lanes */
    for (int off = 1; off < lanes; off <<= 1)
      bits |= __shfl_xor_sync (CNMS_FULL_WARP, bits, off);
    if (part == 0 && i < n)
      g.mask[cnms_slab_offset (row_blk, nb) + (long long) rr * (nb - row_blk)
          + (col_blk - row_blk)] = bits;
    /* the next tile overwrites the staged boxes */
    __syncthreads ();
  }
}

#endif /* CNMS_CUDA_MASK_CUH */
