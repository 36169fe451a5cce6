/* cnms-example: libcudanms from an application, on the CPU backend.
 *
 * Plain NMS (cnms_nms) on seven hand-picked boxes of two classes, class-aware
 * then class-agnostic, and decode + NMS (cnms_detect) of a tiny YOLOv8
 * tensor [1, 4+2, 4] for a 1280x720 frame. Prints the kept lists.
 *
 * Build against the installed library:
 *   cc cnms-example.c $(pkg-config --cflags --libs cudanms) -o cnms-example
 *
 * A CUDA context takes the same calls (cnms_ctx_new (CNMS_BACKEND_CUDA, ...));
 * cnms_ctx_set_cuda_stream and a tensor with on_device = 1 let cnms_detect
 * read a device pointer on the application's own stream.
 */
#include <cudanms.h>

#include <stdio.h>

#define N_BOXES 7

/* x1 y1 x2 y2, score, class */
static const float boxes[N_BOXES][4] = {
  { 10, 10, 110, 110 },    /* 0: class 0 */
  { 12, 12, 112, 112 },    /* 1: class 0, on top of 0 (IoU 0.92) */
  { 15, 15, 115, 115 },    /* 2: class 1, on top of 0 but another class */
  { 200, 200, 300, 300 },  /* 3: class 0, on top of 4 (another class) */
  { 205, 195, 305, 295 },  /* 4: class 1, the best score */
  { 210, 210, 310, 310 },  /* 5: class 1, on top of 4 (IoU 0.68) */
  { 50, 50, 150, 150 },    /* 6: class 0, overlaps 0 a little (IoU 0.22) */
};
static const float scores[N_BOXES] = {
  0.90f, 0.85f, 0.80f, 0.70f, 0.95f, 0.60f, 0.75f };
static const int32_t classes[N_BOXES] = { 0, 0, 1, 0, 1, 1, 0 };

static int
run_nms (cnms_ctx *ctx, int class_agnostic)
{
  int64_t keep[N_BOXES];
  int n_keep = 0, i;
  cnms_status st = cnms_nms (ctx, &boxes[0][0], scores, classes, N_BOXES,
      0.45f, class_agnostic, 0, keep, &n_keep);

  if (st != CNMS_OK) {
    fprintf (stderr, "cnms_nms: %s: %s\n", cnms_status_str (st),
        cnms_ctx_error (ctx));
    return 1;
  }
  printf ("nms %s, iou 0.45: kept %d:", class_agnostic ? "class-agnostic" :
      "class-aware", n_keep);
  for (i = 0; i < n_keep; i++)
    printf (" %lld", (long long) keep[i]);
  printf ("\n");
  return 0;
}

/* YOLOv8 [1, 4+C, N]: rows cx, cy, w, h, then the C class scores, each
 * row N anchors long. Model pixels, 640x640. */
#define N_ANCHORS 4
static const float yolov8[6][N_ANCHORS] = {
  /* anchor:  0      1      2      3 */
  { 100.f, 104.f, 320.f, 500.f },   /* cx */
  { 200.f, 204.f, 320.f, 500.f },   /* cy */
  { 80.f, 80.f, 160.f, 20.f },      /* w */
  { 40.f, 40.f, 80.f, 20.f },       /* h */
  { 0.90f, 0.80f, 0.10f, 0.20f },   /* class 0 */
  { 0.05f, 0.10f, 0.70f, 0.10f },   /* class 1 */
};

static int
run_detect (cnms_ctx *ctx)
{
  cnms_tensor t = { 0 };
  cnms_params p;
  const cnms_det *dets = NULL;
  int n_dets = 0, i;
  cnms_status st;

  t.data = yolov8;
  t.size = sizeof (yolov8);
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = 6;
  t.dims[2] = N_ANCHORS;

  cnms_params_init (&p);      /* score > 0.25, iou 0.45, model 640x640 */
  p.frame_width = 1280;       /* letterboxed into the 640x640 input */
  p.frame_height = 720;

  /* Forced: layout=auto reads [1, a, b] as yolov8 only when b > a, and
   * this tensor has fewer anchors than rows. */
  st = cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8, &p, &dets, &n_dets);
  if (st != CNMS_OK) {
    fprintf (stderr, "cnms_detect: %s: %s\n", cnms_status_str (st),
        cnms_ctx_error (ctx));
    return 1;
  }
  printf ("detect yolov8 [1, 6, %d] for 1280x720: %d detections\n",
      N_ANCHORS, n_dets);
  for (i = 0; i < n_dets; i++)
    printf ("  anchor %d class %d score %.2f box %.1f %.1f %.1f %.1f\n",
        (int) dets[i].anchor, (int) dets[i].class_id, dets[i].score,
        dets[i].x1, dets[i].y1, dets[i].x2, dets[i].y2);
  return 0;
}

int
main (void)
{
  cnms_ctx *ctx = NULL;
  cnms_status st = cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx);
  int rc;

  if (st != CNMS_OK) {
    fprintf (stderr, "cnms_ctx_new: %s\n", cnms_status_str (st));
    return 1;
  }
  rc = run_nms (ctx, 0);
  rc |= run_nms (ctx, 1);
  rc |= run_detect (ctx);
  cnms_ctx_free (ctx);
  return rc;
}
