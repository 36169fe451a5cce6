/* golden-obb-run: the oriented-box entry points of libcudanms for the
 * Python golden tests (test_golden_obb.py, test_golden_obb_ultralytics.py),
 * on .npy files.
 *
 *   golden-obb-run nms BOXES.npy SCORES.npy CLASSES.npy|- IOU AGNOSTIC
 *       MAX_DET BACKEND OUT.npy
 *     cnms_nms_rotated: BOXES float32 [n, 5] cx cy w h angle, SCORES
 *     float32 [n], CLASSES int32 [n] or - (none); OUT int64 [k], the kept
 *     indices in kept order.
 *   golden-obb-run detect TENSOR.npy SCORE IOU AGNOSTIC MAX_DET MAX_CAND
 *       MODEL_W MODEL_H FRAME_W FRAME_H LETTERBOX BACKEND OUT.npy
 *     cnms_detect with CNMS_LAYOUT_YOLOV8_OBB on a float32 or float16
 *     tensor [1, 4+C+1, N]; OUT float32 [k, 8]: score cx cy w h angle
 *     class anchor; prints "candidates K" (cnms_ctx_report).
 *
 * BACKEND is cpu or cuda. Exits 1 with a message on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cnms_npy.h"

static void
die (const char *what, const char *why)
{
  fprintf (stderr, "golden-obb-run: %s: %s\n", what, why);
  exit (1);
}

static void
load (const char *path, cnms_npy *a)
{
  char err[256];

  if (cnms_npy_read (path, a, err, sizeof err) != 0)
    die (path, err);
}

static cnms_ctx *
context (const char *backend)
{
  cnms_ctx *ctx = NULL;
  cnms_status st = cnms_ctx_new (strcmp (backend, "cuda") == 0
      ? CNMS_BACKEND_CUDA : CNMS_BACKEND_CPU, -1, &ctx);

  if (st != CNMS_OK)
    die ("cnms_ctx_new", cnms_status_str (st));
  return ctx;
}

static void
save (const char *path, cnms_npy_dtype dtype, int n_dims, const int64_t *dims,
    const void *data)
{
  char err[256];

  if (cnms_npy_write (path, dtype, n_dims, dims, data, err, sizeof err) != 0)
    die (path, err);
}

static int
run_nms (char **a)
{
  cnms_npy boxes, scores, classes;
  cnms_ctx *ctx = context (a[6]);
  int64_t *keep, dims[1];
  int n, n_keep = 0;
  cnms_status st;

  memset (&classes, 0, sizeof classes);
  load (a[0], &boxes);
  load (a[1], &scores);
  if (strcmp (a[2], "-") != 0)
    load (a[2], &classes);
  if (boxes.dtype != CNMS_NPY_F4 || scores.dtype != CNMS_NPY_F4
      || (classes.data != NULL && classes.dtype != CNMS_NPY_I4))
    die ("nms", "boxes and scores must be float32, classes int32");
  n = (int) scores.count;
  if (boxes.count != 5 * (size_t) n
      || (classes.data != NULL && classes.count != (size_t) n))
    die ("nms", "boxes [n, 5], scores [n], classes [n]");
  keep = malloc (sizeof (int64_t) * (size_t) (n > 0 ? n : 1));
  if (keep == NULL)
    die ("nms", "out of memory");
  st = cnms_nms_rotated (ctx, boxes.data, scores.data, classes.data, n,
      strtof (a[3], NULL), atoi (a[4]), atoi (a[5]), keep, &n_keep);
  if (st != CNMS_OK)
    die ("cnms_nms_rotated", cnms_ctx_error (ctx));
  dims[0] = n_keep;
  save (a[7], CNMS_NPY_I8, 1, dims, keep);
  free (keep);
  cnms_npy_clear (&boxes);
  cnms_npy_clear (&scores);
  cnms_npy_clear (&classes);
  cnms_ctx_free (ctx);
  return 0;
}

static int
run_detect (char **a)
{
  cnms_npy arr;
  cnms_tensor t;
  cnms_params p;
  cnms_ctx *ctx = context (a[11]);
  const cnms_det *dets = NULL;
  float *rows;
  int64_t dims[2];
  int n = 0, i;
  cnms_status st;

  load (a[0], &arr);
  if (arr.dtype != CNMS_NPY_F4 && arr.dtype != CNMS_NPY_F2)
    die (a[0], "the tensor must be float32 or float16");
  memset (&t, 0, sizeof t);
  t.data = arr.data;
  t.size = arr.size;
  t.dtype = arr.dtype == CNMS_NPY_F4 ? CNMS_DTYPE_FLOAT32 : CNMS_DTYPE_FLOAT16;
  t.n_dims = arr.n_dims;
  for (i = 0; i < arr.n_dims && i < CNMS_MAX_DIMS; i++)
    t.dims[i] = arr.dims[i];
  cnms_params_init (&p);
  p.score_threshold = strtof (a[1], NULL);
  p.iou = strtof (a[2], NULL);
  p.class_agnostic = atoi (a[3]);
  p.max_detections = atoi (a[4]);
  p.max_candidates = atoi (a[5]);
  p.model_width = atoi (a[6]);
  p.model_height = atoi (a[7]);
  p.frame_width = atoi (a[8]);
  p.frame_height = atoi (a[9]);
  p.letterbox = atoi (a[10]);
  st = cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8_OBB, &p, &dets, &n);
  if (st != CNMS_OK)
    die ("cnms_detect", cnms_ctx_error (ctx));
  rows = malloc (sizeof (float) * 8 * (size_t) (n > 0 ? n : 1));
  if (rows == NULL)
    die ("detect", "out of memory");
  for (i = 0; i < n; i++) {
    float *r = rows + 8 * i;

    r[0] = dets[i].score;
    r[1] = dets[i].cx;
    r[2] = dets[i].cy;
    r[3] = dets[i].w;
    r[4] = dets[i].h;
    r[5] = dets[i].angle;
    r[6] = (float) dets[i].class_id;
    r[7] = (float) dets[i].anchor;
  }
  dims[0] = n;
  dims[1] = 8;
  save (a[12], CNMS_NPY_F4, 2, dims, rows);
  printf ("candidates %d\n", cnms_ctx_report (ctx)->candidates);
  free (rows);
  cnms_npy_clear (&arr);
  cnms_ctx_free (ctx);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 10 && strcmp (argv[1], "nms") == 0)
    return run_nms (argv + 2);
  if (argc == 15 && strcmp (argv[1], "detect") == 0)
    return run_detect (argv + 2);
  fprintf (stderr, "usage: golden-obb-run nms BOXES SCORES CLASSES|- IOU "
      "AGNOSTIC MAX_DET BACKEND OUT\n"
      "       golden-obb-run detect TENSOR SCORE IOU AGNOSTIC MAX_DET "
      "MAX_CAND MODEL_W MODEL_H FRAME_W FRAME_H LETTERBOX BACKEND OUT\n");
  return 2;
}
