/* The heads of kept records (docs/contracts.md, "Keypoints" and
 * "Segmentation masks"): pose keypoints mapped by the box rule under
 * letterbox and stretch, D = 3 and D = 2; tiny masks worked out by hand
 * (dyadic weights and logits, so every value below is exact); the shape
 * errors of both layouts; the accessors after other calls; float16 equal
 * to float32; nothing allocated by a repeated call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms_static.h"
#include "tensors.h"

static cnms_backend backend = CNMS_BACKEND_CPU;

/* A pose anchor n of a [1, 5 + K D, N] tensor. */
static void
put_pose (float *t, int n_anchors, int n, float cx, float cy, float w,
    float h, float score, const float *kp, int kd)
{
  int r;

  t[0 * n_anchors + n] = cx;
  t[1 * n_anchors + n] = cy;
  t[2 * n_anchors + n] = w;
  t[3 * n_anchors + n] = h;
  t[4 * n_anchors + n] = score;
  for (r = 0; r < kd; r++)
    t[(5 + r) * n_anchors + n] = kp[r];
}

static int
contains (const char *s, const char *part)
{
  return strstr (s, part) != NULL;
}

/* Letterbox 640x640 -> 1280x720: gain 0.5, pad_x round (-0.1) = -0,
 * pad_y round (139.9) = 140. Keypoint (x, y) -> ((x + 0) / 0.5,
 * (y - 140) / 0.5). D = 3: the score kept; points outside the frame kept. */
