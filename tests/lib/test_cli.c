/* The .npy reader and cudanms-tool's exits.
 * usage: test-cli CUDANMS_TOOL WORKDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudanms_static.h"
#include "cnms_npy.h"
#include "check.h"

static const char *tool;
static char dir[1024];

static const char *
path (const char *name)
{
  static char buf[4][1200];
  static int next;
  char *p = buf[next++ % 4];

  snprintf (p, sizeof buf[0], "%s/%s", dir, name);
  return p;
}

static void
write_text (const char *file, const char *text, size_t len)
{
  FILE *f = fopen (file, "wb");

  CHECK (f != NULL);
  if (f == NULL)
    return;
  CHECK (fwrite (text, 1, len, f) == len);
  fclose (f);
}

static char out_text[4096];
static char err_text[4096];

static void
slurp (const char *file, char *buf, size_t size)
{
  FILE *f = fopen (file, "rb");
  size_t n = 0;

  if (f != NULL) {
    n = fread (buf, 1, size - 1, f);
    fclose (f);
  }
  buf[n] = '\0';
}

/* Runs cudanms-tool with args (already shell-quoted where needed), its
 * stdout going to out; returns its exit code and leaves stdout/stderr in
 * out_text/err_text. */
static int
run_tool_to (const char *args, const char *out)
{
  char cmd[8192];
  int rc;

  snprintf (cmd, sizeof cmd, "'%s' %s > '%s' 2> '%s'", tool, args, out,
      path ("stderr.txt"));
  rc = system (cmd);
  slurp (out, out_text, sizeof out_text);
  slurp (path ("stderr.txt"), err_text, sizeof err_text);
  if (rc == -1 || !WIFEXITED (rc))
    return -1;
  return WEXITSTATUS (rc);
}

static int
run_tool (const char *args)
{
  return run_tool_to (args, path ("stdout.txt"));
}

