/* The real onnxinference ! cudanms: a tiny ONNX model (generated here by
 * make_model.py with python3-onnx) outputs the hand tensor of gst_helpers.c as
 * "yolo-v8-out"; cudanms must give exactly its ROIs and ODMtds, with the
 * model's output labelled row-major and col-major. Exit 77 (skip) without
 * onnxinference, GstTensorMeta or python3-onnx. */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "analytics_common.h"

#ifdef HAVE_GST_TENSOR_META

static gchar *work_dir;

/* Records the dims order of the yolo-v8-out tensor reaching cudanms. */
static GstPadProbeReturn
record_order (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  gint *order = user_data;
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_TENSOR_META_API_TYPE))) {
    GstTensorMeta *tmeta = (GstTensorMeta *) meta;
    gsize i;

    for (i = 0; i < tmeta->num_tensors; i++) {
      if (tmeta->tensors[i]->id == g_quark_from_string ("yolo-v8-out"))
        *order = (gint) tmeta->tensors[i]->dims_order;
    }
  }
  return GST_PAD_PROBE_OK;
}

static void
run_model (const gchar * order_name, GstTensorDimOrder order)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 pattern=black "
      "! video/x-raw,format=RGB,width=320,height=240,framerate=30/1 "
      "! onnxinference model-file=%s/%s.onnx "
      "! cudanms name=nms model-size=320x240 letterbox=false "
      "! appsink name=sink sync=false", work_dir, order_name);
  GstElement *pipe, *nms, *sink;
  GstPad *pad;
  gint seen_order = -1, frames = 0;
  GstSample *sample;

  make_hand_model (work_dir, order_name);
  pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  nms = gst_bin_get_by_name (GST_BIN (pipe), "nms");
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  pad = gst_element_get_static_pad (nms, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, record_order,
      &seen_order, NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((sample = pull_sample (sink)) != NULL) {
    GstBuffer *out = gst_sample_get_buffer (sample);

    assert_hand_rois (out, NULL);
    assert_hand_od_mtds (out);
    gst_sample_unref (sample);
    frames++;
  }
  fail_unless_equals_int (frames, 2);
  /* 1.28 labels the tensor as the .modelinfo says; 1.26 reads no
   * modelinfo (the id comes from the model's metadata) and never labels */
  fail_unless_equals_int (seen_order, gst_minor_version () >= 28 ? order :
      GST_TENSOR_DIM_ORDER_ROW_MAJOR);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (nms);
  gst_object_unref (pipe);
  g_free (desc);
}

GST_START_TEST (test_onnx_row_major)
{
  run_model ("row-major", GST_TENSOR_DIM_ORDER_ROW_MAJOR);
}

GST_END_TEST;

GST_START_TEST (test_onnx_col_major)
{
  run_model ("col-major", GST_TENSOR_DIM_ORDER_COL_MAJOR);
}

GST_END_TEST;

static Suite *
onnx_suite (void)
{
  Suite *s = suite_create ("analytics-onnx");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_onnx_row_major);
  tcase_add_test (tc, test_onnx_col_major);
  return s;
}

int
main (int argc, char **argv)
{
  gint rc;

  gst_check_init (&argc, &argv);
  if (missing_element ("onnxinference"))
    return 77;
  if (missing_onnx_module ())
    return 77;
  work_dir = g_dir_make_tmp ("cudanms-onnx-XXXXXX", NULL);
  if (work_dir == NULL)
    return 1;
  rc = gst_check_run_suite (onnx_suite (), "analytics-onnx", __FILE__);
  remove_tree (work_dir);
  g_free (work_dir);
  return rc;
}
#else
ANALYTICS_SKIP_MAIN ("GStreamer >= 1.26 analytics (GstTensorMeta)");
#endif
