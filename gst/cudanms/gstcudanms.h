/* cudanms: decode a detector tensor, run exact greedy NMS, attach ROIs. */
#ifndef __GST_CUDANMS_H__
#define __GST_CUDANMS_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

/**
 * GstCudanmsLayout:
 * @GST_CUDANMS_LAYOUT_AUTO: detect the layout from the tensor dims
 * @GST_CUDANMS_LAYOUT_YOLOV5: [1, N, 5+C] (YOLOv5/v7)
 * @GST_CUDANMS_LAYOUT_YOLOV8: [1, 4+C, N] (YOLOv8/v11)
 * @GST_CUDANMS_LAYOUT_END2END: [1, K, 6], already suppressed
 */
typedef enum
{
  GST_CUDANMS_LAYOUT_AUTO,
  GST_CUDANMS_LAYOUT_YOLOV5,
  GST_CUDANMS_LAYOUT_YOLOV8,
  GST_CUDANMS_LAYOUT_END2END
} GstCudanmsLayout;

/**
 * GstCudanmsDevice:
 * @GST_CUDANMS_DEVICE_AUTO: CUDA when a device is present, else the CPU
 * @GST_CUDANMS_DEVICE_CUDA: CUDA only; fails to start without a device
 * @GST_CUDANMS_DEVICE_CPU: the exact CPU reference backend
 */
typedef enum
{
  GST_CUDANMS_DEVICE_AUTO,
  GST_CUDANMS_DEVICE_CUDA,
  GST_CUDANMS_DEVICE_CPU
} GstCudanmsDevice;

#define GST_TYPE_CUDANMS_LAYOUT (gst_cudanms_layout_get_type ())
GType gst_cudanms_layout_get_type (void);
#define GST_TYPE_CUDANMS_DEVICE (gst_cudanms_device_get_type ())
GType gst_cudanms_device_get_type (void);

#define GST_TYPE_CUDANMS (gst_cudanms_get_type ())
G_DECLARE_FINAL_TYPE (GstCudanms, gst_cudanms, GST, CUDANMS, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (cudanms);

G_END_DECLS
#endif /* __GST_CUDANMS_H__ */
