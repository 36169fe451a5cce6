/* Compiled where GstTensorMeta exists (GStreamer >= 1.26). */
#ifdef HAVE_GST_TENSOR_META
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <gst/analytics/analytics.h>

#include "tensordec_frames.h"
#include "gsttensorinjectscene.h"

const TdSetup td_normal = { "normal", 200, 640, 80, 1, 6, 200, 0.0f, 0.25f,
  0.45f, 300
};

const TdSetup td_edges = { "edges", 100, 640, 80, 3, 12, 200, 160.0f, 0.25f,
  0.45f, 300
};

const TdSetup td_dense = { "dense", 10, 640, 80, 2, 6, 8000, 0.0f, 0.05f,
  0.45f, 3000
};

const TdSetup td_dense_300 = { "dense, at most 300", 10, 640, 80, 2, 6, 8000,
  0.0f, 0.05f, 0.45f, 300
};

TdFrames *
td_frames_new (const TdSetup * setup)
{
  TdFrames *f = g_new0 (TdFrames, 1);
  GstTensorInjectSceneConfig cfg = { FALSE, setup->n_classes, setup->size,
    setup->size, CNMS_DTYPE_FLOAT32, setup->seed, setup->num_objects,
    setup->noise
  };
  GstTensorInjectScene *scene = gst_tensor_inject_scene_new (&cfg);
  gsize size = gst_tensor_inject_scene_size (scene);
  GString *labels = g_string_new (NULL);
  gint64 dims[3];
  gint fd, c;
  guint i;

  f->setup = *setup;
  gst_tensor_inject_scene_dims (scene, dims);
  f->n_anchors = (gint) dims[2];
  f->tensors = g_new0 (GstBuffer *, setup->n_frames);
  for (i = 0; i < setup->n_frames; i++) {
    GstMapInfo map;

    f->tensors[i] = gst_buffer_new_allocate (NULL, size, NULL);
    gst_buffer_map (f->tensors[i], &map, GST_MAP_WRITE);
    gst_tensor_inject_scene_render (scene, i, map.data);
    if (setup->shift != 0.0f) {
      gfloat *t = (gfloat *) map.data;
      gint a;

      for (a = 0; a < 2 * (gint) dims[2]; a++)
        t[a] += setup->shift;   /* the cx plane, then the cy plane */
    }
    gst_buffer_unmap (f->tensors[i], &map);
  }
  gst_tensor_inject_scene_free (scene);
  f->video = gst_allocator_alloc (NULL, (gsize) setup->size * setup->size,
      NULL);

  for (c = 0; c < setup->n_classes; c++)
    g_string_append_printf (labels, "class-%d\n", c);
  fd = g_file_open_tmp ("cudanms-labels-XXXXXX", &f->label_file, NULL);
  g_assert (fd >= 0);
  g_close (fd, NULL);
  g_assert (g_file_set_contents (f->label_file, labels->str, -1, NULL));
  g_string_free (labels, TRUE);
  return f;
}

void
td_frames_free (TdFrames * f)
{
  guint i;

  for (i = 0; i < f->setup.n_frames; i++)
    gst_buffer_unref (f->tensors[i]);
  g_free (f->tensors);
  gst_memory_unref (f->video);
  g_unlink (f->label_file);
  g_free (f->label_file);
  g_free (f);
}

gchar *
td_caps (const TdFrames * f)
{
  return g_strdup_printf ("video/x-raw,format=GRAY8,width=%d,height=%d,"
      "framerate=30/1,tensors=(structure)[tensorgroups,"
      "yolo-v8-out=(/uniquelist){(GstCaps)[tensor/strided,"
      "tensor-id=(string)yolo-v8-out,dims=<(int)1,(int)%d,(int)%d>,"
      "dims-order=(string)col-major,type=(string)float32]}]",
      f->setup.size, f->setup.size, 4 + f->setup.n_classes, f->n_anchors);
}

GstBuffer *
td_buffer (const TdFrames * f, guint i)
{
  gsize dims[3] = { 1, 4 + (gsize) f->setup.n_classes, (gsize) f->n_anchors };
  GstBuffer *buf = gst_buffer_new ();
  GstTensorMeta *tmeta;
  GstTensor **tensors = g_new (GstTensor *, 1);

  gst_buffer_append_memory (buf, gst_memory_ref (f->video));
  GST_BUFFER_PTS (buf) = i * (GST_SECOND / 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  tensors[0] = gst_tensor_new_simple (g_quark_from_static_string
      ("yolo-v8-out"), GST_TENSOR_DATA_TYPE_FLOAT32,
      gst_buffer_ref (f->tensors[i]), GST_TENSOR_DIM_ORDER_COL_MAJOR, 3, dims);
  tmeta = (GstTensorMeta *) gst_buffer_add_meta (buf,
      gst_tensor_meta_get_info (), NULL);
  gst_tensor_meta_set (tmeta, 1, tensors);
  return buf;
}

static GstHarness *
harness (GstElement * el, const TdFrames * f)
{
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  gchar *caps = td_caps (f);

  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  return h;
}

GstHarness *
td_harness_cudanms (const TdFrames * f)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  gchar *size = g_strdup_printf ("%dx%d", f->setup.size, f->setup.size);

  g_assert (el != NULL);
  gst_util_set_object_arg (G_OBJECT (el), "device", "cpu");
  gst_util_set_object_arg (G_OBJECT (el), "attach-meta", "analytics");
  g_object_set (el, "model-size", size, "letterbox", FALSE, "class-agnostic",
      TRUE, "score-threshold", f->setup.score_threshold, "iou",
      f->setup.iou, "max-detections", f->setup.max_detections,
      "label-file", f->label_file, NULL);
  g_free (size);
  return harness (el, f);
}

GstHarness *
td_harness_tensordec (const TdFrames * f)
{
  GstElement *el = gst_element_factory_make ("yolov8tensordec", NULL);

  g_assert (el != NULL);
  g_object_set (el, "class-confidence-threshold", f->setup.score_threshold,
      "iou-threshold", f->setup.iou, "max-detections",
      (guint) f->setup.max_detections, "label-file", f->label_file, NULL);
  return harness (el, f);
}

GArray *
td_od_boxes (GstBuffer * buf)
{
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta
      (buf);
  GArray *boxes = g_array_new (FALSE, FALSE, sizeof (TdBox));
  gpointer state = NULL;
  GstAnalyticsMtd mtd;

  while (rmeta != NULL && gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd)) {
    GstAnalyticsODMtd *od = (GstAnalyticsODMtd *) & mtd;
    const gchar *label = g_quark_to_string (gst_analytics_od_mtd_get_obj_type
        (od));
    TdBox b = { -1, -1, 0, 0, 0, 0, 0 };

    gst_analytics_od_mtd_get_location (od, &b.x, &b.y, &b.w, &b.h, &b.score);
    if (label == NULL || sscanf (label, "class-%d", &b.class_id) != 1)
      b.class_id = -1;
    g_array_append_val (boxes, b);
  }
  return boxes;
}
#endif
