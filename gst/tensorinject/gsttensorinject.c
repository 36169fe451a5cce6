/* tensorinject: attaches a detection tensor to each video buffer.
 *
 * This library is free software; you can redistribute it and/or modify it
 * under the terms of the GNU Lesser General Public License, version 2.1 or
 * later.
 */

/**
 * SECTION:element-tensorinject
 * @title: tensorinject
 *
 * Stands in for an upstream inference element: attaches one
 * "CudanmsTensorMeta" tensor to each video buffer. With #GstTensorInject:location
 * it replays .npy files (float32 or float16, C order); a "%d" in the path
 * is replaced by the frame number counted from 0, otherwise the one file
 * is attached to every buffer. Without a location it renders a seeded
 * synthetic scene of moving objects as a raw YOLOv8 or YOLOv5 output: each
 * object yields a cluster of 10-60 overlapping anchors with jittered boxes
 * and graded scores, on top of low-score background noise. With
 * layout=yolov8-obb the objects also turn, and the output is a YOLOv8-OBB
 * one (an angle row after the classes); give it tensor-id=yolo-v8-obb-out
 * for cudanms's layout=auto to read it as oriented boxes. With
 * layout=laneatt it renders LaneATT lane proposals [1, 1000, 77] of a road
 * of 2-4 slowly swaying lanes (model 640x360, tensor id
 * "laneatt-proposals" unless set). With layout=yolov8-pose it renders a
 * YOLOv8-pose output [1, 56, N] of people as COCO skeletons (17 keypoints
 * with visibility); with layout=yolov8-seg a YOLOv8-seg output, two
 * tensors: detections [1, 4+C+32, N] (id
 * "yolo-v8-segmentation-out-detections" unless set) and prototypes
 * [1, 32, H/4, W/4] ("yolo-v8-segmentation-out-protos"), that encode
 * ellipses, rectangles and diamonds whose masks are known. The same seed
 * gives the same tensors. With #GstTensorInject:draw-objects the objects
 * are also painted into the video frames, where cudanms will box them.
 *
 * With GStreamer >= 1.28 the source caps also describe the attached
 * tensors, as 1.28's inference elements do: a "tensors" field with one
 * group named after the tensor id (the segmentation pair with GStreamer's
 * ids: "yolo-v8-segmentation-out") of "tensor/strided" descriptions (id,
 * dims, dims-order row-major, type); a "%d" replay gives frame 0's rank
 * with dynamic dims (0). tensordecodebin picks its decoder from them.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! tensorinject seed=7 num-objects=4 ! cudanms ! fakesink
 * ]| Feeds 30 frames of a synthetic four-object scene into cudanms.
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,format=BGRx ! tensorinject seed=7 draw-objects=true ! cudanms ! fakesink
 * ]| The same with the objects drawn into the frames.
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=BGRx,width=640,height=640 ! tensorinject tensor-id=yolo-v8-out draw-objects=true ! tensordecodebin ! objectdetectionoverlay ! videoconvert ! autovideosink
 * ]| GStreamer 1.28: tensordecodebin decodes the scene (cudanmstensordec).
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>

#include "cudanms_static.h"
#include "gsttensorinject.h"
#include "gsttensorinjectcuda.h"
#include "gsttensorinjectdraw.h"
#include "gsttensorinjectnpy.h"
#include "gsttensorinjectscene.h"
#include "gsttensorinjecttiles.h"

GST_DEBUG_CATEGORY_STATIC (gst_tensor_inject_debug);
#define GST_CAT_DEFAULT gst_tensor_inject_debug

/* The tensor meta of cudanms's input contract (see its README). */
#define TENSOR_META_NAME "CudanmsTensorMeta"

#define DEFAULT_PROP_LOCATION NULL
#define DEFAULT_PROP_TENSOR_ID "detections"
#define DEFAULT_PROP_LAYOUT GST_TENSOR_INJECT_LAYOUT_YOLOV8
#define DEFAULT_PROP_NUM_CLASSES 80
#define DEFAULT_PROP_MODEL_SIZE "640x640"
#define DEFAULT_PROP_DATA_TYPE GST_TENSOR_INJECT_DATA_TYPE_FLOAT32
#define DEFAULT_PROP_SEED 0
#define DEFAULT_PROP_NUM_OBJECTS 6
#define DEFAULT_PROP_NOISE 200
#define DEFAULT_PROP_DRAW_OBJECTS FALSE
#define DEFAULT_PROP_MEMORY GST_TENSOR_INJECT_MEMORY_SYSTEM
/* layout=laneatt, when tensor-id or model-size was never set */
#define DEFAULT_LANE_TENSOR_ID "laneatt-proposals"
#define DEFAULT_LANE_MODEL_WIDTH 640
#define DEFAULT_LANE_MODEL_HEIGHT 360
/* layout=yolov8-seg: GStreamer's ids of its two tensors (the detections'
 * one unless tensor-id was set) */
#define SEG_TENSOR_ID "yolo-v8-segmentation-out-detections"
#define SEG_PROTOS_ID "yolo-v8-segmentation-out-protos"
/* slice-size: the slices' tensor's id unless tensor-id was set, and the
 * whole frame's */
#define TILES_TENSOR_ID "tiles"
#define TILES_WHOLE_ID "tiles-whole-frame"
#define DEFAULT_PROP_SLICE_OVERLAP 0.2
#define DEFAULT_PROP_SLICE_FULL_FRAME TRUE

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_TENSOR_ID,
  PROP_LAYOUT,
  PROP_NUM_CLASSES,
  PROP_MODEL_SIZE,
  PROP_DATA_TYPE,
  PROP_SEED,
  PROP_NUM_OBJECTS,
  PROP_NOISE,
  PROP_DRAW_OBJECTS,
  PROP_MEMORY,
  PROP_CUDA_DEVICE_ID,
  PROP_SLICE_SIZE,
  PROP_SLICE_OVERLAP,
  PROP_SLICE_FULL_FRAME
};

