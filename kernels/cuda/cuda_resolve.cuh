/* The engine's last phase (included by cuda_engine.cu): the greedy walk
 * over the bitmask in one block, with the "removed" bitmap in shared
 * memory, tile by 64-box tile; it stops at max_keep.
 *
 * - Cached: when the mask's upper triangle (written in slab layout by the
 *   mask phase), the sorted order and the kept list fit in the block's
 *   dynamic shared memory (small counts), they are copied there first and
 *   one warp resolves the tiles in shared memory, with no block barrier,
 *   each tile's kept set by ballots (cnms_resolve_cached); the kept
 *   records are written out together at the end.
 * - Otherwise (the pruned mask of cuda_prune.cuh), step by step with one
 *   block barrier a tile (cnms_resolve_global): warp 0 finds tile t's kept
 *   set by ballots as the cached resolve does, from the 64 boxes' "removed
 *   by" words (g.grid_by), and ORs the kept rows' next-tile words
 *   (g.row_next) into a register word, the carry of word t + 1; the other
 *   warps OR the listed words of tile t - 1's kept rows (and the whole
 *   rows of those with more words than a list) into the bitmap with
 *   32-bit shared atomics (OR is order-free, so the bitmap is
 *   deterministic). Each thread's part of a tile is loaded a step ahead.
 *   The kept positions go to g.grid_entries, the records out after the
 *   walk. */
#ifndef CNMS_CUDA_RESOLVE_CUH
#define CNMS_CUDA_RESOLVE_CUH

#include "cnms_cuda_device.cuh"

/* The cached walk's removals by the n_keep kept rows of a tile (tile
 * positions base + r in kpos): their words 1 .. width - 1 of the tile's
 * slab rows (diag) ORed into removed[1 .. width - 1], by the warp. Each of
 * the L = width - 1 later words gets G = 32 / L lanes, which take every
 * G-th kept row; the G partial words are then ORed together by shuffles
 * (a lane past the warp reads its own word again, which OR absorbs) and
 * the first lane of each word stores it: cheaper than one lane a word
 * taking one row a step, and than a shared-memory atomicOr in place of
 * the shuffles, which sm_90 compiles to a compare-and-swap loop
 * (docs/performance.md, "Choices in the code"). */
__device__ __forceinline__ void
cnms_or_tile_rows (const uint64_t *diag, int width, int base,
    const int *kpos, int n_keep, int lane, uint64_t *removed)
{
  const int later = width - 1;

  if (later <= 0 || n_keep == 0)
    return;                     /* uniform over the warp */
  const int groups = 32 / later;
  const int grp = lane / later;
  const int w = 1 + lane % later;
  uint64_t acc = 0;

  if (grp < groups) {
#pragma unroll 4
    for (int j = grp; j < n_keep; j += groups)
      acc |= diag[(long long) (kpos[j] - base) * width + w];
  }
  for (int step = 1; step < groups; step *= 2)
    acc |= __shfl_down_sync (CNMS_FULL_WARP, acc, step * later);
  if (grp == 0)
    removed[w] |= acc;
}

/* Cached resolve (see the file comment); s: the block's dynamic shared
 * memory, laid out [removed nb | mask slab | order n | kept positions n];
 * out writes the kept candidates out (cnms_kept_out; its order: whether
 * it reads the sort values, which are then staged).
 * After the block's copy, one warp resolves the tiles with no block
 * barrier. A tile's kept set K is the one set with: box b in K iff b is
 * available and no box of K before b removes b (the lower bits of b's
 * diagonal word, cuda_mask.cuh), which is the greedy walk's. Lanes hold
 * boxes l and l + 32 of the tile and iterate K <- {b available: no box of
 * K removes b} from K = the available boxes, a ballot a step, until K
 * stays: after t steps the first t boxes are right, so it ends, in as
 * many steps as the longest chain of removals (a few, in a frame) rather
 * than one dependent step per kept box. Then the warp ORs the kept rows'
 * later words into the removed bitmap (cnms_or_tile_rows). A tile row is at
 * most 32 words wide: the slab of 33 tiles (2112 boxes) is beyond any
 * device's shared memory. */
