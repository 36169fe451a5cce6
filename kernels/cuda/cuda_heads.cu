/* The heads of the kept records on the CUDA backend (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"), after the engine has returned
 * them: the arithmetic is cnms_heads.h's, shared with the CPU backend, so
 * both give the same bits.
 *
 * Pose: a device tensor's keypoints are gathered and mapped by one kernel
 * straight into mapped pinned host memory (the kept anchors read from
 * there too); a host tensor's on the host, as the CPU backend does.
 *
 * Masks: one batched pass for every kept record. The host lays out a job
 * per record (its pixel rectangle, the window of prototype pixels that
 * rectangle samples, where its logits and bytes go; the coefficients too
 * when the tensor is on the host) in mapped pinned memory, which the
 * first kernel reads (no upload): it computes the logits of every window
 * (each a dot product over m ascending), a second the bytes of every pixel
 * of every mask (bilinear, > 0), and one copy brings all the bytes to the
 * host. Prototypes on the host are uploaded first. */
#include <string.h>

#include "cnms_cuda.cuh"
#include "cnms_heads.h"

/* One mask's work. */
typedef struct {
  int x, y, w, h;               /* the pixel rectangle (cnms_mask) */
  int wx, wy, ww, wh;           /* the window of prototype pixels */
  long long out;                /* its bytes' offset */
  long long lg;                 /* its window's offset in the logits */
  int anchor;
  int pad_;
} cnms_mask_job;

/* Coefficients staged in shared memory per block, at most this many at
 * a time. */
#define CNMS_COEF_CHUNK 256

/* Keypoints: thread i is keypoint i % k of kept record i / k. */
static __global__ void
pose_kernel (const void *tensor, int f16, size_t n_anchors, int d, int k,
    const int32_t *anchors, int n, cnms_map map, float *out)
{
  const long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;

  if (i >= (long long) n * k)
    return;
  cnms_pose_keypoint (tensor, f16, n_anchors, d, (int) (i % k),
      (size_t) (uint32_t) anchors[i / k], &map, out + 3 * i);
}

/* The logits of every job's window: blockIdx.y strides the jobs, the
 * block's threads its window's pixels. The jobs are read from mapped
 * pinned memory (hjobs: written by the host, no upload), one thread per
 * block, and copied to device memory (djobs) for pixels_kernel. The
 * coefficients come from the device tensor (rows row0 .., strided by
 * n_anchors) or, for a host tensor, from coefs ([job][mc], mapped). */
static __global__ void
logits_kernel (const cnms_mask_job *hjobs, cnms_mask_job *djobs, int n,
    const void *protos, int f16, int wp, size_t plane, int mc,
    const void *tensor, int row0, size_t n_anchors, const float *coefs,
    float *logits)
{
  __shared__ float c[CNMS_COEF_CHUNK];
  __shared__ cnms_mask_job sj;

  for (int k = blockIdx.y; k < n; k += gridDim.y) {
    if (threadIdx.x == 0) {
      sj = hjobs[k];
      if (blockIdx.x == 0)
        djobs[k] = sj;
    }
    __syncthreads ();
    const cnms_mask_job j = sj;
    const int count = j.ww * j.wh;

    for (int base = blockIdx.x * blockDim.x; base < count;
        base += gridDim.x * blockDim.x) {
      const int p = base + threadIdx.x;
      const bool on = p < count;
      const size_t idx = on ? (size_t) (j.wy + p / j.ww) * wp
          + (size_t) (j.wx + p % j.ww) : 0;
      float l = 0.0f;

      for (int m0 = 0; m0 < mc; m0 += CNMS_COEF_CHUNK) {
        const int mn = mc - m0 < CNMS_COEF_CHUNK ? mc - m0 : CNMS_COEF_CHUNK;

        __syncthreads ();
        for (int t = threadIdx.x; t < mn; t += blockDim.x)
          c[t] = tensor != NULL ? cnms_tensor_value (tensor, f16,
              ((size_t) row0 + m0 + t) * n_anchors + (size_t) j.anchor)
              : coefs[(size_t) k * mc + m0 + t];
        __syncthreads ();
        if (on)
          for (int m = 0; m < mn; m++)
            l = cnms_fadd (l, cnms_fmul (c[m], cnms_tensor_value (protos,
                        f16, (size_t) (m0 + m) * plane + idx)));
      }
      if (on)
        logits[j.lg + p] = l;
    }
    /* sj is read above until here */
    __syncthreads ();
  }
}

