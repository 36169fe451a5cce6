/* cnms_nms: the CUDA backend against the CPU reference on seeded cases
 * (N up to 32768, ties, clusters, duplicates, integer boxes, NaN/Inf,
 * without classes, 80 classes, 3 classes, arbitrary int32 ids, agnostic,
 * max_detections); then cnms_nms_rotated on its seeded family (N up to
 * 8192, identical boxes with equal scores, clusters, integer boxes,
 * angles near and at multiples of pi/2 and large ones, non-finite values
 * and scores, w or h not above 0, tiny and huge sizes, the same class
 * kinds); then cnms_nms_lanes on the seeded lane family (S = 72, 2, 3,
 * 10, N up to 1000, clusters, ties, duplicates, NaN/Inf, start rows out
 * of range). Keep lists must be identical.
 * CNMS_GPU_SEED, CNMS_GPU_CASES, CNMS_GPU_ROTATED_CASES and
 * CNMS_GPU_LANE_CASES override the seed and the case counts. With the argument "large" the CUDA context
 * takes the large path for every count (meson runs both). */
#include <stdlib.h>

#include "gpu_common.h"

/* Runs cases 0 .. n_cases - 1 of a family on both backends; returns the
 * mismatches. */
static int
run_family (cnms_ctx *cpu, cnms_ctx *cuda, uint64_t seed, int n_cases,
    void (*make) (gpu_nms_case *, uint64_t, int), int *big, long *kept)
{
  int idx, bad = 0;

  for (idx = 0; idx < n_cases; idx++) {
    gpu_nms_case nc;
    gpu_result a, b;

    make (&nc, seed, idx);
    gpu_run_nms (cpu, &nc, &a);
    gpu_run_nms (cuda, &nc, &b);
    if (gpu_parity_mismatch (&a, &b, idx, &bad))
      gpu_nms_case_print (stdout, &nc);
    if (nc.n >= (nc.rotated ? 8192 : 16384))
      (*big)++;
    *kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_nms_case_free (&nc);
  }
  return bad;
}

/* The lane family on both backends; returns the mismatches. */
static int
run_lanes (cnms_ctx *cpu, cnms_ctx *cuda, uint64_t seed, int n_cases,
    int *big, long *kept)
{
  int idx, bad = 0;

  for (idx = 0; idx < n_cases; idx++) {
    gpu_lane_case lc;
    gpu_result a, b;

    gpu_lane_case_make (&lc, seed, idx);
    gpu_run_nms_lanes (cpu, &lc, &a);
    gpu_run_nms_lanes (cuda, &lc, &b);
    if (gpu_parity_mismatch (&a, &b, idx, &bad))
      gpu_lane_case_print (stdout, &lc);
    if (lc.n >= 500)
      (*big)++;
    *kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_lane_case_free (&lc);
  }
  return bad;
}

int
main (int argc, char **argv)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 20261129);
  const int n_cases = (int) gpu_env_int ("CNMS_GPU_CASES", 400);
  const int n_rotated = (int) gpu_env_int ("CNMS_GPU_ROTATED_CASES", 300);
  const int n_lanes = (int) gpu_env_int ("CNMS_GPU_LANE_CASES", 300);
  cnms_ctx *cpu, *cuda;
  const char *path;
  int bad, rot_bad, lane_bad, big = 0, rot_big = 0, lane_big = 0;
  long kept = 0, rot_kept = 0, lane_kept = 0;

  gpu_require_device ("cuda-parity-nms");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_cuda_ctx (argc, argv, &path);

  bad = run_family (cpu, cuda, seed, n_cases, gpu_nms_case_make, &big,
      &kept);
  rot_bad = run_family (cpu, cuda, seed, n_rotated,
      gpu_nms_case_make_rotated, &rot_big, &rot_kept);
  lane_bad = run_lanes (cpu, cuda, seed, n_lanes, &lane_big, &lane_kept);
  printf ("cuda-parity-nms: %d cases, %d mismatches (%d with N >= 16384, "
      "%ld indices kept in all); %d rotated cases, %d mismatches (%d with "
      "N = 8192, %ld indices kept in all), seed %llu, %s\n", n_cases, bad,
      big, kept, n_rotated, rot_bad, rot_big, rot_kept,
      (unsigned long long) seed, path);
  printf ("cuda-parity-nms: %d lane cases, %d mismatches (%d with N >= "
      "500, %ld indices kept in all), seed %llu, %s\n", n_lanes, lane_bad,
      lane_big, lane_kept, (unsigned long long) seed, path);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  return bad || rot_bad || lane_bad ? 1 : 0;
}
