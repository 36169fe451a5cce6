/* Lanes (LaneATT) in the library, against values computed by hand:
 *   - the rows of a lane (cnms_lane_start, cnms_lane_end) at the edges of
 *     LaneATT's float and double steps: lengths 0, 0.5, 1, 1.49, 1.5,
 *     negative, the last row;
 *   - the overlap (cnms_lane_close): dist exactly at distance x rows
 *     (not below: kept), a float less (suppressed), no shared row, the
 *     end clipped to the last row;
 *   - cnms_nms_lanes: hand cases (kept indices), and seeded LaneATT-like
 *     sets (S = 72, up to 1000 proposals; S = 2 and 3) against a plain
 *     pairwise walk over cnms_lane_close;
 *   - cnms_detect on laneatt: the softmax score, candidates, points in
 *     frame pixels (rows, the extension below the start row, points
 *     outside the frame), the lane's rectangle, float16 equal to float32,
 *     the shape rule, the payload cleared by another call;
 *   - a kept lane with fewer than 2 points in the frame is not returned
 *     (counted in lanes_without_points), one with exactly 2 is;
 *   - the index's rectangle of a lane (cnms_lane_rect) at hand-computed
 *     edges; the indexed walk against the plain one where the rectangles
 *     matter (gaps around the padding, NaN, infinite and huge x,
 *     distances from 0 to FLT_MAX, S from 2 to 2^20); far-apart lanes
 *     kept without one pair handed to cnms_lane_close. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_internal.h"
#include "cpu_priv.h"
#include "check.h"
#include "rng.h"
#include "tensors.h"

static cnms_ctx *ctx;
static test_rng rng;

TEST_RNG_SHORTHANDS (rng)

#define S72 72

static void
test_rows (void)
{
  /* 0.5 x 71 = 35.5, + 0.5 = 36 */
  CHECK_INT (cnms_lane_start (0.5f, 71), 36);
  CHECK_INT (cnms_lane_start (0.0f, 71), 0);
  CHECK_INT (cnms_lane_start (1.0f, 71), 71);
  /* 36 + 10 - 1 + 0.5 = 45.5 -> 45 */
  CHECK_INT (cnms_lane_end (36, 10.0f), 45);
  CHECK_INT (cnms_lane_end (36, 1.0f), 36);
  /* 1.49: 36.49 + 0.5 -> 36; 1.5: 37.0 -> 37 */
  CHECK_INT (cnms_lane_end (36, 1.49f), 36);
  CHECK_INT (cnms_lane_end (36, 1.5f), 37);
  /* length - 1 < 0 takes one more off: 0.5: 35.5 + 0.5 - 1 = 35 */
  CHECK_INT (cnms_lane_end (36, 0.5f), 35);
  /* 0: 35 + 0.5 - 1 = 34.5 -> 34; -2: 33 + 0.5 - 1 = 32.5 -> 32 */
  CHECK_INT (cnms_lane_end (36, 0.0f), 34);
  CHECK_INT (cnms_lane_end (36, -2.0f), 32);
  {
    int32_t s = -1, e = -1;
    CHECK_INT (cnms_lane_rows (1.0f, 5.0f, 71, &s, &e), 1);
    CHECK_INT (s, 71);
    CHECK_INT (e, 75);
    /* a start above the last row, or below the first, takes no part */
    CHECK_INT (cnms_lane_rows (1.02f, 5.0f, 71, &s, &e), 0);
    CHECK_INT (cnms_lane_rows (-0.03f, 5.0f, 71, &s, &e), 0);
    CHECK_INT (cnms_lane_rows (NAN, 5.0f, 71, &s, &e), 0);
    CHECK_INT (cnms_lane_rows (0.5f, INFINITY, 71, &s, &e), 0);
  }
}

static void
test_close (void)
{
  float a[S72], b[S72];
  int i;

  for (i = 0; i < S72; i++) {
    a[i] = 100.0f + (float) i;
    b[i] = a[i] + 2.0f;
  }
  /* rows 15 .. 20 shared: 6 rows, dist 12 */
  CHECK_INT (cnms_lane_close (a, 10, 20, b, 15, 30, 71, 2.0f), 0);
  CHECK_INT (cnms_lane_close (a, 10, 20, b, 15, 30, 71,
          nextafterf (2.0f, 3.0f)), 1);
  /* symmetric */
  CHECK_INT (cnms_lane_close (b, 15, 30, a, 10, 20, 71,
          nextafterf (2.0f, 3.0f)), 1);
  /* no shared row */
  CHECK_INT (cnms_lane_close (a, 10, 14, b, 15, 30, 71, 100.0f), 0);
  /* the end is clipped to the last row: rows 70, 71 */
  CHECK_INT (cnms_lane_close (a, 70, 90, b, 60, 80, 71, 2.0f), 0);
  b[71] = a[71];
  /* dist 2 over 2 rows: 2 < 2 x 2 */
  CHECK_INT (cnms_lane_close (a, 70, 90, b, 60, 80, 71, 1.5f), 1);
  /* a lane without rows (end < start) */
  CHECK_INT (cnms_lane_close (a, 20, 19, a, 0, 71, 71, 100.0f), 0);
}

/* A proposal row of 5 + S floats. */
static void
proposal (float *r, int s_rows, float l0, float l1, float start_y,
    float length, float x0, float slope)
{
  int i;

  r[0] = l0;
  r[1] = l1;
  r[2] = start_y;
  r[3] = x0;
  r[4] = length;
  for (i = 0; i < s_rows; i++)
    r[5 + i] = x0 + slope * (float) i;
}

