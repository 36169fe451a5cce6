/* The engine's first phase (included by cuda_engine.cu): the candidates
 * in (score desc, index asc) order, as sort values in d_order, with the
 * boxes and classes of the first n = min(count, cap) gathered in that
 * order for the bitmask.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor (or
 * input) index in the low 32; the compact key keeps only abits index bits
 * under the score bits. Keys are unique (one per anchor or input box), so
 * any correct sort gives the one order:
 *   - up to CNMS_BLOCK_SORT_MAX candidates, one block sorts them bitonically
 *     in shared memory (the other blocks wait at the grid barrier);
 *   - beyond that, every block ranks candidates: a key's rank, the number
 *     of keys below it, is its sorted position. That is count^2
 *     comparisons, as the bitmask that follows is count^2 / 2 overlap
 *     tests, and it follows the device-side count. */
#ifndef CNMS_CUDA_SORT_CUH
#define CNMS_CUDA_SORT_CUH

#include "cnms_cuda_device.cuh"

/* Candidates the single-block bitonic sort takes (a power of two). */
#define CNMS_BLOCK_SORT_MAX 1024
/* Keys per shared-memory stage of the rank sort. */
#define CNMS_RANK_CHUNK 2048
/* Shared memory both sorts need, in 64-bit words. */
#define CNMS_SORT_SMEM_WORDS (CNMS_RANK_CHUNK > CNMS_BLOCK_SORT_MAX * 3 / 2 ? \
    CNMS_RANK_CHUNK : CNMS_BLOCK_SORT_MAX * 3 / 2)

/* Sorted position r has sort value v: record it, and gather its box and
 * class when it is among the first n and the bitmask needs them. */
__device__ __forceinline__ void
cnms_sorted_put (const cnms_engine_args &g, int r, uint32_t v, int n)
{
  g.order[r] = v;
  if (g.a.suppress && r < n) {
    float4 b;
    int32_t c;
    cnms_cand_read (g.src, v, &b, &c);
    g.boxes[r] = b;
    g.cls[r] = c;
  }
}

/* m <= CNMS_BLOCK_SORT_MAX candidates, one block (s: shared memory). */
__device__ __forceinline__ void
cnms_sort_block (const cnms_engine_args &g, int m, int n, uint64_t *s)
{
  uint64_t *s_key = s;
  uint32_t *s_val = (uint32_t *) (s + CNMS_BLOCK_SORT_MAX);
  const int tid = threadIdx.x;
  int p = 1;

  while (p < m)
    p <<= 1;
  for (int i = tid; i < p; i += blockDim.x) {
    s_key[i] = i < m ? g.keys[i] : ~(uint64_t) 0;
    s_val[i] = i < m ? g.vals[i] : 0;
  }
  __syncthreads ();
  for (int k = 2; k <= p; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      /* pair t: lo has bit j clear, hi = lo + j; runs of k alternate
       * direction until the last merge (k = p) sorts ascending */
      for (int t = tid; t < p / 2; t += blockDim.x) {
        const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1));
        const int hi = lo + j;
        const uint64_t a = s_key[lo], b = s_key[hi];
        if ((a > b) == ((lo & k) == 0)) {
          const uint32_t va = s_val[lo];
          s_key[lo] = b;
          s_key[hi] = a;
          s_val[lo] = s_val[hi];
          s_val[hi] = va;
        }
      }
      __syncthreads ();
    }
  }
  for (int r = tid; r < m; r += blockDim.x)
    cnms_sorted_put (g, r, s_val[r], n);
}

/* Any m, every block: each candidate is ranked against all m keys,
 * staged through shared memory (s: CNMS_RANK_CHUNK words). */
__device__ __forceinline__ void
cnms_sort_rank (const cnms_engine_args &g, int m, int n, uint64_t *s)
{
  const int tid = threadIdx.x;
  const int step = gridDim.x * blockDim.x;

  /* uniform per block: whole blocks go round together (barriers) */
  for (int base = blockIdx.x * blockDim.x; base < m; base += step) {
    const int i = base + tid;
    const uint64_t k = i < m ? g.keys[i] : ~(uint64_t) 0;
    int rank = 0;

    for (int c0 = 0; c0 < m; c0 += CNMS_RANK_CHUNK) {
      const int len = min (CNMS_RANK_CHUNK, m - c0);
      for (int e = tid; e < len; e += blockDim.x)
        s[e] = g.keys[c0 + e];
      __syncthreads ();
      for (int j = 0; j < len; j++)
        rank += s[j] < k;
      /* the next stage overwrites s */
      __syncthreads ();
    }
    if (i < m)
      cnms_sorted_put (g, rank, g.vals[i], n);
  }
}

#endif /* CNMS_CUDA_SORT_CUH */
