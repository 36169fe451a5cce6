/* cudanms: decode a detector tensor, run exact greedy NMS, attach ROIs.
 *
 * This library is free software; you can redistribute it and/or modify it
 * under the terms of the GNU Lesser General Public License, version 2.1 or
 * later.
 */

/**
 * SECTION:element-cudanms
 * @title: cudanms
 *
 * Reads the detector output tensor attached to each video buffer, decodes
 * it (YOLOv5/v7, YOLOv8/v11 or end-to-end layout), runs exact greedy
 * non-maximum suppression on the GPU (or on the CPU reference backend) and
 * attaches the kept boxes, in kept order, as #GstVideoRegionOfInterestMeta
 * and, with GStreamer >= 1.24, GstAnalyticsODMtd (#GstCudanms:attach-meta).
 * The video data is never touched. The tensor it reads and how it is
 * found on a buffer are described in docs/contracts.md, section "Input
 * tensor".
 *
 * A buffer without a usable tensor passes with no box (each kind of
 * problem posts one warning per stream, then is counted in
 * #GstCudanms:stats); device=cuda without a device, an unreadable label
 * file and failures of the post-processing library are element errors.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,width=1280,height=720 ! tensorinject ! cudanms iou=0.5 ! fakesink
 * ]| Runs synthetic YOLOv8 tensors from tensorinject through cudanms, which
 * attaches the surviving boxes as region-of-interest metas.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "cudanms_static.h"
#include "gstcudanms.h"
#include "gstcudanmsbackend.h"
#include "gstcudanmsbatch.h"
#include "gstcudanmsclasses.h"
#include "gstcudanmsdebug.h"
#include "gstcudanmslabels.h"
#include "gstcudanmsoutput.h"
#include "gstcudanmsstats.h"
#include "gsttensormeta.h"

/* The library's defaults (cudanms.h) are the element's. */
#define DEFAULT_PROP_IOU CNMS_DEFAULT_IOU
#define DEFAULT_PROP_SCORE_THRESHOLD CNMS_DEFAULT_SCORE_THRESHOLD
#define DEFAULT_PROP_MAX_DETECTIONS CNMS_DEFAULT_MAX_DETECTIONS
#define DEFAULT_PROP_MAX_CANDIDATES CNMS_DEFAULT_MAX_CANDIDATES
#define DEFAULT_PROP_CLASS_AGNOSTIC FALSE
#define DEFAULT_PROP_LABEL_FILE NULL
#define DEFAULT_PROP_LAYOUT GST_CUDANMS_LAYOUT_AUTO
#define DEFAULT_PROP_MODEL_SIZE G_STRINGIFY (CNMS_DEFAULT_MODEL_WIDTH) "x" \
    G_STRINGIFY (CNMS_DEFAULT_MODEL_HEIGHT)
#define DEFAULT_PROP_LETTERBOX (CNMS_DEFAULT_LETTERBOX != 0)
#define DEFAULT_PROP_TENSOR_ID NULL
#define DEFAULT_PROP_DEVICE GST_CUDANMS_DEVICE_AUTO
#define DEFAULT_PROP_CUDA_DEVICE_ID -1
#define DEFAULT_PROP_BACKEND NULL
#define DEFAULT_PROP_ATTACH_META GST_CUDANMS_ATTACH_META_DEFAULT
#define DEFAULT_PROP_ROI_PARAMS TRUE
/* LaneATT's test value (its config's nms_thres) */
#define DEFAULT_PROP_LANE_DISTANCE CNMS_DEFAULT_LANE_DISTANCE
/* COCO's pose models: x, y and a visibility score per keypoint */
#define DEFAULT_PROP_KEYPOINT_DIMS 3
#define DEFAULT_PROP_SLICE_SIZE NULL
#define DEFAULT_PROP_SLICE_OVERLAP 0.2
#define DEFAULT_PROP_SLICE_FULL_FRAME TRUE
#define DEFAULT_PROP_MERGE GST_CUDANMS_MERGE_GREEDY_NMM
#define DEFAULT_PROP_MERGE_METRIC GST_CUDANMS_MERGE_METRIC_IOS
#define DEFAULT_PROP_MERGE_THRESHOLD 0.5
#define DEFAULT_PROP_MERGE_CLASS_AGNOSTIC FALSE
#define DEFAULT_PROP_MERGE_RULES GST_CUDANMS_MERGE_RULES_SAHI
/* slice-overlap's largest value (SAHI's ratio is below 1) */
#define SLICE_OVERLAP_MAX 0.99

enum
{
  PROP_0,
  PROP_IOU,
  PROP_SCORE_THRESHOLD,
  PROP_MAX_DETECTIONS,
  PROP_MAX_CANDIDATES,
  PROP_CLASS_AGNOSTIC,
  PROP_LABEL_FILE,
  PROP_LAYOUT,
  PROP_MODEL_SIZE,
  PROP_LETTERBOX,
  PROP_TENSOR_ID,
  PROP_DEVICE,
  PROP_CUDA_DEVICE_ID,
  PROP_BACKEND,
  PROP_ATTACH_META,
  PROP_ROI_PARAMS,
  PROP_STATS,
  /* the per-class controls: PROP_CLASS_SPEC + GstCudanmsClassSpec */
  PROP_CLASS_SPEC,
  PROP_CLASS_SPEC_LAST = PROP_CLASS_SPEC + GST_CUDANMS_N_CLASS_SPECS - 1,
  PROP_MIN_WIDTH,
  PROP_MIN_HEIGHT,
  PROP_MAX_DETECTIONS_PER_CLASS,
  PROP_LANE_DISTANCE,
  PROP_KEYPOINT_DIMS,
  PROP_SLICE_SIZE,
  PROP_SLICE_OVERLAP,
  PROP_SLICE_FULL_FRAME,
  PROP_MERGE,
  PROP_MERGE_METRIC,
  PROP_MERGE_THRESHOLD,
  PROP_MERGE_CLASS_AGNOSTIC,
  PROP_MERGE_RULES
};

struct _GstCudanms
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  gfloat iou;
  gfloat score_threshold;
  gint max_detections;
  gint max_candidates;
  gboolean class_agnostic;
  gchar *label_file;
  GstCudanmsLayout layout;
  gchar *model_size;            /* NULL (a tensor decoder): the frame */
  gint model_width;             /* 0 with model_size NULL */
  gint model_height;
  gboolean letterbox;
  gchar *tensor_id;
  GstCudanmsDevice device;
  gint cuda_device_id;
  const gchar *backend_name;    /* read-only: the last buffer's backend */
  GstCudanmsAttachMeta attach_meta;
  gboolean roi_params;
  GstCudanmsClasses classes;    /* the per-class controls */
  guint min_width, min_height;
  guint max_detections_per_class;
  gfloat lane_distance;
  gint keypoint_dims;
  gchar *slice_size;            /* NULL: no slices */
  gint slice_width, slice_height;
  gdouble slice_overlap;
  gboolean slice_full_frame;
  GstCudanmsMerge merge;
  GstCudanmsMergeMetric merge_metric;
  gdouble merge_threshold;
  gboolean merge_class_agnostic;
  GstCudanmsMergeRules merge_rules;
  gboolean labels_ready;        /* labels loaded: class names resolve */

  /* streaming state, made in start/set_caps */
  GstCudanmsBackend be;
  gint frame_width;
  gint frame_height;
  GstCudanmsLabels labels;
  GstCudanmsStats stats;        /* counters under the object lock */

  /* the tensor read in before_transform, used in transform_ip */
  GstCudanmsTensorLookup lookup;
  GstCudanmsTensorView view;
  GstCudanmsTensorView protos;  /* layout yolov8-seg: its prototypes */
  GstCudanmsMaskPool *mask_pool;        /* the masks' bytes, reused */
  gchar msg[256];
  /* the caps are a batch's (multistream/x-analytics-batch) */
  gboolean batch_caps;
  /* slices: the grid of the frame (grows only), and the slicing the
   * tensor was read under (before_transform: slice_width 0, none) */
  cnms_slice *slices;
  gint slices_cap;
  gint tile_width, tile_height;
  gdouble tile_overlap;
  gboolean tile_full_frame;
  /* the slicing the caps describe (slice-width, slice-height,
   * slice-overlap, slice-full-frame fields): caps_slice_width 0, none */
  gint caps_slice_width, caps_slice_height;
  gdouble caps_slice_overlap;
  gboolean caps_slice_full_frame;
#ifdef HAVE_GST_BATCH_META
  GstCudanmsBatch batch;        /* the frames of the batch buffer */
#endif
};

/* video frames; on GStreamer >= 1.28 also batches of many streams'
 * frames (GstAnalyticsBatchMeta) */
#ifdef HAVE_GST_BATCH_META
#define CUDANMS_CAPS "video/x-raw; video/x-raw(ANY); " \
    "multistream/x-analytics-batch(meta:GstAnalyticsBatchMeta)"
#else
#define CUDANMS_CAPS "video/x-raw; video/x-raw(ANY)"
#endif
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (CUDANMS_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (CUDANMS_CAPS));

