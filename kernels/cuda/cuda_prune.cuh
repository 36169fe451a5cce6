/* The engine's mask phase for the counts that the cached resolve does not
 * take (included by cuda_engine.cu): the same bits as the all-pairs mask
 * of cuda_mask.cuh, in its global layout (nb = ceil(n / 64) words a row,
 * bit j of row i set when j > i and box i suppresses box j), with only the
 * pairs whose rectangles (g.boxes: the boxes, or the oriented boxes'
 * widened hulls) overlap with positive area tested: no other pair can
 * suppress (cuda_geom.cuh), so the words they would fill are zero.
 *
 * Phases, between grid barriers of the cooperative kernel:
 *  1. (with the sort, cuda_sort.cuh) the cell counts are zeroed, and the
 *     extent of the rectangles and the sums of their sizes are added into
 *     the grid's state;
 *  2. count: every block derives the same uniform grid from the state
 *     (cells about a mean box wide and high, at most CNMS_GRID_CELLS_MAX),
 *     and each box its cell range; a box touching more than
 *     CNMS_GRID_SPAN cells goes to the big list, a rectangle with x1 > x2
 *     or y1 > y2 nowhere; the others add 1 to each of their cells;
 *  3. fill: every block scans the counts into cell starts in its shared
 *     memory, and each box takes a slot in each of its cells (a cursor of
 *     its own per cell: other blocks may still be reading the counts) or
 *     in the big list;
 *  4. test: a warp takes a row i at a time and tests the boxes j > i of
 *     the cells i touches (a pair of normal boxes only in the one cell
 *     holding the top-left corner of their overlap, the cell (max of the
 *     two first columns, max of the first rows), which both touch), and of
 *     the big list; a big row tests every j > i. The test is the
 *     geometry's own (pair_suppresses), after the rectangles' overlap.
 *
 * For the resolve, a hit j of row i in i's own tile also sets bit i & 63
 * of j's "removed by" word (g.grid_by, zeroed with the cells): the
 * earlier boxes of the tile that suppress j.
 *
 * A row's bits are gathered by its warp alone, in registers: the word of
 * the next tile (dw + 1, written to g.row_next: the resolve carries it in
 * warp 0) and up to CNMS_ROW_LIST more nonzero words (lane k holds the
 * k-th), written out at the end as the row's list (list_w / list_b, -1
 * past its count) and count. Only those words are written: the resolve
 * reads no other word of a row whose count is within g.row_list_max. A
 * row whose count is above it is read whole (from word dw + 2) and marked
 * by its own bit in its "removed by" word: it is zeroed first, and a row
 * with more than CNMS_ROW_LIST words spills (zeroes the row, ORs what it
 * held, then ORs each further bit with atomicOr). The bits do not depend
 * on the order of anything: a row's words are ORs of its hits, whichever
 * cell or lane found them. The list order follows the cells' fill order
 * (atomics), and the resolve ORs the listed words, in any order, into its
 * removed bitmap.
 *
 * A round of a row loads the next round's box indices ahead, and a pair's
 * box, class and cell range together. Oriented boxes' pairs that pass the
 * rectangle, class and cell tests wait in the warp's queue, and the
 * polygon test (cnms_obb_suppresses) runs when 32 are there and at the
 * row's end: a few rounds' pairs in one pass rather than one pass a
 * round. */
#ifndef CNMS_CUDA_PRUNE_CUH
#define CNMS_CUDA_PRUNE_CUH

#include <cooperative_groups.h>

#include "cuda_sort.cuh"

/* Cell range markers (int2.x): no cell, or the big list. */
#define CNMS_GRID_NONE (-1)
#define CNMS_GRID_BIG (-2)

/* The grid of one call, the same in every block: cells gx x gy, a cell
 * column of x = floor ((x - x0) ix), clamped to [0, gx). */
struct cnms_grid {
  double x0, y0, ix, iy;
  int gx, gy;
  int big;                      /* boxes in the big list (after count) */
};

/* The cell column (row) of coordinate v: monotone in v, so that two
 * rectangles that overlap share a column range (and a row range). */
