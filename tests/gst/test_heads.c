/* gst-check tests of cudanms's pose and segmentation layouts on the CPU
 * backend: tensorinject's pose scene through layout=yolov8-pose (each
 * person's ROI, box and every keypoint exactly where the scene's truth maps
 * to; keypoint-dims=2 on a D = 3 tensor refused, once, counted), a hand
 * segmentation tensor whose masks are worked out in the comments,
 * tensorinject's segmentation scene through layout=yolov8-seg (every mask
 * pixel against a reference of the documented rule written here, and the
 * masks against the scene's true shapes), the masks' memory reused from
 * frame to frame, the bad inputs: prototypes
 * missing or of the wrong size (one warning each, every buffer counted);
 * and with a CUDA device, both scenes on the CUDA backend from host and
 * device tensors against the CPU backend, byte for byte. */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "gsttensorinjectscene.h"
#include "gst_helpers.h"

#define POSE_K GST_TENSOR_INJECT_POSE_KEYPOINTS
#define SEG_PROTOS_ID "yolo-v8-segmentation-out-protos"
#define SEG_DET_ID "yolo-v8-segmentation-out-detections"

/* A harness of "tensorinject <inject> ! cudanms name=nms <props>", GRAY8
 * 320x240 frames (the scenes' 640x640 model letterboxed: gain 2, pad_x 0,
 * pad_y 80). */
static GstHarness *
chain_harness (const gchar * inject, const gchar * props)
{
  gchar *desc = g_strdup_printf ("tensorinject %s ! cudanms name=nms "
      "device=cpu %s", inject, props);
  GstHarness *h = gst_harness_new_parse (desc);

  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  g_free (desc);
  return h;
}

static GstElement *
nms_of (GstHarness * h)
{
  GstElement *nms = gst_bin_get_by_name (GST_BIN (h->element), "nms");

  fail_unless (nms != NULL);
  gst_object_unref (nms);       /* the bin holds it */
  return nms;
}

/* The library's own mapping of a true centre box (model pixels, as floats)
 * onto the 320x240 frame with letterbox. */
static void
map_truth_box (const gdouble box[4], gfloat out[4])
{
  cnms_params p;

  cnms_params_init (&p);
  p.frame_width = FRAME_W;
  p.frame_height = FRAME_H;
  fail_unless (cnms_map_centre_box (&p, (gfloat) box[0], (gfloat) box[1],
          (gfloat) box[2], (gfloat) box[3], out));
}

/* The ROI whose "detection" box is r (x_min .. y_max as cudanms writes
 * them, the float box over the frame size), NULL when none. */
static GstVideoRegionOfInterestMeta *
roi_with_box (GstBuffer * buf, const gfloat r[4], GstStructure ** det)
{
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
        "detection");
    gdouble v[4];

    fail_unless (s != NULL);
    fail_unless (gst_structure_get_double (s, "x_min", &v[0])
        && gst_structure_get_double (s, "y_min", &v[1])
        && gst_structure_get_double (s, "x_max", &v[2])
        && gst_structure_get_double (s, "y_max", &v[3]));
    if (v[0] == r[0] / (gdouble) FRAME_W && v[1] == r[1] / (gdouble) FRAME_H
        && v[2] == r[2] / (gdouble) FRAME_W
        && v[3] == r[3] / (gdouble) FRAME_H) {
      *det = s;
      return roi;
    }
  }
  return NULL;
}

/* A GstValueArray field of doubles into out (n of them). */
static void
get_doubles (const GstStructure * s, const gchar * field, gdouble * out,
    guint n)
{
  const GValue *arr = gst_structure_get_value (s, field);
  guint i;

  fail_unless (arr != NULL && GST_VALUE_HOLDS_ARRAY (arr), "no %s", field);
  fail_unless_equals_int (gst_value_array_get_size (arr), n);
  for (i = 0; i < n; i++)
    out[i] = g_value_get_double (gst_value_array_get_value (arr, i));
}

/* v as the tensor holds it: a float, or with half the float rounded to
 * float16 (the library's rounding) and back. */
