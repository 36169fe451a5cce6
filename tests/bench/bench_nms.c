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
 * <N>.npy).
 *
 * Lanes: cnms_nms_lanes (records "nms_lanes", keep lists keep_lanes_
 * <backend>_<mode>_<N>.npy) on LaneATT proposals made here (seeded;
 * S = 72 rows, distance 50 model pixels, N = 1024 .. 32768, the first N
 * of 32768), in two modes: "far", N lanes over every row, 200 pixels
 * apart (x = 200 i, a slope of up to 0.5 pixel a row, 2 pixels of
 * jitter), every one kept: the index must keep them apart by their x;
 * "frame", N straight lanes in a 640-wide model (bottom x in -200 .. 840,
 * up to 6 pixels a row either way, first row 0 .. 40, 10 .. 72 rows),
 * which suppress each other as a frame's proposals do. Scores uniform.
 *
 * --only WHAT (boxes, rotated or lanes, or a comma list of them) runs
 * those cases alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static const int sizes[] = { 256, 1024, 2048, 4096, 8192, 16384, 32768 };

#define N_SIZES ((int) (sizeof (sizes) / sizeof (sizes[0])))
#define IOU 0.5f
#define N_1M 1000000
#define N_MAX 32768
/* lanes: rows, distance (model pixels), the smallest N */
#define LANE_S 72
#define LANE_DISTANCE 50.0f
#define LANE_N_MIN 1024

typedef struct {
  const float *boxes, *scores;
  const int32_t *classes;
  int rotated;                  /* boxes are [n][5] cx cy w h angle */
  int lanes;                    /* boxes are [n][5 + LANE_S] proposals */
  const char *lane_mode;        /* lanes: "far" or "frame" */
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
    if (in->lanes)
      st = cnms_nms_lanes (ctx, in->boxes, LANE_S, in->scores, n,
          LANE_DISTANCE, 0, keep, n_keep);
    else
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
  bench_json_str (j, "bench", in->lanes ? "nms_lanes" : in->rotated ?
      "nms_rotated" : "nms");
  bench_json_str (j, "impl", bench_backend_name (b));
  bench_json_str (j, "mode", in->lanes ? in->lane_mode : class_aware ?
      "classes" : "agnostic");
  bench_json_num (j, "n", n);
  if (in->lanes) {
    bench_json_num (j, "distance", LANE_DISTANCE);
    bench_json_num (j, "rows", LANE_S);
  } else {
    bench_json_num (j, "iou", IOU);
  }
  bench_json_num (j, "iters", done);
  bench_json_stats (j, "wall", wall, done, &med, &min);
  printf ("%-13s %-8s%s N=%-6d kept %-6d wall med %9.1f min %9.1f us",
      bench_backend_name (b), in->lanes ? in->lane_mode : class_aware ?
      "classes" : "agnostic", in->lanes ? " lanes" : in->rotated ?
      " rotated" : "", n, *n_keep, med, min);
  bench_json_stats (j, "gpu", gpu, n_gpu, &med, &min);
  bench_json_num (j, "kept", *n_keep);
  if (b == CNMS_BACKEND_CUDA)
    printf ("  gpu med %9.1f min %9.1f us", med, min);
  printf ("  (%d iters)\n", done);
}

