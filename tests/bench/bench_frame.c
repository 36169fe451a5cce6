/* bench-frame: one full YOLO frame (decode + NMS + detections on the host)
 * through cnms_detect, and the memory one context holds.
 *
 * usage: bench-frame DATA_DIR OUT_JSON [--backend all|cuda|cpu] [--iters N]
 *          [--warmup N] [--min-time S] [--save-dir DIR]
 *
 * --min-time: the CPU backend's cases go on past --iters until S seconds
 * are timed.
 *
 * Frames: yolov8.npy [1,84,8400] and yolov5.npy [1,25200,85] from
 * gen_data.py; score 0.25, IoU 0.45, 80 classes, class-aware, 640x640 model
 * and frame, letterbox (the cnms_params defaults); yolov8_obb.npy
 * [1,20,21504] (layout yolov8-obb, 15 classes, 1024x1024 model and frame,
 * the other parameters the same). Inputs:
 *   - "device": CUDA backend, the tensor copied to device memory once
 *     (cnms_tensor.on_device = 1), as when an inference engine's output
 *     stays on the GPU;
 *   - "host": the tensor in host memory (the CUDA backend uploads it).
 * Records the median and min of wall time (clock_gettime around
 * cnms_detect, detections on the host at return) and of GPU time
 * (cnms_ctx_last_gpu_us). With --save-dir, the detections of each backend
 * go to dets_<cuda|cpu>_<layout>.npy, float32 [K, 7]: score x1 y1 x2 y2
 * class anchor; yolov8_obb's [K, 8]: score cx cy w h class anchor
 * angle.
 *
 * Lanes: laneatt.npy [1,1000,77] (LaneATT, S = 72) through cnms_detect
 * (layout laneatt) with LaneATT's test config (score 0.5, distance 50
 * model px, top_k 4 = max_detections, 640x360 model, 1280x720 frame, no
 * letterbox): CPU backend, and CUDA with the tensor in device and in host
 * memory; records layout "laneatt" (no "+classes" rows: lanes have one
 * class); dets_<backend>_laneatt.npy as the YOLO frames' [K, 7] (score,
 * the frame rectangle of the lane's points, class 0, anchor).
 *
 * Heads: yolov8_seg.npy [1,116,8400] with yolov8_seg_protos.npy
 * [1,32,160,160] through cnms_detect (layout yolov8-seg with the
 * prototypes: 80 classes, 32 coefficients, about 30 kept instances, the
 * masks on the host at return), and yolov8_pose.npy [1,56,8400]
 * through cnms_detect (layout yolov8-pose, 17 keypoints x 3; the YOLOv8
 * frame's boxes and best scores as one class), the defaults otherwise
 * (640x640 model and frame, letterbox);
 * each CUDA input ("device": the tensor and the prototypes in device
 * memory) as the YOLO frames, and "yolov8_pose_boxes": the pose tensor's
 * first 5 rows alone as a one-class yolov8 tensor from device memory (the
 * same NMS without the keypoints). The records' parity with the CPU
 * backend covers the keypoints and every mask byte (an FNV-1a hash of
 * them); --save-dir also writes masks_<backend>_yolov8_seg.npy, uint8
 * [K, 640 x 640]: each mask placed in the frame.
 *
 * Contexts on threads (CUDA): T threads, each with its own context (and
 * stream), run the YOLOv8 frame from device memory for a fixed time; the
 * record is the frames/s of all of them together, for T = 1 and T = 8.
 *
 * Memory records: host, pinned and device bytes of a fresh context after
 * (a) one YOLOv8 frame (8400 anchors), (b) cnms_nms on 32768 boxes, and
 * (c) cnms_detect on a [1,84,33600] tensor (1280x1280 model) with score
 * threshold 0, i.e. 33600 candidates capped at max-candidates 32768. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_CUDA
#include <pthread.h>
#include <cuda_runtime.h>
#endif

#include "bench_common.h"

#define MAX_DETS 300
/* floats per detection row: score x1 y1 x2 y2 class anchor angle */
#define ROW 8

/* The last run's detections, to compare backends and inputs, with a hash
 * of their keypoints or masks. */
