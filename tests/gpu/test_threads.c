/* Several CUDA contexts used at once: 4 threads, each with its own
 * context (and so its own stream), run the same cases in different
 * orders; every result must equal the one computed sequentially, which
 * must equal the CPU backend's.
 *
 * Then small and large contexts at once: 2 threads create a fresh context
 * for every call, one for a large plain NMS (the large path, its resolve
 * launched with the device's whole shared memory), one for a small one
 * (the fast path), CNMS_GPU_ROUNDS x 10 times (x 1 with
 * CNMS_GPU_SANITIZER=1; CNMS_GPU_MIXED_ROUNDS sets it). Process-wide CUDA
 * state set per context would let one break the other's launch (a context
 * lowering the resolve kernel's shared memory limit under another's launch
 * makes that launch fail with "invalid argument"); every call must succeed
 * and match the CPU backend.
 *
 * Under compute-sanitizer (CNMS_GPU_SANITIZER=1) the test is smaller, so
 * that racecheck finishes: CNMS_GPU_THREADS threads (default 2 there, 4
 * otherwise), only the cases of at most CNMS_GPU_MAX_N boxes or anchors
 * (default 9000 there, all otherwise), and the mixed phase's large case is
 * the first plain NMS case of the family above 2048 boxes within that
 * bound (it still takes the large-count paths: its mask does not fit in
 * shared memory). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

#define MAX_THREADS 4
#define N_DET 32
#define N_NMS 16
#define N_CASES (N_DET + N_NMS)
#define SEED 4242

static gpu_det_case det_cases[N_DET];
static gpu_nms_case nms_cases[N_NMS];
static gpu_result baseline[N_CASES];
/* cases of more boxes or anchors are skipped (sanitizer size) */
static int max_n;

typedef struct {
  int id;
  int rounds;
  int mismatches;
  int errors;
} worker;

static int
case_n (int c)
{
  return c < N_DET ? det_cases[c].n : nms_cases[c - N_DET].n;
}

static void
run_case (cnms_ctx *ctx, int c, gpu_result *r)
{
  if (c < N_DET)
    gpu_run_detect (ctx, &det_cases[c], r);
  else
    gpu_run_nms (ctx, &nms_cases[c - N_DET], r);
}

/* The mixed phase: worker id 0 runs mixed[0] (large), id 1 mixed[1]. */
static gpu_nms_case mixed[2];
static gpu_result mixed_ref[2];

static void *
work_mixed (void *arg)
{
  worker *w = arg;
  int round;
  char why[512];

  for (round = 0; round < w->rounds; round++) {
    cnms_ctx *ctx = NULL;
    gpu_result r;

    if (cnms_ctx_new (CNMS_BACKEND_CUDA, -1, &ctx) != CNMS_OK) {
      w->errors++;
      continue;
    }
    gpu_run_nms (ctx, &mixed[w->id], &r);
    if (!gpu_result_equal (&mixed_ref[w->id], &r, why, sizeof why)) {
      if (w->mismatches++ < 3)
        printf ("mixed thread %d round %d: %s\n", w->id, round, why);
    }
    gpu_result_free (&r);
    cnms_ctx_free (ctx);
  }
  return NULL;
}

/* Runs the mixed phase; returns its mismatches and errors. */
static int
run_mixed (cnms_ctx *cpu, int rounds)
{
  pthread_t th[2];
  worker w[2];
  int i, bad = 0;

  /* case 7 of the family is N = 32768, unless over max_n: then the first
   * case above 2048 within it; and a small one too */
  gpu_nms_case_make (&mixed[0], SEED, 7);
  for (i = 100; mixed[0].n <= 2048 || mixed[0].n > max_n; i++) {
    gpu_nms_case_free (&mixed[0]);
    gpu_nms_case_make (&mixed[0], SEED, i);
  }
  for (i = 0;; i++) {
    gpu_nms_case_make (&mixed[1], SEED, 100 + i);
    if (mixed[1].n <= 256)
      break;
    gpu_nms_case_free (&mixed[1]);
  }
  for (i = 0; i < 2; i++) {
    gpu_run_nms (cpu, &mixed[i], &mixed_ref[i]);
    memset (&w[i], 0, sizeof w[i]);
    w[i].id = i;
    w[i].rounds = rounds;
    if (pthread_create (&th[i], NULL, work_mixed, &w[i]) != 0) {
      printf ("FAIL: pthread_create\n");
      exit (1);
    }
  }
  for (i = 0; i < 2; i++) {
    pthread_join (th[i], NULL);
    bad += w[i].mismatches + w[i].errors;
  }
  printf ("cuda-threads: mixed sizes, fresh contexts: N %d and N %d x %d "
      "rounds at once, %d mismatches\n", mixed[0].n, mixed[1].n, rounds,
      bad);
  for (i = 0; i < 2; i++) {
    gpu_result_free (&mixed_ref[i]);
    gpu_nms_case_free (&mixed[i]);
  }
  return bad;
}