static int
nms_lanes (const float *p, int s_rows, const float *scores, int n,
    float distance, int max_det, int64_t *keep)
{
  int n_keep = -1;

  CHECK_INT (cnms_nms_lanes (ctx, p, s_rows, scores, n, distance, max_det,
          keep, &n_keep), CNMS_OK);
  return n_keep;
}

static void
test_nms_hand (void)
{
  float p[4][5 + S72];
  const float scores[4] = { 0.9f, 0.8f, 0.7f, 0.9f };
  int64_t keep[4];
  int n;

  /* 0; 1 three pixels right of 0 over all rows; 2 far; 3 ties 0's score,
   * 0.5 px left of it, but only from row 60 (12 rows) */
  proposal (p[0], S72, 0, 1, 0.0f, 72.0f, 100.0f, 2.0f);
  proposal (p[1], S72, 0, 1, 0.0f, 72.0f, 103.0f, 2.0f);
  proposal (p[2], S72, 0, 1, 0.0f, 72.0f, 400.0f, -2.0f);
  proposal (p[3], S72, 0, 1, 60.0f / 71.0f, 12.0f, 99.5f, 2.0f);
  /* distance 15 (LaneATT's training value): 1 and 3 fall to 0 */
  n = nms_lanes (&p[0][0], S72, scores, 4, 15.0f, 0, keep);
  CHECK_INT (n, 2);
  CHECK_INT (keep[0], 0);
  CHECK_INT (keep[1], 2);
  /* distance 3: 1 is exactly 3 px off on average: not below, kept */
  n = nms_lanes (&p[0][0], S72, scores, 4, 3.0f, 0, keep);
  CHECK_INT (n, 3);
  CHECK_INT (keep[0], 0);
  CHECK_INT (keep[1], 1);
  CHECK_INT (keep[2], 2);
  /* the cap */
  n = nms_lanes (&p[0][0], S72, scores, 4, 3.0f, 2, keep);
  CHECK_INT (n, 2);
  /* a NaN score takes no part */
  {
    const float s2[4] = { NAN, 0.8f, 0.7f, 0.9f };
    n = nms_lanes (&p[0][0], S72, s2, 4, 15.0f, 0, keep);
    CHECK_INT (n, 2);
    CHECK_INT (keep[0], 3);
    CHECK_INT (keep[1], 2);
  }
  /* argument checks */
  {
    int nk;
    CHECK_INT (cnms_nms_lanes (ctx, &p[0][0], 1, scores, 4, 15.0f, 0, keep,
            &nk), CNMS_ERR_INVALID_ARG);
    CHECK_INT (cnms_nms_lanes (ctx, &p[0][0], S72, scores, 4, -1.0f, 0, keep,
            &nk), CNMS_ERR_INVALID_ARG);
    CHECK_INT (cnms_nms_lanes (ctx, &p[0][0], S72, scores, 4, NAN, 0, keep,
            &nk), CNMS_ERR_INVALID_ARG);
  }
}

/* The plain greedy walk over cnms_lane_close, every pair. */
static int
reference (const float *p, int s_rows, const float *scores, int n,
    float distance, int max_det, int64_t *keep)
{
  const size_t stride = 5 + (size_t) s_rows;
  int *order = malloc ((size_t) n * sizeof (int));
  int32_t *st = malloc ((size_t) n * sizeof (int32_t));
  int32_t *en = malloc ((size_t) n * sizeof (int32_t));
  char *removed = calloc ((size_t) n, 1);
  int m = 0, i, j, k = 0;

  for (i = 0; i < n; i++) {
    const float *r = p + stride * i;
    if (cnms_isfinite (scores[i])
        && cnms_lane_rows (r[2], r[4], s_rows - 1, &st[i], &en[i]))
      order[m++] = i;
  }
  for (i = 1; i < m; i++) {
    int v = order[i];
    for (j = i - 1; j >= 0 && (scores[order[j]] < scores[v]
            || (scores[order[j]] == scores[v] && order[j] > v)); j--)
      order[j + 1] = order[j];
    order[j + 1] = v;
  }
  for (i = 0; i < m && (max_det <= 0 || k < max_det); i++) {
    int a = order[i];
    if (removed[i])
      continue;
    keep[k++] = a;
    for (j = i + 1; j < m; j++) {
      int b = order[j];
      if (!removed[j] && cnms_lane_close (p + stride * a + 5, st[a], en[a],
              p + stride * b + 5, st[b], en[b], s_rows - 1, distance))
        removed[j] = 1;
    }
  }
  free (order);
  free (st);
  free (en);
  free (removed);
  return k;
}

/* LaneATT-like proposals: a few lanes curving to a vanishing point, each
 * with near-duplicates, and noise. */
