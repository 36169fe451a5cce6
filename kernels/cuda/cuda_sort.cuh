/* The engine's first phase (included by cuda_engine.cu): the candidates
 * in (score desc, index asc) order, as sort values in order[], with what
 * the geometry tests of the first n = min(count, cap) (cuda_geom.cuh: the
 * boxes, or the prepared oriented boxes and their hulls) and their classes
 * gathered in that order for the bitmask.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor (or
 * input) index in the low 32; the compact key keeps only abits index bits
 * under the score bits. Keys are unique (one per anchor or input box), so
 * a key's rank, the number of keys below it, is its sorted position, and
 * any correct sort gives the one order. Every block ranks candidates
 * against all m keys, staged through shared memory: m^2 comparisons
 * spread over the whole grid, following the device-side count: every
 * block takes its share of the candidates, and a group of up to 32 lanes
 * ranks each one. */
#ifndef CNMS_CUDA_SORT_CUH
#define CNMS_CUDA_SORT_CUH

#include "cuda_geom.cuh"

/* Keys per shared-memory stage of the rank sort (16 KiB). */
#define CNMS_RANK_CHUNK 2048
#define CNMS_SORT_SMEM_WORDS CNMS_RANK_CHUNK

/* The extent of the first n sorted boxes' rectangles (g.boxes) and the
 * sums of their sizes, for the pruned mask's grid (cuda_prune.cuh): a
 * thread's share, then the block's, added into the grid's state. A
 * rectangle with x1 > x2 or y1 > y2 (none of whose pairs can overlap) is
 * left out. */
struct cnms_extent {
  float nx1, ny1, x2, y2;       /* -min x1, -min y1, max x2, max y2 */
  float sw, sh;                 /* sums of widths and heights */
  int cnt;
};

__device__ __forceinline__ void
cnms_extent_init (cnms_extent *e)
{
  e->nx1 = e->ny1 = e->x2 = e->y2 = -CNMS_INF;
  e->sw = e->sh = 0.0f;
  e->cnt = 0;
}

__device__ __forceinline__ void
cnms_extent_add (cnms_extent *e, float4 b)
{
  if (b.x <= b.z && b.y <= b.w) {
    e->nx1 = fmaxf (e->nx1, -b.x);
    e->ny1 = fmaxf (e->ny1, -b.y);
    e->x2 = fmaxf (e->x2, b.z);
    e->y2 = fmaxf (e->y2, b.w);
    e->sw += b.z - b.x;
    e->sh += b.w - b.y;
    e->cnt++;
  }
}

/* A float's key, ordered as the floats are (NaN aside), every key above 0
 * (the zeroed state is below any float). */