static int
count_lines (const char *s)
{
  int n = 0;

  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* Exit 2 with one line on stderr that contains needle. */
static void
expect_error (const char *args, const char *needle)
{
  int rc = run_tool (args);

  CHECK_INT (rc, 2);
  CHECK_INT (count_lines (err_text), 1);
  CHECK (strstr (err_text, needle) != NULL);
  if (rc != 2 || strstr (err_text, needle) == NULL)
    fprintf (stderr, "  args: %s\n  stderr: %s\n", args, err_text);
}

static void
expect_npy_error (const char *file, const char *needle)
{
  cnms_npy a;
  char err[512] = "";

  CHECK_INT (cnms_npy_read (file, &a, err, sizeof err), -1);
  CHECK (strstr (err, needle) != NULL);
  if (strstr (err, needle) == NULL)
    fprintf (stderr, "  %s: got '%s', wanted '%s'\n", file, err, needle);
  CHECK (a.data == NULL);
}

static void
write_header_len (const char *file, const char *dict, size_t hl,
    const void *data, size_t size)
{
  char buf[512];

  memcpy (buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (char) (hl & 0xff);
  buf[9] = (char) (hl >> 8);
  memcpy (buf + 10, dict, hl);
  if (size > 0)
    memcpy (buf + 10 + hl, data, size);
  write_text (file, buf, 10 + hl + size);
}

static void
write_header (const char *file, const char *dict, const void *data,
    size_t size)
{
  write_header_len (file, dict, strlen (dict), data, size);
}

static void
test_npy (void)
{
  static const float v[3] = { 1.5f, -2.0f, 3.25f };
  int64_t dims[2] = { 3, 1 };
  cnms_npy a;
  char err[512];

  CHECK_INT (cnms_npy_write (path ("v.npy"), CNMS_NPY_F4, 2, dims, v, err,
          sizeof err), 0);
  CHECK_INT (cnms_npy_read (path ("v.npy"), &a, err, sizeof err), 0);
  CHECK_INT (a.dtype, CNMS_NPY_F4);
  CHECK_INT (a.n_dims, 2);
  CHECK_INT (a.dims[0], 3);
  CHECK_INT (a.dims[1], 1);
  CHECK_INT (a.count, 3);
  CHECK (a.data != NULL && memcmp (a.data, v, sizeof v) == 0);
  cnms_npy_clear (&a);

  /* what numpy itself writes, version 2.0 header, 1-D shape "(3,)" */
  {
    char buf[256];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, "
        "'shape': (3,), }          \n";
    size_t hl = strlen (dict);
    memcpy (buf, "\x93NUMPY\x02\x00", 8);
    buf[8] = (char) hl;
    buf[9] = buf[10] = buf[11] = 0;
    memcpy (buf + 12, dict, hl);
    memcpy (buf + 12 + hl, v, sizeof v);
    write_text (path ("v2.npy"), buf, 12 + hl + sizeof v);
    CHECK_INT (cnms_npy_read (path ("v2.npy"), &a, err, sizeof err), 0);
    CHECK_INT (a.n_dims, 1);
    CHECK_INT (a.dims[0], 3);
    cnms_npy_clear (&a);
  }

  write_text (path ("text.npy"), "hello, world\n", 13);
  expect_npy_error (path ("text.npy"), "not a .npy");
  write_text (path ("short.npy"), "\x93NU", 3);
  expect_npy_error (path ("short.npy"), "not a .npy");
  write_text (path ("ver.npy"), "\x93NUMPY\x09\x00\x00\x00", 10);
  expect_npy_error (path ("ver.npy"), "version");
  write_header (path ("f8.npy"),
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\n", v, 8);
  expect_npy_error (path ("f8.npy"), "'<f8'");
  write_header (path ("be.npy"),
      "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", v, 4);
  expect_npy_error (path ("be.npy"), "dtype");
  write_header (path ("fo.npy"),
      "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", v, 4);
  expect_npy_error (path ("fo.npy"), "fortran");
  write_header (path ("sh.npy"),
      "{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }\n", v, 4);
  expect_npy_error (path ("sh.npy"), "shape");
  write_header (path ("nosh.npy"),
      "{'descr': '<f4', 'fortran_order': False}\n", v, 4);
  expect_npy_error (path ("nosh.npy"), "shape");
  write_header (path ("trunc.npy"),
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", v, 10);
  expect_npy_error (path ("trunc.npy"), "truncated");
  write_header (path ("long.npy"),
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", v, 12);
  expect_npy_error (path ("long.npy"), "trailing");
  write_text (path ("hdr.npy"), "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
  expect_npy_error (path ("hdr.npy"), "truncated");
  expect_npy_error (path ("missing.npy"), "No such file");

  /* A quoted key that is the whole header, not followed by ':': the key
   * search must stop at the header's end. The header here is exactly 8
   * bytes; ASan and valgrind see any over-read. */
  write_text (path ("oob.npy"), "\x93NUMPY\x01\x00\x08\x00{'descr'", 18);
  expect_npy_error (path ("oob.npy"), "not a dict");
  write_header (path ("oob2.npy"), "{'descr'", NULL, 0);
  expect_npy_error (path ("oob2.npy"), "not a dict");
  write_header (path ("oob3.npy"), "{'descr': '<f4", NULL, 0);
  expect_npy_error (path ("oob3.npy"), "bad 'descr'");
  write_header (path ("oob4.npy"), "{'descr': '<f4', 'shape': (1,", NULL, 0);
  expect_npy_error (path ("oob4.npy"), "bad 'shape'");
  /* the value 'descr' is a value, not the key */
  write_header (path ("val.npy"),
      "{'shape': (1,), 'descr': 'descr', 'fortran_order': False}\n", v, 4);
  expect_npy_error (path ("val.npy"), "unsupported npy dtype 'descr'");
  /* a key given twice takes its last value, as numpy reads it */
  write_header (path ("dup.npy"), "{'descr': '<i4', 'shape': (7, 7), "
      "'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", v, 4);
  CHECK_INT (cnms_npy_read (path ("dup.npy"), &a, err, sizeof err), 0);
  CHECK_INT (a.dtype, CNMS_NPY_F4);
  CHECK_INT (a.n_dims, 1);
  CHECK_INT (a.dims[0], 1);
  CHECK (a.data != NULL && memcmp (a.data, v, 4) == 0);
  cnms_npy_clear (&a);
  /* no spaces, a trailing comma, a scalar shape () */
  write_header (path ("tight.npy"),
      "{'descr':'<f4','fortran_order':False,'shape':(),}\n", v, 4);
  CHECK_INT (cnms_npy_read (path ("tight.npy"), &a, err, sizeof err), 0);
  CHECK_INT (a.n_dims, 0);
  CHECK_INT (a.count, 1);
  cnms_npy_clear (&a);
  /* what numpy refuses: other keys, (1) as a shape, bytes after the dict */
  write_header (path ("key.npy"), "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (1,), 'x': 1}\n", v, 4);
  expect_npy_error (path ("key.npy"), "unexpected key 'x'");
  write_header (path ("int.npy"), "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (1)}\n", v, 4);
  expect_npy_error (path ("int.npy"), "not a tuple");
  write_header (path ("after.npy"), "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (1,)} x\n", v, 4);
  expect_npy_error (path ("after.npy"), "bytes after its dict");
  write_header_len (path ("nul.npy"), "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (1,)}\0\n", 57, v, 4);
  expect_npy_error (path ("nul.npy"), "NUL");
  write_header (path ("esc.npy"), "{'descr': '<f\\4', 'fortran_order': "
      "False, 'shape': (1,)}\n", v, 4);
  expect_npy_error (path ("esc.npy"), "bad 'descr'");
}

/* The six-box case of test-nms through the CLI. */
static void
test_nms_cli (void)
{
  static const float boxes[6][4] = {
    {0, 0, 10, 10}, {1, 1, 11, 11}, {20, 20, 30, 30}, {0, 0, 10, 5},
    {25, 25, 35, 35}, {20, 20, 30, 30},
  };
  static const float scores[6] = { 0.9f, 0.8f, 0.85f, 0.7f, 0.95f, 0.6f };
  static const int64_t classes[6] = { 0, 1, 0, 0, 0, 0 };
  static const int32_t bad_boxes[6][4];
  static const int64_t want[4] = { 4, 0, 2, 3 };
  static const int64_t want_aware[5] = { 4, 0, 2, 1, 3 };
  int64_t bdims[2] = { 6, 4 }, sdims[1] = { 6 };
  char args[4096];
  char err[512];
  cnms_npy k;
  struct stat st;

  CHECK_INT (cnms_npy_write (path ("boxes.npy"), CNMS_NPY_F4, 2, bdims,
          boxes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("scores.npy"), CNMS_NPY_F4, 1, sdims,
          scores, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("classes.npy"), CNMS_NPY_I8, 1, sdims,
          classes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("iboxes.npy"), CNMS_NPY_I4, 2, bdims,
          bad_boxes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("tboxes.npy"), CNMS_NPY_F4, 2, bdims,
          boxes, err, sizeof err), 0);
  CHECK (stat (path ("tboxes.npy"), &st) == 0);
  CHECK (truncate (path ("tboxes.npy"), st.st_size - 5) == 0);
  write_text (path ("text.npy"), "not numpy at all\n", 17);

  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--out '%s'", path ("boxes.npy"), path ("scores.npy"),
      path ("keep.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (cnms_npy_read (path ("keep.npy"), &k, err, sizeof err), 0);
  CHECK_INT (k.dtype, CNMS_NPY_I8);
  CHECK_INT (k.n_dims, 1);
  CHECK_INT (k.dims[0], 4);
  CHECK (k.data != NULL && k.dims[0] == 4
      && memcmp (k.data, want, sizeof want) == 0);
  cnms_npy_clear (&k);

  /* class-aware: 1 (class 1) survives 0 (class 0); 5 still falls to 2 */
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --classes "
      "'%s' --iou 0.5 --out '%s'", path ("boxes.npy"), path ("scores.npy"),
      path ("classes.npy"), path ("keep.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (cnms_npy_read (path ("keep.npy"), &k, err, sizeof err), 0);
  CHECK (k.data != NULL && k.dims[0] == 5
      && memcmp (k.data, want_aware, sizeof want_aware) == 0);
  cnms_npy_clear (&k);

#define NMS_WITH(b) \
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 " \
      "--out '%s'", path (b), path ("scores.npy"), path ("keep.npy"))
  NMS_WITH ("text.npy");
  expect_error (args, "not a .npy");
  NMS_WITH ("iboxes.npy");
  expect_error (args, "float32");
  NMS_WITH ("tboxes.npy");
  expect_error (args, "truncated");
  NMS_WITH ("scores.npy");
  expect_error (args, "[N,4] or [N,5]");
  NMS_WITH ("nonexistent.npy");
  expect_error (args, "No such file");
#undef NMS_WITH

  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--backend cuda --out '%s'", path ("boxes.npy"), path ("scores.npy"),
      path ("keep.npy"));
  if (cnms_cuda_device_count () == 0)
    expect_error (args, "CUDA");
  else
    CHECK_INT (run_tool (args), 0);

  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --out '%s'",
      path ("boxes.npy"), path ("scores.npy"), path ("keep.npy"));
  expect_error (args, "--iou");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou x "
      "--out '%s'", path ("boxes.npy"), path ("scores.npy"),
      path ("keep.npy"));
  expect_error (args, "not a number");
  /* one rule for --max-detections in both commands: >= 1 */
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--max-detections 0 --out '%s'", path ("boxes.npy"),
      path ("scores.npy"), path ("keep.npy"));
  expect_error (args, "--max-detections: must be >= 1");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--max-detections 2 --out '%s'", path ("boxes.npy"),
      path ("scores.npy"), path ("keep.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (cnms_npy_read (path ("keep.npy"), &k, err, sizeof err), 0);
  CHECK (k.data != NULL && k.dims[0] == 2
      && memcmp (k.data, want, 2 * sizeof want[0]) == 0);
  cnms_npy_clear (&k);
  /* a write that fails is an error (exit status not 0), not a lost output */
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--out /dev/full", path ("boxes.npy"), path ("scores.npy"));
  expect_error (args, "write failed");

  expect_error ("nms --frobnicate 1", "unknown option");
  expect_error ("frobnicate", "unknown command");
  expect_error ("", "no command");
  CHECK_INT (run_tool ("--help"), 0);
  CHECK (strstr (out_text, "usage") != NULL);
  /* the layouts, from the library's table */
  CHECK (strstr (out_text, "\n  cudanms-tool decode --tensor T.npy\n"
          "      [--layout auto|yolov5|yolov8|end2end|yolov8-obb|laneatt|\n"
          "                yolov8-pose|yolov8-seg]\n"
          "      --model-size WxH") != NULL);
}

static void
test_decode_cli (void)
{
  static const float e2e[2][6] = {
    {1, 1, 5, 5, 0.9f, 0}, {10, 10, 20, 30, 0.3f, 7},
  };
  static const int32_t ie2e[2][6];
  static const float square[5][5];    /* [1, 5, 5]: fits no layout */
  int64_t dims[3] = { 1, 2, 6 }, bad_dims[3] = { 1, 5, 5 };
  char args[4096];
  char err[512];

  CHECK_INT (cnms_npy_write (path ("e2e.npy"), CNMS_NPY_F4, 3, dims, e2e,
          err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("ie2e.npy"), CNMS_NPY_I4, 3, dims, ie2e,
          err, sizeof err), 0);
  /* square's own 25 floats, not e2e's 12 (ASan sees an over-read) */
  CHECK_INT (cnms_npy_write (path ("sq.npy"), CNMS_NPY_F4, 3, bad_dims,
          square, err, sizeof err), 0);

#define DECODE(t, extra) \
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640x640 " \
      "--frame-size 640x640 --score-threshold 0.25 --iou 0.5 %s", path (t), \
      extra)
  DECODE ("e2e.npy", "");
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text,
          "{\"x\": 1, \"y\": 1, \"w\": 4, \"h\": 4, \"confidence\": "
          "0.899999976, \"label_id\": 0}\n"
          "{\"x\": 10, \"y\": 10, \"w\": 10, \"h\": 20, \"confidence\": "
          "0.300000012, \"label_id\": 7}\n") == 0);
  if (count_lines (out_text) != 2)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
  DECODE ("e2e.npy", "--max-detections 1 --layout end2end");
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (count_lines (out_text), 1);

  DECODE ("ie2e.npy", "");
  expect_error (args, "float32 or float16");
  DECODE ("sq.npy", "");
  expect_error (args, "layout");
  DECODE ("e2e.npy", "--layout yolov8");
  expect_error (args, "yolov8");
  DECODE ("e2e.npy", "--layout yolov9");
  expect_error (args, "yolov9");
  /* every layout of the library's table named */
  expect_error (args, "--layout: 'yolov9' is not auto, yolov5, yolov8, "
      "end2end, yolov8-obb, laneatt, yolov8-pose or yolov8-seg");
  DECODE ("e2e.npy", "--max-detections 0");
  expect_error (args, "--max-detections: must be >= 1");
  /* stdout on a full disk: exit 2, not 0 with the detections lost */
  DECODE ("e2e.npy", "");
  CHECK_INT (run_tool_to (args, "/dev/full"), 2);
  CHECK (strstr (err_text, "cannot write the output") != NULL);
  CHECK_INT (run_tool_to ("--help", "/dev/full"), 2);
  DECODE ("e2e.npy", "--iou 1.5");
  expect_error (args, "--iou");
  DECODE ("e2e.npy", "--backend tpu");
  expect_error (args, "--backend");
  if (cnms_cuda_device_count () == 0) {
    DECODE ("e2e.npy", "--backend cuda");
    expect_error (args, "CUDA");
  }
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640 "
      "--frame-size 640x640 --score-threshold 0.25 --iou 0.5",
      path ("e2e.npy"));
  expect_error (args, "WIDTHxHEIGHT");
#undef DECODE
}

/* decode of a [B, ...] tensor: one call for its frames, each line naming
 * its frame; the same records as each frame's own decode. */
static void
test_batch_cli (void)
{
  /* end2end [3, 2, 6]: frame 2 has no score above the threshold */
  static const float e2e[3][2][6] = {
    {{1, 1, 5, 5, 0.9f, 0}, {10, 10, 20, 30, 0.3f, 7}},
    {{2, 3, 4, 5, 0.5f, 2}, {0, 0, 1, 1, 0.1f, 1}},
    {{0, 0, 9, 9, 0.2f, 0}, {0, 0, 1, 1, 0.0f, 0}},
  };
  /* yolov8-pose [2, 8, 3]: cx cy w h score, one keypoint x y v */
  static const float pose[2][8][3] = {
    {{100, 104, 300}, {100, 102, 300}, {40, 40, 20}, {40, 40, 20},
      {0.9f, 0.8f, 0.7f}, {95, 99, 290}, {97, 98, 310}, {0.5f, 0.25f, 1}},
    {{50, 60, 70}, {50, 60, 70}, {10, 10, 10}, {10, 10, 10},
      {0.2f, 0.6f, 0.9f}, {1, 2, 3}, {4, 5, 6}, {0.1f, 0.2f, 0.3f}},
  };
  int64_t dims[3] = { 3, 2, 6 }, pdims[3] = { 2, 8, 3 };
  char args[4096], want[4096], one[4096];
  char err[512];
  int f;

  CHECK_INT (cnms_npy_write (path ("be2e.npy"), CNMS_NPY_F4, 3, dims, e2e,
          err, sizeof err), 0);
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640x640 "
      "--frame-size 640x640 --score-threshold 0.25 --iou 0.5",
      path ("be2e.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text,
          "{\"frame\": 0, \"x\": 1, \"y\": 1, \"w\": 4, \"h\": 4, "
          "\"confidence\": 0.899999976, \"label_id\": 0}\n"
          "{\"frame\": 0, \"x\": 10, \"y\": 10, \"w\": 10, \"h\": 20, "
          "\"confidence\": 0.300000012, \"label_id\": 7}\n"
          "{\"frame\": 1, \"x\": 2, \"y\": 3, \"w\": 2, \"h\": 2, "
          "\"confidence\": 0.5, \"label_id\": 2}\n") == 0);
  if (count_lines (out_text) != 3)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);

  /* pose: each frame's lines are its own decode's, frame first */
  CHECK_INT (cnms_npy_write (path ("bpose.npy"), CNMS_NPY_F4, 3, pdims, pose,
          err, sizeof err), 0);
  want[0] = '\0';
  for (f = 0; f < 2; f++) {
    int64_t d1[3] = { 1, 8, 3 };
    char name[32], *line, *save = NULL;

    snprintf (name, sizeof name, "pose%d.npy", f);
    CHECK_INT (cnms_npy_write (path (name), CNMS_NPY_F4, 3, d1, pose[f],
            err, sizeof err), 0);
    snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-pose "
        "--model-size 640x640 --frame-size 1280x720 --score-threshold 0.25 "
        "--iou 0.5", path (name));
    CHECK_INT (run_tool (args), 0);
    snprintf (one, sizeof one, "%s", out_text);
    for (line = strtok_r (one, "\n", &save); line != NULL;
        line = strtok_r (NULL, "\n", &save)) {
      size_t len = strlen (want);

      snprintf (want + len, sizeof want - len, "{\"frame\": %d, %s\n", f,
          line + 1);
    }
  }
  CHECK_INT (count_lines (want), 4);
  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-pose "
      "--model-size 640x640 --frame-size 1280x720 --score-threshold 0.25 "
      "--iou 0.5", path ("bpose.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, want) == 0);
  if (strcmp (out_text, want) != 0)
    fprintf (stderr, "  stdout: %s\n  want: %s\n", out_text, want);
}