static void
test_pose_letterbox (cnms_ctx *ctx)
{
  enum { N = 4, ROWS = 5 + 2 * 3 };
  float t[ROWS * N] = { 0 };
  const float kp0[6] = { 320.0f, 300.0f, 0.75f, 10.0f, 100.0f, -2.5f };
  const float kp1[6] = { 600.0f, 500.0f, 0.25f, 700.0f, 660.0f, 1.0f };
  const float kp2[6] = { 0 };
  cnms_tensor tt = tensor3 (t, ROWS, N);
  cnms_params p;
  cnms_payloads pl;
  const cnms_det *d;
  int n;

  /* anchor 0: box 270..370 x 270..370 in the model -> frame 540..740 x
   * 260..460 */
  put_pose (t, N, 0, 320.0f, 320.0f, 100.0f, 100.0f, 0.6f, kp0, 6);
  /* anchor 1: a higher score, elsewhere: kept first */
  put_pose (t, N, 1, 560.0f, 400.0f, 40.0f, 40.0f, 0.9f, kp1, 6);
  /* anchor 2: overlaps anchor 0 (IoU 0.81), lower score: suppressed */
  put_pose (t, N, 2, 325.0f, 325.0f, 100.0f, 100.0f, 0.5f, kp2, 6);
  /* anchor 3: below the threshold */
  put_pose (t, N, 3, 100.0f, 300.0f, 10.0f, 10.0f, 0.1f, kp2, 6);
  cnms_params_init (&p);
  p.frame_width = 1280;
  p.frame_height = 720;
  n = detect_checked (ctx, &tt, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
  CHECK_INT (n, 2);
  if (n != 2)
    return;
  CHECK_INT (d[0].anchor, 1);
  CHECK_INT (d[1].anchor, 0);
  CHECK_INT (d[1].class_id, 0);
  CHECK_FLOAT (d[1].x1, 540.0f);
  CHECK_FLOAT (d[1].y1, 260.0f);
  CHECK_FLOAT (d[1].x2, 740.0f);
  CHECK_FLOAT (d[1].y2, 460.0f);
  CHECK_INT (cnms_ctx_report (ctx)->shape.layout, CNMS_LAYOUT_YOLOV8_POSE);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_classes, 1);
  CHECK_INT (cnms_ctx_report (ctx)->kept, 2);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_keypoints, 2);
  CHECK_INT (cnms_ctx_report (ctx)->shape.keypoint_dims, 3);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_KEYPOINTS);
  CHECK (pl.data != NULL);
  CHECK_INT (pl.n, 2);
  if (pl.data == NULL || pl.n != 2)
    return;
  CHECK_INT (pl.records[0].n_points, 2);
  CHECK_INT (pl.records[0].point_dims, 3);
  CHECK_INT (pl.records[1].n_points, 2);
  CHECK_INT (pl.records[1].point_dims, 3);
  /* record 0 = anchor 1: (600, 500) -> (1200, 720); (700, 660) -> (1400,
   * 1040), outside the frame, not clipped */
  CHECK_FLOAT (payload_float (&pl, 0, 0), 1200.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 1), 720.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 2), 0.25f);
  CHECK_FLOAT (payload_float (&pl, 0, 3), 1400.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 4), 1040.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 5), 1.0f);
  /* record 1 = anchor 0: (320, 300) -> (640, 320); (10, 100) -> (20, -80);
   * a score outside [0, 1] as it is */
  CHECK_FLOAT (payload_float (&pl, 1, 0), 640.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 1), 320.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 2), 0.75f);
  CHECK_FLOAT (payload_float (&pl, 1, 3), 20.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 4), -80.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 5), -2.5f);

  /* float16, the same values (all exact in half) */
  {
    uint16_t h[ROWS * N];
    cnms_tensor th;
    int i;
    float first[12];

    for (i = 0; i < 12; i++)
      first[i] = payload_float (&pl, i / 6, i % 6);
    cnms_floats_to_halves (t, ROWS * N, h);
    th = tensor_dims (h, sizeof h, CNMS_DTYPE_FLOAT16, 3, 1, ROWS, N);
    n = detect_checked (ctx, &th, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
    CHECK_INT (n, 2);
    cnms_ctx_payload (ctx, &pl);
    CHECK (pl.head == CNMS_HEAD_KEYPOINTS && pl.data != NULL);
    if (pl.data != NULL && n == 2) {
      /* the box scores 0.6 and 0.9 round in half; every keypoint value
       * is exact */
      for (i = 0; i < 12; i++)
        CHECK_FLOAT (payload_float (&pl, i / 6, i % 6), first[i]);
    }
  }

  /* max_detections 1: the keypoints of the one kept record */
  p.max_detections = 1;
  n = detect_checked (ctx, &tt, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
  CHECK_INT (n, 1);
  cnms_ctx_payload (ctx, &pl);
  CHECK (pl.data != NULL && pl.n == 1 && pl.records[0].n_points == 2);
  if (pl.data != NULL && n == 1) {
    CHECK_FLOAT (payload_float (&pl, 0, 0), 1200.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 5), 1.0f);
  }
  /* a per-class cap (the front end's caps come before the heads) */
  p.max_detections = 300;
  p.max_detections_per_class = 1;
  n = detect_checked (ctx, &tt, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
  CHECK_INT (n, 1);
  cnms_ctx_payload (ctx, &pl);
  if (pl.data != NULL && n == 1)
    CHECK_FLOAT (payload_float (&pl, 0, 3), 1400.0f);
}

/* Stretch 640x640 -> 1280x320: gain_x 0.5, gain_y 2, no pad. D = 2: the
 * score NaN. [a, b] dims as well as [1, a, b]. */
static void
test_pose_stretch_d2 (cnms_ctx *ctx)
{
  enum { N = 3, ROWS = 5 + 3 * 2 };
  float t[ROWS * N] = { 0 };
  const float kp0[6] = { 100.0f, 200.0f, -10.0f, 0.0f, 640.0f, 640.0f };
  const float kp1[6] = { 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f };
  cnms_tensor tt = tensor3 (t, ROWS, N);
  cnms_params p;
  cnms_payloads pl;
  const cnms_det *d;
  int n, j;

  put_pose (t, N, 0, 320.0f, 320.0f, 64.0f, 64.0f, 0.5f, kp0, 6);
  put_pose (t, N, 2, 100.0f, 100.0f, 20.0f, 20.0f, 0.5f, kp1, 6);
  cnms_params_init (&p);
  p.letterbox = 0;
  p.frame_width = 1280;
  p.frame_height = 320;
  p.keypoint_dims = 2;
  n = detect_checked (ctx, &tt, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
  CHECK_INT (n, 2);
  cnms_ctx_payload (ctx, &pl);
  CHECK (pl.head == CNMS_HEAD_KEYPOINTS && pl.data != NULL);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_keypoints, 3);
  CHECK_INT (cnms_ctx_report (ctx)->shape.keypoint_dims, 2);
  if (pl.data == NULL || n != 2 || pl.n != 2)
    return;
  CHECK_INT (pl.records[0].n_points, 3);
  CHECK_INT (pl.records[1].n_points, 3);
  CHECK_INT (pl.records[0].point_dims, 3);
  /* equal scores: the lower anchor first */
  CHECK_INT (d[0].anchor, 0);
  CHECK_INT (d[1].anchor, 2);
  /* box 288..352 -> x 576..704, y 144..176 */
  CHECK_FLOAT (d[0].x1, 576.0f);
  CHECK_FLOAT (d[0].y1, 144.0f);
  CHECK_FLOAT (d[0].x2, 704.0f);
  CHECK_FLOAT (d[0].y2, 176.0f);
  /* (100, 200) -> (200, 100); (-10, 0) -> (-20, 0); (640, 640) -> (1280,
   * 320) */
  CHECK_FLOAT (payload_float (&pl, 0, 0), 200.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 1), 100.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 3), -20.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 4), 0.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 6), 1280.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 7), 320.0f);
  for (j = 0; j < 6; j++)
    CHECK (isnan (payload_float (&pl, j / 3, 3 * (j % 3) + 2)));
  /* (1, 2) -> (2, 1); (3, 4) -> (6, 2); (5, 6) -> (10, 3) */
  CHECK_FLOAT (payload_float (&pl, 1, 0), 2.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 1), 1.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 3), 6.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 4), 2.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 6), 10.0f);
  CHECK_FLOAT (payload_float (&pl, 1, 7), 3.0f);

  /* the same tensor read as D = 3 does not divide 6 keypoint rows? it
   * does: K = 2 */
  p.keypoint_dims = 3;
  n = detect_checked (ctx, &tt, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
  CHECK_INT (n, 2);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_keypoints, 2);
  CHECK_INT (cnms_ctx_report (ctx)->shape.keypoint_dims, 3);
  CHECK (pl.n == 2 && pl.records[0].n_points == 2);
  if (pl.data != NULL && n == 2) {
    /* the third value: the score */
    CHECK_FLOAT (payload_float (&pl, 0, 2), -10.0f);
    /* (0, 640) -> (0, 320) */
    CHECK_FLOAT (payload_float (&pl, 0, 3), 0.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 4), 320.0f);
  }

  /* [a, b] dims */
  {
    cnms_tensor t2 = tensor_dims (t, sizeof t, CNMS_DTYPE_FLOAT32, 2, ROWS,
        N, 0);
    p.keypoint_dims = 2;
    n = detect_checked (ctx, &t2, CNMS_LAYOUT_YOLOV8_POSE, &p, &d);
    CHECK_INT (n, 2);
    cnms_ctx_payload (ctx, &pl);
    CHECK (pl.n == 2 && pl.records[0].n_points == 3);
    if (pl.data != NULL && n == 2)
      CHECK_FLOAT (payload_float (&pl, 1, 6), 10.0f);
  }
}

