/* cnms_detect on the CPU backend: layouts, mapping, thresholds, caps,
 * degenerate anchors, float16, steady-state allocations. Expected values
 * are worked out by hand in the comments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_internal.h"
#include "cpu_priv.h"
#include "check.h"
#include "tensors.h"

static cnms_ctx *ctx;

/* An identity mapping: 640x640 model and frame, letterbox. */
static cnms_params
identity_params (float thr, float iou)
{
  cnms_params p;

  cnms_params_init (&p);
  p.score_threshold = thr;
  p.iou = iou;
  return p;
}

static void
check_det (const cnms_det *d, float score, float x1, float y1, float x2,
    float y2, int cls, int anchor)
{
  CHECK_FLOAT (d->score, score);
  CHECK_FLOAT (d->x1, x1);
  CHECK_FLOAT (d->y1, y1);
  CHECK_FLOAT (d->x2, x2);
  CHECK_FLOAT (d->y2, y2);
  CHECK_INT (d->class_id, cls);
  CHECK_INT (d->anchor, anchor);
}

/* The same four anchors in both YOLO layouts:
 *   a0 [90,90,110,110]   classes (.2,.8) -> class 1
 *   a1 [92,90,112,110]   (.7,.1) -> class 0; IoU(a0) = 360/440
 *   a2 [280,290,320,310] (.9,.9) -> class 0 (first maximum)
 *   a3 [91,90,111,110]   (.1,.6) -> class 1; IoU(a0) = 380/420
 * Order a2 a0 a1 a3. Class-aware: a3 falls to a0, a1 survives (other
 * class). Agnostic: a1 and a3 fall to a0. */
static const float anchors[4][4] = {
  {100, 100, 20, 20}, {102, 100, 20, 20}, {300, 300, 40, 20},
  {101, 100, 20, 20},
};
static const float classes[4][2] = {
  {0.2f, 0.8f}, {0.7f, 0.1f}, {0.9f, 0.9f}, {0.1f, 0.6f},
};

static void
test_yolov8 (void)
{
  float t[6 * 4] = { 0 };
  cnms_tensor ten = tensor3 (t, 6, 4);
  cnms_params p = identity_params (0.25f, 0.5f);
  const cnms_det *d;
  int i, n;

  for (i = 0; i < 4; i++)
    put_v8 (t, 2, 4, i, anchors[i][0], anchors[i][1], anchors[i][2],
        anchors[i][3], classes[i]);
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 3);
  if (n == 3) {
    check_det (&d[0], 0.9f, 280, 290, 320, 310, 0, 2);
    check_det (&d[1], 0.8f, 90, 90, 110, 110, 1, 0);
    check_det (&d[2], 0.7f, 92, 90, 112, 110, 0, 1);
  }
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 4);

  p.class_agnostic = 1;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 2);
  if (n == 2) {
    CHECK_INT (d[0].anchor, 2);
    CHECK_INT (d[1].anchor, 0);
  }
}

static void
test_yolov5 (void)
{
  float t[4 * 7] = { 0 };
  cnms_tensor ten = tensor3 (t, 4, 7);
  cnms_params p = identity_params (0.25f, 0.5f);
  const cnms_det *d;
  int i, n;

  /* objectness 0.5: each score is exactly half the class score */
  for (i = 0; i < 4; i++)
    put_v5 (t, 2, i, anchors[i][0], anchors[i][1], anchors[i][2],
        anchors[i][3], 0.5f, classes[i]);
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV5, &p, &d);
  CHECK_INT (n, 3);
  if (n == 3) {
    check_det (&d[0], 0.45f, 280, 290, 320, 310, 0, 2);
    check_det (&d[1], 0.4f, 90, 90, 110, 110, 1, 0);
    check_det (&d[2], 0.35f, 92, 90, 112, 110, 0, 1);
  }
  /* a3's score 0.3 is still a candidate */
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 4);
}