typedef struct {
  float rows[MAX_DETS * ROW];
  int n;
  uint64_t heads;
} det_list;

static int
same_dets (const det_list *a, const det_list *b)
{
  return a->n == b->n && a->heads == b->heads && memcmp (a->rows, b->rows,
      sizeof (float) * ROW * (size_t) a->n) == 0;
}

/* The prototypes of the seg frame in the memory of the input being run
 * (set by bench_layout and bench_cuda). */
static const cnms_tensor *seg_protos;

/* FNV-1a 64 over bytes, continuing h. */
static uint64_t
fnv1a (uint64_t h, const void *p, size_t n)
{
  const uint8_t *b = p;
  size_t i;

  for (i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* The bytes of record r's values in a payload of head head. */
static size_t
payload_bytes (cnms_head head, const cnms_payload *r)
{
  if (head == CNMS_HEAD_MASK)
    return (size_t) r->width * r->height;
  return (size_t) r->n_points * r->point_dims * sizeof (float);
}

/* The hash of the last call's keypoints or masks (0 when it has none):
 * the payload's records, then each one's values in kept order. */
static uint64_t
heads_hash (const cnms_ctx *ctx)
{
  cnms_payloads pl;
  uint64_t h = 14695981039346656037ull;
  int k;

  cnms_ctx_payload (ctx, &pl);
  if ((pl.head != CNMS_HEAD_KEYPOINTS && pl.head != CNMS_HEAD_MASK)
      || pl.n == 0)
    return 0;
  h = fnv1a (h, pl.records, (size_t) pl.n * sizeof *pl.records);
  for (k = 0; k < pl.n; k++)
    h = fnv1a (h, pl.data + pl.records[k].offset,
        payload_bytes (pl.head, &pl.records[k]));
  return h;
}

/* Layouts run with the per-class overrides too ("+classes"). */
static int
with_classes (const char *layout)
{
  return strcmp (layout, "yolov8") == 0 || strcmp (layout, "yolov5") == 0
      || strcmp (layout, "yolov8_obb") == 0;
}

/* The frame's layout and parameters (the cnms_params defaults, and the
 * OBB frame's model size). */
static cnms_layout
frame_layout (const char *layout, cnms_params *p)
{
  if (strcmp (layout, "yolov8_obb") == 0) {
    p->model_width = p->model_height = 1024;
    p->frame_width = p->frame_height = 1024;
    return CNMS_LAYOUT_YOLOV8_OBB;
  }
  if (strcmp (layout, "yolov8_pose") == 0)
    return CNMS_LAYOUT_YOLOV8_POSE;
  if (strcmp (layout, "yolov8_pose_boxes") == 0)
    return CNMS_LAYOUT_YOLOV8;
  if (strcmp (layout, "yolov8_seg") == 0)
    return CNMS_LAYOUT_YOLOV8_SEG;
  if (strcmp (layout, "laneatt") == 0) {
    bench_laneatt_params (p);
    return CNMS_LAYOUT_LANEATT;
  }
  return CNMS_LAYOUT_AUTO;
}

static void
to_rows (const cnms_det *d, int n, det_list *out)
{
  int i;

  out->n = n < MAX_DETS ? n : MAX_DETS;
  for (i = 0; i < out->n; i++) {
    float *r = &out->rows[i * ROW];

    r[0] = d[i].score;
    r[1] = d[i].x1;
    r[2] = d[i].y1;
    r[3] = d[i].x2;
    r[4] = d[i].y2;
    r[5] = (float) d[i].class_id;
    r[6] = (float) d[i].anchor;
    r[7] = d[i].angle;
  }
}

/* Overrides on 80 classes that change no result (each class's values
 * are the frame-wide ones): what the per-class path costs. */
static const cnms_params *
class_params (void)
{
  static cnms_class_params c[80];
  static cnms_params p;
  int i;

  cnms_params_init (&p);
  for (i = 0; i < 80; i++)
    cnms_class_params_init (&c[i], &p);
  p.classes = c;
  p.n_classes = 80;
  return &p;
}

static void
run_frame (cnms_ctx *ctx, const cnms_tensor *t, const char *layout,
    const char *input, const bench_opts *o, bench_json *j, double *wall,
    double *gpu, det_list *out)
{
  cnms_backend b = cnms_ctx_backend (ctx);
  const cnms_det *dets = NULL;
  cnms_params p;
  cnms_layout l;
  double med, min;
  int i, n_dets = 0, n_gpu = 0;

  double min_us = b == CNMS_BACKEND_CPU ? o->cpu_min_s * 1e6 : 0;
  double t_start = 0;
  int max_done = bench_max_samples (o), done = 0;

  if (strstr (input, "+classes") != NULL)
    p = *class_params ();
  else
    cnms_params_init (&p);
  l = frame_layout (layout, &p);
  for (i = 0; done < max_done; i++) {
    double t0 = bench_now_us (), t1;
    cnms_status st = cnms_detect (ctx, t,
        l == CNMS_LAYOUT_YOLOV8_SEG ? seg_protos : NULL, l, &p, &dets,
        &n_dets);

    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-frame: %s %s %s: %s: %s\n",
          bench_backend_name (b), layout, input, cnms_status_str (st),
          cnms_ctx_error (ctx));
      exit (1);
    }
    if (i < o->warmup)
      continue;
    if (i == o->warmup)
      t_start = t0;
    wall[done++] = t1 - t0;
    if (cnms_ctx_last_gpu_us (ctx) >= 0)
      gpu[n_gpu++] = cnms_ctx_last_gpu_us (ctx);
    if (done >= o->iters && t1 - t_start >= min_us)
      break;
  }
  to_rows (dets, n_dets, out);
  out->heads = heads_hash (ctx);

  bench_json_begin (j);
  bench_json_str (j, "bench", "frame");
  bench_json_str (j, "impl", bench_backend_name (b));
  bench_json_str (j, "layout", layout);
  bench_json_str (j, "input", input);
  bench_json_num (j, "iters", done);
  bench_json_stats (j, "wall", wall, done, &med, &min);
  printf ("%-13s %-10s %-14s cands %-5d dets %-3d wall med %8.1f min %8.1f us",
      bench_backend_name (b), layout, input, cnms_ctx_report (ctx)->candidates,
      n_dets, med, min);
  bench_json_stats (j, "gpu", gpu, n_gpu, &med, &min);
  bench_json_num (j, "candidates", cnms_ctx_report (ctx)->candidates);
  bench_json_num (j, "dets", n_dets);
  if (l == CNMS_LAYOUT_YOLOV8_SEG) {
    cnms_payloads pl;
    size_t bytes = 0;

    cnms_ctx_payload (ctx, &pl);
    for (i = 0; i < pl.n; i++)
      bytes += payload_bytes (pl.head, &pl.records[i]);
    bench_json_num (j, "mask_bytes", (double) bytes);
  }
  if (b == CNMS_BACKEND_CUDA)
    printf ("  gpu med %8.1f min %8.1f us", med, min);
  printf ("\n");
}

