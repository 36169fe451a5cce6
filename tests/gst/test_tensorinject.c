/* gst-check tests of tensorinject: synthetic determinism through cudanms,
 * .npy replay (one file and a %d pattern), the synthetic layouts, and
 * draw-objects (exact pixels on the RGB formats and I420); the oriented
 * scene (layout=yolov8-obb: its tensor through cudanms, its rotated
 * rectangles drawn); the lane scene (layout=laneatt: its proposals
 * against the scene's true lanes and through cnms_detect (layout
 * laneatt), its lane markings drawn); the pose scene (layout=yolov8-pose:
 * its keypoints against the people's true skeletons, float32 and float16,
 * the skeletons drawn) and the segmentation scene (layout=yolov8-seg:
 * its detections' one-hot coefficients and every prototype value against
 * the shapes' rule, the shapes drawn). */
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "gsttensorinjectscene.h"
#include "gst_helpers.h"

#define SYNTH_CAPS "video/x-raw,format=GRAY8,width=640,height=480,framerate=30/1"
#define N_FRAMES 30

/* ROI lists of n frames of "tensorinject <props> ! cudanms", one string. */
static gchar *
run_synthetic (const gchar * props, gint n, guint * total_rois)
{
  gchar *desc = g_strdup_printf ("tensorinject %s ! cudanms", props);
  GstHarness *h = gst_harness_new_parse (desc);
  GString *all = g_string_new (NULL);
  gint i;

  *total_rois = 0;
  gst_harness_set_src_caps_str (h, SYNTH_CAPS);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 640 * 480, NULL), *out;
    gchar *rois;

    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    out = gst_harness_pull (h);
    *total_rois += count_rois (out);
    rois = rois_to_string (out);
    g_string_append_printf (all, "%d:%s\n", i, rois);
    g_free (rois);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_free (desc);
  return g_string_free (all, FALSE);
}

GST_START_TEST (test_synthetic_determinism)
{
  guint n1, n2, n3;
  gchar *a = run_synthetic ("seed=42", N_FRAMES, &n1);
  gchar *b = run_synthetic ("seed=42", N_FRAMES, &n2);
  gchar *c = run_synthetic ("seed=43", N_FRAMES, &n3);

  fail_unless_equals_string (a, b);
  fail_unless_equals_int (n1, n2);
  fail_unless (strcmp (a, c) != 0);
  /* six objects, each found at least once per frame on average */
  fail_unless (n1 >= 6 * N_FRAMES, "only %u ROIs", n1);
  g_free (a);
  g_free (b);
  g_free (c);
}

GST_END_TEST;

GST_START_TEST (test_synthetic_layouts)
{
  const gchar *props[] = {
    "layout=yolov5 seed=3",
    "layout=yolov8 data-type=float16 seed=3",
    "layout=yolov5 data-type=float16 num-classes=3 model-size=320x320 seed=3",
    "num-objects=0 noise=0",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    guint n;
    gchar *s = run_synthetic (props[i], 5, &n);

    if (i == 3) {
      fail_unless_equals_int (n, 0);
    } else {
      fail_unless (n >= 5, "%s: only %u ROIs", props[i], n);
    }
    g_free (s);
  }
}

GST_END_TEST;

/* The synthetic objects move: the ROI lists differ between frames. */
GST_START_TEST (test_synthetic_motion)
{
  guint n;
  gchar *s = run_synthetic ("seed=9 num-objects=2", 3, &n);
  gchar **frames = g_strsplit (s, "\n", -1);

  fail_unless (strcmp (frames[0] + 2, frames[1] + 2) != 0);
  fail_unless (strcmp (frames[1] + 2, frames[2] + 2) != 0);
  g_strfreev (frames);
  g_free (s);
}

GST_END_TEST;

/* memory=cuda: a clear error at start without a CUDA device (or a build
 * without gst-cuda); with one, the stream runs to EOS. */
GST_START_TEST (test_memory_cuda)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=2 ! "
      "tensorinject memory=cuda ! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;

  fail_unless (pipe != NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  if (cnms_cuda_device_count () > 0) {
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  } else {
    GError *err = NULL;
    gchar *dbg = NULL;

    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_ERROR);
    gst_message_parse_error (msg, &err, &dbg);
    fail_unless (g_str_has_prefix (err->message,
            "Cannot put tensors in CUDA memory: memory=cuda: "), "%s",
        err->message);
    fail_unless (strstr (dbg, "needs gst-cuda, the NVIDIA driver and a CUDA "
            "device") != NULL, "%s", dbg);
    g_clear_error (&err);
    g_free (dbg);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

static GstHarness *
replay_harness (const gchar * location)
{
  gchar *desc = g_strdup_printf ("tensorinject location=\"%s\" ! "
      "cudanms model-size=%dx%d", location, FRAME_W, FRAME_H);
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  return h;
}

GST_START_TEST (test_replay_one_file)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  gchar *dir = g_dir_make_tmp ("cudanms-npy-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "hand.npy", NULL);
  GstHarness *h;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  gint i;

  write_npy (path, "<f4", dims, 3, t, n * 4);
  h = replay_harness (path);
  for (i = 0; i < 3; i++) {
    GstBuffer *out;

    fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (t);
}

GST_END_TEST;

GST_START_TEST (test_replay_pattern)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  const gint e2e_dims[] = { 1, 1, 6 };
  const gfloat e2e[] = { 10, 20, 30, 40, 0.5f, 4 };
  gchar *dir = g_dir_make_tmp ("cudanms-npy-XXXXXX", NULL);
  gchar *f0 = g_build_filename (dir, "t0.npy", NULL);
  gchar *f1 = g_build_filename (dir, "t1.npy", NULL);
  gchar *pattern = g_build_filename (dir, "t%d.npy", NULL);
  GstHarness *h;
  GstBuffer *out;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);
  guint16 *half = to_half (t, n);
  gchar *str;

  write_npy (f0, "<f2", dims, 3, half, n * 2);
  write_npy (f1, "<f4", e2e_dims, 3, e2e, sizeof e2e);
  h = replay_harness (pattern);

  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);

  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  str = rois_to_string (out);
  fail_unless_equals_string (str, "10,20,20,20,class-4,0.5;");
  g_free (str);
  gst_buffer_unref (out);

  /* there is no t2.npy */
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
      GST_FLOW_ERROR);
  gst_harness_teardown (h);

  g_unlink (f0);
  g_unlink (f1);
  g_rmdir (dir);
  g_free (f0);
  g_free (f1);
  g_free (pattern);
  g_free (dir);
  g_free (half);
  g_free (t);
}

GST_END_TEST;

/* draw-objects. Scene "seed=4 num-objects=1 noise=0" (640x640 model): its
 * one object is class 12 (fill 153,104,46, border 76,49,15: hsv 1/11 at
 * 0.7,0.6 and 0.8,0.3), at frame 0 centred on (358.0777, 373.3534) model
 * pixels, 181.2653 x 55.4199. On a 320x240 frame the letterbox map has
 * gain 2, pad_x 0, pad_y round (80 - 0.1) = 80, so the box is
 *   x (358.0777 -+ 90.6326) / 2 = 133.7225 .. 224.3552
 *   y (373.3534 -+ 27.7099 - 80) / 2 = 132.8218 .. 160.5317.
 * A sample is painted when its centre lies in [x1, x2): columns
 * ceil (x1 - 0.5) .. ceil (x2 - 0.5) - 1 = 134..223, rows 133..160; the
 * fill, 2 pixels in, columns 136..221, rows 135..158. I420 chroma samples
 * (centres at even pixels): columns ceil (66.86 - 0.5) = 67 ..
 * ceil (112.18 - 0.5) - 1 = 111, rows 66..79; fill 68..110, 67..78. */
#define DRAW_PROPS "seed=4 num-objects=1 noise=0 draw-objects=true"
#define DRAW_CLASS 12
#define DRAW_BG 0x40

static const guint8 draw_fill[3] = { 153, 104, 46 };
static const guint8 draw_border[3] = { 76, 49, 15 };
/* BT.601 limited range: Y = 16 + 219 y', U/V = 128 + 224 Pb/Pr */
static const guint8 draw_fill_yuv[3] = { 112, 95, 154 };
static const guint8 draw_border_yuv[3] = { 62, 109, 142 };

/* Painted samples: [x0, x1) x [y0, y1) outer, [ix0, ix1) x [iy0, iy1)
 * the fill. */
typedef struct
{
  gint x0, x1, y0, y1;
  gint ix0, ix1, iy0, iy1;
} DrawnRect;

static const DrawnRect frame0_luma = { 134, 224, 133, 161, 136, 222, 135, 159 };
static const DrawnRect frame0_chroma = { 67, 112, 66, 80, 68, 111, 67, 79 };

/* The documented rule, applied to a frame-pixel box on a grid of samples
 * sub pixels wide. */