static void
test_end2end (void)
{
  static const float t[6][6] = {
    {10, 10, 50, 50, 0.9f, 3},
    {12, 12, 52, 52, 0.8f, 3},  /* overlaps row 0: no NMS, kept */
    {0, 0, 0, 10, 0.95f, 1},    /* zero area */
    {5, 5, 20, 20, 0.25f, 2},   /* score == threshold */
    {5, 5, 20, 20, 0.5f, -1},   /* bad class */
    {5, 5, 20, 20, 0.7f, 2},
  };
  cnms_tensor ten = tensor3 (&t[0][0], 6, 6);
  cnms_params p = identity_params (0.25f, 0.5f);
  const cnms_det *d;
  int n;

  n = detect_checked (ctx, &ten, CNMS_LAYOUT_AUTO, &p, &d);
  CHECK_INT (n, 3);
  if (n == 3) {
    check_det (&d[0], 0.9f, 10, 10, 50, 50, 3, 0);
    check_det (&d[1], 0.8f, 12, 12, 52, 52, 3, 1);
    check_det (&d[2], 0.7f, 5, 5, 20, 20, 2, 5);
  }
  p.max_detections = 2;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_END2END, &p, &d);
  CHECK_INT (n, 2);
  p.max_detections = 300;
  p.max_candidates = 1;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_END2END, &p, &d);
  CHECK_INT (n, 1);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 3);
}

/* score > threshold, strictly */
static void
test_score_threshold (void)
{
  float t[5 * 2] = { 0 };
  float c0[1] = { 0.5f };
  float c1[1];
  cnms_tensor ten = tensor3 (t, 5, 2);
  cnms_params p = identity_params (0.5f, 0.5f);
  const cnms_det *d;
  int n;

  c1[0] = nextafterf (0.5f, 1.0f);
  put_v8 (t, 1, 2, 0, 100, 100, 10, 10, c0);
  put_v8 (t, 1, 2, 1, 300, 300, 10, 10, c1);
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 1);
  if (n == 1)
    check_det (&d[0], c1[0], 295, 295, 305, 305, 0, 1);
}

/* 640x640 model on a 1920x1080 frame. Letterbox: gain = 640/1920 in
 * float = 0x1.555556p-2, pad_x = round(-0.1) = 0, pad_y =
 * round((640 - 360) / 2 - 0.1) = 140. Stretch: gains 640/1920 and
 * 640/1080 = 0x1.2f684cp-1, no pads. */
