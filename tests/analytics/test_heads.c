/* cudanms layout=yolov8-pose and layout=yolov8-seg with GStreamer's
 * analytics (>= 1.26). pose-od: a hand pose tensor in a GstTensorMeta
 * gives its person's ODMtd and the ROI's keypoints. Segmentation: the
 * segmentation scene of tensorinject (rendered here, model 640x640 = the
 * frame) as one GstTensorMeta holding the detections and the prototypes,
 * as onnxinference attaches them.
 *  - seg-mtds (>= 1.26): per kept box an ODMtd and an instance
 *    GstAnalyticsSegmentationMtd related to it both ways, its GRAY8 mask
 *    (video meta, stride = width) the ROI's mask with the box's region id,
 *    region ids {0, id}, located at the mask's rectangle; none with
 *    attach-meta=roi, no ROI with attach-meta=analytics.
 *  - segmentationoverlay (1.28): it draws the masks: every pixel of a
 *    black RGB frame against the colours it gives region ids (its
 *    hue_to_rgb over 10 colours), blended at alpha 128/255 (within 3) over
 *    each mask's pixels one to one (the mask is the size of its location),
 *    nothing elsewhere.
 *  - yolosegv8tensordec (1.28): side by side on the same tensors (col-major
 *    float32, its only kind): the same boxes kept in the same order with
 *    the same scores (class-agnostic NMS on both), and each instance's
 *    mask against cudanms's three ways, all printed:
 *      in both crops: its mask's prototype pixel (px, py) covering frame
 *        pixels [4 px, 4 px + 4) x [4 py, 4 py + 4) (its crop starts at
 *        the box's corner truncated to whole prototype pixels), compared
 *        only where both masks are defined (cudanms's box rectangle and
 *        its crop): IoU above 0.95, the rule alone: its nearest prototype
 *        pixel (4x4 blocks thresholded at the block's centre) against
 *        cudanms's bilinear logit at each frame pixel;
 *      placed: the same, everywhere: above 0.85; the crops differ too:
 *        its crop of trunc (w / 4) prototype pixels from trunc (x / 4)
 *        leaves out up to 7 frame pixels of the box on the right and
 *        bottom (a rectangle filling its box: 1.0 in both crops, 0.89
 *        placed);
 *      scaled as segmentationoverlay draws it (stretched over its
 *        location, the box): above 0.8; the stretch moves each block by
 *        up to 3 pixels more.
 * Exit 77 (skip) without what each needs. */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "analytics_common.h"

#ifdef HAVE_GST_TENSOR_META
#include "gsttensorinjectscene.h"

#define SIZE 640
#define SEG_DET_ID "yolo-v8-segmentation-out-detections"
#define SEG_PROTOS_ID "yolo-v8-segmentation-out-protos"
#define N_OBJECTS 4
#define GRAY_CAPS "video/x-raw,format=GRAY8,width=640,height=640,framerate=30/1"
#define RGB_CAPS "video/x-raw,format=RGB,width=640,height=640,framerate=30/1"
#define NMS_PROPS "layout=yolov8-seg model-size=640x640 letterbox=false " \
    "device=cpu iou=0.45 score-threshold=0.3"

static GstTensorInjectScene *
seg_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, SIZE, SIZE,
    CNMS_DTYPE_FLOAT32, 5, N_OBJECTS, 0, FALSE, FALSE, FALSE, TRUE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* A frame (GRAY8 or RGB, black) with frame f's two tensors in one
 * GstTensorMeta. */
