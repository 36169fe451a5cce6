/* Stress tests of the cudanms element (suite 'stress', run by CI: `meson
 * test --setup long --suite stress`). Each check is its own meson test
 * (GST_CHECKS=name):
 *
 *   live_properties  10000 buffers while another thread keeps changing
 *                    every live property between two values (the
 *                    per-class controls among them): each output is
 *                    exactly one of the 2048 results of the property
 *                    combinations (computed first, without the thread)
 *   state_cycles     200 NULL -> PLAYING -> NULL cycles, each with its
 *                    exact ROIs; no file descriptor left open
 *   instances        16 pipelines streaming at once in one process, each
 *                    with exactly the ROIs it gives alone
 *   tee_queue        tee and queue before and after two cudanms: all four
 *                    branches get every buffer with its exact ROIs and
 *                    its tensor meta
 *   rss              30000 frames of [1, 84, 8400] tensors: RSS after the
 *                    last is within 1 MiB of RSS after the 3000th
 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "gst_helpers.h"

/* The live properties and their two values each. */
static const struct
{
  const gchar *name, *a, *b;
} live[] = {
  {"iou", "0.45", "0.9"},
  {"score-threshold", "0.25", "0.4"},
  {"max-detections", "300", "2"},
  {"max-candidates", "30000", "3"},
  {"class-agnostic", "false", "true"},
  {"layout", "auto", "yolov8"},
  {"model-size", "320x240", "640x480"},
  {"tensor-id", "", "detections"},
  {"class-score-thresholds", "", "0=0.6,1=0.3"},
  {"exclude-classes", "", "2"},
  {"min-width", "0", "40"},
};

#define N_LIVE G_N_ELEMENTS (live)

static void
set_live (GstElement * el, guint i, gboolean second)
{
  const gchar *v = second ? live[i].b : live[i].a;

  if (strcmp (live[i].name, "tensor-id") == 0 && v[0] == '\0')
    g_object_set (el, "tensor-id", NULL, NULL);
  else
    gst_util_set_object_arg (G_OBJECT (el), live[i].name, v);
}

typedef struct
{
  GstElement *el;
  volatile gint stop;
  guint changes;
} Changer;

static gpointer
change_properties (gpointer data)
{
  Changer *c = data;
  GRand *rand = g_rand_new_with_seed (7);

  while (!g_atomic_int_get (&c->stop)) {
    guint i = g_rand_int_range (rand, 0, N_LIVE);

    set_live (c->el, i, g_rand_boolean (rand));
    c->changes++;
  }
  g_rand_free (rand);
  return NULL;
}

GST_START_TEST (test_live_properties)
{
  GstHarness *h = new_harness (NULL);
  GHashTable *valid = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL), *seen = g_hash_table_new (g_str_hash, g_str_equal);
  Changer c = { h->element, 0, 0 };
  GThread *thread;
  guint combo, i;

  /* every combination's result, one buffer each */
  for (combo = 0; combo < 1u << N_LIVE; combo++) {
    GstBuffer *out;

    for (i = 0; i < N_LIVE; i++)
      set_live (h->element, i, (combo >> i) & 1);
    out = push_pull (h, hand_frame_yolov8 ());
    g_hash_table_add (valid, rois_to_string (out));
    gst_buffer_unref (out);
  }
  fail_unless (g_hash_table_size (valid) >= 16, "only %u distinct results",
      g_hash_table_size (valid));

  thread = g_thread_new ("changer", change_properties, &c);
  for (i = 0; i < 10000; i++) {
    GstBuffer *out = push_pull (h, hand_frame_yolov8 ());
    gchar *str = rois_to_string (out);
    gpointer key;

    fail_unless (g_hash_table_lookup_extended (valid, str, &key, NULL),
        "buffer %u: '%s' is no combination's result", i, str);
    g_hash_table_add (seen, key);
    g_free (str);
    gst_buffer_unref (out);
  }
  g_atomic_int_set (&c.stop, 1);
  g_thread_join (thread);
  printf ("live properties: %u changes, %u distinct results of %u\n",
      c.changes, g_hash_table_size (seen), g_hash_table_size (valid));
  fail_unless (c.changes > 1000, "only %u changes", c.changes);
  fail_unless (g_hash_table_size (seen) >= 8, "only %u results seen",
      g_hash_table_size (seen));

  /* the defaults again: the exact hand ROIs */
  for (i = 0; i < N_LIVE; i++)
    set_live (h->element, i, FALSE);
  {
    GstBuffer *out = push_pull (h, hand_frame_yolov8 ());

    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
  }
  fail_unless_equals_uint64 (get_stat (h->element, "buffers"),
      (1u << N_LIVE) + 10001);
  g_hash_table_unref (seen);
  g_hash_table_unref (valid);
  gst_harness_teardown (h);
}

