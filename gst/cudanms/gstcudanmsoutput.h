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

/* The points of the records given to gst_cudanms_attach_lane_detections:
 * record i's row r at points[2 (i n_rows + r)] (x) and [... + 1] (y), frame
 * pixels, NaN where the row has no point (cnms_ctx_lane_points' layout). */
typedef struct
{
  const gfloat *points;
  gint n_rows;
} GstCudanmsLanes;

/* What kept records of layouts yolov8-pose and yolov8-seg carry besides
 * their box. Pose: record i's keypoint j at keypoints[3 (i K + j)] x, y
 * (frame pixels, not clipped) and its visibility score (NaN when
 * keypoint_dims is 2), cnms_ctx_keypoints' layout. Segmentation: record
 * i's mask masks[i] (cnms_ctx_masks), its width x height bytes at
 * masks[i].offset of mask_data (0 or 1; NULL unless the ROIs carry
 * "mask" structures) and of region_data (0 or the record's region id
 * i mod 255 + 1; NULL unless segmentation mtds are attached); both
 * buffers read-only, shared by the metas. */
typedef struct
{
  const gfloat *keypoints;
  gint n_keypoints;
  gint keypoint_dims;
  const cnms_mask *masks;
  GstBuffer *mask_data;
  GstBuffer *region_data;
} GstCudanmsPayload;

/* Attaches kept box d as a GstVideoRegionOfInterestMeta of the given id,
 * with its "detection" param structure (producer: the element's name)
 * when params is TRUE. */
void gst_cudanms_attach_roi (GstBuffer * buffer, GstCudanmsLabels * labels,
    const cnms_det * d, gint id, gint frame_width, gint frame_height,
    gboolean params, const gchar * producer);

/* The same for an oriented record d (CNMS_LAYOUT_YOLOV8_OBB): the ROI's
 * rectangle is d's hull clipped to the frame (cnms_obb_hull), rounded as
 * a box; x_min .. y_max normalise that hull, and the structure also holds
 * the oriented box: cx, cy, width, height (frame pixels, not clipped) and
 * angle (radians), doubles holding d's floats exactly. */
void gst_cudanms_attach_oriented_roi (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * d, gint id, gint frame_width,
    gint frame_height, gboolean params, const gchar * producer);

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

/* Attaches the n kept boxes as which says: ROIs (ids first .. first+n-1,
 * first = gst_cudanms_next_roi_id, each with its "detection" structure
 * naming producer when roi_params is TRUE) and/or one
 * GstAnalyticsODMtd each (label quark, the ROI's x, y, w, h, the score as
 * confidence) in kept order. FALSE if the relation meta refused one. */
gboolean gst_cudanms_attach_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    gint frame_width, gint frame_height, GstCudanmsAttachMeta which,
    gboolean roi_params, const gchar * producer);

/* gst_cudanms_attach_detections for oriented records (layout yolov8-obb):
 * ROIs as gst_cudanms_attach_oriented_roi; ODMtds with analytics >= 1.26
 * oriented (gst_cudanms_oriented_od_location), with analytics 1.24 the
 * ROI's x, y, w, h. */
gboolean gst_cudanms_attach_oriented_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    gint frame_width, gint frame_height, GstCudanmsAttachMeta which,
    gboolean roi_params, const gchar * producer);

/* gst_cudanms_attach_detections for lane records (layout laneatt): ROIs
 * of each lane's rectangle, labelled by the label file's line 0, else
 * "lane", the "detection" structure as a box's, and a second param
 * structure "lane": score (double), points (a GstValueArray of doubles
 * x0, y0, x1, y1, ... in frame pixels, bottom row first, the rows without
 * a point left out) and anchor (int, the proposal index); ODMtds of the
 * ROI's rectangle, label and score. The caller drops lanes with fewer
 * than 2 points. */
gboolean gst_cudanms_attach_lane_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
    const GstCudanmsLanes * lanes, gint frame_width, gint frame_height,
    GstCudanmsAttachMeta which, gboolean roi_params, const gchar * producer);

/* gst_cudanms_attach_detections for pose and segmentation records: the
 * ROI of each box with its "detection" structure and a second param
 * structure: "keypoints" (points: a GstValueArray of doubles x0, y0, x1,
 * y1, ... in frame pixels, one pair per keypoint, not clipped; scores: a
 * GstValueArray of the keypoints' visibility scores, doubles, with
 * keypoint-dims 3 only) or "mask" (x, y, width, height: ints, the mask's
 * frame-pixel rectangle, the pixels of the box; data: a GstBuffer of its
 * width x height bytes, row-major, 1 inside the mask, 0 outside); ODMtds
 * of the boxes, and with analytics >= 1.26 each mask also as a
 * GstAnalyticsSegmentationMtd related both ways (RELATE_TO) to its ODMtd,
 * as yolosegv8tensordec attaches them: GRAY8 of the region_data bytes
 * with its GstVideoMeta (stride = width), instance type, region ids 0 and
 * i mod 255 + 1, located at the mask's rectangle (no mtd for an empty
 * mask). */
gboolean gst_cudanms_attach_payload_detections (GstBuffer * buffer,
    GstCudanmsLabels * labels, const cnms_det * dets, gint n,
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

/* The n masks' bytes (data, as cnms_ctx_masks gives them), when mask_data
 * is not NULL as *mask_data (0 or 1: the ROIs' "mask" structures) and,
 * when region_data is not NULL, as *region_data (mask i's 1s as its
 * region id i mod 255 + 1: the segmentation mtds); offsets as in masks. */
void gst_cudanms_mask_pool_fill (GstCudanmsMaskPool * pool,
    const cnms_mask * masks, gint n, const guint8 * data,
    GstBuffer ** mask_data, GstBuffer ** region_data);

G_END_DECLS
#endif /* __GST_CUDANMS_OUTPUT_H__ */