static void
random_lanes (float *p, float *scores, int n, int s_rows)
{
  const size_t stride = 5 + (size_t) s_rows;
  const int n_lanes = 2 + (int) (rnd () % 5);
  float base[8], bend[8];
  int i, r;

  for (i = 0; i < n_lanes; i++) {
    base[i] = uni (-200, 840);
    bend[i] = uni (-0.02f, 0.02f);
  }
  for (i = 0; i < n; i++) {
    float *o = p + stride * i;
    const int l = (int) (rnd () % (unsigned) (n_lanes + 1));
    const float jitter = uni (-8, 8);
    const float sy = (float) (rnd () % (unsigned) s_rows) / (float) (s_rows
        - 1);

    o[0] = uni (-2, 2);
    o[1] = uni (-2, 2);
    o[2] = (rnd () % 4) ? (float) (rnd () % 6) / (float) (s_rows - 1) : sy;
    o[3] = 0;
    o[4] = (rnd () % 8) ? uni (0, (float) s_rows) : (float) (rnd () % 3) -
        1.0f;
    for (r = 0; r < s_rows; r++) {
      const float t = (float) r / (float) (s_rows - 1);
      o[5 + r] = l < n_lanes ? base[l] + (320.0f - base[l]) * t * 0.8f
          + bend[l] * (float) (r * r) + jitter : uni (0, 640);
    }
    scores[i] = (rnd () % 4) ? uni (0, 1) : (float) (rnd () % 8) / 8.0f;
    if (rnd () % 50 == 0)
      o[2] = NAN;
  }
}

static void
test_nms_random (void)
{
  static const int sizes[][2] = { {1000, 72}, {300, 72}, {64, 72},
  {200, 2}, {200, 3}, {500, 10}
  };
  static const float dists[] = { 15.0f, 50.0f, 3.0f, 0.0f };
  int c, it, mismatches = 0, total = 0;

  for (c = 0; c < 6; c++) {
    const int n = sizes[c][0], s_rows = sizes[c][1];
    float *p = malloc ((size_t) n * (5 + s_rows) * sizeof (float));
    float *sc = malloc ((size_t) n * sizeof (float));
    int64_t *k1 = malloc ((size_t) n * sizeof (int64_t));
    int64_t *k2 = malloc ((size_t) n * sizeof (int64_t));

    for (it = 0; it < 8; it++) {
      const float d = dists[it % 4];
      const int max_det = it == 5 ? 4 : 0;
      int n1, n2;

      random_lanes (p, sc, n, s_rows);
      n1 = nms_lanes (p, s_rows, sc, n, d, max_det, k1);
      n2 = reference (p, s_rows, sc, n, d, max_det, k2);
      total++;
      if (n1 != n2 || memcmp (k1, k2, (size_t) n1 * sizeof *k1) != 0) {
        mismatches++;
        fprintf (stderr, "n %d S %d distance %g: %d kept, the reference "
            "%d\n", n, s_rows, (double) d, n1, n2);
      }
    }
    free (p);
    free (sc);
    free (k1);
    free (k2);
  }
  CHECK_INT (mismatches, 0);
  CHECK_INT (total, 48);
}