GST_END_TEST;

static guint
count_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  fail_unless (dir != NULL);
  while (g_dir_read_name (dir) != NULL)
    n++;
  g_dir_close (dir);
  return n;
}

GST_START_TEST (test_state_cycles)
{
  GstHarness *h = new_harness (NULL);
  guint fds = 0, i;

  for (i = 0; i < 200; i++) {
    GstBuffer *out;

    fail_unless_equals_int (gst_element_set_state (h->element,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    if (i == 1)
      fds = count_fds ();
    gst_harness_play (h);
    gst_harness_set_src_caps_str (h, FRAME_CAPS);
    out = push_pull (h, hand_frame_yolov8 ());
    assert_hand_rois (out, NULL);
    gst_buffer_unref (out);
    fail_unless_equals_uint64 (get_stat (h->element, "buffers"), 1);
  }
  fail_unless_equals_int (gst_element_set_state (h->element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (count_fds (), fds);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* One pipeline of tensorinject ! cudanms; its ROIs per frame. */
typedef struct
{
  guint index;
  GPtrArray *frames;
  gboolean eos;
} Run;

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Run *r = data;

  g_ptr_array_add (r->frames, rois_to_string (GST_PAD_PROBE_INFO_BUFFER
          (info)));
  return GST_PAD_PROBE_OK;
}

#define N_INSTANCES 16
#define INSTANCE_FRAMES 60

static gpointer
run_instance (gpointer data)
{
  Run *r = data;
  static const gchar *layouts[] = { "yolov8", "yolov5" };
  static const gchar *types[] = { "float32", "float16" };
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1 "
      "! tensorinject seed=%u layout=%s data-type=%s noise=200 "
      "! cudanms ! fakesink name=sink sync=false", INSTANCE_FRAMES,
      100 + r->index, layouts[r->index % 2], types[(r->index / 2) % 2]);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *sink;
  GstPad *pad;
  GstBus *bus;
  GstMessage *msg;

  fail_unless (pipe != NULL, "cannot build %s", desc);
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, r, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  r->eos = msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg != NULL)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (desc);
  return NULL;
}

GST_START_TEST (test_instances)
{
  Run alone[N_INSTANCES], together[N_INSTANCES];
  GThread *threads[N_INSTANCES];
  guint i, j, rois = 0;

  for (i = 0; i < N_INSTANCES; i++) {
    alone[i].index = together[i].index = i;
    alone[i].frames = g_ptr_array_new_with_free_func (g_free);
    together[i].frames = g_ptr_array_new_with_free_func (g_free);
    alone[i].eos = together[i].eos = FALSE;
    run_instance (&alone[i]);
    fail_unless (alone[i].eos);
  }
  for (i = 0; i < N_INSTANCES; i++)
    threads[i] = g_thread_new ("instance", run_instance, &together[i]);
  for (i = 0; i < N_INSTANCES; i++)
    g_thread_join (threads[i]);
  for (i = 0; i < N_INSTANCES; i++) {
    fail_unless (together[i].eos, "instance %u: no EOS", i);
    fail_unless_equals_int (together[i].frames->len, INSTANCE_FRAMES);
    fail_unless_equals_int (alone[i].frames->len, INSTANCE_FRAMES);
    for (j = 0; j < INSTANCE_FRAMES; j++) {
      const gchar *a = g_ptr_array_index (alone[i].frames, j);

      fail_unless_equals_string (g_ptr_array_index (together[i].frames, j),
          a);
      rois += strlen (a) > 0;
    }
    g_ptr_array_unref (alone[i].frames);
    g_ptr_array_unref (together[i].frames);
  }
  /* most frames hold detections: something was compared */
  fail_unless (rois > N_INSTANCES * INSTANCE_FRAMES / 2, "%u frames with "
      "ROIs", rois);
}

GST_END_TEST;

#define TEE_BUFFERS 50

GST_START_TEST (test_tee_queue)
{
  const gchar *sinks[] = { "a1", "a2", "b1", "b2" };
  GstElement *pipe = gst_parse_launch ("appsrc name=src format=time "
      "caps=" FRAME_CAPS " ! tee name=t "
      "t. ! queue ! cudanms name=a model-size=320x240 ! tee name=ta "
      "ta. ! queue ! appsink name=a1 sync=false "
      "ta. ! queue ! appsink name=a2 sync=false "
      "t. ! queue ! cudanms name=b model-size=320x240 ! tee name=tb "
      "tb. ! queue ! appsink name=b1 sync=false "
      "tb. ! queue ! appsink name=b2 sync=false", NULL);
  GstElement *src;
  guint i, k;

  fail_unless (pipe != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < TEE_BUFFERS; i++) {
    GstBuffer *buf = hand_frame_yolov8 ();

    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  for (k = 0; k < G_N_ELEMENTS (sinks); k++) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), sinks[k]);

    for (i = 0; i < TEE_BUFFERS; i++) {
      GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
          60 * GST_SECOND);
      GstBuffer *buf;

      fail_unless (sample != NULL, "%s: buffer %u missing", sinks[k], i);
      buf = gst_sample_get_buffer (sample);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), i * GST_SECOND / 30);
      /* each branch's own copy: only its cudanms's ROIs (a or b) */
      assert_hand_rois_from (buf, NULL, 0, k < 2 ? "a" : "b");
      fail_unless (gst_buffer_get_custom_meta (buf, "CudanmsTensorMeta") !=
          NULL, "%s: buffer %u lost its tensor meta", sinks[k], i);
      gst_sample_unref (sample);
    }
    fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink))
        || gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
            10 * GST_SECOND) == NULL);
    gst_object_unref (sink);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipe);
}