#define gst_cudanms_parent_class parent_class
G_DEFINE_TYPE (GstCudanms, gst_cudanms, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (cudanms, "cudanms", GST_RANK_NONE,
    GST_TYPE_CUDANMS);

static void
gst_cudanms_init (GstCudanms * self)
{
  self->iou = DEFAULT_PROP_IOU;
  self->score_threshold = DEFAULT_PROP_SCORE_THRESHOLD;
  self->max_detections = DEFAULT_PROP_MAX_DETECTIONS;
  self->max_candidates = DEFAULT_PROP_MAX_CANDIDATES;
  self->class_agnostic = DEFAULT_PROP_CLASS_AGNOSTIC;
  self->label_file = g_strdup (DEFAULT_PROP_LABEL_FILE);
  self->layout = DEFAULT_PROP_LAYOUT;
  self->model_size = g_strdup (DEFAULT_PROP_MODEL_SIZE);
  self->model_width = CNMS_DEFAULT_MODEL_WIDTH;
  self->model_height = CNMS_DEFAULT_MODEL_HEIGHT;
  self->letterbox = DEFAULT_PROP_LETTERBOX;
  self->tensor_id = g_strdup (DEFAULT_PROP_TENSOR_ID);
  self->device = DEFAULT_PROP_DEVICE;
  self->cuda_device_id = DEFAULT_PROP_CUDA_DEVICE_ID;
  self->backend_name = DEFAULT_PROP_BACKEND;
  self->attach_meta = DEFAULT_PROP_ATTACH_META;
  self->roi_params = DEFAULT_PROP_ROI_PARAMS;
  self->lane_distance = DEFAULT_PROP_LANE_DISTANCE;
  self->keypoint_dims = DEFAULT_PROP_KEYPOINT_DIMS;
  self->slice_size = g_strdup (DEFAULT_PROP_SLICE_SIZE);
  self->slice_overlap = DEFAULT_PROP_SLICE_OVERLAP;
  self->slice_full_frame = DEFAULT_PROP_SLICE_FULL_FRAME;
  self->merge = DEFAULT_PROP_MERGE;
  self->merge_metric = DEFAULT_PROP_MERGE_METRIC;
  self->merge_threshold = DEFAULT_PROP_MERGE_THRESHOLD;
  self->merge_class_agnostic = DEFAULT_PROP_MERGE_CLASS_AGNOSTIC;
  self->merge_rules = DEFAULT_PROP_MERGE_RULES;
  self->protos = (GstCudanmsTensorView) GST_CUDANMS_TENSOR_VIEW_INIT;
  self->mask_pool = gst_cudanms_mask_pool_new ();
  gst_cudanms_classes_init (&self->classes);
  gst_cudanms_stats_init (&self->stats);
#ifdef HAVE_GST_BATCH_META
  gst_cudanms_batch_init (&self->batch);
#endif

  /* Metadata only: in place, never passthrough, so transform_ip always runs
   * on a writable buffer (a shallow copy at most: memory is shared). */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

/* A tensor decoder's default: the boxes are in the frame's pixels. */
static void
gst_cudanms_set_model_size_frame (GstCudanms * self)
{
  g_clear_pointer (&self->model_size, g_free);
  self->model_width = 0;
  self->model_height = 0;
}

/* FALSE (and nothing changed) when str is not a size. */
static gboolean
gst_cudanms_set_model_size (GstCudanms * self, const gchar * str)
{
  gint w, h;

  if (cnms_parse_size (str, &w, &h) != CNMS_OK)
    return FALSE;
  g_free (self->model_size);
  self->model_size = g_strdup_printf ("%dx%d", w, h);
  self->model_width = w;
  self->model_height = h;
  return TRUE;
}

static void
gst_cudanms_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudanms *self = GST_CUDANMS (object);
  gchar *kept = NULL;
  gboolean refused_slice = FALSE;
  const gchar *refused_meta = NULL, *kept_meta = NULL;
  GError *refused_class = NULL;
  GstCudanmsClassSpec spec = prop_id - PROP_CLASS_SPEC;

  GST_OBJECT_LOCK (self);
  if (prop_id >= PROP_CLASS_SPEC && prop_id <= PROP_CLASS_SPEC_LAST) {
    /* names resolve once the label file is read (start), else at start */
    gst_cudanms_classes_set (&self->classes, spec, g_value_get_string (value),
        self->labels_ready ? &self->labels : NULL, &refused_class);
    GST_OBJECT_UNLOCK (self);
    if (refused_class != NULL) {
      g_warning ("%s: %s=\"%s\" refused: %s; the previous value stays",
          GST_ELEMENT_NAME (self), gst_cudanms_class_spec_name (spec),
          GST_STR_NULL (g_value_get_string (value)), refused_class->message);
      GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
          ("%s=\"%s\" refused: %s; the previous value stays.",
              gst_cudanms_class_spec_name (spec),
              GST_STR_NULL (g_value_get_string (value)),
              refused_class->message), (NULL));
      g_error_free (refused_class);
    }
    return;
  }
  switch (prop_id) {
    case PROP_IOU:
      self->iou = g_value_get_float (value);
      break;
    case PROP_SCORE_THRESHOLD:
      self->score_threshold = g_value_get_float (value);
      break;
    case PROP_MAX_DETECTIONS:
      self->max_detections = g_value_get_int (value);
      break;
    case PROP_MAX_CANDIDATES:
      self->max_candidates = g_value_get_int (value);
      break;
    case PROP_CLASS_AGNOSTIC:
      self->class_agnostic = g_value_get_boolean (value);
      break;
    case PROP_LABEL_FILE:
      g_free (self->label_file);
      self->label_file = g_value_dup_string (value);
      break;
    case PROP_LAYOUT:
      self->layout = g_value_get_enum (value);
      break;
    case PROP_MODEL_SIZE:
      /* NULL where it is the default: a tensor decoder's, the frame */
      if (g_value_get_string (value) == NULL
          && G_PARAM_SPEC_STRING (pspec)->default_value == NULL)
        gst_cudanms_set_model_size_frame (self);
      else if (!gst_cudanms_set_model_size (self, g_value_get_string (value)))
        kept = g_strdup (self->model_size != NULL ? self->model_size :
            "the frame's size");
      break;
    case PROP_LETTERBOX:
      self->letterbox = g_value_get_boolean (value);
      break;
    case PROP_TENSOR_ID:
      g_free (self->tensor_id);
      self->tensor_id = g_value_dup_string (value);
      break;
    case PROP_DEVICE:
      self->device = g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      self->cuda_device_id = g_value_get_int (value);
      break;
    case PROP_ATTACH_META:
      /* stopped, start() refuses what this build cannot attach (an
       * element error); running, the old value stays */
      if (GST_STATE (self) > GST_STATE_READY
          && !gst_cudanms_attach_meta_available (g_value_get_enum (value))) {
        refused_meta = gst_cudanms_attach_meta_nick (g_value_get_enum (value));
        kept_meta = gst_cudanms_attach_meta_nick (self->attach_meta);
      } else {
        self->attach_meta = g_value_get_enum (value);
      }
      break;
    case PROP_ROI_PARAMS:
      self->roi_params = g_value_get_boolean (value);
      break;
    case PROP_MIN_WIDTH:
      self->min_width = g_value_get_uint (value);
      break;
    case PROP_MIN_HEIGHT:
      self->min_height = g_value_get_uint (value);
      break;
    case PROP_MAX_DETECTIONS_PER_CLASS:
      self->max_detections_per_class = g_value_get_uint (value);
      break;
    case PROP_KEYPOINT_DIMS:
      self->keypoint_dims = g_value_get_int (value);
      break;
    case PROP_LANE_DISTANCE:
      self->lane_distance = g_value_get_float (value);
      break;
    case PROP_SLICE_SIZE:{
      const gchar *str = g_value_get_string (value);
      gint w, h;

      if (str == NULL || *str == '\0') {
        g_clear_pointer (&self->slice_size, g_free);
        self->slice_width = self->slice_height = 0;
      } else if (cnms_parse_size (str, &w, &h) == CNMS_OK) {
        g_free (self->slice_size);
        self->slice_size = g_strdup_printf ("%dx%d", w, h);
        self->slice_width = w;
        self->slice_height = h;
      } else {
        refused_slice = TRUE;
      }
      break;
    }
    case PROP_SLICE_OVERLAP:
      self->slice_overlap = g_value_get_double (value);
      break;
    case PROP_SLICE_FULL_FRAME:
      self->slice_full_frame = g_value_get_boolean (value);
      break;
    case PROP_MERGE:
      self->merge = g_value_get_enum (value);
      break;
    case PROP_MERGE_METRIC:
      self->merge_metric = g_value_get_enum (value);
      break;
    case PROP_MERGE_THRESHOLD:
      self->merge_threshold = g_value_get_double (value);
      break;
    case PROP_MERGE_CLASS_AGNOSTIC:
      self->merge_class_agnostic = g_value_get_boolean (value);
      break;
    case PROP_MERGE_RULES:
      self->merge_rules = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  /* a refused model-size: a GLib warning, and an element warning where
   * there is a bus; posted without the lock */
  if (kept != NULL) {
    const gchar *refused = g_value_get_string (value);

    g_warning ("%s: model-size \"%s\" is not WxH with sizes in [1, %d] "
        "(e.g. 640x640); keeping %s", GST_ELEMENT_NAME (self),
        GST_STR_NULL (refused), CNMS_SIZE_MAX, kept);
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("model-size \"%s\" is not WxH with sizes in [1, %d] (e.g. "
            "640x640); keeping %s.", GST_STR_NULL (refused), CNMS_SIZE_MAX,
            kept), (NULL));
  }
  g_free (kept);
  if (refused_slice) {
    const gchar *refused = g_value_get_string (value);

    g_warning ("%s: slice-size \"%s\" is not WxH with sizes in [1, %d] "
        "(e.g. 640x640); the previous value stays", GST_ELEMENT_NAME (self),
        refused, CNMS_SIZE_MAX);
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("slice-size \"%s\" is not WxH with sizes in [1, %d] (e.g. "
            "640x640); the previous value stays.", refused, CNMS_SIZE_MAX),
        (NULL));
  }
  if (refused_meta != NULL) {
    g_warning ("%s: attach-meta=%s needs GStreamer's analytics library, "
        "which this build lacks; keeping attach-meta=%s",
        GST_ELEMENT_NAME (self), refused_meta, kept_meta);
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("attach-meta=%s needs GStreamer's analytics library (>= 1.24), "
            "which this build lacks; keeping attach-meta=%s.", refused_meta,
            kept_meta), (NULL));
  }
}

