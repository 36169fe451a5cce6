/* The CUDA backend: per call, one upload from pinned staging, the
 * kernels, one download of [header | kept results] into pinned memory
 * and one cudaStreamSynchronize, all on the context's own stream.
 *
 *   decode (count-header) -> radix sort -> gather first min(count, cap)
 *   -> phase 1 bitmask -> phase 2 resolve + compaction -> download
 *
 * The candidate buffer holds every anchor, so nothing is lost to the
 * atomic race; the cap to max_candidates is taken after the sort, which
 * keeps the best ones exactly as the CPU backend does. */
#include <string.h>

#include "cnms_cuda.cuh"

/* Bytes of a tensor of the resolved shape. */
static size_t
tensor_bytes (const cnms_shape *s, cnms_dtype dtype)
{
  size_t es = dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  size_t n = (size_t) s->n_anchors;

  switch (s->layout) {
    case CNMS_LAYOUT_YOLOV5:
      return n * (5 + (size_t) s->n_classes) * es;
    case CNMS_LAYOUT_YOLOV8:
      return n * (4 + (size_t) s->n_classes) * es;
    default:
      return n * 6 * es;
  }
}

static size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Reserves the sort buffers and CUB temp storage for n pairs. */
static cnms_status
reserve_sort (cnms_ctx *ctx, cnms_cuda_priv *s, int n, int abits,
    size_t *temp_bytes)
{
  const size_t nn = (size_t) n;

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_keys[0],
          nn * sizeof (uint64_t), "sort keys"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_keys[1],
          nn * sizeof (uint64_t), "sort keys"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_vals[0],
          nn * sizeof (uint32_t), "sort values"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_vals[1],
          nn * sizeof (uint32_t), "sort values"));
  CNMS_CUDA_TRY (ctx, cnms_cuda_sort_temp_bytes (n, abits, temp_bytes),
      "sizing the radix sort");
  return cnms_cuda_reserve_device (ctx, &s->d_sort_tmp, *temp_bytes,
      "sort temp storage");
}

/* Reserves the phase 1/2 buffers for cap sorted boxes. */
static cnms_status
reserve_nms (cnms_ctx *ctx, cnms_cuda_priv *s, int cap, size_t *smem)
{
  const size_t col_blocks = (size_t) cnms_ceil_div (cap, CNMS_TILE);

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_boxes,
          (size_t) cap * sizeof (float4), "sorted boxes"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cls,
          (size_t) cap * sizeof (int32_t), "sorted classes"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_mask,
          (size_t) cap * col_blocks * sizeof (uint64_t),
          "NMS suppression mask"));
  *smem = cnms_cuda_resolve_smem_bytes (cap);
  return cnms_cuda_resolve_smem (ctx, *smem);
}

/* Reserves the output header + body on the device and in pinned memory. */
static cnms_status
reserve_out (cnms_ctx *ctx, cnms_cuda_priv *s, size_t bytes)
{
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_out, bytes, "results"));
  return cnms_cuda_reserve_pinned (ctx, &s->h_out, bytes,
      "results download");
}

/* Waits for whatever a failed call left queued, so that the next call
 * never overwrites staging that a copy still reads. */
static cnms_status
drain (cnms_cuda_priv *s, cnms_status st)
{
  if (st != CNMS_OK) {
    (void) cudaStreamSynchronize (s->stream);
    (void) cudaGetLastError ();
  }
  return st;
}

