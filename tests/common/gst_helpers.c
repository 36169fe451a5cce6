#include <string.h>
#include <unistd.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"
#include "cudanms.h"
#include "cudanms_static.h"

/* Anchors (cx, cy, w, h, class, score). Scores and coordinates are exact in
 * float16, so the fp16 tensor must give identical results.
 *  0: box 80,80-120,120 cls0 .875        kept (id 0)
 *  1: box 82,81-122,121 cls0 .75         suppressed by 0 (IoU .86)
 *  2: box 81,80-121,120 cls1 .625        kept: another class (id 1)
 *  3: box 190,135-210,165 cls2 .5        kept (id 2)
 *  4: box 45,45-55,55 cls0 .25           score == threshold: no candidate
 *  5: box 275,150-325,250 cls1 .375      kept, clipped to 320x240 (id 3)
 *  6: box 8,18.25-13,22.25 cls2 .3125    kept, rounding (id 4)
 *  7: NaN score                          never a candidate
 *  8, 9: zero scores */
static const gfloat anchors[HAND_ANCHORS][6] = {
  {100, 100, 40, 40, 0, 0.875f},
  {102, 101, 40, 40, 0, 0.75f},
  {101, 100, 40, 40, 1, 0.625f},
  {200, 150, 20, 30, 2, 0.5f},
  {50, 50, 10, 10, 0, 0.25f},
  {300, 200, 50, 100, 1, 0.375f},
  {10.5f, 20.25f, 5, 4, 2, 0.3125f},
  {150, 150, 10, 10, 0, NAN},
  {160, 160, 10, 10, 1, 0},
  {170, 170, 10, 10, 2, 0},
};

const ExpectedRoi hand_expected[HAND_KEPT] = {
  {80, 80, 40, 40, 0, 0.875f, 80, 80, 120, 120},
  {81, 80, 40, 40, 1, 0.625f, 81, 80, 121, 120},
  {190, 135, 20, 30, 2, 0.5f, 190, 135, 210, 165},
  {275, 150, 45, 90, 1, 0.375f, 275, 150, 320, 240},
  {8, 18, 5, 5, 2, 0.3125f, 8, 18.25f, 13, 22.25f},
};

gfloat *
hand_tensor_yolov8 (gsize * n_floats)
{
  gsize n = (4 + HAND_CLASSES) * HAND_ANCHORS;
  gfloat *t = g_new0 (gfloat, n);
  gint a, c;

  for (a = 0; a < HAND_ANCHORS; a++) {
    for (c = 0; c < 4; c++)
      t[c * HAND_ANCHORS + a] = anchors[a][c];
    t[(4 + (gint) anchors[a][4]) * HAND_ANCHORS + a] = anchors[a][5];
  }
  *n_floats = n;
  return t;
}

gfloat *
hand_tensor_yolov5 (gsize * n_floats)
{
  gint ch = 5 + HAND_CLASSES;
  gsize n = (gsize) ch * HAND_ANCHORS;
  gfloat *t = g_new0 (gfloat, n);
  gint a, c;

  for (a = 0; a < HAND_ANCHORS; a++) {
    for (c = 0; c < 4; c++)
      t[a * ch + c] = anchors[a][c];
    t[a * ch + 4] = 1.0f;       /* objectness: score = 1 x class score */
    t[a * ch + 5 + (gint) anchors[a][4]] = anchors[a][5];
  }
  *n_floats = n;
  return t;
}

guint16 *
to_half (const gfloat * f, gsize n)
{
  guint16 *h = g_new0 (guint16, n);

  cnms_floats_to_halves (f, n, h);
  return h;
}

void
register_tensor_meta (void)
{
  static const gchar *tags[] = { NULL };

  if (gst_meta_get_info ("CudanmsTensorMeta") == NULL)
    fail_unless (gst_meta_register_custom ("CudanmsTensorMeta", tags, NULL,
            NULL, NULL) != NULL);
}

