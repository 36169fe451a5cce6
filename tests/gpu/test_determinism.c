/* Determinism and steady-state allocation of the CUDA backend:
 * - one YOLOv8 frame (84 x 8400, tied scores, duplicate boxes) decoded
 *   CNMS_GPU_REPEAT (1000) times gives the same bytes every time, equal
 *   to the CPU backend's;
 * - one YOLOv8-OBB frame (20 x 21504, tied scores, identical oriented
 *   boxes) likewise;
 * - one plain NMS case (N = 32768, clusters) likewise, and one
 *   cnms_nms_rotated case (N = 8192, identical boxes with equal scores);
 * - one lane frame (LaneATT-like proposals [1, n >= 500, 77], float16 in
 *   device memory) through cnms_detect (laneatt) likewise, its points too,
 *   and cnms_nms_lanes on the same proposals;
 * - after the first call of a shape, cnms_ctx_alloc_count stays constant,
 *   also across a smaller input and back. */
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

/* The frame dc (name) repeat times on cuda. */
static void
repeat_detect (cnms_ctx *cpu, cnms_ctx *cuda, const char *name,
    gpu_det_case *dc_in, int repeat)
{
  gpu_det_case dc = *dc_in;
  gpu_result ref, first, r;
  uint64_t allocs;
  int i, diffs = 0;
  char why[512];

  gpu_run_detect (cpu, &dc, &ref);
  gpu_run_detect (cuda, &dc, &first);
  GPU_CHECK (first.st == CNMS_OK, "%s: %s", name, first.error);
  GPU_CHECK (gpu_result_equal (&ref, &first, why, sizeof why),
      "%s differs from the CPU backend: %s", name, why);
  allocs = cnms_ctx_alloc_count (cuda);
  for (i = 1; i < repeat; i++) {
    gpu_run_detect (cuda, &dc, &r);
    if (!gpu_result_equal (&first, &r, why, sizeof why) && diffs++ < 3)
      printf ("run %d differs: %s\n", i, why);
    gpu_result_free (&r);
  }
  GPU_CHECK (diffs == 0, "%s: %d of %d runs differ", name, diffs, repeat);
  GPU_CHECK (cnms_ctx_alloc_count (cuda) == allocs,
      "%s: alloc_count went from %llu to %llu over %d frames", name,
      (unsigned long long) allocs,
      (unsigned long long) cnms_ctx_alloc_count (cuda), repeat);
  printf ("%s: %d runs identical (%d detections, %d candidates), "
      "allocations %llu\n", name, repeat - diffs, first.n,
      first.n_candidates, (unsigned long long) allocs);
  gpu_result_free (&ref);
  gpu_result_free (&first);
  gpu_det_case_free (&dc);
}

/* The plain NMS case nc (name) repeat times on cuda, the smaller case
 * small once half-way. */
static void
repeat_nms (cnms_ctx *cpu, cnms_ctx *cuda, const char *name,
    gpu_nms_case *nc_in, gpu_nms_case *small_in, int repeat)
{
  gpu_nms_case nc = *nc_in, small = *small_in;
  gpu_result ref, first, r;
  uint64_t allocs;
  int i, diffs = 0;
  char why[512];

  gpu_run_nms (cpu, &nc, &ref);
  gpu_run_nms (cuda, &nc, &first);
  GPU_CHECK (first.st == CNMS_OK, "%s: %s", name, first.error);
  GPU_CHECK (gpu_result_equal (&ref, &first, why, sizeof why),
      "%s differs from the CPU backend: %s", name, why);
  allocs = cnms_ctx_alloc_count (cuda);
  for (i = 1; i < repeat; i++) {
    if (i == repeat / 2) {
      /* a smaller input in between: buffers only grow, nothing new */
      gpu_run_nms (cuda, &small, &r);
      gpu_result_free (&r);
    }
    gpu_run_nms (cuda, &nc, &r);
    if (!gpu_result_equal (&first, &r, why, sizeof why) && diffs++ < 3)
      printf ("run %d differs: %s\n", i, why);
    gpu_result_free (&r);
  }
  GPU_CHECK (diffs == 0, "%s: %d of %d runs differ", name, diffs, repeat);
  GPU_CHECK (cnms_ctx_alloc_count (cuda) == allocs,
      "%s: alloc_count went from %llu to %llu", name,
      (unsigned long long) allocs,
      (unsigned long long) cnms_ctx_alloc_count (cuda));
  printf ("%s: %d runs identical (N %d, %d kept), allocations %llu\n",
      name, repeat - diffs, nc.n, first.n, (unsigned long long) allocs);
  gpu_result_free (&ref);
  gpu_result_free (&first);
  gpu_nms_case_free (&nc);
  gpu_nms_case_free (&small);
}

/* The first case of the seeded lane family with S = 72 and at least 500
 * proposals, repeat times through cnms_detect (laneatt; float16, device
 * memory: decode, engine and the kept rows' gather) and cnms_nms_lanes. */
