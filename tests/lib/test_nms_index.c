/* The CPU backend's indexed greedy NMS against the plain O(N*K) greedy
 * walk, kept here as a test-only reference: the exact kept index lists
 * must be equal, class-aware and agnostic, for layouts chosen to break a
 * spatial index (everything in one cell, boxes spanning every cell, edges
 * on cell borders and overlaps of one ulp, one huge box suppressing
 * thousands, coordinates far apart) and for seeded random cases, at
 * IoU thresholds 0 and 1, just above and below the index's own limits,
 * and just below the IoU of a real pair. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"
#include "cpu_priv.h"
#include "check.h"
#include "rng.h"

#define MAX_N 24000

static cnms_ctx *ctx;
static float boxes[MAX_N][4], scores[MAX_N];
static int32_t classes[MAX_N];
static int64_t got[MAX_N], want[MAX_N];
static uint64_t keys[MAX_N];
static float kbox[MAX_N][4], karea[MAX_N];
static int32_t kcls[MAX_N];
static int n_cases;

static test_rng rng;

TEST_RNG_SHORTHANDS (rng)

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

static int
finite_row (int i)
{
  return cnms_isfinite (scores[i]) && cnms_isfinite (boxes[i][0])
      && cnms_isfinite (boxes[i][1]) && cnms_isfinite (boxes[i][2])
      && cnms_isfinite (boxes[i][3]);
}

/* The plain greedy walk: every candidate against every kept box of its
 * class (all when agnostic), in (score desc, index asc) order. */
static int
reference (int n, float iou, int aware, int max_det)
{
  int m = 0, nk = 0, i, j;

  for (i = 0; i < n; i++) {
    if (finite_row (i))
      keys[m++] = cnms_sort_key (scores[i], (uint32_t) i);
  }
  qsort (keys, (size_t) m, sizeof keys[0], cmp_u64);
  for (j = 0; j < m && (max_det <= 0 || nk < max_det); j++) {
    int idx = (int) (uint32_t) keys[j];
    const float *b = boxes[idx];
    float area = cnms_box_area (b[0], b[1], b[2], b[3]);
    int sup = 0;

    for (i = 0; i < nk && !sup; i++) {
      if (aware && kcls[i] != classes[idx])
        continue;
      sup = cnms_iou (kbox[i], karea[i], b, area) > iou;
    }
    if (sup)
      continue;
    memcpy (kbox[nk], b, sizeof kbox[nk]);
    karea[nk] = area;
    kcls[nk] = classes[idx];
    want[nk++] = idx;
  }
  return nk;
}

/* cnms_nms against the reference, both modes. Returns the kept count of
 * the agnostic run. */
static int
compare (const char *what, int n, float iou, int max_det)
{
  int aware, n_agnostic = 0;

  for (aware = 0; aware < 2; aware++) {
    int n_got = -1, n_want, i, first = -1;
    cnms_status st;

    n_want = reference (n, iou, aware, max_det);
    st = cnms_nms (ctx, &boxes[0][0], scores, aware ? classes : NULL, n, iou,
        !aware, max_det, got, &n_got);
    for (i = 0; i < n_want && i < n_got && first < 0; i++) {
      if (got[i] != want[i])
        first = i;
    }
    n_cases++;
    CHECK (st == CNMS_OK && n_got == n_want && first < 0);
    if (st != CNMS_OK || n_got != n_want || first >= 0)
      fprintf (stderr, "  %s, %s, N=%d, iou=%a, max=%d: kept %d, want %d, "
          "first difference at %d\n", what, aware ? "aware" : "agnostic", n,
          (double) iou, max_det, n_got, n_want, first);
    if (!aware)
      n_agnostic = n_want;
  }
  return n_agnostic;
}

static const float ious[] = {
  0.0f, 0x1p-20f, 0x1p-14f, 0x1.0p-14f * 0.999f, 0.1f, 0.3f, 0.45f, 0.5f,
  0.7f, 0.9f, 0.99f, 1.0f,
};

#define N_IOUS ((int) (sizeof (ious) / sizeof (ious[0])))

static void
compare_ious (const char *what, int n)
{
  int t;

  for (t = 0; t < N_IOUS; t++)
    compare (what, n, ious[t], 0);
}

static void
set_box (int i, float x1, float y1, float x2, float y2, float s, int32_t c)
{
  boxes[i][0] = x1;
  boxes[i][1] = y1;
  boxes[i][2] = x2;
  boxes[i][3] = y2;
  scores[i] = s;
  classes[i] = c;
}