void
attach_tensor_value (GstBuffer * buf, const gchar * id,
    const gchar * data_type, const GValue * dims, GstBuffer * data)
{
  GstCustomMeta *meta;
  GstStructure *s;

  register_tensor_meta ();
  meta = gst_buffer_add_custom_meta (buf, "CudanmsTensorMeta");
  fail_unless (meta != NULL);
  s = gst_custom_meta_get_structure (meta);
  if (id != NULL)
    gst_structure_set (s, "id", G_TYPE_STRING, id, NULL);
  if (data_type != NULL)
    gst_structure_set (s, "data-type", G_TYPE_STRING, data_type, NULL);
  gst_structure_set (s, "dims-order", G_TYPE_STRING, "row-major", NULL);
  if (dims != NULL)
    gst_structure_set_value (s, "dims", dims);
  if (data != NULL)
    gst_structure_set (s, "data", GST_TYPE_BUFFER, data, NULL);
}

const gfloat one_box_end2end[6] = { 10, 20, 30, 40, 0.9f, 5 };

void
attach_tensor (GstBuffer * buf, const gchar * id, const gchar * data_type,
    const gint * dims, guint n_dims, gconstpointer data, gsize size)
{
  GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
  GstBuffer *payload = gst_buffer_new_memdup (data, size);
  guint i;

  g_value_init (&arr, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_INT);
  for (i = 0; i < n_dims; i++) {
    g_value_set_int (&v, dims[i]);
    gst_value_array_append_value (&arr, &v);
  }
  attach_tensor_value (buf, id, data_type, &arr, payload);
  g_value_unset (&v);
  g_value_unset (&arr);
  gst_buffer_unref (payload);
}

void
attach_tensor_str (GstBuffer * buf, const gchar * data_type,
    const gchar * dims_str, gconstpointer data, gsize size)
{
  GstBuffer *payload;
  GValue dims = G_VALUE_INIT;

  g_value_init (&dims, G_TYPE_STRING);
  g_value_set_string (&dims, dims_str);
  payload = size ? gst_buffer_new_memdup (data, size) : gst_buffer_new ();
  attach_tensor_value (buf, NULL, data_type, &dims, payload);
  gst_buffer_unref (payload);
  g_value_unset (&dims);
}

void
attach_hand_tensor (GstBuffer * buf, const gchar * id)
{
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);

  attach_tensor (buf, id, "float32", dims, 3, t, n * 4);
  g_free (t);
}

void
attach_one_box (GstBuffer * buf, const gchar * id)
{
  const gint dims[] = { 1, 1, 6 };

  attach_tensor (buf, id, "float32", dims, 3, one_box_end2end,
      sizeof one_box_end2end);
}

GstBuffer *
make_frame (guint8 fill)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, FRAME_W * FRAME_H, NULL);

  gst_buffer_memset (buf, 0, fill, FRAME_W * FRAME_H);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

GstBuffer *
frame_with_tensor (const gchar * data_type, const gchar * dims,
    gconstpointer data, gsize size)
{
  GstBuffer *buf = make_frame (0);

  attach_tensor_str (buf, data_type, dims, data, size);
  return buf;
}

guint
count_metas (GstBuffer * buf, GType api)
{
  gpointer state = NULL;
  guint n = 0;

  while (gst_buffer_iterate_meta_filtered (buf, &state, api))
    n++;
  return n;
}

