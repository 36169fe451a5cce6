/* bench-nms: plain NMS latency of cudanms (cnms_nms on host arrays).
 *
 * usage: bench-nms DATA_DIR OUT_JSON [--backend all|cuda|cpu] [--iters N]
 *          [--warmup N] [--cpu-budget S] [--min-time S] [--save-dir DIR]
 *
 * Reads the boxes written by gen_data.py (the first N rows for each size),
 * runs IoU 0.5 class-agnostic and class-aware (80 classes), and records per
 * case the median and minimum over the timed iterations of:
 *   - wall time: clock_gettime around cnms_nms, whose keep list is on the
 *     host when it returns (the boxes are uploaded from host memory inside);
 *   - GPU time (CUDA backend): cnms_ctx_last_gpu_us, upload to download.
 * The CPU backend stops timing a case after --cpu-budget seconds (at least
 * 10 iterations), and goes on past --iters until --min-time seconds are
 * timed; the JSON says how many ran. With --save-dir, each keep
 * list is written as keep_<backend>_<mode>_<N>.npy (int64) for the
 * comparison with torchvision; the CUDA list is compared with the CPU one
 * here when both backends run. When DATA_DIR has nms_1m_boxes.npy and
 * nms_1m_scores.npy, the CPU backend also runs them class-agnostic
 * (N = 1000000; the CUDA backend's bitmask would need N^2 bits).
 *
 * Oriented boxes: when DATA_DIR has nms_obb_boxes.npy ([32768, 5] cx cy w
 * h angle), cnms_nms_rotated runs the same sizes, modes, scores and
 * classes (records "nms_rotated", keep lists keep_rot_<backend>_<mode>_
 * <N>.npy). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static const int sizes[] = { 256, 1024, 2048, 4096, 8192, 16384, 32768 };

#define N_SIZES ((int) (sizeof (sizes) / sizeof (sizes[0])))
#define IOU 0.5f
#define N_1M 1000000

typedef struct {
  const float *boxes, *scores;
  const int32_t *classes;
  int rotated;                  /* boxes are [n][5] cx cy w h angle */
} inputs;

/* Times one case on ctx; leaves its keep list in keep / *n_keep. */
static void
run_case (cnms_ctx *ctx, const inputs *in, int n, int class_aware,
    const bench_opts *o, bench_json *j, int64_t *keep, int *n_keep,
    double *wall, double *gpu)
{
  cnms_backend b = cnms_ctx_backend (ctx);
  double budget_us = b == CNMS_BACKEND_CPU ? o->cpu_budget_s * 1e6 : INFINITY;
  double min_us = b == CNMS_BACKEND_CPU ? o->cpu_min_s * 1e6 : 0;
  int max_done = bench_max_samples (o);
  double t_start = 0, med, min;
  int i, done = 0, n_gpu = 0;

  for (i = 0; done < max_done; i++) {
    double t0, t1, g;
    cnms_status st;

    if (i == o->warmup)
      t_start = bench_now_us ();
    t0 = bench_now_us ();
    st = (in->rotated ? cnms_nms_rotated : cnms_nms) (ctx, in->boxes,
        in->scores, class_aware ? in->classes : NULL, n, IOU, !class_aware,
        0, keep, n_keep);
    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-nms: %s N=%d: %s: %s\n",
          bench_backend_name (b), n, cnms_status_str (st),
          cnms_ctx_error (ctx));
      exit (1);
    }
    if (i < o->warmup)
      continue;
    wall[done++] = t1 - t0;
    g = cnms_ctx_last_gpu_us (ctx);
    if (g >= 0)
      gpu[n_gpu++] = g;
    if (done >= 10 && t1 - t_start > budget_us)
      break;
    if (done >= o->iters && t1 - t_start >= min_us)
      break;
  }

  bench_json_begin (j);
  bench_json_str (j, "bench", in->rotated ? "nms_rotated" : "nms");
  bench_json_str (j, "impl", bench_backend_name (b));
  bench_json_str (j, "mode", class_aware ? "classes" : "agnostic");
  bench_json_num (j, "n", n);
  bench_json_num (j, "iou", IOU);
  bench_json_num (j, "iters", done);
  bench_json_stats (j, "wall", wall, done, &med, &min);
  printf ("%-13s %-8s%s N=%-6d kept %-6d wall med %9.1f min %9.1f us",
      bench_backend_name (b), class_aware ? "classes" : "agnostic",
      in->rotated ? " rotated" : "", n,
      *n_keep, med, min);
  bench_json_stats (j, "gpu", gpu, n_gpu, &med, &min);
  bench_json_num (j, "kept", *n_keep);
  if (b == CNMS_BACKEND_CUDA)
    printf ("  gpu med %9.1f min %9.1f us", med, min);
  printf ("  (%d iters)\n", done);
}