/* Oriented boxes through the CLI: nms on [N,5] (cnms_nms_rotated) and
 * decode --layout yolov8-obb, its JSON lines with the angle. */
static void
test_obb_cli (void)
{
  /* 0 and 1 overlap (IoU 0.9); 2 is far */
  static const float boxes[3][5] = {
    {100, 100, 40, 20, 0.5f}, {102, 100, 40, 20, 0.5f},
    {300, 300, 40, 20, -0.5f},
  };
  static const float scores[3] = { 0.6f, 0.9f, 0.7f };
  static const int64_t want[2] = { 1, 2 };
  /* [1, 4 + 2 + 1, 2]: anchor 1 of class 0 */
  static const float obb[7][2] = {
    {10, 320}, {10, 160}, {4, 64}, {4, 32}, {0.1f, 0.75f}, {0.2f, 0.5f},
    {0, 0.25f},
  };
  int64_t bdims[2] = { 3, 5 }, sdims[1] = { 3 }, tdims[3] = { 1, 7, 2 };
  char args[4096], err[512];
  cnms_npy k;

  CHECK_INT (cnms_npy_write (path ("obb-boxes.npy"), CNMS_NPY_F4, 2, bdims,
          boxes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("obb-scores.npy"), CNMS_NPY_F4, 1, sdims,
          scores, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("obb.npy"), CNMS_NPY_F4, 3, tdims, obb,
          err, sizeof err), 0);
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--out '%s'", path ("obb-boxes.npy"), path ("obb-scores.npy"),
      path ("keep.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (cnms_npy_read (path ("keep.npy"), &k, err, sizeof err), 0);
  CHECK (k.data != NULL && k.dims[0] == 2
      && memcmp (k.data, want, sizeof want) == 0);
  cnms_npy_clear (&k);
  /* model 640x640 on a 1280x1280 frame: twice the size */
  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-obb "
      "--model-size 640x640 --frame-size 1280x1280 --score-threshold 0.25 "
      "--iou 0.5", path ("obb.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text,
          "{\"cx\": 640, \"cy\": 320, \"w\": 128, \"h\": 64, \"angle\": "
          "0.25, \"confidence\": 0.75, \"label_id\": 0}\n") == 0);
  if (count_lines (out_text) != 1)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
  /* auto never takes a tensor for oriented boxes (this one, 2 anchors of
   * 7 rows, fits no box layout either) */
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640x640 "
      "--frame-size 1280x1280 --score-threshold 0.25 --iou 0.5",
      path ("obb.npy"));
  expect_error (args, "cannot detect the layout");
  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov9-obb "
      "--model-size 640x640 --frame-size 640x640 --score-threshold 0.25 "
      "--iou 0.5", path ("obb.npy"));
  expect_error (args, "yolov8-obb");
}

