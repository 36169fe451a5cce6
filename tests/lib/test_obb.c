/* Oriented boxes in the library, against values computed here:
 *   - the trigonometry of cnms_math.h (cnms_sincos_d, cnms_atan2_d)
 *     against libm;
 *   - the overlap rule at hand-computed cases: axis-aligned rectangles
 *     (exact areas), a square and its 45-degree turn (IoU 1/sqrt 2),
 *     touching and disjoint boxes, identical boxes, a box without area;
 *     the strict threshold;
 *   - cnms_nms_rotated: hand cases (kept indices), then seeded random sets
 *     of 40 to 3000 boxes against a plain pairwise greedy loop over
 *     cnms_obb_suppresses, class-aware and agnostic, SSE2 and AVX scans;
 *   - cnms_detect on yolov8-obb tensors: the letterbox and the unequal
 *     stretch mapping (against sin, cos and atan2 of libm in double), the
 *     candidate rule (outside the frame, NaN angle, w = 0), the shape rule
 *     (no class row, auto never OBB), records of box layouts with angle 0;
 *   - cnms_obb_corners and cnms_obb_hull;
 *   - the CPU walk's bound (cnms_obb_may_exceed in the scan): pairs it
 *     rules out never reach the polygon rule (cnms_greedy_ws.tests), and
 *     the walk equals the plain one at the bound's edges (IoU around
 *     1/16, areas at 2^-40 and 2^40, scales 2^-20 to 2^15). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_internal.h"
#include "cpu_priv.h"
#include "check.h"
#include "rng.h"

static cnms_ctx *ctx;
static test_rng rng;

TEST_RNG_SHORTHANDS (rng)

#define CHECK_NEAR(a, b, tol) do { \
    double da_ = (a), db_ = (b); \
    check_count++; \
    if (!(fabs (da_ - db_) <= (tol))) { \
      fprintf (stderr, "%s:%d: CHECK failed: %s ~ %s (%.17g vs %.17g)\n", \
          __FILE__, __LINE__, #a, #b, da_, db_); \
      check_failures++; \
    } \
  } while (0)

static void
test_trig (void)
{
  double worst_s = 0, worst_c = 0, worst_a = 0;
  int i;

  for (i = -200000; i <= 200000; i++) {
    double x = i * 1e-4, s, c;
    cnms_sincos_d (x, &s, &c);
    worst_s = fmax (worst_s, fabs (s - sin (x)));
    worst_c = fmax (worst_c, fabs (c - cos (x)));
  }
  for (i = 0; i < 20000; i++) {
    double x = uni (-500000, 500000), s, c;
    cnms_sincos_d (x, &s, &c);
    worst_s = fmax (worst_s, fabs (s - sin (x)));
    worst_c = fmax (worst_c, fabs (c - cos (x)));
  }
  CHECK (worst_s < 1e-10);
  CHECK (worst_c < 1e-10);
  {
    double s, c;
    cnms_sincos_d (0.0, &s, &c);
    CHECK (s == 0.0 && c == 1.0);
    /* beyond 2^19 the angle is first taken modulo 2 pi */
    cnms_sincos_d (1e30, &s, &c);
    CHECK_NEAR (s * s + c * c, 1.0, 1e-12);
    CHECK_NEAR (s, sin (fmod (1e30, 6.28318530717958647692)), 1e-9);
  }
  for (i = 0; i < 20000; i++) {
    double y = uni (-100, 100), x = uni (-100, 100);
    if (i % 7 == 0)
      x = 0;
    if (i % 11 == 0)
      y = 0;
    worst_a = fmax (worst_a, fabs (cnms_atan2_d (y, x) - atan2 (y, x)));
  }
  CHECK (worst_a < 1e-15);
  CHECK (cnms_atan2_d (0, 0) == 0);
  CHECK (cnms_atan2_d (0, -1) == 3.14159265358979311600);
}

/* IoU of two boxes (cx cy w h r) by the library's rule, as a float: the
 * threshold at which the pair stops suppressing is this value. */
static float
obb_iou (const float *a, const float *b)
{
  cnms_obb oa, ob;
  float ha[4], hb[4], inter;

  cnms_obb_prepare (a[0], a[1], a[2], a[3], a[4], &oa, ha);
  cnms_obb_prepare (b[0], b[1], b[2], b[3], b[4], &ob, hb);
  if (!cnms_hulls_meet (ha, hb))
    return 0.0f;
  inter = cnms_obb_inter (&oa, &ob);
  if (!(inter > 0.0f))
    return 0.0f;
  return inter / (oa.area + ob.area - inter);
}

