/* cudanmstensordec: cudanms as a tensor decoder for tensordecodebin.
 *
 * This library is free software; you can redistribute it and/or modify it
 * under the terms of the GNU Lesser General Public License, version 2.1 or
 * later.
 */

/**
 * SECTION:element-cudanmstensordec
 * @title: cudanmstensordec
 *
 * cudanms (the same element code: decode, exact greedy NMS, ROI metas and
 * GstAnalyticsODMtd, every property) registered as a tensor decoder, the
 * element GStreamer 1.28's tensordecodebin picks from the "tensors" field
 * of the caps: klass Tensordecoder/Video, rank primary + 1, and a sink
 * template that describes the tensor groups it decodes:
 *
 * - "yolo-v8-out": the yolo-v8-out tensor [1, 4+C, N], row-major or
 *   col-major, float32 or float16;
 * - "yolo-v8-obb-out": the YOLOv8/v11-OBB tensor yolo-v8-obb-out
 *   [1, 4+C+1, N] (cx cy w h, C class rows, the angle in radians; at least
 *   6 rows), col-major, float32 or float16: cudanms reads it as
 *   layout=yolov8-obb (layout=auto takes it from the id) and attaches
 *   oriented GstAnalyticsODMtds and the hulls as ROIs (GStreamer's own
 *   yoloobbv8tensordec, from 1.30, rank secondary, col-major float32, is
 *   chained after it and finds the tensor gone);
 * - "yolo-v8-segmentation-out": segmentation detections with their protos
 *   where GStreamer's yolosegv8tensordec (col-major float32 only) does not
 *   take them, i.e. detections labelled row-major, or float16; cudanms
 *   reads them as layout=yolov8-seg (layout=auto takes it from the id) and
 *   attaches each box's ODMtd and mask (a GstAnalyticsSegmentationMtd
 *   related to it, as yolosegv8tensordec does) and ROI, and takes both
 *   tensors off the buffer.
 *
 * tensordecodebin chains every decoder whose template matches the caps, in
 * rank order, and gives each the same caps. So that the yolo-v8-out tensor
 * is decoded once, this decoder comes first (its rank is above
 * yolov8tensordec's primary) and takes the tensor it decoded off the
 * buffer's GstTensorMeta: a decoder after it finds no such tensor, and the
 * other tensors of the buffer (another group's) stay for their decoders.
 * The caps pass through unchanged, as the decoders after it must accept
 * them.
 *
 * Its defaults differ from cudanms's in two places, because the inference
 * element fed the model the frame itself: model-size is NULL (the boxes
 * are in the frame's pixels) and letterbox is FALSE.
 *
 * tensordecodebin makes its decoders when the caps arrive (again at every
 * caps event), so a pipeline description cannot reach them by name. Each
 * cudanmstensordec, when made, takes the property assignments of the
 * environment variable CUDANMSTENSORDEC_PROPERTIES, as gst-launch-1.0
 * writes them ("label-file=coco.names score-threshold=0.4"; split as a
 * shell splits words, so a value with spaces can be quoted). They replace
 * the defaults; a property set on the element afterwards (an application's
 * "deep-element-added" handler) overrides them. An entry that names no
 * writable property or whose value does not parse is refused with a GLib
 * warning naming it; the others apply.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=street.mp4 ! decodebin ! videoconvertscale
 *   ! video/x-raw,format=RGB,width=640,height=640
 *   ! onnxinference model-file=yolov8s.onnx ! tensordecodebin
 *   ! objectdetectionoverlay ! videoconvert ! autovideosink
 * ]| With a model whose .modelinfo names its output yolo-v8-out,
 * tensordecodebin runs cudanmstensordec, and only it, on that tensor.
 * |[
 * CUDANMSTENSORDEC_PROPERTIES="label-file=coco.names score-threshold=0.4" \
 *   gst-launch-1.0 ... ! onnxinference model-file=yolov8s.onnx
 *   ! tensordecodebin ! objectdetectionoverlay ! ...
 * ]| The same with COCO's labels and a score threshold of 0.4.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudanmstensordec.h"
#include "gstcudanmsdebug.h"

#ifdef HAVE_GST_TENSOR_CAPS

/* one structure per tensor group; tensordecodebin requires the first to
 * carry a "tensors" field. A dim of 0 is a dynamic one (onnxinference). */
