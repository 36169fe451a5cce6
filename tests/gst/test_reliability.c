/* gst-check tests of what cudanms tells the user: one warning per stream
 * and kind of problem, the counters of the "stats" property, the
 * candidate-cap message, scores above 1, end2end class values, label files
 * (ids past 65535, too short, empty, not UTF-8, a NUL, a directory), a
 * malformed model-size, data longer than its dims and the empty end2end
 * result. */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"

/* Pops the next warning, asserting that it contains what. */
static void
expect_warning (GstBus * bus, const gchar * what)
{
  gchar *text = pop_warning (bus);

  fail_unless (text != NULL, "no warning for '%s'", what);
  fail_unless (strstr (text, what) != NULL, "warning '%s' does not name "
      "'%s'", text, what);
  g_free (text);
}

static void
push_expect_rois (GstHarness * h, GstBuffer * buf, guint n)
{
  GstBuffer *out = push_pull (h, buf);

  fail_unless_equals_int (count_rois (out), n);
  gst_buffer_unref (out);
}

/* A malformed model-size is refused, visibly. */
GST_START_TEST (test_model_size_malformed)
{
  const gchar *bad[] = { "640*640", "0x0", "abc", "640x", "x640", "65537x1",
    "-1x5", " 640x640", "640x640 ", ""
  };
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;
  gchar *size;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    gchar *what = g_strdup_printf ("model-size \"%s\" is not WxH", bad[i]);

    ASSERT_WARNING (g_object_set (h->element, "model-size", bad[i], NULL));
    g_object_get (h->element, "model-size", &size, NULL);
    fail_unless_equals_string (size, "320x240");
    g_free (size);
    expect_warning (bus, what);
    g_free (what);
  }
  assert_no_warning (bus);
  /* the kept size is the one in use */
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  /* a good value is taken without a word, and normalised */
  g_object_set (h->element, "model-size", "640X480", NULL);
  g_object_get (h->element, "model-size", &size, NULL);
  fail_unless_equals_string (size, "640x480");
  g_free (size);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* One warning per stream and kind of problem, the rest counted; a new
 * stream (STREAM_START) is told once more. */
GST_START_TEST (test_warn_once_per_kind)
{
  const gsize short_sizes[] = { 100, 96, 40, 4, 100 };
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  guint i;

  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 0);
  /* short data: one kind, whatever the byte counts in the message */
  for (i = 0; i < G_N_ELEMENTS (short_sizes); i++)
    push_expect_rois (h, frame_with_tensor ("float32", "1,7,10", t,
            short_sizes[i]), 0);
  expect_warning (bus, "tensor data is 100 bytes, 280 needed");
  assert_no_warning (bus);
  for (i = 0; i < 3; i++)
    push_expect_rois (h, frame_with_tensor ("int8", "1,7,10", t, n * 4), 0);
  expect_warning (bus, "unknown tensor data-type 'int8'");
  for (i = 0; i < 2; i++)
    push_expect_rois (h, make_frame (0), 0);
  expect_warning (bus, "no detection tensor");
  push_expect_rois (h, hand_frame_yolov8 (), HAND_KEPT);
  assert_no_warning (bus);

  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 11);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      8);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-without-tensor"),
      2);
  fail_unless_equals_uint64 (get_stat (h->element, "candidates"), 6);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"), HAND_KEPT);

  /* a new stream: each problem is posted again, once */
  fail_unless (gst_harness_push_event (h,
          gst_event_new_stream_start ("second")));
  for (i = 0; i < 3; i++)
    push_expect_rois (h, frame_with_tensor ("float32", "1,7,10", t, 100), 0);
  expect_warning (bus, "tensor data is 100 bytes, 280 needed");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      11);
  g_free (t);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* [1, 0, 6] is an NMS-free model's empty answer, not bad. */
GST_START_TEST (test_empty_end2end)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  guint i;

  for (i = 0; i < 3; i++)
    push_expect_rois (h, frame_with_tensor ("float32", "1,0,6", NULL, 0), 0);
  push_expect_rois (h, frame_with_tensor ("float16", "1,0,6", NULL, 0), 0);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 4);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      0);
  /* [1, 0, 85] has no anchors and no end2end shape: bad */
  push_expect_rois (h, frame_with_tensor ("float32", "1,0,85", NULL, 0), 0);
  expect_warning (bus, "tensor dim 1 is 0");
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Data longer than the dims say is a bad tensor, not garbage. */
GST_START_TEST (test_long_data)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);

  push_expect_rois (h, frame_with_tensor ("float32", "1,7,8", t, n * 4), 0);
  expect_warning (bus, "tensor data is 280 bytes, 224 expected for a "
      "[1, 7, 8] float32 tensor (longer than its dims say: wrong dims?)");
  /* one more byte than the dims: also bad, the same kind (not posted
   * again), counted */
  push_expect_rois (h, frame_with_tensor ("float16", "1,7,10", t, 141), 0);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      2);
  push_expect_rois (h, hand_frame_yolov8 (), HAND_KEPT);
  g_free (t);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The warning of a tensor on a fresh harness with props: its text. */
