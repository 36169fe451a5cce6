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

/* The records of the slices of a frame (res: their cnms_detect_batch
 * results, n_slices) mapped into the frame_width x frame_height frame as
 * cnms_detect_tiles maps them (docs/contracts.md, "Tiles"): in slice
 * pixels x1, y1 at least 0 and x2, y2 at most the frame's size, a record
 * without x1 < x2 and y1 < y2 dropped, then shifted by its slice's origin,
 * in double, in slice order. boxes [][4], scores and classes have room for
 * every record; returns how many were written. */
int cnms_tiles_records (const cnms_frame_result *res,
    const cnms_slice *slices, int n_slices, int frame_width,
    int frame_height, double *boxes, double *scores, int32_t *classes);

/* How many buffer allocations (host, pinned or device) the context made so
 * far. Stays constant in steady state: buffers only grow with the input. */
uint64_t cnms_ctx_alloc_count (const cnms_ctx *ctx);
/* The frames of the context's last cnms_detect_batch whose heads'
 * values (keypoints, masks) the backend made in the batch's own launches
 * and the results point into; the others' were made frame by frame and
 * copied. */
int cnms_ctx_batch_heads_made (const cnms_ctx *ctx);
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
  CNMS_TEST_NO_HEADS_AHEAD = 3,
  /* CUDA: a batch (cnms_detect_batch) makes no heads in its own
   * launches: each frame's keypoints or masks come from the heads call
   * after the batch, frame by frame */
  CNMS_TEST_NO_BATCH_HEADS = 4,
  /* every backend: cnms_merge (and cnms_detect_tiles's merge) runs on
   * the host, never the backend's own merge (the CUDA kernel) */
  CNMS_TEST_HOST_MERGE = 5,
  /* CUDA: the paths that no GPU run has proven yet take part (a batch's
   * masks in its own launches, LaneATT frames in the batch's launches,
   * the tiles' merge kernel); off by default, where a batch makes those
   * frames' masks frame by frame, runs LaneATT frames one by one and the
   * merge runs on the host (docs/gpu.md, "Paths not yet proven on a
   * GPU"). The gpu suite and the benches turn it on. */
  CNMS_TEST_CUDA_UNPROVEN = 6
};
void cnms_ctx_test_option (cnms_ctx *ctx, int option, int value);

/* The per-class lists: one parser and one rule for the element's
 * properties (class-score-thresholds, class-ious, class-max-detections,
 * classes, exclude-classes) and cudanms-tool's options
 * (--class-score-thresholds, --class-ious, --class-max-detections,
 * --keep-classes, --drop-classes); the rules are docs/contracts.md's
 * "Per-class lists". A list is "CLASS=VALUE,..." or "CLASS,...", blanks
 * around items, keys and values trimmed; CLASS is an id (decimal digits,
 * below CNMS_MAX_CLASS_PARAMS) or a label, looked up in the caller's
 * label file (cnms_class_labels). */
typedef enum {
  CNMS_CLASS_LIST_THRESHOLDS = 0,       /* CLASS=SCORE, SCORE in [0, 1] */
  CNMS_CLASS_LIST_IOUS,                 /* CLASS=IOU, IOU in [0, 1] */
  CNMS_CLASS_LIST_MAX_DETECTIONS,       /* CLASS=COUNT, an integer in
                                         * [0, 2^31 - 1]; 0: no cap */
  CNMS_CLASS_LIST_KEEP,                 /* CLASS: only the classes listed */
  CNMS_CLASS_LIST_DROP,                 /* CLASS: never these */
  CNMS_N_CLASS_LISTS
} cnms_class_list_kind;

typedef struct {
  int id;                       /* the class id; -1: a label not looked up */
  const char *key;              /* the class as written, in the list's keys */
  double value;                 /* the lists with values: the value */
} cnms_class_entry;

typedef struct {
  cnms_class_list_kind kind;
  int n;                        /* entries; 0: the list is unset */
  cnms_class_entry *entries;
  char *keys;                   /* the storage of the entries' keys */
} cnms_class_list;

/* The label file as the lists see it. find returns how many of its lines
 * hold the label name (0: none) and puts the class ids (line numbers from
 * 0) of the first two of them in lines[0], lines[1]. */
typedef struct {
  int (*find) (void *data, const char *name, int lines[2]);
  void *data;
  int n_labels;                 /* its lines, for messages */
} cnms_class_labels;

/* Parses text (NULL, empty or blank: an unset list, n = 0) into l (zeroed
 * or parsed before; its old entries are freed on success). A label is
 * left with id -1 until cnms_class_list_resolve. On failure l is
 * unchanged and err (size bytes) says why, in one line:
 * "'person' is not CLASS=VALUE", "the score threshold 2 of class '0' is
 * outside [0, 1]", "class '0' is given twice", ... */
cnms_status cnms_class_list_parse (cnms_class_list *l,
    cnms_class_list_kind kind, const char *text, char *err, size_t size);
/* Looks up every label of l in labels (NULL: no label file, where a label
 * is an error): a label missing from the file, or on two of its lines, is
 * an error naming it (and both lines), as is a class named twice once the
 * labels are ids ("'person' and '0' are both class 0"). */
cnms_status cnms_class_list_resolve (cnms_class_list *l,
    const cnms_class_labels *labels, char *err, size_t size);
void cnms_class_list_clear (cnms_class_list *l);
/* The largest class id that the lists (one per kind, in kind order)
 * name, plus one; 0 when none. */
int cnms_class_lists_size (const cnms_class_list lists[CNMS_N_CLASS_LISTS]);
/* c[0, n) from the lists and p's frame-wide score threshold and IoU:
 * each class's own threshold, IoU and cap; +infinity for a class the keep
 * list does not list or the drop list lists, whatever its own threshold.
 * Returns 1 when the keep list is set (cnms_params.other_classes_filtered:
 * ids at or past n are never candidates), else 0. */
int cnms_class_lists_fill (const cnms_class_list lists[CNMS_N_CLASS_LISTS],
    const cnms_params *p, cnms_class_params *c, int n);

#ifdef __cplusplus
}
#endif
#endif /* CUDANMS_STATIC_H */
