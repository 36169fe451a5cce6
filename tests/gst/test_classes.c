/* gst-check tests of the per-class controls: each property alone and
 * together, by label and by id, with the exact ROIs each frame keeps;
 * changed while PLAYING; refused values (a g_warning and an element
 * warning with the exact text, the previous value read back), among them
 * the values cudanms-tool refuses with the same words and a class named
 * twice; empty and blank lists (unset); a label on two lines of the label
 * file (refused by name, its ids taken).
 *
 * The scene (YOLOv8, 3 classes, frame = model = 320x240), labels
 * person, car, dog:
 *   a0 person 0.90 [10,10,60,60]
 *   a1 person 0.80 [25,10,75,60]    IoU with a0: 1750/3250 = 0.538
 *   a2 person 0.35 [200,10,250,60]
 *   a3 car    0.70 [10,150,60,200]
 *   a4 car    0.50 [10,150,60,200]  a3's twin
 *   a5 car    0.55 [150,150,200,200]
 *   a6 dog    0.95 [10,10,60,60]
 *   a7 person 0.60 [280,200,300,210] 20 x 10 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "gst_helpers.h"

#define N 8

static const gfloat boxes[N][6] = {
  {10, 10, 60, 60, 0.90f, 0}, {25, 10, 75, 60, 0.80f, 0},
  {200, 10, 250, 60, 0.35f, 0}, {10, 150, 60, 200, 0.70f, 1},
  {10, 150, 60, 200, 0.50f, 1}, {150, 150, 200, 200, 0.55f, 1},
  {10, 10, 60, 60, 0.95f, 2}, {280, 200, 300, 210, 0.60f, 0},
};

/* Every kept box, as without any control. */
#define ALL "dog@10,10;person@10,10;car@10,150;person@280,200;" \
    "car@150,150;person@200,10;"

static gchar *labels_path;

static GstBuffer *
scene_frame (void)
{
  gfloat t[7 * N];
  gint i;

  for (i = 0; i < N; i++) {
    gint c;

    t[0 * N + i] = (boxes[i][0] + boxes[i][2]) / 2;
    t[1 * N + i] = (boxes[i][1] + boxes[i][3]) / 2;
    t[2 * N + i] = boxes[i][2] - boxes[i][0];
    t[3 * N + i] = boxes[i][3] - boxes[i][1];
    for (c = 0; c < 3; c++)
      t[(4 + c) * N + i] = c == (gint) boxes[i][5] ? boxes[i][4] : 0.0f;
  }
  return frame_with_tensor ("float32", "1,7,8", t, sizeof t);
}

/* "label@x,y;" of buf's ROIs, in the order attached. */
static gchar *
kept_string (GstBuffer * buf)
{
  GString *s = g_string_new (NULL);
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;

    g_string_append_printf (s, "%s@%u,%u;",
        g_quark_to_string (roi->roi_type), roi->x, roi->y);
  }
  return g_string_free (s, FALSE);
}

/* Pushes the scene through h; asserts the kept boxes. */
static void
assert_kept (GstHarness * h, const gchar * want)
{
  GstBuffer *out = push_pull (h, scene_frame ());
  gchar *got = kept_string (out);

  fail_unless_equals_string (got, want);
  g_free (got);
  gst_buffer_unref (out);
}

/* A harness with the label file and props ("key=value ..."). */
static GstHarness *
harness (const gchar * props)
{
  gchar *all = g_strdup_printf ("label-file=%s %s", labels_path,
      props ? props : "");
  GstHarness *h = new_harness (all);

  g_free (all);
  return h;
}