static GstBuffer *
scene_frame (GstTensorInjectScene * sc, guint64 f, gint bpp,
    GstTensorDimOrder order)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, SIZE * SIZE * bpp, NULL);
  gsize size = gst_tensor_inject_scene_size (sc);
  gsize psize = gst_tensor_inject_scene_protos_size (sc);
  guint8 *d = g_malloc (size), *p = g_malloc (psize);
  gint64 dd[3], pd[4];
  gsize dims[4], pdims[4];
  gint k;

  gst_buffer_memset (buf, 0, 0, SIZE * SIZE * bpp);
  GST_BUFFER_PTS (buf) = f * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  gst_tensor_inject_scene_render (sc, f, d);
  gst_tensor_inject_scene_render_protos (sc, f, p);
  gst_tensor_inject_scene_dims (sc, dd);
  gst_tensor_inject_scene_protos_dims (sc, pd);
  for (k = 0; k < 4; k++) {
    dims[k] = k < 3 ? (gsize) dd[k] : 0;
    pdims[k] = (gsize) pd[k];
  }
  add_tensor_meta (buf, 2, make_tensor (SEG_DET_ID, order, dims, 3, d, size),
      make_tensor (SEG_PROTOS_ID, order, pdims, 4, p, psize));
  g_free (d);
  g_free (p);
  return buf;
}

/* The n-th mtd of type on buf's relation meta (relation meta order). */
static gboolean
nth_mtd (GstBuffer * buf, GstAnalyticsMtdType type, guint n,
    GstAnalyticsMtd * out)
{
  GstAnalyticsRelationMeta *rmeta =
      gst_buffer_get_analytics_relation_meta (buf);
  gpointer state = NULL;
  guint i = 0;

  if (rmeta == NULL)
    return FALSE;
  while (gst_analytics_relation_meta_iterate (rmeta, &state, type, out)) {
    if (i++ == n)
      return TRUE;
  }
  return FALSE;
}

static guint
count_mtds (GstBuffer * buf, GstAnalyticsMtdType type)
{
  GstAnalyticsMtd m;
  guint n = 0;

  while (nth_mtd (buf, type, n, &m))
    n++;
  return n;
}

/* The ROI's "mask": rectangle and bytes (g_free). */
static guint8 *
roi_mask (GstBuffer * buf, gint id, gint rect[4])
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_get_video_region_of_interest_meta_id (buf, id);
  GstStructure *s;
  GstBuffer *data = NULL;
  guint8 *bytes;

  fail_unless (roi != NULL);
  s = gst_video_region_of_interest_meta_get_param (roi, "mask");
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_int (s, "x", &rect[0])
      && gst_structure_get_int (s, "y", &rect[1])
      && gst_structure_get_int (s, "width", &rect[2])
      && gst_structure_get_int (s, "height", &rect[3]));
  fail_unless (gst_structure_get (s, "data", GST_TYPE_BUFFER, &data, NULL));
  bytes = g_malloc0 (MAX (gst_buffer_get_size (data), 1));
  gst_buffer_extract (data, 0, bytes, gst_buffer_get_size (data));
  gst_buffer_unref (data);
  return bytes;
}

