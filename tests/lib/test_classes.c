/* Per-class controls (cnms_params.classes, other_classes_filtered,
 * min_width / min_height) on hand-made tensors whose every anchor's fate
 * is known, with and without the AVX paths: each control alone and
 * together, the class-agnostic rule (per-class IoUs do not apply there),
 * caps in kept order after NMS, end2end, and the refused values.
 *
 * The YOLOv8 scene, model = frame = 640x640 (the map is the identity):
 *   a0 class 0 0.90 [100,100,200,200]
 *   a1 class 0 0.80 [130,100,230,200]  IoU with a0 7000/13000 = 0.538
 *   a2 class 0 0.35 [400,100,500,200]  far
 *   a3 class 1 0.70 [100,300,200,400]
 *   a4 class 1 0.50 [100,300,200,400]  a3's twin (IoU 1)
 *   a5 class 1 0.55 [300,300,400,400]  far
 *   a6 class 2 0.95 [100,100,200,200]  where a0 is
 *   a7 class 0 0.60 [600,600,620,610]  20 x 10 pixels */
#include <math.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "check.h"
#include "tensors.h"

#define N_ANCHORS 8

static cnms_ctx *ctx;
static float scene[7 * N_ANCHORS];

static void
make_scene (void)
{
  static const float a[N_ANCHORS][6] = {
    /* x1 y1 x2 y2 score class */
    {100, 100, 200, 200, 0.90f, 0}, {130, 100, 230, 200, 0.80f, 0},
    {400, 100, 500, 200, 0.35f, 0}, {100, 300, 200, 400, 0.70f, 1},
    {100, 300, 200, 400, 0.50f, 1}, {300, 300, 400, 400, 0.55f, 1},
    {100, 100, 200, 200, 0.95f, 2}, {600, 600, 620, 610, 0.60f, 0},
  };
  int i;

  for (i = 0; i < N_ANCHORS; i++) {
    float cls[3] = { 0, 0, 0 };

    cls[(int) a[i][5]] = a[i][4];
    put_v8 (scene, 3, N_ANCHORS, i, (a[i][0] + a[i][2]) / 2,
        (a[i][1] + a[i][3]) / 2, a[i][2] - a[i][0], a[i][3] - a[i][1], cls);
  }
}

/* The kept anchors of the scene under p, as "6,0,3", on both paths. */
static void
kept (const cnms_params *p, const char *want)
{
  cnms_tensor t = tensor3 (scene, 7, N_ANCHORS);
  char got[2][64];
  int avx;

  for (avx = 0; avx < 2; avx++) {
    const cnms_det *d;
    int n = -1, i;
    size_t len = 0;

    cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, !avx);
    got[avx][0] = '\0';
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8, p, &d, &n),
        CNMS_OK);
    for (i = 0; i < n; i++)
      len += (size_t) snprintf (got[avx] + len, sizeof got[avx] - len,
          "%s%d", i ? "," : "", d[i].anchor);
    CHECK (strcmp (got[avx], want) == 0);
    if (strcmp (got[avx], want) != 0)
      fprintf (stderr, "  %s: got %s, wanted %s\n", avx ? "avx" : "sse2",
          got[avx], want);
  }
  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
}

static void
test_controls (void)
{
  cnms_class_params c[3];
  cnms_params p;

  cnms_params_init (&p);
  /* none: a1 and a4 suppressed */
  kept (&p, "6,0,3,7,5,2");

  cnms_class_params_init (&c[0], &p);
  cnms_class_params_init (&c[1], &p);
  cnms_class_params_init (&c[2], &p);
  p.classes = c;
  p.n_classes = 3;
  /* classes that do nothing of their own: the same */
  kept (&p, "6,0,3,7,5,2");

  /* each alone */
  c[0].score_threshold = 0.4f;  /* a2 (0.35) out */
  kept (&p, "6,0,3,7,5");
  c[0].score_threshold = 0.25f;
  c[1].score_threshold = 0.6f;  /* a5 (0.55) and a4 out */
  kept (&p, "6,0,3,7,2");
  c[1].score_threshold = 0.25f;
  c[2].score_threshold = INFINITY;      /* class 2 filtered out */
  kept (&p, "0,3,7,5,2");
  c[2].score_threshold = 0.25f;
  c[0].iou = 0.6f;              /* a1 (IoU 0.538) stays */
  kept (&p, "6,0,1,3,7,5,2");
  c[0].iou = 0.5384f;           /* just below 7000/13000: a1 goes */
  kept (&p, "6,0,3,7,5,2");
  c[0].iou = 0.45f;
  c[0].max_detections = 2;      /* class 0: a0, a7 */
  kept (&p, "6,0,3,7,5");
  c[0].max_detections = 0;
  p.min_width = 21.0f;          /* a7 (20 wide) out */
  kept (&p, "6,0,3,5,2");
  p.min_width = 20.0f;          /* at least: 20 is enough */
  kept (&p, "6,0,3,7,5,2");
  p.min_width = 0.0f;
  p.min_height = 11.0f;         /* a7 (10 high) out */
  kept (&p, "6,0,3,5,2");
  p.min_height = 0.0f;

  /* together */
  c[0].score_threshold = 0.4f;
  c[0].iou = 0.6f;
  c[1].score_threshold = 0.6f;
  c[2].score_threshold = INFINITY;
  p.min_width = 30.0f;
  kept (&p, "0,1,3");
  c[0].max_detections = 1;      /* a1 capped: it still suppressed nothing */
  kept (&p, "0,3");
  p.max_detections = 1;         /* the frame's cap after the classes' */
  kept (&p, "0");
}

