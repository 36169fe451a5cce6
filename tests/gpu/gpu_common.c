/* Helpers of the gpu suite (see gpu_common.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"

int gpu_failures;

void
gpu_require_device (const char *test_name)
{
  if (cnms_cuda_device_count () > 0)
    return;
  printf ("%s: SKIP, no CUDA device\n", test_name);
  exit (GPU_SKIP);
}

long
gpu_env_int (const char *name, long def)
{
  const char *v = getenv (name);
  return v != NULL && *v != '\0' ? strtol (v, NULL, 0) : def;
}

cnms_ctx *
gpu_cuda_ctx (int argc, char **argv, const char **path)
{
  cnms_ctx *ctx = gpu_ctx_new (CNMS_BACKEND_CUDA);
  const int large = argc > 1 && strcmp (argv[1], "large") == 0;

  cnms_ctx_test_option (ctx, CNMS_TEST_FORCE_LARGE_PATH, large);
  *path = large ? "path=large-count (forced)" : "path=default";
  return ctx;
}

static float
pick_f (test_rng *r, const float *v, int n)
{
  return v[test_rng_int (r, 0, n)];
}

static int
pick_i (test_rng *r, const int *v, int n)
{
  return v[test_rng_int (r, 0, n)];
}

#define PICK_F(r, ...) \
  pick_f ((r), (const float[]) { __VA_ARGS__ }, \
      (int) (sizeof ((const float[]) { __VA_ARGS__ }) / sizeof (float)))
#define PICK_I(r, ...) \
  pick_i ((r), (const int[]) { __VA_ARGS__ }, \
      (int) (sizeof ((const int[]) { __VA_ARGS__ }) / sizeof (int)))

/* Number of fields per anchor (the tensor's row in model terms). */
static int
det_fields (const gpu_det_case *dc)
{
  switch (dc->layout) {
    case CNMS_LAYOUT_YOLOV5:
      return 5 + dc->c;
    case CNMS_LAYOUT_YOLOV8:
      return 4 + dc->c;
    case CNMS_LAYOUT_YOLOV8_OBB:
      return 5 + dc->c;
    default:
      return 6;
  }
}

/* Whether the layout strides fields by N ([1, fields, N]). */
static int
det_strided (const gpu_det_case *dc)
{
  return dc->layout == CNMS_LAYOUT_YOLOV8
      || dc->layout == CNMS_LAYOUT_YOLOV8_OBB;
}

/* Stores field f of anchor a, wherever the layout puts it. */
static void
det_put (gpu_det_case *dc, int a, int f, float v)
{
  size_t i;

  if (det_strided (dc))
    i = (size_t) f * dc->n + a;
  else
    i = (size_t) a * det_fields (dc) + f;
  if (dc->dtype == CNMS_DTYPE_FLOAT16)
    cnms_floats_to_halves (&v, 1, (uint16_t *) dc->data + i);
  else
    ((float *) dc->data)[i] = v;
}

/* A value that breaks things: NaN, infinities, signed zero, huge, tiny. */
static float
nasty_value (test_rng *r)
{
  static const float nasty[8] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f,
    1e30f, -1e30f, 1e-7f
  };

  return nasty[test_rng_int (r, 0, 8)];
}

static const char *det_modes[] = { "random", "ties", "clusters", "nasty",
  "overflow"
};

#define N_DET_MODES 5

/* Fills the tensor of dc from mode: box fields in model pixels, scores in
 * [0, 1], end2end class ids as floats. */
static void
det_fill (gpu_det_case *dc, test_rng *r, int mode)
{
  const float mw = (float) dc->p.model_width;
  const float mh = (float) dc->p.model_height;
  const int fields = det_fields (dc);
  const int e2e = dc->layout == CNMS_LAYOUT_END2END;
  const int first_cls = dc->layout == CNMS_LAYOUT_YOLOV5 ? 5 : 4;
  float centers[16][4];
  int n_centers = test_rng_int (r, 1, 16);
  float levels = PICK_F (r, 2.0f, 4.0f, 10.0f);
  int a, f, k;

  for (k = 0; k < n_centers; k++) {
    centers[k][0] = test_rng_float (r, 0, mw);
    centers[k][1] = test_rng_float (r, 0, mh);
    centers[k][2] = test_rng_float (r, 8, mw / 3);
    centers[k][3] = test_rng_float (r, 8, mh / 3);
  }
  for (a = 0; a < dc->n; a++) {
    float cx, cy, w, h;
    if (mode == 2) {
      const float *c = centers[test_rng_int (r, 0, n_centers)];
      cx = c[0] + test_rng_float (r, -4, 4);
      cy = c[1] + test_rng_float (r, -4, 4);
      w = c[2] + test_rng_float (r, -6, 6);
      h = c[3] + test_rng_float (r, -6, 6);
    } else {
      cx = test_rng_float (r, -20, mw + 20);
      cy = test_rng_float (r, -20, mh + 20);
      w = test_rng_float (r, 0.5f, mw / 4);
      h = test_rng_float (r, 0.5f, mh / 4);
    }
    if (mode == 1) {
      /* integer boxes: exact IoUs (0.5, ...) happen */
      cx = floorf (cx);
      cy = floorf (cy);
      w = floorf (w) + 1;
      h = floorf (h) + 1;
    }
    if (e2e) {
      det_put (dc, a, 0, cx - w / 2);
      det_put (dc, a, 1, cy - h / 2);
      det_put (dc, a, 2, cx + w / 2);
      det_put (dc, a, 3, cy + h / 2);
      det_put (dc, a, 5, test_rng_int (r, 0, 8) == 0 ?
          test_rng_float (r, -2, 100) : (float) test_rng_int (r, 0, 80));
    } else {
      det_put (dc, a, 0, cx);
      det_put (dc, a, 1, cy);
      det_put (dc, a, 2, w);
      det_put (dc, a, 3, h);
    }
    /* field 4: objectness (yolov5), first class (yolov8), score (end2end) */
    for (f = 4; f < (e2e ? 5 : fields); f++) {
      float v;
      v = test_rng_float (r, 0, 1);
      /* most class scores are small, as in a real head */
      if (f >= first_cls && !e2e && test_rng_int (r, 0, 4) != 0)
        v = v * v * v * 0.3f;
      if (mode == 1)
        v = roundf (v * levels) / levels;
      det_put (dc, a, f, v);
    }
    if (mode == 1 && a > 0 && test_rng_int (r, 0, 3) == 0) {
      /* an exact duplicate of an earlier anchor */
      int src = test_rng_int (r, 0, a);
      for (f = 0; f < fields; f++) {
        size_t si, di;
        size_t es = dc->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
        if (dc->layout == CNMS_LAYOUT_YOLOV8) {
          si = (size_t) f * dc->n + src;
          di = (size_t) f * dc->n + a;
        } else {
          si = (size_t) src * fields + f;
          di = (size_t) a * fields + f;
        }
        memcpy ((char *) dc->data + di * es, (char *) dc->data + si * es, es);
      }
    }
    if (mode == 3 && test_rng_int (r, 0, 3) == 0) {
      int n_bad = test_rng_int (r, 1, 4);
      for (k = 0; k < n_bad; k++) {
        f = test_rng_int (r, 0, fields);
        if (f == 2 || f == 3)
          det_put (dc, a, f, test_rng_int (r, 0, 2) ? -w : nasty_value (r));
        else
          det_put (dc, a, f, nasty_value (r));
      }
    }
  }
}

