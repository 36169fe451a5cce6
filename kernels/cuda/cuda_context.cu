/* CUDA backend context: device selection, the process-wide setup of each
 * device, the context's own stream, the grow-only device and pinned
 * buffers, and CUDA error mapping. */
#include <mutex>
#include <stdlib.h>
#include <string.h>

#include "cnms_cuda.cuh"

static cnms_status
status_of (cudaError_t e)
{
  switch (e) {
    case cudaErrorMemoryAllocation:
      return CNMS_ERR_NO_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
      return CNMS_ERR_NO_DEVICE;
    default:
      return CNMS_ERR_CUDA;
  }
}

cnms_status
cnms_cuda_error (cnms_backend_ctx *ctx, cudaError_t e, const char *what)
{
  /* clears the error unless it is sticky (then the context is lost) */
  (void) cudaGetLastError ();
  return cnms_fail (ctx, status_of (e), "CUDA: %s: %s (%s)", what,
      cudaGetErrorString (e), cudaGetErrorName (e));
}

/* Grows b to at least bytes with alloc; old contents are not kept. The
 * old buffer is freed first so that growing needs no double footprint. */
static cnms_status
reserve (cnms_backend_ctx *ctx, cnms_cuda_buf *b, size_t bytes, bool pinned,
    const char *what)
{
  size_t *held = pinned ? &ctx->pinned_bytes : &ctx->device_bytes;
  cudaError_t e;
  void *p = NULL;

  if (b->cap >= bytes)
    return CNMS_OK;
  /* round up: small growth does not reallocate every frame */
  bytes = (bytes + 4095) & ~(size_t) 4095;
  if (b->p != NULL) {
    e = pinned ? cudaFreeHost (b->p) : cudaFree (b->p);
    *held -= b->cap;
    b->p = NULL;
    b->dev = NULL;
    b->cap = 0;
    if (e != cudaSuccess)
      return cnms_cuda_error (ctx, e, what);
  }
  e = pinned ? cudaHostAlloc (&p, bytes, cudaHostAllocMapped)
      : cudaMalloc (&p, bytes);
  if (e == cudaSuccess && pinned) {
    e = cudaHostGetDevicePointer (&b->dev, p, 0);
    if (e != cudaSuccess) {
      (void) cudaFreeHost (p);
      b->dev = NULL;
    }
  }
  if (e != cudaSuccess) {
    (void) cudaGetLastError ();
    return cnms_fail (ctx, status_of (e),
        "CUDA: cannot allocate %zu bytes of %s memory for the %s: %s",
        bytes, pinned ? "pinned host" : "device", what,
        cudaGetErrorString (e));
  }
  b->p = p;
  b->cap = bytes;
  *held += bytes;
  ctx->alloc_count++;
  return CNMS_OK;
}

cnms_status
cnms_cuda_reserve_device (cnms_backend_ctx *ctx, cnms_cuda_buf *b, size_t bytes,
    const char *what)
{
  return reserve (ctx, b, bytes, false, what);
}

cnms_status
cnms_cuda_reserve_pinned (cnms_backend_ctx *ctx, cnms_cuda_buf *b, size_t bytes,
    const char *what)
{
  return reserve (ctx, b, bytes, true, what);
}

static void
release (cnms_backend_ctx *ctx, cnms_cuda_buf *b, bool pinned)
{
  if (b->p == NULL)
    return;
  if (pinned) {
    (void) cudaFreeHost (b->p);
    ctx->pinned_bytes -= b->cap;
  } else {
    (void) cudaFree (b->p);
    ctx->device_bytes -= b->cap;
  }
  b->p = NULL;
  b->dev = NULL;
  b->cap = 0;
}

static void
release_all (cnms_backend_ctx *ctx, cnms_cuda_priv *s)
{
  cnms_cuda_buf *dev[] = { &s->d_in, &s->d_cand, &s->d_report,
    &s->d_rules, &s->d_keys, &s->d_vals, &s->d_order, &s->d_boxes,
    &s->d_cls, &s->d_mask, &s->d_rows, &s->d_grid, &s->d_lane_rows,
    &s->d_protos, &s->d_hjobs, &s->d_logits, &s->d_masks, &s->d_kept,
    &s->d_caps, &s->batch.d_cand, &s->batch.d_report, &s->batch.d_keys,
    &s->batch.d_vals, &s->batch.d_order, &s->batch.d_boxes, &s->batch.d_cls,
    &s->batch.d_mask, &s->batch.d_rows, &s->batch.d_grid, &s->batch.d_bars,
    &s->batch.d_in, &s->batch.d_kept, &s->batch.d_caps,
    &s->batch.seg.d_jobs, &s->batch.seg.d_sums, &s->batch.seg.d_logits,
    &s->d_merge
  };
  size_t i;

  for (i = 0; i < sizeof dev / sizeof dev[0]; i++)
    release (ctx, dev[i], false);
  release (ctx, &s->h_stage, true);
  release (ctx, &s->h_out, true);
  release (ctx, &s->h_rules, true);
  release (ctx, &s->h_lane_rows, true);
  release (ctx, &s->h_lane_pts, true);
  release (ctx, &s->h_protos, true);
  release (ctx, &s->h_hjobs, true);
  release (ctx, &s->h_heads, true);
  release (ctx, &s->batch.h_stage, true);
  release (ctx, &s->batch.h_out, true);
  release (ctx, &s->batch.h_kp, true);
  release (ctx, &s->batch.seg.h_sums, true);
  release (ctx, &s->batch.seg.h_table, true);
  release (ctx, &s->batch.seg.h_masks, true);
  release (ctx, &s->h_merge_stage, true);
  release (ctx, &s->h_merge_out, true);
  free (s->rules_now);
  s->rules_now = NULL;
  s->rules_bytes = 0;
}

