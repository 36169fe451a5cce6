/* Paints the synthetic scene's objects into the video frame.
 *
 * Each object is a filled rectangle over its true box (the centre and size
 * the scene moves, without the anchors' jitter), mapped model -> frame by
 * the library's own cnms_map_centre_box with letterbox, as cudanms maps
 * the detections by default. A sample is painted when its centre lies in
 * [x1, x2) x [y1, y2); a chroma sample of I420 covers 2x2 pixels, its
 * centre is theirs. The colours are fixed per class (11 hues, the hue
 * pipelines/python/overlay.py gives the class's boxes, darker); on YUV
 * they are converted with the frame's colour matrix and range.
 *
 * An oriented scene's object is a rotated rectangle: its true oriented box
 * (cx cy w h angle) mapped model -> frame with letterbox as cudanms maps
 * oriented boxes (the centre as a box coordinate, w and h divided by the
 * gain, the angle kept), in double: gain = min (mw/fw, mh/fh),
 * pad = round ((m - f gain) / 2 - 0.1). A sample whose centre p has
 * du = (p - c) . (cos a, sin a) in [-w/2, w/2) and
 * dv = (p - c) . (-sin a, cos a) in [-h/2, h/2) is painted (at angle 0 the
 * rule of the boxes); the fill is the rectangle 2 pixels smaller on each
 * side.
 *
 * A lane scene's lane is a marking in lane_rgb (light yellow): the lane's
 * true points (x[r], y_r = (S - 1 - r) / (S - 1) mh) for rows r = 0 ..
 * end, mapped model -> frame with letterbox in double as above
 * (f = (m - pad) / gain), joined by segments; a sample whose centre p has
 * a squared distance below (GST_TENSOR_INJECT_DRAW_LANE_WIDTH / 2)^2 to
 * one of the segments is painted (the distance to segment a b: with
 * u = clamp ((p - a) . (b - a) / |b - a|^2, 0, 1), |p - a - u (b - a)|).
 *
 * A pose scene's person is its skeleton: each of COCO's 19 limbs
 * (pose_limbs) whose two keypoints are visible (visibility >= 0.5), a
 * segment GST_TENSOR_INJECT_DRAW_LIMB_WIDTH pixels wide in its palette
 * fill colour (person i: palette i mod 11), then each visible keypoint, a
 * disc of radius GST_TENSOR_INJECT_DRAW_JOINT_RADIUS in the border colour
 * (a sample whose centre lies nearer than the radius); the keypoints
 * mapped model -> frame with letterbox in double as above.
 *
 * A segmentation scene's object is its true shape: a sample whose centre
 * p, mapped frame -> model (m = f gain + pad), lies inside it (its signed
 * distance d, gst_tensor_inject_scene_object_distance, > 0) is painted,
 * in the class's border colour where d / gain <= GST_TENSOR_INJECT_DRAW_BORDER
 * (frame pixels from the outline), else its fill colour.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "cudanms_static.h"
#include "gsttensorinjectdraw.h"

/* Fill hsv (k/11, 0.7, 0.6) and border hsv (k/11, 0.8, 0.3), class k mod 11. */
static const guint8 palette[11][2][3] = {
  {{153, 46, 46}, {76, 15, 15}},
  {{153, 104, 46}, {76, 49, 15}},
  {{143, 153, 46}, {71, 76, 15}},
  {{85, 153, 46}, {38, 76, 15}},
  {{46, 153, 65}, {15, 76, 26}},
  {{46, 153, 124}, {15, 76, 60}},
  {{46, 124, 153}, {15, 60, 76}},
  {{46, 65, 153}, {15, 26, 76}},
  {{85, 46, 153}, {38, 15, 76}},
  {{143, 46, 153}, {71, 15, 76}},
  {{153, 46, 104}, {76, 15, 49}},
};

/* A lane marking. */
static const guint8 lane_rgb[3] = { 240, 220, 120 };

