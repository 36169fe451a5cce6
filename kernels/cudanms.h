/* cudanms: detection post-processing library (decode + exact greedy NMS).
 *
 * Plain C API, no GStreamer. Two backends sit behind it: an exact CPU
 * reference and CUDA kernels. Both produce bit-identical results; the
 * semantics are in docs/contracts.md ("Exact NMS semantics"), the API in
 * docs/library.md.
 *
 * Threading: a context is used by one thread at a time. Different contexts
 * are independent (each CUDA context owns its own stream).
 */
#ifndef CUDANMS_H
#define CUDANMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CNMS_OK = 0,
  CNMS_ERR_INVALID_ARG,   /* a parameter is out of range */
  CNMS_ERR_BAD_TENSOR,    /* dtype, dims or byte size do not fit the layout */
  CNMS_ERR_NO_MEMORY,     /* host, pinned or device allocation failed */
  CNMS_ERR_NO_DEVICE,     /* CUDA asked for, but no usable device */
  CNMS_ERR_UNSUPPORTED,   /* backend not compiled in */
  CNMS_ERR_CUDA           /* a CUDA runtime call or kernel launch failed */
} cnms_status;

typedef enum {
  CNMS_BACKEND_CPU = 0,
  CNMS_BACKEND_CUDA = 1
} cnms_backend;

typedef enum {
  CNMS_LAYOUT_AUTO = 0,   /* from the dims: yolov5, yolov8 or end2end */
  CNMS_LAYOUT_YOLOV5,     /* [1, N, 5+C]: cx cy w h obj cls...          */
  CNMS_LAYOUT_YOLOV8,     /* [1, 4+C, N]: cx cy w h cls... (strided by N) */
  CNMS_LAYOUT_END2END,    /* [1, K, 6]:   x1 y1 x2 y2 score class         */
  CNMS_LAYOUT_YOLOV8_OBB, /* [1, 4+C+1, N]: cx cy w h cls... angle:
                           * oriented boxes */
  CNMS_LAYOUT_LANEATT,    /* [1, N, 5+S]: 2 logits, start_y, start_x,
                           * length, S x offsets: lanes */
  CNMS_LAYOUT_YOLOV8_POSE,  /* [1, 4+1+K*D, N]: cx cy w h, the person
                             * score, K keypoints of D values: keypoints */
  CNMS_LAYOUT_YOLOV8_SEG    /* [1, 4+C+M, N] with prototypes
                             * [1, M, Hp, Wp]: instance masks */
} cnms_layout;

/* The layouts: AUTO and the seven above. */
#define CNMS_N_LAYOUTS 8

/* What a kept record carries besides its box (cnms_ctx_payload). */
typedef enum {
  CNMS_HEAD_NONE = 0,           /* boxes, oriented boxes: the record is all */
  CNMS_HEAD_LANE,               /* laneatt: the lane's points */
  CNMS_HEAD_KEYPOINTS,          /* yolov8-pose: the keypoints */
  CNMS_HEAD_MASK                /* yolov8-seg: the instance mask */
} cnms_head;

/* One layout, as the library knows it (cnms_layout_info). */
typedef struct {
  cnms_layout layout;
  const char *name;             /* "yolov8-pose": the CLI's --layout and
                                 * the element's nick */
  const char *description;      /* one line: the dims and what a row holds */
  const char *tensor_id;        /* the id GStreamer's tensor decoders give
                                 * such a tensor, or NULL */
  cnms_head head;
  int oriented;                 /* records are oriented boxes (cx cy w h
                                 * angle) */
  int auto_detected;            /* AUTO may choose it from the dims */
} cnms_layout_desc;

/* The description of layout l; NULL for a value that is no layout. */
const cnms_layout_desc *cnms_layout_info (cnms_layout l);

/* The layout named name (cnms_layout_desc.name), or -1. */
int cnms_layout_from_name (const char *name);

typedef enum {
  CNMS_DTYPE_FLOAT32 = 0,
  CNMS_DTYPE_FLOAT16
} cnms_dtype;

#define CNMS_MAX_DIMS 8