struct _GstTensorInject
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  gchar *location;
  gchar *tensor_id;
  gboolean tensor_id_set;       /* else layout=laneatt's own default */
  GstTensorInjectLayout layout;
  gint num_classes;
  gchar *model_size;
  gint model_width;
  gint model_height;
  gboolean model_size_set;      /* else layout=laneatt's own default */
  GstTensorInjectDataType data_type;
  guint seed;
  gint num_objects;
  guint noise;
  gboolean draw_objects;
  GstTensorInjectMemory memory;
  gint slice_width, slice_height;       /* 0: no slices */
  gdouble slice_overlap;
  gboolean slice_full_frame;

  /* streaming state, made in start */
  guint64 frame;
  gchar *stream_location;       /* "%d" pattern, NULL otherwise */
  gchar *stream_tensor_id;
  GstTensorInjectNpy single;            /* location without "%d" */
  GstTensorInjectScene *scene;     /* no location */
  /* slice-size: the slicing taken at start, and the tiles made from the
   * caps' frame size (set_caps) */
  GstTensorInjectTilesConfig tiles_cfg;
  gboolean stream_tiles;
  GstTensorInjectTiles *tiles;
  gboolean stream_draw_objects;
  gboolean draw_warned;         /* "cannot draw" said once */
  GstVideoInfo info;            /* negotiated, when info_valid */
  gboolean info_valid;
  gboolean stream_cuda;         /* memory=cuda */
  gint cuda_device_id;          /* the property; cuda.device_id is its copy
                                 * taken under the lock */
  GstTensorInjectCuda cuda;
  GstBuffer *single_cuda;       /* memory=cuda: the one file, uploaded once */
  /* GStreamer >= 1.28: the "tensors" field of the source caps (a
   * "tensorgroups" structure) describing what is attached, made in start;
   * NULL: none. Under the object lock. */
  GstStructure *tensors;
};

/* system memory, or CUDA memory from cudaupload or a decoder */
#define TENSOR_INJECT_CAPS "video/x-raw; video/x-raw(memory:CUDAMemory)"
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (TENSOR_INJECT_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (TENSOR_INJECT_CAPS));

