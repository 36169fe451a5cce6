/* cudanms: what the element tells the user about its input, and what it
 * counts.
 *
 * Every problem with the input is posted once per stream as an element
 * warning, per kind of problem (a bad tensor's message with its numbers
 * left out is its kind), then only logged; every buffer, candidate and
 * detection is counted, and the counts are read through the read-only
 * "stats" property. */
#ifndef __GST_CUDANMS_STATS_H__
#define __GST_CUDANMS_STATS_H__

#include <gst/gst.h>
#include "cudanms.h"
#include "gstcudanmslabels.h"

G_BEGIN_DECLS

/* Counters since the element started (READY -> PAUSED); under the
 * element's object lock. */
typedef struct
{
  guint64 buffers;              /* buffers seen */
  guint64 no_tensor;            /* of them without a detection tensor */
  guint64 bad_tensor;           /* of them with a bad tensor */
  guint64 candidates;           /* candidates found, before max-candidates */
  guint64 candidates_dropped;   /* of them beyond max-candidates */
  guint64 capped;               /* buffers with more than max-candidates */
  guint64 detections;           /* kept boxes attached */
  guint64 scores_above_one;     /* buffers with a kept score above 1 */
  guint64 invalid_classes;      /* end2end rows dropped for their class */
  guint64 fractional_classes;   /* end2end rows with a fractional class */
  guint64 unlabelled;           /* detections without a label-file line */
  guint64 lanes_without_points; /* kept lanes not returned: < 2 points */
  guint64 other_context;        /* buffers whose tensor was GstCudaMemory of
                                 * another CUDA context than the element's */
  guint64 batches;              /* batch buffers (GstAnalyticsBatchMeta):
                                 * each of their frames is a buffer above */
  guint64 batch_other;          /* objects of a batch that are no buffer
                                 * (events, buffer lists): passed */
  guint64 backend_ns;           /* time in the backend's decode + NMS call */
  guint64 output_ns;            /* time attaching the metas */
} GstCudanmsCounters;

/* A batch's stream (by its index in the GstAnalyticsBatchMeta). */
typedef struct
{
  guint64 frames;               /* its frames seen */
  guint64 no_tensor;            /* of them without a detection tensor */
  guint64 bad_tensor;           /* of them with a bad one */
  guint64 detections;           /* kept boxes attached to them */
} GstCudanmsStreamCounters;

/* The most streams counted one by one (a larger index is not). */
#define GST_CUDANMS_STATS_MAX_STREAMS 1024

typedef struct
{
  GstCudanmsCounters c;
  GArray *streams;              /* GstCudanmsStreamCounters by stream index,
                                 * under the object lock */
  /* kinds of problem posted in this stream (streaming thread only) */
  GHashTable *warned;
} GstCudanmsStats;

void gst_cudanms_stats_init (GstCudanmsStats * stats);
void gst_cudanms_stats_clear (GstCudanmsStats * stats);
/* start(): zero the counters (takes the object lock), forget what was
 * posted. */
void gst_cudanms_stats_start (GstElement * element, GstCudanmsStats * stats);
/* A new stream (STREAM_START): problems are posted once more. */
void gst_cudanms_stats_new_stream (GstCudanmsStats * stats);

/* Installs the read-only "stats" property. */
void gst_cudanms_stats_install_property (GObjectClass * klass, guint prop_id);
/* The counters as a "cudanms-stats" structure; the caller holds the
 * object lock. */
GstStructure *gst_cudanms_stats_to_structure (const GstCudanmsStats * stats);

/* A batch buffer: its objects that are no buffer (passed untouched). */
void gst_cudanms_stats_batch (GstElement * element, GstCudanmsStats * stats,
    guint other);

/* A frame of a batch's stream index: no_tensor, bad, or its detections. */
void gst_cudanms_stats_stream (GstElement * element, GstCudanmsStats * stats,
    guint index, gboolean no_tensor, gboolean bad, guint64 detections);

/* A buffer passes without ROIs: no tensor (missing) or a bad one; msg says
 * why. Counts it and posts it once per stream and kind. */
void gst_cudanms_stats_problem (GstElement * element, GstCudanmsStats * stats,
    gboolean missing, const gchar * msg);

/* A decoded frame: what cnms_detect reported of the tensor (shape,
 * candidates before and after the cap, row counts), decoded as layout (the
 * one asked for) under p, n_dets kept boxes dets named by labels; tensor
 * only for its dims in a message. Counts it and posts once per stream:
 * candidates over max-candidates (how many were dropped), kept scores
 * above 1 (naming the layout the tensor probably has), end2end rows with
 * an invalid or fractional class, classes without a line in the label
 * file. Nothing is decoded again: host and device tensors alike. */
void gst_cudanms_stats_frame (GstElement * element, GstCudanmsStats * stats,
    const cnms_report * report, const cnms_tensor * tensor,
    cnms_layout layout, const cnms_params * p, const cnms_det * dets,
    gint n_dets, GstCudanmsLabels * labels);
/* n lanes NMS kept (layout laneatt) had fewer than 2 points in the frame
 * and were not returned (cnms_report.lanes_without_points): counts them
 * and posts it once per stream. */
void gst_cudanms_stats_lanes_without_points (GstElement * element,
    GstCudanmsStats * stats, gint n);
/* A buffer's tensor (or prototypes) was GstCudaMemory of tensor_context,
 * another GstCudaContext than the element's element_context, and was read
 * through a host copy: counts it, and posts once per stream an element
 * warning naming both contexts' devices. */
void gst_cudanms_stats_other_context (GstElement * element,
    GstCudanmsStats * stats, GObject * element_context,
    GObject * tensor_context);
/* Adds a decoded frame's times (nanoseconds, monotonic clock): the
 * backend's call, and the attaching of its metas. */
void gst_cudanms_stats_times (GstElement * element, GstCudanmsStats * stats,
    GstClockTime backend, GstClockTime output);

G_END_DECLS
#endif /* __GST_CUDANMS_STATS_H__ */
