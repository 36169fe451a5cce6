/* Count-header decode: raw YOLO tensor -> [count | candidate records],
 * plus one compact sort key and the record position per candidate, for
 * the layouts decoded by a kernel of their own (YOLOv8 and YOLOv8-OBB are
 * decoded inside the engine kernel: cuda_engine.cu).
 *
 * The per-anchor rule (best class, score test, box mapping) is
 * cnms_math.h's, the same calls as the CPU backend's (cpu_decode.c), so
 * records match bit for bit. The class scan, the whole cost of a frame, is
 * spread so that the tensor is read near memory bandwidth:
 *   - yolov5 [1, N, 5+C]: a warp takes 4 rows (contiguous spans), its
 *     lanes stride through them with all four rows' loads in flight, and
 *     the first maxima merge across the warp by shuffles;
 *   - end2end [1, K, 6]: one thread per row.
 * Every kernel counts the rows of the report (cnms_report) into d_report
 * (an atomic per such row: they are rare), which the engine copies out.
 * Candidates are compacted with one atomicAdd per warp
 * (cnms_warp_reserve); they land in atomic order, and the sort that
 * follows makes the order deterministic. */
#include "cuda_decode.cuh"

/* yolov5: rows per warp, and warps per block. */
#define CNMS_V5_ROWS 4
#define CNMS_V5_WARPS 8

template <typename T>
__device__ __forceinline__ void
decode_yolov5_rows (const T *__restrict__ t, int n_anchors, int n_classes,
    const cnms_map &map, const cnms_class_rules &rules, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    uint64_t *__restrict__ keys, uint32_t *__restrict__ vals,
    int32_t *__restrict__ rep)
{
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * CNMS_V5_WARPS + (threadIdx.x >> 5))
      * CNMS_V5_ROWS;
  const int stride = 5 + n_classes;
  float best[CNMS_V5_ROWS], head[CNMS_V5_ROWS];
  int32_t bc[CNMS_V5_ROWS];
  float score = 0.0f, box[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
  int32_t cls = 0;
  bool ok = false;

#pragma unroll
  for (int r = 0; r < CNMS_V5_ROWS; r++) {
    best[r] = CNMS_BEST_CLASS_INIT;
    bc[r] = 0;
    head[r] = 0.0f;
  }
  /* lane e of each pass reads element e of the four rows; elements 0..4
   * (cx cy w h objectness) stay in lanes 0..4 */
  for (int e = lane; e < stride; e += 32) {
    float v[CNMS_V5_ROWS];
#pragma unroll
    for (int r = 0; r < CNMS_V5_ROWS; r++)
      v[r] = row0 + r < n_anchors ?
          cnms_ld (t, (size_t) (row0 + r) * stride + e) : 0.0f;
#pragma unroll
    for (int r = 0; r < CNMS_V5_ROWS; r++) {
      if (e >= 5)
        cnms_best_fold (v[r], e - 5, &best[r], &bc[r]);
      else
        head[r] = v[r];
    }
  }
#pragma unroll
  for (int r = 0; r < CNMS_V5_ROWS; r++) {
    for (int off = 16; off > 0; off >>= 1) {
      const float ov = __shfl_xor_sync (CNMS_FULL_WARP, best[r], off);
      const int32_t oc = __shfl_xor_sync (CNMS_FULL_WARP, bc[r], off);
      cnms_best_merge (ov, oc, &best[r], &bc[r]);
    }
    const float cx = __shfl_sync (CNMS_FULL_WARP, head[r], 0);
    const float cy = __shfl_sync (CNMS_FULL_WARP, head[r], 1);
    const float w = __shfl_sync (CNMS_FULL_WARP, head[r], 2);
    const float h = __shfl_sync (CNMS_FULL_WARP, head[r], 3);
    const float obj = __shfl_sync (CNMS_FULL_WARP, head[r], 4);
    if (lane == r && row0 + r < n_anchors) {
      score = cnms_yolov5_score (obj, best[r]);
      cls = bc[r];
      ok = cnms_anchor_candidate (&map, score, cnms_class_thr (&rules, cls),
          cx, cy, w, h, box) != 0;
    }
  }
  /* lane r holds row r's score; non-finite ones are rare */
  if (lane < CNMS_V5_ROWS && row0 + lane < n_anchors
      && !cnms_isfinite (score))
    atomicAdd (&rep[CNMS_REP_NONFINITE], 1);
  cnms_emit_candidate (ok, score, box, 0.0f, cls, row0 + lane, n_anchors,
      abits, hdr, recs, keys, vals);
}

template <typename T>
__global__ void __launch_bounds__ (CNMS_V5_WARPS * 32)
decode_yolov5 (const T *__restrict__ t, int n_anchors, int n_classes,
    cnms_map map, cnms_class_rules rules, int abits, int32_t *__restrict__ hdr,
    cnms_det *__restrict__ recs, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int32_t *__restrict__ rep)
{
  decode_yolov5_rows (t, n_anchors, n_classes, map, rules, abits, hdr, recs,
      keys, vals, rep);
}