static void
test_mapping (void)
{
  float t[5 * 1] = { 0 };
  float c[1] = { 0.9f };
  cnms_tensor ten;
  cnms_params p;
  cnms_map m;
  const cnms_det *d;
  float box[4];
  int n;

  cnms_params_init (&p);
  p.frame_width = 1920;
  p.frame_height = 1080;
  p.letterbox = 1;
  cnms_map_init (&m, p.model_width, p.model_height, p.frame_width,
      p.frame_height, p.letterbox);
  CHECK_FLOAT (m.gain_x, 0x1.555556p-2f);
  CHECK_FLOAT (m.gain_y, 0x1.555556p-2f);
  CHECK_FLOAT (m.pad_x, 0.0f);
  CHECK_FLOAT (m.pad_y, 140.0f);
  CHECK_FLOAT (m.frame_w, 1920.0f);
  CHECK_FLOAT (m.frame_h, 1080.0f);
  CHECK_FLOAT (cnms_map_coord (123.4f, m.pad_x, m.gain_x, m.frame_w),
      0x1.723332p+8f);
  CHECK_FLOAT (cnms_map_coord (200.7f, m.pad_y, m.gain_y, m.frame_h),
      0x1.6c3332p+7f);
  /* clipped into the frame */
  CHECK_FLOAT (cnms_map_coord (100.0f, m.pad_y, m.gain_y, m.frame_h), 0.0f);
  CHECK_FLOAT (cnms_map_coord (700.0f, m.pad_x, m.gain_x, m.frame_w),
      1920.0f);

  /* model box [288, 304, 352, 336] */
  put_v8 (t, 1, 1, 0, 320, 320, 64, 32, c);
  ten = tensor3 (t, 5, 1);
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 1);
  if (n == 1)
    check_det (&d[0], 0.9f, 864, 492, 1056, 588, 0, 0);

  CHECK_INT (cnms_map_centre_box (&p, 320, 320, 64, 32, box), 1);
  CHECK_FLOAT (box[0], 864.0f);
  CHECK_FLOAT (box[1], 492.0f);
  CHECK_FLOAT (box[2], 1056.0f);
  CHECK_FLOAT (box[3], 588.0f);
  /* wholly inside the top pad: clipped to y1 = y2 = 0, empty */
  CHECK_INT (cnms_map_centre_box (&p, 320, 50, 64, 32, box), 0);
  CHECK_INT (cnms_map_centre_box (&p, NAN, 320, 64, 32, box), 0);
  CHECK_INT (cnms_map_centre_box (NULL, 320, 320, 64, 32, box), 0);
  CHECK_INT (cnms_map_centre_box (&p, 320, 320, 64, 32, NULL), 0);

  p.letterbox = 0;
  cnms_map_init (&m, p.model_width, p.model_height, p.frame_width,
      p.frame_height, p.letterbox);
  CHECK_FLOAT (m.gain_x, 0x1.555556p-2f);
  CHECK_FLOAT (m.gain_y, 0x1.2f684cp-1f);
  CHECK_FLOAT (m.pad_x, 0.0f);
  CHECK_FLOAT (m.pad_y, 0.0f);
  CHECK_FLOAT (cnms_map_coord (200.7f, m.pad_y, m.gain_y, m.frame_h),
      0x1.52ae66p+8f);
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 1);
  if (n == 1)
    check_det (&d[0], 0.9f, 864, 513, 1056, 567, 0, 0);
  CHECK_INT (cnms_map_centre_box (&p, 320, 320, 64, 32, box), 1);
  CHECK_FLOAT (box[0], 864.0f);
  CHECK_FLOAT (box[1], 513.0f);
  CHECK_FLOAT (box[2], 1056.0f);
  CHECK_FLOAT (box[3], 567.0f);
  p.frame_width = 0;
  CHECK_INT (cnms_map_centre_box (&p, 320, 320, 64, 32, box), 0);
}

/* The letterbox pad is ultralytics' scale_boxes': round ((m - f gain) / 2
 * - 0.1) in double, ties to even. On these sizes a float32 computation
 * rounded half away from zero gives the other integer (42 / 41 / 58), and
 * every box of the frame moves by 1 / gain frame pixels. Values from
 * Python's round with numpy float32 for the mapping. */
static void
test_letterbox_pad (void)
{
  static const struct {
    int mw, mh, fw, fh;
    float cx, cy, w, h;
    float pad_y, gain;
    float box[4];
  } c[3] = {
    {416, 416, 1280, 1024, 208, 208, 64, 32, 41.0f, 0x1.4ccccc0p-2f,
        {0x1.0ec4ecp+9f, 0x1.d09d8ap+8f, 0x1.713b14p+9f, 0x1.1989dap+9f}},
    {416, 416, 720, 576, 208, 208, 64, 32, 42.0f, 0x1.27d27ep-1f,
        {0x1.309d88p+8f, 0x1.039d8ap+8f, 0x1.9f6274p+8f, 0x1.3b0000p+8f}},
    {320, 320, 100, 64, 160, 160, 32, 16, 57.0f, 0x1.99999ap+1f,
        {0x1.680000p+5f, 0x1.db0000p+4f, 0x1.b80000p+5f, 0x1.158000p+5f}},
  };
  int i, j;

  for (i = 0; i < 3; i++) {
    cnms_params p;
    cnms_map m;
    float box[4];

    cnms_params_init (&p);
    p.model_width = c[i].mw;
    p.model_height = c[i].mh;
    p.frame_width = c[i].fw;
    p.frame_height = c[i].fh;
    p.letterbox = 1;
    cnms_map_init (&m, p.model_width, p.model_height, p.frame_width,
        p.frame_height, p.letterbox);
    CHECK_FLOAT (m.gain_x, c[i].gain);
    CHECK_FLOAT (m.gain_y, c[i].gain);
    /* +0, as Python's integer 0 (not the -0 of rint (-0.1)) */
    CHECK_FLOAT (m.pad_x, 0.0f);
    CHECK_INT (signbit (m.pad_x) != 0, 0);
    CHECK_FLOAT (m.pad_y, c[i].pad_y);
    CHECK_INT (cnms_map_centre_box (&p, c[i].cx, c[i].cy, c[i].w, c[i].h,
            box), 1);
    for (j = 0; j < 4; j++)
      CHECK_FLOAT (box[j], c[i].box[j]);
  }
}

