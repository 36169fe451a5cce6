/* cudanms: the output contract (see gstcudanmsoutput.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <gst/video/video.h>

#include "gstcudanmsoutput.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

/* One frame's records as gst_cudanms_attach_detections attaches them. */
typedef struct
{
  GstCudanmsLabels *labels;
  gboolean oriented;            /* oriented boxes: the ROI is the hull */
  gboolean lanes;               /* lanes: labelled "lane" without a file */
  cnms_head head;               /* the payload the ROIs carry, or NONE */
  const cnms_payloads *payloads;        /* head's records (not NONE) */
  const GstCudanmsPayload *payload;     /* what its metas need */
  gint frame_width, frame_height;
  gboolean params;              /* the ROIs' param structures */
  const gchar *producer;
} Frame;

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

/* Record d's box and its rectangle r. A lane's rectangle is the frame
 * rectangle of its points, its label the label file's line 0, else
 * "lane". */
static void
box_of (GstCudanmsBox * box, const Frame * f, const cnms_det * d,
    gfloat r[4])
{
  rect_of (d, f->oriented, f->frame_width, f->frame_height, r);
  box_of_rect (box, f->labels, d->class_id, r, f->frame_width,
      f->frame_height);
  if (f->lanes && f->labels->n_from_file == 0) {
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
  Q_SCORE, Q_POINTS, Q_ANCHOR, Q_KEYPOINTS, Q_SCORES, Q_MASK, Q_X, Q_Y,
  Q_DATA, N_QUARKS
};

static const GQuark *
detection_quarks (void)
{
  static const gchar *const names[N_QUARKS] = { "detection", "confidence",
    "label_id", "label", "x_min", "y_min", "x_max", "y_max", "producer",
    "cx", "cy", "width", "height", "angle", "lane", "score", "points",
    "anchor", "keypoints", "scores", "mask", "x", "y", "data"
  };
  static GQuark quarks[N_QUARKS];
  static gsize done = 0;

  gst_cudanms_quark_table (quarks, names, N_QUARKS, &done);
  return quarks;
}

/* The floats of payload record i (lane points, keypoints). */
static const gfloat *
payload_floats (const cnms_payloads * payloads, gint i)
{
  return (const gfloat *) (gconstpointer) (payloads->data +
      payloads->records[i].offset);
}

/* The "lane" structure of lane d, record i of a lane payload: its
 * n_points rows' points (x, y, bottom row first, NaN: none) give score,
 * points (the rows with a point, x y flattened) and anchor. */
static GstStructure *
lane_structure (const cnms_det * d, const cnms_payloads * payloads, gint i)
{
  const GQuark *q = detection_quarks ();
  const gfloat *pts = payload_floats (payloads, i);
  const gint n_rows = payloads->records[i].n_points;
  GValue points = G_VALUE_INIT, v = G_VALUE_INIT;
  GstStructure *s;
  gint r;

  g_value_init (&points, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_DOUBLE);
  for (r = 0; r < n_rows; r++) {
    if (isnan (pts[2 * r]) || isnan (pts[2 * r + 1]))
      continue;
    g_value_set_double (&v, (gdouble) pts[2 * r]);
    gst_value_array_append_value (&points, &v);
    g_value_set_double (&v, (gdouble) pts[2 * r + 1]);
    gst_value_array_append_value (&points, &v);
  }
  g_value_unset (&v);
  s = gst_structure_new_id (q[Q_LANE],
      q[Q_SCORE], G_TYPE_DOUBLE, (gdouble) d->score, NULL);
  gst_structure_id_take_value (s, q[Q_POINTS], &points);
  gst_structure_id_set (s, q[Q_ANCHOR], G_TYPE_INT, (gint) d->anchor, NULL);
  return s;
}

/* The "keypoints" structure of record i of a keypoints payload (its
 * n_points keypoints x y score): points (x y of each keypoint, frame
 * pixels, not clipped) and, with keypoint_dims 3, scores (each keypoint's
 * visibility score). */
static GstStructure *
keypoints_structure (const cnms_payloads * payloads, gint keypoint_dims,
    gint i)
{
  const GQuark *q = detection_quarks ();
  const gfloat *kp = payload_floats (payloads, i);
  const gint n_keypoints = payloads->records[i].n_points;
  GValue points = G_VALUE_INIT, scores = G_VALUE_INIT, v = G_VALUE_INIT;
  GstStructure *s;
  gint j;

  g_value_init (&points, GST_TYPE_ARRAY);
  g_value_init (&scores, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_DOUBLE);
  for (j = 0; j < n_keypoints; j++) {
    g_value_set_double (&v, (gdouble) kp[3 * j]);
    gst_value_array_append_value (&points, &v);
    g_value_set_double (&v, (gdouble) kp[3 * j + 1]);
    gst_value_array_append_value (&points, &v);
    if (keypoint_dims == 3) {
      g_value_set_double (&v, (gdouble) kp[3 * j + 2]);
      gst_value_array_append_value (&scores, &v);
    }
  }
  g_value_unset (&v);
  s = gst_structure_new_id_empty (q[Q_KEYPOINTS]);
  gst_structure_id_take_value (s, q[Q_POINTS], &points);
  if (keypoint_dims == 3)
    gst_structure_id_take_value (s, q[Q_SCORES], &scores);
  else
    g_value_unset (&scores);
  return s;
}

/* Bytes offset .. offset + size of buf, sharing its memory (an empty
 * buffer for size 0). */
static GstBuffer *
sub_buffer (GstBuffer * buf, gsize offset, gsize size)
{
  if (size == 0)
    return gst_buffer_new ();
  return gst_buffer_copy_region (buf, GST_BUFFER_COPY_MEMORY, offset, size);
}

/* The "mask" structure of record i of a mask payload: x, y, width, height
 * (the mask's frame-pixel rectangle) and data (its width x height bytes,
 * row-major, 1 inside the mask, 0 outside; a buffer sharing mask_data, the
 * frame's mask memory, read-only). */
static GstStructure *
mask_structure (const cnms_payloads * payloads, GstBuffer * mask_data,
    gint i)
{
  const GQuark *q = detection_quarks ();
  const cnms_payload *m = &payloads->records[i];
  GstBuffer *data = sub_buffer (mask_data, m->offset,
      (gsize) m->width * (gsize) m->height);
  GstStructure *s = gst_structure_new_id (q[Q_MASK],
      q[Q_X], G_TYPE_INT, m->x, q[Q_Y], G_TYPE_INT, m->y,
      q[Q_WIDTH], G_TYPE_INT, m->width, q[Q_HEIGHT], G_TYPE_INT, m->height,
      NULL);
  GValue v = G_VALUE_INIT;

  g_value_init (&v, GST_TYPE_BUFFER);
  g_value_take_boxed (&v, data);
  gst_structure_id_take_value (s, q[Q_DATA], &v);
  return s;
}

/* The second param structure of record i (d) of f: its head's, or NULL. */
static GstStructure *
payload_structure (const Frame * f, const cnms_det * d, gint i)
{
  switch (f->head) {
    case CNMS_HEAD_LANE:
      return lane_structure (d, f->payloads, i);
    case CNMS_HEAD_KEYPOINTS:
      return keypoints_structure (f->payloads, f->payload->keypoint_dims, i);
    case CNMS_HEAD_MASK:
      return f->payload->mask_data != NULL ? mask_structure (f->payloads,
          f->payload->mask_data, i) : NULL;
    default:
      return NULL;
  }
}

/* Attaches record i (d) of f as a ROI of the given id. */
static void
attach_roi (GstBuffer * buffer, const Frame * f, const cnms_det * d, gint i,
    gint id)
{
  const GQuark *q = detection_quarks ();
  gdouble fw = f->frame_width, fh = f->frame_height;
  GstVideoRegionOfInterestMeta *meta;
  GstStructure *s;
  GstCudanmsBox box;
  gfloat r[4];

  box_of (&box, f, d, r);
  meta = gst_buffer_add_video_region_of_interest_meta_id (buffer, box.quark,
      box.x, box.y, box.w, box.h);
  meta->id = id;
  /* the structure and its GValues cost most of the ROI (and GLib's type
   * lock, taken by every GValue, is shared by all threads) */
  if (!f->params)
    return;
  s = gst_structure_new_id (q[Q_DETECTION],
      q[Q_CONFIDENCE], G_TYPE_DOUBLE, (gdouble) d->score,
      q[Q_LABEL_ID], G_TYPE_INT, (gint) d->class_id,
      q[Q_LABEL], G_TYPE_STRING, box.label,
      q[Q_X_MIN], G_TYPE_DOUBLE, r[0] / fw,
      q[Q_Y_MIN], G_TYPE_DOUBLE, r[1] / fh,
      q[Q_X_MAX], G_TYPE_DOUBLE, r[2] / fw,
      q[Q_Y_MAX], G_TYPE_DOUBLE, r[3] / fh,
      q[Q_PRODUCER], G_TYPE_STRING, f->producer, NULL);
  /* the oriented box itself: frame pixels and radians, not clipped */
  if (f->oriented)
    gst_structure_id_set (s,
        q[Q_CX], G_TYPE_DOUBLE, (gdouble) d->cx,
        q[Q_CY], G_TYPE_DOUBLE, (gdouble) d->cy,
        q[Q_WIDTH], G_TYPE_DOUBLE, (gdouble) d->w,
        q[Q_HEIGHT], G_TYPE_DOUBLE, (gdouble) d->h,
        q[Q_ANGLE], G_TYPE_DOUBLE, (gdouble) d->angle, NULL);
  gst_video_region_of_interest_meta_add_param (meta, s);
  s = payload_structure (f, d, i);
  if (s != NULL)
    gst_video_region_of_interest_meta_add_param (meta, s);
}

/* f for n records of layout (NULL: boxes) and their payloads. */
static void
frame_init (Frame * f, GstCudanmsLabels * labels,
    const cnms_layout_desc * layout, gint n, const cnms_payloads * payloads,
    const GstCudanmsPayload * payload, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer)
{
  static const GstCudanmsPayload none = { 0, NULL, NULL };

  f->labels = labels;
  f->oriented = layout != NULL && layout->oriented;
  f->lanes = layout != NULL && layout->head == CNMS_HEAD_LANE;
  f->payloads = payloads;
  f->payload = payload != NULL ? payload : &none;
  /* the layout's head, where payloads carry it for every record */
  f->head = CNMS_HEAD_NONE;
  if (layout != NULL && payloads != NULL && payloads->head == layout->head
      && payloads->n == n && (n == 0 || payloads->records != NULL))
    f->head = layout->head;
  f->frame_width = frame_width;
  f->frame_height = frame_height;
  f->params = params;
  f->producer = producer;
}

void
gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, gint id, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer)
{
  Frame f;

  frame_init (&f, labels, NULL, 1, NULL, NULL, frame_width, frame_height,
      params, producer);
  attach_roi (buffer, &f, d, 0, id);
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
#ifdef HAVE_GST_TENSOR_META
/* Record i's mask (of a mask payload) as a GstAnalyticsSegmentationMtd
 * related both ways to its ODMtd od, as yolosegv8tensordec relates them:
 * an instance mask (GRAY8 with its video meta, stride its width) of
 * regions 0 (background) and i mod 255 + 1, over the mask's frame-pixel
 * rectangle. An empty mask (a rectangle of width or height 0: no bytes)
 * has none; a mask of all 0 bytes has one. */
static gboolean
attach_segmentation_mtd (GstAnalyticsRelationMeta * rmeta, const Frame * f,
    gint i, const GstAnalyticsMtd * od)
{
  const cnms_payload *m = &f->payloads->records[i];
  gsize offsets[GST_VIDEO_MAX_PLANES] = { 0 };
  gint strides[GST_VIDEO_MAX_PLANES] = { m->width };
  guint region_ids[2] = { 0, (guint) (i % 255) + 1 };
  GstAnalyticsSegmentationMtd seg;
  GstBuffer *mask;

  if (m->width <= 0 || m->height <= 0 || f->payload->region_data == NULL)
    return TRUE;
  mask = sub_buffer (f->payload->region_data, m->offset,
      (gsize) m->width * (gsize) m->height);
  gst_buffer_add_video_meta_full (mask, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_GRAY8, (guint) m->width, (guint) m->height, 1,
      offsets, strides);
  if (!gst_analytics_relation_meta_add_segmentation_mtd (rmeta, mask,
          GST_SEGMENTATION_TYPE_INSTANCE, 2, region_ids, m->x, m->y,
          (guint) m->width, (guint) m->height, &seg))
    return FALSE;
  return gst_analytics_relation_meta_set_relation (rmeta,
      GST_ANALYTICS_REL_TYPE_RELATE_TO, od->id, seg.id)
      && gst_analytics_relation_meta_set_relation (rmeta,
      GST_ANALYTICS_REL_TYPE_RELATE_TO, seg.id, od->id);
}
#endif

/* One GstAnalyticsODMtd per kept record, in kept order, in the buffer's
 * relation meta (the existing one, else a new one); with masks, each
 * mask's segmentation mtd after its ODMtd. */
static gboolean
attach_od_mtds (GstBuffer * buffer, const Frame * f, const cnms_det * dets,
    gint n)
{
  GstAnalyticsRelationMeta *rmeta;
  gint i;

  if (n == 0)
    return TRUE;
  rmeta = gst_buffer_get_analytics_relation_meta (buffer);
  if (rmeta == NULL) {
    /* Sized for the mtds at once (n, and n segmentation mtds with masks):
     * the relation matrix otherwise grows by 5 rows at a time, each time
     * copied whole (quadratic per box). */
    const gsize n_mtds = (gsize) n * (f->head == CNMS_HEAD_MASK ? 2 : 1);
    GstAnalyticsRelationMetaInitParams params = { n_mtds,
      n_mtds * 64 + 1024
    };

    rmeta = gst_buffer_add_analytics_relation_meta_full (buffer, &params);
  }
  if (rmeta == NULL)
    return FALSE;
  for (i = 0; i < n; i++) {
    GstAnalyticsODMtd od;
    GstCudanmsBox box;
    gfloat r[4];

    box_of (&box, f, &dets[i], r);
#ifdef HAVE_GST_TENSOR_META
    /* analytics >= 1.26: the oriented box itself */
    if (f->oriented) {
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
            box.y, box.w, box.h, dets[i].score, &od))
      return FALSE;
#ifdef HAVE_GST_TENSOR_META
    if (f->head == CNMS_HEAD_MASK
        && !attach_segmentation_mtd (rmeta, f, i, (GstAnalyticsMtd *) & od))
      return FALSE;
#endif
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
attach_rois_in_free_ids (GstBuffer * buffer, const Frame * f,
    const cnms_det * dets, gint n)
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
    attach_roi (buffer, f, &dets[i], i, id);
    g_hash_table_add (used, GINT_TO_POINTER (id));
  }
  g_hash_table_unref (used);
}