gboolean
gst_tensor_inject_draw_supported (GstVideoFormat format)
{
  switch (format) {
    case GST_VIDEO_FORMAT_RGB:
    case GST_VIDEO_FORMAT_BGR:
    case GST_VIDEO_FORMAT_RGBx:
    case GST_VIDEO_FORMAT_BGRx:
    case GST_VIDEO_FORMAT_xRGB:
    case GST_VIDEO_FORMAT_xBGR:
    case GST_VIDEO_FORMAT_RGBA:
    case GST_VIDEO_FORMAT_BGRA:
    case GST_VIDEO_FORMAT_ARGB:
    case GST_VIDEO_FORMAT_ABGR:
    case GST_VIDEO_FORMAT_I420:
      return TRUE;
    default:
      return FALSE;
  }
}

/* The component values (R G B A or Y U V) of an RGB colour on info. */
static void
component_values (const GstVideoInfo * info, const guint8 rgb[3],
    guint8 out[GST_VIDEO_MAX_COMPONENTS])
{
  gint offset[GST_VIDEO_MAX_COMPONENTS], scale[GST_VIDEO_MAX_COMPONENTS];
  gdouble kr, kb, r, g, b, y, pb, pr;

  if (GST_VIDEO_INFO_IS_RGB (info)) {
    out[0] = rgb[0];
    out[1] = rgb[1];
    out[2] = rgb[2];
    out[3] = 255;
    return;
  }
  if (!gst_video_color_matrix_get_Kr_Kb (info->colorimetry.matrix, &kr, &kb)) {
    kr = 0.299;
    kb = 0.114;
  }
  gst_video_color_range_offsets (info->colorimetry.range, info->finfo,
      offset, scale);
  r = rgb[0] / 255.0;
  g = rgb[1] / 255.0;
  b = rgb[2] / 255.0;
  y = kr * r + (1.0 - kr - kb) * g + kb * b;
  pb = (b - y) / (2.0 * (1.0 - kb));
  pr = (r - y) / (2.0 * (1.0 - kr));
  out[0] = (guint8) CLAMP (lround (offset[0] + scale[0] * y), 0, 255);
  out[1] = (guint8) CLAMP (lround (offset[1] + scale[1] * pb), 0, 255);
  out[2] = (guint8) CLAMP (lround (offset[2] + scale[2] * pr), 0, 255);
  out[3] = 255;
}

/* The samples [*first, *end) of a row (or column) of n, each sub frame
 * pixels wide, whose centres lie in [lo, hi). */
static void
span (gdouble lo, gdouble hi, gint sub, gint n, gint * first, gint * end)
{
  *first = (gint) CLAMP (ceil (lo / sub - 0.5), 0, n);
  *end = (gint) CLAMP (ceil (hi / sub - 0.5), *first, n);
}

/* Sets every component of the samples in r = x1 y1 x2 y2 (frame pixels). */
static void
fill_rect (GstVideoFrame * f, const gdouble r[4],
    const guint8 value[GST_VIDEO_MAX_COMPONENTS])
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  guint k;

  for (k = 0; k < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); k++) {
    guint8 *data = GST_VIDEO_FRAME_COMP_DATA (f, k);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (f, k);
    gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (f, k);
    gint x0, x1, y0, y1, x, y;

    span (r[0], r[2], 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, k),
        GST_VIDEO_FRAME_COMP_WIDTH (f, k), &x0, &x1);
    span (r[1], r[3], 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, k),
        GST_VIDEO_FRAME_COMP_HEIGHT (f, k), &y0, &y1);
    for (y = y0; y < y1; y++) {
      guint8 *row = data + (gsize) y * stride;

      for (x = x0; x < x1; x++)
        row[(gsize) x * pstride] = value[k];
    }
  }
}

/* An oriented box in frame pixels: centre, half sides, cos and sin. */
typedef struct
{
  gdouble cx, cy, hw, hh, cs, sn;
} OrientedRect;