static int
obb_above (const float *a, const float *b, float iou)
{
  cnms_obb oa, ob;
  float ha[4], hb[4];

  cnms_obb_prepare (a[0], a[1], a[2], a[3], a[4], &oa, ha);
  cnms_obb_prepare (b[0], b[1], b[2], b[3], b[4], &ob, hb);
  return cnms_obb_iou_above (&oa, ha, &ob, hb, iou);
}

static void
test_rule (void)
{
  const float a[5] = { 10, 10, 8, 6, 0 }, b[5] = { 12, 11, 8, 6, 0 };
  const float sq[5] = { 0, 0, 2, 2, 0 };
  const float sq45[5] = { 0, 0, 2, 2, (float) (M_PI / 4) };
  const float touch[5] = { 2, 0, 2, 2, 0 }, far[5] = { 50, 50, 2, 2, 1 };
  const float rot[5] = { 5, -3, 7, 2, 0.7f }, flat[5] = { 0, 0, 0, 2, 0 };
  cnms_obb oa, ob;
  float ha[4], hb[4], t;

  /* axis-aligned: inter 6 x 5 = 30, union 48 + 48 - 30 = 66 */
  cnms_obb_prepare (a[0], a[1], a[2], a[3], a[4], &oa, ha);
  cnms_obb_prepare (b[0], b[1], b[2], b[3], b[4], &ob, hb);
  CHECK_FLOAT (cnms_obb_inter (&oa, &ob), 30.0f);
  CHECK_FLOAT (cnms_obb_inter (&ob, &oa), 30.0f);
  t = 30.0f / 66.0f;
  CHECK_FLOAT (obb_iou (a, b), t);
  /* strictly above: at the IoU itself the pair does not suppress */
  CHECK_INT (obb_above (a, b, t), 0);
  CHECK_INT (obb_above (a, b, nextafterf (t, 0.0f)), 1);
  /* the box rule on the same rectangles gives the same IoU */
  {
    const float ba[4] = { 6, 7, 14, 13 }, bb[4] = { 8, 8, 16, 14 };
    CHECK_FLOAT (cnms_iou (ba, 48.0f, bb, 48.0f), t);
  }
  /* a square and its 45-degree turn: the regular octagon 8 (sqrt 2 - 1),
   * IoU 1 / sqrt 2 */
  cnms_obb_prepare (sq[0], sq[1], sq[2], sq[3], sq[4], &oa, ha);
  cnms_obb_prepare (sq45[0], sq45[1], sq45[2], sq45[3], sq45[4], &ob, hb);
  CHECK_NEAR (cnms_obb_inter (&oa, &ob), 8.0 * (sqrt (2.0) - 1.0), 2e-6);
  CHECK_NEAR (obb_iou (sq, sq45), sqrt (0.5), 1e-6);
  CHECK_NEAR (obb_iou (sq45, sq), sqrt (0.5), 1e-6);
  /* touching edges share no area: not above 0 */
  cnms_obb_prepare (touch[0], touch[1], touch[2], touch[3], touch[4], &ob,
      hb);
  CHECK_FLOAT (cnms_obb_inter (&oa, &ob), 0.0f);
  CHECK_INT (obb_above (sq, touch, 0.0f), 0);
  CHECK_INT (obb_above (sq, far, 0.0f), 0);
  /* identical turned boxes */
  CHECK_NEAR (obb_iou (rot, rot), 1.0, 1e-6);
  CHECK_INT (obb_above (rot, rot, 0.99f), 1);
  /* w = 0: an empty hull, overlaps nothing, not even itself */
  cnms_obb_prepare (flat[0], flat[1], flat[2], flat[3], flat[4], &oa, ha);
  CHECK (!(ha[0] < ha[2]));
  CHECK_INT (obb_above (flat, sq, 0.0f), 0);
  CHECK_INT (obb_above (sq, flat, 0.0f), 0);
  /* the class part of the suppression test */
  cnms_obb_prepare (rot[0], rot[1], rot[2], rot[3], rot[4], &oa, ha);
  CHECK_INT (cnms_obb_suppresses (&oa, ha, 1, &oa, ha, 2, 0.5f, 0), 0);
  CHECK_INT (cnms_obb_suppresses (&oa, ha, 1, &oa, ha, 2, 0.5f, 1), 1);
  CHECK_INT (cnms_obb_suppresses (&oa, ha, 3, &oa, ha, 3, 0.5f, 0), 1);
}