gboolean
gst_cudanms_attach_detections (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_layout_desc * layout, const cnms_det * dets, gint n,
    const cnms_payloads * payloads, const GstCudanmsPayload * payload,
    gint frame_width, gint frame_height, GstCudanmsAttachMeta which,
    gboolean roi_params, const gchar * producer)
{
  Frame f;
  gint64 first;
  gint i;

#ifndef HAVE_GST_ANALYTICS
  which = GST_CUDANMS_ATTACH_META_ROI;  /* start refused anything else */
#endif
  frame_init (&f, labels, layout, n, payloads, payload, frame_width,
      frame_height, roi_params, producer);
  if ((which & GST_CUDANMS_ATTACH_META_ROI) && n > 0) {
    first = gst_cudanms_next_roi_id (buffer);
    if (first + (n - 1) <= G_MAXINT) {
      for (i = 0; i < n; i++)
        attach_roi (buffer, &f, &dets[i], i, (gint) first + i);
    } else {
      attach_rois_in_free_ids (buffer, &f, dets, n);
    }
  }
#ifdef HAVE_GST_ANALYTICS
  /* A lane is a polyline, which no GstAnalytics mtd describes: its ROI
   * carries its points. It becomes an ODMtd of its points' rectangle only
   * where analytics metas alone were asked for (attach-meta=analytics);
   * with both, the ROI alone, so that objectdetectionoverlay draws no
   * rectangle for it. */
  if (f.lanes && which == GST_CUDANMS_ATTACH_META_BOTH)
    return TRUE;
  if ((which & GST_CUDANMS_ATTACH_META_ANALYTICS)
      && !attach_od_mtds (buffer, &f, dets, n))
    return FALSE;
#endif
  return TRUE;
}

