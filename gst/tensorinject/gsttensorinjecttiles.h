/* tensorinject's tiles (slice-size): a large frame of small objects, the
 * YOLOv8 tensor of each of its slices, and the whole frame's own. */
#ifndef __GST_TENSOR_INJECT_TILES_H__
#define __GST_TENSOR_INJECT_TILES_H__

#include <gst/video/video.h>
#include "cudanms.h"

G_BEGIN_DECLS

typedef struct
{
  gint frame_width, frame_height;
  gint slice_width, slice_height;
  gdouble overlap;              /* slice-overlap, both axes */
  gboolean full_frame;          /* the whole frame as a last slice */
  gint model_width, model_height;
  gint num_classes;
  gint num_objects;
  guint64 seed;
  cnms_dtype dtype;
} GstTensorInjectTilesConfig;

/* The least size of an object's box in the whole frame's model pixels
 * for the whole frame's pass to see it: smaller objects are the ones
 * only the slices find. */
#define GST_TENSOR_INJECT_TILES_LEAST 8

typedef struct _GstTensorInjectTiles GstTensorInjectTiles;

/* A scene of cfg->num_objects objects of 12 to 60 pixels, none closer
 * than 4 pixels to another, at seeded places of the frame (fewer when the
 * frame has no room); NULL and *why when the slices cannot be made. */
GstTensorInjectTiles *gst_tensor_inject_tiles_new (const
    GstTensorInjectTilesConfig * cfg, const gchar ** why);
void gst_tensor_inject_tiles_free (GstTensorInjectTiles * tiles);

/* The slices' tensor [B, 4+C, N] (B the slices, with the whole frame
 * last when full_frame) and the whole frame's alone [1, 4+C, N]: dims and
 * bytes. */
void gst_tensor_inject_tiles_dims (const GstTensorInjectTiles * tiles,
    gint64 dims[3], gboolean whole);
gsize gst_tensor_inject_tiles_size (const GstTensorInjectTiles * tiles,
    gboolean whole);
/* Writes that tensor into out. In slice s, object k's part inside it
 * (its box clipped to the slice) is anchor 2 k, mapped to the model as
 * cudanms maps it back (letterbox), class k's score the object's score
 * scaled by 0.5 + 0.5 x the part's share of its area, and anchor 2 k + 1
 * the part shrunk by 1 pixel on each side at 0.75 of that score; in the
 * whole frame the object's box shrunk by one model pixel on each side, at
 * 0.9 of its score, when it is at least GST_TENSOR_INJECT_TILES_LEAST
 * model pixels wide and high; the other anchors' scores 0.01. */
void gst_tensor_inject_tiles_render (const GstTensorInjectTiles * tiles,
    gboolean whole, guint8 * out);

/* Object i: its box in frame pixels (x1 y1 x2 y2), class and score. */
gint gst_tensor_inject_tiles_n_objects (const GstTensorInjectTiles * tiles);
void gst_tensor_inject_tiles_object (const GstTensorInjectTiles * tiles,
    gint i, gint box[4], gint * class_id, gfloat * score);

G_END_DECLS
#endif