/* The bytes of every job's rectangle: bilinear logit > 0. */
static __global__ void
pixels_kernel (const cnms_mask_job *jobs, int n, cnms_mask_axis ax,
    cnms_mask_axis ay, const float *logits, uint8_t *out)
{
  for (int k = blockIdx.y; k < n; k += gridDim.y) {
    const cnms_mask_job j = jobs[k];
    const int count = j.w * j.h;
    const float *lg = logits + j.lg;

    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < count;
        p += gridDim.x * blockDim.x) {
      int x0, x1, y0, y1;
      float wx0, wx1, wy0, wy1;
      const float *r0, *r1;

      cnms_mask_sample (&ax, j.x + p % j.w, &x0, &x1, &wx0, &wx1);
      cnms_mask_sample (&ay, j.y + p / j.w, &y0, &y1, &wy0, &wy1);
      r0 = lg + (size_t) (y0 - j.wy) * j.ww;
      r1 = lg + (size_t) (y1 - j.wy) * j.ww;
      x0 -= j.wx;
      x1 -= j.wx;
      out[j.out + p] = cnms_mask_bilinear (r0[x0], r0[x1], r1[x0], r1[x1],
          wx0, wx1, wy0, wy1) > 0.0f;
    }
  }
}

/* Grid of a kernel over n jobs of at most most items each. */
static dim3
job_grid (int n, int most)
{
  int bx = cnms_ceil_div (most > 0 ? most : 1, CNMS_BLOCK);

  return dim3 (bx < 1024 ? bx : 1024, n < 65535 ? n : 65535, 1);
}

/* Timing of the heads' stream work, added to the detect's. */
static cnms_status
timing_done (cnms_backend_ctx *ctx, double before)
{
  CNMS_TRY (cnms_cuda_timing_read (ctx));
  if (ctx->timing && before >= 0.0)
    ctx->last_gpu_us += before;
  return CNMS_OK;
}

static cnms_status
pose (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  const int k = h->n_keypoints;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t na = (size_t) h->n_anchors;
  const long long threads = (long long) n * k;
  const double before = ctx->last_gpu_us;
  float *out;
  int32_t *anchors;

  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
          ((size_t) threads + 1) * 3 * sizeof (float), "keypoints"));
  out = (float *) s->h_heads.p;
  if (!h->t->on_device || n == 0) {
    /* a host tensor: on the host, as the CPU backend */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < k; j++)
        cnms_pose_keypoint (h->t->data, f16, na, h->keypoint_dims, j,
            (size_t) (uint32_t) dets[i].anchor, &h->map,
            out + 3 * ((size_t) i * k + j));
    ctx->keypoints = out;
    return CNMS_OK;
  }
  /* one thread a keypoint: a grid of int threads */
  if (threads > 0x7fffffffLL - CNMS_BLOCK)
    return cnms_fail (ctx, CNMS_ERR_INVALID_ARG, "%lld keypoints of kept "
        "records from device memory: at most %d", threads,
        0x7fffffff - CNMS_BLOCK);
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_hjobs,
          (size_t) n * sizeof (int32_t), "kept anchors"));
  anchors = (int32_t *) s->h_hjobs.p;
  for (int i = 0; i < n; i++)
    anchors[i] = dets[i].anchor;
  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  pose_kernel <<< (unsigned) cnms_ceil_div ((int) threads, CNMS_BLOCK),
      CNMS_BLOCK, 0, s->stream >>> (h->t->data, f16, na, h->keypoint_dims,
      k, (const int32_t *) s->h_hjobs.dev, n, h->map,
      (float *) s->h_heads.dev);
  CNMS_CUDA_TRY (ctx, cudaGetLastError (), "keypoint kernel");
  CNMS_TRY (cnms_cuda_timing_end (ctx));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "gathering the keypoints");
  CNMS_TRY (timing_done (ctx, before));
  ctx->keypoints = out;
  return CNMS_OK;
}

