/* A seeded synthetic scene rendered as raw YOLO output tensors. */
#ifndef __GST_CUDANMS_SYNTH_SCENE_H__
#define __GST_CUDANMS_SYNTH_SCENE_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean yolov5;              /* else yolov8 */
  gint num_classes;
  gint model_width;
  gint model_height;
  cnms_dtype dtype;
  guint64 seed;
  gint num_objects;
  guint noise;                  /* background anchors scoring above 0.05 */
} CudanmsSynthConfig;

typedef struct _CudanmsSynthScene CudanmsSynthScene;

/* Precomputes the static background tensor and the objects' tracks. */
CudanmsSynthScene *cudanms_synth_scene_new (const CudanmsSynthConfig * cfg);
void cudanms_synth_scene_free (CudanmsSynthScene * scene);

/* Tensor dims ([1, 4+C, N] or [1, N, 5+C]) and byte size. */
void cudanms_synth_scene_dims (const CudanmsSynthScene * scene,
    gint64 dims[3]);
gsize cudanms_synth_scene_size (const CudanmsSynthScene * scene);

/* Writes frame number frame's tensor into out (size bytes). */
void cudanms_synth_scene_render (const CudanmsSynthScene * scene,
    guint64 frame, guint8 * out);

G_END_DECLS
#endif /* __GST_CUDANMS_SYNTH_SCENE_H__ */