/* Per-class controls for a third of the cases, from a generator of their
 * own (the rest of the case is what it is without them): thresholds (a
 * tenth filter their class out), class-aware IoUs, caps, a keep-only
 * filter, a minimum box size. */
static void
det_class_params (gpu_det_case *dc, uint64_t seed, int idx)
{
  test_rng r;
  int n, i;

  test_rng_seed (&r, seed * 7919u + (uint64_t) idx * 104729u + 17u);
  if (test_rng_int (&r, 0, 3) != 0)
    return;
  n = dc->c > 0 ? test_rng_int (&r, 1, dc->c + 1) : test_rng_int (&r, 1, 100);
  dc->classes = calloc ((size_t) n, sizeof *dc->classes);
  if (dc->classes == NULL) {
    fprintf (stderr, "out of host memory\n");
    exit (1);
  }
  for (i = 0; i < n; i++) {
    cnms_class_params *c = &dc->classes[i];

    cnms_class_params_init (c, &dc->p);
    if (test_rng_int (&r, 0, 3) == 0)
      c->score_threshold = test_rng_int (&r, 0, 10) == 0 ? INFINITY :
          PICK_F (&r, 0.0f, 0.05f, 0.2f, 0.4f, 0.6f);
    if (test_rng_int (&r, 0, 3) == 0)
      c->iou = PICK_F (&r, 0.0f, 0.2f, 0.5f, 0.8f, 1.0f);
    if (test_rng_int (&r, 0, 4) == 0)
      c->max_detections = test_rng_int (&r, 1, 6);
  }
  dc->p.classes = dc->classes;
  dc->p.n_classes = n;
  dc->p.other_classes_filtered = test_rng_int (&r, 0, 4) == 0;
  if (test_rng_int (&r, 0, 3) == 0) {
    dc->p.min_width = (float) test_rng_int (&r, 0, 40);
    dc->p.min_height = (float) test_rng_int (&r, 0, 40);
  }
  /* the cap of the classes without one of their own */
  if (test_rng_int (&r, 0, 3) == 0)
    dc->p.max_detections_per_class = test_rng_int (&r, 1, 6);
}

/* The tensor of dc, zeroed, for its n, fields and dtype. */
static void
det_alloc (gpu_det_case *dc)
{
  const size_t es = dc->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;

  dc->size = (size_t) dc->n * det_fields (dc) * es;
  dc->data = calloc (1, dc->size);
  if (dc->data == NULL) {
    fprintf (stderr, "out of host memory\n");
    exit (1);
  }
}

void
gpu_det_case_make (gpu_det_case *dc, uint64_t seed, int idx)
{
  static const cnms_layout layouts[3] = { CNMS_LAYOUT_YOLOV5,
    CNMS_LAYOUT_YOLOV8, CNMS_LAYOUT_END2END
  };
  test_rng r;
  int mode = (idx / 6) % N_DET_MODES;

  memset (dc, 0, sizeof *dc);
  test_rng_seed (&r, seed ^ ((uint64_t) idx << 32));
  dc->seed = seed;
  dc->mode = det_modes[mode];
  dc->layout = layouts[idx % 3];
  dc->dtype = (idx / 3) % 2 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;

  if (idx % 47 == 5)
    dc->n = dc->layout == CNMS_LAYOUT_YOLOV5 ? 25200 : 8400;
  else if (idx % 11 == 3)
    dc->n = test_rng_int (&r, 2000, 9000);
  else
    dc->n = (int) expf (test_rng_float (&r, 0.0f, logf (2000.0f)));
  if (dc->n < 1)
    dc->n = 1;
  dc->c = dc->layout == CNMS_LAYOUT_END2END ? 0 :
      PICK_I (&r, 1, 2, 3, 80, 80, 80);

  cnms_params_init (&dc->p);
  dc->p.score_threshold = PICK_F (&r, 0.0f, 0.01f, 0.1f, 0.25f, 0.5f);
  dc->p.iou = PICK_F (&r, 0.3f, 0.45f, 0.5f, 0.7f, 0.0f, 1.0f);
  dc->p.max_detections = PICK_I (&r, 1, 3, 100, 300, 300, 100000);
  dc->p.max_candidates = PICK_I (&r, 1, 7, 100, 1000, 30000, 30000);
  dc->p.class_agnostic = test_rng_int (&r, 0, 3) == 0;
  dc->p.letterbox = test_rng_int (&r, 0, 3) != 0;
  if (test_rng_int (&r, 0, 4) == 0) {
    dc->p.model_width = 320;
    dc->p.model_height = 256;
  }
  dc->p.frame_width = PICK_I (&r, 640, 1920, 1280, 500, 333);
  dc->p.frame_height = PICK_I (&r, 640, 1080, 720, 375, 777);
  if (mode == 4) {
    /* far more candidates than max_candidates */
    dc->p.score_threshold = 0.0f;
    dc->p.max_candidates = test_rng_int (&r, 1, dc->n / 2 + 2);
  }
  det_class_params (dc, seed, idx);
  det_alloc (dc);
  det_fill (dc, &r, mode);
}

void
gpu_det_case_yolov8_frame (gpu_det_case *dc, uint64_t seed)
{
  test_rng r;

  memset (dc, 0, sizeof *dc);
  test_rng_seed (&r, seed);
  dc->seed = seed;
  dc->mode = "yolov8-frame";
  dc->layout = CNMS_LAYOUT_YOLOV8;
  dc->dtype = CNMS_DTYPE_FLOAT32;
  dc->n = 8400;
  dc->c = 80;
  cnms_params_init (&dc->p);
  dc->p.score_threshold = 0.1f;
  dc->p.frame_width = 1920;
  dc->p.frame_height = 1080;
  dc->size = (size_t) dc->n * 84 * 4;
  dc->data = calloc (1, dc->size);
  if (dc->data == NULL)
    exit (1);
  /* ties (mode 1) on integer boxes, then clusters over part of it */
  det_fill (dc, &r, 1);
}

