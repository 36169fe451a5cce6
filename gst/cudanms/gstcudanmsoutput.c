/* cudanms: the output contract (see gstcudanmsoutput.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <gst/video/video.h>

#include "gstcudanmsoutput.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

/* The label and frame-pixel box of kept box d: x = floor(x1),
 * y = floor(y1), w = ceil(x2) - x, h = ceil(y2) - y, clipped to the frame. */
typedef struct
{
  GQuark quark;
  const gchar *label;
  gint x, y, w, h;
} GstCudanmsBox;

/* r = x1 y1 x2 y2 in frame pixels: an axis-aligned record's box, or an
 * oriented record's clipped hull (cnms_obb_hull). */
static void
box_of_rect (GstCudanmsBox * box, GstCudanmsLabels * labels, gint class_id,
    const gfloat r[4], gint frame_width, gint frame_height)
{
  gint x2, y2;

  gst_cudanms_labels_lookup (labels, class_id, &box->label, &box->quark);
  /* Clamped while still double: converting a value outside gint (a frame
   * near 2^31 pixels wide) to gint is undefined. */
  box->x = (gint) CLAMP (floor (r[0]), 0.0, (gdouble) frame_width);
  box->y = (gint) CLAMP (floor (r[1]), 0.0, (gdouble) frame_height);
  x2 = (gint) CLAMP (ceil (r[2]), (gdouble) box->x, (gdouble) frame_width);
  y2 = (gint) CLAMP (ceil (r[3]), (gdouble) box->y, (gdouble) frame_height);
  box->w = x2 - box->x;
  box->h = y2 - box->y;
}

/* The rectangle of record d: its box, or (oriented) its clipped hull. */
static void
rect_of (const cnms_det * d, gboolean oriented, gint frame_width,
    gint frame_height, gfloat r[4])
{
  if (oriented) {
    cnms_obb_hull (d, frame_width, frame_height, r);
  } else {
    r[0] = d->x1;
    r[1] = d->y1;
    r[2] = d->x2;
    r[3] = d->y2;
  }
}

static void
box_of (GstCudanmsBox * box, GstCudanmsLabels * labels, const cnms_det * d,
    gboolean oriented, gint frame_width, gint frame_height, gfloat r[4])
{
  rect_of (d, oriented, frame_width, frame_height, r);
  box_of_rect (box, labels, d->class_id, r, frame_width, frame_height);
}

/* A lane's box: its record's rectangle (the frame rectangle of its points)
 * rounded as a box; labelled by the label file's line 0, else "lane". */
static void
lane_box_of (GstCudanmsBox * box, GstCudanmsLabels * labels,
    const cnms_det * d, gint frame_width, gint frame_height, gfloat r[4])
{
  box_of (box, labels, d, FALSE, frame_width, frame_height, r);
  if (labels->n_from_file == 0) {
    box->label = GST_CUDANMS_LANE_LABEL;
    box->quark = g_quark_from_static_string (GST_CUDANMS_LANE_LABEL);
  }
}

/* The quarks of the "detection" structure's name and fields, made once:
 * gst_structure_new would look each name up (a global lock and a hash)
 * for every box. */
enum
{
  Q_DETECTION, Q_CONFIDENCE, Q_LABEL_ID, Q_LABEL, Q_X_MIN, Q_Y_MIN, Q_X_MAX,
  Q_Y_MAX, Q_PRODUCER, Q_CX, Q_CY, Q_WIDTH, Q_HEIGHT, Q_ANGLE, Q_LANE,
  Q_SCORE, Q_POINTS, Q_ANCHOR, N_QUARKS
};

static const GQuark *
detection_quarks (void)
{
  static const gchar *const names[N_QUARKS] = { "detection", "confidence",
    "label_id", "label", "x_min", "y_min", "x_max", "y_max", "producer",
    "cx", "cy", "width", "height", "angle", "lane", "score", "points",
    "anchor"
  };
  static GQuark quarks[N_QUARKS];
  static gsize done = 0;

  gst_cudanms_quark_table (quarks, names, N_QUARKS, &done);
  return quarks;
}

