/* The bad-input matrix (README "Bad input") through the element: each row
 * gives its exact ROIs or its one warning, and the next good buffer still
 * gets the hand tensor's exact ROIs (the pipeline keeps running).
 * tests/lib/test_matrix.c runs the same rows through the library; the
 * label-file rows are in test_reliability.c and test_cudanms.c. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"
#include "matrix_tensors.h"

/* Pushes buf; asserts the ROIs (rois_to_string) and the warnings: none
 * when warning is NULL, else exactly one containing it. */
static void
check_row (GstHarness * h, GstBuffer * buf, const gchar * rois,
    const gchar * warning)
{
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out = push_pull (h, buf);

  assert_rois_string (out, rois);
  gst_buffer_unref (out);
  if (warning != NULL)
    assert_one_warning (bus, warning);
  else
    assert_no_warning (bus);
  unwatch_bus (bus);
}

/* check_row on a fresh harness with props, then a good buffer. */
static void
row (const gchar * props, GstBuffer * buf, const gchar * rois,
    const gchar * warning)
{
  GstHarness *h = new_harness (props);
  GstBuffer *out;

  check_row (h, buf, rois, warning);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

static const gfloat some[64];

GST_START_TEST (test_wrong_dtype)
{
  GstBuffer *buf = make_frame (0);
  GValue dims = G_VALUE_INIT;
  GstBuffer *payload = gst_buffer_new_memdup (some, 48);

  row (NULL, frame_with_tensor ("float64", "1,2,6", some, 96), "",
      "unknown tensor data-type 'float64'");
  row (NULL, frame_with_tensor ("int8", "1,2,6", some, 12), "",
      "unknown tensor data-type 'int8'");
  g_value_init (&dims, G_TYPE_STRING);
  g_value_set_string (&dims, "1,2,6");
  attach_tensor_value (buf, NULL, NULL, &dims, payload);
  row (NULL, buf, "", "tensor has no data-type field");
  g_value_unset (&dims);
  gst_buffer_unref (payload);
}

GST_END_TEST;

GST_START_TEST (test_wrong_rank_or_dims)
{
  GstBuffer *buf = make_frame (0);
  GValue dims = G_VALUE_INIT, v = G_VALUE_INIT;
  GstBuffer *payload = gst_buffer_new_memdup (some, 48);

  row (NULL, frame_with_tensor ("float32", "12", some, 48), "",
      "tensor has 1 dims");
  row (NULL, frame_with_tensor ("float32", "1,1,2,6", some, 48), "",
      "tensor has 4 dims");
  row (NULL, frame_with_tensor ("float32", "2,2,6", some, 96), "",
      "batch dimension is 2");
  row (NULL, frame_with_tensor ("float32", "1,3,2", some, 24), "",
      "cannot detect the layout of a [1, 3, 2] tensor");
  row ("layout=yolov8", frame_with_tensor ("float32", "1,2,6", some, 48), "",
      "a [1, 2, 6] tensor does not fit layout yolov8");
  row (NULL, frame_with_tensor ("float32", "1,-2,6", some, 48), "",
      "tensor dims missing or malformed");
  row (NULL, frame_with_tensor ("float32", "1,2,,6", some, 48), "",
      "tensor dims missing or malformed");
  /* an array of strings */
  g_value_init (&dims, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_STRING);
  g_value_set_string (&v, "1");
  gst_value_array_append_value (&dims, &v);
  attach_tensor_value (buf, NULL, "float32", &dims, payload);
  row (NULL, buf, "", "tensor dims missing or malformed");
  g_value_unset (&v);
  g_value_unset (&dims);
  gst_buffer_unref (payload);
}

GST_END_TEST;

GST_START_TEST (test_byte_size)
{
  row (NULL, frame_with_tensor ("float32", "1,2,6", some, 44), "",
      "tensor data is 44 bytes, 48 needed for a [1, 2, 6] float32 tensor");
  row (NULL, frame_with_tensor ("float32", "1,2,6", some, 52), "",
      "tensor data is 52 bytes, 48 expected for a [1, 2, 6] float32 tensor "
      "(longer than its dims say: wrong dims?)");
  row (NULL, frame_with_tensor ("float16", "1,2,6", some, 26), "",
      "tensor data is 26 bytes, 24 expected");
}

GST_END_TEST;

GST_START_TEST (test_zero_size)
{
  /* an end2end model's empty answer: no ROI, no warning */
  row (NULL, frame_with_tensor ("float32", "1,0,6", NULL, 0), "", NULL);
  row (NULL, frame_with_tensor ("float32", "1,84,0", NULL, 0), "",
      "tensor dim 2 is 0");
  row (NULL, frame_with_tensor ("float32", "1,0,85", NULL, 0), "",
      "tensor dim 1 is 0");
  row (NULL, frame_with_tensor ("float32", "1,2,6", NULL, 0), "",
      "tensor data is 0 bytes, 48 needed");
}

GST_END_TEST;

GST_START_TEST (test_dims_overflow)
{
  GstBuffer *buf = make_frame (0);
  GValue dims = G_VALUE_INIT, v = G_VALUE_INIT;
  GstBuffer *payload = gst_buffer_new_memdup (some, 64);
  guint i;

  row (NULL, frame_with_tensor ("float32", "1,2147483648,8", some, 64), "",
      "tensor dim 1 is 2147483648, too large");
  row (NULL, frame_with_tensor ("float32",
          "1,9223372036854775807,9223372036854775807", some, 64), "",
      "too large");
  row ("layout=yolov8", frame_with_tensor ("float32", "1,2147483647,2147483647",
          some, 64), "", "tensor data is 64 bytes, 18446744056529682436 "
      "needed");
  /* a uint64 dim past int64: refused while reading the dims */
  g_value_init (&dims, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_UINT64);
  for (i = 0; i < 3; i++) {
    g_value_set_uint64 (&v, i == 0 ? 1 : G_MAXUINT64);
    gst_value_array_append_value (&dims, &v);
  }
  attach_tensor_value (buf, NULL, "float32", &dims, payload);
  row (NULL, buf, "", "tensor dims missing or malformed");
  g_value_unset (&v);
  g_value_unset (&dims);
  gst_buffer_unref (payload);
}

GST_END_TEST;

GST_START_TEST (test_nonfinite)
{
  const gchar *want = "40,40,20,20,class-0,0.875;195,95,10,10,class-0,0.375;";
  gfloat nan_inf[35];
  gsize n, i;
  gfloat *v = matrix_nonfinite (&n);
  guint16 *h = to_half (v, n);

  row (NULL, frame_with_tensor ("float32", "1,5,7", v, n * 4), want, NULL);
  row (NULL, frame_with_tensor ("float16", "1,5,7", h, n * 2), want, NULL);
  for (i = 0; i < G_N_ELEMENTS (nan_inf); i++)
    nan_inf[i] = (i % 3) ? NAN : -INFINITY;
  row (NULL, frame_with_tensor ("float32", "1,5,7", nan_inf,
          sizeof (nan_inf)), "", "only NaN/Inf values");
  g_free (h);
  free (v);
}

GST_END_TEST;

GST_START_TEST (test_negative_size)
{
  gsize n;
  gfloat *v = matrix_negative (&n);

  row ("layout=yolov8", frame_with_tensor ("float32", "1,5,4", v, n * 4),
      "90,90,20,20,class-0,0.5;", NULL);
  free (v);
}

GST_END_TEST;

GST_START_TEST (test_equal_scores)
{
  gsize n;
  gfloat *v = matrix_equal (&n);

  row ("layout=yolov8", frame_with_tensor ("float32", "1,5,4", v, n * 4),
      "10,10,20,20,class-0,0.5;90,90,20,20,class-0,0.5;"
      "50,10,20,20,class-0,0.5;", NULL);
  free (v);
}

GST_END_TEST;

GST_START_TEST (test_all_candidates)
{
  GString *want = g_string_new ("26,2,4,4,class-0,0.875;");
  gchar *dims = g_strdup_printf ("1,5,%d", MATRIX_ALL_N);
  gsize n;
  gfloat *v = matrix_all_candidates (&n);
  gint a;

  for (a = 700; a < 709; a++)
    g_string_append_printf (want, "%d,138,4,4,class-0,0.875;",
        (a % 40) * 8 + 2);
  row ("max-candidates=10", frame_with_tensor ("float32", dims, v, n * 4),
      want->str, "1000 candidates, more than max-candidates=10: the 10 best "
      "were kept, 990 dropped.");
  g_string_free (want, TRUE);
  g_free (dims);
  free (v);
}

GST_END_TEST;

GST_START_TEST (test_classes)
{
  gchar *dims = g_strdup_printf ("1,%d,2", 4 + MATRIX_MANY_CLASSES);
  GstHarness *h;
  gsize n;
  gfloat *v = matrix_many_classes (&n);

  row (NULL, frame_with_tensor ("float32", "1,4,10", some, 160), "",
      "cannot detect the layout of a [1, 4, 10] tensor");
  h = new_harness ("layout=yolov5");
  check_row (h, frame_with_tensor ("float32", "1,10,5", some, 200), "",
      "a [1, 10, 5] tensor does not fit layout yolov5");
  gst_harness_teardown (h);
  row ("layout=yolov8", frame_with_tensor ("float32", dims, v, n * 4),
      "80,80,40,40,class-large,0.75;82,80,40,40,class-0,0.625;", NULL);
  h = new_harness ("layout=yolov8 class-agnostic=true");
  check_row (h, frame_with_tensor ("float32", dims, v, n * 4),
      "80,80,40,40,class-large,0.75;", NULL);
  gst_harness_teardown (h);
  g_free (dims);
  free (v);
}

GST_END_TEST;

/* tensor-id names no tensor: a missing tensor, told once, counted. */
GST_START_TEST (test_missing_tensor_id)
{
  GstHarness *h = new_harness ("tensor-id=nope");
  GstBuffer *out;

  check_row (h, hand_frame_yolov8 (), "", "no detection tensor");
  check_row (h, hand_frame_yolov8 (), "", NULL);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-without-tensor"),
      2);
  g_object_set (h->element, "tensor-id", "detections", NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The caps change mid-stream: mapping and clipping follow the new size. */
GST_START_TEST (test_frame_size_change)
{
  GstHarness *h = new_harness (NULL);
  GstBuffer *out;

  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=GRAY8,width=160,height=120,framerate=30/1");
  /* model 320x240 over 160x120: every box halved, anchor 5 clipped */
  check_row (h, hand_frame_yolov8 (), "40,40,20,20,class-0,0.875;"
      "40,40,21,20,class-1,0.625;95,67,10,16,class-2,0.5;"
      "137,75,23,45,class-1,0.375;4,9,3,3,class-2,0.3125;", NULL);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A 1x1 frame: boxes clip to it exactly; those outside it are dropped. */
GST_START_TEST (test_frame_1x1)
{
  GstHarness *h = new_harness ("model-size=640x480");
  gsize n;
  gfloat *v = matrix_frames (&n);
  GstBuffer *buf;

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=GRAY8,width=1,height=1,framerate=30/1");
  buf = frame_with_tensor ("float32", "1,3,6", v, n * 4);
  check_row (h, buf, "0,0,1,1,class-1,0.75;", NULL);
  g_object_set (h->element, "letterbox", FALSE, NULL);
  buf = frame_with_tensor ("float32", "1,3,6", v, n * 4);
  check_row (h, buf, "0,0,1,1,class-0,0.875;0,0,1,1,class-1,0.75;"
      "0,0,1,1,class-2,0.625;", NULL);
  gst_harness_teardown (h);
  free (v);
}

GST_END_TEST;

static Suite *
matrix_suite (void)
{
  Suite *s = suite_create ("cudanms-matrix");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_wrong_dtype);
  tcase_add_test (tc, test_wrong_rank_or_dims);
  tcase_add_test (tc, test_byte_size);
  tcase_add_test (tc, test_zero_size);
  tcase_add_test (tc, test_dims_overflow);
  tcase_add_test (tc, test_nonfinite);
  tcase_add_test (tc, test_negative_size);
  tcase_add_test (tc, test_equal_scores);
  tcase_add_test (tc, test_all_candidates);
  tcase_add_test (tc, test_classes);
  tcase_add_test (tc, test_missing_tensor_id);
  tcase_add_test (tc, test_frame_size_change);
  tcase_add_test (tc, test_frame_1x1);
  return s;
}

GST_CHECK_MAIN (matrix);
