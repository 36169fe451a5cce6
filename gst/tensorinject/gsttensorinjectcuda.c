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

/* Drops pool k. */
static void
drop_pool (GstTensorInjectCuda * c, guint k)
{
  if (c->pools[k] != NULL) {
    gst_buffer_pool_set_active (c->pools[k], FALSE);
    gst_clear_object (&c->pools[k]);
  }
  c->sizes[k] = 0;
}

void
gst_tensor_inject_cuda_stop (GstTensorInjectCuda * c)
{
  guint k;

  for (k = 0; k < GST_TENSOR_INJECT_CUDA_POOLS; k++)
    drop_pool (c, k);
  c->next = 0;
  gst_clear_object (&c->context);
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
/* Pool k, made for tensors of size bytes: gst-cuda allocates by video
 * info, so the memory is an RGBA row of ceil(size / 4) pixels. */
static gboolean
make_pool (GstTensorInjectCuda * c, guint k, gsize size)
{
  GstVideoInfo info;
  GstStructure *config;
  GstCaps *caps;
  GstBufferPool *pool;

  drop_pool (c, k);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA,
      (guint) ((size + 3) / 4), 1);
  caps = gst_video_info_to_caps (&info);
  pool = gst_cuda_buffer_pool_new ((GstCudaContext *) c->context);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps,
      (guint) GST_VIDEO_INFO_SIZE (&info), 2, 0);
  gst_caps_unref (caps);
  if (!gst_buffer_pool_set_config (pool, config)
      || !gst_buffer_pool_set_active (pool, TRUE)) {
    gst_object_unref (pool);
    return FALSE;
  }
  c->pools[k] = pool;
  c->sizes[k] = size;
  return TRUE;
}

/* The pool for tensors of size bytes: the one that has them, else a new
 * one in place of the oldest; NULL on failure. */
static GstBufferPool *
pool_for (GstTensorInjectCuda * c, gsize size)
{
  guint k;

  for (k = 0; k < GST_TENSOR_INJECT_CUDA_POOLS; k++)
    if (c->pools[k] != NULL && c->sizes[k] == size)
      return c->pools[k];
  k = c->next;
  c->next = (c->next + 1) % GST_TENSOR_INJECT_CUDA_POOLS;
  return make_pool (c, k, size) ? c->pools[k] : NULL;
}
#endif

GstBuffer *
gst_tensor_inject_cuda_buffer (GstTensorInjectCuda * c, const guint8 * host,
    gsize size)
{
#ifdef HAVE_GST_CUDA
  GstBuffer *buf = NULL;
  GstMapInfo map;

  GstBufferPool *pool;

  if (c->context == NULL || size == 0)
    return NULL;
  pool = pool_for (c, size);
  if (pool == NULL
      || gst_buffer_pool_acquire_buffer (pool, &buf, NULL) != GST_FLOW_OK)
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
