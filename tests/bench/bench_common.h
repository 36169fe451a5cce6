/* Shared helpers of the C benchmarks: clocks, order statistics, a tiny
 * JSON-lines-in-an-array writer, and loading the .npy inputs. */
#ifndef CNMS_BENCH_COMMON_H
#define CNMS_BENCH_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_npy.h"

/* Monotonic clock, microseconds. */
double bench_now_us (void);

/* Sorts v[0..n) and returns its median and minimum; NaN when n == 0. */
void bench_stats (double *v, int n, double *median, double *min);

/* One JSON array of flat objects, one object per line. */
typedef struct {
  FILE *f;
  int n_records;
  int n_fields;
} bench_json;

int bench_json_open (bench_json *j, const char *path);
void bench_json_begin (bench_json *j);
void bench_json_str (bench_json *j, const char *key, const char *value);
/* NaN and infinities are written as null. */
void bench_json_num (bench_json *j, const char *key, double value);
/* bench_stats of v[0..n), written as PREFIX_med_us and PREFIX_min_us
 * (prefix NULL: med_us and min_us). */
void bench_json_stats (bench_json *j, const char *prefix, double *v, int n,
    double *median, double *min);
void bench_json_end (bench_json *j);
int bench_json_close (bench_json *j);

/* Reads dir/name into a; exits with a message when it fails or when the
 * dtype is not want. */
void bench_load_npy (const char *dir, const char *name, cnms_npy_dtype want,
    cnms_npy *a);

/* Writes a .npy [rows, cols] of dtype to dir/name; exits on failure. */
void bench_save_npy (const char *dir, const char *name, cnms_npy_dtype dtype,
    const void *data, int rows, int cols);

/* Backends to run from a --backend value ("cuda", "cpu" or "all").
 * Fills want[CNMS_BACKEND_CPU] / want[CNMS_BACKEND_CUDA]; a CUDA backend
 * without a device is dropped from "all" with a note, and is fatal (exit 1)
 * when asked for by name. */
void bench_pick_backends (const char *arg, int want[2]);

const char *bench_backend_name (cnms_backend b);

/* Options shared by bench-nms and bench-frame (after DATA_DIR OUT_JSON):
 * --backend all|cuda|cpu, --iters N, --warmup N, --cpu-budget S and
 * --save-dir DIR (where keep lists / detections go). Fills o from argv,
 * over the defaults the caller put in; returns -1 on a bad command line. */
typedef struct {
  const char *backend;
  int iters, warmup;
  double cpu_budget_s;
  const char *save_dir;
  /* --min-time: CPU cases go on past iters until this much time is timed
   * (at most BENCH_MAX_SAMPLES iterations), so that a median spans a
   * window of the machine's load, not a burst */
  double cpu_min_s;
} bench_opts;

#define BENCH_MAX_SAMPLES 200000

/* The number of samples the wall / GPU arrays of a case need. */
int bench_max_samples (const bench_opts *o);

int bench_parse_opts (int argc, char **argv, bench_opts *o);

/* Creates a context with timing on; exits on failure. */
cnms_ctx *bench_ctx_new (cnms_backend b);
/* LaneATT's test config (gen_data.py's params.json "laneatt"): score 0.5,
 * at most 4 lanes, a 640x360 model, a 1280x720 frame, no letterbox,
 * distance 50. */
void bench_laneatt_params (cnms_params *p);
/* The float32 npy array a as a host tensor (no copy). */
cnms_tensor bench_host_tensor (const cnms_npy *a);

#endif /* CNMS_BENCH_COMMON_H */