/* The last seg call's masks placed in the 640x640 frame: uint8 [K, W H]. */
static void
save_masks (const bench_opts *o, const char *backend, cnms_ctx *ctx)
{
  cnms_payloads pl;
  const cnms_payload *m;
  int nm, k, y;
  const int fw = CNMS_DEFAULT_MODEL_WIDTH, fh = CNMS_DEFAULT_MODEL_HEIGHT;
  uint8_t *full;
  char name[64];

  cnms_ctx_payload (ctx, &pl);
  if (o->save_dir == NULL || pl.head != CNMS_HEAD_MASK)
    return;
  m = pl.records;
  nm = pl.n;
  full = calloc ((size_t) (nm > 0 ? nm : 1) * fw * fh, 1);
  if (full == NULL)
    exit (1);
  for (k = 0; k < nm; k++)
    for (y = 0; y < m[k].height; y++)
      memcpy (full + ((size_t) k * fh + m[k].y + y) * fw + m[k].x,
          pl.data + m[k].offset + (size_t) y * m[k].width, m[k].width);
  snprintf (name, sizeof name, "masks_%s_yolov8_seg.npy", backend);
  bench_save_npy (o->save_dir, name, CNMS_NPY_U1, full, nm, fw * fh);
  free (full);
}

static void
save_dets (const bench_opts *o, const char *backend, const char *layout,
    const det_list *d)
{
  float rows[MAX_DETS * 7];
  char name[64];
  int i;

  if (o->save_dir == NULL)
    return;
  snprintf (name, sizeof (name), "dets_%s_%s.npy", backend, layout);
  if (strcmp (layout, "yolov8_obb") == 0) {
    bench_save_npy (o->save_dir, name, CNMS_NPY_F4, d->rows, d->n, ROW);
    return;
  }
  for (i = 0; i < d->n; i++)
    memcpy (rows + 7 * i, d->rows + ROW * i, sizeof (float) * 7);
  bench_save_npy (o->save_dir, name, CNMS_NPY_F4, rows, d->n, 7);
}

