/* bench-element: frames/s of the cudanms element, 1 and K instances, and
 * (GStreamer >= 1.28) K streams batched into one.
 *
 * usage: bench-element DATA_DIR OUT_JSON [--frames N] [--warmup N]
 *          [--instances 1,8] [--devices cuda-device,cuda,cpu,auto,
 *          cuda-device:gpus] [--rounds R] [--batch [S]]
 *
 * The K pipelines of a case share one GstCudaContext, made here and set on
 * each pipeline (gst_element_set_context), as an application that runs
 * several pipelines on one GPU should. Suffixes of a device name:
 *   :own   each pipeline makes its own context instead (K CUDA contexts,
 *          which the GPU time-slices);
 *   :bare  cudanms roi-params=false (ROIs without their structure);
 *   :analytics  cudanms attach-meta=analytics (GStreamer >= 1.24: one
 *          GstAnalyticsODMtd per box instead of the ROI metas);
 *   :gpus  one pipeline per GPU: instance i runs on GPU i (cudanms and,
 *          for cuda-device, tensorinject cuda-device-id=i, in a context of
 *          that GPU shared by the case's pipelines on it); the case runs
 *          with 1 instance (GPU 0) and with N, the host's device count,
 *          whatever --instances says; with fewer than 2 GPUs it is
 *          skipped (a record with its reason). Its records carry "gpus".
 *   :batch the K instances are K streams of one pipeline, gathered by
 *          tensorbatch frames=1 into batch buffers (GStreamer >= 1.28's
 *          GstAnalyticsBatchMeta: each batch holds one frame of every
 *          stream) that one cudanms decodes in one call:
 *            appsrc name=src0 ! [tensorinject memory=cuda ...] ! b.sink_0
 *            ...  (K branches)
 *            tensorbatch name=b frames=1 ! cudanms ! fakesink
 *          each appsrc fed from its own thread as below; frames/s is all
 *          streams' frames over the span from the first timed batch to the
 *          last, and the time in cudanms a frame is each batch's time in
 *          the element (its sink pad to its src pad) over the batch's
 *          frames. Its records say "instances": 1 (one pipeline) and
 *          "streams": K, "fps_instance_*" being a stream's frames/s.
 *          Where GStreamer < 1.28 or tensorinject has no tensorbatch, a
 *          record with the reason. Not with :gpus.
 *
 * --batch S (S default 32): the batch cases alone (with --devices, after
 * those): cuda-device:analytics:batch (device tensors, the main case) and
 * cuda:analytics:batch (host tensors), each with S streams, and as their
 * anchor in the same run the same S streams as S single-frame pipelines
 * (cuda-device:analytics and cuda:analytics, S instances); then a line
 * per pair: frames/s and us a frame in cudanms, batched and not, beside
 * the analytics metas of a frame alone (the "meta" record).
 *
 * Probes on cudanms's pads also time each buffer inside the element
 * (from its sink pad to its src pad: the tensor read, the backend, the
 * metas), "us_in_element", the mean over the instances of the median
 * round; the rest of a frame's period goes to appsrc, tensorinject,
 * fakesink and the handovers between threads.
 *
 * It also times the output stage alone: the ROI metas of one frame's
 * kept boxes (the CPU backend's, on yolov8.npy), attached to a buffer as
 * the element does (gst_cudanms_attach_detections) and freed with it,
 * with and without their "detection" structures, and (GStreamer >= 1.24)
 * the analytics metas instead ("meta" records).
 *
 * Every element record also carries "us_meta_alone": the "meta" record's
 * median for its kind of metas (ROI metas with or without their
 * structures, :bare, or the analytics metas, :analytics).
 *
 * --rounds: every (device, instances) case runs R times, the cases taking
 * turns round by round (so that a change in the host's load falls on all
 * of them alike); the JSON gives the median round's figures, with the
 * lowest and highest total of the rounds.
 *
 * Each instance is one pipeline in this process:
 *   appsrc ! cudanms device=D ! fakesink sync=false
 * fed from its own thread with shallow copies of one prebuilt 640x640 GRAY8
 * buffer that carries yolov8.npy ([1,84,8400] float32, host memory) as a
 * CudanmsTensorMeta, the way an inference element would attach it (the
 * copy shares the video memory and the tensor data; only the metas are
 * copied); or, for D = cuda-device (the tensor in device memory, as a GPU
 * inference element leaves it):
 *   appsrc ! tensorinject memory=cuda location=DATA_DIR/yolov8.npy
 *     ! cudanms device=auto ! fakesink sync=false
 * where tensorinject uploads the tensor once and attaches the same
 * GstCudaMemory to every frame, and the appsrc frames carry no tensor.
 * A pad probe on each fakesink timestamps the first buffer after
 * the warm-up and the last one. frames/s per instance is frames over its
 * own span; the total is all frames over the span from the earliest first
 * to the latest last buffer. Needs GST_PLUGIN_PATH_1_0 to reach the
 * build's gst/ folder (and core + plugins-base for appsrc and fakesink). */
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif
#ifdef HAVE_GST_BATCH_META
#include <gst/analytics/gstanalyticsbatchmeta.h>
#endif
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "bench_common.h"
#include "gstcudanmsoutput.h"

#define FRAME_SIZE 640
/* --batch without S: the streams of a batch case */
#define DEFAULT_BATCH_STREAMS 32

