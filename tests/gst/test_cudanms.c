/* gst-check tests of the cudanms element: exact ROIs for hand-built tensors,
 * untouched video, missing and bad tensors, labels, tensor ids, fp16, the
 * layouts, property stress, state cycles and start failures. */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "cudanms.h"
#include "gst_helpers.h"

GST_START_TEST (test_exact_rois)
{
  GstHarness *h = new_harness (NULL);
  GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_video_unchanged)
{
  GstHarness *h = new_harness (NULL);
  GstBuffer *in = hand_frame_yolov8 ();
  GstMemory *mem = gst_buffer_peek_memory (in, 0);
  GstBuffer *out;
  GstMapInfo map;
  gsize i;

  /* An extra ref forces a (shallow) copy; the memory must stay shared. */
  gst_buffer_ref (in);
  out = push_pull (h, in);
  fail_unless (out != in);
  fail_unless (gst_buffer_peek_memory (out, 0) == mem);
  fail_unless_equals_int (count_rois (in), 0);
  assert_hand_rois (out, NULL);
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  fail_unless_equals_int (map.size, FRAME_W * FRAME_H);
  for (i = 0; i < map.size; i++)
    fail_unless_equals_int (map.data[i], 7);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_no_tensor)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  gint i;

  for (i = 0; i < 3; i++) {
    GstBuffer *out = push_pull (h, make_frame (1));

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  /* warned once per stream, not per buffer */
  assert_one_warning (bus, "no detection tensor");
  unwatch_bus (bus);
  gst_harness_teardown (h);

  /* a tensor with another id counts as missing too */
  h = new_harness ("tensor-id=nope");
  bus = watch_bus (h->element);
  for (i = 0; i < 2; i++) {
    GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  assert_one_warning (bus, "no detection tensor");
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Each bad tensor: a warning naming the problem, the buffer passes, no ROI,
 * and the next good buffer still works. */
static void
check_bad (const gchar * data_type, const gchar * dims_str,
    gconstpointer data, gsize size, const gchar * what)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf = make_frame (3), *out;

  attach_tensor_str (buf, data_type, dims_str, data, size);
  out = push_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_one_warning (bus, what);

  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_START_TEST (test_bad_tensors)
{
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  gfloat nan_inf[70];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (nan_inf); i++)
    nan_inf[i] = (i % 2) ? NAN : INFINITY;

  check_bad ("int8", "1,7,10", t, n * 4, "unknown tensor data-type 'int8'");
  check_bad ("float32", "1,3,2", t, 24, "cannot detect the layout");
  check_bad ("float32", "1,7,10", t, 100, "tensor data is 100 bytes, 280");
  check_bad ("float32", "1,7,0", t, 0, "tensor dim 2 is 0");
  check_bad ("float32", "1,x,10", t, n * 4, "tensor dims missing or malformed");
  check_bad ("float32", "1,7,10", nan_inf, sizeof (nan_inf),
      "only NaN/Inf values");
  g_free (t);
}

GST_END_TEST;

GST_START_TEST (test_label_file)
{
  gchar *path = g_build_filename (g_get_tmp_dir (), "cudanms-labels-XXXXXX",
      NULL);
  const gchar *labels[] = { "person", "car", NULL };
  gchar *props;
  gint fd = g_mkstemp (path);
  GstHarness *h;
  GstBuffer *out;

  fail_unless (fd >= 0);
  g_close (fd, NULL);
  /* two lines for three classes: class 2 falls back to class-2 */
  fail_unless (g_file_set_contents (path, "person\r\ncar\n", -1, NULL));
  props = g_strdup_printf ("label-file=%s", path);
  h = new_harness (props);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, labels);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_unlink (path);
  g_free (props);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_label_file_missing)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);

  g_object_set (el, "label-file", "/nonexistent/cudanms/labels.txt", NULL);
  check_start_fails (el, "Could not read label file");
}

GST_END_TEST;

GST_START_TEST (test_device_cuda_without_device)
{
  GstElement *el;

  if (cnms_cuda_device_count () > 0) {
    GST_INFO ("a CUDA device is present: skipping");
    return;
  }
  el = gst_element_factory_make ("cudanms", NULL);
  g_object_set (el, "device", 1 /* cuda */ , NULL);
  check_start_fails (el, "no CUDA device");
}