static void
test_corners_hull (void)
{
  float c[8], h[4];
  cnms_det d;

  cnms_obb_corners (0, 0, 4, 2, 0, c);
  CHECK_FLOAT (c[0], 2.0f);
  CHECK_FLOAT (c[1], 1.0f);
  CHECK_FLOAT (c[2], -2.0f);
  CHECK_FLOAT (c[3], 1.0f);
  CHECK_FLOAT (c[4], -2.0f);
  CHECK_FLOAT (c[5], -1.0f);
  CHECK_FLOAT (c[6], 2.0f);
  CHECK_FLOAT (c[7], -1.0f);
  /* a turn of 90 degrees swaps the sides: u = (0, 2), v = (-1, 0) */
  cnms_obb_corners (10, 20, 4, 2, (float) (M_PI / 2), c);
  CHECK_NEAR (c[0], 9.0, 1e-6);
  CHECK_NEAR (c[1], 22.0, 1e-6);
  CHECK_NEAR (c[4], 11.0, 1e-6);
  CHECK_NEAR (c[5], 18.0, 1e-6);
  memset (&d, 0, sizeof d);
  d.cx = 5;
  d.cy = 95;
  d.w = 20;
  d.h = 10;
  d.angle = 0;
  cnms_obb_hull (&d, 100, 100, h);
  CHECK_FLOAT (h[0], 0.0f);
  CHECK_FLOAT (h[1], 90.0f);
  CHECK_FLOAT (h[2], 15.0f);
  CHECK_FLOAT (h[3], 100.0f);
}

static int
run_rotated (const float *boxes, const float *scores, const int32_t *cls,
    int n, float iou, int agnostic, int max_det, int64_t *keep)
{
  int n_keep = -1;

  CHECK_INT (cnms_nms_rotated (ctx, boxes, scores, cls, n, iou, agnostic,
          max_det, keep, &n_keep), CNMS_OK);
  return n_keep;
}

static void
test_nms_hand (void)
{
  /* 0 and 1 nearly the same box; 2 far; 3 a NaN angle; 4 w = 0 on top of
   * 0; 5 ties 0's score, same box as 0 */
  const float boxes[6][5] = {
    {100, 100, 40, 20, 0.3f}, {101, 100, 40, 20, 0.32f},
    {300, 300, 40, 20, -1.0f}, {100, 100, 40, 20, NAN},
    {100, 100, 0, 20, 0.3f}, {100, 100, 40, 20, 0.3f},
  };
  const float scores[6] = { 0.9f, 0.8f, 0.7f, 0.95f, 0.85f, 0.9f };
  const int32_t cls[6] = { 0, 1, 0, 0, 0, 2 };
  int64_t keep[6];
  int n;

  n = run_rotated (&boxes[0][0], scores, NULL, 6, 0.5f, 0, 0, keep);
  CHECK_INT (n, 3);
  CHECK_INT (keep[0], 0);
  CHECK_INT (keep[1], 4);
  CHECK_INT (keep[2], 2);
  /* class-aware: 1 and 5 are other classes */
  n = run_rotated (&boxes[0][0], scores, cls, 6, 0.5f, 0, 0, keep);
  CHECK_INT (n, 5);
  CHECK_INT (keep[0], 0);
  CHECK_INT (keep[1], 5);
  CHECK_INT (keep[2], 4);
  CHECK_INT (keep[3], 1);
  CHECK_INT (keep[4], 2);
  /* agnostic despite classes; the cap */
  n = run_rotated (&boxes[0][0], scores, cls, 6, 0.5f, 1, 2, keep);
  CHECK_INT (n, 2);
  CHECK_INT (keep[0], 0);
  CHECK_INT (keep[1], 4);
  /* iou 1: nothing is above it */
  n = run_rotated (&boxes[0][0], scores, NULL, 6, 1.0f, 0, 0, keep);
  CHECK_INT (n, 5);
}

/* The plain greedy walk over the library's own suppression test: every
 * pair, in score order (ties to the lower index), non-finite boxes out. */