/* Enqueues decode .. download of one tensor. */
static cnms_status
enqueue_detect (cnms_ctx *ctx, cnms_cuda_priv *s, const cnms_tensor *t,
    const cnms_shape *shape, const cnms_params *p, const cnms_map *map,
    size_t *out_bytes)
{
  const int n = shape->n_anchors;
  const int cap = n < p->max_candidates ? n : p->max_candidates;
  const int max_keep = p->max_detections < cap ? p->max_detections : cap;
  const int abits = cnms_cuda_key_bits (n);
  const bool e2e = shape->layout == CNMS_LAYOUT_END2END;
  const size_t in_bytes = tensor_bytes (shape, t->dtype);
  size_t temp_bytes = 0, smem = 0;
  const void *d_tensor = t->data;
  uint64_t *keys[2];
  uint32_t *vals[2];
  int which = 0;

  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (cnms_det);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand,
          CNMS_HEADER_BYTES + (size_t) n * sizeof (cnms_det),
          "candidate buffer"));
  CNMS_TRY (reserve_sort (ctx, s, n, abits, &temp_bytes));
  if (!e2e)
    CNMS_TRY (reserve_nms (ctx, s, cap, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  if (!t->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes, "tensor"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
            "tensor staging"));
    memcpy (s->h_stage.p, t->data, in_bytes);
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_in.p, s->h_stage.p, in_bytes,
            cudaMemcpyHostToDevice, s->stream), "uploading the tensor");
    d_tensor = s->d_in.p;
  }

  keys[0] = (uint64_t *) s->d_keys[0].p;
  keys[1] = (uint64_t *) s->d_keys[1].p;
  vals[0] = (uint32_t *) s->d_vals[0].p;
  vals[1] = (uint32_t *) s->d_vals[1].p;
  CNMS_CUDA_TRY (ctx, cnms_cuda_decode (d_tensor, t->dtype, shape, map,
          p->score_threshold, abits, s->d_cand.p, keys[0], vals[0],
          s->stream), "decode kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_sort (s->d_sort_tmp.p, temp_bytes, keys,
          vals, n, abits, &which, s->stream), "radix sort");

  if (e2e) {
    CNMS_CUDA_TRY (ctx, cnms_cuda_copy_top (s->d_cand.p, vals[which], cap,
            max_keep, s->d_out.p, s->stream), "end2end copy kernel");
  } else {
    CNMS_CUDA_TRY (ctx, cnms_cuda_gather_dets (s->d_cand.p, vals[which], cap,
            (float4 *) s->d_boxes.p, (int32_t *) s->d_cls.p,
            (int32_t *) s->d_out.p, s->stream), "gather kernel");
    CNMS_CUDA_TRY (ctx, cnms_cuda_nms_mask ((const float4 *) s->d_boxes.p,
            (const int32_t *) s->d_cls.p, (const int32_t *) s->d_cand.p, cap,
            p->iou, p->class_agnostic, s->mask_blocks,
            (uint64_t *) s->d_mask.p, s->stream),
        "NMS mask kernel");
    CNMS_CUDA_TRY (ctx, cnms_cuda_nms_resolve ((const uint64_t *) s->d_mask.p,
            (const int32_t *) s->d_cand.p, cap, max_keep, vals[which],
            s->d_cand.p, s->d_out.p, smem, s->stream), "NMS resolve kernel");
  }
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_out.p, s->d_out.p, *out_bytes,
          cudaMemcpyDeviceToHost, s->stream), "downloading the results");
  return CNMS_OK;
}

static cnms_status
cuda_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_shape *shape,
    const cnms_params *p, const cnms_map *map, const cnms_det **dets,
    int *n_dets)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  const int32_t *hdr;
  size_t out_bytes = 0;
  int kept, max_keep;

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  CNMS_TRY (drain (s, enqueue_detect (ctx, s, t, shape, p, map,
              &out_bytes)));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "running the kernels");

  hdr = (const int32_t *) s->h_out.p;
  max_keep = (int) ((out_bytes - CNMS_HEADER_BYTES) / sizeof (cnms_det));
  kept = hdr[CNMS_OUT_KEPT];
  ctx->last_candidates = hdr[CNMS_OUT_CANDIDATES];
  *dets = (const cnms_det *) ((const char *) s->h_out.p + CNMS_HEADER_BYTES);
  *n_dets = kept < 0 ? 0 : (kept < max_keep ? kept : max_keep);
  return CNMS_OK;
}

/* Enqueues upload .. download of a plain NMS call; in_bytes of staging:
 * boxes at 0, scores, then (class-aware only) classes, 16-byte aligned. */
