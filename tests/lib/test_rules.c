/* The written rules at their exact edges, each where a one-character slip
 * would change results without another test noticing:
 *   - suppression is IoU strictly above the threshold: a pair at exactly
 *     the threshold is kept, one a float below it is suppressed, in the
 *     rule itself (cnms_suppresses, cnms_iou_above), the list scan (few
 *     boxes) and the grid scan (many boxes), SSE2 and AVX, and through
 *     cnms_detect;
 *   - the letterbox pad of a half pixel rounds with ultralytics' bias
 *     (round (pad - 0.1)): 640x640 on a 640x479 frame pads 80, not 81;
 *   - float to half rounds ties to even, as numpy's astype (values
 *     checked against numpy);
 *   - layout=auto refuses a square [1, a, a] tensor (a > b and b > a are
 *     strict). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"
#include "check.h"
#include "tensors.h"

static cnms_ctx *ctx;

/* Two boxes of IoU exactly 0.5: [0,0,2,1] (area 2) and [0,0,1,1] (area 1)
 * overlap by 1, union 2. */
static const float pair[2][4] = { {0, 0, 2, 1}, {0, 0, 1, 1} };

/* cnms_nms of the pair, after n_far boxes far from it and from each other
 * (scores above the pair's), class-agnostic; returns how many of the pair
 * were kept. */
static int
pair_kept (int n_far, float iou)
{
  int n = n_far + 2, i, n_keep = 0, kept = 0;
  float *boxes = malloc ((size_t) n * 4 * sizeof (float));
  float *scores = malloc ((size_t) n * sizeof (float));
  int64_t *keep = malloc ((size_t) n * sizeof (int64_t));

  for (i = 0; i < n_far; i++) {
    float x = 100.0f + 20.0f * (float) (i % 50), y = 100.0f + 20.0f
        * (float) (i / 50);
    boxes[4 * i + 0] = x;
    boxes[4 * i + 1] = y;
    boxes[4 * i + 2] = x + 10.0f;
    boxes[4 * i + 3] = y + 10.0f;
    scores[i] = 0.99f;
  }
  memcpy (boxes + 4 * n_far, pair, sizeof pair);
  scores[n_far] = 0.9f;
  scores[n_far + 1] = 0.8f;
  CHECK_INT (cnms_nms (ctx, boxes, scores, NULL, n, iou, 1, 0, keep,
          &n_keep), CNMS_OK);
  for (i = 0; i < n_keep; i++)
    kept += keep[i] >= n_far;
  free (boxes);
  free (scores);
  free (keep);
  return kept;
}

/* The rule itself, as both backends call it (the CUDA mask through
 * cnms_suppresses, the CPU walk's scans through cnms_iou_above). */
static void
test_rule (void)
{
  const float below = nextafterf (0.5f, 0.0f);

  CHECK_FLOAT (cnms_iou (pair[0], 2.0f, pair[1], 1.0f), 0.5f);
  CHECK_INT (cnms_iou_above (pair[0], 2.0f, pair[1], 1.0f, 0.5f), 0);
  CHECK_INT (cnms_iou_above (pair[0], 2.0f, pair[1], 1.0f, below), 1);
  CHECK_INT (cnms_suppresses (pair[0], 2.0f, 3, pair[1], 1.0f, 3, 0.5f, 0),
      0);
  CHECK_INT (cnms_suppresses (pair[0], 2.0f, 3, pair[1], 1.0f, 3, below, 0),
      1);
  /* another class: only agnostic suppresses */
  CHECK_INT (cnms_suppresses (pair[0], 2.0f, 3, pair[1], 1.0f, 4, below, 0),
      0);
  CHECK_INT (cnms_suppresses (pair[0], 2.0f, 3, pair[1], 1.0f, 4, below, 1),
      1);
}

static void
test_iou_equality (void)
{
  const float below = nextafterf (0.5f, 0.0f);
  /* 0: the kept-list scan; 400: more than the list takes, the grid */
  const int fars[2] = { 0, 400 };
  int f, avx;

  for (avx = 0; avx < 2; avx++) {
    cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, !avx);
    for (f = 0; f < 2; f++) {
      CHECK_INT (pair_kept (fars[f], 0.5f), 2);
      CHECK_INT (pair_kept (fars[f], below), 1);
    }
  }
  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
}