static void
save_keep (const bench_opts *o, cnms_backend b, int rotated, int class_aware,
    int n, const int64_t *keep, int n_keep)
{
  char name[128];

  if (o->save_dir == NULL)
    return;
  snprintf (name, sizeof (name), "keep_%s%s_%s_%d.npy",
      rotated ? "rot_" : "", b == CNMS_BACKEND_CUDA ? "cuda" : "cpu",
      class_aware ? "classes" : "agnostic", n);
  bench_save_npy (o->save_dir, name, CNMS_NPY_I8, keep, n_keep, 1);
}

/* The 10^6-box case, when its files are there. */
static void
run_1m (const char *dir, cnms_ctx *ctx, const bench_opts *o, bench_json *j)
{
  char path[4096];
  cnms_npy boxes, scores;
  inputs in;
  int64_t *keep;
  double *wall, *gpu;
  int n_keep;
  FILE *f;

  snprintf (path, sizeof (path), "%s/nms_1m_boxes.npy", dir);
  f = fopen (path, "rb");
  if (f == NULL)
    return;
  fclose (f);
  bench_load_npy (dir, "nms_1m_boxes.npy", CNMS_NPY_F4, &boxes);
  bench_load_npy (dir, "nms_1m_scores.npy", CNMS_NPY_F4, &scores);
  if (boxes.n_dims != 2 || boxes.dims[1] != 4 || boxes.dims[0] != N_1M
      || scores.count != (size_t) N_1M) {
    fprintf (stderr, "bench-nms: unexpected shapes in nms_1m_*.npy\n");
    exit (1);
  }
  in.boxes = boxes.data;
  in.scores = scores.data;
  in.classes = NULL;
  in.rotated = 0;
  keep = malloc (sizeof (int64_t) * N_1M);
  wall = malloc (sizeof (double) * (size_t) bench_max_samples (o));
  gpu = malloc (sizeof (double) * (size_t) bench_max_samples (o));
  if (keep == NULL || wall == NULL || gpu == NULL)
    exit (1);
  run_case (ctx, &in, N_1M, 0, o, j, keep, &n_keep, wall, gpu);
  bench_json_end (j);
  save_keep (o, CNMS_BACKEND_CPU, 0, 0, N_1M, keep, n_keep);
  free (keep);
  free (wall);
  free (gpu);
  cnms_npy_clear (&boxes);
  cnms_npy_clear (&scores);
}

/* Every size and mode of in on each backend of ctx. */
static void
run_sizes (cnms_ctx *ctx[2], const inputs *in, const bench_opts *o,
    bench_json *j, int64_t *keep[2], double *wall, double *gpu)
{
  int s, mode, b, n_keep[2];

  for (s = 0; s < N_SIZES; s++) {
    for (mode = 0; mode < 2; mode++) {
      for (b = 0; b < 2; b++) {
        if (ctx[b] == NULL)
          continue;
        run_case (ctx[b], in, sizes[s], mode, o, j, keep[b], &n_keep[b],
            wall, gpu);
        save_keep (o, (cnms_backend) b, in->rotated, mode, sizes[s],
            keep[b], n_keep[b]);
        /* the CUDA record is the last one: add its parity with the CPU */
        if (b == CNMS_BACKEND_CUDA && ctx[CNMS_BACKEND_CPU] != NULL) {
          int same = n_keep[0] == n_keep[1] && memcmp (keep[0], keep[1],
              sizeof (int64_t) * (size_t) n_keep[0]) == 0;

          bench_json_num (j, "same_as_cpu", same);
          if (!same)
            printf ("  MISMATCH: CUDA keep list differs from the CPU one\n");
        }
        bench_json_end (j);
      }
    }
  }
}

