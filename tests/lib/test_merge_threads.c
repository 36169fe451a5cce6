/* cnms_merge keeps no state outside the call: two threads, each on its own
 * context, merge different sets of records under different parameters
 * (every rule, metric, class mode and rules) round after round, each
 * result every time identical (every byte of every record) to the serial
 * result of the same set and parameters on a third context. With the
 * argument "cuda" the two threads' contexts are CUDA contexts (the merge
 * kernel) against the serial CPU results; 77 without a device. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cudanms.h"
#include "cudanms_static.h"
#include "rng.h"

#define N_SETS 8
#define ROUNDS 60

typedef struct {
  double *boxes, *scores;
  int32_t *classes;
  int n;
  cnms_merge_params m;
  cnms_det *want;               /* the serial result */
  int n_want;
} merge_case;

static merge_case cases[N_SETS];
static cnms_backend backend = CNMS_BACKEND_CPU;

/* Set i: records on a coarse grid (ties, duplicates, pairs at the
 * thresholds), a few classes, a few NaN; parameters i of the 24, at one of
 * four thresholds. */
static void
make_case (merge_case *c, int i)
{
  static const double thr[] = { 0.0, 1.0 / 3.0, 0.5, 0.7 };
  test_rng r;
  int k;

  test_rng_seed (&r, 77u + (uint64_t) i);
  c->n = 100 + 60 * i;
  c->boxes = malloc (sizeof (double) * 4 * (size_t) c->n);
  c->scores = malloc (sizeof (double) * (size_t) c->n);
  c->classes = malloc (sizeof (int32_t) * (size_t) c->n);
  if (c->boxes == NULL || c->scores == NULL || c->classes == NULL)
    exit (1);
  for (k = 0; k < c->n; k++) {
    const double x = test_rng_int (&r, 0, 40), y = test_rng_int (&r, 0, 40);

    c->boxes[4 * k] = x;
    c->boxes[4 * k + 1] = y;
    c->boxes[4 * k + 2] = x + test_rng_int (&r, 0, 12);
    c->boxes[4 * k + 3] = y + test_rng_int (&r, 0, 12);
    c->scores[k] = test_rng_int (&r, 0, 4) == 0 ? 0.5 :
        test_rng_unit (&r);
    c->classes[k] = test_rng_int (&r, 0, 3);
    if (test_rng_int (&r, 0, 50) == 0)
      c->boxes[4 * k + test_rng_int (&r, 0, 4)] = NAN;
  }
  cnms_merge_params_init (&c->m);
  c->m.rule = (cnms_merge_rule) (i % 3);
  c->m.metric = (cnms_match_metric) (i / 3 % 2);
  c->m.class_agnostic = i % 2;
  c->m.rules = (cnms_merge_rules) (i / 2 % 2);
  c->m.threshold = thr[i % 4];
}

typedef struct {
  int first;                    /* the thread's sets: first, first + 2, ... */
  long runs, bad;
  cnms_status st;
} worker;

static void *
work (void *arg)
{
  worker *w = arg;
  cnms_ctx *ctx = NULL;
  int round, i;

  w->st = cnms_ctx_new (backend, -1, &ctx);
  if (w->st != CNMS_OK)
    return NULL;
  /* on CUDA, the merge kernel (CNMS_TEST_CUDA_UNPROVEN) */
  cnms_ctx_test_option (ctx, CNMS_TEST_CUDA_UNPROVEN, 1);
  for (round = 0; round < ROUNDS; round++)
    for (i = w->first; i < N_SETS; i += 2) {
      /* the sets in a different order each round */
      const merge_case *c = &cases[(i + 2 * round) % N_SETS];
      const cnms_det *d = NULL;
      int n = 0;

      if (cnms_merge (ctx, c->boxes, c->scores, c->classes, c->n, &c->m, &d,
              &n) != CNMS_OK || n != c->n_want
          || memcmp (d, c->want, sizeof *d * (size_t) n) != 0)
        w->bad++;
      w->runs++;
    }
  cnms_ctx_free (ctx);
  return NULL;
}

int
main (int argc, char **argv)
{
  cnms_ctx *serial = NULL;
  pthread_t th[2];
  worker w[2];
  int i;

  if (argc > 1 && strcmp (argv[1], "cuda") == 0) {
    if (cnms_cuda_device_count () < 1) {
      printf ("merge threads: SKIP, no CUDA device\n");
      return 77;
    }
    backend = CNMS_BACKEND_CUDA;
  }
  CHECK (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &serial) == CNMS_OK);
  if (serial == NULL)
    return check_result ("merge threads");
  for (i = 0; i < N_SETS; i++) {
    merge_case *c = &cases[i];
    const cnms_det *d = NULL;

    make_case (c, i);
    CHECK (cnms_merge (serial, c->boxes, c->scores, c->classes, c->n, &c->m,
            &d, &c->n_want) == CNMS_OK);
    CHECK (c->n_want > 0);
    c->want = malloc (sizeof *c->want * (size_t) (c->n_want + 1));
    if (c->want == NULL)
      return 1;
    memcpy (c->want, d, sizeof *d * (size_t) c->n_want);
  }
  /* the thread of the even sets and the thread of the odd ones at once */
  for (i = 0; i < 2; i++) {
    memset (&w[i], 0, sizeof w[i]);
    w[i].first = i;
    CHECK (pthread_create (&th[i], NULL, work, &w[i]) == 0);
  }
  for (i = 0; i < 2; i++) {
    CHECK (pthread_join (th[i], NULL) == 0);
    CHECK_INT (w[i].st, CNMS_OK);
    CHECK_INT (w[i].runs, ROUNDS * N_SETS / 2);
    CHECK_INT (w[i].bad, 0);
  }
  printf ("merge threads (%s): 2 threads x %d merges, %ld differ from the "
      "serial results\n", backend == CNMS_BACKEND_CUDA ? "cuda" : "cpu",
      ROUNDS * N_SETS / 2, w[0].bad + w[1].bad);
  for (i = 0; i < N_SETS; i++) {
    free (cases[i].boxes);
    free (cases[i].scores);
    free (cases[i].classes);
    free (cases[i].want);
  }
  cnms_ctx_free (serial);
  return check_result ("merge threads");
}
