/* The cudanms element on the GPU, through real pipelines:
 *
 *   videotestsrc ! tensorinject seed=S layout=L data-type=T ! cudanms device=D ! fakesink
 *
 * with a buffer probe on the sink that writes down every ROI meta of every
 * frame (id, x, y, w, h, roi_type and each param structure, "detection"
 * with all its fields, serialised exactly).
 *
 *   test-gpu-element parity   yolov8 / yolov5 x float32 / float16, 60 frames
 *                             each: device=cuda gives exactly the ROIs of
 *                             device=cpu (skips without a device)
 *   test-gpu-element threads  four device=cuda pipelines streaming at once in
 *                             four threads give the ROIs they give one at a
 *                             time (skips without a device)
 *   test-gpu-element auto     the read-only "backend" property: device=auto
 *                             runs "cuda" where a device exists and "cpu"
 *                             where none does; device=cpu runs "cpu"; NULL
 *                             when stopped (runs everywhere)
 */
#include <stdio.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cudanms.h"

#define SKIP 77
#define N_FRAMES 60
#define N_THREADS 4
#define TIMEOUT_S 300

typedef struct {
  const gchar *layout;          /* tensorinject layout */
  const gchar *data_type;       /* float32 / float16 */
  guint seed;
  const gchar *device;          /* cudanms device */
  gint frames;
} RunConfig;

/* What one pipeline run produced. */
typedef struct {
  gboolean ok;
  GPtrArray *frames;            /* gchar *, one line of ROIs per frame */
  guint n_rois;
  gchar *backend;               /* the element's "backend" while running */
} RunResult;

static void
run_result_clear (RunResult * r)
{
  g_clear_pointer (&r->frames, g_ptr_array_unref);
  g_clear_pointer (&r->backend, g_free);
}

/* Every ROI meta of buf in attach (kept) order, exactly. */
static gchar *
rois_serialise (GstBuffer * buf, guint * n)
{
  GString *str = g_string_new (NULL);
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    GList *l;

    g_string_append_printf (str, "[id=%d %u,%u,%u,%u %s", m->id, m->x, m->y,
        m->w, m->h, g_quark_to_string (m->roi_type));
    for (l = m->params; l != NULL; l = l->next) {
      gchar *s = gst_structure_to_string (l->data);
      g_string_append_printf (str, " %s", s);
      g_free (s);
    }
    g_string_append (str, "]");
    (*n)++;
  }
  return g_string_free (str, FALSE);
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  RunResult *r = user_data;

  g_ptr_array_add (r->frames,
      rois_serialise (GST_PAD_PROBE_INFO_BUFFER (info), &r->n_rois));
  return GST_PAD_PROBE_OK;
}

/* Runs one pipeline to EOS; r->ok tells whether it got there. */
static void
run_pipeline (const RunConfig * c, RunResult * r)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=GRAY8,width=1280,height=720,framerate=30/1 "
      "! tensorinject seed=%u layout=%s data-type=%s "
      "! cudanms name=nms device=%s ! fakesink name=sink sync=false",
      c->frames, c->seed, c->layout, c->data_type, c->device);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstElement *sink, *nms;
  GstPad *pad;
  GstBus *bus;
  GstMessage *msg;

  memset (r, 0, sizeof *r);
  r->frames = g_ptr_array_new_with_free_func (g_free);
  if (pipe == NULL || err != NULL) {
    printf ("FAIL: cannot build \"%s\": %s\n", desc,
        err ? err->message : "?");
    g_clear_error (&err);
    g_free (desc);
    return;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  nms = gst_bin_get_by_name (GST_BIN (pipe), "nms");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, r, NULL);
  gst_object_unref (pad);

  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, TIMEOUT_S * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
    r->ok = TRUE;
  } else if (msg != NULL) {
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    printf ("FAIL: \"%s\": %s (%s)\n", desc, err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
  } else {
    printf ("FAIL: \"%s\": no EOS within %d s\n", desc, TIMEOUT_S);
  }
  /* still running: the backend in use */
  g_object_get (nms, "backend", &r->backend, NULL);
  if (msg != NULL)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (nms);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  g_free (desc);
}

/* 1 when a and b hold the same frames; else prints the first difference. */
static gboolean
same_frames (const gchar * what, const RunResult * a, const RunResult * b)
{
  guint i;

  if (a->frames->len != b->frames->len) {
    printf ("FAIL: %s: %u frames vs %u\n", what, a->frames->len,
        b->frames->len);
    return FALSE;
  }
  for (i = 0; i < a->frames->len; i++) {
    if (strcmp (g_ptr_array_index (a->frames, i),
            g_ptr_array_index (b->frames, i)) != 0) {
      printf ("FAIL: %s: frame %u differs\n  %s\n  %s\n", what, i,
          (const gchar *) g_ptr_array_index (a->frames, i),
          (const gchar *) g_ptr_array_index (b->frames, i));
      return FALSE;
    }
  }
  return TRUE;
}

