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
 * - Otherwise (the pruned mask of cuda_prune.cuh), per tile, warp 0
 *   finds its kept set by ballots as the cached resolve does, from the 64
 *   boxes' "removed by" words (g.grid_by), loaded a tile ahead with the
 *   sort values and row lists; then the kept rows are ORed into the later
 *   words of the bitmap (shared atomicOr: OR is order-free, so the bitmap
 *   is deterministic): each from its list of nonzero words, or read whole
 *   when it has more than g.row_list_max of them. Of a row, it reads the
 *   list, and the whole row only then (what the pruned mask phase
 *   writes). */
#ifndef CNMS_CUDA_RESOLVE_CUH
#define CNMS_CUDA_RESOLVE_CUH

#include "cnms_cuda_device.cuh"

/* Where the uncached resolve reads the later words of kept rows. */
typedef struct {
  const uint64_t *g;            /* global mask, nb words a row */
  int nb;
} cnms_mask_src;

/* Word w (w >= row / 64) of sorted box row (row < 64 nb). */
__device__ __forceinline__ uint64_t
cnms_mask_word (const cnms_mask_src &m, int row, int w)
{
  return m.g[(size_t) row * m.nb + w];
}

/* ORs the mask rows of the n_kept boxes kept in tile blk (tile positions
 * in s_kept) into the later words blk + 1 .. nb - 1 of s_removed. With L
 * later words, each word gets blockDim / L groups of threads that take
 * every groups-th kept row; with L >= blockDim, one group and each thread
 * owns words tid + k blockDim. */
__device__ __forceinline__ void
cnms_or_kept_rows (const cnms_mask_src &m, int base, int blk,
    const int *s_kept, int n_kept, uint64_t *s_removed)
{
  const int threads = blockDim.x;
  const int tid = threadIdx.x;
  const int later = m.nb - blk - 1;

  if (later <= 0 || n_kept == 0)
    return;
  const bool wide = later >= threads;
  const int groups = wide ? 1 : threads / later;
  const int g = wide ? 0 : tid / later;

  if (g >= groups)
    return;
  for (int wo = wide ? tid : tid % later; wo < later; wo += threads) {
    const int w = blk + 1 + wo;
    uint64_t acc = 0;
    int kb = g;

    /* eight independent loads in flight per step */
    for (; kb + 7 * groups < n_kept; kb += 8 * groups) {
      uint64_t v[8];
#pragma unroll
      for (int u = 0; u < 8; u++)
        v[u] = cnms_mask_word (m, base + s_kept[kb + u * groups], w);
#pragma unroll
      for (int u = 0; u < 8; u++)
        acc |= v[u];
    }
    for (; kb < n_kept; kb += groups)
      acc |= cnms_mask_word (m, base + s_kept[kb], w);
    if (acc != 0)
      atomicOr ((unsigned long long *) &s_removed[w],
          (unsigned long long) acc);
  }
}

/* The cached walk's removals by the n_keep kept rows of a tile (tile
 * positions base + r in kpos): their words 1 .. width - 1 of the tile's
 * slab rows (diag) ORed into removed[1 .. width - 1], by the warp. Each of
 * the L = width - 1 later words gets G = 32 / L lanes, which take every
 * G-th kept row; the G partial words are then ORed together by shuffles
 * (a lane past the warp reads its own word again, which OR absorbs) and
 * the first lane of each word stores it. (One lane a word taking one row
 * a step cost about 60 ns a kept box: 4 us for a tile keeping all 64; a
 * shared-memory atomicOr in place of the shuffles, which sm_90 compiles
 * to a compare-and-swap loop, cost 0.3 us more a walk.) */
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
 * memory, laid out [removed nb | mask slab | order n | kept positions n].
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
__device__ __forceinline__ void
cnms_resolve_cached (const cnms_engine_args &g, int n, uint64_t *s)
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
  char *body = g.out + CNMS_HEADER_BYTES;

  for (int w = tid; w < nb; w += blockDim.x)
    s_removed[w] = 0;
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
  cnms_write_kept (body, kept, g.src.recs, tid, blockDim.x,
      [&] (int r) { return s_order[s_kpos[r]]; });
  cnms_write_kept_dev (g, kept, tid, blockDim.x,
      [&] (int r) { return s_order[s_kpos[r]]; });
  if (tid == 0)
    ((int32_t *) g.out)[CNMS_OUT_KEPT] = kept;
}

/* Uncached resolve (see the file comment); s: nb words of shared memory
 * for the removed bitmap. Thread t < 64
 * holds, a tile ahead, box (tile base + t)'s "removed by" word, sort value
 * and list length; the block loads the tile's lists of nonzero later words
 * into shared memory a tile ahead too (issued before the tile's resolve,
 * stored after it), so that a kept box ORs its list into the bitmap with
 * no global load on the chain; a row whose list holds more than
 * g.row_list_max entries (its list overflowed) is read whole. */