#define gst_tensor_inject_parent_class parent_class
G_DEFINE_TYPE (GstTensorInject, gst_tensor_inject, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (tensorinject, "tensorinject", GST_RANK_NONE,
    GST_TYPE_TENSOR_INJECT);

GType
gst_tensor_inject_layout_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_INJECT_LAYOUT_YOLOV5, "YOLOv5 [1, N, 5+C]", "yolov5"},
    {GST_TENSOR_INJECT_LAYOUT_YOLOV8, "YOLOv8 [1, 4+C, N]", "yolov8"},
    {GST_TENSOR_INJECT_LAYOUT_YOLOV8_OBB, "YOLOv8-OBB [1, 4+C+1, N], rotated "
          "objects", "yolov8-obb"},
    {GST_TENSOR_INJECT_LAYOUT_LANEATT, "LaneATT lane proposals [1, N, 5+S] "
          "(N = 1000, S = 72)", "laneatt"},
    {GST_TENSOR_INJECT_LAYOUT_YOLOV8_POSE, "YOLOv8-pose [1, 4+1+17*3, N], "
          "people as COCO skeletons", "yolov8-pose"},
    {GST_TENSOR_INJECT_LAYOUT_YOLOV8_SEG, "YOLOv8-seg: detections "
          "[1, 4+C+32, N] and prototypes [1, 32, H/4, W/4]", "yolov8-seg"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorInjectLayout", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_tensor_inject_data_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_INJECT_DATA_TYPE_FLOAT32, "32-bit float", "float32"},
    {GST_TENSOR_INJECT_DATA_TYPE_FLOAT16, "16-bit float", "float16"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorInjectDataType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_tensor_inject_memory_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_INJECT_MEMORY_SYSTEM, "System memory", "system"},
    {GST_TENSOR_INJECT_MEMORY_CUDA, "CUDA memory (GstCudaMemory)", "cuda"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorInjectMemory", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_tensor_inject_init (GstTensorInject * self)
{
  self->location = g_strdup (DEFAULT_PROP_LOCATION);
  self->tensor_id = g_strdup (DEFAULT_PROP_TENSOR_ID);
  self->layout = DEFAULT_PROP_LAYOUT;
  self->num_classes = DEFAULT_PROP_NUM_CLASSES;
  self->model_size = g_strdup (DEFAULT_PROP_MODEL_SIZE);
  cnms_parse_size (self->model_size, &self->model_width,
      &self->model_height);
  self->data_type = DEFAULT_PROP_DATA_TYPE;
  self->seed = DEFAULT_PROP_SEED;
  self->num_objects = DEFAULT_PROP_NUM_OBJECTS;
  self->noise = DEFAULT_PROP_NOISE;
  self->draw_objects = DEFAULT_PROP_DRAW_OBJECTS;
  self->memory = DEFAULT_PROP_MEMORY;
  self->cuda_device_id = -1;
  self->cuda.device_id = -1;
  self->slice_overlap = DEFAULT_PROP_SLICE_OVERLAP;
  self->slice_full_frame = DEFAULT_PROP_SLICE_FULL_FRAME;

  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
#if GST_CHECK_VERSION (1, 28, 0)
  /* the caps upstream never carry the "tensors" field made here: a caps
   * query on the sink pad answers the transformed caps, not downstream's
   * (which would carry a decoder's tensor groups upstream) */
  gst_base_transform_set_prefer_passthrough (GST_BASE_TRANSFORM (self),
      FALSE);
#endif
}

static void
gst_tensor_inject_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTensorInject *self = GST_TENSOR_INJECT (object);
  gint w, h;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_TENSOR_ID:
      g_free (self->tensor_id);
      self->tensor_id = g_value_dup_string (value);
      self->tensor_id_set = TRUE;
      break;
    case PROP_LAYOUT:
      self->layout = g_value_get_enum (value);
      break;
    case PROP_NUM_CLASSES:
      self->num_classes = g_value_get_int (value);
      break;
    case PROP_MODEL_SIZE:
      if (cnms_parse_size (g_value_get_string (value), &w, &h) != CNMS_OK) {
        GST_WARNING_OBJECT (self, "Ignoring malformed model-size \"%s\"",
            GST_STR_NULL (g_value_get_string (value)));
        break;
      }
      g_free (self->model_size);
      self->model_size = g_strdup_printf ("%dx%d", w, h);
      self->model_width = w;
      self->model_height = h;
      self->model_size_set = TRUE;
      break;
    case PROP_DATA_TYPE:
      self->data_type = g_value_get_enum (value);
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint (value);
      break;
    case PROP_NUM_OBJECTS:
      self->num_objects = g_value_get_int (value);
      break;
    case PROP_NOISE:
      self->noise = g_value_get_uint (value);
      break;
    case PROP_DRAW_OBJECTS:
      self->draw_objects = g_value_get_boolean (value);
      break;
    case PROP_MEMORY:
      self->memory = g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      self->cuda_device_id = g_value_get_int (value);
      break;
    case PROP_SLICE_SIZE:{
      const gchar *str = g_value_get_string (value);

      if (str == NULL || *str == '\0')
        self->slice_width = self->slice_height = 0;
      else if (cnms_parse_size (str, &w, &h) == CNMS_OK) {
        self->slice_width = w;
        self->slice_height = h;
      } else
        g_warning ("%s: slice-size \"%s\" is not WxH; the previous value "
            "stays", GST_ELEMENT_NAME (self), str);
      break;
    }
    case PROP_SLICE_OVERLAP:
      self->slice_overlap = g_value_get_double (value);
      break;
    case PROP_SLICE_FULL_FRAME:
      self->slice_full_frame = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_tensor_inject_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstTensorInject *self = GST_TENSOR_INJECT (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_TENSOR_ID:
      g_value_set_string (value, self->tensor_id);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->layout);
      break;
    case PROP_NUM_CLASSES:
      g_value_set_int (value, self->num_classes);
      break;
    case PROP_MODEL_SIZE:
      g_value_set_string (value, self->model_size);
      break;
    case PROP_DATA_TYPE:
      g_value_set_enum (value, self->data_type);
      break;
    case PROP_SEED:
      g_value_set_uint (value, self->seed);
      break;
    case PROP_NUM_OBJECTS:
      g_value_set_int (value, self->num_objects);
      break;
    case PROP_NOISE:
      g_value_set_uint (value, self->noise);
      break;
    case PROP_DRAW_OBJECTS:
      g_value_set_boolean (value, self->draw_objects);
      break;
    case PROP_MEMORY:
      g_value_set_enum (value, self->memory);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->cuda_device_id);
      break;
    case PROP_SLICE_SIZE:
      if (self->slice_width > 0)
        g_value_take_string (value, g_strdup_printf ("%dx%d",
                self->slice_width, self->slice_height));
      else
        g_value_set_string (value, NULL);
      break;
    case PROP_SLICE_OVERLAP:
      g_value_set_double (value, self->slice_overlap);
      break;
    case PROP_SLICE_FULL_FRAME:
      g_value_set_boolean (value, self->slice_full_frame);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_tensor_inject_finalize (GObject * object)
{
  GstTensorInject *self = GST_TENSOR_INJECT (object);

  g_free (self->location);
  g_free (self->tensor_id);
  g_free (self->model_size);
  g_clear_pointer (&self->tensors, gst_structure_free);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

#if GST_CHECK_VERSION (1, 28, 0)
/* The name of the tensor group of GStreamer's segmentation pair. */
#define SEG_GROUP "yolo-v8-segmentation-out"

/* Appends to group (a GstValueUniqueList) the description of one tensor,
 * as GStreamer 1.28's inference elements write it in the caps: a
 * "tensor/strided" structure with its id, its dims (each 0 with dynamic:
 * not known before the buffers), the order the tensor meta gives
 * (row-major) and its data type. */
static void
append_description (GValue * group, const gchar * id, cnms_dtype dtype,
    const gint64 * dims, guint n_dims, gboolean dynamic)
{
  GstStructure *s = gst_structure_new ("tensor/strided",
      "tensor-id", G_TYPE_STRING, id,
      "dims-order", G_TYPE_STRING, "row-major",
      "type", G_TYPE_STRING,
      dtype == CNMS_DTYPE_FLOAT16 ? "float16" : "float32", NULL);
  GValue arr = G_VALUE_INIT, v = G_VALUE_INIT, caps = G_VALUE_INIT;
  guint i;

  gst_value_array_init (&arr, n_dims);
  g_value_init (&v, G_TYPE_INT);
  for (i = 0; i < n_dims; i++) {
    g_value_set_int (&v, dynamic ? 0 : (gint) CLAMP (dims[i], 0, G_MAXINT));
    gst_value_array_append_value (&arr, &v);
  }
  g_value_unset (&v);
  gst_structure_take_value (s, "dims", &arr);
  g_value_init (&caps, GST_TYPE_CAPS);
  g_value_take_boxed (&caps, gst_caps_new_full (s, NULL));
  gst_value_unique_list_append_and_take_value (group, &caps);
}

/* The "tensors" field describing what start set up to attach: one group
 * named after the tensor's id holding its description (a segmentation
 * scene: the detections and the prototypes, in the group "yolo-v8-
 * segmentation-out" when the detections have GStreamer's id). The dims of
 * a "%d" replay are dynamic, with the rank and data type of frame 0's
 * file. NULL without an id (nothing to name) or when frame 0's file does
 * not load (the error comes with the first buffer). */
static GstStructure *
describe_tensors (GstTensorInject * self)
{
  const gchar *id = self->stream_tensor_id, *name = id;
  GValue group = G_VALUE_INIT;
  GstStructure *tensors;

  if (id == NULL)
    return NULL;
  g_value_init (&group, GST_TYPE_UNIQUE_LIST);
  if (self->scene != NULL) {
    cnms_dtype dtype = self->data_type == GST_TENSOR_INJECT_DATA_TYPE_FLOAT16
        ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
    gint64 dims[3], protos_dims[4];

    gst_tensor_inject_scene_dims (self->scene, dims);
    append_description (&group, id, dtype, dims, 3, FALSE);
    if (gst_tensor_inject_scene_protos_size (self->scene) > 0) {
      gst_tensor_inject_scene_protos_dims (self->scene, protos_dims);
      append_description (&group, SEG_PROTOS_ID, dtype, protos_dims, 4,
          FALSE);
      if (strcmp (id, SEG_TENSOR_ID) == 0)
        name = SEG_GROUP;
    }
  } else if (self->stream_location != NULL) {
    const gchar *pct = strstr (self->stream_location, "%d");
    gchar *path = g_strdup_printf ("%.*s0%s",
        (gint) (pct - self->stream_location), self->stream_location, pct + 2);
    GstTensorInjectNpy npy;
    gboolean loaded = gst_tensor_inject_npy_load (path, &npy, NULL);

    g_free (path);
    if (!loaded) {
      g_value_unset (&group);
      return NULL;
    }
    append_description (&group, id, npy.dtype, npy.dims, (guint) npy.n_dims,
        TRUE);
    gst_tensor_inject_npy_clear (&npy);
  } else {
    append_description (&group, id, self->single.dtype, self->single.dims,
        (guint) self->single.n_dims, FALSE);
  }
  tensors = gst_structure_new_empty ("tensorgroups");
  gst_structure_take_value (tensors, name, &group);
  return tensors;
}

/* Downstream, each structure's "tensors" field gets the groups of
 * self->tensors (added to an upstream element's groups, a group of the
 * same name replaced); upstream, the field is removed, as the tensors it
 * describes are made here. */
static GstCaps *
gst_tensor_inject_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);
  GstStructure *tensors = NULL;
  GstCaps *ret = gst_caps_copy (caps), *tmp;
  guint i;

  GST_OBJECT_LOCK (self);
  if (self->tensors != NULL)
    tensors = gst_structure_copy (self->tensors);
  GST_OBJECT_UNLOCK (self);
  for (i = 0; i < gst_caps_get_size (ret); i++) {
    GstStructure *s = gst_caps_get_structure (ret, i);
    const GValue *v = gst_structure_get_value (s, "tensors");
    GstStructure *merged;
    gint j;

    if (direction == GST_PAD_SRC) {
      gst_structure_remove_field (s, "tensors");
      continue;
    }
    if (tensors == NULL)
      continue;
    if (v != NULL && GST_VALUE_HOLDS_STRUCTURE (v)
        && gst_value_get_structure (v) != NULL)
      merged = gst_structure_copy (gst_value_get_structure (v));
    else
      merged = gst_structure_new_empty ("tensorgroups");
    for (j = 0; j < gst_structure_n_fields (tensors); j++) {
      const gchar *name = gst_structure_nth_field_name (tensors, j);

      gst_structure_set_value (merged, name,
          gst_structure_get_value (tensors, name));
    }
    gst_structure_set (s, "tensors", GST_TYPE_STRUCTURE, merged, NULL);
    gst_structure_free (merged);
  }
  if (tensors != NULL)
    gst_structure_free (tensors);
  if (filter != NULL) {
    tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_LOG_OBJECT (self, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "downstream" : "upstream", caps, ret);
  return ret;
}

/* The source caps keep exactly the "tensors" field transform_caps gives:
 * intersected with a decoder's template (tensordecodebin answers the caps
 * query with its decoders' templates), the field would gain the template's
 * groups, which describe no tensor on the buffers. */
static GstCaps *
gst_tensor_inject_fixate_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * othercaps)
{
  GstCaps *ret = GST_BASE_TRANSFORM_CLASS (parent_class)->fixate_caps (trans,
      direction, caps, othercaps), *want;
  const GValue *tensors;
  GstStructure *s;

  if (direction != GST_PAD_SINK || gst_caps_is_empty (ret)
      || gst_caps_is_any (ret))
    return ret;
  want = gst_tensor_inject_transform_caps (trans, GST_PAD_SINK, caps, NULL);
  ret = gst_caps_make_writable (ret);
  s = gst_caps_get_structure (ret, 0);
  tensors = gst_caps_is_empty (want) || gst_caps_is_any (want) ? NULL :
      gst_structure_get_value (gst_caps_get_structure (want, 0), "tensors");
  if (tensors != NULL)
    gst_structure_set_value (s, "tensors", tensors);
  else
    gst_structure_remove_field (s, "tensors");
  gst_caps_unref (want);
  return ret;
}
#endif