static void
gst_cudanms_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudanms *self = GST_CUDANMS (object);

  GST_OBJECT_LOCK (self);
  if (prop_id >= PROP_CLASS_SPEC && prop_id <= PROP_CLASS_SPEC_LAST) {
    g_value_set_string (value, self->classes.spec[prop_id - PROP_CLASS_SPEC]);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_IOU:
      g_value_set_float (value, self->iou);
      break;
    case PROP_SCORE_THRESHOLD:
      g_value_set_float (value, self->score_threshold);
      break;
    case PROP_MAX_DETECTIONS:
      g_value_set_int (value, self->max_detections);
      break;
    case PROP_MAX_CANDIDATES:
      g_value_set_int (value, self->max_candidates);
      break;
    case PROP_CLASS_AGNOSTIC:
      g_value_set_boolean (value, self->class_agnostic);
      break;
    case PROP_LABEL_FILE:
      g_value_set_string (value, self->label_file);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->layout);
      break;
    case PROP_MODEL_SIZE:
      g_value_set_string (value, self->model_size);
      break;
    case PROP_LETTERBOX:
      g_value_set_boolean (value, self->letterbox);
      break;
    case PROP_TENSOR_ID:
      g_value_set_string (value, self->tensor_id);
      break;
    case PROP_DEVICE:
      g_value_set_enum (value, self->device);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->cuda_device_id);
      break;
    case PROP_BACKEND:
      g_value_set_string (value, self->backend_name);
      break;
    case PROP_ATTACH_META:
      g_value_set_enum (value, self->attach_meta);
      break;
    case PROP_ROI_PARAMS:
      g_value_set_boolean (value, self->roi_params);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, gst_cudanms_stats_to_structure (&self->stats));
      break;
    case PROP_MIN_WIDTH:
      g_value_set_uint (value, self->min_width);
      break;
    case PROP_MIN_HEIGHT:
      g_value_set_uint (value, self->min_height);
      break;
    case PROP_MAX_DETECTIONS_PER_CLASS:
      g_value_set_uint (value, self->max_detections_per_class);
      break;
    case PROP_KEYPOINT_DIMS:
      g_value_set_int (value, self->keypoint_dims);
      break;
    case PROP_LANE_DISTANCE:
      g_value_set_float (value, self->lane_distance);
      break;
    case PROP_SLICE_SIZE:
      g_value_set_string (value, self->slice_size);
      break;
    case PROP_SLICE_OVERLAP:
      g_value_set_double (value, self->slice_overlap);
      break;
    case PROP_SLICE_FULL_FRAME:
      g_value_set_boolean (value, self->slice_full_frame);
      break;
    case PROP_MERGE:
      g_value_set_enum (value, self->merge);
      break;
    case PROP_MERGE_METRIC:
      g_value_set_enum (value, self->merge_metric);
      break;
    case PROP_MERGE_THRESHOLD:
      g_value_set_double (value, self->merge_threshold);
      break;
    case PROP_MERGE_CLASS_AGNOSTIC:
      g_value_set_boolean (value, self->merge_class_agnostic);
      break;
    case PROP_MERGE_RULES:
      g_value_set_enum (value, self->merge_rules);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cudanms_finalize (GObject * object)
{
  GstCudanms *self = GST_CUDANMS (object);

  g_free (self->label_file);
  g_free (self->model_size);
  g_free (self->tensor_id);
  g_free (self->slice_size);
  g_free (self->slices);
  gst_cudanms_classes_clear (&self->classes);
  gst_cudanms_stats_clear (&self->stats);
  gst_cudanms_mask_pool_unref (self->mask_pool);
#ifdef HAVE_GST_BATCH_META
  gst_cudanms_batch_clear (&self->batch);
#endif
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static gboolean
gst_cudanms_start (GstBaseTransform * trans)
{
  GstCudanms *self = GST_CUDANMS (trans);
  GstCudanmsDevice device;
  gint device_id;
  gchar *label_file;
  GstCudanmsAttachMeta attach_meta;

  GST_OBJECT_LOCK (self);
  device = self->device;
  device_id = self->cuda_device_id;
  label_file = g_strdup (self->label_file);
  attach_meta = self->attach_meta;
  GST_OBJECT_UNLOCK (self);

  if (!gst_cudanms_attach_meta_available (attach_meta))
    goto no_analytics;

  gst_cudanms_stats_start (GST_ELEMENT (self), &self->stats);
  if (!gst_cudanms_labels_start (GST_ELEMENT (self), &self->labels,
          label_file))
    goto failed;
  {
    /* the class names of the per-class controls, through the labels */
    GError *err = NULL;

    GST_OBJECT_LOCK (self);
    self->labels_ready = TRUE;
    gst_cudanms_classes_resolve (&self->classes, &self->labels, &err);
    GST_OBJECT_UNLOCK (self);
    if (err != NULL) {
      GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
          ("Per-class control refused: %s; it is left unset.", err->message),
          (NULL));
      g_error_free (err);
    }
  }

  if (!gst_cudanms_backend_start (&self->be, GST_ELEMENT (self), device,
          device_id, self->msg, sizeof (self->msg)))
    goto backend_failed;
  GST_OBJECT_LOCK (self);
  self->backend_name = self->be.cuda != NULL ? "cuda" : "cpu";
  GST_OBJECT_UNLOCK (self);
  g_free (label_file);
  return TRUE;

no_analytics:
  GST_ELEMENT_ERROR (self, CORE, NOT_IMPLEMENTED,
      ("attach-meta=analytics/both needs GStreamer's analytics library "
          "(>= 1.24); this build has none."),
      ("cudanms was built without gstreamer-analytics-1.0: only "
          "attach-meta=roi works"));
  g_free (label_file);
  return FALSE;
backend_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
      ("Could not start the post-processing backend: %s", self->msg),
      ("device %d, %d CUDA devices", device_id, cnms_cuda_device_count ()));
failed:
  /* stop() is not called when start() fails */
  GST_OBJECT_LOCK (self);
  self->labels_ready = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_cudanms_labels_clear (&self->labels);
  g_free (label_file);
  return FALSE;
}

static gboolean
gst_cudanms_stop (GstBaseTransform * trans)
{
  GstCudanms *self = GST_CUDANMS (trans);

  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_tensor_view_release (&self->protos);
  self->view.device_context = NULL;
  self->protos.device_context = NULL;
#ifdef HAVE_GST_BATCH_META
  gst_cudanms_batch_release (&self->batch);
#endif
  gst_cudanms_backend_stop (&self->be);
  GST_OBJECT_LOCK (self);
  self->backend_name = NULL;
  self->labels_ready = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_cudanms_labels_clear (&self->labels);
  return TRUE;
}

/* Caps describing the detection tensor (GStreamer >= 1.28's "tensors"
 * field) are checked once here: a clear error, not a warning per buffer. */
static gboolean
gst_cudanms_check_tensor_caps (GstCudanms * self, GstCaps * caps)
{
  gchar msg[256];
  cnms_params p;
  gboolean ok;

  GST_OBJECT_LOCK (self);
  cnms_params_init (&p);
  p.keypoint_dims = self->keypoint_dims;
  ok = gst_cudanms_tensor_caps_check (caps, self->tensor_id,
      (cnms_layout) self->layout, &p, msg, sizeof (msg));
  GST_OBJECT_UNLOCK (self);
  if (!ok)
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The caps describe a detection tensor cudanms cannot decode: %s",
            msg), ("caps %" GST_PTR_FORMAT, caps));
  return ok;
}

/* The slicing a video stream's caps describe (tiles: docs/element.md),
 * which takes the place of the slicing properties: slice-width and
 * slice-height (ints), slice-overlap (double, default 0.2) and
 * slice-full-frame (boolean, default TRUE). */
static void
gst_cudanms_caps_slicing (GstCudanms * self, const GstStructure * s)
{
  gint w = 0, h = 0;
  gdouble overlap = DEFAULT_PROP_SLICE_OVERLAP;
  gboolean full = DEFAULT_PROP_SLICE_FULL_FRAME;

  self->caps_slice_width = self->caps_slice_height = 0;
  if (!gst_structure_get_int (s, "slice-width", &w)
      || !gst_structure_get_int (s, "slice-height", &h) || w < 1 || h < 1
      || w > CNMS_SIZE_MAX || h > CNMS_SIZE_MAX)
    return;
  gst_structure_get_double (s, "slice-overlap", &overlap);
  gst_structure_get_boolean (s, "slice-full-frame", &full);
  if (!(overlap >= 0.0 && overlap <= SLICE_OVERLAP_MAX)) {
    GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("The caps' slice-overlap "
            "%g is outside [0, %g]: the caps' slicing is not used.", overlap,
            SLICE_OVERLAP_MAX), (NULL));
    return;
  }
  self->caps_slice_width = w;
  self->caps_slice_height = h;
  self->caps_slice_overlap = overlap;
  self->caps_slice_full_frame = full;
  GST_INFO_OBJECT (self, "the caps slice the frame into %dx%d slices, "
      "overlap %g%s", w, h, overlap, full ? ", the whole frame last" : "");
}

static gboolean
gst_cudanms_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudanms *self = GST_CUDANMS (trans);
  GstVideoInfo info;

  /* a batch: each stream's frame size comes with its frames */
  self->batch_caps = gst_cudanms_caps_are_batch (incaps);
  if (self->batch_caps)
    return TRUE;
  if (!gst_video_info_from_caps (&info, incaps))
    goto bad_caps;
  self->frame_width = GST_VIDEO_INFO_WIDTH (&info);
  self->frame_height = GST_VIDEO_INFO_HEIGHT (&info);
  if (self->frame_width <= 0 || self->frame_height <= 0)
    goto bad_caps;
  if (!gst_cudanms_check_tensor_caps (self, incaps))
    return FALSE;
  gst_cudanms_caps_slicing (self, gst_caps_get_structure (incaps, 0));
  return TRUE;

bad_caps:
  GST_ERROR_OBJECT (self, "Invalid caps %" GST_PTR_FORMAT, incaps);
  return FALSE;
}

