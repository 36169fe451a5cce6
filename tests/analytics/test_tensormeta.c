/* GStreamer >= 1.26: cudanms reads every GstTensorMeta (and every GstTensor
 * in each), attaches GstAnalyticsODMtds, and (1.28) checks the tensor
 * described in caps. Exit 77 (skip) where GstTensorMeta does not exist. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "analytics_common.h"

#ifdef HAVE_GST_TENSOR_META

/* one_box_end2end's dims, as a GstTensor's */
static const gsize one_box_dims[] = { 1, 1, 6 };

static GstTensor *
one_box_tensor (const gchar * id)
{
  return make_tensor (id, GST_TENSOR_DIM_ORDER_ROW_MAJOR, one_box_dims, 3,
      one_box_end2end, sizeof one_box_end2end);
}

static GstTensor *
classifier_tensor (void)
{
  const gsize dims[] = { 1, 1000 };
  gfloat scores[1000] = { 0 };

  return make_tensor ("classification-generic-out",
      GST_TENSOR_DIM_ORDER_ROW_MAJOR, dims, 2, scores, sizeof scores);
}

static void
assert_message (GstBus * bus, GstMessageType type, const gchar * what)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, type);
  GError *err = NULL;

  fail_unless (msg != NULL, "no message for '%s'", what);
  if (type == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  else
    gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, what) != NULL, "'%s' lacks '%s'",
      err->message, what);
  g_clear_error (&err);
  gst_message_unref (msg);
}

