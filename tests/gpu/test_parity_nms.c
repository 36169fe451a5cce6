/* cnms_nms: the CUDA backend against the CPU reference on seeded cases
 * (N up to 32768, ties, clusters, duplicates, integer boxes, NaN/Inf,
 * without classes, 80 classes, 3 classes, arbitrary int32 ids, agnostic,
 * max_detections). Keep lists must be identical.
 * CNMS_GPU_SEED and CNMS_GPU_CASES override the seed and the case count.
 * With the argument "large" the CUDA context takes the large path for
 * every count (meson runs both). */
#include <stdlib.h>

#include "gpu_common.h"

int
main (int argc, char **argv)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 20261129);
  const int n_cases = (int) gpu_env_int ("CNMS_GPU_CASES", 400);
  cnms_ctx *cpu, *cuda;
  const char *path;
  int idx, bad = 0, big = 0;
  long kept = 0;

  gpu_require_device ("cuda-parity-nms");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_cuda_ctx (argc, argv, &path);

  for (idx = 0; idx < n_cases; idx++) {
    gpu_nms_case nc;
    gpu_result a, b;

    gpu_nms_case_make (&nc, seed, idx);
    gpu_run_nms (cpu, &nc, &a);
    gpu_run_nms (cuda, &nc, &b);
    if (gpu_parity_mismatch (&a, &b, idx, &bad))
      gpu_nms_case_print (stdout, &nc);
    if (nc.n >= 16384)
      big++;
    kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_nms_case_free (&nc);
  }
  printf ("cuda-parity-nms: %d cases, %d mismatches (%d with N >= 16384, "
      "%ld indices kept in all), seed %llu, %s\n", n_cases, bad, big, kept,
      (unsigned long long) seed, path);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  return bad ? 1 : 0;
}
