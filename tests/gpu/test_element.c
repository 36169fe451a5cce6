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
 *                             on host tensors runs "cuda" or "cpu" (the
 *                             faster one after timing both) where a device
 *                             exists, "cpu" where none does, and the ROIs
 *                             of device=cpu; device=cpu runs "cpu"; NULL
 *                             when stopped (runs everywhere)
 *   test-gpu-element device   device tensors: cudaupload ! tensorinject
 *                             memory=cuda ! cudanms ! cudadownload, the four
 *                             streams, on device=auto (runs "cuda"), cuda
 *                             and cpu (downloads: runs "cpu"), all with the
 *                             ROIs of host tensors on device=cpu; the three
 *                             CUDA elements hold one GstCudaContext; four
 *                             such pipelines at once; a bad device tensor
 *                             warns as a host one does; every run's
 *                             counters (the stats property) equal the host
 *                             run's, and an end2end tensor with invalid and
 *                             fractional classes counts and warns alike in
 *                             device and host memory (skips without a
 *                             device or nvcodec's cudaupload); and the
 *                             other geometries: yolov8-obb and laneatt,
 *                             float32 and float16, host and device
 *                             tensors on device=cuda with exactly the ROIs
 *                             and counters of host tensors on device=cpu
 *   test-gpu-element multi    several GPUs (skips with fewer than 2): a
 *                             pipeline per GPU k (cudaupload
 *                             cuda-device-id=k ! tensorinject memory=cuda
 *                             ! cudanms cuda-device-id=k ! cudadownload
 *                             cuda-device-id=k), all at once in threads,
 *                             each with the ROIs and counters of host
 *                             tensors on device=cpu, its three CUDA
 *                             elements in one GstCudaContext of device k;
 *                             and tensors in CUDA memory of GPU 1 into
 *                             cudanms on GPU 0 (device=cuda and auto): the
 *                             ROIs of host tensors on device=cpu, every
 *                             buffer counted in
 *                             buffers-from-other-cuda-context, one warning
 *                             naming both GPUs; and device=auto with
 *                             cuda-device-id=-1 in a pipeline on GPU 1
 *                             joins its context (device 1, read in place)
 *   test-gpu-element bad-id   cuda-device-id past the GPUs (the device
 *                             count: 1 on a host of one GPU): device=cuda
 *                             on device tensors fails at start with the
 *                             error naming the id and the count;
 *                             device=auto on host tensors warns once and
 *                             runs on the CPU with the ROIs and counters
 *                             of device=cpu (skips without a device or
 *                             cudaupload)
 *   test-gpu-element batch    GStreamer >= 1.28 (GstAnalyticsBatchMeta):
 *                             two streams of one layout and data type (a
 *                             batch's frames must agree in both) in one
 *                             batch pipeline, each videotestsrc !
 *                             cudaupload ! tensorinject memory=cuda at a
 *                             frame size of its own into tensorbatch
 *                             frames=2 ! cudanms device=cuda ! fakesink,
 *                             for yolov8 and yolov5, float32 and float16
 *                             (the seeds of the four streams; the second
 *                             stream 15 frames shorter): each stream's
 *                             frames inside the batch meta carry exactly
 *                             the ROIs of that stream alone on host
 *                             tensors on device=cpu, in order; backend
 *                             "cuda", batches counted, the tensors on the
 *                             frames, no warning, every device tensor
 *                             read in place; and once with
 *                             batch-tensor=true (yolov8 float32: the
 *                             [B, ...] tensor in host memory on the batch
 *                             buffer), the same (skips without a device,
 *                             cudaupload or tensorbatch)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_BATCH_META
#include <gst/analytics/analytics.h>
#endif

#include "cudanms.h"

#define SKIP 77
#define N_FRAMES 60
#define N_THREADS 4
#define TIMEOUT_S 300
/* the mode of batches: GStreamer >= 1.28 only */
#ifdef HAVE_GST_BATCH_META
#define BATCH_MODE "batch"
#define BATCH_USAGE "|batch"
#else
#define BATCH_MODE NULL
#define BATCH_USAGE ""
#endif

typedef struct {
  const gchar *layout;          /* tensorinject layout */
  const gchar *data_type;       /* float32 / float16 */
  guint seed;
  const gchar *device;          /* cudanms device */
  gint frames;
  gboolean cuda_memory;         /* cudaupload ! tensorinject memory=cuda */
  const gchar *location;        /* tensorinject location, or NULL */
  const gchar *props;           /* more cudanms properties, or NULL */
} RunConfig;

/* What one pipeline run produced. */
typedef struct {
  gboolean ok;
  GPtrArray *frames;            /* gchar *, one line of ROIs per frame */
  guint n_rois;
  gchar *backend;               /* the element's "backend" while running */
  gchar *warning;               /* the first warning's message, if any */
  gchar *stats;                 /* the element's counters at EOS, times left
                                 * out */
  gpointer contexts[3];         /* the GstCudaContext of cudaupload,
                                 * tensorinject and cudanms (device runs) */
  gint devices[3];              /* their "cuda-device-id" (-1: none) */
  guint n_warnings;             /* warnings cudanms posted in the run */
  gchar *nms_warning;           /* the first of them */
  gchar *error;                 /* the error that ended the run, if any */
  guint64 batches;              /* the counters' batches and */
  guint64 other_context;        /* buffers-from-other-cuda-context */
} RunResult;

/* TRUE while a test expects its runs to end in an error: not a FAIL */
static gboolean expect_error;

static void run_desc (const gchar * desc, gboolean cuda_memory,
    RunResult * r);
static void run_desc_probe (const gchar * desc, gboolean cuda_memory,
    GstPadProbeCallback probe, gpointer probe_data, RunResult * r);

static void
run_result_clear (RunResult * r)
{
  g_clear_pointer (&r->frames, g_ptr_array_unref);
  g_clear_pointer (&r->backend, g_free);
  g_clear_pointer (&r->warning, g_free);
  g_clear_pointer (&r->stats, g_free);
  g_clear_pointer (&r->error, g_free);
  g_clear_pointer (&r->nms_warning, g_free);
}

/* The GstCudaContext element answers a context query on its own source
 * pad with, or NULL. */
static gpointer
cuda_context_of (GstElement * element)
{
  /* gst-cuda's context type, and the name of its structure's field */
  GstQuery *q = gst_query_new_context ("gst.cuda.context");
  GstPad *pad = gst_element_get_static_pad (element, "src");
  GstContext *ctx = NULL;
  gpointer obj = NULL;
  gboolean answered = pad != NULL && gst_pad_query (pad, q);

  if (pad != NULL)
    gst_object_unref (pad);
  if (answered) {
    gst_query_parse_context (q, &ctx);
    if (ctx != NULL) {
      const GValue *v = gst_structure_get_value (gst_context_get_structure
          (ctx), "gst.cuda.context");
      if (v != NULL && G_VALUE_HOLDS_OBJECT (v))
        obj = g_value_get_object (v);   /* the elements keep theirs */
    }
  }
  gst_query_unref (q);
  return obj;
}

/* The "cuda-device-id" of a GstCudaContext, -1 for NULL. */
static gint
context_device (gpointer context)
{
  gint id = -1;

  if (context != NULL)
    g_object_get (context, "cuda-device-id", &id, NULL);
  return id;
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

/* Runs one pipeline on frames of width x height to EOS; r->ok tells
 * whether it got there. */
static void
run_pipeline_sized (const RunConfig * c, gint width, gint height,
    RunResult * r)
{
  gchar *where = c->location != NULL ?
      g_strdup_printf ("location=%s", c->location) :
      g_strdup_printf ("seed=%u", c->seed);
  gchar *desc = c->cuda_memory ?
      g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1 "
      "! cudaupload name=up ! tensorinject name=inj memory=cuda %s "
      "layout=%s data-type=%s ! cudanms name=nms device=%s %s "
      "! cudadownload ! fakesink name=sink sync=false", c->frames, width,
      height, where, c->layout, c->data_type, c->device,
      c->props ? c->props : "") :
      g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1 "
      "! tensorinject %s layout=%s data-type=%s "
      "! cudanms name=nms device=%s %s ! fakesink name=sink sync=false",
      c->frames, width, height, where, c->layout, c->data_type, c->device,
      c->props ? c->props : "");

  g_free (where);
  run_desc (desc, c->cuda_memory, r);
  g_free (desc);
}

/* Runs one pipeline on 1280x720 frames to EOS; r->ok tells whether it got
 * there. */
static void
run_pipeline (const RunConfig * c, RunResult * r)
{
  run_pipeline_sized (c, 1280, 720, r);
}

/* Runs the pipeline desc (a cudanms named nms, a fakesink named sink;
 * cuda_memory: cudaupload named up and tensorinject named inj too) to
 * EOS; r->ok tells whether it got there. */
static void
run_desc (const gchar * desc, gboolean cuda_memory, RunResult * r)
{
  run_desc_probe (desc, cuda_memory, on_buffer, r, r);
}

/* run_desc with probe (given probe_data) on the sink instead of on_buffer
 * (r->frames stays empty then). */
static void
run_desc_probe (const gchar * desc, gboolean cuda_memory,
    GstPadProbeCallback probe, gpointer probe_data, RunResult * r)
{
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
    return;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  nms = gst_bin_get_by_name (GST_BIN (pipe), "nms");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe, probe_data,
      NULL);
  gst_object_unref (pad);

  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  /* the first warning is kept; EOS or an error ends the run */
  while ((msg = gst_bus_timed_pop_filtered (bus, TIMEOUT_S * GST_SECOND,
              GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))
      != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    GError *w = NULL;

    gst_message_parse_warning (msg, &w, NULL);
    if (r->warning == NULL)
      r->warning = g_strdup (w->message);
    if (GST_MESSAGE_SRC (msg) == GST_OBJECT (nms) && r->n_warnings++ == 0)
      r->nms_warning = g_strdup (w->message);
    g_clear_error (&w);
    gst_message_unref (msg);
  }
  if (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
    GstStructure *s = NULL;

    r->ok = TRUE;
    g_object_get (nms, "stats", &s, NULL);
    gst_structure_get_uint64 (s, "batches", &r->batches);
    gst_structure_get_uint64 (s, "buffers-from-other-cuda-context",
        &r->other_context);
    gst_structure_remove_fields (s, "backend-time", "output-time", NULL);
    r->stats = gst_structure_to_string (s);
    gst_structure_free (s);
  } else if (msg != NULL) {
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    r->error = g_strdup (err->message);
    if (!expect_error)
      printf ("FAIL: \"%s\": %s (%s)\n", desc, err->message, dbg ? dbg :
          "");
    g_clear_error (&err);
    g_free (dbg);
  } else {
    printf ("FAIL: \"%s\": no EOS within %d s\n", desc, TIMEOUT_S);
  }
  /* still running: the backend in use, the shared CUDA context */
  g_object_get (nms, "backend", &r->backend, NULL);
  if (cuda_memory) {
    static const gchar *names[3] = { "up", "inj", "nms" };
    gint k;
    for (k = 0; k < 3; k++) {
      GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), names[k]);
      r->contexts[k] = cuda_context_of (e);
      r->devices[k] = context_device (r->contexts[k]);
      gst_object_unref (e);
    }
  }
  if (msg != NULL)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (nms);
  gst_object_unref (sink);
  gst_object_unref (pipe);
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
  {"yolov8", "float32", 11, "cuda", N_FRAMES, FALSE, NULL, NULL},
  {"yolov5", "float32", 12, "cuda", N_FRAMES, FALSE, NULL, NULL},
  {"yolov8", "float16", 13, "cuda", N_FRAMES, FALSE, NULL, NULL},
  {"yolov5", "float16", 14, "cuda", N_FRAMES, FALSE, NULL, NULL},
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
test_threads (gboolean cuda_memory)
{
  RunConfig cfg[N_THREADS];
  RunResult alone[N_THREADS];
  GThread *th[N_THREADS];
  int failed = 0, i;

  for (i = 0; i < N_THREADS; i++) {
    cfg[i] = streams[i];
    cfg[i].cuda_memory = cuda_memory;
    run_pipeline (&cfg[i], &alone[i]);
  }
  for (i = 0; i < N_THREADS; i++)
    th[i] = g_thread_new ("stream", stream_thread, (gpointer) & cfg[i]);
  for (i = 0; i < N_THREADS; i++) {
    RunResult *together = g_thread_join (th[i]);
    gchar *what = g_strdup_printf ("stream %d (%s %s%s)", i, cfg[i].layout,
        cfg[i].data_type, cuda_memory ? ", device tensors" : "");
    gboolean ok = run_ok (what, &cfg[i], &alone[i], "cuda")
        && run_ok (what, &cfg[i], together, "cuda")
        && same_frames (what, &alone[i], together);

    printf ("threads %s: %u ROIs over %d frames, concurrent %s one at a "
        "time\n", what, together->n_rois, cfg[i].frames,
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
  RunConfig c = { "yolov8", "float32", 21, "auto", 12, FALSE, NULL, NULL };
  RunResult r, ref;
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

  /* host tensors: with a device, whichever backend timed faster on the
   * first buffers; the ROIs are device=cpu's either way */
  run_pipeline (&c, &r);
  failed += !run_ok ("device=auto", &c, &r, cuda && g_strcmp0 (r.backend,
          "cpu") != 0 ? "cuda" : "cpu");
  printf ("device=auto with %d CUDA devices, host tensors: backend %s\n",
      cnms_cuda_device_count (), r.backend ? r.backend : "(null)");

  c.device = "cpu";
  run_pipeline (&c, &ref);
  failed += !run_ok ("device=cpu", &c, &ref, "cpu");
  failed += !same_frames ("device=auto vs cpu", &ref, &r);
  run_result_clear (&r);
  run_result_clear (&ref);
  return failed;
}

/* A [1, 3, 3] float32 .npy: dims that fit no layout. */
/* A float32 .npy file of shape [1, a, b] holding data, in the temporary
 * folder under name; returns its path. */
static gchar *
write_npy (const gchar * name, gint a, gint b, const gfloat * data)
{
  gchar *head = g_strdup_printf ("{'descr': '<f4', 'fortran_order': False, "
      "'shape': (1, %d, %d), }", a, b);
  gchar *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  GString *f = g_string_new ("\x93NUMPY\x01");
  gsize hlen = strlen (head), pad = 64 - (10 + hlen + 1) % 64;

  g_string_append_c (f, 0);
  g_string_append_c (f, (gchar) ((hlen + pad + 1) & 0xff));
  g_string_append_c (f, (gchar) ((hlen + pad + 1) >> 8));
  g_string_append (f, head);
  while (pad-- > 0)
    g_string_append_c (f, ' ');
  g_string_append_c (f, '\n');
  g_string_append_len (f, (const gchar *) data,
      (gssize) ((gsize) a * (gsize) b * sizeof (gfloat)));
  g_file_set_contents (path, f->str, (gssize) f->len, NULL);
  g_string_free (f, TRUE);
  g_free (head);
  return path;
}

/* A [1, 3, 3] tensor that fits no layout. */
static gchar *
write_bad_npy (void)
{
  static const gfloat zeros[9] = { 0 };

  return write_npy ("cnms-bad-tensor.npy", 3, 3, zeros);
}

/* End2end rows (x1 y1 x2 y2 score class, model pixels inside the picture
 * a 640x640 letterbox makes of 1280x720: y from 140 to 500): two
 * detections (one of class 3.5, read as 3), two rows dropped for their
 * class (-1, 2^24), a NaN score and a score below the threshold. */
static gchar *
write_end2end_npy (void)
{
  static const gfloat rows[6 * 6] = {
    10, 210, 50, 250, 0.9f, 2.0f,
    60, 210, 90, 250, 0.8f, -1.0f,
    10, 260, 50, 290, 0.7f, 3.5f,
    60, 260, 90, 290, 0.6f, 16777216.0f,
    100, 210, 140, 250, NAN, 1.0f,
    100, 260, 140, 290, 0.1f, 0.5f
  };

  return write_npy ("cnms-end2end-classes.npy", 6, 6, rows);
}

/* 1 when the host and device runs a and b counted the same. */
static gboolean
same_stats (const gchar * what, const RunResult * a, const RunResult * b)
{
  if (a->stats == NULL || g_strcmp0 (a->stats, b->stats) != 0) {
    printf ("FAIL: %s: counters differ\n  host:   %s\n  device: %s\n", what,
        a->stats ? a->stats : "(none)", b->stats ? b->stats : "(none)");
    return FALSE;
  }
  return TRUE;
}

/* The other geometries in the element on the GPU: oriented boxes and
 * lanes (read as such by their tensor ids), float32 and float16, host
 * and device tensors on device=cuda, each with exactly the ROIs (boxes,
 * the detection structure's oriented box, the lane structure's points)
 * and counters of host tensors on device=cpu. */
static const RunConfig geometries[] = {
  {"yolov8-obb", "float32", 21, "cuda", N_FRAMES, FALSE, NULL, NULL},
  {"yolov8-obb", "float16", 22, "cuda", N_FRAMES, FALSE, NULL, NULL},
  {"laneatt", "float32", 23, "cuda", N_FRAMES, FALSE, NULL,
      "model-size=640x360 score-threshold=0.5"},
  {"laneatt", "float16", 24, "cuda", N_FRAMES, FALSE, NULL,
      "model-size=640x360 score-threshold=0.5 lane-distance=30"},
};

static int
test_geometries (void)
{
  int failed = 0;
  guint i, m;

  for (i = 0; i < G_N_ELEMENTS (geometries); i++) {
    RunConfig ref_cfg = geometries[i];
    RunResult ref;

    ref_cfg.device = "cpu";
    run_pipeline (&ref_cfg, &ref);
    failed += !run_ok ("host tensors on cpu", &ref_cfg, &ref, "cpu");
    for (m = 0; m < 2; m++) {
      RunConfig c = geometries[i];
      RunResult r;
      gchar *what = g_strdup_printf ("%s tensors %s %s, device=cuda",
          m ? "device" : "host", c.layout, c.data_type);
      gboolean ok;

      c.cuda_memory = m == 1;
      run_pipeline (&c, &r);
      ok = run_ok (what, &c, &r, "cuda") && same_frames (what, &ref, &r)
          && same_stats (what, &ref, &r);
      if (ok && ref.n_rois == 0) {
        printf ("FAIL: %s: no ROI at all\n", what);
        ok = FALSE;
      }
      printf ("%s: %u ROIs in %d frames, %s host tensors on cpu\n", what,
          r.n_rois, c.frames, ok ? "==" : "!=");
      failed += !ok;
      run_result_clear (&r);
      g_free (what);
    }
    run_result_clear (&ref);
  }
  return failed;
}

static int
test_device (void)
{
  static const gchar *devices[] = { "auto", "cuda", "cpu" };
  int failed = 0, i, d;
  gchar *bad;
  RunConfig bc = { "yolov8", "float32", 0, "auto", 3, FALSE, NULL, NULL };
  RunResult bh, bd;

  for (i = 0; i < N_THREADS; i++) {
    RunConfig ref_cfg = streams[i];
    RunResult ref;

    ref_cfg.device = "cpu";
    run_pipeline (&ref_cfg, &ref);
    failed += !run_ok ("host tensors on cpu", &ref_cfg, &ref, "cpu");
    for (d = 0; d < 3; d++) {
      RunConfig c = streams[i];
      RunResult r;
      gchar *what = g_strdup_printf ("device tensors %s %s, device=%s",
          c.layout, c.data_type, devices[d]);
      gboolean ok;

      c.cuda_memory = TRUE;
      c.device = devices[d];
      run_pipeline (&c, &r);
      ok = run_ok (what, &c, &r, d == 2 ? "cpu" : "cuda")
          && same_frames (what, &ref, &r) && same_stats (what, &ref, &r);
      if (ok && ref.n_rois == 0) {
        printf ("FAIL: %s: no ROI at all\n", what);
        ok = FALSE;
      }
      if (ok && (r.contexts[0] == NULL || r.contexts[0] != r.contexts[1]
              || r.contexts[1] != r.contexts[2])) {
        printf ("FAIL: %s: CUDA contexts %p (cudaupload) %p (tensorinject) "
            "%p (cudanms), expected one\n", what, r.contexts[0],
            r.contexts[1], r.contexts[2]);
        ok = FALSE;
      }
      printf ("%s: %u ROIs, backend %s, one GstCudaContext %p, %s host "
          "tensors on cpu\n", what, r.n_rois, r.backend ? r.backend : "-",
          r.contexts[2], ok ? "==" : "!=");
      failed += !ok;
      run_result_clear (&r);
      g_free (what);
    }
    run_result_clear (&ref);
  }

  /* a bad tensor warns alike in device and in host memory */
  bad = write_bad_npy ();
  bc.location = bad;
  run_pipeline (&bc, &bh);
  bc.cuda_memory = TRUE;
  run_pipeline (&bc, &bd);
  if (!bh.ok || !bd.ok || bh.warning == NULL
      || g_strcmp0 (bh.warning, bd.warning) != 0) {
    printf ("FAIL: bad tensor warnings: host \"%s\", device \"%s\"\n",
        bh.warning ? bh.warning : "(none)", bd.warning ? bd.warning :
        "(none)");
    failed++;
  } else if (!same_stats ("bad tensor", &bh, &bd)) {
    failed++;
  } else {
    printf ("bad device tensor warns as a host one: \"%s\"\n", bd.warning);
  }
  run_result_clear (&bh);
  run_result_clear (&bd);
  g_unlink (bad);
  g_free (bad);

  /* end2end classes: the decode's counts, on the device as on the host;
   * device=cuda, so the device run decodes where the tensor lies */
  bad = write_end2end_npy ();
  bc.location = bad;
  bc.cuda_memory = FALSE;
  bc.device = "cpu";
  run_pipeline (&bc, &bh);
  bc.cuda_memory = TRUE;
  bc.device = "cuda";
  run_pipeline (&bc, &bd);
  {
    const gchar *want = "End2end rows with class value -1 dropped: a class "
        "is an integer in [0, 2^24).";
    GstStructure *s = bd.stats ? gst_structure_from_string (bd.stats, NULL)
        : NULL;
    guint64 inv = 0, frac = 0, dets = 0;

    if (s != NULL) {
      gst_structure_get_uint64 (s, "end2end-invalid-classes", &inv);
      gst_structure_get_uint64 (s, "end2end-fractional-classes", &frac);
      gst_structure_get_uint64 (s, "detections", &dets);
      gst_structure_free (s);
    }
    if (!run_ok ("end2end on the host", &bc, &bh, "cpu")
        || !run_ok ("end2end on the device", &bc, &bd, "cuda")
        || !same_frames ("end2end classes", &bh, &bd)
        || !same_stats ("end2end classes", &bh, &bd)
        || g_strcmp0 (bh.warning, want) != 0
        || g_strcmp0 (bd.warning, want) != 0 || inv != 6 || frac != 3
        || dets != 6) {
      printf ("FAIL: end2end classes: warnings host \"%s\", device \"%s\"; "
          "device counted %" G_GUINT64_FORMAT " invalid, %" G_GUINT64_FORMAT
          " fractional, %" G_GUINT64_FORMAT " detections (want 6, 3, 6)\n",
          bh.warning ? bh.warning : "(none)",
          bd.warning ? bd.warning : "(none)", inv, frac, dets);
      failed++;
    } else {
      printf ("end2end classes on the device: %s\n", bd.stats);
    }
  }
  run_result_clear (&bh);
  run_result_clear (&bd);
  g_unlink (bad);
  g_free (bad);

  return failed + test_geometries () + test_threads (TRUE);
}

/* cuda-device-id past the host's GPUs (the device count), in pipelines:
 * device=cuda on device tensors fails at start with the error naming the
 * id and the count; device=auto on host tensors warns once and runs on
 * the CPU with the ROIs of device=cpu. */
static int
test_bad_id (void)
{
  const gint n = cnms_cuda_device_count ();
  RunConfig c = streams[0];
  RunResult r, ref;
  gchar *props = g_strdup_printf ("cuda-device-id=%d", n);
  gchar *want_err = g_strdup_printf ("Could not start the post-processing "
      "backend: device=cuda, but cuda-device-id=%d names no device: this "
      "host has %d CUDA device%s (CUDA build: yes)", n, n, n == 1 ? "" :
      "s");
  gchar *want_warn = g_strdup_printf ("cuda-device-id=%d names no device: "
      "this host has %d CUDA device%s; device=auto runs on the CPU.", n, n,
      n == 1 ? "" : "s");
  int failed = 0;

  c.props = props;
  c.cuda_memory = TRUE;
  expect_error = TRUE;
  run_pipeline (&c, &r);
  expect_error = FALSE;
  if (r.ok || g_strcmp0 (r.error, want_err) != 0) {
    printf ("FAIL: device=cuda cuda-device-id=%d: %s \"%s\", expected the "
        "error \"%s\"\n", n, r.ok ? "EOS," : "error", r.error ? r.error :
        "(none)", want_err);
    failed++;
  } else {
    printf ("device=cuda cuda-device-id=%d with %d devices: \"%s\"\n", n, n,
        r.error);
  }
  run_result_clear (&r);

  c.cuda_memory = FALSE;
  c.device = "auto";
  run_pipeline (&c, &r);
  c.device = "cpu";
  c.props = NULL;
  run_pipeline (&c, &ref);
  c.device = "auto";
  if (!run_ok ("device=auto, bad id", &c, &r, "cpu")
      || !run_ok ("device=cpu", &c, &ref, "cpu")
      || !same_frames ("device=auto, bad id vs cpu", &ref, &r)
      || !same_stats ("device=auto, bad id", &ref, &r)
      || r.n_warnings != 1 || g_strcmp0 (r.nms_warning, want_warn) != 0) {
    printf ("FAIL: device=auto cuda-device-id=%d: %u warnings, the first "
        "\"%s\", expected one: \"%s\"\n", n, r.n_warnings,
        r.nms_warning ? r.nms_warning : "(none)", want_warn);
    failed++;
  } else {
    printf ("device=auto cuda-device-id=%d: backend %s, %u ROIs as "
        "device=cpu, warning \"%s\"\n", n, r.backend, r.n_rois,
        r.nms_warning);
  }
  run_result_clear (&r);
  run_result_clear (&ref);
  g_free (props);
  g_free (want_err);
  g_free (want_warn);
  return failed;
}

/* ---- several GPUs (mode multi) ---- */

/* One pipeline of test_multi's, run in a thread of its own. */
typedef struct {
  gchar *desc;
  RunResult r;
} MultiRun;

static gpointer
multi_thread (gpointer data)
{
  MultiRun *m = data;

  run_desc (m->desc, TRUE, &m->r);
  return NULL;
}

/* The counters of a run without buffers-from-other-cuda-context, whose
 * value goes to *other (G_MAXUINT64 when missing). */
static gchar *
stats_less_other (const RunResult * r, guint64 * other)
{
  GstStructure *s = r->stats ? gst_structure_from_string (r->stats, NULL) :
      NULL;
  gchar *str;

  *other = G_MAXUINT64;
  if (s == NULL)
    return g_strdup ("(none)");
  gst_structure_get_uint64 (s, "buffers-from-other-cuda-context", other);
  gst_structure_remove_field (s, "buffers-from-other-cuda-context");
  str = gst_structure_to_string (s);
  gst_structure_free (s);
  return str;
}

/* A pipeline per GPU, all streaming at once: on GPU k, cudaupload,
 * tensorinject and cudanms in one GstCudaContext of device k, and the ROIs
 * and counters of host tensors on device=cpu; no warning. */
static int
test_multi_per_gpu (gint n_gpus)
{
  MultiRun *m = g_new0 (MultiRun, n_gpus);
  RunResult *ref = g_new0 (RunResult, n_gpus);
  GThread **th = g_new0 (GThread *, n_gpus);
  int failed = 0, k;

  for (k = 0; k < n_gpus; k++) {
    const RunConfig *c = &streams[k % N_THREADS];
    RunConfig ref_cfg = *c;

    ref_cfg.device = "cpu";
    run_pipeline (&ref_cfg, &ref[k]);
    failed += !run_ok ("host tensors on cpu", &ref_cfg, &ref[k], "cpu");
    m[k].desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
        "! video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 "
        "! cudaupload name=up cuda-device-id=%d ! tensorinject name=inj "
        "memory=cuda seed=%u layout=%s data-type=%s ! cudanms name=nms "
        "device=cuda cuda-device-id=%d ! cudadownload cuda-device-id=%d "
        "! fakesink name=sink sync=false", c->frames, k, c->seed, c->layout,
        c->data_type, k, k);
  }
  for (k = 0; k < n_gpus; k++)
    th[k] = g_thread_new ("gpu", multi_thread, &m[k]);
  for (k = 0; k < n_gpus; k++) {
    const RunConfig *c = &streams[k % N_THREADS];
    RunResult *r = &m[k].r;
    gchar *what = g_strdup_printf ("GPU %d (%s %s, device tensors)", k,
        c->layout, c->data_type);
    gboolean ok;

    g_thread_join (th[k]);
    ok = run_ok (what, c, r, "cuda") && same_frames (what, &ref[k], r)
        && same_stats (what, &ref[k], r);
    if (ok && ref[k].n_rois == 0) {
      printf ("FAIL: %s: no ROI at all\n", what);
      ok = FALSE;
    }
    if (ok && (r->contexts[0] == NULL || r->contexts[0] != r->contexts[1]
            || r->contexts[1] != r->contexts[2] || r->devices[2] != k)) {
      printf ("FAIL: %s: CUDA contexts %p %p %p (cudaupload, tensorinject, "
          "cudanms) on devices %d %d %d, expected one on device %d\n", what,
          r->contexts[0], r->contexts[1], r->contexts[2], r->devices[0],
          r->devices[1], r->devices[2], k);
      ok = FALSE;
    }
    if (ok && r->n_warnings != 0) {
      printf ("FAIL: %s: %u warnings, the first \"%s\"\n", what,
          r->n_warnings, r->nms_warning);
      ok = FALSE;
    }
    printf ("multi %s: %u ROIs in %d frames, GstCudaContext %p of device "
        "%d, %s host tensors on cpu\n", what, r->n_rois, c->frames,
        r->contexts[2], r->devices[2], ok ? "==" : "!=");
    failed += !ok;
    run_result_clear (r);
    run_result_clear (&ref[k]);
    g_free (m[k].desc);
    g_free (what);
  }
  g_free (th);
  g_free (ref);
  g_free (m);
  return failed;
}

/* Tensors in CUDA memory of GPU 1 into cudanms on GPU 0 (device=cuda and
 * auto): each is read through host memory, so the ROIs and the other
 * counters are those of host tensors on device=cpu; every buffer is
 * counted in buffers-from-other-cuda-context, and one warning names both
 * GPUs. */
static int
test_multi_cross (void)
{
  static const gchar *devices[] = { "cuda", "auto" };
  const gchar *want = "Tensors in CUDA memory of GPU 1 reach the element on "
      "GPU 0: each is copied through host memory and decoded as a host "
      "tensor.";
  RunConfig ref_cfg = streams[0];
  RunResult ref;
  int failed = 0, d;

  ref_cfg.device = "cpu";
  run_pipeline (&ref_cfg, &ref);
  failed += !run_ok ("host tensors on cpu", &ref_cfg, &ref, "cpu");
  for (d = 0; d < 2; d++) {
    const RunConfig *c = &streams[0];
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d "
        "pattern=black ! video/x-raw,format=NV12,width=1280,height=720,"
        "framerate=30/1 ! cudaupload name=up cuda-device-id=1 "
        "! tensorinject name=inj memory=cuda cuda-device-id=1 seed=%u "
        "layout=%s data-type=%s ! cudanms name=nms device=%s "
        "cuda-device-id=0 ! fakesink name=sink sync=false", c->frames,
        c->seed, c->layout, c->data_type, devices[d]);
    gchar *what = g_strdup_printf ("GPU 1 tensors into device=%s on GPU 0",
        devices[d]);
    gchar *ref_stats, *stats;
    guint64 ref_other, other;
    RunResult r;
    gboolean ok;

    run_desc (desc, TRUE, &r);
    ref_stats = stats_less_other (&ref, &ref_other);
    stats = stats_less_other (&r, &other);
    /* device=auto: the host copy goes to whichever backend timed faster */
    ok = run_ok (what, c, &r, d == 0 || g_strcmp0 (r.backend, "cpu") != 0 ?
        "cuda" : "cpu") && same_frames (what, &ref, &r);
    if (ok && ref.n_rois == 0) {
      printf ("FAIL: %s: no ROI at all\n", what);
      ok = FALSE;
    }
    if (ok && (strcmp (ref_stats, stats) != 0 || ref_other != 0
            || other != (guint64) c->frames)) {
      printf ("FAIL: %s: counters\n  host:   %s, %" G_GUINT64_FORMAT
          " from another context\n  device: %s, %" G_GUINT64_FORMAT
          " from another context (want %d)\n", what, ref_stats, ref_other,
          stats, other, c->frames);
      ok = FALSE;
    }
    if (ok && (r.n_warnings != 1 || g_strcmp0 (r.nms_warning, want) != 0)) {
      printf ("FAIL: %s: %u warnings, the first \"%s\", expected one: "
          "\"%s\"\n", what, r.n_warnings, r.nms_warning ? r.nms_warning :
          "(none)", want);
      ok = FALSE;
    }
    if (ok && (r.devices[0] != 1 || r.devices[1] != 1 || r.devices[2] != 0)) {
      printf ("FAIL: %s: contexts on devices %d %d %d (cudaupload, "
          "tensorinject, cudanms), expected 1 1 0\n", what, r.devices[0],
          r.devices[1], r.devices[2]);
      ok = FALSE;
    }
    printf ("multi %s: %u ROIs in %d frames on %s, %" G_GUINT64_FORMAT
        " buffers from another CUDA context, %u warning \"%s\", %s host "
        "tensors on cpu\n", what, r.n_rois, c->frames,
        r.backend ? r.backend : "-", other, r.n_warnings,
        r.nms_warning ? r.nms_warning : "", ok ? "==" : "!=");
    failed += !ok;
    run_result_clear (&r);
    g_free (ref_stats);
    g_free (stats);
    g_free (desc);
    g_free (what);
  }
  run_result_clear (&ref);
  return failed;
}

