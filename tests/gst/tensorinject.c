/* gst-check tests of tensorinject: synthetic determinism through cudanms,
 * .npy replay (one file and a %d pattern) and the synthetic layouts. */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "helpers.h"

#define SYNTH_CAPS "video/x-raw,format=GRAY8,width=640,height=480,framerate=30/1"
#define N_FRAMES 30

/* ROI lists of n frames of "tensorinject <props> ! cudanms", one string. */
static gchar *
run_synthetic (const gchar * props, gint n, guint * total_rois)
{
  gchar *desc = g_strdup_printf ("tensorinject %s ! cudanms", props);
  GstHarness *h = gst_harness_new_parse (desc);
  GString *all = g_string_new (NULL);
  gint i;

  *total_rois = 0;
  gst_harness_set_src_caps_str (h, SYNTH_CAPS);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 640 * 480, NULL), *out;
    gchar *rois;

    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    out = gst_harness_pull (h);
    *total_rois += count_rois (out);
    rois = rois_to_string (out);
    g_string_append_printf (all, "%d:%s\n", i, rois);
    g_free (rois);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_free (desc);
  return g_string_free (all, FALSE);
}

GST_START_TEST (test_synthetic_determinism)
{
  guint n1, n2, n3;
  gchar *a = run_synthetic ("seed=42", N_FRAMES, &n1);
  gchar *b = run_synthetic ("seed=42", N_FRAMES, &n2);
  gchar *c = run_synthetic ("seed=43", N_FRAMES, &n3);

  fail_unless_equals_string (a, b);
  fail_unless_equals_int (n1, n2);
  fail_unless (strcmp (a, c) != 0);
  /* six objects, each found at least once per frame on average */
  fail_unless (n1 >= 6 * N_FRAMES, "only %u ROIs", n1);
  g_free (a);
  g_free (b);
  g_free (c);
}

GST_END_TEST;

GST_START_TEST (test_synthetic_layouts)
{
  const gchar *props[] = {
    "layout=yolov5 seed=3",
    "layout=yolov8 data-type=float16 seed=3",
    "layout=yolov5 data-type=float16 num-classes=3 model-size=320x320 seed=3",
    "num-objects=0 noise=0",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    guint n;
    gchar *s = run_synthetic (props[i], 5, &n);

    if (i == 3) {
      fail_unless_equals_int (n, 0);
    } else {
      fail_unless (n >= 5, "%s: only %u ROIs", props[i], n);
    }
    g_free (s);
  }
}

GST_END_TEST;

/* The synthetic objects move: the ROI lists differ between frames. */
GST_START_TEST (test_synthetic_motion)
{
  guint n;
  gchar *s = run_synthetic ("seed=9 num-objects=2", 3, &n);
  gchar **frames = g_strsplit (s, "\n", -1);

  fail_unless (strcmp (frames[0] + 2, frames[1] + 2) != 0);
  fail_unless (strcmp (frames[1] + 2, frames[2] + 2) != 0);
  g_strfreev (frames);
  g_free (s);
}

GST_END_TEST;

static GstHarness *
replay_harness (const gchar * location)
{
  gchar *desc = g_strdup_printf ("tensorinject location=\"%s\" ! "
      "cudanms model-size=%dx%d", location, FRAME_W, FRAME_H);
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  return h;
}

GST_START_TEST (test_replay_one_file)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  gchar *dir = g_dir_make_tmp ("cudanms-npy-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "hand.npy", NULL);
  GstHarness *h;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  gint i;

  write_npy (path, "<f4", dims, 3, t, n * 4);
  h = replay_harness (path);
  for (i = 0; i < 3; i++) {
    GstBuffer *out;

    fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (t);
}

GST_END_TEST;

GST_START_TEST (test_replay_pattern)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  const gint e2e_dims[] = { 1, 1, 6 };
  const gfloat e2e[] = { 10, 20, 30, 40, 0.5f, 4 };
  gchar *dir = g_dir_make_tmp ("cudanms-npy-XXXXXX", NULL);
  gchar *f0 = g_build_filename (dir, "t0.npy", NULL);
  gchar *f1 = g_build_filename (dir, "t1.npy", NULL);
  gchar *pattern = g_build_filename (dir, "t%d.npy", NULL);
  GstHarness *h;
  GstBuffer *out;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  guint16 *half = to_half (t, n);
  gchar *str;

  write_npy (f0, "<f2", dims, 3, half, n * 2);
  write_npy (f1, "<f4", e2e_dims, 3, e2e, sizeof e2e);
  h = replay_harness (pattern);

  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  str = rois_to_string (out);
  fail_unless_equals_string (str, "10,20,20,20,class-4,0.5;");
  g_free (str);
  gst_buffer_unref (out);

  /* there is no t2.npy */
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
      GST_FLOW_ERROR);
  gst_harness_teardown (h);

  g_unlink (f0);
  g_unlink (f1);
  g_rmdir (dir);
  g_free (f0);
  g_free (f1);
  g_free (pattern);
  g_free (dir);
  g_free (half);
  g_free (t);
}

GST_END_TEST;

static Suite *
tensorinject_suite (void)
{
  Suite *s = suite_create ("tensorinject");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_synthetic_determinism);
  tcase_add_test (tc, test_synthetic_layouts);
  tcase_add_test (tc, test_synthetic_motion);
  tcase_add_test (tc, test_replay_one_file);
  tcase_add_test (tc, test_replay_pattern);
  return s;
}

GST_CHECK_MAIN (tensorinject);
