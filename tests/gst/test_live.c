/* gst-check tests of properties changed while cudanms is PLAYING:
 * attach-meta set to what this build cannot attach is refused (a
 * g_warning and an element warning with the exact text, the old value
 * read back, ROIs still attached), and accepted where the analytics
 * library is (HAVE_GST_ANALYTICS); iou changed between frames of
 * overlapping boxes decides exactly which boxes each frame keeps. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"

/* The attach-meta value's nick. */
static gchar *
attach_meta_nick (GstElement * el)
{
  GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS (el),
      "attach-meta");
  GEnumClass *klass;
  GEnumValue *ev;
  gint value = -1;
  gchar *nick;

  fail_unless (spec != NULL && G_IS_PARAM_SPEC_ENUM (spec));
  g_object_get (el, "attach-meta", &value, NULL);
  klass = g_type_class_ref (spec->value_type);
  ev = g_enum_get_value (klass, value);
  fail_unless (ev != NULL, "attach-meta %d has no nick", value);
  nick = g_strdup (ev->value_nick);
  g_type_class_unref (klass);
  return nick;
}

static void
assert_attach_meta (GstElement * el, const gchar * nick)
{
  gchar *now = attach_meta_nick (el);

  fail_unless_equals_string (now, nick);
  g_free (now);
}

#ifndef HAVE_GST_ANALYTICS
/* Pops the next warning; asserts its text is exactly what. */
static void
expect_warning_text (GstBus * bus, const gchar * what)
{
  gchar *text = pop_warning (bus);

  fail_unless (text != NULL, "no warning '%s'", what);
  fail_unless_equals_string (text, what);
  g_free (text);
}

/* While PLAYING, analytics and both are refused on a build without the
 * analytics library: the value stays roi and the ROIs keep coming; set
 * stopped, the value is taken (start() refuses it: test_cudanms.c). */
GST_START_TEST (test_attach_meta_live)
{
  const gchar *refused[] = { "analytics", "both" };
  GstHarness *h = new_harness ("attach-meta=roi");
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;
  guint i;

  fail_unless_equals_int (GST_STATE (h->element), GST_STATE_PLAYING);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  for (i = 0; i < G_N_ELEMENTS (refused); i++) {
    gchar *text = g_strdup_printf ("attach-meta=%s needs GStreamer's "
        "analytics library (>= 1.24), which this build lacks; keeping "
        "attach-meta=roi.", refused[i]);

    ASSERT_WARNING (gst_util_set_object_arg (G_OBJECT (h->element),
            "attach-meta", refused[i]));
    assert_attach_meta (h->element, "roi");
    expect_warning_text (bus, text);
    assert_no_warning (bus);
    out = push_pull (h, hand_frame_yolov8 ());
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
    g_free (text);
  }
  /* roi itself is taken without a word */
  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "roi");
  assert_attach_meta (h->element, "roi");
  assert_no_warning (bus);
  /* stopped, the value is taken */
  fail_unless_equals_int (gst_element_set_state (h->element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "analytics");
  assert_attach_meta (h->element, "analytics");
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;
#else
/* With the analytics library the same live set is taken: no warning, the
 * value read back, the next buffer carries no ROI (one relation meta). */
GST_START_TEST (test_attach_meta_live)
{
  GstHarness *h = new_harness ("attach-meta=roi");
  GstBus *bus = watch_bus (h->element);
  GType relation;
  GstBuffer *out;

  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "analytics");
  assert_attach_meta (h->element, "analytics");
  assert_no_warning (bus);
  out = push_pull (h, hand_frame_yolov8 ());
  fail_unless_equals_int (count_rois (out), 0);
  relation = g_type_from_name ("GstAnalyticsRelationMetaAPI");
  fail_unless (relation != 0);
  fail_unless_equals_int (count_metas (out, relation), 1);
  gst_buffer_unref (out);
  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "both");
  assert_attach_meta (h->element, "both");
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  fail_unless_equals_int (count_metas (out, relation), 1);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;
#endif

/* Three boxes of class 0, x 100..200, stacked in y: A 0..100 (0.9),
 * B 0..30 (0.8), C 40..100 (0.7). IoU(A, B) = 0.3, IoU(A, C) = 0.6,
 * IoU(B, C) = 0. yolov8 [1, 5, 8]: anchors 3..7 score 0. */
static GstBuffer *
stacked_frame (void)
{
  static const gfloat boxes[3][5] = {
    {150, 50, 100, 100, 0.9f},
    {150, 15, 100, 30, 0.8f},
    {150, 70, 100, 60, 0.7f},
  };
  gfloat t[5 * 8] = { 0 };
  guint a, c;

  for (a = 0; a < 3; a++)
    for (c = 0; c < 5; c++)
      t[c * 8 + a] = boxes[a][c];
  return frame_with_tensor ("float32", "1,5,8", t, sizeof t);
}

#define ROI_A "100,0,100,100,class-0,0.899999976;"
#define ROI_B "100,0,100,30,class-0,0.800000012;"
#define ROI_C "100,40,100,60,class-0,0.699999988;"

/* iou changed between frames while PLAYING: each frame keeps exactly the
 * boxes its iou keeps (a box is suppressed by a kept one of IoU strictly
 * above iou). */
GST_START_TEST (test_iou_live)
{
  const struct
  {
    gfloat iou;
    const gchar *rois;
  } steps[] = {
    {0.7f, ROI_A ROI_B ROI_C},
    {0.45f, ROI_A ROI_B},
    {0.2f, ROI_A},
    {0.7f, ROI_A ROI_B ROI_C},
    {0.6f, ROI_A ROI_B ROI_C},  /* 0.6 is not above 0.6 */
    {0.5f, ROI_A ROI_B},
    {0.3f, ROI_A ROI_B},        /* 0.3 is not above 0.3 */
    {0.29f, ROI_A},
  };
  GstHarness *h = new_harness ("iou=0.7");
  GstBus *bus = watch_bus (h->element);
  guint i;

  fail_unless_equals_int (GST_STATE (h->element), GST_STATE_PLAYING);
  for (i = 0; i < G_N_ELEMENTS (steps); i++) {
    GstBuffer *out;
    gfloat iou = 0;

    g_object_set (h->element, "iou", steps[i].iou, NULL);
    g_object_get (h->element, "iou", &iou, NULL);
    fail_unless_equals_float (iou, steps[i].iou);
    out = push_pull (h, stacked_frame ());
    assert_rois_string (out, steps[i].rois);
    gst_buffer_unref (out);
    /* the same frame twice: the value stays */
    out = push_pull (h, stacked_frame ());
    assert_rois_string (out, steps[i].rois);
    gst_buffer_unref (out);
  }
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
live_suite (void)
{
  Suite *s = suite_create ("cudanms-live");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_attach_meta_live);
  tcase_add_test (tc, test_iou_live);
  return s;
}

GST_CHECK_MAIN (live);
