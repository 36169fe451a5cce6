/* Oriented boxes into GStreamer's analytics stack (>= 1.26): a GstTensorMeta
 * tensor yolo-v8-obb-out [1, 4+2+1, 3] (col-major, as GStreamer's decoders
 * read it) through cudanms (layout=auto, model = frame 320x240, no
 * letterbox) gives one oriented GstAnalyticsODMtd per kept box in the
 * convention of gstanalyticsobjectdetectionmtd.c: x, y the upper-left
 * corner before rotation, w, h, and r in [0, 2 pi) turning the w side from
 * +x towards +y about the centre (x + w/2, y + h/2). cudanms rounds:
 * w = floor (w + 0.5), x = floor (cx - w'/2 + 0.5), r = angle mod 2 pi.
 * The anchors (cx cy w h angle, class, score):
 *   a0 100 80  60 20  0.5   class-0 0.9  -> x 70, y 70, 60 x 20, r 0.5
 *   a1 250 150 41 17  -0.3  class-1 0.8  -> x 230, y 142, 41 x 17,
 *                                           r = -0.3 + 2 pi
 *   a2 101 80  60 20  0.5   class-0 0.7  a0's near duplicate, suppressed
 * Then cudanms ! objectdetectionoverlay: on a black frame the outline is
 * red on the path the overlay strokes (within 0.5 px of it) and nothing is
 * drawn 2 px or more away from it: the rotated rectangle where the overlay
 * draws rotated boxes (1.28.1 and later), else the axis-aligned
 * rectangle of gst_analytics_od_mtd_get_location (the rotated corners'
 * hull). With 1.28's tensor caps, a description of yolo-v8-obb-out that
 * does not fit yolov8-obb ([1, 5, 10]: no class row) fails negotiation
 * naming it. Exit 77 (skip) below 1.26 or without objectdetectionoverlay. */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "analytics_common.h"

#ifdef HAVE_GST_TENSOR_META

#define RGB_CAPS "video/x-raw,format=RGB,width=320,height=240,framerate=30/1"
#define N 3

static const gfloat anchors[N][7] = {
  /* cx, cy, w, h, angle, class, score */
  {100, 80, 60, 20, 0.5f, 0, 0.9f},
  {250, 150, 41, 17, -0.3f, 1, 0.8f},
  {101, 80, 60, 20, 0.5f, 0, 0.7f},
};

static GstBuffer *
obb_frame (void)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, FRAME_W * FRAME_H * 3,
      NULL);
  const gsize dims[3] = { 1, 7, N };
  gfloat t[7 * N];
  gint i;

  memset (t, 0, sizeof t);
  for (i = 0; i < N; i++) {
    t[0 * N + i] = anchors[i][0];
    t[1 * N + i] = anchors[i][1];
    t[2 * N + i] = anchors[i][2];
    t[3 * N + i] = anchors[i][3];
    t[(4 + (gint) anchors[i][5]) * N + i] = anchors[i][6];
    t[6 * N + i] = anchors[i][4];
  }
  gst_buffer_memset (buf, 0, 0, FRAME_W * FRAME_H * 3);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  gst_buffer_add_video_meta (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_RGB, FRAME_W, FRAME_H);
  add_tensor_meta (buf, 1, make_tensor ("yolo-v8-obb-out",
          GST_TENSOR_DIM_ORDER_COL_MAJOR, dims, 3, t, sizeof t));
  return buf;
}

typedef struct
{
  gint x, y, w, h;
  gfloat r;
  const gchar *label;
  gfloat score;
} ExpectedOd;

static void
expected_ods (ExpectedOd e[2])
{
  e[0] = (ExpectedOd) {
  70, 70, 60, 20, 0.5f, "class-0", 0.9f};
  e[1] = (ExpectedOd) {
  230, 142, 41, 17, (gfloat) ((gdouble) - 0.3f + 2.0 * G_PI), "class-1",
        0.8f};
}