static void
test_detect (void)
{
  /* S = 4 rows (n = 3), model 640x360 on a 1280x720 frame: gain 0.5, no
   * pad; row i at y = (3 - i) 360 / 3 */
  enum { S = 4, N = 4 };
  float t32[N][5 + S];
  uint16_t t16[N][5 + S];
  cnms_payloads pl;
  const cnms_det *d;
  cnms_tensor t;
  cnms_params p;
  int n, i;

  /* 0: rows 0 .. 2, x 100 110 120 (row 3: 700, past its end) */
  proposal (t32[0], S, 0.0f, 2.0f, 0.0f, 3.0f, 100.0f, 10.0f);
  t32[0][5 + 3] = 700.0f;
  /* 1: from row 2 (start_y 2/3), length 2: rows 2, 3; below its start x
   * 300 on row 1 (in the model: a point), -5 on row 0 (none) */
  proposal (t32[1], S, 0.0f, 1.0f, 2.0f / 3.0f, 2.0f, 0.0f, 0.0f);
  t32[1][5 + 0] = -5.0f;
  t32[1][5 + 1] = 300.0f;
  t32[1][5 + 2] = 310.0f;
  t32[1][5 + 3] = 320.0f;
  /* 2: not a candidate: score 1 / (1 + e^3) */
  proposal (t32[2], S, 3.0f, 0.0f, 0.0f, 4.0f, 500.0f, 0.0f);
  /* 3: 1 px right of 0: suppressed by it at distance 15 */
  proposal (t32[3], S, 0.0f, 1.5f, 0.0f, 3.0f, 101.0f, 10.0f);
  memset (&t, 0, sizeof t);
  t.data = t32;
  t.size = sizeof t32;
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = N;
  t.dims[2] = 5 + S;
  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.frame_width = 1280;
  p.frame_height = 720;
  p.lane_distance = 15.0f;
  n = -1;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 2);
  CHECK_INT (cnms_ctx_report (ctx)->candidates, 3);
  CHECK_INT (cnms_ctx_report (ctx)->kept, 2);
  CHECK_INT (cnms_ctx_report (ctx)->lanes_without_points, 0);
  CHECK_INT (cnms_ctx_report (ctx)->shape.layout, CNMS_LAYOUT_LANEATT);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_lane_rows, S);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_classes, 1);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_anchors, N);
  CHECK_INT (cnms_ctx_report (ctx)->shape.n_values, 5 + S);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_LANE);
  CHECK_INT (pl.n, 2);
  CHECK (pl.data != NULL);
  if (n == 2 && pl.data != NULL && pl.n == 2) {
    CHECK_INT (pl.records[0].n_points, S);
    CHECK_INT (pl.records[0].point_dims, 2);
    CHECK_INT (pl.records[1].n_points, S);
    CHECK_INT (pl.records[1].point_dims, 2);
    CHECK_INT (d[0].anchor, 0);
    CHECK_INT (d[1].anchor, 1);
    CHECK_INT (d[0].class_id, 0);
    CHECK (fabs (d[0].score - 1.0 / (1.0 + exp (-2.0))) < 1e-7);
    CHECK (fabs (d[1].score - 1.0 / (1.0 + exp (-1.0))) < 1e-7);
    /* lane 0: (200, 720) (220, 480) (240, 240), row 3 none */
    CHECK_FLOAT (payload_float (&pl, 0, 0), 200.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 1), 720.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 2), 220.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 3), 480.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 4), 240.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 5), 240.0f);
    CHECK (isnan (payload_float (&pl, 0, 6)));
    CHECK (isnan (payload_float (&pl, 0, 7)));
    CHECK_FLOAT (d[0].x1, 200.0f);
    CHECK_FLOAT (d[0].y1, 240.0f);
    CHECK_FLOAT (d[0].x2, 240.0f);
    CHECK_FLOAT (d[0].y2, 720.0f);
    /* lane 1: row 0 none (x < 0), row 1 (600, 480) by the extension, rows
     * 2 and 3 (620, 240) (640, 0) */
    CHECK (isnan (payload_float (&pl, 1, 0)));
    CHECK (isnan (payload_float (&pl, 1, 1)));
    CHECK_FLOAT (payload_float (&pl, 1, 2), 600.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 3), 480.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 4), 620.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 5), 240.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 6), 640.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 7), 0.0f);
    CHECK_FLOAT (d[1].x1, 600.0f);
    CHECK_FLOAT (d[1].y2, 480.0f);
  }
  /* distance 0.5: 3 is kept too (1 px off), between 0 and 1 by score */
  p.lane_distance = 0.5f;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 3);
  if (n == 3)
    CHECK_INT (d[1].anchor, 3);
  /* float16: the same values (all are halves) give the same lanes */
  {
    const cnms_det *d16;
    int n16 = -1;
    cnms_det first[3];

    memcpy (first, d, (size_t) n * sizeof *d);
    cnms_floats_to_halves (&t32[0][0], N * (5 + S), &t16[0][0]);
    t.data = t16;
    t.size = sizeof t16;
    t.dtype = CNMS_DTYPE_FLOAT16;
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d16,
            &n16), CNMS_OK);
    CHECK_INT (n16, 3);
    CHECK (n16 == 3 && memcmp (first, d16, sizeof first) == 0);
    t.data = t32;
    t.size = sizeof t32;
    t.dtype = CNMS_DTYPE_FLOAT32;
  }
  /* another call clears the points */
  {
    int64_t keep[N];
    const float sc[N] = { 1, 1, 1, 1 };
    int nk;
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_LANE);
    CHECK_INT (cnms_nms_lanes (ctx, &t32[0][0], S, sc, N, 15.0f, 0, keep,
            &nk), CNMS_OK);
    memset (&pl, 0x55, sizeof pl);
    cnms_ctx_payload (ctx, &pl);
    CHECK_INT (pl.head, CNMS_HEAD_NONE);
    CHECK (pl.data == NULL);
    CHECK_INT (pl.n, 0);
  }
  /* shapes: [1, N, 6] has one row only; prototypes are not a lane's; the
   * distance is finite and >= 0 */
  {
    cnms_tensor protos = t;
    int nn;
    t.dims[2] = 6;
    t.size = N * 6 * sizeof (float);
    p.lane_distance = 15.0f;
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &nn),
        CNMS_ERR_BAD_TENSOR);
    t.dims[2] = 5 + S;
    t.size = sizeof t32;
    CHECK_INT (cnms_detect (ctx, &t, &protos, CNMS_LAYOUT_LANEATT, &p, &d,
            &nn), CNMS_ERR_INVALID_ARG);
    p.lane_distance = -1.0f;
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &nn),
        CNMS_ERR_INVALID_ARG);
    p.lane_distance = NAN;
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &nn),
        CNMS_ERR_INVALID_ARG);
    /* 0: every lane apart (no mean distance is below 0) */
    p.lane_distance = 0.0f;
    CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &nn),
        CNMS_OK);
    CHECK_INT (nn, 3);
  }
  CHECK (strcmp (cnms_layout_name (CNMS_LAYOUT_LANEATT), "laneatt") == 0);
  for (i = 0; i < 1; i++)
    CHECK_FLOAT (cnms_lane_score (0.0f, 0.0f), 0.5f);
}

/* The lanes' rule: a lane NMS keeps with fewer than 2 points in the frame
 * is not returned; the lanes after it move up. S = 4 rows, model 640x360
 * on a 1280x720 frame (gain 0.5, no pad): rows 0 .. 3 at frame y 720,
 * 480, 240, 0; a model x past 640 lies outside the frame. Every pair of
 * lanes is far apart: NMS keeps all three, in score order. */