#define DETECTION_DIMS "dims=<(int)[0,1], (int)[0,max], (int)[0,max]>"
/* [1, 4+C+1, N]: at least one class row between the box and the angle
 * (yoloobbv8tensordec's minimum), or a dynamic 0 (two structures: a list
 * inside the dims array does not intersect) */
#define OBB_DIMS "dims=<(int)[0,1], (int)[6,max], (int)[0,max]>"
#define OBB_DYNAMIC_DIMS "dims=<(int)[0,1], (int)0, (int)[0,max]>"
/* *INDENT-OFF* */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (
      "video/x-raw, "
        "tensors=(structure)[tensorgroups, "
          "yolo-v8-out=(/uniquelist){"
            "(GstCaps)[tensor/strided, "
              "tensor-id=(string)yolo-v8-out, "
              DETECTION_DIMS ", "
              "dims-order=(string){row-major, col-major}, "
              "type=(string){float32, float16}]"
          "}"
        "]; "
      "video/x-raw, "
        "tensors=(structure)[tensorgroups, "
          "yolo-v8-obb-out=(/uniquelist){"
            "(GstCaps)[tensor/strided, "
              "tensor-id=(string)yolo-v8-obb-out, "
              OBB_DIMS ", "
              "dims-order=(string)col-major, "
              "type=(string){float32, float16}; "
            "tensor/strided, "
              "tensor-id=(string)yolo-v8-obb-out, "
              OBB_DYNAMIC_DIMS ", "
              "dims-order=(string)col-major, "
              "type=(string){float32, float16}]"
          "}"
        "]; "
      "video/x-raw, "
        "tensors=(structure)[tensorgroups, "
          "yolo-v8-segmentation-out=(/uniquelist){"
            "(GstCaps)[tensor/strided, "
              "tensor-id=(string)yolo-v8-segmentation-out-detections, "
              DETECTION_DIMS ", "
              "dims-order=(string)row-major, "
              "type=(string){float32, float16}; "
            "tensor/strided, "
              "tensor-id=(string)yolo-v8-segmentation-out-detections, "
              DETECTION_DIMS ", "
              "dims-order=(string)col-major, "
              "type=(string)float16], "
            "(GstCaps)[tensor/strided, "
              "tensor-id=(string)yolo-v8-segmentation-out-protos, "
              "dims=<(int)[0,1], (int)[0,max], (int)[0,max], (int)[0,max]>, "
              "dims-order=(string){row-major, col-major}, "
              "type=(string){float32, float16}]"
          "}"
        "]"));
/* *INDENT-ON* */

/* The environment variable each new decoder takes its properties from. */
#define PROPERTIES_ENV "CUDANMSTENSORDEC_PROPERTIES"

/* gst_cudanms_class_make_tensor_decoder's constructed (the defaults) */
static void (*decoder_constructed) (GObject * object);

/* Sets one "name=value" entry of PROPERTIES_ENV on object; FALSE, and why,
 * when it is refused. */
