/* Count-header decode: raw YOLO tensor -> [count | candidate records],
 * plus one compact sort key and the record position per candidate. The
 * arithmetic is cnms_math.h's, the same calls in the same order as the
 * CPU backend (cpu_decode.c), so records match bit for bit. Records land
 * in atomic order; the sort that follows makes the order deterministic. */
#include "cnms_cuda_device.cuh"

/* yolov5 rows staged in shared memory per block (one thread per row);
 * a multiple of 32 (whole warps) and at most CNMS_BLOCK. */
#define CNMS_V5_ROWS 64
/* Largest staged tile before falling back to direct global reads. */
#define CNMS_V5_MAX_SMEM (48 * 1024)

/* Writes one candidate into the count-header buffer and its sort inputs. */
__device__ __forceinline__ void
emit_candidate (bool ok, float score, const float *box, int32_t cls,
    int anchor, int capacity, int abits, int32_t *hdr, cnms_det *recs,
    uint64_t *keys, uint32_t *vals)
{
  const int slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  cnms_det r;

  if (slot < 0 || slot >= capacity)
    return;
  r.score = score;
  r.x1 = box[0];
  r.y1 = box[1];
  r.x2 = box[2];
  r.y2 = box[3];
  r.class_id = cls;
  r.anchor = anchor;
  r.reserved = 0;
  recs[slot] = r;
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) anchor, abits);
  vals[slot] = (uint32_t) slot;
}

/* yolov5 row: score = objectness x first maximum class score (NaN never
 * wins a strict >). Returns whether the anchor is a candidate. */
template <typename P>
__device__ __forceinline__ bool
eval_yolov5_row (const P *row, int n_classes, const cnms_map &map,
    float thr, float *score, float *box, int32_t *cls)
{
  float best = CNMS_BEST_CLASS_INIT;
  int32_t bc = 0;

  for (int c = 0; c < n_classes; c++) {
    const float v = cnms_ld (row, 5 + c);
    if (v > best) {
      best = v;
      bc = c;
    }
  }
  *cls = bc;
  *score = cnms_fmul (cnms_ld (row, 4), best);
  if (!cnms_score_ok (*score, thr))
    return false;
  return cnms_map_cxcywh (&map, cnms_ld (row, 0), cnms_ld (row, 1),
      cnms_ld (row, 2), cnms_ld (row, 3), box) != 0;
}

/* yolov5 [1, N, 5+C], one thread per row. STAGED: the block's rows are
 * one contiguous span, read coalesced into shared memory (as floats),
 * then each thread scans its own row there (odd strides are bank-conflict
 * free). Rows too wide to stage are scanned in global memory instead. */