template <typename T>
__device__ __forceinline__ void
decode_end2end_rows (const T *__restrict__ t, int n_anchors,
    const cnms_map &map, const cnms_class_rules &rules, float thr, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    uint64_t *__restrict__ keys, uint32_t *__restrict__ vals,
    int32_t *__restrict__ rep)
{
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  float row[6], box[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
  int32_t cls = 0;
  bool ok = false;

  if (a < n_anchors) {
    for (int f = 0; f < 6; f++)
      row[f] = cnms_ld (t, (size_t) a * 6 + f);
    ok = cnms_end2end_candidate (&map, row, &rules, box, &cls) != 0;
    cnms_report_end2end (row, thr, a, rep);
  }
  cnms_emit_candidate (ok, ok ? row[4] : 0.0f, box, 0.0f, cls, a, n_anchors,
      abits, hdr, recs, keys, vals);
}

template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_end2end (const T *__restrict__ t, int n_anchors, cnms_map map,
    cnms_class_rules rules, float thr, int abits, int32_t *__restrict__ hdr,
    cnms_det *__restrict__ recs, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int32_t *__restrict__ rep)
{
  decode_end2end_rows (t, n_anchors, map, rules, thr, abits, hdr, recs, keys,
      vals, rep);
}

/* The decode of a batch: frame blockIdx.y of frames on the blocks of its
 * row that its anchors need (the others leave at once). */
template <typename T>
__global__ void __launch_bounds__ (CNMS_V5_WARPS * 32)
decode_yolov5_batch (const cnms_decode_frame *__restrict__ frames,
    int n_classes, cnms_class_rules rules)
{
  const cnms_decode_frame &f = frames[blockIdx.y];

  if ((long long) blockIdx.x * CNMS_V5_ROWS * CNMS_V5_WARPS >= f.n_anchors)
    return;
  decode_yolov5_rows ((const T *) f.tensor, f.n_anchors, n_classes, f.map,
      rules, f.abits, f.hdr, f.recs, f.keys, f.vals, f.report);
}

template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_end2end_batch (const cnms_decode_frame *__restrict__ frames,
    cnms_class_rules rules, float thr)
{
  const cnms_decode_frame &f = frames[blockIdx.y];

  if ((long long) blockIdx.x * CNMS_BLOCK >= f.n_anchors)
    return;
  decode_end2end_rows ((const T *) f.tensor, f.n_anchors, f.map, rules, thr,
      f.abits, f.hdr, f.recs, f.keys, f.vals, f.report);
}

/* Launches the decode kernel of one layout for element type T. */
template <typename T>
static cudaError_t
launch_decode (const T *t, const cnms_shape *s, const cnms_map *map,
    const cnms_class_rules *rules, float thr, int abits, int32_t *hdr,
    cnms_det *recs, uint64_t *keys, uint32_t *vals, int32_t *rep,
    cudaStream_t stream)
{
  const int n = s->n_anchors;

  switch (s->layout) {
    case CNMS_LAYOUT_YOLOV5:
      decode_yolov5 < T > <<<cnms_ceil_div (n, CNMS_V5_ROWS * CNMS_V5_WARPS),
          CNMS_V5_WARPS * 32, 0, stream>>> (t, n, s->n_classes, *map, *rules,
          abits, hdr, recs, keys, vals, rep);
      break;
    case CNMS_LAYOUT_END2END:
      decode_end2end < T > <<<cnms_ceil_div (n, CNMS_BLOCK), CNMS_BLOCK, 0,
          stream>>> (t, n, *map, *rules, thr, abits, hdr, recs, keys, vals,
          rep);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError ();
}

cudaError_t
cnms_cuda_decode (const void *d_tensor, cnms_dtype dtype,
    const cnms_shape *shape, const cnms_map *map,
    const cnms_class_rules *rules, float score_threshold, int abits,
    void *d_cand, uint64_t *d_keys, uint32_t *d_vals, int32_t *d_report,
    cudaStream_t stream)
{
  int32_t *hdr = (int32_t *) d_cand;
  cnms_det *recs = (cnms_det *) ((char *) d_cand + CNMS_HEADER_BYTES);

  if (dtype == CNMS_DTYPE_FLOAT16)
    return launch_decode ((const uint16_t *) d_tensor, shape, map, rules,
        score_threshold, abits, hdr, recs, d_keys, d_vals, d_report, stream);
  return launch_decode ((const float *) d_tensor, shape, map, rules,
      score_threshold, abits, hdr, recs, d_keys, d_vals, d_report, stream);
}

/* The decode kernel of a batch for element type T. */
template <typename T>
static cudaError_t
launch_decode_batch (const cnms_decode_frame *d_frames, int frames,
    int max_anchors, cnms_layout layout, int n_classes,
    const cnms_class_rules *rules, float thr, cudaStream_t stream)
{
  switch (layout) {
    case CNMS_LAYOUT_YOLOV5:
      decode_yolov5_batch < T > <<<dim3 ((unsigned) cnms_ceil_div (max_anchors,
                  CNMS_V5_ROWS * CNMS_V5_WARPS), (unsigned) frames),
          CNMS_V5_WARPS * 32, 0, stream>>> (d_frames, n_classes, *rules);
      break;
    case CNMS_LAYOUT_END2END:
      decode_end2end_batch < T > <<<dim3 ((unsigned) cnms_ceil_div
              (max_anchors, CNMS_BLOCK), (unsigned) frames), CNMS_BLOCK, 0,
          stream>>> (d_frames, *rules, thr);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError ();
}

bool
cnms_cuda_decode_batch_takes (const cnms_shape *shape)
{
  return shape->layout == CNMS_LAYOUT_YOLOV5
      || shape->layout == CNMS_LAYOUT_END2END;
}

cudaError_t
cnms_cuda_decode_batch (const cnms_decode_frame *d_frames, int frames,
    int max_anchors, cnms_dtype dtype, const cnms_shape *shape,
    const cnms_class_rules *rules, float score_threshold,
    cudaStream_t stream)
{
  if (dtype == CNMS_DTYPE_FLOAT16)
    return launch_decode_batch < uint16_t > (d_frames, frames, max_anchors,
        shape->layout, shape->n_classes, rules, score_threshold, stream);
  return launch_decode_batch < float > (d_frames, frames, max_anchors,
      shape->layout, shape->n_classes, rules, score_threshold, stream);
}
