/* cudanmstensordec: cudanms as a tensor decoder, the element GStreamer
 * 1.28's tensordecodebin picks from the caps (gstcudanmstensordec.c).
 * Only in builds with 1.28's tensor caps (HAVE_GST_TENSOR_CAPS). */
#ifndef __GST_CUDANMS_TENSOR_DEC_H__
#define __GST_CUDANMS_TENSOR_DEC_H__

#include "gstcudanms.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDANMS_TENSOR_DEC (gst_cudanms_tensor_dec_get_type ())

/* A subclass of GstCudanms that adds nothing to its instance. */
GType gst_cudanms_tensor_dec_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudanmstensordec);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_DEC_H__ */