template <typename OUT>
__device__ __forceinline__ void
cnms_resolve_cached (const cnms_engine_args &g, int n, uint64_t *s,
    OUT out)
{
  __shared__ int s_n_kept;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const int max_keep = g.a.max_keep;
  const int tid = threadIdx.x;
  const long long total = cnms_slab_offset (nb, nb);
  uint64_t *const s_removed = s;
  uint64_t *const s_tri = s + nb;
  uint32_t *const s_order = (uint32_t *) (s_tri + total);
  int *const s_kpos = (int *) (s_order + n);

  for (int w = tid; w < nb; w += blockDim.x)
    s_removed[w] = 0;
  if (out.order)
    for (int i = tid; i < n; i += blockDim.x)
      s_order[i] = g.order[i];
  /* the mask phase wrote the slab layout: a straight copy (rows past n in
   * the last tile are never read) */
  for (long long e = tid; e < total; e += blockDim.x)
    s_tri[e] = g.mask[e];
  __syncthreads ();

  if (tid < 32) {
    const int lane = tid;
    int kept = 0;

    for (int blk = 0; blk < nb && kept < max_keep; blk++) {
      const int base = blk * CNMS_TILE;
      const int size = min (CNMS_TILE, n - base);
      const int width = nb - blk;
      const uint64_t *const diag = s_tri + cnms_slab_offset (blk, nb);
      const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
      /* uniform over the warp: the words are final since the last
       * __syncwarp */
      const uint64_t avail = ~s_removed[blk] & valid;
      const int b1 = lane + 32;
      /* the earlier boxes of the tile that remove box lane / lane + 32 */
      const uint64_t by0 = lane < size ?
          diag[(long long) lane * width] & ((1ull << lane) - 1) : 0;
      const uint64_t by1 = b1 < size ?
          diag[(long long) b1 * width] & ((1ull << b1) - 1) : 0;
      const bool av0 = (avail >> lane) & 1, av1 = (avail >> b1) & 1;
      uint64_t keep = avail, prev;

      do {
        prev = keep;
        keep = (uint64_t) __ballot_sync (CNMS_FULL_WARP,
            av0 && (by0 & prev) == 0)
            | ((uint64_t) __ballot_sync (CNMS_FULL_WARP,
                av1 && (by1 & prev) == 0) << 32);
      } while (keep != prev);
      /* max-detections inside the tile: its first kept boxes only */
      if (__popcll (keep) > max_keep - kept) {
        uint64_t rest = keep;
        keep = 0;
        for (int q = kept; q < max_keep; q++) {
          keep |= rest & (0 - rest);
          rest &= rest - 1;
        }
      }
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = lane + 32 * h;
        if ((keep >> r) & 1)
          s_kpos[kept + __popcll (keep & ((1ull << r) - 1))] = base + r;
      }
      const int n_keep = __popcll (keep);
      kept += n_keep;
      __syncwarp ();
      cnms_or_tile_rows (diag, width, base, s_kpos + kept - n_keep, n_keep,
          lane, s_removed + blk);
      __syncwarp ();
    }
    if (lane == 0)
      s_n_kept = kept;
  }
  __syncthreads ();
  const int kept = s_n_kept;
  out (g, kept, s_order, s_kpos);
  if (tid == 0)
    ((int32_t *) g.out)[CNMS_OUT_KEPT] = kept;
}

/* The cached resolve's output of the sorted candidates in g.order: the
 * kept records (or indices) and g.kept_dev. */
struct cnms_kept_out {
  static constexpr bool order = true;
  __device__ void operator() (const cnms_engine_args &g, int kept,
      const uint32_t *s_order, const int *s_kpos) const
  {
    char *body = g.out + CNMS_HEADER_BYTES;

    cnms_write_kept (body, kept, g.src.recs, threadIdx.x, blockDim.x,
        [&] (int r) { return s_order[s_kpos[r]]; });
    cnms_write_kept_dev (g, kept, threadIdx.x, blockDim.x,
        [&] (int r) { return s_order[s_kpos[r]]; });
  }
};