/* device=auto with cuda-device-id=-1 follows the context the pipeline
 * offers: in a pipeline on GPU 1 the element joins that context, reads the
 * device tensors in place (backend cuda, nothing from another context)
 * and gives the ROIs and counters of host tensors on device=cpu. */
static int
test_multi_follow (void)
{
  const RunConfig *c = &streams[1];
  RunConfig ref_cfg = *c;
  RunResult r, ref;
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=black "
      "! video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 "
      "! cudaupload name=up cuda-device-id=1 ! tensorinject name=inj "
      "memory=cuda seed=%u layout=%s data-type=%s ! cudanms name=nms "
      "device=auto ! cudadownload cuda-device-id=1 ! fakesink name=sink "
      "sync=false", c->frames, c->seed, c->layout, c->data_type);
  const gchar *what = "device=auto cuda-device-id=-1 in a pipeline on GPU 1";
  gboolean ok;

  ref_cfg.device = "cpu";
  run_pipeline (&ref_cfg, &ref);
  run_desc (desc, TRUE, &r);
  ok = run_ok ("host tensors on cpu", &ref_cfg, &ref, "cpu")
      && run_ok (what, c, &r, "cuda") && same_frames (what, &ref, &r)
      && same_stats (what, &ref, &r);
  if (ok && ref.n_rois == 0) {
    printf ("FAIL: %s: no ROI at all\n", what);
    ok = FALSE;
  }
  if (ok && (r.contexts[0] == NULL || r.contexts[0] != r.contexts[1]
          || r.contexts[1] != r.contexts[2] || r.devices[2] != 1
          || r.n_warnings != 0)) {
    printf ("FAIL: %s: contexts %p %p %p on devices %d %d %d, expected one "
        "on device 1; %u warnings\n", what, r.contexts[0], r.contexts[1],
        r.contexts[2], r.devices[0], r.devices[1], r.devices[2],
        r.n_warnings);
    ok = FALSE;
  }
  printf ("multi %s: %u ROIs, backend %s, GstCudaContext %p of device %d, "
      "%s host tensors on cpu\n", what, r.n_rois, r.backend ? r.backend :
      "-", r.contexts[2], r.devices[2], ok ? "==" : "!=");
  run_result_clear (&r);
  run_result_clear (&ref);
  g_free (desc);
  return !ok;
}