GST_END_TEST;

/* cuda-device-id past the host's devices (here: the device count itself,
 * out of range on every host): device=cuda refuses to start with an
 * error naming the id and the count; device=auto warns so, once, and
 * runs on the CPU with the CPU's ROIs. */
GST_START_TEST (test_device_id_out_of_range)
{
  const gint n = cnms_cuda_device_count ();
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  gchar *want, *want_yes, *want_no, *text, *backend = NULL;
  GstBus *bus = watch_bus (el);
  GstMessage *msg;
  GError *err = NULL;
  GstHarness *h;
  GstBuffer *out;

  g_object_set (el, "device", 1 /* cuda */ , "cuda-device-id", n, NULL);
  fail_unless_equals_int (gst_element_set_state (el, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  want = g_strdup_printf ("Could not start the post-processing backend: "
      "device=cuda, but cuda-device-id=%d names no device: this host has "
      "%d CUDA device%s (CUDA build: ", n, n, n == 1 ? "" : "s");
  want_yes = g_strconcat (want, "yes)", NULL);
  want_no = g_strconcat (want, "no)", NULL);
  fail_unless (strcmp (err->message, want_yes) == 0
      || strcmp (err->message, want_no) == 0, "'%s', expected '%s'",
      err->message, want_no);
  g_clear_error (&err);
  gst_message_unref (msg);
  g_free (want);
  g_free (want_yes);
  g_free (want_no);
  gst_element_set_state (el, GST_STATE_NULL);
  unwatch_bus (bus);
  gst_object_unref (el);

  el = gst_element_factory_make ("cudanms", NULL);
  gst_util_set_object_arg (G_OBJECT (el), "model-size", "320x240");
  g_object_set (el, "cuda-device-id", n, NULL);
  bus = watch_bus (el);
  h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  want = g_strdup_printf ("cuda-device-id=%d names no device: this host has "
      "%d CUDA device%s; device=auto runs on the CPU.", n, n,
      n == 1 ? "" : "s");
  text = pop_warning (bus);
  fail_unless (text != NULL, "no warning '%s'", want);
  fail_unless_equals_string (text, want);
  g_free (text);
  g_free (want);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  g_object_get (h->element, "backend", &backend, NULL);
  fail_unless_equals_string (backend, "cpu");
  g_free (backend);
  fail_unless_equals_uint64 (get_stat (h->element,
          "buffers-from-other-cuda-context"), 0);
  gst_harness_teardown (h);
  unwatch_bus (bus);
}

GST_END_TEST;

GST_START_TEST (test_tensor_id)
{
  GstHarness *h = new_harness ("tensor-id=detections");
  GstBuffer *buf = make_frame (0), *out;

  /* the selected tensor is attached between two others */
  attach_one_box (buf, "other");
  attach_hand_tensor (buf, "detections");
  attach_one_box (buf, NULL);
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  /* switching the id while playing selects the end2end tensor */
  g_object_set (h->element, "tensor-id", "other", NULL);
  buf = make_frame (0);
  attach_hand_tensor (buf, "detections");
  attach_one_box (buf, "other");
  out = push_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 1);
  assert_rois_string (out, ONE_BOX_ROIS);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_fp16)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  GstHarness *h = new_harness (NULL);
  GstBuffer *buf = make_frame (0), *out;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  guint16 *half = to_half (t, n);

  attach_tensor (buf, NULL, "float16", dims, 3, half, n * 2);
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  g_free (half);
  g_free (t);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_yolov5)
{
  const gint dims[] = { 1, HAND_ANCHORS, 5 + HAND_CLASSES };
  const gchar *layouts[] = { "auto", "yolov5" };
  gsize n;
  gfloat *t = hand_tensor_yolov5 (&n);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (layouts); i++) {
    gchar *props = g_strdup_printf ("layout=%s", layouts[i]);
    GstHarness *h = new_harness (props);
    GstBuffer *buf = make_frame (0), *out;

    attach_tensor (buf, NULL, "float32", dims, 3, t, n * 4);
    out = push_pull (h, buf);
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
    g_free (props);
  }
  g_free (t);
}

