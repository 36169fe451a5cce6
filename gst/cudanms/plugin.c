/* cudanms plugin: its debug category, the tensor meta, the cudanms element
 * and, with GStreamer >= 1.28's tensor caps, cudanmstensordec (the same
 * element as a tensor decoder for tensordecodebin). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstcudanms.h"
#include "gstcudanmsdebug.h"
#ifdef HAVE_GST_TENSOR_CAPS
#include "gstcudanmstensordec.h"
#endif
#include "gsttensormeta.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  GST_DEBUG_CATEGORY_INIT (gst_cudanms_debug, "cudanms", 0,
      "Detection tensor decode and NMS");
  if (gst_cudanms_tensor_meta_register () == NULL)
    return FALSE;
  if (!GST_ELEMENT_REGISTER (cudanms, plugin))
    return FALSE;
#ifdef HAVE_GST_TENSOR_CAPS
  if (!GST_ELEMENT_REGISTER (cudanmstensordec, plugin))
    return FALSE;
#endif
  return TRUE;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudanms,
    "Detection tensor decode and exact greedy NMS (CUDA and CPU)",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
