/* Lane input kernels: cnms_nms_lanes's filter and the LaneATT decode.
 * (The boxes of cnms_nms and cnms_nms_rotated are filtered by the
 * engine's own first phase, cuda_engine.cu.) */
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

/* The LaneATT decode: one thread per anchor (a proposal row of stride =
 * 5 + S elements). */
template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_lanes_kernel (const T *__restrict__ t, int n_anchors, int stride,
    int n_strips, float score_threshold, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    float *__restrict__ rows, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int32_t *__restrict__ report)
{
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  const T *r = t + (size_t) stride * (a < n_anchors ? a : 0);
  bool ok = false, nonfinite = false;
  float score = 0.0f;
  int slot;

  if (a < n_anchors) {
    int32_t start, end;

    score = cnms_lane_score (cnms_ld (r, 0), cnms_ld (r, 1));
    nonfinite = !cnms_isfinite (score);
    ok = cnms_score_ok (score, score_threshold)
        && cnms_lane_rows (cnms_ld (r, 2), cnms_ld (r, 4), n_strips, &start,
            &end) != 0;
  }
  if (nonfinite)
    atomicAdd (&report[CNMS_REP_NONFINITE], 1);
  slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  if (slot < 0 || slot >= n_anchors)
    return;
  {
    cnms_det rec;
    float *o = rows + (size_t) stride * slot;

    memset (&rec, 0, sizeof rec);
    rec.score = score;
    rec.anchor = a;
    recs[slot] = rec;
    for (int i = 0; i < stride; i++)
      o[i] = cnms_ld (r, i);
  }
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) a, abits);
  vals[slot] = (uint32_t) slot;
}

cudaError_t
cnms_cuda_decode_lanes (const void *d_tensor, int f16, int n_anchors,
    int stride, int n_strips, float score_threshold, int abits,
    int32_t *d_hdr, cnms_det *recs, float *rows, uint64_t *d_keys,
    uint32_t *d_vals, int32_t *report, cudaStream_t stream)
{
  const int blocks = cnms_ceil_div (n_anchors, CNMS_BLOCK);

  if (n_anchors <= 0)
    return cudaSuccess;
  if (f16)
    decode_lanes_kernel <uint16_t> <<<blocks, CNMS_BLOCK, 0, stream>>> (
        (const uint16_t *) d_tensor, n_anchors, stride, n_strips,
        score_threshold, abits, d_hdr, recs, rows, d_keys, d_vals, report);
  else
    decode_lanes_kernel <float> <<<blocks, CNMS_BLOCK, 0, stream>>> (
        (const float *) d_tensor, n_anchors, stride, n_strips,
        score_threshold, abits, d_hdr, recs, rows, d_keys, d_vals, report);
  return cudaGetLastError ();
}