__device__ __forceinline__ int
cnms_grid_cell (float v, double v0, double inv, int cells)
{
  const double t = ((double) v - v0) * inv;

  /* NaN (an infinite rectangle with a zero scale) goes to 0 */
  return t >= 1.0 ? (t < (double) cells ? (int) t : cells - 1) : 0;
}

/* Cells along one axis for an extent of span and a mean size of mean. */
__device__ __forceinline__ double
cnms_grid_axis (double span, double mean)
{
  double c = span / mean;

  if (!(c >= 1.0))              /* NaN too */
    c = 1.0;
  if (c > (double) CNMS_GRID_CELLS_MAX)
    c = (double) CNMS_GRID_CELLS_MAX;
  return c;
}

__device__ __forceinline__ cnms_grid
cnms_grid_of (const cnms_engine_args &g)
{
  const uint32_t *st = g.grid_state;
  const uint32_t cnt = __ldcg (&st[6]);
  cnms_grid p;

  p.x0 = p.y0 = p.ix = p.iy = 0.0;
  p.gx = p.gy = 1;
  p.big = 0;
  if (cnt == 0)
    return p;
  const double x0 = -(double) cnms_key_float (__ldcg (&st[0]));
  const double y0 = -(double) cnms_key_float (__ldcg (&st[1]));
  const double x1 = (double) cnms_key_float (__ldcg (&st[2]));
  const double y1 = (double) cnms_key_float (__ldcg (&st[3]));
  const double sw = (double) __uint_as_float (__ldcg (&st[4]));
  const double sh = (double) __uint_as_float (__ldcg (&st[5]));
  const double w = x1 - x0, h = y1 - y0;
  double cx = cnms_grid_axis (w, sw / cnt), cy = cnms_grid_axis (h, sh / cnt);

  if (cx * cy > (double) CNMS_GRID_CELLS_MAX) {
    const double f = sqrt ((double) CNMS_GRID_CELLS_MAX / (cx * cy));
    cx = cx * f < 1.0 ? 1.0 : cx * f;
    cy = cy * f < 1.0 ? 1.0 : cy * f;
  }
  p.gx = (int) cx;
  p.gy = (int) cy;
  if (p.gx * p.gy > CNMS_GRID_CELLS_MAX)
    p.gy = CNMS_GRID_CELLS_MAX / p.gx;
  /* an infinite or empty extent: one cell on that axis */
  if (w > 0.0 && w < 1e300 && p.gx > 1) {
    p.x0 = x0;
    p.ix = (double) p.gx / w;
  } else {
    p.gx = 1;
  }
  if (h > 0.0 && h < 1e300 && p.gy > 1) {
    p.y0 = y0;
    p.iy = (double) p.gy / h;
  } else {
    p.gy = 1;
  }
  return p;
}

/* Phase 1's zeroing of the cells' counts and cursors and of the n
 * "removed by" words (before the sort's barrier; every thread calls
 * it). */
__device__ __forceinline__ void
cnms_prune_zero (const cnms_engine_args &g, int n)
{
  const int step = gridDim.x * blockDim.x;

  for (int c = blockIdx.x * blockDim.x + threadIdx.x;
      c <= CNMS_GRID_CELLS_MAX; c += step) {
    g.grid_cells[c] = 0;
    g.grid_fill[c] = 0;
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    g.grid_by[i] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    g.grid_state[7] = 0;
    g.grid_state[8] = 0;
  }
}

/* The state the engine leaves for the next call (the resolving block,
 * once every block is done with the mask). */
__device__ __forceinline__ void
cnms_prune_reset (const cnms_engine_args &g)
{
  for (int w = 0; w < 7; w++)
    g.grid_state[w] = 0;
}

/* Box r's cell range {c0 << 16 | r0, c1 << 16 | r1}, or a marker. */
__device__ __forceinline__ int2
cnms_grid_range (const cnms_grid &p, float4 b)
{
  if (!(b.x <= b.z && b.y <= b.w))
    return make_int2 (CNMS_GRID_NONE, CNMS_GRID_NONE);
  const int c0 = cnms_grid_cell (b.x, p.x0, p.ix, p.gx);
  const int c1 = cnms_grid_cell (b.z, p.x0, p.ix, p.gx);
  const int r0 = cnms_grid_cell (b.y, p.y0, p.iy, p.gy);
  const int r1 = cnms_grid_cell (b.w, p.y0, p.iy, p.gy);

  if ((c1 - c0 + 1) * (r1 - r0 + 1) > CNMS_GRID_SPAN)
    return make_int2 (CNMS_GRID_BIG, CNMS_GRID_BIG);
  return make_int2 ((c0 << 16) | r0, (c1 << 16) | r1);
}

