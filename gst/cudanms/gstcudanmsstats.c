/* cudanms: warnings once per stream and kind, and the counters (see
 * gstcudanmsstats.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gstcudanmsstats.h"
#include "gstcudanmsdebug.h"

/* The frame gst_cudanms_stats_frame checks. */
typedef struct
{
  const cnms_report *r;         /* what cnms_detect found */
  const cnms_tensor *tensor;    /* its dims, for a message */
  cnms_layout layout;
  const cnms_params *p;
  const cnms_det *dets;
  gint n_dets;
  GstCudanmsLabels *labels;     /* looked up: the label a ROI gets */
} Frame;

/* Kinds of problem remembered per stream; past this many, new kinds are
 * only logged (a stream whose every buffer is bad in a new way). */
#define MAX_KINDS 64

void
gst_cudanms_stats_init (GstCudanmsStats * stats)
{
  memset (&stats->c, 0, sizeof (stats->c));
  stats->warned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  stats->streams = g_array_new (FALSE, TRUE,
      sizeof (GstCudanmsStreamCounters));
}

void
gst_cudanms_stats_clear (GstCudanmsStats * stats)
{
  g_clear_pointer (&stats->warned, g_hash_table_unref);
  g_clear_pointer (&stats->streams, g_array_unref);
}

void
gst_cudanms_stats_start (GstElement * element, GstCudanmsStats * stats)
{
  GST_OBJECT_LOCK (element);
  memset (&stats->c, 0, sizeof (stats->c));
  g_array_set_size (stats->streams, 0);
  GST_OBJECT_UNLOCK (element);
  gst_cudanms_stats_new_stream (stats);
}

void
gst_cudanms_stats_new_stream (GstCudanmsStats * stats)
{
  g_hash_table_remove_all (stats->warned);
}

/**
 * GstCudanms:stats:
 *
 * Counters since the element started (READY to PAUSED), as a
 * "cudanms-stats" structure of guint64 fields: buffers,
 * buffers-without-tensor, buffers-with-bad-tensor, candidates (before
 * max-candidates), candidates-dropped (beyond max-candidates),
 * buffers-over-max-candidates, detections (kept boxes attached),
 * buffers-with-scores-above-1, end2end-invalid-classes (rows dropped),
 * end2end-fractional-classes (rows whose class was truncated),
 * detections-without-label (class ids past the label file),
 * lanes-without-points (kept lanes with fewer than 2 points in the frame,
 * dropped; layout laneatt), buffers-from-other-cuda-context (tensors in
 * GstCudaMemory of another CUDA context than the element's, e.g. of
 * another GPU: read through a host copy), batches (batch buffers, whose
 * every frame counts as a buffer above), batch-other-objects (a batch's
 * events and buffer lists, passed untouched), and for batches a
 * "streams" array of "stream" structures (index, frames,
 * frames-without-tensor, frames-with-bad-tensor, detections),
 * and two times
 * in nanoseconds, summed over the decoded buffers: backend-time (the
 * backend's decode + NMS call, with its wait for the GPU) and output-time
 * (attaching the metas). Each problem is posted once per stream as an
 * element warning; these say how often it happened.
 */