static void
test_lanes_without_points (void)
{
  enum { S = 4, N = 3 };
  float t32[N][5 + S];
  cnms_payloads pl;
  const cnms_report *r;
  const cnms_det *d;
  cnms_tensor t;
  cnms_params p;
  int n = -1;

  /* 0, kept first: rows 0 .. 3 at x 700 (frame x 1400): no point */
  proposal (t32[0], S, 0.0f, 3.0f, 0.0f, 4.0f, 700.0f, 0.0f);
  /* 1, kept second: rows 0 .. 2; x 400 on row 0 (800, 720), 650 on row 1
   * (frame x 1300, outside), -1 on row 2 (none): one point */
  proposal (t32[1], S, 0.0f, 2.0f, 0.0f, 3.0f, 0.0f, 0.0f);
  t32[1][5 + 0] = 400.0f;
  t32[1][5 + 1] = 650.0f;
  t32[1][5 + 2] = -1.0f;
  /* 2, kept third: rows 0 .. 2, x 100 110 120: three points */
  proposal (t32[2], S, 0.0f, 1.0f, 0.0f, 3.0f, 100.0f, 10.0f);
  memset (&t, 0, sizeof t);
  t.data = t32;
  t.size = sizeof t32;
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = N;
  t.dims[2] = 5 + S;
  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.frame_width = 1280;
  p.frame_height = 720;
  p.lane_distance = 15.0f;

  /* 0 and 1 left out: 2 alone, as record 0 */
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 1);
  r = cnms_ctx_report (ctx);
  CHECK_INT (r->candidates, 3);
  CHECK_INT (r->kept, 1);
  CHECK_INT (r->lanes_without_points, 2);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_LANE);
  CHECK_INT (pl.n, 1);
  if (n == 1 && pl.n == 1 && pl.data != NULL) {
    CHECK_INT (d[0].anchor, 2);
    CHECK_INT (d[0].class_id, 0);
    CHECK_FLOAT (d[0].score, cnms_lane_score (0.0f, 1.0f));
    CHECK_FLOAT (d[0].angle, 0.0f);
    CHECK_FLOAT (d[0].x1, 200.0f);
    CHECK_FLOAT (d[0].y1, 240.0f);
    CHECK_FLOAT (d[0].x2, 240.0f);
    CHECK_FLOAT (d[0].y2, 720.0f);
    CHECK_INT (pl.records[0].n_points, S);
    CHECK_INT (pl.records[0].point_dims, 2);
    CHECK_FLOAT (payload_float (&pl, 0, 0), 200.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 1), 720.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 2), 220.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 3), 480.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 4), 240.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 5), 240.0f);
    CHECK (isnan (payload_float (&pl, 0, 6)));
    CHECK (isnan (payload_float (&pl, 0, 7)));
  }

  /* max_detections 1: NMS keeps 0 alone, which has no point: nothing */
  p.max_detections = 1;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 0);
  CHECK_INT (cnms_ctx_report (ctx)->kept, 0);
  CHECK_INT (cnms_ctx_report (ctx)->lanes_without_points, 1);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_LANE);
  CHECK_INT (pl.n, 0);
  p.max_detections = 300;

  /* 1 with x 600 on row 1 (frame (1200, 480)): exactly two points, a
   * lane, returned first; 2 moves to record 1 */
  t32[1][5 + 1] = 600.0f;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 2);
  r = cnms_ctx_report (ctx);
  CHECK_INT (r->candidates, 3);
  CHECK_INT (r->kept, 2);
  CHECK_INT (r->lanes_without_points, 1);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_LANE);
  CHECK_INT (pl.n, 2);
  if (n == 2 && pl.n == 2 && pl.data != NULL) {
    CHECK_INT (d[0].anchor, 1);
    CHECK_INT (d[0].class_id, 0);
    CHECK_FLOAT (d[0].score, cnms_lane_score (0.0f, 2.0f));
    CHECK_FLOAT (d[0].angle, 0.0f);
    CHECK_FLOAT (d[0].x1, 800.0f);
    CHECK_FLOAT (d[0].y1, 480.0f);
    CHECK_FLOAT (d[0].x2, 1200.0f);
    CHECK_FLOAT (d[0].y2, 720.0f);
    CHECK_INT (pl.records[0].n_points, S);
    CHECK_FLOAT (payload_float (&pl, 0, 0), 800.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 1), 720.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 2), 1200.0f);
    CHECK_FLOAT (payload_float (&pl, 0, 3), 480.0f);
    CHECK (isnan (payload_float (&pl, 0, 4)));
    CHECK (isnan (payload_float (&pl, 0, 5)));
    CHECK (isnan (payload_float (&pl, 0, 6)));
    CHECK (isnan (payload_float (&pl, 0, 7)));
    CHECK_INT (d[1].anchor, 2);
    CHECK_FLOAT (d[1].score, cnms_lane_score (0.0f, 1.0f));
    CHECK_FLOAT (d[1].x1, 200.0f);
    CHECK_FLOAT (d[1].y1, 240.0f);
    CHECK_FLOAT (d[1].x2, 240.0f);
    CHECK_FLOAT (d[1].y2, 720.0f);
    CHECK_INT (pl.records[1].n_points, S);
    CHECK_FLOAT (payload_float (&pl, 1, 0), 200.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 1), 720.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 2), 220.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 3), 480.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 4), 240.0f);
    CHECK_FLOAT (payload_float (&pl, 1, 5), 240.0f);
    CHECK (isnan (payload_float (&pl, 1, 6)));
    CHECK (isnan (payload_float (&pl, 1, 7)));
  }
}

/* The edges of a lane's points, one lane that touches each: below its
 * start row the extension goes on while x lies in [0, model width], both
 * ends included (row 1 at x = 640 = the model width, row 0 at x = 0); a
 * row at model x 0 is a point; a point at frame x = the frame width (1280:
 * model 640 under gain 0.5) and at frame y = the frame height (720) is in
 * the frame. S = 4, model 640x360, frame 1280x720: row i at frame y
 * (3 - i) 240. */
