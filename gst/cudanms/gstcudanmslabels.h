/* cudanms: the names it gives classes (line n of the label file, else
 * "class-<n>") and their quarks, cached per stream; and quark tables of
 * fixed names. */
#ifndef __GST_CUDANMS_LABELS_H__
#define __GST_CUDANMS_LABELS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The labels of a stream, indexed by class id: line n of the label file,
 * else "class-<n>". Filled lazily up to GST_CUDANMS_MAX_CACHED_CLASS, and
 * always as far as the file goes. */
typedef struct
{
  GPtrArray *names;             /* gchar * */
  GArray *quarks;               /* GQuark */
  guint n_from_file;            /* lines read from the label file */
} GstCudanmsLabels;

/* Labels are cached up to this class id; larger (end2end) ids are rare. */
#define GST_CUDANMS_MAX_CACHED_CLASS 65535

void gst_cudanms_labels_init (GstCudanmsLabels * labels);
/* Reads one label per line of path (a final newline ends the last label,
 * a '\r' before it is dropped, empty lines keep "class-<n>"). A file that
 * cannot be read (missing, a directory), holds a NUL byte or a line that
 * is not UTF-8 fails with a message naming the line. */
gboolean gst_cudanms_labels_load (GstCudanmsLabels * labels,
    const gchar * path, GError ** error);
void gst_cudanms_labels_clear (GstCudanmsLabels * labels);

/* The label of class_id and its quark (*label stays valid while labels
 * does, or for the process for ids past GST_CUDANMS_MAX_CACHED_CLASS). */
void gst_cudanms_labels_lookup (GstCudanmsLabels * labels, gint class_id,
    const gchar ** label, GQuark * quark);

/* The element's start(): initialises labels and reads the label file at
 * path into them (none when NULL). A file that cannot be read or is not
 * UTF-8 text is an element error (FALSE, labels cleared); one without any
 * label an element warning. */
gboolean gst_cudanms_labels_start (GstElement * element,
    GstCudanmsLabels * labels, const gchar * path);

/* Fills quarks[0 .. n) with the quarks of the static strings names, once
 * (done: a static gsize, 0 at first): a name looked up per buffer takes
 * GLib's global quark lock, which every streaming thread shares. */
void gst_cudanms_quark_table (GQuark * quarks, const gchar * const *names,
    gint n, gsize * done);

G_END_DECLS
#endif /* __GST_CUDANMS_LABELS_H__ */