/* What a thread of the uncached resolve holds of one tile, loaded a step
 * ahead. Warp 0 (the tile's boxes lane and lane + 32): a0, a1 their
 * "removed by" words (with the box's own bit: its row is read whole), a2,
 * a3 their next tile's words. The other threads (entries 2 q and 2 q + 1,
 * q = tid - 32, of the tile's lists): a0, a1 the bits, a2 the two words
 * (-1: none), the first in the low half. */
struct cnms_tile_regs {
  uint64_t a0, a1, a2, a3;
};

static_assert (2 * (CNMS_ENGINE_THREADS - 32) == CNMS_TILE * CNMS_ROW_LIST,
    "a tile's list entries, two a thread past warp 0");

/* Loads tile's part of this thread (cnms_tile_regs) into r. */
__device__ __forceinline__ void
cnms_tile_load (const cnms_engine_args &g, int n, int tile,
    cnms_tile_regs &r)
{
  const int tid = threadIdx.x;
  const int base = tile * CNMS_TILE;

  if (tid < 32) {
    const int i0 = base + tid, i1 = i0 + 32;
    const bool ok0 = i0 < n, ok1 = i1 < n;

    r.a0 = ok0 ? __ldcg (&g.grid_by[i0]) : 0;
    r.a1 = ok1 ? __ldcg (&g.grid_by[i1]) : 0;
    r.a2 = ok0 ? __ldcg (&g.row_next[i0]) : 0;
    r.a3 = ok1 ? __ldcg (&g.row_next[i1]) : 0;
  } else {
    /* even entry, so 16-byte aligned bits and 8-byte aligned words */
    const long long e = (long long) base * CNMS_ROW_LIST + 2 * (tid - 32);
    const int r0 = base + (2 * (tid - 32)) / CNMS_ROW_LIST;
    const int r1 = base + (2 * (tid - 32) + 1) / CNMS_ROW_LIST;

    /* entries of rows past n are never written (nor kept: not read) */
    if (r1 < n) {
      const ulonglong2 b = __ldcg ((const ulonglong2 *) &g.list_b[e]);
      r.a0 = b.x;
      r.a1 = b.y;
      r.a2 = __ldcg ((const unsigned long long *) &g.list_w[e]);
    } else if (r0 < n) {
      r.a0 = __ldcg (&g.list_b[e]);
      r.a1 = 0;
      r.a2 = 0xffffffff00000000ull | (uint32_t) __ldcg (&g.list_w[e]);
    } else {
      r.a0 = r.a1 = 0;
      r.a2 = ~0ull;
    }
  }
}

/* ORs v into word w of the removed bitmap s as two 32-bit halves (a
 * 64-bit shared atomicOr is a compare-and-swap loop on sm_90; OR is
 * order-free, so the bitmap is deterministic). */
__device__ __forceinline__ void
cnms_removed_or (uint64_t *s, int w, uint64_t v)
{
  unsigned *const h = (unsigned *) &s[w];

  if ((unsigned) v != 0)
    atomicOr (&h[0], (unsigned) v);
  if ((unsigned) (v >> 32) != 0)
    atomicOr (&h[1], (unsigned) (v >> 32));
}

/* The OR of v over the warp. */
__device__ __forceinline__ uint64_t
cnms_warp_or64 (uint64_t v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned lo = __reduce_or_sync (CNMS_FULL_WARP, (unsigned) v);
  const unsigned hi = __reduce_or_sync (CNMS_FULL_WARP,
      (unsigned) (v >> 32));
  return ((uint64_t) hi << 32) | lo;
#else
  for (int off = 16; off > 0; off >>= 1)
    v |= __shfl_xor_sync (CNMS_FULL_WARP, v, off);
  return v;
#endif
}

/* The uncached resolve's shared state between steps: slot t & 1 is
 * written by warp 0 in step t and read by the others in step t + 1. */