template <typename T, bool STAGED>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_yolov5 (const T *__restrict__ t, int n_anchors, int n_classes,
    cnms_map map, float thr, int abits, int32_t *__restrict__ hdr,
    cnms_det *__restrict__ recs, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  extern __shared__ float s_rows[];
  const int stride = 5 + n_classes;
  const int a0 = blockIdx.x * blockDim.x;
  const int a = a0 + (int) threadIdx.x;
  float score = 0.0f, box[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
  int32_t cls = 0;
  bool ok = false;

  if constexpr (STAGED) {
    const int total = min ((int) blockDim.x, n_anchors - a0) * stride;
    const T *src = t + (size_t) a0 * stride;
    for (int e = threadIdx.x; e < total; e += blockDim.x)
      s_rows[e] = cnms_ld (src, e);
    __syncthreads ();
    if (a < n_anchors)
      ok = eval_yolov5_row (s_rows + (size_t) threadIdx.x * stride,
          n_classes, map, thr, &score, box, &cls);
  } else {
    if (a < n_anchors)
      ok = eval_yolov5_row (t + (size_t) a * stride, n_classes, map, thr,
          &score, box, &cls);
  }
  emit_candidate (ok, score, box, cls, a, n_anchors, abits, hdr, recs, keys,
      vals);
}

/* yolov8 [1, 4+C, N]: one thread per anchor; row r of the tensor is read
 * at r * N + anchor, so each warp reads 32 consecutive elements. */
template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_yolov8 (const T *__restrict__ t, int n_anchors, int n_classes,
    cnms_map map, float thr, int abits, int32_t *__restrict__ hdr,
    cnms_det *__restrict__ recs, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t n = (size_t) n_anchors;
  float best = CNMS_BEST_CLASS_INIT, box[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
  int32_t bc = 0;
  bool ok = false;

  if (a < n_anchors) {
    for (int c = 0; c < n_classes; c++) {
      const float v = cnms_ld (t, (4 + (size_t) c) * n + a);
      if (v > best) {
        best = v;
        bc = c;
      }
    }
    ok = cnms_score_ok (best, thr)
        && cnms_map_cxcywh (&map, cnms_ld (t, a), cnms_ld (t, n + a),
        cnms_ld (t, 2 * n + a), cnms_ld (t, 3 * n + a), box);
  }
  emit_candidate (ok, best, box, bc, a, n_anchors, abits, hdr, recs, keys,
      vals);
}

/* end2end [1, K, 6]: x1 y1 x2 y2 score class, one thread per row. */
template <typename T>
__global__ void __launch_bounds__ (CNMS_BLOCK)
decode_end2end (const T *__restrict__ t, int n_anchors, cnms_map map,
    float thr, int abits, int32_t *__restrict__ hdr,
    cnms_det *__restrict__ recs, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals)
{
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  float score = 0.0f, box[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
  int32_t cls = 0;
  bool ok = false;

  if (a < n_anchors) {
    const T *row = t + (size_t) a * 6;
    score = cnms_ld (row, 4);
    ok = cnms_score_ok (score, thr)
        && cnms_class_from_float (cnms_ld (row, 5), &cls)
        && cnms_map_box (&map, cnms_ld (row, 0), cnms_ld (row, 1),
        cnms_ld (row, 2), cnms_ld (row, 3), box);
  }
  emit_candidate (ok, score, box, cls, a, n_anchors, abits, hdr, recs, keys,
      vals);
}

/* Launches the decode kernel of one layout for element type T. */
template <typename T>
static cudaError_t
launch_decode (const T *t, const cnms_shape *s, const cnms_map *map,
    float thr, int abits, int32_t *hdr, cnms_det *recs, uint64_t *keys,
    uint32_t *vals, cudaStream_t stream)
{
  const int n = s->n_anchors;
  const int grid = cnms_ceil_div (n, CNMS_BLOCK);

  switch (s->layout) {
    case CNMS_LAYOUT_YOLOV5:{
      const size_t smem =
          (size_t) CNMS_V5_ROWS * (5 + (size_t) s->n_classes) * sizeof (float);
      if (smem <= CNMS_V5_MAX_SMEM)
        decode_yolov5 < T, true > <<<cnms_ceil_div (n, CNMS_V5_ROWS),
            CNMS_V5_ROWS, smem, stream>>> (t, n, s->n_classes, *map, thr,
            abits, hdr, recs, keys, vals);
      else
        decode_yolov5 < T, false > <<<grid, CNMS_BLOCK, 0, stream>>> (t, n,
            s->n_classes, *map, thr, abits, hdr, recs, keys, vals);
      break;
    }
    case CNMS_LAYOUT_YOLOV8:
      decode_yolov8 < T > <<<grid, CNMS_BLOCK, 0, stream>>> (t, n,
          s->n_classes, *map, thr, abits, hdr, recs, keys, vals);
      break;
    case CNMS_LAYOUT_END2END:
      decode_end2end < T > <<<grid, CNMS_BLOCK, 0, stream>>> (t, n, *map, thr,
          abits, hdr, recs, keys, vals);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError ();
}

cudaError_t
cnms_cuda_decode (const void *d_tensor, cnms_dtype dtype,
    const cnms_shape *shape, const cnms_map *map, float score_threshold,
    int abits, bool fill_keys, void *d_cand, uint64_t *d_keys,
    uint32_t *d_vals, cudaStream_t stream)
{
  int32_t *hdr = (int32_t *) d_cand;
  cnms_det *recs = (cnms_det *) ((char *) d_cand + CNMS_HEADER_BYTES);
  cudaError_t e;

  e = cnms_cuda_sort_prepare (hdr, d_keys, fill_keys ? shape->n_anchors : 0,
      stream);
  if (e != cudaSuccess)
    return e;
  if (dtype == CNMS_DTYPE_FLOAT16)
    return launch_decode ((const uint16_t *) d_tensor, shape, map,
        score_threshold, abits, hdr, recs, d_keys, d_vals, stream);
  return launch_decode ((const float *) d_tensor, shape, map,
      score_threshold, abits, hdr, recs, d_keys, d_vals, stream);
}
