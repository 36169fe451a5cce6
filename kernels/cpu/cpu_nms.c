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
 * against that rectangle (4 at a time with SSE2), and only then with
 * cnms_iou. Below LIST_MAX_BOXES boxes (or when no grid fits) there is
 * one cell.
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
#include <math.h>
#include <stdlib.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CNMS_HAVE_AVX_PATH 1
#endif

#include "cpu_priv.h"

/* A cell's kept boxes: a block of the arena holding cap boxes as five
 * arrays, x1 y1 x2 y2 area, so that 4 (SSE2) or 8 (AVX) are tested at a
 * time. A full block
 * moves to one twice as large: the cell stays contiguous. */
typedef struct cell_s {
  int32_t off;                  /* first float of the block in the arena */
  int32_t n, cap;               /* boxes held, room (a multiple of 8) */
} cell;

typedef struct {
#ifdef __SSE2__
  __m128 origin4, scale4, limit4;       /* origin, scale, limit as below */
#endif
  float origin[4];              /* least x1, y1, x1, y1 */
  float scale[4];               /* cells per unit of x, y, x, y */
  float limit[4];               /* last cell of x, y, x, y */
  int32_t gx, gy;               /* cells per axis */
  int32_t max_cells;            /* a box over more cells goes to big */
  int32_t last;                 /* last kept box that can overlap (klink) */
  int32_t list;                 /* no grid: big is the one cell */
  int32_t cap0;                 /* a cell's first room: what most need */
  cell big;                     /* the boxes filed nowhere else */
} grid;

typedef struct probe probe;
typedef struct cell_s cell_t;

/* One walk: what every class's run shares. */
typedef struct {
  cnms_backend_ctx *ctx;
  cnms_greedy_ws *ws;
  double margin;                /* t (1 - 2^-10), or 0: no shrinking */
  float iou;
  int32_t cap0;                 /* the grid's cap0 */
  int may_grow;                 /* the arena may grow (see grow_cell) */
  /* scan_cell, or scan_cell_avx where the CPU has AVX */
  int (*scan) (const float *arena, const cell_t *c, const probe *p);
  size_t used;                  /* floats of the arena in use */
} walk;

struct probe {
  const float *kbox, *karea;
  const float *b;
  float area, iou;
  const float *q;
};

/* Fewer boxes than this: no grid, the kept list is scanned whole. */
#define LIST_MAX_BOXES 320
/* At most this many cells per box. */
#define GRID_CELLS_PER_BOX 4
#define CORE_MIN_IOU 0x1p-14f
#define CORE_MAX_COORD 0x1p40f
#define CORE_MIN_SIZE 0x1p-40f

int cnms_cpu_no_avx;

cnms_status
cnms_buf_grow (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes)
{
  void *p;

  if (b->cap >= bytes)
    return CNMS_OK;
  if (bytes < 2 * b->cap)
    bytes = 2 * b->cap;
  bytes = (bytes + 4095) & ~(size_t) 4095;
  p = realloc (b->p, bytes);
  if (p == NULL)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "cannot allocate %zu bytes of host memory", bytes);
  ctx->host_bytes += bytes - b->cap;
  b->p = p;
  b->cap = bytes;
  ctx->alloc_count++;
  return CNMS_OK;
}

static inline int
nonempty (const float *b)
{
  return b[0] < b[2] && b[1] < b[3];
}

/* The cells of v = (x1, y1, x2, y2) on the grid's axes: for each,
 * clamp (floor ((v - origin) * scale), 0, cells - 1), monotone in v (each
 * step is; NaN never occurs, and would give cell 0). */
