/* cudanms: the tensor input contract on GStreamer 1.22.
 *
 * Upstream elements attach a detector's raw output tensor as a GstCustomMeta
 * named "CudanmsTensorMeta". Its structure (also named "CudanmsTensorMeta")
 * mirrors GStreamer 1.26's GstTensor:
 *
 *   id          string       optional; tensor-id selects by it
 *   data-type   string       "float32" or "float16"
 *   dims        GstValueArray of int/uint/int64/uint64, or a string "1,84,8400"
 *   dims-order  string       optional; "row-major" or "col-major", read
 *                            alike (see below)
 *   data        GstBuffer    (or GBytes) holding the elements, last dim
 *                            fastest
 *
 * Register it with gst_meta_register_custom ("CudanmsTensorMeta", tags, NULL,
 * NULL, NULL) unless gst_meta_get_info ("CudanmsTensorMeta") already returns
 * it (registering a name twice fails). The default custom transform copies
 * the structure on copy transforms, so the tensor survives
 * gst_buffer_make_writable() and gst_buffer_copy().
 *
 * Python (gi) cannot fill a custom meta on 1.22: CustomMeta.get_structure()
 * returns a copy. Python attaches the same structure through
 * Gst.Buffer.add_protection_meta(structure) instead; a GstProtectionMeta whose
 * structure is named "CudanmsTensorMeta" is read exactly like the custom meta.
 *
 * Several tensors per buffer are allowed. Where GStreamer >= 1.26 analytics
 * is found at build time, every GstTensorMeta (and every GstTensor in each)
 * is read too.
 *
 * dims-order: GStreamer 1.28's decoders read a tensor's bytes by its dims
 * whatever its dims-order says (yolov8tensordec asks for a col-major
 * [1, 4+C, N] and reads it as 4+C planes of N anchors; onnxinference only
 * labels ONNX's bytes). cudanms follows that one rule for the custom meta
 * and GstTensor alike: row-major and col-major tensors with the same dims
 * are the same tensor, last dim fastest.
 */
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
} GstCudanmsTensorView;

#define GST_CUDANMS_TENSOR_VIEW_INIT { { NULL, 0, CNMS_DTYPE_FLOAT32, 0, { 0 }, 0 }, CNMS_LAYOUT_AUTO, NULL, NULL, GST_MAP_INFO_INIT, NULL }

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
 * yolov8. yolo-v8-segmentation-out-detections [1, 4+C+M, N] is read as its
 * first 4+C planes, M from the protos tensor of the same GstTensorMeta.
 *
 * Writes why into msg on MISSING and BAD (BAD: the selected tensor is bad,
 * or no tensor fits: the first one's reason). Release the view with
 * gst_cudanms_tensor_view_release() in every case. */
GstCudanmsTensorLookup gst_cudanms_tensor_view_acquire (GstCudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, cnms_layout layout, gchar * msg,
    gsize msg_size);
void gst_cudanms_tensor_view_release (GstCudanmsTensorView * view);

/* TRUE when a host tensor holds no finite element at all. Stops at the first
 * finite one, so it is cheap on real tensors. */
gboolean gst_cudanms_tensor_is_all_nonfinite (const cnms_tensor * t);

/* What a standard non-detection id is ("classifier scores", ...), else NULL. */
const gchar *gst_cudanms_tensor_id_not_detection (const gchar * id);
/* requested, or yolov8 for AUTO and a standard YOLOv8 id. */
cnms_layout gst_cudanms_tensor_id_layout (const gchar * id,
    cnms_layout requested);
/* NULL, "row-major" or "col-major" (read alike). */
gboolean gst_cudanms_dims_order_ok (const gchar * order);

/* GStreamer >= 1.28 describes tensors in caps (a "tensors" field). When
 * caps describe the detection tensor (the one with tensor_id, else the
 * first with a standard YOLOv8 id), checks it as the buffers' tensors will
 * be checked and writes why not into msg. TRUE when there is nothing to
 * check. Compiled only where 1.28's analytics headers are. */
gboolean gst_cudanms_tensor_caps_check (const GstCaps * caps,
    const gchar * tensor_id, cnms_layout layout, gchar * msg, gsize msg_size);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_META_H__ */