static void
save_keep (const bench_opts *o, cnms_backend b, const inputs *in,
    int class_aware, int n, const int64_t *keep, int n_keep)
{
  char name[128];

  if (o->save_dir == NULL)
    return;
  snprintf (name, sizeof (name), "keep_%s%s_%s_%d.npy",
      in->lanes ? "lanes_" : in->rotated ? "rot_" : "",
      b == CNMS_BACKEND_CUDA ? "cuda" : "cpu", in->lanes ? in->lane_mode :
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
  in.lanes = 0;
  in.lane_mode = NULL;
  keep = malloc (sizeof (int64_t) * N_1M);
  wall = malloc (sizeof (double) * (size_t) bench_max_samples (o));
  gpu = malloc (sizeof (double) * (size_t) bench_max_samples (o));
  if (keep == NULL || wall == NULL || gpu == NULL)
    exit (1);
  run_case (ctx, &in, N_1M, 0, o, j, keep, &n_keep, wall, gpu);
  bench_json_end (j);
  save_keep (o, CNMS_BACKEND_CPU, &in, 0, N_1M, keep, n_keep);
  free (keep);
  free (wall);
  free (gpu);
  cnms_npy_clear (&boxes);
  cnms_npy_clear (&scores);
}

/* Every size and mode of in (lanes: its one mode, from LANE_N_MIN) on
 * each backend of ctx. */
static void
run_sizes (cnms_ctx *ctx[2], const inputs *in, const bench_opts *o,
    bench_json *j, int64_t *keep[2], double *wall, double *gpu)
{
  int s, mode, b, n_keep[2];

  for (s = 0; s < N_SIZES; s++) {
    if (in->lanes && sizes[s] < LANE_N_MIN)
      continue;
    for (mode = 0; mode < (in->lanes ? 1 : 2); mode++) {
      for (b = 0; b < 2; b++) {
        if (ctx[b] == NULL)
          continue;
        run_case (ctx[b], in, sizes[s], mode, o, j, keep[b], &n_keep[b],
            wall, gpu);
        save_keep (o, (cnms_backend) b, in, mode, sizes[s], keep[b], n_keep[b]);
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

/* The next of a seeded sequence (xorshift64*), uniform in [0, 1). */
static double
lane_rand (uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double) ((*s * 2685821657736338717ull) >> 11) * 0x1p-53;
}

/* N_MAX lane proposals [N_MAX][5 + LANE_S] and their scores, of the mode
 * ("far" or "frame"; the top of this file). */
static void
make_lanes (const char *mode, float *p, float *scores)
{
  const int far = strcmp (mode, "far") == 0;
  const size_t stride = 5 + LANE_S;
  uint64_t s = far ? 0x9e3779b97f4a7c15ull : 0xd1b54a32d192ed03ull;
  int i, k;

  for (i = 0; i < N_MAX; i++) {
    float *r = p + stride * (size_t) i;
    double x0, slope;
    int first, rows;

    if (far) {
      x0 = 200.0 * i;
      slope = lane_rand (&s) - 0.5;
      first = 0;
      rows = LANE_S;
    } else {
      x0 = -200.0 + 1040.0 * lane_rand (&s);
      slope = 12.0 * lane_rand (&s) - 6.0;
      first = (int) (41.0 * lane_rand (&s));
      rows = 10 + (int) (63.0 * lane_rand (&s));
    }
    /* two logits, start_y (first row / (S - 1)), start_x, length */
    r[0] = 0.0f;
    r[1] = 1.0f;
    r[2] = (float) first / (float) (LANE_S - 1);
    r[3] = (float) x0;
    r[4] = (float) rows;
    for (k = 0; k < LANE_S; k++)
      r[5 + k] = (float) (x0 + slope * k + 4.0 * lane_rand (&s) - 2.0);
    scores[i] = (float) lane_rand (&s);
  }
}

/* Runs the lanes of both modes. */
static void
run_lanes (cnms_ctx *ctx[2], const bench_opts *o, bench_json *j,
    int64_t *keep[2], double *wall, double *gpu)
{
  static const char *const modes[] = { "far", "frame" };
  float *p = malloc (sizeof (float) * (5 + LANE_S) * (size_t) N_MAX);
  float *scores = malloc (sizeof (float) * N_MAX);
  inputs in;
  int m;

  if (p == NULL || scores == NULL)
    exit (1);
  for (m = 0; m < 2; m++) {
    make_lanes (modes[m], p, scores);
    in.boxes = p;
    in.scores = scores;
    in.classes = NULL;
    in.rotated = 0;
    in.lanes = 1;
    in.lane_mode = modes[m];
    run_sizes (ctx, &in, o, j, keep, wall, gpu);
  }
  free (p);
  free (scores);
}

static void
usage (void)
{
  fprintf (stderr, "usage: bench-nms DATA_DIR OUT_JSON [--backend all|cuda|cpu]"
      " [--iters N] [--warmup N] [--cpu-budget S] [--min-time S]"
      " [--save-dir DIR] [--only boxes|rotated|lanes[,...]]\n");
  exit (2);
}

/* Does --only's list (NULL: every case) name what? */
static int
wanted (const char *only, const char *what)
{
  size_t len = strlen (what);
  const char *c = only;

  if (only == NULL)
    return 1;
  while ((c = strstr (c, what)) != NULL) {
    if ((c == only || c[-1] == ',') && (c[len] == '\0' || c[len] == ','))
      return 1;
    c += len;
  }
  return 0;
}

int
main (int argc, char **argv)
{
  bench_opts o = { "all", 100, 10, 3.0, NULL, 0 };
  cnms_npy boxes, scores, classes, obb;
  cnms_ctx *ctx[2] = { NULL, NULL };
  int want[2], b, i, n_args = 0;
  int64_t *keep[2];
  double *wall, *gpu;
  const char *only = NULL;
  char **args = malloc (sizeof (char *) * ((size_t) argc + 1));
  inputs in;
  bench_json j;

  /* --only is this bench's own: the others go to bench_parse_opts */
  if (args == NULL)
    return 1;
  for (i = 0; i < argc; i++) {
    if (i >= 3 && strcmp (argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else
      args[n_args++] = argv[i];
  }
  args[n_args] = NULL;
  if (bench_parse_opts (n_args, args, &o) != 0)
    usage ();
  free (args);
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
  in.lanes = 0;
  in.lane_mode = NULL;
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
    keep[b] = malloc (sizeof (int64_t) * N_MAX);
    if (want[b])
      ctx[b] = bench_ctx_new ((cnms_backend) b);
  }
  wall = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  gpu = malloc (sizeof (double) * (size_t) bench_max_samples (&o));
  if (keep[0] == NULL || keep[1] == NULL || wall == NULL || gpu == NULL)
    return 1;

  if (wanted (only, "boxes")) {
    run_sizes (ctx, &in, &o, &j, keep, wall, gpu);
    if (ctx[CNMS_BACKEND_CPU] != NULL)
      run_1m (argv[1], ctx[CNMS_BACKEND_CPU], &o, &j);
  }
  if (obb.data != NULL && wanted (only, "rotated")) {
    in.boxes = obb.data;
    in.rotated = 1;
    run_sizes (ctx, &in, &o, &j, keep, wall, gpu);
  }
  if (wanted (only, "lanes"))
    run_lanes (ctx, &o, &j, keep, wall, gpu);

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