void
gst_cudanms_stats_install_property (GObjectClass * klass, guint prop_id)
{
  g_object_class_install_property (klass, prop_id,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters since start: buffers, buffers-without-tensor, "
          "buffers-with-bad-tensor, candidates, candidates-dropped, "
          "buffers-over-max-candidates, detections, "
          "buffers-with-scores-above-1, end2end-invalid-classes, "
          "end2end-fractional-classes, detections-without-label, "
          "lanes-without-points, buffers-from-other-cuda-context, "
          "batches, batch-other-objects; backend-time, output-time (ns); "
          "streams (a batch's, by index: frames, frames-without-tensor, "
          "frames-with-bad-tensor, detections)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

GstStructure *
gst_cudanms_stats_to_structure (const GstCudanmsStats * stats)
{
  const GstCudanmsCounters *c = &stats->c;
  GstStructure *s = gst_structure_new ("cudanms-stats",
      "buffers", G_TYPE_UINT64, c->buffers,
      "buffers-without-tensor", G_TYPE_UINT64, c->no_tensor,
      "buffers-with-bad-tensor", G_TYPE_UINT64, c->bad_tensor,
      "candidates", G_TYPE_UINT64, c->candidates,
      "candidates-dropped", G_TYPE_UINT64, c->candidates_dropped,
      "buffers-over-max-candidates", G_TYPE_UINT64, c->capped,
      "detections", G_TYPE_UINT64, c->detections,
      "buffers-with-scores-above-1", G_TYPE_UINT64, c->scores_above_one,
      "end2end-invalid-classes", G_TYPE_UINT64, c->invalid_classes,
      "end2end-fractional-classes", G_TYPE_UINT64, c->fractional_classes,
      "detections-without-label", G_TYPE_UINT64, c->unlabelled,
      "lanes-without-points", G_TYPE_UINT64, c->lanes_without_points,
      "buffers-from-other-cuda-context", G_TYPE_UINT64, c->other_context,
      "batches", G_TYPE_UINT64, c->batches,
      "batch-other-objects", G_TYPE_UINT64, c->batch_other,
      "backend-time", G_TYPE_UINT64, c->backend_ns,
      "output-time", G_TYPE_UINT64, c->output_ns, NULL);

  if (stats->streams != NULL && stats->streams->len > 0) {
    GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
    guint i;

    g_value_init (&arr, GST_TYPE_ARRAY);
    for (i = 0; i < stats->streams->len; i++) {
      const GstCudanmsStreamCounters *sc =
          &g_array_index (stats->streams, GstCudanmsStreamCounters, i);

      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, gst_structure_new ("stream",
              "index", G_TYPE_UINT, i,
              "frames", G_TYPE_UINT64, sc->frames,
              "frames-without-tensor", G_TYPE_UINT64, sc->no_tensor,
              "frames-with-bad-tensor", G_TYPE_UINT64, sc->bad_tensor,
              "detections", G_TYPE_UINT64, sc->detections, NULL));
      gst_value_array_append_and_take_value (&arr, &v);
    }
    gst_structure_take_value (s, "streams", &arr);
  }

  return s;
}

void
gst_cudanms_stats_stream (GstElement * element, GstCudanmsStats * stats,
    guint index, gboolean no_tensor, gboolean bad, guint64 detections)
{
  GstCudanmsStreamCounters *sc;

  if (index >= GST_CUDANMS_STATS_MAX_STREAMS)
    return;
  GST_OBJECT_LOCK (element);
  if (index >= stats->streams->len)
    g_array_set_size (stats->streams, index + 1);
  sc = &g_array_index (stats->streams, GstCudanmsStreamCounters, index);
  sc->frames++;
  sc->no_tensor += no_tensor != FALSE;
  sc->bad_tensor += bad != FALSE;
  sc->detections += detections;
  GST_OBJECT_UNLOCK (element);
}

void
gst_cudanms_stats_batch (GstElement * element, GstCudanmsStats * stats,
    guint other)
{
  GST_OBJECT_LOCK (element);
  stats->c.batches++;
  stats->c.batch_other += other;
  GST_OBJECT_UNLOCK (element);
}

void
gst_cudanms_stats_times (GstElement * element, GstCudanmsStats * stats,
    GstClockTime backend, GstClockTime output)
{
  GST_OBJECT_LOCK (element);
  stats->c.backend_ns += backend;
  stats->c.output_ns += output;
  GST_OBJECT_UNLOCK (element);
}

/* TRUE the first time kind is seen in this stream: post it. The kind of a
 * message is the message with each run of digits made one '#'. */
static gboolean
first_of_kind (GstCudanmsStats * stats, const gchar * kind_or_msg)
{
  GString *kind = g_string_new (NULL);
  const gchar *p;

  for (p = kind_or_msg; *p != '\0'; p++) {
    if (!g_ascii_isdigit (*p))
      g_string_append_c (kind, *p);
    else if (kind->len == 0 || kind->str[kind->len - 1] != '#')
      g_string_append_c (kind, '#');
  }
  if (g_hash_table_contains (stats->warned, kind->str)
      || g_hash_table_size (stats->warned) >= MAX_KINDS) {
    g_string_free (kind, TRUE);
    return FALSE;
  }
  g_hash_table_add (stats->warned, g_string_free (kind, FALSE));
  return TRUE;
}

void
gst_cudanms_stats_problem (GstElement * element, GstCudanmsStats * stats,
    gboolean missing, const gchar * msg)
{
  GST_OBJECT_LOCK (element);
  stats->c.buffers++;
  if (missing)
    stats->c.no_tensor++;
  else
    stats->c.bad_tensor++;
  GST_OBJECT_UNLOCK (element);

  if (missing && first_of_kind (stats, "missing tensor")) {
    GST_ELEMENT_WARNING_WITH_DETAILS (element, STREAM, FORMAT,
        ("Buffer has no detection tensor; passing it without ROIs."),
        ("%s; further buffers without a tensor are only logged and counted "
            "(property stats)", msg), ("kind",
            G_TYPE_STRING, "missing-tensor", NULL));
  } else if (!missing && first_of_kind (stats, msg)) {
    GST_ELEMENT_WARNING_WITH_DETAILS (element, STREAM, FORMAT,
        ("Bad detection tensor: %s", msg),
        ("The buffer passes without ROIs; further buffers with this kind of "
            "problem are only logged and counted (property stats)"),
        ("kind", G_TYPE_STRING, "bad-tensor", NULL));
  } else {
    GST_INFO_OBJECT (element, "%s: %s, buffer passes without ROIs",
        missing ? "no tensor" : "bad tensor", msg);
  }
}

/* End2end rows with a candidate's score whose class value is no class id
 * (dropped by decode), or a fractional one (truncated by decode), as the
 * decode counted them. */
static void
check_end2end_classes (GstElement * element, GstCudanmsStats * stats,
    const Frame * f)
{
  const cnms_report *r = f->r;

  if (r->invalid_classes == 0 && r->fractional_classes == 0)
    return;
  GST_OBJECT_LOCK (element);
  stats->c.invalid_classes += (guint64) r->invalid_classes;
  stats->c.fractional_classes += (guint64) r->fractional_classes;
  GST_OBJECT_UNLOCK (element);
  if (r->invalid_classes > 0 && first_of_kind (stats, "end2end invalid class"))
    GST_ELEMENT_WARNING (element, STREAM, FORMAT,
        ("End2end rows with class value %g dropped: a class is an integer "
            "in [0, 2^24).", r->first_invalid_class),
        ("%d such rows in this frame; later ones are only counted (stats: "
            "end2end-invalid-classes)", r->invalid_classes));
  if (r->fractional_classes > 0
      && first_of_kind (stats, "end2end fractional class"))
    GST_ELEMENT_WARNING (element, STREAM, FORMAT,
        ("End2end class value %g is not an integer; it is read as class %d. "
            "Is the tensor a one-class yolov5 [1, N, 6]? Then set "
            "layout=yolov5.", r->first_fractional_class,
            (gint) r->first_fractional_class),
        ("%d such rows in this frame; later ones are only counted (stats: "
            "end2end-fractional-classes)", r->fractional_classes));
}

/* Scores are probabilities in every layout; a kept score above 1 means
 * the tensor was read with the wrong layout. */
static void
check_scores (GstElement * element, GstCudanmsStats * stats,
    const Frame * f)
{
  const cnms_shape *shape = &f->r->shape;
  const cnms_tensor *t = f->tensor;
  gint64 a = t->dims[t->n_dims - 2], b = t->dims[t->n_dims - 1];
  gfloat top = 0.0f;
  gchar hint[160];
  GString *dims;
  gint i;

  for (i = 0; i < f->n_dets; i++)
    top = MAX (top, f->dets[i].score);
  if (!(top > 1.0f))
    return;
  GST_OBJECT_LOCK (element);
  stats->c.scores_above_one++;
  GST_OBJECT_UNLOCK (element);
  if (!first_of_kind (stats, "scores above 1"))
    return;
  dims = g_string_new (NULL);
  if (shape->layout == CNMS_LAYOUT_YOLOV5 && a >= 5)
    g_snprintf (hint, sizeof (hint), "is it yolov8 [1, 4+C, N] with %"
        G_GINT64_FORMAT " classes and %" G_GINT64_FORMAT " anchors? Then set "
        "layout=yolov8", a - 4, b);
  else if (shape->layout == CNMS_LAYOUT_YOLOV8 && b >= 6)
    g_snprintf (hint, sizeof (hint), "is it yolov5 [1, N, 5+C] with %"
        G_GINT64_FORMAT " anchors? Then set layout=yolov5", a);
  else if (shape->layout == CNMS_LAYOUT_END2END)
    g_snprintf (hint, sizeof (hint), "is it a one-class yolov5 [1, N, 6]? "
        "Then set layout=yolov5");
  else
    g_snprintf (hint, sizeof (hint), "check the layout and the model's "
        "output");
  for (i = 0; i < t->n_dims; i++)
    g_string_append_printf (dims, "%s%" G_GINT64_FORMAT, i ? ", " : "",
        t->dims[i]);
  GST_ELEMENT_WARNING_WITH_DETAILS (element, STREAM, FORMAT,
      ("Scores up to %g are not probabilities: the [%s] tensor was decoded "
          "as %s (layout=%s); %s.", top, dims->str,
          cnms_layout_name (shape->layout), cnms_layout_name (f->layout),
          hint),
      ("Detections are attached as decoded; later frames with scores above "
          "1 are only counted (stats: buffers-with-scores-above-1)"),
      ("kind", G_TYPE_STRING, "score-range", "max-score",
          G_TYPE_FLOAT, top, NULL));
  g_string_free (dims, TRUE);
}

static void
check_labels (GstElement * element, GstCudanmsStats * stats,
    const Frame * f)
{
  guint64 unlabelled = 0;
  gint i, first = -1;

  for (i = 0; i < f->n_dets; i++) {
    if (f->dets[i].class_id >= 0
        && (guint) f->dets[i].class_id < f->labels->n_from_file)
      continue;
    if (unlabelled++ == 0)
      first = f->dets[i].class_id;
  }
  if (unlabelled == 0)
    return;
  GST_OBJECT_LOCK (element);
  stats->c.unlabelled += unlabelled;
  GST_OBJECT_UNLOCK (element);
  if (first_of_kind (stats, "class without label")) {
    const gchar *label;
    GQuark quark;

    /* the label the ROI got */
    gst_cudanms_labels_lookup (f->labels, first, &label, &quark);
    GST_ELEMENT_WARNING (element, STREAM, FORMAT,
        ("Class %d has no line in the label file (%u labels); it is "
            "labelled \"%s\".", first, f->labels->n_from_file, label),
        ("Later detections without a label are only counted (stats: "
            "detections-without-label)"));
  }
}

/* the library's rule: a lane is drawn through 2 points at least */
#define MIN_LANE_POINTS 2

void
gst_cudanms_stats_lanes_without_points (GstElement * element,
    GstCudanmsStats * stats, gint n)
{
  if (n <= 0)
    return;
  GST_OBJECT_LOCK (element);
  stats->c.lanes_without_points += (guint64) n;
  GST_OBJECT_UNLOCK (element);
  if (first_of_kind (stats, "lanes without points"))
    GST_ELEMENT_WARNING_WITH_DETAILS (element, STREAM, FORMAT,
        ("Kept lanes with fewer than %d points in the frame are dropped (%d "
            "in this frame).", MIN_LANE_POINTS, n),
        ("Later lanes without points are only counted (stats: "
            "lanes-without-points)"),
        ("kind", G_TYPE_STRING, "lanes-without-points", "lanes", G_TYPE_INT,
            n, NULL));
  else
    GST_INFO_OBJECT (element, "%d kept lanes without points dropped", n);
}

/* The CUDA device of a GstCudaContext (its "cuda-device-id"), -1 when it
 * has none. */
static gint
context_device (GObject * context)
{
  gint id = -1;

  if (context != NULL
      && g_object_class_find_property (G_OBJECT_GET_CLASS (context),
          "cuda-device-id") != NULL)
    g_object_get (context, "cuda-device-id", &id, NULL);
  return id;
}

void
gst_cudanms_stats_other_context (GstElement * element,
    GstCudanmsStats * stats, GObject * element_context,
    GObject * tensor_context)
{
  gint mine, theirs;

  GST_OBJECT_LOCK (element);
  stats->c.other_context++;
  GST_OBJECT_UNLOCK (element);
  if (!first_of_kind (stats, "other cuda context")) {
    GST_LOG_OBJECT (element, "tensor of another CUDA context, read through "
        "host memory");
    return;
  }
  mine = context_device (element_context);
  theirs = context_device (tensor_context);
  if (theirs != mine)
    GST_ELEMENT_WARNING_WITH_DETAILS (element, RESOURCE, SETTINGS,
        ("Tensors in CUDA memory of GPU %d reach the element on GPU %d: "
            "each is copied through host memory and decoded as a host "
            "tensor.", theirs, mine),
        ("No peer access between GPUs is assumed. Set cuda-device-id=%d "
            "(the tensor's GPU) to read them in place; such buffers are "
            "counted (stats: buffers-from-other-cuda-context)", theirs),
        ("kind", G_TYPE_STRING, "other-cuda-context", "tensor-device",
            G_TYPE_INT, theirs, "element-device", G_TYPE_INT, mine, NULL));
  else
    GST_ELEMENT_WARNING_WITH_DETAILS (element, RESOURCE, SETTINGS,
        ("Tensors in CUDA memory of another CUDA context on GPU %d reach "
            "the element (its own context on GPU %d): each is copied "
            "through host memory and decoded as a host tensor.", theirs,
            mine),
        ("Share one GstCudaContext in the pipeline (the gst.cuda.context "
            "context) to read them in place; such buffers are counted "
            "(stats: buffers-from-other-cuda-context)"),
        ("kind", G_TYPE_STRING, "other-cuda-context", "tensor-device",
            G_TYPE_INT, theirs, "element-device", G_TYPE_INT, mine, NULL));
}

void
gst_cudanms_stats_frame (GstElement * element, GstCudanmsStats * stats,
    const cnms_report * report, const cnms_tensor * tensor,
    cnms_layout layout, const cnms_params * p, const cnms_det * dets,
    gint n_dets, GstCudanmsLabels * labels)
{
  const Frame frame = { report, tensor, layout, p, dets, n_dets, labels
  }, *f = &frame;
  const gint max = p->max_candidates, found = report->candidates;
  const gint dropped = report->candidates_dropped;

  GST_OBJECT_LOCK (element);
  stats->c.buffers++;
  stats->c.candidates += (guint64) found;
  stats->c.candidates_dropped += (guint64) dropped;
  stats->c.capped += dropped > 0;
  stats->c.detections += (guint64) n_dets;
  GST_OBJECT_UNLOCK (element);

  if (dropped > 0 && first_of_kind (stats, "over max-candidates")) {
    GST_ELEMENT_WARNING_WITH_DETAILS (element, STREAM, FORMAT,
        ("%d candidates, more than max-candidates=%d: the %d best were kept, "
            "%d dropped.", found, max, max, dropped),
        ("Later frames over the cap are only counted (stats: "
            "candidates-dropped, buffers-over-max-candidates)"),
        ("kind", G_TYPE_STRING, "over-max-candidates",
            "candidates", G_TYPE_INT, found, "max-candidates",
            G_TYPE_INT, max, "dropped", G_TYPE_INT, dropped, NULL));
  } else if (dropped > 0) {
    GST_INFO_OBJECT (element, "%d candidates over max-candidates=%d dropped",
        dropped, max);
  }
  check_scores (element, stats, f);
  if (report->shape.layout == CNMS_LAYOUT_END2END)
    check_end2end_classes (element, stats, f);
  if (labels->n_from_file > 0)
    check_labels (element, stats, f);
}