GST_END_TEST;

GST_START_TEST (test_yolov8_forced_and_wrong_layout)
{
  GstHarness *h = new_harness ("layout=yolov8");
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  /* the same tensor read as end2end does not fit: warning, no ROI */
  g_object_set (h->element, "layout", 3 /* end2end */ , NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_one_warning (bus, "does not fit layout");
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_end2end)
{
  /* x1 y1 x2 y2 score class; already suppressed, so overlaps stay */
  const gfloat t[] = {
    10, 20, 50, 60, 0.5f, 2,
    12, 22, 52, 62, 0.75f, 2,
    100, 100, 110, 110, 0.125f, 0,
    300, 230, 330, 250, 0.625f, 7,
  };
  const gint dims[] = { 1, 4, 6 };
  GstHarness *h = new_harness (NULL);
  GstBuffer *buf = make_frame (0), *out;
  gchar *str;

  attach_tensor (buf, NULL, "float32", dims, 3, t, sizeof t);
  out = push_pull (h, buf);
  str = rois_to_string (out);
  fail_unless_equals_string (str, "12,22,40,40,class-2,0.75;"
      "300,230,20,10,class-7,0.625;" "10,20,40,40,class-2,0.5;");
  g_free (str);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_letterbox_mapping)
{
  /* 640x640 model, 1280x720 frame: gain 0.5, vertical padding 140 */
  const gfloat t[] = { 100, 200, 150, 240, 0.5f, 1 };
  const gint dims[] = { 1, 1, 6 };
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 1280 * 720, NULL), *out;
  gchar *str;

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=GRAY8,width=1280,height=720,framerate=30/1");
  attach_tensor (buf, NULL, "float32", dims, 3, t, sizeof t);
  out = push_pull (h, buf);
  str = rois_to_string (out);
  fail_unless_equals_string (str, "200,120,100,80,class-1,0.5;");
  g_free (str);
  gst_buffer_unref (out);

  /* stretch: x / 0.5, y / (640 / 720) */
  g_object_set (h->element, "letterbox", FALSE, NULL);
  buf = gst_buffer_new_allocate (NULL, 1280 * 720, NULL);
  attach_tensor (buf, NULL, "float32", dims, 3, t, sizeof t);
  out = push_pull (h, buf);
  str = rois_to_string (out);
  fail_unless_equals_string (str, "200,225,100,45,class-1,0.5;");
  g_free (str);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_object_unref (el);
}

GST_END_TEST;