static void
test_lane_point_edges (void)
{
  enum { S = 4 };
  float t32[1][5 + S];
  cnms_payloads pl;
  const cnms_det *d;
  cnms_tensor t;
  cnms_params p;
  int n = -1;

  /* rows 2 .. 3 (start_y 2/3, length 2), x 100 and 110 there; below the
   * start row x 640 (row 1) and 0 (row 0) */
  proposal (t32[0], S, 0.0f, 2.0f, 2.0f / 3.0f, 2.0f, 0.0f, 0.0f);
  t32[0][5 + 0] = 0.0f;
  t32[0][5 + 1] = 640.0f;
  t32[0][5 + 2] = 100.0f;
  t32[0][5 + 3] = 110.0f;
  memset (&t, 0, sizeof t);
  t.data = t32;
  t.size = sizeof t32;
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = 1;
  t.dims[2] = 5 + S;
  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.frame_width = 1280;
  p.frame_height = 720;
  p.letterbox = 0;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 1);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.head, CNMS_HEAD_LANE);
  if (n != 1 || pl.n != 1)
    return;
  CHECK_FLOAT (payload_float (&pl, 0, 0), 0.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 1), 720.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 2), 1280.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 3), 480.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 4), 200.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 5), 240.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 6), 220.0f);
  CHECK_FLOAT (payload_float (&pl, 0, 7), 0.0f);
  CHECK_FLOAT (d[0].x1, 0.0f);
  CHECK_FLOAT (d[0].y1, 0.0f);
  CHECK_FLOAT (d[0].x2, 1280.0f);
  CHECK_FLOAT (d[0].y2, 720.0f);
  /* a hair past the model width on row 1 ends the extension there: rows
   * 1 and 0 have no point */
  t32[0][5 + 1] = 640.0001f;
  CHECK_INT (cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_LANEATT, &p, &d, &n),
      CNMS_OK);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (n, 1);
  if (n == 1 && pl.n == 1) {
    CHECK (isnan (payload_float (&pl, 0, 0)));
    CHECK (isnan (payload_float (&pl, 0, 2)));
    CHECK_FLOAT (payload_float (&pl, 0, 4), 200.0f);
  }
}

/* cnms_lane_rect at hand-computed values: the rows, the x range of the
 * finite x widened by h = the float above fl (distance 9/16), each edge
 * one float further out; clamped to +-FLT_MAX; empty without rows,
 * without a finite x, or for a distance not above 0. */
static void
test_lane_rect (void)
{
  const float x[5] = { 10.0f, 20.0f, NAN, 30.0f, -INFINITY };
  const float big[4] = { CNMS_FLT_MAX, -CNMS_FLT_MAX, 3e38f, -3e38f };
  const float none[2] = { NAN, INFINITY };
  float r[4];

  /* distance 16: h = 9 + 2^-20; 10 - h = 1 - 2^-20 exactly, one float
   * below: 1 - 2^-20 - 2^-24; 30 + h rounds to 39, one float above:
   * 39 + 2^-18. Row 2's NaN and row 4's -inf are not in the range. */
  cnms_lane_rect (x, 0, 4, 4, 16.0f, r);
  CHECK_FLOAT (r[0], -0.5f);
  CHECK_FLOAT (r[1], 1.0f - 0x1p-20f - 0x1p-24f);
  CHECK_FLOAT (r[2], 4.5f);
  CHECK_FLOAT (r[3], 39.0f + 0x1p-18f);
  /* rows 1 .. 2 (the end clipped to n = 2): x 20 alone */
  cnms_lane_rect (x, 1, 9, 2, 16.0f, r);
  CHECK_FLOAT (r[0], 0.5f);
  CHECK_FLOAT (r[1], 11.0f - 0x1p-20f - 0x1p-20f);
  CHECK_FLOAT (r[2], 2.5f);
  CHECK_FLOAT (r[3], 29.0f + 0x1p-19f);
  /* the smallest distance: h = 2^-148 (fl (2^-149 9/16) = 2^-149), one
   * float past 20 either way */
  cnms_lane_rect (x, 1, 1, 4, 0x1p-149f, r);
  CHECK_FLOAT (r[1], 20.0f - 0x1p-19f);
  CHECK_FLOAT (r[3], 20.0f + 0x1p-19f);
  /* huge x and distance: clamped to +-FLT_MAX */
  cnms_lane_rect (big, 0, 1, 3, 1.0f, r);
  CHECK_FLOAT (r[1], -CNMS_FLT_MAX);
  CHECK_FLOAT (r[3], CNMS_FLT_MAX);
  cnms_lane_rect (big, 2, 2, 3, 1.0f, r);
  CHECK_FLOAT (r[1], cnms_next_down (3e38f));
  CHECK_FLOAT (r[3], cnms_next_up (3e38f));
  cnms_lane_rect (big, 2, 3, 3, CNMS_FLT_MAX, r);
  CHECK_FLOAT (r[1], -CNMS_FLT_MAX);
  CHECK_FLOAT (r[3], CNMS_FLT_MAX);
  /* empty: no row, no finite x, distance 0, negative or NaN */
  cnms_lane_rect (x, 3, 2, 4, 16.0f, r);
  CHECK (r[0] > r[2] && r[1] > r[3]);
  cnms_lane_rect (none, 0, 1, 1, 16.0f, r);
  CHECK (r[0] > r[2] && r[1] > r[3]);
  cnms_lane_rect (x, 0, 4, 4, 0.0f, r);
  CHECK (r[0] > r[2] && r[1] > r[3]);
  cnms_lane_rect (x, 0, 4, 4, -1.0f, r);
  CHECK (r[0] > r[2] && r[1] > r[3]);
  cnms_lane_rect (x, 0, 4, 4, NAN, r);
  CHECK (r[0] > r[2] && r[1] > r[3]);
  /* next_up / next_down at their edges */
  CHECK_FLOAT (cnms_next_up (0.0f), 0x1p-149f);
  CHECK_FLOAT (cnms_next_down (0.0f), -0x1p-149f);
  CHECK_FLOAT (cnms_next_up (-0x1p-149f), -0.0f);
  CHECK_FLOAT (cnms_next_up (1.0f), 1.0f + 0x1p-23f);
  CHECK_FLOAT (cnms_next_down (1.0f), 1.0f - 0x1p-24f);
  CHECK_FLOAT (cnms_next_up (-CNMS_FLT_MAX), -0x1.fffffcp127f);
  CHECK (isinf (cnms_next_up (CNMS_FLT_MAX)));
  CHECK_FLOAT (cnms_next_up (-INFINITY), -CNMS_FLT_MAX);
  CHECK (isinf (cnms_next_up (INFINITY)));
}