static inline void
cells_of (const grid *g, float v0, float v1, float v2, float v3, int32_t *c)
{
#ifdef __SSE2__
  __m128 t = _mm_mul_ps (_mm_sub_ps (_mm_setr_ps (v0, v1, v2, v3),
          g->origin4), g->scale4);

  t = _mm_min_ps (_mm_max_ps (t, _mm_setzero_ps ()), g->limit4);
  _mm_storeu_si128 ((__m128i *) c, _mm_cvttps_epi32 (t));
#else
  const float v[4] = { v0, v1, v2, v3 };
  int i;

  for (i = 0; i < 4; i++) {
    float t = (v[i] - g->origin[i]) * g->scale[i];
    c[i] = !(t > 0.0f) ? 0 : t >= g->limit[i] ? (int32_t) g->limit[i]
        : (int32_t) t;
  }
#endif
}

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

/* The float next to f towards -inf / +inf (f finite). */
static inline float
float_below (float f)
{
  uint32_t u = cnms_float_bits (f);

  if (f == 0.0f)
    return -0x1p-149f;
  return cnms_bits_float ((u & 0x80000000u) ? u + 1 : u - 1);
}

static inline float
float_above (float f)
{
  uint32_t u = cnms_float_bits (f);

  if (f == 0.0f)
    return 0x1p-149f;
  return cnms_bits_float ((u & 0x80000000u) ? u - 1 : u + 1);
}

/* d rounded down / up to a float (|d| far below FLT_MAX). */
static inline float
float_down (double d)
{
  float f = (float) d;
  return (double) f > d ? float_below (f) : f;
}

static inline float
float_up (double d)
{
  float f = (float) d;
  return (double) f < d ? float_above (f) : f;
}

/* q = (lo_x, lo_y, hi_x, hi_y): every kept a that can suppress b has
 * a.x2 > lo_x, a.x1 < hi_x, a.y2 > lo_y, a.y1 < hi_y (steps 2 and 3 of
 * the comment at the top). */
static inline void
query_rect (const float *b, double margin, float *q)
{
  float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];

  if (margin > 0 && fabsf (b0) <= CORE_MAX_COORD && fabsf (b1) <= CORE_MAX_COORD
      && fabsf (b2) <= CORE_MAX_COORD && fabsf (b3) <= CORE_MAX_COORD
      && b2 - b0 >= CORE_MIN_SIZE && b3 - b1 >= CORE_MIN_SIZE) {
    double mw = margin * ((double) b2 - b0);
    double mh = margin * ((double) b3 - b1);
    b0 = float_down (b0 + mw);
    b1 = float_down (b1 + mh);
    b2 = float_up (b2 - mw);
    b3 = float_up (b3 - mh);
  }
  q[0] = b0;
  q[1] = b1;
  q[2] = b2;
  q[3] = b3;
}

#ifdef __SSE2__
/* Lanes with cnms_iou (lane box, lane area; p->b, p->area) > iou:
 * cnms_iou's operations, in its order, on each lane (cnms_fmin (a, b) =
 * b < a ? b : a is _mm_min_ps (b, a); cnms_fmax (a, b) = a < b ? b : a
 * is _mm_max_ps (b, a); the kept box is cnms_iou's a). */
static inline unsigned
iou_above (__m128 ax1, __m128 ay1, __m128 ax2, __m128 ay2, __m128 aar,
    const probe *p)
{
  const __m128 zero = _mm_setzero_ps ();
  __m128 w = _mm_max_ps (_mm_sub_ps (_mm_min_ps (_mm_set1_ps (p->b[2]),
              ax2), _mm_max_ps (_mm_set1_ps (p->b[0]), ax1)), zero);
  __m128 h = _mm_max_ps (_mm_sub_ps (_mm_min_ps (_mm_set1_ps (p->b[3]),
              ay2), _mm_max_ps (_mm_set1_ps (p->b[1]), ay1)), zero);
  __m128 inter = _mm_mul_ps (w, h);
  __m128 den = _mm_sub_ps (_mm_add_ps (aar, _mm_set1_ps (p->area)), inter);
  /* cnms_iou is 0 when den is 0, and 0 > iou never holds */
  __m128 hit = _mm_and_ps (_mm_cmpneq_ps (den, zero),
      _mm_cmpgt_ps (_mm_div_ps (inter, den), _mm_set1_ps (p->iou)));

  return (unsigned) _mm_movemask_ps (hit);
}
#endif

