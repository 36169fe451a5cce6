/* bench-meta: what one frame's 126 output metas cost when threads attach
 * them at once, split into GStreamer's parts. An instrument: it asserts
 * nothing and needs no GPU.
 *
 *   bench-meta [--seconds S] [--boxes N]
 *
 * For 1, 2 and 8 threads, each looping for S seconds (default 1) on its
 * own buffers, per frame of N items (default 126, the bench frame's kept
 * boxes):
 *   - N bare ROI metas on a new buffer, attached by cudanms's own
 *     gst_cudanms_attach_roi (roi-params=false), then the buffer freed;
 *   - the same with their "detection" structures (roi-params=true, the
 *     default);
 *   - N g_slice_alloc + g_slice_free1 of 96 bytes (what a meta's memory
 *     comes from in GStreamer 1.22 and later);
 *   - N malloc + free of 96 bytes;
 *   - N increments of one atomic 64-bit counter shared by all threads
 *     (gst_buffer_add_meta increments a process-wide one per meta).
 * Prints one line a case: the mean per frame of the attach (or alloc)
 * alone, and with the free. The threads hammer without pause, so the
 * contention is an upper bound of a pipeline's. G_SLICE=always-malloc in
 * the environment changes the g_slice rows on GLib < 2.76. */
#include <gst/gst.h>
#include <gst/video/video.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gstcudanmsoutput.h"

#define MAX_BOXES 4096

typedef enum
{
  CASE_BARE, CASE_STRUCTURE, CASE_SLICE, CASE_MALLOC, CASE_ATOMIC, N_CASES
} BenchCase;

static const char *const case_names[N_CASES] = {
  "bare ROI metas", "ROI metas + structure", "g_slice alloc/free",
  "malloc/free", "shared atomic increments"
};

typedef struct
{
  BenchCase what;
  double attach_us, total_us;
} Job;

static double seconds = 1.0;
static int boxes = 126;
static cnms_det dets[MAX_BOXES];
static gint64 shared_counter;

static double
now_us (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The kept boxes of a frame, as the element attaches them. */
static void
attach_rois (GstBuffer * buf, GstCudanmsLabels * labels, gboolean params)
{
  int i;

  for (i = 0; i < boxes; i++)
    gst_cudanms_attach_roi (buf, labels, &dets[i], i, 640, 640,
        params, "cudanms0");
}

static void *
run_job (void *arg)
{
  Job *j = arg;
  GstCudanmsLabels labels;      /* per thread, as per element */
  void *p[MAX_BOXES];
  const double end = now_us () + seconds * 1e6;
  double attach = 0, total = 0;
  long frames = 0;
  int i;

  gst_cudanms_labels_init (&labels);
  while (now_us () < end) {
    const double t0 = now_us ();
    double t1;

    switch (j->what) {
      case CASE_BARE:
      case CASE_STRUCTURE:{
        GstBuffer *buf = gst_buffer_new ();

        attach_rois (buf, &labels, j->what == CASE_STRUCTURE);
        t1 = now_us ();
        gst_buffer_unref (buf);
        break;
      }
      case CASE_SLICE:
        for (i = 0; i < boxes; i++)
          p[i] = g_slice_alloc (96);
        t1 = now_us ();
        for (i = 0; i < boxes; i++)
          g_slice_free1 (96, p[i]);
        break;
      case CASE_MALLOC:
        for (i = 0; i < boxes; i++)
          p[i] = malloc (96);
        t1 = now_us ();
        for (i = 0; i < boxes; i++)
          free (p[i]);
        break;
      default:
        for (i = 0; i < boxes; i++)
          __atomic_fetch_add (&shared_counter, 1, __ATOMIC_SEQ_CST);
        t1 = now_us ();
        break;
    }
    attach += t1 - t0;
    total += now_us () - t0;
    frames++;
  }
  gst_cudanms_labels_clear (&labels);
  j->attach_us = attach / frames;
  j->total_us = total / frames;
  return NULL;
}

int
main (int argc, char **argv)
{
  static const int thread_counts[] = { 1, 2, 8 };
  const char *slice = getenv ("G_SLICE");
  int i, c, k;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = atof (argv[++i]);
    else if (strcmp (argv[i], "--boxes") == 0 && i + 1 < argc)
      boxes = atoi (argv[++i]);
    else {
      fprintf (stderr, "usage: %s [--seconds S] [--boxes N]\n", argv[0]);
      return 2;
    }
  }
  if (seconds <= 0 || boxes < 1 || boxes > MAX_BOXES) {
    fprintf (stderr, "bench-meta: --seconds > 0, 1 <= --boxes <= %d\n",
        MAX_BOXES);
    return 2;
  }
  gst_init (NULL, NULL);
  for (i = 0; i < boxes; i++) {   /* 80 classes, boxes across the frame */
    dets[i].score = 0.9f - 0.005f * (float) (i % 100);
    dets[i].x1 = (float) (i * 37 % 600);
    dets[i].y1 = (float) (i * 53 % 600);
    dets[i].x2 = dets[i].x1 + 20.5f;
    dets[i].y2 = dets[i].y1 + 30.5f;
    dets[i].class_id = i % 80;
  }
  printf ("bench-meta: %s, GLib %u.%u.%u, G_SLICE=%s, %d items a "
      "frame, %.1f s a case\n", gst_version_string (), glib_major_version,
      glib_minor_version, glib_micro_version, slice ? slice : "(unset)",
      boxes, seconds);
  for (c = 0; c < N_CASES; c++) {
    for (k = 0; k < (int) G_N_ELEMENTS (thread_counts); k++) {
      const int n = thread_counts[k];
      pthread_t th[8];
      Job jobs[8];
      double attach = 0, total = 0;

      for (i = 0; i < n; i++) {
        jobs[i].what = (BenchCase) c;
        pthread_create (&th[i], NULL, run_job, &jobs[i]);
      }
      for (i = 0; i < n; i++) {
        pthread_join (th[i], NULL);
        attach += jobs[i].attach_us / n;
        total += jobs[i].total_us / n;
      }
      printf ("meta-threads %-26s %d threads: %7.2f us a frame to attach "
          "(or alloc), %7.2f with the free\n", case_names[c], n, attach,
          total);
    }
  }
  return 0;
}