GST_START_TEST (test_obb_od_mtds)
{
  GstHarness *h = gst_harness_new_parse ("cudanms model-size=320x240 "
      "letterbox=false");
  GstAnalyticsRelationMeta *rmeta;
  GstAnalyticsODMtd od;
  gpointer state = NULL;
  ExpectedOd want[2];
  GstBuffer *out;
  gint i = 0;

  expected_ods (want);
  gst_harness_set_src_caps_str (h, RGB_CAPS);
  fail_unless_equals_int (gst_harness_push (h, obb_frame ()), GST_FLOW_OK);
  out = gst_harness_pull (h);
  rmeta = gst_buffer_get_analytics_relation_meta (out);
  fail_unless (rmeta != NULL);
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &od)) {
    gint x, y, w, hh;
    gfloat r, conf;

    fail_unless (i < 2);
    fail_unless (gst_analytics_od_mtd_get_oriented_location (&od, &x, &y, &w,
            &hh, &r, &conf));
    fail_unless (x == want[i].x && y == want[i].y && w == want[i].w
        && hh == want[i].h, "mtd %d: %d,%d %dx%d", i, x, y, w, hh);
    fail_unless (r == want[i].r, "mtd %d: r %.9g, expected %.9g", i, r,
        want[i].r);
    fail_unless (r >= 0.0f && r < (gfloat) (2 * G_PI));
    fail_unless (conf == want[i].score);
    fail_unless_equals_string (g_quark_to_string
        (gst_analytics_od_mtd_get_obj_type (&od)), want[i].label);
    i++;
  }
  fail_unless_equals_int (i, 2);
  /* the ROIs hold the clipped hulls of the same boxes */
  fail_unless_equals_int (count_rois (out), 2);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Distance from (px, py) to the segment a-b. */
static gdouble
seg_dist (gdouble px, gdouble py, const gdouble a[2], const gdouble b[2])
{
  gdouble dx = b[0] - a[0], dy = b[1] - a[1];
  gdouble t = ((px - a[0]) * dx + (py - a[1]) * dy) / (dx * dx + dy * dy);

  t = CLAMP (t, 0.0, 1.0);
  return hypot (px - (a[0] + t * dx), py - (a[1] + t * dy));
}

/* The outline the overlay strokes for one mtd: 4 corners. Rotated
 * (rotated = TRUE): the overlay's own corners about (x + w/2, y + h/2);
 * else the rectangle of gst_analytics_od_mtd_get_location. */
static void
outline_of (const ExpectedOd * e, GstAnalyticsODMtd * od, gboolean rotated,
    gdouble c[4][2])
{
  static const gint signs[4][2] = { {-1, -1}, {1, -1}, {1, 1}, {-1, 1} };
  gint k;

  if (rotated) {
    gdouble xc = e->x + e->w / 2.0, yc = e->y + e->h / 2.0;

    for (k = 0; k < 4; k++) {
      gdouble dx = signs[k][0] * e->w / 2.0, dy = signs[k][1] * e->h / 2.0;

      c[k][0] = dx * cos (e->r) - dy * sin (e->r) + xc;
      c[k][1] = dx * sin (e->r) + dy * cos (e->r) + yc;
    }
  } else {
    gint x, y, w, h;
    gfloat conf;

    fail_unless (gst_analytics_od_mtd_get_location (od, &x, &y, &w, &h,
            &conf));
    for (k = 0; k < 4; k++) {
      c[k][0] = signs[k][0] < 0 ? x : x + w;
      c[k][1] = signs[k][1] < 0 ? y : y + h;
    }
  }
}