static gboolean
gst_tensor_inject_start (GstBaseTransform * trans)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);
  GstTensorInjectSceneConfig cfg;
  GError *err = NULL;
  gchar *location, msg[256];

  GST_OBJECT_LOCK (self);
  location = g_strdup (self->location);
  memset (&cfg, 0, sizeof (cfg));
  cfg.lanes = self->layout == GST_TENSOR_INJECT_LAYOUT_LANEATT;
  cfg.pose = self->layout == GST_TENSOR_INJECT_LAYOUT_YOLOV8_POSE;
  cfg.seg = self->layout == GST_TENSOR_INJECT_LAYOUT_YOLOV8_SEG;
  self->stream_tensor_id = g_strdup (self->tensor_id_set ? self->tensor_id :
      cfg.lanes ? DEFAULT_LANE_TENSOR_ID : cfg.seg ? SEG_TENSOR_ID :
      self->tensor_id);
  cfg.yolov5 = self->layout == GST_TENSOR_INJECT_LAYOUT_YOLOV5;
  cfg.num_classes = self->num_classes;
  cfg.model_width = self->model_width;
  cfg.model_height = self->model_height;
  if (cfg.lanes && !self->model_size_set) {
    cfg.model_width = DEFAULT_LANE_MODEL_WIDTH;
    cfg.model_height = DEFAULT_LANE_MODEL_HEIGHT;
  }
  cfg.dtype = self->data_type == GST_TENSOR_INJECT_DATA_TYPE_FLOAT16 ?
      CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  cfg.seed = self->seed;
  cfg.num_objects = self->num_objects;
  cfg.noise = self->noise;
  cfg.obb = self->layout == GST_TENSOR_INJECT_LAYOUT_YOLOV8_OBB;
  /* slice-size: tiles of the yolov8 scene, made at set_caps */
  self->stream_tiles = self->slice_width > 0;
  memset (&self->tiles_cfg, 0, sizeof (self->tiles_cfg));
  self->tiles_cfg.slice_width = self->slice_width;
  self->tiles_cfg.slice_height = self->slice_height;
  self->tiles_cfg.overlap = self->slice_overlap;
  self->tiles_cfg.full_frame = self->slice_full_frame;
  self->tiles_cfg.model_width = cfg.model_width;
  self->tiles_cfg.model_height = cfg.model_height;
  self->tiles_cfg.num_classes = cfg.num_classes;
  self->tiles_cfg.num_objects = cfg.num_objects;
  self->tiles_cfg.seed = cfg.seed;
  self->tiles_cfg.dtype = cfg.dtype;
  if (self->stream_tiles && !self->tensor_id_set) {
    g_free (self->stream_tensor_id);
    self->stream_tensor_id = g_strdup (TILES_TENSOR_ID);
  }
  if (self->stream_tiles && (location != NULL
          || self->layout != GST_TENSOR_INJECT_LAYOUT_YOLOV8)) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("slice-size needs the synthetic scene of layout yolov8 (no "
            "location)."), (NULL));
    g_free (location);
    g_clear_pointer (&self->stream_tensor_id, g_free);
    return FALSE;
  }
  self->stream_draw_objects = self->draw_objects;
  self->stream_cuda = self->memory == GST_TENSOR_INJECT_MEMORY_CUDA;
  self->cuda.device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);

  self->frame = 0;
  self->draw_warned = FALSE;
  if (self->stream_cuda && !gst_tensor_inject_cuda_start (&self->cuda,
          GST_ELEMENT (self), msg, sizeof (msg)))
    goto no_cuda;
  if (self->stream_tiles) {
    /* made from the caps (set_caps) */
  } else if (location == NULL) {
    self->scene = gst_tensor_inject_scene_new (&cfg);
  } else if (strstr (location, "%d") != NULL) {
    self->stream_location = location;
    location = NULL;
  } else if (!gst_tensor_inject_npy_load (location, &self->single, &err)) {
    goto load_failed;
  }
  g_free (location);