static int
reference (const float *boxes, const float *scores, const int32_t *cls,
    int n, float iou, int agnostic, int max_det, int64_t *keep)
{
  int *order = malloc ((size_t) n * sizeof (int));
  cnms_obb *o = malloc ((size_t) n * sizeof (cnms_obb));
  float *h = malloc ((size_t) n * 4 * sizeof (float));
  char *removed = calloc ((size_t) n, 1);
  int m = 0, i, j, k = 0;

  for (i = 0; i < n; i++) {
    const float *b = boxes + 5 * i;
    int ok = cnms_isfinite (scores[i]);
    for (j = 0; j < 5; j++)
      ok = ok && cnms_isfinite (b[j]);
    if (ok)
      order[m++] = i;
  }
  /* insertion sort by (score desc, index asc) */
  for (i = 1; i < m; i++) {
    int v = order[i];
    for (j = i - 1; j >= 0 && (scores[order[j]] < scores[v]
            || (scores[order[j]] == scores[v] && order[j] > v)); j--)
      order[j + 1] = order[j];
    order[j + 1] = v;
  }
  for (i = 0; i < n; i++)
    cnms_obb_prepare (boxes[5 * i], boxes[5 * i + 1], boxes[5 * i + 2],
        boxes[5 * i + 3], boxes[5 * i + 4], &o[i], h + 4 * i);
  for (i = 0; i < m && (max_det <= 0 || k < max_det); i++) {
    int a = order[i];
    if (removed[i])
      continue;
    keep[k++] = a;
    for (j = i + 1; j < m; j++) {
      int b = order[j];
      if (!removed[j] && cnms_obb_suppresses (&o[a], h + 4 * a,
              cls ? cls[a] : 0, &o[b], h + 4 * b, cls ? cls[b] : 0, iou,
              agnostic || cls == NULL))
        removed[j] = 1;
    }
  }
  free (order);
  free (o);
  free (h);
  free (removed);
  return k;
}

static void
random_set (float *boxes, float *scores, int32_t *cls, int n, int style)
{
  int i, n_obj = 1 + n / 6;
  float obj[600][5];

  if (n_obj > 600)
    n_obj = 600;
  for (i = 0; i < n_obj; i++) {
    obj[i][0] = uni (0, 1000);
    obj[i][1] = uni (0, 1000);
    obj[i][2] = uni (5, 120);
    obj[i][3] = uni (5, 60);
    obj[i][4] = uni (-1.6f, 3.2f);
  }
  for (i = 0; i < n; i++) {
    const float *b = obj[rnd () % n_obj];
    float *o = boxes + 5 * i;
    o[0] = b[0] + uni (-4, 4);
    o[1] = b[1] + uni (-4, 4);
    o[2] = b[2] * uni (0.8f, 1.2f);
    o[3] = b[3] * uni (0.8f, 1.2f);
    o[4] = b[4] + uni (-0.2f, 0.2f);
    /* quantised scores: ties */
    scores[i] = style ? (float) (rnd () % 16) / 16.0f : uni (0, 1);
    cls[i] = (int32_t) (rnd () % 3);
    switch (rnd () % 64) {
      case 0:
        o[4] = NAN;
        break;
      case 1:
        o[2] = 0;
        break;
      case 2:
        /* exact duplicate of the previous box */
        if (i > 0)
          memcpy (o, o - 5, 5 * sizeof (float));
        break;
      case 3:
        o[4] = (float) (M_PI / 2) * (float) (rnd () % 5);
        break;
      default:
        break;
    }
  }
}

static void
test_nms_random (void)
{
  static const int sizes[] = { 40, 200, 400, 1200, 3000 };
  static const float ious[] = { 0.0f, 0.1f, 0.45f, 0.7f };
  int s, it, total = 0, mismatches = 0;

  for (s = 0; s < 5; s++) {
    int n = sizes[s];
    float *boxes = malloc ((size_t) n * 5 * sizeof (float));
    float *scores = malloc ((size_t) n * sizeof (float));
    int32_t *cls = malloc ((size_t) n * sizeof (int32_t));
    int64_t *k1 = malloc ((size_t) n * sizeof (int64_t));
    int64_t *k2 = malloc ((size_t) n * sizeof (int64_t));

    for (it = 0; it < 8; it++) {
      const float iou = ious[it % 4];
      const int aware = it & 1, style = (it >> 1) & 1;
      const int max_det = it == 5 ? 7 : 0;
      int avx, n1, n2;

      random_set (boxes, scores, cls, n, style);
      n2 = reference (boxes, scores, aware ? cls : NULL, n, iou, !aware,
          max_det, k2);
      for (avx = 0; avx < 2; avx++) {
        cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, avx);
        n1 = run_rotated (boxes, scores, aware ? cls : NULL, n, iou, !aware,
            max_det, k1);
        total++;
        if (n1 != n2 || memcmp (k1, k2, (size_t) n1 * sizeof *k1) != 0) {
          mismatches++;
          fprintf (stderr, "n %d iou %g aware %d avx-off %d: %d kept, the "
              "reference %d\n", n, (double) iou, aware, avx, n1, n2);
        }
      }
    }
    cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
    free (boxes);
    free (scores);
    free (cls);
    free (k1);
    free (k2);
  }
  CHECK_INT (mismatches, 0);
  CHECK_INT (total, 80);
}

