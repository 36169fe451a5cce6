/* cudanms: class labels and quark tables (see gstcudanmslabels.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "gstcudanmslabels.h"
#include "gstcudanmsdebug.h"

void
gst_cudanms_labels_init (GstCudanmsLabels * labels)
{
  labels->names = g_ptr_array_new_with_free_func (g_free);
  labels->quarks = g_array_new (FALSE, FALSE, sizeof (GQuark));
  labels->n_from_file = 0;
  labels->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  labels->twice = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

void
gst_cudanms_labels_clear (GstCudanmsLabels * labels)
{
  g_clear_pointer (&labels->names, g_ptr_array_unref);
  g_clear_pointer (&labels->quarks, g_array_unref);
  g_clear_pointer (&labels->ids, g_hash_table_unref);
  g_clear_pointer (&labels->twice, g_hash_table_unref);
}

/* Line ends ("\r\n", "\n" or "\r") in [text, end). */
static guint
count_lines (const gchar * text, const gchar * end)
{
  guint n = 0;

  for (; text < end; text++)
    n += *text == '\n' || (*text == '\r' && (text + 1 == end
            || text[1] != '\n'));
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

/* Refuses what is not a regular file of at most the size a label file
 * may have, before reading it: a FIFO would block, a device never end. */
static gboolean
check_file (const gchar * path, GError ** error)
{
  GStatBuf st;

  if (g_stat (path, &st) != 0) {
    int e = errno;

    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
        "cannot open %s: %s", path, g_strerror (e));
    return FALSE;
  }
  if (!S_ISREG (st.st_mode)) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s is not a "
        "regular file (a %s)", path, S_ISDIR (st.st_mode) ? "directory" :
        S_ISFIFO (st.st_mode) ? "FIFO" : S_ISCHR (st.st_mode)
        || S_ISBLK (st.st_mode) ? "device" : "special file");
    return FALSE;
  }
  if (st.st_size > GST_CUDANMS_MAX_LABEL_FILE) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s is %"
        G_GUINT64_FORMAT " bytes, more than the %d a label file may hold",
        path, (guint64) st.st_size, GST_CUDANMS_MAX_LABEL_FILE);
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_cudanms_labels_load (GstCudanmsLabels * labels, const gchar * path,
    GError ** error)
{
  gchar *contents = NULL, *nul, *text, *p, *end;
  gsize len = 0;
  guint line = 0;

  if (!check_file (path, error)
      || !g_file_get_contents (path, &contents, &len, error))
    return FALSE;
  /* the file may have grown since it was looked at */
  if (len > GST_CUDANMS_MAX_LABEL_FILE) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s is %"
        G_GSIZE_FORMAT " bytes, more than the %d a label file may hold",
        path, len, GST_CUDANMS_MAX_LABEL_FILE);
    g_free (contents);
    return FALSE;
  }
  /* A NUL would end the text early and silently drop every later line. */
  nul = memchr (contents, '\0', len);
  if (nul != NULL) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "line %u of %s "
        "holds a NUL byte: not a text file", 1 + count_lines (contents, nul),
        path);
    g_free (contents);
    return FALSE;
  }
  text = contents;
  end = contents + len;
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    text += 3;                  /* a UTF-8 byte-order mark */
  for (p = text; p < end; line++) {
    gchar *eol = p, *next;
    const gchar *bad = NULL;
    gchar *label;

    while (eol < end && *eol != '\n' && *eol != '\r')
      eol++;
    next = eol < end && *eol == '\r' && eol + 1 < end && eol[1] == '\n' ?
        eol + 2 : eol + 1;
    *eol = '\0';
    if (!g_utf8_validate (p, -1, &bad)) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "line %u of %s "
          "is not valid UTF-8 (byte %u of the line); labels must be UTF-8",
          line + 1, path, (guint) (bad - p) + 1);
      gst_cudanms_labels_clear (labels);
      gst_cudanms_labels_init (labels);
      g_free (contents);
      return FALSE;
    }
    label = g_strstrip (p);
    if (label[0] == '\0') {
      grow (labels, (gint) line);
    } else {
      GQuark q = g_quark_from_string (label);

      g_ptr_array_add (labels->names, g_strdup (label));
      g_array_append_val (labels->quarks, q);
      if (!g_hash_table_contains (labels->ids, label))
        g_hash_table_insert (labels->ids, g_strdup (label),
            GUINT_TO_POINTER (line + 1));
      else if (!g_hash_table_contains (labels->twice, label))
        g_hash_table_insert (labels->twice, g_strdup (label),
            GUINT_TO_POINTER (line + 1));
    }
    p = next;
  }
  labels->n_from_file = line;
  g_free (contents);
  return TRUE;
}

gint
gst_cudanms_labels_find (gpointer data, const gchar * name, gint lines[2])
{
  const GstCudanmsLabels *labels = data;
  gpointer first = labels->ids != NULL ?
      g_hash_table_lookup (labels->ids, name) : NULL;
  gpointer second = labels->twice != NULL ?
      g_hash_table_lookup (labels->twice, name) : NULL;

  if (first == NULL)
    return 0;
  lines[0] = (gint) GPOINTER_TO_UINT (first) - 1;
  if (second == NULL)
    return 1;
  lines[1] = (gint) GPOINTER_TO_UINT (second) - 1;
  return 2;
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
    /* one quark for every such id: a quark is never freed */
    *quark = g_quark_from_static_string (GST_CUDANMS_LABEL_LARGE);
    *label = GST_CUDANMS_LABEL_LARGE;
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
