/* cnms_tensor_shape's auto rule and errors, cnms_detect's argument
 * checks, and the CUDA backend's absence on a machine without one. */
#include <string.h>

#include "cudanms.h"
#include "check.h"
#include "tensors.h"

static float data[16];

static cnms_tensor
dims_tensor (int n_dims, int64_t d0, int64_t d1, int64_t d2)
{
  /* the exact bytes of the dims (size is checked on its own below) */
  cnms_tensor t = tensor_dims (data, 4, CNMS_DTYPE_FLOAT32, n_dims, d0, d1,
      d2);
  int i;

  for (i = 0; i < n_dims; i++)
    t.size *= (size_t) (t.dims[i] > 0 ? t.dims[i] : 1);
  return t;
}

static void
expect_shape (cnms_tensor t, cnms_layout req, cnms_layout layout,
    int anchors, int classes)
{
  cnms_shape s;
  char msg[256];
  cnms_status st = cnms_tensor_shape (&t, NULL, req, NULL, &s, msg,
      sizeof msg);

  CHECK_INT (st, CNMS_OK);
  if (st != CNMS_OK) {
    fprintf (stderr, "  %s\n", msg);
    return;
  }
  CHECK_INT (s.layout, layout);
  CHECK_INT (s.n_anchors, anchors);
  CHECK_INT (s.n_classes, classes);
}

static void
expect_bad (cnms_tensor t, cnms_layout req)
{
  cnms_shape s;
  char msg[256] = "";

  CHECK_INT (cnms_tensor_shape (&t, NULL, req, NULL, &s, msg, sizeof msg),
      CNMS_ERR_BAD_TENSOR);
  /* one line that says something */
  CHECK (strlen (msg) > 10 && strchr (msg, '\n') == NULL);
}

static void
test_auto_rule (void)
{
  expect_shape (dims_tensor (3, 1, 84, 8400), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_YOLOV8, 8400, 80);
  expect_shape (dims_tensor (2, 84, 8400, 0), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_YOLOV8, 8400, 80);
  expect_shape (dims_tensor (3, 1, 25200, 85), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_YOLOV5, 25200, 80);
  expect_shape (dims_tensor (3, 1, 300, 6), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_END2END, 300, 0);
  expect_shape (dims_tensor (2, 300, 6, 0), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_END2END, 300, 0);
  /* b == 6 wins: a one-class yolov5 tensor needs the layout forced */
  expect_shape (dims_tensor (3, 1, 8400, 6), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_END2END, 8400, 0);
  expect_shape (dims_tensor (3, 1, 8400, 6), CNMS_LAYOUT_YOLOV5,
      CNMS_LAYOUT_YOLOV5, 8400, 1);
  /* one-class yolov8 */
  expect_shape (dims_tensor (3, 1, 5, 8400), CNMS_LAYOUT_AUTO,
      CNMS_LAYOUT_YOLOV8, 8400, 1);
  /* forced layouts only need to fit */
  expect_shape (dims_tensor (3, 1, 84, 8400), CNMS_LAYOUT_YOLOV5,
      CNMS_LAYOUT_YOLOV5, 84, 8395);
  expect_shape (dims_tensor (3, 1, 6, 4), CNMS_LAYOUT_YOLOV8,
      CNMS_LAYOUT_YOLOV8, 4, 2);
}