/* The pair through cnms_detect: a YOLOv8 [1, 5, 2] tensor, one class,
 * model and frame 640x640 (the map is the identity). */
static void
test_iou_equality_detect (void)
{
  float data[5 * 2];
  const float one[1] = { 0.9f }, two[1] = { 0.8f };
  const cnms_det *d;
  cnms_tensor t;
  cnms_params p;
  int n = -1;

  put_v8 (data, 1, 2, 0, 1.0f, 0.5f, 2.0f, 1.0f, one);
  put_v8 (data, 1, 2, 1, 0.5f, 0.5f, 1.0f, 1.0f, two);
  t = tensor3 (data, 5, 2);
  cnms_params_init (&p);
  p.iou = 0.5f;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 2);
  p.iou = nextafterf (0.5f, 0.0f);
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 1);
  CHECK_INT (d[0].anchor, 0);
}

/* 640x640 model on a 640x479 frame: gain 1, pad_y = round (80.5 - 0.1) =
 * 80 (81 without the bias), pad_x = round (-0.1) = 0. */
static void
test_letterbox_half_pixel (void)
{
  cnms_params p;
  float out[4];

  cnms_params_init (&p);
  p.frame_width = 640;
  p.frame_height = 479;
  CHECK_INT (cnms_map_centre_box (&p, 320.0f, 320.0f, 100.0f, 100.0f, out),
      1);
  CHECK_FLOAT (out[0], 270.0f);
  CHECK_FLOAT (out[1], 190.0f);
  CHECK_FLOAT (out[2], 370.0f);
  CHECK_FLOAT (out[3], 290.0f);
  /* and the other axis: a 479x640 frame pads x by 80 */
  p.frame_width = 479;
  p.frame_height = 640;
  CHECK_INT (cnms_map_centre_box (&p, 320.0f, 320.0f, 100.0f, 100.0f, out),
      1);
  CHECK_FLOAT (out[0], 190.0f);
  CHECK_FLOAT (out[1], 270.0f);
}

/* Ties to even, as numpy's astype(float16) gives them. */
static void
test_half_ties (void)
{
  static const float f[8] = {
    1.0f + 0x1p-11f,            /* between 0x3c00 and 0x3c01 */
    1.0f + 3 * 0x1p-11f,        /* between 0x3c01 and 0x3c02 */
    2049.0f, 2051.0f, -2049.0f,
    65520.0f,                   /* between 65504 and 65536: inf */
    0x1p-25f,                   /* half the smallest subnormal: 0 */
    3 * 0x1p-25f                /* between 0x0001 and 0x0002 */
  };
  static const uint16_t want[8] = {
    0x3c00, 0x3c02, 0x6800, 0x6802, 0xe800, 0x7c00, 0x0000, 0x0002
  };
  uint16_t h[8];
  int i;

  cnms_floats_to_halves (f, 8, h);
  for (i = 0; i < 8; i++)
    CHECK_INT (h[i], want[i]);
}

/* [1, 84, 84]: neither a > b (yolov5) nor b > a (yolov8), and b != 6. */
static void
test_square_auto (void)
{
  static float data[84 * 84];
  cnms_tensor t = tensor3 (data, 84, 84);
  cnms_shape s;
  char msg[256];

  CHECK_INT (cnms_tensor_shape (&t, NULL, CNMS_LAYOUT_AUTO, NULL, &s, msg,
          sizeof msg), CNMS_ERR_BAD_TENSOR);
  CHECK (strcmp (msg, "cannot detect the layout of a [1, 84, 84] tensor "
          "(expected [1,N,5+C], [1,4+C,N] or [1,K,6])") == 0);
  /* one more anchor than rows is yolov8, one more row is yolov5 */
  t = tensor3 (data, 84, 85);
  t.size = 84 * 85 * sizeof (float);
  CHECK_INT (cnms_tensor_shape (&t, NULL, CNMS_LAYOUT_AUTO, NULL, &s, NULL,
          0), CNMS_OK);
  CHECK_INT (s.layout, CNMS_LAYOUT_YOLOV8);
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  test_rule ();
  test_iou_equality ();
  test_iou_equality_detect ();
  test_letterbox_half_pixel ();
  test_half_ties ();
  test_square_auto ();
  cnms_ctx_free (ctx);
  return check_result ("test-rules");
}