guint
count_rois (GstBuffer * buf)
{
  return count_metas (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
}

void
assert_hand_rois (GstBuffer * buf, const gchar * const *labels)
{
  assert_hand_rois_from (buf, labels, 0, NULL);
}

void
assert_hand_rois_from (GstBuffer * buf, const gchar * const *labels,
    gint first_id, const gchar * producer)
{
  guint i, n_labels = labels ? g_strv_length ((gchar **) labels) : 0;

  fail_unless_equals_int (count_rois (buf), HAND_KEPT);
  for (i = 0; i < HAND_KEPT; i++) {
    const ExpectedRoi *e = &hand_expected[i];
    GstVideoRegionOfInterestMeta *m =
        gst_buffer_get_video_region_of_interest_meta_id (buf,
        first_id + (gint) i);
    GstStructure *s;
    const gchar *who;
    gchar *label;
    gdouble d;
    gint label_id;

    fail_unless (m != NULL, "no ROI with id %d", first_id + (gint) i);
    if ((guint) e->label_id < n_labels)
      label = g_strdup (labels[e->label_id]);
    else
      label = g_strdup_printf ("class-%d", e->label_id);
    fail_unless_equals_string (g_quark_to_string (m->roi_type), label);
    fail_unless_equals_int (m->x, e->x);
    fail_unless_equals_int (m->y, e->y);
    fail_unless_equals_int (m->w, e->w);
    fail_unless_equals_int (m->h, e->h);
    fail_unless_equals_int (g_list_length (m->params), 1);
    s = gst_video_region_of_interest_meta_get_param (m, "detection");
    fail_unless (s != NULL);
    fail_unless_equals_int (gst_structure_n_fields (s), 8);
    fail_unless (gst_structure_get_double (s, "confidence", &d));
    fail_unless_equals_float (d, (gdouble) e->score);
    fail_unless (gst_structure_get_int (s, "label_id", &label_id));
    fail_unless_equals_int (label_id, e->label_id);
    fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
    fail_unless (gst_structure_get_double (s, "x_min", &d));
    fail_unless_equals_float (d, e->x1 / (gdouble) FRAME_W);
    fail_unless (gst_structure_get_double (s, "y_min", &d));
    fail_unless_equals_float (d, e->y1 / (gdouble) FRAME_H);
    fail_unless (gst_structure_get_double (s, "x_max", &d));
    fail_unless_equals_float (d, e->x2 / (gdouble) FRAME_W);
    fail_unless (gst_structure_get_double (s, "y_max", &d));
    fail_unless_equals_float (d, e->y2 / (gdouble) FRAME_H);
    /* the element's name; when not given, a name (not empty) */
    fail_unless (gst_structure_has_field_typed (s, "producer",
            G_TYPE_STRING));
    who = gst_structure_get_string (s, "producer");
    if (producer != NULL) {
      fail_unless_equals_string (who, producer);
    } else {
      fail_unless (who != NULL && who[0] != '\0', "empty producer");
    }
    g_free (label);
  }
}

gchar *
rois_to_string (GstBuffer * buf)
{
  GString *str = g_string_new (NULL);
  guint i, n = count_rois (buf);

  for (i = 0; i < n; i++) {
    GstVideoRegionOfInterestMeta *m =
        gst_buffer_get_video_region_of_interest_meta_id (buf, (gint) i);
    GstStructure *s;
    gdouble conf = -1;

    fail_unless (m != NULL);
    s = gst_video_region_of_interest_meta_get_param (m, "detection");
    fail_unless (s != NULL);
    gst_structure_get_double (s, "confidence", &conf);
    g_string_append_printf (str, "%u,%u,%u,%u,%s,%.9g;", m->x, m->y, m->w,
        m->h, g_quark_to_string (m->roi_type), conf);
  }
  return g_string_free (str, FALSE);
}

void
assert_rois_string (GstBuffer * buf, const gchar * expected)
{
  gchar *str = rois_to_string (buf);

  fail_unless_equals_string (str, expected);
  g_free (str);
}

void
write_npy (const gchar * path, const gchar * descr, const gint * dims,
    guint n_dims, gconstpointer data, gsize size)
{
  GString *h = g_string_new (NULL);
  GString *file = g_string_new (NULL);
  guint i;
  guint16 hlen;

  g_string_append_printf (h, "{'descr': '%s', 'fortran_order': False, "
      "'shape': (", descr);
  for (i = 0; i < n_dims; i++)
    g_string_append_printf (h, "%d, ", dims[i]);
  g_string_append (h, "), }");
  while ((10 + h->len + 1) % 64 != 0)
    g_string_append_c (h, ' ');
  g_string_append_c (h, '\n');
  hlen = (guint16) h->len;
  g_string_append_len (file, "\x93NUMPY\x01\x00", 8);
  g_string_append_len (file, (const gchar *) &hlen, 2);
  g_string_append_len (file, h->str, h->len);
  g_string_append_len (file, data, size);
  fail_unless (g_file_set_contents (path, file->str, file->len, NULL));
  g_string_free (h, TRUE);
  g_string_free (file, TRUE);
}

/* An element's bus, to read warnings and errors. */
GstBus *
watch_bus (GstElement * element)
{
  GstBus *bus = gst_bus_new ();

  gst_element_set_bus (element, bus);
  return bus;
}

/* Drops what is still queued (messages hold a ref on their source, and the
 * element holds the bus: a cycle) and releases the bus. */
void
unwatch_bus (GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

gchar *
pop_warning (GstBus * bus)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  GError *err = NULL;
  gchar *text;

  if (msg == NULL)
    return NULL;
  gst_message_parse_warning (msg, &err, NULL);
  text = g_strdup (err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  return text;
}

void
assert_no_warning (GstBus * bus)
{
  gchar *text = pop_warning (bus);

  fail_unless (text == NULL, "unexpected warning '%s'", text);
}

guint64
get_stat (GstElement * el, const gchar * name)
{
  GstStructure *s = NULL;
  guint64 v = G_MAXUINT64;

  g_object_get (el, "stats", &s, NULL);
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_uint64 (s, name, &v), "no stat %s", name);
  gst_structure_free (s);
  return v;
}

/* Asserts exactly one warning on bus and that its text contains what. */
void
assert_one_warning (GstBus * bus, const gchar * what)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  GError *err = NULL;
  gchar *dbg = NULL;

  fail_unless (msg != NULL, "no warning for '%s'", what);
  gst_message_parse_warning (msg, &err, &dbg);
  fail_unless (strstr (err->message, what) != NULL,
      "warning '%s' does not name '%s'", err->message, what);
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (msg);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
}