static gboolean
inside (const OrientedRect * o, gdouble x, gdouble y)
{
  gdouble dx = x - o->cx, dy = y - o->cy;
  gdouble du = dx * o->cs + dy * o->sn, dv = -dx * o->sn + dy * o->cs;

  return du >= -o->hw && du < o->hw && dv >= -o->hh && dv < o->hh;
}

/* Sets every component of the samples inside o (frame pixels). */
static void
fill_oriented (GstVideoFrame * f, const OrientedRect * o,
    const guint8 value[GST_VIDEO_MAX_COMPONENTS])
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  gdouble ex = fabs (o->hw * o->cs) + fabs (o->hh * o->sn);
  gdouble ey = fabs (o->hw * o->sn) + fabs (o->hh * o->cs);
  guint k;

  if (o->hw <= 0 || o->hh <= 0)
    return;
  for (k = 0; k < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); k++) {
    guint8 *data = GST_VIDEO_FRAME_COMP_DATA (f, k);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (f, k);
    gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (f, k);
    gint sx = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, k);
    gint sy = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, k);
    gint x0, x1, y0, y1, x, y;

    /* the hull's samples, one more each side; inside () decides */
    span (o->cx - ex - sx, o->cx + ex + sx, sx,
        GST_VIDEO_FRAME_COMP_WIDTH (f, k), &x0, &x1);
    span (o->cy - ey - sy, o->cy + ey + sy, sy,
        GST_VIDEO_FRAME_COMP_HEIGHT (f, k), &y0, &y1);
    for (y = y0; y < y1; y++) {
      guint8 *row = data + (gsize) y * stride;

      for (x = x0; x < x1; x++) {
        if (inside (o, (x + 0.5) * sx, (y + 0.5) * sy))
          row[(gsize) x * pstride] = value[k];
      }
    }
  }
}

/* The symmetric letterbox of the scene's model over vframe: model =
 * frame gain + pad. */
static void
letterbox_of (const GstTensorInjectScene * scene, GstVideoFrame * vframe,
    gdouble * gain, gdouble * pad_x, gdouble * pad_y)
{
  gdouble fw = GST_VIDEO_FRAME_WIDTH (vframe);
  gdouble fh = GST_VIDEO_FRAME_HEIGHT (vframe);
  gint mw, mh;

  gst_tensor_inject_scene_model_size (scene, &mw, &mh);
  *gain = MIN (mw / fw, mh / fh);
  *pad_x = round ((mw - fw * *gain) / 2 - 0.1);
  *pad_y = round ((mh - fh * *gain) / 2 - 0.1);
}

static void
draw_oriented (const GstTensorInjectScene * scene, guint64 frame,
    GstVideoFrame * vframe)
{
  gint i, n = gst_tensor_inject_scene_n_objects (scene);
  gdouble gain, pad_x, pad_y;

  letterbox_of (scene, vframe, &gain, &pad_x, &pad_y);
  for (i = 0; i < n; i++) {
    guint8 fill[GST_VIDEO_MAX_COMPONENTS], border[GST_VIDEO_MAX_COMPONENTS];
    gdouble box[4], a;
    OrientedRect o;
    gint class_id;

    if (!gst_tensor_inject_scene_object (scene, i, frame, box, &class_id))
      continue;
    a = gst_tensor_inject_scene_object_angle (scene, i, frame);
    o.cx = (box[0] - pad_x) / gain;
    o.cy = (box[1] - pad_y) / gain;
    o.hw = box[2] / gain / 2;
    o.hh = box[3] / gain / 2;
    o.cs = cos (a);
    o.sn = sin (a);
    component_values (&vframe->info, palette[class_id % 11][0], fill);
    component_values (&vframe->info, palette[class_id % 11][1], border);
    fill_oriented (vframe, &o, border);
    o.hw -= GST_TENSOR_INJECT_DRAW_BORDER;
    o.hh -= GST_TENSOR_INJECT_DRAW_BORDER;
    fill_oriented (vframe, &o, fill);
  }
}

