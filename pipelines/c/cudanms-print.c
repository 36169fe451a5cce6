/* cudanms-print: a minimal app embedding cudanms.
 *
 * Builds a pipeline with gst_parse_launch(), puts a pad probe on the src pad
 * of the cudanms element (the one named "nms", else the first cudanms, or
 * else the first cudanms decoder that a tensordecodebin of the pipeline
 * makes: GStreamer 1.28's cudanmstensordec) and
 * prints the GstVideoRegionOfInterestMeta of every buffer, as readable text or
 * (--json) one JSON line per frame in DL Streamer's gvametaconvert layout.
 * An oriented box (cudanms layout=yolov8-obb) is printed with its centre,
 * size and angle too: the ROI is its axis-aligned hull. A lane (cudanms
 * layout=laneatt) carries its points in the JSON: "lane": {"points":
 * [[x, y], ...]} (frame pixels, bottom row first); the ROI is their
 * rectangle. A person (layout=yolov8-pose) carries "keypoints": {"points":
 * [[x, y, score], ...]} (frame pixels; [x, y] without scores), an instance
 * (layout=yolov8-seg) "mask": {"x", "y", "width", "height" (its frame-pixel
 * rectangle), "counts": [...]} (its bytes row-major as runs, alternately
 * 0s and 1s, the first a run of 0s, possibly empty). A number that is NaN
 * or infinite (a keypoint as the tensor had it) is null in the JSON.
 * Exits 0 on EOS, 1 on a pipeline error, 2 on bad usage.
 *
 *   cudanms-print [--json] [--quiet] 'videotestsrc num-buffers=10 ! tensorinject ! cudanms name=nms ! fakesink'
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>

typedef struct {
  gboolean json;
  gboolean quiet;
  guint64 frames;
  guint64 detections;
  guint producers;              /* of this buffer's ROIs: text output names
                                 * each ROI's producer when more than one */
} PrintState;

/* A JSON string; bytes that are not UTF-8 (labels of another element)
 * become U+FFFD, so the line stays valid JSON. */
static void
print_json_string (const gchar * str)
{
  gchar *valid = str ? g_utf8_make_valid (str, -1) : NULL;
  const gchar *s = valid;

  putchar ('"');
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      printf ("\\%c", *s);
    else if ((guchar) * s < 0x20)
      printf ("\\u%04x", (guchar) * s);
    else
      putchar (*s);
  }
  putchar ('"');
  g_free (valid);
}

/* A double of the JSON line: "%.6f", or null for NaN and +-infinity (a
 * keypoint as the tensor had it), which JSON has no number for. */
static void
print_json_num (gdouble v)
{
  if (isfinite (v))
    printf ("%.6f", v);
  else
    fputs ("null", stdout);
}

/* ,"lane":{"points":[[x,y],...]} of a lane's "lane" structure: its
 * points' doubles x0, y0, x1, y1, ... in pairs. */
static void
print_lane_points (const GstStructure * lane)
{
  const GValue *pts = gst_structure_get_value (lane, "points");
  guint i, n = pts != NULL && GST_VALUE_HOLDS_ARRAY (pts) ?
      gst_value_array_get_size (pts) / 2 : 0;

  printf (",\"lane\":{\"points\":[");
  for (i = 0; i < n; i++) {
    const GValue *x = gst_value_array_get_value (pts, 2 * i);
    const GValue *y = gst_value_array_get_value (pts, 2 * i + 1);

    printf ("%s[", i ? "," : "");
    print_json_num (G_VALUE_HOLDS_DOUBLE (x) ? g_value_get_double (x) : 0.0);
    printf (",");
    print_json_num (G_VALUE_HOLDS_DOUBLE (y) ? g_value_get_double (y) : 0.0);
    printf ("]");
  }
  printf ("]}");
}

static gdouble
array_double (const GValue * arr, guint i)
{
  const GValue *v = gst_value_array_get_value (arr, i);

  return G_VALUE_HOLDS_DOUBLE (v) ? g_value_get_double (v) : 0.0;
}