/* The "lane" structure of a lane whose n_rows points (x, y, bottom row
 * first, NaN: none) are pts: score, points (the rows with a point, x y
 * flattened) and anchor. */
static GstStructure *
lane_structure (const cnms_det * d, const gfloat * pts, gint n_rows)
{
  const GQuark *q = detection_quarks ();
  GValue points = G_VALUE_INIT, v = G_VALUE_INIT;
  GstStructure *s;
  gint i;

  g_value_init (&points, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_DOUBLE);
  for (i = 0; i < n_rows; i++) {
    if (isnan (pts[2 * i]) || isnan (pts[2 * i + 1]))
      continue;
    g_value_set_double (&v, (gdouble) pts[2 * i]);
    gst_value_array_append_value (&points, &v);
    g_value_set_double (&v, (gdouble) pts[2 * i + 1]);
    gst_value_array_append_value (&points, &v);
  }
  g_value_unset (&v);
  s = gst_structure_new_id (q[Q_LANE],
      q[Q_SCORE], G_TYPE_DOUBLE, (gdouble) d->score, NULL);
  gst_structure_id_take_value (s, q[Q_POINTS], &points);
  gst_structure_id_set (s, q[Q_ANCHOR], G_TYPE_INT, (gint) d->anchor, NULL);
  return s;
}

/* lane_pts: NULL, or the record's lane points (lanes->n_rows of them). */
/* Record i's lane points, NULL when not lanes. */
#define LANE_PTS(lanes, i) ((lanes) != NULL ? \
    (lanes)->points + (gsize) (i) * 2 * (lanes)->n_rows : NULL)

static void
attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, gboolean oriented, const GstCudanmsLanes * lanes,
    const gfloat * lane_pts, gint id, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer)
{
  const GQuark *q = detection_quarks ();
  gdouble fw = frame_width, fh = frame_height;
  GstVideoRegionOfInterestMeta *meta;
  GstStructure *s;
  GstCudanmsBox box;
  gfloat r[4];

  if (lanes != NULL)
    lane_box_of (&box, labels, d, frame_width, frame_height, r);
  else
    box_of (&box, labels, d, oriented, frame_width, frame_height, r);
  meta = gst_buffer_add_video_region_of_interest_meta_id (buffer, box.quark,
      box.x, box.y, box.w, box.h);
  meta->id = id;
  /* the structure and its GValues cost most of the ROI (and GLib's type
   * lock, taken by every GValue, is shared by all threads) */
  if (!params)
    return;
  s = gst_structure_new_id (q[Q_DETECTION],
      q[Q_CONFIDENCE], G_TYPE_DOUBLE, (gdouble) d->score,
      q[Q_LABEL_ID], G_TYPE_INT, (gint) d->class_id,
      q[Q_LABEL], G_TYPE_STRING, box.label,
      q[Q_X_MIN], G_TYPE_DOUBLE, r[0] / fw,
      q[Q_Y_MIN], G_TYPE_DOUBLE, r[1] / fh,
      q[Q_X_MAX], G_TYPE_DOUBLE, r[2] / fw,
      q[Q_Y_MAX], G_TYPE_DOUBLE, r[3] / fh,
      q[Q_PRODUCER], G_TYPE_STRING, producer, NULL);
  /* the oriented box itself: frame pixels and radians, not clipped */
  if (oriented)
    gst_structure_id_set (s,
        q[Q_CX], G_TYPE_DOUBLE, (gdouble) d->cx,
        q[Q_CY], G_TYPE_DOUBLE, (gdouble) d->cy,
        q[Q_WIDTH], G_TYPE_DOUBLE, (gdouble) d->w,
        q[Q_HEIGHT], G_TYPE_DOUBLE, (gdouble) d->h,
        q[Q_ANGLE], G_TYPE_DOUBLE, (gdouble) d->angle, NULL);
  gst_video_region_of_interest_meta_add_param (meta, s);
  if (lanes != NULL)
    gst_video_region_of_interest_meta_add_param (meta,
        lane_structure (d, lane_pts, lanes->n_rows));
}

