/* bench-tensordec: frames/s of GStreamer 1.28's yolov8tensordec and of
 * cudanms (device=cpu) on the same buffers, in one run. An instrument, not
 * a test: it asserts nothing and prints one row per setup.
 *
 *   bench-tensordec [ROUNDS]        (default 5; the median round is shown)
 *
 * The frames and the settings are those of tests/analytics/test_tensordec.c
 * (tensordec_frames.h): seeded YOLOv8 [1, 84, 8400] tensors as a
 * GstTensorMeta, both elements class-agnostic, no letterbox, the same
 * thresholds and cap. Each element runs alone in a harness (push, pull);
 * identity in the same harness measures what the harness and making the
 * buffers cost, which both elements' figures include. Exits 77 where
 * yolov8tensordec is absent (GStreamer < 1.28). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstharness.h>

#ifdef HAVE_GST_TENSOR_META
#include "bench_gst.h"
#include "tensordec_frames.h"

/* Seconds for one pass over the frames through h. */
static gdouble
one_pass (GstHarness * h, const TdFrames * f)
{
  gint64 t0 = g_get_monotonic_time ();
  guint i;

  for (i = 0; i < f->setup.n_frames; i++) {
    if (gst_harness_push (h, td_buffer (f, i)) != GST_FLOW_OK) {
      g_printerr ("push failed\n");
      exit (1);
    }
    gst_buffer_unref (gst_harness_pull (h));
  }
  return (g_get_monotonic_time () - t0) / 1e6;
}

static GstHarness *
identity_harness (const TdFrames * f)
{
  GstHarness *h = gst_harness_new ("identity");
  gchar *caps = td_caps (f);

  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  return h;
}

/* Mean number of anchors whose best class score passes the threshold. */
static gdouble
mean_candidates (const TdFrames * f)
{
  gint n = f->n_anchors, c, a;
  guint64 total = 0;
  guint i;

  for (i = 0; i < f->setup.n_frames; i++) {
    GstMapInfo map;
    const gfloat *t;

    gst_buffer_map (f->tensors[i], &map, GST_MAP_READ);
    t = (const gfloat *) map.data;
    for (a = 0; a < n; a++) {
      gfloat best = 0.0f;

      for (c = 0; c < f->setup.n_classes; c++)
        best = MAX (best, t[(4 + c) * n + a]);
      total += best > f->setup.score_threshold;
    }
    gst_buffer_unmap (f->tensors[i], &map);
  }
  return (gdouble) total / f->setup.n_frames;
}

static void
bench (const TdSetup * setup, guint rounds)
{
  TdFrames *f = td_frames_new (setup);
  GstHarness *h[3] = { identity_harness (f), td_harness_tensordec (f),
    td_harness_cudanms (f)
  };
  gdouble *secs[3], med[3];
  guint r, e;

  for (e = 0; e < 3; e++) {
    secs[e] = g_new (gdouble, rounds);
    one_pass (h[e], f);         /* warm-up */
  }
  for (r = 0; r < rounds; r++) {
    /* alternate the order of the two elements from round to round */
    for (e = 0; e < 3; e++) {
      guint k = (r % 2 && e > 0) ? 3 - e : e;

      secs[k][r] = one_pass (h[k], f);
    }
  }
  for (e = 0; e < 3; e++) {
    qsort (secs[e], rounds, sizeof (gdouble), bench_gst_cmp_double);
    med[e] = secs[e][rounds / 2];
    g_free (secs[e]);
    gst_harness_teardown (h[e]);
  }
  printf ("| %s | %u | %.0f | %.0f | %.0f | %.0f | %.1fx |\n", setup->name,
      setup->n_frames, mean_candidates (f), setup->n_frames / med[1],
      setup->n_frames / med[2], setup->n_frames / med[0], med[1] / med[2]);
  fflush (stdout);
  td_frames_free (f);
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
  if ((f = gst_element_factory_find ("yolov8tensordec")) == NULL) {
    printf ("SKIP: no yolov8tensordec (GStreamer >= 1.28) here\n");
    return 77;
  }
  gst_object_unref (f);
  if (rounds < 1)
    rounds = 1;
  cpu = bench_gst_cpu_name ();
  version = gst_version_string ();
  printf ("bench-tensordec: %s, %u cores, %s; median of %u rounds; "
      "frames/s\n\n", cpu, g_get_num_processors (), version, rounds);
  printf ("| setup | frames | candidates/frame | yolov8tensordec | "
      "cudanms device=cpu | harness alone (identity) | cudanms / "
      "yolov8tensordec |\n|---|---|---|---|---|---|---|\n");
  bench (&td_normal, rounds);
  bench (&td_edges, rounds);
  bench (&td_dense_300, rounds);
  bench (&td_dense, rounds);
  g_free (version);
  g_free (cpu);
  return 0;
#else
  printf ("SKIP: built without GStreamer >= 1.26 analytics\n");
  return 77;
#endif
}
