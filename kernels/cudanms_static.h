/* cudanms: aids for tests and benchmarks that link the static library.
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