/* A raw detector output tensor, row-major. */
typedef struct {
  const void *data;
  size_t size;                  /* bytes at data: exactly the dims' product
                                 * times the element size */
  cnms_dtype dtype;
  int n_dims;
  int64_t dims[CNMS_MAX_DIMS];
  int on_device;                /* data is a CUDA device pointer (CUDA backend only) */
} cnms_tensor;

/* What a tensor was recognised as. */
typedef struct {
  cnms_layout layout;           /* never AUTO */
  int n_anchors;                /* N: the rows NMS takes (K end2end
                                 * results, the lane proposals) */
  int n_classes;                /* C: class scores a row holds; 0 for
                                 * end2end (the class is a value), 1 for
                                 * yolov8-pose and laneatt */
  int n_values;                 /* values per anchor (the row's width) */
  int n_lane_rows;              /* laneatt: S, the rows of a lane; else 0 */
  int n_keypoints, keypoint_dims;       /* yolov8-pose: K, D; else 0 */
  int n_coeffs;                 /* yolov8-seg: M, the mask coefficients */
  int proto_height, proto_width;        /* yolov8-seg: Hp, Wp; else 0 */
} cnms_shape;

/* What one class does differently from the frame-wide parameters
 * (cnms_params.classes). */
typedef struct {
  float score_threshold;        /* candidate iff score > this (strict);
                                 * +INFINITY: the class is filtered out, it
                                 * is never a candidate */
  float iou;                    /* class-aware: a box of this class is
                                 * suppressed by a kept box of this class iff
                                 * their IoU > this; in [0, 1] */
  int max_detections;           /* kept boxes of this class at most, the
                                 * first in kept order; 0: no cap of its own */
} cnms_class_params;

typedef struct {
  float score_threshold;        /* candidate iff score > this (strict) */
  float iou;                    /* suppress iff IoU > this (strict, float32) */
  int max_detections;           /* kept boxes cap, >= 1 */
  int max_candidates;           /* pre-NMS cap, >= 1; keeps the best by (score desc, anchor asc) */
  int class_agnostic;
  int model_width, model_height;  /* model input, pixels */
  int frame_width, frame_height;  /* output frame, pixels */
  int letterbox;                /* undo symmetric letterbox; else undo a plain stretch */
  /* Per-class controls; none after cnms_params_init. */
  const cnms_class_params *classes;     /* classes[id] for ids below
                                         * n_classes, or NULL */
  int n_classes;
  int other_classes_filtered;   /* ids at or past n_classes are never
                                 * candidates (a keep-only class filter);
                                 * else they take the frame-wide values */
  float min_width, min_height;  /* frame pixels: a candidate's box is at
                                 * least this wide and this high; 0: any */
  int max_detections_per_class; /* the cap of every class without one of its
                                 * own (cnms_class_params.max_detections);
                                 * 0: none */
  int keypoint_dims;            /* yolov8-pose: values per keypoint, 2 (x y)
                                 * or 3 (x y visibility); 0: 3 (COCO's
                                 * YOLOv8/YOLO11 pose models). Other layouts
                                 * ignore it. */
  float lane_distance;          /* laneatt: a lane is suppressed by a kept
                                 * lane whose mean horizontal distance to it
                                 * over their shared rows is below this
                                 * (model pixels, finite, >= 0). Other
                                 * layouts ignore it. */
} cnms_params;

/* The most per-class entries a call takes: a class id is below 2^24. */
#define CNMS_MAX_CLASS_PARAMS 16777216

/* Fills c with p's frame-wide values (the defaults when p is NULL): a
 * class that does nothing of its own. */
void cnms_class_params_init (cnms_class_params *c, const cnms_params *p);

/* One detection / candidate record (32 bytes), in frame pixels. A box
 * (the YOLO and end2end layouts) is its corners x1 y1 x2 y2, clipped to
 * the frame, and angle 0. An oriented box (CNMS_LAYOUT_YOLOV8_OBB) is its
 * centre cx cy, its size w h and angle, in radians: the w side runs along
 * (cos angle, sin angle) in image coordinates (y down), as ultralytics'
 * xywhr; it is not clipped (cnms_obb_hull gives its clipped hull). The
 * anonymous union needs C11 (or GNU C / C++ with the common extension). */
