/* bench-segdec: frames/s of GStreamer 1.28's yolosegv8tensordec and of
 * cudanms (layout=yolov8-seg device=cpu) on the same buffers, in one run,
 * both making their masks. An instrument, not a test: it asserts nothing
 * and prints one row per setup.
 *
 *   bench-segdec [ROUNDS]        (default 5; the median round is shown)
 *
 * The frames are tensorinject's segmentation scenes (model 640x640 = the
 * frame, 80 classes, detections [1, 116, 8400] and prototypes
 * [1, 32, 160, 160], col-major float32 in one GstTensorMeta, the caps
 * describing them as 1.28's onnxinference does), as
 * tests/analytics/test_heads.c compares the two elements on them, with
 * its settings: cudanms class-agnostic=true (the decoder's NMS is
 * class-agnostic), letterbox=false, attach-meta=analytics (an ODMtd and a
 * related GstAnalyticsSegmentationMtd per kept box, as the decoder
 * attaches them), the same score and IoU thresholds, at most 300 boxes on
 * both. Their masks differ by design (docs/element.md): cudanms's are in
 * frame pixels of the box, the decoder's in prototype pixels. Each element
 * runs alone in a harness (push, pull); identity in the same harness
 * measures what the harness and making the buffers cost, which both
 * elements' figures include. The frames' tensors are rendered once; each
 * push wraps frame i's in a new buffer with a new GstTensorMeta. The
 * warm-up pass (untimed) counts each element's boxes (ODMtds), masks
 * (segmentation mtds) and mask pixels, and those set, per frame. Exits 77
 * where yolosegv8tensordec is absent (GStreamer < 1.28). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#ifdef HAVE_GST_TENSOR_META
#include "bench_gst.h"
#include <gst/analytics/analytics.h>
#include "gsttensorinjectscene.h"

#define SIZE 640
#define SEG_DET_ID "yolo-v8-segmentation-out-detections"
#define SEG_PROTOS_ID "yolo-v8-segmentation-out-protos"

typedef struct
{
  const gchar *name;
  guint n_frames;
  guint64 seed;
  gint num_objects;             /* shapes, at most 32 */
  guint noise;                  /* background anchors (zero coefficients) */
  gfloat score_threshold;
  gfloat iou;
  guint max_detections;
} SegSetup;

/* test_heads.c's scene and thresholds (seed 5, four shapes, no noise);
 * then 30 shapes with the usual background noise and cudanms's default
 * thresholds, about the kept count of the bench frame. */
static const SegSetup seg_heads = { "4 shapes (test_heads' scene)", 40, 5, 4,
  0, 0.3f, 0.45f, 300
};

static const SegSetup seg_30 = { "30 shapes, 200 noise anchors", 40, 7, 30,
  200, 0.25f, 0.45f, 300
};

typedef struct
{
  SegSetup setup;
  gsize dims[3], pdims[4];
  GstBuffer **dets, **protos;   /* n_frames each */
  GstMemory *video;             /* one GRAY8 frame, shared */
} SegFrames;

static SegFrames *
seg_frames_new (const SegSetup * setup)
{
  GstTensorInjectSceneConfig cfg = { FALSE, 80, SIZE, SIZE,
    CNMS_DTYPE_FLOAT32, setup->seed, setup->num_objects, setup->noise,
    FALSE, FALSE, FALSE, TRUE
  };
  GstTensorInjectScene *sc = gst_tensor_inject_scene_new (&cfg);
  SegFrames *f = g_new0 (SegFrames, 1);
  gsize size = gst_tensor_inject_scene_size (sc);
  gsize psize = gst_tensor_inject_scene_protos_size (sc);
  gint64 dd[3], pd[4];
  guint i;
  gint k;

  f->setup = *setup;
  gst_tensor_inject_scene_dims (sc, dd);
  gst_tensor_inject_scene_protos_dims (sc, pd);
  for (k = 0; k < 4; k++) {
    if (k < 3)
      f->dims[k] = (gsize) dd[k];
    f->pdims[k] = (gsize) pd[k];
  }
  f->dets = g_new0 (GstBuffer *, setup->n_frames);
  f->protos = g_new0 (GstBuffer *, setup->n_frames);
  for (i = 0; i < setup->n_frames; i++) {
    GstMapInfo map;

    f->dets[i] = gst_buffer_new_allocate (NULL, size, NULL);
    gst_buffer_map (f->dets[i], &map, GST_MAP_WRITE);
    gst_tensor_inject_scene_render (sc, i, map.data);
    gst_buffer_unmap (f->dets[i], &map);
    f->protos[i] = gst_buffer_new_allocate (NULL, psize, NULL);
    gst_buffer_map (f->protos[i], &map, GST_MAP_WRITE);
    gst_tensor_inject_scene_render_protos (sc, i, map.data);
    gst_buffer_unmap (f->protos[i], &map);
  }
  gst_tensor_inject_scene_free (sc);
  f->video = gst_allocator_alloc (NULL, (gsize) SIZE * SIZE, NULL);
  return f;
}

