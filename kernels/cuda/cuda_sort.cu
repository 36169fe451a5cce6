/* Deterministic candidate order: compact keys, sorted by one block or
 * by CUB.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor index
 * in the low 32. Anchors are < N, so the compact key keeps only abits
 * index bits under the score bits: 32 + abits bits instead of 64. Keys
 * are unique (one per anchor or input box), so any correct sort gives
 * the one order.
 *
 * - Single-block sort (N up to block_sort_max): reads the device-side
 *   count and bitonic-sorts only that many slots, rounded up to a power
 *   of two, in shared memory, then gathers in the same kernel. The value
 *   (a slot < N, abits bits) rides under the key in one 64-bit word.
 * - CUB: the count lives on the device, so all N slots are sorted; the
 *   slots past the count hold the all-ones key, which no finite score
 *   produces, and therefore sort last. */
#include <cub/device/device_radix_sort.cuh>

#include "cnms_cuda_device.cuh"

/* Sets every key to the one that sorts last; zeroes the header count. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
sort_prepare_kernel (int32_t *__restrict__ hdr, uint64_t *__restrict__ keys,
    int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i == 0)
    hdr[CNMS_HDR_COUNT] = 0;
  if (i < n)
    keys[i] = ~(uint64_t) 0;
}

cudaError_t
cnms_cuda_sort_prepare (int32_t *d_hdr, uint64_t *d_keys, int n,
    cudaStream_t stream)
{
  sort_prepare_kernel <<<cnms_ceil_div (n > 0 ? n : 1, CNMS_BLOCK),
      CNMS_BLOCK, 0, stream>>> (d_hdr, d_keys, n);
  return cudaGetLastError ();
}

int
cnms_cuda_key_bits (int n)
{
  int b = 0;

  while (b < 31 && (1u << b) < (unsigned) n)
    b++;
  return b;
}

/* The single-block sort (see the file comment). m = min(count, n) slots
 * hold candidates; the power of two p >= m is sorted, padded with the
 * all-ones word, which sorts last (real words are below it: their top
 * 32 bits are a finite score's key). */
__global__ void __launch_bounds__ (CNMS_BLOCK_SORT_THREADS)
block_sort_kernel (const uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int n, int abits, cnms_gather g)
{
  extern __shared__ uint64_t s_word[];
  const int tid = threadIdx.x;
  const int32_t count = g.hdr[CNMS_HDR_COUNT];
  const int m = cnms_clamp_count (count, n);
  const int n_gather = cnms_clamp_count (count, g.cap);
  const uint64_t val_mask = (1ull << abits) - 1;
  int p = 1;

  while (p < m)
    p <<= 1;
  for (int i = tid; i < p; i += blockDim.x)
    s_word[i] = i < m ? (keys[i] << abits) | (vals[i] & val_mask)
        : ~(uint64_t) 0;
  __syncthreads ();

  for (int k = 2; k <= p; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      /* pair t: lo has bit j clear, hi = lo + j; runs of k alternate
       * direction until the last merge (k = p) sorts ascending */
      for (int t = tid; t < p / 2; t += blockDim.x) {
        const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1));
        const int hi = lo + j;
        const uint64_t a = s_word[lo], b = s_word[hi];
        if ((a > b) == ((lo & k) == 0)) {
          s_word[lo] = b;
          s_word[hi] = a;
        }
      }
      __syncthreads ();
    }
  }

  if (tid == 0)
    cnms_gather_headers (g, count, n_gather);
  for (int k = tid; k < m; k += blockDim.x) {
    const uint32_t src = (uint32_t) (s_word[k] & val_mask);
    vals[k] = src;
    if (g.boxes != NULL && k < n_gather)
      cnms_gather_one (g, k, src, count);
  }
}

cudaError_t
cnms_cuda_block_sort (const uint64_t *d_keys, uint32_t *d_vals, int n,
    int abits, const cnms_gather *g, cudaStream_t stream)
{
  int p = 1;

  while (p < n)
    p <<= 1;
  block_sort_kernel <<<1, CNMS_BLOCK_SORT_THREADS, (size_t) p *
      sizeof (uint64_t), stream>>> (d_keys, d_vals, n, abits, *g);
  return cudaGetLastError ();
}

cudaError_t
cnms_cuda_block_sort_allow (int max_slots)
{
  return cudaFuncSetAttribute (block_sort_kernel,
      cudaFuncAttributeMaxDynamicSharedMemorySize,
      (int) ((size_t) max_slots * sizeof (uint64_t)));
}

cudaError_t
cnms_cuda_sort_temp_bytes (int n, int abits, size_t *bytes)
{
  cub::DoubleBuffer < uint64_t > keys (NULL, NULL);
  cub::DoubleBuffer < uint32_t > vals (NULL, NULL);

  *bytes = 0;
  return cub::DeviceRadixSort::SortPairs (NULL, *bytes, keys, vals, n, 0,
      32 + abits);
}

cudaError_t
cnms_cuda_sort (void *d_temp, size_t temp_bytes, uint64_t *d_keys[2],
    uint32_t *d_vals[2], int n, int abits, int *which, cudaStream_t stream)
{
  cub::DoubleBuffer < uint64_t > keys (d_keys[0], d_keys[1]);
  cub::DoubleBuffer < uint32_t > vals (d_vals[0], d_vals[1]);
  cudaError_t e;

  e = cub::DeviceRadixSort::SortPairs (d_temp, temp_bytes, keys, vals, n, 0,
      32 + abits, stream);
  if (e == cudaSuccess)
    e = cudaGetLastError ();
  /* keys and values move together, so one selector serves both */
  *which = vals.selector;
  return e;
}
