/* gst-check tests of cudanms's tiles (slice-size): a 320x240 frame cut
 * into 160x160 slices overlapping by 0.2 (SAHI's grid: x 0-160, 128-288,
 * 160-320; y 0-160, 80-240), and the whole frame as a seventh slice; its
 * tensor [7, 4+3, 8] (yolov8, model 160x160, letterbox: a slice maps 1:1,
 * the frame by 0.5 below a 20-pixel pad) holds, for each slice, the part of
 * each object inside it. The merged ROIs are worked out by hand for each
 * merge rule and metric; a tensor whose frames are not the grid's count,
 * and a layout the merge does not take, pass without ROIs, counted and
 * warned once; properties changed while playing apply from the next
 * frame. */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"
#include "gsttensorinjecttiles.h"

#define SLICES 7
#define ROWS (4 + 3)
#define ANCHORS 8

/* The slices, as cudanms makes them for the frame. */
static const gint grid[SLICES][4] = {
  {0, 0, 160, 160}, {128, 0, 288, 160}, {160, 0, 320, 160},
  {0, 80, 160, 240}, {128, 80, 288, 240}, {160, 80, 320, 240},
  {0, 0, 320, 240},
};

/* The scene, frame pixels: A [140, 100, 180, 140] class 1 crosses x = 160
 * (seen whole in slices 1 and 4 at 0.9 and 0.85, its parts in 0, 2, 3 and
 * 5 at 0.6, in the whole frame at 0.8); B [20, 20, 50, 40] class 0 lies in
 * slice 0 (0.7) and the whole frame (0.65); C [300, 200, 316, 230] class 2
 * lies in slice 5 only (0.55), too small for the whole frame's pass. */
typedef struct
{
  gint x1, y1, x2, y2, cls;
  gfloat score[SLICES];
} Object;

static const Object scene[] = {
  {140, 100, 180, 140, 1, {0.6f, 0.9f, 0.6f, 0.6f, 0.85f, 0.6f, 0.8f}},
  {20, 20, 50, 40, 0, {0.7f, 0, 0, 0, 0, 0, 0.65f}},
  {300, 200, 316, 230, 2, {0, 0, 0, 0, 0, 0.55f, 0}},
};

/* The ROIs of the merge of every rule and metric, by hand: A whole (its
 * parts inside it), B from slice 0, C; greedy NMM and NMM by class
 * (ascending), NMS by score. */
#define ROIS_BY_CLASS "20,20,30,20,class-0,0.699999988;" \
  "140,100,40,40,class-1,0.899999976;300,200,16,30,class-2,0.550000012;"
#define ROIS_BY_SCORE "140,100,40,40,class-1,0.899999976;" \
  "20,20,30,20,class-0,0.699999988;300,200,16,30,class-2,0.550000012;"

/* The tensor [SLICES, ROWS, ANCHORS]: each slice's anchor k holds object
 * k's part inside the slice (model pixels), the rest zero. */
static gfloat *
tiles_tensor (gsize * bytes)
{
  gfloat *t = g_new0 (gfloat, SLICES * ROWS * ANCHORS);
  gint s, k;

  for (s = 0; s < SLICES; s++) {
    const gint *r = grid[s];
    /* the whole frame: 320x240 into 160x160, gain 0.5, pad y 20 */
    const gfloat gain = s == SLICES - 1 ? 0.5f : 1.0f;
    const gfloat pad_y = s == SLICES - 1 ? 20.0f : 0.0f;

    for (k = 0; k < (gint) G_N_ELEMENTS (scene); k++) {
      const Object *o = &scene[k];
      gfloat *f = t + (gsize) s * ROWS * ANCHORS;
      gint x1 = MAX (o->x1, r[0]), y1 = MAX (o->y1, r[1]);
      gint x2 = MIN (o->x2, r[2]), y2 = MIN (o->y2, r[3]);
      gfloat mx1, my1, mx2, my2;

      if (o->score[s] == 0.0f || x2 <= x1 || y2 <= y1)
        continue;
      mx1 = (x1 - r[0]) * gain;
      mx2 = (x2 - r[0]) * gain;
      my1 = (y1 - r[1]) * gain + pad_y;
      my2 = (y2 - r[1]) * gain + pad_y;
      f[0 * ANCHORS + k] = (mx1 + mx2) / 2;
      f[1 * ANCHORS + k] = (my1 + my2) / 2;
      f[2 * ANCHORS + k] = mx2 - mx1;
      f[3 * ANCHORS + k] = my2 - my1;
      f[(4 + o->cls) * ANCHORS + k] = o->score[s];
    }
  }
  *bytes = (gsize) SLICES * ROWS * ANCHORS * sizeof (gfloat);
  return t;
}