/* A [1, 4 + C + 1, n] float32 tensor from per-anchor rows. */
static void
obb_tensor (float *data, const float (*rows)[8], int n, int n_classes)
{
  int a, f;

  for (a = 0; a < n; a++)
    for (f = 0; f < 5 + n_classes; f++)
      data[(size_t) f * n + a] = rows[a][f];
}

static int
detect (cnms_tensor *t, cnms_layout layout, const cnms_params *p,
    const cnms_det **d)
{
  int n = -1;

  CHECK_INT (cnms_detect (ctx, t, NULL, layout, p, d, &n), CNMS_OK);
  return n;
}

static void
test_detect (void)
{
  /* cx cy w h, two classes, angle */
  const float rows[5][8] = {
    {320, 320, 100, 50, 0.1f, 0.8f, 0.3f},
    {321, 320, 100, 50, 0.7f, 0.2f, 0.31f},       /* class 0: kept */
    {322, 320, 100, 50, 0.1f, 0.6f, 0.3f},        /* suppressed by 0 */
    {320, 20, 100, 50, 0.1f, 0.9f, 0.0f},         /* in the top pad */
    {100, 400, 60, 30, 0.5f, 0.1f, NAN},          /* NaN angle */
  };
  float data[7 * 5];
  cnms_tensor t;
  cnms_params p;
  const cnms_det *d;
  int n;

  obb_tensor (data, rows, 5, 2);
  memset (&t, 0, sizeof t);
  t.data = data;
  t.size = sizeof data;
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = 7;
  t.dims[2] = 5;
  cnms_params_init (&p);
  p.frame_width = 1280;
  p.frame_height = 720;
  /* gain 0.5, pad y round (140 - 0.1) = 140 */
  n = detect (&t, CNMS_LAYOUT_YOLOV8_OBB, &p, &d);
  CHECK_INT (n, 2);
  if (n == 2) {
    CHECK_FLOAT (d[0].score, 0.8f);
    CHECK_INT (d[0].class_id, 1);
    CHECK_INT (d[0].anchor, 0);
    CHECK_FLOAT (d[0].cx, 640.0f);
    CHECK_FLOAT (d[0].cy, 360.0f);
    CHECK_FLOAT (d[0].w, 200.0f);
    CHECK_FLOAT (d[0].h, 100.0f);
    CHECK_FLOAT (d[0].angle, 0.3f);
    CHECK_INT (d[1].class_id, 0);
    CHECK_INT (d[1].anchor, 1);
    CHECK_FLOAT (d[1].cx, 642.0f);
    CHECK_FLOAT (d[1].angle, 0.31f);
  }
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 3);
  CHECK_INT (cnms_ctx_report (ctx)->shape.layout, CNMS_LAYOUT_YOLOV8_OBB);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_classes, 2);
  /* agnostic: 1 overlaps 0 */
  p.class_agnostic = 1;
  n = detect (&t, CNMS_LAYOUT_YOLOV8_OBB, &p, &d);
  CHECK_INT (n, 1);
  p.class_agnostic = 0;

  /* an unequal stretch: 640x640 onto 1280x640, gains 0.5 and 1 */
  p.letterbox = 0;
  p.frame_width = 1280;
  p.frame_height = 640;
  n = detect (&t, CNMS_LAYOUT_YOLOV8_OBB, &p, &d);
  /* anchor 3 is in the frame now, first by its score */
  CHECK_INT (n, 3);
  if (n == 3) {
    const double r = 0.3f, gx = 0.5, gy = 1.0;
    double ux = 100 * cos (r) / gx, uy = 100 * sin (r) / gy;
    double vx = -50 * sin (r) / gx, vy = 50 * cos (r) / gy;
    CHECK_INT (d[0].anchor, 3);
    CHECK_FLOAT (d[0].cy, 20.0f);
    CHECK_FLOAT (d[0].w, 200.0f);
    CHECK_FLOAT (d[0].h, 50.0f);
    CHECK_FLOAT (d[0].angle, 0.0f);
    d++;
    CHECK_INT (d[0].anchor, 0);
    CHECK_FLOAT (d[0].cx, 640.0f);
    CHECK_FLOAT (d[0].cy, 320.0f);
    CHECK_NEAR (d[0].w, hypot (ux, uy), 1e-4);
    CHECK_NEAR (d[0].h, hypot (vx, vy), 1e-4);
    CHECK_NEAR (d[0].angle, atan2 (uy, ux), 1e-6);
  }
  /* the anchor in the pad of a letterbox lies outside the frame */
  p.letterbox = 1;
  p.frame_width = 1280;
  p.frame_height = 720;
  p.score_threshold = 0.85f;
  n = detect (&t, CNMS_LAYOUT_YOLOV8_OBB, &p, &d);
  CHECK_INT (n, 0);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 0);
  /* the same tensor as yolov8 would be three classes, angle a score */
  p.score_threshold = 0.25f;
  n = detect (&t, CNMS_LAYOUT_YOLOV8, &p, &d);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_classes, 3);
  if (n > 0)
    CHECK_FLOAT (d[0].angle, 0.0f);

  /* no class row: [1, 5, N] is no oriented tensor */
  {
    cnms_shape s;
    char msg[160];
    t.dims[1] = 5;
    t.dims[2] = 7;
    CHECK_INT (cnms_tensor_shape (&t, NULL, CNMS_LAYOUT_YOLOV8_OBB, NULL,
            &s, msg, sizeof msg), CNMS_ERR_BAD_TENSOR);
    /* auto never takes a tensor for oriented boxes */
    t.dims[1] = 20;
    t.dims[2] = 8400;
    t.size = 20 * 8400 * sizeof (float);
    CHECK_INT (cnms_tensor_shape (&t, NULL, CNMS_LAYOUT_AUTO, NULL, &s,
            msg, sizeof msg), CNMS_OK);
    CHECK_INT (s.layout, CNMS_LAYOUT_YOLOV8);
    CHECK_INT (s.n_classes, 16);
    CHECK_INT (cnms_tensor_shape (&t, NULL, CNMS_LAYOUT_YOLOV8_OBB, NULL,
            &s, msg, sizeof msg), CNMS_OK);
    CHECK_INT (s.n_classes, 15);
  }
  CHECK (strcmp (cnms_layout_name (CNMS_LAYOUT_YOLOV8_OBB), "yolov8-obb")
      == 0);
}