GST_START_TEST (test_property_stress)
{
  GstHarness *h = new_harness (NULL);
  GValue iou = G_VALUE_INIT, score = G_VALUE_INIT, maxd = G_VALUE_INIT;
  GstHarnessThread *t[3];
  gint i;

  g_value_init (&iou, G_TYPE_FLOAT);
  g_value_set_float (&iou, 0.5f);
  g_value_init (&score, G_TYPE_FLOAT);
  g_value_set_float (&score, 0.3f);
  g_value_init (&maxd, G_TYPE_INT);
  g_value_set_int (&maxd, 2);
  t[0] = gst_harness_stress_property_start_full (h, "iou", &iou, 0);
  t[1] = gst_harness_stress_property_start_full (h, "score-threshold",
      &score, 0);
  t[2] = gst_harness_stress_property_start_full (h, "max-detections",
      &maxd, 0);

  for (i = 0; i < 200; i++) {
    GstBuffer *out = push_pull (h, hand_frame_yolov8 ());
    guint n = count_rois (out);

    /* any mix of the values: at most 5 kept, at least the best 1 */
    fail_unless (n >= 1 && n <= HAND_KEPT);
    gst_buffer_unref (out);
  }
  for (i = 0; i < 3; i++)
    gst_harness_stress_thread_stop (t[i]);
  g_value_unset (&iou);
  g_value_unset (&score);
  g_value_unset (&maxd);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  GstHarness *h = new_harness (NULL);
  gint i;

  for (i = 0; i < 10; i++) {
    GstBuffer *out;

    fail_unless_equals_int (gst_element_set_state (h->element,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    gst_harness_play (h);
    gst_harness_set_src_caps_str (h, FRAME_CAPS);
    out = push_pull (h, hand_frame_yolov8 ());
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_meta_survives_copy)
{
  GstHarness *h = new_harness (NULL);
  GstBuffer *orig = hand_frame_yolov8 ();
  GstBuffer *copy = gst_buffer_copy (orig), *writable, *out;

  /* make_writable on a shared buffer copies it: the tensor goes along */
  gst_buffer_ref (orig);
  writable = gst_buffer_make_writable (orig);
  fail_unless (writable != orig);
  gst_buffer_unref (orig);

  out = push_pull (h, writable);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  out = push_pull (h, copy);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A third party registers the meta before the plugin loads: both coexist. */
GST_START_TEST (test_third_party_registration)
{
  GstHarness *h;
  GstBuffer *out;

  fail_unless (gst_meta_get_info ("CudanmsTensorMeta") == NULL);
  register_tensor_meta ();
  h = new_harness (NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Without tensor-id the first tensor attached that fits wins (GstBuffer
 * keeps metas in the order they were attached, not the most recent
 * first), whatever kind of meta carries it. */
GST_START_TEST (test_default_tensor_order)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf, *out;
  GstStructure *s;
  const gfloat bad[6] = { 0 };
  const gint bad_dims[] = { 1, 3, 2 };

  /* the end2end tensor first, the hand tensor second: end2end */
  buf = make_frame (0);
  attach_one_box (buf, "other");
  attach_hand_tensor (buf, "detections");
  out = push_pull (h, buf);
  assert_rois_string (out, ONE_BOX_ROIS);
  gst_buffer_unref (out);

  /* the other way round: the hand tensor, exactly */
  buf = make_frame (0);
  attach_hand_tensor (buf, "detections");
  attach_one_box (buf, "other");
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  /* a first tensor that fits no layout is passed over, without a warning */
  buf = make_frame (0);
  attach_tensor (buf, "odd", "float32", bad_dims, 3, bad, sizeof bad);
  attach_hand_tensor (buf, NULL);
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);

  /* kinds of meta do not matter, only the order: a protection meta
   * attached before the custom meta wins */
  buf = make_frame (0);
  s = gst_structure_new ("CudanmsTensorMeta", "data-type", G_TYPE_STRING,
      "float32", "dims", G_TYPE_STRING, "1,1,6", NULL);
  {
    GstBuffer *payload = gst_buffer_new_memdup (one_box_end2end,
        sizeof one_box_end2end);

    gst_structure_set (s, "data", GST_TYPE_BUFFER, payload, NULL);
    gst_buffer_unref (payload);
  }
  gst_buffer_add_protection_meta (buf, s);
  attach_hand_tensor (buf, NULL);
  out = push_pull (h, buf);
  assert_rois_string (out, ONE_BOX_ROIS);
  gst_buffer_unref (out);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Sets dims-order of the (only) custom tensor meta of buf. */
static void
set_dims_order (GstBuffer * buf, const gchar * order)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buf, "CudanmsTensorMeta");

  fail_unless (meta != NULL);
  gst_structure_set (gst_custom_meta_get_structure (meta), "dims-order",
      G_TYPE_STRING, order, NULL);
}

/* col-major is read like row-major (GStreamer 1.28's convention: the
 * bytes are read by the dims, whatever the label); others are bad. */
GST_START_TEST (test_dims_order)
{
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf = hand_frame_yolov8 (), *out;

  set_dims_order (buf, "col-major");
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  buf = hand_frame_yolov8 ();
  set_dims_order (buf, "diagonal");
  out = push_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_one_warning (bus, "unsupported tensor dims-order 'diagonal'");
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* yolo-v8-out is a yolov8 tensor even where the auto rule reads the dims
 * as yolov5 ([1, 12, 10]: 8 classes, 10 anchors). */
GST_START_TEST (test_standard_ids)
{
  const gint dims[] = { 1, 12, HAND_ANCHORS };
  GstHarness *h = new_harness (NULL);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf = make_frame (0), *out;
  gfloat wide[12 * HAND_ANCHORS] = { 0 };
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);

  memcpy (wide, t, n * 4);      /* classes 3..7 score 0 */
  attach_tensor (buf, "yolo-v8-out", "float32", dims, 3, wide, sizeof wide);
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  /* a standard non-detection id is skipped by default, even when its dims
   * fit a layout, and refused when selected */
  buf = make_frame (0);
  attach_one_box (buf, "classification-generic-out");
  attach_hand_tensor (buf, NULL);
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);

  g_object_set (h->element, "tensor-id", "classification-generic-out", NULL);
  buf = make_frame (0);
  attach_one_box (buf, "classification-generic-out");
  out = push_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_one_warning (bus, "not a detection tensor");
  g_free (t);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* attach-meta: both where the analytics library was found, roi otherwise,
 * and there analytics or both fail at start. */
GST_START_TEST (test_attach_meta_default)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  gint value = 0;

  g_object_get (el, "attach-meta", &value, NULL);
#ifdef HAVE_GST_ANALYTICS
  fail_unless_equals_int (value, 3 /* both */ );
  gst_object_unref (el);
#else
  fail_unless_equals_int (value, 1 /* roi */ );
  gst_util_set_object_arg (G_OBJECT (el), "attach-meta", "analytics");
  check_start_fails (el, "needs GStreamer's analytics library");
#endif
}

GST_END_TEST;

/* roi-params=false: the same ROIs (rectangle, label, id), no structure;
 * live: true again gives the next buffer the full contract. */
GST_START_TEST (test_roi_params)
{
  GstHarness *h = new_harness ("roi-params=false");
  gboolean params = TRUE;
  GstBuffer *out;
  guint i;

  g_object_get (h->element, "roi-params", &params, NULL);
  fail_unless (!params);
  out = push_pull (h, hand_frame_yolov8 ());
  fail_unless_equals_int (count_rois (out), HAND_KEPT);
  for (i = 0; i < HAND_KEPT; i++) {
    const ExpectedRoi *e = &hand_expected[i];
    GstVideoRegionOfInterestMeta *m =
        gst_buffer_get_video_region_of_interest_meta_id (out, (gint) i);
    gchar *label = g_strdup_printf ("class-%d", e->label_id);

    fail_unless (m != NULL, "no ROI with id %u", i);
    fail_unless_equals_string (g_quark_to_string (m->roi_type), label);
    fail_unless_equals_int (m->x, e->x);
    fail_unless_equals_int (m->y, e->y);
    fail_unless_equals_int (m->w, e->w);
    fail_unless_equals_int (m->h, e->h);
    fail_unless (m->params == NULL);
    g_free (label);
  }
  gst_buffer_unref (out);
  g_object_set (h->element, "roi-params", TRUE, NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  h = new_harness (NULL);
  g_object_get (h->element, "roi-params", &params, NULL);
  fail_unless (params);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
cudanms_suite (void)
{
  Suite *s = suite_create ("cudanms");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_exact_rois);
  tcase_add_test (tc, test_video_unchanged);
  tcase_add_test (tc, test_no_tensor);
  tcase_add_test (tc, test_bad_tensors);
  tcase_add_test (tc, test_label_file);
  tcase_add_test (tc, test_label_file_missing);
  tcase_add_test (tc, test_device_cuda_without_device);
  tcase_add_test (tc, test_device_id_out_of_range);
  tcase_add_test (tc, test_tensor_id);
  tcase_add_test (tc, test_fp16);
  tcase_add_test (tc, test_yolov5);
  tcase_add_test (tc, test_yolov8_forced_and_wrong_layout);
  tcase_add_test (tc, test_end2end);
  tcase_add_test (tc, test_letterbox_mapping);
  tcase_add_test (tc, test_property_stress);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_meta_survives_copy);
  tcase_add_test (tc, test_third_party_registration);
  tcase_add_test (tc, test_default_tensor_order);
  tcase_add_test (tc, test_dims_order);
  tcase_add_test (tc, test_standard_ids);
  tcase_add_test (tc, test_attach_meta_default);
  tcase_add_test (tc, test_roi_params);
  return s;
}

GST_CHECK_MAIN (cudanms);
