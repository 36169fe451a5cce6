/* The lane engine's block-local front (included by cuda_engine.cu): a
 * LaneATT tensor small enough (cnms_engine_decode.lane_local) is decoded
 * and sorted by every block on its own, in shared memory, so that no
 * grid barrier stands between the decode, the sort and the mask.
 *
 * Every block reads the score, start and length of every proposal (the
 * same rule as cnms_decode_lane), keeps its candidates' compact keys,
 * rows and anchors in shared memory, and ranks them there (the keys are
 * unique, so every block finds the one order). The mask phase then reads
 * each sorted lane's rows and x straight from the tensor by its anchor
 * (cnms_lane_local_ref), in items of 16 row lanes against 16 column lanes
 * (cnms_mask_lanes_quads: a block each). The arrays lie at the end of the
 * dynamic shared memory, past what the cached resolve takes: every block
 * holds them, so the one that checks in last resolves at once, and writes
 * the kept records and copies their tensor rows out from its own
 * (cnms_lane_local_out): nothing of the candidates goes through global
 * memory but the mask. The device-side count is never touched.
 *
 * When the candidates do not fit (more than the room, or a count whose
 * mask the cached resolve cannot take), every block says so (the same
 * count, the same answer) and the engine decodes again the usual way. */
#ifndef CNMS_CUDA_LANE_LOCAL_CUH
#define CNMS_CUDA_LANE_LOCAL_CUH

#include "cuda_mask.cuh"
#include "cuda_resolve.cuh"

/* Shared-memory bytes a candidate takes in the local front: its key, its
 * rows, score and anchor unsorted and sorted. */
#define CNMS_LANE_LOCAL_BYTES 40

/* The local front's arrays, room candidates each, at the end of the
 * block's dynamic shared memory (words words). */
struct cnms_lane_local {
  uint64_t *key;
  int2 *rows;                   /* by slot */
  int2 *sorted_rows;            /* by sorted position */
  float *score;
  float *sorted_score;
  uint32_t *anchor;
  uint32_t *sorted_anchor;
  int room;
  long long words;              /* the arrays' words */
};

__device__ __forceinline__ cnms_lane_local
cnms_lane_local_at (uint64_t *s, long long words, int room)
{
  cnms_lane_local l;

  l.room = room;
  l.words = ((long long) room * CNMS_LANE_LOCAL_BYTES + 7) / 8;
  l.key = s + words - l.words;
  l.rows = (int2 *) (l.key + room);
  l.sorted_rows = l.rows + room;
  l.score = (float *) (l.sorted_rows + room);
  l.sorted_score = l.score + room;
  l.anchor = (uint32_t *) (l.sorted_score + room);
  l.sorted_anchor = l.anchor + room;
  return l;
}

/* The candidates the front holds: what the mask's staging leaves, at
 * most CNMS_LANE_LOCAL_MAX. */
__device__ __forceinline__ int
cnms_lane_local_room (const cnms_engine_args &g)
{
  const long long spare = (g.smem_words * 8 - CNMS_LANE_LOCAL_STAGE)
      / CNMS_LANE_LOCAL_BYTES;

  return spare < 0 ? 0 : (spare > CNMS_LANE_LOCAL_MAX ? CNMS_LANE_LOCAL_MAX
      : (int) spare);
}

/* Lane i of the sorted candidates, its x in the tensor (row i of the
 * proposal, from element 5). */
template <typename T>
struct cnms_lane_local_ref {
  const int2 *rows;
  const uint32_t *anchor;
  const T *tensor;
  int stride;
  __device__ cnms_lane_ref operator() (int i) const
  {
    const int2 r = rows[i];
    cnms_lane_ref ref;

    ref.x = tensor + (size_t) stride * anchor[i] + 5;
    ref.s = r.x;
    ref.e = r.y;
    return ref;
  }
};

/* The values of a proposal that the local decode reads (its logits,
 * start_y, start_x and length), and the loads a thread has in flight. */
#define CNMS_LANE_FIELDS 5
#define CNMS_LANE_FRONT_LOADS 20

/* The local front's decode and sort (see the file comment) into l. Sets
 * *count (candidates) and *nonfinite (proposals without a finite score);
 * returns false, the same in every block, when the candidates do not fit,
 * and leaves nothing written outside the block. */
