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
  CNMS_LAYOUT_AUTO = 0,
  CNMS_LAYOUT_YOLOV5,     /* [1, N, 5+C]: cx cy w h obj cls...          */
  CNMS_LAYOUT_YOLOV8,     /* [1, 4+C, N]: cx cy w h cls... (strided by N) */
  CNMS_LAYOUT_END2END,    /* [1, K, 6]:   x1 y1 x2 y2 score class         */
  CNMS_LAYOUT_YOLOV8_OBB, /* [1, 4+C+1, N]: cx cy w h cls... angle (strided
                           * by N): oriented boxes, never chosen by AUTO */
  CNMS_LAYOUT_LANEATT,    /* [1, N, 5+S]: 2 logits, start_y, start_x,
                           * length, S x offsets: LaneATT's lane
                           * proposals (cnms_detect_lanes), never chosen by
                           * AUTO */
  CNMS_LAYOUT_YOLOV8_POSE,  /* [1, 4+1+K*D, N]: cx cy w h, the person
                             * score, K keypoints of D values (x y, and a
                             * visibility score when D = 3), strided by N:
                             * one class, keypoints
                             * (cnms_ctx_keypoints); never chosen by AUTO */
  CNMS_LAYOUT_YOLOV8_SEG    /* [1, 4+C+M, N]: cx cy w h, C class scores,
                             * M mask coefficients (strided by N), with
                             * prototypes [1, M, Hp, Wp]: instance masks
                             * (cnms_detect_seg, cnms_ctx_masks); never
                             * chosen by AUTO */
} cnms_layout;

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
  int n_anchors;                /* N (or K for end2end) */
  int n_classes;                /* C; 0 for end2end; for laneatt S, the
                                 * lane's rows (x offsets) */
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

/* Fills p with the defaults above: class-aware, the model size for both
 * model and frame, letterbox. */
void cnms_params_init (cnms_params *p);

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
void cnms_floats_to_halfs (const float *f, size_t n, uint16_t *h);
/* n IEEE halves to floats (exact: every half is a float). */
void cnms_halfs_to_floats (const uint16_t *h, size_t n, float *f);

/* Corners of the oriented box (cx cy w h angle) into out[8] = x y of
 * c + u + v, c - u + v, c - u - v, c + u - v, where u = w/2 (cos angle,
 * sin angle) and v = h/2 (-sin angle, cos angle), with the sine and cosine
 * that the overlap test uses (docs/contracts.md, "Oriented boxes"). */
void cnms_obb_corners (float cx, float cy, float w, float h, float angle,
    float out[8]);

/* The axis-aligned hull of the oriented box of d (an oriented layout's
 * record) clipped to [0, frame_width] x [0, frame_height], into out[4] =
 * x1 y1 x2 y2: the rectangle of its ROI. */
void cnms_obb_hull (const cnms_det *d, int frame_width, int frame_height,
    float out[4]);

/* Recognises the layout of t. requested = AUTO applies the rule:
 *   3 dims [1, a, b] (or 2 dims [a, b]);
 *   b == 6                        -> end2end  [K = a]
 *   b >= 6 and a > b              -> yolov5   [N = a, C = b - 5]
 *   a >= 5 and b > a              -> yolov8   [N = b, C = a - 4]
 * (a one-class yolov5 tensor [1, N, 6] therefore needs layout=yolov5)
 *   anything else                 -> CNMS_ERR_BAD_TENSOR
 * A forced layout only checks that the dims fit it: yolov8-pose [1, a, N]
 * needs a >= 7 (n_classes 1; cnms_pose_shape checks the keypoints),
 * yolov8-seg [1, a, N] needs a >= 6 (n_classes a - 4: the classes and the
 * coefficients together, which only the prototypes tell apart;
 * cnms_seg_shape splits them). Every dim must be
 * > 0, except K = 0 of an end2end [1, 0, 6] (a valid empty result: data
 * may then be NULL, and cnms_detect returns no detection). t->size must be
 * exactly the tensor's bytes: short or long is CNMS_ERR_BAD_TENSOR. On
 * failure writes a one-line reason into msg (if msg != NULL). */