/* 3000 boxes piled on one spot: one cell holds every kept box. */
static void
test_one_cell (void)
{
  int i;

  test_rng_seed (&rng, 1);
  for (i = 0; i < 3000; i++) {
    float x = uni (100, 102), y = uni (100, 102);
    set_box (i, x, y, x + uni (1, 8), y + uni (1, 8), uni (0, 1),
        (int32_t) (rnd () % 3));
  }
  compare_ious ("one cell", 3000);
  /* every box the same: the first one suppresses all the others */
  for (i = 0; i < 2000; i++)
    set_box (i, 10, 20, 30, 40, (float) (rnd () % 7), (int32_t) (i % 2));
  CHECK_INT (compare ("identical", 2000, 0.5f, 0), 1);
  CHECK_INT (compare ("identical, iou 1", 2000, 1.0f, 0), 2000);
}

/* Small boxes make a fine grid; hundreds of boxes over the whole extent
 * (its big chain) and long strips over a whole row or column of cells
 * come in between them in score order. */
static void
test_spanning (void)
{
  int i, n = 0;

  test_rng_seed (&rng, 2);
  for (i = 0; i < 3000; i++) {
    float x = uni (0, 2000), y = uni (0, 2000);
    set_box (n++, x, y, x + uni (4, 40), y + uni (4, 40), uni (0, 1),
        (int32_t) (rnd () % 4));
  }
  for (i = 0; i < 200; i++)
    set_box (n++, uni (-5, 5), uni (-5, 5), uni (2000, 2050),
        uni (2000, 2050), uni (0, 1), (int32_t) (rnd () % 4));
  for (i = 0; i < 200; i++) {
    float x = uni (0, 2000), y = uni (0, 2000);
    if (i % 2)
      set_box (n++, x, -10, x + uni (4, 40), 2060, uni (0, 1),
          (int32_t) (rnd () % 4));
    else
      set_box (n++, -10, y, 2060, y + uni (4, 40), uni (0, 1),
          (int32_t) (rnd () % 4));
  }
  compare_ious ("spanning", n);
}

/* Edges on a lattice of 1/64 of the extent, where cell borders fall for
 * grids of 1, 2, 4 ... 64 cells: boxes that share an edge do not overlap;
 * copies moved by one ulp across the edge overlap and, at IoU 0,
 * suppress. */
static void
test_borders (void)
{
  int i, n = 0;

  test_rng_seed (&rng, 3);
  for (i = 0; i < 3000; i++) {
    float x = 1024.0f / 64 * (float) (rnd () % 64);
    float y = 1024.0f / 64 * (float) (rnd () % 64);
    float w = 1024.0f / 64 * (float) (1 + rnd () % 4);
    float h = 1024.0f / 64 * (float) (1 + rnd () % 4);

    switch (rnd () % 4) {
      case 0:
        x = nextafterf (x, -INFINITY);
        break;
      case 1:
        w = nextafterf (x + w, INFINITY) - x;
        break;
      case 2:
        y = nextafterf (y, INFINITY);
        break;
      default:
        break;
    }
    set_box (n++, x, y, x + w, y + h, (float) (rnd () % 50) / 50.0f,
        (int32_t) (rnd () % 2));
  }
  compare_ious ("borders", n);
  /* a row of boxes with gaps filled by later boxes that touch their right
   * neighbour and, every other one, overlap their left one by one ulp */
  n = 0;
  for (i = 0; i < 1000; i++) {
    float x = 20.0f * (float) i;
    set_box (n++, x, 0, x + 10.0f, 10.0f, 0.5f, 0);
    set_box (n++, (i % 2) ? x + 10.0f : nextafterf (x + 10.0f, 0.0f), 0,
        x + 20.0f, 10.0f, 0.25f, 0);
  }
  CHECK_INT (compare ("ulp row", n, 0.0f, 0), 1500);
  CHECK_INT (compare ("ulp row, iou 0.5", n, 0.5f, 0), 2000);
}

/* One huge box first: at IoU 0 it suppresses every box it overlaps,
 * thousands. */