/* Does a box of cell c suppress p->b? Lanes past c->n (up to c->cap) hold
 * stale values and are masked out. */
static int
scan_cell (const float *arena, const cell *c, const probe *p)
{
  const float *x1 = arena + c->off, *y1 = x1 + c->cap, *x2 = y1 + c->cap;
  const float *y2 = x2 + c->cap, *ar = y2 + c->cap;
  int i, n = c->n;
#ifdef __SSE2__
  const __m128 lx = _mm_set1_ps (p->q[0]), ly = _mm_set1_ps (p->q[1]);
  const __m128 hx = _mm_set1_ps (p->q[2]), hy = _mm_set1_ps (p->q[3]);

  for (i = 0; i < n; i += 4) {
    __m128 ax1 = _mm_loadu_ps (x1 + i), ay1 = _mm_loadu_ps (y1 + i);
    __m128 ax2 = _mm_loadu_ps (x2 + i), ay2 = _mm_loadu_ps (y2 + i);
    __m128 m = _mm_and_ps (_mm_and_ps (_mm_cmplt_ps (ax1, hx),
            _mm_cmpgt_ps (ax2, lx)), _mm_and_ps (_mm_cmplt_ps (ay1, hy),
            _mm_cmpgt_ps (ay2, ly)));
    unsigned bits = (unsigned) _mm_movemask_ps (m);

    if (bits == 0)
      continue;
    if (n - i < 4)
      bits &= (1u << (n - i)) - 1;
    if (bits && (iou_above (ax1, ay1, ax2, ay2, _mm_loadu_ps (ar + i),
                p) & bits))
      return 1;
  }
#else
  for (i = 0; i < n; i++) {
    const float a[4] = { x1[i], y1[i], x2[i], y2[i] };
    if (a[0] < p->q[2] && a[2] > p->q[0] && a[1] < p->q[3]
        && a[3] > p->q[1] && cnms_iou (a, ar[i], p->b, p->area) > p->iou)
      return 1;
  }
#endif
  return 0;
}

#ifdef CNMS_HAVE_AVX_PATH
/* scan_cell 8 lanes at a time (the same operations). */
__attribute__ ((target ("avx")))
static int
scan_cell_avx (const float *arena, const cell *c, const probe *p)
{
  const float *x1 = arena + c->off, *y1 = x1 + c->cap, *x2 = y1 + c->cap;
  const float *y2 = x2 + c->cap, *ar = y2 + c->cap;
  const __m256 lx = _mm256_set1_ps (p->q[0]), ly = _mm256_set1_ps (p->q[1]);
  const __m256 hx = _mm256_set1_ps (p->q[2]), hy = _mm256_set1_ps (p->q[3]);
  int i, n = c->n;

  for (i = 0; i < n; i += 8) {
    __m256 ax1 = _mm256_loadu_ps (x1 + i), ay1 = _mm256_loadu_ps (y1 + i);
    __m256 ax2 = _mm256_loadu_ps (x2 + i), ay2 = _mm256_loadu_ps (y2 + i);
    __m256 m = _mm256_and_ps (_mm256_and_ps (_mm256_cmp_ps (ax1, hx,
                _CMP_LT_OQ), _mm256_cmp_ps (ax2, lx, _CMP_GT_OQ)),
        _mm256_and_ps (_mm256_cmp_ps (ay1, hy, _CMP_LT_OQ),
            _mm256_cmp_ps (ay2, ly, _CMP_GT_OQ)));
    unsigned bits = (unsigned) _mm256_movemask_ps (m);
    __m256 zero, w, h, inter, den, hit;

    if (bits == 0)
      continue;
    if (n - i < 8)
      bits &= (1u << (n - i)) - 1;
    if (bits == 0)
      continue;
    zero = _mm256_setzero_ps ();
    w = _mm256_max_ps (_mm256_sub_ps (_mm256_min_ps (_mm256_set1_ps
                (p->b[2]), ax2), _mm256_max_ps (_mm256_set1_ps (p->b[0]),
                ax1)), zero);
    h = _mm256_max_ps (_mm256_sub_ps (_mm256_min_ps (_mm256_set1_ps
                (p->b[3]), ay2), _mm256_max_ps (_mm256_set1_ps (p->b[1]),
                ay1)), zero);
    inter = _mm256_mul_ps (w, h);
    den = _mm256_sub_ps (_mm256_add_ps (_mm256_loadu_ps (ar + i),
            _mm256_set1_ps (p->area)), inter);
    hit = _mm256_and_ps (_mm256_cmp_ps (den, zero, _CMP_NEQ_UQ),
        _mm256_cmp_ps (_mm256_div_ps (inter, den), _mm256_set1_ps (p->iou),
            _CMP_GT_OQ));
    if ((unsigned) _mm256_movemask_ps (hit) & bits)
      return 1;
  }
  return 0;
}
#endif

