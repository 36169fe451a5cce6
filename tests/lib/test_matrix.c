/* The bad-input matrix (README "Bad input") through the library: each row's
 * status, message and exact result. tests/gst/matrix.c runs the same rows
 * through the element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "check.h"
#include "matrix_tensors.h"
#include "tensors.h"

static cnms_ctx *ctx;

static cnms_params
params (void)
{
  cnms_params p;

  cnms_params_init (&p);
  p.model_width = p.frame_width = MATRIX_W;
  p.model_height = p.frame_height = MATRIX_H;
  return p;
}

/* A float32 [1, a, b] tensor over exactly its bytes. */
static cnms_tensor
f32 (const float *data, int64_t a, int64_t b)
{
  return tensor_dims (data, (size_t) (a * b) * 4, CNMS_DTYPE_FLOAT32, 3, 1,
      a, b);
}

/* Runs detect; the detections as "anchor:class:score:x1,y1,x2,y2;". */
static char *
detect_str (const cnms_tensor *t, cnms_layout l, const cnms_params *p)
{
  static char buf[8192];
  const cnms_det *d = NULL;
  size_t len = 0;
  int n = -1, i;
  cnms_status st = cnms_detect (ctx, t, NULL, l, p, &d, &n);

  buf[0] = '\0';
  if (st != CNMS_OK) {
    snprintf (buf, sizeof buf, "%s: %s", cnms_status_str (st),
        cnms_ctx_error (ctx));
    return buf;
  }
  for (i = 0; i < n && len < sizeof buf - 100; i++)
    len += (size_t) snprintf (buf + len, sizeof buf - len,
        "%d:%d:%.9g:%.9g,%.9g,%.9g,%.9g;", d[i].anchor, d[i].class_id,
        (double) d[i].score, (double) d[i].x1, (double) d[i].y1,
        (double) d[i].x2, (double) d[i].y2);
  return buf;
}

#define CHECK_STR(got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    CHECK (strcmp (g_, w_) == 0); \
    if (strcmp (g_, w_) != 0) \
      fprintf (stderr, "  got  '%s'\n  want '%s'\n", g_, w_); \
  } while (0)

/* A rejection: status bad tensor and a message containing what. */
#define CHECK_BAD(t, l, what) do { \
    cnms_params p_ = params (); \
    const char *s_ = detect_str (&(t), (l), &p_); \
    CHECK (strncmp (s_, "bad tensor: ", 12) == 0 \
        && strstr (s_, (what)) != NULL); \
    if (strncmp (s_, "bad tensor: ", 12) != 0 || !strstr (s_, (what))) \
      fprintf (stderr, "  got '%s', wanted bad tensor '%s'\n", s_, (what)); \
  } while (0)

static const float some[64];

static void
row_dtype_rank_dims (void)
{
  cnms_tensor t = f32 (some, 2, 6);

  t.dtype = (cnms_dtype) 7;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "unsupported tensor data type 7");
  t = tensor_dims (some, 24, CNMS_DTYPE_FLOAT32, 1, 6, 0, 0);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor has 1 dims");
  t = tensor_dims (some, 48, CNMS_DTYPE_FLOAT32, 4, 1, 1, 2);
  t.dims[3] = 6;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor has 4 dims");
  t = tensor_dims (some, 96, CNMS_DTYPE_FLOAT32, 3, 2, 2, 6);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "batch dimension is 2");
  t = f32 (some, 3, 2);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "cannot detect the layout of a [1, 3, 2] tensor");
  t = f32 (some, 2, 6);
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV8, "a [1, 2, 6] tensor does not fit layout "
      "yolov8");
  t = tensor_dims (some, 48, CNMS_DTYPE_FLOAT32, 3, 1, -2, 6);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor dim 1 is -2, must be > 0");
}

/* Dims that disagree with the byte size, short and long, both dtypes. */
static void
row_byte_size (void)
{
  cnms_params p = params ();
  cnms_tensor t = f32 (some, 2, 6);

  t.size = 47;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor data is 47 bytes, 48 needed for "
      "a [1, 2, 6] float32 tensor");
  t.size = 52;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor data is 52 bytes, 48 expected for "
      "a [1, 2, 6] float32 tensor (longer than its dims say: wrong dims?)");
  t.dtype = CNMS_DTYPE_FLOAT16;
  t.size = 25;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor data is 25 bytes, 24 expected for "
      "a [1, 2, 6] float16");
  t.size = 24;
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), "");
}

/* Zero-size: [1, 0, 6] is an empty end2end answer, any other zero dim is
 * bad. */