/* Pose shape errors, keypoints after other calls. */
static void
test_pose_errors (cnms_ctx *ctx)
{
  float t[12 * 4] = { 0 };
  cnms_tensor tt = tensor3 (t, 12, 4);  /* 7 keypoint rows */
  cnms_tensor t6 = tensor3 (t, 6, 4);   /* one keypoint row */
  cnms_params p, q;
  cnms_payloads pl;
  cnms_shape s;
  const cnms_det *d;
  int n = 5;
  cnms_status st;

  cnms_params_init (&p);
  cnms_params_init (&q);
  st = cnms_detect (ctx, &tt, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "not a multiple of 3"));
  CHECK_INT (n, 0);
  memset (&pl, 0x55, sizeof pl);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_NONE);
  CHECK (pl.data == NULL);
  CHECK_INT (pl.n, 0);
  p.keypoint_dims = 2;
  st = cnms_detect (ctx, &tt, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "not a multiple of 2"));
  p.keypoint_dims = 4;
  st = cnms_detect (ctx, &tt, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_INVALID_ARG);
  CHECK (contains (cnms_ctx_error (ctx), "keypoint-dims 4"));
  p.keypoint_dims = 0;
  st = cnms_detect (ctx, &t6, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "does not fit layout yolov8-pose"));

  q.keypoint_dims = 3;
  CHECK_INT (cnms_tensor_shape (&tt, NULL, CNMS_LAYOUT_YOLOV8_POSE, &q, &s,
          NULL, 0), CNMS_ERR_BAD_TENSOR);
  {
    cnms_tensor t11 = tensor3 (t, 11, 4);
    q.keypoint_dims = 2;
    CHECK_INT (cnms_tensor_shape (&t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, &q,
            &s, NULL, 0), CNMS_OK);
    CHECK_INT (s.n_keypoints, 3);
    CHECK_INT (s.keypoint_dims, 2);
    q.keypoint_dims = 0;
    CHECK_INT (cnms_tensor_shape (&t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, &q,
            &s, NULL, 0), CNMS_OK);
    CHECK_INT (s.n_keypoints, 2);
    CHECK_INT (s.keypoint_dims, 3);
    CHECK_INT (s.layout, CNMS_LAYOUT_YOLOV8_POSE);
    CHECK_INT (s.n_anchors, 4);
    CHECK_INT (s.n_classes, 1);
    CHECK_INT (s.n_values, 11);
    CHECK_INT (s.n_lane_rows, 0);
    CHECK_INT (s.n_coeffs, 0);
    /* no params: the default D = 3 */
    memset (&s, 0, sizeof s);
    CHECK_INT (cnms_tensor_shape (&t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, NULL,
            &s, NULL, 0), CNMS_OK);
    CHECK_INT (s.n_keypoints, 2);
    CHECK_INT (s.keypoint_dims, 3);
    q.keypoint_dims = 1;
    CHECK_INT (cnms_tensor_shape (&t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, &q,
            &s, NULL, 0), CNMS_ERR_INVALID_ARG);
    /* never chosen by auto: [1, 11, 4] is not a detection tensor shape
     * auto knows (b < a), and a forced yolov8 reads it as 7 classes */
    CHECK_INT (cnms_tensor_shape (&t11, NULL, CNMS_LAYOUT_YOLOV8, NULL, &s,
            NULL, 0), CNMS_OK);
    CHECK_INT (s.n_classes, 7);
    CHECK_INT (s.n_keypoints, 0);
    CHECK_INT (s.keypoint_dims, 0);
    /* a pose detect, then a plain one: no keypoints */
    p.keypoint_dims = 3;
    st = cnms_detect (ctx, &t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_KEYPOINTS);
    st = cnms_detect (ctx, &t11, NULL, CNMS_LAYOUT_YOLOV8, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    memset (&pl, 0x55, sizeof pl);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_NONE);
    CHECK (pl.data == NULL);
    CHECK_INT (pl.n, 0);
    st = cnms_detect (ctx, &t11, NULL, CNMS_LAYOUT_YOLOV8_POSE, &p, &d, &n);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_KEYPOINTS);
    {
      float b[4] = { 0, 0, 1, 1 }, sc = 1.0f;
      int64_t keep[1];
      int nk;
      CHECK_INT (cnms_nms (ctx, b, &sc, NULL, 1, 0.5f, 0, 0, keep, &nk),
          CNMS_OK);
      cnms_ctx_payload (ctx, &pl);
      CHECK_INT (pl.head, CNMS_HEAD_NONE);
      CHECK (pl.data == NULL);
    }
  }
}

