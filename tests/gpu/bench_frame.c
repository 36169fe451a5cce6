/* One YOLOv8 frame, [1, 84, 8400] float32, through cnms_detect: score
 * 0.25, iou 0.45, 80 classes, about 1000 candidates (20 objects with
 * clusters of 10-60 anchors, plus scattered noise above the threshold).
 * Times, as the median of BENCH iterations (200) after a warm-up:
 *   - the tensor in device memory (uploaded once): GPU time (CUDA events,
 *     cnms_ctx_set_timing) and wall time of the call;
 *   - the tensor in host memory: the same, upload included;
 * for the default sort (CNMS_SORT=auto) and CUB over all slots, and the
 * CPU backend's wall time for reference. Every configuration must give
 * the CPU backend's detections bit for bit. Not a test: run it by hand on
 * the GPU host. Target (DESIGN.md): <= 25 us of GPU time on the device.
 *
 *   bench-frame [iterations]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"

#define N_ANCHORS 8400
#define N_CLASSES 80
#define N_OBJECTS 20
#define N_NOISE 330
#define WARMUP 20
#define TARGET_US 25.0

typedef struct {
  double gpu_us, wall_us;
} timing;

static double
now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* Writes anchor a: box (model pixels) and one class score. */
static void
set_anchor (float *t, int a, float cx, float cy, float w, float h, int cls,
    float score)
{
  const size_t n = N_ANCHORS;

  t[0 * n + a] = cx;
  t[1 * n + a] = cy;
  t[2 * n + a] = w;
  t[3 * n + a] = h;
  t[(4 + (size_t) cls) * n + a] = score;
}

/* The synthetic frame: low class scores everywhere (below the
 * threshold); object clusters; then weak candidates, most of them loose
 * duplicates of an object (as a detector's stray anchors are), the rest
 * anywhere with any class. */
static float *
make_frame (uint64_t seed)
{
  float *t = malloc ((size_t) (4 + N_CLASSES) * N_ANCHORS * sizeof (float));
  float obj[N_OBJECTS][4];
  int obj_cls[N_OBJECTS];
  gpu_rng r;
  int a, c, o, k;

  if (t == NULL)
    exit (1);
  gpu_rng_seed (&r, seed);
  for (a = 0; a < N_ANCHORS; a++) {
    set_anchor (t, a, gpu_rng_float (&r, 0, 640), gpu_rng_float (&r, 0, 640),
        gpu_rng_float (&r, 4, 64), gpu_rng_float (&r, 4, 64), 0, 0.0f);
    for (c = 0; c < N_CLASSES; c++)
      t[(4 + (size_t) c) * N_ANCHORS + a] = gpu_rng_float (&r, 0.0f, 0.02f);
  }
  for (o = 0; o < N_OBJECTS; o++) {
    const float cx = gpu_rng_float (&r, 40, 600);
    const float cy = gpu_rng_float (&r, 120, 520);
    const float w = gpu_rng_float (&r, 16, 240);
    const float h = gpu_rng_float (&r, 16, 240);
    const int cls = gpu_rng_int (&r, 0, N_CLASSES);
    const int members = gpu_rng_int (&r, 10, 61);

    obj[o][0] = cx;
    obj[o][1] = cy;
    obj[o][2] = w;
    obj[o][3] = h;
    obj_cls[o] = cls;
    for (k = 0; k < members; k++) {
      a = gpu_rng_int (&r, 0, N_ANCHORS);
      set_anchor (t, a, cx + gpu_rng_float (&r, -0.08f, 0.08f) * w,
          cy + gpu_rng_float (&r, -0.08f, 0.08f) * h,
          w * (1.0f + gpu_rng_float (&r, -0.1f, 0.1f)),
          h * (1.0f + gpu_rng_float (&r, -0.1f, 0.1f)), cls,
          gpu_rng_float (&r, 0.3f, 0.95f));
      /* some anchors also score a second class above the threshold */
      if (gpu_rng_int (&r, 0, 5) == 0)
        t[(4 + (size_t) ((cls + 1) % N_CLASSES)) * N_ANCHORS + a] =
            gpu_rng_float (&r, 0.26f, 0.29f);
    }
  }
  for (k = 0; k < N_NOISE; k++) {
    a = gpu_rng_int (&r, 0, N_ANCHORS);
    o = gpu_rng_int (&r, 0, N_OBJECTS);
    if (gpu_rng_int (&r, 0, 10) < 7)
      set_anchor (t, a, obj[o][0] + gpu_rng_float (&r, -0.3f, 0.3f) * obj[o][2],
          obj[o][1] + gpu_rng_float (&r, -0.3f, 0.3f) * obj[o][3],
          obj[o][2] * (1.0f + gpu_rng_float (&r, -0.4f, 0.4f)),
          obj[o][3] * (1.0f + gpu_rng_float (&r, -0.4f, 0.4f)), obj_cls[o],
          gpu_rng_float (&r, 0.26f, 0.45f));
    else
      set_anchor (t, a, gpu_rng_float (&r, 0, 640),
          gpu_rng_float (&r, 0, 640), gpu_rng_float (&r, 4, 100),
          gpu_rng_float (&r, 4, 100), gpu_rng_int (&r, 0, N_CLASSES),
          gpu_rng_float (&r, 0.26f, 0.45f));
  }
  return t;
}

/* Median GPU and wall time of iters calls; checks every result of the
 * timed loop against ref (n_ref records). Returns 0 on a mismatch. */
