/* cnms_detect: the CUDA backend against the CPU reference on seeded cases
 * (yolov5 / yolov8 / end2end, float32 / float16, random, ties, clusters,
 * NaN/Inf, max_candidates overflow, max_detections), then on the seeded
 * YOLOv8-OBB family (float32 / float16, class-aware and agnostic,
 * per-class controls, letterbox and stretches of equal and unequal gains,
 * angles anywhere and at multiples of pi/2, tied scores and identical
 * boxes, NaN/Inf and w or h not above 0), every third OBB case also from
 * a device tensor. Every record must be bit-identical (memcmp, the angle
 * included), and so must the candidate count and the report.
 * CNMS_GPU_SEED, CNMS_GPU_CASES and CNMS_GPU_OBB_CASES override the seed
 * and the case counts. With the argument "large" the CUDA context takes
 * the large path for every count (meson runs both). */
#include <stdlib.h>

#include "gpu_common.h"

int
main (int argc, char **argv)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 20261129);
  const int n_cases = (int) gpu_env_int ("CNMS_GPU_CASES", 800);
  const int n_obb = (int) gpu_env_int ("CNMS_GPU_OBB_CASES", 400);
  cnms_ctx *cpu, *cuda;
  const char *path;
  int idx, bad = 0, overflow = 0, kept = 0, empty = 0;
  int obb_bad = 0, obb_kept = 0, obb_empty = 0, obb_device = 0;

  gpu_require_device ("cuda-parity-detect");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_cuda_ctx (argc, argv, &path);

  for (idx = 0; idx < n_cases; idx++) {
    gpu_det_case dc;
    gpu_result a, b;

    gpu_det_case_make (&dc, seed, idx);
    gpu_run_detect (cpu, &dc, &a);
    gpu_run_detect (cuda, &dc, &b);
    if (gpu_parity_mismatch (&a, &b, idx, &bad))
      gpu_det_case_print (stdout, &dc);
    if (a.n_candidates > dc.p.max_candidates)
      overflow++;
    if (a.n == 0)
      empty++;
    kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_det_case_free (&dc);
  }

  for (idx = 0; idx < n_obb; idx++) {
    gpu_det_case dc;
    gpu_result a, b;

    gpu_det_case_make_obb (&dc, seed, idx);
    gpu_run_detect (cpu, &dc, &a);
    gpu_run_detect (cuda, &dc, &b);
    if (gpu_parity_mismatch (&a, &b, idx, &obb_bad))
      gpu_det_case_print (stdout, &dc);
    if (idx % 3 == 0) {
      gpu_result d;

      gpu_run_detect_device (cuda, &dc, &d);
      if (gpu_parity_mismatch (&a, &d, idx, &obb_bad)) {
        printf ("  (the tensor in device memory)\n");
        gpu_det_case_print (stdout, &dc);
      }
      obb_device++;
      gpu_result_free (&d);
    }
    if (a.n == 0)
      obb_empty++;
    obb_kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_det_case_free (&dc);
  }
  printf ("cuda-parity-detect: %d cases, %d mismatches (%d over "
      "max_candidates, %d empty, %d records kept in all); %d OBB cases "
      "(%d also from device memory), %d mismatches (%d empty, %d records "
      "kept in all), seed %llu, %s\n", n_cases, bad, overflow, empty, kept,
      n_obb, obb_device, obb_bad, obb_empty, obb_kept,
      (unsigned long long) seed, path);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  return bad || obb_bad ? 1 : 0;
}
