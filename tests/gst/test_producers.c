/* gst-check tests of ROIs from more than one producer on a buffer: each
 * cudanms numbers its ROIs from the largest ROI id already there plus one
 * (in kept order), so ids stay unique within the buffer and every ROI is
 * reachable by its id, and its "detection" structure's "producer" names
 * the element: two cudanms in a row reading two tensors (tensor-id), in
 * either order, two reading the same tensor, one behind an element that
 * attached ROIs of its own (ids 0 and 7: cudanms's start at 8), and
 * roi-params=false. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"

/* The end2end tensor of producer b: three boxes, kept in score order. */
static const gfloat three_rows[] = {
  200, 20, 240, 60, 0.5f, 4,
  10, 100, 30, 140, 0.75f, 1,
  250, 150, 300, 200, 0.625f, 9,
};

#define THREE_ROIS_B \
  "10,100,20,40,class-1,1,0.75,b;" \
  "250,150,50,50,class-9,9,0.625,b;" \
  "200,20,40,40,class-4,4,0.5,b;"

/* The hand tensor's ROIs (hand_expected), as roi_line writes them, with
 * ids from first and producer who. */
static gchar *
hand_lines (gint first, const gchar * who)
{
  GString *str = g_string_new (NULL);
  guint i;

  for (i = 0; i < HAND_KEPT; i++) {
    const ExpectedRoi *e = &hand_expected[i];

    g_string_append_printf (str, "%d:%u,%u,%u,%u,class-%d,%d,%.9g,%s;",
        first + (gint) i, e->x, e->y, e->w, e->h, e->label_id, e->label_id,
        e->score, who);
  }
  return g_string_free (str, FALSE);
}

/* "id:x,y,w,h,label,label_id,confidence,producer;" of every ROI meta of
 * buf in the order they were attached ("id:x,y,w,h,type,-" for one
 * without a "detection" structure); asserts that each ROI is the one its
 * id finds, i.e. that ids are unique and every ROI reachable. */
static gchar *
rois_walk (GstBuffer * buf)
{
  GString *str = g_string_new (NULL);
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *s =
        gst_video_region_of_interest_meta_get_param (m, "detection");
    gdouble conf = -1;
    gint label_id = -1;

    fail_unless (gst_buffer_get_video_region_of_interest_meta_id (buf,
            m->id) == m, "ROI id %d is not unique", m->id);
    g_string_append_printf (str, "%d:%u,%u,%u,%u,", m->id, m->x, m->y, m->w,
        m->h);
    if (s == NULL) {
      g_string_append_printf (str, "%s,-;", g_quark_to_string (m->roi_type));
      continue;
    }
    fail_unless_equals_int (gst_structure_n_fields (s), 8);
    fail_unless (gst_structure_get_double (s, "confidence", &conf));
    fail_unless (gst_structure_get_int (s, "label_id", &label_id));
    fail_unless_equals_string (gst_structure_get_string (s, "label"),
        g_quark_to_string (m->roi_type));
    g_string_append_printf (str, "%s,%d,%.9g,%s;",
        g_quark_to_string (m->roi_type), label_id, conf,
        gst_structure_get_string (s, "producer"));
  }
  return g_string_free (str, FALSE);
}

static void
assert_walk (GstBuffer * buf, const gchar * expected)
{
  gchar *str = rois_walk (buf);

  fail_unless_equals_string (str, expected);
  g_free (str);
}

/* A frame with the hand tensor (id "a") and three_rows (id "b"). */
static GstBuffer *
two_tensor_frame (void)
{
  const gint dims[] = { 1, 3, 6 };
  GstBuffer *buf = make_frame (0);

  attach_hand_tensor (buf, "a");
  attach_tensor (buf, "b", "float32", dims, 3, three_rows,
      sizeof three_rows);
  return buf;
}

static GstHarness *
parse_harness (const gchar * launch)
{
  GstHarness *h = gst_harness_new_parse (launch);

  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  return h;
}

/* cudanms tensor-id=a ! cudanms tensor-id=b: a's ROIs 0..4, b's 5..7,
 * each naming its element; the other order numbers b's first. */