/* What the probes of a pipeline measure, written by its one streaming
 * thread after cudanms. A batched pipeline's buffers are batches (a frame
 * of each of its streams: tensorbatch frames=1); another's are frames of
 * its one stream. */
typedef struct
{
  gboolean batched;
  int streams, warmup, frames;  /* warmup, frames: a stream's */
  volatile gint seen;           /* frames past fakesink */
  double t_first, t_last;       /* the first and last timed frames' */
  /* time inside cudanms: its sink pad's probe to its src pad's, summed
   * over the timed buffers, and their frames */
  double t_enter, in_sum;
  guint enter_frames, in_frames;
  /* cudanms's stats at the first timed buffer: buffers, backend-time and
   * output-time (ns), for the means of the timed ones */
  GstElement *nms;
  guint64 stats0[3];
  guint rois;                   /* the boxes on the first timed frame */
} timing;

typedef struct {
  GstElement *pipeline;
  GstBuffer *proto;
  /* its appsrc's name; batch: a stream of the pipeline, whose EOS the
   * case waits for, not the thread */
  gchar *src;
  gboolean batched;
  int warmup, frames;
  timing t;                     /* its pipeline's; batch: unused */
  guint64 timed[3];             /* t's stats0 over the timed buffers */
  GThread *thread;
  gboolean failed;
} instance;

/* buffers, backend-time, output-time of el's stats into v */
static void
read_stats (GstElement *el, guint64 v[3])
{
  static const char *const names[3] = { "buffers", "backend-time",
    "output-time"
  };
  GstStructure *s = NULL;
  int i;

  g_object_get (el, "stats", &s, NULL);
  for (i = 0; i < 3; i++)
    if (s == NULL || !gst_structure_get_uint64 (s, names[i], &v[i]))
      v[i] = 0;
  if (s != NULL)
    gst_structure_free (s);
}

/* The start line: every pushing thread waits for it. */
static GMutex start_lock;
static GCond start_cond;
static gboolean started;

/* The boxes on a frame: its ROI metas, or its analytics metas. */
static guint
frame_rois (GstBuffer *buf)
{
  GType roi = g_type_from_name ("GstVideoRegionOfInterestMetaAPI");
  guint n = roi ? gst_buffer_get_n_meta (buf, roi) : 0;

#ifdef HAVE_GST_ANALYTICS
  if (n == 0 && gst_buffer_get_analytics_relation_meta (buf))
    n = gst_analytics_relation_get_length
        (gst_buffer_get_analytics_relation_meta (buf));
#endif
  return n;
}

#ifdef HAVE_GST_BATCH_META
/* The frames of a batch buffer (every stream's buffers in its
 * GstAnalyticsBatchMeta); *first: the first of them, or NULL. */
static guint
batch_frames (GstBuffer *buf, GstBuffer **first)
{
  GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (buf);
  guint n = 0;
  gsize s, f;

  if (first != NULL)
    *first = NULL;
  for (s = 0; meta != NULL && s < meta->n_streams; s++) {
    const GstAnalyticsBatchStream *st = &meta->streams[s];

    for (f = 0; st->objects != NULL && f < st->n_objects; f++) {
      if (st->objects[f] == NULL || !GST_IS_BUFFER (st->objects[f]))
        continue;
      if (first != NULL && *first == NULL)
        *first = GST_BUFFER (st->objects[f]);
      n++;
    }
  }
  return n;
}
#endif

/* The frames of a buffer of t's pipeline: a batch's, or 1 (buf itself);
 * *first: the first of them, or NULL. */
static guint
buffer_frames (const timing *t, GstBuffer *buf, GstBuffer **first)
{
#ifdef HAVE_GST_BATCH_META
  if (t->batched)
    return batch_frames (buf, first);
#else
  (void) t;
#endif
  if (first != NULL)
    *first = buf;
  return 1;
}

/* On fakesink's sink pad: the span from the first timed frame to the
 * last, and cudanms's stats at the first. */
static GstPadProbeReturn
on_sink (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  timing *t = user_data;
  const gint start = t->warmup * t->streams;
  const gint end = (t->warmup + t->frames) * t->streams;
  GstBuffer *first;
  const gint n = (gint) buffer_frames (t, GST_PAD_PROBE_INFO_BUFFER (info),
      &first);
  const gint before = g_atomic_int_add (&t->seen, n);

  (void) pad;
  if (before <= start && before + n > start) {
    t->t_first = bench_now_us ();
    t->rois = first != NULL ? frame_rois (first) : 0;
    read_stats (t->nms, t->stats0);
  }
  if (before < end && before + n >= end)
    t->t_last = bench_now_us ();
  return GST_PAD_PROBE_OK;
}

/* On cudanms's sink pad: a buffer goes in. */
static GstPadProbeReturn
on_enter (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  timing *t = user_data;

  (void) pad;
  t->t_enter = bench_now_us ();
  t->enter_frames = buffer_frames (t, GST_PAD_PROBE_INFO_BUFFER (info), NULL);
  return GST_PAD_PROBE_OK;
}

/* On cudanms's src pad: the buffer comes out. */
static GstPadProbeReturn
on_leave (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  timing *t = user_data;

  (void) pad;
  (void) info;
  /* seen counts the frames past fakesink: this buffer's come next */
  if (g_atomic_int_get (&t->seen) >= t->warmup * t->streams) {
    t->in_sum += bench_now_us () - t->t_enter;
    t->in_frames += t->enter_frames;
  }
  return GST_PAD_PROBE_OK;
}