GST_START_TEST (test_obb_overlay)
{
  GstElementFactory *f = gst_element_factory_find ("objectdetectionoverlay");
  /* objectdetectionoverlay draws rotated boxes from 1.28.1 on */
  gboolean rotated = gst_plugin_feature_check_version (GST_PLUGIN_FEATURE
      (f), 1, 28, 1);
  GstHarness *h = gst_harness_new_parse ("cudanms model-size=320x240 "
      "letterbox=false ! objectdetectionoverlay "
      "object-detection-outline-color=0xFFFF0000 draw-labels=false");
  GstAnalyticsRelationMeta *rmeta;
  GstAnalyticsODMtd od;
  GstVideoOverlayCompositionMeta *cmeta;
  GstVideoFrame frame;
  GstVideoInfo info;
  GstCaps *caps = gst_caps_from_string (RGB_CAPS);
  gpointer state = NULL;
  gdouble outline[2][4][2];
  ExpectedOd want[2];
  GstBuffer *out;
  guint red = 0, black = 0;
  gint i = 0, px, py;

  gst_object_unref (f);
  expected_ods (want);
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  gst_harness_set_src_caps_str (h, RGB_CAPS);
  fail_unless_equals_int (gst_harness_push (h, obb_frame ()), GST_FLOW_OK);
  out = gst_buffer_make_writable (gst_harness_pull (h));
  rmeta = gst_buffer_get_analytics_relation_meta (out);
  fail_unless (rmeta != NULL);
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &od)) {
    fail_unless (i < 2);
    outline_of (&want[i], &od, rotated, outline[i]);
    i++;
  }
  fail_unless_equals_int (i, 2);
  fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READWRITE));
  cmeta = gst_buffer_get_video_overlay_composition_meta (out);
  if (cmeta != NULL)
    gst_video_overlay_composition_blend (cmeta->overlay, &frame);
  for (py = 0; py < FRAME_H; py++) {
    const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
        0) + py * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);

    for (px = 0; px < FRAME_W; px++) {
      const guint8 *p = row + 3 * px;
      gdouble d = G_MAXDOUBLE;
      gint b, k;

      for (b = 0; b < 2; b++)
        for (k = 0; k < 4; k++)
          d = MIN (d, seg_dist (px + 0.5, py + 0.5, outline[b][k],
                  outline[b][(k + 1) % 4]));
      if (d <= 0.5) {
        fail_unless (p[0] >= 200 && p[1] <= 60 && p[2] <= 60,
            "pixel %d,%d (%.2f from the outline) is %u,%u,%u, not red", px,
            py, d, p[0], p[1], p[2]);
        red++;
      } else if (d >= 2.0) {
        fail_unless (p[0] == 0 && p[1] == 0 && p[2] == 0,
            "pixel %d,%d (%.2f from the outline) is %u,%u,%u, not black", px,
            py, d, p[0], p[1], p[2]);
        black++;
      }
    }
  }
  /* the two outlines' perimeters, 160 and 116 px, roughly */
  fail_unless (red > 250, "%u red pixels", red);
  fail_unless (black > FRAME_W * FRAME_H - 2000, "%u black pixels", black);
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

#ifdef HAVE_GST_TENSOR_CAPS
GST_START_TEST (test_obb_caps_refused)
{
  GstHarness *h = new_harness_caps (NULL, NULL);
  GstBus *bus = watch_bus (h->element);
  GstCaps *caps = gst_caps_from_string (FRAME_CAPS ",tensors=(structure)["
      "tensorgroups,g=(/uniquelist){(GstCaps)[tensor/strided,"
      "tensor-id=(string)yolo-v8-obb-out,dims=<(int)1,(int)5,(int)10>,"
      "dims-order=(string)col-major,type=(string)float32]}]");
  GstSegment segment;
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL;

  fail_unless (caps != NULL);
  gst_harness_play (h);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (h, gst_event_new_stream_start ("s"));
  gst_harness_push_event (h, gst_event_new_caps (caps));
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
      GST_FLOW_NOT_NEGOTIATED);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless_equals_string (err->message, "The caps describe a detection "
      "tensor cudanms cannot decode: caps describe tensor 'yolo-v8-obb-out': "
      "a [1, 5, 10] tensor does not fit layout yolov8-obb");
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (msg);
  unwatch_bus (bus);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;
#endif

static Suite *
obb_suite (void)
{
  Suite *s = suite_create ("analytics-obb");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_obb_od_mtds);
  tcase_add_test (tc, test_obb_overlay);
#ifdef HAVE_GST_TENSOR_CAPS
  tcase_add_test (tc, test_obb_caps_refused);
#endif
  return s;
}

ANALYTICS_TEST_MAIN (obb, "objectdetectionoverlay");
#else
ANALYTICS_SKIP_MAIN ("GStreamer's analytics library with oriented ODMtds "
    "(>= 1.26)");
#endif