/* A new stream: its problems are posted once more. */
static gboolean
gst_cudanms_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START)
    gst_cudanms_stats_new_stream (&GST_CUDANMS (trans)->stats);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* Reads buffer's tensor of id (NULL: any) into view, under the layout
 * property (the fit to a forced layout: yolov8-pose's under p's
 * keypoint_dims, yolov8-seg's with the prototypes) and as the subclass
 * decodes it (decode_layout: the tensor again, by its id), and for
 * yolov8-seg its prototypes into protos: no prototypes is a bad input,
 * not a missing one. msg: why not FOUND. Called with the object lock. */
static GstCudanmsTensorLookup
gst_cudanms_read_tensor (GstCudanms * self, GstBuffer * buffer,
    const gchar * id, GstCudanmsLayout layout, const cnms_params * p,
    GstCudanmsTensorView * view, GstCudanmsTensorView * protos, gchar * msg,
    gsize msg_size)
{
  GstCudanmsClass *klass = GST_CUDANMS_GET_CLASS (self);
  GstCudanmsTensorLookup r, pr = GST_CUDANMS_TENSOR_MISSING;
  gboolean protos_read = FALSE;
  gchar pmsg[256] = "";

  if (layout == GST_CUDANMS_LAYOUT_YOLOV8_SEG) {
    pr = gst_cudanms_tensor_view_acquire_protos (protos, buffer, pmsg,
        sizeof (pmsg));
    protos_read = TRUE;
  }
  r = gst_cudanms_tensor_view_acquire (view, buffer, id, (cnms_layout) layout,
      pr == GST_CUDANMS_TENSOR_FOUND ? &protos->tensor : NULL, p, msg,
      msg_size);
  if (r == GST_CUDANMS_TENSOR_FOUND) {
    GstCudanmsLayout l = klass->decode_layout (self, view->id, layout,
        (GstCudanmsLayout) view->layout);

    if (l != (GstCudanmsLayout) view->layout) {
      gchar found[sizeof (view->id)];

      g_strlcpy (found, view->id, sizeof (found));
      gst_cudanms_tensor_view_release (view);
      r = gst_cudanms_tensor_view_acquire (view, buffer, found,
          (cnms_layout) l, NULL, p, msg, msg_size);
    }
  }
  if (r == GST_CUDANMS_TENSOR_FOUND
      && view->layout == CNMS_LAYOUT_YOLOV8_SEG) {
    if (!protos_read)
      pr = gst_cudanms_tensor_view_acquire_protos (protos, buffer, pmsg,
          sizeof (pmsg));
    if (pr != GST_CUDANMS_TENSOR_FOUND) {
      g_strlcpy (msg, pmsg, msg_size);
      gst_cudanms_tensor_view_release (view);
      r = GST_CUDANMS_TENSOR_BAD;
    }
  }
  if (r != GST_CUDANMS_TENSOR_FOUND)
    gst_cudanms_tensor_view_release (protos);
  return r;
}

/* Reads the tensor before the base class makes the buffer writable: a copy
 * would drop GStreamer 1.26's GstTensorMeta. */
static void
gst_cudanms_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstCudanms *self = GST_CUDANMS (trans);
  cnms_params p;

  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_tensor_view_release (&self->protos);
  /* a batch's tensors are on its frames, read in transform_ip */
  if (self->batch_caps)
    return;
  /* a device tensor of the pipeline's CUDA context is used in place */
  self->view.device_context = gst_cudanms_backend_device_context (&self->be);
  self->protos.device_context = self->view.device_context;
  cnms_params_init (&p);
  GST_OBJECT_LOCK (self);
  p.keypoint_dims = self->keypoint_dims;
  if (self->caps_slice_width > 0) {
    /* the caps' slicing: what the stream is */
    self->tile_width = self->caps_slice_width;
    self->tile_height = self->caps_slice_height;
    self->tile_overlap = self->caps_slice_overlap;
    self->tile_full_frame = self->caps_slice_full_frame;
  } else {
    self->tile_width = self->slice_width;
    self->tile_height = self->slice_height;
    self->tile_overlap = self->slice_overlap;
    self->tile_full_frame = self->slice_full_frame;
  }
  if (self->tile_width > 0)
    /* slices: one frame of the tensor [B, ...] a slice */
    self->lookup = gst_cudanms_tensor_view_acquire_batch (&self->view,
        buffer, self->tensor_id, (cnms_layout) self->layout, NULL, &p,
        self->msg, sizeof (self->msg));
  else
    self->lookup = gst_cudanms_read_tensor (self, buffer, self->tensor_id,
        self->layout, &p, &self->view, &self->protos, self->msg,
        sizeof (self->msg));
  GST_OBJECT_UNLOCK (self);
  if (self->lookup != GST_CUDANMS_TENSOR_FOUND)
    return;
  /* a device tensor of another CUDA context (another GPU) was read
   * through host memory: counted, and said once */
  if (self->view.other_context != NULL || self->protos.other_context != NULL)
    gst_cudanms_stats_other_context (GST_ELEMENT (self), &self->stats,
        G_OBJECT (self->view.device_context),
        G_OBJECT (self->view.other_context != NULL ?
            self->view.other_context : self->protos.other_context));
}

/* cnms_detect failed with st, not for a bad tensor (CUDA, memory): a
 * fatal element error with the library's reason; out of memory also
 * names what bounds the memory a frame takes. */
static void
post_detect_failed (GstCudanms * self, cnms_status st, cnms_ctx * ctx,
    gint max_candidates)
{
  const gchar *detail = ctx != NULL ? cnms_ctx_error (ctx) :
      "no backend for the tensor";

  if (st == CNMS_ERR_NO_MEMORY)
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Post-processing failed: out of memory: %s. max-candidates=%d "
            "bounds the suppression mask (it grows with its square), "
            "max-detections the kept records and their masks: lower them "
            "or free memory, then restart the element.", detail,
            max_candidates), ("%s", detail));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Post-processing failed: %s", cnms_status_str (st)), ("%s",
            detail));
}

/* Whether payloads (cnms_ctx_payload) carry head for each of n records:
 * the library's contract, checked before the metas read them. */
static gboolean
payloads_fit (const cnms_payloads * payloads, cnms_head head, gint n)
{
  return payloads->head == head && payloads->n == n && (n == 0
      || payloads->records != NULL);
}

/* The parameters of a buffer from the properties (the frame size is the
 * caller's); attach_meta and roi_params as they are now. */
static void
gst_cudanms_read_params (GstCudanms * self, cnms_params * p,
    GstCudanmsAttachMeta * attach_meta, gboolean * roi_params)
{
  cnms_params_init (p);
  GST_OBJECT_LOCK (self);
  p->iou = self->iou;
  p->score_threshold = self->score_threshold;
  p->max_detections = self->max_detections;
  p->max_candidates = self->max_candidates;
  p->class_agnostic = self->class_agnostic;
  p->model_width = self->model_width;
  p->model_height = self->model_height;
  p->letterbox = self->letterbox;
  p->min_width = (gfloat) self->min_width;
  p->min_height = (gfloat) self->min_height;
  p->max_detections_per_class = (gint) self->max_detections_per_class;
  /* each class's values from this buffer's frame-wide ones */
  gst_cudanms_classes_apply (&self->classes, p);
  *attach_meta = self->attach_meta;
  *roi_params = self->roi_params;
  p->lane_distance = self->lane_distance;
  p->keypoint_dims = self->keypoint_dims;
  GST_OBJECT_UNLOCK (self);
}

/* p's frame size, the caps'; a model size unset (a tensor decoder: the
 * boxes are in the pixels of what the model saw) becomes seen_w x
 * seen_h. */
static void
gst_cudanms_frame_params (GstCudanms * self, cnms_params * p, gint seen_w,
    gint seen_h)
{
  p->frame_width = self->frame_width;
  p->frame_height = self->frame_height;
  if (p->model_width == 0) {
    p->model_width = seen_w;
    p->model_height = seen_h;
  }
}

#ifdef HAVE_GST_BATCH_META
static GstFlowReturn gst_cudanms_transform_batch (GstCudanms * self,
    GstBuffer * buffer);
#endif
static GstFlowReturn gst_cudanms_transform_tiles (GstCudanms * self,
    GstBuffer * buffer);

/* Attaches a frame's n_dets kept records and what they carry (payloads,
 * of the layout report names) to buffer, a frame of width x height. */
static void
gst_cudanms_attach_frame (GstCudanms * self, GstBuffer * buffer,
    const cnms_report * report, const cnms_det * dets, gint n_dets,
    const cnms_payloads * payloads, gint width, gint height,
    GstCudanmsAttachMeta attach_meta, gboolean roi_params)
{
  /* what the records carry besides their boxes: the layout's head */
  const cnms_layout_desc *desc = cnms_layout_info (report->shape.layout);
  GstCudanmsPayload payload = { 0, NULL, NULL };
  gboolean with_payload = desc->head != CNMS_HEAD_NONE;

  if (with_payload && !payloads_fit (payloads, desc->head, n_dets)) {
    /* the library's contract says otherwise: boxes without payload */
    GST_WARNING_OBJECT (self, "%d %s payload records (head %d) for %d "
        "boxes: boxes attached without them", payloads->n, desc->name,
        (gint) payloads->head, n_dets);
    with_payload = FALSE;
  }
  payload.keypoint_dims = report->shape.keypoint_dims;
  if (with_payload && desc->head == CNMS_HEAD_MASK && n_dets > 0) {
    /* each copy of the bytes only where it is attached: the ROIs' "mask"
     * structures, the segmentation mtds */
    gst_cudanms_mask_pool_fill (self->mask_pool, payloads,
        (attach_meta & GST_CUDANMS_ATTACH_META_ROI)
        && roi_params ? &payload.mask_data : NULL,
#ifdef HAVE_GST_TENSOR_META
        (attach_meta & GST_CUDANMS_ATTACH_META_ANALYTICS) ?
        &payload.region_data : NULL
#else
        NULL
#endif
        );
  }
  if (!gst_cudanms_attach_detections (buffer, &self->labels, desc, dets,
          n_dets, with_payload ? payloads : NULL, &payload, width, height,
          attach_meta, roi_params, GST_ELEMENT_NAME (self)))
    GST_WARNING_OBJECT (self, "could not attach every analytics mtd");
  gst_clear_buffer (&payload.mask_data);
  gst_clear_buffer (&payload.region_data);
}

static GstFlowReturn
gst_cudanms_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstCudanms *self = GST_CUDANMS (trans);
  GstCudanmsClass *klass = GST_CUDANMS_GET_CLASS (self);
  const cnms_det *dets = NULL;
  cnms_params p;
  GstCudanmsAttachMeta attach_meta;
  gboolean roi_params;
  cnms_ctx *ctx = NULL;
  cnms_status st;
  gint n_dets = 0;
  cnms_payloads payloads;
  GstClockTime took, t_out;
  const cnms_report *report;

#ifdef HAVE_GST_BATCH_META
  if (self->batch_caps)
    return gst_cudanms_transform_batch (self, buffer);
#endif
  if (self->tile_width > 0)
    return gst_cudanms_transform_tiles (self, buffer);
  /* before_transform always runs first and has read the tensor */
  if (self->lookup != GST_CUDANMS_TENSOR_FOUND)
    goto problem;

  gst_cudanms_read_params (self, &p, &attach_meta, &roi_params);
  /* model-size NULL (a tensor decoder): the model saw the frame */
  gst_cudanms_frame_params (self, &p, self->frame_width, self->frame_height);

  /* cnms_detect validates the tensor against the layout, once */
  st = gst_cudanms_backend_detect (&self->be, &self->view.tensor,
      self->view.layout == CNMS_LAYOUT_YOLOV8_SEG ? &self->protos.tensor :
      NULL, self->view.layout, &p, &dets, &n_dets, &ctx, &took);
  if (ctx != NULL) {
    GST_OBJECT_LOCK (self);
    self->backend_name = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA ?
        "cuda" : "cpu";
    GST_OBJECT_UNLOCK (self);
  }
  if (st == CNMS_ERR_BAD_TENSOR) {
    /* worded as the search words a tensor that fits no layout */
    if (self->view.id[0] != '\0')
      g_snprintf (self->msg, sizeof (self->msg), "tensor '%s': %s",
          self->view.id, cnms_ctx_error (ctx));
    else
      g_strlcpy (self->msg, cnms_ctx_error (ctx), sizeof (self->msg));
    self->lookup = GST_CUDANMS_TENSOR_BAD;
    goto problem;
  }
  if (st != CNMS_OK)
    goto detect_failed;
  report = cnms_ctx_report (ctx);
  /* every row's score NaN or Inf: nothing of the tensor is usable */
  if (report->shape.n_anchors > 0
      && report->nonfinite_scores == report->shape.n_anchors) {
    g_strlcpy (self->msg, "tensor holds only NaN/Inf values in its scores",
        sizeof (self->msg));
    self->lookup = GST_CUDANMS_TENSOR_BAD;
    goto problem;
  }

  /* lanes with fewer than 2 points: not returned, counted */
  gst_cudanms_stats_lanes_without_points (GST_ELEMENT (self), &self->stats,
      report->lanes_without_points);
  gst_cudanms_stats_frame (GST_ELEMENT (self), &self->stats, report,
      &self->view.tensor, self->view.layout, &p, dets, n_dets,
      &self->labels);
  GST_LOG_OBJECT (self, "%s: %d candidates -> %d detections",
      cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA ? "cuda" : "cpu",
      report->candidates, n_dets);
  t_out = gst_util_get_timestamp ();
  cnms_ctx_payload (ctx, &payloads);
  gst_cudanms_attach_frame (self, buffer, report, dets, n_dets, &payloads,
      self->frame_width, self->frame_height, attach_meta, roi_params);
  gst_cudanms_stats_times (GST_ELEMENT (self), &self->stats, took,
      gst_util_get_timestamp () - t_out);
  if (klass->tensors_decoded != NULL)
    klass->tensors_decoded (self, buffer);
  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_tensor_view_release (&self->protos);
  return GST_FLOW_OK;