/* Puts t's probes on pipeline's fakesink "sink" and on its cudanms "nms"
 * (t->nms: a reference to it). */
static void
add_probes (GstElement *pipeline, timing *t)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_sink, t, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  t->nms = gst_bin_get_by_name (GST_BIN (pipeline), "nms");
  pad = gst_element_get_static_pad (t->nms, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_enter, t, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (t->nms, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_leave, t, NULL);
  gst_object_unref (pad);
}

/* Waits for pipeline's EOS (600 s at the most); FALSE, said on stderr,
 * where an error or the time-out comes first. */
static gboolean
wait_eos (GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  const gboolean ok = msg != NULL
      && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;

  if (!ok) {
    GError *err = NULL;

    if (msg != NULL)
      gst_message_parse_error (msg, &err, NULL);
    fprintf (stderr, "bench-element: pipeline failed: %s\n",
        err ? err->message : "timeout");
    g_clear_error (&err);
  }
  if (msg != NULL)
    gst_message_unref (msg);
  gst_object_unref (bus);
  return ok;
}

static gpointer
push_frames (gpointer data)
{
  instance *in = data;
  GstElement *src = gst_bin_get_by_name (GST_BIN (in->pipeline), in->src);
  GstFlowReturn ret = GST_FLOW_OK;
  int i;

  g_mutex_lock (&start_lock);
  while (!started)
    g_cond_wait (&start_cond, &start_lock);
  g_mutex_unlock (&start_lock);

  for (i = 0; i < in->warmup + in->frames && ret == GST_FLOW_OK; i++) {
    GstBuffer *buf = gst_buffer_copy (in->proto);

    GST_BUFFER_PTS (buf) = (GstClockTime) i * (GST_SECOND / 30);
    g_signal_emit_by_name (src, "push-buffer", buf, &ret);
    gst_buffer_unref (buf);
  }
  g_signal_emit_by_name (src, "end-of-stream", &ret);
  gst_object_unref (src);
  /* a batch's streams: the case waits for the pipeline's EOS */
  if (in->batched)
    return NULL;
  if (!wait_eos (in->pipeline))
    in->failed = TRUE;
  return NULL;
}

static GstBuffer *
make_proto (const cnms_npy *t)
{
  static const gchar *tags[] = { NULL };
  GstBuffer *buf = gst_buffer_new_allocate (NULL, FRAME_SIZE * FRAME_SIZE,
      NULL);
  GstBuffer *data = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY,
      t->data, t->size, 0, t->size, NULL, NULL);
  GValue dims = G_VALUE_INIT, v = G_VALUE_INIT;
  GstCustomMeta *meta;
  GstStructure *s;
  int d;

  gst_buffer_memset (buf, 0, 0, FRAME_SIZE * FRAME_SIZE);
  if (gst_meta_get_info ("CudanmsTensorMeta") == NULL)
    gst_meta_register_custom ("CudanmsTensorMeta", tags, NULL, NULL, NULL);
  meta = gst_buffer_add_custom_meta (buf, "CudanmsTensorMeta");
  s = gst_custom_meta_get_structure (meta);
  g_value_init (&dims, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_INT64);
  for (d = 0; d < t->n_dims; d++) {
    g_value_set_int64 (&v, t->dims[d]);
    gst_value_array_append_value (&dims, &v);
  }
  gst_structure_set (s, "data-type", G_TYPE_STRING, "float32",
      "dims-order", G_TYPE_STRING, "row-major",
      "data", GST_TYPE_BUFFER, data, NULL);
  gst_structure_set_value (s, "dims", &dims);
  g_value_unset (&v);
  g_value_unset (&dims);
  gst_buffer_unref (data);
  return buf;
}

/* One round of one case. */
typedef struct
{
  double total;                 /* frames/s of all instances together */
  double med, min;              /* frames/s per instance */
  double in_us;                 /* us a frame inside cudanms (instance mean) */
  double backend_us, output_us; /* of it, the backend's call and the metas */
  guint rois;
  const char *error;
} result;

/* The "meta" records' medians (us a frame): ROI metas with their
 * structures, without (:bare), analytics metas (:analytics); 0 where not
 * measured. */
static double meta_alone_us[3];

/* The metas alone of a device name's kind: its "meta" record's median. */
static double
meta_alone (const char *device)
{
  if (strstr (device, ":analytics") != NULL)
    return meta_alone_us[2];
  return meta_alone_us[strstr (device, ":bare") != NULL ? 1 : 0];
}

/* One case's JSON record: round r of rounds, whose totals went from
 * lowest to highest. */
