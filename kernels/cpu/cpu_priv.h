/* Internal to the CPU backend: the pieces of the pipeline (decode, sort,
 * greedy NMS), one file each, over the buffers of cpu_buf.h. */
#ifndef CNMS_CPU_PRIV_H
#define CNMS_CPU_PRIV_H

#include "cnms_internal.h"
#include "cpu_buf.h"

/* Header of the count-header candidate buffer [count | records]; padded
 * to one record so that the records stay 32-byte aligned. */
typedef struct {
  int32_t count;
  int32_t reserved[7];
} cnms_cand_header;

/* Scratch for the greedy walk. It owns its buffers: they grow with the
 * input, and the index's arena also with its needs (keeping its
 * contents) but only for an input at least as large as any before, so a
 * warm context allocates nothing for inputs that are not larger. */
typedef struct {
  cnms_buf kbox;                /* [k][4] kept boxes, in kept order */
  cnms_buf karea;               /* [k] */
  cnms_buf klink;               /* [k] previous kept box */
  cnms_buf cells;               /* the index's cells */
  cnms_buf arena;               /* the cells' boxes */
  cnms_buf bigbuf;              /* the boxes of the big (or only) cell */
  cnms_buf gbox, garea;         /* the boxes in order (grouped by class);
                                 * oriented boxes: hulls and positions */
  cnms_buf gobb;                /* oriented boxes made ready, in order */
  cnms_buf glane;               /* lanes made ready, in order */
  cnms_buf gpos;                /* position of each grouped box */
  cnms_buf start;               /* [n_classes + 1] class starts */
  cnms_buf flag;                /* [k] kept by its class's walk */
  size_t grow_k;                /* largest input the arena grew for */
  int no_avx;                   /* the SSE2 scan even where AVX is there
                                 * (CNMS_TEST_CPU_NO_AVX) */
  uint64_t tests;               /* the pairs of oriented boxes or lanes
                                 * that the last cnms_cpu_greedy handed to
                                 * the overlap rule (what the index did
                                 * not rule out; for the tests) */
} cnms_greedy_ws;

#define CNMS_GREEDY_BUFS(w) &(w)->kbox, &(w)->karea, &(w)->klink, \
    &(w)->cells, &(w)->arena, &(w)->bigbuf, &(w)->gbox, &(w)->garea, \
    &(w)->gpos, &(w)->start, &(w)->flag, &(w)->gobb, &(w)->glane
#define CNMS_GREEDY_N_BUFS 13

/* Decodes every anchor of t into records at recs (capacity: all anchors),
 * in anchor order, a record's score tested against its class's threshold
 * in rules (score_threshold: the frame-wide one, which the report's
 * end2end class counts use). scratch must hold max(N, 5 + C) floats, best
 * and best_cls N entries each. no_avx: the SSE2 or scalar paths only.
 * Returns the number of candidates; counts the rows report names (its
 * nonfinite_scores, invalid_classes and fractional_classes with their
 * first values; report starts zeroed). */
int cnms_cpu_decode (const cnms_tensor *t, const cnms_shape *shape,
    const cnms_map *map, const cnms_class_rules *rules,
    float score_threshold, int no_avx, float *scratch, float *best,
    int32_t *best_cls, cnms_det *recs, cnms_report *report);

/* n float16 values to float, exactly (cnms_half_to_float's values; the
 * F16C instructions where the CPU has them). */
void cnms_cpu_halves_to_floats (const uint16_t *h, int n, float *out);

/* Stable sort of keys[0..n) ascending, permuting perm along. Requires
 * the low 32 bits of the keys (the index) to ascend already in array
 * order, which holds for keys made from cnms_sort_key in index order:
 * only the score half is then sorted on. tmp_keys/tmp_perm: n entries. */
void cnms_cpu_sort (uint64_t *keys, uint32_t *perm, uint64_t *tmp_keys,
    uint32_t *tmp_perm, int n);

/* The boxes of a greedy walk, in order: position i is the box at
 * base + stride * rows[i]: x1 y1 x2 y2 (CNMS_GEOM_BOX), cx cy w h with
 * the angle angle_off floats on (CNMS_GEOM_OBB), or a lane proposal of
 * 5 + n_strips + 1 floats (CNMS_GEOM_LANE). */
typedef struct {
  const float *base;
  size_t stride;                /* floats from one row to the next */
  const uint32_t *rows;
  int geom;
  int angle_off;
  int n_strips;                 /* lanes: S - 1 */
} cnms_box_src;

