/* cnms_merge on the CUDA backend (the merge kernel, cuda_merge.cu) against
 * the CPU backend's host merge, bit for bit (every field of every
 * cnms_det), for every rule (greedy NMM, NMM, NMS), metric (IoS, IoU),
 * class mode (each class alone, agnostic) and rules (SAHI's, consistent)
 * at thresholds 0, 0.1, 1/3, 0.5, 0.7 and 1:
 *   - seeded random sets of 0, 1, 2, 17, 300, 1000 and 4096 records
 *     (the kernel's limit), and 4097 (above it: the host merge, the same
 *     bits): boxes on coarse grids (pairs exactly at the thresholds, tied
 *     scores, duplicates, zero and negative areas), clusters of jittered
 *     boxes as the slices of a frame give them, and sets spoilt with NaN,
 *     infinities, doubles past float32's range, subnormals, -0, scores
 *     tied in float32 only, and class ids that collide in float32;
 *   - hand-made sets: pairs at the threshold in float32 and float64, the
 *     float32 IoU that rounds up to 0.7, equal scores, equal boxes, chains,
 *     nested, zero-area and negative-area boxes, non-finite values, many
 *     classes, NMM's shortcut at threshold 0, the records the merge pass
 *     drops;
 *   - cnms_detect_tiles of a synthetic tiles tensor (9 slices and the
 *     whole frame), host and device tensor, for every rule, metric, class
 *     mode and rules.
 * Each set runs twice on the CUDA context: the same bits (determinism),
 * the kernel taken at 1 .. 4096 records where they fit the device's
 * shared memory (all of them from compute capability 9.0) and the host
 * above (the context's GPU time, timing on), no allocation on the second
 * call; and once with
 * CNMS_TEST_HOST_MERGE (the host merge on the CUDA context, as the bench
 * compares). Prints "merge parity: N sets, M mismatches"; exits 1 on a
 * mismatch, 77 without a device. CNMS_GPU_CASES (default 2) is the random
 * sets per size and parameters; 1 (and any count under
 * CNMS_GPU_SANITIZER=1, as tests/run-sanitizers.sh sets it): one set
 * each, sizes up to 300 and the one above the limit only; 0: those, and
 * the hand-made sets at thresholds 0 and 0.5 only. */
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

/* The kernel's limit (kernels/cuda/cnms_cuda.cuh, CNMS_MERGE_MAX). */
#define MERGE_MAX 4096

/* The device's shared memory a block (opt-in), for takes_gpu. */
static size_t smem_optin;

/* Does the kernel take n records (n > 0) under m: at most MERGE_MAX, and
 * its arrays (cuda_merge.cu's merge_layout_of, for n rounded up to a
 * power of two >= 32) within the device's shared memory? */
static int
takes_gpu (int n, const cnms_merge_params *m)
{
  size_t n2 = 32, bytes;

  if (n < 1 || n > MERGE_MAX)
    return 0;
  while (n2 < (size_t) n)
    n2 *= 2;
  bytes = n2 * (m->rules == CNMS_MERGE_RULES_CONSISTENT ? 32 : 24) + 160
      + 5 * 2 * (n2 + 2) + n2;
  return (bytes + 15) / 16 * 16 <= smem_optin;
}

static cnms_ctx *ctx_cpu, *ctx_gpu;
static long sets, mismatches, gpu_runs;
/* CNMS_GPU_CASES = 0: the hand-made sets at thresholds 0 and 0.5 only */
static int least;

/* A set of records. */
typedef struct {
  double *boxes, *scores;
  int32_t *classes;
  int n;
} mset;

static void
mset_alloc (mset *s, int n)
{
  const size_t k = (size_t) (n > 0 ? n : 1);

  s->n = n;
  s->boxes = calloc (4 * k, sizeof (double));
  s->scores = calloc (k, sizeof (double));
  s->classes = calloc (k, sizeof (int32_t));
  if (s->boxes == NULL || s->scores == NULL || s->classes == NULL) {
    fprintf (stderr, "FAIL: out of memory\n");
    exit (1);
  }
}