problem:
  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_tensor_view_release (&self->protos);
  gst_cudanms_stats_problem (GST_ELEMENT (self), &self->stats,
      self->lookup == GST_CUDANMS_TENSOR_MISSING, self->msg);
  return GST_FLOW_OK;
detect_failed:
  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_tensor_view_release (&self->protos);
  post_detect_failed (self, st, ctx, p.max_candidates);
  return GST_FLOW_ERROR;
}

/* The slices of the frame (slice-size as before_transform read it), into
 * self->slices: their count, or -1 (msg says why). */
static gint
gst_cudanms_frame_slices (GstCudanms * self)
{
  const gint w = self->frame_width, h = self->frame_height;
  gint n = cnms_slice_grid (w, h, self->tile_width, self->tile_height,
      self->tile_overlap, self->tile_overlap, NULL, 0);

  if (n < 0) {
    g_snprintf (self->msg, sizeof (self->msg), "the %dx%d frame has no "
        "grid of %dx%d slices overlapping by %g", w, h, self->tile_width,
        self->tile_height, self->tile_overlap);
    return -1;
  }
  if (n + 1 > self->slices_cap) {
    self->slices = g_renew (cnms_slice, self->slices, n + 1);
    self->slices_cap = n + 1;
  }
  cnms_slice_grid (w, h, self->tile_width, self->tile_height,
      self->tile_overlap, self->tile_overlap, self->slices, n);
  if (self->tile_full_frame) {
    self->slices[n].x1 = self->slices[n].y1 = 0;
    self->slices[n].x2 = w;
    self->slices[n].y2 = h;
    n++;
  }
  return n;
}

/* A frame cut into slices (slice-size): its tensor [B, ...] of one frame a
 * slice decoded, shifted into the frame and merged (cnms_detect_tiles),
 * and the merged detections attached to the frame. */
static GstFlowReturn
gst_cudanms_transform_tiles (GstCudanms * self, GstBuffer * buffer)
{
  const cnms_det *dets = NULL;
  cnms_params p;
  cnms_merge_params m;
  GstCudanmsAttachMeta attach_meta;
  gboolean roi_params;
  cnms_ctx *ctx = NULL;
  cnms_status st;
  cnms_report report;
  cnms_payloads none;
  cnms_tensor one;
  GstClockTime took, t_out;
  gint n_dets = 0, n;

  if (self->lookup != GST_CUDANMS_TENSOR_FOUND)
    goto problem;
  gst_cudanms_read_params (self, &p, &attach_meta, &roi_params);
  /* model-size NULL (a tensor decoder): the model saw the slice */
  gst_cudanms_frame_params (self, &p, self->tile_width, self->tile_height);
  cnms_merge_params_init (&m);
  GST_OBJECT_LOCK (self);
  m.rule = (cnms_merge_rule) self->merge;
  m.metric = (cnms_match_metric) self->merge_metric;
  m.threshold = self->merge_threshold;
  m.class_agnostic = self->merge_class_agnostic;
  m.rules = (cnms_merge_rules) self->merge_rules;
  GST_OBJECT_UNLOCK (self);

  n = gst_cudanms_frame_slices (self);
  if (n < 0) {
    self->lookup = GST_CUDANMS_TENSOR_BAD;
    goto problem;
  }
  if (self->view.tensor.n_dims < 3 || self->view.tensor.dims[0] != n) {
    g_snprintf (self->msg, sizeof (self->msg), "the tensor holds %lld "
        "frames, the %dx%d frame makes %d slices (slice-size=%dx%d, "
        "slice-overlap=%g%s)", self->view.tensor.n_dims >= 3 ?
        (long long) self->view.tensor.dims[0] : 1LL, self->frame_width,
        self->frame_height, n, self->tile_width, self->tile_height,
        self->tile_overlap, self->tile_full_frame ?
        ", and the whole frame" : "");
    self->lookup = GST_CUDANMS_TENSOR_BAD;
    goto problem;
  }
  st = gst_cudanms_backend_detect_tiles (&self->be, &self->view.tensor,
      self->slices, n, self->frame_width, self->frame_height,
      self->view.layout, &p, &m, &dets, &n_dets, &ctx, &took);
  if (ctx != NULL) {
    GST_OBJECT_LOCK (self);
    self->backend_name = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA ?
        "cuda" : "cpu";
    GST_OBJECT_UNLOCK (self);
  }
  if (st == CNMS_ERR_BAD_TENSOR || st == CNMS_ERR_UNSUPPORTED) {
    g_strlcpy (self->msg, cnms_ctx_error (ctx), sizeof (self->msg));
    self->lookup = GST_CUDANMS_TENSOR_BAD;
    goto problem;
  }
  if (st != CNMS_OK) {
    gst_cudanms_tensor_view_release (&self->view);
    post_detect_failed (self, st, ctx, p.max_candidates);
    return GST_FLOW_ERROR;
  }

  /* the merged records: boxes of the slices' layout */
  memset (&report, 0, sizeof report);
  one = self->view.tensor;
  one.size /= (size_t) one.dims[0];
  one.dims[0] = 1;
  p.frame_width = self->slices[0].x2 - self->slices[0].x1;
  p.frame_height = self->slices[0].y2 - self->slices[0].y1;
  if (cnms_tensor_shape (&one, NULL, self->view.layout, &p, &report.shape,
          NULL, 0) != CNMS_OK)
    report.shape.layout = CNMS_LAYOUT_YOLOV8;
  report.kept = n_dets;
  memset (&none, 0, sizeof none);
  gst_cudanms_stats_frame (GST_ELEMENT (self), &self->stats, &report,
      &self->view.tensor, self->view.layout, &p, dets, n_dets,
      &self->labels);
  t_out = gst_util_get_timestamp ();
  gst_cudanms_attach_frame (self, buffer, &report, dets, n_dets, &none,
      self->frame_width, self->frame_height, attach_meta, roi_params);
  gst_cudanms_stats_times (GST_ELEMENT (self), &self->stats, took,
      gst_util_get_timestamp () - t_out);
  gst_cudanms_tensor_view_release (&self->view);
  return GST_FLOW_OK;

problem:
  gst_cudanms_tensor_view_release (&self->view);
  gst_cudanms_stats_problem (GST_ELEMENT (self), &self->stats,
      self->lookup == GST_CUDANMS_TENSOR_MISSING, self->msg);
  return GST_FLOW_OK;
}

#ifdef HAVE_GST_BATCH_META
/* Frame f of a batch passes without ROIs: counted as a buffer and for its
 * stream, and warned once per stream. */
static void
gst_cudanms_batch_frame_problem (GstCudanms * self,
    const GstCudanmsBatchFrame * f, gboolean missing, const gchar * msg)
{
  gst_cudanms_stats_problem (GST_ELEMENT (self), &self->stats, missing, msg);
  gst_cudanms_stats_stream (GST_ELEMENT (self), &self->stats, f->stream,
      missing, !missing, 0);
}

/* A batch buffer (GstAnalyticsBatchMeta): every frame with a tensor
 * decoded in one cnms_detect_batch, its detections attached to the
 * frame's own buffer (made writable and stored back into the meta); the
 * other objects pass untouched. See docs/contracts.md, "Batches". */
