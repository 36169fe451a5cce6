/* The element on the GPU when the device fails it (suite gpu; skips, exit
 * 77, without a CUDA device, and under CNMS_GPU_SANITIZER=1: the failures
 * are deliberate, compute-sanitizer would report them).
 *
 * Each pipeline first runs once at max-candidates=30000 on a small
 * tensor (its exact ROIs checked), so that its CUDA context exists: the
 * pipeline keeps the GstCudaContext that the element announced (GstBin
 * caches the context) after NULL, and a CUDA context holds device memory
 * of its own. Then the test holds all but HEADROOM of the device's free
 * memory (cudaMalloc in this process), so that a max-candidates the
 * device cannot hold is one that needs more than HEADROOM: 262144
 * candidates need an 8 GiB suppression mask.
 *
 *   oom       appsrc ! cudanms device=cuda max-candidates=262144 ! appsink
 *             on a [1, 5, 262144] tensor: an element error naming out of
 *             memory and max-candidates; after NULL the device memory is
 *             back to what it was before that start (everything the
 *             element took is freed); set to max-candidates=30000 and
 *             restarted, the same element gives the exact ROIs of a small
 *             tensor
 *   isolated  two such pipelines in one process: while one streams small
 *             tensors (300 buffers, every one with its exact ROIs), the
 *             other fails as above; the first never sees an error
 *   gpus      the same across GPUs (skips with fewer than 2): the failing
 *             pipeline's cudanms on GPU 1 (cuda-device-id=1, GPU 1's
 *             memory held), the streaming one's on GPU 0, which streams
 *             on to EOS with every buffer's exact ROIs
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include "cudanms.h"

#define SKIP 77
#define HEADROOM ((size_t) 2 << 30)
#define HUGE_N 262144
#define CAPS "video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1"
/* the small tensor's ROIs: anchor 1 falls to anchor 0 */
#define SMALL_ROIS "80,80,40,40,class-0,0.875;190,135,20,30,class-1,0.5;"
/* a freed context gives back its memory; the driver may keep a little */
#define SLACK ((size_t) 4 << 20)

static int failures;

#define CHECK(cond, ...) do {                                               \
    if (!(cond)) {                                                          \
      printf ("FAIL: " __VA_ARGS__);                                        \
      printf ("\n");                                                        \
      failures++;                                                           \
    }                                                                       \
  } while (0)

static void *hog[512];
static int n_hog;

/* Holds memory of the current device until HEADROOM (at most HEADROOM +
 * 1 GiB) is free. */
static void
hold_device_memory (void)
{
  size_t free_b = 0, total = 0;

  while (n_hog < 512 && cudaMemGetInfo (&free_b, &total) == cudaSuccess
      && free_b > HEADROOM + ((size_t) 1 << 30)) {
    size_t chunk = free_b - HEADROOM > ((size_t) 8 << 30) ? (size_t) 8 << 30
        : free_b - HEADROOM;

    if (cudaMalloc (&hog[n_hog], chunk) != cudaSuccess) {
      (void) cudaGetLastError ();
      break;
    }
    n_hog++;
  }
  cudaMemGetInfo (&free_b, &total);
  printf ("holding %d blocks: %.2f GiB of %.2f GiB free\n", n_hog,
      free_b / 1073741824.0, total / 1073741824.0);
}

static size_t
device_free (void)
{
  size_t free_b = 0, total = 0;

  cudaMemGetInfo (&free_b, &total);
  return free_b;
}

static GstBuffer *
frame_with_tensor (const float *t, int rows, int n)
{
  static const gchar *tags[] = { NULL };
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 320 * 240, NULL);
  GstBuffer *payload = gst_buffer_new_memdup (t, (gsize) rows * n * 4);
  gchar *dims = g_strdup_printf ("1,%d,%d", rows, n);
  GstStructure *s;

  if (gst_meta_get_info ("CudanmsTensorMeta") == NULL)
    gst_meta_register_custom ("CudanmsTensorMeta", tags, NULL, NULL, NULL);
  s = gst_custom_meta_get_structure (gst_buffer_add_custom_meta (buf,
          "CudanmsTensorMeta"));
  gst_structure_set (s, "data-type", G_TYPE_STRING, "float32", "dims",
      G_TYPE_STRING, dims, "data", GST_TYPE_BUFFER, payload, NULL);
  gst_buffer_unref (payload);
  g_free (dims);
  return buf;
}

/* yolov8 [1, 6, 8], two classes: 100,100 40x40 c0 .875; 102,101 c0 .75
 * (IoU .86 with the first: suppressed); 200,150 20x30 c1 .5; five anchors
 * scoring 0 (layout=auto takes [1, 4 + C, N] for yolov8 when N > 4 + C). */
