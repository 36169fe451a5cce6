/* Shared helpers of the gpu suite: skipping without a device, seeded case
 * generators for cnms_detect and cnms_nms, and running one case on a
 * context into an owned copy of its result. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "rng.h"

#define GPU_SKIP 77

/* Exits 77 (meson's skip) when no CUDA device is usable. */
void gpu_require_device (const char *test_name);

/* Reads an int from the environment, or def. */
long gpu_env_int (const char *name, long def);
/* A CUDA context on the path named by argv[1]: "large" makes every count
 * take the engine's large-count paths (grid rank sort, resolve from global
 * memory) through the library's test-only option; anything else is the
 * default. *path describes it, for the summary line. */
cnms_ctx *gpu_cuda_ctx (int argc, char **argv, const char **path);

/* One cnms_detect case. */
typedef struct {
  uint64_t seed;
  const char *mode;
  cnms_layout layout;
  cnms_dtype dtype;
  int n, c;
  cnms_params p;
  cnms_class_params *classes;   /* p.classes, when the case has them */
  void *data;
  size_t size;
} gpu_det_case;

/* Builds case number idx of the seeded family (layout, dtype and data
 * mode cycle with idx; sizes and params come from the seed). */
void gpu_det_case_make (gpu_det_case *dc, uint64_t seed, int idx);
/* A YOLOv8 [1, 84, 8400] frame with tied scores and clustered boxes. */
void gpu_det_case_yolov8_frame (gpu_det_case *dc, uint64_t seed);
/* Case number idx of the seeded YOLOv8-OBB family: float32 / float16
 * alternate, and the data mode (random, ties, clusters, nasty, overflow,
 * axes: angles at multiples of pi/2) and the map (letterbox, unequal or
 * equal stretch) cycle with idx; sizes, params and per-class controls
 * come from the seed. */
void gpu_det_case_make_obb (gpu_det_case *dc, uint64_t seed, int idx);
/* A YOLOv8-OBB [1, 20, 21504] frame (15 classes, model 1024, frame
 * 1920x1080 letterboxed) with tied scores and duplicate boxes. */
void gpu_det_case_obb_frame (gpu_det_case *dc, uint64_t seed);
void gpu_det_case_tensor (const gpu_det_case *dc, cnms_tensor *t);
void gpu_det_case_free (gpu_det_case *dc);
void gpu_det_case_print (FILE *f, const gpu_det_case *dc);
/* 1 when dc caps some class (per-class or every class): the caps' path. */
int gpu_det_case_capped (const gpu_det_case *dc);

/* One cnms_nms case. */
typedef struct {
  uint64_t seed;
  const char *mode;
  int n;
  float *boxes, *scores;
  int32_t *classes;             /* NULL: no classes given */
  int rotated;                  /* boxes are [n][5] cx cy w h angle:
                                 * cnms_nms_rotated */
  float iou;
  int agnostic;
  int max_det;
} gpu_nms_case;

void gpu_nms_case_make (gpu_nms_case *nc, uint64_t seed, int idx);
/* Case number idx of the seeded cnms_nms_rotated family: random, ties
 * (identical boxes), clusters, nasty (non-finite values, w or h not
 * above 0, tiny and huge sizes), integer, axes (angles at multiples of
 * pi/2 and their neighbours); N up to 8192. */
void gpu_nms_case_make_rotated (gpu_nms_case *nc, uint64_t seed, int idx);
void gpu_nms_case_free (gpu_nms_case *nc);
void gpu_nms_case_print (FILE *f, const gpu_nms_case *nc);

/* A result copied out of the context. */
typedef struct {
  cnms_status st;
  int n;                        /* records or indices */
  int n_candidates;             /* report.candidates (detect) */
  cnms_report report;           /* cnms_ctx_report (detect) */
  cnms_det *dets;
  int64_t *keep;
  char error[256];
} gpu_result;