/* The masks' prototypes of the hand cases: M = 2, 2x2, coefficients
 * (1, 0.5) give the logits [[-3, 1], [1, 1]], (-1, 0) give [[4, 0],
 * [-1, -1]]. */
static const float protos_2x2[2 * 2 * 2] = {
  -4.0f, 0.0f, 1.0f, 1.0f,      /* plane 0 */
  2.0f, 2.0f, 0.0f, 0.0f        /* plane 1 */
};

/* Model 8x8, prototypes 2x2 (scale 0.25), frame 8x8 stretch: frame pixel
 * X samples v = (X + 0.5) / 4 - 0.5: X = 0, 1 -> 0 (w1 0); 2 -> 0.125;
 * 3 -> 0.375; 4 -> 0.625; 5 -> 0.875; 6, 7 -> 1.125, 1.375 (index 1 both
 * sides, w1 0.125, 0.375). The same along Y. */
static void
test_masks_hand (cnms_ctx *ctx)
{
  enum { N = 3, C = 1, M = 2, ROWS = 4 + C + M };
  float t[ROWS * N] = { 0 };
  /* logits [[-3, 1], [1, 1]] over the whole frame: rows of
   * (1 - wy) top (X) + wy, top (X) = -3, -3, -2.5, -1.5, -0.5, 0.5, 1, 1 */
  static const char *const full[8] = {
    "00000111", "00000111", "00000111", "00001111",
    "00011111", "11111111", "11111111", "11111111"
  };
  /* logits [[4, 0], [-1, -1]] over X 3..6, Y 0..3: (1 - wy) 4 (1 - wx) -
   * wy; X = 6 samples 0.875 * 0 + 0.125 * 0 = 0, not > 0 */
  static const char *const part[4] = { "1110", "1110", "1110", "1100" };
  const float one = 0.9f, two = 0.8f;
  cnms_tensor tt = tensor3 (t, ROWS, N);
  cnms_tensor pt = tensor_dims (protos_2x2, sizeof protos_2x2,
      CNMS_DTYPE_FLOAT32, 3, M, 2, 2);
  cnms_params p;
  cnms_payloads pl;
  const cnms_det *d;
  const cnms_payload *mk;
  const uint8_t *data = NULL;
  int n = -1, x, y;
  cnms_status st;

  /* anchor 0: the whole frame, coefficients (1, 0.5) */
  t[0 * N + 0] = 4.0f;
  t[1 * N + 0] = 4.0f;
  t[2 * N + 0] = 8.0f;
  t[3 * N + 0] = 8.0f;
  t[4 * N + 0] = one;
  t[5 * N + 0] = 1.0f;
  t[6 * N + 0] = 0.5f;
  /* anchor 2: x 2.5 .. 6.25, y 0 .. 4 (IoU 15 / 64 with anchor 0: kept),
   * coefficients (-1, 0): pixels X 3..6, Y 0..3 */
  t[0 * N + 2] = 4.375f;
  t[1 * N + 2] = 2.0f;
  t[2 * N + 2] = 3.75f;
  t[3 * N + 2] = 4.0f;
  t[4 * N + 2] = two;
  t[5 * N + 2] = -1.0f;
  t[6 * N + 2] = 0.0f;
  cnms_params_init (&p);
  p.model_width = p.model_height = 8;
  p.frame_width = p.frame_height = 8;
  p.letterbox = 0;
  st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  if (st != CNMS_OK) {
    fprintf (stderr, "  %s\n", cnms_ctx_error (ctx));
    return;
  }
  CHECK_INT (n, 2);
  CHECK_INT (cnms_ctx_report (ctx)->shape.layout, CNMS_LAYOUT_YOLOV8_SEG);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_classes, C);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_coeffs, M);
  cnms_ctx_payload (ctx, &pl);
  mk = pl.records;
  data = pl.data;
  CHECK_INT (pl.head, CNMS_HEAD_MASK);
  CHECK (mk != NULL && data != NULL);
  CHECK_INT (pl.n, 2);
  if (mk == NULL || data == NULL || n != 2 || pl.n != 2)
    return;
  CHECK_INT (pl.size, 80);
  CHECK_INT (mk[0].n_points, 0);
  CHECK_INT (mk[0].point_dims, 0);
  CHECK_INT (d[0].anchor, 0);
  CHECK_INT (d[1].anchor, 2);
  CHECK_FLOAT (d[1].x1, 2.5f);
  CHECK_FLOAT (d[1].x2, 6.25f);
  CHECK_INT (mk[0].x, 0);
  CHECK_INT (mk[0].y, 0);
  CHECK_INT (mk[0].width, 8);
  CHECK_INT (mk[0].height, 8);
  CHECK_INT (mk[0].offset, 0);
  CHECK_INT (mk[1].x, 3);
  CHECK_INT (mk[1].y, 0);
  CHECK_INT (mk[1].width, 4);
  CHECK_INT (mk[1].height, 4);
  CHECK_INT (mk[1].offset, 64);
  for (y = 0; y < 8; y++)
    for (x = 0; x < 8; x++)
      CHECK_INT (data[y * 8 + x], full[y][x] - '0');
  for (y = 0; y < 4; y++)
    for (x = 0; x < 4; x++)
      CHECK_INT (data[64 + y * 4 + x], part[y][x] - '0');

  /* float16 (every value exact in half but the scores): the same bytes */
  {
    uint16_t th[ROWS * N], ph[8];
    uint8_t first[80];
    cnms_tensor t16, p16;
    int i, ok = 1;

    memcpy (first, data, sizeof first);
    for (i = 0; i < ROWS * N; i++)
      if (!half_exact (t[i], &th[i]))
        th[i] = i == 4 * N ? 0x3b33 : 0x3a66;   /* 0.9, 0.8 rounded */
    for (i = 0; i < 8; i++)
      ok &= half_exact (protos_2x2[i], &ph[i]);
    CHECK (ok);
    t16 = tensor_dims (th, sizeof th, CNMS_DTYPE_FLOAT16, 3, 1, ROWS, N);
    p16 = tensor_dims (ph, sizeof ph, CNMS_DTYPE_FLOAT16, 3, M, 2, 2);
    st = cnms_detect (ctx, &t16, &p16, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.n, 2);
    if (pl.data != NULL && pl.n == 2)
      CHECK (memcmp (pl.data, first, sizeof first) == 0);
    /* a mixed pair: float16 detections, float32 prototypes */
    st = cnms_detect (ctx, &t16, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
    CHECK (contains (cnms_ctx_error (ctx), "one dtype for both"));
    memset (&pl, 0x55, sizeof pl);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_NONE);
    CHECK (pl.data == NULL);
    CHECK_INT (pl.n, 0);
  }

  /* no allocation once the sizes are known */
  {
    uint64_t before;

    st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    before = cnms_ctx_alloc_count (ctx);
    st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    CHECK_INT (cnms_ctx_alloc_count (ctx), before);
  }

  /* a box narrower than a pixel column: x 3.25 .. 3.75, an empty mask */
  t[0 * N + 1] = 3.5f;
  t[1 * N + 1] = 6.0f;
  t[2 * N + 1] = 0.5f;
  t[3 * N + 1] = 2.0f;
  t[4 * N + 1] = 0.85f;
  st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  cnms_ctx_payload (ctx, &pl);
  mk = pl.records;
  data = pl.data;
  CHECK_INT (n, 3);
  CHECK_INT (pl.n, 3);
  if (mk != NULL && data != NULL && pl.n == 3) {
    CHECK_INT (d[1].anchor, 1);
    CHECK_INT (mk[1].x, 4);
    CHECK_INT (mk[1].width, 0);
    CHECK_INT (mk[1].height, 2);
    CHECK_INT (mk[1].offset, 64);
    CHECK_INT (mk[2].offset, 64);
    CHECK_INT (data[64 + 3], 0);        /* part's first row, X 6 */
    CHECK_INT (data[64 + 2], 1);
  }
}