static void
record_one (bench_json *j, const char *device, int k, int frames,
    const result *r, int rounds, double lowest, double highest)
{
  /* :batch: k streams in one pipeline */
  const gboolean batched = strstr (device, ":batch") != NULL;

  bench_json_begin (j);
  bench_json_str (j, "bench", "element");
  bench_json_str (j, "device", device);
  bench_json_num (j, "instances", batched ? 1 : k);
  if (batched)
    bench_json_num (j, "streams", k);
  /* :gpus: one pipeline per GPU */
  if (strstr (device, ":gpus") != NULL)
    bench_json_num (j, "gpus", k);
  bench_json_num (j, "frames", frames);
  if (r->error != NULL) {
    bench_json_str (j, "error", r->error);
    printf ("element device=%-4s %s=%d: %s\n", device, batched ? "streams" :
        "instances", k, r->error);
  } else {
    bench_json_num (j, "rounds", rounds);
    bench_json_num (j, "fps_total", r->total);
    bench_json_num (j, "fps_total_lowest", lowest);
    bench_json_num (j, "fps_total_highest", highest);
    bench_json_num (j, "fps_instance_med", r->med);
    bench_json_num (j, "fps_instance_min", r->min);
    bench_json_num (j, "rois_per_frame", r->rois);
    bench_json_num (j, "us_in_element", r->in_us);
    bench_json_num (j, "us_backend", r->backend_us);
    bench_json_num (j, "us_output", r->output_us);
    bench_json_num (j, "us_meta_alone", meta_alone (device));
    if (batched)
      printf ("element device=%-4s streams=%d, one pipeline, batches of 1 "
          "frame a stream: %9.0f frames/s total (median of %d rounds: %.0f "
          ".. %.0f), %9.0f per stream, %u boxes a frame, %.1f us a frame in "
          "cudanms (backend %.1f, metas %.1f; the metas alone %.1f)\n",
          device, k, r->total, rounds, lowest, highest, r->med, r->rois,
          r->in_us, r->backend_us, r->output_us, meta_alone (device));
    else
      printf ("element device=%-4s instances=%d: %9.0f frames/s total "
          "(median of %d rounds: %.0f .. %.0f), %9.0f per instance "
          "(median), %u boxes a frame, %.1f us a frame in cudanms (backend "
          "%.1f, metas %.1f)\n", device, k, r->total, rounds, lowest,
          highest, r->med, r->rois, r->in_us, r->backend_us, r->output_us);
  }
  bench_json_end (j);
}

static int
cmp_total (const void *a, const void *b)
{
  const double x = ((const result *) a)->total;
  const double y = ((const result *) b)->total;

  return x < y ? -1 : x > y;
}

/* Records the median round of rounds (sorted in place by total). */
static void
record (bench_json *j, const char *device, int k, int frames, result *r,
    int rounds)
{
  const result *m;
  int i;

  for (i = 0; i < rounds; i++)
    if (r[i].error != NULL) {
      record_one (j, device, k, frames, &r[i], 1, 0, 0);
      return;
    }
  qsort (r, (size_t) rounds, sizeof *r, cmp_total);
  m = &r[rounds / 2];
  record_one (j, device, k, frames, m, rounds, r[0].total,
      r[rounds - 1].total);
}

/* The one CUDA context of device that the pipelines of a case on that
 * device share (made on first use; NULL without gst-cuda or the
 * device). */
#define MAX_GPUS 64
static GstContext *
shared_cuda_context (int device)
{
#ifdef HAVE_GST_CUDA
  static GstContext *context[MAX_GPUS];

  if (device < 0 || device >= MAX_GPUS)
    return NULL;
  if (context[device] == NULL && gst_cuda_load_library ()) {
    GstCudaContext *cuda = gst_cuda_context_new (device);

    if (cuda != NULL) {
      context[device] = gst_context_new_cuda_context (cuda);
      gst_object_unref (cuda);
    }
  }
  return context[device];
#else
  (void) device;
  return NULL;
#endif
}

/* One round of a :batch case (see the top) into *res: k streams of one
 * pipeline through tensorbatch frames=1 into one cudanms; name as run's. */
