/* tensorbatch: the frames of several streams as batch buffers
 * (GstAnalyticsBatchMeta, GStreamer >= 1.28); see gsttensorbatch.c. */
#ifndef __GST_TENSOR_BATCH_H__
#define __GST_TENSOR_BATCH_H__

#include <gst/base/gstaggregator.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_BATCH (gst_tensor_batch_get_type ())
G_DECLARE_FINAL_TYPE (GstTensorBatch, gst_tensor_batch, GST, TENSOR_BATCH,
    GstAggregator);

GST_ELEMENT_REGISTER_DECLARE (tensorbatch);

G_END_DECLS

#endif