static void
mset_free (mset *s)
{
  free (s->boxes);
  free (s->scores);
  free (s->classes);
}

static void
put (mset *s, int i, double x1, double y1, double x2, double y2,
    double score, int32_t cls)
{
  s->boxes[4 * i] = x1;
  s->boxes[4 * i + 1] = y1;
  s->boxes[4 * i + 2] = x2;
  s->boxes[4 * i + 3] = y2;
  s->scores[i] = score;
  s->classes[i] = cls;
}

static const char *const rule_names[] = { "greedy-nmm", "nmm", "nms" };

static void
describe (char *buf, size_t size, const char *what,
    const cnms_merge_params *m, int n)
{
  snprintf (buf, size, "%s n=%d %s %s thr=%.17g %s %s", what, n,
      rule_names[m->rule], m->metric == CNMS_MATCH_IOU ? "iou" : "ios",
      m->threshold, m->class_agnostic ? "agnostic" : "by-class",
      m->rules == CNMS_MERGE_RULES_CONSISTENT ? "consistent" : "sahi");
}

static void
print_det (const char *who, int k, const cnms_det *d)
{
  printf ("  %s[%d]: score %.9g box %.9g %.9g %.9g %.9g class %d anchor %d "
      "angle %g\n", who, k, d->score, d->x1, d->y1, d->x2, d->y2,
      d->class_id, d->anchor, d->angle);
}

/* A mismatch: counted, the first 10 printed with their first difference
 * (a, na: the CPU's; b, nb: CUDA's). */
static void
mismatch (const char *what, const char *why, const cnms_det *a, int na,
    const cnms_det *b, int nb)
{
  int k;

  if (mismatches++ >= 10)
    return;
  printf ("MISMATCH %s: %s (cpu %d records, cuda %d)\n", what, why, na, nb);
  for (k = 0; k < na && k < nb; k++)
    if (memcmp (&a[k], &b[k], sizeof *a) != 0) {
      print_det ("cpu", k, &a[k]);
      print_det ("cuda", k, &b[k]);
      return;
    }
  if (na > nb)
    print_det ("cpu", nb, &a[nb]);
  else if (nb > na)
    print_det ("cuda", na, &b[na]);
}

/* One set under m: the CPU context, then the CUDA context twice and once
 * on its host merge, each against the CPU's result. */
