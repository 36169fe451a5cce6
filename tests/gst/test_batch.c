/* cudanms on batches (GStreamer >= 1.28, GstAnalyticsBatchMeta): every
 * frame of every stream decoded in one call, its ROIs on its own buffer
 * exactly as a single-frame cudanms gives them on the same tensor and the
 * stream's frame size; a [B, ...] tensor on the batch buffer; frames
 * without a tensor, a bad frame, events and a stream without a frame pass
 * (counted); a shared frame buffer is copied, never written; live property
 * changes; video caps still negotiate. tensorbatch (the producer) and
 * tensorunbatch (the splitter) around cudanms: each stream's frames come
 * out of its own pad exactly as a single-stream cudanms gives them. */
#include <gst/check/gstcheck.h>
#include <gst/analytics/analytics.h>
#include <gst/app/gstappsink.h>

#include "gst_helpers.h"

#define BATCH_CAPS "multistream/x-analytics-batch(meta:GstAnalyticsBatchMeta)"

/* The streams' frame sizes. */
static const gint sizes[3][2] = { {320, 240}, {1280, 720}, {640, 480} };

static gchar *
video_caps (gint s)
{
  return g_strdup_printf ("video/x-raw,format=GRAY8,width=%d,height=%d,"
      "framerate=30/1", sizes[s][0], sizes[s][1]);
}

/* A frame of stream s (its size) carrying the hand tensor scaled by k
 * (its boxes moved and its scores kept), or no tensor (k < 0). */
static GstBuffer *
stream_frame (gint s, gint k)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16, NULL);

  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  if (k >= 0) {
    const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
    gsize n, i;
    gfloat *t = hand_tensor_yolov8 (&n);

    /* cx, cy shifted by k pixels: each frame its own boxes */
    for (i = 0; i < 2 * HAND_ANCHORS; i++)
      t[i] += (gfloat) k;
    attach_tensor (buf, NULL, "float32", dims, 3, t, n * 4);
    g_free (t);
  }
  return buf;
}

/* The ROIs a single-frame cudanms (props) gives buf's tensor on stream s's
 * caps. */
static gchar *
single_rois (const gchar * props, gint s, GstBuffer * buf)
{
  gchar *caps = video_caps (s);
  GstHarness *h = new_harness_caps (props, caps);
  GstBuffer *out = push_pull (h, gst_buffer_ref (buf));
  gchar *rois = rois_to_string (out);

  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (caps);
  return rois;
}

/* Fills slot slot of meta with stream s: its sticky events (stream-start,
 * caps, segment) and objects (transfer full); fill_stream (): slot s. */
static void
fill_stream_at (GstAnalyticsBatchMeta * meta, gint slot, gint s,
    GstMiniObject ** objects, gsize n)
{
  GstAnalyticsBatchStream *st = &meta->streams[slot];
  gchar *caps_str = video_caps (s), *sid = g_strdup_printf ("stream-%d", s);
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstSegment seg;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  st->index = (guint) s;
  st->n_sticky_events = 3;
  st->sticky_events = g_new0 (GstEvent *, 3);
  st->sticky_events[0] = gst_event_new_stream_start (sid);
  st->sticky_events[1] = gst_event_new_caps (caps);
  st->sticky_events[2] = gst_event_new_segment (&seg);
  st->n_objects = n;
  st->objects = n > 0 ? g_new0 (GstMiniObject *, n) : NULL;
  if (n > 0)
    memcpy (st->objects, objects, n * sizeof (GstMiniObject *));
  gst_caps_unref (caps);
  g_free (caps_str);
  g_free (sid);
}

static void
fill_stream (GstAnalyticsBatchMeta * meta, gint s, GstMiniObject ** objects,
    gsize n)
{
  fill_stream_at (meta, s, s, objects, n);
}

/* An empty batch buffer with a meta of n_streams streams. */
static GstBuffer *
batch_buffer (gsize n_streams, GstAnalyticsBatchMeta ** meta)
{
  GstBuffer *b = gst_buffer_new ();

  GST_BUFFER_PTS (b) = 0;
  *meta = gst_buffer_add_analytics_batch_meta (b);
  (*meta)->streams = g_new0 (GstAnalyticsBatchStream, n_streams);
  (*meta)->n_streams = n_streams;
  return b;
}