/* Lanes through the CLI: nms --lane-distance on [N,5+S] proposals and
 * decode --layout laneatt, its JSON lines with the points. */
static void
test_lanes_cli (void)
{
  /* S = 4: lane 0 rows 0-2; lane 1 from row 2, extended to row 1; lane 2
   * 1 px right of lane 0 (suppressed at 15 px) */
  static const float lanes[3][9] = {
    {0, 2, 0, 0, 3, 100, 110, 120, 700},
    {0, 1, 2.0f / 3.0f, 0, 2, -5, 300, 310, 320},
    {0, 1.5f, 0, 0, 3, 101, 111, 121, 701},
  };
  /* the same three, then two lanes that NMS keeps first (the best scores,
   * far from the others) whose points in the frame are fewer than 2: one
   * point (row 0 at x 630; rows 1 and 2 past the model width), none */
  static const float lanes5[5][9] = {
    {0, 2, 0, 0, 3, 100, 110, 120, 700},
    {0, 1, 2.0f / 3.0f, 0, 2, -5, 300, 310, 320},
    {0, 1.5f, 0, 0, 3, 101, 111, 121, 701},
    {0, 4, 0, 0, 3, 630, 700, 710, 720},
    {0, 3, 0, 0, 3, 900, 910, 920, 930},
  };
  static const float scores[3] = { 0.9f, 0.8f, 0.7f };
  static const int64_t want[2] = { 0, 1 };
  static const char want_lanes[] =
      "{\"confidence\": 0.880797088, \"anchor\": 0, \"x\": 200, "
      "\"y\": 240, \"w\": 40, \"h\": 480, \"points\": [[200, 720], "
      "[220, 480], [240, 240]]}\n"
      "{\"confidence\": 0.731058598, \"anchor\": 1, \"x\": 600, "
      "\"y\": 0, \"w\": 40, \"h\": 480, \"points\": [[600, 480], "
      "[620, 240], [640, 0]]}\n";
  int64_t pdims[2] = { 3, 9 }, sdims[1] = { 3 }, tdims[3] = { 1, 3, 9 };
  int64_t t5dims[3] = { 1, 5, 9 };
  char args[4096], err[512];
  cnms_npy k;

  CHECK_INT (cnms_npy_write (path ("lanes.npy"), CNMS_NPY_F4, 2, pdims,
          lanes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("lane-scores.npy"), CNMS_NPY_F4, 1, sdims,
          scores, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("lanes3.npy"), CNMS_NPY_F4, 3, tdims,
          lanes, err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("lanes5.npy"), CNMS_NPY_F4, 3, t5dims,
          lanes5, err, sizeof err), 0);
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' "
      "--lane-distance 15 --out '%s'", path ("lanes.npy"),
      path ("lane-scores.npy"), path ("keep.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK_INT (cnms_npy_read (path ("keep.npy"), &k, err, sizeof err), 0);
  CHECK (k.data != NULL && k.dims[0] == 2
      && memcmp (k.data, want, sizeof want) == 0);
  cnms_npy_clear (&k);
  /* model 640x360 on 1280x720: twice the size; rows at y 360 240 120 0 */
  snprintf (args, sizeof args, "decode --tensor '%s' --layout laneatt "
      "--model-size 640x360 --frame-size 1280x720 --letterbox "
      "--score-threshold 0.25 --lane-distance 15", path ("lanes3.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, want_lanes) == 0);
  if (count_lines (out_text) != 2)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
  /* lanes kept with fewer than 2 points in the frame are no lines: the
   * same two */
  snprintf (args, sizeof args, "decode --tensor '%s' --layout laneatt "
      "--model-size 640x360 --frame-size 1280x720 --letterbox "
      "--score-threshold 0.25 --lane-distance 15", path ("lanes5.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, want_lanes) == 0);
  if (strcmp (out_text, want_lanes) != 0)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
  snprintf (args, sizeof args, "decode --tensor '%s' --layout laneatt "
      "--model-size 640x360 --frame-size 1280x720 --score-threshold 0.25 "
      "--iou 0.5", path ("lanes3.npy"));
  expect_error (args, "--lane-distance");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' "
      "--lane-distance -1 --out '%s'", path ("lanes.npy"),
      path ("lane-scores.npy"), path ("keep.npy"));
  expect_error (args, "--lane-distance");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--lane-distance 15 --out '%s'", path ("lanes.npy"),
      path ("lane-scores.npy"), path ("keep.npy"));
  expect_error (args, "not both");
}

/* The edges where the reader and the CLI must say what numpy and a user
 * expect: the 8-dim limit, format versions, an empty array of huge dims,
 * a misshapen boxes array, a number out of range. */
static void
test_edges (void)
{
  static const float v[2] = { 1.5f, -2.0f };
  static const float boxes[10][6];
  int64_t bdims[2] = { 10, 6 }, sdims[1] = { 10 };
  static const float scores[10];
  cnms_npy a;
  char err[512], args[4096];

  /* 8 dims is the limit: an 8-dim file reads, a 9-dim one is refused */
  write_header (path ("d8.npy"), "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (1, 1, 1, 1, 1, 1, 1, 2), }\n", v, 8);
  CHECK_INT (cnms_npy_read (path ("d8.npy"), &a, err, sizeof err), 0);
  CHECK_INT (a.n_dims, 8);
  CHECK_INT (a.dims[7], 2);
  CHECK_INT (a.count, 2);
  cnms_npy_clear (&a);
  write_header (path ("d9.npy"), "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 2), }\n", v, 8);
  expect_npy_error (path ("d9.npy"), "npy array has more than 8 dims");
  /* versions 1.0, 2.0 and 3.0 only: numpy refuses 1.9 */
  {
    const char *dict = "{'descr': '<f4', 'fortran_order': False, "
        "'shape': (2,), }\n";
    char buf[256];
    size_t hl = strlen (dict);

    memcpy (buf, "\x93NUMPY\x01\x09", 8);
    buf[8] = (char) hl;
    buf[9] = 0;
    memcpy (buf + 10, dict, hl);
    memcpy (buf + 10 + hl, v, sizeof v);
    write_text (path ("v19.npy"), buf, 10 + hl + sizeof v);
    expect_npy_error (path ("v19.npy"), "unsupported .npy version 1.9");
  }
  /* a zero dim: a valid empty array, whatever the other dims */
  write_header (path ("empty.npy"), "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (4611686018427387, 4611686018427387, 0), }\n", v, 0);
  CHECK_INT (cnms_npy_read (path ("empty.npy"), &a, err, sizeof err), 0);
  CHECK_INT (a.n_dims, 3);
  CHECK_INT (a.dims[0], 4611686018427387LL);
  CHECK_INT (a.count, 0);
  cnms_npy_clear (&a);

  /* the CLI names the shape it got, and a number out of range */
  CHECK_INT (cnms_npy_write (path ("b105.npy"), CNMS_NPY_F4, 2, bdims, boxes,
          err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("s10.npy"), CNMS_NPY_F4, 1, sdims, scores,
          err, sizeof err), 0);
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 0.5 "
      "--out '%s'", path ("b105.npy"), path ("s10.npy"), path ("k.npy"));
  expect_error (args, "boxes must be float32 [N,4] or [N,5], got float32 "
      "[10, 6]");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 1e-400 "
      "--out '%s'", path ("b105.npy"), path ("s10.npy"), path ("k.npy"));
  expect_error (args, "--iou: '1e-400' is out of range");
  snprintf (args, sizeof args, "nms --boxes '%s' --scores '%s' --iou 1e999 "
      "--out '%s'", path ("b105.npy"), path ("s10.npy"), path ("k.npy"));
  expect_error (args, "--iou: '1e999' is out of range");
}

/* FNV-1a 64 of n bytes, as decode prints a mask's hash. */
static unsigned long long
fnv1a (const uint8_t *b, size_t n)
{
  unsigned long long h = 14695981039346656037ull;
  size_t i;

  for (i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Pose and segmentation through decode: the keypoints' JSON (D = 3 and
 * D = 2), the masks' JSON and --masks-out (the hand case of
 * test_heads.c), and the options' errors. */
static void
test_heads_cli (void)
{
  /* [1, 5 + 6, 1]: a box 90..110 x 80..120, keypoints (10, 20, 0.5),
   * (30, 40, 0.25) */
  static const float pose[11] = {
    100, 100, 20, 40, 0.5f, 10, 20, 0.5f, 30, 40, 0.25f
  };
  /* [1, 4 + 1 + 2, 3] and prototypes [1, 2, 2, 2]: test_heads.c's masks */
  static const float seg[7][3] = {
    {4, 0, 4.375f}, {4, 0, 2}, {8, 0, 3.75f}, {8, 0, 4},
    {0.9f, 0, 0.8f}, {1, 0, -1}, {0.5f, 0, 0},
  };
  static const float protos[8] = { -4, 0, 1, 1, 2, 2, 0, 0 };
  static const char *const full[8] = {
    "00000111", "00000111", "00000111", "00001111",
    "00011111", "11111111", "11111111", "11111111"
  };
  static const char *const part[4] = { "1110", "1110", "1110", "1100" };
  int64_t pdims[3] = { 1, 11, 1 }, sdims[3] = { 1, 7, 3 };
  int64_t rdims[4] = { 1, 2, 2, 2 }, wdims[4] = { 1, 3, 2, 2 };
  uint8_t want[80];
  char args[4096], err[512], line[1024];
  cnms_npy m;
  int x, y;

  for (y = 0; y < 8; y++)
    for (x = 0; x < 8; x++)
      want[y * 8 + x] = (uint8_t) (full[y][x] - '0');
  for (y = 0; y < 4; y++)
    for (x = 0; x < 4; x++)
      want[64 + y * 4 + x] = (uint8_t) (part[y][x] - '0');
  CHECK_INT (cnms_npy_write (path ("pose.npy"), CNMS_NPY_F4, 3, pdims, pose,
          err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("seg.npy"), CNMS_NPY_F4, 3, sdims, seg,
          err, sizeof err), 0);
  CHECK_INT (cnms_npy_write (path ("protos.npy"), CNMS_NPY_F4, 4, rdims,
          protos, err, sizeof err), 0);
  /* uint8 prototypes: refused (float32 or float16) */
  CHECK_INT (cnms_npy_write (path ("protos3.npy"), CNMS_NPY_U1, 4, wdims,
          want, err, sizeof err), 0);

#define DECODE(t, extra) \
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640x640 " \
      "--frame-size 640x640 --score-threshold 0.25 --iou 0.5 %s", path (t), \
      extra)
  DECODE ("pose.npy", "--layout yolov8-pose");
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, "{\"x\": 90, \"y\": 80, \"w\": 20, \"h\": 40, "
          "\"confidence\": 0.5, \"label_id\": 0, \"keypoints\": [[10, 20, "
          "0.5], [30, 40, 0.25]]}\n") == 0);
  DECODE ("pose.npy", "--layout yolov8-pose --keypoint-dims 2");
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, "{\"x\": 90, \"y\": 80, \"w\": 20, \"h\": 40, "
          "\"confidence\": 0.5, \"label_id\": 0, \"keypoints\": [[10, 20, "
          "null], [0.5, 30, null], [40, 0.25, null]]}\n") == 0);
  if (count_lines (out_text) != 1)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
  DECODE ("pose.npy", "--layout yolov8-pose --keypoint-dims 4");
  expect_error (args, "--keypoint-dims: must be 2 or 3");
  DECODE ("pose.npy", "--keypoint-dims 3");
  expect_error (args, "--keypoint-dims goes with --layout yolov8-pose");
  DECODE ("seg.npy", "--layout yolov8-pose --keypoint-dims 3");
  expect_error (args, "not a multiple of 3");

  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-seg "
      "--protos '%s' --model-size 8x8 --frame-size 8x8 --score-threshold "
      "0.25 --iou 0.45 --masks-out '%s'", path ("seg.npy"),
      path ("protos.npy"), path ("masks.npy"));
  CHECK_INT (run_tool (args), 0);
  snprintf (line, sizeof line, "{\"x\": 0, \"y\": 0, \"w\": 8, \"h\": 8, "
      "\"confidence\": 0.899999976, \"label_id\": 0, \"mask\": {\"x\": 0, "
      "\"y\": 0, \"w\": 8, \"h\": 8, \"offset\": 0, \"set\": 42, \"hash\": "
      "\"%016llx\"}}\n{\"x\": 2.5, \"y\": 0, \"w\": 3.75, \"h\": 4, "
      "\"confidence\": 0.800000012, \"label_id\": 0, \"mask\": {\"x\": 3, "
      "\"y\": 0, \"w\": 4, \"h\": 4, \"offset\": 64, \"set\": 11, "
      "\"hash\": \"%016llx\"}}\n", fnv1a (want, 64), fnv1a (want + 64, 16));
  CHECK (strcmp (out_text, line) == 0);
  if (strcmp (out_text, line) != 0)
    fprintf (stderr, "  stdout: %s\n  wanted: %s\n  stderr: %s\n", out_text,
        line, err_text);
  CHECK_INT (cnms_npy_read (path ("masks.npy"), &m, err, sizeof err), 0);
  CHECK_INT (m.dtype, CNMS_NPY_U1);
  CHECK_INT (m.n_dims, 1);
  CHECK_INT (m.count, 80);
  if (m.count == 80)
    CHECK (memcmp (m.data, want, 80) == 0);
  cnms_npy_clear (&m);

  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-seg "
      "--model-size 8x8 --frame-size 8x8 --score-threshold 0.25 --iou 0.45",
      path ("seg.npy"));
  expect_error (args, "needs --protos");
  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-seg "
      "--protos '%s' --model-size 8x8 --frame-size 8x8 --score-threshold "
      "0.25 --iou 0.45", path ("seg.npy"), path ("protos3.npy"));
  expect_error (args, "float32 or float16");
  /* M = 3 prototypes for 2 coefficient rows: 7 rows leave no class */
  CHECK_INT (cnms_npy_write (path ("protos3.npy"), CNMS_NPY_F4, 4, wdims,
          seg, err, sizeof err), 0);
  expect_error (args, "wrong M?");
  DECODE ("seg.npy", "--protos x.npy");
  expect_error (args, "--protos and --masks-out go with --layout "
      "yolov8-seg");