static void
check_set (const char *name, const mset *s, const cnms_merge_params *m)
{
  const int want_gpu = takes_gpu (s->n, m);
  const cnms_det *d = NULL;
  cnms_det *ref;
  cnms_status st, st_ref;
  int n_ref = 0, n = 0, rep;
  char what[256], why[160];

  describe (what, sizeof what, name, m, s->n);
  sets++;
  st_ref = cnms_merge (ctx_cpu, s->boxes, s->scores, s->classes, s->n, m,
      &d, &n_ref);
  if (st_ref != CNMS_OK) {
    snprintf (why, sizeof why, "the CPU merge failed: %s",
        cnms_ctx_error (ctx_cpu));
    mismatch (what, why, NULL, 0, NULL, 0);
    return;
  }
  ref = malloc (sizeof *ref * (size_t) (n_ref > 0 ? n_ref : 1));
  if (ref == NULL)
    exit (1);
  memcpy (ref, d, sizeof *ref * (size_t) n_ref);

  for (rep = 0; rep < 3; rep++) {
    const uint64_t allocs = cnms_ctx_alloc_count (ctx_gpu);
    const int host = rep == 2;
    double us;

    cnms_ctx_test_option (ctx_gpu, CNMS_TEST_HOST_MERGE, host);
    st = cnms_merge (ctx_gpu, s->boxes, s->scores, s->classes, s->n, m, &d,
        &n);
    us = cnms_ctx_last_gpu_us (ctx_gpu);
    cnms_ctx_test_option (ctx_gpu, CNMS_TEST_HOST_MERGE, 0);
    if (st != CNMS_OK) {
      snprintf (why, sizeof why, "call %d failed: %s: %s", rep + 1,
          cnms_status_str (st), cnms_ctx_error (ctx_gpu));
      mismatch (what, why, ref, n_ref, NULL, 0);
      break;
    }
    if (n != n_ref || memcmp (d, ref, sizeof *ref * (size_t) n) != 0) {
      snprintf (why, sizeof why, "call %d (%s) differs", rep + 1,
          host ? "host merge" : "kernel");
      mismatch (what, why, ref, n_ref, d, n);
      break;
    }
    if (!host && want_gpu != (us >= 0.0)) {
      snprintf (why, sizeof why, "call %d ran on the %s (GPU time %g us)",
          rep + 1, us >= 0.0 ? "GPU" : "host", us);
      mismatch (what, why, NULL, 0, NULL, 0);
      break;
    }
    if (host && us >= 0.0) {
      snprintf (why, sizeof why, "CNMS_TEST_HOST_MERGE ran on the GPU");
      mismatch (what, why, NULL, 0, NULL, 0);
      break;
    }
    if (rep == 1 && cnms_ctx_alloc_count (ctx_gpu) != allocs) {
      snprintf (why, sizeof why, "the second call allocated");
      mismatch (what, why, NULL, 0, NULL, 0);
      break;
    }
    if (!host && want_gpu)
      gpu_runs++;
  }
  free (ref);
}

/* The parameters number p of the 24 (rule, metric, class mode, rules)
 * at threshold thr. */
static void
params_of (cnms_merge_params *m, int p, double thr)
{
  cnms_merge_params_init (m);
  m->rule = (cnms_merge_rule) (p % 3);
  m->metric = (cnms_match_metric) (p / 3 % 2);
  m->class_agnostic = p / 6 % 2;
  m->rules = (cnms_merge_rules) (p / 12 % 2);
  m->threshold = thr;
}

static const double thresholds[] = { 0.0, 0.1, 1.0 / 3.0, 0.5, 0.7, 1.0 };
#define N_THR ((int) (sizeof thresholds / sizeof thresholds[0]))

/* A value now and then spoilt: NaN, an infinity, past float32's range, a
 * subnormal, -0. */
static double
spoil (test_rng *r, double v)
{
  switch (test_rng_int (r, 0, 40)) {
    case 0:
      return NAN;
    case 1:
      return INFINITY;
    case 2:
      return -INFINITY;
    case 3:
      return 1e300;
    case 4:
      return -3.5e38;
    case 5:
      return 1e-40;
    case 6:
      return -0.0;
    default:
      return v;
  }
}

/* Random set of n records in mode (0: a coarse grid, 1: clusters, 2: a
 * grid spoilt). */
