/* CPU exact greedy NMS with a spatial index.
 *
 * Greedy NMS walks the boxes in order and keeps box b unless an earlier
 * KEPT box a of its class (any class when agnostic) has
 * cnms_iou (a, b) > iou. Only whether such an a exists matters, so testing
 * b against any subset of the kept boxes that surely holds every such a
 * gives the plain walk's result bit for bit: same order, same ties, same
 * max_keep stop, the same cnms_iou on the same operands. Classes never
 * interact, so class-aware NMS walks each class on its own (on a grouped
 * copy, for locality) and merges the kept positions.
 *
 * The index. Per walk, a uniform grid over the boxes, cells of about a
 * mean box. A kept box is filed in every cell that [x1, x2] x [y1, y2]
 * touches, or, when that is too many cells, in a "big" chain that every
 * query reads. A query reads the cells of a rectangle that every possible
 * suppressor must reach into, then the big chain (or, for a rectangle over
 * most of the grid, the whole kept list). Each filed box is first tested
 * against that rectangle (4 at a time with SSE2, 8 with AVX), and only
 * then by the geometry's overlap rule (cnms_iou_above, or
 * cnms_obb_iou_above). Below LIST_MAX_BOXES boxes (or when no grid fits)
 * there is one cell.
 *
 * Oriented boxes walk the same index with each box's axis-aligned hull
 * (widened, cnms_obb_prepare) as its rectangle: their overlap rule is 0
 * unless the hulls meet (cnms_hulls_meet), so the query rectangle is b's
 * hull itself (no margin: step 3 below is for boxes), and step 1 holds
 * as it is. For iou >= 1/16 the rule is also 0 where
 * cnms_obb_may_exceed is: a cell's scan evaluates that bound on its boxes
 * whose hulls meet b's, 4 or 8 at a time, from the cell's own copy of
 * their cnms_obb values (obb_may_exceed in cpu_nms_index.h: the same
 * float operations, so the same answer), and asks the rule only of the
 * boxes it leaves.
 *
 * Lanes walk it with cnms_lane_rect as their rectangle: their rows by
 * their x range, widened by 9/16 of the distance. Two lanes that
 * cnms_lane_close calls close have rectangles that overlap with positive
 * area (cnms_math.h proves it), so the query rectangle is b's own and
 * step 1 holds as it is; far-apart lanes that share rows are never
 * compared. A lane with an empty rectangle (no row, no finite x in its
 * rows, distance 0) is close to no lane: kept, never filed.
 *
 * Why no suppressor is missed (u = 2^-24, the float rounding unit):
 * 1. cell (x) = clamp (floor ((x - origin) * scale), 0, cells - 1) is
 *    monotone (every step is, under round-to-nearest), so x < x' implies
 *    cell (x) <= cell (x'). Hence if [a.x1, a.x2] meets [lo, hi] (or, when
 *    lo > hi, a.x1 < hi < lo < a.x2), a is filed in a cell of the query's
 *    range [cell (min (lo, hi)), cell (hi)].
 * 2. cnms_iou > iou >= 0 needs inter > 0, so w = min (a.x2, b.x2) -
 *    max (a.x1, b.x1) > 0: a.x1 < b.x2 and a.x2 > b.x1, likewise in y.
 *    Boxes with x2 <= x1 or y2 <= y1 thus never suppress nor are
 *    suppressed, and are never filed. (lo, hi) = (b.x1, b.x2) is always a
 *    valid query.
 * 3. Tighter, for iou = t >= 2^-14 and a "regular" b (|coords| <= 2^40,
 *    float width and height >= 2^-40). Write fl () for rounding, w the
 *    exact min (a.x2, b.x2) - max (a.x1, b.x1), wb = b.x2 - b.x1 (exact),
 *    h, hb likewise, A, B the float areas (cnms_box_area), I =
 *    fl (fl (w) fl (h)), den = fl (fl (A + B) - I). Rounding is monotone,
 *    so fl (h) <= fl (hb) and I <= min (A, B); then A + B - I >=
 *    max (A, B) gives den >= B (1 - 2u) (1 - u). B >= 2^-80 and
 *    fl (I / den) > t make every quantity normal (relative error <= u),
 *    so I > t B (1 - 4u); with fl (w) fl (h) (1 + u) >= I and
 *    B >= fl (wb) fl (hb) (1 - u): fl (w) > t fl (wb) (1 - 6u), and
 *    w > t wb (1 - 9u). Hence a.x1 < b.x2 - t (1 - 9u) wb and a.x2 >
 *    b.x1 + t (1 - 9u) wb. The query takes the margin t (1 - 2^-10) wb,
 *    in double, rounded outward to float: the slack t wb 2^-10 exceeds
 *    the double rounding error 2^-53 (|coord| + wb) <= 2^-28.9 wb, as two
 *    distinct floats differ by at least 2^-24 of the larger magnitude.
 *    For t >= 0.5 the rectangle shrinks to about b's centre: one cell. */
