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

/* Elements a lane of the lane decode loads at a time when copying its
 * warp's candidate rows (the first of them before the warp's slots are
 * known: a frame's warp has a few candidates, 77 elements each). */
#define CNMS_LANE_COPY_LOADS 12

/* The LaneATT decode: one thread per anchor (a proposal row of stride =
 * 5 + S elements). The candidates' rows are copied as floats by their
 * warp, the warp's rows one after another as one run of elements: the
 * loads of the first CNMS_LANE_COPY_LOADS x 32 elements are issued before
 * the warp's one atomicAdd for its slots (which only places the stores),
 * so that the two round trips overlap. */
template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_lanes_kernel (const T *__restrict__ t, int n_anchors, int stride,
    int n_strips, float score_threshold, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    float *__restrict__ rows, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int32_t *__restrict__ report)
{
  __shared__ int s_anchor[CNMS_BLOCK / 32][32];
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  const T *r = t + (size_t) stride * (a < n_anchors ? a : 0);
  const int lane = (int) (threadIdx.x & 31), w = (int) (threadIdx.x >> 5);
  bool ok = false, nonfinite = false;
  float score = 0.0f;

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

  const unsigned m = __ballot_sync (CNMS_FULL_WARP, ok);
  if (m == 0)
    return;                     /* the whole warp: no candidate */
  const int pos = __popc (m & ((1u << lane) - 1u));
  const int total = __popc (m) * stride;
  float v[CNMS_LANE_COPY_LOADS];

  if (ok)
    s_anchor[w][pos] = a;
  __syncwarp ();
  /* element e of the run: row e / stride of the warp's candidates */
  auto load = [&] (int base) {
#pragma unroll
    for (int u = 0; u < CNMS_LANE_COPY_LOADS; u++) {
      const int e = base + u * 32 + lane;

      v[u] = 0.0f;
      if (e < total) {
        const int k = e / stride, col = e - k * stride;

        v[u] = cnms_ld (t + (size_t) stride * (size_t) s_anchor[w][k], col);
      }
    }
  };
  load (0);

  /* the warp's slots: one atomicAdd (cnms_warp_reserve's) */
  int first = 0;
  if (lane == __ffs (m) - 1)
    first = atomicAdd (&hdr[CNMS_HDR_COUNT], __popc (m));
  first = __shfl_sync (CNMS_FULL_WARP, first, __ffs (m) - 1);
  const int slot = first + pos;
  if (ok && slot < n_anchors) {
    cnms_det rec;

    memset (&rec, 0, sizeof rec);
    rec.score = score;
    rec.anchor = a;
    recs[slot] = rec;
    keys[slot] = cnms_cuda_compact_key (score, (uint32_t) a, abits);
    vals[slot] = (uint32_t) slot;
  }
  for (int base = 0;;) {
#pragma unroll
    for (int u = 0; u < CNMS_LANE_COPY_LOADS; u++) {
      const int e = base + u * 32 + lane;

      if (e < total) {
        const int k = e / stride, col = e - k * stride;

        if (first + k < n_anchors)
          rows[(size_t) stride * (size_t) (first + k) + (size_t) col] = v[u];
      }
    }
    base += 32 * CNMS_LANE_COPY_LOADS;
    if (base >= total)
      break;
    load (base);
  }
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
