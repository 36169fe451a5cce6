/* The layout table (cnms_layout_info, cnms_layout_from_name,
 * cnms_layout_name): every layout's row, its name both ways, its head,
 * whether it is oriented and whether AUTO may choose it; the values that
 * are no layout. And the prototypes' rule: yolov8-seg takes them, every
 * other layout refuses them (cnms_tensor_shape and cnms_detect alike). */
#include <string.h>

#include "cudanms.h"
#include "check.h"
#include "tensors.h"

static const struct
{
  cnms_layout layout;
  const char *name;
  cnms_head head;
  int oriented;
  int auto_detected;
} expected[] = {
  {CNMS_LAYOUT_AUTO, "auto", CNMS_HEAD_NONE, 0, 0},
  {CNMS_LAYOUT_YOLOV5, "yolov5", CNMS_HEAD_NONE, 0, 1},
  {CNMS_LAYOUT_YOLOV8, "yolov8", CNMS_HEAD_NONE, 0, 1},
  {CNMS_LAYOUT_END2END, "end2end", CNMS_HEAD_NONE, 0, 1},
  {CNMS_LAYOUT_YOLOV8_OBB, "yolov8-obb", CNMS_HEAD_NONE, 1, 0},
  {CNMS_LAYOUT_LANEATT, "laneatt", CNMS_HEAD_LANE, 0, 0},
  {CNMS_LAYOUT_YOLOV8_POSE, "yolov8-pose", CNMS_HEAD_KEYPOINTS, 0, 0},
  {CNMS_LAYOUT_YOLOV8_SEG, "yolov8-seg", CNMS_HEAD_MASK, 0, 0},
};

static void
test_table (void)
{
  const int n_expected = (int) (sizeof expected / sizeof expected[0]);
  int l;

  CHECK_INT (CNMS_N_LAYOUTS, 8);
  CHECK_INT (n_expected, CNMS_N_LAYOUTS);
  for (l = 0; l < CNMS_N_LAYOUTS; l++) {
    const cnms_layout_desc *d = cnms_layout_info ((cnms_layout) l);

    CHECK (d != NULL);
    if (d == NULL)
      continue;
    CHECK_INT (d->layout, l);
    CHECK (d->name != NULL);
    CHECK (d->description != NULL && strlen (d->description) > 0);
    if (d->name == NULL)
      continue;
    CHECK_INT (cnms_layout_from_name (d->name), l);
    CHECK_INT (strcmp (cnms_layout_name ((cnms_layout) l), d->name), 0);
    /* the same row on every call */
    CHECK (cnms_layout_info ((cnms_layout) l) == d);
    if (l >= n_expected)
      continue;
    CHECK_INT (expected[l].layout, l);
    CHECK_INT (strcmp (d->name, expected[l].name), 0);
    CHECK_INT (d->head, expected[l].head);
    CHECK_INT (d->oriented != 0, expected[l].oriented);
    CHECK_INT (d->auto_detected != 0, expected[l].auto_detected);
  }
  /* values that are no layout */
  CHECK (cnms_layout_info ((cnms_layout) CNMS_N_LAYOUTS) == NULL);
  CHECK (cnms_layout_info ((cnms_layout) - 1) == NULL);
  CHECK_INT (strcmp (cnms_layout_name ((cnms_layout) CNMS_N_LAYOUTS),
          "unknown"), 0);
  CHECK_INT (strcmp (cnms_layout_name ((cnms_layout) - 1), "unknown"), 0);
  /* names that are no layout: exact, whole names only */
  CHECK_INT (cnms_layout_from_name ("nope"), -1);
  CHECK_INT (cnms_layout_from_name (""), -1);
  CHECK_INT (cnms_layout_from_name ("YOLOV8"), -1);
  CHECK_INT (cnms_layout_from_name ("yolov8-"), -1);
  CHECK_INT (cnms_layout_from_name ("yolov"), -1);
  CHECK_INT (cnms_layout_from_name (NULL), -1);
}

/* A tensor of each layout that fits it, and yolov8-seg's prototypes:
 * protos with any other layout, or none with yolov8-seg, is
 * CNMS_ERR_INVALID_ARG, from cnms_tensor_shape and cnms_detect. */
static void
test_protos_rule (void)
{
  /* all zero: [1, 6, 8]: auto and yolov8 (2 classes), yolov8-obb (1
   * class), yolov8-seg (1 class, 1 coefficient); [1, 4, 9]: yolov5 (4
   * classes), laneatt (S = 4, lanes without a row); [1, 4, 6]: end2end;
   * [1, 8, 4]: yolov8-pose (K = 1). Nothing is detected. */
  static float data[64];
  static const float proto[1 * 2 * 2] = { 1.0f, 1.0f, 1.0f, 1.0f };
  const cnms_tensor t6x8 = tensor3 (data, 6, 8);
  const cnms_tensor t4x9 = tensor3 (data, 4, 9);
  const cnms_tensor t4x6 = tensor3 (data, 4, 6);
  const cnms_tensor t8x4 = tensor3 (data, 8, 4);
  const cnms_tensor pt = tensor_dims (proto, sizeof proto,
      CNMS_DTYPE_FLOAT32, 3, 1, 2, 2);
  cnms_ctx *ctx;
  cnms_params p;
  int l;

  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  cnms_params_init (&p);
  for (l = 0; l < CNMS_N_LAYOUTS; l++) {
    const cnms_tensor *t;
    const cnms_det *d = NULL;
    cnms_shape s;
    char msg[256];
    int n = -1;

    switch (l) {
      case CNMS_LAYOUT_YOLOV5:
      case CNMS_LAYOUT_LANEATT:
        t = &t4x9;
        break;
      case CNMS_LAYOUT_END2END:
        t = &t4x6;
        break;
      case CNMS_LAYOUT_YOLOV8_POSE:
        t = &t8x4;
        break;
      default:
        t = &t6x8;
        break;
    }
    /* the right prototypes (those of seg, none otherwise): accepted */
    msg[0] = '\0';
    CHECK_INT (cnms_tensor_shape (t, l == CNMS_LAYOUT_YOLOV8_SEG ? &pt :
            NULL, (cnms_layout) l, &p, &s, msg, sizeof msg), CNMS_OK);
    if (msg[0] != '\0')
      fprintf (stderr, "  layout %d: %s\n", l, msg);
    CHECK_INT (cnms_detect (ctx, t, l == CNMS_LAYOUT_YOLOV8_SEG ? &pt : NULL,
            (cnms_layout) l, &p, &d, &n), CNMS_OK);
    CHECK_INT (n, 0);
    /* the wrong ones: refused, with a message */
    msg[0] = '\0';
    CHECK_INT (cnms_tensor_shape (t, l == CNMS_LAYOUT_YOLOV8_SEG ? NULL :
            &pt, (cnms_layout) l, &p, &s, msg, sizeof msg),
        CNMS_ERR_INVALID_ARG);
    CHECK (strstr (msg, "prototypes") != NULL);
    n = -1;
    CHECK_INT (cnms_detect (ctx, t, l == CNMS_LAYOUT_YOLOV8_SEG ? NULL : &pt,
            (cnms_layout) l, &p, &d, &n), CNMS_ERR_INVALID_ARG);
    CHECK (strstr (cnms_ctx_error (ctx), "prototypes") != NULL);
    CHECK_INT (n, 0);
  }
  cnms_ctx_free (ctx);
}

int
main (void)
{
  test_table ();
  test_protos_rule ();
  return check_result ("test-layouts");
}