#if GST_CHECK_VERSION (1, 28, 0)
  {
    GstStructure *tensors = describe_tensors (self);

    GST_OBJECT_LOCK (self);
    if (self->tensors != NULL)
      gst_structure_free (self->tensors);
    self->tensors = tensors;
    GST_OBJECT_UNLOCK (self);
    GST_DEBUG_OBJECT (self, "tensors in the caps: %" GST_PTR_FORMAT, tensors);
  }
#endif
  return TRUE;

no_cuda:
  GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
      ("Cannot put tensors in CUDA memory: %s.", msg),
      ("memory=cuda needs gst-cuda, the NVIDIA driver and a CUDA device"));
  g_free (location);
  g_clear_pointer (&self->stream_tensor_id, g_free);
  return FALSE;
load_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
      ("Could not load tensor file \"%s\".", location), ("%s", err->message));
  g_clear_error (&err);
  g_free (location);
  g_clear_pointer (&self->stream_tensor_id, g_free);
  gst_tensor_inject_cuda_stop (&self->cuda);
  return FALSE;
}

/* Only drawing needs the video info; other caps pass as before. */
static gboolean
gst_tensor_inject_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);

  self->info_valid = gst_video_info_from_caps (&self->info, incaps);
  if (self->stream_tiles) {
    const gchar *why = "the caps are not raw video of a known size";

    g_clear_pointer (&self->tiles, gst_tensor_inject_tiles_free);
    if (self->info_valid) {
      self->tiles_cfg.frame_width = GST_VIDEO_INFO_WIDTH (&self->info);
      self->tiles_cfg.frame_height = GST_VIDEO_INFO_HEIGHT (&self->info);
      self->tiles = gst_tensor_inject_tiles_new (&self->tiles_cfg, &why);
    }
    if (self->tiles == NULL) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("slice-size: cannot slice the frame: %s.", why), (NULL));
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
gst_tensor_inject_stop (GstBaseTransform * trans)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);

  g_clear_pointer (&self->scene, gst_tensor_inject_scene_free);
  g_clear_pointer (&self->tiles, gst_tensor_inject_tiles_free);
  g_clear_pointer (&self->stream_location, g_free);
  g_clear_pointer (&self->stream_tensor_id, g_free);
  gst_tensor_inject_npy_clear (&self->single);
  gst_clear_buffer (&self->single_cuda);
  gst_tensor_inject_cuda_stop (&self->cuda);
  self->info_valid = FALSE;
  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->tensors, gst_structure_free);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static void
