/* Internal to the CUDA backend: the per-context state, the buffers it
 * grows, error mapping, and the C++ launchers of each pipeline stage (one
 * file per stage). Every launcher enqueues on the stream it is given and
 * returns the cudaError_t of the launch.
 *
 * The candidate count lives on the device, so the host never waits for
 * it: after decode, one cooperative kernel (cuda_engine.cu) sorts,
 * suppresses and writes out whatever the count is. */
#ifndef CNMS_CUDA_CUH
#define CNMS_CUDA_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cnms_internal.h"
#include "cnms_cuda.h"

/* Threads per block of the grid-wide element-wise kernels. */
#define CNMS_BLOCK 256
/* Boxes per NMS tile: one bit per box in a 64-bit mask word. */
#define CNMS_TILE 64
/* Header of every count-header buffer: one record wide, so that the
 * records behind it stay 32-byte aligned. */
#define CNMS_HEADER_BYTES 32

/* Header fields (int32 words). */
#define CNMS_HDR_COUNT 0        /* decode: candidates found (atomic) */
#define CNMS_HDR_MASKED 2       /* engine: blocks done with the bitmask
                                 * (atomic; zeroed again by the block
                                 * that resolves) */

/* Output header fields (int32 words). */
#define CNMS_OUT_KEPT 0         /* kept records behind the header */
#define CNMS_OUT_CANDIDATES 1   /* candidates found before the cap */
#define CNMS_OUT_NONFINITE 2    /* the decode's row counts (cnms_report) */
#define CNMS_OUT_INVALID 3
#define CNMS_OUT_FRACTIONAL 4
#define CNMS_OUT_FIRST_INVALID 5        /* float bits of the first value */
#define CNMS_OUT_FIRST_FRACTIONAL 6

/* The decode's row counts on the device (d_report, int32 words): added to
 * by the decode, copied into the output header and zeroed by the engine.
 * A first value is kept as a 64-bit key (cnms_report_first_key) at an
 * 8-byte aligned word pair, the largest key being the first row. */
#define CNMS_REP_NONFINITE 0
#define CNMS_REP_INVALID 1
#define CNMS_REP_FRACTIONAL 2
#define CNMS_REP_FIRST_INVALID 4
#define CNMS_REP_FIRST_FRACTIONAL 6
#define CNMS_REPORT_BYTES 32

/* a / b rounded up, for a >= 0, b > 0; no overflow near INT_MAX. */
static inline __host__ __device__ int
cnms_ceil_div (int a, int b)
{
  return a / b + (a % b != 0);
}

/* A device or pinned buffer owned by a context; it only ever grows.
 * Pinned memory is mapped: dev is its address in kernels (zero-copy). */
typedef struct {
  void *p;
  size_t cap;                   /* bytes */
  void *dev;                    /* pinned: the device address of p */
} cnms_cuda_buf;

/* A batch's masks made in its launches (cuda_heads_batch.cu): the
 * frames' jobs, their totals and places, the batch's logits and bytes. */
typedef struct {
  cnms_cuda_buf d_jobs;         /* keep_max jobs a frame */
  cnms_cuda_buf d_sums;         /* [the batch's totals | each frame's] */
  cnms_cuda_buf h_sums;         /* mapped pinned: the same, for the host */
  cnms_cuda_buf h_table;        /* mapped pinned: keep_max cnms_payload a
                                 * frame, each record's rectangle and
                                 * offset as the front end's table */
  cnms_cuda_buf d_logits;       /* the windows' logits, frame after frame */
  cnms_cuda_buf h_masks;        /* mapped pinned: the masks' bytes, frame
                                 * after frame (each at a 16-byte
                                 * boundary) */
  size_t want_bytes, want_logits;       /* the totals of the last batch
                                 * over its room: the room is a quarter
                                 * more */
  int last_jobs, last_win, last_pix;    /* the last batch's jobs, largest
                                 * window and rectangle: the next grids */
  int keep_max;                 /* the batch enqueued: its records a frame
                                 * at most, */
  bool made;                    /* and whether its masks were enqueued */
} cnms_cuda_seg_batch;

/* The buffers of cnms_detect_batch (cuda_batch.cu): frame f's part of
 * each is f strides in. */