static gfloat
tf (gdouble v, gboolean half)
{
  gfloat f = (gfloat) v;
  guint16 h;

  if (half) {
    cnms_floats_to_halves (&f, 1, &h);
    cnms_halves_to_floats (&h, 1, &f);
  }
  return f;
}

/* seed 3, three people (tensorinject's pose test scene) */
#define POSE_INJECT "layout=yolov8-pose seed=3 num-objects=3 noise=0"

static GstTensorInjectScene *
pose_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 1, 640, 640, CNMS_DTYPE_FLOAT32,
    3, 3, 0, FALSE, FALSE, TRUE, FALSE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* Each person's best anchor is kept: its ROI has the true box mapped as
 * cudanms maps boxes, its "keypoints" structure every true keypoint mapped
 * by the box rule ((v - pad) / gain in float: x / 2, (y - 80) / 2, not
 * clipped) and its visibility as the tensor holds it; float32 and float16
 * (every value of the truth rounded to half first). */
GST_START_TEST (test_pose_keypoints)
{
  guint half;

  for (half = 0; half < 2; half++) {
    GstHarness *h = chain_harness (half ? POSE_INJECT " data-type=float16" :
        POSE_INJECT, "layout=yolov8-pose");
    GstTensorInjectScene *sc = pose_scene ();
    guint64 f;

    for (f = 0; f < 3; f++) {
      GstBuffer *out;
      gint i, k;

      fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
          GST_FLOW_OK);
      out = gst_harness_pull (h);
      fail_unless_equals_int (count_rois (out), 3);
      for (i = 0; i < 3; i++) {
        GstVideoRegionOfInterestMeta *roi;
        GstStructure *det = NULL, *kps;
        gdouble box[4], kp[POSE_K][3], pts[2 * POSE_K], scores[POSE_K];
        gfloat r[4];
        gint class_id;

        fail_unless (gst_tensor_inject_scene_object (sc, i, f, box,
                &class_id));
        fail_unless (gst_tensor_inject_scene_object_keypoints (sc, i, f,
                kp));
        for (k = 0; k < 4; k++)
          box[k] = tf (box[k], half);
        map_truth_box (box, r);
        roi = roi_with_box (out, r, &det);
        fail_unless (roi != NULL, "frame %d: person %d has no ROI",
            (gint) f, i);
        fail_unless_equals_string (g_quark_to_string (roi->roi_type),
            "class-0");
        kps = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
        fail_unless (kps != NULL);
        get_doubles (kps, "points", pts, 2 * POSE_K);
        get_doubles (kps, "scores", scores, POSE_K);
        for (k = 0; k < POSE_K; k++) {
          gfloat x = tf (kp[k][0], half) / 2.0f;
          gfloat y = (tf (kp[k][1], half) - 80.0f) / 2.0f;

          fail_unless (pts[2 * k] == x && pts[2 * k + 1] == y,
              "%s frame %d person %d keypoint %d: %g,%g, want %g,%g",
              half ? "float16" : "float32", (gint) f, i, k, pts[2 * k],
              pts[2 * k + 1], x, y);
          fail_unless (scores[k] == tf (kp[k][2], half));
        }
      }
      gst_buffer_unref (out);
    }
    gst_tensor_inject_scene_free (sc);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* keypoint-dims=2 on the scene's [1, 56, N]: 51 keypoint values are no
 * whole number of pairs, a bad tensor: one warning naming it, every buffer
 * counted, no ROI. */
GST_START_TEST (test_pose_bad_dims)
{
  GstHarness *h = chain_harness (POSE_INJECT,
      "layout=yolov8-pose keypoint-dims=2");
  GstBus *bus = watch_bus (h->element);
  gchar *w;
  gint i;

  for (i = 0; i < 3; i++) {
    GstBuffer *out;

    fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  w = pop_warning (bus);
  fail_unless (w != NULL && strstr (w, "keypoint") != NULL, "%s", w);
  g_free (w);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (nms_of (h), "buffers-with-bad-tensor"),
      3);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The hand segmentation tensor: model 16x16 = the frame, prototypes 4x4
 * (stride 4), M = 2, one class, two anchors:
 *   anchor 0: box x 2.5 .. 13.2, y 1 .. 9 (cx 7.85, w 10.7, cy 5, h 8),
 *     score 0.9, coefficients (1, 0): logits = plane 0, whose columns are
 *     2, 2, -2, -2 (every row);
 *   anchor 1: box x 0 .. 16, y 10 .. 16, score 0.8, coefficients (0, -1):
 *     logits = -plane 1, whose rows are 1, 1, -1, 1 (every column).
 * Frame pixel X samples prototype coordinate v = (X + 0.5) / 4 - 0.5
 * (clamped at 0; past 3 both taps are the last). Anchor 0: between
 * columns 1 and 2 the logit is 2 (1 - w) - 2 w = 2 - 4 w, positive while
 * v < 1.5, i.e. X <= 7; its rectangle is X 3 .. 13 (ceil 2.5 = 3, ceil 13.2
 * = 14), Y 1 .. 8: columns 3..7 set, 8..13 clear, on all 8 rows.
 * Anchor 1: its logits by row are -1, -1, 1, -1; Y = 10 (v 2.125):
 * 0.875 - 0.125 = 0.75 > 0; Y = 11 (v 2.375): 0.25 > 0; Y = 12 (v 2.625):
 * -0.25; Y 13..15 (v >= 2.875): negative; rectangle X 0 .. 15, Y 10 .. 15:
 * rows 10 and 11 set, 12..15 clear. */
#define HAND_SEG_CAPS "video/x-raw,format=GRAY8,width=16,height=16,framerate=30/1"
static const gfloat hand_seg_dets[7 * 2] = {
  7.85f, 8.0f,                  /* cx */
  5.0f, 13.0f,                  /* cy */
  10.7f, 16.0f,                 /* w */
  8.0f, 6.0f,                   /* h */
  0.9f, 0.8f,                   /* score */
  1.0f, 0.0f,                   /* coefficient 0 */
  0.0f, -1.0f,                  /* coefficient 1 */
};

static void
hand_protos (gfloat p[2 * 16])
{
  gint r, c;

  for (r = 0; r < 4; r++) {
    for (c = 0; c < 4; c++) {
      p[r * 4 + c] = c < 2 ? 2.0f : -2.0f;
      p[16 + r * 4 + c] = r == 2 ? -1.0f : 1.0f;
    }
  }
}

static const gint hand_seg_dims[3] = { 1, 7, 2 };
static const gint hand_protos_dims[4] = { 1, 2, 4, 4 };

static GstBuffer *
hand_seg_frame (gboolean with_protos, gsize protos_size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16 * 16, NULL);
  gfloat p[2 * 16];

  gst_buffer_memset (buf, 0, 0, 16 * 16);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  hand_protos (p);
  attach_tensor (buf, SEG_DET_ID, "float32", hand_seg_dims, 3,
      hand_seg_dets, sizeof (hand_seg_dets));
  if (with_protos)
    attach_tensor (buf, SEG_PROTOS_ID, "float32", hand_protos_dims, 4, p,
        protos_size);
  return buf;
}

/* The "mask" structure of roi: its rectangle and its bytes (g_free). */
static guint8 *
roi_mask (GstVideoRegionOfInterestMeta * roi, gint rect[4])
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "mask");
  GstBuffer *data = NULL;
  guint8 *bytes;

  fail_unless (s != NULL);
  fail_unless (gst_structure_get_int (s, "x", &rect[0])
      && gst_structure_get_int (s, "y", &rect[1])
      && gst_structure_get_int (s, "width", &rect[2])
      && gst_structure_get_int (s, "height", &rect[3]));
  fail_unless (gst_structure_get (s, "data", GST_TYPE_BUFFER, &data, NULL));
  fail_unless_equals_uint64 (gst_buffer_get_size (data),
      (guint64) rect[2] * rect[3]);
  bytes = g_malloc0 (MAX (gst_buffer_get_size (data), 1));
  gst_buffer_extract (data, 0, bytes, gst_buffer_get_size (data));
  gst_buffer_unref (data);
  return bytes;
}

