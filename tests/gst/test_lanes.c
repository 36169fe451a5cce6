/* gst-check tests of lanes (layout laneatt) through cudanms: the kept
 * lanes of a hand-made LaneATT tensor with their ROIs (the rectangle of
 * their points), "detection" and "lane" structures (score, points, anchor),
 * labels and ids; both ways to select the layout (the property, and the
 * tensor id laneatt-proposals with layout=auto) and auto never guessing
 * it; a bad tensor; a lane with fewer than 2 points dropped and counted;
 * lane-distance changed while playing.
 *
 * The scene: LaneATT [1, 4, 5+4] (S = 4 rows, n = 3 strips), model 640x360
 * letterboxed on a 1280x720 frame: gain 0.5, no padding, so a point is
 * (2 x, 2 y) with row i at y = (3 - i) * 360 / 3 in the model: frame
 * y 720, 480, 240, 0 for rows 0..3. Rows: logits (0, l1), start_y,
 * start_x, length, x0..x3; score = 1 / (1 + e^-l1):
 *   p0 l1 3  start 0   length 4  x 100.25 110 120 130   score 0.953
 *   p1 l1 2  start 0   length 4  x 110 120 130 140      score 0.881
 *      (p0's neighbour: mean distance 39.75 / 4 = 9.9375 model pixels)
 *   p2 l1 1  start 1/3 length 3  x -5 410 420 430.3     score 0.731
 *      (rows 1..3; row 0 below its start has x < 0: no point)
 *   p3 l1 4  start 0   length 4  x -10 -10 -10 50       score 0.982
 *      (one point only, row 3: kept by NMS, not returned by cnms_detect)
 * lane-distance 50: NMS keeps p3, p0, p2 (p1 within 9.9375 of p0); the
 * element attaches p0, p2. lane-distance 5: p3, p0, p1, p2 -> p0, p1, p2. */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#include "gst_helpers.h"

#define N_LANES 4
#define S 4
#define COLS (5 + S)
#define W 1280
#define H 720
#define CAPS "video/x-raw,format=GRAY8,width=1280,height=720,framerate=30/1"

static const gfloat scene[N_LANES][COLS] = {
  {0, 3, 0, 100, 4, 100.25f, 110, 120, 130},
  {0, 2, 0, 110, 4, 110, 120, 130, 140},
  {0, 1, 1.0f / 3.0f, 410, 3, -5, 410, 420, 430.3f},
  {0, 4, 0, 0, 4, -10, -10, -10, 50},
};

static gchar *labels_path;

/* A 1280x720 GRAY8 frame with tensor t (dims) of id (NULL: none). */
static GstBuffer *
lane_frame_dims (const gfloat * t, const gint * dims, guint n_dims,
    gsize n_floats, const gchar * id)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H, NULL);

  gst_buffer_memset (buf, 0, 0, W * H);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  attach_tensor (buf, id, "float32", dims, n_dims, t,
      sizeof (gfloat) * n_floats);
  return buf;
}

static GstBuffer *
lane_frame (const gchar * id)
{
  const gint dims[3] = { 1, N_LANES, COLS };

  return lane_frame_dims (&scene[0][0], dims, 3, N_LANES * COLS, id);
}

/* One lane as the element must attach it. */
typedef struct
{
  gint anchor;
  gdouble l1;                   /* its logit: score 1 / (1 + e^-l1) */
  gint n_points;
  gdouble pts[2 * S];           /* x y, bottom row first */
  gint x, y, w, h;              /* the ROI */
  gdouble rect[4];              /* x1 y1 x2 y2 of the points */
} ExpectedLane;

/* p0: (2 * 100.25, 720) ... (260, 0): ROI floor 200.5 = 200 .. 260 */
static const ExpectedLane lane_p0 = { 0, 3, 4,
  {200.5, 720, 220, 480, 240, 240, 260, 0}, 200, 0, 60, 720,
  {200.5, 0, 260, 720}
};

/* p1: (220, 720) ... (280, 0) */
static const ExpectedLane lane_p1 = { 1, 2, 4,
  {220, 720, 240, 480, 260, 240, 280, 0}, 220, 0, 60, 720,
  {220, 0, 280, 480 + 240}
};

