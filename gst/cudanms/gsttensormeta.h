/* cudanms: the tensor input. A detector's raw output tensor arrives on a
 * video buffer as a "CudanmsTensorMeta" custom meta (GStreamer 1.22), a
 * GstProtectionMeta carrying the same structure (Python on 1.22), or a
 * GStreamer >= 1.26 GstTensorMeta; GStreamer >= 1.28 also describes it in
 * the caps. This registers the custom meta, finds and maps the tensor on a
 * buffer (in place when it is GstCudaMemory of the pipeline's CUDA
 * context), and checks the caps' description. The contract itself (the
 * structure's fields, dims-order, several tensors per buffer) is in
 * docs/contracts.md, section "Input tensor". */
#ifndef __GST_CUDANMS_TENSOR_META_H__
#define __GST_CUDANMS_TENSOR_META_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

#define GST_CUDANMS_TENSOR_META_NAME "CudanmsTensorMeta"

/* The ids of the detection tensors cudanms decodes are the library's
 * (cnms_layout_info (l)->tensor_id: GStreamer's standard ids, and
 * laneatt-proposals, cudanms's own as GStreamer has no lane decoder);
 * GST_CUDANMS_TENSOR_ID (l) is layout l's. The segmentation prototypes
 * [1, M, Hp, Wp], a layout's second tensor, have GStreamer's id: */
#define GST_CUDANMS_TENSOR_ID(l) (cnms_layout_info (l)->tensor_id)
#define GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS "yolo-v8-segmentation-out-protos"

/* Registers the custom meta unless someone else already did. */
const GstMetaInfo *gst_cudanms_tensor_meta_register (void);

typedef enum
{
  GST_CUDANMS_TENSOR_FOUND,
  GST_CUDANMS_TENSOR_MISSING,
  GST_CUDANMS_TENSOR_BAD
} GstCudanmsTensorLookup;

/* A tensor found on a buffer, mapped for reading. It holds its own reference
 * on the data, so it stays valid whatever happens to the buffer's metas. */
typedef struct
{
  cnms_tensor tensor;
  cnms_layout layout;           /* the layout to decode it with */
  GstBuffer *data;
  GBytes *bytes;
  GstMapInfo map;
  /* set by the caller: data in GstCudaMemory of this GstCudaContext is
   * mapped in place (tensor.on_device); NULL maps every tensor on the host
   * (gst-cuda downloads device memory) */
  GstObject *device_context;
  /* set by the acquire: with device_context set, the GstCudaContext of
   * the found tensor's data when that is GstCudaMemory of another context
   * (another GPU, or another context of the same GPU), read through a
   * host mapping as host memory is; else NULL. Borrowed: the memory holds
   * it while the view holds the data. */
  GstObject *other_context;
  /* the found tensor's id ("" when it has none): a message about the
   * tensor names it */
  gchar id[128];
} GstCudanmsTensorView;

#define GST_CUDANMS_TENSOR_VIEW_INIT { { NULL, 0, CNMS_DTYPE_FLOAT32, 0, { 0 }, 0 }, CNMS_LAYOUT_AUTO, NULL, NULL, GST_MAP_INFO_INIT, NULL, NULL, "" }

/* Finds a tensor on buffer and maps it. Metas are visited in the order they
 * were attached (oldest first), whatever their kind: GstTensorMeta (each
 * GstTensor in index order), CudanmsTensorMeta custom metas, protection
 * metas carrying a CudanmsTensorMeta structure.
 *
 * id != NULL: the first tensor with that id (any kind, any meta).
 * id == NULL: the first tensor that fits layout (the auto rule, or the
 * forced layout: cnms_tensor_shape under p, which may be NULL: the
 * defaults), skipping GStreamer's standard ids of non-detection tensors
 * (protos, SSD/face split outputs, classifier scores). Layout yolov8-seg's
 * fit takes its prototypes protos (gst_cudanms_tensor_view_acquire_protos);
 * without them (NULL) the first tensor is taken, whose prototypes are then
 * missing. protos is NULL for every other layout.
 *
 * view->layout is layout, except that layout AUTO on a tensor with a
 * standard YOLOv8 id (yolo-v8-out, yolo-v8-segmentation-out-detections) is
 * yolov8, and on one with the YOLOv8-OBB id (yolo-v8-obb-out) yolov8-obb.
 * Under any layout but yolov8-seg, yolo-v8-segmentation-out-detections
 * [1, 4+C+M, N] is read as its first 4+C planes (boxes only), M from the
 * protos tensor of the same GstTensorMeta; layout yolov8-seg reads it
 * whole, from any meta (its prototypes: gst_cudanms_tensor_view_acquire_protos).
 *
 * Writes why into msg on MISSING and BAD (BAD: the selected tensor is bad,
 * or no tensor fits: the first one's reason). Release the view with
 * gst_cudanms_tensor_view_release() in every case. */