/* cnms_map_centre_box gives cnms_detect's box bit for bit: 2000 seeded
 * boxes (some partly outside, fractional values), odd sizes, both maps. */
static void
test_map_centre_box (void)
{
  static const int sizes[3][4] = {
    {640, 640, 1280, 720}, {416, 256, 333, 777}, {320, 320, 320, 240},
  };
  float t[5 * 1] = { 0 };
  float c[1] = { 0.9f };
  cnms_tensor ten = tensor3 (t, 5, 1);
  cnms_params p;
  unsigned int seed = 12345;
  int i, k, lb, agree = 0, total = 0, kept = 0;

  for (i = 0; i < 2000; i++) {
    float v[4], box[4];
    const cnms_det *d;
    int n, mapped;

    for (k = 0; k < 4; k++) {
      seed = seed * 1103515245u + 12345u;
      v[k] = (float) ((seed >> 8) % 80000) / 100.0f - 60.0f;
    }
    v[2] = fabsf (v[2]) * 0.5f;
    v[3] = fabsf (v[3]) * 0.5f;
    cnms_params_init (&p);
    p.score_threshold = 0.5f;
    lb = i & 1;
    p.model_width = sizes[i % 3][0];
    p.model_height = sizes[i % 3][1];
    p.frame_width = sizes[i % 3][2];
    p.frame_height = sizes[i % 3][3];
    p.letterbox = lb;
    put_v8 (t, 1, 1, 0, v[0], v[1], v[2], v[3], c);
    n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
    mapped = cnms_map_centre_box (&p, v[0], v[1], v[2], v[3], box);
    total++;
    kept += n == 1;
    if (mapped == (n == 1) && (n == 0 || (box[0] == d[0].x1
                && box[1] == d[0].y1 && box[2] == d[0].x2
                && box[3] == d[0].y2)))
      agree++;
  }
  CHECK_INT (agree, total);
  /* both outcomes are exercised */
  CHECK (kept > 500 && kept < total);  /* 865 */
}

/* Six separate boxes with scores .5 .9 .5 .7 .9 .3: the order is
 * a1 a4 a3 a0 a2 a5. */
static void
test_caps (void)
{
  static const float scores[6] = { 0.5f, 0.9f, 0.5f, 0.7f, 0.9f, 0.3f };
  float t[5 * 6] = { 0 };
  cnms_tensor ten = tensor3 (t, 5, 6);
  cnms_params p = identity_params (0.25f, 0.5f);
  const cnms_det *d;
  int i, n;

  for (i = 0; i < 6; i++)
    put_v8 (t, 1, 6, i, 50.0f + 100.0f * i, 50, 20, 20, &scores[i]);

  p.max_candidates = 3;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 6);
  CHECK_INT (n, 3);
  if (n == 3) {
    CHECK_INT (d[0].anchor, 1);
    CHECK_INT (d[1].anchor, 4);
    CHECK_INT (d[2].anchor, 3);
  }
  p.max_candidates = 4;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 4);
  if (n == 4)
    CHECK_INT (d[3].anchor, 0);

  p.max_candidates = 30000;
  p.max_detections = 2;
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 2);
  if (n == 2) {
    CHECK_INT (d[0].anchor, 1);
    CHECK_INT (d[1].anchor, 4);
  }
}