static gchar *
warning_of (const gchar * props, GstBuffer * buf)
{
  GstHarness *h = new_harness (props);
  GstBus *bus = watch_bus (h->element);
  gchar *text;

  push_expect_rois (h, buf, 0);
  text = pop_warning (bus);
  fail_unless (text != NULL, "no warning with '%s'", props);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  return text;
}

/* The same misfit tensor is worded the same whether tensor-id selected it
 * or the search found it: prefixed with its id when it has one, every dim
 * named. */
GST_START_TEST (test_misfit_same_text)
{
  const gint dims[] = { 1, 84, 84 };
  const gchar *cases[][2] = {
    /* props: the expected reason */
    {"layout=auto", "cannot detect the layout of a [1, 84, 84] tensor "
          "(expected [1,N,5+C], [1,4+C,N] or [1,K,6])"},
    {"layout=end2end", "a [1, 84, 84] tensor does not fit layout end2end"},
  };
  gfloat *zeros = g_new0 (gfloat, 84 * 84);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *by_id_props = g_strdup_printf ("%s tensor-id=out0", cases[i][0]);
    gchar *want = g_strdup_printf ("Bad detection tensor: tensor 'out0': %s",
        cases[i][1]);
    gchar *plain = g_strdup_printf ("Bad detection tensor: %s", cases[i][1]);
    GstBuffer *buf;
    gchar *searched, *selected, *no_id;

    buf = make_frame (0);
    attach_tensor (buf, "out0", "float32", dims, 3, zeros, 84 * 84 * 4);
    searched = warning_of (cases[i][0], buf);
    buf = make_frame (0);
    attach_tensor (buf, "out0", "float32", dims, 3, zeros, 84 * 84 * 4);
    selected = warning_of (by_id_props, buf);
    fail_unless_equals_string (selected, searched);
    fail_unless_equals_string (searched, want);
    /* without an id: the reason alone */
    buf = make_frame (0);
    attach_tensor (buf, NULL, "float32", dims, 3, zeros, 84 * 84 * 4);
    no_id = warning_of (cases[i][0], buf);
    fail_unless_equals_string (no_id, plain);
    g_free (no_id);
    g_free (selected);
    g_free (searched);
    g_free (plain);
    g_free (want);
    g_free (by_id_props);
  }
  g_free (zeros);
}

GST_END_TEST;

/* A yolov8 tensor [1, 12, 10] that the auto rule reads as yolov5 gives
 * scores like 15000; the warning names the likely layout. */
GST_START_TEST (test_scores_above_one)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  gfloat wide[12 * HAND_ANCHORS] = { 0 };
  GstBuffer *out;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  guint i;

  memcpy (wide, t, n * 4);
  for (i = 0; i < 2; i++) {
    out = push_pull (h, frame_with_tensor ("float32", "1,12,10", wide,
            sizeof (wide)));
    /* rows 0 and 3 of the yolov5 reading: 50 x 300 and 10 x 100 */
    assert_rois_string (out,
        "49,2,102,200,class-0,15000;20,25,40,30,class-0,1000;");
    gst_buffer_unref (out);
  }
  expect_warning (bus, "Scores up to 15000 are not probabilities: the "
      "[1, 12, 10] tensor was decoded as yolov5 (layout=auto); is it yolov8 "
      "[1, 4+C, N] with 8 classes and 10 anchors? Then set layout=yolov8.");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element,
          "buffers-with-scores-above-1"), 2);
  /* read as what it is: the hand ROIs, no warning */
  g_object_set (h->element, "layout", 2 /* yolov8 */ , NULL);
  out = push_pull (h, frame_with_tensor ("float32", "1,12,10", wide,
          sizeof (wide)));
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element,
          "buffers-with-scores-above-1"), 2);
  g_free (t);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Candidates over max-candidates: told once per stream, with the counts,
 * and counted. */
GST_START_TEST (test_candidate_cap)
{
  GstHarness *h = new_harness ("max-candidates=2");
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;
  guint i;

  for (i = 0; i < 3; i++) {
    /* the best two: anchor 0, and anchor 1 that it suppresses */
    out = push_pull (h, hand_frame_yolov8 ());
    assert_rois_string (out, "80,80,40,40,class-0,0.875;");
    gst_buffer_unref (out);
  }
  expect_warning (bus, "6 candidates, more than max-candidates=2: the 2 best "
      "were kept, 4 dropped.");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "candidates"), 18);
  fail_unless_equals_uint64 (get_stat (h->element, "candidates-dropped"), 12);
  fail_unless_equals_uint64 (get_stat (h->element,
          "buffers-over-max-candidates"), 3);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"), 3);

  /* at the cap nothing is dropped */
  g_object_set (h->element, "max-candidates", 6, NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "candidates-dropped"), 12);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"),
      3 + HAND_KEPT);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* End2end class values. A class is an integer in [0, 2^24): others drop
 * their row, a fraction is truncated; both are told once and counted.
 * Rows below the score threshold do not count. */
