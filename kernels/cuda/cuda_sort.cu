/* Deterministic candidate order on the large path: a rank sort of the
 * device-side count.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor (or
 * input) index in the low 32; the compact key keeps only abits index bits
 * under the score bits. Keys are unique (one per anchor or input box), so
 * a key's rank, the number of keys below it, is its sorted position, and
 * any correct sort gives the one order. Each thread ranks one candidate
 * against all of them, staged through shared memory: the work is count^2
 * comparisons, as the bitmask that follows is count^2 / 2 overlap tests,
 * and, unlike a radix sort over every slot, it follows the device-side
 * count and costs nothing when the fast path took it. */
#include "cnms_cuda_device.cuh"

#define CNMS_RANK_BLOCK 256
/* Keys per shared-memory stage (16 KiB). */
#define CNMS_RANK_CHUNK 2048

int
cnms_cuda_key_bits (int n)
{
  int b = 0;

  while (b < 31 && (1u << b) < (unsigned) n)
    b++;
  return b;
}

__global__ void __launch_bounds__ (CNMS_RANK_BLOCK)
rank_kernel (cnms_cand_src src, const uint64_t *__restrict__ keys,
    const uint32_t *__restrict__ vals, int capacity, int cap, int min_count,
    int32_t *__restrict__ hdr, uint32_t *__restrict__ order,
    float4 *__restrict__ boxes, int32_t *__restrict__ cls,
    int32_t *__restrict__ out_hdr)
{
  __shared__ uint64_t s_k[CNMS_RANK_CHUNK];
  const int32_t count = hdr[CNMS_HDR_COUNT];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;

  /* uniform: the fast path took this count */
  if (count <= min_count)
    return;
  const int m = cnms_clamp_count (count, capacity);
  const int n = m < cap ? m : cap;
  if (i == 0) {
    hdr[CNMS_HDR_N] = n;
    if (out_hdr != NULL)
      out_hdr[CNMS_OUT_CANDIDATES] = count;
  }
  /* uniform per block: no candidate here */
  if ((int) (blockIdx.x * blockDim.x) >= m)
    return;

  const uint64_t k = i < m ? keys[i] : ~(uint64_t) 0;
  int rank = 0;
  for (int c0 = 0; c0 < m; c0 += CNMS_RANK_CHUNK) {
    const int len = min (CNMS_RANK_CHUNK, m - c0);
    for (int e = tid; e < len; e += blockDim.x)
      s_k[e] = keys[c0 + e];
    __syncthreads ();
    for (int j = 0; j < len; j++)
      rank += s_k[j] < k;
    /* the next stage overwrites s_k */
    __syncthreads ();
  }
  if (i < m) {
    const uint32_t v = vals[i];
    order[rank] = v;
    if (boxes != NULL && rank < n) {
      float4 b;
      int32_t c;
      cnms_cand_read (src, v, &b, &c);
      boxes[rank] = b;
      cls[rank] = c;
    }
  }
}

cudaError_t
cnms_cuda_rank_sort (const cnms_cand_src *src, const uint64_t *d_keys,
    const uint32_t *d_vals, int n, const cnms_nms_args *a, int32_t *d_hdr,
    uint32_t *d_order, float4 *d_boxes, int32_t *d_cls, int32_t *d_out_hdr,
    cudaStream_t stream)
{
  rank_kernel <<<cnms_ceil_div (n > 0 ? n : 1, CNMS_RANK_BLOCK),
      CNMS_RANK_BLOCK, 0, stream>>> (*src, d_keys, d_vals, n, a->cap,
      a->min_count, d_hdr, d_order, d_boxes, d_cls, d_out_hdr);
  return cudaGetLastError ();
}