typedef struct {
  float score;
  union {
    struct {
      float x1, y1, x2, y2;
    };
    struct {
      float cx, cy, w, h;
    };
  };
  int32_t class_id;
  int32_t anchor;               /* index of the anchor in the tensor */
  float angle;                  /* oriented boxes: radians; else 0 */
} cnms_det;

/* The defaults, in one place: cnms_params_init and the element's property
 * defaults come from these. */
#define CNMS_DEFAULT_SCORE_THRESHOLD 0.25f
#define CNMS_DEFAULT_IOU 0.45f
#define CNMS_DEFAULT_MAX_DETECTIONS 300
#define CNMS_DEFAULT_MAX_CANDIDATES 30000
#define CNMS_DEFAULT_MODEL_WIDTH 640
#define CNMS_DEFAULT_MODEL_HEIGHT 640
#define CNMS_DEFAULT_LETTERBOX 1
#define CNMS_DEFAULT_LANE_DISTANCE 50.0f

/* Fills p with the defaults above: class-aware, the model size for both
 * model and frame, letterbox. */
void cnms_params_init (cnms_params *p);

/* The axis-aligned hull of the oriented box of d (an oriented layout's
 * record) clipped to [0, frame_width] x [0, frame_height], into out[4] =
 * x1 y1 x2 y2: the rectangle of its ROI. */
void cnms_obb_hull (const cnms_det *d, int frame_width, int frame_height,
    float out[4]);

/* Recognises the layout of t (and, for yolov8-seg, its prototypes
 * protos; NULL for every other layout) under p's keypoint_dims (p may be
 * NULL: the defaults). requested = AUTO applies the rule:
 *   3 dims [1, a, b] (or 2 dims [a, b]);
 *   b == 6                        -> end2end  [K = a]
 *   b >= 6 and a > b              -> yolov5   [N = a, C = b - 5]
 *   a >= 5 and b > a              -> yolov8   [N = b, C = a - 4]
 * (a one-class yolov5 tensor [1, N, 6] therefore needs layout=yolov5)
 *   anything else                 -> CNMS_ERR_BAD_TENSOR
 * A forced layout only checks that the dims fit it (each layout's least
 * rows: docs/contracts.md, "Layouts"): yolov8-pose [1, 5+K*D, N] needs
 * K >= 1 exactly (D = keypoint_dims, 0: 3); yolov8-seg [1, 4+C+M, N] needs
 * its prototypes [1, M, Hp, Wp] (or [M, Hp, Wp]) of the same dtype, M >=
 * 1, C >= 1, Hp and Wp in 1 .. 65536, M * Hp * Wp below 2^31. Every dim
 * must be > 0, except K = 0 of an end2end [1, 0, 6] (a valid empty result:
 * data may then be NULL, and cnms_detect returns no detection). Each
 * tensor's size must be exactly its bytes: short or long is
 * CNMS_ERR_BAD_TENSOR. protos for another layout, or none for yolov8-seg,
 * is CNMS_ERR_INVALID_ARG. On failure writes a one-line reason into msg
 * (if msg != NULL). */
cnms_status cnms_tensor_shape (const cnms_tensor *t,
    const cnms_tensor *protos, cnms_layout requested, const cnms_params *p,
    cnms_shape *out, char *msg, size_t msg_size);

typedef struct cnms_ctx cnms_ctx;

/* Creates a context on a backend. device_id selects the CUDA device,
 * -1 for the current/first one; the CPU backend ignores it. */
cnms_status cnms_ctx_new (cnms_backend backend, int device_id, cnms_ctx **out);
void cnms_ctx_free (cnms_ctx *ctx);

cnms_backend cnms_ctx_backend (const cnms_ctx *ctx);
/* Message of the last failure of this context ("" when none). */
const char *cnms_ctx_error (const cnms_ctx *ctx);
/* What the last cnms_detect of ctx found in its tensor, filled by the
 * backend during the decode it does anyway (host and device tensors
 * alike). All zero before the first call and after a call that failed
 * before decoding (a bad tensor or argument). Valid until the next call. */
