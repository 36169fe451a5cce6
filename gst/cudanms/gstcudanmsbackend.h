/* cudanms: the element's backends: the library contexts it runs on, the
 * pipeline's shared CUDA context (gst-cuda) they run in, and the choice of
 * backend for each buffer. */
#ifndef __GST_CUDANMS_BACKEND_H__
#define __GST_CUDANMS_BACKEND_H__

#include <gst/gst.h>
#include "cudanms.h"
#include "gstcudanmsenums.h"
#include "gstcudanmspick.h"

G_BEGIN_DECLS

typedef struct
{
  GstCudanmsDevice device;      /* as started */
  cnms_ctx *cpu;                /* device=auto and cpu */
  cnms_ctx *cuda;               /* device=auto and cuda, where CUDA works */
  GstObject *cuda_context;      /* the pipeline's GstCudaContext, or NULL */

  GstCudanmsPick pick;          /* device=auto, host tensors */
} GstCudanmsBackend;

/* Creates the contexts device asks for; the CUDA one in the pipeline's
 * CUDA context where gst-cuda has one (gst_cuda_ensure_element_context).
 * FALSE with a reason in msg when device=cuda cannot run or a context
 * cannot be made. */
gboolean gst_cudanms_backend_start (GstCudanmsBackend * be,
    GstElement * element, GstCudanmsDevice device, gint device_id,
    gchar * msg, gsize msg_size);
void gst_cudanms_backend_stop (GstCudanmsBackend * be);

/* GstElement::set_context and the context query (GstBaseTransform::query):
 * TRUE when they were about the CUDA context. */
void gst_cudanms_backend_set_context (GstCudanmsBackend * be,
    GstElement * element, GstContext * context, gint device_id);
gboolean gst_cudanms_backend_query (GstCudanmsBackend * be,
    GstElement * element, GstQuery * query);

/* The context in which device tensors are used in place (NULL: a device
 * tensor is downloaded, e.g. for device=cpu). */
GstObject *gst_cudanms_backend_device_context (const GstCudanmsBackend * be);

/* Decodes and suppresses t (cnms_detect, every layout: protos are
 * yolov8-seg's prototypes, NULL for any other layout) on the backend
 * chosen for it: a device tensor (either of them) on CUDA; a host tensor
 * on the forced backend, or with device=auto the one that was faster on
 * the first buffers of its shape. *used: the context that ran it (for its
 * error, report and payload); *took: the call's time in nanoseconds (what
 * device=auto compares, and the stats' backend-time). */
cnms_status gst_cudanms_backend_detect (GstCudanmsBackend * be,
    const cnms_tensor * t, const cnms_tensor * protos, cnms_layout layout,
    const cnms_params * p, const cnms_det ** dets, int *n_dets,
    cnms_ctx ** used, GstClockTime * took);

/* cnms_detect_batch on the CUDA context where there is one (device=auto
 * included: a batch is the GPU's work), else the CPU's. */
cnms_status gst_cudanms_backend_detect_batch (GstCudanmsBackend * be,
    const cnms_tensor * batch, const cnms_tensor * protos,
    const cnms_frame * frames, int n_frames, cnms_layout layout,
    const cnms_params * p, const cnms_frame_result ** results,
    cnms_ctx ** used, GstClockTime * took);

/* cnms_detect_tiles of the slices' tensor batch [B, ...], on the context
 * a batch takes. */
cnms_status gst_cudanms_backend_detect_tiles (GstCudanmsBackend * be,
    const cnms_tensor * batch, const cnms_slice * slices, int n_slices,
    int frame_width, int frame_height, cnms_layout layout,
    const cnms_params * p, const cnms_merge_params * m,
    const cnms_det ** dets, int *n_dets, cnms_ctx ** used,
    GstClockTime * took);

G_END_DECLS
#endif /* __GST_CUDANMS_BACKEND_H__ */