/* The ROIs in a rois_to_string () string. */
static guint
n_rois (const gchar * rois)
{
  guint n = 0;

  for (; *rois != '\0'; rois++)
    n += *rois == ';';
  return n;
}

static GstBuffer *
out_frame (GstBuffer * out, gint s, gsize j)
{
  GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (out);

  fail_unless (meta != NULL);
  fail_unless ((gsize) s < meta->n_streams);
  fail_unless (j < meta->streams[s].n_objects);
  fail_unless (GST_IS_BUFFER (meta->streams[s].objects[j]));
  return GST_BUFFER (meta->streams[s].objects[j]);
}

#define PROPS "device=cpu model-size=320x240 letterbox=false"

/* Three streams of three sizes: stream 0 two frames, stream 1 a frame
 * and a gap event, stream 2 a frame without a tensor; one frame buffer
 * also held by the test (shared: the element must copy it). */
GST_START_TEST (test_batch_streams)
{
  GstHarness *h = new_harness_caps (PROPS, BATCH_CAPS);
  GstAnalyticsBatchMeta *meta;
  GstBuffer *in = batch_buffer (3, &meta), *out, *shared;
  GstBuffer *f00 = stream_frame (0, 0), *f01 = stream_frame (0, 9);
  GstBuffer *f10 = stream_frame (1, 30), *f20 = stream_frame (2, -1);
  GstMiniObject *o0[2], *o1[2], *o2[1];
  gchar *want00 = single_rois (PROPS, 0, f00);
  gchar *want01 = single_rois (PROPS, 0, f01);
  gchar *want10 = single_rois (PROPS, 1, f10);
  gchar *got;

  /* the single-frame runs find boxes, and different ones */
  fail_unless (strlen (want00) > 0 && strlen (want10) > 0);
  fail_if (g_strcmp0 (want00, want01) == 0);
  fail_if (g_strcmp0 (want00, want10) == 0);
  shared = gst_buffer_ref (f01);
  o0[0] = GST_MINI_OBJECT (f00);
  o0[1] = GST_MINI_OBJECT (f01);
  o1[0] = GST_MINI_OBJECT (f10);
  o1[1] = GST_MINI_OBJECT (gst_event_new_gap (0, GST_SECOND / 30));
  o2[0] = GST_MINI_OBJECT (f20);
  fill_stream (meta, 0, o0, 2);
  fill_stream (meta, 1, o1, 2);
  fill_stream (meta, 2, o2, 1);

  out = push_pull (h, in);
  got = rois_to_string (out_frame (out, 0, 0));
  fail_unless_equals_string (got, want00);
  g_free (got);
  got = rois_to_string (out_frame (out, 0, 1));
  fail_unless_equals_string (got, want01);
  g_free (got);
  got = rois_to_string (out_frame (out, 1, 0));
  fail_unless_equals_string (got, want10);
  g_free (got);
  fail_unless_equals_int (count_rois (out_frame (out, 2, 0)), 0);
  /* the event passes as it was */
  fail_unless (GST_IS_EVENT (gst_buffer_get_analytics_batch_meta (out)->
          streams[1].objects[1]));
  /* the shared frame was copied: the test's own has no ROI */
  fail_unless (out_frame (out, 0, 1) != shared);
  fail_unless_equals_int (count_rois (shared), 0);
  fail_unless_equals_int (get_stat (h->element, "batches"), 1);
  fail_unless_equals_int (get_stat (h->element, "batch-other-objects"), 1);
  fail_unless_equals_int (get_stat (h->element, "buffers"), 4);
  fail_unless_equals_int (get_stat (h->element, "buffers-without-tensor"),
      1);
  /* every ROI of the three frames counted */
  fail_unless_equals_int (get_stat (h->element, "detections"),
      n_rois (want00) + n_rois (want01) + n_rois (want10));

  /* per stream: stream 0 two frames, 1 one, 2 one without a tensor */
  {
    GstStructure *st = NULL;
    const GValue *arr;
    guint64 v;

    g_object_get (h->element, "stats", &st, NULL);
    arr = gst_structure_get_value (st, "streams");
    fail_unless (arr != NULL && GST_VALUE_HOLDS_ARRAY (arr));
    fail_unless_equals_int (gst_value_array_get_size (arr), 3);
    fail_unless (gst_structure_get_uint64 (gst_value_get_structure
            (gst_value_array_get_value (arr, 0)), "frames", &v));
    fail_unless_equals_int (v, 2);
    fail_unless (gst_structure_get_uint64 (gst_value_get_structure
            (gst_value_array_get_value (arr, 0)), "detections", &v));
    fail_unless_equals_int (v, n_rois (want00) + n_rois (want01));
    fail_unless (gst_structure_get_uint64 (gst_value_get_structure
            (gst_value_array_get_value (arr, 1)), "detections", &v));
    fail_unless_equals_int (v, n_rois (want10));
    fail_unless (gst_structure_get_uint64 (gst_value_get_structure
            (gst_value_array_get_value (arr, 2)), "frames-without-tensor",
            &v));
    fail_unless_equals_int (v, 1);
    gst_structure_free (st);
  }

  gst_buffer_unref (shared);
  gst_buffer_unref (out);
  g_free (want00);
  g_free (want01);
  g_free (want10);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A [B, ...] tensor on the batch buffer: frame i of it is the batch's
 * frame i in stream order; a B that is not the frames' count is refused. */
GST_START_TEST (test_batch_tensor)
{
  const gint dims[] = { 3, 4 + HAND_CLASSES, HAND_ANCHORS };
  GstHarness *h = new_harness_caps (PROPS, BATCH_CAPS);
  GstAnalyticsBatchMeta *meta;
  GstBuffer *in = batch_buffer (2, &meta), *out;
  GstBuffer *ref[3] = { stream_frame (0, 0), stream_frame (0, 5),
    stream_frame (1, 40)
  };
  GstMiniObject *o0[2], *o1[1];
  gfloat *all = g_new (gfloat, 3 * (4 + HAND_CLASSES) * HAND_ANCHORS);
  gchar *want[3], *got;
  gint i;

  for (i = 0; i < 3; i++) {
    gsize n, j;
    gfloat *t = hand_tensor_yolov8 (&n);
    const gint k[3] = { 0, 5, 40 };

    for (j = 0; j < 2 * HAND_ANCHORS; j++)
      t[j] += (gfloat) k[i];
    memcpy (all + (gsize) i * n, t, n * 4);
    g_free (t);
    want[i] = single_rois (PROPS, i < 2 ? 0 : 1, ref[i]);
  }
  o0[0] = GST_MINI_OBJECT (stream_frame (0, -1));
  o0[1] = GST_MINI_OBJECT (stream_frame (0, -1));
  o1[0] = GST_MINI_OBJECT (stream_frame (1, -1));
  fill_stream (meta, 0, o0, 2);
  fill_stream (meta, 1, o1, 1);
  attach_tensor (in, NULL, "float32", dims, 3, all,
      3 * (4 + HAND_CLASSES) * HAND_ANCHORS * 4);
  out = push_pull (h, in);
  for (i = 0; i < 3; i++) {
    got = rois_to_string (out_frame (out, i < 2 ? 0 : 1, i < 2 ? i : 0));
    fail_unless_equals_string (got, want[i]);
    g_free (got);
  }
  gst_buffer_unref (out);

  /* two frames in the meta, three in the tensor: refused, counted */
  in = batch_buffer (1, &meta);
  o0[0] = GST_MINI_OBJECT (stream_frame (0, -1));
  o0[1] = GST_MINI_OBJECT (stream_frame (0, -1));
  fill_stream (meta, 0, o0, 2);
  attach_tensor (in, NULL, "float32", dims, 3, all,
      3 * (4 + HAND_CLASSES) * HAND_ANCHORS * 4);
  out = push_pull (h, in);
  fail_unless_equals_int (count_rois (out_frame (out, 0, 0)), 0);
  fail_unless_equals_int (count_rois (out_frame (out, 0, 1)), 0);
  fail_unless_equals_int (get_stat (h->element, "buffers-with-bad-tensor"),
      2);
  gst_buffer_unref (out);
  for (i = 0; i < 3; i++) {
    g_free (want[i]);
    gst_buffer_unref (ref[i]);
  }
  g_free (all);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A bad frame (its tensor one value short) among good ones, a stream that
 * stopped (no object), and a live change of score-threshold. */
GST_START_TEST (test_batch_bad_frame)
{
  GstHarness *h = new_harness_caps (PROPS, BATCH_CAPS);
  GstAnalyticsBatchMeta *meta;
  GstBuffer *in = batch_buffer (3, &meta), *out, *bad;
  GstBuffer *good = stream_frame (0, 3), *good2 = stream_frame (2, 11);
  GstMiniObject *o0[2], *o2[1];
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  gchar *want = single_rois (PROPS, 0, good);
  gchar *want2 = single_rois (PROPS, 2, good2);
  gchar *want_hi, *got;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);

  bad = gst_buffer_new_allocate (NULL, 16, NULL);
  attach_tensor (bad, NULL, "float32", dims, 3, t, n * 4 - 4);
  o0[0] = GST_MINI_OBJECT (gst_buffer_ref (good));
  o0[1] = GST_MINI_OBJECT (bad);
  o2[0] = GST_MINI_OBJECT (gst_buffer_ref (good2));
  fill_stream (meta, 0, o0, 2);
  fill_stream (meta, 1, NULL, 0);
  fill_stream (meta, 2, o2, 1);
  out = push_pull (h, in);
  got = rois_to_string (out_frame (out, 0, 0));
  fail_unless_equals_string (got, want);
  g_free (got);
  got = rois_to_string (out_frame (out, 2, 0));
  fail_unless_equals_string (got, want2);
  g_free (got);
  fail_unless_equals_int (count_rois (out_frame (out, 0, 1)), 0);
  fail_unless_equals_int (get_stat (h->element, "buffers-with-bad-tensor"),
      1);
  gst_buffer_unref (out);

  /* a live change: the next batch under the new threshold */
  g_object_set (h->element, "score-threshold", 0.6, NULL);
  want_hi = single_rois (PROPS " score-threshold=0.6", 0, good);
  fail_if (g_strcmp0 (want_hi, want) == 0);
  in = batch_buffer (1, &meta);
  o0[0] = GST_MINI_OBJECT (gst_buffer_ref (good));
  fill_stream (meta, 0, o0, 1);
  out = push_pull (h, in);
  got = rois_to_string (out_frame (out, 0, 0));
  fail_unless_equals_string (got, want_hi);
  g_free (got);
  gst_buffer_unref (out);
  gst_buffer_unref (good);
  gst_buffer_unref (good2);
  g_free (t);
  g_free (want);
  g_free (want2);
  g_free (want_hi);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Both kinds of caps negotiate on the same element class: video frames as
 * before, and batches; a batch buffer without the meta passes, counted. */
GST_START_TEST (test_batch_caps)
{
  GstHarness *h = new_harness_caps (PROPS, FRAME_CAPS);
  GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

  assert_hand_rois (out, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  h = new_harness_caps (PROPS, BATCH_CAPS);
  out = push_pull (h, gst_buffer_new ());
  fail_unless_equals_int (get_stat (h->element, "buffers-without-tensor"),
      1);
  gst_buffer_unref (out);
  /* a meta whose stream says 2 objects but holds none: no frame, no
   * crash */
  {
    GstAnalyticsBatchMeta *meta;
    GstBuffer *in = batch_buffer (1, &meta);

    fill_stream (meta, 0, NULL, 0);
    meta->streams[0].n_objects = 2;
    out = push_pull (h, in);
    fail_unless_equals_int (get_stat (h->element, "batches"), 1);
    fail_unless_equals_int (get_stat (h->element, "buffers"), 1);
    /* the meta's free reads n_objects: put it back */
    gst_buffer_get_analytics_batch_meta (out)->streams[0].n_objects = 0;
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The samples each appsink of names (n of them) got from desc until EOS
 * (refs), into outs[i]. */
static void
run_sinks (const gchar * desc, const gchar * const *names, guint n,
    GPtrArray ** outs)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstSample *sample;
  guint i;

  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "?");
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  /* each appsink keeps what it gets (no limit) until it is pulled */
  for (i = 0; i < n; i++) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), names[i]);

    fail_unless (sink != NULL, "no appsink %s", names[i]);
    outs[i] = g_ptr_array_new_with_free_func (
        (GDestroyNotify) gst_sample_unref);
    while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink))) != NULL)
      g_ptr_array_add (outs[i], sample);
    gst_object_unref (sink);
  }
  {
    GstBus *bus = gst_element_get_bus (pipe);
    GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);

    fail_unless (m == NULL, "%s: an error", desc);
    gst_object_unref (bus);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
}

