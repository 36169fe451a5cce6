/* Helpers of the analytics tests (GStreamer >= 1.24/1.26): GstTensorMeta
 * input built the way onnxinference builds it, GstAnalyticsODMtd output
 * read the way objectdetectionoverlay reads it. Each test program exits 77
 * (skip) where what it needs is absent: ANALYTICS_SKIP_MAIN where the
 * build lacks it, missing_element() where an element is not installed. */
#ifndef CUDANMS_ANALYTICS_COMMON_H
#define CUDANMS_ANALYTICS_COMMON_H

#include <gst/gst.h>
#include <gst/check/gstcheck.h>

#include "gst_helpers.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

G_BEGIN_DECLS

/* Prints why and returns TRUE (caller exits 77) when factory is missing;
 * FALSE for factory NULL. */
gboolean missing_element (const gchar * factory);

/* main() of the test NAME: runs NAME_suite () as "analytics-NAME", or
 * exits 77 (skip) when the element factory (NULL: none needed) is not
 * installed. */
#define ANALYTICS_TEST_MAIN(name, factory)                              \
int                                                                     \
main (int argc, char **argv)                                            \
{                                                                       \
  gst_check_init (&argc, &argv);                                        \
  if (missing_element (factory))                                        \
    return 77;                                                          \
  return gst_check_run_suite (name ## _suite (), "analytics-" #name,    \
      __FILE__);                                                        \
}

/* main() of a test whose build lacks what it needs (what: that part of
 * GStreamer): exits 77 (skip). */
#define ANALYTICS_SKIP_MAIN(what)                                       \
int                                                                     \
main (void)                                                             \
{                                                                       \
  g_print ("SKIP: built without %s\n", what);                          \
  return 77;                                                            \
}

#ifdef HAVE_GST_TENSOR_META
/* A float32 GstTensor with a copy of data. */
GstTensor *make_tensor (const gchar * id, GstTensorDimOrder order,
    const gsize * dims, gsize n_dims, gconstpointer data, gsize size);
/* A new GstTensorMeta on buf holding the n tensors (taken). */
GstTensorMeta *add_tensor_meta (GstBuffer * buf, guint n, ...);
/* The hand tensor of gst_helpers.c ([1, 7, 10] yolov8) as a
 * GstTensor; extra_rows zero rows are appended ([1, 7 + extra_rows, 10]). */
GstTensor *hand_gst_tensor (const gchar * id, GstTensorDimOrder order,
    guint extra_rows);
#endif

#ifdef HAVE_GST_ANALYTICS
guint count_od_mtds (GstBuffer * buf);
/* "x,y,w,h,label,conf;" per ODMtd in the relation meta's order. */
gchar *od_mtds_to_string (GstBuffer * buf);
/* Asserts the hand ROIs as ODMtds: same order, quark, box, confidence. */
void assert_hand_od_mtds (GstBuffer * buf);
#endif

/* The tests' Python: CUDANMS_PYTHON, else python3 from PATH. */
const gchar *test_python (void);
/* Prints why and returns TRUE (caller exits 77) when that Python cannot
 * import onnx and numpy. */
gboolean missing_onnx_module (void);
/* Writes the hand tensor and DIR/ORDER.onnx (+ .modelinfo) with
 * make_model.py: input uint8 [1, 240, 320, 3], output the hand tensor as
 * "yolo-v8-out" labelled ORDER ("row-major" or "col-major"). */
void make_hand_model (const gchar * dir, const gchar * order);

/* appsink's next sample, NULL at EOS (the "pull-sample" action signal). */
GstSample *pull_sample (GstElement * appsink);
/* GStreamer's minor version at run time. */
guint gst_minor_version (void);
/* Removes dir and the files in it. */
void remove_tree (const gchar * dir);

/* The same "x,y,w,h,label,conf;" from hand_expected. */
gchar *hand_expected_string (void);

G_END_DECLS
#endif