static void
check (const gchar * props, const gchar * want)
{
  GstHarness *h = harness (props);
  GstBus *bus = watch_bus (h->element);

  assert_kept (h, want);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_START_TEST (test_each_control)
{
  check (NULL, ALL);
  check ("class-score-thresholds=person=0.4,car=0.6",
      "dog@10,10;person@10,10;car@10,150;person@280,200;");
  /* by id, with blanks around the items */
  check ("class-score-thresholds=0=0.4,1=0.6",
      "dog@10,10;person@10,10;car@10,150;person@280,200;");
  check ("exclude-classes=dog",
      "person@10,10;car@10,150;person@280,200;car@150,150;person@200,10;");
  check ("classes=person",
      "person@10,10;person@280,200;person@200,10;");
  check ("classes=person,2",
      "dog@10,10;person@10,10;person@280,200;person@200,10;");
  check ("class-ious=person=0.6",
      "dog@10,10;person@10,10;person@25,10;car@10,150;person@280,200;"
      "car@150,150;person@200,10;");
  check ("class-max-detections=person=1",
      "dog@10,10;person@10,10;car@10,150;car@150,150;");
  check ("max-detections-per-class=1", "dog@10,10;person@10,10;car@10,150;");
  check ("max-detections-per-class=2 class-max-detections=car=1",
      "dog@10,10;person@10,10;car@10,150;person@280,200;");
  check ("min-width=21",
      "dog@10,10;person@10,10;car@10,150;car@150,150;person@200,10;");
  check ("min-width=20", ALL);
  check ("min-height=11",
      "dog@10,10;person@10,10;car@10,150;car@150,150;person@200,10;");
  /* class-agnostic: a6 (dog) suppresses a0 and a1; class-ious aside */
  check ("class-agnostic=true class-ious=person=0.6",
      "dog@10,10;car@10,150;person@280,200;car@150,150;person@200,10;");
}

GST_END_TEST;

GST_START_TEST (test_together)
{
  check ("class-score-thresholds=person=0.4,car=0.6 class-ious=person=0.6 "
      "exclude-classes=dog min-width=30",
      "person@10,10;person@25,10;car@10,150;");
  check ("class-score-thresholds=person=0.4,car=0.6 class-ious=person=0.6 "
      "exclude-classes=dog min-width=30 class-max-detections=person=1",
      "person@10,10;car@10,150;");
  check ("class-score-thresholds=person=0.4,car=0.6 class-ious=person=0.6 "
      "exclude-classes=dog min-width=30 class-max-detections=person=1 "
      "max-detections=1", "person@10,10;");
}

GST_END_TEST;

/* Set while PLAYING, each frame keeps what the new values say. */
GST_START_TEST (test_live)
{
  GstHarness *h = harness (NULL);
  GstBus *bus = watch_bus (h->element);
  gchar *v = NULL;

  assert_kept (h, ALL);
  g_object_set (h->element, "class-score-thresholds", "person=0.4,car=0.6",
      NULL);
  assert_kept (h, "dog@10,10;person@10,10;car@10,150;person@280,200;");
  g_object_set (h->element, "classes", "car", NULL);
  assert_kept (h, "car@10,150;");
  g_object_set (h->element, "classes", "", "class-score-thresholds", NULL,
      NULL);
  assert_kept (h, ALL);
  g_object_set (h->element, "min-width", 21, "class-max-detections",
      "car=1", NULL);
  assert_kept (h, "dog@10,10;person@10,10;car@10,150;person@200,10;");
  g_object_get (h->element, "class-max-detections", &v, NULL);
  fail_unless_equals_string (v, "car=1");
  g_free (v);
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Refused: the exact text, the previous value kept and applied. */
GST_START_TEST (test_refused)
{
  static const struct
  {
    const gchar *prop, *value, *why;
  } cases[] = {
    {"class-score-thresholds", "horse=0.5",
        "class-score-thresholds: the label file has no class 'horse' (3 "
          "labels)"},
    {"class-score-thresholds", "person=abc",
        "the value 'abc' of class 'person' is not a number"},
    {"class-score-thresholds", "person=1.5",
        "the score threshold 1.5 of class 'person' is outside [0, 1]"},
    {"class-score-thresholds", "person",
        "'person' is not CLASS=VALUE"},
    {"class-ious", "car=-0.1", "the iou -0.1 of class 'car' is outside "
          "[0, 1]"},
    {"class-max-detections", "car=1.5",
        "the cap 1.5 of class 'car' is not an integer in [0, 2147483647]"},
    {"class-max-detections", "car=2147483648",
        "the cap 2147483648 of class 'car' is not an integer in "
          "[0, 2147483647]"},
    /* cudanms-tool refuses the same values with the same words
     * (tests/lib/test_cli.c) */
    {"class-score-thresholds", "0=-1",
        "the score threshold -1 of class '0' is outside [0, 1]"},
    {"class-score-thresholds", "0=2",
        "the score threshold 2 of class '0' is outside [0, 1]"},
    {"class-score-thresholds", "0=inf",
        "the score threshold inf of class '0' is outside [0, 1]"},
    {"class-score-thresholds", "0=1e39",
        "the score threshold 1e39 of class '0' is outside [0, 1]"},
    {"class-score-thresholds", "0=1e-400",
        "the value '1e-400' of class '0' is out of range"},
    /* a class named twice in one list: by the same key, or by a label
     * and its id */
    {"class-score-thresholds", "person=0.5,person=0.9",
        "class 'person' is given twice"},
    {"class-score-thresholds", "0=0.5,0=0.9", "class '0' is given twice"},
    {"classes", "car, dog, car", "class 'car' is given twice"},
    {"class-ious", "person=0.5,0=0.6",
        "class-ious: 'person' and '0' are both class 0"},
    {"exclude-classes", "dog,2", "exclude-classes: 'dog' and '2' are both "
          "class 2"},
    {"class-max-detections", "1=1,car=2",
        "class-max-detections: '1' and 'car' are both class 1"},
    {"classes", "16777216",
        "class id '16777216' is not an integer in [0, 16777216)"},
    {"exclude-classes", "dog=1",
        "'dog=1' is not a class (an id or a label, without a value)"},
    {"classes", "person,,car", "an empty class in 'person,,car'"},
  };
  GstHarness *h = harness ("class-score-thresholds=person=0.4");
  GstBus *bus = watch_bus (h->element);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *before = NULL, *after = NULL;
    gchar *text = g_strdup_printf ("%s=\"%s\" refused: %s; the previous "
        "value stays.", cases[i].prop, cases[i].value, cases[i].why);
    gchar *got;

    g_object_get (h->element, cases[i].prop, &before, NULL);
    ASSERT_WARNING (g_object_set (h->element, cases[i].prop, cases[i].value,
            NULL));
    g_object_get (h->element, cases[i].prop, &after, NULL);
    fail_unless_equals_string (after, before);
    got = pop_warning (bus);
    fail_unless (got != NULL, "no warning for %s", cases[i].value);
    fail_unless_equals_string (got, text);
    assert_no_warning (bus);
    assert_kept (h, "dog@10,10;person@10,10;car@10,150;person@280,200;"
        "car@150,150;");
    g_free (got);
    g_free (text);
    g_free (before);
    g_free (after);
  }
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Set before start with a name the label file lacks: refused at start
 * (a warning), left unset; the other controls apply. */
GST_START_TEST (test_refused_at_start)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GstBus *bus = watch_bus (el);
  GstHarness *h;
  gchar *got, *v = NULL;

  /* the bus watched before the harness starts the element */
  g_object_set (el, "model-size", "320x240", "label-file", labels_path,
      "class-score-thresholds", "horse=0.5", "exclude-classes", "dog", NULL);
  h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);

  assert_kept (h,
      "person@10,10;car@10,150;person@280,200;car@150,150;person@200,10;");
  got = pop_warning (bus);
  fail_unless (got != NULL);
  fail_unless_equals_string (got, "Per-class control refused: "
      "class-score-thresholds: the label file has no class 'horse' (3 "
      "labels); it is left unset.");
  g_free (got);
  assert_no_warning (bus);
  g_object_get (h->element, "class-score-thresholds", &v, NULL);
  fail_unless (v == NULL);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* An empty or blank list is an unset one, for every property (as
 * cudanms-tool's empty options): every box kept, the property reads back
 * NULL. */
GST_START_TEST (test_empty)
{
  static const gchar *const props[] = { "classes", "exclude-classes",
    "class-score-thresholds", "class-ious", "class-max-detections"
  };
  static const gchar *const empty[] = { "", " ", "\t \n" };
  guint i, j;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    for (j = 0; j < G_N_ELEMENTS (empty); j++) {
      GstHarness *h = harness (NULL);
      GstBus *bus = watch_bus (h->element);
      gchar *v = NULL;

      g_object_set (h->element, props[i], empty[j], NULL);
      assert_kept (h, ALL);
      g_object_get (h->element, props[i], &v, NULL);
      fail_unless (v == NULL, "%s=\"%s\" reads back \"%s\"", props[i],
          empty[j], v);
      /* set while PLAYING: a list, then an empty one */
      g_object_set (h->element, "classes", "car", NULL);
      assert_kept (h, "car@10,150;car@150,150;");
      g_object_set (h->element, "classes", empty[j], NULL);
      assert_kept (h, ALL);
      assert_no_warning (bus);
      unwatch_bus (bus);
      gst_harness_teardown (h);
    }
  }
}

GST_END_TEST;

static gchar *twice_path;

/* A label on two lines of the label file (person: lines 1 and 4, ids 0
 * and 3): naming it is refused with both lines; its ids work. */
GST_START_TEST (test_label_twice)
{
  gchar *props = g_strdup_printf ("label-file=%s", twice_path);
  GstHarness *h = new_harness (props);
  GstBus *bus = watch_bus (h->element);
  gchar *got, *v = NULL;

  assert_kept (h, ALL);
  ASSERT_WARNING (g_object_set (h->element, "classes", "person", NULL));
  got = pop_warning (bus);
  fail_unless (got != NULL);
  fail_unless_equals_string (got, "classes=\"person\" refused: classes: the "
      "label 'person' is on lines 1 and 4 of the label file (classes 0 and "
      "3): give its class id; the previous value stays.");
  g_free (got);
  g_object_get (h->element, "classes", &v, NULL);
  fail_unless (v == NULL);
  assert_kept (h, ALL);
  g_object_set (h->element, "classes", "0", NULL);
  assert_kept (h, "person@10,10;person@280,200;person@200,10;");
  g_object_set (h->element, "classes", "car,dog", NULL);
  assert_kept (h, "dog@10,10;car@10,150;car@150,150;");
  assert_no_warning (bus);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  g_free (props);
}

GST_END_TEST;

/* The same label set before start: refused at start, left unset; the
 * other controls apply. */
GST_START_TEST (test_label_twice_at_start)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GstBus *bus = watch_bus (el);
  GstHarness *h;
  gchar *got, *v = NULL;

  g_object_set (el, "model-size", "320x240", "label-file", twice_path,
      "class-score-thresholds", "person=0.85", "exclude-classes", "dog", NULL);
  h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);

  assert_kept (h,
      "person@10,10;car@10,150;person@280,200;car@150,150;person@200,10;");
  got = pop_warning (bus);
  fail_unless (got != NULL);
  fail_unless_equals_string (got, "Per-class control refused: "
      "class-score-thresholds: the label 'person' is on lines 1 and 4 of "
      "the label file (classes 0 and 3): give its class id; it is left "
      "unset.");
  g_free (got);
  assert_no_warning (bus);
  g_object_get (h->element, "class-score-thresholds", &v, NULL);
  fail_unless (v == NULL);
  unwatch_bus (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
classes_suite (void)
{
  Suite *s = suite_create ("cudanms-classes");
  TCase *tc = tcase_create ("general");
  GError *err = NULL;
  gint fd = g_file_open_tmp ("cudanms-classes-XXXXXX.txt", &labels_path,
      &err);

  g_assert_no_error (err);
  g_assert (write (fd, "person\ncar\ndog\n", 15) == 15);
  close (fd);
  fd = g_file_open_tmp ("cudanms-classes-twice-XXXXXX.txt", &twice_path, &err);
  g_assert_no_error (err);
  g_assert (write (fd, "person\ncar\ndog\nperson\n", 22) == 22);
  close (fd);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_each_control);
  tcase_add_test (tc, test_together);
  tcase_add_test (tc, test_live);
  tcase_add_test (tc, test_refused);
  tcase_add_test (tc, test_refused_at_start);
  tcase_add_test (tc, test_empty);
  tcase_add_test (tc, test_label_twice);
  tcase_add_test (tc, test_label_twice_at_start);
  return s;
}

GST_CHECK_MAIN (classes);