extern "C" int
cnms_cuda_backend_device_count (void)
{
  int n = 0;

  if (cudaGetDeviceCount (&n) != cudaSuccess) {
    (void) cudaGetLastError ();
    return 0;
  }
  return n;
}

/* Process-wide state, set up once per CUDA context (a device's primary
 * context, or another one made current by the caller, such as a
 * GStreamer pipeline's GstCudaContext: kernel attributes belong to the
 * module loaded in each): function attributes apply to everything that
 * runs in that context, so they are never set per cnms context (one
 * lowering a limit under another's launch is a race), and always to the
 * same value, the engine's whole budget of the device. */
#define CNMS_MAX_SETUPS 64
typedef int (*cu_ctx_get_current_fn) (void **ctx);
static std::mutex device_setup_lock;
static void *setup_ctx[CNMS_MAX_SETUPS];
static int setup_dev[CNMS_MAX_SETUPS];
static cudaError_t setup_status[CNMS_MAX_SETUPS];
static int n_setups;

/* The CUDA context current on this thread (the driver's cuCtxGetCurrent,
 * looked up through the runtime), or NULL when it cannot be told. */
static void *
current_cu_context (void)
{
  static cu_ctx_get_current_fn get_current;
  static bool looked_up;
  void *c = NULL;

  if (!looked_up) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion ("cuCtxGetCurrent", &fn, 12000,
            cudaEnableDefault, &q) == cudaSuccess
        && q == cudaDriverEntryPointSuccess)
      get_current = (cu_ctx_get_current_fn) fn;
    (void) cudaGetLastError ();
    looked_up = true;
  }
  if (get_current == NULL || get_current (&c) != 0)
    return NULL;
  return c;
}

static cudaError_t
device_setup (int dev, size_t smem_budget, size_t merge_smem)
{
  std::lock_guard < std::mutex > lock (device_setup_lock);
  void *cu;
  cudaError_t e;
  int i;

  /* the runtime makes the device's context current if none is */
  e = cudaFree (NULL);
  if (e != cudaSuccess)
    return e;
  cu = current_cu_context ();
  for (i = 0; i < n_setups; i++)
    if (cu != NULL && setup_ctx[i] == cu && setup_dev[i] == dev)
      return setup_status[i];
  /* a build without code for this device fails here, at context
   * creation, instead of at the first launch */
  e = cnms_cuda_image_check ();
  if (e == cudaSuccess)
    e = cnms_cuda_engine_allow_smem (smem_budget);
  if (e == cudaSuccess)
    e = cnms_cuda_merge_allow_smem (merge_smem);
  (void) cudaGetLastError ();
  if (cu != NULL && n_setups < CNMS_MAX_SETUPS) {
    setup_ctx[n_setups] = cu;
    setup_dev[n_setups] = dev;
    setup_status[n_setups] = e;
    n_setups++;
  }
  return e;
}

cnms_status
cnms_cuda_timing_begin (cnms_backend_ctx *ctx)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  if (!ctx->timing)
    return CNMS_OK;
  if (!s->events) {
    cudaError_t e = cudaEventCreate (&s->ev_start);
    if (e == cudaSuccess) {
      e = cudaEventCreate (&s->ev_stop);
      if (e != cudaSuccess)
        (void) cudaEventDestroy (s->ev_start);
    }
    if (e != cudaSuccess)
      return cnms_cuda_error (ctx, e, "creating the timing events");
    s->events = true;
  }
  CNMS_CUDA_TRY (ctx, cudaEventRecord (s->ev_start, s->stream),
      "recording the start event");
  return CNMS_OK;
}

cnms_status
cnms_cuda_timing_end (cnms_backend_ctx *ctx)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  if (!ctx->timing)
    return CNMS_OK;
  CNMS_CUDA_TRY (ctx, cudaEventRecord (s->ev_stop, s->stream),
      "recording the stop event");
  return CNMS_OK;
}