static const char *obb_modes[] = { "random", "ties", "clusters", "nasty",
  "overflow", "axes"
};

#define N_OBB_MODES 6
#define QUARTER_TURN 1.57079632679489662f

/* An oriented box's angle: over ultralytics' range [-pi/4, 3 pi/4) and
 * beyond, a multiple of pi/2 (the float product, a neighbouring float, or
 * 1e-4 off), or large (up to 1e7: the reduction of cnms_sincos_d). axes:
 * only the multiples of pi/2 and their neighbours. */
static float
obb_angle (test_rng *r, int axes)
{
  const float k = (float) test_rng_int (r, -4, 5);

  switch (axes ? test_rng_int (r, 0, 3) : test_rng_int (r, 0, 10)) {
    case 0:
      return k * QUARTER_TURN;
    case 1:
      return nextafterf (k * QUARTER_TURN, test_rng_int (r, 0, 2) ?
          INFINITY : -INFINITY);
    case 2:
      return k * QUARTER_TURN + test_rng_float (r, -1e-4f, 1e-4f);
    case 3:
      return test_rng_int (r, 0, 2) ? test_rng_float (r, -1000.0f, 1000.0f)
          : test_rng_float (r, -1e7f, 1e7f);
    default:
      return test_rng_float (r, -0.5f * QUARTER_TURN, 1.5f * QUARTER_TURN);
  }
}

/* Fills the YOLOv8-OBB tensor of dc from mode (obb_modes): cx cy w h in
 * model pixels, class scores in [0, 1], the angle in radians. */
static void
obb_fill (gpu_det_case *dc, test_rng *r, int mode)
{
  const float mw = (float) dc->p.model_width;
  const float mh = (float) dc->p.model_height;
  const int fields = det_fields (dc), angle_f = 4 + dc->c;
  const size_t es = dc->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  float centers[16][5];
  const int n_centers = test_rng_int (r, 1, 16);
  const float levels = PICK_F (r, 2.0f, 4.0f, 10.0f);
  int a, f, k;

  for (k = 0; k < n_centers; k++) {
    centers[k][0] = test_rng_float (r, 0, mw);
    centers[k][1] = test_rng_float (r, 0, mh);
    centers[k][2] = test_rng_float (r, 8, mw / 3);
    centers[k][3] = test_rng_float (r, 8, mh / 3);
    centers[k][4] = obb_angle (r, 0);
  }
  for (a = 0; a < dc->n; a++) {
    float cx, cy, w, h, angle;
    if (mode == 2) {
      const float *c = centers[test_rng_int (r, 0, n_centers)];
      const int exact = test_rng_int (r, 0, 4) == 0;
      cx = exact ? c[0] : c[0] + test_rng_float (r, -3, 3);
      cy = exact ? c[1] : c[1] + test_rng_float (r, -3, 3);
      w = exact ? c[2] : c[2] + test_rng_float (r, -4, 4);
      h = exact ? c[3] : c[3] + test_rng_float (r, -4, 4);
      angle = exact ? c[4] : c[4] + test_rng_float (r, -0.05f, 0.05f);
    } else {
      cx = test_rng_float (r, -20, mw + 20);
      cy = test_rng_float (r, -20, mh + 20);
      w = test_rng_float (r, 0.5f, mw / 4);
      /* a tenth are thin: long sides nearly touching */
      h = test_rng_int (r, 0, 10) == 0 ? test_rng_float (r, 0.5f, 3.0f) :
          test_rng_float (r, 0.5f, mh / 4);
      angle = obb_angle (r, mode == 5);
    }
    if (mode == 1) {
      /* integer boxes at quarter-radian or right angles: ties of IoU */
      cx = floorf (cx);
      cy = floorf (cy);
      w = floorf (w) + 1;
      h = floorf (h) + 1;
      angle = test_rng_int (r, 0, 2) ? (float) test_rng_int (r, -4, 5) *
          QUARTER_TURN : 0.25f * (float) test_rng_int (r, -8, 9);
    }
    det_put (dc, a, 0, cx);
    det_put (dc, a, 1, cy);
    det_put (dc, a, 2, w);
    det_put (dc, a, 3, h);
    det_put (dc, a, angle_f, angle);
    for (f = 4; f < angle_f; f++) {
      float v = test_rng_float (r, 0, 1);
      if (test_rng_int (r, 0, 4) != 0)
        v = v * v * v * 0.3f;
      if (mode == 1)
        v = roundf (v * levels) / levels;
      det_put (dc, a, f, v);
    }
    if (mode == 1 && a > 0 && test_rng_int (r, 0, 3) == 0) {
      /* an exact duplicate of an earlier anchor */
      const int src = test_rng_int (r, 0, a);
      for (f = 0; f < fields; f++)
        memcpy ((char *) dc->data + ((size_t) f * dc->n + a) * es,
            (char *) dc->data + ((size_t) f * dc->n + src) * es, es);
    }
    if (mode == 3 && test_rng_int (r, 0, 3) == 0) {
      const int n_bad = test_rng_int (r, 1, 4);
      for (k = 0; k < n_bad; k++) {
        const int which = test_rng_int (r, 0, 7);
        if (which < 4)
          det_put (dc, a, which, nasty_value (r));
        else if (which == 4)
          det_put (dc, a, angle_f, nasty_value (r));
        else if (which == 5)
          det_put (dc, a, test_rng_int (r, 2, 4), test_rng_int (r, 0, 2) ?
              -w : 0.0f);
        else
          det_put (dc, a, 4 + test_rng_int (r, 0, dc->c), nasty_value (r));
      }
    }
  }
}

/* The OBB family's parameters, shared by its cases and its frame. The
 * map cycles with kind: letterbox, a stretch of unequal gains (the sides
 * map to non-perpendicular vectors), a stretch of equal gains. */