static void
run_batch (result *res, GstBuffer *proto, const char *dir, const char *name,
    int k, int warmup, int frames)
{
#ifdef HAVE_GST_BATCH_META
  gchar **parts = g_strsplit (name, ":", -1);
  const gchar *device = parts[0];
  const gboolean on_device = strcmp (device, "cuda-device") == 0;
  const gboolean own = g_strv_contains ((const gchar * const *) parts, "own");
  const gboolean no_params = g_strv_contains ((const gchar * const *) parts,
      "bare");
  const gboolean analytics = g_strv_contains ((const gchar * const *) parts,
      "analytics");
  GstElementFactory *batcher = gst_element_factory_find ("tensorbatch");
  GstContext *shared = own ? NULL : shared_cuda_context (0);
  instance *in = g_new0 (instance, k);
  GString *desc = g_string_new (NULL);
  /* the frames of cuda-device runs: tensorinject attaches their tensor */
  GstBuffer *bare = gst_buffer_new ();
  GstElement *pipeline = NULL;
  GError *err = NULL;
  timing b;
  const char *error = NULL;
  int i;

  memset (res, 0, sizeof *res);
  memset (&b, 0, sizeof b);
  b.batched = TRUE;
  b.streams = k;
  b.warmup = warmup;
  b.frames = frames;
  gst_buffer_append_memory (bare, gst_buffer_get_all_memory (proto));
  g_string_append_printf (desc, "tensorbatch name=b frames=1 ! cudanms "
      "name=nms device=%s roi-params=%s attach-meta=%s ! fakesink name=sink "
      "sync=false async=false", on_device ? "auto" : device,
      no_params ? "false" : "true", analytics ? "analytics" : "roi");
  for (i = 0; i < k; i++) {
    gchar *inject = on_device ? g_strdup_printf ("tensorinject memory=cuda "
        "location=%s/yolov8.npy ! ", dir) : g_strdup ("");

    g_string_append_printf (desc, " appsrc name=src%d format=time "
        "block=true max-bytes=0 max-buffers=32 caps=video/x-raw,format=GRAY8,"
        "width=%d,height=%d,framerate=30/1 ! %sb.sink_%d", i, FRAME_SIZE,
        FRAME_SIZE, inject, i);
    g_free (inject);
  }

  if (g_strv_contains ((const gchar * const *) parts, "gpus"))
    error = "skipped: :batch runs one pipeline, not one per GPU (:gpus)";
  else if (batcher == NULL)
    error = "skipped: no tensorbatch element (tensorinject built with "
        "GStreamer >= 1.28)";
  else if ((pipeline = gst_parse_launch (desc->str, &err)) == NULL) {
    fprintf (stderr, "bench-element: %s\n", err ? err->message : "?");
    g_clear_error (&err);
    error = "pipeline could not be built (is GST_PLUGIN_PATH_1_0 set?)";
  }
  if (error == NULL) {
    g_clear_error (&err);
    add_probes (pipeline, &b);
    if (shared != NULL)
      gst_element_set_context (pipeline, shared);
    if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE)
      error = "pipeline refused to start";
  }

  /* a pushing thread per stream; the pipeline's EOS ends the round */
  started = FALSE;
  for (i = 0; i < k && error == NULL; i++) {
    in[i].pipeline = pipeline;
    in[i].proto = on_device ? bare : proto;
    in[i].src = g_strdup_printf ("src%d", i);
    in[i].batched = TRUE;
    in[i].warmup = warmup;
    in[i].frames = frames;
    in[i].thread = g_thread_new ("push", push_frames, &in[i]);
  }
  g_mutex_lock (&start_lock);
  started = TRUE;
  g_cond_broadcast (&start_cond);
  g_mutex_unlock (&start_lock);
  if (error == NULL && !wait_eos (pipeline)) {
    error = "the pipeline failed before the last frame";
    /* flushing: the pushing threads blocked in appsrc return */
    gst_element_set_state (pipeline, GST_STATE_NULL);
  }
  for (i = 0; i < k; i++) {
    if (in[i].thread != NULL)
      g_thread_join (in[i].thread);
    g_free (in[i].src);
  }
  if (error == NULL && g_atomic_int_get (&b.seen) < (warmup + frames) * k)
    error = "a stream failed before the last frame";
  if (error == NULL) {
    guint64 v[3];
    double n;

    read_stats (b.nms, v);
    n = (double) (v[0] - b.stats0[0]);
    res->total = (double) k * frames / ((b.t_last - b.t_first) * 1e-6);
    /* a stream's frames/s: every stream has all frames of the span */
    res->med = res->total / k;
    res->min = res->med;
    res->rois = b.rois;
    res->in_us = b.in_frames > 0 ? b.in_sum / b.in_frames : 0;
    if (n > 0) {
      res->backend_us = (double) (v[1] - b.stats0[1]) * 1e-3 / n;
      res->output_us = (double) (v[2] - b.stats0[2]) * 1e-3 / n;
    }
  }
  res->error = error;
  if (b.nms != NULL)
    gst_object_unref (b.nms);
  if (pipeline != NULL) {
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
  }
  if (batcher != NULL)
    gst_object_unref (batcher);
  gst_buffer_unref (bare);
  g_string_free (desc, TRUE);
  g_free (in);
  g_strfreev (parts);
#else
  (void) proto;
  (void) dir;
  (void) name;
  (void) k;
  (void) warmup;
  (void) frames;
  memset (res, 0, sizeof *res);
  res->error = "skipped: batches need GStreamer >= 1.28 "
      "(GstAnalyticsBatchMeta)";
#endif
}

/* One round of a case into *res; name: cuda-device, cuda, cpu or auto,
 * then the suffixes :own, :bare, :analytics and :gpus (see the top;
 * :batch is run_batch's). */