GST_START_TEST (test_end2end_classes)
{
  const gfloat rows[] = {
    10, 10, 20, 20, 0.9f, -1,
    30, 30, 40, 40, 0.8f, 2.5f,
    50, 50, 60, 60, 0.7f, 16777216.0f,
    70, 70, 80, 80, 0.6f, NAN,
    90, 90, 100, 100, 0.2f, -5,
    110, 110, 120, 120, 0.5f, 3,
  };
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;
  guint i;

  for (i = 0; i < 2; i++) {
    out = push_pull (h, frame_with_tensor ("float32", "1,6,6", rows,
            sizeof (rows)));
    assert_rois_string (out, "30,30,10,10,class-2,0.800000012;"
        "110,110,10,10,class-3,0.5;");
    gst_buffer_unref (out);
  }
  expect_warning (bus, "End2end rows with class value -1 dropped: a class "
      "is an integer in [0, 2^24).");
  expect_warning (bus, "End2end class value 2.5 is not an integer; it is "
      "read as class 2.");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "end2end-invalid-classes"),
      6);
  fail_unless_equals_uint64 (get_stat (h->element,
          "end2end-fractional-classes"), 2);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A temporary label file; len -1: contents is a C string. */
static gchar *
write_labels (const gchar * contents, gssize len)
{
  gchar *path = g_build_filename (g_get_tmp_dir (), "cudanms-labels-XXXXXX",
      NULL);
  gint fd = g_mkstemp (path);

  fail_unless (fd >= 0);
  g_close (fd, NULL);
  fail_unless (g_file_set_contents (path, contents, len, NULL));
  return path;
}

static GstHarness *
harness_with_labels (const gchar * path)
{
  gchar *props = g_strdup_printf ("label-file=%s", path);
  GstHarness *h = new_harness (props);

  g_free (props);
  return h;
}

/* Ids past 65535 take their line of the label file; ids past the file
 * are told once and counted. */
GST_START_TEST (test_label_ids_past_65535)
{
  const gfloat rows[] = {
    10, 10, 20, 20, 0.9f, 70000,
    30, 30, 40, 40, 0.8f, 99999,
    50, 50, 60, 60, 0.7f, 100000,
  };
  GString *text = g_string_new (NULL);
  GstHarness *h;
  GstBus *bus;
  GstBuffer *out;
  GstStructure *s;
  gchar *path;
  gint label_id = -1;
  guint i;

  for (i = 0; i < 100000; i++)
    g_string_append_printf (text, "l%u\n", i);
  path = write_labels (text->str, (gssize) text->len);
  h = harness_with_labels (path);
  bus = watch_bus (h->element);
  out = push_pull (h, frame_with_tensor ("float32", "1,3,6", rows,
          sizeof (rows)));
  /* past the file and past 65535: the shared label, the id in label_id */
  assert_rois_string (out, "10,10,10,10,l70000,0.899999976;"
      "30,30,10,10,l99999,0.800000012;"
      "50,50,10,10,class-large,0.699999988;");
  s = gst_video_region_of_interest_meta_get_param
      (gst_buffer_get_video_region_of_interest_meta_id (out, 2), "detection");
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_int (s, "label_id", &label_id));
  fail_unless_equals_int (label_id, 100000);
  fail_unless_equals_string (gst_structure_get_string (s, "label"),
      "class-large");
  gst_buffer_unref (out);
  expect_warning (bus, "Class 100000 has no line in the label file "
      "(100000 labels); it is labelled \"class-large\".");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element,
          "detections-without-label"), 1);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  g_unlink (path);
  g_free (path);
  g_string_free (text, TRUE);
}

GST_END_TEST;

static void
check_labels_refused (const gchar * contents, gssize len, const gchar * what)
{
  gchar *path = write_labels (contents, len);
  gchar *expected = g_strdup_printf (what, path);
  GstElement *el = gst_element_factory_make ("cudanms", NULL);

  g_object_set (el, "label-file", path, NULL);
  check_start_fails (el, expected);
  g_unlink (path);
  g_free (expected);
  g_free (path);
}