GST_START_TEST (test_seg_mtds)
{
  GstTensorInjectScene *sc = seg_scene ();
  GstHarness *h = gst_harness_new_parse ("cudanms name=nms " NMS_PROPS);
  GstElement *nms = gst_harness_find_element (h, "cudanms");
  GstBuffer *out;
  guint i;


  gst_harness_set_src_caps_str (h, GRAY_CAPS);
  out = gst_harness_push_and_pull (h, scene_frame (sc, 0, 1,
          GST_TENSOR_DIM_ORDER_ROW_MAJOR));
  fail_unless_equals_int (count_rois (out), N_OBJECTS);
  fail_unless_equals_int (count_mtds (out, gst_analytics_od_mtd_get_mtd_type
          ()), N_OBJECTS);
  fail_unless_equals_int (count_mtds (out,
          gst_analytics_segmentation_mtd_get_mtd_type ()), N_OBJECTS);
  for (i = 0; i < N_OBJECTS; i++) {
    GstAnalyticsRelationMeta *rmeta =
        gst_buffer_get_analytics_relation_meta (out);
    GstAnalyticsMtd od, seg;
    gpointer state = NULL;
    GstBuffer *mask;
    GstVideoMeta *vmeta;
    GstMapInfo map;
    gint rect[4], x, y, ox, oy, ow, oh;
    guint w, hh, k;
    gfloat conf;
    guint8 *bytes = roi_mask (out, i, rect);

    fail_unless (nth_mtd (out, gst_analytics_od_mtd_get_mtd_type (), i,
            &od));
    fail_unless (gst_analytics_od_mtd_get_location ((GstAnalyticsODMtd *) &
            od, &ox, &oy, &ow, &oh, &conf));
    fail_unless (gst_analytics_relation_meta_get_direct_related (rmeta,
            od.id, GST_ANALYTICS_REL_TYPE_RELATE_TO,
            gst_analytics_segmentation_mtd_get_mtd_type (), &state, &seg));
    fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rmeta,
            seg.id, od.id), GST_ANALYTICS_REL_TYPE_RELATE_TO);
    fail_unless_equals_int (gst_analytics_segmentation_mtd_get_region_count (
            (GstAnalyticsSegmentationMtd *) & seg), 2);
    fail_unless_equals_int (gst_analytics_segmentation_mtd_get_region_id (
            (GstAnalyticsSegmentationMtd *) & seg, 0), 0);
    fail_unless_equals_int (gst_analytics_segmentation_mtd_get_region_id (
            (GstAnalyticsSegmentationMtd *) & seg, 1), i + 1);
    mask = gst_analytics_segmentation_mtd_get_mask (
        (GstAnalyticsSegmentationMtd *) & seg, &x, &y, &w, &hh);
    fail_unless (mask != NULL);
    fail_unless (x == rect[0] && y == rect[1] && (gint) w == rect[2]
        && (gint) hh == rect[3]);
    /* inside the ODMtd's box */
    fail_unless (x >= ox && y >= oy && x + (gint) w <= ox + ow
        && y + (gint) hh <= oy + oh);
    vmeta = gst_buffer_get_video_meta (mask);
    fail_unless (vmeta != NULL);
    fail_unless_equals_int (vmeta->format, GST_VIDEO_FORMAT_GRAY8);
    fail_unless (vmeta->width == w && vmeta->height == hh
        && vmeta->stride[0] == (gint) w);
    fail_unless (gst_buffer_map (mask, &map, GST_MAP_READ));
    fail_unless_equals_uint64 (map.size, (guint64) w * hh);
    for (k = 0; k < w * hh; k++)
      fail_unless_equals_int (map.data[k], bytes[k] ? (gint) i + 1 : 0);
    gst_buffer_unmap (mask, &map);
    gst_buffer_unref (mask);
    g_free (bytes);
  }
  gst_buffer_unref (out);

  /* ROIs alone, and mtds alone */
  gst_util_set_object_arg (G_OBJECT (nms), "attach-meta", "roi");
  out = gst_harness_push_and_pull (h, scene_frame (sc, 1, 1,
          GST_TENSOR_DIM_ORDER_ROW_MAJOR));
  fail_unless_equals_int (count_rois (out), N_OBJECTS);
  fail_unless_equals_int (count_mtds (out,
          gst_analytics_segmentation_mtd_get_mtd_type ()), 0);
  gst_buffer_unref (out);
  gst_util_set_object_arg (G_OBJECT (nms), "attach-meta", "analytics");
  out = gst_harness_push_and_pull (h, scene_frame (sc, 2, 1,
          GST_TENSOR_DIM_ORDER_ROW_MAJOR));
  fail_unless_equals_int (count_rois (out), 0);
  fail_unless_equals_int (count_mtds (out,
          gst_analytics_segmentation_mtd_get_mtd_type ()), N_OBJECTS);
  gst_buffer_unref (out);
  gst_object_unref (nms);
  gst_harness_teardown (h);
  gst_tensor_inject_scene_free (sc);
}

GST_END_TEST;

/* Pose from a GstTensorMeta (>= 1.26): a hand [1, 5+2*3, 2] tensor (model
 * 64x48 = the frame): one person kept, its ODMtd the box 10,8 20x32 at
 * 0.9 as for boxes (no keypoint meta before 1.29.1), its ROI's keypoints
 * (12.5, 9.25) 0.8 and (27.75, 39.5) 0.25 exactly. */
