/* cnms_ctx_report: what cnms_detect found in its tensor, on hand-made
 * tensors whose every row's fate is known: the shape, the candidates
 * before and after max_candidates, the rows with a non-finite score, and
 * the end2end rows whose class value is no class id or a fractional one,
 * with the first such value in row order. Each case runs with and without
 * the AVX paths (the same report), and a failed call leaves a zeroed
 * report. */
#include <math.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "check.h"
#include "tensors.h"

static cnms_ctx *ctx;

/* Runs t under p on both paths; the report of the AVX run into *out. */
static int
detect_both (const cnms_tensor *t, cnms_layout l, const cnms_params *p,
    cnms_report *out)
{
  const cnms_det *d;
  cnms_report no_avx;
  int n = -1, n2 = -1;

  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 1);
  CHECK_INT (cnms_detect (ctx, t, NULL, l, p, &d, &n2), CNMS_OK);
  no_avx = *cnms_ctx_report (ctx);
  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
  CHECK_INT (cnms_detect (ctx, t, NULL, l, p, &d, &n), CNMS_OK);
  *out = *cnms_ctx_report (ctx);
  CHECK_INT (n, n2);
  CHECK (memcmp (&no_avx, out, sizeof no_avx) == 0);
  return n;
}

/* YOLOv8 [1, 4+3, 8]: anchors 0-2 have no finite score (all NaN: -inf;
 * a +inf class; all -inf), 3-5 pass 0.25 with disjoint boxes, 6-7 do not. */
static void
test_yolov8 (void)
{
  const float nan = NAN, inf = INFINITY;
  const float cls[8][3] = {
    {nan, nan, nan}, {0.1f, inf, 0.2f}, {-inf, -inf, -inf},
    {0.9f, 0.1f, 0.0f}, {0.2f, 0.8f, nan}, {0.0f, 0.0f, 0.7f},
    {0.2f, 0.1f, 0.0f}, {nan, 0.25f, 0.1f}
  };
  float data[7 * 8];
  cnms_tensor t;
  cnms_params p;
  cnms_report r;
  int n, i;

  for (i = 0; i < 8; i++)
    put_v8 (data, 3, 8, i, 40.0f + 70.0f * (float) i, 100.0f, 40.0f, 40.0f,
        cls[i]);
  t = tensor3 (data, 7, 8);
  cnms_params_init (&p);
  n = detect_both (&t, CNMS_LAYOUT_AUTO, &p, &r);
  CHECK_INT (n, 3);
  CHECK_INT (r.shape.layout, CNMS_LAYOUT_YOLOV8);
  CHECK_INT (r.shape.n_anchors, 8);
  CHECK_INT (r.shape.n_classes, 3);
  CHECK_INT (r.shape.n_values, 7);
  CHECK_INT (r.shape.n_lane_rows, 0);
  CHECK_INT (r.shape.n_keypoints, 0);
  CHECK_INT (r.shape.n_coeffs, 0);
  CHECK_INT (r.candidates, 3);
  CHECK_INT (r.candidates_dropped, 0);
  CHECK_INT (r.kept, 3);
  CHECK_INT (r.nonfinite_scores, 3);
  CHECK_INT (r.invalid_classes, 0);
  CHECK_INT (r.fractional_classes, 0);

  /* the cap keeps the best two (0.9, 0.8): one dropped */
  p.max_candidates = 2;
  n = detect_both (&t, CNMS_LAYOUT_AUTO, &p, &r);
  CHECK_INT (n, 2);
  CHECK_INT (r.candidates, 3);
  CHECK_INT (r.candidates_dropped, 1);
  CHECK_INT (r.kept, 2);
  CHECK_INT (r.nonfinite_scores, 3);
}

/* YOLOv5 [1, 6, 5+2]: score = objectness x best class. Row 0 NaN
 * objectness, row 1 +inf objectness, row 2 a -inf best class (both
 * classes -inf): three non-finite scores; rows 3 and 4 pass. */