template <typename T>
__device__ __forceinline__ bool
cnms_lane_local_front (const cnms_engine_args &g, const cnms_lane_local &l,
    uint64_t *s_stage, long long stage_words, int *count, int *nonfinite)
{
  __shared__ int s_count, s_nonfinite;
  const cnms_engine_decode &d = g.dec;
  const T *t = (const T *) d.tensor;
  const int stride = 5 + d.n_classes, n_strips = d.n_classes - 1;
  const int tid = threadIdx.x;

  if (tid == 0) {
    s_count = 0;
    s_nonfinite = 0;
  }
  __syncthreads ();
  /* the rows' first five values, a pass's rows at a time, staged in the
   * room at the start of shared memory (the mask's later) by consecutive
   * threads, so that a warp's load reads the leading bytes of a few rows;
   * then a thread a row decodes them */
  float *const s_f = (float *) s_stage;
  const int pass = (int) min ((long long) d.n_anchors,
      stage_words * 2 / CNMS_LANE_FIELDS);
  for (int a0 = 0; a0 < d.n_anchors; a0 += pass) {
    const int rows = min (pass, d.n_anchors - a0);
    const int total = rows * CNMS_LANE_FIELDS;

    for (int base = tid; base < total;
        base += CNMS_LANE_FRONT_LOADS * CNMS_ENGINE_THREADS) {
      T v[CNMS_LANE_FRONT_LOADS];

#pragma unroll
      for (int u = 0; u < CNMS_LANE_FRONT_LOADS; u++) {
        const int e = base + u * CNMS_ENGINE_THREADS;
        const int r = e / CNMS_LANE_FIELDS;

        v[u] = e < total ? t[(size_t) stride * (a0 + r)
            + (e - r * CNMS_LANE_FIELDS)] : (T) 0;
      }
#pragma unroll
      for (int u = 0; u < CNMS_LANE_FRONT_LOADS; u++)
        if (base + u * CNMS_ENGINE_THREADS < total)
          s_f[base + u * CNMS_ENGINE_THREADS] = cnms_elem_float (v[u]);
    }
    __syncthreads ();
    for (int r = tid; r < rows; r += CNMS_ENGINE_THREADS) {
      const int a = a0 + r;
      const float *f = s_f + r * CNMS_LANE_FIELDS;
      int32_t start, end;
      const float score = cnms_lane_score (f[0], f[1]);
      if (!cnms_isfinite (score))
        atomicAdd (&s_nonfinite, 1);
      if (cnms_score_ok (score, d.lane_thr)
          && cnms_lane_rows (f[2], f[4], n_strips, &start, &end)) {
        const int slot = atomicAdd (&s_count, 1);
        if (slot < l.room) {
          l.key[slot] = cnms_cuda_compact_key (score, (uint32_t) a, d.abits);
          l.rows[slot] = make_int2 (start, end);
          l.score[slot] = score;
          l.anchor[slot] = (uint32_t) a;
        }
      }
    }
    /* the next pass overwrites the rows */
    __syncthreads ();
  }
  const int m = s_count;
  const int n = m < g.a.cap ? m : g.a.cap;

  *count = m;
  *nonfinite = s_nonfinite;
  /* uniform over the grid: every block counted the same candidates; the
   * cached resolve's words stop short of the arrays */
  if (m > l.room || n > g.cache_max
      || cnms_resolve_cached_words (n) + l.words > g.smem_words)
    return false;
  for (int slot = tid; slot < m; slot += blockDim.x) {
    const uint64_t k = l.key[slot];
    int c[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, j = 0;

    /* eight keys in flight: the compares wait on shared-memory loads */
    for (; j + 8 <= m; j += 8) {
#pragma unroll
      for (int u = 0; u < 8; u++)
        c[u] += l.key[j + u] < k;
    }
    for (; j < m; j++)
      c[0] += l.key[j] < k;
    const int rank = c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
    if (rank < n) {
      l.sorted_rows[rank] = l.rows[slot];
      l.sorted_score[rank] = l.score[slot];
      l.sorted_anchor[rank] = l.anchor[slot];
    }
  }
  __syncthreads ();
  return true;
}

/* The local front and the mask of a LaneATT tensor of element type T
 * (s: the block's dynamic shared memory). Returns false, in every block,
 * when the candidates do not fit; else sets *count and *nonfinite, and
 * the mask of the first min (count, cap) sorted candidates is out (this
 * block's part; the engine then goes on to its check-in). */
template <typename T>
__device__ __forceinline__ bool
cnms_lane_local_run (const cnms_engine_args &g, uint64_t *s, int *count,
    int *nonfinite)
{
  const cnms_lane_local l = cnms_lane_local_at (s, g.smem_words,
      cnms_lane_local_room (g));

  if (!cnms_lane_local_front <T> (g, l, s, g.smem_words - l.words, count,
          nonfinite))
    return false;
  const int n = *count < g.a.cap ? *count : g.a.cap;
  cnms_mask_lanes_quads <T> (g, n, cnms_lane_local_ref <T> {
        l.sorted_rows, l.sorted_anchor, (const T *) g.dec.tensor,
        5 + g.dec.n_classes }, s, g.smem_words - l.words);
  return true;
}

/* The cached resolve's output of the block-local front (cnms_kept_out's
 * place): each kept record (its score and anchor; the rest 0, as the
 * decode's) from the sorted arrays, and from a device tensor its row
 * into kept_dst. */
struct cnms_lane_local_out {
  static constexpr bool order = false;
  const float *score;
  const uint32_t *anchor;
  __device__ void operator() (const cnms_engine_args &g, int kept,
      const uint32_t *s_order, const int *s_kpos) const
  {
    char *body = g.out + CNMS_HEADER_BYTES;
    const int pieces = g.src.kept_dst != NULL ? g.src.kept_dst_units / 8 :
        0;

    (void) s_order;
    for (int r = threadIdx.x; r < kept; r += blockDim.x) {
      cnms_det rec;

      memset (&rec, 0, sizeof rec);
      rec.score = score[s_kpos[r]];
      rec.anchor = (int32_t) anchor[s_kpos[r]];
      cnms_write_record (body, r, rec);
    }
    for (int c = threadIdx.x; c < kept * pieces; c += blockDim.x) {
      const int r = c / pieces;

      cnms_copy_kept_piece (g.src, r, c - r * pieces, anchor[s_kpos[r]]);
    }
  }
};

/* The resolve after the block-local front, in the block that checks in
 * last (s: its dynamic shared memory, the front's arrays still at its
 * end). */
__device__ __forceinline__ void
cnms_lane_local_resolve (const cnms_engine_args &g, int n, uint64_t *s)
{
  const cnms_lane_local l = cnms_lane_local_at (s, g.smem_words,
      cnms_lane_local_room (g));

  cnms_resolve_cached (g, n, s, cnms_lane_local_out { l.sorted_score,
        l.sorted_anchor });
}

#endif /* CNMS_CUDA_LANE_LOCAL_CUH */