/* Does a kept box of the klink chain from i suppress p->b? */
static int
scan_list (const int32_t *klink, int32_t i, const probe *p)
{
  for (; i >= 0; i = klink[i]) {
    const float *a = p->kbox + 4 * (size_t) i;
    if (a[0] < p->q[2] && a[2] > p->q[0] && a[1] < p->q[3] && a[3] > p->q[1]
        && cnms_iou (a, p->karea[i], p->b, p->area) > p->iou)
      return 1;
  }
  return 0;
}

/* Gives full grid cell c a block twice as large, or its first one, at the
 * arena's end. The arena grows (keeping its contents) only for an input at
 * least as large as any before (w->may_grow), so that a warm context
 * allocates nothing for inputs that are not larger. Returns 1 when there
 * is no room: the caller files the box in the big cell instead. */
static int
grow_cell (walk *w, cell *c)
{
  int32_t cap = c->cap ? 2 * c->cap : w->cap0;
  size_t need = w->used + 5 * (size_t) cap;
  float *arena;
  int a;

  if (need * sizeof (float) > w->ws->arena.cap) {
    if (!w->may_grow || need > 0x7fffffff)
      return 1;
    if (cnms_buf_grow (w->ctx, &w->ws->arena, need * sizeof (float))
        != CNMS_OK)
      return -1;
  }
  arena = w->ws->arena.p;
  for (a = 0; a < 5 && c->n > 0; a++)
    memcpy (arena + w->used + (size_t) a * cap, arena + c->off +
        (size_t) a * c->cap, (size_t) c->n * sizeof (float));
  c->off = (int32_t) w->used;
  c->cap = cap;
  w->used = need;
  return 0;
}

/* Stores box (b0, b1, b2, b3), area, in cell c of block base, which has
 * room. */
static inline void
put_box (float *base, cell *c, float b0, float b1, float b2, float b3,
    float area)
{
  float *x1 = base + c->off + c->n;

  x1[0] = b0;
  x1[c->cap] = b1;
  x1[2 * (size_t) c->cap] = b2;
  x1[3 * (size_t) c->cap] = b3;
  x1[4 * (size_t) c->cap] = area;
  c->n++;
}

/* Files the box in grid cell c: 0, or grow_cell's 1 or -1. */
static inline int
file_in (walk *w, cell *c, float b0, float b1, float b2, float b3,
    float area)
{
  if (c->n == c->cap) {
    int r = grow_cell (w, c);
    if (r != 0)
      return r;
  }
  put_box (w->ws->arena.p, c, b0, b1, b2, b3, area);
  return 0;
}

