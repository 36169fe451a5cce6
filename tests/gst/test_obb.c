/* gst-check tests of oriented boxes (layout yolov8-obb) through cudanms:
 * the kept boxes of a hand-made YOLOv8-OBB tensor with their ROIs (the
 * clipped hull) and "detection" structures (the oriented box), labels and
 * ids; both ways to select the layout (the property, and the tensor id
 * yolo-v8-obb-out with layout=auto) and auto never guessing it; bad OBB
 * tensors; the letterbox and the unequal-stretch mappings against values
 * computed here in double.
 *
 * The scene: YOLOv8-OBB [1, 4+2+1, 8], frame = model = 320x240, labels
 * plane, ship; cx cy w h angle, class, score:
 *   a0 100 80  60 20  0.5        plane 0.90
 *   a1 102 81  58 21  0.52       plane 0.80  a0's near duplicate
 *   a2 100 80  60 20  0.5 + pi/2 plane 0.70  a0 turned a quarter: IoU 0.2
 *   a3 100 80  60 20  0.5        ship  0.60  a0 in another class
 *   a4 200 150 30 30  0          plane 0.20  below the threshold
 *   a5 310 230 40 30  -0.3       ship  0.85  partly outside the frame
 *   a6 -100 50 20 20  0.1        plane 0.95  wholly outside: no candidate
 *   a7 150 100 0  20  0.2        ship  0.99  w = 0: no candidate
 * kept (class-aware, iou 0.45): a0, a5, a2, a3. */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "gst_helpers.h"

#define N 8
#define C 2
#define ROWS (4 + C + 1)
#define QUARTER 1.5707964f      /* pi / 2 in float */

typedef struct
{
  gfloat cx, cy, w, h, angle;
  gint cls;
  gfloat score;
} ObbAnchor;

static const ObbAnchor scene[N] = {
  {100, 80, 60, 20, 0.5f, 0, 0.90f},
  {102, 81, 58, 21, 0.52f, 0, 0.80f},
  {100, 80, 60, 20, 0.5f + QUARTER, 0, 0.70f},
  {100, 80, 60, 20, 0.5f, 1, 0.60f},
  {200, 150, 30, 30, 0.0f, 0, 0.20f},
  {310, 230, 40, 30, -0.3f, 1, 0.85f},
  {-100, 50, 20, 20, 0.1f, 0, 0.95f},
  {150, 100, 0, 20, 0.2f, 1, 0.99f},
};

static gchar *labels_path;

/* The YOLOv8-OBB tensor of n anchors a (planes of n: cx, cy, w, h, the
 * classes' scores, the angle), on make_frame (0), with id (NULL: none). */
static GstBuffer *
obb_frame (const ObbAnchor * a, gint n, const gchar * id)
{
  GstBuffer *buf = make_frame (0);
  gfloat *t = g_new0 (gfloat, ROWS * n);
  const gint dims[3] = { 1, ROWS, n };
  gint i;

  for (i = 0; i < n; i++) {
    t[0 * n + i] = a[i].cx;
    t[1 * n + i] = a[i].cy;
    t[2 * n + i] = a[i].w;
    t[3 * n + i] = a[i].h;
    t[(4 + a[i].cls) * n + i] = a[i].score;
    t[(4 + C) * n + i] = a[i].angle;
  }
  attach_tensor (buf, id, "float32", dims, 3, t, sizeof (gfloat) * ROWS * n);
  g_free (t);
  return buf;
}

/* One kept oriented box as the element must attach it: the record in
 * frame pixels and its ROI. */
typedef struct
{
  gdouble cx, cy, w, h, angle;
  gint cls;
  const gchar *label;
  gfloat score;
} ExpectedObb;

/* The axis-aligned hull of an oriented box, in double, clipped to fw x fh. */
static void
hull_of (const ExpectedObb * e, gint fw, gint fh, gdouble r[4])
{
  gdouble ex = fabs (e->w / 2 * cos (e->angle))
      + fabs (e->h / 2 * sin (e->angle));
  gdouble ey = fabs (e->w / 2 * sin (e->angle))
      + fabs (e->h / 2 * cos (e->angle));

  r[0] = CLAMP (e->cx - ex, 0.0, (gdouble) fw);
  r[1] = CLAMP (e->cy - ey, 0.0, (gdouble) fh);
  r[2] = CLAMP (e->cx + ex, 0.0, (gdouble) fw);
  r[3] = CLAMP (e->cy + ey, 0.0, (gdouble) fh);
}

static gdouble
get_double (const GstStructure * s, const gchar * name)
{
  gdouble v = NAN;

  fail_unless (gst_structure_get_double (s, name, &v), "no %s in %"
      GST_PTR_FORMAT, name, s);
  return v;
}