static void
obb_params (gpu_det_case *dc, test_rng *r, int kind)
{
  cnms_params_init (&dc->p);
  dc->p.score_threshold = PICK_F (r, 0.0f, 0.01f, 0.1f, 0.25f, 0.5f);
  dc->p.iou = PICK_F (r, 0.3f, 0.45f, 0.5f, 0.7f, 0.0f, 1.0f);
  dc->p.max_detections = PICK_I (r, 1, 3, 100, 300, 300, 100000);
  dc->p.max_candidates = PICK_I (r, 1, 7, 100, 1000, 30000, 30000);
  dc->p.class_agnostic = test_rng_int (r, 0, 3) == 0;
  dc->p.model_width = dc->p.model_height = PICK_I (r, 640, 1024, 1024);
  if (test_rng_int (r, 0, 5) == 0) {
    dc->p.model_width = 320;
    dc->p.model_height = 256;
  }
  switch (kind % 3) {
    case 0:
      dc->p.letterbox = 1;
      dc->p.frame_width = PICK_I (r, 640, 1920, 1280, 500, 333);
      dc->p.frame_height = PICK_I (r, 640, 1080, 720, 375, 777);
      break;
    case 1:
      dc->p.letterbox = 0;
      dc->p.frame_width = PICK_I (r, 1920, 1280, 500, 333);
      dc->p.frame_height = PICK_I (r, 1080, 720, 375, 777);
      break;
    default:
      dc->p.letterbox = 0;
      dc->p.frame_width = dc->p.model_width * PICK_I (r, 1, 2, 3);
      dc->p.frame_height = dc->p.frame_width / dc->p.model_width *
          dc->p.model_height;
      break;
  }
}

void
gpu_det_case_make_obb (gpu_det_case *dc, uint64_t seed, int idx)
{
  test_rng r;
  const int mode = (idx / 4) % N_OBB_MODES;

  memset (dc, 0, sizeof *dc);
  test_rng_seed (&r, seed ^ ((uint64_t) idx << 32) ^ 0x0bb0bbull);
  dc->seed = seed;
  dc->mode = obb_modes[mode];
  dc->layout = CNMS_LAYOUT_YOLOV8_OBB;
  dc->dtype = idx % 2 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  if (idx % 37 == 5)
    dc->n = 21504;
  else if (idx % 11 == 3)
    dc->n = test_rng_int (&r, 2000, 9000);
  else
    dc->n = (int) expf (test_rng_float (&r, 0.0f, logf (2000.0f)));
  if (dc->n < 1)
    dc->n = 1;
  dc->c = PICK_I (&r, 1, 2, 3, 15, 15);
  obb_params (dc, &r, idx / 2);
  if (mode == 4) {
    dc->p.score_threshold = 0.0f;
    dc->p.max_candidates = test_rng_int (&r, 1, dc->n / 2 + 2);
  }
  det_class_params (dc, seed ^ 0x0bbull, idx);
  det_alloc (dc);
  obb_fill (dc, &r, mode);
}

void
gpu_det_case_obb_frame (gpu_det_case *dc, uint64_t seed)
{
  test_rng r;

  memset (dc, 0, sizeof *dc);
  test_rng_seed (&r, seed);
  dc->seed = seed;
  dc->mode = "obb-frame";
  dc->layout = CNMS_LAYOUT_YOLOV8_OBB;
  dc->dtype = CNMS_DTYPE_FLOAT32;
  dc->n = 21504;
  dc->c = 15;
  cnms_params_init (&dc->p);
  dc->p.score_threshold = 0.25f;
  dc->p.model_width = dc->p.model_height = 1024;
  dc->p.frame_width = 1920;
  dc->p.frame_height = 1080;
  det_alloc (dc);
  /* ties on integer boxes, duplicates among them */
  obb_fill (dc, &r, 1);
}

void
gpu_det_case_tensor (const gpu_det_case *dc, cnms_tensor *t)
{
  memset (t, 0, sizeof *t);
  t->data = dc->data;
  t->size = dc->size;
  t->dtype = dc->dtype;
  t->n_dims = 3;
  t->dims[0] = 1;
  if (det_strided (dc)) {
    t->dims[1] = det_fields (dc);
    t->dims[2] = dc->n;
  } else {
    t->dims[1] = dc->n;
    t->dims[2] = det_fields (dc);
  }
}

void
gpu_det_case_free (gpu_det_case *dc)
{
  free (dc->data);
  free (dc->classes);
  dc->data = NULL;
  dc->classes = NULL;
  dc->p.classes = NULL;
  dc->p.n_classes = 0;
}

void
gpu_det_case_print (FILE *f, const gpu_det_case *dc)
{
  fprintf (f, "  seed=%llu mode=%s layout=%s dtype=%s N=%d C=%d thr=%g "
      "iou=%g max_det=%d max_cand=%d agnostic=%d letterbox=%d "
      "model=%dx%d frame=%dx%d\n", (unsigned long long) dc->seed, dc->mode,
      cnms_layout_name (dc->layout),
      dc->dtype == CNMS_DTYPE_FLOAT16 ? "f16" : "f32", dc->n, dc->c,
      (double) dc->p.score_threshold, (double) dc->p.iou,
      dc->p.max_detections, dc->p.max_candidates, dc->p.class_agnostic,
      dc->p.letterbox, dc->p.model_width, dc->p.model_height,
      dc->p.frame_width, dc->p.frame_height);
  if (dc->p.n_classes > 0 || dc->p.min_width > 0 || dc->p.min_height > 0)
    fprintf (f, "  per-class entries=%d others_filtered=%d min=%gx%g "
        "max/class=%d\n", dc->p.n_classes, dc->p.other_classes_filtered,
        (double) dc->p.min_width, (double) dc->p.min_height,
        dc->p.max_detections_per_class);
}

int
gpu_det_case_capped (const gpu_det_case *dc)
{
  int i;

  if (dc->p.max_detections_per_class > 0)
    return 1;
  for (i = 0; i < dc->p.n_classes; i++)
    if (dc->p.classes[i].max_detections > 0)
      return 1;
  return 0;
}

static const char *nms_modes[] = { "random", "ties", "clusters", "nasty",
  "integer"
};

#define N_NMS_MODES 5

