/* A small .npy reader for tensorinject (float32/float16, C order). */
#ifndef __GST_CUDANMS_NPY_H__
#define __GST_CUDANMS_NPY_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

typedef struct
{
  cnms_dtype dtype;
  gint n_dims;
  gint64 dims[CNMS_MAX_DIMS];
  GstBuffer *data;              /* the array's bytes, exactly */
} CudanmsNpy;

/* Loads path; on failure returns FALSE and sets error. Free with
 * cudanms_npy_clear(). */
gboolean cudanms_npy_load (const gchar * path, CudanmsNpy * npy,
    GError ** error);
void cudanms_npy_clear (CudanmsNpy * npy);

G_END_DECLS
#endif /* __GST_CUDANMS_NPY_H__ */
