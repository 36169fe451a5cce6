/* The output contract's arithmetic on its own (the gstcudanmsoutput
 * library linked into the test): boxes of frames near 2^31 pixels wide,
 * where ceil(x2) must be clamped before it becomes a gint (converted
 * first, it is undefined and w can come out 0), label ids past the
 * cached range, and ROI ids next to G_MAXINT. */
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "gstcudanmsoutput.h"

static GstVideoRegionOfInterestMeta *
roi_of (const cnms_det * d, gint fw, gint fh, GstBuffer ** buf)
{
  GstCudanmsLabels labels;

  *buf = gst_buffer_new ();
  gst_cudanms_labels_init (&labels);
  gst_cudanms_attach_roi (*buf, &labels, d, 0, fw, fh, TRUE, "nms");
  gst_cudanms_labels_clear (&labels);
  return gst_buffer_get_video_region_of_interest_meta_id (*buf, 0);
}

GST_START_TEST (test_huge_frame)
{
  /* 2147483647 is 2^31 in float: the box reaches one past the frame */
  const cnms_det whole = { .score = 0.5f, .x1 = 0.0f, .y1 = 0.0f,
    .x2 = 2147483648.0f, .y2 = 1.0f, .class_id = 3
  };
  const cnms_det edge = { .score = 0.5f, .x1 = 2147483648.0f, .y1 = 0.0f,
    .x2 = 2147483648.0f, .y2 = 1.0f, .class_id = 3
  };
  const cnms_det inner = { .score = 0.5f, .x1 = 1073741824.0f, .y1 = 0.25f,
    .x2 = 1610612736.0f, .y2 = 0.75f, .class_id = 70000
  };
  GstVideoRegionOfInterestMeta *m;
  GstBuffer *buf;
  GstStructure *s;
  gint label_id = -1;

  m = roi_of (&whole, G_MAXINT, 1, &buf);
  fail_unless (m != NULL);
  fail_unless_equals_int (m->x, 0);
  fail_unless_equals_int (m->w, G_MAXINT);
  fail_unless_equals_int (m->y, 0);
  fail_unless_equals_int (m->h, 1);
  gst_buffer_unref (buf);

  m = roi_of (&edge, G_MAXINT, 1, &buf);
  fail_unless_equals_int (m->x, G_MAXINT);
  fail_unless_equals_int (m->w, 0);
  gst_buffer_unref (buf);

  m = roi_of (&inner, G_MAXINT, 1, &buf);
  fail_unless_equals_int (m->x, 1073741824);
  fail_unless_equals_int (m->w, 536870912);
  fail_unless_equals_int (m->y, 0);
  fail_unless_equals_int (m->h, 1);
  /* past 65535 without a label: the one shared label, the exact id kept */
  fail_unless_equals_string (g_quark_to_string (m->roi_type), "class-large");
  s = gst_video_region_of_interest_meta_get_param (m, "detection");
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_int (s, "label_id", &label_id));
  fail_unless_equals_int (label_id, 70000);
  fail_unless_equals_string (gst_structure_get_string (s, "label"),
      "class-large");
  fail_unless_equals_string (gst_structure_get_string (s, "producer"), "nms");
  gst_buffer_unref (buf);
}

GST_END_TEST;

/* The ids of n attached boxes on a buffer whose ROIs already have ids
 * before[0..nb), as "id,id,...". */
static gchar *
ids_after (const gint * before, gint nb, gint n)
{
  const cnms_det d = { .score = 0.5f, .x1 = 10.0f, .y1 = 10.0f, .x2 = 20.0f,
    .y2 = 20.0f, .class_id = 1
  };
  cnms_det dets[4];
  GstCudanmsLabels labels;
  GstBuffer *buf = gst_buffer_new ();
  GString *out = g_string_new (NULL);
  gpointer state = NULL;
  GstMeta *m;
  gint i;

  for (i = 0; i < nb; i++)
    gst_buffer_add_video_region_of_interest_meta (buf, "app", 0, 0, 1,
        1)->id = before[i];
  for (i = 0; i < n; i++)
    dets[i] = d;
  gst_cudanms_labels_init (&labels);
  fail_unless (gst_cudanms_attach_detections (buf, &labels, NULL, dets, n,
          NULL, NULL, 64, 64, GST_CUDANMS_ATTACH_META_ROI, TRUE, "nms"));
  gst_cudanms_labels_clear (&labels);
  /* cudanms's own ROIs, in the order attached */
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;

    if (gst_video_region_of_interest_meta_get_param (roi, "detection"))
      g_string_append_printf (out, "%s%d", out->len ? "," : "", roi->id);
  }
  gst_buffer_unref (buf);
  return g_string_free (out, FALSE);
}

/* Ids from the largest on the buffer plus one; past G_MAXINT, the
 * smallest free ones, still unique. */
GST_START_TEST (test_ids_near_g_maxint)
{
  const gint big[2] = { G_MAXINT, 0 };
  const gint near[1] = { G_MAXINT - 1 };
  gchar *s;

  s = ids_after (big, 0, 3);
  fail_unless_equals_string (s, "0,1,2");
  g_free (s);
  s = ids_after (big, 2, 3);
  fail_unless_equals_string (s, "1,2,3");
  g_free (s);
  s = ids_after (big, 1, 1);
  fail_unless_equals_string (s, "0");
  g_free (s);
  s = ids_after (near, 1, 1);
  fail_unless_equals_string (s, "2147483647");
  g_free (s);
  s = ids_after (near, 1, 2);
  fail_unless_equals_string (s, "0,1");
  g_free (s);
}

GST_END_TEST;

static Suite *
output_suite (void)
{
  Suite *s = suite_create ("cudanms-output");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_huge_frame);
  tcase_add_test (tc, test_ids_near_g_maxint);
  return s;
}

GST_CHECK_MAIN (output);