/* The mask pool (see gstcudanmsoutput.h). */
#define MASK_POOL_KEEP 8        /* free blocks kept */

struct _GstCudanmsMaskPool
{
  gint ref;
  GMutex lock;
  GPtrArray *free;              /* MaskBlock */
};

typedef struct
{
  GstCudanmsMaskPool *pool;
  guint8 *data;
  gsize capacity;
} MaskBlock;

GstCudanmsMaskPool *
gst_cudanms_mask_pool_new (void)
{
  GstCudanmsMaskPool *pool = g_new0 (GstCudanmsMaskPool, 1);

  pool->ref = 1;
  g_mutex_init (&pool->lock);
  pool->free = g_ptr_array_new ();
  return pool;
}

static void
mask_block_free (MaskBlock * b)
{
  g_free (b->data);
  g_free (b);
}

void
gst_cudanms_mask_pool_unref (GstCudanmsMaskPool * pool)
{
  if (pool == NULL || !g_atomic_int_dec_and_test (&pool->ref))
    return;
  while (pool->free->len > 0)
    mask_block_free (g_ptr_array_steal_index_fast (pool->free, 0));
  g_ptr_array_unref (pool->free);
  g_mutex_clear (&pool->lock);
  g_free (pool);
}

/* The buffer's memory is gone: its block goes back. */
static void
mask_block_release (gpointer user_data)
{
  MaskBlock *b = user_data;
  GstCudanmsMaskPool *pool = b->pool;

  g_mutex_lock (&pool->lock);
  if (pool->free->len < MASK_POOL_KEEP) {
    g_ptr_array_add (pool->free, b);
    b = NULL;
  }
  g_mutex_unlock (&pool->lock);
  if (b != NULL)
    mask_block_free (b);
  gst_cudanms_mask_pool_unref (pool);
}