/* p2: rows 1..3: (820, 480), (840, 240), (2 * 430.3f, 0): ROI x 820 ..
 * ceil (860.59998) = 861 */
static ExpectedLane lane_p2 = { 2, 1, 3,
  {820, 480, 840, 240, 0 /* 2 * 430.3f, set in setup */ , 0}, 820, 0, 41,
  480, {820, 0, 0 /* the same */ , 480}
};

static gdouble
get_double (const GstStructure * s, const gchar * name)
{
  gdouble v = NAN;

  fail_unless (gst_structure_get_double (s, name, &v), "no %s in %"
      GST_PTR_FORMAT, name, s);
  return v;
}

/* Asserts buf's ROIs are exactly want[0..n), ids 0.., labelled label. */
static void
assert_lanes (GstBuffer * buf, const ExpectedLane * const *want, gint n,
    const gchar * label)
{
  gint i;

  fail_unless_equals_int (count_rois (buf), n);
  for (i = 0; i < n; i++) {
    const ExpectedLane *e = want[i];
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id (buf, i);
    GstStructure *det, *lane;
    const GValue *points;
    gfloat score = (gfloat) (1.0 / (1.0 + exp (-e->l1)));
    gint k, v = -1;

    fail_unless (roi != NULL, "no ROI %d", i);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), label);
    fail_unless (roi->x == (guint) e->x && roi->y == (guint) e->y
        && roi->w == (guint) e->w && roi->h == (guint) e->h,
        "ROI %d: %u %u %u %u, expected %d %d %d %d", i, roi->x, roi->y,
        roi->w, roi->h, e->x, e->y, e->w, e->h);

    det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (det != NULL);
    fail_unless (gst_structure_get_int (det, "label_id", &v));
    fail_unless_equals_int (v, 0);
    fail_unless_equals_string (gst_structure_get_string (det, "label"),
        label);
    fail_unless (get_double (det, "confidence") == (gdouble) score,
        "ROI %d confidence %.9g, expected %.9g", i,
        get_double (det, "confidence"), (gdouble) score);
    fail_unless (get_double (det, "x_min") == e->rect[0] / W);
    fail_unless (get_double (det, "y_min") == e->rect[1] / H);
    fail_unless (get_double (det, "x_max") == e->rect[2] / W);
    fail_unless (get_double (det, "y_max") == e->rect[3] / H);
    fail_unless (gst_structure_get_string (det, "producer") != NULL);
    fail_unless (!gst_structure_has_field (det, "angle"));

    lane = gst_video_region_of_interest_meta_get_param (roi, "lane");
    fail_unless (lane != NULL, "ROI %d has no lane structure", i);
    fail_unless (get_double (lane, "score") == (gdouble) score);
    fail_unless (gst_structure_get_int (lane, "anchor", &v));
    fail_unless_equals_int (v, e->anchor);
    points = gst_structure_get_value (lane, "points");
    fail_unless (points != NULL && GST_VALUE_HOLDS_ARRAY (points));
    fail_unless_equals_int (gst_value_array_get_size (points),
        2 * e->n_points);
    for (k = 0; k < 2 * e->n_points; k++) {
      const GValue *p = gst_value_array_get_value (points, k);

      fail_unless (G_VALUE_HOLDS_DOUBLE (p));
      fail_unless (g_value_get_double (p) == e->pts[k],
          "ROI %d point value %d: %.9g, expected %.9g", i, k,
          g_value_get_double (p), e->pts[k]);
    }
  }
}

/* The stats of an element that decoded no lane: no lane dropped. */
static void
assert_no_lane_stat (GstElement * el)
{
  fail_unless_equals_uint64 (get_stat (el, "lanes-without-points"), 0);
}

static GstHarness *
lane_harness (const gchar * props)
{
  gchar *all = g_strdup_printf ("model-size=640x360 %s", props);
  GstHarness *h = new_harness_caps (all, CAPS);

  g_free (all);
  return h;
}

static const ExpectedLane *const kept_50[] = { &lane_p0, &lane_p2 };
static const ExpectedLane *const kept_5[] = { &lane_p0, &lane_p1, &lane_p2 };