static void
seg_frames_free (SegFrames * f)
{
  guint i;

  for (i = 0; i < f->setup.n_frames; i++) {
    gst_buffer_unref (f->dets[i]);
    gst_buffer_unref (f->protos[i]);
  }
  g_free (f->dets);
  g_free (f->protos);
  gst_memory_unref (f->video);
  g_free (f);
}

/* GRAY8 640x640 caps describing the two tensors as 1.28's onnxinference
 * does (what yolosegv8tensordec's template asks). */
static gchar *
seg_caps (const SegFrames * f)
{
  return g_strdup_printf ("video/x-raw,format=GRAY8,width=%d,height=%d,"
      "framerate=30/1,tensors=(structure)[tensorgroups,"
      "yolo-v8-segmentation-out=(/uniquelist){"
      "(GstCaps)[tensor/strided,tensor-id=(string)" SEG_DET_ID ","
      "dims=<(int)1,(int)%d,(int)%d>,dims-order=(string)col-major,"
      "type=(string)float32],"
      "(GstCaps)[tensor/strided,tensor-id=(string)" SEG_PROTOS_ID ","
      "dims=<(int)1,(int)%d,(int)%d,(int)%d>,dims-order=(string)col-major,"
      "type=(string)float32]}]", SIZE, SIZE, (gint) f->dims[1],
      (gint) f->dims[2], (gint) f->pdims[1], (gint) f->pdims[2],
      (gint) f->pdims[3]);
}

/* A new video buffer carrying frame i's two tensors in a GstTensorMeta. */
static GstBuffer *
seg_buffer (const SegFrames * f, guint i)
{
  GstBuffer *buf = gst_buffer_new ();
  GstTensor **tensors = g_new (GstTensor *, 2);
  GstTensorMeta *tmeta;

  gst_buffer_append_memory (buf, gst_memory_ref (f->video));
  GST_BUFFER_PTS (buf) = i * (GST_SECOND / 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  tensors[0] = gst_tensor_new_simple (g_quark_from_static_string
      (SEG_DET_ID), GST_TENSOR_DATA_TYPE_FLOAT32, gst_buffer_ref (f->dets[i]),
      GST_TENSOR_DIM_ORDER_COL_MAJOR, 3, (gsize *) f->dims);
  tensors[1] = gst_tensor_new_simple (g_quark_from_static_string
      (SEG_PROTOS_ID), GST_TENSOR_DATA_TYPE_FLOAT32,
      gst_buffer_ref (f->protos[i]), GST_TENSOR_DIM_ORDER_COL_MAJOR, 4,
      (gsize *) f->pdims);
  tmeta = (GstTensorMeta *) gst_buffer_add_meta (buf,
      gst_tensor_meta_get_info (), NULL);
  gst_tensor_meta_set (tmeta, 2, tensors);
  return buf;
}

static GstHarness *
harness (GstElement * el, const SegFrames * f)
{
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  gchar *caps = seg_caps (f);

  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  return h;
}

static GstHarness *
harness_identity (const SegFrames * f)
{
  return harness (gst_element_factory_make ("identity", NULL), f);
}

static GstHarness *
harness_cudanms (const SegFrames * f)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);

  if (el == NULL) {
    g_printerr ("no cudanms element (GST_PLUGIN_PATH?)\n");
    exit (1);
  }
  gst_util_set_object_arg (G_OBJECT (el), "layout", "yolov8-seg");
  gst_util_set_object_arg (G_OBJECT (el), "device", "cpu");
  gst_util_set_object_arg (G_OBJECT (el), "attach-meta", "analytics");
  g_object_set (el, "model-size", "640x640", "letterbox", FALSE,
      "class-agnostic", TRUE, "score-threshold", f->setup.score_threshold,
      "iou", f->setup.iou, "max-detections", (gint) f->setup.max_detections,
      NULL);
  return harness (el, f);
}

static GstHarness *
harness_segdec (const SegFrames * f)
{
  GstElement *el = gst_element_factory_make ("yolosegv8tensordec", NULL);

  g_object_set (el, "class-confidence-threshold", f->setup.score_threshold,
      "iou-threshold", f->setup.iou, "max-detections",
      f->setup.max_detections, NULL);
  return harness (el, f);
}

/* Adds buf's ODMtds to counts[0], its segmentation mtds to counts[1],
 * their masks' pixels (the GstVideoMeta's width x height) to counts[2]
 * and those that are set (not 0) to counts[3]. The rows are read packed
 * (stride = width), as test_heads.c reads both elements' masks: cudanms's
 * video meta says so; yolosegv8tensordec 1.28.8 writes its rows packed
 * at the start of a prototype-grid-sized buffer whose video meta gives
 * the grid's width as the stride. */
