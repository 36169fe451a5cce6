/* The cached mask phase of lanes (included by cuda_mask.cuh): the same
 * words as cnms_build_mask, with the pair loop turned inside out. A
 * thread owns a row lane and per column lanes of the tile; it walks the
 * rows i of the proposals once, reading its row lane's x[i] once and
 * adding |x_row[i] - x_col[i]| to each column's own float sum while i
 * lies in that pair's shared rows. Each pair's sum still runs over its
 * rows in order from 0.0f, so every sum, and every bit, is the one
 * cnms_lane_close gives; the per-column sums are independent, so their
 * loads overlap instead of waiting one after another. The test is
 * symmetric (the same rows, |a - b| = |b - a|), so in a diagonal tile
 * the earlier lanes that would remove row i are the same pairs. */
#ifndef CNMS_CUDA_MASK_LANES_CUH
#define CNMS_CUDA_MASK_LANES_CUH

#include "cuda_geom.cuh"

/* Column lanes per thread at most (a whole tile's row split in
 * CNMS_MASK_SPLIT parts). */
#define CNMS_LANE_COLS (CNMS_TILE / CNMS_MASK_SPLIT)

__device__ __forceinline__ void
cnms_build_mask_lanes (const cnms_engine_args &g, int n)
{
  typedef cnms_geom <CNMS_GEOM_LANE> G;
  __shared__ G::tile s_tile;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = (long long) nb * (nb + 1) / 2;
  const int tid = threadIdx.x;
  int h = 1;
  while (h < 4 && tiles * 2 * h <= gridDim.x)
    h <<= 1;
  const int lanes = CNMS_MASK_SPLIT * h;
  const int r = tid / lanes;
  const int part = tid % lanes;
  const int per = CNMS_TILE / lanes;
  const long long items = tiles * h;
  const float distance = g.a.iou;

  for (long long t = blockIdx.x; t < items; t += gridDim.x) {
    int row_blk, col_blk;
    cnms_triangle_tile (t / h, &row_blk, &col_blk);
    const int rr = (int) (t % h) * (CNMS_TILE / h) + r;
    const int i = row_blk * CNMS_TILE + rr;
    const int col_start = col_blk * CNMS_TILE;
    const int col_size = min (n - col_start, CNMS_TILE);
    uint64_t bits = 0;

    if (tid < col_size)
      G::stage (s_tile, tid, G::load (g, col_start + tid));
    __syncthreads ();
    if (i < n) {
      const G::item a = G::load (g, i);
      float dist[CNMS_LANE_COLS];
      int32_t lo[CNMS_LANE_COLS], hi[CNMS_LANE_COLS];
      int32_t first = INT32_MAX, last = -1;

      /* each pair's shared rows [lo, hi], as cnms_lane_close: none
       * (hi < lo) for the lane itself and past the tile */
#pragma unroll
      for (int q = 0; q < CNMS_LANE_COLS; q++) {
        const int k = part * per + q;

        dist[q] = 0.0f;
        lo[q] = 0;
        hi[q] = -1;
        if (q < per && k < col_size && col_start + k != i) {
          int32_t e = a.e < s_tile.e[k] ? a.e : s_tile.e[k];

          lo[q] = a.s > s_tile.s[k] ? a.s : s_tile.s[k];
          hi[q] = e > a.n ? a.n : e;
          if (hi[q] >= lo[q]) {
            first = min (first, lo[q]);
            last = max (last, hi[q]);
          }
        }
      }
      for (int32_t row = first; row <= last; row++) {
        const float xa = a.x[row];
#pragma unroll
        for (int q = 0; q < CNMS_LANE_COLS; q++) {
          if (row >= lo[q] && row <= hi[q]) {
            const float xb = s_tile.x[part * per + q][row];
            dist[q] = cnms_fadd (dist[q], xa < xb ? cnms_fsub (xb, xa)
                : cnms_fsub (xa, xb));
          }
        }
      }
#pragma unroll
      for (int q = 0; q < CNMS_LANE_COLS; q++)
        if (hi[q] >= lo[q] && dist[q] < cnms_fmul (distance,
                (float) (hi[q] - lo[q] + 1)))
          bits |= 1ull << (part * per + q);
    }
    for (int off = 1; off < lanes; off <<= 1)
      bits |= __shfl_xor_sync (CNMS_FULL_WARP, bits, off);
    if (part == 0 && i < n)
      g.mask[cnms_slab_offset (row_blk, nb) + (long long) rr * (nb - row_blk)
          + (col_blk - row_blk)] = bits;
    __syncthreads ();
  }
}

#endif /* CNMS_CUDA_MASK_LANES_CUH */