/* Lanes for test_lanes_index: set kind (0 .. 5) of n lanes of s_rows
 * rows at distance d; see test_lanes_index. */
static void
index_lanes (float *p, float *scores, int n, int s_rows, int kind, float d)
{
  /* the gaps between columns, in units of d: below, at and above what
   * can be close (1.0646 d) and what the rectangles keep apart (9/8 d) */
  static const float gaps[] = { 0.5f, 0.999f, 1.0f, 1.001f, 1.0645f,
    1.065f, 1.1249f, 1.125f, 1.1251f, 1.2f, 3.0f
  };
  const size_t stride = 5 + (size_t) s_rows;
  const float gap = gaps[rnd () % 11] * d;
  int i, r;

  for (i = 0; i < n; i++) {
    float *o = p + stride * i;
    const int col = (int) (rnd () % (unsigned) (n / 3 + 1));
    /* a column's lanes share x; a few are that x plus d, or one float
     * below it (mean distance exactly d: not close; just below: close) */
    const float x0 = (float) col * gap;
    const int twin = (int) (rnd () % 8);
    float shift = twin == 0 ? d : twin == 1 ? cnms_next_down (d) : 0.0f;

    o[0] = 0.0f;
    o[1] = 1.0f;
    o[2] = (rnd () % 3) ? 0.0f : (float) (rnd () % (unsigned) s_rows)
        / (float) (s_rows - 1);
    o[3] = 0.0f;
    o[4] = (rnd () % 4) ? (float) s_rows : uni (-1.0f, (float) s_rows + 2);
    for (r = 0; r < s_rows; r++) {
      float v = cnms_fadd (x0, shift);

      switch (kind) {
        case 1:
          /* slanted: a column's x range grows with its rows */
          v = cnms_fadd (v, (float) r * gap * 0.01f);
          break;
        case 2:
          /* NaN and infinities in some rows */
          if (rnd () % 16 == 0)
            v = (rnd () & 1) ? NAN : (rnd () & 1) ? INFINITY : -INFINITY;
          break;
        case 3:
          /* huge x: near +-FLT_MAX, or a column far out */
          if (col % 4 == 0)
            v = (col & 4) ? CNMS_FLT_MAX : -CNMS_FLT_MAX;
          else if (col % 4 == 1)
            v = cnms_fadd (3e38f, shift);
          else if (rnd () % 32 == 0)
            v = 1e30f;
          break;
        case 4:
          /* random x: most pairs far apart, a few close */
          v = (r == 0 || rnd () % 4) ? uni (-1000.0f, 1000.0f) : o[5 + r - 1];
          break;
        default:
          break;
      }
      o[5 + r] = v;
    }
    scores[i] = (rnd () % 4) ? uni (0, 1) : (float) (rnd () % 8) / 8.0f;
  }
}

/* The walk with the index (cnms_nms_lanes, SSE2 and AVX scans) against
 * the plain walk (reference) where the lanes' rectangles matter: columns
 * of lanes at gaps around the padding (0.5 .. 3 distances: at, just
 * below and just above what can be close and what the rectangles keep
 * apart), lanes at a mean distance of exactly the distance (kept) and one
 * float below it (suppressed), slanted lanes, NaN and infinite x in some
 * rows, x at +-FLT_MAX and 3e38, random x; distances 0, 2^-149, 1e-30,
 * 0.5, 50, 1e30, 3e38 and FLT_MAX; S from 2 to 2^20; below and above
 * the index's list size (320). */
