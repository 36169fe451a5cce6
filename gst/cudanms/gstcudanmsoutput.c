/* cudanms: the output contract (see gstcudanmsoutput.h and the README's
 * "Output contract"). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include <gst/video/video.h>

#include "gstcudanmsoutput.h"

void
gst_cudanms_labels_init (GstCudanmsLabels * labels)
{
  labels->names = g_ptr_array_new_with_free_func (g_free);
  labels->quarks = g_array_new (FALSE, FALSE, sizeof (GQuark));
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
  gchar *contents = NULL;
  gchar **lines;
  guint i, n;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return FALSE;
  lines = g_strsplit (contents, "\n", -1);
  n = g_strv_length (lines);
  if (n > 0 && lines[n - 1][0] == '\0')
    n--;                        /* the final newline ends the last label */
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
  g_strfreev (lines);
  g_free (contents);
  return TRUE;
}

void
gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, guint index, gint frame_width, gint frame_height)
{
  gdouble fw = frame_width, fh = frame_height;
  GstVideoRegionOfInterestMeta *meta;
  GQuark quark;
  const gchar *label;
  gchar scratch[32];
  gint x, y, x2, y2;

  if (d->class_id >= 0 && d->class_id <= GST_CUDANMS_MAX_CACHED_CLASS) {
    grow (labels, d->class_id);
    label = g_ptr_array_index (labels->names, d->class_id);
    quark = g_array_index (labels->quarks, GQuark, d->class_id);
  } else {
    g_snprintf (scratch, sizeof (scratch), "class-%d", d->class_id);
    quark = g_quark_from_string (scratch);
    label = g_quark_to_string (quark);
  }

  x = CLAMP ((gint) floor (d->x1), 0, frame_width);
  y = CLAMP ((gint) floor (d->y1), 0, frame_height);
  x2 = CLAMP ((gint) ceil (d->x2), x, frame_width);
  y2 = CLAMP ((gint) ceil (d->y2), y, frame_height);

  meta = gst_buffer_add_video_region_of_interest_meta_id (buffer, quark,
      x, y, x2 - x, y2 - y);
  meta->id = (gint) index;
  gst_video_region_of_interest_meta_add_param (meta,
      gst_structure_new ("detection",
          "confidence", G_TYPE_DOUBLE, (gdouble) d->score,
          "label_id", G_TYPE_INT, (gint) d->class_id,
          "label", G_TYPE_STRING, label,
          "x_min", G_TYPE_DOUBLE, d->x1 / fw,
          "y_min", G_TYPE_DOUBLE, d->y1 / fh,
          "x_max", G_TYPE_DOUBLE, d->x2 / fw,
          "y_max", G_TYPE_DOUBLE, d->y2 / fh, NULL));
}