#if HAVE_CUDA
/* One thread of the contexts-on-threads record. */
typedef struct {
  const cnms_tensor *t;         /* device tensor */
  double seconds;
  long frames;
  int failed;
} thread_job;

static void *
thread_frames (void *arg)
{
  thread_job *job = arg;
  cnms_ctx *ctx = bench_ctx_new (CNMS_BACKEND_CUDA);
  const cnms_det *dets;
  cnms_params p;
  double t0, end;
  int n, i;

  cnms_params_init (&p);
  cnms_ctx_set_timing (ctx, 0);
  for (i = 0; i < 20; i++)      /* warm-up: buffers, clocks */
    job->failed |= cnms_detect (ctx, job->t, NULL, CNMS_LAYOUT_AUTO, &p,
        &dets, &n) != CNMS_OK;
  t0 = bench_now_us ();
  end = t0 + job->seconds * 1e6;
  while (bench_now_us () < end && !job->failed) {
    job->failed |= cnms_detect (ctx, job->t, NULL, CNMS_LAYOUT_AUTO, &p,
        &dets, &n) != CNMS_OK;
    job->frames++;
  }
  job->seconds = (bench_now_us () - t0) / 1e6;
  cnms_ctx_free (ctx);
  return NULL;
}

/* Frames/s of T contexts on T threads, each running the device frame. */
static void
bench_threads (const cnms_tensor *t, bench_json *j)
{
  static const int counts[] = { 1, 8 };
  double one = 0.0;
  size_t c;

  for (c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    pthread_t th[8];
    thread_job job[8];
    double fps = 0.0;
    int k, failed = 0;

    for (k = 0; k < counts[c]; k++) {
      job[k].t = t;
      job[k].seconds = 2.0;
      job[k].frames = 0;
      job[k].failed = 0;
      if (pthread_create (&th[k], NULL, thread_frames, &job[k]) != 0)
        exit (1);
    }
    for (k = 0; k < counts[c]; k++) {
      pthread_join (th[k], NULL);
      fps += (double) job[k].frames / job[k].seconds;
      failed |= job[k].failed;
    }
    if (counts[c] == 1)
      one = fps;
    bench_json_begin (j);
    bench_json_str (j, "bench", "threads");
    bench_json_str (j, "impl", "cudanms-cuda");
    bench_json_str (j, "layout", "yolov8");
    bench_json_str (j, "input", "device");
    bench_json_num (j, "threads", counts[c]);
    bench_json_num (j, "frames_per_s", fps);
    bench_json_num (j, "speedup", one > 0 ? fps / one : 0.0);
    bench_json_num (j, "failed", failed);
    bench_json_end (j);
    printf ("cudanms-cuda  yolov8 device %d contexts on %d threads: %.0f "
        "frames/s (%.2fx one)%s\n", counts[c], counts[c], fps,
        one > 0 ? fps / one : 0.0, failed ? " FAILED" : "");
  }
}
/* Ends a CUDA record with its parity against the CPU backend's detections
 * (when those exist); returns 1 on a mismatch. */
