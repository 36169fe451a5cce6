/* The tensors of the bad-input matrix (README "Bad input"), shared by the
 * library's test (tests/lib/test_matrix.c) and the element's
 * (tests/gst/test_matrix.c), which check the same rows through each. Model and
 * frame are MATRIX_W x MATRIX_H unless a row says otherwise. Header-only;
 * every builder returns malloc'ed floats, *n_floats of them. */
#ifndef CNMS_TEST_MATRIX_TENSORS_H
#define CNMS_TEST_MATRIX_TENSORS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MATRIX_W 320
#define MATRIX_H 240

/* yolov8 [1, 4+C, N] with anchor a at (cx, cy, w, h), class cls, score s. */
static inline void
matrix_v8_put (float *t, int n_classes, int n_anchors, int a, float cx,
    float cy, float w, float h, int cls, float s)
{
  t[0 * n_anchors + a] = cx;
  t[1 * n_anchors + a] = cy;
  t[2 * n_anchors + a] = w;
  t[3 * n_anchors + a] = h;
  t[(size_t) (4 + cls) * n_anchors + a] = s;
}

/* NaN and Inf in scores and boxes: yolov8 [1, 5, 7], one class. Only
 * anchors 0 and 6 are finite: they are the only candidates. */
#define MATRIX_NONFINITE_N 7
static inline float *
matrix_nonfinite (size_t *n_floats)
{
  const int n = MATRIX_NONFINITE_N;
  float *t = calloc ((size_t) 5 * n, sizeof (float));

  matrix_v8_put (t, 1, n, 0, 50, 50, 20, 20, 0, 0.875f);
  matrix_v8_put (t, 1, n, 1, 60, 60, 20, 20, 0, NAN);
  matrix_v8_put (t, 1, n, 2, 70, 70, 20, 20, 0, INFINITY);
  matrix_v8_put (t, 1, n, 3, NAN, 80, 20, 20, 0, 0.75f);
  matrix_v8_put (t, 1, n, 4, 90, 90, INFINITY, 20, 0, 0.625f);
  matrix_v8_put (t, 1, n, 5, 100, -INFINITY, 20, 20, 0, 0.5f);
  matrix_v8_put (t, 1, n, 6, 200, 100, 10, 10, 0, 0.375f);
  *n_floats = (size_t) 5 * n;
  return t;
}

/* Negative and zero w/h: yolov8 [1, 5, 4] (layout=yolov8: the auto rule
 * wants more anchors than rows); only anchor 3 is a box. */
#define MATRIX_NEGATIVE_N 4
static inline float *
matrix_negative (size_t *n_floats)
{
  const int n = MATRIX_NEGATIVE_N;
  float *t = calloc ((size_t) 5 * n, sizeof (float));

  matrix_v8_put (t, 1, n, 0, 50, 50, -20, 20, 0, 0.875f);
  matrix_v8_put (t, 1, n, 1, 50, 50, 20, -20, 0, 0.75f);
  matrix_v8_put (t, 1, n, 2, 50, 50, 0, 20, 0, 0.625f);
  matrix_v8_put (t, 1, n, 3, 100, 100, 20, 20, 0, 0.5f);
  *n_floats = (size_t) 5 * n;
  return t;
}

/* All scores equal: yolov8 [1, 5, 4] (layout=yolov8), score 0.5 each. Anchor 1 is anchor
 * 0's box (suppressed: the tie goes to the lower anchor); 2 and 3 stand
 * alone. Kept: 0, 2, 3. */
#define MATRIX_EQUAL_N 4
static inline float *
matrix_equal (size_t *n_floats)
{
  const int n = MATRIX_EQUAL_N;
  float *t = calloc ((size_t) 5 * n, sizeof (float));

  matrix_v8_put (t, 1, n, 0, 20, 20, 20, 20, 0, 0.5f);
  matrix_v8_put (t, 1, n, 1, 20, 20, 20, 20, 0, 0.5f);
  matrix_v8_put (t, 1, n, 2, 100, 100, 20, 20, 0, 0.5f);
  matrix_v8_put (t, 1, n, 3, 60, 20, 20, 20, 0, 0.5f);
  *n_floats = (size_t) 5 * n;
  return t;
}

/* Every anchor a candidate: yolov8 [1, 5, 1000], disjoint 4x4 boxes on an
 * 8-pixel grid, score 0.5 but 0.875 for anchors 3 and 700..709. With
 * max-candidates 10 the best ten by (score desc, anchor asc) are 3 and
 * 700..708. */
#define MATRIX_ALL_N 1000
static inline float *
matrix_all_candidates (size_t *n_floats)
{
  const int n = MATRIX_ALL_N;
  float *t = calloc ((size_t) 5 * n, sizeof (float));
  int a;

  for (a = 0; a < n; a++) {
    float s = (a == 3 || (a >= 700 && a < 710)) ? 0.875f : 0.5f;

    matrix_v8_put (t, 1, n, a, (float) (a % 40) * 8 + 4,
        (float) (a / 40) * 8 + 4, 4, 4, 0, s);
  }
  *n_floats = (size_t) 5 * n;
  return t;
}

/* 100000 classes: yolov8 [1, 100004, 2] (layout=yolov8). Anchor 0: class 99999 (0.75),
 * anchor 1 overlapping it: class 0 (0.625); both kept class-aware. */
#define MATRIX_MANY_CLASSES 100000
static inline float *
matrix_many_classes (size_t *n_floats)
{
  const int n = 2, c = MATRIX_MANY_CLASSES;
  float *t = calloc ((size_t) (4 + c) * n, sizeof (float));

  matrix_v8_put (t, c, n, 0, 100, 100, 40, 40, 99999, 0.75f);
  matrix_v8_put (t, c, n, 1, 102, 100, 40, 40, 0, 0.625f);
  *n_floats = (size_t) (4 + c) * n;
  return t;
}

/* End2end [1, 3, 6] for the frame-size rows: a box past the right and
 * bottom edges of a 640x480 frame, one inside, one left of x = 40. */
static inline float *
matrix_frames (size_t *n_floats)
{
  static const float rows[18] = {
    600, 440, 700, 500, 0.875f, 0,
    200, 100, 210, 110, 0.75f, 1,
    0, 0, 40, 240, 0.625f, 2,
  };
  float *t = malloc (sizeof rows);

  memcpy (t, rows, sizeof rows);
  *n_floats = 18;
  return t;
}

#endif /* CNMS_TEST_MATRIX_TENSORS_H */