/* Letterbox: model 8x8, prototypes 2x2, frame 16x8: gain 0.5, pad_x
 * round (-0.1) = -0, pad_y round (1.9) = 2. Frame row Y samples
 * v = ((Y + 0.5) 0.5 + 2) / 4 - 0.5 = (Y + 0.5) / 8: the logits
 * [[-1, -1], [1, 1]] give 2 v - 1 > 0 from Y = 4 (v 0.5625; Y = 3: 0.4375).
 * Without the pad undone rows 0 .. 7 would sample v <= 0: nothing set. */
static void
test_masks_letterbox (cnms_ctx *ctx)
{
  enum { N = 1, ROWS = 4 + 1 + 1 };
  const float t[ROWS * N] = { 4.0f, 4.0f, 8.0f, 4.0f, 0.9f, 1.0f };
  const float pr[4] = { -1.0f, -1.0f, 1.0f, 1.0f };
  cnms_tensor tt = tensor3 (t, ROWS, N);
  cnms_tensor pt = tensor_dims (pr, sizeof pr, CNMS_DTYPE_FLOAT32, 3, 1, 2,
      2);
  cnms_params p;
  cnms_payloads pl;
  const cnms_det *d;
  const cnms_payload *mk;
  const uint8_t *data;
  int n, x, y;
  cnms_status st;

  cnms_params_init (&p);
  p.model_width = p.model_height = 8;
  p.frame_width = 16;
  p.frame_height = 8;
  st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  cnms_ctx_payload (ctx, &pl);
  mk = pl.records;
  data = pl.data;
  CHECK_INT (n, 1);
  if (mk == NULL || data == NULL || n != 1 || pl.n != 1)
    return;
  /* box y 2 .. 6 in the model -> 0 .. 8 in the frame */
  CHECK_INT (mk[0].x, 0);
  CHECK_INT (mk[0].y, 0);
  CHECK_INT (mk[0].width, 16);
  CHECK_INT (mk[0].height, 8);
  for (y = 0; y < 8; y++)
    for (x = 0; x < 16; x++)
      CHECK_INT (data[mk[0].offset + y * 16 + x], y >= 4);
}