GST_START_TEST (test_pose_od)
{
  static const gfloat t[11 * 2] = { 20, 5, 24, 5, 20, 4, 32, 4, 0.9f, 0.1f,
    12.5f, 0, 9.25f, 0, 0.8f, 0, 27.75f, 0, 39.5f, 0, 0.25f, 0
  };
  static const gsize dims[3] = { 1, 11, 2 };
  static const gdouble want[4] = { 12.5, 9.25, 27.75, 39.5 };
  GstHarness *h = gst_harness_new_parse ("cudanms layout=yolov8-pose "
      "model-size=64x48 letterbox=false device=cpu");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64 * 48, NULL), *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *kps;
  const GValue *pts, *scores;
  GstAnalyticsMtd od;
  gint x, y, w, hh, k;
  gfloat conf;

  gst_buffer_memset (buf, 0, 0, 64 * 48);
  GST_BUFFER_PTS (buf) = 0;
  add_tensor_meta (buf, 1, make_tensor ("pose", GST_TENSOR_DIM_ORDER_ROW_MAJOR,
          dims, 3, t, sizeof (t)));
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=64,"
      "height=48,framerate=30/1");
  out = gst_harness_push_and_pull (h, buf);
  fail_unless_equals_int (count_rois (out), 1);
  fail_unless_equals_int (count_mtds (out, gst_analytics_od_mtd_get_mtd_type
          ()), 1);
  fail_unless (nth_mtd (out, gst_analytics_od_mtd_get_mtd_type (), 0, &od));
  fail_unless (gst_analytics_od_mtd_get_location ((GstAnalyticsODMtd *) & od,
          &x, &y, &w, &hh, &conf));
  fail_unless (x == 10 && y == 8 && w == 20 && hh == 32 && conf == 0.9f);
  roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
  fail_unless (roi != NULL);
  kps = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
  fail_unless (kps != NULL);
  pts = gst_structure_get_value (kps, "points");
  scores = gst_structure_get_value (kps, "scores");
  fail_unless (pts != NULL && scores != NULL);
  fail_unless_equals_int (gst_value_array_get_size (pts), 4);
  for (k = 0; k < 4; k++)
    fail_unless (g_value_get_double (gst_value_array_get_value (pts, k))
        == want[k]);
  fail_unless (g_value_get_double (gst_value_array_get_value (scores, 0))
      == 0.8f);
  fail_unless (g_value_get_double (gst_value_array_get_value (scores, 1))
      == 0.25f);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

#ifdef HAVE_GST_TENSOR_CAPS
/* segmentationoverlay's colour of region id v with its default 10 colours
 * (hint-maximum-segment-type): hue (v % 11 - 1) * 36 degrees, its
 * gst_segmentation_overlay_hue_to_rgb. */
static void
overlay_colour (guint v, gdouble rgb[3])
{
  gdouble hue = fmod (((v % 11) - 1) * 36.0, 360.0);
  gdouble x = round ((1.0 - fabs (fmod (hue / 60.0, 2.0) - 1.0)) * 255.0);
  gint sector = (gint) (hue / 60.0);
  const gdouble table[6][3] = {
    {255, x, 0}, {x, 255, 0}, {0, 255, x}, {0, x, 255}, {x, 0, 255},
    {255, 0, x}
  };

  rgb[0] = table[sector][0];
  rgb[1] = table[sector][1];
  rgb[2] = table[sector][2];
}