#include <stdlib.h>

#include "cpu_nms_index.h"

/* Fewer boxes than this: no grid, the kept list is scanned whole. */
#define LIST_MAX_BOXES 320
/* At most this many cells per box. */
#define GRID_CELLS_PER_BOX 4

/* The grid for n boxes: cells of about a mean box (half of one where the
 * boxes pile up), at most GRID_CELLS_PER_BOX per box, or none for a few
 * boxes. Returns its number of cells. */
static int
plan_grid (grid *g, const float *boxes, int n, size_t cell_room)
{
  float ox = INFINITY, oy = INFINITY, mx = -INFINITY, my = -INFINITY;
  double sumw = 0, sumh = 0, ex, ey, mw, mh, d, cx, cy, cap;
  int j, m = 0, sub;

  g->last = -1;
  /* big, in ws->bigbuf, has room for all n */
  g->big.off = g->big.n = 0;
  g->big.cap = (n + 7) & ~7;
  g->list = 1;
  g->gx = g->gy = 1;
  g->cap0 = 8;
  if (n < LIST_MAX_BOXES)
    return 0;
  for (j = 0; j < n; j++) {
    const float *b = boxes + 4 * (size_t) j;
    if (!nonempty (b))
      continue;
    m++;
    ox = b[0] < ox ? b[0] : ox;
    oy = b[1] < oy ? b[1] : oy;
    mx = b[2] > mx ? b[2] : mx;
    my = b[3] > my ? b[3] : my;
    sumw += (double) b[2] - b[0];
    sumh += (double) b[3] - b[1];
  }
  ex = (double) mx - ox;
  ey = (double) my - oy;
  if (m < LIST_MAX_BOXES || !(ex > 0 && ey > 0 && ex * ey < 1e300))
    return 0;
  mw = sumw / m;
  mh = sumh / m;
  /* how many boxes cover a point on average */
  d = m * (mw / ex) * (mh / ey);
  sub = d >= 48 ? 2 : 1;
  cx = ex / mw * sub;
  cy = ey / mh * sub;
  cap = (double) GRID_CELLS_PER_BOX * m;
  /* no more than fit in cell_room: with cx, cy >= 1 and cx cy <= cap,
   * ceil (cx) ceil (cy) <= 3 cap + 1 */
  if (cell_room < 13)
    return 0;
  if (cap > (double) (cell_room - 1) / 3)
    cap = (double) (cell_room - 1) / 3;
  if (cap < 4)
    return 0;
  if (cx * cy > cap) {
    double f = sqrt (cx * cy / cap);
    cx /= f;
    cy /= f;
  }
  if (cx < 1) {
    cx = 1;
    cy = cy > cap ? cap : cy;
  }
  if (cy < 1) {
    cy = 1;
    cx = cx > cap ? cap : cx;
  }
  g->gx = cx > 32768 ? 32768 : (int) ceil (cx);
  g->gy = cy > 32768 ? 32768 : (int) ceil (cy);
  g->origin[0] = g->origin[2] = ox;
  g->origin[1] = g->origin[3] = oy;
  g->scale[0] = g->scale[2] = (float) (g->gx / ex);
  g->scale[1] = g->scale[3] = (float) (g->gy / ey);
  g->limit[0] = g->limit[2] = (float) (g->gx - 1);
  g->limit[1] = g->limit[3] = (float) (g->gy - 1);
#ifdef __SSE2__
  g->origin4 = _mm_loadu_ps (g->origin);
  g->scale4 = _mm_loadu_ps (g->scale);
  g->limit4 = _mm_loadu_ps (g->limit);
#endif
  /* a mean box touches about (sub + 1)^2 cells */
  g->max_cells = 4 * (sub + 1) * (sub + 1);
  g->list = 0;
  /* were all kept: boxes per cell, times 1.5 */
  d = 1.5 * m * (mw * g->scale[0] + 1) * (mh * g->scale[1] + 1)
      / ((double) g->gx * g->gy);
  g->cap0 = d < 8 ? 8 : d > 256 ? 256 : ((int32_t) d + 7) & ~7;
  return g->gx * g->gy;
}