static int
end_cuda_record (bench_json *j, const det_list *got, const det_list *cpu)
{
  int same = 1;

  if (cpu != NULL) {
    same = same_dets (got, cpu);
    bench_json_num (j, "same_as_cpu", same);
  }
  bench_json_end (j);
  return !same;
}

/* The CUDA rows of one frame: the tensor in device memory, then in host
 * memory. Returns the number of mismatches against cpu (may be NULL). */
static int
bench_cuda (cnms_ctx *ctx, const cnms_tensor *t, const char *layout,
    const det_list *cpu, const bench_opts *o, bench_json *j, double *wall,
    double *gpu)
{
  static det_list got;
  cnms_tensor td = *t;
  void *d_data = NULL;
  const cnms_tensor *host_protos = NULL;
  int mismatches;

  if (cudaMalloc (&d_data, t->size) != cudaSuccess
      || cudaMemcpy (d_data, t->data, t->size, cudaMemcpyHostToDevice)
      != cudaSuccess || cudaDeviceSynchronize () != cudaSuccess) {
    fprintf (stderr, "bench-frame: cannot place the tensor on the device\n");
    exit (1);
  }
  td.data = d_data;
  td.on_device = 1;
  if (strcmp (layout, "yolov8_seg") == 0) {
    static cnms_tensor pd;
    void *d_protos = NULL;

    pd = *seg_protos;
    if (cudaMalloc (&d_protos, pd.size) != cudaSuccess
        || cudaMemcpy (d_protos, pd.data, pd.size, cudaMemcpyHostToDevice)
        != cudaSuccess || cudaDeviceSynchronize () != cudaSuccess) {
      fprintf (stderr, "bench-frame: cannot place the prototypes on the "
          "device\n");
      exit (1);
    }
    host_protos = seg_protos;
    pd.data = d_protos;
    pd.on_device = 1;
    seg_protos = &pd;
  }
  run_frame (ctx, &td, layout, "device", o, j, wall, gpu, &got);
  mismatches = end_cuda_record (j, &got, cpu);
  if (strcmp (layout, "yolov8_pose") == 0) {
    /* the same tensor's boxes alone: its first 5 rows as a one-class
     * yolov8 tensor, no keypoints (what the keypoints cost) */
    cnms_tensor boxes = td;

    boxes.dims[boxes.n_dims - 2] = 5;
    boxes.size = 5 * (size_t) boxes.dims[boxes.n_dims - 1] * sizeof (float);
    run_frame (ctx, &boxes, "yolov8_pose_boxes", "device", o, j, wall, gpu,
        &got);
    bench_json_end (j);
  }
  if (host_protos != NULL) {
    cudaFree ((void *) seg_protos->data);
    seg_protos = host_protos;
  }
  if (with_classes (layout)) {
    run_frame (ctx, &td, layout, "device+classes", o, j, wall, gpu, &got);
    mismatches += end_cuda_record (j, &got, cpu);
  }
  if (strcmp (layout, "yolov8") == 0)
    bench_threads (&td, j);
  cudaFree (d_data);

  run_frame (ctx, t, layout, "host", o, j, wall, gpu, &got);
  mismatches += end_cuda_record (j, &got, cpu);
  save_dets (o, "cuda", layout, &got);
  if (strcmp (layout, "yolov8_seg") == 0)
    save_masks (o, "cuda", ctx);
  return mismatches;
}
#endif


/* Benchmarks one layout on every wanted backend and input; returns the
 * number of detection lists that differ from the CPU backend's. */