static GstFlowReturn
gst_cudanms_transform_batch (GstCudanms * self, GstBuffer * buffer)
{
  GstCudanmsBatch *b = &self->batch;
  GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (buffer);
  const cnms_frame_result *res = NULL;
  GstCudanmsAttachMeta attach_meta;
  GstCudanmsLayout layout;
  gboolean roi_params, whole = FALSE;
  cnms_layout call_layout = CNMS_LAYOUT_AUTO;
  cnms_ctx *ctx = NULL;
  cnms_status st;
  cnms_params p;
  GstClockTime took, t_out;
  gchar *id;
  guint i, m = 0;

  if (meta == NULL) {
    gst_cudanms_stats_problem (GST_ELEMENT (self), &self->stats, TRUE,
        "a batch buffer without a GstAnalyticsBatchMeta");
    return GST_FLOW_OK;
  }
  if (!gst_cudanms_batch_collect (b, meta,
          gst_cudanms_backend_device_context (&self->be))) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Cannot allocate the frames of a batch"), (NULL));
    return GST_FLOW_ERROR;
  }
  gst_cudanms_stats_batch (GST_ELEMENT (self), &self->stats, b->n_other);
  gst_cudanms_read_params (self, &p, &attach_meta, &roi_params);
  GST_OBJECT_LOCK (self);
  layout = self->layout;
  id = g_strdup (self->tensor_id);

  /* each frame's own tensor */
  for (i = 0; i < b->n_frames; i++) {
    GstCudanmsBatchFrame *f = &b->frames[i];
    gchar msg[256] = "";

    f->lookup = gst_cudanms_read_tensor (self, GST_BUFFER (*f->slot), id,
        layout, &p, &f->view, &f->protos, msg, sizeof (msg));
    if (f->lookup == GST_CUDANMS_TENSOR_FOUND && (f->width <= 0
            || f->height <= 0)) {
      g_snprintf (msg, sizeof (msg), "stream %u of the batch has no video "
          "caps: its frames' size is unknown", f->stream);
      gst_cudanms_tensor_view_release (&f->view);
      gst_cudanms_tensor_view_release (&f->protos);
      f->lookup = GST_CUDANMS_TENSOR_BAD;
    }
    if (f->lookup == GST_CUDANMS_TENSOR_FOUND) {
      if (m == 0)
        call_layout = f->view.layout;
      m++;
    }
  }
  GST_OBJECT_UNLOCK (self);
  /* none: a [B, ...] tensor on the batch buffer, frame i of it the
   * batch's frame i in stream order */
  if (m == 0 && b->n_frames > 0) {
    gchar msg[256] = "";
    GstCudanmsTensorLookup r;

    r = gst_cudanms_tensor_view_acquire_batch (&b->batch_view, buffer, id,
        (cnms_layout) layout, NULL, &p, msg, sizeof (msg));
    if (r == GST_CUDANMS_TENSOR_FOUND
        && (b->batch_view.tensor.n_dims < 3
            || b->batch_view.tensor.dims[0] != (gint64) b->n_frames)) {
      g_snprintf (msg, sizeof (msg), "the batch buffer's tensor holds %"
          G_GINT64_FORMAT " frames, its GstAnalyticsBatchMeta %u",
          b->batch_view.tensor.n_dims >= 3 ?
          b->batch_view.tensor.dims[0] : (gint64) 1, b->n_frames);
      r = GST_CUDANMS_TENSOR_BAD;
    }
    if (r == GST_CUDANMS_TENSOR_FOUND && b->n_unsized > 0) {
      g_snprintf (msg, sizeof (msg), "%u frames of the batch have no video "
          "caps: their size is unknown", b->n_unsized);
      r = GST_CUDANMS_TENSOR_BAD;
    }
    if (r == GST_CUDANMS_TENSOR_FOUND
        && b->batch_view.layout == CNMS_LAYOUT_YOLOV8_SEG
        && gst_cudanms_tensor_view_acquire_protos (&b->batch_protos, buffer,
            msg, sizeof (msg)) != GST_CUDANMS_TENSOR_FOUND)
      r = GST_CUDANMS_TENSOR_BAD;
    if (r == GST_CUDANMS_TENSOR_FOUND) {
      whole = TRUE;
      call_layout = b->batch_view.layout;
      for (i = 0; i < b->n_frames; i++)
        b->frames[i].lookup = GST_CUDANMS_TENSOR_FOUND;
      m = b->n_frames;
    } else if (r == GST_CUDANMS_TENSOR_BAD) {
      /* every frame of the batch passes without ROIs, said once */
      for (i = 0; i < b->n_frames; i++)
        gst_cudanms_batch_frame_problem (self, &b->frames[i], FALSE, msg);
      goto done;
    }
  }
  /* the frames without a tensor, or with a bad one, pass (counted) */
  for (i = 0; i < b->n_frames; i++) {
    const GstCudanmsBatchFrame *f = &b->frames[i];

    if (f->lookup == GST_CUDANMS_TENSOR_MISSING)
      gst_cudanms_batch_frame_problem (self, f, TRUE,
          "a frame of the batch has no detection tensor");
    else if (f->lookup == GST_CUDANMS_TENSOR_BAD)
      gst_cudanms_batch_frame_problem (self, f, FALSE,
          "a frame of the batch has a bad detection tensor");
  }
  if (m == 0)
    goto done;

  /* the frames to decode, each with its size */
  m = 0;
  for (i = 0; i < b->n_frames; i++) {
    GstCudanmsBatchFrame *f = &b->frames[i];
    cnms_frame *cf = &b->cframes[m];

    if (f->lookup != GST_CUDANMS_TENSOR_FOUND)
      continue;
    cf->tensor = whole ? NULL : &f->view.tensor;
    cf->protos = !whole && f->view.layout == CNMS_LAYOUT_YOLOV8_SEG ?
        &f->protos.tensor : NULL;
    cf->frame_width = f->width;
    cf->frame_height = f->height;
    b->index[m++] = i;
  }
  /* model-size NULL (a tensor decoder): the model saw the frame, which
   * must then be one size for the whole batch */
  p.frame_width = b->cframes[0].frame_width;
  p.frame_height = b->cframes[0].frame_height;
  if (p.model_width == 0) {
    for (i = 1; i < m; i++)
      if (b->cframes[i].frame_width != p.frame_width
          || b->cframes[i].frame_height != p.frame_height)
        break;
    if (i < m) {
      for (i = 0; i < m; i++)
        gst_cudanms_batch_frame_problem (self, &b->frames[b->index[i]],
            FALSE, "model-size is unset (the boxes are in frame pixels) "
            "and the batch's streams differ in size: set model-size");
      goto done;
    }
    p.model_width = p.frame_width;
    p.model_height = p.frame_height;
  }

  st = gst_cudanms_backend_detect_batch (&self->be,
      whole ? &b->batch_view.tensor : NULL,
      whole && call_layout == CNMS_LAYOUT_YOLOV8_SEG ?
      &b->batch_protos.tensor : NULL, b->cframes, (int) m, call_layout, &p,
      &res, &ctx, &took);
  if (ctx != NULL) {
    GST_OBJECT_LOCK (self);
    self->backend_name = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA ?
        "cuda" : "cpu";
    GST_OBJECT_UNLOCK (self);
  }
  if (st == CNMS_ERR_BAD_TENSOR || st == CNMS_ERR_INVALID_ARG) {
    /* the frames do not agree: the batch passes without ROIs */
    gchar msg[256];

    g_snprintf (msg, sizeof (msg), "batch: %s", cnms_ctx_error (ctx));
    for (i = 0; i < m; i++)
      gst_cudanms_batch_frame_problem (self, &b->frames[b->index[i]], FALSE,
          msg);
    goto done;
  }
  if (st != CNMS_OK) {
    gst_cudanms_batch_release (b);
    g_free (id);
    post_detect_failed (self, st, ctx, p.max_candidates);
    return GST_FLOW_ERROR;
  }

  /* each frame's detections on its own buffer */
  t_out = gst_util_get_timestamp ();
  for (i = 0; i < m; i++) {
    GstCudanmsBatchFrame *f = &b->frames[b->index[i]];
    const cnms_frame_result *r = &res[i];
    const cnms_tensor *t = whole ? &b->batch_view.tensor : &f->view.tensor;
    cnms_params fp = p;
    GstBuffer *fb;

    if (r->status != CNMS_OK) {
      gchar msg[256];

      g_snprintf (msg, sizeof (msg), "a frame of the batch: %s", r->error);
      gst_cudanms_batch_frame_problem (self, f, FALSE, msg);
      continue;
    }
    if (r->report.shape.n_anchors > 0
        && r->report.nonfinite_scores == r->report.shape.n_anchors) {
      gst_cudanms_batch_frame_problem (self, f, FALSE,
          "tensor holds only NaN/Inf values in its scores");
      continue;
    }
    fp.frame_width = f->width;
    fp.frame_height = f->height;
    gst_cudanms_stats_lanes_without_points (GST_ELEMENT (self),
        &self->stats, r->report.lanes_without_points);
    gst_cudanms_stats_frame (GST_ELEMENT (self), &self->stats, &r->report,
        t, r->report.shape.layout, &fp, r->dets, r->n_dets, &self->labels);
    gst_cudanms_stats_stream (GST_ELEMENT (self), &self->stats, f->stream,
        FALSE, FALSE, (guint64) r->n_dets);
    /* the meta's copy shares the frame: its own copy takes the metas */
    fb = gst_buffer_make_writable (GST_BUFFER (*f->slot));
    *f->slot = GST_MINI_OBJECT_CAST (fb);
    gst_cudanms_attach_frame (self, fb, &r->report, r->dets, r->n_dets,
        &r->payload, f->width, f->height, attach_meta, roi_params);
  }
  gst_cudanms_stats_times (GST_ELEMENT (self), &self->stats, took,
      gst_util_get_timestamp () - t_out);

done:
  gst_cudanms_batch_release (b);
  g_free (id);
  return GST_FLOW_OK;
}
#endif

/* The pipeline's CUDA context (gst-cuda), shared with cudaupload, NVDEC
 * and any other CUDA element. */
