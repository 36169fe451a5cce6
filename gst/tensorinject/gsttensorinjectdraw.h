/* Paints the synthetic scene's objects into the video frame, where
 * cudanms will put their boxes. */
#ifndef __GST_TENSOR_INJECT_DRAW_H__
#define __GST_TENSOR_INJECT_DRAW_H__

#include <gst/video/video.h>
#include "gsttensorinjectscene.h"
#include "gsttensorinjecttiles.h"

G_BEGIN_DECLS

/* Width of an object's darker border, frame pixels. */
#define GST_TENSOR_INJECT_DRAW_BORDER 2

/* Width of a lane marking, frame pixels: a sample whose centre lies
 * nearer than half of it to the lane's polyline is painted. */
#define GST_TENSOR_INJECT_DRAW_LANE_WIDTH 4

/* A pose scene's limbs: segments this many frame pixels wide; its
 * keypoints: discs of this radius. */
#define GST_TENSOR_INJECT_DRAW_LIMB_WIDTH 4
#define GST_TENSOR_INJECT_DRAW_JOINT_RADIUS 3

/* Paints each object of tiles into vframe (mapped writable, a supported
 * format, the frame the tiles were made for): its box (frame pixels) in
 * its class's colour with a darker border, as the scenes' boxes. */
void gst_tensor_inject_draw_tiles (const GstTensorInjectTiles * tiles,
    GstVideoFrame * vframe);

/* Whether gst_tensor_inject_draw_objects draws on this format: the 8-bit
 * packed RGB formats (RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB,
 * ABGR) and I420. */
gboolean gst_tensor_inject_draw_supported (GstVideoFormat format);

/* Paints each object of scene at frame number frame into vframe (mapped
 * writable, a supported format): a rectangle in its class's colour with a
 * darker border, over the object's true box mapped to frame pixels as
 * cudanms maps boxes (cnms_map_centre_box, letterbox); in an oriented
 * scene a rotated rectangle over the object's oriented box (mapped with
 * letterbox; the rule is in gsttensorinjectdraw.c); in a lane scene each
 * lane as a marking (a polyline GST_TENSOR_INJECT_DRAW_LANE_WIDTH pixels
 * wide through its rows, mapped with letterbox; the rule is in
 * gsttensorinjectdraw.c); in a pose scene each person's skeleton (its
 * visible keypoints and the limbs between them); in a segmentation scene
 * each object's true shape (the rules are in gsttensorinjectdraw.c).
 * Later objects cover earlier ones. */
void gst_tensor_inject_draw_objects (const GstTensorInjectScene * scene,
    guint64 frame, GstVideoFrame * vframe);

G_END_DECLS
#endif /* __GST_TENSOR_INJECT_DRAW_H__ */