static void *
work (void *arg)
{
  worker *w = arg;
  cnms_ctx *ctx = NULL;
  int round, k;
  char why[512];

  if (cnms_ctx_new (CNMS_BACKEND_CUDA, -1, &ctx) != CNMS_OK) {
    w->errors++;
    return NULL;
  }
  for (round = 0; round < w->rounds; round++) {
    for (k = 0; k < N_CASES; k++) {
      /* each thread walks the cases from its own offset and direction */
      int c = (w->id * 11 + (w->id % 2 ? N_CASES - k : k)) % N_CASES;
      gpu_result r;
      if (case_n (c) > max_n)
        continue;
      run_case (ctx, c, &r);
      if (!gpu_result_equal (&baseline[c], &r, why, sizeof why)) {
        if (w->mismatches++ < 3)
          printf ("thread %d case %d: %s\n", w->id, c, why);
      }
      gpu_result_free (&r);
    }
  }
  cnms_ctx_free (ctx);
  return NULL;
}

int
main (void)
{
  const int rounds = (int) gpu_env_int ("CNMS_GPU_ROUNDS", 3);
  const int san = (int) gpu_env_int ("CNMS_GPU_SANITIZER", 0);
  const long threads_env = gpu_env_int ("CNMS_GPU_THREADS", san ? 2 : 4);
  const int n_threads = threads_env < 1 ? 1 : threads_env > MAX_THREADS ?
      MAX_THREADS : (int) threads_env;
  pthread_t th[MAX_THREADS];
  worker w[MAX_THREADS];
  cnms_ctx *cpu, *cuda;
  int i, bad = 0, n_run = 0;
  char why[512];

  max_n = (int) gpu_env_int ("CNMS_GPU_MAX_N", san ? 9000 : 1 << 30);
  gpu_require_device ("cuda-threads");
  for (i = 0; i < N_DET; i++)
    gpu_det_case_make (&det_cases[i], SEED, i);
  for (i = 0; i < N_NMS; i++)
    gpu_nms_case_make (&nms_cases[i], SEED, i);

  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_ctx_new (CNMS_BACKEND_CUDA);
  for (i = 0; i < N_CASES; i++) {
    gpu_result ref;
    if (case_n (i) > max_n) {
      memset (&baseline[i], 0, sizeof baseline[i]);
      continue;
    }
    n_run++;
    run_case (cpu, i, &ref);
    run_case (cuda, i, &baseline[i]);
    if (!gpu_result_equal (&ref, &baseline[i], why, sizeof why)) {
      printf ("sequential case %d differs from the CPU backend: %s\n", i,
          why);
      bad++;
    }
    gpu_result_free (&ref);
  }
  cnms_ctx_free (cuda);

  for (i = 0; i < n_threads; i++) {
    memset (&w[i], 0, sizeof w[i]);
    w[i].id = i;
    w[i].rounds = rounds;
    if (pthread_create (&th[i], NULL, work, &w[i]) != 0) {
      printf ("FAIL: pthread_create\n");
      return 1;
    }
  }
  for (i = 0; i < n_threads; i++) {
    pthread_join (th[i], NULL);
    bad += w[i].mismatches + w[i].errors;
  }

  /* the mixed phase's N = 32768 case is the slow one under
   * compute-sanitizer (racecheck): one round per CNMS_GPU_ROUNDS there */
  bad += run_mixed (cpu, (int) gpu_env_int ("CNMS_GPU_MIXED_ROUNDS",
          san ? rounds : rounds * 10));
  cnms_ctx_free (cpu);
  for (i = 0; i < N_CASES; i++)
    gpu_result_free (&baseline[i]);
  for (i = 0; i < N_DET; i++)
    gpu_det_case_free (&det_cases[i]);
  for (i = 0; i < N_NMS; i++)
    gpu_nms_case_free (&nms_cases[i]);
  printf ("cuda-threads: %d threads x %d rounds x %d cases (%d over %d "
      "boxes or anchors skipped), %d mismatches\n", n_threads, rounds, n_run,
      N_CASES - n_run, max_n, bad);
  return bad ? 1 : 0;
}