static int
bench_layout (cnms_ctx *ctx[2], const char *dir, const char *layout,
    const bench_opts *o, bench_json *j, double *wall, double *gpu)
{
  static det_list cpu;
  char name[64];
  cnms_npy a;
  cnms_tensor t;
  int mismatches = 0;

  static cnms_npy pa;
  static cnms_tensor pt;

  snprintf (name, sizeof (name), "%s.npy", layout);
  bench_load_npy (dir, name, CNMS_NPY_F4, &a);
  t = bench_host_tensor (&a);
  if (strcmp (layout, "yolov8_seg") == 0) {
    bench_load_npy (dir, "yolov8_seg_protos.npy", CNMS_NPY_F4, &pa);
    pt = bench_host_tensor (&pa);
    seg_protos = &pt;
  }

  if (ctx[CNMS_BACKEND_CPU] != NULL) {
    run_frame (ctx[CNMS_BACKEND_CPU], &t, layout, "host", o, j, wall, gpu,
        &cpu);
    bench_json_end (j);
    save_dets (o, "cpu", layout, &cpu);
    if (strcmp (layout, "yolov8_seg") == 0)
      save_masks (o, "cpu", ctx[CNMS_BACKEND_CPU]);
  }
  /* the same frame through the per-class path: the same detections (not
   * for lanes and the heads' frames: one class, or not the point) */
  if (ctx[CNMS_BACKEND_CPU] != NULL && with_classes (layout)) {
    static det_list classes;

    run_frame (ctx[CNMS_BACKEND_CPU], &t, layout, "host+classes", o, j,
        wall, gpu, &classes);
    mismatches += !same_dets (&classes, &cpu);
    bench_json_num (j, "same_as_cpu", same_dets (&classes, &cpu));
    bench_json_end (j);
  }
#if HAVE_CUDA
  if (ctx[CNMS_BACKEND_CUDA] != NULL)
    mismatches += bench_cuda (ctx[CNMS_BACKEND_CUDA], &t, layout,
        ctx[CNMS_BACKEND_CPU] != NULL ? &cpu : NULL, o, j, wall, gpu);
#endif
  cnms_npy_clear (&a);
  if (seg_protos != NULL) {
    cnms_npy_clear (&pa);
    seg_protos = NULL;
  }
  return mismatches;
}

static void
memory_record (bench_json *j, cnms_ctx *ctx, const char *what)
{
  size_t host = 0, pinned = 0, device = 0;

  cnms_ctx_memory (ctx, &host, &pinned, &device);
  bench_json_begin (j);
  bench_json_str (j, "bench", "memory");
  bench_json_str (j, "impl", bench_backend_name (cnms_ctx_backend (ctx)));
  bench_json_str (j, "case", what);
  bench_json_num (j, "host_bytes", (double) host);
  bench_json_num (j, "pinned_bytes", (double) pinned);
  bench_json_num (j, "device_bytes", (double) device);
  bench_json_num (j, "allocs", (double) cnms_ctx_alloc_count (ctx));
  bench_json_end (j);
  printf ("%-13s memory %-28s host %10zu pinned %10zu device %10zu bytes\n",
      bench_backend_name (cnms_ctx_backend (ctx)), what, host, pinned,
      device);
}

static void
check (cnms_status st, cnms_ctx *ctx, const char *what)
{
  if (st != CNMS_OK) {
    fprintf (stderr, "bench-frame: %s: %s: %s\n", what, cnms_status_str (st),
        cnms_ctx_error (ctx));
    exit (1);
  }
}

/* A [1, 84, 33600] tensor of 1280x1280-model boxes, every class score
 * random in (0, 1): with threshold 0 all 33600 anchors are candidates. */
static float *
big_tensor (cnms_tensor *t)
{
  const int n = 33600, ch = 84;
  float *d = malloc (sizeof (float) * (size_t) n * ch);
  uint64_t x = 88172645463325252ull;
  int i;

  if (d == NULL)
    exit (1);
  for (i = 0; i < n * ch; i++) {
    float u;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    u = (float) ((x >> 40) + 1) / 16777218.0f;
    if (i < 2 * n)
      d[i] = 1280.0f * u;        /* cx, cy */
    else if (i < 4 * n)
      d[i] = 8.0f + 250.0f * u;  /* w, h */
    else
      d[i] = u;
  }
  memset (t, 0, sizeof (*t));
  t->data = d;
  t->size = sizeof (float) * (size_t) n * ch;
  t->n_dims = 3;
  t->dims[0] = 1;
  t->dims[1] = ch;
  t->dims[2] = n;
  return d;
}