#define WALK(name) name##_sse
#define WALK_SCAN scan_cell
#define WALK_TARGET
#include "cpu_nms_walk.h"
#undef WALK
#undef WALK_SCAN
#undef WALK_TARGET

#ifdef CNMS_HAVE_AVX_PATH
#define WALK(name) name##_avx
#define WALK_SCAN scan_cell_avx
#define WALK_TARGET __attribute__ ((target ("avx")))
#include "cpu_nms_walk.h"
#undef WALK
#undef WALK_SCAN
#undef WALK_TARGET
#endif

/* The walk's threshold, and the query margin the index derives from it
 * (see the top of this file; boxes only: an oriented suppressor's hull
 * meets b's, the query is b's hull). */
static void
set_iou (walk *w, float iou)
{
  w->iou = iou;
  w->margin = w->geom == CNMS_GEOM_BOX && iou >= CORE_MIN_IOU ?
      (double) iou * (1.0 - 0x1p-10) : 0;
}

/* Copies box j of src to slot at of gbox, with its area; an oriented box
 * is made ready into gobb[at], its hull goes to gbox and its position at
 * to garea; a lane (distance: the walk's) is made ready into glane[at],
 * its rectangle (cnms_lane_rect) goes to gbox and its position to
 * garea. */
static inline void
gather_box (const cnms_box_src *src, int j, float distance, float *gbox,
    float *garea, cnms_obb *gobb, cnms_lane_ref *glane, int32_t at)
{
  const float *r = src->base + src->stride * src->rows[j];
  float *g = gbox + 4 * (size_t) at;

  if (src->geom == CNMS_GEOM_LANE) {
    cnms_lane_ref *l = &glane[at];

    l->x = r + 5;
    if (!cnms_lane_rows (r[2], r[4], src->n_strips, &l->start, &l->end)) {
      l->start = 0;
      l->end = -1;
    }
    cnms_lane_rect (l->x, l->start, l->end, src->n_strips, distance, g);
    garea[at] = cnms_bits_float ((uint32_t) at);
    return;
  }
  if (src->geom == CNMS_GEOM_OBB) {
    cnms_obb_prepare (r[0], r[1], r[2], r[3], r[src->angle_off], &gobb[at],
        g);
    garea[at] = cnms_bits_float ((uint32_t) at);
    return;
  }
  g[0] = r[0];
  g[1] = r[1];
  g[2] = r[2];
  g[3] = r[3];
  garea[at] = cnms_box_area (r[0], r[1], r[2], r[3]);
}

