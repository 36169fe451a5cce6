/* cudanms: the element's enums (layout, device, attach-meta) and their
 * GTypes. */
#ifndef __GST_CUDANMS_ENUMS_H__
#define __GST_CUDANMS_ENUMS_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

/**
 * GstCudanmsLayout:
 * @GST_CUDANMS_LAYOUT_AUTO: detect the layout from the tensor dims
 * @GST_CUDANMS_LAYOUT_YOLOV5: [1, N, 5+C] (YOLOv5/v7)
 * @GST_CUDANMS_LAYOUT_YOLOV8: [1, 4+C, N] (YOLOv8/v11)
 * @GST_CUDANMS_LAYOUT_END2END: [1, K, 6], already suppressed
 * @GST_CUDANMS_LAYOUT_YOLOV8_OBB: [1, 4+C+1, N] (YOLOv8/v11-OBB): oriented
 *   boxes, cx cy w h, C class scores, the angle in radians
 * @GST_CUDANMS_LAYOUT_LANEATT: [1, N, 5+S] or [N, 5+S] (LaneATT): lane
 *   proposals, 2 logits, start_y, start_x, length, S x offsets
 * @GST_CUDANMS_LAYOUT_YOLOV8_POSE: [1, 4+1+K*D, N] (YOLOv8/v11-pose): one
 *   person score, K keypoints of D values (keypoint-dims)
 * @GST_CUDANMS_LAYOUT_YOLOV8_SEG: [1, 4+C+M, N] (YOLOv8/v11-seg) with the
 *   prototypes [1, M, Hp, Wp]: instance masks
 *
 * The library's layouts (cnms_layout), value for value: the GType's names
 * and nicks are cnms_layout_info()'s descriptions and names.
 */
typedef enum
{
  GST_CUDANMS_LAYOUT_AUTO = CNMS_LAYOUT_AUTO,
  GST_CUDANMS_LAYOUT_YOLOV5 = CNMS_LAYOUT_YOLOV5,
  GST_CUDANMS_LAYOUT_YOLOV8 = CNMS_LAYOUT_YOLOV8,
  GST_CUDANMS_LAYOUT_END2END = CNMS_LAYOUT_END2END,
  GST_CUDANMS_LAYOUT_YOLOV8_OBB = CNMS_LAYOUT_YOLOV8_OBB,
  GST_CUDANMS_LAYOUT_LANEATT = CNMS_LAYOUT_LANEATT,
  GST_CUDANMS_LAYOUT_YOLOV8_POSE = CNMS_LAYOUT_YOLOV8_POSE,
  GST_CUDANMS_LAYOUT_YOLOV8_SEG = CNMS_LAYOUT_YOLOV8_SEG
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

#define GST_TYPE_CUDANMS_LAYOUT (gst_cudanms_layout_get_type ())
GType gst_cudanms_layout_get_type (void);
#define GST_TYPE_CUDANMS_DEVICE (gst_cudanms_device_get_type ())
GType gst_cudanms_device_get_type (void);
#define GST_TYPE_CUDANMS_ATTACH_META (gst_cudanms_attach_meta_get_type ())
GType gst_cudanms_attach_meta_get_type (void);

/**
 * GstCudanmsMerge:
 * @GST_CUDANMS_MERGE_GREEDY_NMM: SAHI's GREEDYNMM (its default)
 * @GST_CUDANMS_MERGE_NMM: SAHI's NMM (transitive merging)
 * @GST_CUDANMS_MERGE_NMS: SAHI's NMS (suppression, no merging)
 *
 * How the slices' detections of a frame merge (cnms_merge_rule).
 */
typedef enum
{
  GST_CUDANMS_MERGE_GREEDY_NMM = CNMS_MERGE_GREEDY_NMM,
  GST_CUDANMS_MERGE_NMM = CNMS_MERGE_NMM,
  GST_CUDANMS_MERGE_NMS = CNMS_MERGE_NMS
} GstCudanmsMerge;

#define GST_TYPE_CUDANMS_MERGE (gst_cudanms_merge_get_type ())
GType gst_cudanms_merge_get_type (void);

/**
 * GstCudanmsMergeMetric:
 * @GST_CUDANMS_MERGE_METRIC_IOS: intersection over the smaller area
 * @GST_CUDANMS_MERGE_METRIC_IOU: intersection over union
 *
 * How two of the slices' detections match (cnms_match_metric).
 */
typedef enum
{
  GST_CUDANMS_MERGE_METRIC_IOS = CNMS_MATCH_IOS,
  GST_CUDANMS_MERGE_METRIC_IOU = CNMS_MATCH_IOU
} GstCudanmsMergeMetric;

#define GST_TYPE_CUDANMS_MERGE_METRIC (gst_cudanms_merge_metric_get_type ())
GType gst_cudanms_merge_metric_get_type (void);

/**
 * GstCudanmsMergeRules:
 * @GST_CUDANMS_MERGE_RULES_SAHI: SAHI's rules, as its code runs them
 * @GST_CUDANMS_MERGE_RULES_CONSISTENT: one precision and one comparison,
 *   nothing lost (cnms_merge_rules)
 */
typedef enum
{
  GST_CUDANMS_MERGE_RULES_SAHI = CNMS_MERGE_RULES_SAHI,
  GST_CUDANMS_MERGE_RULES_CONSISTENT = CNMS_MERGE_RULES_CONSISTENT
} GstCudanmsMergeRules;

#define GST_TYPE_CUDANMS_MERGE_RULES (gst_cudanms_merge_rules_get_type ())
GType gst_cudanms_merge_rules_get_type (void);
/* The property's name of a value ("roi", "analytics", "both"). */
const gchar *gst_cudanms_attach_meta_nick (GstCudanmsAttachMeta which);

G_END_DECLS
#endif /* __GST_CUDANMS_ENUMS_H__ */