/* The frames an appsink named sink got from desc until EOS (refs). */
static GPtrArray *
run_pipeline (const gchar * desc)
{
  const gchar *names[] = { "sink" };
  GPtrArray *out;

  run_sinks (desc, names, 1, &out);
  return out;
}

/* Stream s of the tensorbatch pipelines: its size, seed and frames. */
static const gint pipe_streams[3][4] = {
  {640, 480, 3, 5}, {1280, 720, 7, 5}, {320, 240, 11, 3}
};

static gchar *
stream_source (gint s, const gchar * tail)
{
  return g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1 "
      "! tensorinject seed=%d num-objects=12 ! %s", pipe_streams[s][3],
      pipe_streams[s][0], pipe_streams[s][1], pipe_streams[s][2], tail);
}

/* Each stream alone through a single-frame cudanms: its frames. */
static void
single_runs (GPtrArray * single[3])
{
  gint s;

  for (s = 0; s < 3; s++) {
    gchar *d = stream_source (s, "cudanms ! appsink name=sink sync=false");

    single[s] = run_pipeline (d);
    fail_unless_equals_int (single[s]->len, pipe_streams[s][3]);
    g_free (d);
  }
}

/* tensorbatch, the producer: three streams of three sizes (one ending
 * two frames before the others) gathered two frames a stream a batch,
 * into cudanms: every frame's ROIs on its own buffer, exactly the ROIs a
 * single-frame cudanms gives that stream's frames; the same with the
 * tensors moved into one [B, ...] tensor on the batch buffer
 * (batch-tensor=true); the batches' streams, frames and counters. */