typedef struct {
  cnms_cuda_buf d_cand;         /* [header | cnms_det x N] a frame */
  cnms_cuda_buf d_report;       /* the decode's row counts a frame */
  cnms_cuda_buf d_keys, d_vals, d_order, d_boxes, d_cls, d_mask, d_rows;
  cnms_cuda_buf d_grid;         /* the pruned mask's grid a frame */
  cnms_cuda_buf d_bars;         /* the engine's barriers: 2 words a frame */
  cnms_cuda_buf d_kept;         /* with caps: the engine's kept_dev a frame */
  cnms_cuda_buf d_caps;         /* and the caps' table a frame */
  cnms_cuda_buf h_kp;           /* mapped pinned: the keypoints a frame */
  cnms_cuda_buf d_lane_rows;    /* lanes: the candidates' rows as floats
                                 * and the engine's kept_dev a frame */
  cnms_cuda_buf h_lane_rows;    /* mapped pinned: a device lane tensor's
                                 * kept rows a frame */
  cnms_cuda_buf h_lane_pts;     /* pinned: the kept lanes' points and a
                                 * row of floats a frame */
  cnms_cuda_buf d_in;           /* [arguments | host tensors] uploaded */
  cnms_cuda_buf h_stage;        /* pinned: their staging */
  cnms_cuda_buf h_out;          /* mapped pinned: [header | kept records] a
                                 * frame */
  bool dirty;                   /* the count headers, row counts, grid
                                 * states and barriers must be zeroed (new
                                 * buffers, or after a failed call) */
  int last_count;               /* the most candidates of a frame of the
                                 * last batch (-1: none yet) */
  size_t z_cand, z_report, z_grid;      /* the strides that the zeroed */
  int z_frames;                 /* frames' states were zeroed at, and */
  bool z_grids;                 /* whether their grids were */
  size_t occ_smem;              /* the launch last sized, its geometry, */
  int occ_geom;
  int occ_per_sm;               /* and its blocks a multiprocessor */
  cnms_cuda_seg_batch seg;      /* the masks (cuda_heads_batch.cu) */
} cnms_cuda_batch;

typedef struct {
  int device;
  cudaStream_t stream;          /* where the work goes: own, or the caller's */
  cudaStream_t own_stream;      /* made at creation, destroyed with the context */
  size_t smem_budget;           /* dynamic shared memory an engine launch may
                                 * use: the opt-in maximum less its static arrays */
  int sms;                      /* multiprocessors: engine grid sizes */
  bool hdr_dirty;               /* the count header must be zeroed before
                                 * the next decode (new or after a failure);
                                 * else the last engine zeroed it */
  int last_count;               /* candidates of the last detect (-1: none
                                 * yet): what the next launch's cached
                                 * resolve is sized for */
  size_t occ_smem;              /* the engine launch last sized, and */
  int occ_geom;                 /* and its geometry (CNMS_GEOM_*) */
  int occ_per_sm;               /* how many of its blocks fit per SM */
  int force_large;              /* CNMS_TEST_FORCE_LARGE_PATH: the engine's
                                 * limits below make every count take the
                                 * large-count paths */
  cudaEvent_t ev_start, ev_stop;  /* GPU timing, made on first use */
  bool events;

  cnms_cuda_buf d_in;           /* uploaded tensor / nms input arrays */
  cnms_cuda_buf d_cand;         /* [header | cnms_det x N] decode output */
  cnms_cuda_buf d_report;       /* the decode's row counts (CNMS_REP_*) */
  cnms_cuda_buf d_rules;        /* per-class thresholds: thr[n] | iou[n] */
  cnms_cuda_buf h_rules;        /* pinned staging of their upload */
  float *rules_now;             /* what d_rules holds (host copy, malloc) */
  size_t rules_bytes;           /* bytes of it; 0: none yet */
  cnms_cuda_buf d_keys;         /* compact sort key of each candidate slot */
  cnms_cuda_buf d_vals;         /* sort value of each slot: record position or input index */
  cnms_cuda_buf d_order;        /* sort values in sorted order */
  cnms_cuda_buf d_boxes;        /* cap sorted boxes: float4 each (the box, or
                                 * an oriented box's hull), then for oriented
                                 * boxes their cnms_obb */
  cnms_cuda_buf d_cls;          /* int32 x cap, sorted */
  cnms_cuda_buf d_mask;         /* uint64 x cap x ceil(cap / 64) */
  cnms_cuda_buf d_rows;         /* cap x (count, CNMS_ROW_LIST words, bits,
                                 * the next tile's word) */
  cnms_cuda_buf d_grid;         /* the pruned mask's grid (cnms_grid_bytes):
                                 * its state words must be zero before an
                                 * engine runs (zeroed with the count
                                 * header) */
  cnms_cuda_buf h_stage;        /* pinned upload staging */
  cnms_cuda_buf d_lane_rows;    /* lanes: candidates' rows as floats */
  cnms_cuda_buf h_lane_rows;    /* pinned: a device lane tensor's rows */
  cnms_cuda_buf h_lane_pts;     /* pinned: kept lanes' points, and one row
                                 * of floats (float16 rows converted) */
  cnms_cuda_buf h_out;          /* [header | records or int64 indices]:
                                 * pinned, written by the engine itself */
  /* the heads (cuda_heads.cu) */
  cnms_cuda_buf d_protos;       /* host prototypes, uploaded */
  cnms_cuda_buf d_hjobs;        /* the masks' jobs (and coefficients) */
  cnms_cuda_buf d_logits;       /* the masks' windows of logits */
  cnms_cuda_buf d_masks;        /* the masks' bytes */
  cnms_cuda_buf h_protos;       /* pinned: host prototypes' staging */
  cnms_cuda_buf h_hjobs;        /* pinned: the masks' jobs, or the kept
                                 * anchors of a pose kernel (mapped) */
  cnms_cuda_buf h_heads;        /* pinned: keypoints, or the masks' bytes */
  /* the heads enqueued behind the last detect's NMS (cuda_heads.cu) */
  int ahead_kind;               /* CNMS_HEAD_* when they completed, else 0 */
  int ahead_n, ahead_win, ahead_pix;    /* seg: the last frame's kept
                                 * records, largest window and rectangle:
                                 * the next launch's grids */
  size_t ahead_bytes, ahead_logits;     /* seg: the room to reserve for
                                 * the masks' bytes and logits */
  int no_ahead;                 /* CNMS_TEST_NO_HEADS_AHEAD */
  int no_batch_heads;           /* CNMS_TEST_NO_BATCH_HEADS */
  int unproven;                 /* CNMS_TEST_CUDA_UNPROVEN */
  int pdl;                      /* compute capability 9.0 on: the heads
                                 * behind the engine are launched
                                 * programmatically dependent (scheduled
                                 * while its resolve runs) */
  cnms_cuda_buf d_kept;         /* the engine's kept_dev for the heads and
                                 * the caps */
  cnms_cuda_buf d_caps;         /* the caps' count table (cuda_caps.cu) */
  cnms_cuda_batch batch;        /* cnms_detect_batch's (cuda_batch.cu) */
  /* cnms_merge (cuda_merge.cu) */
  size_t merge_smem;            /* dynamic shared memory its block may use
                                 * (the device's opt-in maximum) */
  cnms_cuda_buf d_merge;        /* the records, uploaded */
  cnms_cuda_buf h_merge_stage;  /* pinned: their staging */
  cnms_cuda_buf h_merge_out;    /* mapped pinned: [header | results] */
} cnms_cuda_priv;