static int
test_multi (void)
{
  const gint n = cnms_cuda_device_count ();

  printf ("multi: %d CUDA devices\n", n);
  return test_multi_per_gpu (n) + test_multi_cross () +
      test_multi_follow ();
}

#ifdef HAVE_GST_BATCH_META
/* ---- batches of many streams (mode batch, GStreamer >= 1.28) ---- */

#define BATCH_STREAMS 2

/* What the probe on a batch pipeline's sink writes down. */
typedef struct {
  GPtrArray *frames[BATCH_STREAMS];     /* gchar *, one line of ROIs per
                                         * frame, by stream index */
  guint n_rois;
  guint batches;                /* batch buffers */
  guint strays;                 /* batch buffers without the meta, objects
                                 * that are no buffer or of no stream of
                                 * ours */
  guint batch_tensors;          /* batch buffers with a tensor */
  guint frame_tensors;          /* frames with a tensor */
} BatchFrames;

/* TRUE when buf carries a tensor (tensorinject's CudanmsTensorMeta). */
static gboolean
has_tensor (GstBuffer * buf)
{
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta (buf, &state)) != NULL)
    if (gst_meta_info_is_custom (m->info)
        && gst_custom_meta_has_name ((GstCustomMeta *) m,
            "CudanmsTensorMeta"))
      return TRUE;
  return FALSE;
}