GstCudanmsTensorLookup gst_cudanms_tensor_view_acquire (GstCudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, cnms_layout layout,
    const cnms_tensor * protos, const cnms_params * p, gchar * msg,
    gsize msg_size);
/* The same for a tensor [B, ...] of B frames (a batch on its batch
 * buffer): a tensor fits when one frame of it ([1, ...]) does. */
GstCudanmsTensorLookup gst_cudanms_tensor_view_acquire_batch
    (GstCudanmsTensorView * view, GstBuffer * buffer, const gchar * id,
    cnms_layout layout, const cnms_tensor * protos, const cnms_params * p,
    gchar * msg, gsize msg_size);
void gst_cudanms_tensor_view_release (GstCudanmsTensorView * view);

/* Layout yolov8-seg: the prototypes [1, M, Hp, Wp], the first tensor on
 * buffer (any meta, in the order above) with GStreamer's id
 * yolo-v8-segmentation-out-protos, mapped as the detections are (in place
 * on the device when view->device_context is its context). MISSING
 * without one, BAD when it cannot be read (msg says why); its fit to the
 * detections is cnms_tensor_shape's (and cnms_detect's) to judge. Release
 * as any view. */
GstCudanmsTensorLookup gst_cudanms_tensor_view_acquire_protos
    (GstCudanmsTensorView * view, GstBuffer * buffer, gchar * msg,
    gsize msg_size);

#ifdef HAVE_GST_TENSOR_CAPS
/* GStreamer >= 1.28, a tensor decoder (cudanmstensordec): takes the tensor
 * of view, found by its data, off the GstTensorMeta of buffer (writable)
 * that holds it, and removes that meta when it holds nothing else; its
 * other tensors stay for the decoders after it. FALSE when no GstTensorMeta
 * of buffer holds it (e.g. it came in a CudanmsTensorMeta). */
gboolean gst_cudanms_tensor_view_take (const GstCudanmsTensorView * view,
    GstBuffer * buffer);
#endif

/* What a standard non-detection id is ("classifier scores", ...), else NULL. */
const gchar *gst_cudanms_tensor_id_not_detection (const gchar * id);
/* requested, or for AUTO the layout whose tensor id (cnms_layout_info)
 * id is: yolov8 for yolo-v8-out, yolov8-obb for yolo-v8-obb-out, laneatt
 * for cudanms's own laneatt-proposals; the segmentation detections
 * yolo-v8-segmentation-out-detections (a layout with a mask head) are read
 * as yolov8, their boxes only (else AUTO). */
cnms_layout gst_cudanms_tensor_id_layout (const gchar * id,
    cnms_layout requested);
/* NULL, "row-major" or "col-major" (read alike). */
gboolean gst_cudanms_dims_order_ok (const gchar * order);

/* GStreamer >= 1.28 describes tensors in caps (a "tensors" field). When
 * caps describe the detection tensor (the one with tensor_id, else the
 * first with a standard YOLOv8, YOLOv8-seg or YOLOv8-OBB id), checks its
 * dims as the buffers' tensors will be checked (under p's keypoint_dims;
 * p may be NULL: the defaults; a yolov8-seg tensor is not checked, its
 * prototypes being another tensor) and writes why not into msg. TRUE when
 * there is nothing to check. Compiled only where 1.28's analytics headers
 * are. */
gboolean gst_cudanms_tensor_caps_check (const GstCaps * caps,
    const gchar * tensor_id, cnms_layout layout, const cnms_params * p,
    gchar * msg, gsize msg_size);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_META_H__ */
