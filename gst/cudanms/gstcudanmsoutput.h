/* cudanms: what the element attaches per kept box (the output contract),
 * and the labels it names them with. */
#ifndef __GST_CUDANMS_OUTPUT_H__
#define __GST_CUDANMS_OUTPUT_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

/* The labels of a stream, indexed by class id: line n of the label file,
 * else "class-<n>". Filled lazily up to GST_CUDANMS_MAX_CACHED_CLASS. */
typedef struct
{
  GPtrArray *names;             /* gchar * */
  GArray *quarks;               /* GQuark */
} GstCudanmsLabels;

/* Labels are cached up to this class id; larger (end2end) ids are rare. */
#define GST_CUDANMS_MAX_CACHED_CLASS 65535

void gst_cudanms_labels_init (GstCudanmsLabels * labels);
/* Reads one label per line of path (a final newline ends the last label,
 * a '\r' before it is dropped, empty lines keep "class-<n>"). */
gboolean gst_cudanms_labels_load (GstCudanmsLabels * labels,
    const gchar * path, GError ** error);
void gst_cudanms_labels_clear (GstCudanmsLabels * labels);

/* Attaches kept box d, the index-th of its frame, as a
 * GstVideoRegionOfInterestMeta with its "detection" param structure. */
void gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, guint index, gint frame_width, gint frame_height);

G_END_DECLS
#endif /* __GST_CUDANMS_OUTPUT_H__ */