/* Segmentation shape errors, masks after other calls. */
static void
test_seg_errors (cnms_ctx *ctx)
{
  enum { N = 4 };
  float t[(4 + 2 + 32) * N] = { 0 };
  static float pr[32 * 4 * 4];
  cnms_tensor tt = tensor3 (t, 4 + 2 + 32, N);
  cnms_tensor pt = tensor_dims (pr, sizeof pr, CNMS_DTYPE_FLOAT32, 3, 32, 4,
      4);
  cnms_tensor bad;
  cnms_params p;
  cnms_payloads pl;
  cnms_shape s;
  const cnms_det *d;
  int n;
  cnms_status st;
  char msg[256];

  cnms_params_init (&p);
  CHECK_INT (cnms_tensor_shape (&tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, NULL, &s,
          NULL, 0), CNMS_OK);
  CHECK_INT (s.layout, CNMS_LAYOUT_YOLOV8_SEG);
  CHECK_INT (s.n_classes, 2);
  CHECK_INT (s.n_anchors, N);
  CHECK_INT (s.n_coeffs, 32);
  CHECK_INT (s.proto_height, 4);
  CHECK_INT (s.proto_width, 4);
  CHECK_INT (s.n_values, 4 + 2 + 32);
  CHECK_INT (s.n_keypoints, 0);
  CHECK_INT (s.n_lane_rows, 0);
  /* the rows after cx cy w h: the classes and the coefficients */
  CHECK_INT (s.n_classes + s.n_coeffs, 34);
  /* the tensor alone: no prototypes, nothing tells them apart */
  msg[0] = '\0';
  CHECK_INT (cnms_tensor_shape (&tt, NULL, CNMS_LAYOUT_YOLOV8_SEG, NULL, &s,
          msg, sizeof msg), CNMS_ERR_INVALID_ARG);
  CHECK (contains (msg, "prototypes are missing"));
  /* prototypes with another layout */
  msg[0] = '\0';
  CHECK_INT (cnms_tensor_shape (&tt, &pt, CNMS_LAYOUT_YOLOV8, NULL, &s, msg,
          sizeof msg), CNMS_ERR_INVALID_ARG);
  CHECK (contains (msg, "prototypes"));

  /* protos missing */
  st = cnms_detect (ctx, &tt, NULL, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_INVALID_ARG);
  CHECK (contains (cnms_ctx_error (ctx), "prototypes are missing"));
  /* protos given to a layout that takes none */
  st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_INVALID_ARG);
  CHECK (contains (cnms_ctx_error (ctx), "prototypes"));
  /* wrong M: 34 coefficients leave no class row */
  bad = tensor_dims (pr, 34 * 4 * 3 * sizeof (float), CNMS_DTYPE_FLOAT32, 3,
      34, 4, 3);
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "wrong M?"));
  /* wrong size: a byte short, a row long */
  bad = pt;
  bad.size -= 1;
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "bytes"));
  bad = tensor_dims (pr, sizeof pr, CNMS_DTYPE_FLOAT32, 3, 32, 4, 3);
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  /* wrong dims: two, a batch of 2, a zero */
  bad = tensor_dims (pr, sizeof pr, CNMS_DTYPE_FLOAT32, 2, 32, 16, 0);
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "2 dims"));
  bad = pt;
  bad.n_dims = 4;
  bad.dims[0] = 2;
  bad.dims[1] = 16;
  bad.dims[2] = 4;
  bad.dims[3] = 4;
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  CHECK (contains (cnms_ctx_error (ctx), "batch 2"));
  bad = tensor_dims (pr, 0, CNMS_DTYPE_FLOAT32, 3, 32, 0, 4);
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  /* [1, M, Hp, Wp] is as good as [M, Hp, Wp] */
  bad = pt;
  bad.n_dims = 4;
  bad.dims[0] = 1;
  bad.dims[1] = 32;
  bad.dims[2] = 4;
  bad.dims[3] = 4;
  st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_MASK);
  CHECK_INT (pl.n, 0);
  /* a device tensor on the CPU */
  if (cnms_ctx_backend (ctx) == CNMS_BACKEND_CPU) {
    bad = pt;
    bad.on_device = 1;
    st = cnms_detect (ctx, &tt, &bad, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_ERR_INVALID_ARG);
    CHECK (contains (cnms_ctx_error (ctx), "needs the CUDA backend"));
  }
  /* a detection tensor too small for any class and coefficient */
  {
    cnms_tensor t5 = tensor3 (t, 5, N);
    st = cnms_detect (ctx, &t5, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_ERR_BAD_TENSOR);
  }
  /* masks gone after another call */
  st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_MASK);
  st = cnms_detect (ctx, &tt, NULL, CNMS_LAYOUT_YOLOV8, &p, &d, &n);
  CHECK_INT (st, CNMS_OK);
  memset (&pl, 0x55, sizeof pl);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_NONE);
  CHECK (pl.data == NULL);
  CHECK_INT (pl.n, 0);
  CHECK (pl.head != CNMS_HEAD_KEYPOINTS);
  CHECK_INT (strcmp (cnms_layout_name (CNMS_LAYOUT_YOLOV8_SEG),
          "yolov8-seg"), 0);
  CHECK_INT (strcmp (cnms_layout_name (CNMS_LAYOUT_YOLOV8_POSE),
          "yolov8-pose"), 0);
}