static int
time_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_params *p,
    int iters, const cnms_det *ref, int n_ref, timing *out, double *s_gpu,
    double *s_wall)
{
  const cnms_det *dets = NULL;
  int i, n = 0, same = 1;

  for (i = 0; i < WARMUP + iters; i++) {
    const double t0 = now_us ();
    cnms_status st = cnms_detect (ctx, t, CNMS_LAYOUT_YOLOV8, p, &dets, &n);
    const double t1 = now_us ();

    if (st != CNMS_OK) {
      printf ("cnms_detect failed: %s\n", cnms_ctx_error (ctx));
      return 0;
    }
    if (n != n_ref || memcmp (dets, ref, (size_t) n * sizeof *dets) != 0)
      same = 0;
    if (i >= WARMUP) {
      s_gpu[i - WARMUP] = cnms_ctx_last_gpu_us (ctx);
      s_wall[i - WARMUP] = t1 - t0;
    }
  }
  out->gpu_us = median (s_gpu, iters);
  out->wall_us = median (s_wall, iters);
  return same;
}

int
main (int argc, char **argv)
{
  static const char *const sorts[] = { "auto", "cub" };
  const int iters = argc > 1 ? atoi (argv[1]) : 200;
  const size_t bytes = (size_t) (4 + N_CLASSES) * N_ANCHORS * sizeof (float);
  float *frame;
  void *d_frame = NULL;
  cnms_tensor host_t, dev_t;
  cnms_params p;
  cnms_ctx *cpu;
  const cnms_det *dets = NULL;
  cnms_det *ref;
  double *s_gpu, *s_wall, best_dev = -1.0;
  int n_ref = 0, candidates, i, s, failed = 0;

  gpu_require_device ("bench-frame");
  if (iters < 1) {
    printf ("usage: bench-frame [iterations >= 1]\n");
    return 2;
  }
  frame = make_frame (2024);
  s_gpu = malloc ((size_t) iters * sizeof (double));
  s_wall = malloc ((size_t) iters * sizeof (double));
  if (s_gpu == NULL || s_wall == NULL)
    return 1;
  if (cudaMalloc (&d_frame, bytes) != cudaSuccess
      || cudaMemcpy (d_frame, frame, bytes, cudaMemcpyHostToDevice)
      != cudaSuccess) {
    printf ("FAIL: cannot put the frame on the device\n");
    return 1;
  }

  memset (&host_t, 0, sizeof host_t);
  host_t.data = frame;
  host_t.size = bytes;
  host_t.dtype = CNMS_DTYPE_FLOAT32;
  host_t.n_dims = 3;
  host_t.dims[0] = 1;
  host_t.dims[1] = 4 + N_CLASSES;
  host_t.dims[2] = N_ANCHORS;
  dev_t = host_t;
  dev_t.data = d_frame;
  dev_t.on_device = 1;
  cnms_params_init (&p);        /* 0.25, 0.45, 300, 30000, class-aware */
  p.frame_width = 1920;
  p.frame_height = 1080;

  /* the reference, and the CPU backend's time */
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  if (cnms_detect (cpu, &host_t, CNMS_LAYOUT_YOLOV8, &p, &dets, &n_ref)
      != CNMS_OK) {
    printf ("FAIL: CPU backend: %s\n", cnms_ctx_error (cpu));
    return 1;
  }
  candidates = cnms_ctx_last_candidates (cpu);
  ref = malloc ((size_t) (n_ref > 0 ? n_ref : 1) * sizeof *ref);
  if (ref == NULL)
    return 1;
  memcpy (ref, dets, (size_t) n_ref * sizeof *ref);
  for (i = 0; i < iters; i++) {
    const double t0 = now_us ();
    (void) cnms_detect (cpu, &host_t, CNMS_LAYOUT_YOLOV8, &p, &dets, &n_ref);
    s_wall[i] = now_us () - t0;
  }
  printf ("bench-frame: YOLOv8 [1, 84, 8400] f32, score 0.25, iou 0.45, "
      "80 classes: %d candidates, %d detections; median of %d after %d "
      "warm-up; phase1=%s\n", candidates, n_ref, iters, WARMUP,
      getenv ("CNMS_PHASE1") ? getenv ("CNMS_PHASE1") : "default");
  printf ("  CPU backend, host tensor:             wall %8.1f us\n",
      median (s_wall, iters));
  cnms_ctx_free (cpu);

  for (s = 0; s < 2; s++) {
    cnms_ctx *ctx;
    timing dev, host;
    int ok;

    /* the sort mode is read once, at context creation */
    setenv ("CNMS_SORT", sorts[s], 1);
    ctx = gpu_ctx_new (CNMS_BACKEND_CUDA);
    unsetenv ("CNMS_SORT");
    cnms_ctx_set_timing (ctx, 1);
    ok = time_detect (ctx, &dev_t, &p, iters, ref, n_ref, &dev, s_gpu,
        s_wall);
    ok &= time_detect (ctx, &host_t, &p, iters, ref, n_ref, &host, s_gpu,
        s_wall);
    printf ("  CUDA sort=%-4s device tensor: GPU %6.1f us, wall %6.1f us\n",
        sorts[s], dev.gpu_us, dev.wall_us);
    printf ("  CUDA sort=%-4s host tensor:   GPU %6.1f us, wall %6.1f us%s\n",
        sorts[s], host.gpu_us, host.wall_us, ok ? "" :
        "  FAIL: differs from the CPU backend");
    if (s == 0)
      best_dev = dev.gpu_us;
    failed += !ok;
    cnms_ctx_free (ctx);
  }
  printf ("target <= %.0f us GPU time (device tensor, default sort): %s "
      "(%.1f us)\n", TARGET_US, best_dev <= TARGET_US ? "met" : "NOT met",
      best_dev);
  if (failed == 0)
    printf ("all results bit-identical to the CPU backend\n");

  cudaFree (d_frame);
  free (ref);
  free (frame);
  free (s_gpu);
  free (s_wall);
  return failed ? 1 : 0;
}