GST_START_TEST (test_two_cudanms)
{
  GstHarness *h = parse_harness ("cudanms name=a tensor-id=a "
      "model-size=320x240 ! cudanms name=b tensor-id=b model-size=320x240");
  gchar *a = hand_lines (0, "a"), *a_after_b = hand_lines (3, "a");
  gchar *expected = g_strconcat (a,
      "5:10,100,20,40,class-1,1,0.75,b;"
      "6:250,150,50,50,class-9,9,0.625,b;"
      "7:200,20,40,40,class-4,4,0.5,b;", NULL);
  GstBuffer *out;
  guint i;

  /* every buffer numbered the same way: ids are per buffer */
  for (i = 0; i < 2; i++) {
    out = push_pull (h, two_tensor_frame ());
    fail_unless_equals_int (count_rois (out), HAND_KEPT + 3);
    assert_walk (out, expected);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_free (expected);

  h = parse_harness ("cudanms name=b tensor-id=b model-size=320x240 "
      "! cudanms name=a tensor-id=a model-size=320x240");
  expected = g_strconcat ("0:10,100,20,40,class-1,1,0.75,b;"
      "1:250,150,50,50,class-9,9,0.625,b;"
      "2:200,20,40,40,class-4,4,0.5,b;", a_after_b, NULL);
  out = push_pull (h, two_tensor_frame ());
  assert_walk (out, expected);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (expected);
  g_free (a_after_b);
  g_free (a);
}

GST_END_TEST;

/* Two cudanms reading the same tensor attach the same boxes twice, under
 * ids of their own. */
GST_START_TEST (test_same_tensor_twice)
{
  GstHarness *h = parse_harness ("cudanms name=first model-size=320x240 "
      "! cudanms name=second model-size=320x240");
  gchar *one = hand_lines (0, "first"), *two = hand_lines (5, "second");
  gchar *expected = g_strconcat (one, two, NULL);
  GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

  assert_walk (out, expected);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (expected);
  g_free (two);
  g_free (one);
}

GST_END_TEST;

/* The ids of the ROIs an upstream element attaches (set by the probe). */
static const gint *upstream_ids;
static guint n_upstream_ids;

static GstPadProbeReturn
add_rois (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint i;

  buf = gst_buffer_make_writable (buf);
  for (i = 0; i < n_upstream_ids; i++) {
    GstVideoRegionOfInterestMeta *m =
        gst_buffer_add_video_region_of_interest_meta (buf, "upstream",
        1 + i, 2, 3, 4);

    m->id = upstream_ids[i];
  }
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

/* identity (its src pad's probe adds ROIs of ids ids[]) ! cudanms: one
 * buffer through, its ROI string checked. */
static void
check_behind (const gint * ids, guint n, const gchar * nms_props,
    const gchar * expected)
{
  gchar *launch = g_strdup_printf ("identity name=up ! cudanms name=nms "
      "model-size=320x240 %s", nms_props);
  GstHarness *h = parse_harness (launch);
  GstElement *up = gst_bin_get_by_name (GST_BIN (h->element), "up");
  GstPad *pad = gst_element_get_static_pad (up, "src");
  GstBuffer *out;

  upstream_ids = ids;
  n_upstream_ids = n;
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, add_rois, NULL, NULL);
  out = push_pull (h, hand_frame_yolov8 ());
  assert_walk (out, expected);
  gst_buffer_unref (out);
  gst_object_unref (pad);
  gst_object_unref (up);
  gst_harness_teardown (h);
  g_free (launch);
}

/* Behind an element that attached ROIs 0 and 7, cudanms's ids start at 8;
 * the upstream ROIs are left as they were. */
GST_START_TEST (test_behind_other_rois)
{
  gchar *hand = hand_lines (8, "nms");
  gchar *expected = g_strconcat ("0:1,2,3,4,upstream,-;7:2,2,3,4,upstream,-;",
      hand, NULL);

  check_behind ((const gint[]) {
        0, 7}, 2, "", expected);
  g_free (expected);
  g_free (hand);
  /* the largest counts, not the last */
  hand = hand_lines (43, "nms");
  expected = g_strconcat ("42:1,2,3,4,upstream,-;3:2,2,3,4,upstream,-;",
      hand, NULL);
  check_behind ((const gint[]) {
        42, 3}, 2, "", expected);
  g_free (expected);
  g_free (hand);
  /* negative ids take no room: cudanms starts at 0 */
  hand = hand_lines (0, "nms");
  expected = g_strconcat ("-5:1,2,3,4,upstream,-;", hand, NULL);
  check_behind ((const gint[]) {
        -5}, 1, "", expected);
  g_free (expected);
  g_free (hand);
  /* roi-params=false: no structure, the ids the same */
  check_behind ((const gint[]) {
        0, 7}, 2, "roi-params=false", "0:1,2,3,4,upstream,-;"
      "7:2,2,3,4,upstream,-;" "8:80,80,40,40,class-0,-;"
      "9:81,80,40,40,class-1,-;" "10:190,135,20,30,class-2,-;"
      "11:275,150,45,90,class-1,-;" "12:8,18,5,5,class-2,-;");
}

GST_END_TEST;

static Suite *
producers_suite (void)
{
  Suite *s = suite_create ("cudanms-producers");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_two_cudanms);
  tcase_add_test (tc, test_same_tensor_twice);
  tcase_add_test (tc, test_behind_other_rois);
  return s;
}

GST_CHECK_MAIN (producers);
