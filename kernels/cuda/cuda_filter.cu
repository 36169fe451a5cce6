/* Plain NMS input (cnms_nms, cnms_nms_rotated): boxes [n][4] (or
 * oriented boxes [n][5]), scores [n], classes [n] or none. Boxes with a
 * value or a score that is not finite take no part; every other box does,
 * zero-area ones included. The survivors go through the same
 * count-header, sort and NMS stages as decoded candidates, with the input
 * index as both key index and sort value. */
#include "cnms_cuda_device.cuh"

/* Whether the values of box i are all finite: x1 y1 x2 y2, or cx cy w h
 * angle. */
template <int GEOM>
__device__ __forceinline__ bool
cnms_filter_finite (const float *__restrict__ boxes, int i)
{
  if constexpr (GEOM == CNMS_GEOM_OBB) {
    const float *b = boxes + 5 * (size_t) i;
    return cnms_isfinite (b[0]) && cnms_isfinite (b[1])
        && cnms_isfinite (b[2]) && cnms_isfinite (b[3])
        && cnms_isfinite (b[4]);
  } else {
    const float4 b = ((const float4 *) boxes)[i];
    return cnms_isfinite (b.x) && cnms_isfinite (b.y) && cnms_isfinite (b.z)
        && cnms_isfinite (b.w);
  }
}

/* One thread per input box: compact key and input index of each finite
 * box, slots from a warp-aggregated counter. */
template <int GEOM>
__global__ void __launch_bounds__ (CNMS_BLOCK)
filter_kernel (const float *__restrict__ boxes,
    const float *__restrict__ scores, int n, int abits,
    int32_t *__restrict__ hdr, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool ok = false;
  float score = 0.0f;
  int slot;

  if (i < n) {
    score = scores[i];
    ok = cnms_filter_finite <GEOM> (boxes, i) && cnms_isfinite (score);
  }
  slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  if (slot < 0 || slot >= n)
    return;
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) i, abits);
  vals[slot] = (uint32_t) i;
}

cudaError_t
cnms_cuda_filter (int geom, const float *d_boxes, const float *d_scores,
    int n, int abits, int32_t *d_hdr, uint64_t *d_keys, uint32_t *d_vals,
    cudaStream_t stream)
{
  const int blocks = cnms_ceil_div (n, CNMS_BLOCK);

  if (geom == CNMS_GEOM_OBB)
    filter_kernel <CNMS_GEOM_OBB> <<<blocks, CNMS_BLOCK, 0, stream>>> (
        d_boxes, d_scores, n, abits, d_hdr, d_keys, d_vals);
  else
    filter_kernel <CNMS_GEOM_BOX> <<<blocks, CNMS_BLOCK, 0, stream>>> (
        d_boxes, d_scores, n, abits, d_hdr, d_keys, d_vals);
  return cudaGetLastError ();
}

/* cnms_nms_lanes input: one thread per proposal; its score finite and its
 * rows taken by cnms_lane_rows (as cpu_lanes.c). */
__global__ void __launch_bounds__ (CNMS_BLOCK)
filter_lanes_kernel (const float *__restrict__ props, int stride,
    int n_strips, const float *__restrict__ scores, int n, int abits,
    int32_t *__restrict__ hdr, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool ok = false;
  float score = 0.0f;
  int slot;

  if (i < n) {
    const float *r = props + (size_t) stride * i;
    int32_t start, end;

    score = scores[i];
    ok = cnms_isfinite (score)
        && cnms_lane_rows (r[2], r[4], n_strips, &start, &end) != 0;
  }
  slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  if (slot < 0 || slot >= n)
    return;
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) i, abits);
  vals[slot] = (uint32_t) i;
}

cudaError_t
cnms_cuda_filter_lanes (const float *d_props, int stride, int n_strips,
    const float *d_scores, int n, int abits, int32_t *d_hdr,
    uint64_t *d_keys, uint32_t *d_vals, cudaStream_t stream)
{
  const int blocks = cnms_ceil_div (n, CNMS_BLOCK);

  if (n <= 0)
    return cudaSuccess;
  filter_lanes_kernel <<<blocks, CNMS_BLOCK, 0, stream>>> (d_props, stride,
      n_strips, d_scores, n, abits, d_hdr, d_keys, d_vals);
  return cudaGetLastError ();
}