/* cnms_detect of t (layout, p) on ctx into r: status, message, records
 * and report copied (no records after a failure). */
void gpu_run_tensor (cnms_ctx *ctx, const cnms_tensor *t, cnms_layout layout,
    const cnms_params *p, gpu_result *r);
/* gpu_run_tensor of the case's tensor, layout and params. */
void gpu_run_detect (cnms_ctx *ctx, const gpu_det_case *dc, gpu_result *r);
/* gpu_run_detect with the tensor in device memory (on_device). */
void gpu_run_detect_device (cnms_ctx *ctx, const gpu_det_case *dc,
    gpu_result *r);
/* cnms_nms, or cnms_nms_rotated for a rotated case. */
void gpu_run_nms (cnms_ctx *ctx, const gpu_nms_case *nc, gpu_result *r);
void gpu_result_free (gpu_result *r);
/* 1 when a and b are bit-identical; else 0 with a one-line reason. */
int gpu_result_equal (const gpu_result *a, const gpu_result *b, char *why,
    size_t why_size);

/* The parity verdict of case idx, a from the CPU backend, b from CUDA:
 * a failure of a or any difference counts in *bad, and the first 10 print
 * a MISMATCH line; returns 1 when it printed one (the caller then prints
 * the case). */
int gpu_parity_mismatch (const gpu_result *a, const gpu_result *b, int idx,
    int *bad);

/* One lane case: LaneATT-like proposals [n][5 + s] (logits, start_y,
 * start_x, length, s x offsets in a 640 x 360 model), clustered so that
 * lanes near each other overlap, with ties, NaN/Inf values, start rows
 * outside [0, s - 1] and lengths past the last row. */
typedef struct {
  uint64_t seed;
  int s, n;
  float *props;                 /* [n][5 + s] */
  float *scores;                /* [n]: the lane scores of cnms_nms_lanes */
  float distance;
  int max_det;                  /* cnms_nms_lanes: <= 0 none */
} gpu_lane_case;

/* Case idx of the seeded lane family: s cycles 72, 2, 3, 10; n up to
 * 1000. */
void gpu_lane_case_make (gpu_lane_case *lc, uint64_t seed, int idx);
/* The same with n proposals (n > 0; the other draws unchanged). */
void gpu_lane_case_make_n (gpu_lane_case *lc, uint64_t seed, int idx,
    int n);
void gpu_lane_case_free (gpu_lane_case *lc);
void gpu_lane_case_print (FILE *f, const gpu_lane_case *lc);
/* cnms_nms_lanes of the case into r (keep). */
void gpu_run_nms_lanes (cnms_ctx *ctx, const gpu_lane_case *lc,
    gpu_result *r);
/* cnms_detect (layout laneatt, p with the case's lane_distance) of the
 * case's proposals as a laneatt tensor [1, n, 5 + s] (dtype; on_device:
 * from device memory) into r, and the lane points of its payload
 * (cnms_ctx_payload: n records x s x 2 floats, record k's at 2 s k;
 * malloc) into *pts. A payload that is not n lanes of s points fails
 * r (CNMS_ERR_INVALID_ARG, the reason in its error). */
void gpu_run_detect_lanes (cnms_ctx *ctx, const gpu_lane_case *lc,
    cnms_dtype dtype, int on_device, const cnms_params *p, gpu_result *r,
    float **pts);

/* Failed CHECKs so far. */
extern int gpu_failures;

/* Prints FAIL and the message and counts a failure when cond is false. */
#define GPU_CHECK(cond, ...) do {                                           \
    if (!(cond)) {                                                          \
      printf ("FAIL: " __VA_ARGS__);                                        \
      printf ("\n");                                                        \
      gpu_failures++;                                                       \
    }                                                                       \
  } while (0)

/* Opens a context or exits with a failure. */
cnms_ctx *gpu_ctx_new (cnms_backend backend);

#endif /* GPU_COMMON_H */