/* Every frame inside the batch meta of a batch buffer: its ROIs, in its
 * stream's list. */
static GstPadProbeReturn
on_batch (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  BatchFrames *bf = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (buf);
  gsize s, j;

  bf->batches++;
  bf->batch_tensors += has_tensor (buf);
  if (meta == NULL) {
    bf->strays++;
    return GST_PAD_PROBE_OK;
  }
  for (s = 0; s < meta->n_streams; s++) {
    const GstAnalyticsBatchStream *st = &meta->streams[s];

    for (j = 0; st->objects != NULL && j < st->n_objects; j++) {
      if (st->index >= BATCH_STREAMS || st->objects[j] == NULL
          || !GST_IS_BUFFER (st->objects[j])) {
        bf->strays++;
        continue;
      }
      bf->frame_tensors += has_tensor (GST_BUFFER (st->objects[j]));
      g_ptr_array_add (bf->frames[st->index],
          rois_serialise (GST_BUFFER (st->objects[j]), &bf->n_rois));
    }
  }
  return GST_PAD_PROBE_OK;
}

/* A batch pipeline: two streams of one layout, each at its own frame
 * size and frame count. */
typedef struct {
  RunConfig stream[BATCH_STREAMS];
  gint size[BATCH_STREAMS][2];  /* width, height */
  gboolean batch_tensor;        /* tensorbatch batch-tensor= */
} BatchCase;

