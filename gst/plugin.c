/* cudanms plugin: registers the tensor meta and the elements. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstcudanms.h"
#include "gsttensorinject.h"
#include "gsttensormeta.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  if (cudanms_tensor_meta_register () == NULL)
    return FALSE;
  ret |= GST_ELEMENT_REGISTER (cudanms, plugin);
  ret |= GST_ELEMENT_REGISTER (tensorinject, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudanms,
    "Detection tensor decode and exact greedy NMS (CUDA and CPU)",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
