/* cudanms: aids for the project's own programs that link the static
 * library (the tests, the benchmarks, the CLI, tensorinject).
 *
 * Not installed, not exported by the shared libcudanms, and no promise of
 * a stable interface (the way lz4 keeps its LZ4_STATIC_LINKING_ONLY part):
 * an application uses cudanms.h alone. */
#ifndef CUDANMS_STATIC_H
#define CUDANMS_STATIC_H

#include "cudanms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest width or height that cnms_parse_size accepts. */
#define CNMS_SIZE_MAX 65536

/* Parses a size "WxH" (or "WXH"): two decimal integers in
 * [1, CNMS_SIZE_MAX], nothing else. CNMS_ERR_INVALID_ARG when malformed
 * (width and height untouched). */
cnms_status cnms_parse_size (const char *s, int *width, int *height);

/* Maps a box given in model pixels by its centre and size (cx cy w h, as
 * a YOLOv5/v8 tensor gives it) to frame pixels out[4] = x1 y1 x2 y2, with
 * the very arithmetic cnms_detect applies to its candidates under p's
 * model size, frame size and letterbox (clipped to the frame). Other
 * fields of p are ignored. Returns 1 when the result is a non-empty box,
 * 0 when it is empty, an input is not finite, p or out is NULL or a size
 * in p is below 1x1 (out is then unspecified). */
int cnms_map_centre_box (const cnms_params *p, float cx, float cy, float w,
    float h, float out[4]);

/* n floats to IEEE halves, rounded to nearest even (numpy's astype). */
void cnms_floats_to_halves (const float *f, size_t n, uint16_t *h);
/* n IEEE halves to floats (exact: every half is a float). */
void cnms_halves_to_floats (const uint16_t *h, size_t n, float *f);

/* Corners of the oriented box (cx cy w h angle) into out[8] = x y of
 * c + u + v, c - u + v, c - u - v, c + u - v, where u = w/2 (cos angle,
 * sin angle) and v = h/2 (-sin angle, cos angle), with the sine and cosine
 * that the overlap test uses (docs/contracts.md, "Oriented boxes"). */
void cnms_obb_corners (float cx, float cy, float w, float h, float angle,
    float out[8]);

/* How many buffer allocations (host, pinned or device) the context made so
 * far. Stays constant in steady state: buffers only grow with the input. */
uint64_t cnms_ctx_alloc_count (const cnms_ctx *ctx);
/* Bytes currently held, per kind of memory. */
void cnms_ctx_memory (const cnms_ctx *ctx, size_t *host_bytes,
    size_t *pinned_bytes, size_t *device_bytes);

/* With timing on, the CUDA backend brackets the stream work of each
 * cnms_detect / cnms_nms call (upload to results) with CUDA events;
 * cnms_ctx_last_gpu_us() returns that GPU time in microseconds. Off by
 * default; -1 when off, on the CPU backend, or before a call. */
void cnms_ctx_set_timing (cnms_ctx *ctx, int on);
double cnms_ctx_last_gpu_us (const cnms_ctx *ctx);

/* Options of one context, for the tests that must reach a path the inputs
 * alone would not take; never read from the environment. A backend
 * ignores the options it does not have. */
enum {
  /* CUDA: every count takes the engine's large-count paths (the resolve
   * from global memory, every kept row read whole), none the mask cached
   * in shared memory */
  CNMS_TEST_FORCE_LARGE_PATH = 1,
  /* CPU: the SSE2 paths where the CPU has AVX too */
  CNMS_TEST_CPU_NO_AVX = 2,
  /* CUDA: the heads of a pose or seg detect run after it, never
   * enqueued behind its NMS */
  CNMS_TEST_NO_HEADS_AHEAD = 3
};
void cnms_ctx_test_option (cnms_ctx *ctx, int option, int value);

#ifdef __cplusplus
}
#endif
#endif /* CUDANMS_STATIC_H */