/* A label file must be UTF-8 text; the line is named. */
GST_START_TEST (test_label_file_refused)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);

  check_labels_refused ("person\n\xff\xfe" "car\n", -1,
      "line 2 of %s is not valid UTF-8 (byte 1 of the line)");
  check_labels_refused ("person\ncar\nb\xc3us\n", -1,
      "line 3 of %s is not valid UTF-8 (byte 2 of the line)");
  /* a NUL is refused, not taken as the end of the file's text */
  check_labels_refused ("person\ncar\0bus\ntruck\n", 21,
      "line 2 of %s holds a NUL byte");
  g_object_set (el, "label-file", g_get_tmp_dir (), NULL);
  check_start_fails (el, "Could not read label file");
}

GST_END_TEST;

/* An empty label file is a warning at start; a short one names the first
 * class past it once, and counts the detections without a label. */
GST_START_TEST (test_label_file_short_or_empty)
{
  const gchar *labels[] = { "person", "car", NULL };
  gchar *path = write_labels ("", 0);
  GstHarness *h = harness_with_labels (path);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;

  /* the start warning was posted before the bus was ours: restart */
  fail_unless_equals_int (gst_element_set_state (h->element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  expect_warning (bus, "holds no labels; every label is class-<id>.");
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  g_unlink (path);
  g_free (path);

  /* two lines for three classes: class 2 (two kept boxes) has none */
  path = write_labels ("person\ncar\n", -1);
  h = harness_with_labels (path);
  bus = watch_bus (h->element);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, labels);
  gst_buffer_unref (out);
  out = push_pull (h, hand_frame_yolov8 ());
  gst_buffer_unref (out);
  expect_warning (bus, "Class 2 has no line in the label file (2 labels); "
      "it is labelled \"class-2\".");
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element,
          "detections-without-label"), 4);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

/* The counters start at zero with each start; the two times grow with
 * each decoded buffer, and only with those. */
GST_START_TEST (test_stats_reset)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GstHarness *h;
  GstStructure *s = NULL;
  guint64 backend, output;

  g_object_get (el, "stats", &s, NULL);
  fail_unless (s != NULL);
  fail_unless (gst_structure_has_name (s, "cudanms-stats"));
  /* 17 counters; "streams" only once a batch came */
  fail_unless_equals_int (gst_structure_n_fields (s), 17);
  fail_if (gst_structure_has_field (s, "streams"));
  gst_structure_free (s);
  fail_unless_equals_uint64 (get_stat (el, "buffers"), 0);
  fail_unless_equals_uint64 (get_stat (el, "batches"), 0);
  fail_unless_equals_uint64 (get_stat (el, "batch-other-objects"), 0);
  fail_unless_equals_uint64 (get_stat (el, "buffers-from-other-cuda-context"),
      0);
  fail_unless_equals_uint64 (get_stat (el, "backend-time"), 0);
  fail_unless_equals_uint64 (get_stat (el, "output-time"), 0);
  gst_object_unref (el);

  h = new_harness (NULL);
  push_expect_rois (h, hand_frame_yolov8 (), HAND_KEPT);
  backend = get_stat (h->element, "backend-time");
  output = get_stat (h->element, "output-time");
  fail_unless (backend > 0 && output > 0);
  push_expect_rois (h, hand_frame_yolov8 (), HAND_KEPT);
  fail_unless (get_stat (h->element, "backend-time") > backend);
  fail_unless (get_stat (h->element, "output-time") > output);
  backend = get_stat (h->element, "backend-time");
  output = get_stat (h->element, "output-time");
  /* a buffer without a tensor runs no backend and attaches nothing */
  gst_buffer_unref (push_pull (h, make_frame (0)));
  fail_unless_equals_uint64 (get_stat (h->element, "backend-time"), backend);
  fail_unless_equals_uint64 (get_stat (h->element, "output-time"), output);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 3);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-without-tensor"),
      1);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"),
      2 * HAND_KEPT);
  fail_unless_equals_int (gst_element_set_state (h->element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  /* stopped: the counts of the last run stay readable */
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 3);
  fail_unless_equals_uint64 (get_stat (h->element, "backend-time"), backend);
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 0);
  fail_unless_equals_uint64 (get_stat (h->element, "backend-time"), 0);
  push_expect_rois (h, hand_frame_yolov8 (), HAND_KEPT);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 1);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
reliability_suite (void)
{
  Suite *s = suite_create ("cudanms-reliability");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_model_size_malformed);
  tcase_add_test (tc, test_warn_once_per_kind);
  tcase_add_test (tc, test_empty_end2end);
  tcase_add_test (tc, test_long_data);
  tcase_add_test (tc, test_misfit_same_text);
  tcase_add_test (tc, test_scores_above_one);
  tcase_add_test (tc, test_candidate_cap);
  tcase_add_test (tc, test_end2end_classes);
  tcase_add_test (tc, test_label_ids_past_65535);
  tcase_add_test (tc, test_label_file_refused);
  tcase_add_test (tc, test_label_file_short_or_empty);
  tcase_add_test (tc, test_stats_reset);
  return s;
}

GST_CHECK_MAIN (reliability);