__device__ __forceinline__ void
cnms_resolve_global (const cnms_engine_args &g, int n, uint64_t *s)
{
  __shared__ uint64_t s_by[CNMS_TILE];
  __shared__ uint64_t s_keep;
  __shared__ int s_dense[CNMS_TILE];
  __shared__ int s_n_dense;
  __shared__ uint64_t s_lb[CNMS_TILE * CNMS_ROW_LIST];
  __shared__ int32_t s_lw[CNMS_TILE * CNMS_ROW_LIST];
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const int max_keep = g.a.max_keep;
  const int tid = threadIdx.x;
  const bool lead = tid < CNMS_TILE && tid < n;
  const int entries = CNMS_TILE * CNMS_ROW_LIST;
  char *body = g.out + CNMS_HEADER_BYTES;
  uint64_t *const s_removed = s;
  const cnms_mask_src m = { g.mask, nb };
  uint64_t by = lead ? __ldcg (&g.grid_by[tid]) : 0;
  uint32_t src = lead ? g.order[tid] : 0;
  int cnt = lead ? g.row_cnt[tid] : 0;
  int kept = 0;

  /* tile 0's lists (entries past a row's count are never read) */
  for (int p = tid; p < entries && p < n * CNMS_ROW_LIST; p += blockDim.x) {
    s_lb[p] = g.list_b[p];
    s_lw[p] = g.list_w[p];
  }
  for (int w = tid; w < nb; w += blockDim.x)
    s_removed[w] = 0;

  for (int blk = 0; blk < nb && kept < max_keep; blk++) {
    const int base = blk * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
    const int next_row = base + CNMS_TILE + tid;
    /* the next tile's list entries of this thread: tid + k blockDim */
    const long long next_first = (long long) (base + CNMS_TILE) *
        CNMS_ROW_LIST;
    const long long next_end = (long long) n * CNMS_ROW_LIST;
    uint64_t next = 0, nlb[CNMS_TILE * CNMS_ROW_LIST / CNMS_ENGINE_THREADS];
    int32_t nlw[CNMS_TILE * CNMS_ROW_LIST / CNMS_ENGINE_THREADS];
    uint32_t next_src = 0;
    int next_cnt = 0;
    cnms_det rec;

    /* this tile's records are loaded now, so that the load overlaps the
     * barrier and the tile's resolve */
    if (tid < CNMS_TILE && g.src.recs != NULL && base + tid < n)
      rec = g.src.recs[src];
    if (tid < CNMS_TILE) {
      s_by[tid] = by;
      if (blk + 1 < nb && next_row < n) {
        next = __ldcg (&g.grid_by[next_row]);
        next_src = g.order[next_row];
        next_cnt = g.row_cnt[next_row];
      }
    }
#pragma unroll
    for (int k = 0; k < entries / CNMS_ENGINE_THREADS; k++) {
      const long long at = next_first + tid + k * CNMS_ENGINE_THREADS;
      const bool ok = blk + 1 < nb && at < next_end;
      nlb[k] = ok ? g.list_b[at] : 0;
      nlw[k] = ok ? g.list_w[at] : 0;
    }
    if (tid == 0)
      s_n_dense = 0;
    __syncthreads ();

    /* uniform: s_removed[blk] is final since the last barrier */
    const uint64_t avail = ~s_removed[blk] & valid;
    if (avail != 0) {
      /* the tile's kept set by warp 0, as the cached resolve finds it
       * (cnms_resolve_cached), from the "removed by" words */
      if (tid < 32) {
        const int lane = tid, b1 = lane + 32;
        const uint64_t by0 = s_by[lane], by1 = s_by[b1];
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
        if (lane == 0)
          s_keep = keep;
      }
      __syncthreads ();
      const uint64_t kept_bits = s_keep;
      const bool mine = tid < CNMS_TILE && ((kept_bits >> tid) & 1);

      if (mine) {
        const int rank = kept + __popcll (kept_bits & ((1ull << tid) - 1));
        if (g.kept_dev != NULL)
          g.kept_dev[1 + rank] = (int32_t) src;
        if (g.src.recs != NULL)
          cnms_write_record (body, rank, rec);
        else
          ((int64_t *) body)[rank] = (int64_t) src;
        if (cnt > g.row_list_max) {
          s_dense[atomicAdd (&s_n_dense, 1)] = tid;
        } else {
          /* OR is order-free: the bitmap is deterministic */
          for (int e = 0; e < cnt; e++)
            atomicOr ((unsigned long long *)
                &s_removed[s_lw[tid * CNMS_ROW_LIST + e]],
                (unsigned long long) s_lb[tid * CNMS_ROW_LIST + e]);
        }
      }
      kept += __popcll (kept_bits);
      __syncthreads ();
      /* uniform: the count is final since the barrier; the order of
       * s_dense does not matter to an OR */
      cnms_or_kept_rows (m, base, blk, s_dense, s_n_dense, s_removed);
    }
    /* s_removed, s_by, s_keep, s_dense and the lists are reused by the
     * next tile */
    __syncthreads ();
#pragma unroll
    for (int k = 0; k < entries / CNMS_ENGINE_THREADS; k++) {
      s_lb[tid + k * CNMS_ENGINE_THREADS] = nlb[k];
      s_lw[tid + k * CNMS_ENGINE_THREADS] = nlw[k];
    }
    by = next;
    src = next_src;
    cnt = next_cnt;
  }
  if (tid == 0) {
    if (g.kept_dev != NULL)
      g.kept_dev[0] = kept;
    ((int32_t *) g.out)[CNMS_OUT_KEPT] = kept;
  }
}

/* The resolve of n sorted boxes by one block; s: its dynamic shared
 * memory (g.smem_words long). */
__device__ __forceinline__ void
cnms_resolve (const cnms_engine_args &g, int n, uint64_t *s)
{
  /* uniform; the mask phase made the same choice */
  if (cnms_engine_cached (g, n))
    cnms_resolve_cached (g, n, s);
  else
    cnms_resolve_global (g, n, s);
}

#endif /* CNMS_CUDA_RESOLVE_CUH */