static void
count_mtds (GstBuffer * buf, guint64 counts[4])
{
  GstAnalyticsRelationMeta *rmeta =
      gst_buffer_get_analytics_relation_meta (buf);
  gpointer state = NULL;
  GstAnalyticsMtd mtd;

  if (rmeta == NULL)
    return;
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd))
    counts[0]++;
  state = NULL;
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_segmentation_mtd_get_mtd_type (), &mtd)) {
    GstBuffer *mask;
    GstVideoMeta *vmeta;
    GstMapInfo map;
    gint x, y;
    guint w, h, r, c;

    counts[1]++;
    mask = gst_analytics_segmentation_mtd_get_mask (
        (GstAnalyticsSegmentationMtd *) & mtd, &x, &y, &w, &h);
    if (mask == NULL)
      continue;
    vmeta = gst_buffer_get_video_meta (mask);
    if (vmeta != NULL && gst_buffer_map (mask, &map, GST_MAP_READ)) {
      counts[2] += (guint64) vmeta->width * vmeta->height;
      for (r = 0; r < vmeta->height; r++) {
        const guint8 *row = map.data + (gsize) r * vmeta->width;

        for (c = 0; c < vmeta->width; c++)
          counts[3] += row[c] != 0;
      }
      gst_buffer_unmap (mask, &map);
    }
    gst_buffer_unref (mask);
  }
}

/* Seconds for one pass over the frames through h; with counts, also the
 * outputs' mtds and mask bytes added into counts (count_mtds; then the
 * pass is not a timed one). */
static gdouble
one_pass (GstHarness * h, const SegFrames * f, guint64 * counts)
{
  gint64 t0 = g_get_monotonic_time ();
  guint i;

  for (i = 0; i < f->setup.n_frames; i++) {
    GstBuffer *out;

    if (gst_harness_push (h, seg_buffer (f, i)) != GST_FLOW_OK) {
      g_printerr ("push failed\n");
      exit (1);
    }
    out = gst_harness_pull (h);
    if (counts != NULL)
      count_mtds (out, counts);
    gst_buffer_unref (out);
  }
  return (g_get_monotonic_time () - t0) / 1e6;
}

static void
bench (const SegSetup * setup, guint rounds)
{
  SegFrames *f = seg_frames_new (setup);
  /* 0 identity, 1 yolosegv8tensordec, 2 cudanms */
  GstHarness *h[3] = { harness_identity (f), harness_segdec (f),
    harness_cudanms (f)
  };
  guint64 counts[3][4] = { {0}, {0}, {0} };
  gdouble *secs[3], med[3], n = setup->n_frames;
  guint r, e;

  for (e = 0; e < 3; e++) {
    secs[e] = g_new (gdouble, rounds);
    one_pass (h[e], f, counts[e]);      /* warm-up, counting */
  }
  for (r = 0; r < rounds; r++) {
    /* alternate the order of the two elements from round to round */
    for (e = 0; e < 3; e++) {
      guint k = (r % 2 && e > 0) ? 3 - e : e;

      secs[k][r] = one_pass (h[k], f, NULL);
    }
  }
  for (e = 0; e < 3; e++) {
    qsort (secs[e], rounds, sizeof (gdouble), bench_gst_cmp_double);
    med[e] = secs[e][rounds / 2];
    g_free (secs[e]);
    gst_harness_teardown (h[e]);
  }
  printf ("| %s | %u | %.1f / %.1f | %.1f / %.1f | %.0f (%.0f) / %.0f (%.0f) "
      "| %.0f | %.0f | %.0f | %.1fx |\n", setup->name, setup->n_frames,
      counts[1][0] / n, counts[2][0] / n, counts[1][1] / n, counts[2][1] / n,
      counts[1][2] / n, counts[1][3] / n, counts[2][2] / n, counts[2][3] / n,
      n / med[1], n / med[2], n / med[0], med[1] / med[2]);
  fflush (stdout);
  seg_frames_free (f);
}

#endif

int
main (int argc, char **argv)
{
#ifdef HAVE_GST_TENSOR_META
  guint rounds = argc > 1 ? (guint) atoi (argv[1]) : 5;
  GstElementFactory *f;
  gchar *cpu, *version;

  gst_init (&argc, &argv);
  if ((f = gst_element_factory_find ("yolosegv8tensordec")) == NULL) {
    printf ("SKIP: no yolosegv8tensordec (GStreamer >= 1.28) here\n");
    return 77;
  }
  gst_object_unref (f);
  if (rounds < 1)
    rounds = 1;
  cpu = bench_gst_cpu_name ();
  version = gst_version_string ();
  printf ("bench-segdec: %s, %u cores, %s; median of %u rounds; "
      "frames/s\n\n", cpu, g_get_num_processors (), version, rounds);
  printf ("| setup | frames | boxes/frame (yolosegv8tensordec / cudanms) | "
      "masks/frame (yolosegv8tensordec / cudanms) | mask pixels/frame "
      "(set) | yolosegv8tensordec | cudanms layout=yolov8-seg device=cpu | "
      "harness alone (identity) | cudanms / yolosegv8tensordec |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  bench (&seg_heads, rounds);
  bench (&seg_30, rounds);
  g_free (version);
  g_free (cpu);
  return 0;
#else
  printf ("SKIP: built without GStreamer >= 1.26 analytics\n");
  return 77;
#endif
}