typedef struct {
  cnms_shape shape;             /* what the tensor was recognised as */
  int candidates;               /* rows that met the candidate rule, before
                                 * the max_candidates cap */
  int candidates_dropped;       /* of them beyond max_candidates */
  int kept;                     /* detections returned (n_dets) */
  int nonfinite_scores;         /* rows whose score, as the layout defines
                                 * it, is NaN or +-Inf: never candidates */
  int invalid_classes;          /* end2end rows with a candidate's score
                                 * whose class value is not an integer in
                                 * [0, 2^24): dropped */
  int fractional_classes;       /* end2end rows with a candidate's score and
                                 * a fractional class value: truncated */
  float first_invalid_class;    /* the first such class value, in row order */
  float first_fractional_class;
  int lanes_without_points;     /* laneatt: lanes NMS kept whose points in
                                 * the frame are fewer than 2: not
                                 * returned */
} cnms_report;

const cnms_report *cnms_ctx_report (const cnms_ctx *ctx);

/* Decode + NMS (+ the layout's head) of t, one call for every layout.
 * protos: yolov8-seg's prototypes, NULL for every other layout (checked
 * with t by cnms_tensor_shape's rules). On success *dets points at
 * *n_dets records in kept order (score desc, anchor asc), owned by ctx and
 * valid until the next call, after the per-class caps (in kept order) and
 * max_detections; what each carries besides its box is
 * cnms_ctx_payload's.
 *   yolov8-pose: the first five rows are decoded and suppressed exactly as
 *     a one-class yolov8 tensor; each kept record carries its K keypoints.
 *   yolov8-seg: the first 4+C rows are decoded and suppressed exactly as a
 *     yolov8 tensor of C classes; each kept record carries its mask (its
 *     coefficients' dot product with the prototypes, m ascending, no FMA,
 *     sampled bilinearly (align_corners=False, edge clamped) at each frame
 *     pixel of its box mapped back to the model input, set where that
 *     logit is > 0). The masks of one call take at most
 *     CNMS_MASK_BYTES_MAX bytes: more is CNMS_ERR_NO_MEMORY.
 *   laneatt: score = softmax (logits)[1], a candidate when above
 *     p->score_threshold (strictly) and its rows are valid; LaneATT's lane
 *     NMS (p->lane_distance) in (score desc, index asc) order; its IoU and
 *     per-class fields play no part (but are checked). A lane's record:
 *     its score, class 0, its proposal index (anchor), x1 y1 x2 y2 the
 *     frame rectangle of its points, angle 0; a lane kept by NMS with
 *     fewer than 2 points in the frame is not returned (counted in the
 *     report's lanes_without_points).
 * A device tensor (on_device) needs a CUDA context; either tensor of a
 * seg call may be one. */
cnms_status cnms_detect (cnms_ctx *ctx, const cnms_tensor *t,
    const cnms_tensor *protos, cnms_layout layout, const cnms_params *p,
    const cnms_det **dets, int *n_dets);

/* The most bytes the masks of one cnms_detect may take (1 GiB). */
#define CNMS_MASK_BYTES_MAX ((size_t) 1 << 30)

/* What kept record k of the last cnms_detect carries besides its box:
 * its values at data + offset of the call's one payload buffer
 * (cnms_payloads).
 *   CNMS_HEAD_LANE: n_points = S floats pairs x y (point_dims 2), row i
 *     (0: the bottom row) in frame pixels, NaN for a row that is not part
 *     of the lane or whose point lies outside the frame (LaneATT's
 *     proposals_to_pred: the rows from the start row to the end row, and
 *     below the start row while the x stays in the model width).
 *   CNMS_HEAD_KEYPOINTS: n_points = K triples x y score (point_dims 3):
 *     x, y in frame pixels (mapped as the box's centre: (v - pad) / gain,
 *     not clipped) and the visibility score as the tensor holds it (NaN
 *     when D = 2).
 *   CNMS_HEAD_MASK: width x height bytes (row-major, each 0 or 1) of the
 *     frame-pixel rectangle x .. x + width - 1, y .. y + height - 1: the
 *     pixels X, Y with x1 <= X < x2 and y1 <= Y < y2 of its box (x =
 *     ceil (x1), width = ceil (x2) - x, likewise y; width or height may be
 *     0); n_points and point_dims 0. */
