/* Helpers of the gst-check tests (tests/gst, tests/analytics,
 * tests/stress): a hand-built tensor whose ROIs are computed by hand,
 * attaching tensors the way a third party does (by the contract's name and
 * fields only, without the plugin's internals), harnesses on a bare cudanms
 * and assertions on its ROIs and bus messages. Built as the static library
 * gst_helpers (tests/common/meson.build). */
#ifndef CUDANMS_TEST_GST_HELPERS_H
#define CUDANMS_TEST_GST_HELPERS_H

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/check/gstharness.h>

G_BEGIN_DECLS

#define FRAME_W 320
#define FRAME_H 240
#define FRAME_CAPS "video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1"
#define HAND_CLASSES 3
#define HAND_ANCHORS 10
#define HAND_KEPT 5

/* One expected ROI of the hand tensor (model 320x240 == frame). */
typedef struct
{
  guint x, y, w, h;
  gint label_id;
  gfloat score;
  gfloat x1, y1, x2, y2;        /* the float box, frame pixels */
} ExpectedRoi;

extern const ExpectedRoi hand_expected[HAND_KEPT];

/* The hand tensor in yolov8 [1, 4+C, N] or yolov5 [1, N, 5+C] order, as
 * float32 (n_floats values) */
gfloat *hand_tensor_yolov8 (gsize * n_floats);
gfloat *hand_tensor_yolov5 (gsize * n_floats);
/* float32 -> float16 copy (the library's rounding) */
guint16 *to_half (const gfloat * f, gsize n);

/* Registers CudanmsTensorMeta as a third party would. */
void register_tensor_meta (void);
/* Attaches a tensor: dims is a GValue (array or string) built by caller. */
void attach_tensor_value (GstBuffer * buf, const gchar * id,
    const gchar * data_type, const GValue * dims, GstBuffer * data);
/* Same with dims as an int array. */
void attach_tensor (GstBuffer * buf, const gchar * id, const gchar * data_type,
    const gint * dims, guint n_dims, gconstpointer data, gsize size);
/* Same without an id, dims as a string ("1,7,10"), data of size bytes
 * (size 0: an empty buffer). */
void attach_tensor_str (GstBuffer * buf, const gchar * data_type,
    const gchar * dims, gconstpointer data, gsize size);
/* Attaches the hand tensor (yolov8, float32) with id (NULL: none). */
void attach_hand_tensor (GstBuffer * buf, const gchar * id);

/* An end2end tensor [1, 1, 6] of one box of class 5, and its ROIs as
 * rois_to_string() writes them. */
extern const gfloat one_box_end2end[6];
#define ONE_BOX_ROIS "10,20,20,20,class-5,0.899999976;"
/* Attaches one_box_end2end (float32 [1, 1, 6]) with id (NULL: none). */
void attach_one_box (GstBuffer * buf, const gchar * id);

/* A GRAY8 FRAME_W x FRAME_H frame of fill bytes, PTS 0, 1/30 s long. */
GstBuffer *make_frame (guint8 fill);
/* make_frame (0) with a tensor as attach_tensor_str() attaches it. */
GstBuffer *frame_with_tensor (const gchar * data_type, const gchar * dims,
    gconstpointer data, gsize size);
/* The metas of API type api on buf. */
guint count_metas (GstBuffer * buf, GType api);
/* count_metas of the ROI metas */
guint count_rois (GstBuffer * buf);
/* Asserts the exact ROIs of hand_expected on buf; labels may be NULL
 * (class-<id>) or a NULL-terminated list from a label file. */
void assert_hand_rois (GstBuffer * buf, const gchar * const *labels);
/* The same with ids first_id.. and producer the element's name (NULL: any
 * name, not empty); assert_hand_rois is first_id 0, producer NULL. */
void assert_hand_rois_from (GstBuffer * buf, const gchar * const *labels,
    gint first_id, const gchar * producer);
/* "x,y,w,h,type,conf;..." in id order, for comparisons between runs. */
gchar *rois_to_string (GstBuffer * buf);
/* Asserts rois_to_string (buf) == expected. */
void assert_rois_string (GstBuffer * buf, const gchar * expected);

/* Writes a float32/float16 .npy file. */
void write_npy (const gchar * path, const gchar * descr, const gint * dims,
    guint n_dims, gconstpointer data, gsize size);

/* Gives element a bus of its own to read its messages from. */
GstBus *watch_bus (GstElement * element);
/* Drops what is still queued and releases the bus. */
void unwatch_bus (GstBus * bus);
/* Asserts exactly one warning on bus and that its text contains what. */
void assert_one_warning (GstBus * bus, const gchar * what);
/* Pops the next warning of bus: its text (g_free), NULL when none. */
gchar *pop_warning (GstBus * bus);
/* Asserts that no warning is queued on bus. */
void assert_no_warning (GstBus * bus);

/* A harness on a bare cudanms (h->element is the element itself) with
 * model-size = frame size (FRAME_CAPS) and the "key=value ..." props. */
GstHarness *new_harness (const gchar * props);
/* The same with caps for its source (NULL: none sent). */
GstHarness *new_harness_caps (const gchar * props, const gchar * caps);
/* Pushes buf and returns the output (asserting one came out). */
GstBuffer *push_pull (GstHarness * h, GstBuffer * buf);
/* make_frame (fill) carrying the hand tensor (yolov8, id "detections"). */
GstBuffer *hand_frame_filled (guint8 fill);
/* hand_frame_filled (7) */
GstBuffer *hand_frame_yolov8 (void);
/* Asserts that starting el fails with an element error containing what;
 * takes el. */
void check_start_fails (GstElement * el, const gchar * what);
/* The guint64 field name of the element's "stats" property. */
guint64 get_stat (GstElement * el, const gchar * name);

/* The process's resident memory, in bytes (/proc/self/statm). */
gsize rss_bytes (void);

G_END_DECLS
#endif