/* ,"keypoints":{"points":[[x,y,score],...]} of a "keypoints" structure. */
static void
print_keypoints (const GstStructure * kps)
{
  const GValue *pts = gst_structure_get_value (kps, "points");
  const GValue *scores = gst_structure_get_value (kps, "scores");
  guint i, n = pts != NULL && GST_VALUE_HOLDS_ARRAY (pts) ?
      gst_value_array_get_size (pts) / 2 : 0;

  if (scores != NULL && (!GST_VALUE_HOLDS_ARRAY (scores)
          || gst_value_array_get_size (scores) != n))
    scores = NULL;
  printf (",\"keypoints\":{\"points\":[");
  for (i = 0; i < n; i++) {
    printf ("%s[", i ? "," : "");
    print_json_num (array_double (pts, 2 * i));
    printf (",");
    print_json_num (array_double (pts, 2 * i + 1));
    if (scores != NULL) {
      printf (",");
      print_json_num (array_double (scores, i));
    }
    printf ("]");
  }
  printf ("]}");
}

/* ,"mask":{"x":..,"y":..,"width":..,"height":..,"counts":[...]} of a
 * "mask" structure: its bytes as runs of 0s and 1s, 0s first. */
static void
print_mask (const GstStructure * mask)
{
  gint x = 0, y = 0, w = 0, h = 0;
  GstBuffer *data = NULL;
  GstMapInfo map;
  gsize i, run = 0;
  guint8 cur = 0;
  gboolean first = TRUE;

  gst_structure_get_int (mask, "x", &x);
  gst_structure_get_int (mask, "y", &y);
  gst_structure_get_int (mask, "width", &w);
  gst_structure_get_int (mask, "height", &h);
  printf (",\"mask\":{\"x\":%d,\"y\":%d,\"width\":%d,\"height\":%d,"
      "\"counts\":[", x, y, w, h);
  if (gst_structure_get (mask, "data", GST_TYPE_BUFFER, &data, NULL)
      && gst_buffer_map (data, &map, GST_MAP_READ)) {
    for (i = 0; i < map.size; i++) {
      guint8 v = map.data[i] != 0;

      if (v != cur) {
        printf ("%s%" G_GSIZE_FORMAT, first ? "" : ",", run);
        first = FALSE;
        cur = v;
        run = 0;
      }
      run++;
    }
    if (run > 0)
      printf ("%s%" G_GSIZE_FORMAT, first ? "" : ",", run);
    gst_buffer_unmap (data, &map);
  }
  gst_clear_buffer (&data);
  printf ("]}");
}

