/* The CUDA backend: per call, one upload from pinned staging, the
 * kernels, one download of [header | kept results] into pinned memory
 * and one cudaStreamSynchronize, all on the context's own stream.
 *
 *   decode (count-header) -> sort -> gather first min(count, cap)
 *   -> phase 1 bitmask -> phase 2 resolve + compaction -> download
 *
 * The sort is one block sorting only the device-side count (sort and
 * gather in one kernel) when the N slots fit in it, CUB over all N slots
 * otherwise (cuda_sort.cu). With timing on, CUDA events bracket the
 * stream work from the upload to the download.
 *
 * The candidate buffer holds every anchor, so nothing is lost to the
 * atomic race; the cap to max_candidates is taken after the sort, which
 * keeps the best ones exactly as the CPU backend does. */
#include <string.h>

#include "cnms_cuda.cuh"

static size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Whether n slots are sorted by the single-block sort (else CUB). */
static bool
use_block_sort (const cnms_cuda_priv *s, int n)
{
  return s->sort_mode == CNMS_SORT_AUTO && n <= s->block_sort_max;
}

/* Reserves the sort buffers for n pairs, and for CUB (block false) the
 * second half of the double buffers and the temp storage. */
static cnms_status
reserve_sort (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int n, int abits, bool block,
    size_t *temp_bytes)
{
  const size_t nn = (size_t) n;
  const int halves = block ? 1 : 2;

  *temp_bytes = 0;
  for (int h = 0; h < halves; h++) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_keys[h],
            nn * sizeof (uint64_t), "sort keys"));
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_vals[h],
            nn * sizeof (uint32_t), "sort values"));
  }
  if (block)
    return CNMS_OK;
  CNMS_CUDA_TRY (ctx, cnms_cuda_sort_temp_bytes (n, abits, temp_bytes),
      "sizing the radix sort");
  return cnms_cuda_reserve_device (ctx, &s->d_sort_tmp, *temp_bytes,
      "sort temp storage");
}

/* Sorts the n slots of keys/vals[0] (the device-side count of them) and
 * gathers as g says; *order gets the sorted values. */
static cnms_status
sort_and_gather (cnms_backend_ctx *ctx, cnms_cuda_priv *s, bool block, int n,
    int abits, size_t temp_bytes, const cnms_gather *g,
    const uint32_t **order)
{
  uint64_t *keys[2] = { (uint64_t *) s->d_keys[0].p,
    (uint64_t *) s->d_keys[1].p
  };
  uint32_t *vals[2] = { (uint32_t *) s->d_vals[0].p,
    (uint32_t *) s->d_vals[1].p
  };
  int which = 0;

  if (block) {
    CNMS_CUDA_TRY (ctx, cnms_cuda_block_sort (keys[0], vals[0], n, abits, g,
            s->stream), "single-block sort");
    *order = vals[0];
    return CNMS_OK;
  }
  CNMS_CUDA_TRY (ctx, cnms_cuda_sort (s->d_sort_tmp.p, temp_bytes, keys,
          vals, n, abits, &which, s->stream), "radix sort");
  *order = vals[which];
  if (g->boxes != NULL)
    CNMS_CUDA_TRY (ctx, cnms_cuda_gather (g, *order, s->stream),
        "gather kernel");
  return CNMS_OK;
}

