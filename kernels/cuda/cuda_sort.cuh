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
 * against all m keys, staged through shared memory: m^2 comparisons, as
 * the bitmask that follows is m^2 / 2 overlap tests, spread over the
 * whole grid, and following the device-side count. When the m keys fit
 * one stage (a frame's few hundred candidates), every block takes its
 * share of them, and a group of up to 32 lanes ranks each one (a block of
 * 256 consecutive candidates to a thread each would leave most of the
 * grid idle); above that, a thread ranks a candidate, stage by stage. */
#ifndef CNMS_CUDA_SORT_CUH
#define CNMS_CUDA_SORT_CUH

#include "cuda_geom.cuh"

/* Keys per shared-memory stage of the rank sort (16 KiB). */
#define CNMS_RANK_CHUNK 2048
#define CNMS_SORT_SMEM_WORDS CNMS_RANK_CHUNK

/* Sorted position r has sort value v: record it, and gather what the
 * geometry's test needs of it (cuda_geom.cuh) when it is among the first
 * n and the bitmask needs them. */
template <int GEOM>
__device__ __forceinline__ void
cnms_sorted_put (const cnms_engine_args &g, int r, uint32_t v, int n)
{
  g.order[r] = v;
  if (g.a.suppress && r < n)
    cnms_geom <GEOM>::gather (g, r, v);
}

/* Keys of s[0..len) below k, four counters so that the compares overlap. */
__device__ __forceinline__ int
cnms_count_below (const uint64_t *s, int len, uint64_t k)
{
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0, j = 0;

  for (; j + 4 <= len; j += 4) {
    c0 += s[j] < k;
    c1 += s[j + 1] < k;
    c2 += s[j + 2] < k;
    c3 += s[j + 3] < k;
  }
  for (; j < len; j++)
    c0 += s[j] < k;
  return c0 + c1 + c2 + c3;
}

/* At most CNMS_RANK_CHUNK candidates (see the file comment): block b
 * ranks candidates b per .. b per + per - 1 (per = ceil(m / blocks)),
 * lanes groups of the largest power of two T <= min(32, threads / per)
 * each taking one, T lanes counting every T-th staged key and summing by
 * shuffles within the group. Every lane of a warp runs the same rounds
 * (the shuffles take the full warp); a lane past the block's share only
 * counts. */
template <int GEOM>
__device__ __forceinline__ void
cnms_sort_rank_small (const cnms_engine_args &g, int m, int n, uint64_t *s)
{
  const int tid = threadIdx.x;
  const int per = cnms_ceil_div (m, gridDim.x);
  const int first = blockIdx.x * per;
  const int last = min (m, first + per);
  int t = 32;

  /* uniform per block: the stage has a barrier */
  if (first >= m)
    return;
  while (t > 1 && t * per > (int) blockDim.x)
    t >>= 1;
  for (int e = tid; e < m; e += blockDim.x)
    s[e] = g.keys[e];
  __syncthreads ();

  const int groups = blockDim.x / t;
  const int lane = tid & (t - 1);
  for (int base = first; base < last; base += groups) {
    const int i = base + tid / t;
    const bool mine = i < last;
    const uint64_t k = mine ? s[i] : 0;
    int rank = 0;

    for (int j = lane; j < m; j += t)
      rank += s[j] < k;
    for (int off = t >> 1; off > 0; off >>= 1)
      rank += __shfl_xor_sync (CNMS_FULL_WARP, rank, off);
    if (mine && lane == 0)
      cnms_sorted_put <GEOM> (g, rank, g.vals[i], n);
  }
}

/* All m candidates, every block (s: CNMS_RANK_CHUNK words). */
template <int GEOM>
__device__ __forceinline__ void
cnms_sort_rank (const cnms_engine_args &g, int m, int n, uint64_t *s)
{
  const int tid = threadIdx.x;
  const int step = gridDim.x * blockDim.x;

  if (m <= CNMS_RANK_CHUNK) {
    cnms_sort_rank_small <GEOM> (g, m, n, s);
    return;
  }

  /* uniform per block: whole blocks go round together (barriers) */
  for (int base = blockIdx.x * blockDim.x; base < m; base += step) {
    const int i = base + tid;
    const uint64_t k = i < m ? g.keys[i] : ~(uint64_t) 0;
    /* loaded with the key, not after the stages */
    const uint32_t v = i < m ? g.vals[i] : 0;
    int rank = 0;

    for (int c0 = 0; c0 < m; c0 += CNMS_RANK_CHUNK) {
      const int len = min (CNMS_RANK_CHUNK, m - c0);
      for (int e = tid; e < len; e += blockDim.x)
        s[e] = g.keys[c0 + e];
      __syncthreads ();
      rank += cnms_count_below (s, len, k);
      /* the next stage overwrites s */
      __syncthreads ();
    }
    if (i < m)
      cnms_sorted_put <GEOM> (g, rank, v, n);
  }
}

#endif /* CNMS_CUDA_SORT_CUH */