GST_START_TEST (test_batch_producer)
{
  gint s, bt;

  for (bt = 0; bt < 2; bt++) {
    GString *desc = g_string_new (NULL);
    GPtrArray *single[3], *batches;
    guint seen[3] = { 0, 0, 0 }, i;
    gsize j;

    single_runs (single);
    g_string_append_printf (desc, "tensorbatch name=b frames=2 "
        "batch-tensor=%s ! cudanms name=nms ! appsink name=sink sync=false",
        bt ? "true" : "false");
    for (s = 0; s < 3; s++) {
      gchar *tail = g_strdup_printf ("b.sink_%d", s);
      gchar *d = stream_source (s, tail);

      g_string_append_printf (desc, " %s", d);
      g_free (d);
      g_free (tail);
    }
    batches = run_pipeline (desc->str);
    /* 5 frames two a batch: batches of 2, 2 and 1 frames a stream */
    fail_unless_equals_int (batches->len, 3);
    for (i = 0; i < batches->len; i++) {
      GstBuffer *b = gst_sample_get_buffer (batches->pdata[i]);
      GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (b);

      fail_unless (meta != NULL);
      fail_unless_equals_int (meta->n_streams, 3);
      for (s = 0; s < 3; s++) {
        GstAnalyticsBatchStream *st = &meta->streams[s];
        GstCaps *caps = gst_analytics_batch_stream_get_caps (st);
        GstStructure *cs = gst_caps_get_structure (caps, 0);
        gint w = 0;

        fail_unless_equals_int (st->index, s);
        fail_unless (gst_structure_get_int (cs, "width", &w));
        fail_unless_equals_int (w, pipe_streams[s][0]);
        /* stream 2 has 3 frames: 2, 1, none */
        fail_unless_equals_int (st->n_objects, MIN (2,
                MAX (0, pipe_streams[s][3] - 2 * (gint) i)));
        for (j = 0; j < st->n_objects; j++) {
          GstBuffer *f = GST_BUFFER (st->objects[j]);
          GstBuffer *ref = gst_sample_get_buffer (single[s]->pdata[seen[s]]);
          gchar *got = rois_to_string (f), *want = rois_to_string (ref);

          fail_unless (count_rois (ref) > 0);
          fail_unless_equals_string (got, want);
          g_free (got);
          g_free (want);
          seen[s]++;
        }
      }
    }
    for (s = 0; s < 3; s++)
      fail_unless_equals_int (seen[s], pipe_streams[s][3]);
    for (s = 0; s < 3; s++)
      g_ptr_array_unref (single[s]);
    g_ptr_array_unref (batches);
    g_string_free (desc, TRUE);
  }
}

