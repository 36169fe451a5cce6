/* cudanms: decode a detector tensor, run exact greedy NMS, attach ROIs. */
#ifndef __GST_CUDANMS_H__
#define __GST_CUDANMS_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gstcudanmsenums.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDANMS (gst_cudanms_get_type ())
#define GST_CUDANMS(obj) \
    (G_TYPE_CHECK_INSTANCE_CAST ((obj), GST_TYPE_CUDANMS, GstCudanms))
#define GST_IS_CUDANMS(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), GST_TYPE_CUDANMS))
#define GST_CUDANMS_GET_CLASS(obj) \
    (G_TYPE_INSTANCE_GET_CLASS ((obj), GST_TYPE_CUDANMS, GstCudanmsClass))

/* The instance is private to gstcudanms.c; a subclass takes its size from
 * g_type_query(). */
typedef struct _GstCudanms GstCudanms;
typedef struct _GstCudanmsClass GstCudanmsClass;

struct _GstCudanmsClass
{
  GstBaseTransformClass parent_class;

  /*< private >*/
  /* What an element does with a buffer's tensors where a tensor decoder
   * (gst_cudanms_class_make_tensor_decoder) does otherwise. */

  /* The layout to decode the tensor of tensor_id with, found under the
   * layout property layout and read as found (layout, or under auto its
   * id's). cudanms: found. A tensor decoder reads GStreamer's
   * segmentation detections under auto whole, with their prototypes
   * (yolov8-seg). Another layout than found reads the tensor of
   * tensor_id again, as it. */
  GstCudanmsLayout (*decode_layout) (GstCudanms * self,
      const gchar * tensor_id, GstCudanmsLayout layout,
      GstCudanmsLayout found);
  /* Called once buffer's tensor (and its prototypes, if any) was decoded,
   * buffer writable. cudanms: NULL, the tensors stay. A tensor decoder
   * takes them off the buffer. */
  void (*tensors_decoded) (GstCudanms * self, GstBuffer * buffer);
};

GType gst_cudanms_get_type (void);

/* For a subclass's class_init: makes it a tensor decoder, the element
 * tensordecodebin (GStreamer >= 1.28) picks from the caps. The tensor it
 * decodes is taken off the buffer's GstTensorMeta, so that no decoder
 * chained after it decodes that tensor again; model-size defaults to NULL
 * (the boxes are in the frame's pixels, as an inference element fed the
 * model the frame itself) and letterbox to FALSE. Everything else is
 * cudanms's. */
void gst_cudanms_class_make_tensor_decoder (GstCudanmsClass * klass);

GST_ELEMENT_REGISTER_DECLARE (cudanms);

G_END_DECLS
#endif /* __GST_CUDANMS_H__ */