/* Exclusive scan of the cells' counts into s[0 .. cells] (s[cells]: the
 * total), by the block. */
__device__ __forceinline__ void
cnms_grid_scan (const cnms_engine_args &g, int cells, int32_t *s)
{
  __shared__ int32_t s_warp[CNMS_ENGINE_THREADS / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int per = cnms_ceil_div (cells, blockDim.x);
  const int first = tid * per;
  int v[CNMS_GRID_CELLS_MAX / CNMS_ENGINE_THREADS + 1];
  int sum = 0, incl;

#pragma unroll
  for (int q = 0; q < CNMS_GRID_CELLS_MAX / CNMS_ENGINE_THREADS + 1; q++) {
    v[q] = q < per && first + q < cells ?
        __ldcg (&g.grid_cells[first + q]) : 0;
    sum += v[q];
  }
  incl = sum;
  for (int off = 1; off < 32; off <<= 1) {
    const int o = __shfl_up_sync (CNMS_FULL_WARP, incl, off);
    if (lane >= off)
      incl += o;
  }
  if (lane == 31)
    s_warp[warp] = incl;
  __syncthreads ();
  int before = incl - sum;
  for (int w = 0; w < warp; w++)
    before += s_warp[w];
#pragma unroll
  for (int q = 0; q < CNMS_GRID_CELLS_MAX / CNMS_ENGINE_THREADS + 1; q++) {
    if (q < per && first + q < cells)
      s[first + q] = before;
    before += v[q];
  }
  if (tid == blockDim.x - 1) {
    int total = 0;
    for (int w = 0; w < (int) (blockDim.x >> 5); w++)
      total += s_warp[w];
    s[cells] = total;
  }
  __syncthreads ();
}

/* The row of box i, by its warp (see the file comment). */
template <int GEOM>
__device__ __forceinline__ void
cnms_prune_row (const cnms_engine_args &g, const cnms_grid &p, int n,
    int nb, int i, const int32_t *s_start, int lane)
{
  typedef cnms_geom <GEOM> G;
  /* the warp's queue of pairs for the polygon test (oriented boxes) */
  __shared__ int s_queue[CNMS_ENGINE_THREADS];
  int *const s_q = s_queue + (threadIdx.x & ~31);
  const int2 rg = __ldcg (&g.grid_range[i]);
  const int dw = i >> 6;
  uint64_t *const row = g.mask + (size_t) i * nb;
  uint64_t next = 0;            /* uniform: word dw + 1 (never listed) */
  uint64_t lb = 0;              /* lane k < cnt: listed word lw's bits */
  int lw = -1;
  int cnt = 0;                  /* uniform: listed words (> CNMS_ROW_LIST:
                                 * spilled) */
  bool spilled = false;         /* uniform */

  if (rg.x != CNMS_GRID_NONE) {
    const typename G::item a = G::load (g, i);
    const float4 ha = g.boxes[i];
    const int32_t ca = g.cls[i];
    const float iou = g.a.agnostic ? g.a.iou :
        cnms_class_iou (&g.a.rules, ca);
    const bool big = rg.x == CNMS_GRID_BIG;
    const int c0 = rg.x >> 16, r0 = rg.x & 0xffff;
    const int c1 = rg.y >> 16, r1 = rg.y & 0xffff;
    /* the cells of a normal row, then the big list; a big row: every
     * later box. Source s: cell cx, cy (s < cells), the big list (s ==
     * cells) or the later boxes (big row). */
    const int cells = big ? 0 : (c1 - c0 + 1) * (r1 - r0 + 1);

    /* the hits of lanes in hits (lane k's box jv), into the row */
    auto add_hits = [&] (unsigned hits, int jv) {
      while (hits != 0) {
        const int from = __ffs (hits) - 1;
        const int jj = __shfl_sync (CNMS_FULL_WARP, jv, from);
        const int w = jj >> 6;
        const uint64_t bit = 1ull << (jj & 63);

        hits &= hits - 1;
        if (w == dw) {
          /* the resolve's "removed by" word of a later box of the tile */
          if (lane == 0)
            atomicOr ((unsigned long long *) &g.grid_by[jj],
                (unsigned long long) (1ull << (i & 63)));
        } else if (w == dw + 1) {
          next |= bit;
        } else if (spilled) {
          if (lane == 0)
            atomicOr ((unsigned long long *) &row[w],
                (unsigned long long) bit);
        } else {
          const unsigned at = __ballot_sync (CNMS_FULL_WARP,
              lane < cnt && lw == w);
          if (at != 0) {
            if (lane == __ffs (at) - 1)
              lb |= bit;
          } else if (cnt < CNMS_ROW_LIST) {
            if (lane == cnt) {
              lw = w;
              lb = bit;
            }
            cnt++;
          } else {
            /* more nonzero words than a list holds: the row is read
             * whole, so it is zeroed and holds every bit from here */
            for (int z = lane; z < nb; z += 32)
              row[z] = 0;
            __syncwarp ();
            if (lane < cnt)
              row[lw] = lb;
            __syncwarp ();
            if (lane == 0)
              atomicOr ((unsigned long long *) &row[w],
                  (unsigned long long) bit);
            spilled = true;
            cnt = CNMS_ROW_LIST + 1;
          }
        }
      }
    };
    /* oriented boxes: the pairs that pass the cheap tests wait in the
     * warp's queue (s_q), and the polygon test runs on 32 at a time, not
     * on the few of each round */
    int queued = 0;             /* uniform */
    auto flush = [&] () {
      int jq = -1;
      bool hit = false;

      if (lane < queued) {
        jq = s_q[lane];
        hit = G::pair_suppresses (a, ca, G::load (g, jq), g.cls[jq], iou,
            g.a.agnostic);
      }
      add_hits (__ballot_sync (CNMS_FULL_WARP, hit), jq);
      /* every lane has read its entry before the queue refills (a ballot
       * orders no memory: __syncwarp does) */
      __syncwarp ();
      queued = 0;
    };

    for (int src = 0; src <= cells; src++) {
      const int cx = big || src == cells ? -1 : c0 + src % (c1 - c0 + 1);
      const int cy = big || src == cells ? -1 : r0 + src / (c1 - c0 + 1);
      int start, end;

      if (big) {
        start = i + 1;
        end = n;
      } else if (src == cells) {
        start = 0;
        end = p.big;
      } else {
        start = s_start[cy * p.gx + cx];
        end = s_start[cy * p.gx + cx + 1];
      }
      auto fetch = [&] (int e) {
        return e >= end ? -1 : big ? e : src == cells ?
            __ldcg (&g.grid_big[e]) : __ldcg (&g.grid_entries[e]);
      };
      /* the next round's box indices are loaded a round ahead */
      int jn = fetch (start + lane);

      /* uniform: whole warps go round */
      for (int base = start; base < end; base += 32) {
        const int j = jn;
        bool hit = false;

        jn = fetch (base + 32 + lane);
        if (j > i) {
          /* loaded together: one load's latency a round, not three */
          const float4 hb = g.boxes[j];
          const int32_t cj = g.cls[j];
          const int rj = cx >= 0 ? __ldcg (&g.grid_range[j]).x : 0;
          if (ha.x < hb.z && hb.x < ha.z && ha.y < hb.w && hb.y < ha.w) {
            hit = g.a.agnostic || cj == ca;
            if (cx >= 0 && hit) {
              /* the pair's one cell: where its overlap begins */
              hit = cx == max (c0, rj >> 16) && cy == max (r0, rj & 0xffff);
            }
            if constexpr (GEOM != CNMS_GEOM_OBB) {
              if (hit) {
                const typename G::item b = G::from_box (g, j, hb);
                hit = G::pair_suppresses (a, ca, b, cj, iou, g.a.agnostic);
              }
            }
          }
        }
        if constexpr (GEOM == CNMS_GEOM_OBB) {
          const unsigned cm = __ballot_sync (CNMS_FULL_WARP, hit);
          const int c = __popc (cm);

          if (queued + c > 32)
            flush ();
          if (hit)
            s_q[queued + __popc (cm & ((1u << lane) - 1))] = j;
          queued += c;
          __syncwarp ();
        } else {
          add_hits (__ballot_sync (CNMS_FULL_WARP, hit), j);
        }
      }
    }
    if constexpr (GEOM == CNMS_GEOM_OBB) {
      if (queued > 0)
        flush ();
    }
  }
  /* uniform: the resolve reads this row whole (from word dw + 2) */
  const bool dense = cnt > g.row_list_max;
  if (!spilled && dense) {
    for (int z = lane; z < nb; z += 32)
      row[z] = 0;
    __syncwarp ();
    if (lane < cnt)
      row[lw] = lb;
  }
  /* every entry of the list: -1 past the count, and for a row read
   * whole */
  if (lane < CNMS_ROW_LIST) {
    const bool listed = !dense && lane < cnt;
    g.list_w[(size_t) i * CNMS_ROW_LIST + lane] = listed ? lw : -1;
    g.list_b[(size_t) i * CNMS_ROW_LIST + lane] = listed ? lb : 0;
  }
  if (lane == 0) {
    g.row_cnt[i] = cnt;
    g.row_next[i] = next;
    /* the resolve's mark of a row read whole: its own bit in its
     * "removed by" word (only earlier boxes set the others) */
    if (dense)
      atomicOr ((unsigned long long *) &g.grid_by[i],
          (unsigned long long) (1ull << (i & 63)));
  }
  /* the next row's zeroing must not pass this row's stores of another
   * lane (different rows: no overlap; kept for clarity of ordering) */
  __syncwarp ();
}

/* Phases 2-4 (see the file comment): every thread of the grid calls it
 * after the sort's barrier; s: the block's dynamic shared memory (at least
 * CNMS_SORT_SMEM_WORDS words: the cell starts). */
template <int GEOM, typename Sync>
__device__ __forceinline__ void
cnms_prune_mask (const cnms_engine_args &g, int n, Sync &grid, uint64_t *s)
{
  cnms_grid p = cnms_grid_of (g);
  const int step = gridDim.x * blockDim.x;
  const int cells = p.gx * p.gy;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  int32_t *const s_start = (int32_t *) s;

  /* count */
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += step) {
    const int2 rg = cnms_grid_range (p, g.boxes[r]);

    g.grid_range[r] = rg;
    if (rg.x == CNMS_GRID_BIG) {
      atomicAdd (&g.grid_state[7], 1u);
    } else if (rg.x != CNMS_GRID_NONE) {
      for (int cy = rg.x & 0xffff; cy <= (rg.y & 0xffff); cy++)
        for (int cx = rg.x >> 16; cx <= (rg.y >> 16); cx++)
          atomicAdd (&g.grid_cells[cy * p.gx + cx], 1);
    }
  }
  grid.sync ();

  /* fill */
  cnms_grid_scan (g, cells, s_start);
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += step) {
    const int2 rg = __ldcg (&g.grid_range[r]);

    if (rg.x == CNMS_GRID_BIG) {
      g.grid_big[atomicAdd (&g.grid_state[8], 1u)] = r;
    } else if (rg.x != CNMS_GRID_NONE) {
      for (int cy = rg.x & 0xffff; cy <= (rg.y & 0xffff); cy++)
        for (int cx = rg.x >> 16; cx <= (rg.y >> 16); cx++) {
          const int c = cy * p.gx + cx;
          g.grid_entries[s_start[c] + atomicAdd (&g.grid_fill[c], 1)] = r;
        }
    }
  }
  grid.sync ();

  /* test */
  p.big = (int) __ldcg (&g.grid_state[7]);
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * (blockDim.x >> 5);
  for (int i = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < n;
      i += warps)
    cnms_prune_row <GEOM> (g, p, n, nb, i, s_start, lane);
}

#endif /* CNMS_CUDA_PRUNE_CUH */
