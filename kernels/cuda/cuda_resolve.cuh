/* The engine's last phase (included by cuda_engine.cu): the greedy walk
 * over the bitmask in one block, with the "removed" bitmap in shared
 * memory. When the upper triangle of the mask fits in the rest of the
 * block's dynamic shared memory, the block first copies it there with
 * coalesced loads, and every later read is shared memory. Per 64-box tile
 * it takes the 64 diagonal words (loaded one tile ahead), resolves the
 * tile in registers (cnms_resolve_tile), writes the kept records, then
 * ORs the kept rows into the later words: threads fold their rows into a
 * register and do one shared atomicOr per word (OR is order-free, so the
 * bitmap is deterministic). It stops at max_keep. */
#ifndef CNMS_CUDA_RESOLVE_CUH
#define CNMS_CUDA_RESOLVE_CUH

#include "cnms_cuda_device.cuh"

/* Where the resolve reads the later words of kept rows: the global mask,
 * or (cached) a shared-memory copy of the upper triangle of its nb tiles,
 * tile row b as 64 rows of the words b .. nb - 1. */
typedef struct {
  const uint64_t *g;            /* global mask, nb words a row */
  const uint64_t *s;            /* shared copy, or NULL */
  int nb;
} cnms_mask_src;

/* First word of tile row b in the shared copy of nb tile rows (and, for
 * b = nb, the words of all of it). */
__host__ __device__ __forceinline__ long long
cnms_slab_offset (int b, int nb)
{
  return 64LL * ((long long) b * nb - (long long) b * (b - 1) / 2);
}

/* Word w (w >= row / 64) of sorted box row (row < 64 nb). */
__device__ __forceinline__ uint64_t
cnms_mask_word (const cnms_mask_src &m, int row, int w)
{
  if (m.s != NULL) {
    const int b = row / CNMS_TILE;
    return m.s[cnms_slab_offset (b, m.nb) + (long long) (row - CNMS_TILE *
            b) * (m.nb - b) + (w - b)];
  }
  return m.g[(size_t) row * m.nb + w];
}

/* Copies the upper triangle of the mask of n boxes (nb tiles) into s
 * (cnms_slab_offset layout; rows past n as 0), eight independent loads
 * in flight per thread and step. */
__device__ __forceinline__ void
cnms_cache_mask (const uint64_t *__restrict__ mask, int n, int nb,
    uint64_t *s)
{
  const long long total = cnms_slab_offset (nb, nb);
  const int threads = blockDim.x;
  int b = 0;                    /* tile row of this thread's element */

  for (long long e0 = threadIdx.x; e0 < total; e0 += 8LL * threads) {
    uint64_t v[8];
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const long long e = e0 + (long long) u * threads;
      v[u] = 0;
      if (e < total) {
        while (e >= cnms_slab_offset (b + 1, nb))
          b++;
        const int width = nb - b;
        const long long r = e - cnms_slab_offset (b, nb);
        const int row = CNMS_TILE * b + (int) (r / width);
        const int w = b + (int) (r % width);
        if (row < n)
          v[u] = mask[(size_t) row * nb + w];
      }
    }
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const long long e = e0 + (long long) u * threads;
      if (e < total)
        s[e] = v[u];
    }
  }
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

/* The resolve of n sorted boxes by one block; s: its dynamic shared
 * memory, s_words long. cache: the mask may be copied into it. */
__device__ __forceinline__ void
cnms_resolve (const cnms_engine_args &g, int n, uint64_t *s, long long s_words,
    bool cache)
{
  __shared__ uint64_t s_diag[CNMS_TILE];
  __shared__ int s_kept[CNMS_TILE];
  const int nb = cnms_ceil_div (n, CNMS_TILE);
  const int max_keep = g.a.max_keep;
  const int tid = threadIdx.x;
  char *body = g.out + CNMS_HEADER_BYTES;
  uint64_t *const s_removed = s;
  /* uniform: the mask is cached when it fits behind the removed bitmap */
  const bool cached = cache && nb + cnms_slab_offset (nb, nb) <= s_words;
  const cnms_mask_src m = { g.mask, cached ? s + nb : NULL, nb };
  /* diagonal word and sort value of box (tile base + tid), a tile ahead */
  uint64_t diag = tid < CNMS_TILE && tid < n ? g.mask[(size_t) tid * nb] : 0;
  uint32_t src = tid < CNMS_TILE && tid < n ? g.order[tid] : 0;
  int kept = 0;

  for (int w = tid; w < nb; w += blockDim.x)
    s_removed[w] = 0;
  if (cached)
    cnms_cache_mask (g.mask, n, nb, s + nb);

  for (int blk = 0; blk < nb && kept < max_keep; blk++) {
    const int base = blk * CNMS_TILE;
    const int size = min (CNMS_TILE, n - base);
    const uint64_t valid = size == CNMS_TILE ? ~0ull : (1ull << size) - 1;
    const int next_row = base + CNMS_TILE + tid;
    uint64_t next = 0;
    uint32_t next_src = 0;

    if (tid < CNMS_TILE) {
      s_diag[tid] = diag;
      /* the next tile's diagonal and sort values do not depend on this
       * tile: load them now */
      if (blk + 1 < nb && next_row < n) {
        next = g.mask[(size_t) next_row * nb + blk + 1];
        next_src = g.order[next_row];
      }
    }
    __syncthreads ();

    /* uniform: s_removed[blk] is final since the last barrier */
    const uint64_t avail = ~s_removed[blk] & valid;
    if (avail != 0) {
      const uint64_t kept_bits = cnms_resolve_tile < 16 > (s_diag, avail,
          kept, max_keep);
      const int n_kept = __popcll (kept_bits);
      const bool mine = tid < CNMS_TILE && ((kept_bits >> tid) & 1);
      const int rank = mine ? kept + __popcll (kept_bits
          & ((1ull << (tid & (CNMS_TILE - 1))) - 1)) : 0;

      if (mine)
        s_kept[rank - kept] = tid;
      kept += n_kept;
      __syncthreads ();

      if (mine)
        cnms_write_kept (body, rank, src, g.src.recs);
      cnms_or_kept_rows (m, base, blk, s_kept, n_kept, s_removed);
    }
    /* s_removed, s_diag and s_kept are reused by the next tile */
    __syncthreads ();
    diag = next;
    src = next_src;
  }
  if (tid == 0)
    ((int32_t *) g.out)[CNMS_OUT_KEPT] = kept;
}

#endif /* CNMS_CUDA_RESOLVE_CUH */