struct cnms_resolve_shared {
  uint64_t keep[2];             /* the kept boxes of the tile */
  uint64_t dense[2];            /* those of them read whole */
  int kept[2];                  /* boxes kept up to and with the tile */
};

/* Step t of the uncached resolve (see cnms_resolve_global); cur holds
 * this thread's part of its tile (warp 0: tile t; the others: tile t -
 * 1), nxt receives the next step's. Returns false, uniformly, when the
 * walk is over (max_keep reached). */
__device__ __forceinline__ bool
cnms_resolve_step (const cnms_engine_args &g, int n, int nb, int t,
    cnms_tile_regs &cur, cnms_tile_regs &nxt, uint64_t *s_removed,
    cnms_resolve_shared &sh, int32_t *kept_pos, uint64_t &carry,
    int &kept)
{
  const int tid = threadIdx.x;
  const int max_keep = g.a.max_keep;

  /* uniform: written in the last step, before its barrier */
  if ((t > 0 ? sh.kept[(t - 1) & 1] : 0) >= max_keep)
    return false;
  if (tid < 32) {
    const int lane = tid, b1 = lane + 32;
    const int base = t * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;

    if (t + 1 < nb)
      cnms_tile_load (g, n, t + 1, nxt);
    /* word t is final: the lists of tiles up to t - 2 were ORed in by
     * the last barrier, tile t - 1's word t is the carry */
    const uint64_t avail = ~(s_removed[t] | carry) & valid;
    const bool av0 = (avail >> lane) & 1, av1 = (avail >> b1) & 1;
    /* the earlier boxes of the tile that remove box lane / b1 */
    const uint64_t by0 = cur.a0 & ((1ull << lane) - 1);
    const uint64_t by1 = cur.a1 & ((1ull << b1) - 1);
    uint64_t keep = avail, prev;

    /* the tile's kept set, as cnms_resolve_cached finds it */
    do {
      prev = keep;
      keep = (uint64_t) __ballot_sync (CNMS_FULL_WARP,
          av0 && (by0 & prev) == 0)
          | ((uint64_t) __ballot_sync (CNMS_FULL_WARP,
              av1 && (by1 & prev) == 0) << 32);
    } while (keep != prev);
    /* max-detections inside the tile: its first kept boxes only */
    if (__popcll (keep) > max_keep - kept) {
      uint64_t rest = keep;
      keep = 0;
      for (int q = kept; q < max_keep; q++) {
        keep |= rest & (0 - rest);
        rest &= rest - 1;
      }
    }
    const bool k0 = (keep >> lane) & 1, k1 = (keep >> b1) & 1;
    if (k0)
      kept_pos[kept + __popcll (keep & ((1ull << lane) - 1))] = base + lane;
    if (k1)
      kept_pos[kept + __popcll (keep & ((1ull << b1) - 1))] = base + b1;
    /* a row read whole has its own bit in its "removed by" word */
    const uint64_t dense = (uint64_t) __ballot_sync (CNMS_FULL_WARP,
        k0 && ((cur.a0 >> lane) & 1))
        | ((uint64_t) __ballot_sync (CNMS_FULL_WARP,
            k1 && ((cur.a1 >> b1) & 1)) << 32);
    carry = cnms_warp_or64 ((k0 ? cur.a2 : 0) | (k1 ? cur.a3 : 0));
    kept += __popcll (keep);
    if (lane == 0) {
      sh.keep[t & 1] = keep;
      sh.dense[t & 1] = dense;
      sh.kept[t & 1] = kept;
    }
  } else {
    /* tile t's lists, for the next step */
    cnms_tile_load (g, n, t, nxt);
  }
  if (tid >= 32 && t > 0) {
    /* tile u = t - 1's kept rows: their words from u + 2 (word u + 1
     * went with warp 0's carry), needed from step t + 1 on */
    const int u = t - 1, q = tid - 32, step = blockDim.x - 32;
    const uint64_t keep = sh.keep[u & 1];
    const uint64_t dense = sh.dense[u & 1];
    const int w0 = (int) (uint32_t) cur.a2, w1 = (int) (cur.a2 >> 32);

    if (w0 >= 0 && ((keep >> ((2 * q) / CNMS_ROW_LIST)) & 1))
      cnms_removed_or (s_removed, w0, cur.a0);
    if (w1 >= 0 && ((keep >> ((2 * q + 1) / CNMS_ROW_LIST)) & 1))
      cnms_removed_or (s_removed, w1, cur.a1);
    /* rows with more nonzero words than their lists: read whole, a
     * thread's words of every such row loaded together */
    if (dense != 0) {
      const uint64_t *rows = g.mask + (size_t) u * CNMS_TILE * nb;

      for (int w = u + 2 + q; w < nb; w += step) {
        uint64_t acc = 0;
#pragma unroll 4
        for (uint64_t d = dense; d != 0; d &= d - 1)
          acc |= __ldcg (&rows[(size_t) (__ffsll ((long long) d) - 1) * nb
                  + w]);
        if (acc != 0)
          cnms_removed_or (s_removed, w, acc);
      }
    }
  }
  __syncthreads ();
  return true;
}