#undef DECODE
}

/* The per-class options of decode: the lists' one parser and rule,
 * shared with the element (tests/gst/test_classes.c holds the same cases
 * through its properties): an empty list is no list, a value outside its
 * range and a class named twice are refused with the element's words, a
 * class is an id (no label file here). The two records of e2e.npy: class
 * 0 at 0.9, class 7 at 0.3. */
static void
test_classes_cli (void)
{
#define LINE0 "{\"x\": 1, \"y\": 1, \"w\": 4, \"h\": 4, \"confidence\": " \
      "0.899999976, \"label_id\": 0}\n"
#define LINE7 "{\"x\": 10, \"y\": 10, \"w\": 10, \"h\": 20, " \
      "\"confidence\": 0.300000012, \"label_id\": 7}\n"
  static const struct
  {
    const char *opts, *want;
  } kept[] = {
    /* empty and blank lists: unset, as the element's "" */
    {"--keep-classes ''", LINE0 LINE7},
    {"--keep-classes ' '", LINE0 LINE7},
    {"--drop-classes ''", LINE0 LINE7},
    {"--class-score-thresholds ''", LINE0 LINE7},
    {"--keep-classes 7", LINE7},
    {"--keep-classes ' 7 , 0 '", LINE0 LINE7},
    {"--drop-classes 0", LINE7},
    {"--class-score-thresholds ' 7 = 0.5 '", LINE0},
    /* a keep list drops what it does not list, whatever its threshold */
    {"--keep-classes 0 --class-score-thresholds 7=0.1", LINE0},
    {"--drop-classes 7 --class-score-thresholds 7=0.1", LINE0},
    {"--class-max-detections 0=0,7=1", LINE0 LINE7},
  };
  static const struct
  {
    const char *opts, *why;
  } refused[] = {
    {"--class-score-thresholds 0=-1", "--class-score-thresholds: the score "
          "threshold -1 of class '0' is outside [0, 1]"},
    {"--class-score-thresholds 0=2", "--class-score-thresholds: the score "
          "threshold 2 of class '0' is outside [0, 1]"},
    {"--class-score-thresholds 0=inf", "--class-score-thresholds: the score "
          "threshold inf of class '0' is outside [0, 1]"},
    {"--class-score-thresholds 0=1e39", "--class-score-thresholds: the "
          "score threshold 1e39 of class '0' is outside [0, 1]"},
    {"--class-score-thresholds 0=nan", "--class-score-thresholds: the value "
          "'nan' of class '0' is not a number"},
    {"--class-score-thresholds 0=1e-400", "--class-score-thresholds: the "
          "value '1e-400' of class '0' is out of range"},
    {"--class-ious 0=1.5", "--class-ious: the iou 1.5 of class '0' is "
          "outside [0, 1]"},
    {"--class-max-detections 7=1.5", "--class-max-detections: the cap 1.5 "
          "of class '7' is not an integer in [0, 2147483647]"},
    {"--class-max-detections 7=2147483648", "--class-max-detections: the "
          "cap 2147483648 of class '7' is not an integer in [0, 2147483647]"},
    {"--class-score-thresholds 0", "--class-score-thresholds: '0' is not "
          "CLASS=VALUE"},
    {"--drop-classes 0=1", "--drop-classes: '0=1' is not a class (an id or "
          "a label, without a value)"},
    {"--keep-classes 0,,7", "--keep-classes: an empty class in '0,,7'"},
    {"--keep-classes 0,", "--keep-classes: an empty class in '0,'"},
    {"--keep-classes 16777216", "--keep-classes: class id '16777216' is not "
          "an integer in [0, 16777216)"},
    /* a class named twice in one list */
    {"--class-score-thresholds 0=0.5,0=0.9", "--class-score-thresholds: "
          "class '0' is given twice"},
    {"--keep-classes 0,7,0", "--keep-classes: class '0' is given twice"},
    {"--drop-classes 7,07", "--drop-classes: '7' and '07' are both class 7"},
    /* no label file: a class is its id */
    {"--keep-classes person", "--keep-classes: class 'person' is not an id "
          "in [0, 16777216), and without a label file a class is its id"},
    {"--class-ious -1=0.5", "--class-ious: class '-1' is not an id in "
          "[0, 16777216), and without a label file a class is its id"},
  };
  char args[4096];
  size_t i;

#define DECODE(extra) \
  snprintf (args, sizeof args, "decode --tensor '%s' --model-size 640x640 " \
      "--frame-size 640x640 --score-threshold 0.25 --iou 0.5 %s", \
      path ("e2e.npy"), extra)
  for (i = 0; i < sizeof kept / sizeof kept[0]; i++) {
    DECODE (kept[i].opts);
    CHECK_INT (run_tool (args), 0);
    CHECK (strcmp (out_text, kept[i].want) == 0);
    if (strcmp (out_text, kept[i].want) != 0)
      fprintf (stderr, "  %s:\n  stdout: %s\n  wanted: %s\n  stderr: %s\n",
          kept[i].opts, out_text, kept[i].want, err_text);
  }
  for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char want[512];

    DECODE (refused[i].opts);
    snprintf (want, sizeof want, "cudanms-tool: error: %s\n", refused[i].why);
    expect_error (args, want);
    CHECK (strcmp (err_text, want) == 0);
  }