/* Squared distance of p to the segment a b. */
static gdouble
segment_d2 (gdouble px, gdouble py, gdouble ax, gdouble ay, gdouble bx,
    gdouble by)
{
  gdouble dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, u = 0, ex, ey;

  if (l2 > 0) {
    u = ((px - ax) * dx + (py - ay) * dy) / l2;
    u = CLAMP (u, 0.0, 1.0);
  }
  ex = px - ax - u * dx;
  ey = py - ay - u * dy;
  return ex * ex + ey * ey;
}

/* Paints the samples nearer than hw to the segment a b. */
static void
fill_segment (GstVideoFrame * f, gdouble ax, gdouble ay, gdouble bx,
    gdouble by, gdouble hw, const guint8 value[GST_VIDEO_MAX_COMPONENTS])
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  guint k;

  for (k = 0; k < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); k++) {
    guint8 *data = GST_VIDEO_FRAME_COMP_DATA (f, k);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (f, k);
    gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (f, k);
    gint sx = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, k);
    gint sy = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, k);
    gint x0, x1, y0, y1, x, y;

    /* the segment's box, one sample more each side; the distance decides */
    span (MIN (ax, bx) - hw - sx, MAX (ax, bx) + hw + sx, sx,
        GST_VIDEO_FRAME_COMP_WIDTH (f, k), &x0, &x1);
    span (MIN (ay, by) - hw - sy, MAX (ay, by) + hw + sy, sy,
        GST_VIDEO_FRAME_COMP_HEIGHT (f, k), &y0, &y1);
    for (y = y0; y < y1; y++) {
      guint8 *row = data + (gsize) y * stride;

      for (x = x0; x < x1; x++) {
        if (segment_d2 ((x + 0.5) * sx, (y + 0.5) * sy, ax, ay, bx, by)
            < hw * hw)
          row[(gsize) x * pstride] = value[k];
      }
    }
  }
}

static void
draw_lanes (const GstTensorInjectScene * scene, guint64 frame,
    GstVideoFrame * vframe)
{
  gint i, r, end, mw, mh, n = gst_tensor_inject_scene_n_lanes (scene);
  const gint s = GST_TENSOR_INJECT_LANE_ROWS;
  gdouble gain, pad_x, pad_y;
  guint8 value[GST_VIDEO_MAX_COMPONENTS];

  letterbox_of (scene, vframe, &gain, &pad_x, &pad_y);
  gst_tensor_inject_scene_model_size (scene, &mw, &mh);
  component_values (&vframe->info, lane_rgb, value);
  for (i = 0; i < n; i++) {
    gdouble x[GST_TENSOR_INJECT_LANE_ROWS], px[GST_TENSOR_INJECT_LANE_ROWS],
        py[GST_TENSOR_INJECT_LANE_ROWS];

    if (!gst_tensor_inject_scene_lane (scene, i, frame, x, &end, NULL, NULL))
      continue;
    for (r = 0; r <= end; r++) {
      px[r] = (x[r] - pad_x) / gain;
      py[r] = ((gdouble) (s - 1 - r) / (s - 1) * mh - pad_y) / gain;
    }
    for (r = 0; r < end; r++)
      fill_segment (vframe, px[r], py[r], px[r + 1], py[r + 1],
          GST_TENSOR_INJECT_DRAW_LANE_WIDTH / 2.0, value);
  }
}

/* COCO's skeleton: keypoint pairs (ultralytics' order, 0-based). */
static const gint pose_limbs[19][2] = {
  {15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12},
  {5, 6}, {5, 7}, {6, 8}, {7, 9}, {8, 10}, {1, 2}, {0, 1}, {0, 2},
  {1, 3}, {2, 4}, {3, 5}, {4, 6},
};