static GstBuffer *
small_frame (void)
{
  static const float t[6][8] = {
    {100, 102, 200}, {100, 101, 150}, {40, 40, 20}, {40, 40, 30},
    {0.875f, 0.75f, 0}, {0, 0, 0.5f},
  };

  return frame_with_tensor (&t[0][0], 6, 8);
}

static GstBuffer *
huge_frame (void)
{
  float *t = g_new0 (float, (gsize) 5 * HUGE_N);
  GstBuffer *buf;
  int i;

  for (i = 0; i < HUGE_N; i++) {
    t[i] = t[HUGE_N + i] = 100;
    t[2 * HUGE_N + i] = t[3 * HUGE_N + i] = 10;
    t[4 * HUGE_N + i] = 0.5f;
  }
  buf = frame_with_tensor (t, 5, HUGE_N);
  g_free (t);
  return buf;
}

static gchar *
rois_of (GstBuffer * buf)
{
  GString *str = g_string_new (NULL);
  GstVideoRegionOfInterestMeta *m;
  gint i;

  for (i = 0; (m = gst_buffer_get_video_region_of_interest_meta_id (buf, i));
      i++) {
    GstStructure *s = gst_video_region_of_interest_meta_get_param (m,
        "detection");
    gdouble conf = -1;

    if (s != NULL)
      gst_structure_get_double (s, "confidence", &conf);
    g_string_append_printf (str, "%u,%u,%u,%u,%s,%.9g;", m->x, m->y, m->w,
        m->h, g_quark_to_string (m->roi_type), conf);
  }
  return g_string_free (str, FALSE);
}

typedef struct
{
  GstElement *pipe, *src, *sink, *nms;
  GstBus *bus;
} Pipe;

/* appsrc ! cudanms device=cuda on GPU gpu (-1: the default) ! appsink */
static void
pipe_make_on (Pipe * p, gint max_candidates, gint gpu)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps=" CAPS
      " ! cudanms name=nms device=cuda cuda-device-id=%d model-size=320x240 "
      "max-candidates=%d ! appsink name=sink sync=false", gpu,
      max_candidates);

  p->pipe = gst_parse_launch (desc, NULL);
  if (p->pipe == NULL) {
    printf ("FAIL: cannot build %s\n", desc);
    exit (1);
  }
  p->src = gst_bin_get_by_name (GST_BIN (p->pipe), "src");
  p->sink = gst_bin_get_by_name (GST_BIN (p->pipe), "sink");
  p->nms = gst_bin_get_by_name (GST_BIN (p->pipe), "nms");
  p->bus = gst_element_get_bus (p->pipe);
  g_free (desc);
}

static void
pipe_make (Pipe * p, gint max_candidates)
{
  pipe_make_on (p, max_candidates, -1);
}

static void
pipe_free (Pipe * p)
{
  gst_element_set_state (p->pipe, GST_STATE_NULL);
  gst_object_unref (p->bus);
  gst_object_unref (p->nms);
  gst_object_unref (p->sink);
  gst_object_unref (p->src);
  gst_object_unref (p->pipe);
}

/* Pushes buf, pulls its output: the ROI string, or NULL (no output). */
static gchar *
push_pull (Pipe * p, GstBuffer * buf, guint64 i)
{
  GstSample *sample;
  gchar *str;

  GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
  if (gst_app_src_push_buffer (GST_APP_SRC (p->src), buf) != GST_FLOW_OK)
    return NULL;
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (p->sink),
      30 * GST_SECOND);
  if (sample == NULL)
    return NULL;
  str = rois_of (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  return str;
}

/* Runs p once at its current max-candidates on the small tensor (exact
 * ROIs), then stops it: the pipeline keeps its CUDA context. */
static void
warm_up (Pipe * p, const char *what)
{
  gchar *str;

  CHECK (gst_element_set_state (p->pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "%s: start failed", what);
  str = push_pull (p, small_frame (), 0);
  CHECK (str != NULL && strcmp (str, SMALL_ROIS) == 0, "%s: '%s', expected "
      "'%s'", what, str ? str : "(no output)", SMALL_ROIS);
  g_free (str);
  gst_element_set_state (p->pipe, GST_STATE_NULL);
}

/* Pushes the huge tensor; expects the out-of-memory element error. */
static void
expect_oom (Pipe * p)
{
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL;

  gst_app_src_push_buffer (GST_APP_SRC (p->src), huge_frame ());
  msg = gst_bus_timed_pop_filtered (p->bus, 60 * GST_SECOND,
      GST_MESSAGE_ERROR);
  CHECK (msg != NULL, "no error for max-candidates=%d", HUGE_N);
  if (msg == NULL)
    return;
  gst_message_parse_error (msg, &err, &dbg);
  printf ("error: %s (%s)\n", err->message, dbg ? dbg : "");
  CHECK (GST_MESSAGE_SRC (msg) == GST_OBJECT (p->nms),
      "error from %s, not cudanms", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)));
  CHECK (strstr (err->message, "out of memory") != NULL
      && strstr (err->message, "max-candidates=262144") != NULL,
      "error '%s' names neither out of memory nor max-candidates",
      err->message);
  CHECK (dbg != NULL && strstr (dbg, "mask") != NULL, "debug '%s' does not "
      "name the buffer", dbg ? dbg : "");
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (msg);
}

