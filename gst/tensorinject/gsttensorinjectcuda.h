/* tensorinject: tensors in CUDA memory (memory=cuda), from the pipeline's
 * shared CUDA context (gst-cuda), as a GPU inference element would leave
 * them. */
#ifndef __GST_TENSOR_INJECT_CUDA_H__
#define __GST_TENSOR_INJECT_CUDA_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Pools kept at once, one per tensor size: a seg frame's detections and
 * prototypes each have theirs. */
#define GST_TENSOR_INJECT_CUDA_POOLS 2

typedef struct
{
  GstObject *context;           /* the pipeline's GstCudaContext */
  /* of GstCudaMemory buffers, and the bytes a tensor of each holds */
  GstBufferPool *pools[GST_TENSOR_INJECT_CUDA_POOLS];
  gsize sizes[GST_TENSOR_INJECT_CUDA_POOLS];
  guint next;                   /* the pool a new size replaces */
  gint device_id;               /* the CUDA device, -1: any (the pipeline's
                                 * context, else the first device) */
} GstTensorInjectCuda;

/* Joins the pipeline's CUDA context for c->device_id (or makes one). FALSE with a reason in
 * msg without gst-cuda, a CUDA library or a device. */
gboolean gst_tensor_inject_cuda_start (GstTensorInjectCuda * c,
    GstElement * element, gchar * msg, gsize msg_size);
void gst_tensor_inject_cuda_stop (GstTensorInjectCuda * c);
void gst_tensor_inject_cuda_set_context (GstTensorInjectCuda * c,
    GstElement * element, GstContext * context);
gboolean gst_tensor_inject_cuda_query (GstTensorInjectCuda * c,
    GstElement * element, GstQuery * query);

/* A buffer of one GstCudaMemory (from a pool: nothing is allocated per
 * frame once warm) holding a copy of size bytes at host; NULL on failure. */
GstBuffer *gst_tensor_inject_cuda_buffer (GstTensorInjectCuda * c,
    const guint8 * host, gsize size);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_CUDA_H__ */
