/* cudanms: the frames of a batch (see gstcudanmsbatch.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>

#include "gstcudanmsbatch.h"

gboolean
gst_cudanms_caps_are_batch (const GstCaps * caps)
{
  const GstStructure *s;

  if (caps == NULL || gst_caps_get_size (caps) < 1)
    return FALSE;
  s = gst_caps_get_structure (caps, 0);
  return gst_structure_has_name (s, "multistream/x-analytics-batch");
}

#ifdef HAVE_GST_BATCH_META
void
gst_cudanms_batch_init (GstCudanmsBatch * b)
{
  memset (b, 0, sizeof (*b));
  b->batch_view = (GstCudanmsTensorView) GST_CUDANMS_TENSOR_VIEW_INIT;
  b->batch_protos = (GstCudanmsTensorView) GST_CUDANMS_TENSOR_VIEW_INIT;
}

void
gst_cudanms_batch_release (GstCudanmsBatch * b)
{
  guint i;

  for (i = 0; i < b->n_frames; i++) {
    gst_cudanms_tensor_view_release (&b->frames[i].view);
    gst_cudanms_tensor_view_release (&b->frames[i].protos);
  }
  gst_cudanms_tensor_view_release (&b->batch_view);
  gst_cudanms_tensor_view_release (&b->batch_protos);
}

void
gst_cudanms_batch_clear (GstCudanmsBatch * b)
{
  gst_cudanms_batch_release (b);
  g_free (b->frames);
  g_free (b->cframes);
  g_free (b->index);
  gst_cudanms_batch_init (b);
}

/* Room for n frames (the arrays only grow). */
static gboolean
reserve (GstCudanmsBatch * b, guint n)
{
  guint cap = b->cap ? b->cap : 8;

  if (n <= b->cap)
    return TRUE;
  while (cap < n)
    cap *= 2;
  b->frames = g_try_renew (GstCudanmsBatchFrame, b->frames, cap);
  b->cframes = g_try_renew (cnms_frame, b->cframes, cap);
  b->index = g_try_renew (guint, b->index, cap);
  if (b->frames == NULL || b->cframes == NULL || b->index == NULL) {
    g_free (b->frames);
    g_free (b->cframes);
    g_free (b->index);
    b->frames = NULL;
    b->cframes = NULL;
    b->index = NULL;
    b->cap = 0;
    return FALSE;
  }
  b->cap = cap;
  return TRUE;
}

gboolean
gst_cudanms_batch_collect (GstCudanmsBatch * b, GstAnalyticsBatchMeta * meta,
    GstObject * device_context)
{
  gsize s, j;
  guint n = 0;

  b->n_frames = 0;
  b->n_other = 0;
  b->n_unsized = 0;
  if (meta->streams == NULL)
    return reserve (b, 0);
  for (s = 0; s < meta->n_streams; s++)
    for (j = 0; meta->streams[s].objects != NULL
        && j < meta->streams[s].n_objects; j++)
      n += meta->streams[s].objects[j] != NULL
          && GST_IS_BUFFER (meta->streams[s].objects[j]);
  if (!reserve (b, n))
    return FALSE;
  for (s = 0; s < meta->n_streams; s++) {
    GstAnalyticsBatchStream *stream = &meta->streams[s];
    GstCaps *caps = gst_analytics_batch_stream_get_caps (stream);
    GstVideoInfo info;
    gint w = 0, h = 0;

    if (caps != NULL && gst_video_info_from_caps (&info, caps)) {
      w = GST_VIDEO_INFO_WIDTH (&info);
      h = GST_VIDEO_INFO_HEIGHT (&info);
    }
    /* a stream without objects (or a meta that lost them) has no frame */
    for (j = 0; stream->objects != NULL && j < stream->n_objects; j++) {
      GstCudanmsBatchFrame *f;

      if (stream->objects[j] == NULL || !GST_IS_BUFFER (stream->objects[j])) {
        b->n_other++;
        continue;
      }
      f = &b->frames[b->n_frames++];
      f->slot = &stream->objects[j];
      f->stream = stream->index;
      f->width = w;
      f->height = h;
      f->view = (GstCudanmsTensorView) GST_CUDANMS_TENSOR_VIEW_INIT;
      f->protos = (GstCudanmsTensorView) GST_CUDANMS_TENSOR_VIEW_INIT;
      f->view.device_context = device_context;
      f->protos.device_context = device_context;
      f->lookup = GST_CUDANMS_TENSOR_MISSING;
      if (w <= 0 || h <= 0)
        b->n_unsized++;
    }
  }
  b->batch_view.device_context = device_context;
  b->batch_protos.device_context = device_context;
  return TRUE;
}
#endif