/* One cap for every class without its own. */
static void
test_cap_per_class (void)
{
  cnms_class_params c[2];
  cnms_params p;

  cnms_params_init (&p);
  p.max_detections_per_class = 1;
  kept (&p, "6,0,3");           /* dog a6, person a0, car a3 */
  p.max_detections_per_class = 2;
  kept (&p, "6,0,3,7,5");
  /* class 1 (car) has its own cap: 1 */
  cnms_class_params_init (&c[0], &p);
  cnms_class_params_init (&c[1], &p);
  c[1].max_detections = 1;
  p.classes = c;
  p.n_classes = 2;
  kept (&p, "6,0,3,7");
}

static void
test_keep_only (void)
{
  cnms_class_params c[1];
  cnms_params p;

  cnms_params_init (&p);
  cnms_class_params_init (&c[0], &p);
  p.classes = c;
  p.n_classes = 1;
  p.other_classes_filtered = 1;
  kept (&p, "0,7,2");
  /* no class at all: nothing */
  p.n_classes = 0;
  p.classes = NULL;
  kept (&p, "");
}

/* Class-agnostic: every pair under iou, the classes' IoUs aside. */
static void
test_agnostic (void)
{
  cnms_class_params c[3];
  cnms_params p;
  int i;

  cnms_params_init (&p);
  p.class_agnostic = 1;
  kept (&p, "6,3,7,5,2");
  for (i = 0; i < 3; i++)
    cnms_class_params_init (&c[i], &p);
  p.classes = c;
  p.n_classes = 3;
  c[2].score_threshold = INFINITY;      /* a6 cannot suppress a0 */
  kept (&p, "0,3,7,5,2");
  c[0].iou = 0.6f;              /* not applied: a1 still under 0.45 */
  kept (&p, "0,3,7,5,2");
}

/* End2end: a row's class picks its threshold. */
static void
test_end2end (void)
{
  static const float rows[4 * 6] = {
    10, 10, 50, 50, 0.50f, 0,
    60, 10, 90, 50, 0.50f, 1,
    10, 60, 50, 90, 0.70f, 1,
    60, 60, 90, 90, 0.30f, 7,   /* past the classes: the frame's 0.25 */
  };
  cnms_tensor t = tensor3 (rows, 4, 6);
  cnms_class_params c[2];
  cnms_params p;
  const cnms_det *d;
  int n = -1;

  cnms_params_init (&p);
  cnms_class_params_init (&c[0], &p);
  cnms_class_params_init (&c[1], &p);
  c[1].score_threshold = 0.6f;
  p.classes = c;
  p.n_classes = 2;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_END2END, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 3);
  if (n == 3) {
    CHECK_INT (d[0].anchor, 2);
    CHECK_INT (d[1].anchor, 0);
    CHECK_INT (d[2].anchor, 3);
  }
  p.other_classes_filtered = 1;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_END2END, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 2);
}

/* Refused, naming what is wrong. */
static void
test_refused (void)
{
  cnms_tensor t = tensor3 (scene, 7, N_ANCHORS);
  cnms_class_params c[2];
  cnms_params p;
  const cnms_det *d;
  int n;
  struct {
    int what;
    const char *msg;
  } cases[] = {
    {0, "class 1: score threshold is NaN"},
    {1, "class 1: iou 1.5 is outside [0, 1]"},
    {2, "class 1: max-detections -1 must be >= 0"},
    {3, "-1 per-class entries"},
    {4, "2 per-class entries (NULL)"},
    {5, "minimum box size nanx0 must be finite and >= 0"},
    {6, "minimum box size -1x0 must be finite and >= 0"},
    {7, "max-detections-per-class -2 must be >= 0"},
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cnms_params_init (&p);
    cnms_class_params_init (&c[0], &p);
    cnms_class_params_init (&c[1], &p);
    p.classes = c;
    p.n_classes = 2;
    switch (cases[i].what) {
      case 0: c[1].score_threshold = NAN; break;
      case 1: c[1].iou = 1.5f; break;
      case 2: c[1].max_detections = -1; break;
      case 3: p.n_classes = -1; break;
      case 4: p.classes = NULL; break;
      case 5: p.min_width = NAN; break;
      case 6: p.min_width = -1.0f; break;
      case 7: p.max_detections_per_class = -2; break;
    }
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8, &p, &d, &n),
        CNMS_ERR_INVALID_ARG);
    CHECK (strstr (cnms_ctx_error (ctx), cases[i].msg) != NULL);
    if (strstr (cnms_ctx_error (ctx), cases[i].msg) == NULL)
      fprintf (stderr, "  got '%s', wanted '%s'\n", cnms_ctx_error (ctx),
          cases[i].msg);
  }
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  make_scene ();
  test_controls ();
  test_cap_per_class ();
  test_keep_only ();
  test_agnostic ();
  test_end2end ();
  test_refused ();
  cnms_ctx_free (ctx);
  return check_result ("test-classes");
}
