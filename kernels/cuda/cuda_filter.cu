/* Plain NMS input (cnms_nms): boxes [n][4], scores [n], classes [n] or
 * none. Boxes whose coordinates or score are not finite take no part;
 * every other box does, zero-area ones included. The survivors go
 * through the same count-header, sort and bitmask path as decoded
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
  cudaError_t e = cnms_cuda_sort_prepare (d_hdr, d_keys, n, stream);

  if (e != cudaSuccess)
    return e;
  filter_kernel <<<cnms_ceil_div (n, CNMS_BLOCK), CNMS_BLOCK, 0, stream>>> (
      (const float4 *) d_boxes, d_scores, n, abits, d_hdr, d_keys, d_vals);
  return cudaGetLastError ();
}

/* Sorted boxes and classes (0 when class-agnostic) of the first
 * min(count, cap) survivors; n goes into the header for phase 1. */
__global__ void __launch_bounds__ (CNMS_BLOCK)
gather_plain_kernel (const float4 *__restrict__ boxes_in,
    const int32_t *__restrict__ classes_in,
    const uint32_t *__restrict__ order, int cap, int32_t *__restrict__ hdr,
    float4 *__restrict__ boxes, int32_t *__restrict__ cls)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = cnms_clamp_count (hdr[CNMS_HDR_COUNT], cap);

  if (k == 0)
    hdr[CNMS_HDR_N] = n;
  if (k < n) {
    const uint32_t src = order[k];
    if (src < (uint32_t) cap) {
      boxes[k] = boxes_in[src];
      cls[k] = classes_in != NULL ? classes_in[src] : 0;
    }
  }
}

cudaError_t
cnms_cuda_gather_plain (const float *d_boxes_in, const int32_t *d_classes_in,
    const uint32_t *d_order, int cap, int32_t *d_hdr, float4 *d_boxes,
    int32_t *d_cls, cudaStream_t stream)
{
  gather_plain_kernel <<<cnms_ceil_div (cap, CNMS_BLOCK), CNMS_BLOCK, 0,
      stream>>> ((const float4 *) d_boxes_in, d_classes_in, d_order, cap,
      d_hdr, d_boxes, d_cls);
  return cudaGetLastError ();
}
