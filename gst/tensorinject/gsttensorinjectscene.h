/* A seeded synthetic scene rendered as raw YOLO output tensors. */
#ifndef __GST_TENSOR_INJECT_SCENE_H__
#define __GST_TENSOR_INJECT_SCENE_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean yolov5;              /* else yolov8 */
  gint num_classes;
  gint model_width;
  gint model_height;
  cnms_dtype dtype;
  guint64 seed;
  gint num_objects;
  guint noise;                  /* background anchors scoring above 0.05 */
} GstTensorInjectSceneConfig;

typedef struct _GstTensorInjectScene GstTensorInjectScene;

/* Precomputes the static background tensor and the objects' tracks. */
GstTensorInjectScene *gst_tensor_inject_scene_new (const GstTensorInjectSceneConfig * cfg);
void gst_tensor_inject_scene_free (GstTensorInjectScene * scene);

/* Tensor dims ([1, 4+C, N] or [1, N, 5+C]) and byte size. */
void gst_tensor_inject_scene_dims (const GstTensorInjectScene * scene,
    gint64 dims[3]);
gsize gst_tensor_inject_scene_size (const GstTensorInjectScene * scene);

/* Writes frame number frame's tensor into out (size bytes). */
void gst_tensor_inject_scene_render (const GstTensorInjectScene * scene,
    guint64 frame, guint8 * out);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_SCENE_H__ */