GST_END_TEST;

/* tensorunbatch, the splitter: the same three streams batched two frames
 * a stream, through cudanms, split again, each stream to its own appsink:
 * each stream gets exactly the frames a single-stream cudanms gives it,
 * in order (PTS), with the same ROIs and caps; the stream of 3 frames
 * ends after its 3. */
GST_START_TEST (test_batch_unbatch)
{
  const gchar *names[] = { "s0", "s1", "s2" };
  GString *desc = g_string_new ("tensorbatch name=b frames=2 ! cudanms "
      "! tensorunbatch name=u");
  GPtrArray *single[3], *split[3];
  gint s;
  guint j;

  single_runs (single);
  /* a queue a stream: one streaming thread feeds the three sinks, each of
   * which waits in preroll */
  for (s = 0; s < 3; s++) {
    gchar *tail = g_strdup_printf ("b.sink_%d", s);
    gchar *d = stream_source (s, tail);

    g_string_append_printf (desc, " u.src_%d ! queue ! appsink name=s%d "
        "sync=false %s", s, s, d);
    g_free (d);
    g_free (tail);
  }
  run_sinks (desc->str, names, 3, split);
  for (s = 0; s < 3; s++) {
    /* 5, 5 and 3 frames: stream 2 ends early */
    fail_unless_equals_int (split[s]->len, pipe_streams[s][3]);
    for (j = 0; j < split[s]->len; j++) {
      GstSample *got = split[s]->pdata[j], *want = single[s]->pdata[j];
      GstBuffer *gb = gst_sample_get_buffer (got);
      GstBuffer *wb = gst_sample_get_buffer (want);
      GstStructure *cs = gst_caps_get_structure (gst_sample_get_caps (got),
          0);
      gchar *gr = rois_to_string (gb), *wr = rois_to_string (wb);
      gint w = 0, h = 0;

      fail_unless (count_rois (wb) > 0);
      fail_unless_equals_string (gr, wr);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (gb), GST_BUFFER_PTS (wb));
      fail_unless_equals_uint64 (GST_BUFFER_PTS (gb),
          gst_util_uint64_scale_int (j, GST_SECOND, 30));
      fail_unless (gst_structure_get_int (cs, "width", &w));
      fail_unless (gst_structure_get_int (cs, "height", &h));
      fail_unless_equals_int (w, pipe_streams[s][0]);
      fail_unless_equals_int (h, pipe_streams[s][1]);
      fail_unless (gst_caps_is_equal (gst_sample_get_caps (got),
              gst_sample_get_caps (want)));
      g_free (gr);
      g_free (wr);
    }
  }
  for (s = 0; s < 3; s++) {
    g_ptr_array_unref (single[s]);
    g_ptr_array_unref (split[s]);
  }
  g_string_free (desc, TRUE);
}

