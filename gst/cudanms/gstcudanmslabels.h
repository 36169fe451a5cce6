/* cudanms: the names it gives classes (line n of the label file, else
 * "class-<n>") and their quarks, cached per stream; and quark tables of
 * fixed names. */
#ifndef __GST_CUDANMS_LABELS_H__
#define __GST_CUDANMS_LABELS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The labels of a stream, indexed by class id: line n of the label file,
 * else "class-<n>" up to GST_CUDANMS_MAX_CACHED_CLASS, else
 * GST_CUDANMS_LABEL_LARGE. Filled lazily up to GST_CUDANMS_MAX_CACHED_CLASS,
 * and always as far as the file goes. */
typedef struct
{
  GPtrArray *names;             /* gchar * */
  GArray *quarks;               /* GQuark */
  guint n_from_file;            /* lines read from the label file */
  GHashTable *ids;              /* a label of the file -> its id + 1 (the
                                 * first line, for a label given twice);
                                 * not changed once loaded, so it may be read
                                 * while the streaming thread labels boxes */
  GHashTable *twice;            /* a label on two lines or more -> the id of
                                 * its second line + 1; as ids */
} GstCudanmsLabels;

/* Labels are cached up to this class id; larger (end2end) ids are rare. */
#define GST_CUDANMS_MAX_CACHED_CLASS 65535
/* The label of a class id above GST_CUDANMS_MAX_CACHED_CLASS without a line
 * in the label file: one name for all of them, so that memory stays
 * bounded whatever ids arrive (a label's quark lives as long as the
 * process); the id itself is the ROI's label_id. */
#define GST_CUDANMS_LABEL_LARGE "class-large"
/* The largest label file read, in bytes. */
#define GST_CUDANMS_MAX_LABEL_FILE (16 * 1024 * 1024)

void gst_cudanms_labels_init (GstCudanmsLabels * labels);
/* Reads one label per line of path: lines end at "\r\n", "\n" or "\r"
 * (a final line end ends the last label), a UTF-8 byte-order mark at the
 * start is dropped, white space at either end of a line is trimmed, and
 * an empty line keeps "class-<n>". A path that is not a regular file (a
 * directory, a FIFO, a device), a file over GST_CUDANMS_MAX_LABEL_FILE
 * bytes, or one that holds a NUL byte or a line that is not UTF-8 fails,
 * with a message naming the file (and the line). */
gboolean gst_cudanms_labels_load (GstCudanmsLabels * labels,
    const gchar * path, GError ** error);
void gst_cudanms_labels_clear (GstCudanmsLabels * labels);

/* How many lines of the label file hold name (0, 1, or 2 for two or
 * more), with the ids of the first two in lines[0], lines[1] (a
 * cnms_class_labels' find, data the labels). */
gint gst_cudanms_labels_find (gpointer labels, const gchar * name,
    gint lines[2]);

/* The label of class_id and its quark (*label stays valid while labels
 * does, or for the process for GST_CUDANMS_LABEL_LARGE). */
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