static void
random_set (mset *s, int n, int mode, uint64_t seed)
{
  static const double grid_scores[] = { 0.3, 0.5, 0.5, 0.7, 0.9, 0.9,
    0.9000000001, 0.25
  };
  static const int32_t odd_classes[] = { 16777216, 16777217, -1,
    INT32_MIN, INT32_MAX, 0, 7
  };
  static const double steps[] = { 1.0, 0.5, 0.25 };
  static const int n_classes[] = { 1, 3, 80 };
  const double step = steps[seed % 3];
  const int classes = n_classes[seed / 3 % 3];
  test_rng r;
  int i;

  test_rng_seed (&r, seed);
  mset_alloc (s, n);
  if (mode == 1) {
    /* objects of a 3840 x 2160 frame, each seen a few times */
    i = 0;
    while (i < n) {
      const double w = 8.0 + 120.0 * test_rng_unit (&r);
      const double h = 8.0 + 120.0 * test_rng_unit (&r);
      const double x = 3840.0 * test_rng_unit (&r);
      const double y = 2160.0 * test_rng_unit (&r);
      const int32_t c = test_rng_int (&r, 0, classes);
      const double sc = 0.3 + 0.65 * test_rng_unit (&r);
      const int copies = 1 + test_rng_int (&r, 0, 8);
      int k;

      for (k = 0; k < copies && i < n; k++, i++) {
        const double j = 12.0 * test_rng_unit (&r) - 6.0;
        const double cut = test_rng_int (&r, 0, 3) == 0 ?
            w * test_rng_unit (&r) : 0.0;

        put (s, i, x + j, y + 0.5 * j, x + w - cut + j, y + h - 0.25 * j,
            sc - 0.05 * test_rng_unit (&r), test_rng_int (&r, 0, 4) == 0 ?
            test_rng_int (&r, 0, classes) : c);
      }
    }
    return;
  }
  for (i = 0; i < n; i++) {
    const double x1 = test_rng_int (&r, 0, 24) * step;
    const double y1 = test_rng_int (&r, 0, 24) * step;
    const double w = (test_rng_int (&r, 0, 12) - (mode == 2 ? 1 : 0)) * step;
    const double h = test_rng_int (&r, 0, 12) * step;
    const double sc = test_rng_int (&r, 0, 3) == 0 ?
        test_rng_unit (&r) : grid_scores[test_rng_int (&r, 0, 8)];
    int32_t c = test_rng_int (&r, 0, classes);

    if (mode == 2 && test_rng_int (&r, 0, 6) == 0)
      c = odd_classes[test_rng_int (&r, 0, 7)];
    put (s, i, x1, y1, x1 + w, y1 + h, sc, c);
    if (mode == 2) {
      int k;

      for (k = 0; k < 4; k++)
        s->boxes[4 * i + k] = spoil (&r, s->boxes[4 * i + k]);
      s->scores[i] = spoil (&r, s->scores[i]);
    }
  }
}

/* Every parameter set on s, at the thresholds given. */
static void
check_all (const char *name, const mset *s, const double *thr, int n_thr)
{
  cnms_merge_params m;
  int p, k;

  for (p = 0; p < 24; p++)
    for (k = 0; k < n_thr; k++) {
      if (least && thr[k] != 0.0 && thr[k] != 0.5)
        continue;
      params_of (&m, p, thr[k]);
      check_set (name, s, &m);
    }
}

