/* The cached mask phase of lanes (included by cuda_mask.cuh): the same
 * words as cnms_build_mask, with the pair loop turned inside out. A block
 * takes a tile's rows (or a half, a quarter or an eighth of them: h parts)
 * against its 64 column lanes. Each thread owns a row lane and 16 / h
 * column lanes of the tile (column part, part + 4 h, ...); every pair's
 * shared rows [lo, hi] are found first, and the block's span of them. The
 * x of the span, of the 64 column lanes and of the block's row lanes, are
 * then staged in the block's dynamic shared memory (free between the
 * sort and the resolve) by the whole block at once, many loads in flight,
 * in chunks when the span does not fit; then each thread walks the rows i
 * of the span once, reading its row lane's x[i] and adding |x_row[i] -
 * x_col[i]| to each of its pairs' own float sum while i lies in that
 * pair's shared rows. Each pair's sum still runs over its rows in order
 * from 0.0f, so every sum, and every bit, is the one cnms_lane_close
 * gives. The test is symmetric (the same rows, |a - b| = |b - a|), so in
 * a diagonal tile the earlier lanes that would remove row i are the same
 * pairs. */
#ifndef CNMS_CUDA_MASK_LANES_CUH
#define CNMS_CUDA_MASK_LANES_CUH

#include "cuda_geom.cuh"

/* Row parts of a tile at most (a row's 4 h threads stay in one warp). */
#define CNMS_LANE_PARTS 8

/* Loads in flight a thread while staging. */
#define CNMS_LANE_STAGE_LOADS 24
#define CNMS_LANE_QUAD_LOADS 12

/* A lane of the mask: its x (element 0 is row 0's, of the element type
 * the mask phase was called with) and its rows. */
struct cnms_lane_ref {
  const void *x;
  int32_t s, e;
};

/* What an item of the mask holds in shared memory: its 64 column lanes
 * and its row lanes, and the span of their shared rows. */
struct cnms_lane_tile {
  const void *colx[CNMS_TILE];
  int32_t s[CNMS_TILE];
  int32_t e[CNMS_TILE];
  const void *rowx[CNMS_TILE];
  int span[2];
};

/* The lanes sorted into the engine's buffers (the sort phase's gather:
 * g.lanes, and the rows as floats in g.src.lanes_in): lane i. */
struct cnms_lane_sorted {
  const cnms_engine_args &g;
  __device__ cnms_lane_ref operator() (int i) const
  {
    const cnms_geom <CNMS_GEOM_LANE>::item it =
        cnms_geom <CNMS_GEOM_LANE>::load (g, i);
    cnms_lane_ref r;

    r.x = it.x;
    r.s = it.s;
    r.e = it.e;
    return r;
  }
};

/* Stages rows c0 .. c0 + len - 1 of the x of two groups of lanes into
 * s_x, a lane's rows pitch floats apart, each lane's rows one after
 * another (the loads of a warp contiguous), LOADS loads of a thread in
 * flight: lane k < na of the first group (x at xa[k]) at row offa + k, lane
 * k < nb of the second (xb[k]) at row offb + k, of which those from
 * nb_valid on stage nothing. The elements are loaded as they are and
 * converted once all are in. */