static void
test_yolov5 (void)
{
  const float inf = INFINITY;
  const float obj[6] = { NAN, inf, 0.9f, 0.9f, 0.8f, 0.1f };
  const float cls[6][2] = {
    {0.5f, 0.5f}, {0.5f, 0.1f}, {-inf, -inf}, {0.9f, 0.1f}, {0.1f, 0.9f},
    {0.9f, 0.1f}
  };
  float data[6 * 7];
  cnms_tensor t;
  cnms_params p;
  cnms_report r;
  int i;

  for (i = 0; i < 6; i++)
    put_v5 (data, 2, i, 40.0f + 70.0f * (float) i, 100.0f, 40.0f, 40.0f,
        obj[i], cls[i]);
  t = tensor3 (data, 6, 7);
  cnms_params_init (&p);
  CHECK_INT (detect_both (&t, CNMS_LAYOUT_YOLOV5, &p, &r), 2);
  CHECK_INT (r.shape.layout, CNMS_LAYOUT_YOLOV5);
  CHECK_INT (r.shape.n_anchors, 6);
  CHECK_INT (r.shape.n_classes, 2);
  CHECK_INT (r.shape.n_values, 7);
  CHECK_INT (r.candidates, 2);
  CHECK_INT (r.nonfinite_scores, 3);
  CHECK_INT (r.kept, 2);
}

/* End2end rows x1 y1 x2 y2 score class, in both dtypes. */
static void
test_end2end (void)
{
  const float rows[9][6] = {
    {10, 10, 50, 50, 0.9f, 2.0f},       /* a detection */
    {60, 10, 90, 50, 0.8f, -1.0f},      /* invalid: dropped, first */
    {10, 60, 50, 90, NAN, 1.0f},        /* non-finite score */
    {60, 60, 90, 90, 0.7f, 3.5f},       /* fractional: class 3, first */
    {100, 10, 140, 50, 0.6f, -2.0f},    /* invalid, second */
    {100, 60, 140, 90, 0.5f, 7.25f},    /* fractional, second */
    {150, 10, 190, 50, 0.1f, 0.5f},     /* below the threshold: nothing */
    {150, 60, 190, 90, -INFINITY, 1.0f},        /* non-finite score */
    {200, 10, 240, 50, 0.4f, NAN}       /* invalid (NaN class) */
  };
  float data[9 * 6];
  uint16_t half[9 * 6];
  cnms_tensor t, th;
  cnms_params p;
  cnms_report r;
  int i, f;

  memcpy (data, rows, sizeof data);
  t = tensor3 (data, 9, 6);
  cnms_params_init (&p);
  CHECK_INT (detect_both (&t, CNMS_LAYOUT_AUTO, &p, &r), 3);
  CHECK_INT (r.shape.layout, CNMS_LAYOUT_END2END);
  CHECK_INT (r.shape.n_anchors, 9);
  CHECK_INT (r.shape.n_classes, 0);
  CHECK_INT (r.shape.n_values, 6);
  CHECK_INT (r.candidates, 3);
  CHECK_INT (r.kept, 3);
  CHECK_INT (r.nonfinite_scores, 2);
  CHECK_INT (r.invalid_classes, 3);
  CHECK_INT (r.fractional_classes, 2);
  CHECK_FLOAT (r.first_invalid_class, -1.0f);
  CHECK_FLOAT (r.first_fractional_class, 3.5f);

  /* float16: every value above is a half but the scores 0.9 .. 0.1, which
   * round; the fates stay the same */
  cnms_floats_to_halves (data, 9 * 6, half);
  th = t;
  th.data = half;
  th.dtype = CNMS_DTYPE_FLOAT16;
  th.size = sizeof half;
  CHECK_INT (detect_both (&th, CNMS_LAYOUT_END2END, &p, &r), 3);
  CHECK_INT (r.nonfinite_scores, 2);
  CHECK_INT (r.invalid_classes, 3);
  CHECK_INT (r.fractional_classes, 2);
  CHECK_FLOAT (r.first_invalid_class, -1.0f);
  CHECK_FLOAT (r.first_fractional_class, 3.5f);

  /* 2^24 is no class id; 2^24 - 1 is one */
  for (i = 0; i < 9; i++)
    for (f = 0; f < 6; f++)
      data[i * 6 + f] = rows[0][f];
  data[1 * 6 + 5] = 16777216.0f;
  data[2 * 6 + 5] = 16777215.0f;
  data[2 * 6 + 0] = 300.0f;
  data[2 * 6 + 2] = 340.0f;
  CHECK_INT (detect_both (&t, CNMS_LAYOUT_END2END, &p, &r), 8);
  CHECK_INT (r.invalid_classes, 1);
  CHECK_FLOAT (r.first_invalid_class, 16777216.0f);
  CHECK_INT (r.fractional_classes, 0);
  CHECK_FLOAT (r.first_fractional_class, 0.0f);
}

