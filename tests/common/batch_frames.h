/* Seeded frames of every layout for the batch tests (tests/lib/test_batch.c
 * on either backend, tests/gpu/test_batch_device.c with device tensors):
 * clustered boxes, oriented boxes, lanes, poses and masks with scores
 * around the threshold, so that NMS suppresses and keeps in every frame. */
#ifndef CNMS_TEST_BATCH_FRAMES_H
#define CNMS_TEST_BATCH_FRAMES_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "rng.h"

/* The layouts a batch test walks, and how a frame of each is drawn. */
static const cnms_layout bf_layouts[] = {
  CNMS_LAYOUT_YOLOV8, CNMS_LAYOUT_YOLOV5, CNMS_LAYOUT_END2END,
  CNMS_LAYOUT_YOLOV8_OBB, CNMS_LAYOUT_LANEATT, CNMS_LAYOUT_YOLOV8_POSE,
  CNMS_LAYOUT_YOLOV8_SEG,
};
#define BF_N_LAYOUTS ((int) (sizeof bf_layouts / sizeof bf_layouts[0]))

/* The values a row holds besides its N (the classes, lane rows, keypoints
 * or coefficients are fixed per layout) and the prototypes' size. */
#define BF_CLASSES 3
#define BF_LANE_ROWS 12
#define BF_KEYPOINTS 4
#define BF_COEFFS 3
#define BF_PROTO 16

/* A frame: its tensor's floats (as drawn; halves when f16) and dims. */
typedef struct {
  cnms_layout layout;
  int f16;
  int n;
  int64_t a, b;                 /* [1, a, b] */
  void *data;
  size_t size;
  void *protos;                 /* yolov8-seg: [1, M, Hp, Wp] */
  size_t protos_size;
  cnms_tensor t, pt;
} bf_frame;

/* The values of row r of anchor i in a [1, a, b] tensor. */
static inline float *
bf_at (float *f, const bf_frame *fr, int row, int i)
{
  return fr->layout == CNMS_LAYOUT_YOLOV5 || fr->layout == CNMS_LAYOUT_END2END
      || fr->layout == CNMS_LAYOUT_LANEATT ? &f[(size_t) i * fr->b + row] :
      &f[(size_t) row * fr->b + i];
}

