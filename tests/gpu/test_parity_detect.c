/* cnms_detect: the CUDA backend against the CPU reference on seeded cases
 * (yolov5 / yolov8 / end2end, float32 / float16, random, ties, clusters,
 * NaN/Inf, max_candidates overflow, max_detections), then on the seeded
 * YOLOv8-OBB family (float32 / float16, class-aware and agnostic,
 * per-class controls, letterbox and stretches of equal and unequal gains,
 * angles anywhere and at multiples of pi/2, tied scores and identical
 * boxes, NaN/Inf and w or h not above 0), every third OBB case also from
 * a device tensor; then cnms_detect of laneatt tensors of the seeded
 * lane family (float32 / float16, host and device memory, score
 * thresholds, max_candidates and max_detections caps, letterbox and
 * stretch) and of 12 larger ones (1100 to 6000 proposals, every other
 * one with every proposal a candidate), the lane points of the payloads
 * compared too (memcmp). Every record must be bit-identical (memcmp, the
 * angle included), and so must the candidate count and the report (its
 * lanes without points included). CNMS_GPU_SEED, CNMS_GPU_CASES,
 * CNMS_GPU_OBB_CASES, CNMS_GPU_LANE_CASES and CNMS_GPU_LANE_LARGE override
 * the seed and the case counts. With the argument "large" the CUDA
 * context takes the large path for every count (meson runs both). */
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

/* Lane tensors past the family's sizes (run_lane_case's force_n) */
#define LANE_LARGE_CASES 12

/* Lane parity (cnms_detect, layout laneatt) of lane case idx: float32
 * and float16, from host memory and (every other case) from device
 * memory; returns the comparisons made. */
static int
run_lane_case (cnms_ctx *cpu, cnms_ctx *cuda, uint64_t seed, int idx,
    int force_n, int *bad, int *kept, int *empty, int *most, int *no_points)
{
  static const float thr[] = { 0.0f, 0.3f, 0.6f, 0.95f };
  static const int cands[] = { 1000000, 1000000, 50, 7 };
  static const int dets[] = { 100, 1000, 3, 1 };
  static const int frames[][2] = { { 1280, 720 }, { 640, 360 },
    { 1920, 1200 }, { 500, 700 } };
  gpu_lane_case lc;
  cnms_params p;
  test_rng r;
  int runs = 0;

  gpu_lane_case_make_n (&lc, seed, idx, force_n);
  test_rng_seed (&r, seed ^ ((uint64_t) idx * 2654435761u + 5u));
  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.frame_width = frames[test_rng_int (&r, 0, 4)][0];
  p.frame_height = frames[test_rng_int (&r, 0, 4)][1];
  p.letterbox = test_rng_int (&r, 0, 2);
  p.score_threshold = thr[test_rng_int (&r, 0, 4)];
  p.max_candidates = cands[test_rng_int (&r, 0, 4)];
  p.max_detections = dets[test_rng_int (&r, 0, 4)];
  if (force_n > 0 && idx % 2 == 1) {
    /* every proposal with rows a candidate */
    p.score_threshold = 0.0f;
    p.max_candidates = 1000000;
  }
  for (int h = 0; h < 2; h++) {
    const cnms_dtype dt = h ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
    gpu_result a, b;
    float *pa = NULL, *pb = NULL;

    gpu_run_detect_lanes (cpu, &lc, dt, 0, &p, &a, &pa);
    for (int dev = 0; dev < 1 + (idx % 2 == 0); dev++) {
      const int before = *bad;

      gpu_run_detect_lanes (cuda, &lc, dt, dev, &p, &b, &pb);
      runs++;
      if (gpu_parity_mismatch (&a, &b, idx, bad)) {
        printf ("  (%s, %s memory)\n", h ? "float16" : "float32",
            dev ? "device" : "host");
        gpu_lane_case_print (stdout, &lc);
      } else if (*bad == before && a.st == CNMS_OK && a.n > 0
          && memcmp (pa, pb, (size_t) a.n * (size_t) lc.s * 2
              * sizeof (float)) != 0) {
        if ((*bad)++ < 10) {
          printf ("MISMATCH case %d: lane points differ (%s, %s memory)\n",
              idx, h ? "float16" : "float32", dev ? "device" : "host");
          gpu_lane_case_print (stdout, &lc);
        }
      }
      gpu_result_free (&b);
      free (pb);
      pb = NULL;
    }
    if (a.n == 0)
      (*empty)++;
    *kept += a.n;
    *no_points += a.report.lanes_without_points;
    if (a.n_candidates > *most)
      *most = a.n_candidates;
    gpu_result_free (&a);
    free (pa);
  }
  gpu_lane_case_free (&lc);
  return runs;
}

int
main (int argc, char **argv)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 20261129);
  const int n_cases = (int) gpu_env_int ("CNMS_GPU_CASES", 800);
  const int n_obb = (int) gpu_env_int ("CNMS_GPU_OBB_CASES", 400);
  const int n_lanes = (int) gpu_env_int ("CNMS_GPU_LANE_CASES", 200);
  const int n_large = (int) gpu_env_int ("CNMS_GPU_LANE_LARGE",
      LANE_LARGE_CASES);
  cnms_ctx *cpu, *cuda;
  const char *path;
  int idx, bad = 0, overflow = 0, kept = 0, empty = 0;
  int obb_bad = 0, obb_kept = 0, obb_empty = 0, obb_device = 0;
  int lane_bad = 0, lane_kept = 0, lane_empty = 0, lane_runs = 0;
  int lane_most = 0, lane_no_points = 0, capped = 0, obb_capped = 0;
  static const int lane_large[6] = { 1100, 2048, 4096, 4097, 6000, 1500 };

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
    capped += gpu_det_case_capped (&dc);
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
    obb_capped += gpu_det_case_capped (&dc);
    obb_kept += a.n;
    gpu_result_free (&a);
    gpu_result_free (&b);
    gpu_det_case_free (&dc);
  }
  for (idx = 0; idx < n_lanes; idx++)
    lane_runs += run_lane_case (cpu, cuda, seed, idx, 0, &lane_bad,
        &lane_kept, &lane_empty, &lane_most, &lane_no_points);
  /* tensors past the family's 1000 proposals: more candidates than the
   * block-local front holds, and more proposals than it takes */
  for (idx = 0; idx < n_large; idx++)
    lane_runs += run_lane_case (cpu, cuda, seed, n_lanes + idx,
        lane_large[idx % 6], &lane_bad, &lane_kept, &lane_empty,
        &lane_most, &lane_no_points);
  printf ("cuda-parity-detect: %d lane cases and %d of 1100-6000 "
      "proposals (%d comparisons: float32 / float16, host / device), %d "
      "mismatches (%d empty, %d records kept in all, %d lanes without "
      "points, at most %d candidates), seed %llu, %s\n", n_lanes, n_large,
      lane_runs, lane_bad, lane_empty, lane_kept, lane_no_points, lane_most,
      (unsigned long long) seed, path);
  printf ("cuda-parity-detect: %d cases, %d mismatches (%d over "
      "max_candidates, %d empty, %d with class caps, %d records kept in "
      "all); %d OBB cases (%d also from device memory), %d mismatches (%d "
      "empty, %d with class caps, %d records kept in all), seed %llu, "
      "%s\n", n_cases, bad, overflow, empty, capped, kept, n_obb,
      obb_device, obb_bad, obb_empty, obb_capped, obb_kept,
      (unsigned long long) seed, path);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  return bad || obb_bad || lane_bad ? 1 : 0;
}