/* Is p->b suppressed by a kept box of grid g? */
static int
suppressed (const walk *w, const grid *g, const probe *p)
{
  const float *arena = w->ws->arena.p;
  const cell *cells = w->ws->cells.p;
  const float *q = p->q;
  int32_t c[4];
  int x0, x1, y0, y1, x, y;

  cells_of (g, q[0], q[1], q[2], q[3], c);
  /* lo > hi: a suppressor spans both, one cell is enough (step 1) */
  x0 = q[0] < q[2] ? c[0] : c[2];
  x1 = c[2];
  y0 = q[1] < q[3] ? c[1] : c[3];
  y1 = c[3];
  /* a query over most of the grid reads each kept box once instead */
  if ((x1 - x0 + 1) * (y1 - y0 + 1) > 16
      && 2 * (x1 - x0 + 1) * (y1 - y0 + 1) > g->gx * g->gy)
    return scan_list (w->ws->klink.p, g->last, p);
  for (y = y0; y <= y1; y++) {
    for (x = x0; x <= x1; x++) {
      if (w->scan (arena, &cells[y * g->gx + x], p))
        return 1;
    }
  }
  return g->big.n > 0 && w->scan (w->ws->bigbuf.p, &g->big, p);
}

/* Files kept box b in grid g: in its cells, or in g's big cell (which
 * has room for every box of the walk). */
static cnms_status
file_kept (walk *w, grid *g, const float *b, float area)
{
  cell *cells = w->ws->cells.p;
  float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
  int32_t c[4];
  int x, y, r;

  cells_of (g, b0, b1, b2, b3, c);
  if ((c[2] - c[0] + 1) * (c[3] - c[1] + 1) <= g->max_cells) {
    for (y = c[1]; y <= c[3]; y++) {
      cell *row = cells + (size_t) y * g->gx;
      for (x = c[0]; x <= c[2]; x++) {
        r = file_in (w, &row[x], b0, b1, b2, b3, area);
        if (r < 0)
          return CNMS_ERR_NO_MEMORY;
        /* no room: big holds it for every query (a copy in some cells
         * does no harm) */
        if (r > 0)
          goto big;
      }
    }
    return CNMS_OK;
  }
big:
  put_box (w->ws->bigbuf.p, &g->big, b0, b1, b2, b3, area);
  return CNMS_OK;
}

/* The greedy walk over n boxes of one class (or all, agnostic), in order;
 * stops after max_keep. Writes the kept positions into kept. */
static cnms_status
run_class (walk *w, const float *boxes, const float *areas, int n,
    int max_keep, int32_t *kept, int *n_kept)
{
  cnms_greedy_ws *ws = w->ws;
  float *kbox, *karea;
  int32_t *klink;
  grid g;
  probe p;
  float q[4];
  int j, nk = 0, n_cells;
  cnms_status st;

  n_cells = plan_grid (&g, boxes, n, w->may_grow ? (size_t) 1 << 30 :
      ws->cells.cap / sizeof (cell));
  if (n_cells > 0) {
    st = cnms_buf_reserve (w->ctx, &ws->cells, (size_t) n_cells *
        sizeof (cell));
    if (st != CNMS_OK)
      return st;
    memset (ws->cells.p, 0, (size_t) n_cells * sizeof (cell));
  }
  w->used = 0;
  w->cap0 = g.cap0;
  kbox = ws->kbox.p;
  karea = ws->karea.p;
  klink = ws->klink.p;
  p.kbox = kbox;
  p.karea = karea;
  p.iou = w->iou;
  p.q = q;
  for (j = 0; j < n && nk < max_keep; j++) {
    const float *b = boxes + 4 * (size_t) j;

    if (nonempty (b)) {
      p.b = b;
      p.area = areas[j];
      if (g.list) {
        /* one cell, b itself the query rectangle */
        p.q = b;
        if (w->scan (ws->bigbuf.p, &g.big, &p))
          continue;
        put_box (ws->bigbuf.p, &g.big, b[0], b[1], b[2], b[3], areas[j]);
        st = CNMS_OK;
      } else {
        p.q = q;
        query_rect (b, w->margin, q);
        if (suppressed (w, &g, &p))
          continue;
        kbox[4 * (size_t) nk + 0] = b[0];
        kbox[4 * (size_t) nk + 1] = b[1];
        kbox[4 * (size_t) nk + 2] = b[2];
        kbox[4 * (size_t) nk + 3] = b[3];
        karea[nk] = areas[j];
        klink[nk] = g.last;
        g.last = nk;
        st = file_kept (w, &g, b, areas[j]);
      }
      if (st != CNMS_OK)
        return st;
    }
    kept[nk++] = j;
  }
  *n_kept = nk;
  return CNMS_OK;
}

