/* The cached mask phase of lanes (included by cuda_mask.cuh): the same
 * words as cnms_build_mask, with the pair loop turned inside out. A
 * block takes a tile's rows (or a half or a quarter of them) against its
 * 64 column lanes and walks the proposal rows i in chunks of
 * CNMS_LANE_CHUNK: the chunk's x of its row and column lanes are staged in
 * shared memory by the whole block at once, then each thread adds
 * |x_row[i] - x_col[i]| to the float sums of its pairs whose shared rows
 * hold i. Each pair's sum runs over its rows in order from 0.0f, so every
 * sum, and every bit, is the one cnms_lane_close gives. The test is
 * symmetric (the same rows, |a - b| = |b - a|), so in a diagonal tile
 * the earlier lanes that would remove row i are the same pairs. */
#ifndef CNMS_CUDA_MASK_LANES_CUH
#define CNMS_CUDA_MASK_LANES_CUH

#include "cuda_geom.cuh"

/* Proposal rows staged at a time (shared memory: 2 x 64 x (this + 1)
 * floats beside the tile) and column lanes a thread sums at once. */
#define CNMS_LANE_CHUNK 4
#define CNMS_LANE_GROUP 4

__device__ __forceinline__ void
cnms_build_mask_lanes (const cnms_engine_args &g, int n)
{
  typedef cnms_geom <CNMS_GEOM_LANE> G;
  __shared__ G::tile s_tile;
  __shared__ const float *s_rowx[CNMS_TILE];
  __shared__ float s_xc[CNMS_TILE][CNMS_LANE_CHUNK + 1];
  __shared__ float s_xr[CNMS_TILE][CNMS_LANE_CHUNK + 1];
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
  const int rows_here = CNMS_TILE / h;
  const long long items = tiles * h;
  const float distance = g.a.iou;
  const int last_row = g.src.lane_n;

  for (long long t = blockIdx.x; t < items; t += gridDim.x) {
    int row_blk, col_blk;
    cnms_triangle_tile (t / h, &row_blk, &col_blk);
    const int row0 = row_blk * CNMS_TILE + (int) (t % h) * rows_here;
    const int rr = (int) (t % h) * rows_here + r;
    const int i = row0 + r;
    const int col_start = col_blk * CNMS_TILE;
    const int col_size = min (n - col_start, CNMS_TILE);
    const int row_size = min (n - row0, rows_here);
    uint64_t bits = 0;
    G::item a;

    if (tid < col_size)
      G::stage (s_tile, tid, G::load (g, col_start + tid));
    if (tid < row_size)
      s_rowx[tid] = G::load (g, row0 + tid).x;
    a.s = 0;
    a.e = -1;
    a.n = last_row;
    if (i < n)
      a = G::load (g, i);
    __syncthreads ();

    for (int g0 = 0; g0 < per; g0 += CNMS_LANE_GROUP) {
      float dist[CNMS_LANE_GROUP];
      int32_t lo[CNMS_LANE_GROUP], hi[CNMS_LANE_GROUP];

      /* each pair's shared rows [lo, hi], as cnms_lane_close: none
       * (hi < lo) for the lane itself and past the tile */
#pragma unroll
      for (int q = 0; q < CNMS_LANE_GROUP; q++) {
        const int k = part * per + g0 + q;

        dist[q] = 0.0f;
        lo[q] = 0;
        hi[q] = -1;
        if (i < n && g0 + q < per && k < col_size && col_start + k != i) {
          const int32_t e = a.e < s_tile.e[k] ? a.e : s_tile.e[k];

          lo[q] = a.s > s_tile.s[k] ? a.s : s_tile.s[k];
          hi[q] = e > a.n ? a.n : e;
        }
      }
      /* uniform over the block: every thread reaches the barriers */
      for (int c0 = 0; c0 <= last_row; c0 += CNMS_LANE_CHUNK) {
        for (int e = tid; e < CNMS_TILE * CNMS_LANE_CHUNK; e += blockDim.x) {
          const int k = e / CNMS_LANE_CHUNK, j = e % CNMS_LANE_CHUNK;
          const bool in = c0 + j <= last_row;

          s_xc[k][j] = in && k < col_size ? s_tile.x[k][c0 + j] : 0.0f;
          s_xr[k][j] = in && k < row_size ? s_rowx[k][c0 + j] : 0.0f;
        }
        __syncthreads ();
#pragma unroll
        for (int j = 0; j < CNMS_LANE_CHUNK; j++) {
          const int row = c0 + j;
          const float xa = s_xr[r][j];

#pragma unroll
          for (int q = 0; q < CNMS_LANE_GROUP; q++) {
            if (row >= lo[q] && row <= hi[q]) {
              const float xb = s_xc[part * per + g0 + q][j];
              dist[q] = cnms_fadd (dist[q], xa < xb ? cnms_fsub (xb, xa)
                  : cnms_fsub (xa, xb));
            }
          }
        }
        __syncthreads ();
      }
#pragma unroll
      for (int q = 0; q < CNMS_LANE_GROUP; q++)
        if (hi[q] >= lo[q] && dist[q] < cnms_fmul (distance,
                (float) (hi[q] - lo[q] + 1)))
          bits |= 1ull << (part * per + g0 + q);
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
