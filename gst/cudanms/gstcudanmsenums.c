/* cudanms: the GTypes of the element's enums (see gstcudanmsenums.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanmsenums.h"

GType
gst_cudanms_layout_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_LAYOUT_AUTO, "Detect from the tensor dims", "auto"},
    {GST_CUDANMS_LAYOUT_YOLOV5, "YOLOv5/v7 [1, N, 5+C]", "yolov5"},
    {GST_CUDANMS_LAYOUT_YOLOV8, "YOLOv8/v11 [1, 4+C, N]", "yolov8"},
    {GST_CUDANMS_LAYOUT_END2END, "End-to-end [1, K, 6], decode only",
        "end2end"},
    {GST_CUDANMS_LAYOUT_YOLOV8_OBB, "YOLOv8/v11-OBB [1, 4+C+1, N], oriented "
          "boxes (cx cy w h, classes, angle)", "yolov8-obb"},
    {GST_CUDANMS_LAYOUT_LANEATT, "LaneATT [1, N, 5+S], lane proposals (2 "
          "logits, start_y, start_x, length, S x offsets)", "laneatt"},
    {GST_CUDANMS_LAYOUT_YOLOV8_POSE, "YOLOv8/v11-pose [1, 4+1+K*D, N], "
          "keypoints (cx cy w h, person score, K keypoints of D values)",
        "yolov8-pose"},
    {GST_CUDANMS_LAYOUT_YOLOV8_SEG, "YOLOv8/v11-seg [1, 4+C+M, N] with "
          "prototypes [1, M, Hp, Wp], instance masks", "yolov8-seg"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsLayout", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cudanms_device_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_DEVICE_AUTO, "Per buffer: a device tensor on CUDA, a host "
          "tensor on the faster backend", "auto"},
    {GST_CUDANMS_DEVICE_CUDA, "CUDA only", "cuda"},
    {GST_CUDANMS_DEVICE_CPU, "CPU reference backend", "cpu"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsDevice", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

const gchar *
gst_cudanms_attach_meta_nick (GstCudanmsAttachMeta which)
{
  switch (which) {
    case GST_CUDANMS_ATTACH_META_ROI:
      return "roi";
    case GST_CUDANMS_ATTACH_META_ANALYTICS:
      return "analytics";
    case GST_CUDANMS_ATTACH_META_BOTH:
      return "both";
    default:
      return "unknown";
  }
}

GType
gst_cudanms_attach_meta_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_ATTACH_META_ROI, "GstVideoRegionOfInterestMeta per box",
        "roi"},
    {GST_CUDANMS_ATTACH_META_ANALYTICS,
        "GstAnalyticsODMtd per box in a GstAnalyticsRelationMeta (>= 1.24)",
        "analytics"},
    {GST_CUDANMS_ATTACH_META_BOTH, "Both", "both"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsAttachMeta", values);
    g_once_init_leave (&type, t);
  }
  return type;
}