GST_START_TEST (test_seg_hand)
{
  GstHarness *h = new_harness_caps ("layout=yolov8-seg model-size=16x16 "
      "device=cpu", HAND_SEG_CAPS);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));
  GstVideoRegionOfInterestMeta *roi;
  gint rect[4], x, y;
  guint8 *m;

  fail_unless_equals_int (count_rois (out), 2);
  /* anchor 0: columns 3..7 of 3..13 set, rows 1..8 */
  roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
  fail_unless (roi != NULL);
  m = roi_mask (roi, rect);
  fail_unless (rect[0] == 3 && rect[1] == 1 && rect[2] == 11 && rect[3] == 8,
      "%d %d %d %d", rect[0], rect[1], rect[2], rect[3]);
  for (y = 0; y < 8; y++)
    for (x = 0; x < 11; x++)
      fail_unless_equals_int (m[y * 11 + x], 3 + x <= 7 ? 1 : 0);
  g_free (m);
  /* anchor 1: rows 10 and 11 of 10..15 set, every column */
  roi = gst_buffer_get_video_region_of_interest_meta_id (out, 1);
  fail_unless (roi != NULL);
  m = roi_mask (roi, rect);
  fail_unless (rect[0] == 0 && rect[1] == 10 && rect[2] == 16
      && rect[3] == 6, "%d %d %d %d", rect[0], rect[1], rect[2], rect[3]);
  for (y = 0; y < 6; y++)
    for (x = 0; x < 16; x++)
      fail_unless_equals_int (m[y * 16 + x], 10 + y <= 11 ? 1 : 0);
  g_free (m);
  gst_buffer_unref (out);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Bad inputs: no prototypes (a warning saying so), then prototypes whose
 * data is one float short (the library's size check): one warning each
 * (two kinds), every buffer counted as a bad tensor, no ROI. */
GST_START_TEST (test_seg_bad_protos)
{
  GstHarness *h = new_harness_caps ("layout=yolov8-seg model-size=16x16 "
      "device=cpu", HAND_SEG_CAPS);
  GstBus *bus = watch_bus (h->element);
  gchar *w;
  gint i;

  for (i = 0; i < 3; i++) {
    GstBuffer *out = push_pull (h, hand_seg_frame (FALSE, 0));

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  w = pop_warning (bus);
  fail_unless (w != NULL && strstr (w, "needs the prototypes") != NULL
      && strstr (w, SEG_PROTOS_ID) != NULL, "%s", w);
  g_free (w);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      3);

  for (i = 0; i < 2; i++) {
    GstBuffer *out = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4 - 4));

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  w = pop_warning (bus);
  fail_unless (w != NULL && strstr (w, "prototypes") != NULL
      && strstr (w, "bytes") != NULL, "%s", w);
  g_free (w);
  assert_no_warning (bus);
  fail_unless_equals_uint64 (get_stat (h->element, "buffers-with-bad-tensor"),
      5);

  /* and a good one after them decodes */
  {
    GstBuffer *out = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));

    fail_unless_equals_int (count_rois (out), 2);
    gst_buffer_unref (out);
  }
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The address of the bytes of ROI id's mask. */
static gconstpointer
mask_address (GstBuffer * out, gint id)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_get_video_region_of_interest_meta_id (out, id);
  GstStructure *s;
  GstBuffer *data = NULL;
  GstMapInfo map;
  gconstpointer p;

  fail_unless (roi != NULL);
  s = gst_video_region_of_interest_meta_get_param (roi, "mask");
  fail_unless (s != NULL);
  fail_unless (gst_structure_get (s, "data", GST_TYPE_BUFFER, &data, NULL));
  fail_unless (gst_buffer_map (data, &map, GST_MAP_READ));
  p = map.data;
  gst_buffer_unmap (data, &map);
  gst_buffer_unref (data);
  return p;
}