/* A block of at least size bytes: a free one that fits, else the largest
 * free one grown, else a new one. */
static MaskBlock *
mask_block_take (GstCudanmsMaskPool * pool, gsize size)
{
  MaskBlock *b = NULL;
  guint i, best = G_MAXUINT;

  g_mutex_lock (&pool->lock);
  for (i = 0; i < pool->free->len; i++) {
    MaskBlock *c = g_ptr_array_index (pool->free, i);

    if (best == G_MAXUINT || c->capacity >
        ((MaskBlock *) g_ptr_array_index (pool->free, best))->capacity)
      best = i;
    if (c->capacity >= size) {
      best = i;
      break;
    }
  }
  if (best != G_MAXUINT)
    b = g_ptr_array_steal_index_fast (pool->free, best);
  g_mutex_unlock (&pool->lock);
  if (b == NULL) {
    b = g_new0 (MaskBlock, 1);
    b->pool = pool;
  }
  if (b->capacity < size) {
    /* grown by half again, so that a slowly growing frame settles */
    g_free (b->data);
    b->capacity = MAX (size + size / 2, 4096);
    b->data = g_malloc (b->capacity);
  }
  g_atomic_int_inc (&pool->ref);
  return b;
}

static GstBuffer *
mask_block_wrap (MaskBlock * b, gsize size)
{
  return gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, b->data,
      b->capacity, 0, size, b, mask_block_release);
}