static void
print_roi (PrintState * st, GstVideoRegionOfInterestMeta * roi, gboolean first)
{
  GstStructure *det = gst_video_region_of_interest_meta_get_param (roi,
      "detection");
  gdouble conf = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  gint label_id = -1;
  const gchar *label = g_quark_to_string (roi->roi_type);
  const gchar *producer = NULL;
  /* an oriented box: cx cy width height (frame pixels) and angle (radians) */
  gdouble obb[5] = { 0, 0, 0, 0, 0 };
  gboolean oriented = FALSE;
  /* a lane: its points, x0 y0 x1 y1 ... */
  GstStructure *lane = gst_video_region_of_interest_meta_get_param (roi,
      "lane");
  /* a person's keypoints, an instance's mask */
  GstStructure *kps = gst_video_region_of_interest_meta_get_param (roi,
      "keypoints");
  GstStructure *mask = gst_video_region_of_interest_meta_get_param (roi,
      "mask");

  if (det) {
    gst_structure_get_double (det, "confidence", &conf);
    gst_structure_get_int (det, "label_id", &label_id);
    gst_structure_get_double (det, "x_min", &x0);
    gst_structure_get_double (det, "y_min", &y0);
    gst_structure_get_double (det, "x_max", &x1);
    gst_structure_get_double (det, "y_max", &y1);
    if (gst_structure_get_string (det, "label"))
      label = gst_structure_get_string (det, "label");
    producer = gst_structure_get_string (det, "producer");
    oriented = gst_structure_get_double (det, "cx", &obb[0])
        && gst_structure_get_double (det, "cy", &obb[1])
        && gst_structure_get_double (det, "width", &obb[2])
        && gst_structure_get_double (det, "height", &obb[3])
        && gst_structure_get_double (det, "angle", &obb[4]);
  }

  if (st->json) {
    printf ("%s{\"region_id\":%d,\"roi_type\":", first ? "" : ",", roi->id);
    print_json_string (g_quark_to_string (roi->roi_type));
    printf (",\"x\":%u,\"y\":%u,\"w\":%u,\"h\":%u,\"detection\":{"
        "\"bounding_box\":{\"x_min\":", roi->x, roi->y, roi->w, roi->h);
    print_json_num (x0);
    printf (",\"y_min\":");
    print_json_num (y0);
    printf (",\"x_max\":");
    print_json_num (x1);
    printf (",\"y_max\":");
    print_json_num (y1);
    printf ("},\"confidence\":");
    print_json_num (conf);
    printf (",\"label_id\":%d,\"label\":", label_id);
    print_json_string (label);
    if (producer != NULL) {
      printf (",\"producer\":");
      print_json_string (producer);
    }
    if (oriented) {
      static const gchar *const keys[5] = { "cx", "cy", "width", "height",
        "angle"
      };
      guint k;

      printf (",\"oriented_box\":{");
      for (k = 0; k < 5; k++) {
        printf ("%s\"%s\":", k ? "," : "", keys[k]);
        print_json_num (obb[k]);
      }
      printf ("}");
    }
    if (lane != NULL)
      print_lane_points (lane);
    if (kps != NULL)
      print_keypoints (kps);
    if (mask != NULL)
      print_mask (mask);
    printf ("}}");
  } else {
    printf ("  #%-3d %-14s %.3f  x=%-5u y=%-5u w=%-5u h=%-5u", roi->id,
        label, conf, roi->x, roi->y, roi->w, roi->h);
    if (oriented)
      printf ("  cx=%.1f cy=%.1f %.1fx%.1f angle=%.4f", obb[0], obb[1],
          obb[2], obb[3], obb[4]);
    printf ("%s%s\n", producer != NULL && st->producers > 1 ? "  " : "",
        producer != NULL && st->producers > 1 ? producer : "");
  }
}

/* The buffer's ROI metas, in the order they were attached: each cudanms
 * attaches its ROIs in kept order (score descending), with ids unique
 * within the buffer; the "producer" field of their "detection" structure
 * names the element. Walked, not looked up by id: ids need not start at 0
 * when another element attached ROIs first. */
static GPtrArray *
collect_rois (GstBuffer * buf)
{
  GPtrArray *rois = g_ptr_array_new ();
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL)
    g_ptr_array_add (rois, m);
  return rois;
}

/* How many distinct producers the ROIs name (those without one count as
 * one more). */
static guint
count_producers (GPtrArray * rois)
{
  GHashTable *seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint i, n;

  for (i = 0; i < rois->len; i++) {
    GstStructure *det = gst_video_region_of_interest_meta_get_param
        (g_ptr_array_index (rois, i), "detection");
    const gchar *p = det ? gst_structure_get_string (det, "producer") : NULL;

    g_hash_table_add (seen, (gpointer) (p ? p : ""));
  }
  n = g_hash_table_size (seen);
  g_hash_table_unref (seen);
  return n;
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  PrintState *st = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstVideoInfo vinfo;
  GstCaps *caps;
  GPtrArray *rois = collect_rois (buf);
  guint i, n = rois->len;
  gint width = 0, height = 0;

  st->producers = count_producers (rois);
  caps = gst_pad_get_current_caps (pad);
  if (caps && gst_video_info_from_caps (&vinfo, caps)) {
    width = GST_VIDEO_INFO_WIDTH (&vinfo);
    height = GST_VIDEO_INFO_HEIGHT (&vinfo);
  }
  if (caps)
    gst_caps_unref (caps);

  if (!st->quiet) {
    if (st->json) {
      printf ("{\"timestamp\":%" G_GUINT64_FORMAT ",\"resolution\":{\"width\":%d,"
          "\"height\":%d},\"objects\":[", GST_BUFFER_PTS_IS_VALID (buf) ?
          GST_BUFFER_PTS (buf) : 0, width, height);
    } else {
      printf ("frame %-4" G_GUINT64_FORMAT " pts %" GST_TIME_FORMAT
          "  %u detection%s\n", st->frames, GST_TIME_ARGS (GST_BUFFER_PTS (buf)),
          n, n == 1 ? "" : "s");
    }
    for (i = 0; i < n; i++)
      print_roi (st, g_ptr_array_index (rois, i), i == 0);
    if (st->json)
      printf ("]}\n");
  }
  st->frames++;
  st->detections += n;
  g_ptr_array_unref (rois);
  return GST_PAD_PROBE_OK;
}

