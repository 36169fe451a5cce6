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

/* The LaneATT decode of anchor a (a proposal row of stride = 5 + S
 * elements; a >= n_anchors: none), every lane of the warp calling it:
 * score cnms_lane_score (l0, l1), a candidate iff cnms_score_ok and
 * cnms_lane_rows; its record (score, anchor, all else 0) in recs[slot];
 * a nonfinite score counted into report[CNMS_REP_NONFINITE]. The row's
 * four values are loaded at once; the x are not read here: the sort
 * phase copies the rows of the candidates that the mask needs, spread
 * over the grid (cnms_lane_copy_row). */
template <typename T>
__device__ __forceinline__ void
cnms_decode_lane (const T *__restrict__ t, int a, int n_anchors, int stride,
    int n_strips, float score_threshold, int abits,
    int32_t *__restrict__ hdr, cnms_det *__restrict__ recs,
    uint64_t *__restrict__ keys, uint32_t *__restrict__ vals,
    int32_t *__restrict__ report)
{
  bool ok = false, nonfinite = false;
  float score = 0.0f;

  if (a < n_anchors) {
    const T *r = t + (size_t) stride * a;
    const float l0 = cnms_ld (r, 0), l1 = cnms_ld (r, 1);
    const float sy = cnms_ld (r, 2), len = cnms_ld (r, 4);
    int32_t start, end;

    score = cnms_lane_score (l0, l1);
    nonfinite = !cnms_isfinite (score);
    ok = cnms_score_ok (score, score_threshold)
        && cnms_lane_rows (sy, len, n_strips, &start, &end) != 0;
  }
  if (nonfinite)
    atomicAdd (&report[CNMS_REP_NONFINITE], 1);

  const int slot = cnms_warp_reserve (ok, &hdr[CNMS_HDR_COUNT]);
  if (ok && slot < n_anchors) {
    cnms_det rec;

    memset (&rec, 0, sizeof rec);
    rec.score = score;
    rec.anchor = a;
    recs[slot] = rec;
    keys[slot] = cnms_cuda_compact_key (score, (uint32_t) a, abits);
    vals[slot] = (uint32_t) slot;
  }
}

#endif /* CNMS_CUDA_DECODE_CUH */
