#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double
bench_now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec * 1e-3;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

void
bench_stats (double *v, int n, double *median, double *min)
{
  if (n <= 0) {
    *median = *min = NAN;
    return;
  }
  qsort (v, (size_t) n, sizeof (double), cmp_double);
  *min = v[0];
  *median = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int
bench_json_open (bench_json *j, const char *path)
{
  memset (j, 0, sizeof (*j));
  j->f = fopen (path, "w");
  if (j->f == NULL)
    return -1;
  fputs ("[\n", j->f);
  return 0;
}

void
bench_json_begin (bench_json *j)
{
  fputs (j->n_records++ ? ",\n{" : "{", j->f);
  j->n_fields = 0;
}

static void
key (bench_json *j, const char *k)
{
  fprintf (j->f, "%s\"%s\": ", j->n_fields++ ? ", " : "", k);
}

void
bench_json_str (bench_json *j, const char *k, const char *value)
{
  const char *c;

  key (j, k);
  fputc ('"', j->f);
  for (c = value; *c; c++) {
    if (*c == '"' || *c == '\\')
      fputc ('\\', j->f);
    if ((unsigned char) *c >= 0x20)
      fputc (*c, j->f);
  }
  fputc ('"', j->f);
}

void
bench_json_num (bench_json *j, const char *k, double value)
{
  key (j, k);
  if (isfinite (value))
    fprintf (j->f, "%.9g", value);
  else
    fputs ("null", j->f);
}

void
bench_json_stats (bench_json *j, const char *prefix, double *v, int n,
    double *median, double *min)
{
  char k[64];

  bench_stats (v, n, median, min);
  snprintf (k, sizeof k, "%s%smed_us", prefix ? prefix : "",
      prefix ? "_" : "");
  bench_json_num (j, k, *median);
  snprintf (k, sizeof k, "%s%smin_us", prefix ? prefix : "",
      prefix ? "_" : "");
  bench_json_num (j, k, *min);
}

void
bench_json_end (bench_json *j)
{
  fputc ('}', j->f);
  fflush (j->f);
}

int
bench_json_close (bench_json *j)
{
  int rc;

  fputs ("\n]\n", j->f);
  rc = fclose (j->f);
  j->f = NULL;
  return rc == 0 ? 0 : -1;
}

void
bench_load_npy (const char *dir, const char *name, cnms_npy_dtype want,
    cnms_npy *a)
{
  char path[4096], err[256];

  snprintf (path, sizeof (path), "%s/%s", dir, name);
  if (cnms_npy_read (path, a, err, sizeof (err)) != 0) {
    fprintf (stderr, "bench: %s: %s (run tests/bench/gen_data.py first)\n",
        path, err);
    exit (1);
  }
  if (a->dtype != want) {
    fprintf (stderr, "bench: %s: dtype %s, expected %s\n", path,
        cnms_npy_dtype_name (a->dtype), cnms_npy_dtype_name (want));
    exit (1);
  }
}

void
bench_save_npy (const char *dir, const char *name, cnms_npy_dtype dtype,
    const void *data, int rows, int cols)
{
  char path[4096], err[256];
  int64_t dims[2];

  dims[0] = rows;
  dims[1] = cols;
  snprintf (path, sizeof (path), "%s/%s", dir, name);
  if (cnms_npy_write (path, dtype, 2, dims, data, err,
          sizeof (err)) != 0) {
    fprintf (stderr, "bench: %s: %s\n", path, err);
    exit (1);
  }
}

int
bench_parse_opts (int argc, char **argv, bench_opts *o)
{
  int i;

  if (argc < 3)
    return -1;
  for (i = 3; i < argc; i++) {
    if (i + 1 >= argc)
      return -1;
    if (strcmp (argv[i], "--backend") == 0)
      o->backend = argv[++i];
    else if (strcmp (argv[i], "--iters") == 0)
      o->iters = atoi (argv[++i]);
    else if (strcmp (argv[i], "--warmup") == 0)
      o->warmup = atoi (argv[++i]);
    else if (strcmp (argv[i], "--cpu-budget") == 0)
      o->cpu_budget_s = atof (argv[++i]);
    else if (strcmp (argv[i], "--save-dir") == 0)
      o->save_dir = argv[++i];
    else if (strcmp (argv[i], "--min-time") == 0)
      o->cpu_min_s = atof (argv[++i]);
    else
      return -1;
  }
  return o->iters >= 1 && o->warmup >= 0 ? 0 : -1;
}

int
bench_max_samples (const bench_opts *o)
{
  return o->cpu_min_s > 0 && o->iters < BENCH_MAX_SAMPLES ?
      BENCH_MAX_SAMPLES : o->iters;
}

void
bench_pick_backends (const char *arg, int want[2])
{
  int all = strcmp (arg, "all") == 0;

  want[CNMS_BACKEND_CPU] = all || strcmp (arg, "cpu") == 0;
  want[CNMS_BACKEND_CUDA] = all || strcmp (arg, "cuda") == 0;
  if (!want[CNMS_BACKEND_CPU] && !want[CNMS_BACKEND_CUDA]) {
    fprintf (stderr, "bench: --backend must be cuda, cpu or all\n");
    exit (2);
  }
  if (want[CNMS_BACKEND_CUDA] && cnms_cuda_device_count () == 0) {
    if (!all) {
      fprintf (stderr, "bench: --backend cuda, but no CUDA device "
          "(or a build without CUDA)\n");
      exit (1);
    }
    fprintf (stderr, "bench: no CUDA device: CUDA rows skipped\n");
    want[CNMS_BACKEND_CUDA] = 0;
  }
}

const char *
bench_backend_name (cnms_backend b)
{
  return b == CNMS_BACKEND_CUDA ? "cudanms-cuda" : "cudanms-cpu";
}

cnms_ctx *
bench_ctx_new (cnms_backend b)
{
  cnms_ctx *ctx = NULL;
  cnms_status st = cnms_ctx_new (b, -1, &ctx);

  if (st != CNMS_OK) {
    fprintf (stderr, "bench: cnms_ctx_new (%s): %s\n", bench_backend_name (b),
        cnms_status_str (st));
    exit (1);
  }
  cnms_ctx_set_timing (ctx, 1);
  /* the CUDA paths not yet proven on a GPU take part (the bench measures
   * them; CNMS_TEST_CUDA_UNPROVEN) */
  cnms_ctx_test_option (ctx, CNMS_TEST_CUDA_UNPROVEN, 1);
  return ctx;
}

cnms_tensor
bench_host_tensor (const cnms_npy *a)
{
  cnms_tensor t;
  int d;

  memset (&t, 0, sizeof (t));
  t.data = a->data;
  t.size = a->size;
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = a->n_dims;
  for (d = 0; d < a->n_dims; d++)
    t.dims[d] = a->dims[d];
  return t;
}

void
bench_laneatt_params (cnms_params *p)
{
  p->score_threshold = 0.5f;
  p->max_detections = 4;
  p->model_width = 640;
  p->model_height = 360;
  p->frame_width = 1280;
  p->frame_height = 720;
  p->letterbox = 0;
  p->lane_distance = 50.0f;
}