typedef struct {
  size_t offset;                /* bytes from the payload's data */
  int n_points;
  int point_dims;
  int x, y, width, height;      /* CNMS_HEAD_MASK */
} cnms_payload;

/* The payload of the last cnms_detect, valid as its records. */
typedef struct {
  cnms_head head;               /* NONE: no payload (n 0, data NULL) */
  int n;                        /* entries: the call's n_dets */
  const cnms_payload *records;  /* records[k]: kept record k's */
  const uint8_t *data;          /* the one buffer of all their values */
  size_t size;                  /* its bytes */
} cnms_payloads;

/* Fills *out with the payload of the last cnms_detect of ctx (head NONE,
 * and nothing, after a failed cnms_detect and after cnms_nms,
 * cnms_nms_rotated or cnms_nms_lanes). */
void cnms_ctx_payload (const cnms_ctx *ctx, cnms_payloads *out);

/* One frame of a batch (cnms_detect_batch). */
typedef struct {
  const cnms_tensor *tensor;    /* its own tensor ([1, ...] or the 2-dim
                                 * form, as cnms_detect takes), or NULL:
                                 * frame i of the batch tensor */
  const cnms_tensor *protos;    /* yolov8-seg: its prototypes, or NULL:
                                 * frame i of the batch's prototypes */
  int frame_width, frame_height;        /* its size; 0: p's */
} cnms_frame;

/* What cnms_detect_batch gives for one frame, valid until the next call
 * of its context. */
typedef struct {
  cnms_status status;           /* CNMS_OK, or why this frame has no
                                 * result (the others are decoded) */
  const char *error;            /* its reason ("" when OK) */
  const cnms_det *dets;         /* n_dets records, as cnms_detect's */
  int n_dets;
  cnms_report report;           /* as cnms_ctx_report after cnms_detect */
  cnms_payloads payload;        /* as cnms_ctx_payload after cnms_detect */
} cnms_frame_result;

/* The most frames one cnms_detect_batch takes. */
#define CNMS_BATCH_MAX 4096

/* cnms_detect of n_frames frames of one layout under one p, in one call:
 * every frame's result (results[i], n_frames entries, owned by ctx) is
 * bit-identical to a cnms_detect of that frame alone with p's frame size
 * replaced by the frame's. The frames come as
 *   a batch tensor [B, ...] (batch != NULL; protos: [B, M, Hp, Wp] for
 *     yolov8-seg): frame i is its slice i, [1, ...], at data + i * size /
 *     B, host or device as the batch is; n_frames == B, and frames (or
 *     NULL: every frame p's size) give each frame's size, with tensor and
 *     protos NULL;
 *   or one tensor a frame (batch == NULL, protos NULL): frames[i].tensor
 *     (and .protos for yolov8-seg), each host or device, read in place.
 * Every frame has the layout of the first that fits `layout` (AUTO: the
 * rule of cnms_tensor_shape) and the same dims but N (the anchors, the
 * proposals, K end2end), dtype and place: a frame that differs fails the
 * call, naming the frame (cnms_ctx_error). A frame bad on its own (a size
 * that is not its dims' bytes, masks beyond CNMS_MASK_BYTES_MAX) has its
 * own status and error; the other frames are decoded, and the call
 * returns CNMS_OK. The CUDA backend runs the frames of every layout but
 * laneatt (yolov5, yolov8, end2end, yolov8-obb, yolov8-pose, yolov8-seg)
 * in a fixed number of launches whatever B, with one upload of the host
 * tensors and one wait, the keypoints and masks of device tensors (and
 * prototypes) in those launches too; laneatt frame by frame. A frame's
 * records and payload may point into the backend's buffers: like the
 * results, valid until the context's next call. cnms_ctx_report and
 * cnms_ctx_payload are left empty. */
cnms_status cnms_detect_batch (cnms_ctx *ctx, const cnms_tensor *batch,
    const cnms_tensor *protos, const cnms_frame *frames, int n_frames,
    cnms_layout layout, const cnms_params *p,
    const cnms_frame_result **results);

