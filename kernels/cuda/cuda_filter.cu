/* Plain NMS input (cnms_nms): boxes [n][4], scores [n], classes [n] or
 * none. Boxes whose coordinates or score are not finite take no part;
 * every other box does, zero-area ones included. The survivors go
 * through the same count-header, sort and NMS stages as decoded
 * candidates, with the input index as both key index and sort value. */
#include "cnms_cuda_device.cuh"

/* One thread per input box: compact key and input index of each finite
 * box, slots from a warp-aggregated counter. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
filter_kernel (const float4 *__restrict__ boxes,
    const float *__restrict__ scores, int n, int abits,
    int32_t *__restrict__ hdr, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool ok = false;
  float score = 0.0f;
  int slot;

  if (i < n) {
    const float4 b = boxes[i];
    score = scores[i];
    ok = cnms_isfinite (b.x) && cnms_isfinite (b.y) && cnms_isfinite (b.z)
        && cnms_isfinite (b.w) && cnms_isfinite (score);
  }
  slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  if (slot < 0 || slot >= n)
    return;
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) i, abits);
  vals[slot] = (uint32_t) i;
}

cudaError_t
cnms_cuda_filter (const float *d_boxes, const float *d_scores, int n,
    int abits, int32_t *d_hdr, uint64_t *d_keys, uint32_t *d_vals,
    cudaStream_t stream)
{
  filter_kernel <<<cnms_ceil_div (n, CNMS_BLOCK), CNMS_BLOCK, 0, stream>>> (
      (const float4 *) d_boxes, d_scores, n, abits, d_hdr, d_keys, d_vals);
  return cudaGetLastError ();
}