/* dst[k] = src[k] ? id : 0 for k < len. */
static void
region_ids (const guint8 * src, gsize len, guint8 id, guint8 * dst)
{
  gsize k = 0;
#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128 (), idv = _mm_set1_epi8 ((char) id);

  for (; k + 16 <= len; k += 16)
    _mm_storeu_si128 ((__m128i *) (dst + k),
        _mm_andnot_si128 (_mm_cmpeq_epi8 (_mm_loadu_si128 ((const __m128i *)
                    (src + k)), zero), idv));
#endif
  for (; k < len; k++)
    dst[k] = src[k] ? id : 0;
}

void
gst_cudanms_mask_pool_fill (GstCudanmsMaskPool * pool,
    const cnms_payloads * payloads, GstBuffer ** mask_data,
    GstBuffer ** region_data)
{
  const cnms_payload *masks = payloads->records;
  const guint8 *data = payloads->data;
  const gint n = payloads->n;
  gsize size, end = 0;
  gboolean ordered;
  MaskBlock *b;
  gint i;

  /* the bytes the masks take: up to the end of the last one */
  for (i = 0; i < n; i++)
    end = MAX (end, masks[i].offset + (gsize) masks[i].width *
        (gsize) masks[i].height);
  size = MAX (end, 1);
  if (mask_data != NULL) {
    b = mask_block_take (pool, size);
    if (end > 0)
      memcpy (b->data, data, end);
    *mask_data = mask_block_wrap (b, size);
  }
  if (region_data == NULL)
    return;
  end = 0;
  b = mask_block_take (pool, size);
  /* zeros where no mask lies: the gaps between masks in offset order (the
   * library lays them end to end), or everything first otherwise */
  for (i = 0; i < n && (i == 0 || masks[i].offset >= masks[i - 1].offset
          + (gsize) masks[i - 1].width * (gsize) masks[i - 1].height); i++);
  ordered = i == n;
  if (!ordered)
    memset (b->data, 0, size);
  for (i = 0; i < n; i++) {
    const guint8 *src = data + masks[i].offset;
    guint8 *dst = b->data + masks[i].offset, id = (guint8) (i % 255 + 1);
    gsize len = (gsize) masks[i].width * (gsize) masks[i].height;

    if (ordered) {
      memset (b->data + end, 0, masks[i].offset - end);
      end = masks[i].offset + len;
    }
    region_ids (src, len, id, dst);
  }
  if (ordered)
    memset (b->data + end, 0, size - end);
  *region_data = mask_block_wrap (b, size);
}