/* Makes dev current for the calling thread for one scope and restores
 * the previous current device after it, so that the library never leaves
 * the application's thread on another device. */
struct cnms_device_scope {
  int prev;
  bool changed;
  cudaError_t err;
  explicit cnms_device_scope (int dev) : prev (-1), changed (false),
      err (cudaSuccess)
  {
    err = cudaGetDevice (&prev);
    if (err == cudaSuccess && prev != dev) {
      err = cudaSetDevice (dev);
      changed = err == cudaSuccess;
    }
  }
  ~cnms_device_scope ()
  {
    if (changed)
      (void) cudaSetDevice (prev);
  }
  cnms_device_scope (const cnms_device_scope &) = delete;
  cnms_device_scope & operator= (const cnms_device_scope &) = delete;
};

/* cuda_batch.cu: cnms_backend_ops.detect_batch. */
cnms_status cnms_cuda_detect_batch (cnms_backend_ctx *ctx,
    const cnms_job *jobs, int n, cnms_backend_out *outs, cnms_report *reps);
/* backend_cuda.cu: the points of the kept lanes out[0 .. kept) of a
 * LaneATT job (cnms_lanes.h, as the CPU backend) into pts (2 S floats a
 * lane), and each record's box their frame rectangle. Their rows: from a
 * host tensor by their anchors, or from a device tensor the kept rows
 * that the engine copied out (kept_rows: in kept order,
 * CNMS_KEPT_ROW_STRIDE apart); row: room for one row of floats (float16
 * rows converted). */
void cnms_cuda_lane_points (const cnms_job *job, const void *kept_rows,
    cnms_det *out, int kept, float *pts, float *row);
/* backend_cuda.cu: the per-class rules r with their tables in device
 * memory (dev), uploaded when they differ from the last upload. */
cnms_status cnms_cuda_upload_rules (cnms_backend_ctx *ctx,
    cnms_cuda_priv *s, const cnms_class_rules *r, cnms_class_rules *dev);