/* The hand-made sets. */
static void
edge_sets (void)
{
  static const double thr[] = { 0.0, 1.0 / 3.0, 0.5, 0.7, 1.0 };
  mset s;
  int i;

  /* pairs at the threshold: IoU 1/3 and IoS 1/2 exactly; IoU 1/2 and IoS
   * 1; the float32 IoU 6371423 / 9102033 that rounds to float32 (0.7) */
  mset_alloc (&s, 6);
  put (&s, 0, 0, 0, 10, 10, 0.9, 0);
  put (&s, 1, 5, 0, 15, 10, 0.8, 0);
  put (&s, 2, 100, 0, 110, 10, 0.9, 0);
  put (&s, 3, 100, 0, 110, 5, 0.8, 0);
  put (&s, 4, 0, 100, 9102033, 101, 0.9, 1);
  put (&s, 5, 0, 100, 6371423, 101, 0.8, 1);
  check_all ("at-threshold", &s, thr, 5);
  mset_free (&s);

  /* equal scores, equal boxes: ties broken by coordinates then index;
   * duplicates with equal and unequal scores */
  mset_alloc (&s, 10);
  put (&s, 0, 2, 0, 12, 10, 0.8, 0);
  put (&s, 1, 0, 0, 10, 10, 0.8, 0);
  put (&s, 2, 1, 0, 11, 10, 0.8, 0);
  put (&s, 3, 0, 0, 10, 10, 0.8, 0);
  put (&s, 4, 0, 0, 10, 10, 0.8, 1);
  put (&s, 5, 0, 0, 10, 10, 0.6, 0);
  put (&s, 6, 0, 0, 10, 10, 0.8, 0);
  put (&s, 7, 1, 1, 11, 11, 0.9, 0);
  put (&s, 8, 1, 1, 11, 11, 0.9, 0);
  put (&s, 9, 0, 0, 10, 10, 0.6, 0);
  check_all ("equal", &s, thr, 5);
  mset_free (&s);

  /* chains: each overlaps the next (IoU 0.43, IoS 0.6), not the one after */
  mset_alloc (&s, 8);
  for (i = 0; i < 8; i++)
    put (&s, i, 4.0 * i, 0, 4.0 * i + 10, 10, 0.9 - 0.05 * i, 0);
  check_all ("chain", &s, thr, 5);
  for (i = 0; i < 8; i++)
    s.scores[i] = 0.9 - 0.05 * (7 - i);
  check_all ("chain-rev", &s, thr, 5);
  mset_free (&s);

  /* SAHI's drops (sahi-rules.md d.3): greedy K, L, R; NMM's A ~ B ~ C */
  mset_alloc (&s, 6);
  put (&s, 0, 10, 0, 20, 10, 0.9, 0);
  put (&s, 1, 7, 0, 17, 10, 0.8, 0);
  put (&s, 2, 13, 0, 23, 10, 0.7, 0);
  put (&s, 3, 100, 0, 110, 10, 0.9, 1);
  put (&s, 4, 104, 0, 114, 10, 0.8, 1);
  put (&s, 5, 108, 0, 118, 10, 0.7, 1);
  check_all ("drops", &s, (const double[]) { 0.4, 0.5 }, 2);
  mset_free (&s);

  /* nested, zero-area and negative-area boxes, a point */
  mset_alloc (&s, 8);
  put (&s, 0, 0, 0, 100, 100, 0.5, 0);
  put (&s, 1, 10, 10, 20, 20, 0.9, 0);
  put (&s, 2, 40, 40, 60, 60, 0.7, 0);
  put (&s, 3, 50, 50, 50, 60, 0.8, 0);
  put (&s, 4, 30, 30, 20, 20, 0.6, 0);
  put (&s, 5, 5, 5, 5, 5, 0.95, 0);
  put (&s, 6, 12, 12, 18, 18, 0.9, 0);
  put (&s, 7, 0, 0, 100, 100, 0.5, 0);
  check_all ("nested", &s, thr, 5);
  mset_free (&s);

  /* values that are not finite, or not in float32's range, subnormals,
   * -0 against 0, scores tied in float32 only */
  mset_alloc (&s, 16);
  put (&s, 0, 0, 0, 10, 10, 0.9, 0);
  put (&s, 1, NAN, 0, 10, 10, 0.95, 0);
  put (&s, 2, 0, 0, INFINITY, 10, 0.95, 0);
  put (&s, 3, 1, 1, 11, 11, NAN, 0);
  put (&s, 4, 1, 1, 11, 11, INFINITY, 0);
  put (&s, 5, 1, 1, 11, 11, -INFINITY, 0);
  put (&s, 6, 0, 0, 1e300, 10, 0.85, 0);
  put (&s, 7, -1e39, 0, 10, 10, 0.85, 0);
  put (&s, 8, 1e-40, 0, 10, 10, 0.9, 0);
  put (&s, 9, -0.0, 0, 10, 10, 0.9, 0);
  put (&s, 10, 0, -0.0, 10, 10, 0.9000000001, 0);
  put (&s, 11, 0.0000000001, 0, 10, 10, 0.9000000001, 0);
  put (&s, 12, 2, 0, 12, 10, 1e300, 0);
  put (&s, 13, 2, 0, 12, 10, -1e300, 0);
  put (&s, 14, -INFINITY, -INFINITY, INFINITY, INFINITY, 0.5, 0);
  put (&s, 15, 3, 0, 13, 10, 0.9, 0);
  check_all ("nonfinite", &s, thr, 5);
  mset_free (&s);

  /* many classes, ids that collide in float32, negative ids */
  mset_alloc (&s, 12);
  put (&s, 0, 0, 0, 10, 10, 0.9, 16777216);
  put (&s, 1, 1, 0, 11, 10, 0.8, 16777217);
  put (&s, 2, 2, 0, 12, 10, 0.7, 16777218);
  put (&s, 3, 0, 0, 10, 10, 0.85, -1);
  put (&s, 4, 1, 0, 11, 10, 0.75, INT32_MIN);
  put (&s, 5, 1, 0, 11, 10, 0.95, INT32_MAX);
  put (&s, 6, 0, 0, 10, 10, 0.6, INT32_MAX - 1);
  put (&s, 7, 0, 0, 10, 10, 0.6, 0);
  put (&s, 8, 0, 0, 10, 10, 0.6, 1);
  put (&s, 9, 0, 0, 10, 10, 0.9, 2);
  put (&s, 10, 0, 0, 10, 10, 0.9, 1);
  put (&s, 11, 0, 0, 10, 10, 0.9, 0);
  check_all ("classes", &s, thr, 5);
  mset_free (&s);

  /* NMM's shortcut: several records of the top score, duplicates of the
   * top among them, disjoint records */
  mset_alloc (&s, 9);
  put (&s, 0, 50, 50, 60, 60, 0.7, 0);
  put (&s, 1, 0, 0, 10, 10, 0.9, 0);
  put (&s, 2, 0, 0, 10, 10, 0.9, 0);
  put (&s, 3, 5, 5, 15, 15, 0.9, 0);
  put (&s, 4, 0, 0, 10, 10, 0.8, 0);
  put (&s, 5, 200, 200, 210, 210, 0.9, 0);
  put (&s, 6, 0, 0, 10, 10, 0.9, 0);
  put (&s, 7, 7, 7, 7, 17, 0.5, 0);
  put (&s, 8, 300, 300, 310, 310, 0.1, 0);
  check_all ("shortcut", &s, thr, 5);
  mset_free (&s);

  /* one record, two identical records */
  mset_alloc (&s, 2);
  put (&s, 0, 0, 0, 10, 10, 0.5, 3);
  put (&s, 1, 0, 0, 10, 10, 0.5, 3);
  check_all ("identical", &s, thr, 5);
  s.n = 1;
  check_all ("one", &s, thr, 5);
  mset_free (&s);
}