void
gpu_nms_case_make (gpu_nms_case *nc, uint64_t seed, int idx)
{
  test_rng r;
  int mode = idx % N_NMS_MODES;
  int cls_kind = (idx / N_NMS_MODES) % 4;
  float span, size, levels;
  float centers[32][4];
  int n_centers, i, k;

  memset (nc, 0, sizeof *nc);
  test_rng_seed (&r, seed ^ ((uint64_t) idx << 32) ^ 0x5eedull);
  nc->seed = seed;
  nc->mode = nms_modes[mode];
  if (idx % 50 == 7)
    nc->n = 32768;
  else if (idx % 13 == 2)
    nc->n = test_rng_int (&r, 4096, 16385);
  else
    nc->n = (int) expf (test_rng_float (&r, 0.0f, logf (4096.0f)));
  if (nc->n < 1)
    nc->n = 1;
  nc->iou = PICK_F (&r, 0.3f, 0.5f, 0.7f, 0.5f, 0.0f, 1.0f);
  nc->max_det = PICK_I (&r, 0, 0, -1, 1, 10, 300);
  nc->agnostic = cls_kind != 0 && test_rng_int (&r, 0, 4) == 0;

  nc->boxes = malloc ((size_t) nc->n * 4 * sizeof (float));
  nc->scores = malloc ((size_t) nc->n * sizeof (float));
  if (cls_kind != 0)
    nc->classes = malloc ((size_t) nc->n * sizeof (int32_t));
  if (nc->boxes == NULL || nc->scores == NULL
      || (cls_kind != 0 && nc->classes == NULL)) {
    fprintf (stderr, "out of host memory\n");
    exit (1);
  }

  /* big cases stay dense so that the CPU reference keeps few boxes */
  span = nc->n > 4096 ? PICK_F (&r, 300.0f, 1000.0f) :
      PICK_F (&r, 64.0f, 640.0f, 1920.0f);
  size = span * PICK_F (&r, 0.05f, 0.1f, 0.3f);
  levels = PICK_F (&r, 2.0f, 5.0f, 10.0f, 100.0f);
  n_centers = test_rng_int (&r, 1, 32);
  for (k = 0; k < n_centers; k++) {
    centers[k][0] = test_rng_float (&r, 0, span);
    centers[k][1] = test_rng_float (&r, 0, span);
    centers[k][2] = test_rng_float (&r, 1, size);
    centers[k][3] = test_rng_float (&r, 1, size);
  }
  for (i = 0; i < nc->n; i++) {
    float *b = nc->boxes + 4 * (size_t) i;
    float cx, cy, w, h, s;
    if (mode == 2) {
      const float *c = centers[test_rng_int (&r, 0, n_centers)];
      cx = c[0] + test_rng_float (&r, -2, 2);
      cy = c[1] + test_rng_float (&r, -2, 2);
      w = c[2] + test_rng_float (&r, -2, 2);
      h = c[3] + test_rng_float (&r, -2, 2);
    } else {
      cx = test_rng_float (&r, 0, span);
      cy = test_rng_float (&r, 0, span);
      w = test_rng_float (&r, 0, size);
      h = test_rng_float (&r, 0, size);
    }
    b[0] = cx - w / 2;
    b[1] = cy - h / 2;
    b[2] = cx + w / 2;
    b[3] = cy + h / 2;
    if (mode == 4 || mode == 1) {
      for (k = 0; k < 4; k++)
        b[k] = roundf (b[k]);
    }
    s = test_rng_float (&r, 0, 1);
    if (mode == 1 || (mode == 4 && i % 2))
      s = roundf (s * levels) / levels;
    nc->scores[i] = s;
    if (mode == 1 && i > 0 && test_rng_int (&r, 0, 3) == 0) {
      int src = test_rng_int (&r, 0, i);
      memcpy (b, nc->boxes + 4 * (size_t) src, 4 * sizeof (float));
      if (test_rng_int (&r, 0, 2))
        nc->scores[i] = nc->scores[src];
    }
    if (mode == 3 && test_rng_int (&r, 0, 5) == 0) {
      k = test_rng_int (&r, 0, 6);
      if (k < 4)
        b[k] = nasty_value (&r);
      else if (k == 4)
        nc->scores[i] = nasty_value (&r);
      else
        nc->scores[i] = -test_rng_float (&r, 0, 1);
    }
    if (nc->classes != NULL) {
      switch (cls_kind) {
        case 1:
          nc->classes[i] = test_rng_int (&r, 0, 80);
          break;
        case 2:
          nc->classes[i] = test_rng_int (&r, 0, 3);
          break;
        default:
          /* arbitrary ids, negative and large included */
          nc->classes[i] = (int32_t) (test_rng_next (&r) % 7) * 0x12345678
              - 0x30000000;
          break;
      }
    }
  }
}

static const char *rotated_modes[] = { "random", "ties", "clusters", "nasty",
  "integer", "axes"
};

#define N_ROTATED_MODES 6