static void
run (result *res, GstBuffer *proto, const char *dir, const char *name,
    int k, int warmup, int frames)
{
  gchar **parts = g_strsplit (name, ":", -1);
  const gchar *device = parts[0];
  const gboolean own = g_strv_contains ((const gchar * const *) parts, "own");
  const gboolean no_params = g_strv_contains ((const gchar * const *) parts,
      "bare");
  const gboolean analytics = g_strv_contains ((const gchar * const *) parts,
      "analytics");
  /* :gpus: instance i on GPU i */
  const gboolean per_gpu = g_strv_contains ((const gchar * const *) parts,
      "gpus");
  instance *in = g_new0 (instance, k);
  double *per = g_new0 (double, k), first = 0, last = 0;
  /* the frames of cuda-device runs: tensorinject attaches their tensor */
  GstBuffer *bare = gst_buffer_new ();
  const char *error = NULL;
  int i;

  /* the video memory of proto, without its tensor meta */
  gst_buffer_append_memory (bare, gst_buffer_get_all_memory (proto));

  started = FALSE;
  for (i = 0; i < k && error == NULL; i++) {
    const gboolean on_device = strcmp (device, "cuda-device") == 0;
    /* the GPU of this instance: its own with :gpus, else any (-1) */
    const int gpu = per_gpu ? i : -1;
    GstContext *shared = own ? NULL : shared_cuda_context (MAX (gpu, 0));
    gchar *inject = on_device ? g_strdup_printf ("tensorinject memory=cuda "
        "cuda-device-id=%d location=%s/yolov8.npy ! ", gpu, dir) :
        g_strdup ("");
    gchar *desc = g_strdup_printf ("appsrc name=src format=time block=true "
        "max-bytes=0 max-buffers=32 caps=video/x-raw,format=GRAY8,width=%d,"
        "height=%d,framerate=30/1 ! %scudanms name=nms device=%s "
        "cuda-device-id=%d roi-params=%s attach-meta=%s ! fakesink "
        "name=sink sync=false async=false", FRAME_SIZE, FRAME_SIZE, inject,
        on_device ? "auto" : device, gpu, no_params ? "false" : "true",
        analytics ? "analytics" : "roi");
    GError *err = NULL;

    g_free (inject);
    in[i].proto = on_device ? bare : proto;
    in[i].src = g_strdup ("src");
    in[i].warmup = warmup;
    in[i].frames = frames;
    in[i].t.streams = 1;
    in[i].t.warmup = warmup;
    in[i].t.frames = frames;
    in[i].pipeline = gst_parse_launch (desc, &err);
    g_free (desc);
    if (in[i].pipeline == NULL) {
      fprintf (stderr, "bench-element: %s\n", err ? err->message : "?");
      g_clear_error (&err);
      error = "pipeline could not be built (is GST_PLUGIN_PATH_1_0 set?)";
      break;
    }
    add_probes (in[i].pipeline, &in[i].t);
    if (shared != NULL)
      gst_element_set_context (in[i].pipeline, shared);
    if (gst_element_set_state (in[i].pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE)
      error = "pipeline refused to start";
    else
      in[i].thread = g_thread_new ("push", push_frames, &in[i]);
  }

  g_mutex_lock (&start_lock);
  started = TRUE;
  g_cond_broadcast (&start_cond);
  g_mutex_unlock (&start_lock);
  for (i = 0; i < k; i++) {
    if (in[i].thread != NULL)
      g_thread_join (in[i].thread);
    g_free (in[i].src);
    if (in[i].failed || g_atomic_int_get (&in[i].t.seen) < warmup + frames)
      error = error ? error : "a pipeline failed before the last frame";
    if (in[i].t.nms != NULL) {
      guint64 v[3];
      int j;

      read_stats (in[i].t.nms, v);
      for (j = 0; j < 3; j++)
        in[i].timed[j] = v[j] - in[i].t.stats0[j];
      gst_object_unref (in[i].t.nms);
    }
    if (in[i].pipeline != NULL) {
      gst_element_set_state (in[i].pipeline, GST_STATE_NULL);
      gst_object_unref (in[i].pipeline);
    }
  }
  if (error == NULL) {
    for (i = 0; i < k; i++) {
      per[i] = frames / ((in[i].t.t_last - in[i].t.t_first) * 1e-6);
      if (i == 0 || in[i].t.t_first < first)
        first = in[i].t.t_first;
      if (i == 0 || in[i].t.t_last > last)
        last = in[i].t.t_last;
    }
  }
  memset (res, 0, sizeof *res);
  res->error = error;
  if (error == NULL) {
    res->total = (double) k * frames / ((last - first) * 1e-6);
    bench_stats (per, k, &res->med, &res->min);
    res->rois = in[0].t.rois;
    for (i = 0; i < k; i++) {
      const double n = (double) in[i].timed[0];

      if (in[i].t.in_frames > 0)
        res->in_us += in[i].t.in_sum / in[i].t.in_frames / k;
      if (n > 0) {
        res->backend_us += in[i].timed[1] * 1e-3 / n / k;
        res->output_us += in[i].timed[2] * 1e-3 / n / k;
      }
    }
  }
  gst_buffer_unref (bare);
  g_free (per);
  g_free (in);
  g_strfreev (parts);
}

/* A "meta" record: microseconds per frame to attach the metas of the kept
 * boxes of yolov8.npy (CPU backend) to a buffer and free them: ROI metas
 * with (params) or without their "detection" structures, or (which =
 * analytics, GStreamer >= 1.24) one GstAnalyticsODMtd per box. */
static void
bench_meta (bench_json *j, const cnms_npy *npy, GstCudanmsAttachMeta which,
    gboolean params)
{
  const int iters = 3000;
  cnms_tensor t = bench_host_tensor (npy);
  const cnms_det *dets = NULL;
  const cnms_layout_desc *layout;
  GstCudanmsLabels labels;
  cnms_ctx *ctx = bench_ctx_new (CNMS_BACKEND_CPU);
  cnms_params p;
  double *us = g_new (double, iters), med, min;
  int n = 0, i;

  cnms_params_init (&p);
  if (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_AUTO, &p, &dets, &n)
      != CNMS_OK) {
    fprintf (stderr, "bench-element: %s\n", cnms_ctx_error (ctx));
    exit (1);
  }
  layout = cnms_layout_info (cnms_ctx_report (ctx)->shape.layout);
  gst_cudanms_labels_init (&labels);
  for (i = 0; i < iters; i++) {
    GstBuffer *buf = gst_buffer_new ();
    double t0 = bench_now_us ();

    gst_cudanms_attach_detections (buf, &labels, layout, dets, n, NULL,
        NULL, FRAME_SIZE, FRAME_SIZE, which, params, "cudanms0");
    gst_buffer_unref (buf);
    us[i] = bench_now_us () - t0;
  }
  bench_json_begin (j);
  bench_json_str (j, "bench", "meta");
  if (which == GST_CUDANMS_ATTACH_META_ROI)
    bench_json_num (j, "roi_params", params);
  else
    bench_json_str (j, "meta", "analytics");
  bench_json_num (j, "boxes", n);
  bench_json_stats (j, NULL, us, iters, &med, &min);
  bench_json_end (j);
  if (which == GST_CUDANMS_ATTACH_META_ROI)
    printf ("meta: %d ROI metas (roi-params=%s) attached and freed: %.1f us "
        "per frame (min %.1f)\n", n, params ? "true" : "false", med, min);
  else
    printf ("meta: %d analytics OD mtds attached and freed: %.1f us per "
        "frame (min %.1f)\n", n, med, min);
  meta_alone_us[which == GST_CUDANMS_ATTACH_META_ROI ? !params : 2] = med;
  gst_cudanms_labels_clear (&labels);
  cnms_ctx_free (ctx);
  g_free (us);
}