GST_END_TEST;

static void
unbatch_pad_added (GstElement * element, GstPad * pad, GstHarness * h)
{
  gst_harness_add_element_src_pad (h, pad);
}

/* A batch of one stream, of frame size s, in slot 0 with index 7: the
 * stream's events and objects (transfer full). */
static GstBuffer *
stream7_batch (gint s, GstMiniObject ** objects, gsize n)
{
  GstAnalyticsBatchMeta *meta;
  GstBuffer *b = batch_buffer (1, &meta);

  fill_stream_at (meta, 0, s, objects, n);
  meta->streams[0].index = 7;
  return b;
}

/* The width in the caps of the next event h pulls, which must be a caps
 * event. */
static gint
pull_caps_width (GstHarness * h)
{
  GstEvent *e = gst_harness_try_pull_event (h);
  GstCaps *caps;
  gint w = 0;

  fail_unless_equals_int (GST_EVENT_TYPE (e), GST_EVENT_CAPS);
  gst_event_parse_caps (e, &caps);
  fail_unless (gst_structure_get_int (gst_caps_get_structure (caps, 0),
          "width", &w));
  gst_event_unref (e);
  return w;
}

/* tensorunbatch on its own: stream index 7 gets a pad src_7 with its
 * stream-start, caps and segment, then its frame (the very buffer) and
 * its gap event; a batch with the same events again pushes none of them,
 * one with another stream-start and caps pushes those two only; a batch
 * buffer without the meta is an element error. */