gst_tensor_inject_set_context (GstElement * element, GstContext * context)
{
  GstTensorInject *self = GST_TENSOR_INJECT (element);

  GST_OBJECT_LOCK (self);
  self->cuda.device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  gst_tensor_inject_cuda_set_context (&self->cuda, element, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_tensor_inject_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);

  if (gst_tensor_inject_cuda_query (&self->cuda, GST_ELEMENT (self), query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

/* Attaches one tensor the way any upstream element does, through the
 * documented contract only: the "CudanmsTensorMeta" custom meta
 * (registered here unless someone else did) with its structure filled in.
 * Takes a reference on data. */
/* The meta's info and the quarks of its fields, looked up once in
 * class_init: by name, each lookup would take GStreamer's meta lock or
 * GLib's quark lock for every buffer. */
static const GstMetaInfo *tensor_meta_info;
static GQuark q_id, q_data_type, q_dims_order, q_data, q_dims;

static void
lookup_tensor_meta (void)
{
  static const gchar *tags[] = { NULL };

  /* whoever registers the name first wins (cudanms does the same) */
  tensor_meta_info = gst_meta_get_info (TENSOR_META_NAME);
  if (tensor_meta_info == NULL)
    tensor_meta_info = gst_meta_register_custom (TENSOR_META_NAME, tags,
        NULL, NULL, NULL);
  q_id = g_quark_from_static_string ("id");
  q_data_type = g_quark_from_static_string ("data-type");
  q_dims_order = g_quark_from_static_string ("dims-order");
  q_data = g_quark_from_static_string ("data");
  q_dims = g_quark_from_static_string ("dims");
}

static gboolean
gst_tensor_inject_attach (GstBuffer * buffer, const gchar * id,
    cnms_dtype dtype, const gint64 * dims, guint n_dims, GstBuffer * data)
{
  GstCustomMeta *meta;
  GstStructure *s;
  GValue arr = G_VALUE_INIT;
  GValue v = G_VALUE_INIT;
  guint i;

  if (tensor_meta_info == NULL)
    return FALSE;
  meta = (GstCustomMeta *) gst_buffer_add_meta (buffer, tensor_meta_info,
      NULL);
  if (meta == NULL)
    return FALSE;
  s = gst_custom_meta_get_structure (meta);

  g_value_init (&arr, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_UINT64);
  for (i = 0; i < n_dims; i++) {
    g_value_set_uint64 (&v, (guint64) dims[i]);
    gst_value_array_append_value (&arr, &v);
  }
  g_value_unset (&v);

  if (id != NULL)
    gst_structure_id_set (s, q_id, G_TYPE_STRING, id, NULL);
  gst_structure_id_set (s, q_data_type, G_TYPE_STRING,
      dtype == CNMS_DTYPE_FLOAT16 ? "float16" : "float32",
      q_dims_order, G_TYPE_STRING, "row-major",
      q_data, GST_TYPE_BUFFER, data, NULL);
  gst_structure_id_take_value (s, q_dims, &arr);
  return TRUE;
}

/* gst_tensor_inject_attach, with the bytes moved into CUDA memory first
 * for memory=cuda. */
static gboolean
gst_tensor_inject_attach_data (GstTensorInject * self, GstBuffer * buffer,
    const gchar * id, cnms_dtype dtype, const gint64 * dims, guint n_dims,
    GstBuffer * data)
{
  GstBuffer *cuda = NULL;
  GstMapInfo map;
  gboolean ok;

  if (!self->stream_cuda)
    return gst_tensor_inject_attach (buffer, id, dtype, dims, n_dims, data);
  if (!gst_buffer_map (data, &map, GST_MAP_READ))
    return FALSE;
  cuda = gst_tensor_inject_cuda_buffer (&self->cuda, map.data, map.size);
  gst_buffer_unmap (data, &map);
  if (cuda == NULL)
    return FALSE;
  ok = gst_tensor_inject_attach (buffer, id, dtype, dims, n_dims, cuda);
  gst_buffer_unref (cuda);
  return ok;
}

static GstFlowReturn
gst_tensor_inject_attach_npy (GstTensorInject * self, GstBuffer * buffer,
    const GstTensorInjectNpy * npy)
{
  /* the one file in CUDA memory is uploaded once and attached to every
   * buffer, as an inference output that stays on the GPU */
  if (self->stream_cuda && npy == &self->single) {
    GstMapInfo map;
    if (self->single_cuda == NULL
        && gst_buffer_map (npy->data, &map, GST_MAP_READ)) {
      self->single_cuda = gst_tensor_inject_cuda_buffer (&self->cuda,
          map.data, map.size);
      gst_buffer_unmap (npy->data, &map);
    }
    if (self->single_cuda == NULL
        || !gst_tensor_inject_attach (buffer, self->stream_tensor_id,
            npy->dtype, npy->dims, (guint) npy->n_dims, self->single_cuda))
      goto attach_failed;
    return GST_FLOW_OK;
  }
  if (!gst_tensor_inject_attach_data (self, buffer, self->stream_tensor_id,
          npy->dtype, npy->dims, (guint) npy->n_dims, npy->data))
    goto attach_failed;
  return GST_FLOW_OK;

attach_failed:
  GST_ELEMENT_ERROR (self, CORE, FAILED, ("Could not attach the tensor."),
      (NULL));
  return GST_FLOW_ERROR;
}

/* "%d" pattern: the frame's own file. */
static GstFlowReturn
gst_tensor_inject_replay (GstTensorInject * self, GstBuffer * buffer)
{
  const gchar *pct = strstr (self->stream_location, "%d");
  gchar *path = g_strdup_printf ("%.*s%" G_GUINT64_FORMAT "%s",
      (gint) (pct - self->stream_location), self->stream_location,
      self->frame, pct + 2);
  GError *err = NULL;
  GstTensorInjectNpy npy;
  GstFlowReturn ret;

  if (!gst_tensor_inject_npy_load (path, &npy, &err))
    goto load_failed;
  ret = gst_tensor_inject_attach_npy (self, buffer, &npy);
  gst_tensor_inject_npy_clear (&npy);
  g_free (path);
  return ret;

load_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
      ("Could not load tensor file \"%s\".", path), ("%s", err->message));
  g_clear_error (&err);
  g_free (path);
  return GST_FLOW_ERROR;
}

static GstFlowReturn
gst_tensor_inject_synthesize (GstTensorInject * self, GstBuffer * buffer)
{
  gsize size = gst_tensor_inject_scene_size (self->scene);
  gsize protos_size = gst_tensor_inject_scene_protos_size (self->scene);
  GstBuffer *data = gst_buffer_new_allocate (NULL, size, NULL);
  GstBuffer *protos = NULL;
  GstFlowReturn ret = GST_FLOW_OK;
  cnms_dtype dtype = self->data_type == GST_TENSOR_INJECT_DATA_TYPE_FLOAT16 ?
      CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  GstMapInfo map;
  gint64 dims[3], protos_dims[4];

  if (data == NULL || !gst_buffer_map (data, &map, GST_MAP_WRITE))
    goto no_memory;
  gst_tensor_inject_scene_render (self->scene, self->frame, map.data);
  gst_buffer_unmap (data, &map);
  if (protos_size > 0) {
    size = protos_size;
    protos = gst_buffer_new_allocate (NULL, size, NULL);
    if (protos == NULL || !gst_buffer_map (protos, &map, GST_MAP_WRITE))
      goto no_memory;
    gst_tensor_inject_scene_render_protos (self->scene, self->frame,
        map.data);
    gst_buffer_unmap (protos, &map);
  }
  gst_tensor_inject_scene_dims (self->scene, dims);
  gst_tensor_inject_scene_protos_dims (self->scene, protos_dims);
  /* a segmentation scene's detections, then its prototypes */
  if (!gst_tensor_inject_attach_data (self, buffer, self->stream_tensor_id,
          dtype, dims, 3, data)
      || (protos != NULL && !gst_tensor_inject_attach_data (self, buffer,
              SEG_PROTOS_ID, dtype, protos_dims, 4, protos))) {
    GST_ELEMENT_ERROR (self, CORE, FAILED, ("Could not attach the tensor."),
        (NULL));
    ret = GST_FLOW_ERROR;
  }
  gst_buffer_unref (data);
  gst_clear_buffer (&protos);
  return ret;

no_memory:
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
      ("Could not allocate a %" G_GSIZE_FORMAT "-byte tensor.", size), (NULL));
  gst_clear_buffer (&data);
  gst_clear_buffer (&protos);
  return GST_FLOW_ERROR;
}

/* draw-objects: paints the scene's objects into the frame; a frame it
 * cannot draw on passes untouched, with one warning per stream. */
static void
gst_tensor_inject_draw (GstTensorInject * self, GstBuffer * buffer)
{
  GstVideoFrame vframe;
  const gchar *why = NULL;

  if (self->scene == NULL)
    why = "there is no synthetic scene (location is set)";
  else if (!self->info_valid)
    why = "the caps are not raw video with a known format";
  else if (!gst_tensor_inject_draw_supported (GST_VIDEO_INFO_FORMAT
          (&self->info)))
    why = "the format is not RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, "
        "ARGB, ABGR or I420";
  else if (!gst_video_frame_map (&vframe, &self->info, buffer,
          GST_MAP_READWRITE))
    why = "the frame could not be mapped writable";
  if (why != NULL) {
    if (!self->draw_warned)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("Not drawing the objects: %s.", why),
          ("format %s; frames pass untouched",
              self->info_valid ?
              gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&self->info))
              : "unknown"));
    self->draw_warned = TRUE;
    return;
  }
  gst_tensor_inject_draw_objects (self->scene, self->frame, &vframe);
  gst_video_frame_unmap (&vframe);
}

/* slice-size: the slices' tensor [B, 4+C, N] and the whole frame's
 * [1, 4+C, N] (TILES_WHOLE_ID), and with draw-objects the objects. */