/* ------------------------------------------------------------------ tiles */

#define T_FRAME 1280
#define T_MODEL 640
#define T_CLASSES 5
#define T_ANCHORS 2100
#define T_OBJECTS 40
#define T_MAX_SLICES 16

/* A YOLOv8 tiles tensor [B, 4 + C, N]: each slice's view of T_OBJECTS
 * objects of a T_FRAME square frame, each seen by a few anchors (jittered,
 * scored by how much of it the slice sees), the rest of the anchors
 * scoring 0. */
static float *
tiles_tensor (const cnms_slice *sl, int b, uint64_t seed)
{
  const size_t per = (size_t) (4 + T_CLASSES) * T_ANCHORS;
  float *f = calloc (per * (size_t) b, sizeof (float));
  double obj[T_OBJECTS][6];
  test_rng r;
  int i, k, a;

  if (f == NULL)
    exit (1);
  test_rng_seed (&r, seed);
  for (k = 0; k < T_OBJECTS; k++) {
    obj[k][0] = test_rng_float (&r, 0, T_FRAME - 40);
    obj[k][1] = test_rng_float (&r, 0, T_FRAME - 40);
    obj[k][2] = obj[k][0] + test_rng_float (&r, 12, 140);
    obj[k][3] = obj[k][1] + test_rng_float (&r, 12, 140);
    obj[k][4] = test_rng_float (&r, 0.4f, 0.95f);
    obj[k][5] = test_rng_int (&r, 0, T_CLASSES);
  }
  for (i = 0; i < b; i++) {
    float *t = f + per * (size_t) i;
    const double g = (double) T_MODEL / (sl[i].x2 - sl[i].x1);

    a = 0;
    for (k = 0; k < T_OBJECTS && a < T_ANCHORS - 4; k++) {
      const double x1 = fmax (obj[k][0], sl[i].x1) - sl[i].x1;
      const double y1 = fmax (obj[k][1], sl[i].y1) - sl[i].y1;
      const double x2 = fmin (obj[k][2], sl[i].x2) - sl[i].x1;
      const double y2 = fmin (obj[k][3], sl[i].y2) - sl[i].y1;
      const double seen = (x2 - x1) * (y2 - y1)
          / ((obj[k][2] - obj[k][0]) * (obj[k][3] - obj[k][1]));
      int c;

      if (!(x2 > x1 && y2 > y1))
        continue;
      for (c = 0; c < 3; c++, a++) {
        const double j = test_rng_float (&r, -3, 3);

        t[(size_t) 0 * T_ANCHORS + a] = (float) (g * ((x1 + x2) / 2 + j));
        t[(size_t) 1 * T_ANCHORS + a] = (float) (g * ((y1 + y2) / 2 - j));
        t[(size_t) 2 * T_ANCHORS + a] = (float) (g * (x2 - x1 + j));
        t[(size_t) 3 * T_ANCHORS + a] = (float) (g * (y2 - y1));
        t[(size_t) (4 + (int) obj[k][5]) * T_ANCHORS + a] =
            (float) (obj[k][4] * (0.5 + 0.5 * seen)
            - 0.02 * test_rng_unit (&r));
      }
    }
  }
  return f;
}

