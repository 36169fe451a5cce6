/* cudanms: class labels and quark tables (see gstcudanmslabels.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudanmslabels.h"
#include "gstcudanmsdebug.h"

void
gst_cudanms_labels_init (GstCudanmsLabels * labels)
{
  labels->names = g_ptr_array_new_with_free_func (g_free);
  labels->quarks = g_array_new (FALSE, FALSE, sizeof (GQuark));
  labels->n_from_file = 0;
}

void
gst_cudanms_labels_clear (GstCudanmsLabels * labels)
{
  g_clear_pointer (&labels->names, g_ptr_array_unref);
  g_clear_pointer (&labels->quarks, g_array_unref);
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

void
gst_cudanms_labels_lookup (GstCudanmsLabels * labels, gint class_id,
    const gchar ** label, GQuark * quark)
{
  /* Any id with a line in the label file takes it; the class-<id> names
   * of other ids are cached up to GST_CUDANMS_MAX_CACHED_CLASS. */
  if (class_id >= 0 && ((guint) class_id < labels->names->len
          || class_id <= GST_CUDANMS_MAX_CACHED_CLASS)) {
    grow (labels, class_id);
    *label = g_ptr_array_index (labels->names, class_id);
    *quark = g_array_index (labels->quarks, GQuark, class_id);
  } else {
    gchar scratch[32];

    g_snprintf (scratch, sizeof (scratch), "class-%d", class_id);
    *quark = g_quark_from_string (scratch);
    *label = g_quark_to_string (*quark);
  }
}

gboolean
gst_cudanms_labels_start (GstElement * element, GstCudanmsLabels * labels,
    const gchar * path)
{
  GError *err = NULL;

  gst_cudanms_labels_init (labels);
  if (path == NULL)
    return TRUE;
  if (!gst_cudanms_labels_load (labels, path, &err)) {
    GST_ELEMENT_ERROR (element, RESOURCE, OPEN_READ,
        ("Could not read label file \"%s\": %s", path, err->message),
        ("label-file must name a UTF-8 text file, one label per line"));
    g_clear_error (&err);
    gst_cudanms_labels_clear (labels);
    return FALSE;
  }
  GST_INFO_OBJECT (element, "loaded %u labels from %s", labels->n_from_file,
      path);
  if (labels->n_from_file == 0)
    GST_ELEMENT_WARNING (element, RESOURCE, READ,
        ("Label file \"%s\" holds no labels; every label is class-<id>.",
            path), (NULL));
  return TRUE;
}

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