/* The masks' memory is pooled: a frame's masks reuse the block of a frame
 * whose buffers are gone (the same address), while a frame still held
 * keeps its own; masks 0 and 1 of a frame share one block (mask 1 right
 * after mask 0's 11 x 8 bytes). ROIs alone (attach-meta=roi): with the
 * segmentation mtds a frame also takes a block for their bytes. */
GST_START_TEST (test_seg_pool)
{
  GstHarness *h = new_harness_caps ("layout=yolov8-seg model-size=16x16 "
      "device=cpu attach-meta=roi", HAND_SEG_CAPS);
  GstBuffer *a, *b;
  gconstpointer pa, pb;

  a = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));
  pa = mask_address (a, 0);
  fail_unless ((const guint8 *) mask_address (a, 1) == (const guint8 *) pa
      + 11 * 8);
  /* a held: b takes another block */
  b = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));
  pb = mask_address (b, 0);
  fail_unless (pb != pa);
  gst_buffer_unref (a);
  gst_buffer_unref (b);
  /* both gone: the next frames reuse their blocks */
  a = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));
  fail_unless (mask_address (a, 0) == pa || mask_address (a, 0) == pb);
  gst_buffer_unref (a);
  a = push_pull (h, hand_seg_frame (TRUE, 2 * 16 * 4));
  fail_unless (mask_address (a, 0) == pa || mask_address (a, 0) == pb);
  gst_buffer_unref (a);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* seed 5, four shapes (tensorinject's segmentation test scene) */
#define SEG_INJECT "layout=yolov8-seg seed=5 num-objects=4 noise=0"

static GstTensorInjectScene *
seg_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 640, CNMS_DTYPE_FLOAT32,
    5, 4, 0, FALSE, FALSE, FALSE, TRUE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* The documented mask rule, written here for one axis: frame pixel X to
 * prototype taps i0, i1 and weights (u = (X + 0.5) gain + pad,
 * v = u * (P / model) - 0.5, clamped at 0; past P - 1 both taps are the
 * last), each operation one float rounding. */
static void
taps (gint x, gfloat gain, gfloat pad, gint protos, gint model, gint * i0,
    gint * i1, gfloat * w0, gfloat * w1)
{
  gfloat scale = (gfloat) protos / (gfloat) model;
  gfloat u = ((gfloat) x + 0.5f) * gain + pad;
  gfloat v = u * scale - 0.5f;
  gint i;

  if (!(v > 0.0f))
    v = 0.0f;
  i = v >= (gfloat) (protos - 1) ? protos - 1 : (gint) v;
  *i0 = i;
  *i1 = i < protos - 1 ? i + 1 : i;
  *w1 = v - (gfloat) i;
  *w0 = 1.0f - *w1;
}

/* Each shape's kept best anchor: its ROI's box is the truth mapped, its
 * mask rectangle the box's pixels, and every mask byte the rule applied to
 * the scene's own prototype logits (one-hot coefficients: the object's
 * plane); the mask covers the true shape (IoU with the shape's pixels
 * above 0.99); float32 and float16 (the truth rounded to half). */
GST_START_TEST (test_seg_scene_masks)
{
  guint half;

  for (half = 0; half < 2; half++) {
    GstHarness *h = chain_harness (half ? SEG_INJECT " data-type=float16" :
        SEG_INJECT, "layout=yolov8-seg");
    GstTensorInjectScene *sc = seg_scene ();
    guint64 f;

    for (f = 0; f < 2; f++) {
      GstBuffer *out;
      gint i;

      fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
          GST_FLOW_OK);
      out = gst_harness_pull (h);
      fail_unless_equals_int (count_rois (out), 4);
      for (i = 0; i < 4; i++) {
        GstVideoRegionOfInterestMeta *roi;
        GstStructure *det = NULL;
        gdouble box[4];
        gfloat r[4];
        gint class_id, rect[4], x, y, inter = 0, in_mask = 0, in_shape = 0;
        guint8 *m;

        fail_unless (gst_tensor_inject_scene_object (sc, i, f, box,
                &class_id));
        for (x = 0; x < 4; x++)
          box[x] = tf (box[x], half);
        map_truth_box (box, r);
        roi = roi_with_box (out, r, &det);
        fail_unless (roi != NULL, "frame %d: object %d has no ROI", (gint) f,
            i);
        m = roi_mask (roi, rect);
        fail_unless_equals_int (rect[0], (gint) ceilf (r[0]));
        fail_unless_equals_int (rect[1], (gint) ceilf (r[1]));
        fail_unless_equals_int (rect[2], (gint) ceilf (r[2]) - rect[0]);
        fail_unless_equals_int (rect[3], (gint) ceilf (r[3]) - rect[1]);
        for (y = 0; y < rect[3]; y++) {
          gint yi0, yi1;
          gfloat wy0, wy1;

          taps (rect[1] + y, 2.0f, 80.0f, 160, 640, &yi0, &yi1, &wy0, &wy1);
          for (x = 0; x < rect[2]; x++) {
            gint xi0, xi1;
            gfloat wx0, wx1, l00, l01, l10, l11, l;
            gboolean want, shape;

            taps (rect[0] + x, 2.0f, 0.0f, 160, 640, &xi0, &xi1, &wx0, &wx1);
            /* the logits of prototype pixels, from the scene's rule */
            l00 = tf (gst_tensor_inject_scene_object_logit (sc, i, f,
                    (xi0 + 0.5) * 4, (yi0 + 0.5) * 4), half);
            l01 = tf (gst_tensor_inject_scene_object_logit (sc, i, f,
                    (xi1 + 0.5) * 4, (yi0 + 0.5) * 4), half);
            l10 = tf (gst_tensor_inject_scene_object_logit (sc, i, f,
                    (xi0 + 0.5) * 4, (yi1 + 0.5) * 4), half);
            l11 = tf (gst_tensor_inject_scene_object_logit (sc, i, f,
                    (xi1 + 0.5) * 4, (yi1 + 0.5) * 4), half);
            l = wy0 * (wx0 * l00 + wx1 * l01) + wy1 * (wx0 * l10 + wx1 * l11);
            want = l > 0.0f;
            fail_unless_equals_int (m[y * rect[2] + x], want ? 1 : 0);
            /* the true shape at the pixel's centre (model pixels) */
            shape = gst_tensor_inject_scene_object_distance (sc, i, f,
                (rect[0] + x + 0.5) * 2, (rect[1] + y + 0.5) * 2 + 80) > 0;
            inter += want && shape;
            in_mask += want;
            in_shape += shape;
          }
        }
        fail_unless (in_shape > 50);
        fail_unless ((gdouble) inter / (in_mask + in_shape - inter) > 0.99,
            "object %d: IoU %d / %d", i, inter, in_mask + in_shape - inter);
        g_free (m);
      }
      gst_buffer_unref (out);
    }
    gst_tensor_inject_scene_free (sc);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Everything a frame's ROIs carry, as one string: each ROI's rectangle,
 * type, "detection" structure, keypoints and mask bytes (hex). */
static gchar *
frame_payload (GstBuffer * out)
{
  GString *str = g_string_new (NULL);
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (out, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GList *l;

    g_string_append_printf (str, "%d:%u,%u,%u,%u,%s", roi->id, roi->x,
        roi->y, roi->w, roi->h, g_quark_to_string (roi->roi_type));
    for (l = roi->params; l != NULL; l = l->next) {
      gchar *text = gst_structure_to_string (l->data);

      g_string_append_printf (str, "|%s", text);
      g_free (text);
    }
    g_string_append_c (str, '\n');
  }
  return g_string_free (str, FALSE);
}

/* With a CUDA device (without one the case says so and ends): the pose and
 * segmentation scenes on the CUDA backend, from host tensors
 * (device=cuda) and from device tensors (tensorinject memory=cuda), give
 * what the CPU backend gives, every keypoint and mask byte (the ROI's
 * structures serialised, the masks' buffers as hex). */
GST_START_TEST (test_cuda_parity)
{
  const gchar *scenes[2][2] = {
    {POSE_INJECT, "layout=yolov8-pose"},
    {SEG_INJECT " num-classes=80", "layout=yolov8-seg"},
  };
  guint sc;

  /* asked here, in the test's own process: CUDA started before check
   * forks the test would not work in the child */
  if (cnms_cuda_device_count () < 1) {
    g_print ("test_cuda_parity: no CUDA device, not run\n");
    return;
  }
  for (sc = 0; sc < 2; sc++) {
    GstHarness *h[3];
    gchar *desc[3];
    guint k, f;

    /* one name: the "detection" structures name their producer */
    desc[0] = g_strdup_printf ("tensorinject %s ! cudanms name=nms "
        "device=cpu %s", scenes[sc][0], scenes[sc][1]);
    desc[1] = g_strdup_printf ("tensorinject %s ! cudanms name=nms "
        "device=cuda %s", scenes[sc][0], scenes[sc][1]);
    desc[2] = g_strdup_printf ("tensorinject %s memory=cuda ! cudanms "
        "name=nms device=cuda %s", scenes[sc][0], scenes[sc][1]);
    for (k = 0; k < 3; k++) {
      h[k] = gst_harness_new_parse (desc[k]);
      gst_harness_set_src_caps_str (h[k], FRAME_CAPS);
    }
    for (f = 0; f < 3; f++) {
      gchar *want = NULL;

      for (k = 0; k < 3; k++) {
        GstBuffer *out;
        gchar *got;

        fail_unless_equals_int (gst_harness_push (h[k], make_frame (0)),
            GST_FLOW_OK);
        out = gst_harness_pull (h[k]);
        fail_unless (out != NULL);
        fail_unless (count_rois (out) >= 3);
        got = frame_payload (out);
        gst_buffer_unref (out);
        if (k == 0) {
          want = got;
          continue;
        }
        fail_unless_equals_string (got, want);
        g_free (got);
      }
      g_free (want);
    }
    for (k = 0; k < 3; k++) {
      gst_harness_teardown (h[k]);
      g_free (desc[k]);
    }
  }
}

GST_END_TEST;

/* 17 full-frame masks of an 8192x8192 frame take 17 x 64 MiB, past the
 * 1 GiB of masks one call may take: the element stops with the library's
 * own reason (the masks' bytes), not with a guess about max-candidates. */
#define BIG_SEG_CAPS \
  "video/x-raw,format=GRAY8,width=8192,height=8192,framerate=30/1"
GST_START_TEST (test_seg_masks_too_large)
{
  enum { N = 17, C = 17, M = 2, ROWS = 4 + C + M };
  GstHarness *h = new_harness_caps ("layout=yolov8-seg model-size=16x16 "
      "device=cpu letterbox=false", BIG_SEG_CAPS);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 8192 * 8192, NULL);
  const gint dims[3] = { 1, ROWS, N };
  gfloat t[ROWS * N] = { 0 }, p[2 * 16];
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL;
  gint a;

  /* every anchor the whole model, a class of its own: all kept */
  for (a = 0; a < N; a++) {
    t[0 * N + a] = 8.0f;
    t[1 * N + a] = 8.0f;
    t[2 * N + a] = 16.0f;
    t[3 * N + a] = 16.0f;
    t[(4 + a) * N + a] = 0.9f;
    t[(4 + C) * N + a] = 1.0f;
  }
  hand_protos (p);
  GST_BUFFER_PTS (buf) = 0;
  attach_tensor (buf, SEG_DET_ID, "float32", dims, 3, t, sizeof t);
  attach_tensor (buf, SEG_PROTOS_ID, "float32", hand_protos_dims, 4, p,
      sizeof p);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless (g_str_has_prefix (err->message, "Post-processing failed: "
          "out of memory: the masks of 17 records take more than 1073741824 "
          "bytes. "), "%s", err->message);
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (msg);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
heads_suite (void)
{
  Suite *s = suite_create ("heads");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pose_keypoints);
  tcase_add_test (tc, test_pose_bad_dims);
  tcase_add_test (tc, test_seg_hand);
  tcase_add_test (tc, test_seg_bad_protos);
  tcase_add_test (tc, test_seg_masks_too_large);
  tcase_add_test (tc, test_seg_pool);
  tcase_add_test (tc, test_seg_scene_masks);
  tcase_add_test (tc, test_cuda_parity);
  return s;
}

GST_CHECK_MAIN (heads);