static void
gst_cudanms_set_context (GstElement * element, GstContext * context)
{
  GstCudanms *self = GST_CUDANMS (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  gst_cudanms_backend_set_context (&self->be, element, context, device_id);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cudanms_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstCudanms *self = GST_CUDANMS (trans);

  if (gst_cudanms_backend_query (&self->be, GST_ELEMENT (self), query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

/* cudanms decodes a tensor as found. */
static GstCudanmsLayout
gst_cudanms_decode_layout (GstCudanms * self, const gchar * tensor_id,
    GstCudanmsLayout layout, GstCudanmsLayout found)
{
  (void) self;
  (void) tensor_id;
  (void) layout;
  return found;
}

static void
gst_cudanms_class_init (GstCudanmsClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_cudanms_set_property;
  gobject_class->get_property = gst_cudanms_get_property;
  gobject_class->finalize = gst_cudanms_finalize;

  /**
   * GstCudanms:iou:
   *
   * A box is suppressed by a kept box of the same class (any class when
   * class-agnostic) when their IoU is strictly greater than this.
   */
  g_object_class_install_property (gobject_class, PROP_IOU,
      g_param_spec_float ("iou", "IoU threshold",
          "Suppress a box when its IoU with a kept box is greater than this",
          0.0f, 1.0f, DEFAULT_PROP_IOU, live));
  /**
   * GstCudanms:score-threshold:
   *
   * An anchor is a candidate when its score is strictly greater than this.
   */
  g_object_class_install_property (gobject_class, PROP_SCORE_THRESHOLD,
      g_param_spec_float ("score-threshold", "Score threshold",
          "Minimum score of a candidate (compared strictly)",
          0.0f, 1.0f, DEFAULT_PROP_SCORE_THRESHOLD, live));
  /**
   * GstCudanms:max-detections:
   *
   * At most this many boxes are kept (and attached) per frame.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_DETECTIONS,
      g_param_spec_int ("max-detections", "Max detections",
          "Maximum number of kept boxes per frame",
          1, 100000, DEFAULT_PROP_MAX_DETECTIONS, live));
  /**
   * GstCudanms:max-candidates:
   *
   * Pre-NMS cap. On overflow the best candidates by (score descending,
   * anchor index ascending) are kept, so the result stays deterministic.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_CANDIDATES,
      g_param_spec_int ("max-candidates", "Max candidates",
          "Maximum number of candidates entering NMS (best ones kept)",
          1, 1048576, DEFAULT_PROP_MAX_CANDIDATES, live));
  /**
   * GstCudanms:class-agnostic:
   *
   * Suppress across classes instead of within each class.
   */
  g_object_class_install_property (gobject_class, PROP_CLASS_AGNOSTIC,
      g_param_spec_boolean ("class-agnostic", "Class agnostic",
          "Ignore classes when suppressing", DEFAULT_PROP_CLASS_AGNOSTIC,
          live));
  /**
   * GstCudanms:label-file:
   *
   * Text file with one label per line (line n is class n). Read at start;
   * a missing file is an error. Classes without a line (or with an empty
   * one) are labelled "class-<id>".
   */
  g_object_class_install_property (gobject_class, PROP_LABEL_FILE,
      g_param_spec_string ("label-file", "Label file",
          "Text file with one label per line (NULL: labels are class-<id>)",
          DEFAULT_PROP_LABEL_FILE, ready));
  /**
   * GstCudanms:layout:
   *
   * Tensor layout. auto: [1, a, b] with b == 6 is end2end, b >= 6 and
   * a > b is yolov5, a >= 5 and b > a is yolov8; a tensor with a standard
   * id takes its id's layout (yolo-v8-out: yolov8, yolo-v8-obb-out:
   * yolov8-obb). auto never reads a tensor without that id as yolov8-obb
   * [1, 4+C+1, N] (oriented boxes: cx cy w h, C class scores, the angle in
   * radians): set layout=yolov8-obb for it. laneatt (LaneATT's lane
   * proposals [1, N, 5+S] or [N, 5+S]: 2 logits, start_y, start_x,
   * length, S x offsets) is taken from cudanms's own tensor id
   * laneatt-proposals (GStreamer has no lane decoder, hence no standard
   * id) or set by layout=laneatt; auto never guesses it otherwise.
   * yolov8-pose ([1, 4+1+K*D, N]: one person score, K keypoints of
   * keypoint-dims values) and yolov8-seg (the detections [1, 4+C+M, N]
   * with the prototypes [1, M, Hp, Wp], the tensor of id
   * yolo-v8-segmentation-out-protos on the buffer) are only ever set:
   * each kept box's ROI then carries a "keypoints" or a "mask" structure,
   * and with analytics >= 1.26 each mask is also a
   * GstAnalyticsSegmentationMtd related to the box's ODMtd (docs/element.md).
   * Under auto, yolo-v8-segmentation-out-detections gives boxes only.
   */
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout", "Tensor layout",
          GST_TYPE_CUDANMS_LAYOUT, DEFAULT_PROP_LAYOUT, live));
  /**
   * GstCudanms:model-size:
   *
   * The model's input size "WxH", in which the tensor's boxes are given.
   * A malformed value ("640*640", "0x0") is refused: the previous value
   * stays, with a GLib warning and, in a pipeline, an element warning.
   */
  g_object_class_install_property (gobject_class, PROP_MODEL_SIZE,
      g_param_spec_string ("model-size", "Model size",
          "Model input size as WxH (boxes are in these pixels)",
          DEFAULT_PROP_MODEL_SIZE, live));
  /**
   * GstCudanms:letterbox:
   *
   * Undo a symmetric letterbox (ultralytics style) when mapping boxes to
   * the frame; otherwise undo a plain stretch.
   */
  g_object_class_install_property (gobject_class, PROP_LETTERBOX,
      g_param_spec_boolean ("letterbox", "Letterbox",
          "Undo letterbox padding (FALSE: undo a plain stretch)",
          DEFAULT_PROP_LETTERBOX, live));
  /**
   * GstCudanms:tensor-id:
   *
   * Id of the tensor to read, across every tensor meta of the buffer. NULL
   * reads the first tensor that fits the layout, metas visited in the order
   * they were attached (GstTensorMeta, custom and protection metas alike),
   * skipping GStreamer's standard ids of non-detection tensors.
   */
  g_object_class_install_property (gobject_class, PROP_TENSOR_ID,
      g_param_spec_string ("tensor-id", "Tensor id",
          "Id of the tensor to read (NULL: the first tensor that fits)",
          DEFAULT_PROP_TENSOR_ID, live));
  /**
   * GstCudanms:device:
   *
   * Backend, chosen per buffer. auto: a device tensor (GstCudaMemory of
   * the pipeline's CUDA context) runs on CUDA in place; a host tensor on
   * whichever backend was faster on the first buffers of its shape (both
   * give the same bits). cuda forces CUDA (host tensors are uploaded) and
   * fails at start without a device; cpu forces the CPU (device tensors
   * are downloaded).
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE,
      g_param_spec_enum ("device", "Device", "Post-processing backend",
          GST_TYPE_CUDANMS_DEVICE, DEFAULT_PROP_DEVICE, ready));
  /**
   * GstCudanms:cuda-device-id:
   *
   * CUDA device to run on; -1 takes the pipeline's shared CUDA context
   * (gst-cuda), or the first device. An index past the host's devices is
   * an error at start on device=cuda; on device=auto the element runs on
   * the CPU and posts a warning naming the index and the device count.
   */
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device index (-1: automatic)",
          -1, 1024, DEFAULT_PROP_CUDA_DEVICE_ID, ready));
  /**
   * GstCudanms:backend:
   *
   * The backend the last buffer ran on, "cuda" or "cpu" (before the first
   * buffer: "cuda" when a CUDA backend started, else "cpu"); NULL when
   * stopped. Read-only: it tells what device=auto picked.
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_string ("backend", "Backend",
          "Backend of the last buffer: cuda or cpu (NULL when stopped)",
          DEFAULT_PROP_BACKEND, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstCudanms:attach-meta:
   *
   * What is attached per kept box: a GstVideoRegionOfInterestMeta (roi),
   * a GstAnalyticsODMtd in the buffer's GstAnalyticsRelationMeta
   * (analytics: what objectdetectionoverlay and ioutracker read), or both.
   * Default both where cudanms was built with GStreamer's analytics
   * library (>= 1.24), roi otherwise; there analytics and both fail at
   * start. A lane (layout laneatt) is its ROI under roi and both, and an
   * ODMtd of its rectangle only under analytics.
   */
  g_object_class_install_property (gobject_class, PROP_ATTACH_META,
      g_param_spec_enum ("attach-meta", "Attach meta",
          "Metas attached per kept box: roi, analytics (GstAnalyticsODMtd) "
          "or both", GST_TYPE_CUDANMS_ATTACH_META, DEFAULT_PROP_ATTACH_META,
          live));

  /**
   * GstCudanms:roi-params:
   *
   * Whether each GstVideoRegionOfInterestMeta carries its "detection"
   * param structure (confidence, label_id, label, normalised box). FALSE:
   * the rectangle, roi_type (the label) and id only, several times cheaper
   * per box (the structure's GValues cost most of the output stage).
   */
  g_object_class_install_property (gobject_class, PROP_ROI_PARAMS,
      g_param_spec_boolean ("roi-params", "ROI params",
          "Give each ROI meta its \"detection\" structure (confidence, "
          "label); false: rectangle, label and id only, cheaper",
          DEFAULT_PROP_ROI_PARAMS, live));
  gst_cudanms_stats_install_property (gobject_class, PROP_STATS);

  /**
   * GstCudanms:class-score-thresholds:
   *
   * Per-class score thresholds overriding score-threshold: a list
   * "CLASS=SCORE,..." where CLASS is a class id or a label of label-file
   * (e.g. "person=0.4,car=0.6,2=0.5"); a box of that class is a candidate
   * iff its score is greater. NULL or "": none. A malformed list, a label
   * the label file does not hold, an id past 2^24 - 1: refused with a
   * warning naming it, the previous value kept.
   */
  g_object_class_install_property (gobject_class,
      PROP_CLASS_SPEC + GST_CUDANMS_CLASS_THRESHOLDS,
      g_param_spec_string ("class-score-thresholds", "Class score thresholds",
          "Per-class score thresholds, \"CLASS=SCORE,...\" (CLASS: an id or "
          "a label of label-file); others take score-threshold", NULL, live));
  /**
   * GstCudanms:class-ious:
   *
   * Per-class IoU thresholds overriding iou, "CLASS=IOU,...": class-aware,
   * a box of that class is suppressed by a kept box of the same class iff
   * their IoU is greater. With class-agnostic=true every pair uses iou.
   */
  g_object_class_install_property (gobject_class,
      PROP_CLASS_SPEC + GST_CUDANMS_CLASS_IOUS,
      g_param_spec_string ("class-ious", "Class IoUs",
          "Per-class IoU thresholds (class-aware), \"CLASS=IOU,...\"; others "
          "take iou", NULL, live));
  /**
   * GstCudanms:class-max-detections:
   *
   * Per-class caps, "CLASS=COUNT,...": at most COUNT kept boxes of that
   * class, the first in kept order, applied after NMS (a capped box has
   * suppressed what it suppresses) and before max-detections.
   */
  g_object_class_install_property (gobject_class,
      PROP_CLASS_SPEC + GST_CUDANMS_CLASS_MAX_DETECTIONS,
      g_param_spec_string ("class-max-detections", "Class max detections",
          "Per-class caps after NMS, \"CLASS=COUNT,...\"", NULL, live));
  /**
   * GstCudanms:classes:
   *
   * Keep only these classes, "CLASS,...": boxes of any other class are
   * never candidates (they suppress nothing). NULL or "": every class.
   */
  g_object_class_install_property (gobject_class,
      PROP_CLASS_SPEC + GST_CUDANMS_CLASS_KEEP,
      g_param_spec_string ("classes", "Classes",
          "Keep only these classes, \"CLASS,...\"; others are never "
          "candidates", NULL, live));
  /**
   * GstCudanms:exclude-classes:
   *
   * Drop these classes, "CLASS,...": their boxes are never candidates.
   */
  g_object_class_install_property (gobject_class,
      PROP_CLASS_SPEC + GST_CUDANMS_CLASS_DROP,
      g_param_spec_string ("exclude-classes", "Exclude classes",
          "Drop these classes, \"CLASS,...\"; they are never candidates",
          NULL, live));
  /**
   * GstCudanms:max-detections-per-class:
   *
   * The cap of every class without one in class-max-detections: at most
   * this many kept boxes of a class, the first in kept order, after NMS
   * and before max-detections. 0: none.
   */
  g_object_class_install_property (gobject_class,
      PROP_MAX_DETECTIONS_PER_CLASS,
      g_param_spec_uint ("max-detections-per-class",
          "Max detections per class",
          "Kept boxes of one class at most (classes without their own "
          "class-max-detections); 0: no cap", 0, 100000, 0, live));
  /**
   * GstCudanms:lane-distance:
   *
   * Layout laneatt: a lane is suppressed by a kept lane when their mean
   * horizontal distance over the rows they share is below this, in model
   * pixels (LaneATT's NMS threshold: 50 in its tests, 15 in training).
   * score-threshold, max-detections, max-candidates, model-size and
   * letterbox apply as for boxes (LaneATT: conf_threshold 0.5, top_k its
   * max lanes); iou and the per-class controls do not.
   */
  g_object_class_install_property (gobject_class, PROP_LANE_DISTANCE,
      g_param_spec_float ("lane-distance", "Lane distance",
          "Layout laneatt: suppress a lane when its mean horizontal distance "
          "to a kept lane over their shared rows is below this (model "
          "pixels)", 0.0f, G_MAXFLOAT, DEFAULT_PROP_LANE_DISTANCE, live));
  /**
   * GstCudanms:keypoint-dims:
   *
   * Layout yolov8-pose: values per keypoint in the tensor [1, 4+1+K*D, N],
   * 3 (x, y, visibility score: COCO's YOLOv8/YOLO11 pose models) or 2
   * (x, y); K is then (rows - 5) / D, which D must divide. Other layouts
   * ignore it.
   */
  g_object_class_install_property (gobject_class, PROP_KEYPOINT_DIMS,
      g_param_spec_int ("keypoint-dims", "Keypoint dims",
          "Layout yolov8-pose: values per keypoint (3: x y visibility, 2: "
          "x y)", 2, 3, DEFAULT_PROP_KEYPOINT_DIMS, live));
  /**
   * GstCudanms:min-width:
   *
   * The least width, in frame pixels, of a candidate's box (after mapping
   * and clipping): a narrower box is no candidate and suppresses nothing.
   */
  g_object_class_install_property (gobject_class, PROP_MIN_WIDTH,
      g_param_spec_uint ("min-width", "Minimum width",
          "Least box width in frame pixels; narrower boxes are no "
          "candidates", 0, CNMS_SIZE_MAX, 0, live));
  /**
   * GstCudanms:min-height:
   *
   * The least height, in frame pixels, of a candidate's box.
   */
  g_object_class_install_property (gobject_class, PROP_MIN_HEIGHT,
      g_param_spec_uint ("min-height", "Minimum height",
          "Least box height in frame pixels; lower boxes are no candidates",
          0, CNMS_SIZE_MAX, 0, live));

  /**
   * GstCudanms:slice-size:
   *
   * Tiles (sliced inference, as SAHI): the frame was cut into slices of
   * this size (WxH, frame pixels), overlapping by slice-overlap, SAHI's
   * get_slice_bboxes grid of the frame (rows from the top, left to right),
   * and with slice-full-frame the whole frame as a last slice; the
   * buffer's tensor holds one frame per slice in that order ([B, ...]).
   * Each slice is decoded as a frame of its size (model-size, letterbox,
   * the thresholds and NMS), its detections shifted into the frame and
   * merged (merge, merge-metric, merge-threshold, merge-class-agnostic):
   * the merged detections are attached to the frame. NULL or "": no
   * slices. Layouts of boxes only (yolov8, yolov5, end2end).
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_SIZE,
      g_param_spec_string ("slice-size", "Slice size",
          "Tiles: the size of the frame's slices as WxH (NULL: no slices); "
          "the tensor holds one frame per slice", DEFAULT_PROP_SLICE_SIZE,
          live));
  /**
   * GstCudanms:slice-overlap:
   *
   * Tiles: the overlap of neighbouring slices, a ratio of the slice's
   * width and height (int (ratio * size) pixels).
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_OVERLAP,
      g_param_spec_double ("slice-overlap", "Slice overlap",
          "Tiles: the overlap of neighbouring slices, a ratio of the slice "
          "size", 0.0, SLICE_OVERLAP_MAX, DEFAULT_PROP_SLICE_OVERLAP, live));
  /**
   * GstCudanms:slice-full-frame:
   *
   * Tiles: the tensor's last frame is the whole frame (SAHI's standard
   * prediction).
   */
  g_object_class_install_property (gobject_class, PROP_SLICE_FULL_FRAME,
      g_param_spec_boolean ("slice-full-frame", "Slice full frame",
          "Tiles: the tensor's last frame is the whole frame",
          DEFAULT_PROP_SLICE_FULL_FRAME, live));
  /**
   * GstCudanms:merge:
   *
   * Tiles: how the slices' detections merge, SAHI's postprocess.
   */
  g_object_class_install_property (gobject_class, PROP_MERGE,
      g_param_spec_enum ("merge", "Merge",
          "Tiles: how the slices' detections merge (SAHI's postprocess)",
          GST_TYPE_CUDANMS_MERGE, DEFAULT_PROP_MERGE, live));
  /**
   * GstCudanms:merge-metric:
   *
   * Tiles: how two detections match, intersection over the smaller area
   * (ios) or over union (iou).
   */
  g_object_class_install_property (gobject_class, PROP_MERGE_METRIC,
      g_param_spec_enum ("merge-metric", "Merge metric",
          "Tiles: how two detections match", GST_TYPE_CUDANMS_MERGE_METRIC,
          DEFAULT_PROP_MERGE_METRIC, live));
  /**
   * GstCudanms:merge-threshold:
   *
   * Tiles: two detections match when their metric is at least this (in
   * float32), and an absorbed one merges when its metric with the box
   * merged so far is above it (in float64): SAHI's rules.
   */
  g_object_class_install_property (gobject_class, PROP_MERGE_THRESHOLD,
      g_param_spec_double ("merge-threshold", "Merge threshold",
          "Tiles: the match threshold of the merge", 0.0, 1.0,
          DEFAULT_PROP_MERGE_THRESHOLD, live));
  /**
   * GstCudanms:merge-class-agnostic:
   *
   * Tiles: merge detections of different classes (FALSE: each class
   * alone).
   */
  g_object_class_install_property (gobject_class, PROP_MERGE_CLASS_AGNOSTIC,
      g_param_spec_boolean ("merge-class-agnostic", "Merge class agnostic",
          "Tiles: merge detections of different classes",
          DEFAULT_PROP_MERGE_CLASS_AGNOSTIC, live));
  /**
   * GstCudanms:merge-rules:
   *
   * Tiles: SAHI's rules as its code runs them (the default), or the
   * consistent ones: one float64 metric matched at >= merge-threshold in
   * both passes, and a detection that fails to merge kept alone instead
   * of lost (docs/contracts.md, "Tiles").
   */
  g_object_class_install_property (gobject_class, PROP_MERGE_RULES,
      g_param_spec_enum ("merge-rules", "Merge rules",
          "Tiles: SAHI's rules as its code runs them, or consistent ones",
          GST_TYPE_CUDANMS_MERGE_RULES, DEFAULT_PROP_MERGE_RULES, live));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Detection NMS", "Filter/Analyzer/Video",
      "Decodes a YOLO detection tensor, runs exact greedy NMS (CUDA or CPU) "
      "and attaches the kept boxes as region-of-interest metas",
      "cudanms developers");

  trans_class->passthrough_on_same_caps = FALSE;
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cudanms_set_context);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cudanms_query);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cudanms_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cudanms_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cudanms_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cudanms_sink_event);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_cudanms_before_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cudanms_transform_ip);
  klass->decode_layout = GST_DEBUG_FUNCPTR (gst_cudanms_decode_layout);
  klass->tensors_decoded = NULL;

  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_LAYOUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_DEVICE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_ATTACH_META, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_MERGE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_MERGE_METRIC, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDANMS_MERGE_RULES, 0);
}