static GstBuffer *
tiles_frame (void)
{
  static const gint dims[3] = { SLICES, ROWS, ANCHORS };
  GstBuffer *buf = make_frame (0);
  gsize bytes;
  gfloat *t = tiles_tensor (&bytes);

  attach_tensor (buf, NULL, "float32", dims, 3, t, bytes);
  g_free (t);
  return buf;
}

static GstHarness *
tiles_harness (const gchar * props)
{
  gchar *all = g_strdup_printf ("model-size=160x160 letterbox=true "
      "slice-size=160x160 slice-overlap=0.2 %s", props);
  GstHarness *h = new_harness (all);

  g_free (all);
  return h;
}

static void
assert_rois (GstHarness * h, const gchar * want)
{
  GstBuffer *out = push_pull (h, tiles_frame ());
  gchar *got = rois_to_string (out);

  fail_unless_equals_string (got, want);
  g_free (got);
  gst_buffer_unref (out);
}

GST_START_TEST (test_tiles_merge_rules)
{
  static const struct
  {
    const gchar *props, *rois;
  } cases[] = {
    {"", ROIS_BY_CLASS},        /* greedy-nmm, ios, 0.5: SAHI's defaults */
    {"merge=greedy-nmm merge-metric=iou", ROIS_BY_CLASS},
    {"merge=nmm", ROIS_BY_CLASS},
    {"merge=nmm merge-metric=iou", ROIS_BY_CLASS},
    {"merge=nms", ROIS_BY_SCORE},
    {"merge=nms merge-metric=iou", ROIS_BY_SCORE},
    {"merge-class-agnostic=true", ROIS_BY_SCORE},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GstHarness *h = tiles_harness (cases[i].props);

    assert_rois (h, cases[i].rois);
    fail_unless_equals_int (get_stat (h->element, "buffers"), 1);
    fail_unless_equals_int (get_stat (h->element, "detections"), 3);
    fail_unless_equals_int (get_stat (h->element, "buffers-with-bad-tensor"),
        0);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Under props, two frames pass without ROIs, both counted as bad
 * tensors, with one warning containing why. */
static void
assert_refused (const gchar * props, const gchar * why)
{
  GstHarness *h = tiles_harness (props);
  GstBus *bus = watch_bus (h->element);
  gint i;

  for (i = 0; i < 2; i++) {
    GstBuffer *out = push_pull (h, tiles_frame ());

    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
  }
  fail_unless_equals_int (get_stat (h->element, "buffers-with-bad-tensor"),
      2);
  assert_one_warning (bus, why);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

/* Without the whole frame as a last slice, the tensor's 7 frames are not
 * the grid's 6; a layout the merge does not take (oriented boxes). */
GST_START_TEST (test_tiles_refused)
{
  assert_refused ("slice-full-frame=false", "the tensor holds 7 frames, "
      "the 320x240 frame makes 6 slices (slice-size=160x160, "
      "slice-overlap=0.2)");
  assert_refused ("layout=yolov8-obb", "tiles take the layouts of boxes");
}

GST_END_TEST;

/* While playing: the merge rule, then the slices themselves, change from
 * the next frame; slice-size NULL reads the tensor as one frame (refused:
 * batch 7), and a slice-size that is no size is refused with the old one
 * kept. */
GST_START_TEST (test_tiles_live)
{
  GstHarness *h = tiles_harness ("");
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out;
  gchar *size = NULL;

  assert_rois (h, ROIS_BY_CLASS);
  g_object_set (h->element, "merge", 2 /* nms */ , NULL);
  assert_rois (h, ROIS_BY_SCORE);
  ASSERT_WARNING (g_object_set (h->element, "slice-size", "160", NULL));
  g_object_get (h->element, "slice-size", &size, NULL);
  fail_unless_equals_string (size, "160x160");
  g_free (size);
  assert_one_warning (bus, "slice-size \"160\" is not WxH");
  assert_rois (h, ROIS_BY_SCORE);
  g_object_set (h->element, "slice-size", NULL, NULL);
  out = push_pull (h, tiles_frame ());
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  assert_one_warning (bus, "tensor batch dimension is 7, expected 1");
  g_object_set (h->element, "slice-size", "160x160", NULL);
  assert_rois (h, ROIS_BY_SCORE);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The slicing from the caps' fields (slice-width, slice-height,
 * slice-overlap, slice-full-frame), no slice-size property: the same ROIs;
 * the caps' slicing wins over the properties'. */
GST_START_TEST (test_tiles_caps)
{
  static const gchar *props[] = { "", "slice-size=100x100 slice-overlap=0" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    gchar *all = g_strdup_printf ("model-size=160x160 letterbox=true %s",
        props[i]);
    GstHarness *h = new_harness_caps (all, "video/x-raw,format=GRAY8,"
        "width=320,height=240,framerate=30/1,slice-width=160,"
        "slice-height=160,slice-overlap=0.2,slice-full-frame=true");

    assert_rois (h, ROIS_BY_CLASS);
    gst_harness_teardown (h);
    g_free (all);
  }
}

GST_END_TEST;

/* One slice, the whole frame: K [10, 0, 20, 10] 0.9, L [7, 0, 17, 10] 0.85
 * and R [13, 0, 23, 10] 0.8, class 0, kept by the slice's NMS (iou 0.9);
 * greedy NMM at IoU 0.5: K absorbs L and R (IoU 7/13 each); merged with L
 * the box is [7, 0, 20, 10], and R's IoU with it is 70/160: SAHI's rules
 * drop R, the consistent ones keep it alone after its keeper. */
GST_START_TEST (test_tiles_merge_rules_consistent)
{
  static const gint dims[3] = { 1, 4 + 1, 3 };
  static const gfloat t[5][3] = {
    {15, 12, 18}, {5, 5, 5}, {10, 10, 10}, {10, 10, 10}, {0.9f, 0.85f, 0.8f},
  };
  static const struct
  {
    const gchar *rules, *rois;
  } cases[] = {
    {"sahi", "7,0,13,10,class-0,0.899999976;"},
    {"consistent", "7,0,13,10,class-0,0.899999976;"
          "13,0,10,10,class-0,0.800000012;"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *props = g_strdup_printf ("layout=yolov8 model-size=320x240 "
        "slice-size=320x240 "
        "slice-full-frame=false iou=0.9 merge-metric=iou merge-rules=%s",
        cases[i].rules);
    GstHarness *h = new_harness (props);
    GstBuffer *buf = make_frame (0), *out;
    gchar *got;

    attach_tensor (buf, NULL, "float32", dims, 3, t, sizeof t);
    out = push_pull (h, buf);
    got = rois_to_string (out);
    fail_unless_equals_string (got, cases[i].rois);
    g_free (got);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
    g_free (props);
  }
}

GST_END_TEST;

/* "x,y,w,h,class-<id>,<score>" of an object, as rois_to_string writes a
 * ROI. */
static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The ROIs of buf, or the tiles' objects, as sorted "x,y,w,h,type,conf"
 * items joined by ';'. */
static gchar *
sorted_items (gchar ** items)
{
  GPtrArray *a = g_ptr_array_new ();
  gchar **p, *joined;

  for (p = items; *p != NULL; p++)
    if (**p != '\0')
      g_ptr_array_add (a, *p);
  g_ptr_array_sort (a, compare_strings);
  g_ptr_array_add (a, NULL);
  joined = g_strjoinv (";", (gchar **) a->pdata);
  g_ptr_array_free (a, TRUE);
  return joined;
}

/* tensorinject's tiles (a 1920x1080 frame, 640x640 slices: 4 x 2 and the
 * whole frame) through cudanms with the same slicing: every object found
 * once, its true box and score, float32 and float16 tensors. */
GST_START_TEST (test_tiles_producer)
{
  const gchar *types[] = { "float32", "float16" };
  guint t;

  for (t = 0; t < G_N_ELEMENTS (types); t++) {
    GstTensorInjectTilesConfig cfg;
    GstTensorInjectTiles *truth;
    GstHarness *h;
    GstBuffer *out;
    gchar *pipe, *got, *want, **items, **roi_items;
    gint i, n;

    memset (&cfg, 0, sizeof cfg);
    cfg.frame_width = 1920;
    cfg.frame_height = 1080;
    cfg.slice_width = cfg.slice_height = 640;
    cfg.overlap = 0.2;
    cfg.full_frame = TRUE;
    cfg.model_width = cfg.model_height = 640;
    cfg.num_classes = 5;
    cfg.num_objects = 60;
    cfg.seed = 11;
    cfg.dtype = t == 0 ? CNMS_DTYPE_FLOAT32 : CNMS_DTYPE_FLOAT16;
    truth = gst_tensor_inject_tiles_new (&cfg, NULL);
    fail_unless (truth != NULL);
    n = gst_tensor_inject_tiles_n_objects (truth);
    fail_unless (n >= 50, "only %d objects placed", n);
    items = g_new0 (gchar *, n + 1);
    for (i = 0; i < n; i++) {
      gint b[4], cls;
      gfloat score;

      gst_tensor_inject_tiles_object (truth, i, b, &cls, &score);
      items[i] = g_strdup_printf ("%d,%d,%d,%d,class-%d,%.9g", b[0], b[1],
          b[2] - b[0], b[3] - b[1], cls, score);
    }
    want = sorted_items (items);

    pipe = g_strdup_printf ("tensorinject slice-size=640x640 num-objects=60 "
        "seed=11 num-classes=5 data-type=%s ! cudanms model-size=640x640 "
        "slice-size=640x640 attach-meta=roi", types[t]);
    h = gst_harness_new_parse (pipe);
    gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=1920,"
        "height=1080,framerate=30/1");
    out = gst_harness_push_and_pull (h, gst_buffer_new_allocate (NULL,
            1920 * 1080, NULL));
    fail_unless (out != NULL);
    got = rois_to_string (out);
    roi_items = g_strsplit (got, ";", -1);
    g_free (got);
    got = sorted_items (roi_items);
    fail_unless_equals_string (got, want);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
    g_free (pipe);
    g_free (got);
    g_free (want);
    g_strfreev (items);
    g_strfreev (roi_items);
    gst_tensor_inject_tiles_free (truth);
  }
}

GST_END_TEST;

static Suite *
tiles_suite (void)
{
  Suite *s = suite_create ("tiles");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_tiles_merge_rules);
  tcase_add_test (tc, test_tiles_refused);
  tcase_add_test (tc, test_tiles_live);
  tcase_add_test (tc, test_tiles_producer);
  tcase_add_test (tc, test_tiles_merge_rules_consistent);
  tcase_add_test (tc, test_tiles_caps);
  return s;
}

GST_CHECK_MAIN (tiles);