/* The sign of the angle: the w side runs along (cos a, sin a), y down.
 * Two 100x2 bars at +30 degrees, the second 40 along the first's long
 * axis ((40 cos 30, 40 sin 30)): they overlap by 60 of 100 (IoU 60 / 140,
 * suppressed at 0.3). Turned the other way the second centre lies 34.6
 * off the first's axis: no overlap, both kept. A symmetric case (45, 90
 * degrees, pi) cannot tell the sign; this one does, in the corners too. */
static void
test_angle_sign (void)
{
  const float a = 0.52359877559829887f;     /* pi / 6 */
  const float bx = 34.641016151377546f, by = 20.0f;
  float boxes[2 * 5] = { 0.0f, 0.0f, 100.0f, 2.0f, a, bx, by, 100.0f, 2.0f,
    a
  };
  const float scores[2] = { 0.9f, 0.8f };
  int64_t keep[2];
  float c[8];
  int n = -1;

  CHECK_INT (cnms_nms_rotated (ctx, boxes, scores, NULL, 2, 0.3f, 1, 0,
          keep, &n), CNMS_OK);
  CHECK_INT (n, 1);
  CHECK_INT ((int) keep[0], 0);
  /* the second bar turned the other way: apart */
  boxes[9] = -a;
  boxes[4] = -a;
  CHECK_INT (cnms_nms_rotated (ctx, boxes, scores, NULL, 2, 0.3f, 1, 0,
          keep, &n), CNMS_OK);
  CHECK_INT (n, 2);
  /* the first corner, c + u + v: u = 50 (cos a, sin a), v = (-sin a,
   * cos a), positive y down */
  cnms_obb_corners (0.0f, 0.0f, 100.0f, 2.0f, a, c);
  CHECK_NEAR (c[0], 50.0 * cos (M_PI / 6) - sin (M_PI / 6), 1e-4);
  CHECK_NEAR (c[1], 50.0 * sin (M_PI / 6) + cos (M_PI / 6), 1e-4);
}