/* cnms_detect_tiles on a tiles tensor: the CPU context against the CUDA
 * context with the host tensor and with a device copy. */
static void
tiles_sets (void)
{
  cnms_slice sl[T_MAX_SLICES];
  cnms_params p;
  cnms_merge_params m;
  cnms_tensor t, dt;
  const cnms_det *d;
  cnms_det *ref;
  float *f;
  void *dev = NULL;
  int b, pi, k;
  char what[256], why[160];

  b = cnms_slice_grid (T_FRAME, T_FRAME, T_MODEL, T_MODEL, 0.2, 0.2, sl,
      T_MAX_SLICES - 1);
  if (b < 1 || b > T_MAX_SLICES - 1) {
    printf ("FAIL: the tiles' grid has %d slices\n", b);
    mismatches++;
    return;
  }
  sl[b].x1 = sl[b].y1 = 0;
  sl[b].x2 = sl[b].y2 = T_FRAME;
  b++;
  f = tiles_tensor (sl, b, 4242u);
  memset (&t, 0, sizeof t);
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = b;
  t.dims[1] = 4 + T_CLASSES;
  t.dims[2] = T_ANCHORS;
  t.data = f;
  t.size = sizeof (float) * (size_t) b * (4 + T_CLASSES) * T_ANCHORS;
  dt = t;
  if (cudaMalloc (&dev, t.size) != cudaSuccess
      || cudaMemcpy (dev, f, t.size, cudaMemcpyHostToDevice) != cudaSuccess
      || cudaDeviceSynchronize () != cudaSuccess) {
    printf ("FAIL: cannot copy the tiles tensor to the device\n");
    mismatches++;
    free (f);
    return;
  }
  dt.data = dev;
  dt.on_device = 1;
  cnms_params_init (&p);
  p.model_width = p.model_height = T_MODEL;

  for (pi = 0; pi < 24; pi++) {
    int n_ref = 0, n = 0;
    cnms_status st;

    /* CNMS_GPU_CASES = 0: SAHI's default and the consistent NMM only */
    if (least && pi != 0 && pi != 13)
      continue;

    params_of (&m, pi, 0.5);
    describe (what, sizeof what, "tiles", &m, b);
    sets++;
    st = cnms_detect_tiles (ctx_cpu, &t, NULL, sl, b, T_FRAME, T_FRAME,
        CNMS_LAYOUT_YOLOV8, &p, &m, &d, &n_ref);
    if (st != CNMS_OK || n_ref < 2) {
      snprintf (why, sizeof why, "the CPU's call: %s, %d records (%s)",
          cnms_status_str (st), n_ref, cnms_ctx_error (ctx_cpu));
      mismatch (what, why, NULL, 0, NULL, 0);
      continue;
    }
    ref = malloc (sizeof *ref * (size_t) n_ref);
    if (ref == NULL)
      exit (1);
    memcpy (ref, d, sizeof *ref * (size_t) n_ref);
    for (k = 0; k < 2; k++) {
      st = cnms_detect_tiles (ctx_gpu, k ? &dt : &t, NULL, sl, b, T_FRAME,
          T_FRAME, CNMS_LAYOUT_YOLOV8, &p, &m, &d, &n);
      if (st != CNMS_OK) {
        snprintf (why, sizeof why, "the CUDA call (%s tensor) failed: %s",
            k ? "device" : "host", cnms_ctx_error (ctx_gpu));
        mismatch (what, why, ref, n_ref, NULL, 0);
      } else if (n != n_ref || memcmp (d, ref, sizeof *ref * (size_t) n)) {
        snprintf (why, sizeof why, "the CUDA call (%s tensor) differs",
            k ? "device" : "host");
        mismatch (what, why, ref, n_ref, d, n);
      }
    }
    free (ref);
  }
  cudaFree (dev);
  free (f);
}

