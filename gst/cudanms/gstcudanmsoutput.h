/* cudanms: what the element attaches per kept box (the output contract),
 * and the labels it names them with. */
#ifndef __GST_CUDANMS_OUTPUT_H__
#define __GST_CUDANMS_OUTPUT_H__

#include <gst/gst.h>
#include "cudanms.h"

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

/* Fills quarks[0 .. n) with the quarks of the static strings names, once
 * (done: a static gsize, 0 at first): a name looked up per buffer takes
 * GLib's global quark lock, which every streaming thread shares. */
void gst_cudanms_quark_table (GQuark * quarks, const gchar * const *names,
    gint n, gsize * done);

/* Attaches kept box d, the index-th of its frame, as a
 * GstVideoRegionOfInterestMeta, with its "detection" param structure when
 * params is TRUE. */
void gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, guint index, gint frame_width, gint frame_height,
    gboolean params);

/**
 * GstCudanmsAttachMeta:
 * @GST_CUDANMS_ATTACH_META_ROI: one GstVideoRegionOfInterestMeta per box
 * @GST_CUDANMS_ATTACH_META_ANALYTICS: one GstAnalyticsODMtd per box, in the
 *   buffer's GstAnalyticsRelationMeta (builds with GStreamer >= 1.24)
 * @GST_CUDANMS_ATTACH_META_BOTH: both
 */
typedef enum
{
  GST_CUDANMS_ATTACH_META_ROI = 1,
  GST_CUDANMS_ATTACH_META_ANALYTICS = 2,
  GST_CUDANMS_ATTACH_META_BOTH = 3
} GstCudanmsAttachMeta;

#ifdef HAVE_GST_ANALYTICS
#define GST_CUDANMS_ATTACH_META_DEFAULT GST_CUDANMS_ATTACH_META_BOTH
#else
#define GST_CUDANMS_ATTACH_META_DEFAULT GST_CUDANMS_ATTACH_META_ROI
#endif

#define GST_TYPE_CUDANMS_ATTACH_META (gst_cudanms_attach_meta_get_type ())
GType gst_cudanms_attach_meta_get_type (void);
/* FALSE when which needs the analytics library this build lacks. */
gboolean gst_cudanms_attach_meta_available (GstCudanmsAttachMeta which);

/* Attaches the n kept boxes as which says: ROIs (ids 0..n-1, each with
 * its "detection" structure when roi_params is TRUE) and/or one
 * GstAnalyticsODMtd each (label quark, the ROI's x, y, w, h, the score as
 * confidence) in kept order. FALSE if the relation meta refused one. */
gboolean gst_cudanms_attach_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    gint frame_width, gint frame_height, GstCudanmsAttachMeta which,
    gboolean roi_params);

G_END_DECLS
#endif /* __GST_CUDANMS_OUTPUT_H__ */