static void
test_bad_shapes (void)
{
  cnms_tensor t;

  expect_bad (dims_tensor (3, 1, 5, 5), CNMS_LAYOUT_AUTO);      /* square */
  expect_bad (dims_tensor (3, 1, 6, 4), CNMS_LAYOUT_AUTO);      /* a > b, b < 6 */
  expect_bad (dims_tensor (3, 2, 84, 8400), CNMS_LAYOUT_AUTO);  /* batch 2 */
  expect_bad (dims_tensor (1, 8400, 0, 0), CNMS_LAYOUT_AUTO);
  t = dims_tensor (4, 1, 1, 84);
  t.dims[3] = 8400;
  expect_bad (t, CNMS_LAYOUT_AUTO);
  expect_bad (dims_tensor (3, 1, 0, 8400), CNMS_LAYOUT_AUTO);   /* empty */
  expect_bad (dims_tensor (3, 1, 84, 0), CNMS_LAYOUT_YOLOV8);
  expect_bad (dims_tensor (3, 1, -84, 8400), CNMS_LAYOUT_AUTO);
  expect_bad (dims_tensor (3, 1, 84, 8400), CNMS_LAYOUT_END2END);
  expect_bad (dims_tensor (3, 1, 4, 8400), CNMS_LAYOUT_YOLOV8); /* no class */
  expect_bad (dims_tensor (3, 1, 8400, 5), CNMS_LAYOUT_YOLOV5);
  expect_bad (dims_tensor (3, 1, 84, (int64_t) 1 << 33), CNMS_LAYOUT_AUTO);

  /* truncated: one element short, in both data types */
  t = dims_tensor (3, 1, 84, 8400);
  t.size = 84 * 8400 * 4 - 1;
  expect_bad (t, CNMS_LAYOUT_AUTO);
  t.size = 84 * 8400 * 4;
  expect_shape (t, CNMS_LAYOUT_AUTO, CNMS_LAYOUT_YOLOV8, 8400, 80);
  t.dtype = CNMS_DTYPE_FLOAT16;
  t.size = 84 * 8400 * 2 - 1;
  expect_bad (t, CNMS_LAYOUT_AUTO);
  t.size = 84 * 8400 * 2;
  expect_shape (t, CNMS_LAYOUT_AUTO, CNMS_LAYOUT_YOLOV8, 8400, 80);

  t.dtype = (cnms_dtype) 7;
  expect_bad (t, CNMS_LAYOUT_AUTO);
  t = dims_tensor (3, 1, 84, 8400);
  t.data = NULL;
  expect_bad (t, CNMS_LAYOUT_AUTO);
}

static void
test_detect_args (void)
{
  static const float t6[6] = { 1, 1, 5, 5, 0.9f, 0 };
  cnms_ctx *ctx;
  cnms_tensor t = tensor3 (t6, 1, 6);
  cnms_params p, bad;
  const cnms_det *d;
  int n;

  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  cnms_params_init (&p);
  CHECK_FLOAT (p.score_threshold, 0.25f);
  CHECK_FLOAT (p.iou, 0.45f);
  CHECK_INT (p.max_detections, 300);
  CHECK_INT (p.max_candidates, 30000);
  CHECK_INT (p.letterbox, 1);
  CHECK_FLOAT (p.lane_distance, 50.0f);
  CHECK_INT (p.keypoint_dims, 0);
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 1);
  CHECK_INT (strlen (cnms_ctx_error (ctx)), 0);

#define EXPECT_INVALID(field, value) \
  bad = p; \
  bad.field = value; \
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &bad, &d, &n), \
      CNMS_ERR_INVALID_ARG); \
  CHECK (strlen (cnms_ctx_error (ctx)) > 0)
  EXPECT_INVALID (iou, 1.5f);
  EXPECT_INVALID (iou, -0.1f);
  EXPECT_INVALID (max_detections, 0);
  EXPECT_INVALID (max_candidates, 0);
  EXPECT_INVALID (model_width, 0);
  EXPECT_INVALID (frame_height, -1);
#undef EXPECT_INVALID

  t.on_device = 1;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_ERR_INVALID_ARG);
  CHECK (strstr (cnms_ctx_error (ctx), "CUDA") != NULL);
  t.on_device = 0;
  t.size = 5;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_ERR_BAD_TENSOR);
  CHECK (strstr (cnms_ctx_error (ctx), "bytes") != NULL);
  CHECK_INT (n, 0);
  cnms_ctx_free (ctx);
}

static void
test_no_cuda (void)
{
  cnms_ctx *ctx = (cnms_ctx *) &ctx;

  if (cnms_cuda_device_count () > 0) {
    printf ("test-shape: a CUDA device is present, skipping test_no_cuda\n");
    return;
  }
  CHECK (cnms_ctx_new (CNMS_BACKEND_CUDA, -1, &ctx) != CNMS_OK);
  CHECK (ctx == NULL);
}

static void
test_names (void)
{
  CHECK (strcmp (cnms_layout_name (CNMS_LAYOUT_YOLOV8), "yolov8") == 0);
  CHECK (strcmp (cnms_layout_name (CNMS_LAYOUT_END2END), "end2end") == 0);
  CHECK (strcmp (cnms_status_str (CNMS_OK), "ok") == 0);
  CHECK (strlen (cnms_status_str (CNMS_ERR_BAD_TENSOR)) > 0);
}

int
main (void)
{
  test_auto_rule ();
  test_bad_shapes ();
  test_detect_args ();
  test_no_cuda ();
  test_names ();
  return check_result ("test-shape");
}