/* layout=laneatt: p0 and p2 with their exact ROIs and points; p3 (one
 * point) dropped and counted, warned once per stream. */
GST_START_TEST (test_lanes_kept)
{
  GstHarness *h = lane_harness ("layout=laneatt");
  GstBus *bus = watch_bus (h->element);
  gint f;

  assert_no_lane_stat (h->element);
  for (f = 0; f < 2; f++) {
    GstBuffer *out = push_pull (h, lane_frame (NULL));

    assert_lanes (out, kept_50, 2, "lane");
    gst_buffer_unref (out);
  }
  {
    gchar *w = pop_warning (bus);

    fail_unless (w != NULL);
    fail_unless_equals_string (w, "Kept lanes with fewer than 2 points in "
        "the frame are dropped (1 in this frame).");
    g_free (w);
    assert_no_warning (bus);
  }
  fail_unless_equals_uint64 (get_stat (h->element, "lanes-without-points"),
      2);
  fail_unless_equals_uint64 (get_stat (h->element, "detections"), 4);
  /* p0..p3 are all above 0.25 */
  fail_unless_equals_uint64 (get_stat (h->element, "candidates"), 8);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      0);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The label file's line 0 labels lanes; roi-params=false: no structures. */
GST_START_TEST (test_lanes_labels)
{
  gchar *props = g_strdup_printf ("layout=laneatt label-file=%s",
      labels_path);
  GstHarness *h = lane_harness (props);
  GstBuffer *out = push_pull (h, lane_frame (NULL));

  assert_lanes (out, kept_50, 2, "road-lane");
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (props);

  h = lane_harness ("layout=laneatt roi-params=false");
  out = push_pull (h, lane_frame (NULL));
  fail_unless_equals_int (count_rois (out), 2);
  fail_unless (gst_video_region_of_interest_meta_get_param
      (gst_buffer_get_video_region_of_interest_meta_id (out, 1), "lane")
      == NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* score-threshold and max-detections apply: 0.9 keeps p3 and p0 as
 * candidates (p3 dropped); max-detections=2 keeps p3, p0. */
GST_START_TEST (test_lanes_threshold_and_cap)
{
  const gchar *props[] = { "layout=laneatt score-threshold=0.9",
    "layout=laneatt max-detections=2"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = lane_harness (props[i]);
    GstBuffer *out = push_pull (h, lane_frame (NULL));

    assert_lanes (out, kept_50, 1, "lane");
    fail_unless_equals_uint64 (get_stat (h->element, "lanes-without-points"),
        1);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* layout=auto: the tensor id laneatt-proposals selects laneatt, found by
 * the default search and by tensor-id alike; [N, 5+S] too. */
GST_START_TEST (test_lanes_layout_by_id)
{
  const gchar *props[] = { "", "tensor-id=laneatt-proposals" };
  const gint dims2[2] = { N_LANES, COLS };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = lane_harness (props[i]);
    GstBuffer *out = push_pull (h, lane_frame ("laneatt-proposals"));

    assert_lanes (out, kept_50, 2, "lane");
    gst_buffer_unref (out);
    out = push_pull (h, lane_frame_dims (&scene[0][0], dims2, 2,
            N_LANES * COLS, "laneatt-proposals"));
    assert_lanes (out, kept_50, 2, "lane");
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* layout=auto never reads a tensor without that id as lanes: [1, 4, 9]
 * fits no box layout (a bad tensor, no ROI); a [1, 12, 9] tensor of the
 * scene thrice is read as yolov5 boxes, without a lane structure. */
GST_START_TEST (test_lanes_auto_never_guesses)
{
  const gchar *ids[] = { NULL, "detections" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (ids); i++) {
    GstHarness *h = lane_harness ("");
    GstBus *bus = watch_bus (h->element);
    GstBuffer *out = push_pull (h, lane_frame (ids[i]));
    gchar *w;

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
    w = pop_warning (bus);
    fail_unless (w != NULL && g_str_has_prefix (w, "Bad detection tensor: "),
        "%s", w);
    fail_unless (strstr (w, "laneatt") == NULL, "%s", w);
    g_free (w);
    fail_unless_equals_uint64 (get_stat (h->element,
            "buffers-with-bad-tensor"), 1);
    assert_no_lane_stat (h->element);
    unwatch_bus (bus);
    gst_harness_teardown (h);
  }
  {
    gfloat t[3 * N_LANES * COLS];
    const gint dims[3] = { 1, 3 * N_LANES, COLS };
    GstHarness *h = lane_harness ("");
    GstBuffer *out;
    GstVideoRegionOfInterestMeta *roi;

    for (i = 0; i < 3; i++)
      memcpy (t + i * N_LANES * COLS, scene, sizeof scene);
    out = push_pull (h, lane_frame_dims (t, dims, 3, G_N_ELEMENTS (t),
            NULL));
    roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
    fail_unless (roi != NULL);
    fail_unless (gst_video_region_of_interest_meta_get_param (roi, "lane")
        == NULL);
    assert_no_lane_stat (h->element);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* A LaneATT tensor of one row ([1, 4, 6]: S = 1): a bad tensor, warned
 * once, the buffer passing without ROIs; forced or by its id. */
GST_START_TEST (test_lanes_bad_tensor)
{
  const gchar *props[] = { "layout=laneatt", "" };
  const gchar *ids[] = { NULL, "laneatt-proposals" };
  const gchar *want[] = {
    "Bad detection tensor: a [1, 4, 6] tensor does not fit layout laneatt",
    "Bad detection tensor: tensor 'laneatt-proposals': a [1, 4, 6] tensor "
        "does not fit layout laneatt",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = lane_harness (props[i]);
    GstBus *bus = watch_bus (h->element);
    gfloat t[4 * 6];
    const gint dims[3] = { 1, 4, 6 };
    gint f;

    for (f = 0; f < 24; f++)
      t[f] = 1.0f + f;
    for (f = 0; f < 2; f++) {
      GstBuffer *out = push_pull (h, lane_frame_dims (t, dims, 3, 24,
              ids[i]));

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

/* lane-distance is live: 50 -> p0 p2, 5 -> p0 p1 p2, 50 again -> p0 p2,
 * on the same element while it plays. */
GST_START_TEST (test_lanes_live_distance)
{
  GstHarness *h = lane_harness ("layout=laneatt");
  GstBuffer *out;
  gfloat d = 0;

  g_object_get (h->element, "lane-distance", &d, NULL);
  fail_unless (d == 50.0f);
  out = push_pull (h, lane_frame (NULL));
  assert_lanes (out, kept_50, 2, "lane");
  gst_buffer_unref (out);

  fail_unless_equals_int (GST_STATE (h->element), GST_STATE_PLAYING);
  g_object_set (h->element, "lane-distance", 5.0f, NULL);
  out = push_pull (h, lane_frame (NULL));
  assert_lanes (out, kept_5, 3, "lane");
  gst_buffer_unref (out);

  /* 9.9375 is p1's mean distance to p0: not below it, kept */
  g_object_set (h->element, "lane-distance", 9.9375f, NULL);
  out = push_pull (h, lane_frame (NULL));
  assert_lanes (out, kept_5, 3, "lane");
  gst_buffer_unref (out);

  g_object_set (h->element, "lane-distance", 50.0f, NULL);
  out = push_pull (h, lane_frame (NULL));
  assert_lanes (out, kept_50, 2, "lane");
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

#ifdef HAVE_GST_ANALYTICS
/* attach-meta=analytics, the one request for a lane's ODMtd: an ODMtd per
 * attached lane, the rectangle, label and score its ROI would have
 * (GStreamer has no lane mtd), and no ROI. */
GST_START_TEST (test_lanes_od_mtds)
{
  GstHarness *h = lane_harness ("layout=laneatt attach-meta=analytics");
  GstBuffer *out = push_pull (h, lane_frame (NULL));
  GstAnalyticsRelationMeta *rmeta =
      gst_buffer_get_analytics_relation_meta (out);
  const ExpectedLane *const *want = kept_50;
  GstAnalyticsMtd mtd;
  gpointer state = NULL;
  gint i = 0;

  fail_unless_equals_int (count_rois (out), 0);
  fail_unless (rmeta != NULL);
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd)) {
    GstAnalyticsODMtd *od = (GstAnalyticsODMtd *) & mtd;
    gint x, y, w, hh;
    gfloat conf;

    fail_unless (i < 2);
    fail_unless (gst_analytics_od_mtd_get_location (od, &x, &y, &w, &hh,
            &conf));
    fail_unless (x == want[i]->x && y == want[i]->y && w == want[i]->w
        && hh == want[i]->h, "mtd %d: %d %d %d %d", i, x, y, w, hh);
    fail_unless (conf == (gfloat) (1.0 / (1.0 + exp (-want[i]->l1))));
    fail_unless_equals_string (g_quark_to_string
        (gst_analytics_od_mtd_get_obj_type (od)), "lane");
    i++;
  }
  fail_unless_equals_int (i, 2);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;
#endif

/* The layout enum's nick and value name. */
GST_START_TEST (test_lanes_layout_enum)
{
  GEnumClass *klass;
  GEnumValue *v;
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (el),
      "layout");

  klass = g_type_class_ref (ps->value_type);
  v = g_enum_get_value_by_nick (klass, "laneatt");
  fail_unless (v != NULL);
  fail_unless_equals_string (v->value_name, "LaneATT [1, N, 5+S], lane "
      "proposals (2 logits, start_y, start_x, length, S x offsets)");
  g_type_class_unref (klass);
  ps = g_object_class_find_property (G_OBJECT_GET_CLASS (el),
      "lane-distance");
  fail_unless (ps != NULL);
  fail_unless (ps->flags & GST_PARAM_MUTABLE_PLAYING);
  fail_unless (G_PARAM_SPEC_FLOAT (ps)->default_value == 50.0f);
  gst_object_unref (el);
}

GST_END_TEST;

#ifdef HAVE_GST_ANALYTICS
/* The mtds of buf's relation meta, of any type (0 without a relation
 * meta). */
static guint
count_mtds (GstBuffer * buf)
{
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta
      (buf);

  return rmeta != NULL ? gst_analytics_relation_get_length (rmeta) : 0;
}

/* attach-meta=both (the default) and roi: each lane is its ROI alone, with
 * its points; no ODMtd (its rectangle would be drawn as a box by
 * objectdetectionoverlay) and no other mtd. */
GST_START_TEST (test_lanes_no_od_mtds)
{
  const gchar *props[] = { "layout=laneatt", "layout=laneatt attach-meta=both",
    "layout=laneatt attach-meta=roi"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = lane_harness (props[i]);
    GstBuffer *out = push_pull (h, lane_frame (NULL));

    assert_lanes (out, kept_50, 2, "lane");
    fail_unless_equals_int (count_mtds (out), 0);
    fail_unless_equals_int (count_metas (out,
            GST_ANALYTICS_RELATION_META_API_TYPE), 0);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;
#endif

static void
setup (void)
{
  GError *err = NULL;
  gint fd = g_file_open_tmp ("cudanms-lanes-XXXXXX.txt", &labels_path, &err);

  fail_unless (fd >= 0);
  fail_unless (g_file_set_contents (labels_path, "road-lane\nother\n", -1,
          NULL));
  close (fd);
  lane_p2.pts[4] = 2.0 * (gdouble) 430.3f;
  lane_p2.rect[2] = 2.0 * (gdouble) 430.3f;
}

static void
teardown (void)
{
  g_unlink (labels_path);
  g_clear_pointer (&labels_path, g_free);
}

static Suite *
lanes_suite (void)
{
  Suite *s = suite_create ("lanes");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_lanes_kept);
  tcase_add_test (tc, test_lanes_labels);
  tcase_add_test (tc, test_lanes_threshold_and_cap);
  tcase_add_test (tc, test_lanes_layout_by_id);
  tcase_add_test (tc, test_lanes_auto_never_guesses);
  tcase_add_test (tc, test_lanes_bad_tensor);
  tcase_add_test (tc, test_lanes_live_distance);
  tcase_add_test (tc, test_lanes_layout_enum);
#ifdef HAVE_GST_ANALYTICS
  tcase_add_test (tc, test_lanes_od_mtds);
  tcase_add_test (tc, test_lanes_no_od_mtds);
#endif
  return s;
}

GST_CHECK_MAIN (lanes);
