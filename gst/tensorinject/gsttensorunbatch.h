/* tensorunbatch: batch buffers (GstAnalyticsBatchMeta, GStreamer >= 1.28)
 * split back into their streams; see gsttensorunbatch.c. */
#ifndef __GST_TENSOR_UNBATCH_H__
#define __GST_TENSOR_UNBATCH_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_UNBATCH (gst_tensor_unbatch_get_type ())
G_DECLARE_FINAL_TYPE (GstTensorUnbatch, gst_tensor_unbatch, GST,
    TENSOR_UNBATCH, GstElement);

GST_ELEMENT_REGISTER_DECLARE (tensorunbatch);

G_END_DECLS

#endif
