/* tensorinject: attaches a detection tensor to each video buffer, from .npy
 * files or from a seeded synthetic scene. The stand-in for an upstream
 * inference element in tests, the demo and benchmarks. */
#ifndef __GST_TENSOR_INJECT_H__
#define __GST_TENSOR_INJECT_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

/**
 * GstTensorInjectLayout:
 * @GST_TENSOR_INJECT_LAYOUT_YOLOV5: [1, N, 5+C], N = 3 anchors per cell
 * @GST_TENSOR_INJECT_LAYOUT_YOLOV8: [1, 4+C, N]
 * @GST_TENSOR_INJECT_LAYOUT_YOLOV8_OBB: [1, 4+C+1, N], rotated objects
 *   (cx cy w h, C class scores, the angle in radians)
 * @GST_TENSOR_INJECT_LAYOUT_LANEATT: [1, N, 5+S], LaneATT lane proposals
 *   (N = 1000, S = 72) of a road of 2-4 lanes
 * @GST_TENSOR_INJECT_LAYOUT_YOLOV8_POSE: [1, 4+1+17*3, N], people as COCO
 *   skeletons (cx cy w h, the person score, 17 keypoints x y visibility)
 * @GST_TENSOR_INJECT_LAYOUT_YOLOV8_SEG: detections [1, 4+C+32, N] and
 *   prototypes [1, 32, H/4, W/4] of shapes whose masks are known
 */
typedef enum
{
  GST_TENSOR_INJECT_LAYOUT_YOLOV5,
  GST_TENSOR_INJECT_LAYOUT_YOLOV8,
  GST_TENSOR_INJECT_LAYOUT_YOLOV8_OBB,
  GST_TENSOR_INJECT_LAYOUT_LANEATT,
  GST_TENSOR_INJECT_LAYOUT_YOLOV8_POSE,
  GST_TENSOR_INJECT_LAYOUT_YOLOV8_SEG
} GstTensorInjectLayout;

/**
 * GstTensorInjectDataType:
 * @GST_TENSOR_INJECT_DATA_TYPE_FLOAT32: 32-bit floats
 * @GST_TENSOR_INJECT_DATA_TYPE_FLOAT16: IEEE half floats
 */
typedef enum
{
  GST_TENSOR_INJECT_DATA_TYPE_FLOAT32,
  GST_TENSOR_INJECT_DATA_TYPE_FLOAT16
} GstTensorInjectDataType;

/**
 * GstTensorInjectMemory:
 * @GST_TENSOR_INJECT_MEMORY_SYSTEM: the tensor's bytes in system memory
 * @GST_TENSOR_INJECT_MEMORY_CUDA: in GstCudaMemory of the pipeline's CUDA
 *   context, as a GPU inference element leaves its output
 */
typedef enum
{
  GST_TENSOR_INJECT_MEMORY_SYSTEM,
  GST_TENSOR_INJECT_MEMORY_CUDA
} GstTensorInjectMemory;

#define GST_TYPE_TENSOR_INJECT_MEMORY (gst_tensor_inject_memory_get_type ())
GType gst_tensor_inject_memory_get_type (void);

#define GST_TYPE_TENSOR_INJECT_LAYOUT (gst_tensor_inject_layout_get_type ())
GType gst_tensor_inject_layout_get_type (void);
#define GST_TYPE_TENSOR_INJECT_DATA_TYPE (gst_tensor_inject_data_type_get_type ())
GType gst_tensor_inject_data_type_get_type (void);

#define GST_TYPE_TENSOR_INJECT (gst_tensor_inject_get_type ())
G_DECLARE_FINAL_TYPE (GstTensorInject, gst_tensor_inject, GST, TENSOR_INJECT,
    GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (tensorinject);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_H__ */