/* Only a0 is a candidate; each other anchor is broken in one way. */
static void
test_degenerate (void)
{
  float t[6 * 9] = { 0 };
  float nan_one[2] = { NAN, 0.6f };
  float nan_both[2] = { NAN, NAN };
  float inf_cls[2] = { INFINITY, 0.1f };
  float ok[2] = { 0.9f, 0.1f };
  cnms_tensor ten = tensor3 (t, 6, 9);
  cnms_params p = identity_params (0.25f, 0.5f);
  float t5[2 * 7] = { 0 };
  float c5[2] = { 0.9f, 0.9f };
  cnms_tensor ten5 = tensor3 (t5, 2, 7);
  const cnms_det *d;
  int n;

  put_v8 (t, 2, 9, 0, 100, 100, 20, 20, nan_one);       /* class 1, .6 */
  put_v8 (t, 2, 9, 1, 100, 100, 20, 20, nan_both);
  put_v8 (t, 2, 9, 2, 100, 100, 20, 20, inf_cls);
  put_v8 (t, 2, 9, 3, NAN, 100, 20, 20, ok);
  put_v8 (t, 2, 9, 4, 100, 100, INFINITY, 20, ok);
  put_v8 (t, 2, 9, 5, 100, 100, 0, 20, ok);     /* zero width */
  put_v8 (t, 2, 9, 6, 100, 100, 20, 0, ok);     /* zero height */
  put_v8 (t, 2, 9, 7, -100, 100, 20, 20, ok);   /* clipped to nothing */
  put_v8 (t, 2, 9, 8, 100, 100, -20, 20, ok);   /* x2 < x1 */
  n = detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (n, 1);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 1);
  if (n == 1)
    check_det (&d[0], 0.6f, 90, 90, 110, 110, 1, 0);

  put_v5 (t5, 2, 0, 100, 100, 20, 20, NAN, c5);
  put_v5 (t5, 2, 1, 100, 100, 20, 20, INFINITY, c5);
  n = detect_checked (ctx, &ten5, CNMS_LAYOUT_YOLOV5, &p, &d);
  CHECK_INT (n, 0);
}

/* Every value is exact in half, so float16 input must give the very same
 * records as float32, in all three layouts. */
static void
test_float16 (void)
{
  float v8[6 * 4], v5[4 * 7], e2e[3 * 6] = {
    10, 10, 50, 50, 0.875f, 3, 12, 12, 52, 52, 0.75f, 3,
    5, 5, 20, 20, 0.625f, 2,
  };
  static const float cls[4][2] = {
    {0.25f, 0.75f}, {0.625f, 0.125f}, {0.875f, 0.875f}, {0.125f, 0.5f},
  };
  uint16_t h[6 * 7];
  cnms_tensor tf[3], th;
  cnms_params p = identity_params (0.25f, 0.5f);
  cnms_det ref[8];
  const cnms_det *d;
  int i, k, n_ref, n, all_exact;

  /* stretch: a letterbox pad would clip the small y values away */
  p.frame_width = 1920;
  p.frame_height = 1080;
  p.letterbox = 0;
  for (i = 0; i < 4; i++) {
    put_v8 (v8, 2, 4, i, anchors[i][0], anchors[i][1], anchors[i][2],
        anchors[i][3], cls[i]);
    put_v5 (v5, 2, i, anchors[i][0], anchors[i][1], anchors[i][2],
        anchors[i][3], 0.75f, cls[i]);
  }
  tf[0] = tensor3 (v8, 6, 4);
  tf[1] = tensor3 (v5, 4, 7);
  tf[2] = tensor3 (e2e, 3, 6);
  for (k = 0; k < 3; k++) {
    const float *src = tf[k].data;
    size_t count = tf[k].size / sizeof (float);
    cnms_layout l = k == 0 ? CNMS_LAYOUT_YOLOV8 : k == 1 ?
        CNMS_LAYOUT_YOLOV5 : CNMS_LAYOUT_END2END;

    all_exact = 1;
    for (i = 0; i < (int) count; i++)
      all_exact &= half_exact (src[i], &h[i]);
    CHECK (all_exact);
    n_ref = detect_checked (ctx, &tf[k], l, &p, &d);
    CHECK (n_ref > 0 && n_ref <= 8);
    if (n_ref <= 0 || n_ref > 8)
      continue;
    memcpy (ref, d, (size_t) n_ref * sizeof *d);
    th = tf[k];
    th.data = h;
    th.dtype = CNMS_DTYPE_FLOAT16;
    th.size = count * sizeof (uint16_t);
    n = detect_checked (ctx, &th, l, &p, &d);
    CHECK_INT (n, n_ref);
    if (n == n_ref)
      CHECK (memcmp (ref, d, (size_t) n * sizeof *d) == 0);
  }
}