void
gpu_nms_case_make_rotated (gpu_nms_case *nc, uint64_t seed, int idx)
{
  test_rng r;
  const int mode = idx % N_ROTATED_MODES;
  const int cls_kind = (idx / N_ROTATED_MODES) % 4;
  float span, size, levels;
  float centers[32][5];
  int n_centers, i, k;

  memset (nc, 0, sizeof *nc);
  test_rng_seed (&r, seed ^ ((uint64_t) idx << 32) ^ 0x707a7edull);
  nc->seed = seed;
  nc->mode = rotated_modes[mode];
  nc->rotated = 1;
  if (idx % 50 == 7)
    nc->n = 8192;
  else if (idx % 13 == 2)
    nc->n = test_rng_int (&r, 2048, 8192);
  else
    nc->n = (int) expf (test_rng_float (&r, 0.0f, logf (2048.0f)));
  if (nc->n < 1)
    nc->n = 1;
  nc->iou = PICK_F (&r, 0.1f, 0.3f, 0.5f, 0.7f, 0.5f, 0.0f, 1.0f);
  nc->max_det = PICK_I (&r, 0, 0, -1, 1, 10, 300);
  nc->agnostic = cls_kind != 0 && test_rng_int (&r, 0, 4) == 0;

  nc->boxes = malloc ((size_t) nc->n * 5 * sizeof (float));
  nc->scores = malloc ((size_t) nc->n * sizeof (float));
  if (cls_kind != 0)
    nc->classes = malloc ((size_t) nc->n * sizeof (int32_t));
  if (nc->boxes == NULL || nc->scores == NULL
      || (cls_kind != 0 && nc->classes == NULL)) {
    fprintf (stderr, "out of host memory\n");
    exit (1);
  }

  span = nc->n > 2048 ? PICK_F (&r, 300.0f, 1000.0f) :
      PICK_F (&r, 64.0f, 640.0f, 1920.0f);
  size = span * PICK_F (&r, 0.05f, 0.1f, 0.3f);
  levels = PICK_F (&r, 2.0f, 5.0f, 10.0f, 100.0f);
  n_centers = test_rng_int (&r, 1, 32);
  for (k = 0; k < n_centers; k++) {
    centers[k][0] = test_rng_float (&r, 0, span);
    centers[k][1] = test_rng_float (&r, 0, span);
    centers[k][2] = test_rng_float (&r, 1, size);
    centers[k][3] = test_rng_float (&r, 1, size);
    centers[k][4] = obb_angle (&r, mode == 5);
  }
  for (i = 0; i < nc->n; i++) {
    float *b = nc->boxes + 5 * (size_t) i;
    float s;
    if (mode == 2) {
      const float *c = centers[test_rng_int (&r, 0, n_centers)];
      b[0] = c[0] + test_rng_float (&r, -2, 2);
      b[1] = c[1] + test_rng_float (&r, -2, 2);
      b[2] = c[2] + test_rng_float (&r, -2, 2);
      b[3] = c[3] + test_rng_float (&r, -2, 2);
      b[4] = c[4] + test_rng_float (&r, -0.05f, 0.05f);
    } else {
      b[0] = test_rng_float (&r, 0, span);
      b[1] = test_rng_float (&r, 0, span);
      b[2] = test_rng_float (&r, 0, size);
      b[3] = test_rng_float (&r, 0, size);
      b[4] = obb_angle (&r, mode == 5);
    }
    if (mode == 4 || mode == 1) {
      for (k = 0; k < 4; k++)
        b[k] = roundf (b[k]);
      b[4] = (float) test_rng_int (&r, -4, 5) * 0.5f * QUARTER_TURN;
    }
    s = test_rng_float (&r, 0, 1);
    if (mode == 1 || (mode == 4 && i % 2))
      s = roundf (s * levels) / levels;
    nc->scores[i] = s;
    if (mode == 1 && i > 0 && test_rng_int (&r, 0, 3) == 0) {
      /* identical boxes, half of them with the same score */
      const int src = test_rng_int (&r, 0, i);
      memcpy (b, nc->boxes + 5 * (size_t) src, 5 * sizeof (float));
      if (test_rng_int (&r, 0, 2))
        nc->scores[i] = nc->scores[src];
    }
    if (mode == 3 && test_rng_int (&r, 0, 4) == 0) {
      k = test_rng_int (&r, 0, 9);
      if (k < 5)
        b[k] = nasty_value (&r);
      else if (k == 5)
        nc->scores[i] = nasty_value (&r);
      else if (k == 6)
        /* w or h not above 0: kept where its score puts it, overlaps
         * nothing */
        b[test_rng_int (&r, 2, 4)] = test_rng_int (&r, 0, 2) ? 0.0f :
            -b[2] - 1.0f;
      else if (k == 7)
        /* tiny */
        b[2] = b[3] = PICK_F (&r, 1e-6f, 1e-20f, 1e-38f);
      else
        /* huge: its area overflows to inf, or nearly */
        b[test_rng_int (&r, 2, 4)] = PICK_F (&r, 1e6f, 1e19f, 1e30f, 3e38f);
    }
    if (nc->classes != NULL) {
      switch (cls_kind) {
        case 1:
          nc->classes[i] = test_rng_int (&r, 0, 15);
          break;
        case 2:
          nc->classes[i] = test_rng_int (&r, 0, 3);
          break;
        default:
          nc->classes[i] = (int32_t) (test_rng_next (&r) % 7) * 0x12345678
              - 0x30000000;
          break;
      }
    }
  }
}

void
gpu_nms_case_free (gpu_nms_case *nc)
{
  free (nc->boxes);
  free (nc->scores);
  free (nc->classes);
  memset (nc, 0, sizeof *nc);
}

void
gpu_nms_case_print (FILE *f, const gpu_nms_case *nc)
{
  fprintf (f, "  seed=%llu %s mode=%s n=%d classes=%s agnostic=%d iou=%g "
      "max_det=%d\n", (unsigned long long) nc->seed,
      nc->rotated ? "rotated" : "boxes", nc->mode, nc->n,
      nc->classes ? "yes" : "no", nc->agnostic, (double) nc->iou,
      nc->max_det);
}

void
gpu_run_detect (cnms_ctx *ctx, const gpu_det_case *dc, gpu_result *r)
{
  cnms_tensor t;

  gpu_det_case_tensor (dc, &t);
  gpu_run_tensor (ctx, &t, dc->layout, &dc->p, r);
}

void
gpu_run_tensor (cnms_ctx *ctx, const cnms_tensor *t, cnms_layout layout,
    const cnms_params *p, gpu_result *r)
{
  const cnms_det *dets = NULL;
  int n = 0;

  memset (r, 0, sizeof *r);
  r->st = cnms_detect (ctx, t, NULL, layout, p, &dets, &n);
  snprintf (r->error, sizeof r->error, "%s", cnms_ctx_error (ctx));
  if (r->st != CNMS_OK)
    return;
  r->n = n;
  r->report = *cnms_ctx_report (ctx);
  r->n_candidates = r->report.candidates;
  r->dets = malloc ((size_t) (n > 0 ? n : 1) * sizeof (cnms_det));
  if (r->dets == NULL)
    exit (1);
  memcpy (r->dets, dets, (size_t) n * sizeof (cnms_det));
}

void
gpu_run_detect_device (cnms_ctx *ctx, const gpu_det_case *dc, gpu_result *r)
{
  cnms_tensor t;
  void *d = NULL;

  /* a copy from pageable memory may return before its DMA is done: the
   * device synchronisation orders it before the context's own stream */
  if (cudaMalloc (&d, dc->size) != cudaSuccess
      || cudaMemcpy (d, dc->data, dc->size, cudaMemcpyHostToDevice)
      != cudaSuccess || cudaDeviceSynchronize () != cudaSuccess) {
    memset (r, 0, sizeof *r);
    r->st = CNMS_ERR_CUDA;
    snprintf (r->error, sizeof r->error, "cannot stage the device tensor");
    if (d != NULL)
      cudaFree (d);
    return;
  }
  gpu_det_case_tensor (dc, &t);
  t.data = d;
  t.on_device = 1;
  gpu_run_tensor (ctx, &t, dc->layout, &dc->p, r);
  cudaFree (d);
}

void
gpu_run_nms (cnms_ctx *ctx, const gpu_nms_case *nc, gpu_result *r)
{
  memset (r, 0, sizeof *r);
  r->keep = malloc ((size_t) nc->n * sizeof (int64_t));
  if (r->keep == NULL)
    exit (1);
  r->st = (nc->rotated ? cnms_nms_rotated : cnms_nms) (ctx, nc->boxes,
      nc->scores, nc->classes, nc->n, nc->iou, nc->agnostic, nc->max_det,
      r->keep, &r->n);
  snprintf (r->error, sizeof r->error, "%s", cnms_ctx_error (ctx));
}

void
gpu_result_free (gpu_result *r)
{
  free (r->dets);
  free (r->keep);
  r->dets = NULL;
  r->keep = NULL;
}

