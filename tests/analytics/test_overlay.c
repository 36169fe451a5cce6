/* cudanms ! objectdetectionoverlay draws cudanms's boxes: on a black RGB
 * frame every pixel is compared with the outlines the overlay strokes for
 * the hand ROIs (2 px wide, on the integer box, clamped as the overlay
 * clamps), and nothing is drawn with attach-meta=roi. Exit 77 (skip)
 * without the analytics library or objectdetectionoverlay. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "analytics_common.h"

#ifdef HAVE_GST_ANALYTICS

#define RGB_CAPS "video/x-raw,format=RGB,width=320,height=240,framerate=30/1"

static GstBuffer *
black_hand_frame (void)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, FRAME_W * FRAME_H * 3,
      NULL);

  gst_buffer_memset (buf, 0, 0, FRAME_W * FRAME_H * 3);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  gst_buffer_add_video_meta (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_RGB, FRAME_W, FRAME_H);
  attach_hand_tensor (buf, NULL);
  return buf;
}

/* TRUE where the overlay's 2 px stroke of cairo_rectangle (x, y, w, h)
 * covers pixel (px, py): the pixels within 1 of the path, square corners. */
static gboolean
on_outline (gint px, gint py, gint x, gint y, gint w, gint h)
{
  if (px < x - 1 || px > x + w || py < y - 1 || py > y + h)
    return FALSE;
  return px <= x || px >= x + w - 1 || py <= y || py >= y + h - 1;
}

static gboolean
expected_red (gint px, gint py)
{
  guint i;

  for (i = 0; i < HAND_KEPT; i++) {
    const ExpectedRoi *e = &hand_expected[i];
    /* the overlay clamps the box into [0, W-1] x [0, H-1] */
    gint x = CLAMP ((gint) e->x, 0, FRAME_W - 1);
    gint y = CLAMP ((gint) e->y, 0, FRAME_H - 1);
    gint w = CLAMP ((gint) e->w, 0, FRAME_W - 1 - x);
    gint h = CLAMP ((gint) e->h, 0, FRAME_H - 1 - y);

    if (on_outline (px, py, x, y, w, h))
      return TRUE;
  }
  return FALSE;
}

/* Runs one black frame with the hand tensor through the pair; returns the
 * number of red pixels, asserting each pixel is red exactly where an
 * outline is expected (draw = TRUE) or that all stay black. */
static guint
run_overlay (const gchar * attach, gboolean draw)
{
  gchar *desc = g_strdup_printf ("cudanms model-size=320x240 "
      "letterbox=false attach-meta=%s ! objectdetectionoverlay "
      "object-detection-outline-color=0xFFFF0000 draw-labels=false", attach);
  GstHarness *h = gst_harness_new_parse (desc);
  GstBuffer *out;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstVideoOverlayCompositionMeta *cmeta;
  guint red = 0;
  gint px, py;

  gst_harness_set_src_caps_str (h, RGB_CAPS);
  fail_unless_equals_int (gst_harness_push (h, black_hand_frame ()),
      GST_FLOW_OK);
  out = gst_buffer_make_writable (gst_harness_pull (h));
  {
    GstCaps *caps = gst_caps_from_string (RGB_CAPS);

    fail_unless (gst_video_info_from_caps (&info, caps));
    gst_caps_unref (caps);
  }
  fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READWRITE));
  /* where downstream could take the composition, it is attached: blend */
  cmeta = gst_buffer_get_video_overlay_composition_meta (out);
  if (cmeta != NULL)
    gst_video_overlay_composition_blend (cmeta->overlay, &frame);
  for (py = 0; py < FRAME_H; py++) {
    const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
        0) + py * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);

    for (px = 0; px < FRAME_W; px++) {
      const guint8 *p = row + 3 * px;
      gboolean want = draw && expected_red (px, py);

      if (want)
        fail_unless (p[0] >= 250 && p[1] <= 5 && p[2] <= 5,
            "pixel %d,%d is %u,%u,%u, not red", px, py, p[0], p[1], p[2]);
      else
        fail_unless (p[0] == 0 && p[1] == 0 && p[2] == 0,
            "pixel %d,%d is %u,%u,%u, not black", px, py, p[0], p[1], p[2]);
      red += want;
    }
  }
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (desc);
  return red;
}

GST_START_TEST (test_overlay_draws_boxes)
{
  /* five outlines; box 3 clamped at the frame's right and bottom edges */
  fail_unless (run_overlay ("both", TRUE) > 400);
  fail_unless (run_overlay ("analytics", TRUE) > 400);
  /* ROIs alone: the overlay has nothing to draw */
  fail_unless_equals_int (run_overlay ("roi", FALSE), 0);
}

GST_END_TEST;

static Suite *
overlay_suite (void)
{
  Suite *s = suite_create ("analytics-overlay");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_overlay_draws_boxes);
  return s;
}

ANALYTICS_TEST_MAIN (overlay, "objectdetectionoverlay");
#else
ANALYTICS_SKIP_MAIN ("GStreamer's analytics library (>= 1.24)");
#endif
