/* CPU decode: raw YOLO tensors -> candidate records in anchor order.
 * All arithmetic comes from cnms_math.h so that CUDA matches it. */
#include "cpu_priv.h"

/* One element of a float32 or float16 tensor as float (exact). */
static inline float
load (const void *data, cnms_dtype dtype, size_t i)
{
  if (dtype == CNMS_DTYPE_FLOAT16)
    return cnms_half_to_float (((const uint16_t *) data)[i]);
  return ((const float *) data)[i];
}

/* Elements [start, start + n) as floats: in place for float32, converted
 * into scratch for float16. */
static const float *
load_span (const void *data, cnms_dtype dtype, size_t start, int n,
    float *scratch)
{
  const uint16_t *h;
  int i;

  if (dtype == CNMS_DTYPE_FLOAT32)
    return (const float *) data + start;
  h = (const uint16_t *) data + start;
  for (i = 0; i < n; i++)
    scratch[i] = cnms_half_to_float (h[i]);
  return scratch;
}

static inline void
put_record (cnms_det *r, float score, const float *box, int32_t cls,
    int anchor)
{
  r->score = score;
  r->x1 = box[0];
  r->y1 = box[1];
  r->x2 = box[2];
  r->y2 = box[3];
  r->class_id = cls;
  r->anchor = anchor;
  r->reserved = 0;
}

/* Best class of one row: the first maximum, NaN ignored. */
static inline float
best_of (const float *cls, int n_classes, int32_t *best_cls)
{
  float best = CNMS_BEST_CLASS_INIT;
  int32_t bc = 0;
  int c;

  for (c = 0; c < n_classes; c++) {
    if (cls[c] > best) {
      best = cls[c];
      bc = c;
    }
  }
  *best_cls = bc;
  return best;
}

/* [1, N, 5+C]: anchors are rows, score = objectness x best class. */
static int
decode_yolov5 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    float thr, float *scratch, cnms_det *recs)
{
  int stride = 5 + s->n_classes;
  int n, count = 0;
  int32_t cls;
  float box[4];

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * stride,
        stride, scratch);
    float score = cnms_fmul (row[4], best_of (row + 5, s->n_classes, &cls));

    if (!cnms_score_ok (score, thr))
      continue;
    if (!cnms_map_cxcywh (m, row[0], row[1], row[2], row[3], box))
      continue;
    put_record (&recs[count++], score, box, cls, n);
  }
  return count;
}

/* [1, 4+C, N]: anchors are columns. The class maximum is taken row by row
 * so that memory is read once, sequentially, in a loop the compiler can
 * vectorise; the strict > keeps the first maximum and skips NaN. */
static int
decode_yolov8 (const cnms_tensor *t, const cnms_shape *s, const cnms_map *m,
    float thr, float *scratch, float *best, int32_t *best_cls,
    cnms_det *recs)
{
  int n_anchors = s->n_anchors;
  size_t stride = (size_t) n_anchors;
  int n, c, count = 0;
  float box[4];

  for (n = 0; n < n_anchors; n++) {
    best[n] = CNMS_BEST_CLASS_INIT;
    best_cls[n] = 0;
  }
  for (c = 0; c < s->n_classes; c++) {
    const float *row = load_span (t->data, t->dtype, (4 + c) * stride,
        n_anchors, scratch);
    for (n = 0; n < n_anchors; n++) {
      float v = row[n];
      int gt = v > best[n];
      best[n] = gt ? v : best[n];
      best_cls[n] = gt ? c : best_cls[n];
    }
  }
  for (n = 0; n < n_anchors; n++) {
    if (!cnms_score_ok (best[n], thr))
      continue;
    if (!cnms_map_cxcywh (m, load (t->data, t->dtype, n),
            load (t->data, t->dtype, stride + n),
            load (t->data, t->dtype, 2 * stride + n),
            load (t->data, t->dtype, 3 * stride + n), box))
      continue;
    put_record (&recs[count++], best[n], box, best_cls[n], n);
  }
  return count;
}

/* [1, K, 6]: x1 y1 x2 y2 score class, already suppressed upstream. */
static int
decode_end2end (const cnms_tensor *t, const cnms_shape *s,
    const cnms_map *m, float thr, float *scratch, cnms_det *recs)
{
  int n, count = 0;
  int32_t cls;
  float box[4];

  for (n = 0; n < s->n_anchors; n++) {
    const float *row = load_span (t->data, t->dtype, (size_t) n * 6, 6,
        scratch);

    if (!cnms_score_ok (row[4], thr))
      continue;
    if (!cnms_class_from_float (row[5], &cls))
      continue;
    if (!cnms_map_box (m, row[0], row[1], row[2], row[3], box))
      continue;
    put_record (&recs[count++], row[4], box, cls, n);
  }
  return count;
}

int
cnms_cpu_decode (const cnms_tensor *t, const cnms_shape *shape,
    const cnms_map *map, float score_threshold, float *scratch, float *best,
    int32_t *best_cls, cnms_det *recs)
{
  switch (shape->layout) {
    case CNMS_LAYOUT_YOLOV5:
      return decode_yolov5 (t, shape, map, score_threshold, scratch, recs);
    case CNMS_LAYOUT_YOLOV8:
      return decode_yolov8 (t, shape, map, score_threshold, scratch, best,
          best_cls, recs);
    case CNMS_LAYOUT_END2END:
      return decode_end2end (t, shape, map, score_threshold, scratch, recs);
    default:
      return 0;
  }
}