static void
test_huge (void)
{
  int i, n = 0;

  test_rng_seed (&rng, 4);
  set_box (n++, -100, -100, 5000, 5000, 1.0f, 0);
  for (i = 0; i < 3000; i++) {
    float x = uni (-300, 5200), y = uni (-300, 5200);
    set_box (n++, x, y, x + uni (5, 60), y + uni (5, 60), uni (0, 0.99f), 0);
  }
  compare_ious ("huge", n);
  CHECK (compare ("huge, iou 0", n, 0.0f, 0) < 600);
  /* the same over coordinates up to 60000 and negative ones */
  n = 0;
  set_box (n++, -60000, -60000, 60000, 60000, 1.0f, 0);
  for (i = 0; i < 3000; i++) {
    float x = uni (-60000, 60000), y = uni (-60000, 60000);
    set_box (n++, x, y, x + uni (100, 3000), y + uni (100, 3000),
        uni (0, 0.99f), 0);
  }
  compare_ious ("huge, 60000", n);
}

/* Pairs where the IoU bound that shrinks a query is tight: a kept box a
 * inside a later box b, flush with one of b's edges, spanning b in the
 * other axis, so that IoU = w_a / w_b; w_a is the least float width with
 * cnms_iou > t. Each such b must be suppressed. 400 pairs per threshold,
 * packed so that the grid is fine. */
static void
test_tight (void)
{
  static const float ts[] = { 0x1p-14f, 0.1f, 0.45f, 0.5f, 0.7f, 0.999f };
  int ti, i;

  for (ti = 0; ti < (int) (sizeof (ts) / sizeof (ts[0])); ti++) {
    float t = ts[ti];
    int n = 0, n_kept;

    test_rng_seed (&rng, 7 + (uint64_t) ti);
    for (i = 0; i < 400; i++) {
      float x = 300.0f * (float) (i % 20) + uni (0, 1);
      float y = 300.0f * (float) (i / 20) + uni (0, 1);
      float wb = uni (20, 250), hb = uni (20, 250);
      float b[4] = { x, y, x + wb, y + hb }, a[4];
      int axis = (int) (rnd () % 2), side = (int) (rnd () % 2);
      float *lo = &a[axis], *hi = &a[axis + 2];
      float len = axis ? hb : wb, area_b, f;

      memcpy (a, b, sizeof a);
      area_b = cnms_box_area (b[0], b[1], b[2], b[3]);
      /* from below t * len, one float at a time */
      for (f = (float) (t * len * 0.999); ; f = nextafterf (f, INFINITY)) {
        if (side)
          *lo = b[axis + 2] - f;
        else
          *hi = b[axis] + f;
        if (cnms_iou (a, cnms_box_area (a[0], a[1], a[2], a[3]), b,
                area_b) > t)
          break;
      }
      set_box (n++, a[0], a[1], a[2], a[3], 0.9f, (int32_t) (i % 3));
      set_box (n++, b[0], b[1], b[2], b[3], 0.8f, (int32_t) (i % 3));
    }
    n_kept = compare ("tight", n, t, 0);
    CHECK_INT (n_kept, 400);
  }
}

/* Degenerate and far-apart input: zero-area and inverted boxes, NaN and
 * Inf rows, sizes from 1e-30 to 1e30, tied scores. */
static void
test_degenerate (void)
{
  int i, n = 0;

  test_rng_seed (&rng, 5);
  for (i = 0; i < 3000; i++) {
    float x = uni (0, 500), y = uni (0, 500), w = uni (1, 50), h = uni (1, 50);
    float s = (float) (rnd () % 8) / 8.0f;

    switch (rnd () % 12) {
      case 0:
        w = 0;
        break;
      case 1:
        h = -h;
        break;
      case 2:
        s = NAN;
        break;
      case 3:
        x = (rnd () % 2) ? INFINITY : NAN;
        break;
      case 4:
        x *= 1e30f;
        w *= 1e30f;
        break;
      case 5:
        w *= 1e-30f;
        h *= 1e-30f;
        break;
      case 6:
        x = -x;
        y = -y;
        break;
      default:
        break;
    }
    set_box (n++, x, y, x + w, y + h, s, (int32_t) (rnd () % 5) * 1000 - 7);
  }
  compare_ious ("degenerate", n);
  compare ("degenerate, max 10", n, 0.5f, 10);
  compare ("degenerate, max 1000", n, 0.3f, 1000);
}

/* Random layouts: sizes, densities, class counts and coordinate scales
 * vary; the thresholds include one just below the IoU of a random
 * overlapping pair, so that pair suppresses by the smallest margin. */
