/* tensorinject: tensors in CUDA memory (see gsttensorinjectcuda.h). The
 * bytes are written through a host mapping of the GstCudaMemory, which
 * gst-cuda uploads before a consumer maps it in device memory
 * (GST_MAP_CUDA): to that consumer the tensor is on the GPU, in the
 * context of the pipeline. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "gsttensorinjectcuda.h"

gboolean
gst_tensor_inject_cuda_start (GstTensorInjectCuda * c, GstElement * element,
    gchar * msg, gsize msg_size)
{
#ifdef HAVE_GST_CUDA
  if (!gst_cuda_load_library ()) {
    g_snprintf (msg, msg_size, "memory=cuda: the CUDA library cannot be "
        "loaded (no NVIDIA driver?)");
    return FALSE;
  }
  /* set_context writes into c->context too: the same storage, so that a
   * context a neighbour answers the query with is the one kept */
  if (!gst_cuda_ensure_element_context (element, c->device_id,
          (GstCudaContext **) & c->context)) {
    g_snprintf (msg, msg_size, "memory=cuda: no CUDA context for "
        "cuda-device-id=%d (no such CUDA device?)", c->device_id);
    return FALSE;
  }
  gst_cuda_memory_init_once ();
  return TRUE;
#else
  (void) c;
  (void) element;
  g_snprintf (msg, msg_size, "memory=cuda: this build has no gst-cuda "
      "(gstreamer-cuda-1.0 and the CUDA toolkit)");
  return FALSE;
#endif
}

void
gst_tensor_inject_cuda_stop (GstTensorInjectCuda * c)
{
  if (c->pool != NULL) {
    gst_buffer_pool_set_active (c->pool, FALSE);
    gst_clear_object (&c->pool);
  }
  gst_clear_object (&c->context);
  c->size = 0;
}

void
gst_tensor_inject_cuda_set_context (GstTensorInjectCuda * c,
    GstElement * element, GstContext * context)
{
#ifdef HAVE_GST_CUDA
  gst_cuda_handle_set_context (element, context, c->device_id,
      (GstCudaContext **) & c->context);
#else
  (void) c;
  (void) element;
  (void) context;
#endif
}

gboolean
gst_tensor_inject_cuda_query (GstTensorInjectCuda * c, GstElement * element,
    GstQuery * query)
{
#ifdef HAVE_GST_CUDA
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT)
    return gst_cuda_handle_context_query (element, query,
        (GstCudaContext *) c->context);
#else
  (void) c;
  (void) element;
  (void) query;
#endif
  return FALSE;
}

#ifdef HAVE_GST_CUDA
/* A pool of GstCudaMemory of at least size bytes: gst-cuda allocates by
 * video info, so the memory is an RGBA row of ceil(size / 4) pixels. */
static gboolean
make_pool (GstTensorInjectCuda * c, gsize size)
{
  GstVideoInfo info;
  GstStructure *config;
  GstCaps *caps;

  if (c->pool != NULL) {
    gst_buffer_pool_set_active (c->pool, FALSE);
    gst_clear_object (&c->pool);
  }
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA,
      (guint) ((size + 3) / 4), 1);
  caps = gst_video_info_to_caps (&info);
  c->pool = gst_cuda_buffer_pool_new ((GstCudaContext *) c->context);
  config = gst_buffer_pool_get_config (c->pool);
  gst_buffer_pool_config_set_params (config, caps,
      (guint) GST_VIDEO_INFO_SIZE (&info), 2, 0);
  gst_caps_unref (caps);
  if (!gst_buffer_pool_set_config (c->pool, config)
      || !gst_buffer_pool_set_active (c->pool, TRUE)) {
    gst_clear_object (&c->pool);
    return FALSE;
  }
  c->size = size;
  return TRUE;
}
#endif

GstBuffer *
gst_tensor_inject_cuda_buffer (GstTensorInjectCuda * c, const guint8 * host,
    gsize size)
{
#ifdef HAVE_GST_CUDA
  GstBuffer *buf = NULL;
  GstMapInfo map;

  if (c->context == NULL || size == 0)
    return NULL;
  if ((c->pool == NULL || c->size != size) && !make_pool (c, size))
    return NULL;
  if (gst_buffer_pool_acquire_buffer (c->pool, &buf, NULL) != GST_FLOW_OK)
    return NULL;
  if (!gst_buffer_map (buf, &map, GST_MAP_WRITE)) {
    gst_buffer_unref (buf);
    return NULL;
  }
  memcpy (map.data, host, size);
  gst_buffer_unmap (buf, &map);
  /* the tensor's bytes exactly: the row may be padded */
  gst_buffer_resize (buf, 0, (gssize) size);
  return buf;
#else
  (void) c;
  (void) host;
  (void) size;
  return NULL;
#endif
}
