/* cudanms: the storage of the plugin's debug category (see
 * gstcudanmsdebug.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanmsdebug.h"

GST_DEBUG_CATEGORY (gst_cudanms_debug);