int
gpu_result_equal (const gpu_result *a, const gpu_result *b, char *why,
    size_t why_size)
{
  int i;

  if (a->st != b->st) {
    snprintf (why, why_size, "status %s vs %s (%s | %s)",
        cnms_status_str (a->st), cnms_status_str (b->st), a->error,
        b->error);
    return 0;
  }
  if (a->n != b->n) {
    snprintf (why, why_size, "%d vs %d results", a->n, b->n);
    return 0;
  }
  if (a->n_candidates != b->n_candidates) {
    snprintf (why, why_size, "%d vs %d candidates", a->n_candidates,
        b->n_candidates);
    return 0;
  }
  if (a->report.lanes_without_points != b->report.lanes_without_points) {
    snprintf (why, why_size, "%d vs %d lanes without points",
        a->report.lanes_without_points, b->report.lanes_without_points);
    return 0;
  }
  /* the whole report, first values bit for bit */
  if (memcmp (&a->report, &b->report, sizeof a->report) != 0) {
    snprintf (why, why_size, "report: non-finite scores %d/%d, invalid "
        "classes %d/%d (first %a/%a), fractional %d/%d (first %a/%a), "
        "dropped %d/%d, kept %d/%d", a->report.nonfinite_scores,
        b->report.nonfinite_scores, a->report.invalid_classes,
        b->report.invalid_classes, (double) a->report.first_invalid_class,
        (double) b->report.first_invalid_class,
        a->report.fractional_classes, b->report.fractional_classes,
        (double) a->report.first_fractional_class,
        (double) b->report.first_fractional_class,
        a->report.candidates_dropped, b->report.candidates_dropped,
        a->report.kept, b->report.kept);
    return 0;
  }
  for (i = 0; i < a->n; i++) {
    if (a->dets != NULL && b->dets != NULL
        && memcmp (&a->dets[i], &b->dets[i], sizeof (cnms_det)) != 0) {
      const cnms_det *x = &a->dets[i], *y = &b->dets[i];
      snprintf (why, why_size, "record %d: score %a/%a box %a,%a,%a,%a / "
          "%a,%a,%a,%a class %d/%d anchor %d/%d angle %a/%a", i,
          (double) x->score, (double) y->score, (double) x->x1,
          (double) x->y1, (double) x->x2, (double) x->y2, (double) y->x1,
          (double) y->y1, (double) y->x2, (double) y->y2, x->class_id,
          y->class_id, x->anchor, y->anchor, (double) x->angle,
          (double) y->angle);
      return 0;
    }
    if (a->keep != NULL && b->keep != NULL && a->keep[i] != b->keep[i]) {
      snprintf (why, why_size, "keep[%d]: %lld vs %lld", i,
          (long long) a->keep[i], (long long) b->keep[i]);
      return 0;
    }
  }
  return 1;
}

int
gpu_parity_mismatch (const gpu_result *a, const gpu_result *b, int idx,
    int *bad)
{
  char why[512];

  if (a->st == CNMS_OK && gpu_result_equal (a, b, why, sizeof why))
    return 0;
  if (a->st != CNMS_OK)
    snprintf (why, sizeof why, "CPU backend failed: %s", a->error);
  if ((*bad)++ >= 10)
    return 0;
  printf ("MISMATCH case %d: %s\n", idx, why);
  return 1;
}

cnms_ctx *
gpu_ctx_new (cnms_backend backend)
{
  cnms_ctx *ctx = NULL;
  cnms_status st = cnms_ctx_new (backend, -1, &ctx);

  if (st != CNMS_OK) {
    fprintf (stderr, "FAIL: cnms_ctx_new(%s): %s\n",
        backend == CNMS_BACKEND_CUDA ? "cuda" : "cpu",
        cnms_status_str (st));
    exit (1);
  }
  /* the paths not yet proven on a GPU take part: this suite proves them */
  cnms_ctx_test_option (ctx, CNMS_TEST_CUDA_UNPROVEN, 1);
  return ctx;
}

/* ---------------------------------------------------------------- lanes */

/* A value of v, now and then replaced by NaN or an infinity (1 in odd). */
static float
lane_spoil (test_rng *r, float v, int odd)
{
  const int k = test_rng_int (r, 0, odd);

  return k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY : v;
}

void
gpu_lane_case_make (gpu_lane_case *lc, uint64_t seed, int idx)
{
  gpu_lane_case_make_n (lc, seed, idx, 0);
}

void
gpu_lane_case_make_n (gpu_lane_case *lc, uint64_t seed, int idx, int n)
{
  static const int rows[] = { 72, 2, 3, 10 };
  static const float dists[] = { 0.0f, 5.0f, 15.0f, 30.0f, 50.0f, 1e4f };
  static const int caps[] = { 0, 0, 0, 5, 50 };
  static const int sizes[] = { 1, 2, 7, 40, 130, 500, 1000 };
  const int s = rows[idx % 4];
  const size_t stride = 5 + (size_t) s;
  test_rng r;
  int clusters, i, j, odd, tie, integer;
  float noise;

  test_rng_seed (&r, seed * 7919u + (uint64_t) idx * 104729u + 11u);
  memset (lc, 0, sizeof *lc);
  lc->seed = seed;
  lc->s = s;
  lc->n = sizes[test_rng_int (&r, 0, 7)];
  if (test_rng_int (&r, 0, 4) == 0)
    lc->n = test_rng_int (&r, 1, 1001);
  if (n > 0)
    lc->n = n;
  lc->distance = dists[test_rng_int (&r, 0, 6)];
  lc->max_det = caps[test_rng_int (&r, 0, 5)];
  lc->props = malloc ((size_t) lc->n * stride * sizeof (float));
  lc->scores = malloc ((size_t) lc->n * sizeof (float));
  if (lc->props == NULL || lc->scores == NULL)
    exit (1);
  clusters = 1 + lc->n / test_rng_int (&r, 3, 40);
  noise = (float[]) { 0.0f, 0.5f, 3.0f, 20.0f } [test_rng_int (&r, 0, 4)];
  odd = test_rng_int (&r, 0, 3) == 0 ? 40 : 100000;
  tie = test_rng_int (&r, 0, 3) == 0;
  integer = test_rng_int (&r, 0, 3) == 0;
  for (i = 0; i < lc->n; i++) {
    float *p = lc->props + (size_t) i * stride;
    const int c = test_rng_int (&r, 0, clusters);
    test_rng cr;
    float x0, slope, sy, len;

    /* the cluster's curve: the same draws for every lane of it */
    test_rng_seed (&cr, seed + (uint64_t) c * 31337u + (uint64_t) idx);
    x0 = test_rng_float (&cr, -40.0f, 680.0f);
    slope = test_rng_float (&cr, -12.0f, 12.0f) * 72.0f / (float) s;
    p[0] = lane_spoil (&r, test_rng_float (&r, -4.0f, 4.0f), odd);
    p[1] = lane_spoil (&r, test_rng_float (&r, -4.0f, 4.0f), odd);
    if (tie) {
      p[0] = floorf (p[0] * 2.0f) / 2.0f;
      p[1] = floorf (p[1] * 2.0f) / 2.0f;
    }
    /* start_y: on a row, anywhere, or past either end */
    switch (test_rng_int (&r, 0, 4)) {
      case 0:
        sy = (float) test_rng_int (&r, 0, s) / (float) (s - 1);
        break;
      case 1:
        sy = test_rng_float (&r, -0.2f, 1.2f);
        break;
      default:
        sy = test_rng_float (&r, 0.0f, 1.0f);
        break;
    }
    len = test_rng_int (&r, 0, 2) ? (float) test_rng_int (&r, 0, s + 3) :
        test_rng_float (&r, -2.0f, (float) s + 4.0f);
    p[2] = lane_spoil (&r, sy, odd);
    p[3] = test_rng_float (&r, 0.0f, 640.0f);
    p[4] = lane_spoil (&r, len, odd);
    for (j = 0; j < s; j++) {
      float x = x0 + slope * (float) j + test_rng_float (&r, -noise, noise);
      if (integer)
        x = floorf (x);
      p[5 + j] = lane_spoil (&r, x, odd * 4);
    }
    /* a duplicate of an earlier lane now and then */
    if (i > 0 && test_rng_int (&r, 0, 10) == 0)
      memcpy (p + 2, lc->props + (size_t) test_rng_int (&r, 0, i) * stride
          + 2, (stride - 2) * sizeof (float));
    lc->scores[i] = tie ? (float) test_rng_int (&r, 0, 8) / 8.0f :
        lane_spoil (&r, test_rng_float (&r, 0.0f, 1.0f), odd);
  }
}