cnms_status cnms_tensor_shape (const cnms_tensor *t, cnms_layout requested,
    cnms_shape *out, char *msg, size_t msg_size);

/* Pose (docs/contracts.md, "Keypoints"): checks a yolov8-pose tensor
 * [1, 5+K*D, N] (or [5+K*D, N]) for keypoint_dims D (2 or 3; 0: 3):
 * the cnms_tensor_shape checks, then K = (rows - 5) / D >= 1 exactly
 * (CNMS_ERR_BAD_TENSOR when D does not divide rows - 5). Fills *out (layout
 * yolov8-pose, N, n_classes 1) and *n_keypoints (K). */
cnms_status cnms_pose_shape (const cnms_tensor *t, int keypoint_dims,
    cnms_shape *out, int *n_keypoints, char *msg, size_t msg_size);

/* Segmentation (docs/contracts.md, "Segmentation masks"): checks a
 * yolov8-seg detection tensor dets [1, 4+C+M, N] (or [4+C+M, N]) with its
 * prototypes protos [1, M, Hp, Wp] (or [M, Hp, Wp]): both of one dtype,
 * each of exactly its dims' bytes, M >= 1, C = rows - 4 - M >= 1, Hp and
 * Wp >= 1 (at most CNMS_SIZE_MAX), M * Hp * Wp below 2^31. Fills *out
 * (layout yolov8-seg, N, C) and, when not NULL, *n_coeffs (M),
 * *proto_height (Hp) and *proto_width (Wp). protos NULL is
 * CNMS_ERR_INVALID_ARG ("prototypes missing"). */
cnms_status cnms_seg_shape (const cnms_tensor *dets, const cnms_tensor *protos,
    cnms_shape *out, int *n_coeffs, int *proto_height, int *proto_width,
    char *msg, size_t msg_size);

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
  int kept;                     /* detections returned (*n_dets) */
  int nonfinite_scores;         /* rows whose score, as the layout defines
                                 * it, is NaN or +-Inf: never candidates */
  int invalid_classes;          /* end2end rows with a candidate's score
                                 * whose class value is not an integer in
                                 * [0, 2^24): dropped */
  int fractional_classes;       /* end2end rows with a candidate's score and
                                 * a fractional class value: truncated */
  float first_invalid_class;    /* the first such class value, in row order */
  float first_fractional_class;
} cnms_report;

const cnms_report *cnms_ctx_report (const cnms_ctx *ctx);

/* Decode + NMS. On success *dets points at *n_dets records in kept order
 * (score desc, anchor asc), owned by ctx and valid until the next call.
 * CNMS_LAYOUT_YOLOV8_POSE: the first five rows are decoded and suppressed
 * exactly as a one-class yolov8 tensor, then the kept records' keypoints
 * are gathered (cnms_ctx_keypoints); D is p->keypoint_dims.
 * CNMS_LAYOUT_YOLOV8_SEG and CNMS_LAYOUT_LANEATT take their own calls
 * (cnms_detect_seg, cnms_detect_lanes): CNMS_ERR_INVALID_ARG here. */
cnms_status cnms_detect (cnms_ctx *ctx, const cnms_tensor *t,
    const cnms_layout layout, const cnms_params *p,
    const cnms_det **dets, int *n_dets);

/* The keypoints of the records of the last cnms_detect of a yolov8-pose
 * tensor, valid as its records: kept record k (in kept order), keypoint j
 * (0 .. K-1) at kp[3 (k K + j) + 0, 1, 2] = x, y in frame pixels (mapped
 * as the box's centre: (v - pad) / gain, letterbox or stretch, not
 * clipped) and its visibility score as the tensor holds it (NaN when
 * D = 2). *n_keypoints receives K, *n_dims D (either may be NULL). NULL
 * (and 0, 0) after any other call. */
const float *cnms_ctx_keypoints (const cnms_ctx *ctx, int *n_keypoints,
    int *n_dims);