/* mode: 0 random, 1 every score NaN, 2 no score above the threshold. */
static inline void
bf_make (bf_frame *fr, cnms_layout layout, int f16, int n, uint64_t seed,
    int mode)
{
  const int anchors_last = layout != CNMS_LAYOUT_YOLOV5
      && layout != CNMS_LAYOUT_END2END && layout != CNMS_LAYOUT_LANEATT;
  int values = 0, i, j, clusters;
  float *f;
  test_rng r;

  memset (fr, 0, sizeof *fr);
  test_rng_seed (&r, seed);
  fr->layout = layout;
  fr->f16 = f16;
  fr->n = n;
  switch (layout) {
    case CNMS_LAYOUT_YOLOV8:
      values = 4 + BF_CLASSES;
      break;
    case CNMS_LAYOUT_YOLOV5:
      values = 5 + BF_CLASSES;
      break;
    case CNMS_LAYOUT_END2END:
      values = 6;
      break;
    case CNMS_LAYOUT_YOLOV8_OBB:
      values = 5 + BF_CLASSES;
      break;
    case CNMS_LAYOUT_LANEATT:
      values = 5 + BF_LANE_ROWS;
      break;
    case CNMS_LAYOUT_YOLOV8_POSE:
      values = 5 + 3 * BF_KEYPOINTS;
      break;
    case CNMS_LAYOUT_YOLOV8_SEG:
      values = 4 + BF_CLASSES + BF_COEFFS;
      break;
    default:
      abort ();
  }
  fr->a = anchors_last ? values : n;
  fr->b = anchors_last ? n : values;
  f = calloc ((size_t) values * (size_t) (n > 0 ? n : 1), sizeof (float));
  if (f == NULL)
    abort ();
  clusters = 1 + n / (2 + test_rng_int (&r, 0, 6));
  for (i = 0; i < n; i++) {
    const int c = test_rng_int (&r, 0, clusters);
    test_rng cr;
    float cx, cy, w, h;

    test_rng_seed (&cr, seed * 31u + (uint64_t) c * 7919u + 5u);
    cx = test_rng_float (&cr, 0.0f, 640.0f) + test_rng_float (&r, -6, 6);
    cy = test_rng_float (&cr, 0.0f, 640.0f) + test_rng_float (&r, -6, 6);
    w = test_rng_float (&cr, 4.0f, 150.0f) + test_rng_float (&r, -4, 4);
    h = test_rng_float (&cr, 4.0f, 150.0f) + test_rng_float (&r, -4, 4);
    for (j = 0; j < values; j++)
      *bf_at (f, fr, j, i) = test_rng_float (&r, 0.0f, 0.6f);
    switch (layout) {
      case CNMS_LAYOUT_END2END:
        *bf_at (f, fr, 0, i) = cx - w / 2;
        *bf_at (f, fr, 1, i) = cy - h / 2;
        *bf_at (f, fr, 2, i) = cx + w / 2;
        *bf_at (f, fr, 3, i) = cy + h / 2;
        *bf_at (f, fr, 5, i) = (float) test_rng_int (&r, 0, BF_CLASSES);
        break;
      case CNMS_LAYOUT_LANEATT:
        /* logits, start_y, start_x, length, x offsets along a line */
        *bf_at (f, fr, 0, i) = test_rng_float (&r, -2.0f, 2.0f);
        *bf_at (f, fr, 1, i) = test_rng_float (&r, -2.0f, 2.0f);
        *bf_at (f, fr, 2, i) = test_rng_float (&r, 0.0f, 0.5f);
        *bf_at (f, fr, 3, i) = cx;
        *bf_at (f, fr, 4, i) = (float) test_rng_int (&r, 2, BF_LANE_ROWS);
        for (j = 0; j < BF_LANE_ROWS; j++)
          *bf_at (f, fr, 5 + j, i) = cx + (w - 77.0f) * (float) j * 0.5f
              + test_rng_float (&r, -3.0f, 3.0f);
        break;
      default:
        *bf_at (f, fr, 0, i) = cx;
        *bf_at (f, fr, 1, i) = cy;
        *bf_at (f, fr, 2, i) = w;
        *bf_at (f, fr, 3, i) = h;
        if (layout == CNMS_LAYOUT_YOLOV5)
          *bf_at (f, fr, 4, i) = test_rng_float (&r, 0.3f, 1.0f);
        if (layout == CNMS_LAYOUT_YOLOV8_OBB)
          *bf_at (f, fr, 4 + BF_CLASSES, i) = test_rng_float (&r, -0.8f,
              2.4f);
        if (layout == CNMS_LAYOUT_YOLOV8_POSE)
          for (j = 0; j < BF_KEYPOINTS; j++) {
            *bf_at (f, fr, 5 + 3 * j, i) = cx + test_rng_float (&r, -30, 30);
            *bf_at (f, fr, 6 + 3 * j, i) = cy + test_rng_float (&r, -30, 30);
          }
        if (layout == CNMS_LAYOUT_YOLOV8_SEG)
          for (j = 0; j < BF_COEFFS; j++)
            *bf_at (f, fr, 4 + BF_CLASSES + j, i) =
                test_rng_float (&r, -2.0f, 2.0f);
        break;
    }
    if (mode != 0) {
      /* the rows that make the score */
      const int first = layout == CNMS_LAYOUT_YOLOV5 ? 4 :
          layout == CNMS_LAYOUT_LANEATT ? 0 : 4;
      const int last = layout == CNMS_LAYOUT_END2END ? 4 :
          layout == CNMS_LAYOUT_LANEATT ? 1 :
          layout == CNMS_LAYOUT_YOLOV8_POSE ? 4 :
          layout == CNMS_LAYOUT_YOLOV5 ? 4 + BF_CLASSES :
          3 + BF_CLASSES;
      for (j = first; j <= last; j++)
        *bf_at (f, fr, j, i) = mode == 1 ? NAN :
            layout == CNMS_LAYOUT_LANEATT ? (j == 0 ? 9.0f : -9.0f) : 0.01f;
    }
  }
  fr->size = (size_t) values * (size_t) n * (f16 ? 2 : 4);
  if (f16) {
    uint16_t *h = malloc (fr->size > 0 ? fr->size : 2);

    if (h == NULL)
      abort ();
    cnms_floats_to_halves (f, (size_t) values * (size_t) n, h);
    free (f);
    fr->data = h;
  } else {
    fr->data = f;
  }
  memset (&fr->t, 0, sizeof fr->t);
  fr->t.data = fr->data;
  fr->t.size = fr->size;
  fr->t.dtype = f16 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  fr->t.n_dims = 3;
  fr->t.dims[0] = 1;
  fr->t.dims[1] = fr->a;
  fr->t.dims[2] = fr->b;
  if (layout == CNMS_LAYOUT_YOLOV8_SEG) {
    const size_t np = (size_t) BF_COEFFS * BF_PROTO * BF_PROTO;
    float *pf = malloc (np * sizeof (float));

    if (pf == NULL)
      abort ();
    for (i = 0; i < (int) np; i++)
      pf[i] = test_rng_float (&r, -1.0f, 1.0f);
    fr->protos_size = np * (f16 ? 2 : 4);
    if (f16) {
      uint16_t *h = malloc (fr->protos_size);

      if (h == NULL)
        abort ();
      cnms_floats_to_halves (pf, np, h);
      free (pf);
      fr->protos = h;
    } else {
      fr->protos = pf;
    }
    memset (&fr->pt, 0, sizeof fr->pt);
    fr->pt.data = fr->protos;
    fr->pt.size = fr->protos_size;
    fr->pt.dtype = fr->t.dtype;
    fr->pt.n_dims = 4;
    fr->pt.dims[0] = 1;
    fr->pt.dims[1] = BF_COEFFS;
    fr->pt.dims[2] = BF_PROTO;
    fr->pt.dims[3] = BF_PROTO;
  }
}

