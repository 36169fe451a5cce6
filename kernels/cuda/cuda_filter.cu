/* cnms_nms_lanes's filter kernel. (The boxes of cnms_nms and
 * cnms_nms_rotated are filtered, and a LaneATT tensor decoded, by the
 * engine's own first phase, cuda_engine.cu; the engine also copies a
 * device lane tensor's kept rows out.) */
#include "cnms_cuda_device.cuh"

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
