/* The CUDA backend: per call, at most one upload from pinned staging, the
 * kernels, one download of [header | kept results] into pinned memory
 * and one cudaStreamSynchronize, all on the context's own stream.
 *
 *   zero the count -> decode (or the plain NMS filter) -> fast path
 *   [-> large path: rank sort -> phase 1 bitmask -> phase 2 resolve]
 *   -> download
 *
 * The candidate count stays on the device. The fast path (one block)
 * takes counts up to CNMS_FAST_CAP; the large path is enqueued only when
 * the host-side bound (anchors, boxes) exceeds that, and its kernels
 * return at once when the count does not. With timing on, CUDA events
 * bracket the stream work from the upload to the download.
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

/* Whether the large path is enqueued for a host-side bound of n. */
static bool
needs_large (const cnms_cuda_priv *s, int n)
{
  return s->force_large || n > CNMS_FAST_CAP;
}

/* Reserves the sort inputs of n slots and, for the large path, the sorted
 * order and the phase 1/2 buffers for cap boxes (suppress: NMS, not
 * end2end). */
static cnms_status
reserve_stages (cnms_backend_ctx *ctx, cnms_cuda_priv *s, int n, int cap,
    bool large, bool suppress)
{
  const size_t nn = (size_t) n;
  const size_t col_blocks = (size_t) cnms_ceil_div (cap, CNMS_TILE);

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_keys,
          nn * sizeof (uint64_t), "sort keys"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_vals,
          nn * sizeof (uint32_t), "sort values"));
  if (!large)
    return CNMS_OK;
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_order,
          nn * sizeof (uint32_t), "sorted order"));
  if (!suppress)
    return CNMS_OK;
  if (cnms_cuda_resolve_smem_min (cap) > s->resolve_smem)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "CUDA: %d candidates need %zu bytes of shared memory in the NMS "
        "resolve, the device allows %zu", cap,
        cnms_cuda_resolve_smem_min (cap), s->resolve_smem);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_boxes,
          (size_t) cap * sizeof (float4), "sorted boxes"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cls,
          (size_t) cap * sizeof (int32_t), "sorted classes"));
  return cnms_cuda_reserve_device (ctx, &s->d_mask,
      (size_t) cap * col_blocks * sizeof (uint64_t), "NMS suppression mask");
}

/* Reserves the output header + body on the device and in pinned memory. */
static cnms_status
reserve_out (cnms_backend_ctx *ctx, cnms_cuda_priv *s, size_t bytes)
{
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_out, bytes, "results"));
  return cnms_cuda_reserve_pinned (ctx, &s->h_out, bytes,
      "results download");
}

/* Enqueues the stages after the candidates are in d_keys/d_vals (count in
 * d_hdr): the fast path, then, when n may exceed it, the large path. */
