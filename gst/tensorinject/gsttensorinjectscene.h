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
  gboolean obb;                 /* YOLOv8-OBB [1, 4+C+1, N]: rotated objects
                                 * (yolov5 must be FALSE) */
} GstTensorInjectSceneConfig;

typedef struct _GstTensorInjectScene GstTensorInjectScene;

/* Precomputes the static background tensor and the objects' tracks. */
GstTensorInjectScene *gst_tensor_inject_scene_new (const GstTensorInjectSceneConfig * cfg);
void gst_tensor_inject_scene_free (GstTensorInjectScene * scene);

/* Tensor dims ([1, 4+C, N], [1, N, 5+C] or [1, 4+C+1, N]) and byte size. */
void gst_tensor_inject_scene_dims (const GstTensorInjectScene * scene,
    gint64 dims[3]);
gsize gst_tensor_inject_scene_size (const GstTensorInjectScene * scene);

/* Writes frame number frame's tensor into out (size bytes). */
void gst_tensor_inject_scene_render (const GstTensorInjectScene * scene,
    guint64 frame, guint8 * out);

/* The scene's objects, 0..n-1, and the model input size (model pixels). */
gint gst_tensor_inject_scene_n_objects (const GstTensorInjectScene * scene);
void gst_tensor_inject_scene_model_size (const GstTensorInjectScene * scene,
    gint * width, gint * height);

/* Object i's true box at frame number frame, in model pixels: box = cx cy
 * w h, the centre the scene moves and the object's size (its anchors in
 * the tensor jitter about these), and its class (the first, when it also
 * scores a second one). FALSE when i is not an object. */
gboolean gst_tensor_inject_scene_object (const GstTensorInjectScene * scene,
    gint i, guint64 frame, gdouble box[4], gint * class_id);

/* Whether the scene is a YOLOv8-OBB one (rotated objects). */
gboolean gst_tensor_inject_scene_oriented (const GstTensorInjectScene * scene);

/* Object i's angle at frame number frame, radians in [-pi/4, 3pi/4) (as
 * ultralytics' OBB models give it): its w side runs along (cos, sin) in
 * model pixels (y down), about the centre of gst_tensor_inject_scene_object;
 * it turns at a constant rate. 0 in a scene that is not oriented, or when
 * i is not an object. */
gdouble gst_tensor_inject_scene_object_angle (const GstTensorInjectScene *
    scene, gint i, guint64 frame);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_SCENE_H__ */
