/* cudanms: the tensor input contract on GStreamer 1.22.
 *
 * Upstream elements attach a detector's raw output tensor as a GstCustomMeta
 * named "CudanmsTensorMeta". Its structure (also named "CudanmsTensorMeta")
 * mirrors GStreamer 1.26's GstTensor:
 *
 *   id          string       optional; tensor-id selects by it
 *   data-type   string       "float32" or "float16"
 *   dims        GstValueArray of int/uint/int64/uint64, or a string "1,84,8400"
 *   dims-order  string       optional; only "row-major"
 *   data        GstBuffer    (or GBytes) holding the row-major elements
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
 * is found at build time, GstTensorMeta is read too.
 */
#ifndef __GST_CUDANMS_TENSOR_META_H__
#define __GST_CUDANMS_TENSOR_META_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

#define GST_CUDANMS_TENSOR_META_NAME "CudanmsTensorMeta"

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
  GstBuffer *data;
  GBytes *bytes;
  GstMapInfo map;
} GstCudanmsTensorView;

#define GST_CUDANMS_TENSOR_VIEW_INIT { { NULL, 0, CNMS_DTYPE_FLOAT32, 0, { 0 }, 0 }, NULL, NULL, GST_MAP_INFO_INIT }

/* Finds the tensor with this id (NULL: the first one found: custom metas,
 * most recently attached first, then protection metas) and maps it. On
 * GST_CUDANMS_TENSOR_BAD writes the reason into msg. Release the view with
 * gst_cudanms_tensor_view_release() in every case. */
GstCudanmsTensorLookup gst_cudanms_tensor_view_acquire (GstCudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, gchar * msg, gsize msg_size);
void gst_cudanms_tensor_view_release (GstCudanmsTensorView * view);

/* TRUE when a host tensor holds no finite element at all. Stops at the first
 * finite one, so it is cheap on real tensors. */
gboolean gst_cudanms_tensor_is_all_nonfinite (const cnms_tensor * t);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_META_H__ */