void
gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, gint id, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer)
{
  attach_roi (buffer, labels, d, FALSE, NULL, NULL, id, frame_width,
      frame_height, params, producer);
}

void
gst_cudanms_attach_oriented_roi (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * d, gint id, gint frame_width,
    gint frame_height, gboolean params, const gchar * producer)
{
  attach_roi (buffer, labels, d, TRUE, NULL, NULL, id, frame_width,
      frame_height, params, producer);
}

void
gst_cudanms_oriented_od_location (const cnms_det * d, gint * x, gint * y,
    gint * w, gint * h, gfloat * r)
{
  const gdouble two_pi = 2.0 * G_PI;
  gdouble rw = floor ((gdouble) d->w + 0.5), rh = floor ((gdouble) d->h + 0.5);
  gdouble a = fmod ((gdouble) d->angle, two_pi);

  /* clamped while double, as the ROI's box (gint is the mtd's type) */
  rw = CLAMP (rw, 0.0, (gdouble) G_MAXINT);
  rh = CLAMP (rh, 0.0, (gdouble) G_MAXINT);
  *w = (gint) rw;
  *h = (gint) rh;
  *x = (gint) CLAMP (floor ((gdouble) d->cx - rw / 2.0 + 0.5),
      (gdouble) G_MININT, (gdouble) G_MAXINT);
  *y = (gint) CLAMP (floor ((gdouble) d->cy - rh / 2.0 + 0.5),
      (gdouble) G_MININT, (gdouble) G_MAXINT);
  if (a < 0.0)
    a += two_pi;
  *r = (gfloat) a;
  /* a value just below 2 pi may round to it in float: the same rotation */
  if (*r >= (gfloat) two_pi)
    *r = 0.0f;
}

