/* Internal: the interface between the front end (front/) and the
 * backends. Not installed, never included by gst/. The arrows run one way:
 * the front end calls a backend through cnms_backend_ops; a backend sees
 * only core/ (this header and the arithmetic: cnms_math.h, cnms_heads.h,
 * cnms_lanes.h), never the front end. */
#ifndef CNMS_INTERNAL_H
#define CNMS_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The part of a context that a backend owns and fills: its state, the
 * message of the last failure, and what it holds and did. The front end
 * embeds one in each cnms_ctx and reads it back through the public
 * accessors (cnms_ctx_error, cnms_ctx_memory, ...). */
typedef struct cnms_backend_ctx {
  void *priv;                   /* backend state */
  char error[256];
  uint64_t alloc_count;
  size_t host_bytes, pinned_bytes, device_bytes;
  cnms_report report;           /* of the last detect: the backend fills
                                 * candidates and the row counts, the front
                                 * end the rest */
  int timing;                   /* cnms_ctx_set_timing() */
  double last_gpu_us;           /* set by a backend that times; else -1 */
} cnms_backend_ctx;

/* Records a formatted message on ctx and returns status. */
static inline cnms_status cnms_fail (cnms_backend_ctx *ctx,
    cnms_status status, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static inline cnms_status
cnms_fail (cnms_backend_ctx *ctx, cnms_status status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (ctx->error, sizeof ctx->error, fmt, ap);
  va_end (ap);
  return status;
}

/* The geometries of the engine: what a candidate is and which overlap
 * test the mask phase asks (cnms_math.h). Sort, cap, resolve and output
 * are the same for all. */
enum {
  CNMS_GEOM_BOX = 0,            /* x1 y1 x2 y2: cnms_suppresses */
  CNMS_GEOM_OBB = 1,            /* cx cy w h angle: cnms_obb_suppresses */
  CNMS_GEOM_LANE = 2            /* a LaneATT proposal: cnms_lane_close */
};

/* Bytes of a dtype element; 0 for an unknown dtype. */
static inline size_t
cnms_dtype_size (cnms_dtype d)
{
  return d == CNMS_DTYPE_FLOAT32 ? 4 : d == CNMS_DTYPE_FLOAT16 ? 2 : 0;
}

/* Bytes of a tensor of a resolved shape: the only size a backend reads. */
static inline size_t
cnms_shape_bytes (const cnms_shape *s, cnms_dtype dtype)
{
  return (size_t) s->n_anchors * (size_t) s->n_values
      * cnms_dtype_size (dtype);
}

/* The heads of the kept records of a detect (docs/contracts.md,
 * "Keypoints" and "Segmentation masks"): the payload rows of the kept
 * records' anchors, read where the tensor lies. What a head needs of the
 * tensors is in their shape (its counts and sizes). */
typedef struct cnms_heads_args {
  cnms_head kind;               /* a head the backend runs after NMS */
  const cnms_tensor *t;         /* the whole detection tensor */
  const cnms_tensor *protos;    /* the second tensor (seg's prototypes), or
                                 * NULL */
  cnms_shape shape;             /* of both, as cnms_tensor_shape gave it */
  int row0;                     /* the first payload row of an anchor */
  int model_w, model_h;
  cnms_map map;
  /* given to the heads call (not to the detect): one entry per kept
   * record, its place and, for masks, its rectangle (cnms_payload_table),
   * and all their bytes */
  const cnms_payload *masks;
  size_t mask_bytes;
} cnms_heads_args;

/* One detect, as the front end hands it to a backend: every argument
 * checked, the shape resolved. t and shape are what the engine decodes
 * and suppresses: for yolov8-pose and yolov8-seg, the yolov8 tensor of
 * their first rows (cx cy w h and the scores). */
typedef struct cnms_job {
  const cnms_tensor *t;
  cnms_shape shape;
  const cnms_params *p;
  cnms_map map;
  cnms_class_rules rules;       /* thresholds, IoUs and caps by class */
  float lane_distance;          /* CNMS_GEOM_LANE: the lane NMS's distance */
  int geom;                     /* CNMS_GEOM_* */
  int suppress;                 /* NMS runs on the candidates (every
                                 * layout but end2end, decode only) */
  /* the heads the front end asks after the detect (NULL: none): a
   * backend may enqueue them behind its NMS, and then give their values
   * to the heads call that follows */
  const cnms_heads_args *heads;
} cnms_job;

/* What a detect returns: the kept records in kept order, after the caps
 * and max_detections, and for lanes their points (payload: S x y pairs a
 * record, NaN where a row has no point); for heads the detect made
 * itself (a batch's keypoints and masks: detect_batch), their values as
 * the heads call gives them, payload_bytes of them, and for masks
 * payload_table, each record's rectangle and offset as the backend made
 * them: the front end takes the values only when they are its table's;
 * else NULL. */
typedef struct {
  const cnms_det *dets;
  int n_dets;
  const void *payload;
  size_t payload_bytes;
  const cnms_payload *payload_table;
} cnms_backend_out;

/* A backend implements these. The front end checks every argument first,
 * so a backend sees only well-formed input: shape already resolved,
 * params in range, n > 0. A failing create releases what it made
 * itself; destroy is only called on a context that was fully created. */
typedef struct cnms_backend_ops {
  const char *name;
  cnms_status (*create) (cnms_backend_ctx *ctx, int device_id);
  void (*destroy) (cnms_backend_ctx *ctx);
  /* decode, NMS (of job->geom), the caps and max_detections */
  cnms_status (*detect) (cnms_backend_ctx *ctx, const cnms_job *job,
      cnms_backend_out *out);
  /* The heads h of the kept records dets[0 .. n) (n >= 0) of the detect
   * of job that has just returned them: *payload receives their values
   * (keypoints: 3 K floats a record; masks: h->mask_bytes bytes, at least
   * 1 allocated), the same as the detect made behind its NMS when
   * job->heads was h. NULL when the backend has no heads. */
  cnms_status (*heads) (cnms_backend_ctx *ctx, const cnms_job *job,
      const cnms_heads_args *h, const cnms_det *dets, int n,
      const void **payload);
  /* plain NMS; geom: CNMS_GEOM_BOX ([n][4] boxes) or CNMS_GEOM_OBB
   * ([n][5]) */
  cnms_status (*nms) (cnms_backend_ctx *ctx, int geom, const float *boxes,
      const float *scores, const int32_t *classes, int n, float iou,
      int class_agnostic, int max_detections, int64_t *keep, int *n_keep);
  /* cnms_nms_lanes (arguments checked); NULL when the backend does not
   * run lanes. */
  cnms_status (*nms_lanes) (cnms_backend_ctx *ctx, const float *proposals,
      int n_offsets, const float *scores, int n, float distance,
      int max_detections, int64_t *keep, int *n_keep);
  /* cnms_ctx_test_option (CNMS_TEST_*); NULL when the backend has none. */
  void (*test_option) (cnms_backend_ctx *ctx, int option, int value);
  /* cnms_ctx_set_cuda_stream; NULL when the backend has no streams. */
  cnms_status (*set_stream) (cnms_backend_ctx *ctx, void *stream);
  /* The detects of n jobs (n >= 1, one frame each: one layout and
   * tensor shape but N, one p, each its own map and tensor) at once, as
   * many detects: outs[i] (for lanes with their points; with the values
   * of jobs[i].heads where the backend made them, their bytes and for
   * masks their table; the front end takes them when they are its
   * table's, else it asks the heads call after) and,
   * of reps[i], the decode's counts
   * (candidates, nonfinite_scores, invalid and fractional classes, the
   * first ones), valid until the next call. CNMS_ERR_UNSUPPORTED when it
   * does not take these jobs (the front end runs them one by one). NULL:
   * none. */
  cnms_status (*detect_batch) (cnms_backend_ctx *ctx, const cnms_job *jobs,
      int n, cnms_backend_out *outs, cnms_report *reps);
  /* cnms_merge (arguments checked, n > 0): boxes [n][4], scores [n],
   * classes [n], merged under m into out (room for n records), *n_out of
   * them, the same bits as the front end's host merge (kernels/front/
   * tiles.c, with core/cnms_merge.h's arithmetic).
   * CNMS_ERR_UNSUPPORTED, with no message and nothing else done, when it
   * does not take these records (the front end then merges on the host).
   * NULL: none. */
  cnms_status (*merge) (cnms_backend_ctx *ctx, const double *boxes,
      const double *scores, const int32_t *classes, int n,
      const cnms_merge_params *m, cnms_det *out, int *n_out);
} cnms_backend_ops;

#ifdef __cplusplus
}
#endif
#endif /* CNMS_INTERNAL_H */
