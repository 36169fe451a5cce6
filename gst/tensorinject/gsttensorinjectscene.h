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
  gboolean lanes;               /* LaneATT proposals [1, N, 5+S] of a road
                                 * of 2-4 lanes (yolov5 and obb FALSE;
                                 * num_classes, num_objects and noise are
                                 * not used) */
} GstTensorInjectSceneConfig;

/* A lane scene's tensor: S rows (x offsets) and N proposals. */
#define GST_TENSOR_INJECT_LANE_ROWS 72
#define GST_TENSOR_INJECT_LANE_PROPOSALS 1000
/* A true lane's proposals: x within this many model pixels of the lane's
 * x at each of its rows. */
#define GST_TENSOR_INJECT_LANE_JITTER 3.0

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

/* Whether the scene is a lane one (LaneATT proposals). */
gboolean gst_tensor_inject_scene_lanes (const GstTensorInjectScene * scene);

/* Lane scenes: the true lanes (0..n-1; 0 in other scenes). */
gint gst_tensor_inject_scene_n_lanes (const GstTensorInjectScene * scene);

/* Lane i at frame number frame: x[r] its x in model pixels at row r (S
 * rows, row r at y = (S - 1 - r) / (S - 1) of the model height, row 0 at
 * the bottom), for every row; the lane runs over rows 0 .. *end (it stops
 * below the horizon). Its proposals sit at tensor rows first[0] ..
 * first[n - 1] (*n of them, at most 8; may be NULL), the first of them its
 * best one: logits (0, 4 + 0.1 u), start_y 0, length *end + 1, start_x
 * x[0], x jittered by less than GST_TENSOR_INJECT_LANE_JITTER. FALSE when i
 * is not a lane. */
gboolean gst_tensor_inject_scene_lane (const GstTensorInjectScene * scene,
    gint i, guint64 frame, gdouble x[GST_TENSOR_INJECT_LANE_ROWS], gint * end,
    gint first[8], gint * n);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_SCENE_H__ */
