/* cudanms: the GTypes of the element's enums (see gstcudanmsenums.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanmsenums.h"

/* every layout of the library, and only those */
G_STATIC_ASSERT (GST_CUDANMS_LAYOUT_YOLOV8_SEG + 1 == CNMS_N_LAYOUTS);

GType
gst_cudanms_layout_get_type (void)
{
  static GType type = 0;
  /* the library's table, value for value, and the terminating zeros */
  static GEnumValue values[CNMS_N_LAYOUTS + 1];

  if (g_once_init_enter (&type)) {
    GType t;
    gint l;

    for (l = 0; l < CNMS_N_LAYOUTS; l++) {
      const cnms_layout_desc *desc = cnms_layout_info ((cnms_layout) l);

      g_assert (desc != NULL && (gint) desc->layout == l);
      values[l].value = l;
      values[l].value_name = desc->description;
      values[l].value_nick = desc->name;
    }
    t = g_enum_register_static ("GstCudanmsLayout", values);
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

GType
gst_cudanms_merge_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_MERGE_GREEDY_NMM, "SAHI's greedy NMM: a kept box absorbs "
          "the boxes that match it", "greedy-nmm"},
    {GST_CUDANMS_MERGE_NMM, "SAHI's NMM: transitive merging", "nmm"},
    {GST_CUDANMS_MERGE_NMS, "SAHI's NMS: suppression, no merging", "nms"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsMerge", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cudanms_merge_metric_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_MERGE_METRIC_IOS, "Intersection over the smaller area",
        "ios"},
    {GST_CUDANMS_MERGE_METRIC_IOU, "Intersection over union", "iou"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsMergeMetric", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cudanms_merge_rules_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDANMS_MERGE_RULES_SAHI, "SAHI's rules, as its code runs them",
        "sahi"},
    {GST_CUDANMS_MERGE_RULES_CONSISTENT, "One precision and one comparison, "
          "nothing lost", "consistent"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudanmsMergeRules", values);
    g_once_init_leave (&type, t);
  }
  return type;
}