#undef DECODE
#undef LINE0
#undef LINE7
}

/* The lists' parser itself, with a label file of five lines where
 * "person" is on lines 1 and 4 (ids 0 and 3) and line 3 is empty: the
 * cases that cudanms-tool, without a label file, cannot reach. */
static const char *const label_lines[5] = { "person", "car", "", "person",
  "dog"
};

static int
find_label (void *data, const char *name, int lines[2])
{
  int i, n = 0;

  (void) data;
  for (i = 0; i < 5; i++) {
    if (label_lines[i][0] != '\0' && strcmp (label_lines[i], name) == 0) {
      if (n < 2)
        lines[n] = i;
      n++;
    }
  }
  return n;
}

static void
expect_list (cnms_class_list_kind kind, const char *text, const char *err)
{
  cnms_class_labels labels = { find_label, NULL, 5 };
  cnms_class_list l;
  char got[512] = "";
  cnms_status st;

  memset (&l, 0, sizeof l);
  st = cnms_class_list_parse (&l, kind, text, got, sizeof got);
  if (st == CNMS_OK)
    st = cnms_class_list_resolve (&l, &labels, got, sizeof got);
  CHECK_INT (st, err == NULL ? CNMS_OK : CNMS_ERR_INVALID_ARG);
  CHECK (strcmp (got, err == NULL ? "" : err) == 0);
  if (strcmp (got, err == NULL ? "" : err) != 0)
    fprintf (stderr, "  '%s': got '%s'\n", text, got);
  cnms_class_list_clear (&l);
}

