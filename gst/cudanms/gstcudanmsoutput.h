/* cudanms: what the element attaches per kept box (the output contract):
 * GstVideoRegionOfInterestMetas and GstAnalyticsODMtds, named by the
 * stream's labels. */
#ifndef __GST_CUDANMS_OUTPUT_H__
#define __GST_CUDANMS_OUTPUT_H__

#include <gst/gst.h>
#include "cudanms.h"
#include "gstcudanmsenums.h"
#include "gstcudanmslabels.h"

G_BEGIN_DECLS

/* A lane's label without a label file (with one: its line 0). */
#define GST_CUDANMS_LANE_LABEL "lane"

/* What the metas of a frame's payload need besides the library's
 * payloads (cnms_ctx_payload). Keypoints (CNMS_HEAD_KEYPOINTS): the
 * tensor's values per keypoint, keypoint_dims (cnms_shape.keypoint_dims;
 * 3: with a visibility score). Masks (CNMS_HEAD_MASK): record i's width x
 * height bytes at its payload offset of mask_data (0 or 1; NULL unless the
 * ROIs carry "mask" structures) and of region_data (0 or the record's
 * region id i mod 255 + 1; NULL unless segmentation mtds are attached),
 * both filled by gst_cudanms_mask_pool_fill, read-only, shared by the
 * metas. */
typedef struct
{
  gint keypoint_dims;
  GstBuffer *mask_data;
  GstBuffer *region_data;
} GstCudanmsPayload;

/* Attaches kept box d as a GstVideoRegionOfInterestMeta of the given id,
 * with its "detection" param structure (producer: the element's name)
 * when params is TRUE. */
void gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, gint id, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer);

/* The oriented GstAnalyticsODMtd location of oriented record d, in the
 * mtd's convention (x, y the upper-left corner before rotation, w, h
 * integers, r in [0, 2 pi) turning the w side from +x towards +y, about
 * the box's centre): w = floor (d.w + 0.5), h = floor (d.h + 0.5),
 * x = floor (d.cx - w / 2 + 0.5), y = floor (d.cy - h / 2 + 0.5), in
 * double; r = d.angle modulo 2 pi (in double, then float; a float that
 * rounds to 2 pi is 0). */
void gst_cudanms_oriented_od_location (const cnms_det * d, gint * x,
    gint * y, gint * w, gint * h, gfloat * r);

/* The id after the largest of the buffer's ROI metas (0 without one, and
 * G_MAXINT + 1 after one of id G_MAXINT): ids from there on are unique
 * within the buffer, whoever attached the rest. */
gint64 gst_cudanms_next_roi_id (GstBuffer * buffer);

/* FALSE when which needs the analytics library this build lacks. */
gboolean gst_cudanms_attach_meta_available (GstCudanmsAttachMeta which);

/* Attaches the n kept records dets of layout (cnms_layout_info of the
 * tensor's layout; NULL: boxes) as which says, in kept order: ROIs (ids
 * first .. first+n-1, first = gst_cudanms_next_roi_id) and/or one
 * GstAnalyticsODMtd each (label quark, the ROI's x, y, w, h, the score as
 * confidence). FALSE if the relation meta refused one.
 *
 * The ROI's rectangle is the record's box, or for an oriented layout
 * (layout->oriented, yolov8-obb) its hull clipped to the frame
 * (cnms_obb_hull), rounded as a box. With roi_params each ROI carries its
 * "detection" structure (confidence, label_id, label, x_min .. y_max
 * normalising the rectangle, producer) and, oriented, also the oriented
 * box: cx, cy, width, height (frame pixels, not clipped) and angle
 * (radians), doubles holding the record's floats exactly. ODMtds of an
 * oriented layout are oriented with analytics >= 1.26
 * (gst_cudanms_oriented_od_location), with analytics 1.24 the ROI's
 * x, y, w, h.
 *
 * The layout's head (layout->head) gives each ROI with roi_params a second
 * param structure from payloads (cnms_ctx_payload of the call that gave
 * dets: records[i] is record i's; NULL, or payloads of another head or
 * count: none, the boxes alone) and payload (NULL: no keypoint scores, no
 * mask buffers):
 *   CNMS_HEAD_LANE: "lane": score (double), points (a GstValueArray of
 *     doubles x0, y0, x1, y1, ... in frame pixels, bottom row first, the
 *     rows without a point left out) and anchor (int, the proposal index);
 *     a lane's ROI and ODMtd are labelled by the label file's line 0, else
 *     "lane".
 *   CNMS_HEAD_KEYPOINTS: "keypoints": points (a GstValueArray of doubles
 *     x0, y0, x1, y1, ... in frame pixels, one pair per keypoint, not
 *     clipped) and, with payload->keypoint_dims 3 only, scores (a
 *     GstValueArray of the keypoints' visibility scores, doubles).
 *   CNMS_HEAD_MASK: "mask": x, y, width, height (ints, the mask's
 *     frame-pixel rectangle, the pixels of the box) and data (a GstBuffer
 *     of its width x height bytes of payload->mask_data, row-major, 1
 *     inside the mask, 0 outside); and with analytics >= 1.26 each mask
 *     also as a GstAnalyticsSegmentationMtd related both ways (RELATE_TO)
 *     to its ODMtd, as yolosegv8tensordec attaches them: GRAY8 of the
 *     payload->region_data bytes with its GstVideoMeta (stride = width),
 *     instance type, region ids 0 and i mod 255 + 1, located at the mask's
 *     rectangle (no mtd for an empty mask). */
gboolean gst_cudanms_attach_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_layout_desc * layout,
    const cnms_det * dets, gint n, const cnms_payloads * payloads,
    const GstCudanmsPayload * payload, gint frame_width, gint frame_height,
    GstCudanmsAttachMeta which, gboolean roi_params, const gchar * producer);

/* Reusable memory for the masks: the bytes of one frame's masks go into a
 * block taken from the pool, wrapped as a read-only GstBuffer whose
 * memory returns the block to the pool when the last buffer sharing it
 * (the metas' sub-buffers) is gone; a block too small is replaced by a
 * larger one. The pool lives while a block is out. */
typedef struct _GstCudanmsMaskPool GstCudanmsMaskPool;

GstCudanmsMaskPool *gst_cudanms_mask_pool_new (void);
void gst_cudanms_mask_pool_unref (GstCudanmsMaskPool * pool);

/* The masks' bytes of payloads (a CNMS_HEAD_MASK cnms_ctx_payload: mask
 * i's width x height bytes at records[i].offset of data), when mask_data
 * is not NULL as *mask_data (0 or 1: the ROIs' "mask" structures) and,
 * when region_data is not NULL, as *region_data (mask i's 1s as its
 * region id i mod 255 + 1: the segmentation mtds); offsets as in
 * payloads. */
void gst_cudanms_mask_pool_fill (GstCudanmsMaskPool * pool,
    const cnms_payloads * payloads, GstBuffer ** mask_data,
    GstBuffer ** region_data);

G_END_DECLS
#endif /* __GST_CUDANMS_OUTPUT_H__ */