gint64
gst_cudanms_next_roi_id (GstBuffer * buffer)
{
  gpointer state = NULL;
  GstMeta *m;
  gint64 next = 0;

  while ((m = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    gint64 id = ((GstVideoRegionOfInterestMeta *) m)->id;

    if (id >= next)
      next = id + 1;
  }
  return next;
}

gboolean
gst_cudanms_attach_meta_available (GstCudanmsAttachMeta which)
{
#ifdef HAVE_GST_ANALYTICS
  return TRUE;
#else
  return which == GST_CUDANMS_ATTACH_META_ROI;
#endif
}

#ifdef HAVE_GST_ANALYTICS
/* One GstAnalyticsODMtd per kept box, in kept order, in the buffer's
 * relation meta (the existing one, else a new one). */
static gboolean
attach_od_mtds (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * dets, gint n, gboolean oriented,
    const GstCudanmsLanes * lanes, gint frame_width, gint frame_height)
{
  GstAnalyticsRelationMeta *rmeta;
  gint i;

  if (n == 0)
    return TRUE;
  rmeta = gst_buffer_get_analytics_relation_meta (buffer);
  if (rmeta == NULL) {
    /* Sized for the n mtds at once: the relation matrix otherwise grows by
     * 5 rows at a time, each time copied whole (quadratic per box). */
    GstAnalyticsRelationMetaInitParams params = { (gsize) n,
      (gsize) n * 64 + 1024
    };

    rmeta = gst_buffer_add_analytics_relation_meta_full (buffer, &params);
  }
  if (rmeta == NULL)
    return FALSE;
  for (i = 0; i < n; i++) {
    GstCudanmsBox box;
    gfloat r[4];

    if (lanes != NULL)
      lane_box_of (&box, labels, &dets[i], frame_width, frame_height, r);
    else
      box_of (&box, labels, &dets[i], oriented, frame_width, frame_height,
          r);
#ifdef HAVE_GST_TENSOR_META
    /* analytics >= 1.26: the oriented box itself */
    if (oriented) {
      gint x, y, w, h;
      gfloat angle;

      gst_cudanms_oriented_od_location (&dets[i], &x, &y, &w, &h, &angle);
      if (!gst_analytics_relation_meta_add_oriented_od_mtd (rmeta, box.quark,
              x, y, w, h, angle, dets[i].score, NULL))
        return FALSE;
      continue;
    }
#endif
    if (!gst_analytics_relation_meta_add_od_mtd (rmeta, box.quark, box.x,
            box.y, box.w, box.h, dets[i].score, NULL))
      return FALSE;
  }
  return TRUE;
}
#endif

/* The ROIs when the ids after the largest on the buffer run past G_MAXINT
 * (an upstream ROI of id near G_MAXINT): each takes the smallest id >= 0
 * that no ROI of the buffer has, so they stay unique (in kept order, not
 * consecutive). Never in a usual stream: the only per-frame allocation of
 * the output. */
static void
attach_rois_in_free_ids (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * dets, gint n, gboolean oriented,
    const GstCudanmsLanes * lanes, gint frame_width, gint frame_height,
    gboolean roi_params, const gchar * producer)
{
  GHashTable *used = g_hash_table_new (g_direct_hash, g_direct_equal);
  gpointer state = NULL;
  GstMeta *m;
  gint i, id = 0;

  while ((m = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL)
    g_hash_table_add (used,
        GINT_TO_POINTER (((GstVideoRegionOfInterestMeta *) m)->id));
  for (i = 0; i < n; i++) {
    while (id < G_MAXINT && (id < 0
            || g_hash_table_contains (used, GINT_TO_POINTER (id))))
      id++;
    attach_roi (buffer, labels, &dets[i], oriented, lanes,
        LANE_PTS (lanes, i), id, frame_width, frame_height, roi_params,
        producer);
    g_hash_table_add (used, GINT_TO_POINTER (id));
  }
  g_hash_table_unref (used);
}

static gboolean
attach_detections (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * dets, gint n, gboolean oriented,
    const GstCudanmsLanes * lanes, gint frame_width,
    gint frame_height, GstCudanmsAttachMeta which, gboolean roi_params,
    const gchar * producer)
{
  gint64 first;
  gint i;

#ifndef HAVE_GST_ANALYTICS
  which = GST_CUDANMS_ATTACH_META_ROI;  /* start refused anything else */
#endif
  if ((which & GST_CUDANMS_ATTACH_META_ROI) && n > 0) {
    first = gst_cudanms_next_roi_id (buffer);
    if (first + (n - 1) <= G_MAXINT) {
      for (i = 0; i < n; i++)
        attach_roi (buffer, labels, &dets[i], oriented, lanes,
            LANE_PTS (lanes, i), (gint) first + i, frame_width,
            frame_height, roi_params, producer);
    } else {
      attach_rois_in_free_ids (buffer, labels, dets, n, oriented, lanes,
          frame_width, frame_height, roi_params, producer);
    }
  }
#ifdef HAVE_GST_ANALYTICS
  if ((which & GST_CUDANMS_ATTACH_META_ANALYTICS)
      && !attach_od_mtds (buffer, labels, dets, n, oriented, lanes,
          frame_width, frame_height))
    return FALSE;
#endif
  return TRUE;
}

gboolean
gst_cudanms_attach_detections (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * dets, gint n, gint frame_width, gint frame_height,
    GstCudanmsAttachMeta which, gboolean roi_params, const gchar * producer)
{
  return attach_detections (buffer, labels, dets, n, FALSE, NULL,
      frame_width, frame_height, which, roi_params, producer);
}

gboolean
gst_cudanms_attach_oriented_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    gint frame_width, gint frame_height, GstCudanmsAttachMeta which,
    gboolean roi_params, const gchar * producer)
{
  return attach_detections (buffer, labels, dets, n, TRUE, NULL,
      frame_width, frame_height, which, roi_params, producer);
}

gboolean
gst_cudanms_attach_lane_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    const GstCudanmsLanes * lanes, gint frame_width, gint frame_height,
    GstCudanmsAttachMeta which, gboolean roi_params, const gchar * producer)
{
  return attach_detections (buffer, labels, dets, n, FALSE, lanes,
      frame_width, frame_height, which, roi_params, producer);
}
