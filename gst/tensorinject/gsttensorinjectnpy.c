/* .npy loading for tensorinject: the library's reader (kernels/npy.h),
 * wrapped into a GstBuffer. float32/float16, C order. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "gsttensorinjectnpy.h"
#include "cnms_npy.h"

gboolean
gst_tensor_inject_npy_load (const gchar * path, GstTensorInjectNpy * npy, GError ** error)
{
  cnms_npy a;
  gchar msg[256];
  gint i;

  memset (npy, 0, sizeof (*npy));
  if (cnms_npy_read (path, &a, msg, sizeof msg) != 0)
    goto read_failed;
  if (a.dtype != CNMS_NPY_F4 && a.dtype != CNMS_NPY_F2)
    goto wrong_dtype;
  if (a.n_dims < 1 || a.n_dims > CNMS_MAX_DIMS)
    goto wrong_dims;

  npy->dtype = a.dtype == CNMS_NPY_F2 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  npy->n_dims = a.n_dims;
  for (i = 0; i < a.n_dims; i++)
    npy->dims[i] = a.dims[i];
  /* An empty array still gets a (zero-sized) buffer. */
  npy->data = a.size > 0 ?
      gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, a.data, a.size,
      0, a.size, a.data, free) : gst_buffer_new ();
  if (a.size == 0)
    cnms_npy_clear (&a);
  return TRUE;

read_failed:
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", msg);
  return FALSE;
wrong_dtype:
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
      "%s holds %s, not float32 or float16", path,
      cnms_npy_dtype_name (a.dtype));
  cnms_npy_clear (&a);
  return FALSE;
wrong_dims:
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
      "%s has %d dims, expected 1 to %d", path, a.n_dims, CNMS_MAX_DIMS);
  cnms_npy_clear (&a);
  return FALSE;
}

void
gst_tensor_inject_npy_clear (GstTensorInjectNpy * npy)
{
  gst_clear_buffer (&npy->data);
}
