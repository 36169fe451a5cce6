/* Internal to the CPU backend: its buffers and the pieces of the pipeline
 * (decode, sort, greedy NMS), one file each. */
#ifndef CNMS_CPU_PRIV_H
#define CNMS_CPU_PRIV_H

#include "cnms_internal.h"

/* A host buffer owned by a context. It only ever grows. */
typedef struct {
  void *p;
  size_t cap;                   /* bytes */
} cnms_buf;

/* Makes b hold at least bytes (contents are not kept). Counts the
 * allocation on ctx. */
cnms_status cnms_buf_reserve (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes);
void cnms_buf_release (cnms_backend_ctx *ctx, cnms_buf *b);

/* Header of the count-header candidate buffer [count | records]; padded
 * to one record so that the records stay 32-byte aligned. */
typedef struct {
  int32_t count;
  int32_t reserved[7];
} cnms_cand_header;

/* Scratch for the greedy walk, sized for k boxes and n_classes classes. */
typedef struct {
  float *kbox;                  /* [k][4] kept boxes, in kept order */
  float *karea;                 /* [k] */
  int32_t *klink;               /* [k] previous kept box of the same class */
  int32_t *head;                /* [n_classes] last kept box per class */
} cnms_greedy_ws;

/* Decodes every anchor of t into records at recs (capacity: all anchors),
 * in anchor order. scratch must hold max(N, 5 + C) floats, best and
 * best_cls N entries each. Returns the number of candidates. */
int cnms_cpu_decode (const cnms_tensor *t, const cnms_shape *shape,
    const cnms_map *map, float score_threshold, float *scratch, float *best,
    int32_t *best_cls, cnms_det *recs);

/* n float16 values to float, exactly (cnms_half_to_float's values; the
 * F16C instructions where the CPU has them). */
void cnms_cpu_halfs_to_floats (const uint16_t *h, int n, float *out);

/* Stable sort of keys[0..n) ascending, permuting perm along. Requires
 * the low 32 bits of the keys (the index) to ascend already in array
 * order, which holds for keys made from cnms_sort_key in index order:
 * only the score half is then sorted on. tmp_keys/tmp_perm: n entries. */
void cnms_cpu_sort (uint64_t *keys, uint32_t *perm, uint64_t *tmp_keys,
    uint32_t *tmp_perm, int n);

/* Exact greedy NMS over k boxes already in order. classes: dense ids in
 * [0, n_classes), or NULL for class-agnostic. Writes the positions of the
 * kept boxes into kept (stops after max_keep) and returns their number. */
int cnms_cpu_greedy (const float *boxes, const float *areas,
    const int32_t *classes, int n_classes, int k, float iou, int max_keep,
    const cnms_greedy_ws *ws, int32_t *kept);

/* Maps arbitrary int32 class ids to dense ids [0, n_dense) in order of
 * first appearance. table_keys/table_vals: a power of two >= 2 * n slots,
 * table_mask = slots - 1. Returns n_dense. */
int cnms_cpu_dense_classes (const int32_t *classes, const uint32_t *order,
    int n, int32_t *dense, int32_t *table_keys, int32_t *table_vals,
    uint32_t table_mask);

#endif /* CNMS_CPU_PRIV_H */
