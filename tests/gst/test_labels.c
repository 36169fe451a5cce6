/* gst-check tests of cudanms's label file and labels: the lines of the
 * file (an empty line keeps class-<n> and later ids their place, a UTF-8
 * BOM, CR, CRLF and mixed line ends, blanks at both ends), what is refused
 * at start and named (a FIFO without a writer, within a timeout: no hang;
 * /dev/zero; a directory; a file over 16 MiB; a missing file), the labels
 * of ids past the file (class-<id> up to 65535, the shared class-large
 * above, the exact id in label_id), and memory that stays bounded when
 * end2end ids past 65535 keep arriving. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "gst_helpers.h"
#include "rng.h"

/* A fresh temporary directory for the files of one test. */
static gchar *
temp_dir (void)
{
  gchar *dir = g_dir_make_tmp ("cudanms-labels-XXXXXX", NULL);

  fail_unless (dir != NULL);
  return dir;
}

/* dir/name with contents (len -1: a C string); the path (g_free). */
static gchar *
write_file (const gchar * dir, const gchar * name, const gchar * contents,
    gssize len)
{
  gchar *path = g_build_filename (dir, name, NULL);

  fail_unless (g_file_set_contents (path, contents, len, NULL));
  return path;
}

/* One end2end row per class id (boxes side by side, scores descending, so
 * that kept order is the order of ids), float32 [1, n, 6]. */
static GstBuffer *
frame_with_classes (const gint * ids, guint n)
{
  gfloat *rows = g_new0 (gfloat, 6 * n);
  GstBuffer *buf;
  gchar *dims = g_strdup_printf ("1,%u,6", n);
  guint i;

  for (i = 0; i < n; i++) {
    rows[6 * i + 0] = 10 * i;
    rows[6 * i + 1] = 10;
    rows[6 * i + 2] = 10 * i + 5;
    rows[6 * i + 3] = 20;
    rows[6 * i + 4] = 0.9f - 0.01f * i;
    rows[6 * i + 5] = (gfloat) ids[i];
  }
  buf = frame_with_tensor ("float32", dims, rows, 6 * n * sizeof (gfloat));
  g_free (dims);
  g_free (rows);
  return buf;
}

/* "label_id:roi_type;..." of buf's ROIs in id order, each checked
 * against its "detection" structure (label == roi_type). */
static gchar *
labels_string (GstBuffer * buf)
{
  GString *str = g_string_new (NULL);
  guint i, n = count_rois (buf);

  for (i = 0; i < n; i++) {
    GstVideoRegionOfInterestMeta *m =
        gst_buffer_get_video_region_of_interest_meta_id (buf, (gint) i);
    GstStructure *s;
    gint label_id = -1;

    fail_unless (m != NULL, "no ROI with id %u", i);
    s = gst_video_region_of_interest_meta_get_param (m, "detection");
    fail_unless (s != NULL);
    fail_unless (gst_structure_get_int (s, "label_id", &label_id));
    fail_unless_equals_string (gst_structure_get_string (s, "label"),
        g_quark_to_string (m->roi_type));
    g_string_append_printf (str, "%d:%s;", label_id,
        g_quark_to_string (m->roi_type));
  }
  return g_string_free (str, FALSE);
}

/* Pops the next warning; asserts its text is exactly what. */
static void
expect_warning_text (GstBus * bus, const gchar * what)
{
  gchar *text = pop_warning (bus);

  fail_unless (text != NULL, "no warning '%s'", what);
  fail_unless_equals_string (text, what);
  g_free (text);
}

/* The labels cudanms gives ids[0..n) with label file path (NULL: none):
 * asserts the ROIs' "label_id:label;" string is expected, and the warnings
 * of the run: the one about the first id past the file when past is not
 * NULL (its whole text), else none. */
