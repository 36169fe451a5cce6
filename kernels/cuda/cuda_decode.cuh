/* Decode pieces shared by the decode kernels (cuda_decode.cu) and the
 * engine's fused YOLOv8 / YOLOv8-OBB decode phase (cuda_engine.cu): the
 * candidate write into the count-header buffer, and the YOLOv8 class scan
 * of one group of 32 anchors. The per-anchor rule is cnms_math.h's. */
#ifndef CNMS_CUDA_DECODE_CUH
#define CNMS_CUDA_DECODE_CUH

#include "cnms_cuda_device.cuh"

/* Keeps value if row comes before every row kept so far at the 64-bit
 * report word pair first: the key orders by row, first row largest, and
 * is never 0 (rows are below 2^31). */
__device__ __forceinline__ void
cnms_report_first (int32_t *first, int row, float value)
{
  const unsigned long long key =
      ((unsigned long long) (0xffffffffu - (uint32_t) row) << 32)
      | (unsigned long long) __float_as_uint (value);

  atomicMax ((unsigned long long *) first, key);
}

/* The report of end2end row a: a non-finite score, and a candidate's
 * score with an invalid or a fractional class value. Atomics only for
 * such rows, which are rare. */
__device__ __forceinline__ void
cnms_report_end2end (const float *row, float thr, int a, int32_t *rep)
{
  const int kind = cnms_end2end_class_kind (row, thr);

  if (!cnms_isfinite (row[4]))
    atomicAdd (&rep[CNMS_REP_NONFINITE], 1);
  if (kind == CNMS_E2E_CLASS_INVALID) {
    atomicAdd (&rep[CNMS_REP_INVALID], 1);
    cnms_report_first (&rep[CNMS_REP_FIRST_INVALID], a, row[5]);
  } else if (kind == CNMS_E2E_CLASS_FRACTIONAL) {
    atomicAdd (&rep[CNMS_REP_FRACTIONAL], 1);
    cnms_report_first (&rep[CNMS_REP_FIRST_FRACTIONAL], a, row[5]);
  }
}

/* Writes one candidate into the count-header buffer and its sort inputs:
 * box is x1 y1 x2 y2 (angle 0), or an oriented box's cx cy w h with its
 * angle; every lane of the warp calls it. */
__device__ __forceinline__ void
cnms_emit_candidate (bool ok, float score, const float *box, float angle,
    int32_t cls, int anchor, int capacity, int abits, int32_t *hdr,
    cnms_det *recs, uint64_t *keys, uint32_t *vals)
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
  r.angle = angle;
  recs[slot] = r;
  keys[slot] = cnms_cuda_compact_key (score, (uint32_t) anchor, abits);
  vals[slot] = (uint32_t) slot;
}

/* YOLOv8 [1, 4+C, N] (and YOLOv8-OBB [1, 4+C+1, N], whose class rows are
 * the same): lane l folds the classes c0, c0 + step, ... of
 * anchor a (a < n) into its first maximum, loading BATCH class rows
 * before folding them so that the loads are in flight together. A warp
 * reads one 128-byte line per class row (32 consecutive anchors). */
template <int BATCH, typename T>
__device__ __forceinline__ void
cnms_v8_scan (const T *__restrict__ t, size_t n, int a, int n_classes,
    int c0, int step, float *best, int32_t *bc)
{
  int c = c0;

  for (; c + (BATCH - 1) * step < n_classes; c += BATCH * step) {
    float v[BATCH];
#pragma unroll
    for (int b = 0; b < BATCH; b++)
      v[b] = cnms_ld (t, (4 + (size_t) (c + b * step)) * n + a);
#pragma unroll
    for (int b = 0; b < BATCH; b++)
      cnms_best_fold (v[b], c + b * step, best, bc);
  }
  for (; c < n_classes; c += step)
    cnms_best_fold (cnms_ld (t, (4 + (size_t) c) * n + a), c, best, bc);
}

/* Elements a lane of the lane decode loads at a time when copying its
 * warp's candidate rows (the first of them before the warp's slots are
 * known: a frame's warp has a few candidates, 5 + S elements each). */
#define CNMS_LANE_COPY_LOADS 12

/* The LaneATT decode of anchor a (a proposal row of stride = 5 + S
 * elements; a >= n_anchors: none), every lane of the warp calling it:
 * score cnms_lane_score (l0, l1), a candidate iff cnms_score_ok and
 * cnms_lane_rows; its record (score, anchor, all else 0) in recs[slot],
 * its row as floats in rows[slot][stride]; a nonfinite score counted into
 * report[CNMS_REP_NONFINITE]. The candidates' rows are copied by their
 * warp, the warp's rows one after another as one run of elements: the
 * loads of the first CNMS_LANE_COPY_LOADS x 32 elements are issued before
 * the warp's one atomicAdd for its slots (which only places the stores),
 * so that the two round trips overlap. s_anchor: 32 ints of the warp's in
 * shared memory. */
template <typename T>
__device__ __forceinline__ void
cnms_decode_lane (const T *__restrict__ t, int a, int n_anchors, int stride,
    int n_strips, float score_threshold, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    float *__restrict__ rows, uint64_t *__restrict__ keys,
    uint32_t *__restrict__ vals, int32_t *__restrict__ report,
    int *s_anchor)
{
  const T *r = t + (size_t) stride * (a < n_anchors ? a : 0);
  const int lane = (int) (threadIdx.x & 31);
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
    s_anchor[pos] = a;
  __syncwarp ();
  /* element e of the run: row e / stride of the warp's candidates */
  auto load = [&] (int base) {
#pragma unroll
    for (int u = 0; u < CNMS_LANE_COPY_LOADS; u++) {
      const int e = base + u * 32 + lane;

      v[u] = 0.0f;
      if (e < total) {
        const int k = e / stride, col = e - k * stride;

        v[u] = cnms_ld (t + (size_t) stride * (size_t) s_anchor[k], col);
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
  /* the warp's next call overwrites s_anchor */
  __syncwarp ();
}

#endif /* CNMS_CUDA_DECODE_CUH */
