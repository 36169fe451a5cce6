/* The engine's first phase (included by cuda_engine.cu): the candidates
 * in (score desc, index asc) order, as sort values in order[], with the
 * boxes and classes of the first n = min(count, cap) gathered in that
 * order for the bitmask.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor (or
 * input) index in the low 32; the compact key keeps only abits index bits
 * under the score bits. Keys are unique (one per anchor or input box), so
 * a key's rank, the number of keys below it, is its sorted position, and
 * any correct sort gives the one order. Every block ranks candidates
 * against all m keys, staged through shared memory: m^2 comparisons, as
 * the bitmask that follows is m^2 / 2 overlap tests, spread over the
 * whole grid, and following the device-side count. */
#ifndef CNMS_CUDA_SORT_CUH
#define CNMS_CUDA_SORT_CUH

#include "cnms_cuda_device.cuh"

/* Keys per shared-memory stage of the rank sort (16 KiB). */
#define CNMS_RANK_CHUNK 2048
#define CNMS_SORT_SMEM_WORDS CNMS_RANK_CHUNK

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

/* All m candidates, every block (s: CNMS_RANK_CHUNK words). */
__device__ __forceinline__ void
cnms_sort_rank (const cnms_engine_args &g, int m, int n, uint64_t *s)
{
  const int tid = threadIdx.x;
  const int step = gridDim.x * blockDim.x;

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
      cnms_sorted_put (g, rank, v, n);
  }
}

#endif /* CNMS_CUDA_SORT_CUH */