/* A lane made ready for the walk: its x offsets and its rows. */
typedef struct {
  const float *x;
  int32_t start, end;
} cnms_lane_ref;

/* Exact greedy NMS over k boxes already in order: box j is kept unless an
 * earlier kept box of its class (any class when agnostic) suppresses it by
 * the geometry's rule (boxes: cnms_iou_above with areas from
 * cnms_box_area; oriented boxes: cnms_obb_iou_above; lanes:
 * cnms_lane_close, iou the distance); iou in [0, 1]; class c's
 * walk takes class_iou[c] instead where class_iou is not NULL (n_classes
 * entries; class-aware only). classes: ids in [0, n_classes) by position,
 * or NULL for class-agnostic.
 * Writes the positions of the kept boxes into kept (stops after max_keep)
 * and their number into *n_kept. Fails only when memory runs out. */
cnms_status cnms_cpu_greedy (cnms_backend_ctx *ctx, cnms_greedy_ws *ws,
    const cnms_box_src *src, const int32_t *classes, int n_classes, int k,
    float iou, const float *class_iou, int max_keep, int32_t *kept,
    int *n_kept);

/* Maps arbitrary int32 class ids to dense ids [0, n_dense) in order of
 * first appearance. table_keys/table_vals: a power of two >= 2 * n slots,
 * table_mask = slots - 1. Returns n_dense. */
int cnms_cpu_dense_classes (const int32_t *classes, const uint32_t *order,
    int n, int32_t *dense, int32_t *table_keys, int32_t *table_vals,
    uint32_t table_mask);

/* The buffers of the lane calls (cpu_lanes.c); grow-only. */
typedef struct {
  cnms_buf rows;                /* candidates' proposal rows as float */
  cnms_buf recs;                /* candidate records */
  cnms_buf keys, perm, tmp_keys, tmp_perm;
  cnms_buf kept;
  cnms_buf out;                 /* kept records */
  cnms_buf points;              /* [kept][S][2] frame points */
} cnms_lane_ws;

#define CNMS_LANE_BUFS(w) &(w)->rows, &(w)->recs, &(w)->keys, &(w)->perm, \
    &(w)->tmp_keys, &(w)->tmp_perm, &(w)->kept, &(w)->out, &(w)->points
#define CNMS_LANE_N_BUFS 9

/* A LaneATT detect (records and points into *res) and cnms_nms_lanes on
 * the CPU (the front end has checked the arguments and resolved the
 * shape). */
cnms_status cnms_cpu_detect_lanes (cnms_backend_ctx *ctx, cnms_lane_ws *lw,
    cnms_greedy_ws *gw, const cnms_job *job, cnms_backend_out *res);
cnms_status cnms_cpu_nms_lanes (cnms_backend_ctx *ctx, cnms_lane_ws *lw,
    cnms_greedy_ws *gw, const float *proposals, int n_offsets,
    const float *scores, int n, float distance, int max_detections,
    int64_t *keep, int *n_keep);

/* The buffers of the heads (cpu_heads.c); grow-only. */
typedef struct {
  cnms_buf keypoints;           /* [kept][K][3] */
  cnms_buf mask_bytes;          /* every mask's bytes */
  cnms_buf cols, rows;          /* a mask's samples per column and row */
  cnms_buf coef;                /* the records' coefficients */
  cnms_buf logits;              /* the records' windows of logits */
  cnms_buf protos;              /* a prototype row's span of each plane,
                                 * packed (float16 converted) */
  cnms_buf lerp;                /* two window rows sampled at the columns */
  cnms_buf plan;                /* the records' windows and the sweep's
                                 * lists */
  int no_avx;                   /* the SSE2 paths even where AVX is there
                                 * (CNMS_TEST_CPU_NO_AVX) */
} cnms_heads_ws;

#define CNMS_HEADS_BUFS(w) &(w)->keypoints, &(w)->mask_bytes, &(w)->cols, \
    &(w)->rows, &(w)->coef, &(w)->logits, &(w)->protos, &(w)->lerp, \
    &(w)->plan
#define CNMS_HEADS_N_BUFS 9

/* The heads of the kept records (cnms_backend_ops.heads): their values
 * into *payload. */
cnms_status cnms_cpu_heads (cnms_backend_ctx *ctx, cnms_heads_ws *w,
    const cnms_heads_args *h, const cnms_det *dets, int n,
    const void **payload);

#endif /* CNMS_CPU_PRIV_H */