static DrawnRect
drawn_rect (const gfloat b[4], gint sub)
{
  DrawnRect r;

  r.x0 = (gint) ceil (b[0] / sub - 0.5);
  r.x1 = (gint) ceil (b[2] / sub - 0.5);
  r.y0 = (gint) ceil (b[1] / sub - 0.5);
  r.y1 = (gint) ceil (b[3] / sub - 0.5);
  r.ix0 = (gint) ceil ((b[0] + 2) / sub - 0.5);
  r.ix1 = (gint) ceil ((b[2] - 2) / sub - 0.5);
  r.iy0 = (gint) ceil ((b[1] + 2) / sub - 0.5);
  r.iy1 = (gint) ceil ((b[3] - 2) / sub - 0.5);
  return r;
}

/* The scene's own object at frame f, mapped to 320x240 (frame pixels). */
static void
scene_box (guint64 f, gfloat out[4])
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 640, CNMS_DTYPE_FLOAT32,
    4, 1, 0
  };
  GstTensorInjectScene *sc = gst_tensor_inject_scene_new (&cfg);
  gdouble box[4];
  gint class_id = -1;
  cnms_params p;

  cnms_params_init (&p);
  p.frame_width = FRAME_W;
  p.frame_height = FRAME_H;
  fail_unless (gst_tensor_inject_scene_object (sc, 0, f, box, &class_id));
  fail_unless_equals_int (class_id, DRAW_CLASS);
  fail_unless (!gst_tensor_inject_scene_object (sc, 1, f, box, &class_id));
  fail_unless (cnms_map_centre_box (&p, (gfloat) box[0], (gfloat) box[1],
          (gfloat) box[2], (gfloat) box[3], out));
  gst_tensor_inject_scene_free (sc);
}

/* 0 background, 1 border, 2 fill. */
static gint
drawn_at (const DrawnRect * r, gint x, gint y)
{
  if (x < r->x0 || x >= r->x1 || y < r->y0 || y >= r->y1)
    return 0;
  if (x < r->ix0 || x >= r->ix1 || y < r->iy0 || y >= r->iy1)
    return 1;
  return 2;
}

static GstHarness *
draw_harness (const gchar * props, const gchar * format, GstVideoInfo * info)
{
  gchar *desc = g_strdup_printf ("tensorinject %s", props);
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,"
      "framerate=30/1,colorimetry=bt601", format, FRAME_W, FRAME_H);
  GstCaps *c = gst_caps_from_string (caps);
  GstHarness *h = gst_harness_new_parse (desc);

  fail_unless (gst_video_info_from_caps (info, c));
  gst_harness_set_src_caps (h, c);
  g_free (caps);
  g_free (desc);
  return h;
}

/* A frame of info's size, every byte bg (I420: chroma 0x80). */
static GstBuffer *
solid_frame (const GstVideoInfo * info, guint8 bg)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, NULL);
  GstMapInfo map;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, bg, map.size);
  if (GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_I420)
    memset (map.data + info->offset[1], 0x80, map.size - info->offset[1]);
  gst_buffer_unmap (buf, &map);
  return buf;
}

static GstBuffer *
push_pull_copy (GstHarness * h, GstBuffer * in)
{
  GstBuffer *out;

  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  fail_unless (out != NULL);
  return out;
}

/* Byte positions of R, G, B and of the fourth byte (-1: none) per pixel. */
typedef struct
{
  const gchar *format;
  gint bpp, r, g, b, fourth;
  gboolean alpha;               /* the fourth byte is alpha, else padding */
} RgbLayout;

static const RgbLayout rgb_layouts[] = {
  {"RGB", 3, 0, 1, 2, -1, FALSE},
  {"BGR", 3, 2, 1, 0, -1, FALSE},
  {"RGBx", 4, 0, 1, 2, 3, FALSE},
  {"BGRx", 4, 2, 1, 0, 3, FALSE},
  {"xRGB", 4, 1, 2, 3, 0, FALSE},
  {"xBGR", 4, 3, 2, 1, 0, FALSE},
  {"RGBA", 4, 0, 1, 2, 3, TRUE},
  {"BGRA", 4, 2, 1, 0, 3, TRUE},
  {"ARGB", 4, 1, 2, 3, 0, TRUE},
  {"ABGR", 4, 3, 2, 1, 0, TRUE},
};

/* Every pixel of an RGB-family frame against r. */
static void
check_rgb_frame (GstBuffer * out, const GstVideoInfo * info,
    const RgbLayout * l, const DrawnRect * r)
{
  gint stride = GST_VIDEO_INFO_PLANE_STRIDE (info, 0), x, y, counts[3] =
      { 0, 0, 0 };
  GstMapInfo map;

  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (y = 0; y < FRAME_H; y++) {
    for (x = 0; x < FRAME_W; x++) {
      const guint8 *px = map.data + (gsize) y * stride + (gsize) x * l->bpp;
      gint what = drawn_at (r, x, y);
      const guint8 *c = what == 2 ? draw_fill : draw_border;
      guint8 er = what ? c[0] : DRAW_BG, eg = what ? c[1] : DRAW_BG,
          eb = what ? c[2] : DRAW_BG;

      counts[what]++;
      fail_unless (px[l->r] == er && px[l->g] == eg && px[l->b] == eb,
          "%s (%d,%d): %d,%d,%d, expected %d,%d,%d", l->format, x, y,
          px[l->r], px[l->g], px[l->b], er, eg, eb);
      if (l->fourth >= 0)
        fail_unless_equals_int (px[l->fourth], what && l->alpha ? 255 :
            DRAW_BG);
    }
  }
  gst_buffer_unmap (out, &map);
  /* the rect is inside the frame and both parts are drawn */
  fail_unless_equals_int (counts[1] + counts[2],
      (r->x1 - r->x0) * (r->y1 - r->y0));
  fail_unless (counts[1] > 0 && counts[2] > 0);
}

