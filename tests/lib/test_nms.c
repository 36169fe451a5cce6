/* Plain NMS (cnms_nms) on the CPU backend, with hand-computed keep lists. */
#include <math.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"
#include "check.h"

#define MAX_BOXES 16

static cnms_ctx *ctx;

/* Runs cnms_nms and compares the keep list with want[0..n_want). */
static void
expect_keep (const char *what, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int agnostic, int max_det,
    const int64_t *want, int n_want)
{
  int64_t keep[MAX_BOXES];
  int n_keep = -1, i;
  cnms_status st;

  st = cnms_nms (ctx, boxes, scores, classes, n, iou, agnostic, max_det,
      keep, &n_keep);
  CHECK_INT (st, CNMS_OK);
  CHECK_INT (n_keep, n_want);
  if (n_keep != n_want || st != CNMS_OK) {
    fprintf (stderr, "  in %s\n", what);
    return;
  }
  for (i = 0; i < n_want; i++)
    CHECK_INT (keep[i], want[i]);
}

/* Six boxes exercising: suppression by a kept box, IoU exactly 0.5 (kept),
 * a duplicate, and an order that differs from the index order. */
static void
test_six_boxes (void)
{
  static const float boxes[6][4] = {
    {0, 0, 10, 10},             /* 0: s .90 */
    {1, 1, 11, 11},             /* 1: IoU with 0 = 81/119 -> suppressed */
    {20, 20, 30, 30},           /* 2: kept */
    {0, 0, 10, 5},              /* 3: IoU with 0 = 50/100 = 0.5 -> kept */
    {25, 25, 35, 35},           /* 4: top score; IoU with 2 = 25/175 */
    {20, 20, 30, 30},           /* 5: duplicate of 2 -> suppressed */
  };
  static const float scores[6] = { 0.9f, 0.8f, 0.85f, 0.7f, 0.95f, 0.6f };
  static const int64_t want[] = { 4, 0, 2, 3 };
  static const int64_t want_top2[] = { 4, 0 };

  expect_keep ("six boxes", &boxes[0][0], scores, NULL, 6, 0.5f, 0, 0,
      want, 4);
  expect_keep ("six boxes, max 2", &boxes[0][0], scores, NULL, 6, 0.5f, 0,
      2, want_top2, 2);
}

/* Greedy, not pairwise: a suppressed box suppresses nothing. */
static void
test_chain (void)
{
  static const float boxes[3][4] = {
    {0, 0, 10, 10}, {5, 0, 15, 10}, {10, 0, 20, 10},
  };
  static const float scores[3] = { 0.9f, 0.8f, 0.7f };
  static const int64_t want[] = { 0, 2 };

  /* IoU(0,1) = IoU(1,2) = 50/150, IoU(0,2) = 0 */
  expect_keep ("chain", &boxes[0][0], scores, NULL, 3, 0.3f, 0, 0, want, 2);
}

static void
test_ties (void)
{
  static const float boxes[5][4] = {
    {50, 50, 60, 60}, {0, 0, 10, 10}, {0, 0, 10, 10}, {100, 100, 110, 110},
    {0, 0, 10, 10},
  };
  static const float scores[5] = { 0.5f, 0.5f, 0.5f, 0.5f, 0.6f };
  static const int64_t want4[] = { 0, 1, 3 };
  static const int64_t want5[] = { 4, 0, 3 };
  static const float zb[2][4] = { {0, 0, 10, 10}, {20, 0, 30, 10} };
  static const float zs[2] = { -0.0f, 0.0f };
  static const int64_t wantz[] = { 0, 1 };
  static const float rb[2][4] = { {1, 1, 11, 11}, {0, 0, 10, 10} };
  static const float rs[2] = { 0.5f, 0.5f };
  static const int64_t wantr[] = { 0 };

  /* equal scores: the lower index goes first and wins */
  expect_keep ("ties", &boxes[0][0], scores, NULL, 4, 0.5f, 0, 0, want4, 3);
  expect_keep ("ties + top", &boxes[0][0], scores, NULL, 5, 0.5f, 0, 0,
      want5, 3);
  expect_keep ("tie pair", &rb[0][0], rs, NULL, 2, 0.5f, 0, 0, wantr, 1);
  /* -0.0 and +0.0 are one score */
  expect_keep ("signed zero", &zb[0][0], zs, NULL, 2, 0.5f, 0, 0, wantz, 2);
}