int
main (void)
{
  static const int sizes[] = { 0, 1, 2, 17, 300, 1000, MERGE_MAX,
    MERGE_MAX + 1
  };
  const long cases = gpu_env_int ("CNMS_GPU_CASES", 2);
  const int small = cases <= 1 || gpu_env_int ("CNMS_GPU_SANITIZER", 0);
  const int per = small ? 1 : (int) cases;
  int si, p, c;

  gpu_require_device ("cuda-merge");
  {
    int dev = 0, optin = 0;

    if (cudaGetDevice (&dev) != cudaSuccess
        || cudaDeviceGetAttribute (&optin,
            cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
      printf ("FAIL: cannot query the device\n");
      return 1;
    }
    smem_optin = (size_t) optin;
  }
  ctx_cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  ctx_gpu = gpu_ctx_new (CNMS_BACKEND_CUDA);
  cnms_ctx_set_timing (ctx_gpu, 1);
  least = cases == 0;

  edge_sets ();
  for (si = 0; si < (int) (sizeof sizes / sizeof sizes[0]); si++) {
    const int n = sizes[si];

    /* small runs: up to 300 records, and the host above the limit */
    if (small && n > 300 && n <= MERGE_MAX)
      continue;
    for (p = 0; p < 24; p++)
      for (c = 0; c < per; c++) {
        const uint64_t seed = (uint64_t) (1000 * si + 10 * p + c + 1);
        const int mode = (p + c + si) % 3;
        cnms_merge_params m;
        mset s;
        char name[32];

        params_of (&m, p, thresholds[(p / 3 + c + si) % N_THR]);
        random_set (&s, n, mode, seed);
        snprintf (name, sizeof name, "random-%s-%llu", mode == 0 ? "grid" :
            mode == 1 ? "clusters" : "spoilt", (unsigned long long) seed);
        check_set (name, &s, &m);
        mset_free (&s);
      }
  }
  tiles_sets ();

  printf ("merge parity: %ld sets, %ld mismatches (%ld kernel runs)\n",
      sets, mismatches, gpu_runs);
  cnms_ctx_free (ctx_cpu);
  cnms_ctx_free (ctx_gpu);
  return mismatches == 0 ? 0 : 1;
}
