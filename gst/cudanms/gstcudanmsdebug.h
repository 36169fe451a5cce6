/* cudanms: the plugin's one debug category, "cudanms". Every file of the
 * plugin that logs (GST_*_OBJECT, GST_ELEMENT_ERROR and GST_ELEMENT_WARNING
 * included) includes this header and so logs to it. */
#ifndef __GST_CUDANMS_DEBUG_H__
#define __GST_CUDANMS_DEBUG_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Defined in gstcudanmsdebug.c, which is part of the output library so that
 * the programs linking that library without the plugin (tests, benches)
 * have it; plugin_init (plugin.c) initialises it. */
GST_DEBUG_CATEGORY_EXTERN (gst_cudanms_debug);
#define GST_CAT_DEFAULT gst_cudanms_debug

G_END_DECLS
#endif /* __GST_CUDANMS_DEBUG_H__ */