GST_START_TEST (test_segmentation_overlay)
{
  GstTensorInjectScene *sc = seg_scene ();
  GstHarness *h = gst_harness_new_parse ("cudanms " NMS_PROPS
      " ! segmentationoverlay");
  GstBuffer *out, *ref;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstVideoOverlayCompositionMeta *cmeta;
  gint rects[N_OBJECTS][4], i, x, y, painted = 0, bad = 0;
  guint8 *masks[N_OBJECTS];
  GstCaps *caps = gst_caps_from_string (RGB_CAPS);

  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  gst_harness_set_src_caps_str (h, RGB_CAPS);
  /* the masks, from a plain run */
  {
    GstHarness *h2 = gst_harness_new_parse ("cudanms " NMS_PROPS);

    gst_harness_set_src_caps_str (h2, RGB_CAPS);
    ref = gst_harness_push_and_pull (h2, scene_frame (sc, 0, 3,
            GST_TENSOR_DIM_ORDER_ROW_MAJOR));
    fail_unless_equals_int (count_rois (ref), N_OBJECTS);
    for (i = 0; i < N_OBJECTS; i++)
      masks[i] = roi_mask (ref, i, rects[i]);
    gst_buffer_unref (ref);
    gst_harness_teardown (h2);
  }
  out = gst_buffer_make_writable (gst_harness_push_and_pull (h,
          scene_frame (sc, 0, 3, GST_TENSOR_DIM_ORDER_ROW_MAJOR)));
  fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READWRITE));
  cmeta = gst_buffer_get_video_overlay_composition_meta (out);
  if (cmeta != NULL)
    gst_video_overlay_composition_blend (cmeta->overlay, &frame);
  for (y = 0; y < SIZE; y++) {
    const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
        0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);

    for (x = 0; x < SIZE; x++) {
      gdouble want[3] = { 0, 0, 0 };
      gboolean any = FALSE;
      gint c;

      /* the rectangles in the order the overlay adds them, each blended
       * over what is below */
      for (i = 0; i < N_OBJECTS; i++) {
        gint mx = x - rects[i][0], my = y - rects[i][1];
        gdouble rgb[3];

        if (mx < 0 || my < 0 || mx >= rects[i][2] || my >= rects[i][3])
          continue;
        if (!masks[i][my * rects[i][2] + mx])
          continue;
        overlay_colour (i + 1, rgb);
        for (c = 0; c < 3; c++)
          want[c] = want[c] * (1 - 128.0 / 255) + rgb[c] * 128.0 / 255;
        any = TRUE;
      }
      for (c = 0; c < 3; c++)
        if (fabs (row[3 * x + c] - want[c]) > (any ? 3 : 0) && bad++ < 20)
          g_print ("pixel %d,%d channel %d: %u, want %g\n", x, y, c,
              row[3 * x + c], want[c]);
      painted += any;
    }
  }
  fail_unless (bad == 0, "%d bad", bad);
  fail_unless (painted > 10000, "%d pixels painted", painted);
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (out);
  for (i = 0; i < N_OBJECTS; i++)
    g_free (masks[i]);
  gst_harness_teardown (h);
  gst_tensor_inject_scene_free (sc);
}

GST_END_TEST;

/* GRAY8 640x640 caps describing the two tensors as 1.28's onnxinference
 * does (what yolosegv8tensordec's template asks). */
#define TENSOR_CAPS GRAY_CAPS ",tensors=(structure)[tensorgroups," \
    "yolo-v8-segmentation-out=(/uniquelist){" \
    "(GstCaps)[tensor/strided,tensor-id=(string)" SEG_DET_ID "," \
    "dims=<(int)1,(int)116,(int)8400>,dims-order=(string)col-major," \
    "type=(string)float32]," \
    "(GstCaps)[tensor/strided,tensor-id=(string)" SEG_PROTOS_ID "," \
    "dims=<(int)1,(int)32,(int)160,(int)160>,dims-order=(string)col-major," \
    "type=(string)float32]}]"

/* Mask of seg as frame pixels: TRUE at (x, y) when the mask, scaled to its
 * location as segmentationoverlay scales it (nearest: row (y - ly) mh /
 * lh, column (x - lx) mw / lw), is not 0 there. */
static gboolean
mask_at (const guint8 * data, guint mw,
    guint mh, gint lx, gint ly, guint lw, guint lh, gint x, gint y)
{
  if (x < lx || y < ly || x >= lx + (gint) lw || y >= ly + (gint) lh)
    return FALSE;
  return data[((guint) (y - ly) * mh / lh) * mw + (guint) (x - lx) * mw / lw]
      != 0;
}