/* cuda_context.cu */
cnms_status cnms_cuda_create (cnms_backend_ctx *ctx, int device_id);
void cnms_cuda_destroy (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_error (cnms_backend_ctx *ctx, cudaError_t e,
    const char *what);
cnms_status cnms_cuda_reserve_device (cnms_backend_ctx *ctx,
    cnms_cuda_buf *b, size_t bytes, const char *what);
cnms_status cnms_cuda_reserve_pinned (cnms_backend_ctx *ctx,
    cnms_cuda_buf *b, size_t bytes, const char *what);
/* GPU timing of one call (ctx->timing): begin records the start event
 * (events made on first use), end the stop event, both on the stream;
 * read, after the stream synchronisation, sets ctx->last_gpu_us (-1 when
 * timing is off). */
cnms_status cnms_cuda_timing_begin (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_timing_end (cnms_backend_ctx *ctx);
cnms_status cnms_cuda_timing_read (cnms_backend_ctx *ctx);

/* Checks a CUDA call; on failure records the message and returns. */
#define CNMS_CUDA_TRY(ctx, call, what)                                      \
  do {                                                                      \
    cudaError_t e_ = (call);                                                \
    if (e_ != cudaSuccess)                                                  \
      return cnms_cuda_error ((ctx), e_, (what));                           \
  } while (0)

/* Checks a cnms_status; returns it on failure. */
#define CNMS_TRY(call)                                                      \
  do {                                                                      \
    cnms_status s_ = (call);                                                \
    if (s_ != CNMS_OK)                                                      \
      return s_;                                                            \
  } while (0)

/* Where the pipeline reads a candidate's box and class by its sort value:
 * decoded records (recs, the value is the record position) or the input
 * arrays of plain NMS (recs NULL, the value is the input index). */
typedef struct {
  const cnms_det *recs;
  const float4 *boxes_in;       /* plain NMS of boxes: [n] x1 y1 x2 y2 */
  const float *obbs_in;         /* plain NMS of oriented boxes: [n][5] */
  const int32_t *classes_in;    /* plain NMS: NULL when class-agnostic */
  const float *lanes_in;        /* lanes: [sort value][lane_stride] float
                                 * proposal rows (5 + S floats used) */
  int lane_stride;              /* floats a row */
  int lane_n;                   /* strips: S - 1 */
  /* lanes from a device tensor (else kept_dst NULL): the engine's resolving
   * block copies the kept records' tensor rows (kept_row_units 16-bit units
   * each, any dtype; by their anchors) into kept_dst (mapped pinned memory,
   * kept_dst_units apart, in 16-byte pieces), in kept order, once the
   * resolve has put their count and sort values in the engine's kept_dev
   * (which it then needs) */
  const uint16_t *kept_tensor;
  int kept_row_units;
  int kept_dst_units;
  uint16_t *kept_dst;
} cnms_cand_src;

/* What one call asks of the NMS stages. */
typedef struct {
  int cap;                      /* max_candidates (host bound of n) */
  int max_keep;                 /* kept boxes at most */
  float iou;
  cnms_class_rules rules;       /* class-aware: a box's class's threshold
                                 * (device tables; iou_rest = iou) */
  int agnostic;
  int suppress;                 /* 0: end2end, the sorted candidates are kept as they are */
} cnms_nms_args;

/* Bits needed for an index in [0, n): the index half of a compact key. */
static inline int
cnms_cuda_key_bits (int n)
{
  int b = 0;

  while (b < 31 && (1u << b) < (unsigned) n)
    b++;
  return b;
}
/* Compact key: cnms_sort_key's order in 32 + abits bits. Unique per
 * candidate (the index half), so any correct sort gives the one order. */
static inline __host__ __device__ uint64_t
cnms_cuda_compact_key (float score, uint32_t index, int abits)
{
  uint64_t k = cnms_sort_key (score, index);
  return ((k >> 32) << abits) | (k & 0xffffffffu);
}

/* cuda_decode.cu: decodes every anchor of d_tensor (yolov5, end2end; not
 * yolov8, which the engine decodes) into the count-header buffer d_cand
 * (whose count must be zero), writing the compact sort key and the record
 * position of each candidate into keys/vals. */
cudaError_t cnms_cuda_decode (const void *d_tensor, cnms_dtype dtype,
    const cnms_shape *shape, const cnms_map *map,
    const cnms_class_rules *rules, float score_threshold, int abits,
    void *d_cand, uint64_t *d_keys, uint32_t *d_vals, int32_t *d_report,
    cudaStream_t stream);

/* Does the engine decode tensors of this shape itself (its decode phase:
 * yolov8 and yolov8-obb, whose class rows are [4, 4 + C))? The other
 * layouts' go through cnms_cuda_decode first. */
static inline bool
cnms_cuda_engine_decodes (const cnms_shape *shape)
{
  return shape->layout == CNMS_LAYOUT_YOLOV8
      || shape->layout == CNMS_LAYOUT_YOLOV8_OBB;
}

/* cuda_decode.cu: does cnms_cuda_decode_batch decode tensors of this
 * shape? */
bool cnms_cuda_decode_batch_takes (const cnms_shape *shape);

/* One frame of a batch's decode (cnms_cuda_decode_batch): its device
 * tensor, anchors, map, and its count-header buffer's parts. */
typedef struct {
  const void *tensor;
  int n_anchors;
  int abits;
  cnms_map map;
  int32_t *hdr;
  cnms_det *recs;
  uint64_t *keys;
  uint32_t *vals;
  int32_t *report;
} cnms_decode_frame;

/* cuda_decode.cu: cnms_cuda_decode of the frames (device memory, frames
 * of them, max_anchors the most anchors of one) of a batch of one layout
 * (yolov5, end2end), n_classes and rules shared, in one launch. */
cudaError_t cnms_cuda_decode_batch (const cnms_decode_frame *d_frames,
    int frames, int max_anchors, cnms_dtype dtype, const cnms_shape *shape,
    const cnms_class_rules *rules, float score_threshold,
    cudaStream_t stream);

/* cuda_filter.cu: cnms_nms_lanes input. Keeps the proposals [n][5 + S]
 * (row stride floats) whose score is finite and whose rows
 * cnms_lane_rows takes (n_strips = S - 1). */
cudaError_t cnms_cuda_filter_lanes (const float *d_props, int stride,
    int n_strips, const float *d_scores, int n, int abits, int32_t *d_hdr,
    uint64_t *d_keys, uint32_t *d_vals, cudaStream_t stream);
/* The bytes apart of the kept lanes' tensor rows (row_bytes each, even)
 * that the engine copies out (cnms_cand_src.kept_dst): row_bytes rounded
 * up to 16. */
#define CNMS_KEPT_ROW_STRIDE(row_bytes) (((row_bytes) + 15) / 16 * 16)

/* Nonzero mask words a row lists for the resolve (more: read whole). */
#define CNMS_ROW_LIST 7
/* The largest count the cached resolve takes: its warp owns a tile row's
 * words, at most 32 (see cuda_resolve.cuh). */
#define CNMS_CACHE_MAX (32 * CNMS_TILE)

/* The pruned mask phase (cuda_prune.cuh), for the counts that the
 * cached resolve does not take: a uniform grid of at most
 * CNMS_GRID_CELLS_MAX cells over the boxes' extent; a box touching more
 * than CNMS_GRID_SPAN cells goes to the "big" list instead. */
#define CNMS_GRID_CELLS_MAX 4095
#define CNMS_GRID_SPAN 16
/* d_grid: [state CNMS_GRID_STATE words | cell counts CNMS_GRID_CELLS_MAX + 1
 * | cell fill cursors CNMS_GRID_CELLS_MAX + 1 | cap "removed by" words (uint64) | cap cell ranges (int2) | cap x
 * CNMS_GRID_SPAN cell entries | cap big list], 32-bit words but the
 * uint64 part. The state: the extent's keys (0..3), the sums of widths and
 * heights (4, 5, float), the binned boxes (6), the big list's count (7)
 * and fill (8). */
#define CNMS_GRID_STATE 16
#define CNMS_GRID_STATE_BYTES (CNMS_GRID_STATE * 4)
static inline size_t
cnms_grid_bytes (int cap)
{
  return 4 * ((size_t) CNMS_GRID_STATE + 2 * (CNMS_GRID_CELLS_MAX + 1))
      + (size_t) cap * (8 + 8 + 4 * CNMS_GRID_SPAN + 4);
}

/* cuda_engine.cu: sort -> cap -> bitmask -> resolve -> output of the
 * device-side count of candidates in keys/vals, in one cooperative
 * kernel of CNMS_ENGINE_THREADS-thread blocks, one instantiation per
 * geometry (CNMS_GEOM_BOX, CNMS_GEOM_OBB, CNMS_GEOM_LANE). */
#define CNMS_ENGINE_THREADS 256
/* The engine's own decode phase (YOLOv8 [1, 4+C, N] for boxes,
 * YOLOv8-OBB [1, 4+C+1, N] for oriented boxes; LaneATT [N][5 + S] for
 * lanes), before the sort: a block
 * takes CNMS_FUSED_V8_GROUPS groups of 32 anchors at a time. */
#define CNMS_FUSED_V8_GROUPS 2
typedef struct {
  const void *tensor;           /* NULL: the candidates are there already */
  int f16;                      /* float16 elements, else float32 */
  int n_anchors, n_classes;
  cnms_map map;
  cnms_class_rules rules;       /* each class's score threshold (device
                                 * tables) */
  int abits;
  cnms_det *recs;               /* the count-header buffer's records */
  uint64_t *keys;
  uint32_t *vals;
  int32_t *report;              /* the row counts (CNMS_REP_*) */
  /* LaneATT ([N][5 + S], S = n_classes; the lane engine only): the
   * score threshold, and where the sort phase puts the rows of the
   * candidates that the mask tests, as floats, by sort value
   * (cnms_lane_copy_row) */
  float lane_thr;
  float *lane_rows;
  /* the block-local front (cuda_lane_local.cuh): every block decodes
   * and sorts the proposals itself when they fit its shared memory */
  int lane_local;
} cnms_engine_decode;
/* The engine's own filter phase of plain NMS (cnms_nms, cnms_nms_rotated),
 * before the sort: boxes [n][4] (oriented boxes [n][5]) and scores [n];
 * a box whose values and score are all finite is a candidate, its compact
 * key and input index in keys/vals (slots from the count header). */
typedef struct {
  const float *boxes;           /* NULL: no filter phase */
  const float *scores;
  int n;
  int abits;
  uint64_t *keys;
  uint32_t *vals;
} cnms_engine_filter;

typedef struct {
  cnms_engine_decode dec;
  cnms_engine_filter filt;
  cnms_cand_src src;
  const uint64_t *keys;         /* compact sort key of each slot */
  const uint32_t *vals;         /* sort value of each slot */
  int32_t *hdr;                 /* count header: read, then zeroed */
  int capacity;                 /* slots: the host-side bound of the count */
  cnms_nms_args a;
  int cache_max;                /* the largest count resolved from shared
                                 * memory, when it fits there (at most a
                                 * warp's 32 tiles); -1: none */
  int row_list_max;             /* list entries of a row that the resolve
                                 * uses (<= CNMS_ROW_LIST): a kept row with
                                 * more nonzero words is read whole */
  int32_t *report;              /* detect: the decode's row counts, copied
                                 * to the output header and zeroed; NULL
                                 * for plain NMS */
  int32_t *kept_dev;            /* NULL, or device memory for [kept count |
                                 * the kept records' sort values]: what the
                                 * output holds, for kernels behind the
                                 * engine (no reads of host memory) */
  uint32_t *order;              /* capacity: sort values in sorted order */
  float4 *boxes;                /* cap: sorted boxes, or oriented boxes'
                                 * hulls (suppress only) */
  int4 *lanes;                  /* cap: sorted lanes' start, end, sort
                                 * value (lanes only, after the boxes) */
  cnms_obb *obbs;               /* cap: sorted oriented boxes, prepared
                                 * (CNMS_GEOM_OBB only) */
  int32_t *cls;                 /* cap: sorted classes */
  uint64_t *mask;               /* cap x ceil(cap / 64) words */
  int32_t *row_cnt;             /* cap: nonzero words right of the word
                                 * after the diagonal's */
  int32_t *list_w;              /* cap x CNMS_ROW_LIST: which words (-1:
                                 * none), */
  uint64_t *list_b;             /* and their bits */
  uint64_t *row_next;           /* cap: each row's word after its diagonal
                                 * word (the next tile's), never listed */
  uint32_t *grid_state;         /* d_grid's parts (cnms_grid_bytes) */
  int32_t *grid_cells;
  int32_t *grid_fill;
  uint64_t *grid_by;            /* cap: bit a of word b set when box a of
                                 * b's tile (a < b) suppresses b */
  int2 *grid_range;
  int32_t *grid_entries;
  int32_t *grid_big;
  char *out;                    /* [header | kept records or indices]:
                                 * mapped pinned host memory */
  long long smem_words;         /* set by cnms_cuda_engine */
} cnms_engine_args;

/* Launches the engine of geometry geom on blocks blocks with smem_bytes
 * of dynamic shared memory (cnms_cuda_engine_smem_bytes, within the set
 * limit). */
cudaError_t cnms_cuda_engine (const cnms_engine_args *g, int geom,
    int blocks, size_t smem_bytes, cudaStream_t stream);
/* The engine of a batch of frames (boxes, oriented boxes or LaneATT
 * lanes): frame f's arguments d_frames[f] (device memory) on a row of
 * blocks blocks, its barrier's two words d_bars[2 f ..] (zero before the
 * first launch, and left so); one launch of frames x blocks blocks,
 * cooperative unless ordinary and a row has one block (a row of one
 * block waits for no other, so its frames need not all be resident at
 * once; ordinary: with CNMS_TEST_CUDA_UNPROVEN, else the caller launches
 * as many frames as fit at once, cooperatively). */
cudaError_t cnms_cuda_engine_batch (const cnms_engine_args *d_frames,
    uint32_t *d_bars, int geom, int frames, int blocks, size_t smem_bytes,
    bool ordinary, cudaStream_t stream);
/* Blocks of the batch engine of geometry geom that fit on one
 * multiprocessor at smem_bytes. */
cudaError_t cnms_cuda_engine_batch_max_blocks (int geom, size_t smem_bytes,
    int *per_sm);
/* Dynamic shared memory of an engine launch for cap candidates: the
 * rank sort's stage, the removed bitmap, and, up to budget, room to cache
 * the mask of up to expect of them (a count above that is resolved from
 * global memory: the same bits). */
size_t cnms_cuda_engine_smem_bytes (int cap, bool plain, size_t budget,
    int expect);
/* The least the engine needs for cap candidates (its removed bitmap). */
size_t cnms_cuda_engine_smem_min (int cap);
/* Blocks of the engine of geometry geom that fit on one multiprocessor
 * at smem_bytes. */
cudaError_t cnms_cuda_engine_max_blocks (int geom, size_t smem_bytes,
    int *per_sm);
/* Lets the engine of every geometry use max_dynamic bytes of dynamic
 * shared memory (the device's opt-in maximum; set once per device, see
 * cuda_context.cu). */
cudaError_t cnms_cuda_engine_allow_smem (size_t max_dynamic);

/* Shared memory the engine keeps for its static arrays (the uncached
 * resolve's list stage and tile state), with room to spare. */
#define CNMS_ENGINE_STATIC_SMEM 12288

/* Dynamic shared memory a lane engine launch takes at least: the cached
 * mask stages the x of a tile's column lanes and of its row lanes there,
 * (64 + 32) lanes of 106 rows (LaneATT's S = 72 in one go). */
#define CNMS_LANE_SMEM_BYTES 40960

/* The lane engine's block-local front (cuda_lane_local.cuh): taken for
 * tensors of at most CNMS_LANE_LOCAL_ANCHORS proposals, in a launch of
 * CNMS_LANE_LOCAL_SMEM bytes of dynamic shared memory, of which the mask
 * keeps CNMS_LANE_LOCAL_STAGE for its lanes and staging (the 32 lanes of
 * an item, LaneATT's 72 rows at once, with room to spare) and the rest
 * holds up to CNMS_LANE_LOCAL_MAX candidates. */
#define CNMS_LANE_LOCAL_ANCHORS 4096
#define CNMS_LANE_LOCAL_SMEM 65536
#define CNMS_LANE_LOCAL_STAGE 24576
#define CNMS_LANE_LOCAL_MAX 1024

/* The least dynamic shared memory of a lane engine launch, within budget
 * (the device's): the cached mask's staging (CNMS_LANE_SMEM_BYTES), and
 * the block-local front's where local (LaneATT tensors of at most
 * CNMS_LANE_LOCAL_ANCHORS proposals) and the device has it. A tensor
 * takes the front when its proposals are that few and the launch has
 * CNMS_LANE_LOCAL_SMEM bytes (cnms_engine_decode.lane_local). */
static inline size_t
cnms_cuda_lane_smem_least (bool local, size_t budget)
{
  if (local && CNMS_LANE_LOCAL_SMEM <= budget)
    return CNMS_LANE_LOCAL_SMEM;
  return CNMS_LANE_SMEM_BYTES < budget ? CNMS_LANE_SMEM_BYTES : budget;
}

/* cuda_heads.cu: the heads of the kept records (cnms_backend_ops.heads). */
extern "C" cnms_status cnms_cuda_heads (cnms_backend_ctx *ctx,
    const cnms_job *job, const cnms_heads_args *h, const cnms_det *dets,
    int n, const void **payload);

/* One frame of cnms_cuda_pose_batch: the keypoints of the engine's kept
 * records (sel: its kept_dev, [count | sort values]; at most n) of
 * recs, read from the whole device tensor, into out (mapped host memory,
 * 16-byte aligned, room for 3 floats past the keypoints). */
typedef struct {
  const void *tensor;
  const cnms_det *recs;
  const int32_t *sel;
  float *out;
  long long n_anchors;
  cnms_map map;
  int n;
} cnms_pose_frame;
/* cuda_heads.cu: the keypoints (k of d values an anchor) of n frames
 * (d_frames in device memory), a row of blocks a frame, in one launch;
 * most: the records of a frame at most. */
cudaError_t cnms_cuda_pose_batch (const cnms_pose_frame *d_frames, int n,
    int most, int k, int d, int f16, cudaStream_t stream);

/* cuda_caps.cu: enqueues the per-class caps (cnms_class_cap) and then
 * max_out on the kept records of the engine just enqueued: kept ([count |
 * sort values], the engine's kept_dev, in kept order) and the records
 * recs[value] are taken in kept order, those that pass written to the
 * output body (out + CNMS_HEADER_BYTES, the engine's) and back into kept,
 * their count into both headers. rules: device tables. table: room for
 * cnms_caps_table_bytes (most) bytes, for at most most kept records. */
size_t cnms_caps_table_bytes (int most);
cudaError_t cnms_cuda_caps (const cnms_det *recs, int32_t *kept, char *out,
    const cnms_class_rules *rules, int max_out, int most, void *table,
    cudaStream_t stream);
/* One frame of cnms_cuda_caps_batch: cnms_cuda_caps's arguments. */
typedef struct {
  const cnms_det *recs;
  int32_t *kept;
  char *out;
  int32_t *table;               /* cnms_caps_table_bytes (most) bytes */
  int max_out;
  int pad_;
} cnms_caps_frame;
/* The caps of n frames (d_frames in device memory), a block each, in one
 * launch; most: the kept records of a frame at most. */
cudaError_t cnms_cuda_caps_batch (const cnms_caps_frame *d_frames, int n,
    const cnms_class_rules *rules, int most, cudaStream_t stream);
/* cuda_heads.cu: enqueues the heads h on the kept records of the engine
 * just enqueued (at most max_keep), where they can run there: a device
 * tensor, and for masks device prototypes. _reserve, before the stream
 * work, reserves their buffers and says whether they will (*ahead: then
 * the engine's kept_dev is d_kept).
 * cnms_cuda_heads_ahead_done, after the stream's synchronisation, notes
 * whether they completed (masks: within their room), so that
 * cnms_cuda_heads takes them instead of running the heads again. */
cnms_status cnms_cuda_heads_ahead_reserve (cnms_backend_ctx *ctx,
    const cnms_heads_args *h, int max_keep, bool *ahead);
cnms_status cnms_cuda_heads_ahead (cnms_backend_ctx *ctx,
    const cnms_heads_args *h, int max_keep);
cnms_status cnms_cuda_heads_ahead_done (cnms_backend_ctx *ctx);

/* cuda_heads_batch.cu: the masks of a batch's frames (n jobs, of at most
 * keep_max kept records each) in the batch's launches, behind its engine
 * and caps: jobs of one layout with masks, whose tensors and prototypes
 * lie on the device (_takes; not with CNMS_TEST_NO_BATCH_HEADS). Each
 * frame's arguments (_frame_bytes of them) go into the batch's upload:
 * _frame writes frame job's (its engine's records recs and kept_dev sel,
 * its max_keep) at dst. _reserve, before the stream work, reserves the
 * buffers; _enqueue launches the kernels on the frames' arguments in
 * device memory; _done, after the stream's synchronisation, gives each
 * frame whose masks were made (its jobs as many as outs[i].n_dets) its
 * payload, payload_bytes and payload_table in outs, and grows the room
 * when the batch was over it (its masks then come from the heads call,
 * frame by frame). */
bool cnms_cuda_seg_batch_takes (const cnms_cuda_priv *s, const cnms_job *j0,
    int n, int keep_max);
size_t cnms_cuda_seg_batch_frame_bytes (void);
void cnms_cuda_seg_batch_frame (const cnms_job *job, const cnms_det *recs,
    const int32_t *sel, int max_keep, void *dst);
cnms_status cnms_cuda_seg_batch_reserve (cnms_backend_ctx *ctx, int n,
    int keep_max);
cnms_status cnms_cuda_seg_batch_enqueue (cnms_backend_ctx *ctx,
    const cnms_job *j0, const void *d_frames, int n);
cnms_status cnms_cuda_seg_batch_done (cnms_backend_ctx *ctx,
    cnms_backend_out *outs, int n);
/* cuda_merge.cu: cnms_backend_ops.merge, for at most CNMS_MERGE_MAX
 * records (and what fits in merge_smem); CNMS_ERR_UNSUPPORTED above. */
#define CNMS_MERGE_MAX 4096
extern "C" cnms_status cnms_cuda_merge (cnms_backend_ctx *ctx,
    const double *boxes, const double *scores, const int32_t *classes,
    int n, const cnms_merge_params *m, cnms_det *out, int *n_out);
/* Lets the merge kernels use max_dynamic bytes of dynamic shared memory
 * (set once per device, as cnms_cuda_engine_allow_smem). */
cudaError_t cnms_cuda_merge_allow_smem (size_t max_dynamic);

/* Kernel image check: cudaSuccess when this build carries code that runs
 * on the current device. */
cudaError_t cnms_cuda_image_check (void);

#endif /* CNMS_CUDA_CUH */
