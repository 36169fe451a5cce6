/* tensorinject plugin: registers the tensorinject element, and on
 * GStreamer >= 1.28 tensorbatch and tensorunbatch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gsttensorinject.h"
#ifdef HAVE_GST_BATCH_META
#include "gsttensorbatch.h"
#include "gsttensorunbatch.h"
#endif

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ok = GST_ELEMENT_REGISTER (tensorinject, plugin);

#ifdef HAVE_GST_BATCH_META
  ok &= GST_ELEMENT_REGISTER (tensorbatch, plugin);
  ok &= GST_ELEMENT_REGISTER (tensorunbatch, plugin);
#endif
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, tensorinject,
    "Detection tensor producer for tests and demos (synthetic scenes, .npy "
    "replay)", plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME,
    GST_PACKAGE_ORIGIN)