/* Whether e is a cudanms element: of the type GstCudanms or a subclass
 * (cudanmstensordec, the decoder tensordecodebin makes), by the type's
 * name, so that nothing needs the plugin loaded beforehand. */
static gboolean
is_cudanms (GstElement * e)
{
  GType t;

  for (t = G_OBJECT_TYPE (e); t != 0; t = g_type_parent (t)) {
    if (g_strcmp0 (g_type_name (t), "GstCudanms") == 0)
      return TRUE;
  }
  return FALSE;
}

static gboolean
is_tensordecodebin (GstElement * e)
{
  GstElementFactory *f = gst_element_get_factory (e);

  return f != NULL && g_strcmp0 (GST_OBJECT_NAME (f), "tensordecodebin") == 0;
}

/* The first element of bin, at any depth, that test takes (a reference),
 * or NULL. */
static GstElement *
find_element (GstElement * bin, gboolean (*test) (GstElement *))
{
  GstElement *found = NULL;
  GstIterator *it;
  GValue item = G_VALUE_INIT;
  gboolean done = FALSE;

  if (!GST_IS_BIN (bin))
    return test (bin) ? gst_object_ref (bin) : NULL;
  it = gst_bin_iterate_recurse (GST_BIN (bin));
  while (!done) {
    switch (gst_iterator_next (it, &item)) {
      case GST_ITERATOR_OK:{
        GstElement *e = g_value_get_object (&item);

        if (test (e)) {
          found = gst_object_ref (e);
          done = TRUE;
        }
        g_value_reset (&item);
        break;
      }
      case GST_ITERATOR_RESYNC:
        gst_iterator_resync (it);
        break;
      default:
        done = TRUE;
        break;
    }
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return found;
}

/* The element named "nms", else the first cudanms element. */
static GstElement *
find_cudanms (GstElement * pipeline)
{
  GstElement *nms = NULL;

  if (GST_IS_BIN (pipeline))
    nms = gst_bin_get_by_name (GST_BIN (pipeline), "nms");
  return nms != NULL ? nms : find_element (pipeline, is_cudanms);
}

/* The element whose src pad is probed: found when the pipeline is built,
 * or, inside a tensordecodebin, a cudanms decoder that the bin makes (at
 * caps time, before any buffer reaches it). The bin makes its decoders
 * again at new caps and removes the old ones: the first decoder still in
 * the pipeline is the one probed. */
typedef struct
{
  GMutex lock;
  GPtrArray *made;              /* the decoders made and not yet removed, in
                                 * the order made (references) */
  GstElement *nms;              /* probed, or NULL */
  gulong probe;
  gboolean probed;              /* some decoder was probed */
  PrintState *st;
} Decoder;

static void
probe_decoder (Decoder * d, GstElement * nms)
{
  GstPad *pad = gst_element_get_static_pad (nms, "src");

  d->nms = gst_object_ref (nms);
  d->probe = gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer,
      d->st, NULL);
  d->probed = TRUE;
  gst_object_unref (pad);
}

static void
unprobe_decoder (Decoder * d)
{
  GstPad *pad = gst_element_get_static_pad (d->nms, "src");

  gst_pad_remove_probe (pad, d->probe);
  gst_object_unref (pad);
  gst_clear_object (&d->nms);
}

static void
on_deep_element_added (GstBin * bin, GstBin * sub_bin, GstElement * element,
    gpointer user_data)
{
  Decoder *d = user_data;

  if (!is_cudanms (element))
    return;
  g_mutex_lock (&d->lock);
  g_ptr_array_add (d->made, gst_object_ref (element));
  if (d->nms == NULL)
    probe_decoder (d, element);
  g_mutex_unlock (&d->lock);
}