static void
draw_pose (const GstTensorInjectScene * scene, guint64 frame,
    GstVideoFrame * vframe)
{
  gint i, k, n = gst_tensor_inject_scene_n_objects (scene);
  gdouble gain, pad_x, pad_y;

  letterbox_of (scene, vframe, &gain, &pad_x, &pad_y);
  for (i = 0; i < n; i++) {
    guint8 limb[GST_VIDEO_MAX_COMPONENTS], joint[GST_VIDEO_MAX_COMPONENTS];
    gdouble kp[GST_TENSOR_INJECT_POSE_KEYPOINTS][3];
    gdouble fx[GST_TENSOR_INJECT_POSE_KEYPOINTS],
        fy[GST_TENSOR_INJECT_POSE_KEYPOINTS];

    if (!gst_tensor_inject_scene_object_keypoints (scene, i, frame, kp))
      continue;
    for (k = 0; k < GST_TENSOR_INJECT_POSE_KEYPOINTS; k++) {
      fx[k] = (kp[k][0] - pad_x) / gain;
      fy[k] = (kp[k][1] - pad_y) / gain;
    }
    component_values (&vframe->info, palette[i % 11][0], limb);
    component_values (&vframe->info, palette[i % 11][1], joint);
    for (k = 0; k < 19; k++) {
      gint a = pose_limbs[k][0], b = pose_limbs[k][1];

      if (kp[a][2] >= 0.5 && kp[b][2] >= 0.5)
        fill_segment (vframe, fx[a], fy[a], fx[b], fy[b],
            GST_TENSOR_INJECT_DRAW_LIMB_WIDTH / 2.0, limb);
    }
    for (k = 0; k < GST_TENSOR_INJECT_POSE_KEYPOINTS; k++) {
      if (kp[k][2] >= 0.5)
        fill_segment (vframe, fx[k], fy[k], fx[k], fy[k],
            GST_TENSOR_INJECT_DRAW_JOINT_RADIUS, joint);
    }
  }
}

/* Paints object i's true shape (see the file's comment). */
static void
fill_shape (GstVideoFrame * f, const GstTensorInjectScene * scene, gint i,
    guint64 frame, const gdouble box[4], gdouble gain, gdouble pad_x,
    gdouble pad_y, const guint8 fill[GST_VIDEO_MAX_COMPONENTS],
    const guint8 border[GST_VIDEO_MAX_COMPONENTS])
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  guint k;

  for (k = 0; k < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); k++) {
    guint8 *data = GST_VIDEO_FRAME_COMP_DATA (f, k);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (f, k);
    gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (f, k);
    gint sx = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, k);
    gint sy = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, k);
    gint x0, x1, y0, y1, x, y;

    /* the box's samples, one more each side; the distance decides */
    span ((box[0] - box[2] / 2 - pad_x) / gain - sx,
        (box[0] + box[2] / 2 - pad_x) / gain + sx, sx,
        GST_VIDEO_FRAME_COMP_WIDTH (f, k), &x0, &x1);
    span ((box[1] - box[3] / 2 - pad_y) / gain - sy,
        (box[1] + box[3] / 2 - pad_y) / gain + sy, sy,
        GST_VIDEO_FRAME_COMP_HEIGHT (f, k), &y0, &y1);
    for (y = y0; y < y1; y++) {
      guint8 *row = data + (gsize) y * stride;

      for (x = x0; x < x1; x++) {
        gdouble d = gst_tensor_inject_scene_object_distance (scene, i, frame,
            (x + 0.5) * sx * gain + pad_x, (y + 0.5) * sy * gain + pad_y);

        if (d > 0)
          row[(gsize) x * pstride] = d / gain <= GST_TENSOR_INJECT_DRAW_BORDER ?
              border[k] : fill[k];
      }
    }
  }
}