void
gpu_lane_case_free (gpu_lane_case *lc)
{
  free (lc->props);
  free (lc->scores);
  lc->props = NULL;
  lc->scores = NULL;
}

void
gpu_lane_case_print (FILE *f, const gpu_lane_case *lc)
{
  fprintf (f, "  lane case: seed %llu, S %d, n %d, distance %g, "
      "max_detections %d\n", (unsigned long long) lc->seed, lc->s, lc->n,
      (double) lc->distance, lc->max_det);
}

void
gpu_run_nms_lanes (cnms_ctx *ctx, const gpu_lane_case *lc, gpu_result *r)
{
  memset (r, 0, sizeof *r);
  r->keep = malloc ((size_t) (lc->n > 0 ? lc->n : 1) * sizeof (int64_t));
  if (r->keep == NULL)
    exit (1);
  r->st = cnms_nms_lanes (ctx, lc->props, lc->s, lc->scores, lc->n,
      lc->distance, lc->max_det, r->keep, &r->n);
  snprintf (r->error, sizeof r->error, "%s", cnms_ctx_error (ctx));
}

void
gpu_run_detect_lanes (cnms_ctx *ctx, const gpu_lane_case *lc,
    cnms_dtype dtype, int on_device, const cnms_params *p, gpu_result *r,
    float **pts)
{
  const size_t count = (size_t) lc->n * (5 + (size_t) lc->s);
  const size_t size = count * (dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4);
  const size_t lane_bytes = (size_t) lc->s * 2 * sizeof (float);
  const cnms_det *dets = NULL;
  cnms_payloads pl;
  cnms_params lp;
  cnms_tensor t;
  void *host, *d = NULL;
  int n = 0, k;

  memset (r, 0, sizeof *r);
  *pts = NULL;
  host = malloc (size);
  if (host == NULL)
    exit (1);
  if (dtype == CNMS_DTYPE_FLOAT16)
    cnms_floats_to_halves (lc->props, count, host);
  else
    memcpy (host, lc->props, size);
  memset (&t, 0, sizeof t);
  t.data = host;
  t.size = size;
  t.dtype = dtype;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = lc->n;
  t.dims[2] = 5 + lc->s;
  if (on_device) {
    if (cudaMalloc (&d, size) != cudaSuccess
        || cudaMemcpy (d, host, size, cudaMemcpyHostToDevice) != cudaSuccess
        || cudaDeviceSynchronize () != cudaSuccess) {
      r->st = CNMS_ERR_CUDA;
      snprintf (r->error, sizeof r->error, "cannot stage the device tensor");
      if (d != NULL)
        cudaFree (d);
      free (host);
      return;
    }
    t.data = d;
    t.on_device = 1;
  }
  lp = *p;
  lp.lane_distance = lc->distance;
  r->st = cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &lp, &dets, &n);
  snprintf (r->error, sizeof r->error, "%s", cnms_ctx_error (ctx));
  if (r->st == CNMS_OK) {
    r->n = n;
    r->report = *cnms_ctx_report (ctx);
    r->n_candidates = r->report.candidates;
    r->dets = malloc ((size_t) (n > 0 ? n : 1) * sizeof (cnms_det));
    *pts = malloc (((size_t) n + 1) * lane_bytes);
    if (r->dets == NULL || *pts == NULL)
      exit (1);
    memcpy (r->dets, dets, (size_t) n * sizeof (cnms_det));
    cnms_ctx_payload (ctx, &pl);
    if (pl.n != n || (n > 0 && (pl.head != CNMS_HEAD_LANE
                || pl.records == NULL || pl.data == NULL))) {
      r->st = CNMS_ERR_INVALID_ARG;
      snprintf (r->error, sizeof r->error, "lane payload: head %d, %d "
          "records for %d lanes", (int) pl.head, pl.n, n);
    }
    for (k = 0; r->st == CNMS_OK && k < n; k++) {
      const cnms_payload *rec = &pl.records[k];

      if (rec->n_points != lc->s || rec->point_dims != 2
          || rec->offset > pl.size || pl.size - rec->offset < lane_bytes) {
        r->st = CNMS_ERR_INVALID_ARG;
        snprintf (r->error, sizeof r->error, "lane %d's points: %d x %d "
            "at %zu of %zu bytes", k, rec->n_points, rec->point_dims,
            rec->offset, pl.size);
      } else {
        memcpy (*pts + (size_t) k * lc->s * 2, pl.data + rec->offset,
            lane_bytes);
      }
    }
  }
  if (d != NULL)
    cudaFree (d);
  free (host);
}
