/* cudanms: the output contract (see gstcudanmsoutput.h and the README's
 * "Output contract"). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include <gst/video/video.h>

#include "gstcudanmsoutput.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

void
gst_cudanms_labels_init (GstCudanmsLabels * labels)
{
  labels->names = g_ptr_array_new_with_free_func (g_free);
  labels->quarks = g_array_new (FALSE, FALSE, sizeof (GQuark));
  labels->n_from_file = 0;
}

/* Newlines in [text, end). */
static guint
count_lines (const gchar * text, const gchar * end)
{
  guint n = 0;

  for (; text < end; text++)
    n += *text == '\n';
  return n;
}

void
gst_cudanms_labels_clear (GstCudanmsLabels * labels)
{
  g_clear_pointer (&labels->names, g_ptr_array_unref);
  g_clear_pointer (&labels->quarks, g_array_unref);
}

/* Makes the table cover class_id, filling with "class-<id>". */
static void
grow (GstCudanmsLabels * labels, gint class_id)
{
  while ((gint) labels->names->len <= class_id) {
    gchar *label = g_strdup_printf ("class-%u", labels->names->len);
    GQuark q = g_quark_from_string (label);

    g_ptr_array_add (labels->names, label);
    g_array_append_val (labels->quarks, q);
  }
}

gboolean
gst_cudanms_labels_load (GstCudanmsLabels * labels, const gchar * path,
    GError ** error)
{
  gchar *contents = NULL, *nul;
  gchar **lines;
  gsize len = 0;
  guint i, n;

  if (!g_file_get_contents (path, &contents, &len, error))
    return FALSE;
  /* A NUL would end the text early and silently drop every later line. */
  nul = memchr (contents, '\0', len);
  if (nul != NULL) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "line %u of %s "
        "holds a NUL byte: not a text file", 1 + count_lines (contents, nul),
        path);
    g_free (contents);
    return FALSE;
  }
  lines = g_strsplit (contents, "\n", -1);
  n = g_strv_length (lines);
  if (n > 0 && lines[n - 1][0] == '\0')
    n--;                        /* the final newline ends the last label */
  for (i = 0; i < n; i++) {
    const gchar *bad = NULL;

    if (!g_utf8_validate (lines[i], -1, &bad)) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "line %u of %s "
          "is not valid UTF-8 (byte %u of the line); labels must be UTF-8",
          i + 1, path, (guint) (bad - lines[i]) + 1);
      g_strfreev (lines);
      g_free (contents);
      return FALSE;
    }
  }
  for (i = 0; i < n; i++) {
    gchar *label = g_strchomp (lines[i]);       /* also drops a '\r' */
    GQuark q;

    if (label[0] == '\0') {
      grow (labels, (gint) i);
      continue;
    }
    q = g_quark_from_string (label);
    g_ptr_array_add (labels->names, g_strdup (label));
    g_array_append_val (labels->quarks, q);
  }
  labels->n_from_file = n;
  g_strfreev (lines);
  g_free (contents);
  return TRUE;
}

/* The label and frame-pixel box of kept box d: x = floor(x1),
 * y = floor(y1), w = ceil(x2) - x, h = ceil(y2) - y, clipped to the frame. */
typedef struct
{
  GQuark quark;
  const gchar *label;
  gint x, y, w, h;
} GstCudanmsBox;

static void
box_of (GstCudanmsBox * box, GstCudanmsLabels * labels, const cnms_det * d,
    gint frame_width, gint frame_height)
{
  gint x2, y2;

  /* Any id with a line in the label file takes it; the class-<id> names
   * of other ids are cached up to GST_CUDANMS_MAX_CACHED_CLASS. */
  if (d->class_id >= 0 && ((guint) d->class_id < labels->names->len
          || d->class_id <= GST_CUDANMS_MAX_CACHED_CLASS)) {
    grow (labels, d->class_id);
    box->label = g_ptr_array_index (labels->names, d->class_id);
    box->quark = g_array_index (labels->quarks, GQuark, d->class_id);
  } else {
    gchar scratch[32];

    g_snprintf (scratch, sizeof (scratch), "class-%d", d->class_id);
    box->quark = g_quark_from_string (scratch);
    box->label = g_quark_to_string (box->quark);
  }
  /* Clamped while still double: converting a value outside gint (a frame
   * near 2^31 pixels wide) to gint is undefined. */
  box->x = (gint) CLAMP (floor (d->x1), 0.0, (gdouble) frame_width);
  box->y = (gint) CLAMP (floor (d->y1), 0.0, (gdouble) frame_height);
  x2 = (gint) CLAMP (ceil (d->x2), (gdouble) box->x, (gdouble) frame_width);
  y2 = (gint) CLAMP (ceil (d->y2), (gdouble) box->y, (gdouble) frame_height);
  box->w = x2 - box->x;
  box->h = y2 - box->y;
}

