/* Phase 1 schemes side by side: GPU time of cnms_nms (upload .. download,
 * CUDA events through cnms_ctx_set_timing) with CNMS_PHASE1=tile and
 * CNMS_PHASE1=ballot, N in {256 .. 32768}, class-agnostic and 80 classes,
 * median of BENCH_ITERS (100) calls after a warm-up. Both schemes must
 * keep the same boxes; the "same" column says so. Not a test: run it by
 * hand on the GPU host. CNMS_SORT is taken from the environment.
 *
 *   bench-phase1 [iterations]
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

#define WARMUP 10
#define N_SCHEMES 2
#define N_CLASSES 80

static const char *const schemes[N_SCHEMES] = { "tile", "ballot" };
static const int sizes[] = { 256, 1024, 4096, 8192, 16384, 32768 };

typedef struct {
  int n;
  float *boxes, *scores;
  int32_t *classes;
} boxes_set;

/* Boxes around n / 16 objects in a 640x640 image, jittered so that
 * neighbours overlap as a detector's raw output does; random scores. */
static void
boxes_make (boxes_set *b, int n, uint64_t seed)
{
  const int objects = n / 16 > 1 ? n / 16 : 1;
  test_rng r;
  int i;

  test_rng_seed (&r, seed);
  b->n = n;
  b->boxes = malloc ((size_t) n * 4 * sizeof (float));
  b->scores = malloc ((size_t) n * sizeof (float));
  b->classes = malloc ((size_t) n * sizeof (int32_t));
  if (b->boxes == NULL || b->scores == NULL || b->classes == NULL)
    exit (1);
  for (i = 0; i < n; i++) {
    /* object o: a fixed centre and size from its own seed */
    test_rng ro;
    const int o = gpu_rng_int (&r, 0, objects);
    float cx, cy, w, h, j;

    test_rng_seed (&ro, seed * 7919 + (uint64_t) o);
    cx = gpu_rng_float (&ro, 20.0f, 620.0f);
    cy = gpu_rng_float (&ro, 20.0f, 620.0f);
    w = gpu_rng_float (&ro, 8.0f, 160.0f);
    h = gpu_rng_float (&ro, 8.0f, 160.0f);
    j = gpu_rng_float (&r, -0.15f, 0.15f);
    cx += j * w;
    cy += gpu_rng_float (&r, -0.15f, 0.15f) * h;
    w *= 1.0f + gpu_rng_float (&r, -0.2f, 0.2f);
    h *= 1.0f + gpu_rng_float (&r, -0.2f, 0.2f);
    b->boxes[4 * i + 0] = cx - w / 2;
    b->boxes[4 * i + 1] = cy - h / 2;
    b->boxes[4 * i + 2] = cx + w / 2;
    b->boxes[4 * i + 3] = cy + h / 2;
    b->scores[i] = gpu_rng_float (&r, 0.0f, 1.0f);
    b->classes[i] = gpu_rng_int (&ro, 0, N_CLASSES);
  }
}

static void
boxes_free (boxes_set *b)
{
  free (b->boxes);
  free (b->scores);
  free (b->classes);
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Median GPU time (us) of iters calls; the kept list of the last call
 * goes to keep / *n_keep. Returns -1 on failure. */
static double
time_nms (cnms_ctx *ctx, const boxes_set *b, int agnostic, int iters,
    int64_t *keep, int *n_keep, double *samples)
{
  int i;

  for (i = 0; i < WARMUP + iters; i++) {
    cnms_status st = cnms_nms (ctx, b->boxes, b->scores,
        agnostic ? NULL : b->classes, b->n, 0.5f, agnostic, 0, keep,
        n_keep);
    if (st != CNMS_OK) {
      printf ("cnms_nms failed: %s\n", cnms_ctx_error (ctx));
      return -1.0;
    }
    if (i >= WARMUP)
      samples[i - WARMUP] = cnms_ctx_last_gpu_us (ctx);
  }
  qsort (samples, (size_t) iters, sizeof *samples, cmp_double);
  return samples[iters / 2];
}

int
main (int argc, char **argv)
{
  const int iters = argc > 1 ? atoi (argv[1]) : 100;
  const int n_sizes = (int) (sizeof sizes / sizeof sizes[0]);
  const int max_n = sizes[n_sizes - 1];
  cnms_ctx *ctx[N_SCHEMES];
  int64_t *keep[N_SCHEMES];
  double *samples;
  double total[N_SCHEMES] = { 0.0, 0.0 };
  int wins[N_SCHEMES] = { 0, 0 };
  int s, k, agnostic, failed = 0;

  gpu_require_device ("bench-phase1");
  if (iters < 1) {
    printf ("usage: bench-phase1 [iterations >= 1]\n");
    return 2;
  }
  /* the scheme is read once, at context creation */
  for (s = 0; s < N_SCHEMES; s++) {
    setenv ("CNMS_PHASE1", schemes[s], 1);
    ctx[s] = gpu_ctx_new (CNMS_BACKEND_CUDA);
    cnms_ctx_set_timing (ctx[s], 1);
    keep[s] = malloc ((size_t) max_n * sizeof (int64_t));
  }
  unsetenv ("CNMS_PHASE1");
  samples = malloc ((size_t) iters * sizeof (double));
  if (samples == NULL || keep[0] == NULL || keep[1] == NULL)
    return 1;

  printf ("bench-phase1: cnms_nms GPU time (upload .. download), median of "
      "%d after %d warm-up, iou 0.5, sort=%s\n", iters, WARMUP,
      getenv ("CNMS_SORT") ? getenv ("CNMS_SORT") : "default");
  printf ("%7s %8s %10s %10s %8s %7s %5s\n", "N", "classes", "tile us",
      "ballot us", "ballot/t", "kept", "same");
  for (k = 0; k < n_sizes; k++) {
    boxes_set b;

    boxes_make (&b, sizes[k], 1000 + (uint64_t) sizes[k]);
    for (agnostic = 1; agnostic >= 0; agnostic--) {
      double us[N_SCHEMES];
      int n_keep[N_SCHEMES] = { 0, 0 };
      int same;

      for (s = 0; s < N_SCHEMES; s++) {
        us[s] = time_nms (ctx[s], &b, agnostic, iters, keep[s], &n_keep[s],
            samples);
        if (us[s] < 0.0)
          return 1;
        total[s] += us[s];
      }
      same = n_keep[0] == n_keep[1] && memcmp (keep[0], keep[1],
          (size_t) n_keep[0] * sizeof (int64_t)) == 0;
      failed += !same;
      wins[us[1] < us[0]]++;
      printf ("%7d %8s %10.1f %10.1f %8.2f %7d %5s\n", b.n,
          agnostic ? "agnostic" : "80", us[0], us[1], us[1] / us[0],
          n_keep[0], same ? "yes" : "NO");
    }
    boxes_free (&b);
  }
  printf ("rows won: tile %d, ballot %d; sum of medians: tile %.1f us, "
      "ballot %.1f us\n", wins[0], wins[1], total[0], total[1]);
  if (failed)
    printf ("FAIL: %d rows where the schemes kept different boxes\n", failed);

  for (s = 0; s < N_SCHEMES; s++) {
    cnms_ctx_free (ctx[s]);
    free (keep[s]);
  }
  free (samples);
  return failed ? 1 : 0;
}