static void
row_zero_size (void)
{
  cnms_params p = params ();
  cnms_tensor t = tensor_dims (NULL, 0, CNMS_DTYPE_FLOAT32, 3, 1, 0, 6);
  const cnms_det *d = NULL;
  int n = -1;

  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 0);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 0);
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_END2END, &p, &d, &n),
      CNMS_OK);
  t.n_dims = 2;
  t.dims[0] = 0;
  t.dims[1] = 6;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &d, &n),
      CNMS_OK);
  t = tensor_dims (NULL, 0, CNMS_DTYPE_FLOAT32, 3, 1, 0, 6);
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV5, "tensor dim 1 is 0");
  t.size = 4;
  t.data = some;
  CHECK_BAD (t, CNMS_LAYOUT_END2END, "tensor data is 4 bytes, 0 expected");
  t = tensor_dims (NULL, 0, CNMS_DTYPE_FLOAT32, 3, 1, 84, 0);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor dim 2 is 0");
  t = tensor_dims (NULL, 0, CNMS_DTYPE_FLOAT32, 3, 1, 0, 85);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor dim 1 is 0");
  t = tensor_dims (NULL, 0, CNMS_DTYPE_FLOAT32, 3, 0, 1, 6);
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "batch dimension is 0");
}

/* Dims whose product overflows: each dim is an int, and at most two
 * multiply, so the byte count is exact; the size check refuses it. */
static void
row_overflow (void)
{
  cnms_tensor t = tensor_dims (some, 64, CNMS_DTYPE_FLOAT32, 3, 1,
      (int64_t) 1 << 31, 8);

  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "tensor dim 1 is 2147483648, too large");
  t.dims[1] = (int64_t) 1 << 62;
  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "too large");
  t.dims[1] = INT32_MAX;
  t.dims[2] = INT32_MAX;
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV8, "tensor data is 64 bytes, "
      "18446744056529682436 needed for a [1, 2147483647, 2147483647] float32");
  t.dtype = CNMS_DTYPE_FLOAT16;
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV5, "tensor data is 64 bytes, "
      "9223372028264841218 needed");
}

/* NaN/Inf in scores and boxes are never candidates, in both dtypes and
 * in end2end rows. */
static void
row_nonfinite (void)
{
  static const float e2e[24] = {
    NAN, 0, 10, 10, 0.875f, 0,
    0, 0, INFINITY, 10, 0.75f, 0,
    0, 0, 10, 10, NAN, 0,
    0, 0, 10, 10, 0.625f, 0,
  };
  cnms_params p = params ();
  size_t n;
  float *v = matrix_nonfinite (&n);
  uint16_t *h = malloc (n * 2);
  cnms_tensor t = f32 (v, 5, MATRIX_NONFINITE_N);
  const char *want = "0:0:0.875:40,40,60,60;6:0:0.375:195,95,205,105;";

  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), want);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 2);
  cnms_floats_to_halves (v, n, h);
  t = tensor_dims (h, n * 2, CNMS_DTYPE_FLOAT16, 3, 1, 5, MATRIX_NONFINITE_N);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), want);
  t = f32 (e2e, 4, 6);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), "3:0:0.625:0,0,10,10;");
  free (h);
  free (v);
}

static void
row_negative_size (void)
{
  static const float e2e[12] = {
    30, 30, 20, 40, 0.875f, 0,
    10, 10, 20, 20, 0.75f, 1,
  };
  cnms_params p = params ();
  size_t n;
  float *v = matrix_negative (&n);
  cnms_tensor t = f32 (v, 5, MATRIX_NEGATIVE_N);

  CHECK_STR (detect_str (&t, CNMS_LAYOUT_YOLOV8, &p),
      "3:0:0.5:90,90,110,110;");
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 1);
  t = f32 (e2e, 2, 6);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), "1:1:0.75:10,10,20,20;");
  free (v);
}

static void
row_equal_scores (void)
{
  static const float boxes[4][4] = {
    {10, 10, 30, 30}, {10, 10, 30, 30}, {90, 90, 110, 110}, {50, 10, 70, 30}
  };
  static const float scores[4] = { 0.5f, 0.5f, 0.5f, 0.5f };
  cnms_params p = params ();
  size_t n;
  float *v = matrix_equal (&n);
  cnms_tensor t = f32 (v, 5, MATRIX_EQUAL_N);
  int64_t keep[4];
  int n_keep = -1;

  CHECK_STR (detect_str (&t, CNMS_LAYOUT_YOLOV8, &p), "0:0:0.5:10,10,30,30;"
      "2:0:0.5:90,90,110,110;3:0:0.5:50,10,70,30;");
  CHECK_INT (cnms_nms (ctx, &boxes[0][0], scores, NULL, 4, 0.45f, 0, 0, keep,
          &n_keep), CNMS_OK);
  CHECK_INT (n_keep, 3);
  CHECK (keep[0] == 0 && keep[1] == 2 && keep[2] == 3);
  free (v);
}