/* Tiles (sliced inference, docs/contracts.md "Tiles"): a large frame cut
 * into overlapping slices, each run through the detector, the slices'
 * detections mapped into the frame and merged as SAHI (github obss/sahi)
 * merges them. */

/* A slice: its rectangle in the frame, x1 <= X < x2, y1 <= Y < y2. */
typedef struct {
  int x1, y1, x2, y2;
} cnms_slice;

/* The slices of a frame_width x frame_height frame as SAHI's
 * get_slice_bboxes makes them for slice_width x slice_height slices and
 * overlap ratios in [0, 1) (each overlap int (ratio * slice size)
 * pixels): along each axis windows start at 0 and step by the slice size
 * less the overlap; the first window that would pass the frame's edge is
 * moved back to end at it and is the last (a slice larger than the frame
 * is the frame). Rows from the top, left to right in a row. Writes at most
 * max_slices into out and returns how many the grid has (more than
 * max_slices: call again with room), or -1 for a bad argument. */
int cnms_slice_grid (int frame_width, int frame_height, int slice_width,
    int slice_height, double overlap_width, double overlap_height,
    cnms_slice *out, int max_slices);

/* SAHI's postprocess rules. */
typedef enum {
  CNMS_MERGE_GREEDY_NMM = 0,    /* SAHI's GREEDYNMM (its default) */
  CNMS_MERGE_NMM,               /* NMM: transitive merging */
  CNMS_MERGE_NMS                /* NMS: suppression, no merging */
} cnms_merge_rule;

/* How two boxes match. */
typedef enum {
  CNMS_MATCH_IOS = 0,           /* intersection over the smaller area
                                 * (SAHI's default) */
  CNMS_MATCH_IOU                /* intersection over union */
} cnms_match_metric;

/* Whose rules: SAHI's own, bugs included (the default), or the
 * consistent ones (docs/contracts.md, "Tiles": one precision and one
 * comparison, nothing lost). */
typedef enum {
  CNMS_MERGE_RULES_SAHI = 0,
  CNMS_MERGE_RULES_CONSISTENT
} cnms_merge_rules;

typedef struct {
  cnms_merge_rule rule;
  cnms_match_metric metric;
  double threshold;             /* [0, 1]; a pair matches at metric >= it
                                 * (float32) first, > it (float64) when
                                 * merged: docs/contracts.md */
  int class_agnostic;           /* 0: each class alone (SAHI's default) */
  cnms_merge_rules rules;       /* CNMS_MERGE_RULES_SAHI by default */
} cnms_merge_params;

/* SAHI's defaults: greedy NMM, IoS, 0.5, each class alone, its rules. */
void cnms_merge_params_init (cnms_merge_params *m);

/* SAHI's postprocess of n records in frame pixels: boxes [n][4] x1 y1 x2
 * y2 and scores [n] (the float64 values SAHI's predictions hold), classes
 * [n]. A record with a value that is not finite takes no part. *dets
 * (owned by ctx, valid until its next cnms_merge) receives the *n_dets
 * results in SAHI's order: each its merged box (rounded to float), score
 * and class, and in anchor the index of the record that kept it. The
 * rules (docs/contracts.md, "Tiles"): a first pass in float32 orders the
 * records (score descending, then x1, y1, x2, y2 ascending, then the
 * index) and decides the keepers and what each absorbs; greedy NMM and
 * NMM then merge each absorbed record whose float64 metric with the box
 * merged so far is above the threshold into the enclosing box (the score
 * the higher, the class the keeper's unless the other's score is equal
 * or higher), and drop the others. With CNMS_MERGE_RULES_CONSISTENT: one
 * float64 metric (0 where its denominator is not > 0) matched at >= the
 * threshold in both passes, the order of the doubles, NMM claiming only
 * records after the claimer in that order, the merged class the keeper's
 * unless another's score is higher, and a record that fails the merge
 * kept alone, its own result right after its keeper's. */
cnms_status cnms_merge (cnms_ctx *ctx, const double *boxes,
    const double *scores, const int32_t *classes, int n,
    const cnms_merge_params *m, const cnms_det **dets, int *n_dets);