static void
test_random (void)
{
  static const float scales[] = { 1.0f, 1920.0f, 60000.0f };
  int r;

  for (r = 0; r < 100; r++) {
    int n, i, n_cls, ties = r % 4 == 0;
    float scale = scales[r % 3], off = (r % 5 == 0) ? -scale / 2 : 0;
    float sz, t;

    test_rng_seed (&rng, 1000 + (uint64_t) r);
    n = 1 + (int) (rnd () % 4000);
    n_cls = 1 + (int) (rnd () % 100);
    sz = scale * uni (0.002f, 0.3f);
    for (i = 0; i < n; i++) {
      float x = off + uni (0, scale), y = off + uni (0, scale);
      float w = (r % 2) ? uni (0.1f, 1) * sz : sz * expf (uni (-4, 1));
      float h = (r % 2) ? uni (0.1f, 1) * sz : sz * expf (uni (-4, 1));
      set_box (i, x, y, x + w, y + h, ties ? (float) (rnd () % 16) : uni (0,
              1), (int32_t) (rnd () % (uint32_t) n_cls));
    }
    for (t = 0, i = 0; i < 200 && t == 0; i++) {
      int a = (int) (rnd () % (uint32_t) n), b = (int) (rnd () % (uint32_t) n);
      t = cnms_iou (boxes[a], cnms_box_area (boxes[a][0], boxes[a][1],
              boxes[a][2], boxes[a][3]), boxes[b], cnms_box_area (boxes[b][0],
              boxes[b][1], boxes[b][2], boxes[b][3]));
    }
    compare ("random", n, ious[r % N_IOUS], (r % 7 == 0) ? 1 + n / 10 : 0);
    compare ("random, pair", n, nextafterf (t, 0.0f), 0);
  }
}

/* 24000 boxes in the bench's dense field, then the same call again and a
 * smaller one: nothing more is allocated. Then a context warmed on a
 * large input that needed no index room gets a smaller one that needs
 * much: it may not grow, and files what does not fit in the big cell. */
static void
test_dense_and_warm (void)
{
  uint64_t allocs;
  size_t host, host2;
  int i, n = 24000;

  test_rng_seed (&rng, 6);
  for (i = 0; i < n; i++) {
    float x = uni (0, 1920), y = uni (0, 1080);
    float w = uni (8, 258), h = uni (8, 258);
    set_box (i, x - w / 2, y - h / 2, x + w / 2, y + h / 2, uni (0, 1),
        (int32_t) (rnd () % 80));
  }
  compare ("dense", n, 0.5f, 0);
  compare ("dense, 0.7", n, 0.7f, 0);
  allocs = cnms_ctx_alloc_count (ctx);
  cnms_ctx_memory (ctx, &host, NULL, NULL);
  compare ("dense again", n, 0.5f, 0);
  compare ("dense, smaller", n / 3, 0.5f, 0);
  CHECK_INT (cnms_ctx_alloc_count (ctx), allocs);
  cnms_ctx_memory (ctx, &host2, NULL, NULL);
  CHECK_INT (host2, host);

  cnms_ctx_free (ctx);
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  for (i = 0; i < n; i++)
    set_box (i, 10, 10, 20, 20, 0.5f, (int32_t) (i % 3));
  CHECK_INT (compare ("identical, large", n, 0.5f, 0), 1);
  allocs = cnms_ctx_alloc_count (ctx);
  for (i = 0; i < n / 3; i++) {
    float x = uni (0, 1920), y = uni (0, 1080);
    float w = uni (8, 258), h = uni (8, 258);
    set_box (i, x - w / 2, y - h / 2, x + w / 2, y + h / 2, uni (0, 1),
        (int32_t) (rnd () % 3));
  }
  compare ("no room", n / 3, 0.9f, 0);
  compare ("no room, 0.5", n / 3, 0.5f, 0);
  CHECK_INT (cnms_ctx_alloc_count (ctx), allocs);
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  test_one_cell ();
  test_spanning ();
  test_borders ();
  test_huge ();
  test_tight ();
  test_degenerate ();
  test_random ();
  test_dense_and_warm ();
  /* the SSE2 scan, where the above took the AVX one */
  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 1);
  test_tight ();
  test_random ();
  printf ("test-nms-index: %d cases compared with the plain greedy walk\n",
      n_cases);
  cnms_ctx_free (ctx);
  return check_result ("test-nms-index");
}