static GstFlowReturn
gst_tensor_inject_tiles (GstTensorInject * self, GstBuffer * buffer)
{
  const cnms_dtype dtype = self->tiles_cfg.dtype;
  gboolean whole;

  if (self->tiles == NULL) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("slice-size: a buffer before the caps (no frame size)."), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (self->stream_draw_objects) {
    GstVideoFrame vframe;

    if (gst_tensor_inject_draw_supported (GST_VIDEO_INFO_FORMAT
            (&self->info))
        && gst_video_frame_map (&vframe, &self->info, buffer,
            GST_MAP_READWRITE)) {
      gst_tensor_inject_draw_tiles (self->tiles, &vframe);
      gst_video_frame_unmap (&vframe);
    } else if (!self->draw_warned) {
      GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("Not drawing the "
              "objects: the format is not one that can be drawn on, or the "
              "frame could not be mapped writable."), (NULL));
      self->draw_warned = TRUE;
    }
  }
  for (whole = FALSE; whole <= TRUE; whole++) {
    const gsize size = gst_tensor_inject_tiles_size (self->tiles, whole);
    GstBuffer *data = gst_buffer_new_allocate (NULL, size, NULL);
    GstMapInfo map;
    gint64 dims[3];
    gboolean ok;

    if (data == NULL || !gst_buffer_map (data, &map, GST_MAP_WRITE)) {
      gst_clear_buffer (&data);
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("Could not "
              "allocate a %" G_GSIZE_FORMAT "-byte tensor.", size), (NULL));
      return GST_FLOW_ERROR;
    }
    gst_tensor_inject_tiles_render (self->tiles, whole, map.data);
    gst_buffer_unmap (data, &map);
    gst_tensor_inject_tiles_dims (self->tiles, dims, whole);
    ok = gst_tensor_inject_attach_data (self, buffer, whole ?
        TILES_WHOLE_ID : self->stream_tensor_id, dtype, dims, 3, data);
    gst_buffer_unref (data);
    if (!ok) {
      GST_ELEMENT_ERROR (self, CORE, FAILED, ("Could not attach the "
              "tensor."), (NULL));
      return GST_FLOW_ERROR;
    }
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_tensor_inject_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstTensorInject *self = GST_TENSOR_INJECT (trans);
  GstFlowReturn ret;

  if (self->stream_tiles) {
    ret = gst_tensor_inject_tiles (self, buffer);
    self->frame++;
    return ret;
  }
  if (self->stream_draw_objects)
    gst_tensor_inject_draw (self, buffer);
  if (self->scene != NULL)
    ret = gst_tensor_inject_synthesize (self, buffer);
  else if (self->stream_location != NULL)
    ret = gst_tensor_inject_replay (self, buffer);
  else
    ret = gst_tensor_inject_attach_npy (self, buffer, &self->single);
  self->frame++;
  return ret;
}