/* Reserves the phase 1/2 buffers for cap sorted boxes. */
static cnms_status
reserve_nms (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int cap, size_t *smem)
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
reserve_out (cnms_backend_ctx *ctx, cnms_cuda_priv *s, size_t bytes)
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
enqueue_detect (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_tensor *t,
    const cnms_shape *shape, const cnms_params *p, const cnms_map *map,
    size_t *out_bytes)
{
  const int n = shape->n_anchors;
  const int cap = n < p->max_candidates ? n : p->max_candidates;
  const int max_keep = p->max_detections < cap ? p->max_detections : cap;
  const int abits = cnms_cuda_key_bits (n);
  const bool e2e = shape->layout == CNMS_LAYOUT_END2END;
  const bool block = use_block_sort (s, n);
  const size_t in_bytes = cnms_shape_bytes (shape, t->dtype);
  size_t temp_bytes = 0, smem = 0;
  const void *d_tensor = t->data;
  const uint32_t *order = NULL;
  cnms_gather g;

  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (cnms_det);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand,
          CNMS_HEADER_BYTES + (size_t) n * sizeof (cnms_det),
          "candidate buffer"));
  CNMS_TRY (reserve_sort (ctx, s, n, abits, block, &temp_bytes));
  if (!e2e)
    CNMS_TRY (reserve_nms (ctx, s, cap, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));
  if (!t->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes, "tensor"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
            "tensor staging"));
    memcpy (s->h_stage.p, t->data, in_bytes);
  }

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!t->on_device) {
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_in.p, s->h_stage.p, in_bytes,
            cudaMemcpyHostToDevice, s->stream), "uploading the tensor");
    d_tensor = s->d_in.p;
  }
  CNMS_CUDA_TRY (ctx, cnms_cuda_decode (d_tensor, t->dtype, shape, map,
          p->score_threshold, abits, !block, s->d_cand.p,
          (uint64_t *) s->d_keys[0].p, (uint32_t *) s->d_vals[0].p,
          s->stream), "decode kernel");

  memset (&g, 0, sizeof g);
  g.hdr = (int32_t *) s->d_cand.p;
  g.recs = (const cnms_det *) ((const char *) s->d_cand.p +
      CNMS_HEADER_BYTES);
  g.cap = cap;
  if (!e2e) {
    g.boxes = (float4 *) s->d_boxes.p;
    g.cls = (int32_t *) s->d_cls.p;
    g.out_hdr = (int32_t *) s->d_out.p;
  }
  CNMS_TRY (sort_and_gather (ctx, s, block, n, abits, temp_bytes, &g,
          &order));

  if (e2e) {
    CNMS_CUDA_TRY (ctx, cnms_cuda_copy_top (s->d_cand.p, order, cap,
            max_keep, s->d_out.p, s->stream), "end2end copy kernel");
  } else {
    CNMS_CUDA_TRY (ctx, cnms_cuda_nms_mask (s->phase1,
            (const float4 *) s->d_boxes.p, (const int32_t *) s->d_cls.p,
            (const int32_t *) s->d_cand.p, cap, p->iou, p->class_agnostic,
            s->sms, (uint64_t *) s->d_mask.p, s->stream), "NMS mask kernel");
    CNMS_CUDA_TRY (ctx, cnms_cuda_nms_resolve ((const uint64_t *) s->d_mask.p,
            (const int32_t *) s->d_cand.p, cap, max_keep, order,
            s->d_cand.p, s->d_out.p, smem, s->stream), "NMS resolve kernel");
  }
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_out.p, s->d_out.p, *out_bytes,
          cudaMemcpyDeviceToHost, s->stream), "downloading the results");
  return cnms_cuda_timing_end (ctx);
}

static cnms_status
cuda_detect (cnms_backend_ctx *ctx, const cnms_tensor *t, const cnms_shape *shape,
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
  CNMS_TRY (cnms_cuda_timing_read (ctx));

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
enqueue_nms (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int max_keep, size_t *out_bytes)
{
  const size_t nn = (size_t) n;
  const size_t off_scores = nn * 4 * sizeof (float);
  const size_t off_classes = align_up (off_scores + nn * sizeof (float), 16);
  const size_t in_bytes = classes != NULL ?
      off_classes + nn * sizeof (int32_t) : off_scores + nn * sizeof (float);
  const int abits = cnms_cuda_key_bits (n);
  const bool block = use_block_sort (s, n);
  size_t temp_bytes = 0, smem = 0;
  const uint32_t *order = NULL;
  cnms_gather g;
  char *d_in, *h_in;

  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (int64_t);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes,
          "NMS input"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
          "NMS input staging"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand, CNMS_HEADER_BYTES,
          "count header"));
  CNMS_TRY (reserve_sort (ctx, s, n, abits, block, &temp_bytes));
  CNMS_TRY (reserve_nms (ctx, s, n, &smem));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  h_in = (char *) s->h_stage.p;
  d_in = (char *) s->d_in.p;
  memcpy (h_in, boxes, off_scores);
  memcpy (h_in + off_scores, scores, nn * sizeof (float));
  if (classes != NULL)
    memcpy (h_in + off_classes, classes, nn * sizeof (int32_t));
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the boxes");

  CNMS_CUDA_TRY (ctx, cnms_cuda_filter ((const float *) d_in,
          (const float *) (d_in + off_scores), n, abits, !block,
          (int32_t *) s->d_cand.p, (uint64_t *) s->d_keys[0].p,
          (uint32_t *) s->d_vals[0].p, s->stream), "filter kernel");
  memset (&g, 0, sizeof g);
  g.hdr = (int32_t *) s->d_cand.p;
  g.boxes_in = (const float4 *) d_in;
  g.classes_in = classes != NULL ?
      (const int32_t *) (d_in + off_classes) : NULL;
  g.cap = n;
  g.boxes = (float4 *) s->d_boxes.p;
  g.cls = (int32_t *) s->d_cls.p;
  CNMS_TRY (sort_and_gather (ctx, s, block, n, abits, temp_bytes, &g,
          &order));
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_mask (s->phase1,
          (const float4 *) s->d_boxes.p, (const int32_t *) s->d_cls.p,
          (const int32_t *) s->d_cand.p, n, iou, classes == NULL, s->sms,
          (uint64_t *) s->d_mask.p, s->stream), "NMS mask kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_resolve ((const uint64_t *) s->d_mask.p,
          (const int32_t *) s->d_cand.p, n, max_keep, order, NULL,
          s->d_out.p, smem, s->stream), "NMS resolve kernel");
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_out.p, s->d_out.p, *out_bytes,
          cudaMemcpyDeviceToHost, s->stream), "downloading the results");
  return cnms_cuda_timing_end (ctx);
}

static cnms_status
cuda_nms (cnms_backend_ctx *ctx, const float *boxes, const float *scores,
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
  CNMS_TRY (cnms_cuda_timing_read (ctx));

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