/* The batch of streams[i] and the other stream of its layout in
 * streams[], in the data type of streams[i] (a batch's frames agree in
 * layout and data type: the library fails a batch that mixes them, and
 * its frames pass without ROIs); yolov8 at 1280x720 and 640x480, yolov5
 * at 1920x1080 and 800x600; the second stream 15 frames shorter (the
 * last batches hold the first stream's frames alone). */
static void
batch_case_init (BatchCase * bc, gint i)
{
  static const gint sizes[2][BATCH_STREAMS][2] = {
    {{1280, 720}, {640, 480}},
    {{1920, 1080}, {800, 600}},
  };
  gint k;

  memset (bc, 0, sizeof *bc);
  for (k = 0; k < BATCH_STREAMS; k++) {
    bc->stream[k] = streams[(i + 2 * k) % N_THREADS];
    bc->stream[k].data_type = streams[i].data_type;
    bc->stream[k].cuda_memory = TRUE;
    bc->size[k][0] = sizes[i % 2][k][0];
    bc->size[k][1] = sizes[i % 2][k][1];
  }
  bc->stream[1].frames -= 15;
}

/* One batch case against each stream alone on host tensors on
 * device=cpu; returns the failures. */
static int
test_batch_case (const BatchCase * bc)
{
  GString *desc = g_string_new (NULL);
  RunResult ref[BATCH_STREAMS], r;
  BatchFrames bf;
  gchar *what;
  guint ref_rois = 0;
  gboolean ok = TRUE;
  gint k;

  memset (&bf, 0, sizeof bf);
  what = g_strdup_printf ("batch %s %s %d streams (seeds %u+%u) device "
      "tensors%s", bc->stream[0].layout, bc->stream[0].data_type,
      BATCH_STREAMS, bc->stream[0].seed, bc->stream[1].seed,
      bc->batch_tensor ? ", batch-tensor=true (a [B, ...] host tensor)" :
      "");
  g_string_append_printf (desc, "tensorbatch name=b frames=2 "
      "batch-tensor=%s ! cudanms name=nms device=cuda ! fakesink name=sink "
      "sync=false", bc->batch_tensor ? "true" : "false");
  for (k = 0; k < BATCH_STREAMS; k++) {
    const RunConfig *c = &bc->stream[k];
    RunConfig ref_cfg = *c;

    g_string_append_printf (desc, " videotestsrc num-buffers=%d "
        "pattern=black ! video/x-raw,format=NV12,width=%d,height=%d,"
        "framerate=30/1 ! cudaupload ! tensorinject memory=cuda seed=%u "
        "layout=%s data-type=%s ! b.sink_%d", c->frames, bc->size[k][0],
        bc->size[k][1], c->seed, c->layout, c->data_type, k);
    ref_cfg.device = "cpu";
    ref_cfg.cuda_memory = FALSE;
    run_pipeline_sized (&ref_cfg, bc->size[k][0], bc->size[k][1], &ref[k]);
    if (!run_ok ("host tensors on cpu", &ref_cfg, &ref[k], "cpu"))
      ok = FALSE;
    ref_rois += ref[k].n_rois;
    bf.frames[k] = g_ptr_array_new_with_free_func (g_free);
  }

  /* the batch's frames carry no tensor with batch-tensor=true: the ROIs
   * come from the batch buffer's [B, ...] tensor */
  run_desc_probe (desc->str, FALSE, on_batch, &bf, &r);
  if (!r.ok) {
    ok = FALSE;
  } else if (g_strcmp0 (r.backend, "cuda") != 0) {
    printf ("FAIL: %s: backend \"%s\", expected \"cuda\"\n", what,
        r.backend ? r.backend : "(null)");
    ok = FALSE;
  }
  for (k = 0; ok && k < BATCH_STREAMS; k++) {
    RunResult got;
    gchar *sw = g_strdup_printf ("%s, stream %d (%s %s %dx%d)", what, k,
        bc->stream[k].layout, bc->stream[k].data_type, bc->size[k][0],
        bc->size[k][1]);

    /* the stream's frames, as a run of its own */
    memset (&got, 0, sizeof got);
    got.frames = bf.frames[k];
    ok = same_frames (sw, &ref[k], &got);
    g_free (sw);
  }
  if (ok && ref_rois == 0) {
    printf ("FAIL: %s: no ROI at all, nothing was compared\n", what);
    ok = FALSE;
  }
  if (ok && (r.batches == 0 || r.batches != bf.batches || bf.strays != 0)) {
    printf ("FAIL: %s: the element counted %" G_GUINT64_FORMAT " batches, "
        "the sink saw %u; %u stray objects or batches without the meta\n",
        what, r.batches, bf.batches, bf.strays);
    ok = FALSE;
  }
  /* the tensors where tensorbatch puts them: on the frames, or (moved)
   * one on each batch buffer */
  if (ok && (bc->batch_tensor ? bf.batch_tensors != bf.batches
          || bf.frame_tensors != 0 : bf.batch_tensors != 0
          || bf.frame_tensors != bf.frames[0]->len + bf.frames[1]->len)) {
    printf ("FAIL: %s: %u of %u batch buffers and %u of %u frames carry a "
        "tensor\n", what, bf.batch_tensors, bf.batches, bf.frame_tensors,
        bf.frames[0]->len + bf.frames[1]->len);
    ok = FALSE;
  }
  if (ok && (r.n_warnings != 0 || r.other_context != 0)) {
    printf ("FAIL: %s: %u warnings (the first \"%s\"), %" G_GUINT64_FORMAT
        " tensors from another CUDA context\n", what, r.n_warnings,
        r.nms_warning ? r.nms_warning : "", r.other_context);
    ok = FALSE;
  }
  printf ("%s: %u ROIs in %u+%u frames, %" G_GUINT64_FORMAT " batches, "
      "backend %s, %s host tensors on cpu\n", what, bf.n_rois,
      bf.frames[0]->len, bf.frames[1]->len, r.batches,
      r.backend ? r.backend : "-", ok ? "==" : "!=");
  for (k = 0; k < BATCH_STREAMS; k++) {
    run_result_clear (&ref[k]);
    g_ptr_array_unref (bf.frames[k]);
  }
  run_result_clear (&r);
  g_string_free (desc, TRUE);
  g_free (what);
  return !ok;
}

