/* cudanms and GStreamer 1.28's yolov8tensordec on the same buffers: the
 * frames (seeded synthetic YOLOv8 scenes from tensorinject's generator, as
 * GstTensorMeta "yolo-v8-out" labelled col-major, caps with the tensor
 * description yolov8tensordec asks for), both elements set up alike
 * (class-agnostic, no letterbox: frame = model size, same thresholds and
 * cap, the same labels) and their GstAnalyticsODMtds read back. Shared by
 * tests/analytics/test_tensordec.c (the comparison) and
 * tests/bench/bench_tensordec.c (frames/s). */
#ifndef CUDANMS_TENSORDEC_FRAMES_H
#define CUDANMS_TENSORDEC_FRAMES_H

#include <gst/gst.h>
#include <gst/check/gstharness.h>

G_BEGIN_DECLS

typedef struct
{
  const gchar *name;
  guint n_frames;
  gint size;                    /* model and frame: size x size */
  gint n_classes;
  guint64 seed;
  gint num_objects;
  guint noise;                  /* background anchors, see the scene */
  gfloat shift;                 /* added to every cx and cy (model pixels) */
  gfloat score_threshold;       /* both: candidate iff score > this */
  gfloat iou;                   /* both: suppress iff IoU > this */
  gint max_detections;
} TdSetup;

/* "normal": a 640x640 YOLOv8 frame (8400 anchors, 80 classes), 6 objects
 * and the usual background, cudanms's default thresholds; "edges": the
 * scene moved by 160 px right and down, so that many boxes cross the
 * frame's right and bottom edges; "dense": thousands of candidates above
 * a low threshold, a cap high enough for NMS to decide. */
extern const TdSetup td_normal, td_edges, td_dense;
/* dense with cudanms's default cap (300 kept boxes) */
extern const TdSetup td_dense_300;

/* One output box; anchor is -1 where read from an element. */
typedef struct
{
  gint anchor;
  gint class_id;
  gfloat score;
  gint x, y, w, h;
} TdBox;

typedef struct
{
  TdSetup setup;
  gint n_anchors;               /* N of [1, 4+C, N] */
  GstBuffer **tensors;          /* n_frames float32 [1, 4+C, N] tensors */
  GstMemory *video;             /* one GRAY8 frame, shared */
  gchar *label_file;            /* "class-<n>" for each class */
} TdFrames;

TdFrames *td_frames_new (const TdSetup * setup);
void td_frames_free (TdFrames * f);
/* The frames' caps, with the tensors field yolov8tensordec requires. */
gchar *td_caps (const TdFrames * f);
/* A new video buffer carrying frame i's tensor in a GstTensorMeta. */
GstBuffer *td_buffer (const TdFrames * f, guint i);
/* A harness on cudanms (device=cpu) or yolov8tensordec, set up alike. */
GstHarness *td_harness_cudanms (const TdFrames * f);
GstHarness *td_harness_tensordec (const TdFrames * f);
/* The ODMtds of buf in order (TdBox, anchor -1, class from "class-<n>"). */
GArray *td_od_boxes (GstBuffer * buf);

G_END_DECLS
#endif
