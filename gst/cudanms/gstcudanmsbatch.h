/* cudanms: the frames of a batch (GStreamer >= 1.28's GstAnalyticsBatchMeta,
 * caps multistream/x-analytics-batch(meta:GstAnalyticsBatchMeta)): every
 * buffer among each stream's objects is a frame, of its stream's size (its
 * sticky caps), with its own detection tensor, or frame i of a [B, ...]
 * tensor on the batch buffer itself (B the frames in stream order). */
#ifndef __GST_CUDANMS_BATCH_H__
#define __GST_CUDANMS_BATCH_H__

#include <gst/gst.h>
#include "cudanms.h"
#include "gsttensormeta.h"

G_BEGIN_DECLS

/* Whether caps are a batch's (multistream/x-analytics-batch). */
gboolean gst_cudanms_caps_are_batch (const GstCaps * caps);

#ifdef HAVE_GST_BATCH_META
#include <gst/analytics/analytics.h>

typedef struct
{
  GstMiniObject **slot;         /* the frame buffer's place among its
                                 * stream's objects */
  guint stream;                 /* its stream's index in the meta */
  gint width, height;           /* its stream's frame size; 0: none known */
  GstCudanmsTensorView view;    /* its detection tensor, */
  GstCudanmsTensorView protos;  /* and yolov8-seg's prototypes */
  GstCudanmsTensorLookup lookup;
} GstCudanmsBatchFrame;

typedef struct
{
  GstCudanmsBatchFrame *frames;
  guint n_frames, cap;
  cnms_frame *cframes;          /* cap: the frames handed to the library */
  guint *index;                 /* cap: the frame of each of them */
  guint n_other;                /* objects that are no buffer (events,
                                 * buffer lists): passed untouched */
  guint n_unsized;              /* frames of a stream without video caps */
  GstCudanmsTensorView batch_view;      /* a [B, ...] tensor on the batch
                                         * buffer */
  GstCudanmsTensorView batch_protos;
} GstCudanmsBatch;

void gst_cudanms_batch_init (GstCudanmsBatch * b);
void gst_cudanms_batch_clear (GstCudanmsBatch * b);
/* Collects the frames of meta in stream order (their views not yet
 * acquired, device_context set on them); FALSE when memory fails. */
gboolean gst_cudanms_batch_collect (GstCudanmsBatch * b,
    GstAnalyticsBatchMeta * meta, GstObject * device_context);
/* Releases every view of the last batch. */
void gst_cudanms_batch_release (GstCudanmsBatch * b);
#endif

G_END_DECLS
#endif /* __GST_CUDANMS_BATCH_H__ */