static void
usage (void)
{
  fprintf (stderr, "usage: bench-nms DATA_DIR OUT_JSON [--backend all|cuda|cpu]"
      " [--iters N] [--warmup N] [--cpu-budget S] [--min-time S]"
      " [--save-dir DIR]\n");
  exit (2);
}

int
main (int argc, char **argv)
{
  bench_opts o = { "all", 100, 10, 3.0, NULL, 0 };
  cnms_npy boxes, scores, classes, obb;
  cnms_ctx *ctx[2] = { NULL, NULL };
  int want[2], b;
  int64_t *keep[2];
  double *wall, *gpu;
  inputs in;
  bench_json j;

  if (bench_parse_opts (argc, argv, &o) != 0)
    usage ();
  bench_pick_backends (o.backend, want);

  bench_load_npy (argv[1], "nms_boxes.npy", CNMS_NPY_F4, &boxes);
  bench_load_npy (argv[1], "nms_scores.npy", CNMS_NPY_F4, &scores);
  bench_load_npy (argv[1], "nms_classes.npy", CNMS_NPY_I4, &classes);
  if (boxes.n_dims != 2 || boxes.dims[1] != 4 || boxes.dims[0] < 32768
      || scores.count < (size_t) boxes.dims[0]
      || classes.count < (size_t) boxes.dims[0]) {
    fprintf (stderr, "bench-nms: unexpected input shapes\n");
    return 1;
  }
  in.boxes = boxes.data;
  in.scores = scores.data;
  in.classes = classes.data;
  in.rotated = 0;
  memset (&obb, 0, sizeof obb);
  {
    char path[4096];
    FILE *f;

    snprintf (path, sizeof (path), "%s/nms_obb_boxes.npy", argv[1]);
    f = fopen (path, "rb");
    if (f != NULL) {
      fclose (f);
      bench_load_npy (argv[1], "nms_obb_boxes.npy", CNMS_NPY_F4, &obb);
      if (obb.n_dims != 2 || obb.dims[1] != 5 || obb.dims[0] < 32768) {
        fprintf (stderr, "bench-nms: unexpected nms_obb_boxes.npy shape\n");
        return 1;
      }
    }
  }

  if (bench_json_open (&j, argv[2]) != 0) {
    fprintf (stderr, "bench-nms: cannot write %s\n", argv[2]);
    return 1;
  }
  for (b = 0; b < 2; b++) {
    keep[b] = malloc (sizeof (int64_t) * 32768);
    if (want[b])
      ctx[b] = bench_ctx_new ((cnms_backend) b);
  }
  wall = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  gpu = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  if (keep[0] == NULL || keep[1] == NULL || wall == NULL || gpu == NULL)
    return 1;

  run_sizes (ctx, &in, &o, &j, keep, wall, gpu);
  if (ctx[CNMS_BACKEND_CPU] != NULL)
    run_1m (argv[1], ctx[CNMS_BACKEND_CPU], &o, &j);
  if (obb.data != NULL) {
    in.boxes = obb.data;
    in.rotated = 1;
    run_sizes (ctx, &in, &o, &j, keep, wall, gpu);
  }

  for (b = 0; b < 2; b++) {
    cnms_ctx_free (ctx[b]);
    free (keep[b]);
  }
  free (wall);
  free (gpu);
  cnms_npy_clear (&boxes);
  cnms_npy_clear (&scores);
  cnms_npy_clear (&classes);
  cnms_npy_clear (&obb);
  return bench_json_close (&j) == 0 ? 0 : 1;
}