static void
test_class_lists (void)
{
  cnms_class_labels labels = { find_label, NULL, 5 };
  cnms_class_list lists[CNMS_N_CLASS_LISTS];
  cnms_class_params c[6];
  cnms_params p;
  char err[512];
  int k;

  /* a label on two lines: an error naming both; its ids work */
  expect_list (CNMS_CLASS_LIST_KEEP, "person", "the label 'person' is on "
      "lines 1 and 4 of the label file (classes 0 and 3): give its class "
      "id");
  expect_list (CNMS_CLASS_LIST_THRESHOLDS, "car=0.5, person=0.5", "the "
      "label 'person' is on lines 1 and 4 of the label file (classes 0 and "
      "3): give its class id");
  expect_list (CNMS_CLASS_LIST_KEEP, "0,3", NULL);
  expect_list (CNMS_CLASS_LIST_KEEP, "horse", "the label file has no class "
      "'horse' (5 labels)");
  /* a class named twice, once the labels are ids */
  expect_list (CNMS_CLASS_LIST_DROP, "dog,4", "'dog' and '4' are both "
      "class 4");
  expect_list (CNMS_CLASS_LIST_IOUS, "car=0.5,car=0.6", "class 'car' is "
      "given twice");
  expect_list (CNMS_CLASS_LIST_MAX_DETECTIONS, "1=1,car=2", "'1' and 'car' "
      "are both class 1");
  expect_list (CNMS_CLASS_LIST_KEEP, "\t \n", NULL);

  /* the rule: thresholds, IoUs and caps per class; +infinity where the
   * keep list does not list a class or the drop list lists it */
  memset (lists, 0, sizeof lists);
  CHECK_INT (cnms_class_list_parse (&lists[CNMS_CLASS_LIST_THRESHOLDS],
          CNMS_CLASS_LIST_THRESHOLDS, "car=0.5,4=0.75,2=0.125", err,
          sizeof err), CNMS_OK);
  CHECK_INT (cnms_class_list_parse (&lists[CNMS_CLASS_LIST_IOUS],
          CNMS_CLASS_LIST_IOUS, "1=0.25", err, sizeof err), CNMS_OK);
  CHECK_INT (cnms_class_list_parse (&lists[CNMS_CLASS_LIST_MAX_DETECTIONS],
          CNMS_CLASS_LIST_MAX_DETECTIONS, "dog=3", err, sizeof err), CNMS_OK);
  CHECK_INT (cnms_class_list_parse (&lists[CNMS_CLASS_LIST_KEEP],
          CNMS_CLASS_LIST_KEEP, "car,dog,3", err, sizeof err), CNMS_OK);
  CHECK_INT (cnms_class_list_parse (&lists[CNMS_CLASS_LIST_DROP],
          CNMS_CLASS_LIST_DROP, "dog", err, sizeof err), CNMS_OK);
  for (k = 0; k < CNMS_N_CLASS_LISTS; k++)
    CHECK_INT (cnms_class_list_resolve (&lists[k], &labels, err,
            sizeof err), CNMS_OK);
  CHECK_INT (cnms_class_lists_size (lists), 5);
  cnms_params_init (&p);
  p.score_threshold = 0.25f;
  p.iou = 0.5f;
  CHECK_INT (cnms_class_lists_fill (lists, &p, c, 5), 1);
  /* 0: not kept; 1: kept, 0.5, IoU 0.25; 2: not kept, its threshold
   * aside; 3: kept, frame-wide; 4: kept and dropped, cap 3 */
  CHECK (c[0].score_threshold == INFINITY && c[0].iou == 0.5f);
  CHECK (c[1].score_threshold == 0.5f && c[1].iou == 0.25f
      && c[1].max_detections == 0);
  CHECK (c[2].score_threshold == INFINITY);
  CHECK (c[3].score_threshold == 0.25f && c[3].iou == 0.5f);
  CHECK (c[4].score_threshold == INFINITY && c[4].max_detections == 3);
  cnms_class_list_clear (&lists[CNMS_CLASS_LIST_KEEP]);
  CHECK_INT (cnms_class_lists_fill (lists, &p, c, 5), 0);
  CHECK (c[0].score_threshold == 0.25f && c[2].score_threshold == 0.125f
      && c[4].score_threshold == INFINITY);
  for (k = 0; k < CNMS_N_CLASS_LISTS; k++)
    cnms_class_list_clear (&lists[k]);
  CHECK_INT (cnms_class_lists_size (lists), 0);
}

