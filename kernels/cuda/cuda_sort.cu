/* Deterministic candidate order: CUB radix sort of compact keys.
 *
 * cnms_sort_key puts the score in the high 32 bits and the anchor index
 * in the low 32. Anchors are < N, so the compact key keeps only abits
 * index bits under the score bits and the sort runs over 32 + abits bits
 * instead of 64. The count of candidates lives on the device, so all N
 * slots are sorted; the slots past the count hold the all-ones key, which
 * no finite score produces, and therefore sort last. */
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