/* row-major and col-major labels: the same tensor (1.28's reading) */
GST_START_TEST (test_both_dims_orders)
{
  GstTensorDimOrder orders[] = { GST_TENSOR_DIM_ORDER_ROW_MAJOR,
    GST_TENSOR_DIM_ORDER_COL_MAJOR
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (orders); i++) {
    GstHarness *h = new_harness_caps (NULL, FRAME_CAPS);
    GstBuffer *buf = make_frame (0), *out;

    add_tensor_meta (buf, 1, hand_gst_tensor ("yolo-v8-out", orders[i], 0));
    out = push_pull (h, buf);
    assert_hand_rois (out, NULL);
    assert_hand_od_mtds (out);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Since 1.26.6 each inference element adds its own GstTensorMeta: the
 * detector's is not the first one. */
GST_START_TEST (test_two_tensor_metas)
{
  GstHarness *h = new_harness_caps ("tensor-id=yolo-v8-out", FRAME_CAPS);
  GstBuffer *buf, *out;

  /* the first meta holds a classifier and a tensor that fits end2end */
  buf = make_frame (0);
  add_tensor_meta (buf, 2, classifier_tensor (), one_box_tensor ("other-out"));
  add_tensor_meta (buf, 1, hand_gst_tensor ("yolo-v8-out",
          GST_TENSOR_DIM_ORDER_COL_MAJOR, 0));
  out = push_pull (h, gst_buffer_ref (buf));
  assert_hand_rois (out, NULL);
  assert_hand_od_mtds (out);
  gst_buffer_unref (out);

  /* without tensor-id: the first tensor that fits, in attach order */
  g_object_set (h->element, "tensor-id", NULL, NULL);
  out = push_pull (h, buf);
  assert_rois_string (out, ONE_BOX_ROIS);
  gst_buffer_unref (out);

  /* a classifier alone in the first meta is passed over */
  buf = make_frame (0);
  add_tensor_meta (buf, 1, classifier_tensor ());
  add_tensor_meta (buf, 1, hand_gst_tensor ("yolo-v8-out",
          GST_TENSOR_DIM_ORDER_COL_MAJOR, 0));
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  /* tensor-id reaches across kinds of meta: custom meta and GstTensorMeta */
  g_object_set (h->element, "tensor-id", "detections", NULL);
  buf = make_frame (0);
  attach_one_box (buf, "other");
  add_tensor_meta (buf, 1, hand_gst_tensor ("detections",
          GST_TENSOR_DIM_ORDER_ROW_MAJOR, 0));
  out = push_pull (h, gst_buffer_ref (buf));
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  g_object_set (h->element, "tensor-id", "other", NULL);
  out = push_pull (h, buf);
  assert_rois_string (out, ONE_BOX_ROIS);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* yolov8 segmentation: the mask rows (here 0.99, which would win every
 * argmax if read as classes) are left out, their count from the protos. */
GST_START_TEST (test_segmentation_detections)
{
  const gsize protos_dims[] = { 1, 2, 4, 4 };
  gfloat protos[32] = { 0 };
  GstHarness *h = new_harness_caps (NULL, FRAME_CAPS);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf = make_frame (0), *out;
  GstTensor *det = hand_gst_tensor ("yolo-v8-segmentation-out-detections",
      GST_TENSOR_DIM_ORDER_COL_MAJOR, 2);
  GstMapInfo map;
  guint i;

  fail_unless (gst_buffer_map (det->data, &map, GST_MAP_WRITE));
  for (i = 7 * HAND_ANCHORS; i < 9 * HAND_ANCHORS; i++)
    ((gfloat *) map.data)[i] = 0.99f;
  gst_buffer_unmap (det->data, &map);
  add_tensor_meta (buf, 2, det, make_tensor ("yolo-v8-segmentation-out-protos",
          GST_TENSOR_DIM_ORDER_COL_MAJOR, protos_dims, 4, protos,
          sizeof protos));
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  /* without the protos tensor in its meta the mask count is unknown */
  buf = make_frame (0);
  add_tensor_meta (buf, 1, hand_gst_tensor
      ("yolo-v8-segmentation-out-detections", GST_TENSOR_DIM_ORDER_COL_MAJOR,
          2));
  out = push_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_message (bus, GST_MESSAGE_WARNING,
      "needs the yolo-v8-segmentation-out-protos tensor");
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_attach_meta)
{
  GstHarness *h = new_harness_caps ("attach-meta=roi", FRAME_CAPS);
  GstBuffer *buf, *out;
  GstAnalyticsRelationMeta *rmeta;
  gchar *str, *expected, *with_upstream;

  out = push_pull (h, hand_frame_filled (0));
  assert_hand_rois (out, NULL);
  fail_unless_equals_int (count_metas (out,
          GST_ANALYTICS_RELATION_META_API_TYPE), 0);
  gst_buffer_unref (out);

  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "analytics");
  out = push_pull (h, hand_frame_filled (0));
  fail_unless_equals_int (count_rois (out), 0);
  assert_hand_od_mtds (out);
  gst_buffer_unref (out);

  /* an upstream relation meta is extended, not doubled */
  gst_util_set_object_arg (G_OBJECT (h->element), "attach-meta", "both");
  buf = hand_frame_filled (0);
  rmeta = gst_buffer_add_analytics_relation_meta (buf);
  fail_unless (gst_analytics_relation_meta_add_od_mtd (rmeta,
          g_quark_from_string ("upstream"), 1, 2, 3, 4, 0.5f, NULL));
  out = push_pull (h, buf);
  assert_hand_rois (out, NULL);
  fail_unless_equals_int (count_metas (out,
          GST_ANALYTICS_RELATION_META_API_TYPE), 1);
  str = od_mtds_to_string (out);
  expected = hand_expected_string ();
  with_upstream = g_strconcat ("1,2,3,4,upstream,0.5;", expected, NULL);
  fail_unless_equals_string (str, with_upstream);
  g_free (with_upstream);
  g_free (expected);
  g_free (str);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

#ifdef HAVE_GST_TENSOR_CAPS
/* Caps as 1.28's onnxinference sets them, with dims, type and order. */
static gchar *
tensor_caps (const gchar * id, const gchar * dims, const gchar * type)
{
  return g_strdup_printf ("%s,tensors=(structure)[tensorgroups,"
      "g=(/uniquelist){(GstCaps)[tensor/strided,tensor-id=(string)%s,"
      "dims=<%s>,dims-order=(string)col-major,type=(string)%s]}]",
      FRAME_CAPS, id, dims, type);
}

GST_START_TEST (test_caps_pass_through)
{
  gchar *str = tensor_caps ("yolo-v8-out", "(int)1,(int)7,(int)10",
      "float32");
  GstHarness *h = new_harness_caps (NULL, str);
  GstCaps *in = gst_caps_from_string (str), *cur;
  GstBuffer *buf = make_frame (0), *out;

  fail_unless (in != NULL);
  add_tensor_meta (buf, 1, hand_gst_tensor ("yolo-v8-out",
          GST_TENSOR_DIM_ORDER_COL_MAJOR, 0));
  out = push_pull (h, buf);
  assert_hand_od_mtds (out);
  gst_buffer_unref (out);
  cur = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (cur != NULL);
  fail_unless (gst_caps_is_equal (cur, in), "caps changed: %" GST_PTR_FORMAT,
      cur);
  gst_caps_unref (cur);
  gst_caps_unref (in);
  gst_harness_teardown (h);
  g_free (str);
}

GST_END_TEST;

/* A bad description fails negotiation with an error naming the problem. */
static void
check_caps_refused (const gchar * dims, const gchar * type, const gchar * what)
{
  gchar *str = tensor_caps ("yolo-v8-out", dims, type);
  GstHarness *h = new_harness_caps (NULL, NULL);
  GstBus *bus = watch_bus (h->element);

  GstCaps *caps = gst_caps_from_string (str);
  GstSegment segment;

  fail_unless (caps != NULL);
  gst_harness_play (h);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  /* sticky events are stored whatever the peer says: the buffer tells */
  gst_harness_push_event (h, gst_event_new_stream_start ("s"));
  gst_harness_push_event (h, gst_event_new_caps (caps));
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
      GST_FLOW_NOT_NEGOTIATED);
  assert_message (bus, GST_MESSAGE_ERROR, what);
  unwatch_bus (bus);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  g_free (str);
}

GST_START_TEST (test_caps_refused)
{
  check_caps_refused ("(int)1,(int)7,(int)10", "int8", "with type 'int8'");
  check_caps_refused ("(int)1,(int)3,(int)10", "float32", "does not fit");
}

GST_END_TEST;
#endif

static Suite *
tensormeta_suite (void)
{
  Suite *s = suite_create ("analytics-tensormeta");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_both_dims_orders);
  tcase_add_test (tc, test_two_tensor_metas);
  tcase_add_test (tc, test_segmentation_detections);
  tcase_add_test (tc, test_attach_meta);
#ifdef HAVE_GST_TENSOR_CAPS
  tcase_add_test (tc, test_caps_pass_through);
  tcase_add_test (tc, test_caps_refused);
#endif
  return s;
}

ANALYTICS_TEST_MAIN (tensormeta, NULL);
#else
ANALYTICS_SKIP_MAIN ("GStreamer >= 1.26 analytics (GstTensorMeta)");
#endif
