/* bench-element: frames/s of the cudanms element, 1 and K instances.
 *
 * usage: bench-element DATA_DIR OUT_JSON [--frames N] [--warmup N]
 *          [--instances 1,8] [--devices cuda-device,cuda,cpu,auto,
 *          cuda-device:gpus] [--rounds R]
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
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "bench_common.h"
#include "gstcudanmsoutput.h"

#define FRAME_SIZE 640

typedef struct {
  GstElement *pipeline;
  GstBuffer *proto;
  int warmup, frames;
  volatile gint seen;
  double t_first, t_last;
  /* time inside cudanms: its sink pad's probe to its src pad's, summed
   * over the timed frames (both probes run in the streaming thread) */
  double t_enter, in_sum;
  int in_n;
  /* cudanms's stats at the first timed buffer: buffers, backend-time and
   * output-time (ns), for the means of the timed ones */
  GstElement *nms;
  guint64 stats0[3];
  guint64 timed[3];             /* the same over the timed buffers */
  guint rois;
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

static GstPadProbeReturn
on_buffer (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  instance *in = user_data;
  gint n = g_atomic_int_add (&in->seen, 1) + 1;

  (void) pad;
  if (n == in->warmup + 1) {
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
    GType roi = g_type_from_name ("GstVideoRegionOfInterestMetaAPI");

    in->t_first = bench_now_us ();
    in->rois = roi ? gst_buffer_get_n_meta (buf, roi) : 0;
#ifdef HAVE_GST_ANALYTICS
    if (in->rois == 0 && gst_buffer_get_analytics_relation_meta (buf))
      in->rois = gst_analytics_relation_get_length
          (gst_buffer_get_analytics_relation_meta (buf));
#endif
    read_stats (in->nms, in->stats0);
  }
  if (n == in->warmup + in->frames)
    in->t_last = bench_now_us ();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_enter (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  instance *in = user_data;

  (void) pad;
  (void) info;
  in->t_enter = bench_now_us ();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_leave (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  instance *in = user_data;

  (void) pad;
  (void) info;
  /* seen counts the buffers past fakesink: this one is seen + 1 */
  if (g_atomic_int_get (&in->seen) >= in->warmup) {
    in->in_sum += bench_now_us () - in->t_enter;
    in->in_n++;
  }
  return GST_PAD_PROBE_OK;
}

static gpointer
push_frames (gpointer data)
{
  instance *in = data;
  GstElement *src = gst_bin_get_by_name (GST_BIN (in->pipeline), "src");
  GstBus *bus = gst_element_get_bus (in->pipeline);
  GstFlowReturn ret = GST_FLOW_OK;
  GstMessage *msg;
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
  msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (msg == NULL || GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;

    if (msg != NULL)
      gst_message_parse_error (msg, &err, NULL);
    fprintf (stderr, "bench-element: pipeline failed: %s\n",
        err ? err->message : "timeout");
    g_clear_error (&err);
    in->failed = TRUE;
  }
  if (msg != NULL)
    gst_message_unref (msg);
  gst_object_unref (bus);
  gst_object_unref (src);
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

/* One case's JSON record: round r of rounds, whose totals went from
 * lowest to highest. */
static void
record_one (bench_json *j, const char *device, int k, int frames,
    const result *r, int rounds, double lowest, double highest)
{
  bench_json_begin (j);
  bench_json_str (j, "bench", "element");
  bench_json_str (j, "device", device);
  bench_json_num (j, "instances", k);
  /* :gpus: one pipeline per GPU */
  if (strstr (device, ":gpus") != NULL)
    bench_json_num (j, "gpus", k);
  bench_json_num (j, "frames", frames);
  if (r->error != NULL) {
    bench_json_str (j, "error", r->error);
    printf ("element device=%-4s instances=%d: %s\n", device, k, r->error);
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
    printf ("element device=%-4s instances=%d: %9.0f frames/s total "
        "(median of %d rounds: %.0f .. %.0f), %9.0f per instance (median), "
        "%u boxes a frame, %.1f us a frame in cudanms (backend %.1f, "
        "metas %.1f)\n", device, k, r->total, rounds, lowest, highest, r->med,
        r->rois, r->in_us, r->backend_us, r->output_us);
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

/* One round of a case into *res; name: cuda-device, cuda, cpu or auto,
 * then the suffixes :own, :bare, :analytics and :gpus (see the top). */
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
    GstElement *sink, *nms;
    GstPad *pad;

    g_free (inject);
    in[i].proto = on_device ? bare : proto;
    in[i].warmup = warmup;
    in[i].frames = frames;
    in[i].pipeline = gst_parse_launch (desc, &err);
    g_free (desc);
    if (in[i].pipeline == NULL) {
      fprintf (stderr, "bench-element: %s\n", err ? err->message : "?");
      g_clear_error (&err);
      error = "pipeline could not be built (is GST_PLUGIN_PATH_1_0 set?)";
      break;
    }
    sink = gst_bin_get_by_name (GST_BIN (in[i].pipeline), "sink");
    pad = gst_element_get_static_pad (sink, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, &in[i],
        NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
    nms = gst_bin_get_by_name (GST_BIN (in[i].pipeline), "nms");
    pad = gst_element_get_static_pad (nms, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_enter, &in[i],
        NULL);
    gst_object_unref (pad);
    pad = gst_element_get_static_pad (nms, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_leave, &in[i],
        NULL);
    gst_object_unref (pad);
    in[i].nms = nms;
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
    if (in[i].failed || g_atomic_int_get (&in[i].seen) < warmup + frames)
      error = error ? error : "a pipeline failed before the last frame";
    if (in[i].nms != NULL) {
      guint64 v[3];
      int j;

      read_stats (in[i].nms, v);
      for (j = 0; j < 3; j++)
        in[i].timed[j] = v[j] - in[i].stats0[j];
      gst_object_unref (in[i].nms);
    }
    if (in[i].pipeline != NULL) {
      gst_element_set_state (in[i].pipeline, GST_STATE_NULL);
      gst_object_unref (in[i].pipeline);
    }
  }
  if (error == NULL) {
    for (i = 0; i < k; i++) {
      per[i] = frames / ((in[i].t_last - in[i].t_first) * 1e-6);
      if (i == 0 || in[i].t_first < first)
        first = in[i].t_first;
      if (i == 0 || in[i].t_last > last)
        last = in[i].t_last;
    }
  }
  memset (res, 0, sizeof *res);
  res->error = error;
  if (error == NULL) {
    res->total = (double) k * frames / ((last - first) * 1e-6);
    bench_stats (per, k, &res->med, &res->min);
    res->rois = in[0].rois;
    for (i = 0; i < k; i++) {
      const double n = (double) in[i].timed[0];

      res->in_us += in[i].in_n > 0 ? in[i].in_sum / in[i].in_n / k : 0;
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
  int k;
  gchar *skip;
} bench_case;

static void
usage (void)
{
  fprintf (stderr, "usage: bench-element DATA_DIR OUT_JSON [--frames N] "
      "[--warmup N] [--instances 1,8] [--devices cuda-device,cuda,cpu,"
      "auto,cuda-device:gpus] [--rounds R]\n");
  exit (2);
}

int
main (int argc, char **argv)
{
  const char *instances = "1,8", *devices = "cuda,cpu";
  int frames = 4000, warmup = 100, rounds = 1, i, d, r, c, n_dev, n_k;
  int n_gpus, n_cases = 0;
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
  cases = g_new0 (bench_case, (gsize) n_dev * MAX (n_k, 2));
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
  /* res[c * rounds + r]: the cases take turns in each round */
  res = g_new0 (result, (gsize) n_cases * rounds);
  for (r = 0; r < rounds; r++) {
    for (c = 0; c < n_cases; c++) {
      result *x = &res[c * rounds + r];

      if (cases[c].skip != NULL)
        x->error = cases[c].skip;
      else if (strncmp (cases[c].device, "cuda", 4) == 0 && n_gpus <= 0)
        x->error = "skipped: no CUDA device";
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
  for (c = 0; c < n_cases; c++)
    g_free (cases[c].skip);
  g_free (cases);
  g_free (res);
  g_strfreev (dev_list);
  g_strfreev (k_list);
  gst_buffer_unref (proto);
  cnms_npy_clear (&t);
  return bench_json_close (&j) == 0 ? 0 : 1;
}