static inline void
bf_free (bf_frame *fr)
{
  free (fr->data);
  free (fr->protos);
  memset (fr, 0, sizeof *fr);
}

/* The params of a batch test: the threshold the frames are drawn about,
 * a small model so that masks stay small. */
static inline void
bf_params (cnms_params *p, cnms_layout layout)
{
  cnms_params_init (p);
  p->score_threshold = 0.3f;
  p->iou = 0.5f;
  p->max_detections = 100;
  if (layout == CNMS_LAYOUT_YOLOV8_POSE)
    p->keypoint_dims = 3;
  if (layout == CNMS_LAYOUT_LANEATT)
    p->score_threshold = 0.5f;
}

/* Per-class caps on p (c: room for BF_CLASSES): every class at most 2,
 * class 0 at most 1, and 5 records in all, so that the caps and then
 * max_detections both bite. */
static inline void
bf_caps (cnms_params *p, cnms_class_params *c)
{
  int i;

  for (i = 0; i < BF_CLASSES; i++)
    cnms_class_params_init (&c[i], p);
  c[0].max_detections = 1;
  p->classes = c;
  p->n_classes = BF_CLASSES;
  p->max_detections_per_class = 2;
  p->max_detections = 5;
}

/* 1 when a batch frame's result r equals cnms_detect's on ctx (dets, n,
 * its report and payload), bit for bit; else 0 with the reason in why. */
static inline int
bf_same (const cnms_frame_result *r, cnms_status st, const cnms_det *dets,
    int n, const cnms_report *rep, const cnms_payloads *pl, char *why,
    size_t why_size)
{
  if (r->status != st) {
    snprintf (why, why_size, "status %d, alone %d", (int) r->status,
        (int) st);
    return 0;
  }
  if (st != CNMS_OK) {
    /* a failed frame has no records */
    if (r->n_dets != 0 || r->dets != NULL) {
      snprintf (why, why_size, "failed (%d) with %d records", (int) st,
          r->n_dets);
      return 0;
    }
    return 1;
  }
  if (r->n_dets != n) {
    snprintf (why, why_size, "%d records, alone %d", r->n_dets, n);
    return 0;
  }
  if (n > 0 && memcmp (r->dets, dets, (size_t) n * sizeof *dets) != 0) {
    snprintf (why, why_size, "records differ");
    return 0;
  }
  if (memcmp (&r->report, rep, sizeof *rep) != 0) {
    snprintf (why, why_size, "reports differ (candidates %d / %d, kept "
        "%d / %d)", r->report.candidates, rep->candidates, r->report.kept,
        rep->kept);
    return 0;
  }
  if (r->payload.head != pl->head || r->payload.n != pl->n
      || r->payload.size != pl->size
      || (pl->n > 0 && memcmp (r->payload.records, pl->records,
              (size_t) pl->n * sizeof *pl->records) != 0)
      || (pl->size > 0 && memcmp (r->payload.data, pl->data,
              pl->size) != 0)) {
    snprintf (why, why_size, "payloads differ (head %d / %d, n %d / %d, "
        "%zu / %zu bytes)", (int) r->payload.head, (int) pl->head,
        r->payload.n, pl->n, r->payload.size, pl->size);
    return 0;
  }
  return 1;
}

#endif /* CNMS_TEST_BATCH_FRAMES_H */
