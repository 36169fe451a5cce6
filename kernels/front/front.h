/* Internal to the front end (kernels/front/): the context, and what its
 * files share. The front end checks every argument, resolves the shape
 * (layout.c), the per-class rules (rules.c) and the heads' payload
 * (payload.c), and hands one cnms_job to the context's backend
 * (detect.c). */
#ifndef CNMS_FRONT_H
#define CNMS_FRONT_H

#include "cnms_internal.h"

/* Where a frame of a batch starts in the batch's tables, or what of it
 * stays in the backend's output (valid until the next call). */
typedef struct {
  size_t dets, table, bytes;
  const cnms_det *direct;       /* the backend's batch: its records */
  const cnms_payload *direct_table;     /* and the table of the heads' */
  const uint8_t *direct_data;   /* values it made, and those values */
} cnms_batch_at;

/* A context: the backend it runs on, the state that backend fills, and
 * the front end's own grow-only tables. */
struct cnms_ctx {
  const cnms_backend_ops *ops;
  cnms_backend backend;
  cnms_backend_ctx b;
  /* the per-class rules of the last call (rule_cap entries each) */
  float *rule_thr, *rule_iou;
  int32_t *rule_caps;
  int rule_cap;
  /* the payload of the last detect: its table (payload_cap entries) */
  cnms_payload *payload;
  size_t payload_cap;
  cnms_payloads out;            /* what cnms_ctx_payload gives */
  /* lanes kept with fewer than 2 points left out: the rest, copied */
  cnms_det *lane_dets;
  float *lane_points;
  size_t lane_dets_cap, lane_points_cap;
  /* the last cnms_detect_batch: its frames' results (batch_n), where each
   * frame's records, payload table and bytes start in the tables, its
   * reason, and the frames' tensors (2 a frame) */
  cnms_frame_result *batch;
  cnms_batch_at *batch_at;
  char (*batch_err)[256];
  cnms_tensor *batch_t;          /* 3 a frame: its tensor, prototypes and
                                 * the engine's rows of its tensor */
  const cnms_tensor **batch_pp; /* each frame's prototypes, or NULL */
  size_t batch_pp_cap;
  cnms_heads_args *batch_heads; /* each frame's heads (the backend's batch) */
  size_t batch_heads_cap;
  cnms_shape *batch_shape;      /* each frame's (its status OK) */
  cnms_params *batch_p;         /* each frame's p (its size) */
  cnms_job *batch_jobs;         /* the backend's batch: a job a frame, */
  int *batch_frame;             /* its frame, */
  cnms_backend_out *batch_out;  /* and what the backend gave */
  cnms_report *batch_rep;
  size_t batch_shape_cap, batch_p_cap, batch_jobs_cap, batch_frame_cap;
  size_t batch_out_cap, batch_rep_cap;
  cnms_det *batch_dets;
  cnms_payload *batch_table;
  uint8_t *batch_data;
  size_t batch_cap, batch_at_cap, batch_err_cap, batch_t_cap;
  size_t batch_dets_cap, batch_table_cap, batch_data_cap;
  int batch_n;
  int batch_heads_made;         /* the frames whose heads' values the
                                 * backend's batch made (kept in place) */
  /* cnms_merge (tiles.c): merge_cap records each */
  void *merge_f;                /* the records as float32 */
  int *merge_idx, *merge_order, *merge_state, *merge_next;
  int *merge_group;             /* the keepers, in output order */
  int *merge_head, *merge_tail; /* each keeper's merge list */
  int *merge_pairs;             /* the sorts' room */
  int *merge_pos;               /* each record's place in the walk */
  cnms_det *merge_out;
  size_t merge_cap;
  int host_merge;               /* CNMS_TEST_HOST_MERGE: never the
                                 * backend's merge */
  /* cnms_detect_tiles: the slices as frames, their records in the frame
   * ([boxes 4 k | scores k] doubles) */
  cnms_frame *tiles_frames;
  size_t tiles_frames_cap;
  double *tiles_boxes;
  int32_t *tiles_classes;
  size_t tiles_cap;
};

/* A layout's row of the table (layout.c). */
typedef struct {
  cnms_layout_desc d;
  int anchors_last;             /* [1, rows, N] (the anchors strided by N)
                                 * rather than [1, N, values] */
  int least;                    /* the least rows (or values) a tensor has */
  int fixed;                    /* values a row has besides its classes (or
                                 * lane rows, keypoints, coefficients) */
  int geom;                     /* CNMS_GEOM_* */
  int decode_only;              /* the tensor is NMS's result already: no
                                 * NMS runs on its candidates */
} cnms_layout_row;

/* The row of layout l (never AUTO); NULL for a value that is no layout. */
const cnms_layout_row *cnms_layout_row_of (cnms_layout l);

/* snprintf into msg (when not NULL). */
void cnms_set_msg (char *msg, size_t msg_size, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

/* detect.c: the job of tensor t (its shape resolved) under p: the map,
 * the geometry and the per-class rules (into ctx's tables). */
cnms_status cnms_job_init (cnms_ctx *ctx, const cnms_tensor *t,
    const cnms_shape *shape, const cnms_params *p, cnms_job *job);

/* detect.c: the heads of job (t's, its layout's head, when the backend
 * makes them after NMS: into *h, and job->heads = h); the engine then
 * takes the yolov8 tensor of t's box and score rows (*sub: job->t and
 * job->shape). 1 when the job has heads. */
int cnms_job_heads (cnms_job *job, cnms_head head, const cnms_tensor *t,
    const cnms_tensor *protos, const cnms_shape *shape, cnms_heads_args *h,
    cnms_tensor *sub);

/* detect.c: a lane distance: finite and >= 0 (model pixels), on a
 * backend that runs lanes. */
cnms_status cnms_check_lane_distance (cnms_ctx *ctx, float distance);

/* rules.c: the checks of p, and its per-class rules into ctx's tables. */
cnms_status cnms_check_params (cnms_ctx *ctx, const cnms_params *p);
cnms_status cnms_resolve_rules (cnms_ctx *ctx, const cnms_params *p,
    cnms_class_rules *r);

/* payload.c: the heads of a job (0 when the layout's head is none the
 * backend makes after NMS), what the records of a detect carry (the
 * payload table, the heads' values, the lanes' rule: into *out and the
 * context's payload), and the payload's table by itself. */
int cnms_heads_init (cnms_heads_args *h, const cnms_job *job, cnms_head head,
    const cnms_tensor *t, const cnms_tensor *protos,
    const cnms_shape *shape);
cnms_status cnms_payload_finish (cnms_ctx *ctx, const cnms_job *job,
    cnms_head head, cnms_heads_args *h, const cnms_shape *shape,
    cnms_backend_out *out);
/* Do a batch's frames of this head go through the backend's batch? */
int cnms_head_batched (cnms_head head);
cnms_status cnms_payload_table (cnms_ctx *ctx, cnms_head head,
    const cnms_shape *shape, const cnms_det *dets, int n, size_t *bytes);
cnms_status cnms_lanes_in_frame (cnms_ctx *ctx, const cnms_shape *shape,
    const cnms_det **dets, int *n, const void **points);
void cnms_payload_clear (cnms_ctx *ctx);
void cnms_payload_set (cnms_ctx *ctx, cnms_head head, int n,
    const void *data, size_t size);

#endif /* CNMS_FRONT_H */
