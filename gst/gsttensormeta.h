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

#define CUDANMS_TENSOR_META_NAME "CudanmsTensorMeta"

/* Registers the custom meta unless someone else already did. */
const GstMetaInfo *cudanms_tensor_meta_register (void);

/* Attaches one tensor to the (writable) buffer. id may be NULL. Takes a
 * reference on data. */
gboolean cudanms_tensor_meta_add (GstBuffer * buffer, const gchar * id,
    cnms_dtype dtype, const gint64 * dims, guint n_dims, GstBuffer * data);

typedef enum
{
  CUDANMS_TENSOR_FOUND,
  CUDANMS_TENSOR_MISSING,
  CUDANMS_TENSOR_BAD
} CudanmsTensorLookup;

/* A tensor found on a buffer, mapped for reading. It holds its own reference
 * on the data, so it stays valid whatever happens to the buffer's metas. */
typedef struct
{
  cnms_tensor tensor;
  GstBuffer *data;
  GBytes *bytes;
  GstMapInfo map;
} CudanmsTensorView;

#define CUDANMS_TENSOR_VIEW_INIT { { NULL, 0, CNMS_DTYPE_FLOAT32, 0, { 0 }, 0 }, NULL, NULL, GST_MAP_INFO_INIT }

/* Finds the tensor with this id (NULL: the first one found: custom metas,
 * most recently attached first, then protection metas) and maps it. On
 * CUDANMS_TENSOR_BAD writes the reason into msg. Release the view with
 * cudanms_tensor_view_release() in every case. */
CudanmsTensorLookup cudanms_tensor_view_acquire (CudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, gchar * msg, gsize msg_size);
void cudanms_tensor_view_release (CudanmsTensorView * view);

/* TRUE when a host tensor holds no finite element at all. Stops at the first
 * finite one, so it is cheap on real tensors. */
gboolean cudanms_tensor_is_all_nonfinite (const cnms_tensor * t);

const gchar *cudanms_dtype_to_string (cnms_dtype dtype);
gboolean cudanms_dtype_from_string (const gchar * str, cnms_dtype * dtype);

/* Parses a model size "WxH" (1..65536 each); FALSE when malformed. */
gboolean cudanms_parse_size (const gchar * str, gint * width, gint * height);

G_END_DECLS
#endif /* __GST_CUDANMS_TENSOR_META_H__ */