static void
test_classes (void)
{
  static const float boxes[4][4] = {
    {0, 0, 10, 10}, {0, 0, 10, 10}, {1, 0, 10, 10}, {0, 1, 10, 10},
  };
  static const float scores[4] = { 0.9f, 0.8f, 0.7f, 0.6f };
  /* arbitrary ids, not dense */
  static const int32_t classes[4] = { 7, -3, 7, 1000000 };
  static const int64_t aware[] = { 0, 1, 3 };
  static const int64_t agnostic[] = { 0 };

  expect_keep ("class-aware", &boxes[0][0], scores, classes, 4, 0.5f, 0, 0,
      aware, 3);
  expect_keep ("class-agnostic", &boxes[0][0], scores, classes, 4, 0.5f, 1,
      0, agnostic, 1);
  expect_keep ("no classes", &boxes[0][0], scores, NULL, 4, 0.5f, 0, 0,
      agnostic, 1);
}

/* IoU exactly equal to the threshold does not suppress. */
static void
test_threshold_exact (void)
{
  static const float boxes[2][4] = { {0, 0, 4, 4}, {0, 0, 4, 1} };
  static const float scores[2] = { 0.9f, 0.8f };
  static const int64_t both[] = { 0, 1 };
  static const int64_t first[] = { 0 };
  float a0 = cnms_box_area (0, 0, 4, 4), a1 = cnms_box_area (0, 0, 4, 1);

  CHECK_FLOAT (cnms_iou (boxes[0], a0, boxes[1], a1), 0.25f);
  expect_keep ("iou == thr", &boxes[0][0], scores, NULL, 2, 0.25f, 0, 0,
      both, 2);
  expect_keep ("iou > thr", &boxes[0][0], scores, NULL, 2,
      nextafterf (0.25f, 0.0f), 0, 0, first, 1);
}

/* Zero-area boxes take part and are never suppressed; non-finite input
 * takes no part. */
static void
test_degenerate (void)
{
  float boxes[5][4] = {
    {0, 0, 10, 10}, {5, 5, 5, 5}, {0, 0, 10, 10}, {0, 0, 10, 10},
    {0, 0, 0, 10},
  };
  float scores[5] = { 0.5f, 0.9f, 0.7f, 0.8f, 0.1f };
  static const int64_t want[] = { 1, 0, 4 };

  scores[2] = NAN;
  boxes[3][2] = INFINITY;
  expect_keep ("degenerate", &boxes[0][0], scores, NULL, 5, 0.5f, 0, 0,
      want, 3);
  /* the denominator 0 case of two empty boxes */
  CHECK_FLOAT (cnms_iou (boxes[1], 0.0f, boxes[1], 0.0f), 0.0f);
}

static void
test_errors_and_allocs (void)
{
  static const float boxes[2][4] = { {0, 0, 4, 4}, {0, 0, 4, 1} };
  static const float scores[2] = { 0.9f, 0.8f };
  int64_t keep[2];
  int n_keep, i;
  uint64_t allocs;

  CHECK_INT (cnms_nms (ctx, &boxes[0][0], scores, NULL, 2, 1.5f, 0, 0, keep,
          &n_keep), CNMS_ERR_INVALID_ARG);
  CHECK (strlen (cnms_ctx_error (ctx)) > 0);
  CHECK_INT (cnms_nms (ctx, &boxes[0][0], scores, NULL, -1, 0.5f, 0, 0, keep,
          &n_keep), CNMS_ERR_INVALID_ARG);
  CHECK_INT (cnms_nms (ctx, NULL, scores, NULL, 2, 0.5f, 0, 0, keep,
          &n_keep), CNMS_ERR_INVALID_ARG);
  CHECK_INT (cnms_nms (ctx, NULL, NULL, NULL, 0, 0.5f, 0, 0, NULL, &n_keep),
      CNMS_OK);
  CHECK_INT (n_keep, 0);

  /* warm: the buffers already fit, nothing more is allocated */
  CHECK_INT (cnms_nms (ctx, &boxes[0][0], scores, NULL, 2, 0.5f, 0, 0, keep,
          &n_keep), CNMS_OK);
  allocs = cnms_ctx_alloc_count (ctx);
  CHECK (allocs > 0);
  for (i = 0; i < 100; i++)
    cnms_nms (ctx, &boxes[0][0], scores, NULL, 2, 0.5f, 0, 0, keep, &n_keep);
  CHECK_INT (cnms_ctx_alloc_count (ctx), allocs);
}

int
main (void)
{
  size_t host;

  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  CHECK_INT (cnms_ctx_backend (ctx), CNMS_BACKEND_CPU);
  test_six_boxes ();
  test_chain ();
  test_ties ();
  test_classes ();
  test_threshold_exact ();
  test_degenerate ();
  test_errors_and_allocs ();
  cnms_ctx_memory (ctx, &host, NULL, NULL);
  CHECK (host > 0);
  cnms_ctx_free (ctx);
  return check_result ("test-nms");
}