cnms_status
cnms_cuda_timing_read (cnms_backend_ctx *ctx)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  float ms = 0.0f;

  if (!ctx->timing) {
    ctx->last_gpu_us = -1.0;
    return CNMS_OK;
  }
  CNMS_CUDA_TRY (ctx, cudaEventElapsedTime (&ms, s->ev_start, s->ev_stop),
      "reading the GPU time");
  ctx->last_gpu_us = (double) ms * 1000.0;
  return CNMS_OK;
}

/* Picks the device (device_id, or the thread's current one for -1) and
 * creates the context's non-blocking stream. Leaves nothing behind on
 * failure. */
cnms_status
cnms_cuda_create (cnms_backend_ctx *ctx, int device_id)
{
  cnms_cuda_priv *s;
  int n = cnms_cuda_backend_device_count ();
  int dev = device_id;
  int optin = 0, sms = 0, coop = 0, mapped = 0;
  cudaError_t e;

  if (n <= 0)
    return cnms_fail (ctx, CNMS_ERR_NO_DEVICE, "no CUDA device");
  if (device_id >= n)
    return cnms_fail (ctx, CNMS_ERR_NO_DEVICE,
        "no CUDA device %d (%d present)", device_id, n);
  if (dev < 0) {
    e = cudaGetDevice (&dev);
    if (e != cudaSuccess)
      return cnms_cuda_error (ctx, e, "cudaGetDevice");
  }

  cnms_device_scope scope (dev);
  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  e = cudaDeviceGetAttribute (&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
      dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess)
    return cnms_cuda_error (ctx, e, "querying the device");

  s = (cnms_cuda_priv *) calloc (1, sizeof *s);
  if (s == NULL)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "cannot allocate the CUDA backend state");
  s->device = dev;
  s->last_count = -1;
  s->batch.last_count = -1;
  s->batch.dirty = true;
  s->smem_budget = (size_t) optin > CNMS_ENGINE_STATIC_SMEM ?
      (size_t) optin - CNMS_ENGINE_STATIC_SMEM : 0;
  s->sms = sms > 0 ? sms : 1;
  s->merge_smem = optin > 0 ? (size_t) optin : 0;
  e = cudaDeviceGetAttribute (&coop, cudaDevAttrCooperativeLaunch, dev);
  if (e == cudaSuccess && !coop) {
    free (s);
    return cnms_fail (ctx, CNMS_ERR_NO_DEVICE,
        "CUDA: device %d does not support cooperative launches", dev);
  }
  /* the engine writes its results straight into pinned host memory */
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute (&mapped, cudaDevAttrCanMapHostMemory, dev);
  if (e == cudaSuccess && !mapped) {
    free (s);
    return cnms_fail (ctx, CNMS_ERR_NO_DEVICE,
        "CUDA: device %d cannot map host memory", dev);
  }
  if (e == cudaSuccess) {
    int major = 0;
    e = cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor,
        dev);
    s->pdl = e == cudaSuccess && major >= 9;
  }
  if (e == cudaSuccess)
    e = device_setup (dev, s->smem_budget, s->merge_smem);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidPtx
      || e == cudaErrorUnsupportedPtxVersion) {
    cudaDeviceProp prop;
    int major = 0, minor = 0;
    if (cudaGetDeviceProperties (&prop, dev) == cudaSuccess) {
      major = prop.major;
      minor = prop.minor;
    }
    (void) cudaGetLastError ();
    free (s);
    return cnms_fail (ctx, CNMS_ERR_NO_DEVICE,
        "CUDA: this build of cudanms has no kernel image for device %d "
        "(compute capability %d.%d): rebuild with -Dcuda-arch including "
        "%d%d (%s)", dev, major, minor, major, minor, cudaGetErrorString (e));
  }
  if (e != cudaSuccess) {
    free (s);
    return cnms_cuda_error (ctx, e, "setting up the device");
  }
  /* every kernel launch of this context goes to this stream, never to
   * the legacy default stream */
  e = cudaStreamCreateWithFlags (&s->own_stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    free (s);
    return cnms_cuda_error (ctx, e, "cudaStreamCreateWithFlags");
  }
  s->stream = s->own_stream;
  ctx->priv = s;
  return CNMS_OK;
}

void
cnms_cuda_destroy (cnms_backend_ctx *ctx)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;

  if (s == NULL)
    return;
  {
    cnms_device_scope scope (s->device);
    /* a caller's stream (cnms_ctx_set_cuda_stream) has nothing of this
     * context's queued: every call ends synchronised */
    (void) cudaStreamSynchronize (s->own_stream);
    release_all (ctx, s);
    if (s->events) {
      (void) cudaEventDestroy (s->ev_start);
      (void) cudaEventDestroy (s->ev_stop);
    }
    (void) cudaStreamDestroy (s->own_stream);
    (void) cudaGetLastError ();
  }
  free (s);
  ctx->priv = NULL;
}