/* Asserts buf's ROIs are exactly want[0..n) in kept order, ids first_id..
 * fw x fh is the frame; the oriented fields must equal want's values as
 * float (exact, tol 0) or within a relative tol. */
static void
assert_obb_rois (GstBuffer * buf, const ExpectedObb * want, gint n,
    gint fw, gint fh, gdouble tol)
{
  gpointer state = NULL;
  GstMeta *m;
  gint i = 0;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GstStructure *det;
    const ExpectedObb *e;
    gdouble hull[4], got[5], exp[5];
    gint k, label_id = -1;

    fail_unless (i < n, "more than %d ROIs", n);
    e = &want[i];
    hull_of (e, fw, fh, hull);
    /* no hull edge sits within 1e-3 of an integer unless it is one (an
     * angle of 0, a clip): floor and ceil round alike here and there */
    for (k = 0; k < 4; k++)
      fail_unless (fabs (hull[k] - round (hull[k])) > 1e-3
          || hull[k] == round (hull[k]));
    fail_unless_equals_int (roi->id, i);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), e->label);
    fail_unless_equals_int (roi->x, (gint) floor (hull[0]));
    fail_unless_equals_int (roi->y, (gint) floor (hull[1]));
    fail_unless_equals_int (roi->w, (gint) ceil (hull[2]) - roi->x);
    fail_unless_equals_int (roi->h, (gint) ceil (hull[3]) - roi->y);

    det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (det != NULL);
    fail_unless (gst_structure_get_int (det, "label_id", &label_id));
    fail_unless_equals_int (label_id, e->cls);
    fail_unless_equals_string (gst_structure_get_string (det, "label"),
        e->label);
    fail_unless (get_double (det, "confidence") == (gdouble) e->score);
    fail_unless (fabs (get_double (det, "x_min") - hull[0] / fw) < 1e-5);
    fail_unless (fabs (get_double (det, "y_min") - hull[1] / fh) < 1e-5);
    fail_unless (fabs (get_double (det, "x_max") - hull[2] / fw) < 1e-5);
    fail_unless (fabs (get_double (det, "y_max") - hull[3] / fh) < 1e-5);
    got[0] = get_double (det, "cx");
    got[1] = get_double (det, "cy");
    got[2] = get_double (det, "width");
    got[3] = get_double (det, "height");
    got[4] = get_double (det, "angle");
    exp[0] = e->cx;
    exp[1] = e->cy;
    exp[2] = e->w;
    exp[3] = e->h;
    exp[4] = e->angle;
    for (k = 0; k < 5; k++) {
      if (tol == 0)
        fail_unless (got[k] == (gdouble) (gfloat) exp[k], "ROI %d field %d: "
            "%.9g, expected %.9g", i, k, got[k], (gdouble) (gfloat) exp[k]);
      else
        fail_unless (fabs (got[k] - exp[k]) <= tol * MAX (1.0, fabs (exp[k])),
            "ROI %d field %d: %.9g, expected %.9g", i, k, got[k], exp[k]);
    }
    i++;
  }
  fail_unless_equals_int (i, n);
}

/* The scene's kept boxes (frame = model: the tensor's own values). */
static const ExpectedObb scene_kept[] = {
  {100, 80, 60, 20, 0.5f, 0, "plane", 0.90f},
  {310, 230, 40, 30, -0.3f, 1, "ship", 0.85f},
  {100, 80, 60, 20, 0.5f + QUARTER, 0, "plane", 0.70f},
  {100, 80, 60, 20, 0.5f, 1, "ship", 0.60f},
};

static GstHarness *
obb_harness (const gchar * props)
{
  gchar *all = g_strdup_printf ("label-file=%s %s", labels_path, props);
  GstHarness *h = new_harness (all);

  g_free (all);
  return h;
}