/* The quarks of the "detection" structure's name and fields, made once:
 * gst_structure_new would look each name up (a global lock and a hash)
 * for every box. */
enum
{
  Q_DETECTION, Q_CONFIDENCE, Q_LABEL_ID, Q_LABEL, Q_X_MIN, Q_Y_MIN, Q_X_MAX,
  Q_Y_MAX, N_QUARKS
};

void
gst_cudanms_quark_table (GQuark * quarks, const gchar * const *names,
    gint n, gsize * done)
{
  if (g_once_init_enter (done)) {
    gint i;

    for (i = 0; i < n; i++)
      quarks[i] = g_quark_from_static_string (names[i]);
    g_once_init_leave (done, 1);
  }
}

static const GQuark *
detection_quarks (void)
{
  static const gchar *const names[N_QUARKS] = { "detection", "confidence",
    "label_id", "label", "x_min", "y_min", "x_max", "y_max"
  };
  static GQuark quarks[N_QUARKS];
  static gsize done = 0;

  gst_cudanms_quark_table (quarks, names, N_QUARKS, &done);
  return quarks;
}

void
gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, guint index, gint frame_width, gint frame_height,
    gboolean params)
{
  const GQuark *q = detection_quarks ();
  gdouble fw = frame_width, fh = frame_height;
  GstVideoRegionOfInterestMeta *meta;
  GstCudanmsBox box;

  box_of (&box, labels, d, frame_width, frame_height);
  meta = gst_buffer_add_video_region_of_interest_meta_id (buffer, box.quark,
      box.x, box.y, box.w, box.h);
  meta->id = (gint) index;
  /* the structure and its GValues cost most of the ROI (and GLib's type
   * lock, taken by every GValue, is shared by all threads) */
  if (!params)
    return;
  gst_video_region_of_interest_meta_add_param (meta,
      gst_structure_new_id (q[Q_DETECTION],
          q[Q_CONFIDENCE], G_TYPE_DOUBLE, (gdouble) d->score,
          q[Q_LABEL_ID], G_TYPE_INT, (gint) d->class_id,
          q[Q_LABEL], G_TYPE_STRING, box.label,
          q[Q_X_MIN], G_TYPE_DOUBLE, d->x1 / fw,
          q[Q_Y_MIN], G_TYPE_DOUBLE, d->y1 / fh,
          q[Q_X_MAX], G_TYPE_DOUBLE, d->x2 / fw,
          q[Q_Y_MAX], G_TYPE_DOUBLE, d->y2 / fh, NULL));
}

GType
gst_cudanms_attach_meta_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_ATTACH_META_ROI, "GstVideoRegionOfInterestMeta per box",
        "roi"},
    {GST_CUDANMS_ATTACH_META_ANALYTICS,
        "GstAnalyticsODMtd per box in a GstAnalyticsRelationMeta (>= 1.24)",
        "analytics"},
    {GST_CUDANMS_ATTACH_META_BOTH, "Both", "both"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsAttachMeta", values);
    g_once_init_leave (&type, t);
  }
  return type;
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
    const cnms_det * dets, gint n, gint frame_width, gint frame_height)
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

    box_of (&box, labels, &dets[i], frame_width, frame_height);
    if (!gst_analytics_relation_meta_add_od_mtd (rmeta, box.quark, box.x,
            box.y, box.w, box.h, dets[i].score, NULL))
      return FALSE;
  }
  return TRUE;
}
#endif

gboolean
gst_cudanms_attach_detections (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * dets, gint n, gint frame_width, gint frame_height,
    GstCudanmsAttachMeta which, gboolean roi_params)
{
  gint i;

#ifndef HAVE_GST_ANALYTICS
  which = GST_CUDANMS_ATTACH_META_ROI;  /* start refused anything else */
#endif
  if (which & GST_CUDANMS_ATTACH_META_ROI) {
    for (i = 0; i < n; i++)
      gst_cudanms_attach_roi (buffer, labels, &dets[i], (guint) i,
          frame_width, frame_height, roi_params);
  }
#ifdef HAVE_GST_ANALYTICS
  if ((which & GST_CUDANMS_ATTACH_META_ANALYTICS)
      && !attach_od_mtds (buffer, labels, dets, n, frame_width, frame_height))
    return FALSE;
#endif
  return TRUE;
}