static void
draw_shapes (const GstTensorInjectScene * scene, guint64 frame,
    GstVideoFrame * vframe)
{
  gint i, n = gst_tensor_inject_scene_n_objects (scene);
  gdouble gain, pad_x, pad_y;

  letterbox_of (scene, vframe, &gain, &pad_x, &pad_y);
  for (i = 0; i < n; i++) {
    guint8 fill[GST_VIDEO_MAX_COMPONENTS], border[GST_VIDEO_MAX_COMPONENTS];
    gdouble box[4];
    gint class_id;

    if (!gst_tensor_inject_scene_object (scene, i, frame, box, &class_id))
      continue;
    component_values (&vframe->info, palette[class_id % 11][0], fill);
    component_values (&vframe->info, palette[class_id % 11][1], border);
    fill_shape (vframe, scene, i, frame, box, gain, pad_x, pad_y, fill,
        border);
  }
}

static void fill_box (GstVideoFrame * vframe, const gdouble box[4],
    gint class_id);

void
gst_tensor_inject_draw_objects (const GstTensorInjectScene * scene,
    guint64 frame, GstVideoFrame * vframe)
{
  cnms_params p;
  gint i, n = gst_tensor_inject_scene_n_objects (scene);

  if (gst_tensor_inject_scene_pose (scene)) {
    draw_pose (scene, frame, vframe);
    return;
  }
  if (gst_tensor_inject_scene_seg (scene)) {
    draw_shapes (scene, frame, vframe);
    return;
  }
  if (gst_tensor_inject_scene_lanes (scene)) {
    draw_lanes (scene, frame, vframe);
    return;
  }
  if (gst_tensor_inject_scene_oriented (scene)) {
    draw_oriented (scene, frame, vframe);
    return;
  }
  cnms_params_init (&p);
  gst_tensor_inject_scene_model_size (scene, &p.model_width,
      &p.model_height);
  p.frame_width = GST_VIDEO_FRAME_WIDTH (vframe);
  p.frame_height = GST_VIDEO_FRAME_HEIGHT (vframe);
  p.letterbox = 1;

  for (i = 0; i < n; i++) {
    gdouble box[4], outer[4];
    gfloat mapped[4];
    gint class_id, k;

    if (!gst_tensor_inject_scene_object (scene, i, frame, box, &class_id)
        || !cnms_map_centre_box (&p, (gfloat) box[0], (gfloat) box[1],
            (gfloat) box[2], (gfloat) box[3], mapped))
      continue;
    for (k = 0; k < 4; k++)
      outer[k] = mapped[k];
    fill_box (vframe, outer, class_id);
  }
}

/* A box (frame pixels) of class class_id: its border, then its fill. */
static void
fill_box (GstVideoFrame * vframe, const gdouble box[4], gint class_id)
{
  guint8 fill[GST_VIDEO_MAX_COMPONENTS], border[GST_VIDEO_MAX_COMPONENTS];
  gdouble inner[4];
  gint k;

  component_values (&vframe->info, palette[class_id % 11][0], fill);
  component_values (&vframe->info, palette[class_id % 11][1], border);
  for (k = 0; k < 4; k++)
    inner[k] = box[k] + (k < 2 ? 1 : -1) * GST_TENSOR_INJECT_DRAW_BORDER;
  fill_rect (vframe, box, border);
  if (inner[2] > inner[0] && inner[3] > inner[1])
    fill_rect (vframe, inner, fill);
}

void
gst_tensor_inject_draw_tiles (const GstTensorInjectTiles * tiles,
    GstVideoFrame * vframe)
{
  gint i, n = gst_tensor_inject_tiles_n_objects (tiles);

  for (i = 0; i < n; i++) {
    gdouble box[4];
    gint b[4], class_id, k;
    gfloat score;

    gst_tensor_inject_tiles_object (tiles, i, b, &class_id, &score);
    for (k = 0; k < 4; k++)
      box[k] = b[k];
    fill_box (vframe, box, class_id);
  }
}