/* TRUE when none of a case's rounds r[0..rounds) failed. */
static gboolean
all_ran (const result *r, int rounds)
{
  int i;

  for (i = 0; i < rounds; i++)
    if (r[i].error != NULL)
      return FALSE;
  return TRUE;
}

/* One case: a device name with its suffixes, k instances; skip: why it is
 * not run (owned), or NULL. */
typedef struct
{
  const char *device;
  gchar *owned;                 /* device, where made here */
  int k;
  gchar *skip;
} bench_case;

static void
usage (void)
{
  fprintf (stderr, "usage: bench-element DATA_DIR OUT_JSON [--frames N] "
      "[--warmup N] [--instances 1,8] [--devices cuda-device,cuda,cpu,"
      "auto,cuda-device:gpus] [--rounds R] [--batch [S]]\n");
  exit (2);
}

/* The device name of a :batch case without :batch: its anchor's. */
static gchar *
unbatched (const char *device)
{
  gchar **parts = g_strsplit (device, ":", -1);
  GString *name = g_string_new (parts[0]);
  int i;

  for (i = 1; parts[i] != NULL; i++)
    if (strcmp (parts[i], "batch") != 0)
      g_string_append_printf (name, ":%s", parts[i]);
  g_strfreev (parts);
  return g_string_free (name, FALSE);
}