static void
on_deep_element_removed (GstBin * bin, GstBin * sub_bin,
    GstElement * element, gpointer user_data)
{
  Decoder *d = user_data;
  gboolean was_probed;

  if (!is_cudanms (element))
    return;
  g_mutex_lock (&d->lock);
  was_probed = element == d->nms;
  if (was_probed)
    unprobe_decoder (d);
  g_ptr_array_remove (d->made, element);
  if (was_probed && d->made->len > 0)
    probe_decoder (d, g_ptr_array_index (d->made, 0));
  g_mutex_unlock (&d->lock);
}

int
main (int argc, char **argv)
{
  PrintState st = { FALSE, FALSE, 0, 0 };
  Decoder dec;
  GstElement *pipeline = NULL, *nms = NULL;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *desc;
  gint first = 1, ret = 0;

  gst_init (&argc, &argv);
  for (; first < argc && argv[first][0] == '-' && argv[first][1] == '-'; first++) {
    if (strcmp (argv[first], "--json") == 0)
      st.json = TRUE;
    else if (strcmp (argv[first], "--quiet") == 0)
      st.quiet = TRUE;
    else
      goto usage;
  }
  if (first >= argc)
    goto usage;

  desc = g_strjoinv (" ", argv + first);
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  if (err) {
    /* A partly built pipeline (e.g. a misspelt property) is an error too. */
    gst_clear_object (&pipeline);
    goto parse_error;
  }

  memset (&dec, 0, sizeof dec);
  g_mutex_init (&dec.lock);
  dec.made = g_ptr_array_new_with_free_func (gst_object_unref);
  dec.st = &st;
  nms = find_cudanms (pipeline);
  if (nms != NULL) {
    probe_decoder (&dec, nms);
    gst_object_unref (nms);
  } else {
    /* a tensordecodebin makes its decoder once it sees the caps */
    GstElement *tdb = find_element (pipeline, is_tensordecodebin);

    if (tdb == NULL)
      goto no_cudanms;
    gst_object_unref (tdb);
    g_signal_connect (pipeline, "deep-element-added",
        G_CALLBACK (on_deep_element_added), &dec);
    g_signal_connect (pipeline, "deep-element-removed",
        G_CALLBACK (on_deep_element_removed), &dec);
  }

  if (gst_element_set_state (pipeline,
          GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    fprintf (stderr, "cudanms-print: the pipeline did not start\n");

  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *perr = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &perr, &dbg);
    fprintf (stderr, "cudanms-print: error from %s: %s\n%s\n",
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), perr->message,
        dbg ? dbg : "");
    g_clear_error (&perr);
    g_free (dbg);
    ret = 1;
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);

  if (!st.json)
    printf ("%" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT
        " detections\n", st.frames, st.detections);

  g_signal_handlers_disconnect_by_data (pipeline, &dec);
  if (!dec.probed && ret == 0) {
    fprintf (stderr, "cudanms-print: the tensordecodebin of the pipeline "
        "made no cudanms decoder\n");
    ret = 2;
  }
  gst_clear_object (&dec.nms);
  g_ptr_array_unref (dec.made);
  gst_object_unref (pipeline);
  g_mutex_clear (&dec.lock);
  return ret;

usage:
  fprintf (stderr, "usage: %s [--json] [--quiet] PIPELINE-DESCRIPTION\n"
      "  the pipeline must hold a cudanms element (named \"nms\" or the "
      "first),\n  or a tensordecodebin that makes one\n", argv[0]);
  return 2;
parse_error:
  fprintf (stderr, "cudanms-print: bad pipeline: %s\n",
      err ? err->message : "unknown error");
  g_clear_error (&err);
  return 2;
no_cudanms:
  fprintf (stderr, "cudanms-print: no cudanms element (nor a "
      "tensordecodebin) in the pipeline\n");
  gst_object_unref (pipeline);
  g_ptr_array_unref (dec.made);
  g_mutex_clear (&dec.lock);
  return 2;
}
