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

/* GStreamer's standard ids of the detection tensors cudanms decodes. */
#define GST_CUDANMS_TENSOR_ID_YOLOV8 "yolo-v8-out"
#define GST_CUDANMS_TENSOR_ID_YOLOV8_SEG "yolo-v8-segmentation-out-detections"
#define GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS "yolo-v8-segmentation-out-protos"
/* YOLOv8/v11-OBB [1, 4+C+1, N] (what yoloobbv8tensordec reads) */
#define GST_CUDANMS_TENSOR_ID_YOLOV8_OBB "yolo-v8-obb-out"
/* LaneATT's proposals [1, N, 5+S]: cudanms's own id (GStreamer has no
 * lane decoder, hence no standard id) */
#define GST_CUDANMS_TENSOR_ID_LANEATT "laneatt-proposals"

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
 * forced layout), skipping GStreamer's standard ids of non-detection tensors
 * (protos, SSD/face split outputs, classifier scores).
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
    GstBuffer * buffer, const gchar * id, cnms_layout layout, gchar * msg,
    gsize msg_size);
void gst_cudanms_tensor_view_release (GstCudanmsTensorView * view);

/* Layout yolov8-seg: the prototypes [1, M, Hp, Wp], the first tensor on
 * buffer (any meta, in the order above) with GStreamer's id
 * yolo-v8-segmentation-out-protos, mapped as the detections are (in place
 * on the device when view->device_context is its context). MISSING
 * without one, BAD when it cannot be read (msg says why); its fit to the
 * detections is cnms_detect_seg's to judge. Release as any view. */
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
/* requested, or for AUTO the layout of a standard id: yolov8 for the
 * YOLOv8 ids, yolov8-obb for yolo-v8-obb-out, laneatt for cudanms's own
 * laneatt-proposals (else AUTO). */
cnms_layout gst_cudanms_tensor_id_layout (const gchar * id,
    cnms_layout requested);
/* NULL, "row-major" or "col-major" (read alike). */
gboolean gst_cudanms_dims_order_ok (const gchar * order);

/* GStreamer >= 1.28 describes tensors in caps (a "tensors" field). When
 * caps describe the detection tensor (the one with tensor_id, else the
 * first with a standard YOLOv8 or YOLOv8-OBB id), checks it as the buffers' tensors will
 * be checked and writes why not into msg. TRUE when there is nothing to
 * check. Compiled only where 1.28's analytics headers are. */
gboolean gst_cudanms_tensor_caps_check (const GstCaps * caps,
    const gchar * tensor_id, cnms_layout layout, gchar * msg, gsize msg_size);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_META_H__ */