static void
test_oom (void)
{
  Pipe p;
  size_t before, after;
  gchar *str;

  pipe_make (&p, 30000);
  warm_up (&p, "oom: warm-up");
  hold_device_memory ();
  g_object_set (p.nms, "max-candidates", HUGE_N, NULL);
  before = device_free ();
  gst_element_set_state (p.pipe, GST_STATE_PLAYING);
  expect_oom (&p);
  gst_element_set_state (p.pipe, GST_STATE_NULL);
  after = device_free ();
  printf ("oom: device free %.1f MiB before start, %.1f MiB after stop\n",
      before / 1048576.0, after / 1048576.0);
  CHECK (after + SLACK >= before, "%.1f MiB not freed",
      (before - after) / 1048576.0);

  /* the same element at a sane size */
  g_object_set (p.nms, "max-candidates", 30000, NULL);
  CHECK (gst_element_set_state (p.pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "restart failed");
  str = push_pull (&p, small_frame (), 0);
  CHECK (str != NULL && strcmp (str, SMALL_ROIS) == 0, "after the restart: "
      "'%s', expected '%s'", str ? str : "(no output)", SMALL_ROIS);
  g_free (str);
  CHECK (gst_bus_pop_filtered (p.bus, GST_MESSAGE_ERROR) == NULL,
      "an error after the restart");
  gst_element_set_state (p.pipe, GST_STATE_NULL);
  after = device_free ();
  CHECK (after + SLACK >= before, "after the restart: %.1f MiB not freed",
      (before - after) / 1048576.0);
  pipe_free (&p);
  printf ("oom: %s\n", failures ? "FAILED" : "ok");
}

#define ISOLATED_BUFFERS 300

typedef struct
{
  Pipe *p;
  gint done;                    /* atomic */
  gint bad;
  gboolean ok;
} Streamer;

static gpointer
stream_small (gpointer data)
{
  Streamer *s = data;
  guint i;

  for (i = 0; i < ISOLATED_BUFFERS; i++) {
    gchar *str = push_pull (s->p, small_frame (), i);

    if (str == NULL || strcmp (str, SMALL_ROIS) != 0) {
      if (s->bad++ < 3)
        printf ("FAIL: streaming buffer %u: '%s'\n", i, str ? str : "(none)");
    }
    g_free (str);
    g_atomic_int_inc (&s->done);
  }
  return NULL;
}

static void
test_isolated (void)
{
  Pipe good, bad;
  Streamer s = { &good, 0, 0, FALSE };
  GThread *thread;
  gint at_failure;
  int before = failures;

  pipe_make (&good, 30000);
  pipe_make (&bad, 30000);
  warm_up (&good, "isolated: warm-up");
  warm_up (&bad, "isolated: warm-up");
  hold_device_memory ();
  g_object_set (bad.nms, "max-candidates", HUGE_N, NULL);
  gst_element_set_state (good.pipe, GST_STATE_PLAYING);
  gst_element_set_state (bad.pipe, GST_STATE_PLAYING);
  thread = g_thread_new ("streamer", stream_small, &s);
  while (g_atomic_int_get (&s.done) < 50)
    g_usleep (1000);
  expect_oom (&bad);
  at_failure = g_atomic_int_get (&s.done);
  gst_element_set_state (bad.pipe, GST_STATE_NULL);
  g_thread_join (thread);
  printf ("isolated: the other pipeline failed at buffer %d of %d\n",
      at_failure, ISOLATED_BUFFERS);
  CHECK (at_failure < ISOLATED_BUFFERS, "the failure came after the stream");
  CHECK (s.done == ISOLATED_BUFFERS && s.bad == 0, "%d of %d buffers wrong",
      s.bad, s.done);
  CHECK (gst_bus_pop_filtered (good.bus, GST_MESSAGE_ERROR) == NULL,
      "the streaming pipeline got an error");
  pipe_free (&bad);
  pipe_free (&good);
  printf ("isolated: %s\n", failures > before ? "FAILED" : "ok");
}

/* The device of the GstCudaContext cudanms answers a context query with
 * on its src pad, -1 without one. */
static gint
nms_device (Pipe * p)
{
  GstQuery *q = gst_query_new_context ("gst.cuda.context");
  GstPad *pad = gst_element_get_static_pad (p->nms, "src");
  GstContext *ctx = NULL;
  gint id = -1;

  if (gst_pad_query (pad, q)) {
    gst_query_parse_context (q, &ctx);
    if (ctx != NULL) {
      const GValue *v = gst_structure_get_value (gst_context_get_structure
          (ctx), "gst.cuda.context");
      if (v != NULL && G_VALUE_HOLDS_OBJECT (v))
        g_object_get (g_value_get_object (v), "cuda-device-id", &id, NULL);
    }
  }
  gst_object_unref (pad);
  gst_query_unref (q);
  return id;
}

/* Two pipelines on two GPUs in one process: GPU 1's memory is held, its
 * pipeline fails out of memory while GPU 0's streams its small tensors
 * on to EOS, every buffer with its exact ROIs, and never sees an error. */
static void
test_gpus (void)
{
  Pipe good, bad;
  Streamer s = { &good, 0, 0, FALSE };
  GThread *thread;
  GstMessage *msg;
  gint at_failure, dev_good, dev_bad;
  int before = failures;

  pipe_make_on (&good, 30000, 0);
  pipe_make_on (&bad, 30000, 1);
  warm_up (&good, "gpus: warm-up on GPU 0");
  warm_up (&bad, "gpus: warm-up on GPU 1");
  CHECK (cudaSetDevice (1) == cudaSuccess, "cannot select GPU 1");
  hold_device_memory ();
  cudaSetDevice (0);
  g_object_set (bad.nms, "max-candidates", HUGE_N, NULL);
  gst_element_set_state (good.pipe, GST_STATE_PLAYING);
  gst_element_set_state (bad.pipe, GST_STATE_PLAYING);
  dev_good = nms_device (&good);
  dev_bad = nms_device (&bad);
  printf ("gpus: the streaming cudanms on GPU %d, the failing one on GPU "
      "%d\n", dev_good, dev_bad);
  CHECK (dev_good == 0 && dev_bad == 1, "cudanms on GPUs %d and %d, "
      "expected 0 and 1", dev_good, dev_bad);
  thread = g_thread_new ("streamer", stream_small, &s);
  while (g_atomic_int_get (&s.done) < 50)
    g_usleep (1000);
  expect_oom (&bad);
  at_failure = g_atomic_int_get (&s.done);
  gst_element_set_state (bad.pipe, GST_STATE_NULL);
  g_thread_join (thread);
  gst_app_src_end_of_stream (GST_APP_SRC (good.src));
  msg = gst_bus_timed_pop_filtered (good.bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  CHECK (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "the streaming pipeline on GPU 0 did not reach EOS");
  if (msg != NULL)
    gst_message_unref (msg);
  printf ("gpus: the pipeline on GPU 1 failed at buffer %d of %d on GPU "
      "0\n", at_failure, ISOLATED_BUFFERS);
  CHECK (at_failure < ISOLATED_BUFFERS, "the failure came after the stream");
  CHECK (s.done == ISOLATED_BUFFERS && s.bad == 0, "%d of %d buffers wrong",
      s.bad, s.done);
  CHECK (gst_bus_pop_filtered (good.bus, GST_MESSAGE_ERROR) == NULL,
      "the streaming pipeline got an error");
  pipe_free (&bad);
  pipe_free (&good);
  printf ("gpus: %s\n", failures > before ? "FAILED" : "ok");
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  const char *san = getenv ("CNMS_GPU_SANITIZER");
  int i;

  gst_init (&argc, &argv);
  if (strcmp (mode, "oom") != 0 && strcmp (mode, "isolated") != 0
      && strcmp (mode, "gpus") != 0) {
    printf ("usage: test-gpu-faults oom|isolated|gpus\n");
    return 2;
  }
  if (cnms_cuda_device_count () < (mode[0] == 'g' ? 2 : 1)) {
    printf ("faults %s: SKIP, %d CUDA devices (%d needed)\n", mode,
        MAX (cnms_cuda_device_count (), 0), mode[0] == 'g' ? 2 : 1);
    return SKIP;
  }
  if (san != NULL && strcmp (san, "1") == 0) {
    printf ("faults %s: SKIP under compute-sanitizer (deliberate "
        "failures)\n", mode);
    return SKIP;
  }
  if (mode[0] == 'o')
    test_oom ();
  else if (mode[0] == 'i')
    test_isolated ();
  else
    test_gpus ();
  for (i = 0; i < n_hog; i++)
    cudaFree (hog[i]);
  printf ("faults %s: %s\n", mode, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