/* Checks that a run reached EOS with every frame, on backend expect. */
static gboolean
run_ok (const gchar * what, const RunConfig * c, const RunResult * r,
    const gchar * expect)
{
  if (!r->ok)
    return FALSE;
  if (r->frames->len != (guint) c->frames) {
    printf ("FAIL: %s: %u frames, expected %d\n", what, r->frames->len,
        c->frames);
    return FALSE;
  }
  if (g_strcmp0 (r->backend, expect) != 0) {
    printf ("FAIL: %s: backend \"%s\", expected \"%s\"\n", what,
        r->backend ? r->backend : "(null)", expect);
    return FALSE;
  }
  return TRUE;
}

static const RunConfig streams[N_THREADS] = {
  {"yolov8", "float32", 11, "cuda", N_FRAMES},
  {"yolov5", "float32", 12, "cuda", N_FRAMES},
  {"yolov8", "float16", 13, "cuda", N_FRAMES},
  {"yolov5", "float16", 14, "cuda", N_FRAMES},
};

static int
test_parity (void)
{
  int failed = 0, i;

  for (i = 0; i < N_THREADS; i++) {
    RunConfig cpu_cfg = streams[i];
    RunResult gpu, cpu;
    gchar *what = g_strdup_printf ("%s %s seed %u", streams[i].layout,
        streams[i].data_type, streams[i].seed);
    gboolean ok;

    cpu_cfg.device = "cpu";
    run_pipeline (&streams[i], &gpu);
    run_pipeline (&cpu_cfg, &cpu);
    ok = run_ok (what, &streams[i], &gpu, "cuda")
        && run_ok (what, &cpu_cfg, &cpu, "cpu")
        && same_frames (what, &cpu, &gpu);
    if (ok && cpu.n_rois == 0) {
      printf ("FAIL: %s: no ROI at all, nothing was compared\n", what);
      ok = FALSE;
    }
    printf ("parity %s: %d frames, %u ROIs, cuda %s cpu\n", what,
        streams[i].frames, gpu.n_rois, ok ? "==" : "!=");
    failed += !ok;
    run_result_clear (&gpu);
    run_result_clear (&cpu);
    g_free (what);
  }
  return failed;
}

static gpointer
stream_thread (gpointer data)
{
  const RunConfig *c = data;
  RunResult *r = g_new0 (RunResult, 1);

  run_pipeline (c, r);
  return r;
}

static int
test_threads (void)
{
  RunResult alone[N_THREADS];
  GThread *th[N_THREADS];
  int failed = 0, i;

  for (i = 0; i < N_THREADS; i++)
    run_pipeline (&streams[i], &alone[i]);
  for (i = 0; i < N_THREADS; i++)
    th[i] = g_thread_new ("stream", stream_thread, (gpointer) & streams[i]);
  for (i = 0; i < N_THREADS; i++) {
    RunResult *together = g_thread_join (th[i]);
    gchar *what = g_strdup_printf ("stream %d (%s %s)", i, streams[i].layout,
        streams[i].data_type);
    gboolean ok = run_ok (what, &streams[i], &alone[i], "cuda")
        && run_ok (what, &streams[i], together, "cuda")
        && same_frames (what, &alone[i], together);

    printf ("threads %s: %u ROIs over %d frames, concurrent %s one at a "
        "time\n", what, together->n_rois, streams[i].frames,
        ok ? "==" : "!=");
    failed += !ok;
    run_result_clear (together);
    g_free (together);
    run_result_clear (&alone[i]);
    g_free (what);
  }
  return failed;
}

static int
test_auto (void)
{
  const gboolean cuda = cnms_cuda_device_count () > 0;
  RunConfig c = { "yolov8", "float32", 21, "auto", 5 };
  RunResult r;
  GstElement *nms = gst_element_factory_make ("cudanms", NULL);
  gchar *idle = NULL;
  int failed = 0;

  if (nms == NULL) {
    printf ("FAIL: no cudanms element\n");
    return 1;
  }
  g_object_get (nms, "backend", &idle, NULL);
  if (idle != NULL) {
    printf ("FAIL: backend \"%s\" before start, expected NULL\n", idle);
    failed++;
  }
  g_free (idle);
  gst_object_unref (nms);

  run_pipeline (&c, &r);
  failed += !run_ok ("device=auto", &c, &r, cuda ? "cuda" : "cpu");
  printf ("device=auto with %d CUDA devices: backend %s\n",
      cnms_cuda_device_count (), r.backend ? r.backend : "(null)");
  run_result_clear (&r);

  c.device = "cpu";
  run_pipeline (&c, &r);
  failed += !run_ok ("device=cpu", &c, &r, "cpu");
  run_result_clear (&r);
  return failed;
}

int
main (int argc, char **argv)
{
  const gchar *mode = argc > 1 ? argv[1] : "";
  int failed;

  gst_init (&argc, &argv);
  if (strcmp (mode, "auto") == 0) {
    failed = test_auto ();
  } else if (strcmp (mode, "parity") == 0 || strcmp (mode, "threads") == 0) {
    if (cnms_cuda_device_count () <= 0) {
      printf ("element %s: SKIP, no CUDA device\n", mode);
      return SKIP;
    }
    failed = mode[0] == 'p' ? test_parity () : test_threads ();
  } else {
    printf ("usage: test-gpu-element parity|threads|auto\n");
    return 2;
  }
  printf ("element %s: %s\n", mode, failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