static cnms_status
seg (cnms_backend_ctx *ctx, cnms_cuda_priv *s, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  const int mc = h->n_coeffs;
  const size_t plane = (size_t) h->proto_h * (size_t) h->proto_w;
  const int f16 = h->t->dtype == CNMS_DTYPE_FLOAT16;
  const size_t esize = f16 ? 2 : 4;
  const size_t proto_bytes = (size_t) mc * plane * esize;
  const bool host_coefs = !h->t->on_device;
  const size_t jobs_bytes = (size_t) n * sizeof (cnms_mask_job);
  const size_t table_bytes = jobs_bytes
      + (host_coefs ? (size_t) n * mc * sizeof (float) : 0);
  const double before = ctx->last_gpu_us;
  cnms_mask_axis ax, ay;
  cnms_mask_job *jobs;
  const void *d_protos = h->protos->data;
  long long lg = 0;
  int most_win = 0, most_pix = 0;

  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_heads,
          h->mask_bytes > 0 ? h->mask_bytes : 1, "masks"));
  if (n == 0) {
    ctx->mask_data = (const uint8_t *) s->h_heads.p;
    return CNMS_OK;
  }
  cnms_mask_axis_init (&ax, h->map.gain_x, h->map.pad_x, h->proto_w,
      h->model_w);
  cnms_mask_axis_init (&ay, h->map.gain_y, h->map.pad_y, h->proto_h,
      h->model_h);
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_hjobs, table_bytes,
          "mask jobs"));
  jobs = (cnms_mask_job *) s->h_hjobs.p;
  for (int i = 0; i < n; i++) {
    const cnms_mask *r = &h->masks[i];
    cnms_mask_job *j = &jobs[i];

    memset (j, 0, sizeof *j);
    j->x = r->x;
    j->y = r->y;
    j->w = r->width;
    j->h = r->height;
    j->out = (long long) r->offset;
    j->lg = lg;
    j->anchor = dets[i].anchor;
    if (r->width > 0 && r->height > 0) {
      int lo, hi, unused;
      float w0, w1;

      cnms_mask_sample (&ax, r->x, &lo, &unused, &w0, &w1);
      cnms_mask_sample (&ax, r->x + r->width - 1, &unused, &hi, &w0, &w1);
      j->wx = lo;
      j->ww = hi - lo + 1;
      cnms_mask_sample (&ay, r->y, &lo, &unused, &w0, &w1);
      cnms_mask_sample (&ay, r->y + r->height - 1, &unused, &hi, &w0, &w1);
      j->wy = lo;
      j->wh = hi - lo + 1;
      lg += (long long) j->ww * j->wh;
      if (j->ww * j->wh > most_win)
        most_win = j->ww * j->wh;
      if (r->width * r->height > most_pix)
        most_pix = r->width * r->height;
    }
  }
  if (host_coefs) {
    float *coefs = (float *) ((char *) s->h_hjobs.p + jobs_bytes);
    for (int i = 0; i < n; i++)
      for (int m = 0; m < mc; m++)
        coefs[(size_t) i * mc + m] = cnms_tensor_value (h->t->data, f16,
            ((size_t) h->row0 + m) * (size_t) h->n_anchors
            + (size_t) (uint32_t) dets[i].anchor);
  }
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_hjobs, jobs_bytes,
          "mask jobs"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_logits,
          ((size_t) lg + 1) * sizeof (float), "mask logits"));
  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_masks,
          h->mask_bytes > 0 ? h->mask_bytes : 1, "masks"));
  if (!h->protos->on_device) {
    CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_protos, proto_bytes,
            "prototypes"));
    CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_protos, proto_bytes,
            "prototype staging"));
    d_protos = s->d_protos.p;
  }

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  if (!h->protos->on_device) {
    memcpy (s->h_protos.p, h->protos->data, proto_bytes);
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->d_protos.p, s->h_protos.p,
            proto_bytes, cudaMemcpyHostToDevice, s->stream),
        "uploading the prototypes");
  }
  if (most_win > 0) {
    logits_kernel <<< job_grid (n, most_win), CNMS_BLOCK, 0, s->stream >>>
        ((const cnms_mask_job *) s->h_hjobs.dev,
        (cnms_mask_job *) s->d_hjobs.p, n, d_protos, f16, h->proto_w, plane,
        mc, host_coefs ? NULL : h->t->data, h->row0, (size_t) h->n_anchors,
        host_coefs ? (const float *) ((const char *) s->h_hjobs.dev
            + jobs_bytes) : NULL, (float *) s->d_logits.p);
    CNMS_CUDA_TRY (ctx, cudaGetLastError (), "mask logits kernel");
    pixels_kernel <<< job_grid (n, most_pix), CNMS_BLOCK, 0, s->stream >>>
        ((const cnms_mask_job *) s->d_hjobs.p, n, ax, ay,
        (const float *) s->d_logits.p, (uint8_t *) s->d_masks.p);
    CNMS_CUDA_TRY (ctx, cudaGetLastError (), "mask pixels kernel");
    CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (s->h_heads.p, s->d_masks.p,
            h->mask_bytes, cudaMemcpyDeviceToHost, s->stream),
        "copying the masks back");
  }
  CNMS_TRY (cnms_cuda_timing_end (ctx));
  CNMS_CUDA_TRY (ctx, cudaStreamSynchronize (s->stream),
      "assembling the masks");
  CNMS_TRY (timing_done (ctx, before));
  ctx->mask_data = (const uint8_t *) s->h_heads.p;
  return CNMS_OK;
}

extern "C" cnms_status
cnms_cuda_heads (cnms_backend_ctx *ctx, const cnms_heads_args *h,
    const cnms_det *dets, int n)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  cnms_device_scope scope (s->device);

  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  if (h->kind == CNMS_HEAD_POSE)
    return pose (ctx, s, h, dets, n);
  return seg (ctx, s, h, dets, n);
}
