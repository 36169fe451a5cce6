/* A small .npy reader for tensorinject (float32/float16, C order). */
#ifndef __GST_TENSOR_INJECT_NPY_H__
#define __GST_TENSOR_INJECT_NPY_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

typedef struct
{
  cnms_dtype dtype;
  gint n_dims;
  gint64 dims[CNMS_MAX_DIMS];
  GstBuffer *data;              /* the array's bytes, exactly */
} GstTensorInjectNpy;

/* Loads path; on failure returns FALSE and sets error. Free with
 * gst_tensor_inject_npy_clear(). */
gboolean gst_tensor_inject_npy_load (const gchar * path, GstTensorInjectNpy * npy,
    GError ** error);
void gst_tensor_inject_npy_clear (GstTensorInjectNpy * npy);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_NPY_H__ */