static void
check_labels_full (const gchar * path, const gint * ids, guint n,
    const gchar * expected, const gchar * past)
{
  gchar *props = path ? g_strdup_printf ("label-file=%s", path) : NULL;
  GstHarness *h = new_harness (props);
  GstBus *bus = watch_bus (h->element);
  GstBuffer *out = push_pull (h, frame_with_classes (ids, n));
  gchar *str = labels_string (out);

  fail_unless_equals_string (str, expected);
  if (past != NULL)
    expect_warning_text (bus, past);
  assert_no_warning (bus);
  g_free (str);
  gst_buffer_unref (out);
  unwatch_bus (bus);
  gst_harness_teardown (h);
  g_free (props);
}

static void
check_labels (const gchar * path, const gint * ids, guint n,
    const gchar * expected, const gchar * past)
{
  check_labels_full (path, ids, n, expected, past);
}

/* A label file of contents: check_labels with it, then removed. */
static void
check_file_labels (const gchar * contents, gssize len, const gint * ids,
    guint n, const gchar * expected, guint n_lines, gint first_past)
{
  gchar *dir = temp_dir ();
  gchar *path = write_file (dir, "labels.txt", contents, len);
  gchar *past = first_past < 0 ? NULL :
      g_strdup_printf ("Class %d has no line in the label file (%u labels); "
      "it is labelled \"class-%d\".", first_past, n_lines, first_past);

  check_labels (path, ids, n, expected, past);
  g_free (past);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

static const gint ids_0_to_4[] = { 0, 1, 2, 3, 4 };

/* An empty line keeps class-<n> for its id; the ids of later lines do not
 * shift; the first id past the file is class-<id>, and told. */
GST_START_TEST (test_empty_line)
{
  check_file_labels ("person\n\ncar\n", -1, ids_0_to_4, 4,
      "0:person;1:class-1;2:car;3:class-3;", 3, 3);
  /* at the start, and two in a row; a last line without its line end */
  check_file_labels ("\nbike\n\n\nbus", -1, ids_0_to_4, 5,
      "0:class-0;1:bike;2:class-2;3:class-3;4:bus;", 5, -1);
}

GST_END_TEST;

/* A UTF-8 byte-order mark at the start is dropped, and only there. */
GST_START_TEST (test_bom)
{
  check_file_labels ("\xef\xbb\xbfperson\ncar\n", -1, ids_0_to_4, 3,
      "0:person;1:car;2:class-2;", 2, 2);
  check_file_labels ("\xef\xbb\xbf\xc3\xa9t\xc3\xa9\r\n", -1, ids_0_to_4, 1,
      "0:\xc3\xa9t\xc3\xa9;", 1, -1);
  /* a BOM alone: a file of no labels, warned at start (before the bus
   * was ours), then every id is class-<id>, not told again */
  check_file_labels ("\xef\xbb\xbf", -1, ids_0_to_4, 2,
      "0:class-0;1:class-1;", 0, -1);
}

GST_END_TEST;

/* Lines end at "\r\n", "\n" or "\r"; a "\r\n" is one line end. */
GST_START_TEST (test_line_ends)
{
  /* CR only */
  check_file_labels ("person\rcar\rbus\r", -1, ids_0_to_4, 4,
      "0:person;1:car;2:bus;3:class-3;", 3, 3);
  /* CRLF */
  check_file_labels ("person\r\ncar\r\nbus\r\n", -1, ids_0_to_4, 4,
      "0:person;1:car;2:bus;3:class-3;", 3, 3);
  /* mixed, the last line without a line end */
  check_file_labels ("person\r\ncar\rbus\ntruck", -1, ids_0_to_4, 5,
      "0:person;1:car;2:bus;3:truck;4:class-4;", 4, 4);
  /* empty lines between CRs and CRLFs: "\r\r" and "\r\n\r\n" are two line
   * ends each, "\n\r" too: 7 lines */
  check_file_labels ("a\r\rb\r\n\r\nc\n\rd", -1, (const gint[]) {
        0, 1, 2, 3, 4, 5, 6, 7}, 8,
      "0:a;1:class-1;2:b;3:class-3;4:c;5:class-5;6:d;7:class-7;", 7, 7);
}

GST_END_TEST;

/* White space at both ends of a label is trimmed, inside it kept; a line
 * of blanks is an empty line. */
GST_START_TEST (test_blanks)
{
  check_file_labels ("  person \t\n\ttraffic light  \r\n   \t \nbus  \r", -1,
      ids_0_to_4, 5,
      "0:person;1:traffic light;2:class-2;3:bus;4:class-4;", 4, 4);
}

GST_END_TEST;

/* The labels of ids past the file: class-<id> up to 65535, class-large
 * above (with or without a label file), label_id the exact id; an id with
 * a line takes it, however large. */
GST_START_TEST (test_ids_past_the_file)
{
  const gint ids[] = { 2, 3, 65535, 65536, 70000, 16777215 };
  gchar *dir = temp_dir ();
  gchar *path = write_file (dir, "labels.txt", "person\ncar\nbus\n", -1);
  GString *big = g_string_new (NULL);
  gchar *big_path;
  guint i;

  check_labels (path, ids, G_N_ELEMENTS (ids), "2:bus;3:class-3;"
      "65535:class-65535;65536:class-large;70000:class-large;"
      "16777215:class-large;", "Class 3 has no line in the label file "
      "(3 labels); it is labelled \"class-3\".");
  check_labels (NULL, ids, G_N_ELEMENTS (ids), "2:class-2;3:class-3;"
      "65535:class-65535;65536:class-large;70000:class-large;"
      "16777215:class-large;", NULL);
  /* a file of 70001 lines: 70000 has its line, 65536 too, line 69999 is
   * empty (class-69999), 70001 is past the file */
  for (i = 0; i < 70001; i++) {
    if (i != 69999)
      g_string_append_printf (big, "l%u", i);
    g_string_append_c (big, '\n');
  }
  big_path = write_file (dir, "big.txt", big->str, (gssize) big->len);
  check_labels_full (big_path, (const gint[]) {
        65536, 69999, 70000, 70001}, 4,
      "65536:l65536;69999:class-69999;70000:l70000;70001:class-large;",
      "Class 70001 has no line in the label file (70001 labels); it is "
      "labelled \"class-large\".");
  g_unlink (big_path);
  g_unlink (path);
  g_rmdir (dir);
  g_free (big_path);
  g_free (path);
  g_free (dir);
  g_string_free (big, TRUE);
}

GST_END_TEST;

typedef struct
{
  GMutex lock;
  GCond cond;
  GstElement *el;
  GstStateChangeReturn ret;
  gboolean done;
} StartRun;

static gpointer
start_thread (gpointer data)
{
  StartRun *run = data;
  GstStateChangeReturn ret = gst_element_set_state (run->el,
      GST_STATE_PAUSED);

  g_mutex_lock (&run->lock);
  run->ret = ret;
  run->done = TRUE;
  g_cond_signal (&run->cond);
  g_mutex_unlock (&run->lock);
  return NULL;
}

#define START_TIMEOUT_S 10

/* A cudanms with label-file path goes READY -> PAUSED in a thread of its
 * own: the start must fail within START_TIMEOUT_S seconds with an element
 * error whose text is exactly error. A FIFO's reader blocked in open() is
 * released (a writer opened and closed) before the test fails, so that
 * nothing is left hanging. */
static void
check_refused (const gchar * path, const gchar * error, gboolean fifo)
{
  GstElement *el = gst_element_factory_make ("cudanms", NULL);
  GstBus *bus = watch_bus (el);
  StartRun run = { 0 };
  GThread *thread;
  GstMessage *msg;
  GError *err = NULL;
  gint64 deadline = g_get_monotonic_time () +
      START_TIMEOUT_S * G_TIME_SPAN_SECOND;
  gboolean in_time = TRUE;

  g_object_set (el, "label-file", path, NULL);
  fail_unless_equals_int (gst_element_set_state (el, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  g_mutex_init (&run.lock);
  g_cond_init (&run.cond);
  run.el = el;
  thread = g_thread_new ("start", start_thread, &run);
  g_mutex_lock (&run.lock);
  while (!run.done && in_time)
    in_time = g_cond_wait_until (&run.cond, &run.lock, deadline);
  in_time = run.done;
  g_mutex_unlock (&run.lock);
  if (!in_time && fifo) {
    gint fd = open (path, O_WRONLY | O_NONBLOCK);

    if (fd >= 0)
      close (fd);
  }
  if (in_time || fifo)
    g_thread_join (thread);
  fail_unless (in_time, "starting with label-file=%s hung for %d s", path,
      START_TIMEOUT_S);
  fail_unless_equals_int (run.ret, GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no element error for label-file=%s", path);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless_equals_string (err->message, error);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (el, GST_STATE_NULL);
  unwatch_bus (bus);
  gst_object_unref (el);
  g_mutex_clear (&run.lock);
  g_cond_clear (&run.cond);
}

/* "Could not read label file "path": <why>" with why's %s the path. */
static void
check_refused_why (const gchar * path, const gchar * why_fmt,
    gboolean fifo)
{
  gchar *why = g_strdup_printf (why_fmt, path);
  gchar *error = g_strdup_printf ("Could not read label file \"%s\": %s",
      path, why);

  check_refused (path, error, fifo);
  g_free (error);
  g_free (why);
}

/* A FIFO without a writer would block the start for ever: refused before
 * it is opened, naming the file. */
GST_START_TEST (test_fifo_refused)
{
  gchar *dir = temp_dir ();
  gchar *path = g_build_filename (dir, "labels.fifo", NULL);

  fail_unless (mkfifo (path, 0600) == 0, "mkfifo: %s", g_strerror (errno));
  check_refused_why (path, "%s is not a regular file (a FIFO)", TRUE);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* A device that never ends, and a directory. */
GST_START_TEST (test_special_files_refused)
{
  gchar *dir = temp_dir ();

  check_refused_why ("/dev/zero", "%s is not a regular file (a device)",
      FALSE);
  check_refused_why (dir, "%s is not a regular file (a directory)", FALSE);
  check_refused_why ("/nonexistent/cudanms/labels.txt",
      "cannot open %s: No such file or directory", FALSE);
  g_rmdir (dir);
  g_free (dir);
}

GST_END_TEST;

#define MAX_LABEL_FILE (16 * 1024 * 1024)

/* A label file of 16 MiB is read (16384 lines of 1023 'a' and a line
 * end); one byte more is refused, naming the file and both sizes. */
GST_START_TEST (test_size_limit)
{
  gchar *dir = temp_dir ();
  gchar *line = g_strnfill (1024, 'a');
  GString *text = g_string_sized_new (MAX_LABEL_FILE + 1);
  gchar *path, *expected, *why;
  guint i;

  line[1023] = '\n';
  for (i = 0; i < 16384; i++)
    g_string_append_len (text, line, 1024);
  fail_unless_equals_int (text->len, MAX_LABEL_FILE);
  path = write_file (dir, "labels.txt", text->str, (gssize) text->len);
  line[1023] = '\0';
  expected = g_strdup_printf ("0:%s;16383:%s;16384:class-16384;", line,
      line);
  check_labels (path, (const gint[]) {
        0, 16383, 16384}, 3, expected, "Class 16384 has no line in the "
      "label file (16384 labels); it is labelled \"class-16384\".");
  g_free (expected);
  g_unlink (path);
  g_free (path);

  g_string_append_c (text, 'b');
  path = write_file (dir, "labels.txt", text->str, (gssize) text->len);
  why = g_strdup_printf ("%%s is %d bytes, more than the %d a label file "
      "may hold", MAX_LABEL_FILE + 1, MAX_LABEL_FILE);
  check_refused_why (path, why, FALSE);
  g_free (why);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (line);
  g_string_free (text, TRUE);
}

GST_END_TEST;

#define LARGE_FRAMES 300
#define LARGE_WARM 30
#define LARGE_ROWS 1000
#define LARGE_RSS_BOUND (16 * 1024 * 1024)

/* 300 frames of 1000 random end2end class ids in [65536, 2^24) (seeded):
 * every ROI is class-large with its exact id, and RSS grows by less than
 * 16 MiB after a warm-up (a quark per id, never freed, grew it by about
 * 185 MB). Under valgrind (LD_PRELOAD names its preload) and under
 * AddressSanitizer (freed memory held in its quarantine) RSS says
 * nothing: 5 frames, the ROIs only. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

GST_START_TEST (test_large_ids_memory_bounded)
{
  const gchar *preload = g_getenv ("LD_PRELOAD");
  gboolean valgrind = (preload != NULL && strstr (preload, "vgpreload"))
      || UNDER_ASAN;
  guint frames = valgrind ? 5 : LARGE_FRAMES;
  GstHarness *h = new_harness ("max-detections=1000");
  gfloat *rows = g_new0 (gfloat, 6 * LARGE_ROWS);
  gsize warm = 0, last;
  test_rng rng;
  guint f, i;

  test_rng_seed (&rng, 27);
  for (f = 0; f < frames; f++) {
    GstBuffer *out;
    gint64 sum_in = 0, sum_out = 0;
    gpointer state = NULL;
    GstMeta *m;
    guint n = 0;

    for (i = 0; i < LARGE_ROWS; i++) {
      gint id = test_rng_int (&rng, 65536, 1 << 24);

      rows[6 * i + 0] = 1 + i % 300;
      rows[6 * i + 1] = 1 + i % 200;
      rows[6 * i + 2] = 11 + i % 300;
      rows[6 * i + 3] = 11 + i % 200;
      rows[6 * i + 4] = 0.5f;
      rows[6 * i + 5] = (gfloat) id;
      sum_in += id;
    }
    out = push_pull (h, frame_with_tensor ("float32", "1,1000,6", rows,
            6 * LARGE_ROWS * sizeof (gfloat)));
    while ((m = gst_buffer_iterate_meta_filtered (out, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
      GstStructure *s =
          gst_video_region_of_interest_meta_get_param (roi, "detection");
      gint label_id = -1;

      fail_unless (s != NULL);
      fail_unless_equals_string (g_quark_to_string (roi->roi_type),
          "class-large");
      fail_unless (gst_structure_get_int (s, "label_id", &label_id));
      fail_unless (label_id >= 65536 && label_id < (1 << 24));
      sum_out += label_id;
      n++;
    }
    fail_unless_equals_int (n, LARGE_ROWS);
    fail_unless_equals_int64 (sum_out, sum_in);
    gst_buffer_unref (out);
    if (f + 1 == LARGE_WARM)
      warm = rss_bytes ();
  }
  if (!valgrind) {
    last = rss_bytes ();
    printf ("large ids: RSS %.1f MiB after %d frames, %.1f MiB after %d "
        "(%+.0f KiB)\n", warm / 1048576.0, LARGE_WARM, last / 1048576.0,
        LARGE_FRAMES, ((gdouble) last - (gdouble) warm) / 1024.0);
    fail_unless (last < warm + LARGE_RSS_BOUND, "RSS grew from %"
        G_GSIZE_FORMAT " to %" G_GSIZE_FORMAT " bytes over %d frames", warm,
        last, LARGE_FRAMES - LARGE_WARM);
  }
  g_free (rows);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
labels_suite (void)
{
  Suite *s = suite_create ("cudanms-labels");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_empty_line);
  tcase_add_test (tc, test_bom);
  tcase_add_test (tc, test_line_ends);
  tcase_add_test (tc, test_blanks);
  tcase_add_test (tc, test_ids_past_the_file);
  tcase_add_test (tc, test_fifo_refused);
  tcase_add_test (tc, test_special_files_refused);
  tcase_add_test (tc, test_size_limit);
  tcase_add_test (tc, test_large_ids_memory_bounded);
  return s;
}

GST_CHECK_MAIN (labels);