static cnms_status
enqueue_nms_stages (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const cnms_cand_src *src, int n, cnms_nms_args *a, int32_t *d_hdr)
{
  const uint64_t *keys = (const uint64_t *) s->d_keys.p;
  const uint32_t *vals = (const uint32_t *) s->d_vals.p;
  const uint32_t *order = (const uint32_t *) s->d_order.p;
  int32_t *out_hdr = (int32_t *) s->d_out.p;

  a->min_count = s->force_large ? -1 : CNMS_FAST_CAP;
  if (!s->force_large)
    CNMS_CUDA_TRY (ctx, cnms_cuda_fast (src, keys, vals, d_hdr, a, s->d_out.p,
            s->stream), "fast path kernel");
  if (!needs_large (s, n))
    return CNMS_OK;
  CNMS_CUDA_TRY (ctx, cnms_cuda_rank_sort (src, keys, vals, n, a, d_hdr,
          (uint32_t *) s->d_order.p, a->suppress ? (float4 *) s->d_boxes.p :
          NULL, (int32_t *) s->d_cls.p, out_hdr, s->stream), "rank sort");
  if (!a->suppress) {
    CNMS_CUDA_TRY (ctx, cnms_cuda_copy_top (src->recs, order, d_hdr, a,
            s->d_out.p, s->stream), "end2end copy kernel");
    return CNMS_OK;
  }
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_mask ((const float4 *) s->d_boxes.p,
          (const int32_t *) s->d_cls.p, d_hdr, a, s->sms,
          (uint64_t *) s->d_mask.p, s->stream), "NMS mask kernel");
  CNMS_CUDA_TRY (ctx, cnms_cuda_nms_resolve ((const uint64_t *) s->d_mask.p,
          d_hdr, a, order, src->recs, s->d_out.p, s->resolve_smem,
          s->stream), "NMS resolve kernel");
  return CNMS_OK;
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
enqueue_detect (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const cnms_tensor *t, const cnms_shape *shape, const cnms_params *p,
    const cnms_map *map, size_t *out_bytes)
{
  const int n = shape->n_anchors;
  const int cap = n < p->max_candidates ? n : p->max_candidates;
  const bool e2e = shape->layout == CNMS_LAYOUT_END2END;
  const size_t in_bytes = cnms_shape_bytes (shape, t->dtype);
  cnms_nms_args a;
  cnms_cand_src src;
  const void *d_tensor = t->data;
  int32_t *d_hdr;

  a.cap = cap;
  a.max_keep = p->max_detections < cap ? p->max_detections : cap;
  a.iou = p->iou;
  a.agnostic = p->class_agnostic;
  a.suppress = !e2e;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) a.max_keep * sizeof (cnms_det);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand,
          CNMS_HEADER_BYTES + (size_t) n * sizeof (cnms_det),
          "candidate buffer"));
  CNMS_TRY (reserve_stages (ctx, s, n, cap, needs_large (s, n), !e2e));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));
  if (!t->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes, "tensor"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
            "tensor staging"));
    memcpy (s->h_stage.p, t->data, in_bytes);
  }
  d_hdr = (int32_t *) s->d_cand.p;

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!t->on_device) {
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_in.p, s->h_stage.p, in_bytes,
            cudaMemcpyHostToDevice, s->stream), "uploading the tensor");
    d_tensor = s->d_in.p;
  }
  CNMS_CUDA_TRY (ctx, cudaMemsetAsync (d_hdr, 0, CNMS_HEADER_BYTES,
          s->stream), "zeroing the candidate count");
  CNMS_CUDA_TRY (ctx, cnms_cuda_decode (d_tensor, t->dtype, shape, map,
          p->score_threshold, cnms_cuda_key_bits (n), s->d_cand.p,
          (uint64_t *) s->d_keys.p, (uint32_t *) s->d_vals.p, s->stream),
      "decode kernel");
  memset (&src, 0, sizeof src);
  src.recs = (const cnms_det *) ((const char *) s->d_cand.p +
      CNMS_HEADER_BYTES);
  CNMS_TRY (enqueue_nms_stages (ctx, s, &src, n, &a, d_hdr));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_out.p, s->d_out.p, *out_bytes,
          cudaMemcpyDeviceToHost, s->stream), "downloading the results");
  return cnms_cuda_timing_end (ctx);
}

static cnms_status
cuda_detect (cnms_backend_ctx *ctx, const cnms_tensor *t,
    const cnms_shape *shape, const cnms_params *p, const cnms_map *map,
    const cnms_det **dets, int *n_dets)
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
  cnms_nms_args a;
  cnms_cand_src src;
  char *d_in, *h_in;
  int32_t *d_hdr;

  a.cap = n;
  a.max_keep = max_keep;
  a.iou = iou;
  a.agnostic = classes == NULL;
  a.suppress = 1;
  *out_bytes = CNMS_HEADER_BYTES + (size_t) max_keep * sizeof (int64_t);
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_in, in_bytes,
          "NMS input"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_stage, in_bytes,
          "NMS input staging"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_cand, CNMS_HEADER_BYTES,
          "count header"));
  CNMS_TRY (reserve_stages (ctx, s, n, n, needs_large (s, n), true));
  CNMS_TRY (reserve_out (ctx, s, *out_bytes));

  h_in = (char *) s->h_stage.p;
  d_in = (char *) s->d_in.p;
  d_hdr = (int32_t *) s->d_cand.p;
  memcpy (h_in, boxes, off_scores);
  memcpy (h_in + off_scores, scores, nn * sizeof (float));
  if (classes != NULL)
    memcpy (h_in + off_classes, classes, nn * sizeof (int32_t));
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the boxes");
  CNMS_CUDA_TRY (ctx, cudaMemsetAsync (d_hdr, 0, CNMS_HEADER_BYTES,
          s->stream), "zeroing the candidate count");
  CNMS_CUDA_TRY (ctx, cnms_cuda_filter ((const float *) d_in,
          (const float *) (d_in + off_scores), n, cnms_cuda_key_bits (n),
          d_hdr, (uint64_t *) s->d_keys.p, (uint32_t *) s->d_vals.p,
          s->stream), "filter kernel");
  memset (&src, 0, sizeof src);
  src.boxes_in = (const float4 *) d_in;
  src.classes_in = classes != NULL ?
      (const int32_t *) (d_in + off_classes) : NULL;
  CNMS_TRY (enqueue_nms_stages (ctx, s, &src, n, &a, d_hdr));
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

static void
cuda_test_option (cnms_backend_ctx *ctx, int option, int value)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  if (option == CNMS_TEST_FORCE_LARGE_PATH)
    s->force_large = value != 0;
}

extern "C" const cnms_backend_ops cnms_cuda_ops = {
  "cuda",
  cnms_cuda_create,
  cnms_cuda_destroy,
  cuda_detect,
  cuda_nms,
  cuda_test_option,
};