static gboolean
set_entry (GObject * object, const gchar * entry, gchar ** why)
{
  const gchar *eq = strchr (entry, '=');
  GValue v = G_VALUE_INIT, checked = G_VALUE_INIT;
  GParamSpec *pspec;
  gchar *name;
  gboolean ok;

  if (eq == NULL || eq == entry) {
    *why = g_strdup ("not a name=value assignment");
    return FALSE;
  }
  name = g_strndup (entry, eq - entry);
  pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (object), name);
  g_free (name);
  if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE)
      || (pspec->flags & G_PARAM_CONSTRUCT_ONLY)) {
    *why = g_strdup_printf ("%s has no writable property of that name",
        G_OBJECT_TYPE_NAME (object));
    return FALSE;
  }
  g_value_init (&v, pspec->value_type);
  if (!gst_value_deserialize_with_pspec (&v, eq + 1, pspec)) {
    *why = g_strdup_printf ("not a value of %s's type %s", pspec->name,
        g_type_name (pspec->value_type));
    g_value_unset (&v);
    return FALSE;
  }
  /* out of the property's range: validating changes a copy */
  g_value_init (&checked, pspec->value_type);
  g_value_copy (&v, &checked);
  ok = !g_param_value_validate (pspec, &checked);
  g_value_unset (&checked);
  if (!ok) {
    *why = g_strdup_printf ("out of %s's range", pspec->name);
    g_value_unset (&v);
    return FALSE;
  }
  g_object_set_property (object, pspec->name, &v);
  g_value_unset (&v);
  return TRUE;
}

/* The decoder's defaults, then PROPERTIES_ENV's assignments. */
static void
gst_cudanms_tensor_dec_constructed (GObject * object)
{
  const gchar *env = g_getenv (PROPERTIES_ENV);
  GError *err = NULL;
  gchar **argv = NULL;
  gint argc = 0, i;

  decoder_constructed (object);
  if (env == NULL || env[strspn (env, " \t\n")] == '\0')
    return;
  if (!g_shell_parse_argv (env, &argc, &argv, &err)) {
    g_warning ("%s: %s=\"%s\" refused: %s", GST_OBJECT_NAME (object),
        PROPERTIES_ENV, env, err->message);
    g_error_free (err);
    return;
  }
  for (i = 0; i < argc; i++) {
    gchar *why = NULL;

    if (set_entry (object, argv[i], &why)) {
      GST_INFO_OBJECT (object, "%s: %s", PROPERTIES_ENV, argv[i]);
      continue;
    }
    g_warning ("%s: %s entry \"%s\" refused: %s; the other entries apply",
        GST_OBJECT_NAME (object), PROPERTIES_ENV, argv[i], why);
    g_free (why);
  }
  g_strfreev (argv);
}

static void
gst_cudanms_tensor_dec_class_init (gpointer klass, gpointer data)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  (void) data;
  gst_cudanms_class_make_tensor_decoder (klass);
  decoder_constructed = gobject_class->constructed;
  gobject_class->constructed = gst_cudanms_tensor_dec_constructed;
  /* replaces cudanms's "sink" template; "src" stays video/x-raw */
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "Detection tensor decoder (cudanms)", "Tensordecoder/Video",
      "Decodes a YOLOv8 detection tensor described in the caps "
      "(yolo-v8-out, or oriented boxes: yolo-v8-obb-out), runs exact greedy NMS (CUDA or CPU), attaches the kept "
      "boxes as GstAnalyticsODMtd and region-of-interest metas and takes "
      "the tensor off the buffer", "cudanms developers");
}

GType
gst_cudanms_tensor_dec_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    GTypeQuery query;
    GTypeInfo info = { 0, };

    /* GstCudanms's instance and class are all there is: their sizes come
     * from the type system, as GstCudanms's instance is private */
    g_type_query (GST_TYPE_CUDANMS, &query);
    info.class_size = query.class_size;
    info.class_init = gst_cudanms_tensor_dec_class_init;
    info.instance_size = query.instance_size;
    g_once_init_leave (&type, g_type_register_static (GST_TYPE_CUDANMS,
            "GstCudanmsTensorDec", &info, 0));
  }
  return type;
}

/* above yolov8tensordec (primary): tensordecodebin chains the decoders by
 * rank, and the first one takes the tensor */
GST_ELEMENT_REGISTER_DEFINE (cudanmstensordec, "cudanmstensordec",
    GST_RANK_PRIMARY + 1, GST_TYPE_CUDANMS_TENSOR_DEC);

#endif /* HAVE_GST_TENSOR_CAPS */