/* Uncached resolve (see the file comment); s: nb words of shared memory
 * for the removed bitmap. One step a tile, one block barrier a step: in
 * step t warp 0 resolves tile t (its boxes' words loaded in the step
 * before) and ORs its kept rows' next words (row_next) in registers (the
 * carry, word t + 1), while the other warps OR the listed words of tile t
 * - 1's kept rows (words t + 1 on) into the bitmap, and read tile t's
 * lists for the next step. Word t + 1 is then final for step t + 1. The
 * kept sort values go to g.grid_entries (free once the mask is done), the
 * records out after the walk. */
__device__ __forceinline__ void
cnms_resolve_global (const cnms_engine_args &g, int n, uint64_t *s)
{
  __shared__ cnms_resolve_shared sh;
  __shared__ int s_total;
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const int tid = threadIdx.x;
  char *body = g.out + CNMS_HEADER_BYTES;
  int32_t *const kept_pos = g.grid_entries;
  cnms_tile_regs ra, rb;
  uint64_t carry = 0;
  int kept = 0;

  ra.a0 = ra.a1 = ra.a2 = ra.a3 = 0;
  rb = ra;
  if (tid < 32 && nb > 0)
    cnms_tile_load (g, n, 0, ra);
  for (int w = tid; w < nb; w += blockDim.x)
    s[w] = 0;
  __syncthreads ();
  /* two steps a round, so that cur and nxt need no copy */
  for (int t = 0; t < nb; t += 2) {
    if (!cnms_resolve_step (g, n, nb, t, ra, rb, s, sh, kept_pos, carry,
            kept))
      break;
    if (t + 1 >= nb || !cnms_resolve_step (g, n, nb, t + 1, rb, ra, s, sh,
            kept_pos, carry, kept))
      break;
  }
  if (tid == 0)
    s_total = kept;
  __syncthreads ();
  const int total = s_total;
  cnms_write_kept (body, total, g.src.recs, tid, blockDim.x,
      [&] (int r) { return g.order[kept_pos[r]]; });
  cnms_write_kept_dev (g, total, tid, blockDim.x,
      [&] (int r) { return g.order[kept_pos[r]]; });
  if (tid == 0)
    ((int32_t *) g.out)[CNMS_OUT_KEPT] = total;
}

/* The resolve of n sorted boxes by one block; s: its dynamic shared
 * memory (g.smem_words long). */
__device__ __forceinline__ void
cnms_resolve (const cnms_engine_args &g, int n, uint64_t *s)
{
  /* uniform; the mask phase made the same choice */
  if (cnms_engine_cached (g, n))
    cnms_resolve_cached (g, n, s, cnms_kept_out ());
  else
    cnms_resolve_global (g, n, s);
}

#endif /* CNMS_CUDA_RESOLVE_CUH */