GST_START_TEST (test_unbatch_pads)
{
  GstHarness *h = gst_harness_new_with_padnames ("tensorunbatch", "sink",
      NULL);
  GstBus *bus = gst_bus_new ();
  GstBuffer *f = stream_frame (1, 0), *f2 = stream_frame (1, 4), *got;
  GstMiniObject *o[2];
  GstEvent *e;
  GstMessage *m;
  GError *err = NULL;

  gst_element_set_bus (h->element, bus);
  g_signal_connect (h->element, "pad-added", G_CALLBACK (unbatch_pad_added),
      h);
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  o[0] = GST_MINI_OBJECT (gst_buffer_ref (f));
  o[1] = GST_MINI_OBJECT (gst_event_new_gap (0, GST_SECOND / 30));
  fail_unless_equals_int (gst_harness_push (h, stream7_batch (1, o, 2)),
      GST_FLOW_OK);
  fail_unless (h->element->numsrcpads == 1);
  fail_unless_equals_string (GST_PAD_NAME (h->element->srcpads->data),
      "src_7");
  /* the batch's own stream-start, caps and segment went nowhere */
  e = gst_harness_try_pull_event (h);
  fail_unless_equals_int (GST_EVENT_TYPE (e), GST_EVENT_STREAM_START);
  gst_event_unref (e);
  fail_unless_equals_int (pull_caps_width (h), sizes[1][0]);
  e = gst_harness_try_pull_event (h);
  fail_unless_equals_int (GST_EVENT_TYPE (e), GST_EVENT_SEGMENT);
  gst_event_unref (e);
  e = gst_harness_try_pull_event (h);
  fail_unless_equals_int (GST_EVENT_TYPE (e), GST_EVENT_GAP);
  gst_event_unref (e);
  fail_unless (gst_harness_try_pull_event (h) == NULL);
  got = gst_harness_pull (h);
  fail_unless (got == f);
  gst_buffer_unref (got);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  /* equal events (new ones): none pushed again */
  o[0] = GST_MINI_OBJECT (gst_buffer_ref (f2));
  fail_unless_equals_int (gst_harness_push (h, stream7_batch (1, o, 1)),
      GST_FLOW_OK);
  fail_unless (gst_harness_try_pull_event (h) == NULL);
  got = gst_harness_pull (h);
  fail_unless (got == f2);
  gst_buffer_unref (got);
  /* stream 2's stream-start and caps: those, not the equal segment */
  o[0] = GST_MINI_OBJECT (gst_buffer_ref (f2));
  fail_unless_equals_int (gst_harness_push (h, stream7_batch (2, o, 1)),
      GST_FLOW_OK);
  e = gst_harness_try_pull_event (h);
  fail_unless_equals_int (GST_EVENT_TYPE (e), GST_EVENT_STREAM_START);
  {
    const gchar *sid = NULL;

    gst_event_parse_stream_start (e, &sid);
    fail_unless_equals_string (sid, "stream-2");
  }
  gst_event_unref (e);
  fail_unless_equals_int (pull_caps_width (h), sizes[2][0]);
  fail_unless (gst_harness_try_pull_event (h) == NULL);
  gst_buffer_unref (gst_harness_pull (h));
  fail_unless (h->element->numsrcpads == 1);

  /* no meta: an error, and a message that says so */
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new ()),
      GST_FLOW_ERROR);
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "no GstAnalyticsBatchMeta") != NULL,
      "%s", err->message);
  g_error_free (err);
  gst_message_unref (m);

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_buffer_unref (f);
  gst_buffer_unref (f2);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
batch_suite (void)
{
  Suite *s = suite_create ("cudanms-batch");
  TCase *tc = tcase_create ("batch");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_batch_streams);
  tcase_add_test (tc, test_batch_tensor);
  tcase_add_test (tc, test_batch_bad_frame);
  tcase_add_test (tc, test_batch_caps);
  tcase_add_test (tc, test_batch_producer);
  tcase_add_test (tc, test_batch_unbatch);
  tcase_add_test (tc, test_unbatch_pads);
  return s;
}

GST_CHECK_MAIN (batch);