/* Frames at the edge of int: a full-frame box on a frame 2^31 - 1 or
 * 2^31 - 65 pixels wide clips its x2 to 2^31 or 2147483520 in float; its
 * mask's width is then at least 2^31 - 128 pixels, past the 1 GiB of
 * masks a call may take: CNMS_ERR_NO_MEMORY with the masks' message,
 * never a mask made empty by an int overflow. */
static void
test_masks_huge_frame (cnms_ctx *ctx)
{
  enum { N = 1, C = 1, M = 2, ROWS = 4 + C + M };
  static const int widths[2] = { 2147483647, 2147483583 };
  float t[ROWS * N] = { 4.0f, 4.0f, 8.0f, 8.0f, 0.9f, 1.0f, 0.5f };
  cnms_tensor tt = tensor3 (t, ROWS, N);
  cnms_tensor pt = tensor_dims (protos_2x2, sizeof protos_2x2,
      CNMS_DTYPE_FLOAT32, 3, M, 2, 2);
  cnms_params p;
  cnms_payloads pl;
  const cnms_det *d;
  int i, n;

  for (i = 0; i < 2; i++) {
    cnms_params_init (&p);
    p.model_width = p.model_height = 8;
    p.frame_width = widths[i];
    p.frame_height = 1;
    p.letterbox = 0;
    n = -1;
    CHECK_INT (cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d,
            &n), CNMS_ERR_NO_MEMORY);
    CHECK (contains (cnms_ctx_error (ctx), "masks of 1 records take more "
            "than 1073741824 bytes"));
    CHECK_INT (n, 0);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_NONE);
  }
}

int
main (int argc, char **argv)
{
  cnms_ctx *ctx;
  const int st = test_ctx_from_args (argc, argv, &backend, &ctx);

  if (st != 0)
    return st;
  test_pose_letterbox (ctx);
  test_pose_stretch_d2 (ctx);
  test_pose_errors (ctx);
  test_masks_hand (ctx);
  test_masks_letterbox (ctx);
  test_seg_errors (ctx);
  test_masks_huge_frame (ctx);
  cnms_ctx_free (ctx);
  return check_result (backend == CNMS_BACKEND_CUDA ? "test-heads cuda"
      : "test-heads");
}