GST_START_TEST (test_obb_kept)
{
  GstHarness *h = obb_harness ("layout=yolov8-obb");
  GstBuffer *out = push_pull (h, obb_frame (scene, N, NULL));

  /* the hand-worked ROIs of a0, a5 (clipped at 320 x 240) and a2 */
  {
    GstVideoRegionOfInterestMeta *r0 =
        gst_buffer_get_video_region_of_interest_meta_id (out, 0);
    GstVideoRegionOfInterestMeta *r1 =
        gst_buffer_get_video_region_of_interest_meta_id (out, 1);
    GstVideoRegionOfInterestMeta *r2 =
        gst_buffer_get_video_region_of_interest_meta_id (out, 2);

    fail_unless (r0 != NULL && r1 != NULL && r2 != NULL);
    fail_unless (r0->x == 68 && r0->y == 56 && r0->w == 64 && r0->h == 48);
    fail_unless (r1->x == 286 && r1->y == 209 && r1->w == 34 && r1->h == 31);
    fail_unless (r2->x == 76 && r2->y == 48 && r2->w == 48 && r2->h == 64);
  }
  assert_obb_rois (out, scene_kept, G_N_ELEMENTS (scene_kept), FRAME_W,
      FRAME_H, 0);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"), 4);
  /* a0..a5 but a4: a6 (outside) and a7 (w = 0) are no candidates */
  fail_unless_equals_uint64 (get_stat (h->element, "candidates"), 5);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* class-agnostic: a3 (a0 in another class) goes, a2 (IoU 0.2) stays. */
GST_START_TEST (test_obb_class_agnostic)
{
  GstHarness *h = obb_harness ("layout=yolov8-obb class-agnostic=true");
  GstBuffer *out = push_pull (h, obb_frame (scene, N, NULL));

  assert_obb_rois (out, scene_kept, 3, FRAME_W, FRAME_H, 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* layout=auto: the tensor id yolo-v8-obb-out selects yolov8-obb, found by
 * the default search and by tensor-id alike. */
GST_START_TEST (test_obb_layout_by_id)
{
  const gchar *props[] = { "", "tensor-id=yolo-v8-obb-out" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = obb_harness (props[i]);
    GstBuffer *out = push_pull (h, obb_frame (scene, N, "yolo-v8-obb-out"));

    assert_obb_rois (out, scene_kept, G_N_ELEMENTS (scene_kept), FRAME_W,
        FRAME_H, 0);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* layout=auto never reads a tensor without that id as oriented boxes: the
 * same [1, 7, 8] tensor is yolov8 with 3 classes, the angle row its class
 * 2. Its best box is then a2 with its angle 2.0707963 as a class-2 score
 * (no label: class-2), the axis-aligned box [70, 70, 130, 90], without the
 * oriented fields. */
GST_START_TEST (test_obb_auto_never_guesses)
{
  const gchar *ids[] = { NULL, "detections" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (ids); i++) {
    GstHarness *h = obb_harness ("");
    GstBuffer *out = push_pull (h, obb_frame (scene, N, ids[i]));
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id (out, 0);
    GstStructure *det;

    fail_unless (roi != NULL);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "class-2");
    fail_unless (roi->x == 70 && roi->y == 70 && roi->w == 60
        && roi->h == 20);
    det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (det != NULL);
    fail_unless (get_double (det, "confidence") ==
        (gdouble) (0.5f + QUARTER));
    fail_unless (!gst_structure_has_field (det, "angle"));
    fail_unless (!gst_structure_has_field (det, "cx"));
    fail_unless_equals_uint64 (get_stat (h->element,
            "buffers-with-scores-above-1"), 1);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* A YOLOv8-OBB tensor without a class row ([1, 5, N]): a bad tensor,
 * warned once, the buffer passing without ROIs; forced or by its id. */
GST_START_TEST (test_obb_bad_tensor)
{
  const gchar *props[] = { "layout=yolov8-obb", "" };
  const gchar *ids[] = { NULL, "yolo-v8-obb-out" };
  const gchar *want[] = {
    "Bad detection tensor: a [1, 5, 4] tensor does not fit layout yolov8-obb",
    "Bad detection tensor: tensor 'yolo-v8-obb-out': a [1, 5, 4] tensor "
        "does not fit layout yolov8-obb",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = obb_harness (props[i]);
    GstBus *bus = watch_bus (h->element);
    gfloat t[5 * 4];
    const gint dims[3] = { 1, 5, 4 };
    gint f;

    for (f = 0; f < 20; f++)
      t[f] = 10.0f + f;
    for (f = 0; f < 2; f++) {
      GstBuffer *in = make_frame (0), *out;

      attach_tensor (in, ids[i], "float32", dims, 3, t, sizeof t);
      out = push_pull (h, in);
      fail_unless_equals_int (count_rois (out), 0);
      gst_buffer_unref (out);
    }
    {
      gchar *w = pop_warning (bus);

      fail_unless (w != NULL);
      fail_unless (g_str_has_prefix (w, want[i]), "%s", w);
      g_free (w);
      assert_no_warning (bus);
    }
    fail_unless_equals_uint64 (get_stat (h->element,
            "buffers-with-bad-tensor"), 2);
    unwatch_bus (bus);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Letterbox: a 640x640 model on the 320x240 frame: gain 2, pad_x
 * round (-0.1) = 0, pad_y round (79.9) = 80. The centre maps as a box
 * coordinate, w and h divide by the gain, the angle stays (all exact here:
 * divisions by 2). */
GST_START_TEST (test_obb_letterbox)
{
  static const ObbAnchor a[2] = {
    {200, 300, 100, 40, 0.75f, 1, 0.9f},
    {500, 500, 64, 120, -0.5f, 0, 0.8f},
  };
  const ExpectedObb want[2] = {
    {200 / 2.0, (300 - 80) / 2.0, 100 / 2.0, 40 / 2.0, 0.75f, 1, "ship",
        0.9f},
    {500 / 2.0, (500 - 80) / 2.0, 64 / 2.0, 120 / 2.0, -0.5f, 0, "plane",
        0.8f},
  };
  GstHarness *h = obb_harness ("layout=yolov8-obb model-size=640x640");
  GstBuffer *out = push_pull (h, obb_frame (a, 2, NULL));

  assert_obb_rois (out, want, 2, FRAME_W, FRAME_H, 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* An unequal stretch: a 640x640 model on a 320x160 frame without
 * letterbox, gains 2 (x) and 4 (y). The sides u = w/2 (cos a, sin a),
 * v = h/2 (-sin a, cos a) map per axis; the box is w' = 2 |u'|,
 * h' = 2 |v'|, a' = atan2 (u'y, u'x), computed here in double. */
GST_START_TEST (test_obb_stretch)
{
  static const ObbAnchor a[2] = {
    {320, 320, 120, 80, 0.0f, 0, 0.9f},
    {200, 400, 100, 60, 0.6f, 1, 0.8f},
  };
  ExpectedObb want[2];
  gint i;
  gchar *props = g_strdup_printf ("label-file=%s layout=yolov8-obb "
      "letterbox=false model-size=640x640", labels_path);
  GstHarness *h = new_harness_caps (props,
      "video/x-raw,format=GRAY8,width=320,height=160,framerate=30/1");
  GstBuffer *in, *out;

  g_free (props);
  for (i = 0; i < 2; i++) {
    gdouble ux = a[i].w * cos (a[i].angle) / 2.0;
    gdouble uy = a[i].w * sin (a[i].angle) / 4.0;
    gdouble vx = -a[i].h * sin (a[i].angle) / 2.0;
    gdouble vy = a[i].h * cos (a[i].angle) / 4.0;

    want[i].cx = a[i].cx / 2.0;
    want[i].cy = a[i].cy / 4.0;
    want[i].w = sqrt (ux * ux + uy * uy);
    want[i].h = sqrt (vx * vx + vy * vy);
    want[i].angle = atan2 (uy, ux);
    want[i].cls = a[i].cls;
    want[i].label = a[i].cls ? "ship" : "plane";
    want[i].score = a[i].score;
  }
  /* angle 0: u' = (30, 0), v' = (0, 10) exactly: w' = 60, h' = 20, a' = 0 */
  fail_unless (want[0].w == 60.0 && want[0].h == 20.0
      && want[0].angle == 0.0);
  /* the second is no rectangle's scaling: its angle and sides change */
  fail_unless (fabs (want[1].angle - 0.6) > 0.2);

  in = obb_frame (a, 2, NULL);
  out = push_pull (h, in);
  /* centres exact (divisions by 2 and 4), the rest to float precision */
  assert_obb_rois (out, want, 2, 320, 160, 2e-6);
  {
    GstStructure *det = gst_video_region_of_interest_meta_get_param
        (gst_buffer_get_video_region_of_interest_meta_id (out, 1),
        "detection");

    fail_unless (get_double (det, "cx") == 100.0);
    fail_unless (get_double (det, "cy") == 100.0);
  }
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The layout enum's nick and value name. */
GST_START_TEST (test_obb_layout_enum)
{
  GEnumClass *klass;
  GEnumValue *v;
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (el),
      "layout");

  klass = g_type_class_ref (ps->value_type);
  v = g_enum_get_value_by_nick (klass, "yolov8-obb");
  fail_unless (v != NULL);
  fail_unless_equals_string (v->value_name, "YOLOv8/v11-OBB [1, 4+C+1, N], "
      "oriented boxes (cx cy w h, classes, angle)");
  g_type_class_unref (klass);
  gst_object_unref (el);
}

GST_END_TEST;

static void
setup (void)
{
  GError *err = NULL;
  gint fd = g_file_open_tmp ("cudanms-obb-XXXXXX.txt", &labels_path, &err);

  fail_unless (fd >= 0);
  fail_unless (g_file_set_contents (labels_path, "plane\nship\n", -1, NULL));
  close (fd);
}

static void
teardown (void)
{
  g_unlink (labels_path);
  g_clear_pointer (&labels_path, g_free);
}

static Suite *
obb_suite (void)
{
  Suite *s = suite_create ("obb");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_obb_kept);
  tcase_add_test (tc, test_obb_class_agnostic);
  tcase_add_test (tc, test_obb_layout_by_id);
  tcase_add_test (tc, test_obb_auto_never_guesses);
  tcase_add_test (tc, test_obb_bad_tensor);
  tcase_add_test (tc, test_obb_letterbox);
  tcase_add_test (tc, test_obb_stretch);
  tcase_add_test (tc, test_obb_layout_enum);
  return s;
}

GST_CHECK_MAIN (obb);