/* A tensor decoder's defaults (gst_cudanms_class_make_tensor_decoder): set
 * once every instance_init has run, before any property is set. */
static void
gst_cudanms_tensor_decoder_constructed (GObject * object)
{
  GstCudanms *self = GST_CUDANMS (object);

  G_OBJECT_CLASS (parent_class)->constructed (object);
  gst_cudanms_set_model_size_frame (self);
  self->letterbox = FALSE;
}

/* A tensor decoder (tensordecodebin) reads GStreamer's segmentation
 * detections under layout auto with their masks. */
static GstCudanmsLayout
gst_cudanms_tensor_decoder_decode_layout (GstCudanms * self,
    const gchar * tensor_id, GstCudanmsLayout layout, GstCudanmsLayout found)
{
  (void) self;
  if (layout == GST_CUDANMS_LAYOUT_AUTO && g_strcmp0 (tensor_id,
          GST_CUDANMS_TENSOR_ID (CNMS_LAYOUT_YOLOV8_SEG)) == 0)
    return GST_CUDANMS_LAYOUT_YOLOV8_SEG;
  return found;
}

/* A tensor decoder consumes what it decoded: the next decoder of a
 * tensordecodebin chain must not decode it again. */
static void
gst_cudanms_tensor_decoder_tensors_decoded (GstCudanms * self,
    GstBuffer * buffer)
{
#ifdef HAVE_GST_TENSOR_CAPS
  if (!gst_cudanms_tensor_view_take (&self->view, buffer))
    GST_DEBUG_OBJECT (self, "tensor '%s' is in no GstTensorMeta: nothing "
        "to take off the buffer", self->view.id);
  /* and the prototypes it read */
  if (self->protos.data != NULL)
    gst_cudanms_tensor_view_take (&self->protos, buffer);
#else
  (void) self;
  (void) buffer;
#endif
}

void
gst_cudanms_class_make_tensor_decoder (GstCudanmsClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;

  klass->decode_layout =
      GST_DEBUG_FUNCPTR (gst_cudanms_tensor_decoder_decode_layout);
  klass->tensors_decoded =
      GST_DEBUG_FUNCPTR (gst_cudanms_tensor_decoder_tensors_decoded);
  gobject_class->constructed = gst_cudanms_tensor_decoder_constructed;
  /* two of cudanms's properties again, with the decoder's defaults: same
   * ids, handled by cudanms's functions (GObject gives each class its own
   * set_property/get_property, for the properties it installs) */
  gobject_class->set_property = gst_cudanms_set_property;
  gobject_class->get_property = gst_cudanms_get_property;
  g_object_class_install_property (gobject_class, PROP_MODEL_SIZE,
      g_param_spec_string ("model-size", "Model size",
          "Model input size as WxH (boxes are in these pixels); NULL: the "
          "frame (the inference element fed the model the frame itself)",
          NULL, live));
  g_object_class_install_property (gobject_class, PROP_LETTERBOX,
      g_param_spec_boolean ("letterbox", "Letterbox",
          "Undo letterbox padding (FALSE: undo a plain stretch)", FALSE,
          live));
}