/* A tensor of nothing but NaN: every row's score is non-finite. */
static void
test_all_nan (void)
{
  float data[6 * 84];
  cnms_tensor t;
  cnms_params p;
  cnms_report r;
  int i;

  for (i = 0; i < 6 * 84; i++)
    data[i] = NAN;
  t = tensor3 (data, 84, 6);
  cnms_params_init (&p);
  CHECK_INT (detect_both (&t, CNMS_LAYOUT_YOLOV8, &p, &r), 0);
  CHECK_INT (r.shape.n_anchors, 6);
  CHECK_INT (r.nonfinite_scores, 6);
  CHECK_INT (r.candidates, 0);
}

/* The report of a call that fails, or finds an empty end2end result. */
static void
test_failed_and_empty (void)
{
  static const cnms_report zero;
  const cnms_det *d;
  float data[6 * 7];
  cnms_tensor t;
  cnms_params p;
  cnms_report r;
  int n;

  memset (data, 0, sizeof data);
  data[4] = 0.9f;
  data[5] = 1.0f;
  data[2] = data[3] = 10.0f;
  t = tensor3 (data, 6, 7);
  cnms_params_init (&p);
  CHECK_INT (detect_both (&t, CNMS_LAYOUT_YOLOV5, &p, &r), 1);
  CHECK_INT (r.candidates, 1);
  /* short data: a bad tensor, and no report */
  t.size -= 4;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV5, &p, &d, &n),
      CNMS_ERR_BAD_TENSOR);
  CHECK (memcmp (cnms_ctx_report (ctx), &zero, sizeof zero) == 0);
  /* a bad parameter: no report either */
  t.size += 4;
  p.iou = 2.0f;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV5, &p, &d, &n),
      CNMS_ERR_INVALID_ARG);
  CHECK (memcmp (cnms_ctx_report (ctx), &zero, sizeof zero) == 0);
  /* [1, 0, 6]: the shape, nothing else */
  p.iou = 0.5f;
  t = tensor3 (NULL, 0, 6);
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 0);
  r = *cnms_ctx_report (ctx);
  CHECK_INT (r.shape.layout, CNMS_LAYOUT_END2END);
  CHECK_INT (r.shape.n_anchors, 0);
  CHECK_INT (r.shape.n_values, 6);
  CHECK_INT (r.candidates, 0);
  CHECK_INT (r.nonfinite_scores, 0);
  /* no context: a zeroed report */
  CHECK (memcmp (cnms_ctx_report (NULL), &zero, sizeof zero) == 0);
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  test_yolov8 ();
  test_yolov5 ();
  test_end2end ();
  test_all_nan ();
  test_failed_and_empty ();
  cnms_ctx_free (ctx);
  return check_result ("test-report");
}