/* A warm context allocates nothing, also for smaller input. */
static void
test_steady_state (void)
{
  const int n_anchors = 8400, n_classes = 80;
  float *t = malloc ((size_t) (4 + n_classes) * n_anchors * sizeof (float));
  cnms_tensor ten = tensor3 (t, 4 + n_classes, n_anchors);
  cnms_params p = identity_params (0.25f, 0.45f);
  const cnms_det *d;
  uint64_t allocs;
  size_t host, host2;
  int i;

  CHECK (t != NULL);
  if (t == NULL)
    return;
  srand (1);
  for (i = 0; i < (4 + n_classes) * n_anchors; i++)
    t[i] = (float) rand () / (float) RAND_MAX;
  for (i = 0; i < 4 * n_anchors; i++)
    t[i] *= 640.0f;
  detect_checked (ctx, &ten, CNMS_LAYOUT_AUTO, &p, &d);
  allocs = cnms_ctx_alloc_count (ctx);
  cnms_ctx_memory (ctx, &host, NULL, NULL);
  for (i = 0; i < 20; i++)
    detect_checked (ctx, &ten, CNMS_LAYOUT_AUTO, &p, &d);
  ten.dims[2] = 4000;
  ten.size = (size_t) (4 + n_classes) * 4000 * sizeof (float);
  detect_checked (ctx, &ten, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (cnms_ctx_alloc_count (ctx), allocs);
  cnms_ctx_memory (ctx, &host2, NULL, NULL);
  CHECK_INT (host2, host);
  free (t);
}

/* The bulk float16 conversion (F16C where the CPU has it) gives exactly
 * cnms_half_to_float's value for all 65536 halves; NaN stays NaN. Odd
 * lengths exercise the scalar tail. */
static void
test_half_conversion (void)
{
  static uint16_t h[65536 + 3];
  static float f[65536 + 3];
  int i, mismatches = 0;

  for (i = 0; i < 65536 + 3; i++)
    h[i] = (uint16_t) (i & 0xffff);
  cnms_cpu_halves_to_floats (h, 65536 + 3, f);
  for (i = 0; i < 65536 + 3; i++) {
    float want = cnms_half_to_float (h[i]);
    if (want != want ? f[i] == f[i]
        : cnms_float_bits (want) != cnms_float_bits (f[i]))
      mismatches++;
  }
  CHECK_INT (mismatches, 0);
  CHECK_FLOAT (f[0x3c00], 1.0f);
  CHECK_FLOAT (f[0x0001], 5.9604644775390625e-08f);   /* 2^-24, subnormal */
  CHECK_FLOAT (f[0xfbff], -65504.0f);
  CHECK_INT (cnms_float_bits (f[0x7c00]), 0x7f800000);        /* +inf */
  cnms_cpu_halves_to_floats (h + 0x3c00, 5, f);
  CHECK_FLOAT (f[4], cnms_half_to_float (0x3c04));
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  test_yolov8 ();
  test_yolov5 ();
  test_end2end ();
  test_score_threshold ();
  test_mapping ();
  test_letterbox_pad ();
  test_map_centre_box ();
  test_caps ();
  test_degenerate ();
  test_float16 ();
  test_half_conversion ();
  test_steady_state ();
  cnms_ctx_free (ctx);
  return check_result ("test-decode");
}