GST_START_TEST (test_draw_rgb)
{
  gfloat b[4];
  DrawnRect r;
  guint i;
  guint64 f;

  /* the hand-worked numbers above */
  scene_box (0, b);
  fail_unless (fabsf (b[0] - 133.7225f) < 1e-3f
      && fabsf (b[1] - 132.8218f) < 1e-3f && fabsf (b[2] - 224.3552f) < 1e-3f
      && fabsf (b[3] - 160.5317f) < 1e-3f, "box %g %g %g %g", b[0], b[1],
      b[2], b[3]);
  r = drawn_rect (b, 1);
  fail_unless (memcmp (&r, &frame0_luma, sizeof r) == 0);

  for (i = 0; i < G_N_ELEMENTS (rgb_layouts); i++) {
    GstVideoInfo info;
    GstHarness *h = draw_harness (DRAW_PROPS, rgb_layouts[i].format, &info);
    GstBuffer *in = solid_frame (&info, DRAW_BG);

    /* frame 0 the hand-worked rect; frames 1, 2 where the scene moved */
    for (f = 0; f < 3; f++) {
      GstBuffer *out = push_pull_copy (h, in);

      scene_box (f, b);
      r = drawn_rect (b, 1);
      if (f == 0)
        fail_unless (memcmp (&r, &frame0_luma, sizeof r) == 0);
      check_rgb_frame (out, &info, &rgb_layouts[i], &r);
      gst_buffer_unref (out);
    }
    gst_buffer_unref (in);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

static void
check_plane (const guint8 * plane, gint stride, gint w, gint h,
    const DrawnRect * r, guint8 bg, guint8 border, guint8 fill,
    const gchar * name)
{
  gint x, y;

  for (y = 0; y < h; y++) {
    for (x = 0; x < w; x++) {
      gint what = drawn_at (r, x, y);
      guint8 e = what == 2 ? fill : what == 1 ? border : bg;

      fail_unless (plane[(gsize) y * stride + x] == e,
          "%s (%d,%d): %d, expected %d", name, x, y,
          plane[(gsize) y * stride + x], e);
    }
  }
}

GST_START_TEST (test_draw_i420)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (DRAW_PROPS, "I420", &info);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  guint64 f;

  for (f = 0; f < 3; f++) {
    GstBuffer *out = push_pull_copy (h, in);
    GstMapInfo map;
    DrawnRect luma, chroma;
    gfloat b[4];
    gint k;

    scene_box (f, b);
    luma = drawn_rect (b, 1);
    chroma = drawn_rect (b, 2);
    if (f == 0) {
      fail_unless (memcmp (&luma, &frame0_luma, sizeof luma) == 0);
      fail_unless (memcmp (&chroma, &frame0_chroma, sizeof chroma) == 0);
    }
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    check_plane (map.data + info.offset[0], info.stride[0], FRAME_W, FRAME_H,
        &luma, DRAW_BG, draw_border_yuv[0], draw_fill_yuv[0], "Y");
    for (k = 1; k < 3; k++)
      check_plane (map.data + info.offset[k], info.stride[k], FRAME_W / 2,
          FRAME_H / 2, &chroma, 0x80, draw_border_yuv[k], draw_fill_yuv[k],
          k == 1 ? "U" : "V");
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

static void
assert_same_bytes (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;

  fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
  fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
  fail_unless_equals_uint64 (ma.size, mb.size);
  fail_unless (memcmp (ma.data, mb.data, ma.size) == 0);
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
}

/* Off (the default): frames are untouched, on any format. */
GST_START_TEST (test_draw_off)
{
  const gchar *formats[] = { "RGB", "I420" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstVideoInfo info;
    GstHarness *h = draw_harness ("seed=4 num-objects=1", formats[i], &info);
    GstBuffer *in = solid_frame (&info, DRAW_BG), *out;
    GstElement *el = gst_harness_find_element (h, "tensorinject");
    gboolean draw = TRUE;

    g_object_get (el, "draw-objects", &draw, NULL);
    gst_object_unref (el);
    fail_unless (!draw);
    out = push_pull_copy (h, in);
    assert_same_bytes (in, out);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* A format it does not draw on passes untouched, with one warning. */
GST_START_TEST (test_draw_unsupported)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (DRAW_PROPS " ! cudanms", "GRAY8", &info);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  gint f;

  for (f = 0; f < 3; f++) {
    GstBuffer *out = push_pull_copy (h, in);

    assert_same_bytes (in, out);
    /* the tensor is still there: cudanms finds the object */
    fail_unless (count_rois (out) >= 1);
    gst_buffer_unref (out);
  }
  assert_one_warning (bus, "format is not RGB");
  unwatch_bus (bus);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The point of drawing: cudanms's best box sits on the drawn object. */
GST_START_TEST (test_draw_under_box)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (DRAW_PROPS " ! cudanms", "RGBx", &info);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  guint64 f;

  for (f = 0; f < 3; f++) {
    GstBuffer *out = push_pull_copy (h, in);
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id (out, 0);
    gfloat b[4], ix, iy, inter, uni;

    fail_unless (roi != NULL);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type),
        "class-12");
    scene_box (f, b);
    ix = MIN (b[2], roi->x + roi->w) - MAX (b[0], roi->x);
    iy = MIN (b[3], roi->y + roi->h) - MAX (b[1], roi->y);
    inter = MAX (ix, 0) * MAX (iy, 0);
    uni = (b[2] - b[0]) * (b[3] - b[1]) + roi->w * roi->h - inter;
    /* the anchors jitter by 3% */
    fail_unless (inter / uni > 0.85f, "frame %d: IoU %g", (gint) f,
        inter / uni);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* layout=yolov8-obb, scene "seed=4 num-objects=1 noise=0" (640x640 model,
 * 80 classes): a [1, 4+80+1, 8400] tensor whose one object cudanms finds
 * by the tensor id (layout=auto) as an oriented box near the object's true
 * one (the anchors jitter by 3% in place and size, 0.03 rad in angle),
 * mapped to the 320x240 frame with letterbox (gain 2, pad_y 80). */
#define OBB_PROPS "layout=yolov8-obb tensor-id=yolo-v8-obb-out seed=4 " \
    "num-objects=1 noise=0"
/* its object's class: 15, fill hsv (4/11, 0.7, 0.6) = 46,153,65, border
 * hsv (4/11, 0.8, 0.3) = 15,76,26; in BT.601 limited range */
#define OBB_CLASS 15
static const guint8 obb_fill_yuv[3] = { 111, 105, 87 };
static const guint8 obb_border_yuv[3] = { 61, 115, 105 };

static GstTensorInjectScene *
obb_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 640, CNMS_DTYPE_FLOAT32,
    4, 1, 0, TRUE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* The scene's object at frame f: cx cy w h angle in frame pixels (letterbox
 * onto 320x240: gain 2, pad 0 and 80), in double. */
static gint
obb_truth (guint64 f, gdouble o[5])
{
  GstTensorInjectScene *sc = obb_scene ();
  gdouble box[4];
  gint class_id = -1;
  gint64 dims[3];

  gst_tensor_inject_scene_dims (sc, dims);
  fail_unless (dims[0] == 1 && dims[1] == 85 && dims[2] == 8400);
  fail_unless (gst_tensor_inject_scene_oriented (sc));
  fail_unless (gst_tensor_inject_scene_object (sc, 0, f, box, &class_id));
  o[0] = box[0] / 2;
  o[1] = (box[1] - 80) / 2;
  o[2] = box[2] / 2;
  o[3] = box[3] / 2;
  o[4] = gst_tensor_inject_scene_object_angle (sc, 0, f);
  fail_unless (o[4] >= -G_PI / 4 && o[4] < 3 * G_PI / 4);
  gst_tensor_inject_scene_free (sc);
  return class_id;
}

GST_START_TEST (test_obb_scene)
{
  GstHarness *h = gst_harness_new_parse ("tensorinject " OBB_PROPS
      " ! cudanms");
  gdouble prev_angle = 0;
  guint64 f;

  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  for (f = 0; f < 3; f++) {
    GstBuffer *out;
    GstVideoRegionOfInterestMeta *roi;
    GstStructure *det;
    gdouble got[5], want[5];
    gint class_id = obb_truth (f, want), k;

    fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
    fail_unless (roi != NULL);
    det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (det != NULL);
    fail_unless (gst_structure_get_double (det, "cx", &got[0])
        && gst_structure_get_double (det, "cy", &got[1])
        && gst_structure_get_double (det, "width", &got[2])
        && gst_structure_get_double (det, "height", &got[3])
        && gst_structure_get_double (det, "angle", &got[4]));
    fail_unless_equals_int (class_id, OBB_CLASS);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type),
        "class-15");
    for (k = 0; k < 2; k++)
      fail_unless (fabs (got[k] - want[k]) <= 0.03 * want[2 + k] + 1e-3,
          "frame %d: centre %d %g, true %g", (gint) f, k, got[k], want[k]);
    for (k = 2; k < 4; k++)
      fail_unless (fabs (got[k] - want[k]) <= 0.03 * want[k] + 1e-3,
          "frame %d: side %d %g, true %g", (gint) f, k, got[k], want[k]);
    fail_unless (fabs (got[4] - want[4]) <= 0.03 + 1e-6,
        "frame %d: angle %g, true %g", (gint) f, got[4], want[4]);
    /* the object turns */
    if (f > 0)
      fail_unless (want[4] != prev_angle);
    prev_angle = want[4];
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* draw-objects with layout=yolov8-obb: the rotated rectangle, every sample
 * checked against the rule of gsttensorinjectdraw.c worked out here: a
 * sample (centre p, frame pixels) is the object's where
 * du = (p - c) . (cos a, sin a) in [-w/2, w/2) and
 * dv = (p - c) . (-sin a, cos a) in [-h/2, h/2); its fill 2 px inside. */
static gint
obb_drawn_at (const gdouble o[5], gdouble x, gdouble y)
{
  gdouble dx = x - o[0], dy = y - o[1];
  gdouble cs = cos (o[4]), sn = sin (o[4]);
  gdouble du = dx * cs + dy * sn, dv = -dx * sn + dy * cs;
  gdouble hw = o[2] / 2, hh = o[3] / 2, b = 2;

  if (!(du >= -hw && du < hw && dv >= -hh && dv < hh))
    return 0;
  if (du >= -(hw - b) && du < hw - b && dv >= -(hh - b) && dv < hh - b)
    return 2;
  return 1;
}

GST_START_TEST (test_obb_draw)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (OBB_PROPS " draw-objects=true", "I420",
      &info);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  guint64 f;

  for (f = 0; f < 3; f++) {
    GstBuffer *out = push_pull_copy (h, in);
    GstMapInfo map;
    gdouble o[5];
    gint k, x, y, counts[3] = { 0, 0, 0 };

    fail_unless_equals_int (obb_truth (f, o), OBB_CLASS);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    for (k = 0; k < 3; k++) {
      gint sub = k ? 2 : 1, w = FRAME_W / sub, hh = FRAME_H / sub;
      const guint8 *plane = map.data + info.offset[k];
      guint8 bg = k ? 0x80 : DRAW_BG;

      for (y = 0; y < hh; y++) {
        for (x = 0; x < w; x++) {
          gint what = obb_drawn_at (o, (x + 0.5) * sub, (y + 0.5) * sub);
          guint8 e = what == 2 ? obb_fill_yuv[k] : what == 1 ?
              obb_border_yuv[k] : bg;

          if (k == 0)
            counts[what]++;
          fail_unless (plane[(gsize) y * info.stride[k] + x] == e,
              "frame %d plane %d (%d,%d): %d, expected %d", (gint) f, k, x,
              y, plane[(gsize) y * info.stride[k] + x], e);
        }
      }
    }
    /* a w x h object: about w h samples, most of them fill */
    fail_unless (fabs (counts[1] + counts[2] - o[2] * o[3]) < 0.05 * o[2] *
        o[3], "%d samples, %g expected", counts[1] + counts[2], o[2] * o[3]);
    fail_unless (counts[2] > counts[1] && counts[1] > 0);
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* layout=laneatt: seed 5 gives LANE_SEED_LANES lanes. The test builds the
 * same scene (as the element does: model 640x360 by default) to know the
 * lanes' true x and their proposals' rows. */
#define LANE_SEED 5
#define LANE_SEED_LANES 3
#define LANE_S GST_TENSOR_INJECT_LANE_ROWS
#define LANE_N GST_TENSOR_INJECT_LANE_PROPOSALS
#define LANE_C (5 + LANE_S)

static GstTensorInjectScene *
lane_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 360, CNMS_DTYPE_FLOAT32,
    LANE_SEED, 6, 200, FALSE, TRUE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* The tensor of out: its structure's id, dims and float32 data (a copy). */
static gfloat *
lane_tensor (GstBuffer * out, const gchar * want_id)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (out, "CudanmsTensorMeta");
  GstStructure *st;
  const GValue *dims;
  GstBuffer *data = NULL;
  gfloat *t;
  guint k;
  static const guint64 want_dims[3] = { 1, LANE_N, LANE_C };

  fail_unless (meta != NULL);
  st = gst_custom_meta_get_structure (meta);
  fail_unless_equals_string (gst_structure_get_string (st, "id"), want_id);
  fail_unless_equals_string (gst_structure_get_string (st, "data-type"),
      "float32");
  fail_unless_equals_string (gst_structure_get_string (st, "dims-order"),
      "row-major");
  dims = gst_structure_get_value (st, "dims");
  fail_unless_equals_int (gst_value_array_get_size (dims), 3);
  for (k = 0; k < 3; k++)
    fail_unless_equals_uint64 (g_value_get_uint64 (gst_value_array_get_value
            (dims, k)), want_dims[k]);
  fail_unless (gst_structure_get (st, "data", GST_TYPE_BUFFER, &data, NULL));
  fail_unless_equals_uint64 (gst_buffer_get_size (data),
      (guint64) LANE_N * LANE_C * 4);
  t = g_malloc (gst_buffer_get_size (data));
  gst_buffer_extract (data, 0, t, gst_buffer_get_size (data));
  gst_buffer_unref (data);
  return t;
}

GST_START_TEST (test_lane_scene)
{
  GstHarness *h = gst_harness_new_parse ("tensorinject layout=laneatt seed=5");
  GstTensorInjectScene *sc = lane_scene ();
  gdouble prev[4][LANE_S];
  guint64 f;
  gint i, n_lanes = gst_tensor_inject_scene_n_lanes (sc);
  gint64 dims[3];

  gst_tensor_inject_scene_dims (sc, dims);
  fail_unless (dims[0] == 1 && dims[1] == LANE_N && dims[2] == LANE_C);
  fail_unless (gst_tensor_inject_scene_lanes (sc));
  fail_unless_equals_int (gst_tensor_inject_scene_n_objects (sc), 0);
  fail_unless_equals_int (n_lanes, LANE_SEED_LANES);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  for (f = 0; f < 3; f++) {
    GstBuffer *out;
    gfloat *t;
    gboolean is_lane[LANE_N] = { FALSE };
    gfloat best_l1_min = G_MAXFLOAT, other_l1_max = -G_MAXFLOAT;
    gint best[4], n_kept, k, total = 0;
    cnms_ctx *ctx = NULL;
    cnms_tensor tensor = { 0 };
    cnms_params p;
    const cnms_det *dets;

    fail_unless_equals_int (gst_harness_push (h, make_frame (0)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    t = lane_tensor (out, "laneatt-proposals");
    for (i = 0; i < n_lanes; i++) {
      gdouble x[LANE_S];
      gint end, rows[8], n, j, r;

      fail_unless (gst_tensor_inject_scene_lane (sc, i, f, x, &end, rows, &n));
      /* the lane stops at 85% of the way to the horizon (42% from the top):
       * row r is at height r / 71 / 0.58 */
      fail_unless_equals_int (end, 35);
      fail_unless (n >= 4 && n <= 8);
      total += n;
      best[i] = rows[0];
      for (j = 0; j < n; j++) {
        const gfloat *row = t + (gsize) rows[j] * LANE_C;
        gint start = (gint) lrint (row[2] * (LANE_S - 1));

        fail_unless (!is_lane[rows[j]]);
        is_lane[rows[j]] = TRUE;
        fail_unless (row[0] == 0.0f);
        /* start_y a whole number of strips */
        fail_unless (row[2] == (gfloat) start / (gfloat) (LANE_S - 1));
        fail_unless (row[3] == row[5 + start]);
        if (j == 0) {
          /* the best proposal: the lane's whole rows */
          fail_unless (start == 0 && row[4] == (gfloat) (end + 1),
              "lane %d best: start %d length %g", i, start, row[4]);
          fail_unless (row[1] >= 4.0f && row[1] < 4.1f);
          best_l1_min = MIN (best_l1_min, row[1]);
        } else {
          fail_unless (start >= 0 && start <= 2);
          fail_unless (row[4] >= end + 1 - start - 2
              && row[4] <= end + 1 - start && row[4] == rintf (row[4]));
          fail_unless (row[1] >= 1.5f && row[1] < 3.5f);
          other_l1_max = MAX (other_l1_max, row[1]);
        }
        for (r = 0; r < LANE_S; r++)
          fail_unless (fabs (row[5 + r] - x[r]) <
              GST_TENSOR_INJECT_LANE_JITTER, "frame %d lane %d prop %d row "
              "%d: %g, true %g", (gint) f, i, j, r, row[5 + r], x[r]);
        /* the lane lies in the model input, curving: x moves by more
         * than 1 px a row somewhere, less than 10 everywhere */
        if (j == 0)
          for (r = 0; r <= end; r++)
            fail_unless (x[r] >= 0 && x[r] <= 640);
      }
      /* the lanes move slowly */
      if (f > 0) {
        gdouble moved = 0;

        for (r = 0; r <= end; r++) {
          fail_unless (fabs (x[r] - prev[i][r]) <= 3.0);
          moved = MAX (moved, fabs (x[r] - prev[i][r]));
        }
        fail_unless (moved > 0.5, "lane %d moved %g", i, moved);
      }
      memcpy (prev[i], x, sizeof (x));
    }
    fail_unless (best_l1_min > other_l1_max);
    /* the rest: background, lane logit below the other one by 2 or more
     * (scores below 0.12) */
    for (k = 0; k < LANE_N; k++) {
      const gfloat *row = t + (gsize) k * LANE_C;

      if (!is_lane[k])
        fail_unless (row[0] - row[1] >= 2.0f && row[0] - row[1] <= 6.0f,
            "row %d: logits %g %g", k, row[0], row[1]);
    }
    fail_unless (total >= 4 * n_lanes && total <= 8 * n_lanes);

    /* LaneATT's NMS (distance 50, score above 0.5) keeps each lane's best
     * proposal, best score first */
    fail_unless_equals_int (cnms_ctx_new (CNMS_BACKEND_CPU, 0, &ctx),
        CNMS_OK);
    tensor.data = t;
    tensor.size = (gsize) LANE_N * LANE_C * 4;
    tensor.dtype = CNMS_DTYPE_FLOAT32;
    tensor.n_dims = 3;
    tensor.dims[0] = 1;
    tensor.dims[1] = LANE_N;
    tensor.dims[2] = LANE_C;
    cnms_params_init (&p);
    p.model_width = p.frame_width = 640;
    p.model_height = p.frame_height = 360;
    p.score_threshold = 0.5f;
    p.lane_distance = 50.0f;
    fail_unless_equals_int (cnms_detect (ctx, &tensor, NULL,
            CNMS_LAYOUT_LANEATT, &p, &dets, &n_kept), CNMS_OK);
    fail_unless_equals_int (n_kept, n_lanes);
    for (k = 0; k < n_kept; k++) {
      gboolean found = FALSE;

      for (i = 0; i < n_lanes; i++)
        found = found || dets[k].anchor == best[i];
      fail_unless (found, "kept %d: proposal %d", k, (gint) dets[k].anchor);
      if (k > 0)
        fail_unless (dets[k].score <= dets[k - 1].score);
    }
    cnms_ctx_free (ctx);
    g_free (t);
    gst_buffer_unref (out);
  }
  gst_tensor_inject_scene_free (sc);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* layout=laneatt's defaults give way to tensor-id and model-size when set;
 * the same seed gives the same tensor. */
GST_START_TEST (test_lane_properties)
{
  GstHarness *h = gst_harness_new_parse ("tensorinject layout=laneatt "
      "seed=5 tensor-id=lanes model-size=800x320");
  GstHarness *h2 = gst_harness_new_parse ("tensorinject layout=laneatt "
      "seed=5");
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 800, 320, CNMS_DTYPE_FLOAT32,
    LANE_SEED, 6, 200, FALSE, TRUE
  };
  GstTensorInjectScene *sc = gst_tensor_inject_scene_new (&cfg);
  GstTensorInjectScene *sc2 = lane_scene ();
  guint8 *want = g_malloc (gst_tensor_inject_scene_size (sc));
  guint8 *want2 = g_malloc (gst_tensor_inject_scene_size (sc2));
  GstBuffer *out, *out2;
  gfloat *t, *t2;

  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  gst_harness_set_src_caps_str (h2, FRAME_CAPS);
  gst_tensor_inject_scene_render (sc, 0, want);
  gst_tensor_inject_scene_render (sc2, 0, want2);
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h2, make_frame (0)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  out2 = gst_harness_pull (h2);
  t = lane_tensor (out, "lanes");
  t2 = lane_tensor (out2, "laneatt-proposals");
  fail_unless (memcmp (t, want, gst_tensor_inject_scene_size (sc)) == 0);
  fail_unless (memcmp (t2, want2, gst_tensor_inject_scene_size (sc2)) == 0);
  /* the model size moves the lanes */
  fail_unless (memcmp (want, want2, gst_tensor_inject_scene_size (sc)) != 0);
  g_free (t);
  g_free (t2);
  g_free (want);
  g_free (want2);
  gst_buffer_unref (out);
  gst_buffer_unref (out2);
  gst_tensor_inject_scene_free (sc);
  gst_tensor_inject_scene_free (sc2);
  gst_harness_teardown (h);
  gst_harness_teardown (h2);
}

GST_END_TEST;

/* draw-objects with layout=laneatt: each lane's marking, every sample
 * checked against the rule of gsttensorinjectdraw.c worked out here. The
 * model 640x360 onto 320x240 with letterbox: gain min (2, 1.5) = 1.5,
 * pad_x round ((640 - 480) / 2 - 0.1) = 80, pad_y round (-0.1) = 0. The
 * marking 240,220,120 in BT.601 limited range: y' = (0.299 240 + 0.587 220
 * + 0.114 120) / 255 = 0.84149, Y = 16 + 219 y' = 200.29; Pb = (120/255 -
 * y') / 1.772 = -0.20931, U = 128 + 224 Pb = 81.11; Pr = (240/255 - y') /
 * 1.402 = 0.07110, V = 143.93. */
static const guint8 lane_rgb_want[3] = { 240, 220, 120 };
static const guint8 lane_yuv_want[3] = { 200, 81, 144 };

/* The lanes' points at frame f in frame pixels (lane i, row r at
 * pts[i][r]); returns the lanes, *end their last row. */
static gint
lane_points (guint64 f, gdouble pts[4][LANE_S][2], gint * end)
{
  GstTensorInjectScene *sc = lane_scene ();
  gint i, r, n = gst_tensor_inject_scene_n_lanes (sc);

  for (i = 0; i < n; i++) {
    gdouble x[LANE_S];

    fail_unless (gst_tensor_inject_scene_lane (sc, i, f, x, end, NULL, NULL));
    for (r = 0; r <= *end; r++) {
      pts[i][r][0] = (x[r] - 80) / 1.5;
      pts[i][r][1] = ((gdouble) (LANE_S - 1 - r) / (LANE_S - 1) * 360 - 0) /
          1.5;
    }
  }
  gst_tensor_inject_scene_free (sc);
  return n;
}

/* Whether the sample centred on (x, y) is within 2 px (half the width) of
 * a segment of a lane. */
static gboolean
lane_drawn_at (gdouble pts[4][LANE_S][2], gint n, gint end, gdouble x,
    gdouble y)
{
  gint i, r;

  for (i = 0; i < n; i++) {
    for (r = 0; r < end; r++) {
      gdouble ax = pts[i][r][0], ay = pts[i][r][1];
      gdouble dx = pts[i][r + 1][0] - ax, dy = pts[i][r + 1][1] - ay;
      gdouble l2 = dx * dx + dy * dy, u = 0, ex, ey;

      if (l2 > 0) {
        u = ((x - ax) * dx + (y - ay) * dy) / l2;
        u = u < 0 ? 0 : u > 1 ? 1 : u;
      }
      ex = x - ax - u * dx;
      ey = y - ay - u * dy;
      if (ex * ex + ey * ey < 2.0 * 2.0)
        return TRUE;
    }
  }
  return FALSE;
}

/* The polylines' length in frame pixels. */
static gdouble
lane_length (gdouble pts[4][LANE_S][2], gint n, gint end)
{
  gdouble len = 0;
  gint i, r;

  for (i = 0; i < n; i++)
    for (r = 0; r < end; r++)
      len += hypot (pts[i][r + 1][0] - pts[i][r][0],
          pts[i][r + 1][1] - pts[i][r][1]);
  return len;
}

GST_START_TEST (test_lane_draw)
{
  const gchar *formats[] = { "I420", "BGRx", "RGB" };
  guint fi;

  for (fi = 0; fi < G_N_ELEMENTS (formats); fi++) {
    GstVideoInfo info;
    GstHarness *h = draw_harness ("layout=laneatt seed=5 draw-objects=true",
        formats[fi], &info);
    GstBuffer *in = solid_frame (&info, DRAW_BG);
    gboolean yuv = GST_VIDEO_INFO_IS_YUV (&info);
    guint64 f;

    for (f = 0; f < 2; f++) {
      GstBuffer *out = push_pull_copy (h, in);
      GstMapInfo map;
      gdouble pts[4][LANE_S][2];
      gint end, n = lane_points (f, pts, &end), k, x, y, count = 0;
      gdouble len = lane_length (pts, n, end);

      fail_unless_equals_int (n, LANE_SEED_LANES);
      fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
      if (yuv) {
        for (k = 0; k < 3; k++) {
          gint sub = k ? 2 : 1, w = FRAME_W / sub, hh = FRAME_H / sub;
          const guint8 *plane = map.data + info.offset[k];
          guint8 bg = k ? 0x80 : DRAW_BG;

          for (y = 0; y < hh; y++) {
            for (x = 0; x < w; x++) {
              gboolean on = lane_drawn_at (pts, n, end, (x + 0.5) * sub,
                  (y + 0.5) * sub);
              guint8 e = on ? lane_yuv_want[k] : bg;

              if (k == 0 && on)
                count++;
              fail_unless (plane[(gsize) y * info.stride[k] + x] == e,
                  "frame %d plane %d (%d,%d): %d, expected %d", (gint) f, k,
                  x, y, plane[(gsize) y * info.stride[k] + x], e);
            }
          }
        }
      } else {
        const RgbLayout *l = NULL;
        guint li;

        for (li = 0; li < G_N_ELEMENTS (rgb_layouts); li++)
          if (strcmp (rgb_layouts[li].format, formats[fi]) == 0)
            l = &rgb_layouts[li];
        fail_unless (l != NULL);
        for (y = 0; y < FRAME_H; y++) {
          for (x = 0; x < FRAME_W; x++) {
            const guint8 *px = map.data + (gsize) y * info.stride[0] +
                (gsize) x * l->bpp;
            gboolean on = lane_drawn_at (pts, n, end, x + 0.5, y + 0.5);

            count += on;
            fail_unless (px[l->r] == (on ? lane_rgb_want[0] : DRAW_BG)
                && px[l->g] == (on ? lane_rgb_want[1] : DRAW_BG)
                && px[l->b] == (on ? lane_rgb_want[2] : DRAW_BG),
                "%s frame %d (%d,%d): %d,%d,%d", formats[fi], (gint) f, x, y,
                px[l->r], px[l->g], px[l->b]);
            if (l->fourth >= 0)
              fail_unless_equals_int (px[l->fourth], DRAW_BG);
          }
        }
      }
      gst_buffer_unmap (out, &map);
      /* a 4 px wide band along the lanes: about 4 samples per pixel of
       * length (more where the segments bend) */
      fail_unless (fabs (count - 4 * len) < 0.1 * 4 * len,
          "%d samples, %g px of lanes", count, len);
      gst_buffer_unref (out);
    }
    gst_buffer_unref (in);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* The i-th CudanmsTensorMeta of out (attach order): its id, dims (n_dims
 * of them) and float32 data (a copy, or float16 when half is TRUE). */
static gpointer
nth_tensor (GstBuffer * out, guint index, const gchar * want_id,
    const guint64 * want_dims, guint n_dims, gboolean half)
{
  gpointer state = NULL;
  GstMeta *meta;
  guint seen = 0, k;

  while ((meta = gst_buffer_iterate_meta (out, &state))) {
    GstStructure *st;
    const GValue *dims;
    GstBuffer *data = NULL;
    gpointer t;
    guint64 n = 1;

    if (!gst_meta_info_is_custom (meta->info)
        || !gst_custom_meta_has_name ((GstCustomMeta *) meta,
            "CudanmsTensorMeta") || seen++ != index)
      continue;
    st = gst_custom_meta_get_structure ((GstCustomMeta *) meta);
    fail_unless_equals_string (gst_structure_get_string (st, "id"), want_id);
    fail_unless_equals_string (gst_structure_get_string (st, "data-type"),
        half ? "float16" : "float32");
    fail_unless_equals_string (gst_structure_get_string (st, "dims-order"),
        "row-major");
    dims = gst_structure_get_value (st, "dims");
    fail_unless_equals_int (gst_value_array_get_size (dims), n_dims);
    for (k = 0; k < n_dims; k++) {
      fail_unless_equals_uint64 (g_value_get_uint64 (gst_value_array_get_value
              (dims, k)), want_dims[k]);
      n *= want_dims[k];
    }
    fail_unless (gst_structure_get (st, "data", GST_TYPE_BUFFER, &data,
            NULL));
    fail_unless_equals_uint64 (gst_buffer_get_size (data), n * (half ? 2 : 4));
    t = g_malloc (gst_buffer_get_size (data));
    gst_buffer_extract (data, 0, t, gst_buffer_get_size (data));
    gst_buffer_unref (data);
    return t;
  }
  fail ("no tensor %u on the buffer", index);
  return NULL;
}

static guint
n_tensor_metas (GstBuffer * out)
{
  gpointer state = NULL;
  GstMeta *meta;
  guint n = 0;

  while ((meta = gst_buffer_iterate_meta (out, &state)))
    n += gst_meta_info_is_custom (meta->info)
        && gst_custom_meta_has_name ((GstCustomMeta *) meta,
        "CudanmsTensorMeta");
  return n;
}

/* The synthetic model's anchors: 80x80 + 40x40 + 20x20 at 640x640. */
#define ANCHORS_640 8400

/* A GRAY8 frame through a harness of "tensorinject <props>". */
static GstBuffer *
inject_one (GstHarness * h)
{
  fail_unless_equals_int (gst_harness_push (h, make_frame (0)), GST_FLOW_OK);
  return gst_harness_pull (h);
}

/* The anchors of a [1, R, N] tensor whose box rows are exactly box (as
 * floats): their count, the last one in *anchor. */
static gint
exact_box_anchors (const gfloat * t, gint n, const gdouble box[4],
    gint * anchor)
{
  gint a, k, found = 0;

  for (a = 0; a < n; a++) {
    for (k = 0; k < 4 && t[(gsize) k * n + a] == (gfloat) box[k]; k++);
    if (k == 4) {
      found++;
      *anchor = a;
    }
  }
  return found;
}

/* Whether anchor a's box lies within frac of box (each coordinate). */
static gboolean
near_box (const gfloat * t, gint n, gint a, const gdouble box[4],
    gdouble frac)
{
  gint k;

  for (k = 0; k < 4; k++) {
    gdouble tol = frac * box[2 + k % 2] + 1e-3;

    if (fabs (t[(gsize) k * n + a] - box[k]) > tol)
      return FALSE;
  }
  return TRUE;
}

/* layout=yolov8-pose: seed 3, three people, no noise. */
#define POSE_PROPS "layout=yolov8-pose seed=3 num-objects=3 noise=0"
#define POSE_K GST_TENSOR_INJECT_POSE_KEYPOINTS
#define POSE_ROWS (4 + 1 + 3 * POSE_K)

static GstTensorInjectScene *
pose_scene (void)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 640, CNMS_DTYPE_FLOAT32,
    3, 3, 0, FALSE, FALSE, TRUE, FALSE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* The template's keypoints that the limbs' swing leaves in place, at u of
 * the box: nose, eyes, ears, shoulders, hips (COCO's order). */
static const struct
{
  gint k;
  gdouble u, v;
} pose_fixed[] = {
  {0, 0.50, 0.08}, {1, 0.55, 0.06}, {2, 0.45, 0.06}, {3, 0.61, 0.08},
  {4, 0.39, 0.08}, {5, 0.72, 0.22}, {6, 0.28, 0.22}, {11, 0.63, 0.55},
  {12, 0.37, 0.55},
};

/* Every value of the pose tensor that the scene defines exactly: each
 * person's best anchor (its true box and keypoints as floats, the highest
 * score of its cluster), its other anchors (keypoints within 2% of the
 * box), the background's visibilities (below 0.05); float32 and float16
 * (the same values, each rounded to half). */
GST_START_TEST (test_pose_scene)
{
  static const guint64 want_dims[3] = { 1, POSE_ROWS, ANCHORS_640 };
  const gint n = ANCHORS_640;
  guint half;

  for (half = 0; half < 2; half++) {
    gchar *desc = g_strdup_printf ("tensorinject " POSE_PROPS
        " num-classes=80%s", half ? " data-type=float16" : "");
    GstHarness *h = gst_harness_new_parse (desc);
    GstTensorInjectScene *sc = pose_scene ();
    guint64 f;
    gint occluded = 0;

    fail_unless (gst_tensor_inject_scene_pose (sc));
    gst_harness_set_src_caps_str (h, FRAME_CAPS);
    for (f = 0; f < 3; f++) {
      GstBuffer *out = inject_one (h);
      gfloat *t;
      gint i, a, k;
      gboolean in_cluster[ANCHORS_640] = { FALSE };

      fail_unless_equals_int (n_tensor_metas (out), 1);
      if (half) {
        guint16 *h16 = nth_tensor (out, 0, "detections", want_dims, 3, TRUE);

        t = g_new (gfloat, (gsize) POSE_ROWS * n);
        cnms_halves_to_floats (h16, (gsize) POSE_ROWS * n, t);
        g_free (h16);
      } else {
        t = nth_tensor (out, 0, "detections", want_dims, 3, FALSE);
      }
      fail_unless_equals_int (gst_tensor_inject_scene_n_objects (sc), 3);
      for (i = 0; i < 3; i++) {
        gdouble box[4], kp[POSE_K][3];
        gint class_id = -1, best = -1;

        fail_unless (gst_tensor_inject_scene_object (sc, i, f, box,
                &class_id));
        fail_unless (gst_tensor_inject_scene_object_keypoints (sc, i, f,
                kp));
        fail_unless_equals_int (class_id, 0);
        /* taller than wide, inside the model */
        fail_unless (box[3] > 1.9 * box[2]);
        fail_unless (box[0] - box[2] / 2 >= 0 && box[0] + box[2] / 2 <= 640
            && box[1] - box[3] / 2 >= 0 && box[1] + box[3] / 2 <= 640);
        if (half) {
          /* rounded to half, the box matches the rounded rows */
          for (k = 0; k < 4; k++) {
            gfloat v = (gfloat) box[k];
            guint16 hv;

            cnms_floats_to_halves (&v, 1, &hv);
            cnms_halves_to_floats (&hv, 1, &v);
            box[k] = v;
          }
        }
        fail_unless_equals_int (exact_box_anchors (t, n, box, &best), 1);
        for (k = 0; k < POSE_K; k++) {
          gint j;

          for (j = 0; j < 3; j++) {
            gfloat want = (gfloat) kp[k][j];

            if (half) {
              guint16 hv;

              cnms_floats_to_halves (&want, 1, &hv);
              cnms_halves_to_floats (&hv, 1, &want);
            }
            fail_unless (t[(gsize) (5 + 3 * k + j) * n + best] == want,
                "frame %d person %d keypoint %d value %d: %g, want %g",
                (gint) f, i, k, j, t[(gsize) (5 + 3 * k + j) * n + best],
                want);
          }
          /* visible 0.6..0.99 or occluded 0.05..0.3 */
          fail_unless ((kp[k][2] >= 0.6 && kp[k][2] < 0.99)
              || (kp[k][2] >= 0.05 && kp[k][2] < 0.3));
          occluded += kp[k][2] < 0.5;
          /* inside the box */
          fail_unless (fabs (kp[k][0] - box[0]) <= box[2] / 2
              && fabs (kp[k][1] - box[1]) <= box[3] / 2);
        }
        /* the template's fixed points, worked out here */
        for (k = 0; k < (gint) G_N_ELEMENTS (pose_fixed); k++) {
          const gint kk = pose_fixed[k].k;

          fail_unless (fabs (kp[kk][0] - (box[0] + (pose_fixed[k].u - 0.5)
                      * box[2])) < 1e-6 * box[2] + (half ? box[2] : 0));
          fail_unless (fabs (kp[kk][1] - (box[1] + (pose_fixed[k].v - 0.5)
                      * box[3])) < 1e-6 * box[3] + (half ? box[3] : 0));
        }
        /* the limbs swing symmetrically: the wrists' mean is the box's
         * centre line */
        fail_unless (fabs ((kp[9][0] + kp[10][0]) / 2 - box[0]) < 1e-6
            * box[2] + (half ? box[2] : 0));
        /* its cluster: the best anchor scores highest; the others'
         * keypoints jitter by at most 2% of the box */
        for (a = 0; a < n; a++) {
          if (!near_box (t, n, a, box, 0.031 + (half ? 0.01 : 0))
              || t[(gsize) 4 * n + a] < 0.3)
            continue;
          in_cluster[a] = TRUE;
          fail_unless (t[(gsize) 4 * n + a] <= t[(gsize) 4 * n + best]);
          for (k = 0; k < POSE_K; k++) {
            fail_unless (fabs (t[(gsize) (5 + 3 * k) * n + a] - kp[k][0])
                <= 0.02 * box[2] + 0.5);
            fail_unless (fabs (t[(gsize) (6 + 3 * k) * n + a] - kp[k][1])
                <= 0.02 * box[3] + 0.5);
            fail_unless (fabs (t[(gsize) (7 + 3 * k) * n + a] - kp[k][2])
                <= 0.05 + 1e-3);
          }
        }
      }
      /* the background: low scores, keypoints nobody sees */
      for (a = 0; a < n; a++) {
        if (in_cluster[a])
          continue;
        fail_unless (t[(gsize) 4 * n + a] < 0.3);
        if (t[(gsize) 4 * n + a] < 0.021) {
          for (k = 0; k < POSE_K; k++)
            fail_unless (t[(gsize) (7 + 3 * k) * n + a] < 0.0501);
        }
      }
      g_free (t);
      gst_buffer_unref (out);
    }
    /* about one keypoint in seven is occluded (3 people x 3 frames) */
    fail_unless (occluded > 0 && occluded < 3 * 3 * POSE_K / 3);
    gst_tensor_inject_scene_free (sc);
    gst_harness_teardown (h);
    g_free (desc);
  }
}

GST_END_TEST;

/* layout=yolov8-seg: seed 5, four objects, no noise, 80 classes. */
#define SEG_PROPS "layout=yolov8-seg seed=5 num-objects=4 noise=0"
#define SEG_M GST_TENSOR_INJECT_SEG_MASKS
#define SEG_ROWS (4 + 80 + SEG_M)
#define SEG_DET_ID "yolo-v8-segmentation-out-detections"
#define SEG_PROTOS_ID "yolo-v8-segmentation-out-protos"

static GstTensorInjectScene *
seg_scene (gint num_objects)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, 640, 640, CNMS_DTYPE_FLOAT32,
    5, num_objects, 0, FALSE, FALSE, FALSE, TRUE
  };

  return gst_tensor_inject_scene_new (&cfg);
}

/* The documented shapes, written here: the signed distance of (dx, dy)
 * from the centre of an a x b (half sides) shape, model pixels. */
static gdouble
shape_distance (GstTensorInjectShape shape, gdouble dx, gdouble dy,
    gdouble a, gdouble b)
{
  if (shape == GST_TENSOR_INJECT_SHAPE_ELLIPSE)
    return (1.0 - sqrt (dx * dx / (a * a) + dy * dy / (b * b))) * MIN (a, b);
  if (shape == GST_TENSOR_INJECT_SHAPE_RECTANGLE)
    return MIN (a - fabs (dx), b - fabs (dy));
  fail_unless (shape == GST_TENSOR_INJECT_SHAPE_DIAMOND);
  return (1.0 - fabs (dx) / a - fabs (dy) / b) * a * b / sqrt (a * a + b * b);
}

static gdouble
shape_area (GstTensorInjectShape shape, gdouble w, gdouble h)
{
  return shape == GST_TENSOR_INJECT_SHAPE_ELLIPSE ? G_PI * w * h / 4 :
      shape == GST_TENSOR_INJECT_SHAPE_RECTANGLE ? w * h : w * h / 2;
}

/* Both tensors of a segmentation frame: the detections (the objects' best
 * anchors exact, every anchor's coefficients one-hot on its object or
 * zero) and every prototype value (the signed distance of the documented
 * shape at the pixel's centre, in prototype pixels, clamped to +-4; the
 * unused channels -4); tensor-id renames the detections only. */
GST_START_TEST (test_seg_scene)
{
  static const guint64 det_dims[3] = { 1, SEG_ROWS, ANCHORS_640 };
  static const guint64 protos_dims[4] = { 1, SEG_M, 160, 160 };
  const gint n = ANCHORS_640;
  GstTensorInjectScene *sc = seg_scene (4);
  gint shapes[3] = { 0, 0, 0 };
  guint run;

  fail_unless (gst_tensor_inject_scene_seg (sc));
  fail_unless_equals_uint64 (gst_tensor_inject_scene_protos_size (sc),
      (guint64) SEG_M * 160 * 160 * 4);
  for (run = 0; run < 2; run++) {
    const gchar *id = run ? "dets" : SEG_DET_ID;
    gchar *desc = g_strdup_printf ("tensorinject " SEG_PROPS "%s",
        run ? " tensor-id=dets" : "");
    GstHarness *h = gst_harness_new_parse (desc);
    guint64 f;

    gst_harness_set_src_caps_str (h, FRAME_CAPS);
    for (f = 0; f < 2; f++) {
      GstBuffer *out = inject_one (h);
      gfloat *t, *p;
      gint i, a, c, px, py;
      gint owner[ANCHORS_640];

      fail_unless_equals_int (n_tensor_metas (out), 2);
      t = nth_tensor (out, 0, id, det_dims, 3, FALSE);
      p = nth_tensor (out, 1, SEG_PROTOS_ID, protos_dims, 4, FALSE);
      /* each anchor's coefficients: zero, or one-hot */
      for (a = 0; a < n; a++) {
        owner[a] = -1;
        for (c = 0; c < SEG_M; c++) {
          gfloat v = t[(gsize) (84 + c) * n + a];

          fail_unless (v == 0.0f || (v == 1.0f && owner[a] == -1));
          if (v == 1.0f)
            owner[a] = c;
        }
        fail_unless (owner[a] < 4);
        if (owner[a] < 0)
          fail_unless (t[(gsize) 4 * n + a] < 0.3 && t[(gsize) 83 * n + a]
              < 0.3);
      }
      for (i = 0; i < 4; i++) {
        gdouble box[4], area;
        gint class_id = -1, best = -1, cluster = 0, inside = 0;
        GstTensorInjectShape shape = gst_tensor_inject_scene_object_shape (sc,
            i);

        fail_unless (gst_tensor_inject_scene_object (sc, i, f, box,
                &class_id));
        fail_unless_equals_int (exact_box_anchors (t, n, box, &best), 1);
        fail_unless_equals_int (owner[best], i);
        fail_unless (t[(gsize) (4 + class_id) * n + best] > 0.59);
        for (a = 0; a < n; a++) {
          if (owner[a] != i)
            continue;
          cluster++;
          fail_unless (near_box (t, n, a, box, 0.031));
          fail_unless (t[(gsize) (4 + class_id) * n + a]
              <= t[(gsize) (4 + class_id) * n + best]);
        }
        fail_unless (cluster >= 10 && cluster <= 60);
        /* prototype channel i, pixel by pixel (the first difference
         * reported; one assertion, so that the sanitizer builds stay
         * quick) */
        {
          gint bad = 0, bad_px = -1, bad_py = -1;
          gfloat bad_got = 0.0f, bad_want = 0.0f;

          for (py = 0; py < 160; py++) {
            for (px = 0; px < 160; px++) {
              gdouble x = (px + 0.5) * 4, y = (py + 0.5) * 4;
              gdouble d = shape_distance (shape, x - box[0], y - box[1],
                  box[2] / 2, box[3] / 2);
              gfloat want = (gfloat) CLAMP (d / 4, -4.0, 4.0);
              gfloat got = p[((gsize) i * 160 + py) * 160 + px];

              if ((got != want || gst_tensor_inject_scene_object_logit (sc,
                          i, f, x, y) != want) && bad++ == 0) {
                bad_px = px;
                bad_py = py;
                bad_got = got;
                bad_want = want;
              }
              inside += got > 0;
            }
          }
          fail_unless (bad == 0, "frame %d object %d: %d proto pixels "
              "differ, first (%d,%d): %g (or its logit), want %g", (gint) f,
              i, bad, bad_px, bad_py, bad_got, bad_want);
        }
        /* its true mask has the shape's area (in 4x4 pixels) */
        area = shape_area (shape, box[2], box[3]) / 16;
        fail_unless (fabs (inside - area) < 0.05 * area + (box[2] + box[3])
            / 4, "object %d: %d proto pixels inside, area %g", i, inside,
            area);
        shapes[shape]++;
      }
      {
        gint other = 0;

        for (c = 4; c < SEG_M; c++)
          for (px = 0; px < 160 * 160; px++)
            other += p[(gsize) c * 160 * 160 + px] != -4.0f;
        fail_unless_equals_int (other, 0);
      }
      g_free (t);
      g_free (p);
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
    g_free (desc);
  }
  /* seed 5's four objects are not all one shape */
  fail_unless (MAX (shapes[0], MAX (shapes[1], shapes[2])) < 4 * 2 * 2);
  gst_tensor_inject_scene_free (sc);
  /* at most 32 objects, one prototype channel each */
  sc = seg_scene (40);
  fail_unless_equals_int (gst_tensor_inject_scene_n_objects (sc), SEG_M);
  gst_tensor_inject_scene_free (sc);
}

GST_END_TEST;

/* Palette of gsttensorinjectdraw.c: fill hsv (k/11, 0.7, 0.6), border hsv
 * (k/11, 0.8, 0.3). */
static const guint8 test_palette[11][2][3] = {
  {{153, 46, 46}, {76, 15, 15}},
  {{153, 104, 46}, {76, 49, 15}},
  {{143, 153, 46}, {71, 76, 15}},
  {{85, 153, 46}, {38, 76, 15}},
  {{46, 153, 65}, {15, 76, 26}},
  {{46, 153, 124}, {15, 76, 60}},
  {{46, 124, 153}, {15, 60, 76}},
  {{46, 65, 153}, {15, 26, 76}},
  {{85, 46, 153}, {38, 15, 76}},
  {{143, 46, 153}, {71, 15, 76}},
  {{153, 46, 104}, {76, 15, 49}},
};

/* An RGB frame of draw_harness (320x240, letterbox gain 2, pad_y 80)
 * against want (x, y) -> the RGB colour, or NULL for the background. */
typedef const guint8 *(*WantFunc) (gpointer user, gint x, gint y);

static gint
check_rgb_want (GstBuffer * out, const GstVideoInfo * info, WantFunc want,
    gpointer user)
{
  GstMapInfo map;
  gint x, y, painted = 0;

  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (y = 0; y < FRAME_H; y++) {
    for (x = 0; x < FRAME_W; x++) {
      const guint8 *px = map.data + (gsize) y * info->stride[0] + x * 3;
      const guint8 *c = want (user, x, y);
      guint8 bg[3] = { DRAW_BG, DRAW_BG, DRAW_BG };

      if (c == NULL)
        c = bg;
      else
        painted++;
      fail_unless (px[0] == c[0] && px[1] == c[1] && px[2] == c[2],
          "(%d,%d): %d,%d,%d, expected %d,%d,%d", x, y, px[0], px[1], px[2],
          c[0], c[1], c[2]);
    }
  }
  gst_buffer_unmap (out, &map);
  return painted;
}

typedef struct
{
  gint n;
  gdouble box[4][4];
  gint class_id[4];
  GstTensorInjectShape shape[4];
} SegTruth;

/* The last object whose shape holds the sample: border within 2 frame
 * pixels (4 model pixels) of its outline. */
static const guint8 *
seg_want (gpointer user, gint x, gint y)
{
  const SegTruth *st = user;
  gdouble mx = (x + 0.5) * 2, my = (y + 0.5) * 2 + 80;
  gint i;

  for (i = st->n - 1; i >= 0; i--) {
    gdouble d = shape_distance (st->shape[i], mx - st->box[i][0],
        my - st->box[i][1], st->box[i][2] / 2, st->box[i][3] / 2);

    if (d > 0)
      return test_palette[st->class_id[i] % 11][d / 2 <= 2 ? 1 : 0];
  }
  return NULL;
}

/* draw-objects with layout=yolov8-seg: each object's true shape, every
 * pixel against the rule worked out here. */
GST_START_TEST (test_seg_draw)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (SEG_PROPS " draw-objects=true", "RGB", &info);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  GstTensorInjectScene *sc = seg_scene (4);
  guint64 f;

  for (f = 0; f < 2; f++) {
    GstBuffer *out = push_pull_copy (h, in);
    SegTruth st = { 4 };
    gint i, painted;
    gdouble area = 0;

    for (i = 0; i < 4; i++) {
      fail_unless (gst_tensor_inject_scene_object (sc, i, f, st.box[i],
              &st.class_id[i]));
      st.shape[i] = gst_tensor_inject_scene_object_shape (sc, i);
      area += shape_area (st.shape[i], st.box[i][2] / 2, st.box[i][3] / 2);
    }
    painted = check_rgb_want (out, &info, seg_want, &st);
    /* something of them is on the frame (overlaps and the letterbox's
     * bands cover some) */
    fail_unless (painted > 0.2 * area && painted <= area * 1.02 + 200,
        "%d painted, %g area", painted, area);
    gst_buffer_unref (out);
  }
  gst_tensor_inject_scene_free (sc);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

static const gint test_limbs[19][2] = {
  {15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12},
  {5, 6}, {5, 7}, {6, 8}, {7, 9}, {8, 10}, {1, 2}, {0, 1}, {0, 2},
  {1, 3}, {2, 4}, {3, 5}, {4, 6},
};

typedef struct
{
  gint n;
  gdouble kp[3][POSE_K][3];     /* frame pixels, visibility */
} PoseTruth;

static gdouble
point_segment_d2 (gdouble px, gdouble py, const gdouble * a,
    const gdouble * b)
{
  gdouble dx = b[0] - a[0], dy = b[1] - a[1], l2 = dx * dx + dy * dy, u = 0;
  gdouble ex, ey;

  if (l2 > 0)
    u = CLAMP (((px - a[0]) * dx + (py - a[1]) * dy) / l2, 0.0, 1.0);
  ex = px - a[0] - u * dx;
  ey = py - a[1] - u * dy;
  return ex * ex + ey * ey;
}

/* The last person's joint (radius 3) or limb (4 wide) at the sample;
 * within a person the joints cover the limbs. */
static const guint8 *
pose_want (gpointer user, gint x, gint y)
{
  const PoseTruth *pt = user;
  gdouble px = x + 0.5, py = y + 0.5;
  gint i, k;

  for (i = pt->n - 1; i >= 0; i--) {
    for (k = 0; k < POSE_K; k++)
      if (pt->kp[i][k][2] >= 0.5
          && point_segment_d2 (px, py, pt->kp[i][k], pt->kp[i][k]) < 9)
        return test_palette[i % 11][1];
    for (k = 0; k < 19; k++) {
      const gdouble *a = pt->kp[i][test_limbs[k][0]];
      const gdouble *b = pt->kp[i][test_limbs[k][1]];

      if (a[2] >= 0.5 && b[2] >= 0.5 && point_segment_d2 (px, py, a, b) < 4)
        return test_palette[i % 11][0];
    }
  }
  return NULL;
}

/* draw-objects with layout=yolov8-pose: each person's visible keypoints
 * and the COCO limbs between them, every pixel against the rule. */
GST_START_TEST (test_pose_draw)
{
  GstVideoInfo info;
  GstHarness *h = draw_harness (POSE_PROPS " draw-objects=true", "RGB",
      &info);
  GstBuffer *in = solid_frame (&info, DRAW_BG);
  GstTensorInjectScene *sc = pose_scene ();
  guint64 f;

  for (f = 0; f < 2; f++) {
    GstBuffer *out = push_pull_copy (h, in);
    PoseTruth pt = { 3 };
    gint i, k;

    for (i = 0; i < 3; i++) {
      fail_unless (gst_tensor_inject_scene_object_keypoints (sc, i, f,
              pt.kp[i]));
      for (k = 0; k < POSE_K; k++) {
        pt.kp[i][k][0] = pt.kp[i][k][0] / 2;
        pt.kp[i][k][1] = (pt.kp[i][k][1] - 80) / 2;
      }
    }
    fail_unless (check_rgb_want (out, &info, pose_want, &pt) > 200);
    gst_buffer_unref (out);
  }
  gst_tensor_inject_scene_free (sc);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
tensorinject_suite (void)
{
  Suite *s = suite_create ("tensorinject");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_synthetic_determinism);
  tcase_add_test (tc, test_synthetic_layouts);
  tcase_add_test (tc, test_synthetic_motion);
  tcase_add_test (tc, test_replay_one_file);
  tcase_add_test (tc, test_replay_pattern);
  tcase_add_test (tc, test_draw_rgb);
  tcase_add_test (tc, test_draw_i420);
  tcase_add_test (tc, test_draw_off);
  tcase_add_test (tc, test_draw_unsupported);
  tcase_add_test (tc, test_draw_under_box);
  tcase_add_test (tc, test_memory_cuda);
  tcase_add_test (tc, test_obb_scene);
  tcase_add_test (tc, test_obb_draw);
  tcase_add_test (tc, test_lane_scene);
  tcase_add_test (tc, test_lane_properties);
  tcase_add_test (tc, test_lane_draw);
  tcase_add_test (tc, test_pose_scene);
  tcase_add_test (tc, test_pose_draw);
  tcase_add_test (tc, test_seg_scene);
  tcase_add_test (tc, test_seg_draw);
  return s;
}

GST_CHECK_MAIN (tensorinject);