/* The detections of one frame_width x frame_height frame cut into
 * n_slices slices (cnms_slice_grid's, and where wanted the whole frame
 * {0, 0, W, H} as a last slice, as SAHI's standard prediction): slice i's
 * tensor is frame i of batch ([B, ...], B = n_slices) or frames[i].tensor
 * (batch NULL), decoded as cnms_detect_batch decodes a frame of the
 * slice's size under p (the model's size, the thresholds and NMS of each
 * slice), its records then mapped into the frame as SAHI maps them (in
 * slice pixels x1, y1 at least 0 and x2, y2 at most the frame's size; a
 * record without x1 < x2 and y1 < y2 dropped; then shifted by the slice's
 * origin, in double) and merged by cnms_merge under m: *dets (owned by
 * ctx, until its next call) as cnms_merge's, anchor the index of the
 * keeping record among the slices' records in slice order. Layouts of
 * boxes only (yolov8, yolov5, end2end; AUTO choosing one): others are
 * CNMS_ERR_UNSUPPORTED. A slice bad on its own fails the call, naming
 * it. cnms_ctx_report and cnms_ctx_payload are left empty. */
cnms_status cnms_detect_tiles (cnms_ctx *ctx, const cnms_tensor *batch,
    const cnms_frame *frames, const cnms_slice *slices, int n_slices,
    int frame_width, int frame_height, cnms_layout layout,
    const cnms_params *p, const cnms_merge_params *m, const cnms_det **dets,
    int *n_dets);

/* Plain torchvision-compatible NMS on host arrays.
 * boxes: [n][4] x1 y1 x2 y2; scores: [n]; classes: [n] or NULL.
 * Boxes or scores that are not finite take no part. Class-aware when
 * classes != NULL and !class_agnostic. max_detections <= 0: no cap.
 * keep must hold n entries; receives input indices in kept order. */
cnms_status cnms_nms (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep);

/* Plain greedy NMS of oriented boxes on host arrays, detectron2's
 * nms_rotated with the polygon IoU of docs/contracts.md ("Oriented
 * boxes"). boxes: [n][5] cx cy w h angle (radians); the rest as cnms_nms.
 * A box with a value or score that is not finite takes no part; a box
 * without w > 0 and h > 0 is kept where its score puts it but overlaps
 * nothing. */
cnms_status cnms_nms_rotated (cnms_ctx *ctx, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int class_agnostic, int max_detections, int64_t *keep, int *n_keep);

/* Plain lane NMS on host arrays, LaneATT's nms() (docs/contracts.md,
 * "Lanes": the mean horizontal distance over the shared rows below
 * distance, in model pixels): proposals [n][5+S]
 * (S = n_offsets, 2 .. 2^20), scores [n]; a proposal takes part when its
 * score, start_y and length are finite, |start_y (S-1)| and |length| are
 * at most 2^20, and its start row lies in [0, S-1].
 * keep (n entries) receives input indices in kept order;
 * max_detections <= 0: no cap. */
cnms_status cnms_nms_lanes (cnms_ctx *ctx, const float *proposals,
    int n_offsets, const float *scores, int n, float distance,
    int max_detections, int64_t *keep, int *n_keep);

/* Runs the CUDA work of ctx on stream (a cudaStream_t of the context's
 * device, created in the CUDA context that is current when ctx is used),
 * instead of the stream ctx made for itself; NULL goes back to ctx's own
 * stream. For an application that already runs its inference on a stream:
 * cnms_detect on a device tensor (on_device) then follows that work on the
 * same stream, with no extra synchronisation, and returns once its own
 * results are on the host (it synchronises the stream). The stream stays
 * the caller's: ctx never destroys it, and must not be used after it is
 * destroyed. ctx still owns every buffer it uses. CNMS_ERR_UNSUPPORTED on
 * a CPU context. */
cnms_status cnms_ctx_set_cuda_stream (cnms_ctx *ctx, void *stream);

/* Number of usable CUDA devices; 0 without a CUDA build or device. */
int cnms_cuda_device_count (void);

const char *cnms_status_str (cnms_status s);
/* cnms_layout_info (l)->name, "unknown" for a value that is no layout. */
const char *cnms_layout_name (cnms_layout l);

#ifdef __cplusplus
}
#endif
#endif /* CUDANMS_H */