cnms_status
cnms_cpu_greedy (cnms_backend_ctx *ctx, cnms_greedy_ws *ws,
    const cnms_box_src *src, const int32_t *classes, int n_classes, int k,
    float iou, const float *class_iou, int max_keep, int32_t *kept,
    int *n_kept)
{
  size_t n = k > 0 ? (size_t) k : 1;
  int32_t *start, *pos;
  float *gbox, *garea;
  cnms_obb *gobb;
  cnms_lane_ref *glane;
  uint8_t *flag;
  walk w;
  cnms_status (*run) (walk *w, const float *boxes, const float *areas,
      int n, int max_keep, int32_t *kept, int *n_kept);
  int aware = classes != NULL && n_classes > 1;
  int c, j, nk;
  cnms_status st;

  *n_kept = 0;
  ws->tests = 0;
  w.ctx = ctx;
  w.ws = ws;
  w.used = 0;
  w.may_grow = (size_t) k >= ws->grow_k;
  if (w.may_grow)
    ws->grow_k = (size_t) k;
  run = run_class_sse;
#ifdef CNMS_HAVE_AVX_PATH
  if (!ws->no_avx && __builtin_cpu_supports ("avx"))
    run = run_class_avx;
#endif
  w.geom = src->geom;
  w.na = src->geom == CNMS_GEOM_OBB ? CELL_ARRAYS_OBB : CELL_ARRAYS;
  /* one class: its own threshold, if it has one */
  if (classes != NULL && n_classes == 1 && class_iou != NULL)
    iou = class_iou[0];
  set_iou (&w, iou);
  st = cnms_buf_reserve (ctx, &ws->kbox, n * 4 * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->karea, n * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->klink, n * sizeof (int32_t));
  /* a first guess; the arena grows when an input needs more */
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->arena, (8 * n + 1024) * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->cells, (n / 4 + 64) * sizeof (cell));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->bigbuf, (size_t) w.na * ((n + 7)
            & ~(size_t) 7) * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->gbox, n * 4 * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->garea, n * sizeof (float));
  if (st == CNMS_OK && src->geom == CNMS_GEOM_OBB)
    st = cnms_buf_reserve (ctx, &ws->gobb, n * sizeof (cnms_obb));
  if (st == CNMS_OK && src->geom == CNMS_GEOM_LANE)
    st = cnms_buf_reserve (ctx, &ws->glane, n * sizeof (cnms_lane_ref));
  if (st == CNMS_OK && aware) {
    st = cnms_buf_reserve (ctx, &ws->gpos, n * sizeof (int32_t));
    if (st == CNMS_OK)
      st = cnms_buf_reserve (ctx, &ws->flag, n);
    /* room for the ids of cpu_nms's direct path (<= 2k + 256) too, so
     * that a warm context does not grow for another numbering */
    if (st == CNMS_OK)
      st = cnms_buf_reserve (ctx, &ws->start, ((size_t) n_classes > 2 * n +
              256 ? (size_t) n_classes + 1 : 2 * n + 257) * sizeof (int32_t));
  }
  if (st != CNMS_OK)
    return st;
  gbox = ws->gbox.p;
  garea = ws->garea.p;
  gobb = ws->gobb.p;
  glane = ws->glane.p;
  w.obbs = gobb;
  w.lanes = glane;
  w.n_strips = src->n_strips;
  if (!aware) {
    for (j = 0; j < k; j++)
      gather_box (src, j, w.iou, gbox, garea, gobb, glane, j);
    return run (&w, gbox, garea, k, max_keep, kept, n_kept);
  }

  /* Classes do not interact: each class's walk keeps what the joint walk
   * keeps of that class, so run them one by one on class-grouped copies
   * (stable: in order within a class) and merge by position. The joint
   * walk's max_keep stop takes the first max_keep of the merge. */
  start = ws->start.p;
  pos = ws->gpos.p;
  flag = ws->flag.p;
  memset (start, 0, ((size_t) n_classes + 1) * sizeof (int32_t));
  memset (flag, 0, (size_t) k);
  for (j = 0; j < k; j++)
    start[classes[j] + 1]++;
  for (c = 0; c < n_classes; c++)
    start[c + 1] += start[c];
  /* start[c] walks to the end of class c, which is start[c + 1] before */
  for (j = 0; j < k; j++) {
    int32_t at = start[classes[j]]++;

    gather_box (src, j, class_iou != NULL ? class_iou[classes[j]] : w.iou,
        gbox, garea, gobb, glane, at);
    pos[at] = j;
  }
  for (c = 0; c < n_classes; c++) {
    int32_t s = c == 0 ? 0 : start[c - 1], e = start[c];
    int i;

    if (e == s)
      continue;
    if (class_iou != NULL)
      set_iou (&w, class_iou[c]);
    /* kept is the local list's scratch: the merge below rewrites it */
    st = run (&w, gbox + 4 * (size_t) s, garea + s, e - s, max_keep, kept,
        &nk);
    if (st != CNMS_OK)
      return st;
    for (i = 0; i < nk; i++)
      flag[pos[s + kept[i]]] = 1;
  }
  for (j = 0, nk = 0; j < k && nk < max_keep; j++) {
    if (flag[j])
      kept[nk++] = j;
  }
  *n_kept = nk;
  return CNMS_OK;
}

static inline uint32_t
hash_class (int32_t c)
{
  /* Fibonacci hashing: consecutive ids spread over the table */
  return (uint32_t) c * 2654435769u;
}

int
cnms_cpu_dense_classes (const int32_t *classes, const uint32_t *order,
    int n, int32_t *dense, int32_t *table_keys, int32_t *table_vals,
    uint32_t table_mask)
{
  int i, n_dense = 0;
  uint32_t s;

  memset (table_vals, 0xff, ((size_t) table_mask + 1) * sizeof (int32_t));
  for (i = 0; i < n; i++) {
    int32_t c = classes[order[i]];
    /* top bits of the product are the well-mixed ones */
    s = (hash_class (c) >> 7) & table_mask;
    while (table_vals[s] >= 0 && table_keys[s] != c)
      s = (s + 1) & table_mask;
    if (table_vals[s] < 0) {
      table_keys[s] = c;
      table_vals[s] = n_dense++;
    }
    dense[i] = table_vals[s];
  }
  return n_dense;
}