/* cnms_cpu_greedy on oriented boxes already in order (agnostic), with
 * its own workspace: the kept count, and in *tests the pairs it handed to
 * the overlap rule. */
static int
greedy_obb (const float *boxes, int n, float iou, int no_avx, uint64_t *tests)
{
  uint32_t *rows = malloc ((size_t) n * sizeof (uint32_t));
  int32_t *kept = malloc ((size_t) n * sizeof (int32_t));
  cnms_backend_ctx bctx;
  cnms_greedy_ws ws;
  cnms_buf *bufs[] = { CNMS_GREEDY_BUFS (&ws) };
  cnms_box_src src;
  int i, n_kept = -1;

  memset (&bctx, 0, sizeof bctx);
  memset (&ws, 0, sizeof ws);
  ws.no_avx = no_avx;
  for (i = 0; i < n; i++)
    rows[i] = (uint32_t) i;
  src.base = boxes;
  src.stride = 5;
  src.rows = rows;
  src.geom = CNMS_GEOM_OBB;
  src.angle_off = 4;
  src.n_strips = 0;
  CHECK_INT (cnms_cpu_greedy (&bctx, &ws, &src, NULL, 1, n, iou, NULL, n,
          kept, &n_kept), CNMS_OK);
  *tests = ws.tests;
  for (i = 0; i < CNMS_GREEDY_N_BUFS; i++)
    cnms_buf_release (&bctx, bufs[i]);
  free (rows);
  free (kept);
  return n_kept;
}

/* The walk asks the polygon rule only of pairs that cnms_obb_may_exceed
 * (the rule's own bound, in the scan, 4 or 8 at a time) lets through:
 * 3000 thin boxes turned 45 degrees along a line, 3 apart (their hulls,
 * about 72 wide, meet those of the 24 neighbours on either side: 71700
 * pairs, which a walk by the hulls alone tests 106200 times; the boxes,
 * 2.1 apart across their width of 2, never meet) are all kept with no
 * pair tested; of a box, its copy 1 to the right and a parallel box
 * beside it, only the copy is tested (and suppressed). SSE2 and AVX
 * scans. */
static void
test_obb_bound_count (void)
{
  enum { N = 3000 };
  float *b = malloc ((size_t) N * 5 * sizeof (float));
  const float three[3][5] = {
    {100, 100, 40, 20, 0.3f}, {101, 100, 40, 20, 0.3f},
    {100 - 25 * 0.29552f, 100 + 25 * 0.95534f, 40, 20, 0.3f},
  };
  uint64_t tests;
  int i, avx;

  for (i = 0; i < N; i++) {
    b[5 * i] = 3.0f * (float) i;
    b[5 * i + 1] = 0.0f;
    b[5 * i + 2] = 100.0f;
    b[5 * i + 3] = 2.0f;
    b[5 * i + 4] = (float) (M_PI / 4);
  }
  for (avx = 0; avx < 2; avx++) {
    CHECK_INT (greedy_obb (b, N, 0.5f, !avx, &tests), N);
    CHECK_INT (tests, 0);
    /* below 1/16 the rule has no such bound: the polygons decide */
    CHECK_INT (greedy_obb (b, N, 0.06f, !avx, &tests), N);
    CHECK_INT (greedy_obb (&three[0][0], 3, 0.5f, !avx, &tests), 2);
    CHECK_INT (tests, 1);
  }
  free (b);
}

/* Oriented boxes of a seeded set for test_obb_bound_random: clusters of
 * near-duplicates around 300 centres at scale s (sizes 5 .. 120 times s),
 * a few boxes whose area lies at 2^-40 or 2^40 (where
 * cnms_obb_may_exceed stops bounding), thin boxes and right angles. */