static void
gst_tensor_inject_class_init (GstTensorInjectClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  GST_DEBUG_CATEGORY_INIT (gst_tensor_inject_debug, "tensorinject", 0,
      "Detection tensor producer");
  lookup_tensor_meta ();

  gobject_class->set_property = gst_tensor_inject_set_property;
  gobject_class->get_property = gst_tensor_inject_get_property;
  gobject_class->finalize = gst_tensor_inject_finalize;

  /**
   * GstTensorInject:location:
   *
   * .npy file to replay (float32 or float16, C order). A "%d" is replaced
   * by the frame number counted from 0; without one, the same file is
   * attached to every buffer. NULL renders the synthetic scene.
   */
  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          ".npy file to replay, optionally with a %d frame number "
          "(NULL: synthetic scene)", DEFAULT_PROP_LOCATION, flags));
  /**
   * GstTensorInject:tensor-id:
   *
   * The id given to the attached tensor (NULL: no id). With
   * layout=laneatt, "laneatt-proposals" unless this property is set; with
   * layout=yolov8-seg the detections' id, "yolo-v8-segmentation-out-detections"
   * unless set (the prototypes are always "yolo-v8-segmentation-out-protos").
   * With GStreamer >= 1.28 the source caps describe the tensors under this
   * id (no description without one); tensordecodebin picks a decoder by
   * GStreamer's ids, e.g. "yolo-v8-out" for layout=yolov8.
   */
  g_object_class_install_property (gobject_class, PROP_TENSOR_ID,
      g_param_spec_string ("tensor-id", "Tensor id",
          "Id of the attached tensor (NULL: none)", DEFAULT_PROP_TENSOR_ID,
          flags));
  /**
   * GstTensorInject:layout:
   *
   * Layout of the synthetic tensor: yolov5 [1, N, 5+C], yolov8
   * [1, 4+C, N], yolov8-obb [1, 4+C+1, N] (rotated objects: cx cy w h,
   * the C class scores, the angle in radians), or laneatt [1, N, 5+S]
   * (LaneATT's lane proposals, N = 1000, S = 72: two class logits,
   * start_y, start_x, length, S x offsets in model pixels, row 0 at the
   * bottom) of a road of 2-4 lanes curving towards a vanishing point;
   * each lane has 4-8 near-duplicate proposals with high lane logits, the
   * rest are background proposals scoring below 0.12. num-classes,
   * num-objects and noise do not apply to laneatt; its tensor-id defaults
   * to "laneatt-proposals" and its model-size to 640x360 (LaneATT's input)
   * unless those properties are set. yolov8-pose [1, 4+1+17*3, N]: people
   * (one class; num-classes does not apply) as skeletons of COCO's 17
   * keypoints (x, y in model pixels, visibility: one in seven occluded,
   * 0.05..0.3, the others 0.6..0.99), arms and legs swinging; each person's
   * best anchor holds its true box and keypoints exactly, the others
   * jitter them. yolov8-seg: detections [1, 4+C+32, N] and prototypes
   * [1, 32, H/4, W/4] (H x W the model size), attached as two tensors in
   * that order: object i (at most 32) is an ellipse, rectangle or diamond
   * whose signed distance (prototype pixels, clamped to +-4, positive
   * inside) is prototype channel i, and its anchors' coefficients are
   * one-hot on i (background anchors: all zero), so that its mask is the
   * shape; its best anchor holds its true box exactly.
   */
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout", "Layout of the synthetic tensor",
          GST_TYPE_TENSOR_INJECT_LAYOUT, DEFAULT_PROP_LAYOUT, flags));
  /**
   * GstTensorInject:num-classes:
   *
   * Number of classes of the synthetic model.
   */
  g_object_class_install_property (gobject_class, PROP_NUM_CLASSES,
      g_param_spec_int ("num-classes", "Number of classes",
          "Classes of the synthetic model", 1, 1000, DEFAULT_PROP_NUM_CLASSES,
          flags));
  /**
   * GstTensorInject:model-size:
   *
   * Input size "WxH" of the synthetic model; anchors lie on its stride
   * 8/16/32 grids (8400 anchors for 640x640, 3x that for yolov5).
   */
  g_object_class_install_property (gobject_class, PROP_MODEL_SIZE,
      g_param_spec_string ("model-size", "Model size",
          "Synthetic model input size as WxH", DEFAULT_PROP_MODEL_SIZE,
          flags));
  /**
   * GstTensorInject:data-type:
   *
   * Element type of the synthetic tensor.
   */
  g_object_class_install_property (gobject_class, PROP_DATA_TYPE,
      g_param_spec_enum ("data-type", "Data type",
          "Element type of the synthetic tensor",
          GST_TYPE_TENSOR_INJECT_DATA_TYPE, DEFAULT_PROP_DATA_TYPE, flags));
  /**
   * GstTensorInject:seed:
   *
   * Seed of the synthetic scene; the same seed gives the same tensors.
   */
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint ("seed", "Seed", "Seed of the synthetic scene",
          0, G_MAXUINT, DEFAULT_PROP_SEED, flags));
  /**
   * GstTensorInject:num-objects:
   *
   * Number of moving objects in the synthetic scene.
   */
  g_object_class_install_property (gobject_class, PROP_NUM_OBJECTS,
      g_param_spec_int ("num-objects", "Number of objects",
          "Moving objects in the synthetic scene", 0, 256,
          DEFAULT_PROP_NUM_OBJECTS, flags));
  /**
   * GstTensorInject:noise:
   *
   * Number of background anchors scoring above 0.05 (most below 0.25).
   */
  g_object_class_install_property (gobject_class, PROP_NOISE,
      g_param_spec_uint ("noise", "Noise",
          "Background anchors scoring above 0.05 (most below 0.25)",
          0, 1000000, DEFAULT_PROP_NOISE, flags));
  /**
   * GstTensorInject:draw-objects:
   *
   * Paints the synthetic scene's objects into the video frames, so that
   * the boxes cudanms finds sit on something: each object is a rectangle
   * in its class's colour with a darker border, over its true box (before
   * the anchors' jitter) mapped to frame pixels as cudanms maps boxes with
   * its default letterbox=true; with layout=yolov8-obb a rotated rectangle
   * over its true oriented box; with layout=laneatt each lane as a light
   * yellow marking, a polyline 4 pixels wide through its true points;
   * with layout=yolov8-pose each person's skeleton (its visible keypoints as
   * discs of radius 3, the COCO limbs between them 4 pixels wide); with
   * layout=yolov8-seg each object's true shape (fill and a 2-pixel border).
   * Drawn on RGB, BGR, RGBx, BGRx, xRGB, xBGR,
   * RGBA, BGRA, ARGB, ABGR and I420; other formats, and .npy replay, pass
   * untouched with one warning. The tensors are the same either way.
   */
  g_object_class_install_property (gobject_class, PROP_DRAW_OBJECTS,
      g_param_spec_boolean ("draw-objects", "Draw objects",
          "Paint the synthetic scene's objects into the frames (RGB "
          "formats and I420)", DEFAULT_PROP_DRAW_OBJECTS, flags));
  /**
   * GstTensorInject:memory:
   *
   * Where the tensor's bytes go: system memory, or GstCudaMemory of the
   * pipeline's shared CUDA context (the context query and set_context of
   * gst-cuda, as cudaupload shares it), as a GPU inference element leaves
   * its output. memory=cuda without gst-cuda, the NVIDIA driver or a CUDA
   * device is an error at start.
   */
  g_object_class_install_property (gobject_class, PROP_MEMORY,
      g_param_spec_enum ("memory", "Memory",
          "Where the tensor's bytes are: system or CUDA memory",
          GST_TYPE_TENSOR_INJECT_MEMORY, DEFAULT_PROP_MEMORY, flags));
  /**
   * GstTensorInject:cuda-device-id:
   *
   * memory=cuda: the CUDA device whose context holds the tensors; -1
   * takes the pipeline's shared CUDA context whatever its device (else
   * the first device). A context of another device offered by a
   * neighbour is refused, as gst-cuda's elements refuse it.
   */
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "memory=cuda: CUDA device index (-1: the pipeline's context)",
          -1, 1024, -1, flags));

  /**
   * GstTensorInject:slice-size:
   *
   * Tiles: the synthetic scene (layout yolov8) becomes a frame of the
   * caps' size (e.g. 3840x2160) holding num-objects small objects (12 to
   * 60 pixels, apart from each other), cut into slices of this size
   * (WxH) overlapping by slice-overlap as cudanms's slice-size cuts it
   * (SAHI's grid), the whole frame last with slice-full-frame. Each
   * buffer gets two tensors: the slices' [B, 4+C, N] (id "tiles" unless
   * tensor-id was set), each slice's frame holding the part of each object
   * inside it (an object across slice edges appears in two to four
   * slices, each time with a score of its own), and the whole frame's
   * [1, 4+C, N] ("tiles-whole-frame"), where objects under 8 model pixels
   * are missing, as a single pass at the model's size misses them. With
   * draw-objects the objects are painted into the frames. NULL: no
   * slices.
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_SIZE,
      g_param_spec_string ("slice-size", "Slice size",
          "Tiles: cut the synthetic frame into slices of WxH and attach "
          "their tensor (NULL: no slices)", NULL, flags));
  /**
   * GstTensorInject:slice-overlap:
   *
   * Tiles: the overlap of neighbouring slices, a ratio of the slice size.
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_OVERLAP,
      g_param_spec_double ("slice-overlap", "Slice overlap",
          "Tiles: the overlap of neighbouring slices (ratio)", 0.0, 0.99,
          DEFAULT_PROP_SLICE_OVERLAP, flags));
  /**
   * GstTensorInject:slice-full-frame:
   *
   * Tiles: the slices' tensor ends with the whole frame.
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_FULL_FRAME,
      g_param_spec_boolean ("slice-full-frame", "Slice full frame",
          "Tiles: the slices' tensor ends with the whole frame",
          DEFAULT_PROP_SLICE_FULL_FRAME, flags));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Detection tensor injector", "Filter/Video",
      "Attaches a YOLO detection tensor to each buffer, replayed from .npy "
      "files or rendered from a seeded synthetic scene", "cudanms developers");

  trans_class->passthrough_on_same_caps = FALSE;
  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_tensor_inject_set_context);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_tensor_inject_query);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_tensor_inject_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_tensor_inject_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_tensor_inject_set_caps);
#if GST_CHECK_VERSION (1, 28, 0)
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_tensor_inject_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR (gst_tensor_inject_fixate_caps);
#endif
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_tensor_inject_transform_ip);

  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_INJECT_LAYOUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_INJECT_DATA_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_INJECT_MEMORY, 0);
}
