/* CUDA backend edges: a device tensor used in place, GPU timing on and
 * off, an unknown device id, out of memory (a cap that needs a 500 GB
 * mask) and recovery after it. CNMS_GPU_SANITIZER=1 skips the deliberate
 * failures, which compute-sanitizer would report as API errors. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"

/* The same frame from device memory gives the host-tensor result. */
static void
device_tensor (cnms_ctx *cpu, cnms_ctx *cuda)
{
  gpu_det_case dc;
  gpu_result ref;
  cnms_tensor t;
  const cnms_det *dets = NULL;
  void *d = NULL;
  int n = 0;
  cnms_status st;

  gpu_det_case_yolov8_frame (&dc, 5);
  gpu_run_detect (cpu, &dc, &ref);
  /* a copy from pageable memory may return before its DMA is done: the
   * device synchronisation orders it before the context's own stream */
  if (cudaMalloc (&d, dc.size) != cudaSuccess
      || cudaMemcpy (d, dc.data, dc.size, cudaMemcpyHostToDevice)
      != cudaSuccess || cudaDeviceSynchronize () != cudaSuccess) {
    GPU_CHECK (0, "cannot stage the device tensor");
    return;
  }
  gpu_det_case_tensor (&dc, &t);
  t.data = d;
  t.on_device = 1;
  st = cnms_detect (cuda, &t, NULL, dc.layout, &dc.p, &dets, &n);
  GPU_CHECK (st == CNMS_OK, "device tensor: %s", cnms_ctx_error (cuda));
  GPU_CHECK (st != CNMS_OK || (n == ref.n
          && memcmp (dets, ref.dets, (size_t) n * sizeof *dets) == 0),
      "device tensor: %d detections differ from the CPU backend's %d", n,
      ref.n);
  printf ("device tensor: %d detections, as the CPU backend\n", n);
  cudaFree (d);
  gpu_result_free (&ref);
  gpu_det_case_free (&dc);
}

/* Timing: > 0 us after a detect and an nms call with timing on, -1 with
 * it off (the default, and again after switching it off), -1 on the CPU
 * backend whatever the switch. */
static void
timing (cnms_ctx *cpu, cnms_ctx *cuda)
{
  gpu_det_case dc;
  gpu_nms_case nc;
  gpu_result r;
  double on_det, on_nms;

  gpu_det_case_yolov8_frame (&dc, 6);
  gpu_nms_case_make (&nc, 6, 3);
  gpu_run_detect (cuda, &dc, &r);
  gpu_result_free (&r);
  GPU_CHECK (cnms_ctx_last_gpu_us (cuda) == -1.0,
      "timing off by default: last_gpu_us %g, expected -1",
      cnms_ctx_last_gpu_us (cuda));

  cnms_ctx_set_timing (cuda, 1);
  gpu_run_detect (cuda, &dc, &r);
  GPU_CHECK (r.st == CNMS_OK, "timed detect: %s", r.error);
  gpu_result_free (&r);
  on_det = cnms_ctx_last_gpu_us (cuda);
  gpu_run_nms (cuda, &nc, &r);
  GPU_CHECK (r.st == CNMS_OK, "timed nms: %s", r.error);
  gpu_result_free (&r);
  on_nms = cnms_ctx_last_gpu_us (cuda);
  GPU_CHECK (on_det > 0.0, "timing on, detect: last_gpu_us %g", on_det);
  GPU_CHECK (on_nms > 0.0, "timing on, nms: last_gpu_us %g", on_nms);

  cnms_ctx_set_timing (cuda, 0);
  gpu_run_detect (cuda, &dc, &r);
  gpu_result_free (&r);
  GPU_CHECK (cnms_ctx_last_gpu_us (cuda) == -1.0,
      "timing off again: last_gpu_us %g, expected -1",
      cnms_ctx_last_gpu_us (cuda));

  cnms_ctx_set_timing (cpu, 1);
  gpu_run_detect (cpu, &dc, &r);
  gpu_result_free (&r);
  GPU_CHECK (cnms_ctx_last_gpu_us (cpu) == -1.0,
      "CPU backend: last_gpu_us %g, expected -1", cnms_ctx_last_gpu_us (cpu));
  cnms_ctx_set_timing (cpu, 0);
  printf ("timing: detect %.1f us, nms (N=%d) %.1f us of GPU time; -1 when "
      "off\n", on_det, nc.n, on_nms);
  gpu_nms_case_free (&nc);
  gpu_det_case_free (&dc);
}

static void
bad_device (void)
{
  cnms_ctx *ctx = NULL;
  cnms_status st = cnms_ctx_new (CNMS_BACKEND_CUDA, 4096, &ctx);

  GPU_CHECK (st == CNMS_ERR_NO_DEVICE && ctx == NULL,
      "device 4096: got %s, expected no device", cnms_status_str (st));
  cnms_ctx_free (ctx);
}

/* Out of memory is an error code with a message, and the context works
 * again afterwards. */
static void
out_of_memory (cnms_ctx *cpu, cnms_ctx *cuda)
{
  const int n = 2000000;
  gpu_det_case dc;
  gpu_result ref, r;
  cnms_tensor t;
  cnms_params p;
  const cnms_det *dets = NULL;
  float *data = calloc ((size_t) n * 5, sizeof (float));
  int n_dets = 0;
  cnms_status st;
  char why[512];

  if (data == NULL)
    exit (1);
  memset (&t, 0, sizeof t);
  t.data = data;
  t.size = (size_t) n * 5 * sizeof (float);
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = 5;
  t.dims[2] = n;
  cnms_params_init (&p);
  p.max_candidates = n;         /* the NMS mask would be 500 GB */
  st = cnms_detect (cuda, &t, NULL, CNMS_LAYOUT_YOLOV8, &p, &dets, &n_dets);
  GPU_CHECK (st == CNMS_ERR_NO_MEMORY, "huge max-candidates: got %s (%s)",
      cnms_status_str (st), cnms_ctx_error (cuda));
  GPU_CHECK (strstr (cnms_ctx_error (cuda), "mask") != NULL,
      "out-of-memory message does not name the buffer: '%s'",
      cnms_ctx_error (cuda));
  printf ("out of memory: %s: %s\n", cnms_status_str (st),
      cnms_ctx_error (cuda));
  free (data);

  gpu_det_case_make (&dc, 9, 4);
  gpu_run_detect (cpu, &dc, &ref);
  gpu_run_detect (cuda, &dc, &r);
  GPU_CHECK (gpu_result_equal (&ref, &r, why, sizeof why),
      "after out of memory: %s", why);
  gpu_result_free (&ref);
  gpu_result_free (&r);
  gpu_det_case_free (&dc);
}

int
main (void)
{
  cnms_ctx *cpu, *cuda;

  gpu_require_device ("cuda-errors");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_ctx_new (CNMS_BACKEND_CUDA);
  GPU_CHECK (cnms_ctx_backend (cuda) == CNMS_BACKEND_CUDA, "backend");

  device_tensor (cpu, cuda);
  timing (cpu, cuda);
  if (!gpu_env_int ("CNMS_GPU_SANITIZER", 0)) {
    bad_device ();
    out_of_memory (cpu, cuda);
  }
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  printf ("cuda-errors: %s\n", gpu_failures ? "FAILED" : "ok");
  return gpu_failures ? 1 : 0;
}