/* Two streams of one layout and data type batched (tensorbatch frames=2)
 * into cudanms device=cuda, their tensors in device memory, frame sizes
 * differing: yolov8 and yolov5, float32 and float16; then the yolov8
 * float32 streams with batch-tensor=true (one [B, ...] host tensor a
 * batch). */
static int
test_batch (void)
{
  BatchCase bc;
  int failed = 0;
  gint i;

  for (i = 0; i < N_THREADS; i++) {
    batch_case_init (&bc, i);
    failed += test_batch_case (&bc);
  }
  batch_case_init (&bc, 0);
  bc.batch_tensor = TRUE;
  failed += test_batch_case (&bc);
  return failed;
}
#endif

int
main (int argc, char **argv)
{
  const gchar *mode = argc > 1 ? argv[1] : "";
  int failed;

  gst_init (&argc, &argv);
  if (strcmp (mode, "auto") == 0) {
    failed = test_auto ();
  } else if (strcmp (mode, "parity") == 0 || strcmp (mode, "threads") == 0
      || strcmp (mode, "device") == 0 || strcmp (mode, "multi") == 0
      || strcmp (mode, "bad-id") == 0
      || g_strcmp0 (mode, BATCH_MODE) == 0) {
    GstElementFactory *up = gst_element_factory_find ("cudaupload");
    GstElementFactory *batch = gst_element_factory_find ("tensorbatch");
    const gint need = mode[0] == 'm' ? 2 : 1;
    const gboolean batched = g_strcmp0 (mode, BATCH_MODE) == 0;
    if (batch != NULL)
      gst_object_unref (batch);
    if (cnms_cuda_device_count () < need) {
      printf ("element %s: SKIP, %d CUDA devices (%d needed)\n", mode,
          MAX (cnms_cuda_device_count (), 0), need);
      if (up != NULL)
        gst_object_unref (up);
      return SKIP;
    }
    if ((mode[0] == 'd' || mode[0] == 'm' || mode[0] == 'b') && up == NULL) {
      printf ("element %s: SKIP, no cudaupload (nvcodec)\n", mode);
      return SKIP;
    }
    if (up != NULL)
      gst_object_unref (up);
    if (batched && batch == NULL) {
      printf ("element %s: SKIP, no tensorbatch (tensorinject plugin)\n",
          mode);
      return SKIP;
    }
#ifdef HAVE_GST_BATCH_META
    if (batched)
      failed = test_batch ();
    else
#endif
      failed = mode[0] == 'p' ? test_parity () : mode[0] == 't' ?
          test_threads (FALSE) : mode[0] == 'm' ? test_multi () :
          mode[0] == 'b' ? test_bad_id () : test_device ();
  } else {
    printf ("usage: test-gpu-element parity|threads|auto|device|multi|"
        "bad-id" BATCH_USAGE "\n");
    return 2;
  }
  printf ("element %s: %s\n", mode, failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