template <int LOADS, typename T>
__device__ __forceinline__ void
cnms_lane_stage (float *s_x, int pitch, int c0, int len,
    const void *const *xa, int na, int offa, const void *const *xb, int nb,
    int nb_valid, int offb)
{
  const int total = (na + nb) * len;

  for (int base = threadIdx.x; base < total;
      base += LOADS * CNMS_ENGINE_THREADS) {
    T v[LOADS];
    int to[LOADS];

#pragma unroll
    for (int u = 0; u < LOADS; u++) {
      const int e = base + u * CNMS_ENGINE_THREADS;

      v[u] = 0;
      to[u] = -1;
      if (e < total) {
        const int k = e / len, j = e - k * len;

        if (k < na) {
          v[u] = ((const T *) xa[k])[c0 + j];
          to[u] = (offa + k) * pitch + j;
        } else if (k - na < nb_valid) {
          v[u] = ((const T *) xb[k - na])[c0 + j];
          to[u] = (offb + k - na) * pitch + j;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < LOADS; u++)
      if (to[u] >= 0)
        s_x[to[u]] = cnms_elem_float (v[u]);
  }
}

/* The work items t = blockIdx.x, + gridDim.x, ... of the mask of the n
 * lanes that the sort phase gathered, in tiles of H row parts; s_x: the
 * staging area, xf floats. */
template <int H>
__device__ __forceinline__ void
cnms_mask_lanes_items (const cnms_engine_args &g, int n, cnms_lane_tile &st,
    float *s_x, long long xf)
{
  const cnms_lane_sorted lane { g };
  /* threads a row lane, row lanes an item, column lanes a thread */
  constexpr int LANES = CNMS_MASK_SPLIT * H;
  constexpr int ROWS = CNMS_TILE / H;
  constexpr int PER = CNMS_TILE / LANES;
  static_assert (ROWS * LANES == CNMS_ENGINE_THREADS, "a thread a pair group");
  static_assert (LANES <= 32, "a row lane's threads in one warp");
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = (long long) nb * (nb + 1) / 2;
  const long long items = tiles * H;
  const int tid = threadIdx.x;
  const int r = tid / LANES;
  const int part = tid % LANES;
  const float distance = g.a.iou;
  const int last_row = g.src.lane_n;
  /* the most rows a chunk stages: an odd pitch (rows + 1 or + 2) for the
   * 64 column and ROWS row lanes, so that lanes apart by one are apart by
   * one bank */
  long long room = xf / (CNMS_TILE + ROWS) - 2;
  const int max_chunk = room < 1 ? 1 : (room > last_row + 1 ? last_row + 1 :
      (int) room);

  for (long long t = blockIdx.x; t < items; t += gridDim.x) {
    int row_blk, col_blk;
    cnms_triangle_tile (t / H, &row_blk, &col_blk);
    const int rr = (int) (t % H) * ROWS + r;
    const int row0 = row_blk * CNMS_TILE + (int) (t % H) * ROWS;
    const int i = row0 + r;
    const int col_start = col_blk * CNMS_TILE;
    const int col_size = min (n - col_start, CNMS_TILE);
    const int row_size = min (n - row0, ROWS);
    float dist[PER];
    int32_t lo[PER], hi[PER];
    int32_t first = INT32_MAX, last = -1;
    uint64_t bits = 0;

    /* uniform: no row lane of this part (the last tile's) */
    if (row_size <= 0)
      continue;
    if (tid == 0) {
      st.span[0] = INT32_MAX;
      st.span[1] = -1;
    }
    if (tid < col_size) {
      const cnms_lane_ref c = lane (col_start + tid);
      st.colx[tid] = c.x;
      st.s[tid] = c.s;
      st.e[tid] = c.e;
    }
    if (tid < row_size)
      st.rowx[tid] = lane (row0 + tid).x;
    __syncthreads ();

    /* each pair's shared rows [lo, hi], as cnms_lane_close: none (hi <
     * lo) for the lane itself and past the tile */
    {
      cnms_lane_ref a;

      a.s = 0;
      a.e = -1;
      if (i < n)
        a = lane (i);
#pragma unroll
      for (int q = 0; q < PER; q++) {
        const int k = part + q * LANES;

        dist[q] = 0.0f;
        lo[q] = 0;
        hi[q] = -1;
        if (i < n && k < col_size && col_start + k != i) {
          const int32_t e = a.e < st.e[k] ? a.e : st.e[k];

          lo[q] = a.s > st.s[k] ? a.s : st.s[k];
          hi[q] = e > last_row ? last_row : e;
          if (hi[q] >= lo[q]) {
            first = min (first, lo[q]);
            last = max (last, hi[q]);
          }
        }
      }
    }
    if (last >= first) {
      atomicMin (&st.span[0], first);
      atomicMax (&st.span[1], last);
    }
    __syncthreads ();

    /* uniform over the block: every thread reaches the barriers */
    const int span_lo = st.span[0], span_hi = st.span[1];
    const int chunk = min (max_chunk, span_hi - span_lo + 1);
    const int pitch = (chunk + 1) | 1;
    float *const s_xc = s_x;
    float *const s_xr = s_x + (size_t) CNMS_TILE * pitch;

    for (int c0 = span_lo; c0 <= span_hi; c0 += chunk) {
      const int len = min (chunk, span_hi - c0 + 1);

      /* the chunk's x: column lanes, then row lanes */
      cnms_lane_stage < CNMS_LANE_STAGE_LOADS, float > (s_x, pitch, c0, len,
          st.colx, col_size, 0, st.rowx, row_size, row_size, CNMS_TILE);
      __syncthreads ();
      {
        /* this thread's rows of the chunk */
        const int j0 = first > c0 ? first - c0 : 0;
        const int j1 = last - c0 + 1 < len ? last - c0 + 1 : len;

#pragma unroll 4
        for (int j = j0; j < j1; j++) {
          const int row = c0 + j;
          const float xa = s_xr[r * pitch + j];

#pragma unroll
          for (int q = 0; q < PER; q++) {
            const float xb = s_xc[(part + q * LANES) * pitch + j];
            const float d = cnms_fadd (dist[q], xa < xb ? cnms_fsub (xb, xa)
                : cnms_fsub (xa, xb));
            dist[q] = row >= lo[q] && row <= hi[q] ? d : dist[q];
          }
        }
      }
      /* the next chunk overwrites the stage */
      __syncthreads ();
    }
#pragma unroll
    for (int q = 0; q < PER; q++)
      if (hi[q] >= lo[q] && dist[q] < cnms_fmul (distance,
              (float) (hi[q] - lo[q] + 1)))
        bits |= 1ull << (part + q * LANES);
#pragma unroll
    for (int off = 1; off < LANES; off <<= 1)
      bits |= __shfl_xor_sync (CNMS_FULL_WARP, bits, off);
    if (part == 0 && i < n)
      g.mask[cnms_slab_offset (row_blk, nb) + (long long) rr * (nb - row_blk)
          + (col_blk - row_blk)] = bits;
    /* the next item restages the tile */
    __syncthreads ();
  }
}

/* The mask of the n lanes that the sort phase gathered; s: the block's
 * dynamic shared memory (g.smem_words words), which the engine does not
 * use between the sort and the resolve: the item's tile, then the
 * staging room. */
__device__ __forceinline__ void
cnms_build_mask_lanes (const cnms_engine_args &g, int n, uint64_t *s)
{
  constexpr int TILE_WORDS = (sizeof (cnms_lane_tile) + 7) / 8;
  cnms_lane_tile &st = *(cnms_lane_tile *) s;
  float *const s_x = (float *) (s + TILE_WORDS);
  const long long xf = (g.smem_words - TILE_WORDS) * 2;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const long long tiles = (long long) nb * (nb + 1) / 2;
  /* a grid with blocks to spare splits each tile's rows in h parts (so
   * that a frame's few tiles spread over more multiprocessors) */
  int h = 1;

  while (h < CNMS_LANE_PARTS && tiles * 2 * h <= gridDim.x)
    h <<= 1;
  switch (h) {
    case 8:
      cnms_mask_lanes_items < 8 > (g, n, st, s_x, xf);
      break;
    case 4:
      cnms_mask_lanes_items < 4 > (g, n, st, s_x, xf);
      break;
    case 2:
      cnms_mask_lanes_items < 2 > (g, n, st, s_x, xf);
      break;
    default:
      cnms_mask_lanes_items < 1 > (g, n, st, s_x, xf);
      break;
  }
}

/* Lanes a quarter of a tile: the block-local front's items are 16 row
 * lanes against 16 column lanes. */
#define CNMS_LANE_QUAD 16

/* The block-local front's mask (cuda_lane_local.cuh) of n lanes, lane i
 * given by lane (i) (its x of type T): the same words as
 * cnms_mask_lanes_items, in items of a quarter of a tile's rows against a
 * quarter of its columns (16 items a tile of the upper triangle, so that
 * a frame's few tiles spread over many multiprocessors and each block
 * stages only 32 lanes' x). A thread takes one pair: row lane tid / 16,
 * column lane tid % 16; it walks its pair's own shared rows in order from
 * 0.0f, as cnms_lane_close does, over the staged x. A warp's ballot holds
 * two rows' 16 bits, stored as the 16-bit quarter of each row's mask word
 * that the item's columns make (every quarter of every word is written).
 * s: words words of the block's dynamic shared memory. */
template <typename T, typename F>
__device__ __forceinline__ void
cnms_mask_lanes_quads (const cnms_engine_args &g, int n, F lane, uint64_t *s,
    long long words)
{
  constexpr int Q = CNMS_LANE_QUAD;
  constexpr int PARTS = CNMS_TILE / Q;
  constexpr int TILE_WORDS = (sizeof (cnms_lane_tile) + 7) / 8;
  static_assert (Q * Q == CNMS_ENGINE_THREADS, "a thread a pair");
  cnms_lane_tile &st = *(cnms_lane_tile *) s;
  float *const s_x = (float *) (s + TILE_WORDS);
  const long long xf = (words - TILE_WORDS) * 2;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const long long items = (long long) nb * (nb + 1) / 2 * PARTS * PARTS;
  const int tid = threadIdx.x;
  const int r = tid / Q, c = tid % Q;
  const float distance = g.a.iou;
  const int last_row = g.src.lane_n;
  /* the most rows a chunk stages: an odd pitch for the 2 Q lanes */
  const long long room = xf / (2 * Q) - 2;
  const int max_chunk = room < 1 ? 1 : (room > last_row + 1 ? last_row + 1 :
      (int) room);

  for (long long t = blockIdx.x; t < items; t += gridDim.x) {
    int row_blk, col_blk;
    cnms_triangle_tile (t / (PARTS * PARTS), &row_blk, &col_blk);
    const int q = (int) (t % (PARTS * PARTS));
    const int rp = q / PARTS, cp = q % PARTS;
    const int row0 = row_blk * CNMS_TILE + rp * Q;
    const int col0 = col_blk * CNMS_TILE + cp * Q;
    const int row_size = min (n - row0, Q);
    const int col_size = min (n - col0, Q);
    const int i = row0 + r, k = col0 + c;
    int32_t lo = 0, hi = -1;
    float dist = 0.0f;

    /* uniform: no row lane of this part (the last tile's) */
    if (row_size <= 0)
      continue;
    if (tid == 0) {
      st.span[0] = INT32_MAX;
      st.span[1] = -1;
    }
    if (tid < row_size) {
      const cnms_lane_ref a = lane (row0 + tid);
      st.rowx[tid] = a.x;
      st.s[tid] = a.s;
      st.e[tid] = a.e;
    } else if (tid >= Q && tid - Q < col_size) {
      const cnms_lane_ref b = lane (col0 + tid - Q);
      st.colx[tid - Q] = b.x;
      st.s[tid] = b.s;
      st.e[tid] = b.e;
    }
    __syncthreads ();
    /* the pair's shared rows [lo, hi], as cnms_lane_close: none for the
     * lane itself and past the tile */
    if (r < row_size && c < col_size && i != k) {
      const int32_t e = min (st.e[r], st.e[Q + c]);

      lo = max (st.s[r], st.s[Q + c]);
      hi = e > last_row ? last_row : e;
      if (hi >= lo) {
        atomicMin (&st.span[0], lo);
        atomicMax (&st.span[1], hi);
      }
    }
    __syncthreads ();

    /* uniform over the block: every thread reaches the barriers */
    const int span_lo = st.span[0], span_hi = st.span[1];
    const int chunk = min (max_chunk, span_hi - span_lo + 1);
    const int pitch = (chunk + 1) | 1;

    for (int c0 = span_lo; c0 <= span_hi; c0 += chunk) {
      const int len = min (chunk, span_hi - c0 + 1);

      /* the chunk's x: row lanes, then column lanes (one past the tile
       * stages nothing) */
      cnms_lane_stage < CNMS_LANE_QUAD_LOADS, T > (s_x, pitch, c0, len,
          st.rowx, row_size, 0, st.colx, Q, col_size, Q);
      __syncthreads ();
      {
        /* this pair's rows of the chunk, in order */
        const int j0 = lo > c0 ? lo - c0 : 0;
        const int j1 = hi - c0 + 1 < len ? hi - c0 + 1 : len;
        const float *xa = s_x + r * pitch;
        const float *xb = s_x + (Q + c) * pitch;

#pragma unroll 4
        for (int j = j0; j < j1; j++) {
          const float a = xa[j], b = xb[j];
          dist = cnms_fadd (dist, a < b ? cnms_fsub (b, a)
              : cnms_fsub (a, b));
        }
      }
      /* the next chunk overwrites the stage */
      __syncthreads ();
    }
    const bool close = hi >= lo && dist < cnms_fmul (distance,
        (float) (hi - lo + 1));
    const unsigned bits = __ballot_sync (CNMS_FULL_WARP, close);

    /* lane 0 of each half-warp: its row's quarter word */
    if (c == 0 && i < n)
      ((uint16_t *) &g.mask[cnms_slab_offset (row_blk, nb)
              + (long long) (rp * Q + r) * (nb - row_blk)
              + (col_blk - row_blk)])[cp] =
          (uint16_t) (bits >> ((tid & 31) & ~(Q - 1)));
    /* the next item restages its lanes */
    __syncthreads ();
  }
}

#endif /* CNMS_CUDA_MASK_LANES_CUH */