/* Every anchor a candidate: the cap keeps the best by (score desc, anchor
 * asc), never the first ones found. */
static void
row_all_candidates (void)
{
  cnms_params p = params ();
  size_t n;
  float *v = matrix_all_candidates (&n);
  cnms_tensor t = f32 (v, 5, MATRIX_ALL_N);
  char want[1024];
  size_t len;
  int a;

  p.max_candidates = 10;
  len = (size_t) snprintf (want, sizeof want, "3:0:0.875:26,2,30,6;");
  for (a = 700; a < 709; a++)
    len += (size_t) snprintf (want + len, sizeof want - len,
        "%d:0:0.875:%d,138,%d,142;", a, (a % 40) * 8 + 2, (a % 40) * 8 + 6);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), want);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, MATRIX_ALL_N);
  free (v);
}

/* 0 classes is no layout; 100000 classes decode like 80. */
static void
row_classes (void)
{
  cnms_params p = params ();
  size_t n;
  float *v = matrix_many_classes (&n);
  float *v5;
  cnms_tensor t = f32 (some, 4, 10);
  int c;

  CHECK_BAD (t, CNMS_LAYOUT_AUTO, "cannot detect the layout of a [1, 4, 10] tensor");
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV8, "a [1, 4, 10] tensor does not fit layout "
      "yolov8");
  t = f32 (some, 10, 5);
  CHECK_BAD (t, CNMS_LAYOUT_YOLOV5, "a [1, 10, 5] tensor does not fit layout "
      "yolov5");

  t = f32 (v, 4 + MATRIX_MANY_CLASSES, 2);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_YOLOV8, &p),
      "0:99999:0.75:80,80,120,120;1:0:0.625:82,80,122,120;");
  p.class_agnostic = 1;
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_YOLOV8, &p),
      "0:99999:0.75:80,80,120,120;");
  p.class_agnostic = 0;
  /* the same anchors as yolov5 [1, 2, 5+C] (objectness 1) */
  v5 = calloc ((size_t) 2 * (5 + MATRIX_MANY_CLASSES), sizeof (float));
  for (c = 0; c < 2; c++) {
    float *row = v5 + (size_t) c * (5 + MATRIX_MANY_CLASSES);

    row[0] = c ? 102 : 100;
    row[1] = 100;
    row[2] = row[3] = 40;
    row[4] = 1;
    row[5 + (c ? 0 : 99999)] = c ? 0.625f : 0.75f;
  }
  t = f32 (v5, 2, 5 + MATRIX_MANY_CLASSES);
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_YOLOV5, &p),
      "0:99999:0.75:80,80,120,120;1:0:0.625:82,80,122,120;");
  free (v5);
  free (v);
}

/* The frame size changed between calls on one context: the mapping and
 * the clipping follow it; a 1x1 frame still clips exactly. */
static void
row_frames (void)
{
  cnms_params p = params ();
  size_t n;
  float *v = matrix_frames (&n);
  cnms_tensor t = f32 (v, 3, 6);
  char want[512];

  p.model_width = p.frame_width = 640;
  p.model_height = p.frame_height = 480;
  p.letterbox = 0;
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p),
      "0:0:0.875:600,440,640,480;1:1:0.75:200,100,210,110;"
      "2:2:0.625:0,0,40,240;");
  p.frame_width = 320;
  p.frame_height = 240;
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p),
      "0:0:0.875:300,220,320,240;1:1:0.75:100,50,105,55;"
      "2:2:0.625:0,0,20,120;");
  /* 1x1, letterbox: gain 480, pad_x 80; rows 0 and 2 fall outside */
  p.frame_width = p.frame_height = 1;
  p.letterbox = 1;
  snprintf (want, sizeof want, "1:1:0.75:%.9g,%.9g,%.9g,%.9g;",
      (double) (120.0f / 480.0f), (double) (100.0f / 480.0f),
      (double) (130.0f / 480.0f), (double) (110.0f / 480.0f));
  CHECK_STR (detect_str (&t, CNMS_LAYOUT_AUTO, &p), want);
  free (v);
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  row_dtype_rank_dims ();
  row_byte_size ();
  row_zero_size ();
  row_overflow ();
  row_nonfinite ();
  row_negative_size ();
  row_equal_scores ();
  row_all_candidates ();
  row_classes ();
  row_frames ();
  cnms_ctx_free (ctx);
  return check_result ("test-matrix");
}