GstHarness *
new_harness (const gchar * props)
{
  return new_harness_caps (props, FRAME_CAPS);
}

GstHarness *
new_harness_caps (const gchar * props, const gchar * caps)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  gchar **kv = g_strsplit (props ? props : "", " ", -1);
  GstHarness *h;
  guint i;

  gst_util_set_object_arg (G_OBJECT (el), "model-size", "320x240");
  for (i = 0; kv[i] != NULL; i++) {
    gchar **pair = g_strsplit (kv[i], "=", 2);

    if (pair[0] != NULL && pair[1] != NULL)
      gst_util_set_object_arg (G_OBJECT (el), pair[0], pair[1]);
    g_strfreev (pair);
  }
  g_strfreev (kv);
  h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  if (caps != NULL)
    gst_harness_set_src_caps_str (h, caps);
  return h;
}

/* Pushes buf and returns the output (asserting one came out). */
GstBuffer *
push_pull (GstHarness * h, GstBuffer * buf)
{
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  return gst_harness_pull (h);
}

GstBuffer *
hand_frame_filled (guint8 fill)
{
  GstBuffer *buf = make_frame (fill);

  attach_hand_tensor (buf, "detections");
  return buf;
}

GstBuffer *
hand_frame_yolov8 (void)
{
  return hand_frame_filled (7);
}

/* A failed start posts an element error and the state change fails. */
void
check_start_fails (GstElement * el, const gchar * what)
{
  GstBus *bus = watch_bus (el);
  GstMessage *msg;
  GError *err = NULL;

  fail_unless_equals_int (gst_element_set_state (el, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, what) != NULL, "'%s' lacks '%s'",
      err->message, what);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (el, GST_STATE_NULL);
  unwatch_bus (bus);
  gst_object_unref (el);
}

gsize
rss_bytes (void)
{
  gchar *text = NULL;
  gsize rss;
  gchar **f;

  fail_unless (g_file_get_contents ("/proc/self/statm", &text, NULL, NULL));
  f = g_strsplit (text, " ", -1);
  rss = (gsize) g_ascii_strtoull (f[1], NULL, 10) * (gsize) sysconf
      (_SC_PAGESIZE);
  g_strfreev (f);
  g_free (text);
  return rss;
}