/* Keypoints that are NaN or infinite (the tensor's, passed through) are
 * null in decode's JSON: a strict parser refuses nan and inf. */
static void
test_nonfinite_cli (void)
{
  /* [1, 5 + 6, 1]: a box 90..110 x 80..120, keypoints (NaN, +Inf, -Inf),
   * (-Inf, 40, NaN) */
  float pose[11] = { 100, 100, 20, 40, 0.5f, NAN, INFINITY, -INFINITY,
    -INFINITY, 40, NAN
  };
  int64_t dims[3] = { 1, 11, 1 };
  char args[4096], err[512];

  CHECK_INT (cnms_npy_write (path ("pose-nan.npy"), CNMS_NPY_F4, 3, dims,
          pose, err, sizeof err), 0);
  snprintf (args, sizeof args, "decode --tensor '%s' --layout yolov8-pose "
      "--model-size 640x640 --frame-size 640x640 --score-threshold 0.25 "
      "--iou 0.5", path ("pose-nan.npy"));
  CHECK_INT (run_tool (args), 0);
  CHECK (strcmp (out_text, "{\"x\": 90, \"y\": 80, \"w\": 20, \"h\": 40, "
          "\"confidence\": 0.5, \"label_id\": 0, \"keypoints\": [[null, "
          "null, null], [null, 40, null]]}\n") == 0);
  if (count_lines (out_text) != 1 || strstr (out_text, "n,") != NULL)
    fprintf (stderr, "  stdout: %s\n  stderr: %s\n", out_text, err_text);
}

int
main (int argc, char **argv)
{
  if (argc != 3) {
    fprintf (stderr, "usage: test-cli CUDANMS_TOOL WORKDIR\n");
    return 2;
  }
  tool = argv[1];
  snprintf (dir, sizeof dir, "%s", argv[2]);
  mkdir (dir, 0755);
  test_npy ();
  test_nms_cli ();
  test_decode_cli ();
  test_batch_cli ();
  test_obb_cli ();
  test_lanes_cli ();
  test_heads_cli ();
  test_classes_cli ();
  test_class_lists ();
  test_nonfinite_cli ();
  test_edges ();
  return check_result ("test-cli");
}