static void
bench_memory (cnms_backend b, const char *dir, bench_json *j)
{
  const cnms_det *dets;
  cnms_npy a, boxes, scores, classes;
  cnms_ctx *ctx;
  cnms_params p;
  cnms_tensor t;
  int64_t *keep;
  float *big;
  int n;

  cnms_params_init (&p);
  bench_load_npy (dir, "yolov8.npy", CNMS_NPY_F4, &a);
  t = bench_host_tensor (&a);
  ctx = bench_ctx_new (b);
  check (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &dets, &n), ctx,
      "yolov8");
  memory_record (j, ctx, "yolov8 frame, 8400 anchors");
  cnms_ctx_free (ctx);
  cnms_npy_clear (&a);

  bench_load_npy (dir, "nms_boxes.npy", CNMS_NPY_F4, &boxes);
  bench_load_npy (dir, "nms_scores.npy", CNMS_NPY_F4, &scores);
  bench_load_npy (dir, "nms_classes.npy", CNMS_NPY_I4, &classes);
  keep = malloc (sizeof (int64_t) * 32768);
  ctx = bench_ctx_new (b);
  check (cnms_nms (ctx, boxes.data, scores.data, classes.data, 32768, 0.5f,
          0, 0, keep, &n), ctx, "nms 32768");
  memory_record (j, ctx, "nms, 32768 boxes");
  cnms_ctx_free (ctx);
  free (keep);
  cnms_npy_clear (&boxes);
  cnms_npy_clear (&scores);
  cnms_npy_clear (&classes);

  big = big_tensor (&t);
  p.score_threshold = 0.0f;
  p.max_candidates = 32768;
  p.model_width = p.model_height = 1280;
  p.frame_width = p.frame_height = 1280;
  ctx = bench_ctx_new (b);
  check (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &dets, &n), ctx,
      "detect 32768 candidates");
  memory_record (j, ctx, "detect, 32768 candidates");
  cnms_ctx_free (ctx);
  free (big);
}

static void
usage (void)
{
  fprintf (stderr, "usage: bench-frame DATA_DIR OUT_JSON [--backend "
      "all|cuda|cpu] [--iters N] [--warmup N] [--min-time S] "
      "[--save-dir DIR]\n");
  exit (2);
}

int
main (int argc, char **argv)
{
  static const char *const layouts[] = { "yolov8", "yolov5", "yolov8_obb",
    "laneatt", "yolov8_seg", "yolov8_pose" };
  bench_opts o = { "all", 200, 20, 0, NULL, 0 };
  cnms_ctx *ctx[2] = { NULL, NULL };
  double *wall, *gpu;
  int want[2], b, i, mismatches = 0;
  bench_json j;

  if (bench_parse_opts (argc, argv, &o) != 0)
    usage ();
  bench_pick_backends (o.backend, want);
  if (bench_json_open (&j, argv[2]) != 0) {
    fprintf (stderr, "bench-frame: cannot write %s\n", argv[2]);
    return 1;
  }
  wall = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  gpu = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  if (wall == NULL || gpu == NULL)
    return 1;
  for (b = 0; b < 2; b++)
    if (want[b])
      ctx[b] = bench_ctx_new ((cnms_backend) b);

  for (i = 0; i < 2; i++)
    mismatches += bench_layout (ctx, argv[1], layouts[i], &o, &j, wall, gpu);
  for (b = 0; b < 2; b++) {
    if (ctx[b] != NULL)
      bench_memory ((cnms_backend) b, argv[1], &j);
  }
  /* the OBB frame last: the records above are written if it fails */
  mismatches += bench_layout (ctx, argv[1], layouts[2], &o, &j, wall, gpu);
  mismatches += bench_layout (ctx, argv[1], layouts[3], &o, &j, wall, gpu);
  mismatches += bench_layout (ctx, argv[1], layouts[4], &o, &j, wall, gpu);
  mismatches += bench_layout (ctx, argv[1], layouts[5], &o, &j, wall, gpu);
  if (mismatches)
    printf ("MISMATCH: %d CUDA detection lists differ from the CPU backend's\n",
        mismatches);
  for (b = 0; b < 2; b++)
    cnms_ctx_free (ctx[b]);
  free (wall);
  free (gpu);
  return bench_json_close (&j) == 0 ? 0 : 1;
}
