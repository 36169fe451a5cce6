#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

#include "analytics_common.h"

gboolean
missing_element (const gchar * factory)
{
  GstElementFactory *f;

  if (factory == NULL)
    return FALSE;
  f = gst_element_factory_find (factory);
  if (f == NULL) {
    g_print ("SKIP: no %s element here\n", factory);
    return TRUE;
  }
  gst_object_unref (f);
  return FALSE;
}

#ifdef HAVE_GST_TENSOR_META
GstTensor *
make_tensor (const gchar * id, GstTensorDimOrder order, const gsize * dims,
    gsize n_dims, gconstpointer data, gsize size)
{
  GstTensor *t = gst_tensor_new_simple (g_quark_from_string (id),
      GST_TENSOR_DATA_TYPE_FLOAT32, gst_buffer_new_memdup (data, size), order,
      n_dims, (gsize *) dims);

  fail_unless (t != NULL);
  return t;
}

GstTensorMeta *
add_tensor_meta (GstBuffer * buf, guint n, ...)
{
  /* a new meta each time, as onnxinference >= 1.26.6 adds one per
   * inference (gst_buffer_add_tensor_meta() before 1.26.6 returns the
   * buffer's existing one) */
  GstTensorMeta *tmeta = (GstTensorMeta *) gst_buffer_add_meta (buf,
      gst_tensor_meta_get_info (), NULL);
  GstTensor **tensors = g_new (GstTensor *, n);
  va_list ap;
  guint i;

  va_start (ap, n);
  for (i = 0; i < n; i++)
    tensors[i] = va_arg (ap, GstTensor *);
  va_end (ap);
  gst_tensor_meta_set (tmeta, n, tensors);
  return tmeta;
}

GstTensor *
hand_gst_tensor (const gchar * id, GstTensorDimOrder order, guint extra_rows)
{
  gsize dims[3] = { 1, 4 + HAND_CLASSES + extra_rows, HAND_ANCHORS };
  gsize n, total = dims[1] * HAND_ANCHORS;
  gfloat *t = hand_tensor_yolov8 (&n);
  gfloat *wide = g_new0 (gfloat, total);
  GstTensor *tensor;

  memcpy (wide, t, n * sizeof (gfloat));
  tensor = make_tensor (id, order, dims, 3, wide, total * sizeof (gfloat));
  g_free (wide);
  g_free (t);
  return tensor;
}
#endif

#ifdef HAVE_GST_ANALYTICS
guint
count_od_mtds (GstBuffer * buf)
{
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta
      (buf);
  gpointer state = NULL;
  GstAnalyticsMtd mtd;
  guint n = 0;

  if (rmeta == NULL)
    return 0;
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd))
    n++;
  return n;
}

gchar *
od_mtds_to_string (GstBuffer * buf)
{
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta
      (buf);
  GString *str = g_string_new (NULL);
  gpointer state = NULL;
  GstAnalyticsMtd mtd;

  while (rmeta != NULL && gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd)) {
    GstAnalyticsODMtd *od = (GstAnalyticsODMtd *) & mtd;
    gint x, y, w, h;
    gfloat conf;

    fail_unless (gst_analytics_od_mtd_get_location (od, &x, &y, &w, &h,
            &conf));
    g_string_append_printf (str, "%d,%d,%d,%d,%s,%.9g;", x, y, w, h,
        g_quark_to_string (gst_analytics_od_mtd_get_obj_type (od)), conf);
  }
  return g_string_free (str, FALSE);
}

void
assert_hand_od_mtds (GstBuffer * buf)
{
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta
      (buf);
  gpointer state = NULL;
  GstAnalyticsMtd mtd;
  guint i = 0;

  fail_unless (rmeta != NULL);
  fail_unless_equals_int (count_od_mtds (buf), HAND_KEPT);
  while (gst_analytics_relation_meta_iterate (rmeta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd)) {
    const ExpectedRoi *e = &hand_expected[i++];
    GstAnalyticsODMtd *od = (GstAnalyticsODMtd *) & mtd;
    gchar *label = g_strdup_printf ("class-%d", e->label_id);
    gint x, y, w, h;
    gfloat conf;

    fail_unless (gst_analytics_od_mtd_get_location (od, &x, &y, &w, &h,
            &conf));
    fail_unless_equals_string (g_quark_to_string
        (gst_analytics_od_mtd_get_obj_type (od)), label);
    fail_unless_equals_int (x, e->x);
    fail_unless_equals_int (y, e->y);
    fail_unless_equals_int (w, e->w);
    fail_unless_equals_int (h, e->h);
    /* the score itself, not a rounding of it */
    fail_unless (memcmp (&conf, &e->score, sizeof (gfloat)) == 0,
        "confidence %.9g != score %.9g", conf, e->score);
    g_free (label);
  }
}
#endif

const gchar *
test_python (void)
{
  const gchar *p = g_getenv ("CUDANMS_PYTHON");

  return p != NULL && *p != '\0' ? p : "python3";
}

gboolean
missing_onnx_module (void)
{
  gchar *argv[] = { (gchar *) test_python (), (gchar *) "-c",
    (gchar *) "import onnx, numpy", NULL
  };
  gint status = -1;

  if (g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH |
          G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
          NULL, NULL, &status, NULL) && WIFEXITED (status)
      && WEXITSTATUS (status) == 0)
    return FALSE;
  g_print ("SKIP: %s has no onnx module (Debian: python3-onnx)\n",
      test_python ());
  return TRUE;
}

void
make_hand_model (const gchar * dir, const gchar * order)
{
  const gchar *src = g_getenv ("CUDANMS_SOURCE_ROOT");
  const gint dims[] = { 1, 4 + HAND_CLASSES, HAND_ANCHORS };
  gchar *npy = g_build_filename (dir, "hand.npy", NULL);
  gchar *model = g_strdup_printf ("%s/%s.onnx", dir, order);
  gchar *script = g_build_filename (src ? src : ".", "tests", "analytics",
      "make_model.py", NULL);
  gchar *argv[] = { (gchar *) test_python (),
    script, npy, model, (gchar *) "--id", (gchar *) "yolo-v8-out",
    (gchar *) "--dims-order", (gchar *) order, (gchar *) "--input",
    (gchar *) "320x240", NULL
  };
  gint status = -1;
  gsize n;
  gfloat *t = hand_tensor_yolov8 (&n);

  write_npy (npy, "<f4", dims, 3, t, n * 4);
  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL,
          NULL, NULL, NULL, &status, NULL));
  fail_unless (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "make_model.py failed (%d)", status);
  g_free (t);
  g_free (script);
  g_free (model);
  g_free (npy);
}

GstSample *
pull_sample (GstElement * appsink)
{
  GstSample *sample = NULL;

  g_signal_emit_by_name (appsink, "pull-sample", &sample);
  return sample;
}

guint
gst_minor_version (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return minor;
}

void
remove_tree (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL);

    g_unlink (path);
    g_free (path);
  }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
}

gchar *
hand_expected_string (void)
{
  GString *str = g_string_new (NULL);
  guint i;

  for (i = 0; i < HAND_KEPT; i++) {
    const ExpectedRoi *e = &hand_expected[i];

    g_string_append_printf (str, "%u,%u,%u,%u,class-%d,%.9g;", e->x, e->y,
        e->w, e->h, e->label_id, e->score);
  }
  return g_string_free (str, FALSE);
}
