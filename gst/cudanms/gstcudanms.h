/* cudanms: decode a detector tensor, run exact greedy NMS, attach ROIs. */
#ifndef __GST_CUDANMS_H__
#define __GST_CUDANMS_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gstcudanmsenums.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDANMS (gst_cudanms_get_type ())
G_DECLARE_FINAL_TYPE (GstCudanms, gst_cudanms, GST, CUDANMS, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (cudanms);

G_END_DECLS
#endif /* __GST_CUDANMS_H__ */