static void
test_lanes_index (void)
{
  static const int shapes[][2] = { {600, 2}, {900, 3}, {700, 72},
  {250, 72}, {200, 1000}, {5, 1 << 20}
  };
  static const float dists[] = { 0.0f, 0x1p-149f, 1e-30f, 0.5f, 50.0f,
    1e30f, 3e38f, CNMS_FLT_MAX
  };
  int c, kind, di, avx, mismatches = 0, total = 0;

  for (c = 0; c < 6; c++) {
    const int n = shapes[c][0], s_rows = shapes[c][1];
    float *p = malloc ((size_t) n * (5 + (size_t) s_rows) * sizeof (float));
    float *sc = malloc ((size_t) n * sizeof (float));
    int64_t *k1 = malloc ((size_t) n * sizeof (int64_t));
    int64_t *k2 = malloc ((size_t) n * sizeof (int64_t));

    for (kind = 0; kind < 5; kind++) {
      for (di = 0; di < 8; di++) {
        /* the gaps scale with the distance (0: with 1) */
        const float d = dists[di];
        int n1, n2;

        index_lanes (p, sc, n, s_rows, kind, d > 0.0f && d < 1e30f ? d : 1.0f);
        n2 = reference (p, s_rows, sc, n, d, 0, k2);
        for (avx = 0; avx < 2; avx++) {
          cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, avx);
          n1 = nms_lanes (p, s_rows, sc, n, d, 0, k1);
          total++;
          if (n1 != n2 || memcmp (k1, k2, (size_t) n1 * sizeof *k1) != 0) {
            mismatches++;
            fprintf (stderr, "n %d S %d kind %d distance %g avx-off %d: %d "
                "kept, the reference %d\n", n, s_rows, kind, (double) d,
                avx, n1, n2);
          }
        }
        cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
      }
    }
    free (p);
    free (sc);
    free (k1);
    free (k2);
  }
  CHECK_INT (mismatches, 0);
  CHECK_INT (total, 480);
}

/* n lanes over all S72 rows, 200 model pixels apart (a slope of up to
 * 0.5 pixel a row, 2 pixels of jitter), in score order. */
static void
far_lanes (float *p, int n)
{
  int i, r;

  for (i = 0; i < n; i++) {
    const float slope = uni (-0.5f, 0.5f);
    proposal (p + (5 + S72) * (size_t) i, S72, 0.0f, 1.0f, 0.0f, 72.0f,
        200.0f * (float) i, slope);
    for (r = 0; r < S72; r++)
      p[(5 + S72) * (size_t) i + 5 + r] += uni (-2.0f, 2.0f);
  }
}

/* Far-apart lanes are kept apart by the index: N lanes 200 pixels apart
 * over the same 72 rows, distance 50, are all kept, and the walk hands
 * none of their pairs to cnms_lane_close (cnms_greedy_ws.tests); the
 * kept list of cnms_nms_lanes is every index in score order. 3000 lanes
 * first: an index of the rows alone hands it every pair, some more than
 * once (17994000 calls). */
static void
test_lanes_far (void)
{
  static const int sizes[] = { 3000, 30000 };
  float *p = malloc ((size_t) 30000 * (5 + S72) * sizeof (float));
  float *sc = malloc ((size_t) 30000 * sizeof (float));
  uint32_t *rows = malloc ((size_t) 30000 * sizeof (uint32_t));
  int32_t *kept = malloc ((size_t) 30000 * sizeof (int32_t));
  int64_t *keep = malloc ((size_t) 30000 * sizeof (int64_t));
  cnms_backend_ctx bctx;
  cnms_greedy_ws ws;
  cnms_buf *bufs[] = { CNMS_GREEDY_BUFS (&ws) };
  int s, i, b, n_kept;

  memset (&bctx, 0, sizeof bctx);
  memset (&ws, 0, sizeof ws);
  far_lanes (p, 30000);
  for (i = 0; i < 30000; i++) {
    rows[i] = (uint32_t) i;
    sc[i] = 1.0f - (float) i / 65536.0f;
  }
  for (s = 0; s < 2; s++) {
    const int n = sizes[s];
    cnms_box_src src;
    int ok;

    src.base = p;
    src.stride = 5 + S72;
    src.rows = rows;
    src.geom = CNMS_GEOM_LANE;
    src.angle_off = 0;
    src.n_strips = S72 - 1;
    n_kept = -1;
    CHECK_INT (cnms_cpu_greedy (&bctx, &ws, &src, NULL, 1, n, 50.0f, NULL,
            n, kept, &n_kept), CNMS_OK);
    CHECK_INT (n_kept, n);
    CHECK_INT (ws.tests, 0);
    ok = n_kept == n && ws.tests == 0;
    for (i = 0; i < n_kept && i < n; i++)
      ok = ok && kept[i] == i;
    CHECK (ok);
    /* the front end's call: the same list */
    n_kept = nms_lanes (p, S72, sc, n, 50.0f, 0, keep);
    CHECK_INT (n_kept, n);
    for (i = 0; i < n_kept && i < n; i++)
      ok = ok && keep[i] == i;
    CHECK (ok);
    /* an index that compares every pair would take minutes at 30000 */
    if (!ok)
      break;
  }
  for (b = 0; b < CNMS_GREEDY_N_BUFS; b++)
    cnms_buf_release (&bctx, bufs[b]);
  free (p);
  free (sc);
  free (rows);
  free (kept);
  free (keep);
}

int
main (void)
{
  test_rng_seed (&rng, 0x1a4e5u);
  if (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK)
    return 1;
  test_rows ();
  test_close ();
  test_nms_hand ();
  test_nms_random ();
  test_detect ();
  test_lanes_without_points ();
  test_lane_point_edges ();
  test_lane_rect ();
  test_lanes_index ();
  test_lanes_far ();
  cnms_ctx_free (ctx);
  return check_result ("lib-lanes");
}