GST_START_TEST (test_yolosegv8tensordec)
{
  GstTensorInjectScene *sc = seg_scene ();
  GstHarness *hc = gst_harness_new_parse ("cudanms " NMS_PROPS
      " class-agnostic=true attach-meta=analytics");
  GstHarness *hy = gst_harness_new_parse ("yolosegv8tensordec "
      "class-confidence-threshold=0.3 iou-threshold=0.45 max-detections=300");
  guint64 f;
  gdouble worst = 1.0, worst_placed = 1.0, worst_crops = 1.0;

  gst_harness_set_src_caps_str (hc, TENSOR_CAPS);
  gst_harness_set_src_caps_str (hy, TENSOR_CAPS);
  for (f = 0; f < 5; f++) {
    GstBuffer *oc = gst_harness_push_and_pull (hc, scene_frame (sc, f, 1,
            GST_TENSOR_DIM_ORDER_COL_MAJOR));
    GstBuffer *oy = gst_harness_push_and_pull (hy, scene_frame (sc, f, 1,
            GST_TENSOR_DIM_ORDER_COL_MAJOR));
    GstAnalyticsMtdType od_type = gst_analytics_od_mtd_get_mtd_type ();
    GstAnalyticsMtdType seg_type =
        gst_analytics_segmentation_mtd_get_mtd_type ();
    guint n = count_mtds (oc, od_type), i;

    fail_unless_equals_int (n, N_OBJECTS);
    fail_unless_equals_int (count_mtds (oy, od_type), n);
    fail_unless_equals_int (count_mtds (oy, seg_type), n);
    for (i = 0; i < n; i++) {
      GstAnalyticsMtd odc, ody, segc, segy;
      gpointer state = NULL;
      gint cx, cy, cw, ch, yx, yy, yw, yh, lx[2], ly[2], x, y, k;
      guint lw[2], lh[2], inter = 0, uni = 0, pinter = 0, puni = 0;
      guint cinter = 0, cuni = 0;
      gfloat cc, yc;
      GstBuffer *mb[2];
      GstMapInfo map[2];
      GstVideoMeta *vm[2];

      fail_unless (nth_mtd (oc, od_type, i, &odc));
      fail_unless (nth_mtd (oy, od_type, i, &ody));
      fail_unless (gst_analytics_od_mtd_get_location ((GstAnalyticsODMtd *)
              & odc, &cx, &cy, &cw, &ch, &cc));
      fail_unless (gst_analytics_od_mtd_get_location ((GstAnalyticsODMtd *)
              & ody, &yx, &yy, &yw, &yh, &yc));
      /* the same box kept in the same order: the same score, its integer
       * box within a pixel (cudanms floors x1 and ceils x2; the decoder
       * truncates x1 and rounds w) */
      fail_unless (cc == yc, "frame %d box %d: %g / %g", (gint) f, i, cc, yc);
      fail_unless (ABS (cx - yx) <= 1 && ABS (cy - yy) <= 1
          && ABS (cw - yw) <= 2 && ABS (ch - yh) <= 2,
          "frame %d box %d: %d,%d %dx%d / %d,%d %dx%d", (gint) f, i, cx, cy,
          cw, ch, yx, yy, yw, yh);
      fail_unless (gst_analytics_relation_meta_get_direct_related
          (gst_buffer_get_analytics_relation_meta (oc), odc.id,
              GST_ANALYTICS_REL_TYPE_RELATE_TO, seg_type, &state, &segc));
      state = NULL;
      fail_unless (gst_analytics_relation_meta_get_direct_related
          (gst_buffer_get_analytics_relation_meta (oy), ody.id,
              GST_ANALYTICS_REL_TYPE_RELATE_TO, seg_type, &state, &segy));
      mb[0] = gst_analytics_segmentation_mtd_get_mask (
          (GstAnalyticsSegmentationMtd *) & segc, &lx[0], &ly[0], &lw[0],
          &lh[0]);
      mb[1] = gst_analytics_segmentation_mtd_get_mask (
          (GstAnalyticsSegmentationMtd *) & segy, &lx[1], &ly[1], &lw[1],
          &lh[1]);
      for (k = 0; k < 2; k++) {
        fail_unless (mb[k] != NULL);
        vm[k] = gst_buffer_get_video_meta (mb[k]);
        fail_unless (vm[k] != NULL);
        fail_unless (gst_buffer_map (mb[k], &map[k], GST_MAP_READ));
      }
      /* cudanms's mask against its mask placed and scaled */
      for (y = MIN (ly[0], ly[1]) - 4; y < MAX (ly[0] + (gint) lh[0],
              ly[1] + (gint) lh[1]) + 4; y++) {
        for (x = MIN (lx[0], lx[1]) - 4; x < MAX (lx[0] + (gint) lw[0],
                lx[1] + (gint) lw[1]) + 4; x++) {
          gboolean a = mask_at (map[0].data, vm[0]->width, vm[0]->height,
              lx[0], ly[0], lw[0], lh[0], x, y);
          gboolean b = mask_at (map[1].data, vm[1]->width, vm[1]->height,
              lx[1], ly[1], lw[1], lh[1], x, y);
          /* its prototype pixel's place: crop corner trunc (0.25 x) */
          gint pcx = (gint) (0.25f * lx[1]), pcy = (gint) (0.25f * ly[1]);
          gint col = (x >= 0 ? x / 4 : -1) - pcx;
          gint rw = (y >= 0 ? y / 4 : -1) - pcy;
          gboolean p = col >= 0 && rw >= 0 && col < (gint) vm[1]->width
              && rw < (gint) vm[1]->height
              && map[1].data[rw * vm[1]->width + col] != 0;

          /* both crops: cudanms's rectangle and its prototype pixels' */
          gboolean both = x >= lx[0] && y >= ly[0]
              && x < lx[0] + (gint) lw[0] && y < ly[0] + (gint) lh[0]
              && x >= 4 * pcx && y >= 4 * pcy
              && x < 4 * (pcx + (gint) vm[1]->width)
              && y < 4 * (pcy + (gint) vm[1]->height);

          inter += a && b;
          uni += a || b;
          pinter += a && p;
          puni += a || p;
          cinter += both && a && p;
          cuni += both && (a || p);
        }
      }
      for (k = 0; k < 2; k++) {
        gst_buffer_unmap (mb[k], &map[k]);
        gst_buffer_unref (mb[k]);
      }
      fail_unless (uni > 0 && puni > 0 && cuni > 0);
      g_print ("frame %d instance %d: cudanms %dx%d frame pixels, "
          "yolosegv8tensordec %ux%u prototype pixels: mask IoU in both "
          "crops %.4f, placed %.4f, scaled %.4f\n", (gint) f, i, lw[0],
          lh[0], vm[1]->width, vm[1]->height, (gdouble) cinter / cuni,
          (gdouble) pinter / puni, (gdouble) inter / uni);
      worst_crops = MIN (worst_crops, (gdouble) cinter / cuni);
      worst = MIN (worst, (gdouble) inter / uni);
      worst_placed = MIN (worst_placed, (gdouble) pinter / puni);
    }
    gst_buffer_unref (oc);
    gst_buffer_unref (oy);
  }
  g_print ("worst mask IoU: in both crops %.4f, placed %.4f, scaled "
      "%.4f\n", worst_crops, worst_placed, worst);
  fail_unless (worst_crops > 0.95);
  fail_unless (worst_placed > 0.85);
  fail_unless (worst > 0.8);
  gst_harness_teardown (hc);
  gst_harness_teardown (hy);
  gst_tensor_inject_scene_free (sc);
}

GST_END_TEST;
#endif

static Suite *
heads_suite (void)
{
  Suite *s = suite_create ("analytics-heads");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_seg_mtds);
  tcase_add_test (tc, test_pose_od);
#ifdef HAVE_GST_TENSOR_CAPS
  if (!missing_element ("segmentationoverlay"))
    tcase_add_test (tc, test_segmentation_overlay);
  if (!missing_element ("yolosegv8tensordec"))
    tcase_add_test (tc, test_yolosegv8tensordec);
#endif
  return s;
}

ANALYTICS_TEST_MAIN (heads, NULL);
#else
ANALYTICS_SKIP_MAIN ("GStreamer >= 1.26 analytics (GstTensorMeta)");
#endif