static void
bound_set (float *boxes, float *scores, int32_t *cls, int n, float s)
{
  float obj[300][5];
  int i;

  for (i = 0; i < 300; i++) {
    obj[i][0] = uni (0, 1000) * s;
    obj[i][1] = uni (0, 1000) * s;
    obj[i][2] = uni (5, 120) * s;
    obj[i][3] = uni (5, 60) * s;
    obj[i][4] = uni (-1.6f, 3.2f);
  }
  for (i = 0; i < n; i++) {
    const float *c = obj[rnd () % 300];
    float *o = boxes + 5 * i;

    o[0] = c[0] + uni (-4, 4) * s;
    o[1] = c[1] + uni (-4, 4) * s;
    o[2] = c[2] * uni (0.7f, 1.3f);
    o[3] = c[3] * uni (0.7f, 1.3f);
    o[4] = c[4] + uni (-0.3f, 0.3f);
    switch (rnd () % 16) {
      case 0:
        /* area about 2^-40: just in range, at its edge, just out */
        o[2] = 0x1p-20f * (float) (1 + rnd () % 3) / 2.0f;
        o[3] = 0x1p-20f;
        break;
      case 1:
        o[2] = 0x1p20f * (float) (1 + rnd () % 3) / 2.0f;
        o[3] = 0x1p20f;
        break;
      case 2:
        o[3] = o[2] * 0.01f;
        break;
      case 3:
        o[4] = (float) (M_PI / 2) * (float) (rnd () % 5);
        break;
      default:
        break;
    }
    scores[i] = (rnd () % 2) ? uni (0, 1) : (float) (rnd () % 16) / 16.0f;
    cls[i] = (int32_t) (rnd () % 3);
  }
}

/* The walk with the bound against the plain walk (reference): seeded
 * sets at scales 2^-20, 1 and 2^15, with boxes at the edges of the
 * bound's area range, at IoU thresholds at and around 1/16 (where the
 * bound starts), 0.3, 0.5, 0.9 and 1; agnostic and class-aware; SSE2 and
 * AVX scans. */
static void
test_obb_bound_random (void)
{
  static const int sizes[] = { 300, 1500 };
  static const float scales[] = { 0x1p-20f, 1.0f, 0x1p15f };
  const float ious[] = { 0.0625f, 0x1.fffffep-5f, 0x1.000002p-4f, 0.3f,
    0.5f, 0.9f, 1.0f
  };
  int si, sc, ii, avx, total = 0, mismatches = 0;

  for (si = 0; si < 2; si++) {
    const int n = sizes[si];
    float *boxes = malloc ((size_t) n * 5 * sizeof (float));
    float *scores = malloc ((size_t) n * sizeof (float));
    int32_t *cls = malloc ((size_t) n * sizeof (int32_t));
    int64_t *k1 = malloc ((size_t) n * sizeof (int64_t));
    int64_t *k2 = malloc ((size_t) n * sizeof (int64_t));

    for (sc = 0; sc < 3; sc++) {
      for (ii = 0; ii < 7; ii++) {
        const int aware = ii & 1;
        int n1, n2;

        bound_set (boxes, scores, cls, n, scales[sc]);
        n2 = reference (boxes, scores, aware ? cls : NULL, n, ious[ii],
            !aware, 0, k2);
        for (avx = 0; avx < 2; avx++) {
          cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, avx);
          n1 = run_rotated (boxes, scores, aware ? cls : NULL, n, ious[ii],
              !aware, 0, k1);
          total++;
          if (n1 != n2 || memcmp (k1, k2, (size_t) n1 * sizeof *k1) != 0) {
            mismatches++;
            fprintf (stderr, "n %d scale %g iou %.9g aware %d avx-off %d: "
                "%d kept, the reference %d\n", n, (double) scales[sc],
                (double) ious[ii], aware, avx, n1, n2);
          }
        }
        cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
      }
    }
    free (boxes);
    free (scores);
    free (cls);
    free (k1);
    free (k2);
  }
  CHECK_INT (mismatches, 0);
  CHECK_INT (total, 84);
}

int
main (void)
{
  test_rng_seed (&rng, 0x0bb0bbu);
  if (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK)
    return 1;
  test_trig ();
  test_rule ();
  test_corners_hull ();
  test_nms_hand ();
  test_nms_random ();
  test_detect ();
  test_angle_sign ();
  test_obb_bound_count ();
  test_obb_bound_random ();
  cnms_ctx_free (ctx);
  return check_result ("lib-obb");
}