static cnms_status
enqueue_nms (cnms_ctx *ctx, cnms_cuda_priv *s, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int max_keep, size_t *out_bytes)
{
  const size_t nn = (size_t) n;
  const size_t off_scores = nn * 4 * sizeof (float);
  const size_t off_classes = align_up (off_scores + nn * sizeof (float), 16);
  const size_t in_bytes = classes != NULL ?
      off_classes + nn * sizeof (int32_t) : off_scores + nn * sizeof (float);
  const int abits = cnms_cuda_key_bits (n);
  size_t temp_bytes = 0, smem = 0;
  char *d_in, *h_in;
  uint64_t *keys[2];
  uint32_t *vals[2];
  int which = 0;

  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (int64_t);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes,
          "NMS input"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
          "NMS input staging"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand, CNMS_HEADER_BYTES,
          "count header"));
  CNMS_TRY (reserve_sort (ctx, s, n, abits, &temp_bytes));
  CNMS_TRY (reserve_nms (ctx, s, n, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  h_in = (char *) s->h_stage.p;
  d_in = (char *) s->d_in.p;
  memcpy (h_in, boxes, off_scores);
  memcpy (h_in + off_scores, scores, nn * sizeof (float));
  if (classes != NULL)
    memcpy (h_in + off_classes, classes, nn * sizeof (int32_t));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the boxes");

  keys[0] = (uint64_t *) s->d_keys[0].p;
  keys[1] = (uint64_t *) s->d_keys[1].p;
  vals[0] = (uint32_t *) s->d_vals[0].p;
  vals[1] = (uint32_t *) s->d_vals[1].p;
  CNMS_CUDA_TRY (ctx, cnms_cuda_filter ((const float *) d_in,
          (const float *) (d_in + off_scores), n, abits,
          (int32_t *) s->d_cand.p, keys[0], vals[0], s->stream),
      "filter kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_sort (s->d_sort_tmp.p, temp_bytes, keys,
          vals, n, abits, &which, s->stream), "radix sort");
  CNMS_CUDA_TRY (ctx, cnms_cuda_gather_plain ((const float *) d_in,
          classes != NULL ? (const int32_t *) (d_in + off_classes) : NULL,
          vals[which], n, (int32_t *) s->d_cand.p, (float4 *) s->d_boxes.p,
          (int32_t *) s->d_cls.p, s->stream), "gather kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_mask ((const float4 *) s->d_boxes.p,
          (const int32_t *) s->d_cls.p, (const int32_t *) s->d_cand.p, n, iou,
          classes == NULL, s->mask_blocks, (uint64_t *) s->d_mask.p,
          s->stream),
      "NMS mask kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_resolve ((const uint64_t *) s->d_mask.p,
          (const int32_t *) s->d_cand.p, n, max_keep, vals[which], NULL,
          s->d_out.p, smem, s->stream), "NMS resolve kernel");
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_out.p, s->d_out.p, *out_bytes,
          cudaMemcpyDeviceToHost, s->stream), "downloading the results");
  return CNMS_OK;
}

static cnms_status
cuda_nms (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);
  const int max_keep = max_detections > 0 && max_detections < n ?
      max_detections : n;
  size_t out_bytes = 0;
  int kept;

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  /* class ids only matter when suppression is class-aware */
  CNMS_TRY (drain (s, enqueue_nms (ctx, s, boxes, scores,
              class_agnostic ? NULL : classes, n, iou, max_keep,
              &out_bytes)));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "running the kernels");

  kept = ((const int32_t *) s->h_out.p)[CNMS_OUT_KEPT];
  kept = kept < 0 ? 0 : (kept < max_keep ? kept : max_keep);
  memcpy (keep, (const char *) s->h_out.p + CNMS_HEADER_BYTES,
      (size_t) kept * sizeof (int64_t));
  *n_keep = kept;
  return CNMS_OK;
}

extern "C" const cnms_backend_ops cnms_cuda_ops = {
  "cuda",
  cnms_cuda_create,
  cnms_cuda_destroy,
  cuda_detect,
  cuda_nms,
};
