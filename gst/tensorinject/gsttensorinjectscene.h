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
  gboolean pose;                /* YOLOv8-pose [1, 4+1+K*3, N]: people as
                                 * skeletons of K = 17 COCO keypoints
                                 * (yolov5, obb and lanes FALSE;
                                 * num_classes is 1) */
  gboolean seg;                 /* YOLOv8-seg: detections [1, 4+C+M, N]
                                 * and prototypes [1, M, mh/4, mw/4],
                                 * M = 32; at most M objects (yolov5, obb,
                                 * lanes and pose FALSE) */
} GstTensorInjectSceneConfig;

/* Pose scenes: COCO's 17 keypoints, 3 values each (x, y, visibility). */
#define GST_TENSOR_INJECT_POSE_KEYPOINTS 17
#define GST_TENSOR_INJECT_POSE_VALUES 3
/* Segmentation scenes: M mask coefficients and prototypes, the
 * prototypes at 1/4 of the model size, their logits clamped to
 * [-GST_TENSOR_INJECT_SEG_CLAMP, GST_TENSOR_INJECT_SEG_CLAMP]. */
#define GST_TENSOR_INJECT_SEG_MASKS 32
#define GST_TENSOR_INJECT_SEG_PROTO_STRIDE 4
#define GST_TENSOR_INJECT_SEG_CLAMP 4.0

/* A segmentation object's shape. */
typedef enum
{
  GST_TENSOR_INJECT_SHAPE_ELLIPSE,
  GST_TENSOR_INJECT_SHAPE_RECTANGLE,
  GST_TENSOR_INJECT_SHAPE_DIAMOND
} GstTensorInjectShape;

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

/* Tensor dims ([1, 4+C, N], [1, N, 5+C], [1, 4+C+1, N], [1, N, 5+S],
 * [1, 4+1+17*3, N] or [1, 4+C+M, N]) and byte size: the detection tensor
 * (a segmentation scene's prototypes: gst_tensor_inject_scene_protos_*). */
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

/* Whether the scene is a pose one (YOLOv8-pose). */
gboolean gst_tensor_inject_scene_pose (const GstTensorInjectScene * scene);

/* Pose scenes: object (person) i's true keypoints at frame number frame,
 * kp[k] = x, y (model pixels), visibility in (0, 1), k in COCO's order
 * (nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles; left
 * before right). The person's best anchor (the one at its centre cell,
 * scoring its peak) holds exactly these (as floats) and exactly the box of
 * gst_tensor_inject_scene_object; its other anchors jitter them. FALSE
 * when the scene is not a pose one or i is not an object. */
gboolean gst_tensor_inject_scene_object_keypoints (const GstTensorInjectScene *
    scene, gint i, guint64 frame,
    gdouble kp[GST_TENSOR_INJECT_POSE_KEYPOINTS][3]);

/* Whether the scene is a segmentation one (YOLOv8-seg). */
gboolean gst_tensor_inject_scene_seg (const GstTensorInjectScene * scene);

/* Segmentation scenes: the prototypes tensor's dims [1, M, ph, pw] and
 * byte size (0 in other scenes), and frame number frame's prototypes
 * written into out: channel i < n_objects holds object i's logits
 * gst_tensor_inject_scene_object_logit at the centre of each prototype
 * pixel, ((px + 0.5) mw / pw, (py + 0.5) mh / ph) in model pixels; the
 * other channels -GST_TENSOR_INJECT_SEG_CLAMP. Each anchor of object i has
 * the one-hot coefficients e_i (1 at row 4 + C + i, 0 elsewhere), every
 * other anchor all zero coefficients. The best anchor of object i (its
 * centre cell, scoring its peak) holds exactly the box of
 * gst_tensor_inject_scene_object. */
void gst_tensor_inject_scene_protos_dims (const GstTensorInjectScene * scene,
    gint64 dims[4]);
gsize gst_tensor_inject_scene_protos_size (const GstTensorInjectScene * scene);
void gst_tensor_inject_scene_render_protos (const GstTensorInjectScene * scene,
    guint64 frame, guint8 * out);

/* Segmentation scenes: object i's shape, and its signed distance at model
 * point (x, y) at frame number frame: positive inside its true shape,
 * zero on its outline, negative outside, in model pixels (with
 * dx = x - cx, dy = y - cy, a = w / 2, b = h / 2 of its true box: ellipse
 * (1 - sqrt ((dx/a)^2 + (dy/b)^2)) min (a, b); rectangle
 * min (a - |dx|, b - |dy|); diamond (1 - |dx|/a - |dy|/b) a b /
 * sqrt (a^2 + b^2)). Its logit is that divided by the prototype stride
 * mw / pw, clamped to +-GST_TENSOR_INJECT_SEG_CLAMP, as a float. The
 * object's true mask is where the distance is > 0. */
GstTensorInjectShape gst_tensor_inject_scene_object_shape (const
    GstTensorInjectScene * scene, gint i);
gdouble gst_tensor_inject_scene_object_distance (const GstTensorInjectScene *
    scene, gint i, guint64 frame, gdouble x, gdouble y);
gfloat gst_tensor_inject_scene_object_logit (const GstTensorInjectScene *
    scene, gint i, guint64 frame, gdouble x, gdouble y);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_SCENE_H__ */