/* An instance mask (cnms_ctx_masks): the frame-pixel rectangle x .. x +
 * width - 1, y .. y + height - 1 (the pixels X, Y with x1 <= X < x2 and
 * y1 <= Y < y2 of its record's box: x = ceil (x1), width = ceil (x2) - x,
 * likewise y; width or height may be 0), and where its width * height
 * bytes (row-major, each 0 or 1) lie in the masks' data. */
typedef struct {
  int x, y, width, height;
  size_t offset;
} cnms_mask;

/* The most bytes the masks of one cnms_detect_seg may take (1 GiB): more
 * is CNMS_ERR_NO_MEMORY, before the masks' bytes are allocated. */
#define CNMS_MASK_BYTES_MAX ((size_t) 1 << 30)

/* Decode + NMS of a yolov8-seg tensor and the masks of its kept records
 * (docs/contracts.md, "Segmentation masks"). dets [1, 4+C+M, N] and protos
 * [1, M, Hp, Wp] as cnms_seg_shape checks them; the first 4+C rows are
 * decoded and suppressed exactly as a yolov8 tensor of C classes. Each
 * kept record's mask: its coefficients' dot product with the prototypes
 * (a logit per prototype pixel, m ascending, no FMA), sampled bilinearly
 * (align_corners=False, edge clamped) at each frame pixel of its box
 * mapped back to the model input (letterbox or stretch undone), set where
 * that logit is > 0. Either tensor may be a device tensor on the CUDA
 * backend (each its own on_device). Results as cnms_detect; the masks by
 * cnms_ctx_masks. */
cnms_status cnms_detect_seg (cnms_ctx *ctx, const cnms_tensor *dets,
    const cnms_tensor *protos, const cnms_params *p, const cnms_det **out,
    int *n_out);

/* The masks of the last cnms_detect_seg, valid as its records: masks[k]
 * for kept record k; *data receives the bytes (mask k's at
 * *data + masks[k].offset), *n the number of masks (= records). NULL (and
 * *data NULL, *n 0) after any other call. */
const cnms_mask *cnms_ctx_masks (const cnms_ctx *ctx, const uint8_t **data,
    int *n);

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

/* Lanes (docs/contracts.md, "Lanes"): LaneATT's proposals and its NMS
 * (devIoU: the mean horizontal distance over the shared rows below
 * distance, in model pixels), exact on every backend.
 *
 * cnms_detect_lanes decodes a CNMS_LAYOUT_LANEATT tensor [1, N, 5+S] or
 * [N, 5+S] (float32 or float16, S >= 2; rows: two class logits, start_y,
 * start_x, length, S x offsets in model pixels, row 0 at the bottom):
 * score = softmax (logits)[1], a candidate when above p->score_threshold
 * (strictly) and its rows are valid; then lane NMS in (score desc, index
 * asc) order, at most p->max_detections kept, after the p->max_candidates
 * cap. p's model and frame sizes and letterbox map the points; its IoU
 * and per-class fields play no part, but are checked as for cnms_detect
 * (an IoU outside [0, 1] is CNMS_ERR_INVALID_ARG). A record (cnms_det) of a lane: its
 * score, class 0, its proposal index (anchor), x1 y1 x2 y2 the frame
 * rectangle of its points (all 0 when it has none) and angle 0. */
cnms_status cnms_detect_lanes (cnms_ctx *ctx, const cnms_tensor *t,
    const cnms_params *p, float distance, const cnms_det **dets,
    int *n_dets);

/* The points of the lanes of the last cnms_detect_lanes, valid as its
 * records: lane k (in kept order), row i (0: the bottom row) at
 * points[2 (k S + i)] (x) and [2 (k S + i) + 1] (y), frame pixels; NaN
 * for a row that is not part of the lane or whose point lies outside the
 * frame (LaneATT's proposals_to_pred: the rows from the start row to the
 * end row, and below the start row while the x stays in the model
 * width). *n_rows receives S. NULL (and *n_rows 0) after any other call. */
const float *cnms_ctx_lane_points (const cnms_ctx *ctx, int *n_rows);

/* Plain lane NMS on host arrays, LaneATT's nms(): proposals [n][5+S]
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
const char *cnms_layout_name (cnms_layout l);

#ifdef __cplusplus
}
#endif
#endif /* CUDANMS_H */