cnms_status
cnms_cpu_greedy (cnms_backend_ctx *ctx, cnms_greedy_ws *ws,
    const float *boxes, const float *areas, const int32_t *classes,
    int n_classes, int k, float iou, int max_keep, int32_t *kept,
    int *n_kept)
{
  size_t n = k > 0 ? (size_t) k : 1;
  int32_t *start, *pos;
  float *gbox, *garea;
  uint8_t *flag;
  walk w;
  int c, j, nk;
  cnms_status st;

  *n_kept = 0;
  w.ctx = ctx;
  w.ws = ws;
  w.used = 0;
  w.may_grow = (size_t) k >= ws->grow_k;
  if (w.may_grow)
    ws->grow_k = (size_t) k;
  w.scan = scan_cell;
#ifdef CNMS_HAVE_AVX_PATH
  if (!cnms_cpu_no_avx && __builtin_cpu_supports ("avx"))
    w.scan = scan_cell_avx;
#endif
  w.iou = iou;
  w.margin = iou >= CORE_MIN_IOU ? (double) iou * (1.0 - 0x1p-10) : 0;
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
    st = cnms_buf_reserve (ctx, &ws->bigbuf, 5 * ((n + 7) & ~(size_t) 7) *
        sizeof (float));
  if (st != CNMS_OK)
    return st;
  if (classes == NULL || n_classes <= 1)
    return run_class (&w, boxes, areas, k, max_keep, kept, n_kept);

  /* Classes do not interact: each class's walk keeps what the joint walk
   * keeps of that class, so run them one by one on class-grouped copies
   * (stable: in order within a class) and merge by position. The joint
   * walk's max_keep stop takes the first max_keep of the merge. */
  st = cnms_buf_reserve (ctx, &ws->gbox, n * 4 * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->garea, n * sizeof (float));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->gpos, n * sizeof (int32_t));
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->flag, n);
  if (st == CNMS_OK)
    st = cnms_buf_reserve (ctx, &ws->start, ((size_t) n_classes + 1) *
        sizeof (int32_t));
  if (st != CNMS_OK)
    return st;
  start = ws->start.p;
  pos = ws->gpos.p;
  gbox = ws->gbox.p;
  garea = ws->garea.p;
  flag = ws->flag.p;
  for (c = 0; c <= n_classes; c++)
    start[c] = 0;
  for (j = 0; j < k; j++)
    start[classes[j] + 1]++;
  for (c = 0; c < n_classes; c++)
    start[c + 1] += start[c];
  /* start[c] walks to the end of class c, which is start[c + 1] before */
  for (j = 0; j < k; j++) {
    int32_t at = start[classes[j]]++;
    memcpy (gbox + 4 * (size_t) at, boxes + 4 * (size_t) j, 4 * sizeof (float));
    garea[at] = areas[j];
    pos[at] = j;
    flag[j] = 0;
  }
  for (c = 0; c < n_classes; c++) {
    int32_t s = c == 0 ? 0 : start[c - 1], e = start[c];
    int i;

    if (e == s)
      continue;
    /* kept is the local list's scratch: the merge below rewrites it */
    st = run_class (&w, gbox + 4 * (size_t) s, garea + s, e - s, max_keep,
        kept, &nk);
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

  for (s = 0; s <= table_mask; s++)
    table_vals[s] = -1;
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