GST_END_TEST;

#define RSS_FRAMES 30000
#define RSS_WARM 3000

typedef struct
{
  guint frames;
  gsize warm, last;
  guint64 rois;
} RssRun;

static GstPadProbeReturn
on_rss_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  RssRun *r = data;

  r->rois += count_rois (GST_PAD_PROBE_INFO_BUFFER (info));
  if (++r->frames == RSS_WARM)
    r->warm = rss_bytes ();
  else if (r->frames == RSS_FRAMES)
    r->last = rss_bytes ();
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_rss)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1 "
      "! tensorinject ! cudanms name=nms ! fakesink name=sink sync=false",
      RSS_FRAMES);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstElement *nms = gst_bin_get_by_name (GST_BIN (pipe), "nms");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  RssRun r = { 0, 0, 0, 0 };
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_rss_buffer, &r, NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (r.frames, RSS_FRAMES);
  fail_unless_equals_uint64 (get_stat (nms, "detections"), r.rois);
  fail_unless (r.rois > RSS_FRAMES, "only %" G_GUINT64_FORMAT " ROIs",
      r.rois);
  printf ("rss: %.1f MiB after %d frames, %.1f MiB after %d (%+.0f KiB), "
      "%" G_GUINT64_FORMAT " ROIs\n", r.warm / 1048576.0, RSS_WARM,
      r.last / 1048576.0, RSS_FRAMES,
      ((gdouble) r.last - (gdouble) r.warm) / 1024.0, r.rois);
  fail_unless (r.last <= r.warm + 1024 * 1024, "RSS grew from %" G_GSIZE_FORMAT
      " to %" G_GSIZE_FORMAT " bytes", r.warm, r.last);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (bus);
  gst_object_unref (nms);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  g_free (desc);
}

GST_END_TEST;

static Suite *
stress_suite (void)
{
  Suite *s = suite_create ("cudanms-stress");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, test_live_properties);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_instances);
  tcase_add_test (tc, test_tee_queue);
  tcase_add_test (tc, test_rss);
  return s;
}

GST_CHECK_MAIN (stress);
