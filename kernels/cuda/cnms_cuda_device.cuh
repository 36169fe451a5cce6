/* Device helpers shared by the CUDA backend's kernels. */
#ifndef CNMS_CUDA_DEVICE_CUH
#define CNMS_CUDA_DEVICE_CUH

#include "cnms_cuda.cuh"

#define CNMS_FULL_WARP 0xffffffffu

/* One tensor element as float: float32 as is, float16 through the exact
 * conversion that the CPU backend uses. */
__device__ __forceinline__ float
cnms_ld (const float *p, size_t i)
{
  return p[i];
}

__device__ __forceinline__ float
cnms_ld (const uint16_t *p, size_t i)
{
  return cnms_half_to_float (p[i]);
}

/* Warp-aggregated slot reservation in a count-header buffer: one
 * atomicAdd per warp for all of its lanes with ok set. Every lane of the
 * warp must call it (blocks are whole warps, no lane has returned).
 * Returns this lane's slot, or -1 when ok is false. The count may grow
 * past the buffer capacity: callers check the slot, readers clamp. */
__device__ __forceinline__ int
cnms_warp_reserve (bool ok, int32_t *counter)
{
  const unsigned ballot = __ballot_sync (CNMS_FULL_WARP, ok);
  const int lane = threadIdx.x & 31;
  int base = 0;

  if (ballot == 0)
    return -1;
  if (lane == __ffs (ballot) - 1)
    base = atomicAdd (counter, __popc (ballot));
  base = __shfl_sync (CNMS_FULL_WARP, base, __ffs (ballot) - 1);
  return ok ? base + __popc (ballot & ((1u << lane) - 1u)) : -1;
}

/* Number of candidates taken from a count-header buffer: min(count, cap). */
__device__ __forceinline__ int
cnms_clamp_count (int32_t count, int cap)
{
  return count < 0 ? 0 : (count < cap ? count : cap);
}

/* Gathers sorted candidate k, whose sort value is src, for phase 1 (see
 * cnms_gather); count is the device-side candidate count. */
__device__ __forceinline__ void
cnms_gather_one (const cnms_gather &g, int k, uint32_t src, int32_t count)
{
  if (g.recs != NULL) {
    if (src < (uint32_t) count) {
      const cnms_det r = g.recs[src];
      g.boxes[k] = make_float4 (r.x1, r.y1, r.x2, r.y2);
      g.cls[k] = r.class_id;
    }
  } else if (src < (uint32_t) g.cap) {
    g.boxes[k] = g.boxes_in[src];
    g.cls[k] = g.classes_in != NULL ? g.classes_in[src] : 0;
  }
}

/* One thread's part of a gather: n and the raw count into the headers. */
__device__ __forceinline__ void
cnms_gather_headers (const cnms_gather &g, int32_t count, int n)
{
  g.hdr[CNMS_HDR_N] = n;
  if (g.out_hdr != NULL)
    g.out_hdr[CNMS_OUT_CANDIDATES] = count;
}

#endif /* CNMS_CUDA_DEVICE_CUH */