int
main (int argc, char **argv)
{
  /* --batch: its cases: device tensors (the main one), host tensors */
  static const char *const batch_devices[] = {
    "cuda-device:analytics", "cuda:analytics"
  };
  const char *instances = "1,8", *devices = NULL;
  int frames = 4000, warmup = 100, rounds = 1, i, d, r, c, n_dev, n_k;
  int n_gpus, n_cases = 0, batch = 0;
  bench_case *cases;
  result *res;
  gchar **dev_list, **k_list;
  GstElement *probe;
  GstBuffer *proto;
  bench_json j;
  cnms_npy t;

  gst_init (&argc, &argv);
  if (argc < 3)
    usage ();
  for (i = 3; i < argc; i++) {
    /* --batch [S] */
    if (strcmp (argv[i], "--batch") == 0) {
      batch = DEFAULT_BATCH_STREAMS;
      if (i + 1 < argc && g_ascii_isdigit (argv[i + 1][0]))
        batch = atoi (argv[++i]);
      if (batch < 1)
        usage ();
      continue;
    }
    if (i + 1 >= argc)
      usage ();
    if (strcmp (argv[i], "--frames") == 0)
      frames = atoi (argv[++i]);
    else if (strcmp (argv[i], "--warmup") == 0)
      warmup = atoi (argv[++i]);
    else if (strcmp (argv[i], "--instances") == 0)
      instances = argv[++i];
    else if (strcmp (argv[i], "--devices") == 0)
      devices = argv[++i];
    else if (strcmp (argv[i], "--rounds") == 0)
      rounds = atoi (argv[++i]);
    else
      usage ();
  }
  if (frames < 1 || warmup < 0 || rounds < 1)
    usage ();
  bench_load_npy (argv[1], "yolov8.npy", CNMS_NPY_F4, &t);
  if (bench_json_open (&j, argv[2]) != 0) {
    fprintf (stderr, "bench-element: cannot write %s\n", argv[2]);
    return 1;
  }
  /* Loading the plugin registers the meta. */
  probe = gst_element_factory_make ("cudanms", NULL);
  if (probe == NULL) {
    fprintf (stderr, "bench-element: no cudanms element: set "
        "GST_PLUGIN_PATH_1_0 to the build's gst/ folder\n");
    return 1;
  }
  gst_object_unref (probe);
  proto = make_proto (&t);
  bench_meta (&j, &t, GST_CUDANMS_ATTACH_META_ROI, TRUE);
  bench_meta (&j, &t, GST_CUDANMS_ATTACH_META_ROI, FALSE);
  if (gst_cudanms_attach_meta_available (GST_CUDANMS_ATTACH_META_ANALYTICS))
    bench_meta (&j, &t, GST_CUDANMS_ATTACH_META_ANALYTICS, FALSE);

  /* --batch alone: its cases alone */
  if (devices == NULL)
    devices = batch > 0 ? "" : "cuda,cpu";
  dev_list = g_strsplit (devices, ",", -1);
  k_list = g_strsplit (instances, ",", -1);
  n_dev = (int) g_strv_length (dev_list);
  n_k = (int) g_strv_length (k_list);
  for (i = 0; i < n_k; i++)
    if (atoi (k_list[i]) < 1)
      usage ();
  /* the cases: each device with each instance count, but a :gpus device
   * with 1 and N (the device count), or once, skipped, below 2 GPUs */
  n_gpus = cnms_cuda_device_count ();
  cases = g_new0 (bench_case, (gsize) n_dev * MAX (n_k, 2) +
      2 * G_N_ELEMENTS (batch_devices));
  for (d = 0; d < n_dev; d++) {
    if (strstr (dev_list[d], ":gpus") != NULL) {
      cases[n_cases].device = dev_list[d];
      cases[n_cases++].k = 1;
      if (n_gpus >= 2) {
        cases[n_cases].device = dev_list[d];
        cases[n_cases++].k = n_gpus;
      } else {
        cases[n_cases - 1].skip = g_strdup_printf ("skipped: %d CUDA "
            "devices, one pipeline per GPU needs 2", MAX (n_gpus, 0));
      }
      continue;
    }
    for (i = 0; i < n_k; i++) {
      cases[n_cases].device = dev_list[d];
      cases[n_cases++].k = atoi (k_list[i]);
    }
  }
  /* --batch S: each batch case (:batch, S streams) beside its anchor, S
   * pipelines of a frame each */
  for (d = 0; batch > 0 && d < (int) G_N_ELEMENTS (batch_devices); d++) {
    cases[n_cases].owned = g_strdup_printf ("%s:batch", batch_devices[d]);
    cases[n_cases].device = cases[n_cases].owned;
    cases[n_cases++].k = batch;
    cases[n_cases].device = batch_devices[d];
    cases[n_cases++].k = batch;
  }
  /* res[c * rounds + r]: the cases take turns in each round */
  res = g_new0 (result, (gsize) n_cases * rounds);
  for (r = 0; r < rounds; r++) {
    for (c = 0; c < n_cases; c++) {
      result *x = &res[c * rounds + r];

      if (cases[c].skip != NULL)
        x->error = cases[c].skip;
      else if (strncmp (cases[c].device, "cuda", 4) == 0 && n_gpus <= 0)
        x->error = "skipped: no CUDA device";
      else if (strstr (cases[c].device, ":batch") != NULL)
        run_batch (x, proto, argv[1], cases[c].device, cases[c].k, warmup,
            frames);
      else
        run (x, proto, argv[1], cases[c].device, cases[c].k, warmup,
            frames);
      if (rounds > 1 && x->error == NULL)
        printf ("round %d: device=%s instances=%d: %.0f frames/s total\n",
            r + 1, cases[c].device, cases[c].k, x->total);
    }
  }
  for (c = 0; c < n_cases; c++) {
    const result *one = c > 0 ? &res[(c - 1) * rounds] : NULL;

    record (&j, cases[c].device, cases[c].k, frames, &res[c * rounds],
        rounds);
    /* :gpus: N GPUs against one (both records' median rounds) */
    if (one != NULL && strstr (cases[c].device, ":gpus") != NULL
        && cases[c].k > 1 && cases[c - 1].k == 1
        && strcmp (cases[c - 1].device, cases[c].device) == 0
        && all_ran (one, rounds) && all_ran (&res[c * rounds], rounds))
      printf ("element device=%s: %d GPUs %.0f frames/s, one GPU %.0f: "
          "%.2fx\n", cases[c].device, cases[c].k,
          res[c * rounds + rounds / 2].total, one[rounds / 2].total,
          res[c * rounds + rounds / 2].total / one[rounds / 2].total);
  }
  /* :batch: the batch against its anchor, the same streams as as many
   * pipelines (both records' median rounds) */
  for (c = 0; c < n_cases; c++) {
    const result *bt = &res[c * rounds + rounds / 2], *an = NULL;
    gchar *anchor;
    int a;

    if (strstr (cases[c].device, ":batch") == NULL
        || !all_ran (&res[c * rounds], rounds))
      continue;
    anchor = unbatched (cases[c].device);
    for (a = 0; a < n_cases; a++)
      if (strcmp (cases[a].device, anchor) == 0 && cases[a].k == cases[c].k
          && all_ran (&res[a * rounds], rounds))
        an = &res[a * rounds + rounds / 2];
    if (an != NULL)
      printf ("element device=%s %d streams: batched %.0f frames/s, %.1f us "
          "a frame in cudanms; %d pipelines %.0f frames/s, %.1f us a frame; "
          "%.2fx the frames/s; the metas alone %.1f us a frame\n",
          anchor, cases[c].k, bt->total, bt->in_us, cases[c].k, an->total,
          an->in_us, bt->total / an->total, meta_alone (anchor));
    g_free (anchor);
  }
  for (c = 0; c < n_cases; c++) {
    g_free (cases[c].skip);
    g_free (cases[c].owned);
  }
  g_free (cases);
  g_free (res);
  g_strfreev (dev_list);
  g_strfreev (k_list);
  gst_buffer_unref (proto);
  cnms_npy_clear (&t);
  return bench_json_close (&j) == 0 ? 0 : 1;
}