static void
repeat_lanes (cnms_ctx *cpu, cnms_ctx *cuda, int repeat)
{
  gpu_lane_case lc;
  gpu_result ref, first, r;
  float *pref = NULL, *pfirst = NULL, *pr = NULL;
  cnms_params p;
  uint64_t allocs;
  int i, idx, diffs = 0;
  char why[512];

  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.frame_width = 1280;
  p.frame_height = 720;
  p.score_threshold = 0.3f;
  for (idx = 0;; idx += 4) {
    if (idx >= 4000) {
      GPU_CHECK (0, "detect-lanes: no lane case of n >= 500 keeps 2 lanes");
      return;
    }
    gpu_lane_case_make (&lc, 81, idx);
    lc.distance = 30.0f;
    if (lc.s == 72 && lc.n >= 500) {
      gpu_run_detect_lanes (cpu, &lc, CNMS_DTYPE_FLOAT16, 0, &p, &ref,
          &pref);
      if (ref.st == CNMS_OK && ref.n > 1)
        break;
      gpu_result_free (&ref);
      free (pref);
    }
    gpu_lane_case_free (&lc);
  }
  gpu_run_detect_lanes (cuda, &lc, CNMS_DTYPE_FLOAT16, 1, &p, &first,
      &pfirst);
  GPU_CHECK (first.st == CNMS_OK, "detect-lanes: %s", first.error);
  GPU_CHECK (gpu_result_equal (&ref, &first, why, sizeof why),
      "detect-lanes differs from the CPU backend: %s", why);
  GPU_CHECK (first.n == ref.n && memcmp (pref, pfirst, (size_t) ref.n
          * 72 * 2 * sizeof (float)) == 0,
      "detect-lanes: the points differ from the CPU backend's");
  allocs = cnms_ctx_alloc_count (cuda);
  for (i = 1; i < repeat; i++) {
    gpu_run_detect_lanes (cuda, &lc, CNMS_DTYPE_FLOAT16, 1, &p, &r, &pr);
    if ((!gpu_result_equal (&first, &r, why, sizeof why)
            || memcmp (pfirst, pr, (size_t) first.n * 72 * 2
                * sizeof (float)) != 0) && diffs++ < 3)
      printf ("run %d differs: %s\n", i, why);
    gpu_result_free (&r);
    free (pr);
    pr = NULL;
  }
  GPU_CHECK (diffs == 0, "detect-lanes: %d of %d runs differ", diffs,
      repeat);
  GPU_CHECK (cnms_ctx_alloc_count (cuda) == allocs,
      "detect-lanes: alloc_count went from %llu to %llu", (unsigned long
          long) allocs, (unsigned long long) cnms_ctx_alloc_count (cuda));
  printf ("detect-lanes: %d runs identical (case %d: n %d, %d lanes kept, "
      "%d candidates), allocations %llu\n", repeat - diffs, idx, lc.n,
      first.n, first.n_candidates, (unsigned long long) allocs);
  gpu_result_free (&ref);
  gpu_result_free (&first);
  free (pref);
  free (pfirst);

  gpu_run_nms_lanes (cpu, &lc, &ref);
  gpu_run_nms_lanes (cuda, &lc, &first);
  GPU_CHECK (first.st == CNMS_OK, "nms-lanes: %s", first.error);
  GPU_CHECK (gpu_result_equal (&ref, &first, why, sizeof why),
      "nms-lanes differs from the CPU backend: %s", why);
  diffs = 0;
  for (i = 1; i < repeat; i++) {
    gpu_run_nms_lanes (cuda, &lc, &r);
    if (!gpu_result_equal (&first, &r, why, sizeof why) && diffs++ < 3)
      printf ("run %d differs: %s\n", i, why);
    gpu_result_free (&r);
  }
  GPU_CHECK (diffs == 0, "nms-lanes: %d of %d runs differ", diffs, repeat);
  printf ("nms-lanes: %d runs identical (n %d, %d kept)\n", repeat - diffs,
      lc.n, first.n);
  gpu_result_free (&ref);
  gpu_result_free (&first);
  gpu_lane_case_free (&lc);
}

int
main (void)
{
  const int repeat = (int) gpu_env_int ("CNMS_GPU_REPEAT", 1000);
  cnms_ctx *cpu, *cuda;
  gpu_det_case dc;
  gpu_nms_case nc, small;
  size_t host = 0, pinned = 0, device = 0;

  gpu_require_device ("cuda-determinism");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_ctx_new (CNMS_BACKEND_CUDA);
  GPU_CHECK (cnms_ctx_alloc_count (cuda) == 0,
      "a new context allocated %llu buffers",
      (unsigned long long) cnms_ctx_alloc_count (cuda));

  gpu_det_case_yolov8_frame (&dc, 77);
  repeat_detect (cpu, cuda, "detect", &dc, repeat);
  gpu_det_case_obb_frame (&dc, 79);
  repeat_detect (cpu, cuda, "detect-obb", &dc, repeat);
  gpu_nms_case_make (&nc, 78, 7);       /* idx 7: N = 32768, clusters */
  gpu_nms_case_make (&small, 78, 0);
  repeat_nms (cpu, cuda, "nms", &nc, &small, repeat);
  /* idx 7: N = 8192, identical boxes with equal scores */
  gpu_nms_case_make_rotated (&nc, 80, 7);
  gpu_nms_case_make_rotated (&small, 80, 0);
  repeat_nms (cpu, cuda, "nms-rotated", &nc, &small, repeat);
  repeat_lanes (cpu, cuda, repeat);

  cnms_ctx_memory (cuda, &host, &pinned, &device);
  GPU_CHECK (pinned > 0 && device > 0, "memory not accounted: pinned %zu "
      "device %zu", pinned, device);
  printf ("memory held: %zu host, %zu pinned, %zu device bytes\n", host,
      pinned, device);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  printf ("cuda-determinism: %s\n", gpu_failures ? "FAILED" : "ok");
  return gpu_failures ? 1 : 0;
}