__device__ __forceinline__ uint32_t
cnms_float_key (float f)
{
  const uint32_t u = __float_as_uint (f);

  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float
cnms_key_float (uint32_t k)
{
  return __uint_as_float ((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/* Adds every thread's share into g.grid_state (every thread of the block
 * calls it): the warps' shares are folded in shared memory and the block
 * adds its own with one set of atomics when it has boxes (a set a warp
 * is some 15000 atomics on the same seven words at N = 2048, which the
 * grid barrier after the sort waits for: docs/performance.md, "Choices
 * in the code"). The sums' order varies (float atomics): they size the
 * grid, never a result. */
__device__ __forceinline__ void
cnms_extent_flush (const cnms_engine_args &g, cnms_extent e)
{
  for (int off = 16; off > 0; off >>= 1) {
    e.nx1 = fmaxf (e.nx1, __shfl_xor_sync (CNMS_FULL_WARP, e.nx1, off));
    e.ny1 = fmaxf (e.ny1, __shfl_xor_sync (CNMS_FULL_WARP, e.ny1, off));
    e.x2 = fmaxf (e.x2, __shfl_xor_sync (CNMS_FULL_WARP, e.x2, off));
    e.y2 = fmaxf (e.y2, __shfl_xor_sync (CNMS_FULL_WARP, e.y2, off));
    e.sw += __shfl_xor_sync (CNMS_FULL_WARP, e.sw, off);
    e.sh += __shfl_xor_sync (CNMS_FULL_WARP, e.sh, off);
    e.cnt += __shfl_xor_sync (CNMS_FULL_WARP, e.cnt, off);
  }
  {
    __shared__ cnms_extent s_e[CNMS_ENGINE_THREADS / 32];
    if ((threadIdx.x & 31) == 0)
      s_e[threadIdx.x >> 5] = e;
    __syncthreads ();
    if (threadIdx.x != 0)
      return;
    for (int w = 1; w < CNMS_ENGINE_THREADS / 32; w++) {
      const cnms_extent f = s_e[w];
      e.nx1 = fmaxf (e.nx1, f.nx1);
      e.ny1 = fmaxf (e.ny1, f.ny1);
      e.x2 = fmaxf (e.x2, f.x2);
      e.y2 = fmaxf (e.y2, f.y2);
      e.sw += f.sw;
      e.sh += f.sh;
      e.cnt += f.cnt;
    }
  }
  if (e.cnt > 0) {
    atomicMax (&g.grid_state[0], cnms_float_key (e.nx1));
    atomicMax (&g.grid_state[1], cnms_float_key (e.ny1));
    atomicMax (&g.grid_state[2], cnms_float_key (e.x2));
    atomicMax (&g.grid_state[3], cnms_float_key (e.y2));
    atomicAdd ((float *) &g.grid_state[4], e.sw);
    atomicAdd ((float *) &g.grid_state[5], e.sh);
    atomicAdd (&g.grid_state[6], (uint32_t) e.cnt);
  }
}

/* Sorted position r has sort value v: record it, and gather what the
 * geometry's test needs of it (cuda_geom.cuh) when it is among the first
 * n and the bitmask needs them; ext (when given) takes its rectangle. */
template <int GEOM>
__device__ __forceinline__ void
cnms_sorted_put (const cnms_engine_args &g, int r, uint32_t v, int n,
    cnms_extent *ext)
{
  g.order[r] = v;
  if (g.a.suppress && r < n) {
    const float4 b = cnms_geom <GEOM>::gather (g, r, v);
    if (ext != NULL)
      cnms_extent_add (ext, b);
  }
}

/* Elements a lane loads at a time when copying a candidate's row. */
#define CNMS_LANE_COPY_LOADS 4

/* A LaneATT tensor's candidate of compact key k and sort value v, among
 * the first n sorted: its row (stride = 5 + S elements, by its anchor: the
 * key's index bits) as floats into g.dec.lane_rows[v], the mask's x
 * (cuda_geom.cuh), by the t lanes of its rank group (lane: this one's),
 * CNMS_LANE_COPY_LOADS loads of each in flight at a time. */
template <typename T>
__device__ __forceinline__ void
cnms_lane_copy_row (const cnms_engine_args &g, uint64_t k, uint32_t v,
    int lane, int t)
{
  const int stride = g.src.lane_stride;
  const uint32_t a = (uint32_t) (k & ((1ull << g.dec.abits) - 1ull));
  const T *src = (const T *) g.dec.tensor + (size_t) stride * a;
  float *dst = g.dec.lane_rows + (size_t) stride * v;

  for (int e0 = lane; e0 < stride; e0 += CNMS_LANE_COPY_LOADS * t) {
    float x[CNMS_LANE_COPY_LOADS];

#pragma unroll
    for (int u = 0; u < CNMS_LANE_COPY_LOADS; u++) {
      const int e = e0 + u * t;
      x[u] = e < stride ? cnms_ld (src, (size_t) e) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < CNMS_LANE_COPY_LOADS; u++)
      if (e0 + u * t < stride)
        dst[e0 + u * t] = x[u];
  }
}

/* Keys of s[lane], s[lane + t], ... (below len) below k, four counters so
 * that the compares overlap. */
__device__ __forceinline__ int
cnms_count_below (const uint64_t *s, int len, uint64_t k, int lane, int t)
{
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0, j = lane;

  for (; j + 3 * t < len; j += 4 * t) {
    c0 += s[j] < k;
    c1 += s[j + t] < k;
    c2 += s[j + 2 * t] < k;
    c3 += s[j + 3 * t] < k;
  }
  for (; j < len; j += t)
    c0 += s[j] < k;
  return c0 + c1 + c2 + c3;
}

/* Block b ranks candidates b per .. b per + per - 1 (per = ceil(m /
 * blocks)), lane groups of the largest power of two T <= min(32, threads /
 * per) each taking one, T lanes counting every T-th key and summing by
 * shuffles within the group (a block of 256 consecutive candidates to a
 * thread each would leave most of the grid idle). The keys are staged in
 * shared memory: all of them once when they fit one stage (m <=
 * CNMS_RANK_CHUNK), else stage by stage for each round of the block's
 * groups. Every lane of a warp runs the same rounds (the shuffles take the
 * full warp); a lane past the block's share only counts. */
template <int GEOM>
__device__ __forceinline__ void
cnms_sort_rank (const cnms_engine_args &g, int m, int n, uint64_t *s,
    cnms_extent *ext)
{
  const int tid = threadIdx.x;
  const int per = cnms_ceil_div (m, gridDim.x);
  const int first = blockIdx.x * per;
  const int last = min (m, first + per);
  const bool one_stage = m <= CNMS_RANK_CHUNK;
  int t = 32;

  /* uniform per block: the stages have barriers */
  if (first >= m)
    return;
  while (t > 1 && t * per > (int) blockDim.x)
    t >>= 1;
  if (one_stage) {
    for (int e = tid; e < m; e += blockDim.x)
      s[e] = g.keys[e];
    __syncthreads ();
  }

  const int groups = blockDim.x / t;
  const int lane = tid & (t - 1);
  for (int base = first; base < last; base += groups) {
    const int i = base + tid / t;
    const bool mine = i < last;
    const uint64_t k = mine ? g.keys[i] : 0;
    /* loaded with the key, not after the stages */
    const uint32_t v = mine ? g.vals[i] : 0;
    int rank = 0;

    if (one_stage) {
      rank = cnms_count_below (s, m, k, lane, t);
    } else {
      for (int c0 = 0; c0 < m; c0 += CNMS_RANK_CHUNK) {
        const int len = min (CNMS_RANK_CHUNK, m - c0);
        for (int e = tid; e < len; e += blockDim.x)
          s[e] = g.keys[c0 + e];
        __syncthreads ();
        rank += cnms_count_below (s, len, k, lane, t);
        /* the next stage overwrites s */
        __syncthreads ();
      }
    }
    for (int off = t >> 1; off > 0; off >>= 1)
      rank += __shfl_xor_sync (CNMS_FULL_WARP, rank, off);
    if constexpr (GEOM == CNMS_GEOM_LANE) {
      /* a LaneATT tensor's candidate that the mask tests: its row first,
       * which its gather reads (the decode left the rows where they are) */
      if (g.dec.tensor != NULL && g.a.suppress) {
        if (mine && rank < n) {
          if (g.dec.f16)
            cnms_lane_copy_row <uint16_t> (g, k, v, lane, t);
          else
            cnms_lane_copy_row <float> (g, k, v, lane, t);
        }
        __syncwarp ();
      }
    }
    if (mine && lane == 0)
      cnms_sorted_put <GEOM> (g, rank, v, n, ext);
  }
}

#endif /* CNMS_CUDA_SORT_CUH */
