/* The tiles' merge on the CUDA backend (cnms_backend_ops.merge, what
 * cnms_merge and cnms_detect_tiles run on a CUDA context): SAHI's
 * postprocess, or the consistent rules, with the host merge's bits
 * (kernels/front/tiles.c; the arithmetic of both is core/cnms_merge.h).
 *
 * One upload of the records from pinned staging, one block for the whole
 * merge, its results straight into mapped pinned host memory, one
 * synchronisation. The block holds the records (float32 for SAHI's first
 * pass, the caller's doubles for the consistent rules) and the walk's
 * state in shared memory:
 *   - a bitonic sort of the records into the walk order: the records
 *     that take part first, by class when each class merges alone (the
 *     float32 id; the consistent rules' integer id), then SAHI's order
 *     (cnms_merge_order32; cnms_merge_order64 for the consistent rules),
 *     then the index: a total order, so the walk is the host's;
 *   - the classes' runs of positions (a block scan);
 *   - the walk of each run (of the whole order when class-agnostic), by a
 *     warp for a run of at most CNMS_MERGE_WARP_RUN records (the warps
 *     take the short runs at once), by the whole block for a longer one:
 *     for NMS and greedy NMM a step a keeper, in which the threads test
 *     the later free records of its run against it, and the least free
 *     record it does not take is the next keeper; for NMM a step a
 *     record, whose claims go to its keeper (transitive); SAHI's NMM at a
 *     threshold of 0 takes its shortcut in one parallel pass. Each taken
 *     record notes its keeper and the step that took it;
 *   - NMS: the keepers by a block scan, for per-class merging then sorted
 *     by score, stably (bitonic on (score, place)); one result each;
 *   - greedy NMM and NMM: a bitonic sort of one key a record, (keeper,
 *     step + 1, then its place in the walk (greedy) or its index (NMM)),
 *     keepers with step 0: each keeper followed by its merge list in the
 *     host's order; then the merge pass a thread a keeper, in double, and
 *     the results' places: a keeper's own (SAHI: its rank), or for the
 *     consistent rules its rank plus the records dropped from the lists
 *     before it (a block scan), its dropped records right after it.
 * At most CNMS_MERGE_MAX records (and what fits in the device's shared
 * memory) take the kernel; above, the op declines and the front end
 * merges on the host. */
#include <limits.h>
#include <string.h>

#include "cnms_cuda.cuh"
#include "cnms_cuda_device.cuh"
#include "cnms_merge.h"

/* Threads of the merge's block at most. */
#define CNMS_MERGE_THREADS 1024
/* Ints of the block's scratch: the scan's warp sums and total (33), the
 * walk's next-keeper candidates (3). */
#define CNMS_MERGE_SCRATCH 40
/* Runs (a class's records, or all) of at most this many records are
 * walked by a warp each, all at once; longer ones by the whole block, one
 * after another. */
#define CNMS_MERGE_WARP_RUN 256

/* The key of a record in a merge list: its keeper's place in the walk,
 * the step that took it plus one (0: the keeper itself), and its place
 * (greedy NMM) or index (NMM); 13 bits each. */
#define KEY_BITS 13
#define KEY_MASK ((1ull << KEY_BITS) - 1)

typedef unsigned long long u64;

/* What the kernel reads and where it writes. */
typedef struct {
  const double *boxes;          /* [n][4] */
  const double *scores;         /* [n] */
  const int32_t *classes;       /* [n] */
  char *out;                    /* [header | cnms_det x n], mapped */
  double thr;
  float thr32;
  int n;
  int n2;                       /* a power of two >= n, >= 32 */
  int rule, metric, agnostic;
} merge_args;

/* Where each array lies in the block's shared memory for n2 records:
 * the records (float32, or the consistent rules' double boxes; the merge
 * lists' keys once the walk is done), the scratch, then 16-bit arrays of
 * n2 + 2 entries by walk position (order: the record at a position;
 * owner: its keeper's position, -1 for a keeper or a free record; step:
 * the position that took it; seg: its class's run; starts: each run's
 * first position, one past the last run's end; owner, step and seg are
 * reused once the walk is done), and a byte a record (takes part). */
typedef struct {
  size_t recs, scratch, order, owner, step, seg, starts, valid, total;
} merge_layout;

static __host__ __device__ merge_layout
merge_layout_of (int n2, bool consistent)
{
  merge_layout l;
  const size_t n = (size_t) n2;

  l.recs = 0;
  l.scratch = n * (consistent ? 4 * sizeof (double) : sizeof (cnms_merge_rec));
  l.order = l.scratch + CNMS_MERGE_SCRATCH * sizeof (int);
  l.owner = l.order + (n + 2) * sizeof (uint16_t);
  l.step = l.owner + (n + 2) * sizeof (int16_t);
  l.seg = l.step + (n + 2) * sizeof (int16_t);
  l.starts = l.seg + (n + 2) * sizeof (int16_t);
  l.valid = l.starts + (n + 2) * sizeof (int16_t);
  l.total = (l.valid + n + 15) / 16 * 16;
  return l;
}

/* Exclusive scan of item (i) over i in [0, len) by the whole block (a
 * multiple of 32 threads): put (i, the sum before i) for each i; returns
 * the total. item is called twice per i and must read nothing that put
 * writes. Starts and ends with a block barrier's worth of order: the
 * caller makes item's inputs visible before, and may reuse scratch after. */
template <typename Item, typename Put>
static __device__ __forceinline__ int
block_scan (int len, int *scratch, Item item, Put put)
{
  const int nt = blockDim.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int per = (len + nt - 1) / nt;
  const int lo = t * per < len ? t * per : len;
  const int hi = lo + per < len ? lo + per : len;
  int sum = 0, x, run, total, i, d;

  for (i = lo; i < hi; i++)
    sum += item (i);
  x = sum;
  for (d = 1; d < 32; d <<= 1) {
    const int y = __shfl_up_sync (0xffffffffu, x, d);
    if (lane >= d)
      x += y;
  }
  if (lane == 31)
    scratch[warp] = x;
  __syncthreads ();
  if (warp == 0) {
    const int w = lane < nt / 32 ? scratch[lane] : 0;
    int wx = w;

    for (d = 1; d < 32; d <<= 1) {
      const int y = __shfl_up_sync (0xffffffffu, wx, d);
      if (lane >= d)
        wx += y;
    }
    scratch[lane] = wx - w;
    if (lane == 31)
      scratch[32] = wx;
  }
  __syncthreads ();
  run = scratch[warp] + x - sum;
  for (i = lo; i < hi; i++) {
    const int v = item (i);
    put (i, run);
    run += v;
  }
  total = scratch[32];
  __syncthreads ();
  return total;
}

/* Sorts a[0 .. len) (len a power of two) by the strict order before,
 * ascending, by the whole block: a bitonic network. The caller makes a
 * visible before; a is sorted for every thread after. */
template <typename T, typename Before>
static __device__ __forceinline__ void
block_sort (T *a, int len, Before before)
{
  int k, j, i;

  for (k = 2; k <= len; k <<= 1)
    for (j = k >> 1; j > 0; j >>= 1) {
      for (i = threadIdx.x; i < len / 2; i += blockDim.x) {
        const int lo = ((i & ~(j - 1)) << 1) | (i & (j - 1));
        const int hi = lo + j;
        const T x = a[lo], y = a[hi];

        if ((lo & k) == 0 ? before (y, x) : before (x, y)) {
          a[lo] = y;
          a[hi] = x;
        }
      }
      __syncthreads ();
    }
}

/* The box of record i of the input. */
static __device__ __forceinline__ void
load_box (const merge_args &a, int i, double *b)
{
  const double2 *p = (const double2 *) (a.boxes + 4 * (size_t) i);
  const double2 u = p[0], v = p[1];

  b[0] = u.x;
  b[1] = u.y;
  b[2] = v.x;
  b[3] = v.y;
}

/* The threads that walk a run together: a warp (a short run), or the
 * whole block (a long one). rank: the thread's place among them; sync:
 * their writes to shared memory seen by all of them; least: the least of
 * v over them, for every one of them (after a sync). */
struct warp_team {
  int rank;
  static constexpr int size = 32;

  __device__ __forceinline__ void sync () const
  {
    __syncwarp ();
  }

  __device__ __forceinline__ int least (int v)
  {
    int d;

    for (d = 16; d > 0; d >>= 1) {
      const int o = __shfl_xor_sync (0xffffffffu, v, d);
      v = o < v ? o : v;
    }
    __syncwarp ();
    return v;
  }
};

/* The block's least goes through three words of shared memory in turn
 * (next): a step's minima land in one while the last step's is read and
 * the next step's is reset, one barrier a step. */
struct block_team {
  int rank, size;
  int *next;
  int s;

  __device__ __forceinline__ void sync () const
  {
    __syncthreads ();
  }

  __device__ __forceinline__ int least (int v)
  {
    int d, r;

    for (d = 16; d > 0; d >>= 1) {
      const int o = __shfl_xor_sync (0xffffffffu, v, d);
      v = o < v ? o : v;
    }
    if ((rank & 31) == 0 && v != INT_MAX)
      atomicMin (&next[s % 3], v);
    if (rank == 0)
      next[(s + 1) % 3] = INT_MAX;
    __syncthreads ();
    r = next[s % 3];
    s++;
    return r;
  }
};

/* NMS and greedy NMM on the run of positions [f, e) by team tm: a step a
 * keeper, from the run's first; the keeper at p takes the free records
 * after it that it matches (owner: p), and the least free one it does
 * not take is the next keeper. */
template <typename Team, typename Match>
static __device__ __forceinline__ void
walk_keepers (Team &tm, int f, int e, const uint16_t *order, int16_t *owner,
    Match match)
{
  int cur = f;

  while (cur < e) {
    const int p = cur, i = order[p];
    int least = INT_MAX, q;

    for (q = p + 1 + tm.rank; q < e; q += tm.size)
      if (owner[q] < 0) {
        if (match (i, order[q]))
          owner[q] = (int16_t) p;
        else if (least == INT_MAX)
          least = q;
      }
    least = tm.least (least);
    cur = least < e ? least : e;
  }
}

/* NMM on the run [f, e) by team tm: a step a record; the record at p
 * claims, for its keeper (p itself when free), the free records after it
 * that claims says it may claim (owner: the keeper, step: p). */
template <typename Team, typename Claims>
static __device__ __forceinline__ void
walk_nmm (Team &tm, int f, int e, const uint16_t *order, int16_t *owner,
    int16_t *step, Claims claims)
{
  int p, q;

  for (p = f; p + 1 < e; p++) {
    const int k = owner[p] < 0 ? p : owner[p], i = order[p];

    for (q = p + 1 + tm.rank; q < e; q += tm.size)
      if (owner[q] < 0 && claims (i, order[q])) {
        owner[q] = (int16_t) k;
        step[q] = (int16_t) p;
      }
    tm.sync ();
  }
}

/* The merge of the keeper at key place s0 and its list (key places
 * s0 + 1 .. s1 - 1), as the host's merge pass: out NULL counts the
 * records that the consistent rules keep alone; else writes the keeper's
 * result at place at of out and those records right after it. Returns
 * that count (0 for SAHI's rules, which drop them). */
template <bool CONSISTENT>
static __device__ int
merge_group (const merge_args &a, const u64 *keys, const uint16_t *order,
    int s0, int s1, char *out, int at)
{
  const cnms_match_metric metric = (cnms_match_metric) a.metric;
  const int k = order[(int) (keys[s0] >> (2 * KEY_BITS))];
  double box[4], jb[4], score = a.scores[k];
  int32_t cls = a.classes[k];
  int s, alone = 0;

  load_box (a, k, box);
  for (s = s0 + 1; s < s1; s++) {
    const int sub = (int) (keys[s] & KEY_MASK);
    const int i = a.rule == CNMS_MERGE_NMM ? sub : order[sub];

    load_box (a, i, jb);
    if (!cnms_merge_takes (box, jb, metric, a.thr, CONSISTENT)) {
      if (CONSISTENT) {
        alone++;
        if (out != NULL)
          cnms_write_record (out, at + alone,
              cnms_merge_det (jb, a.scores[i], a.classes[i], i));
      }
      continue;
    }
    cnms_merge_absorb (box, &score, &cls, jb, a.scores[i], a.classes[i],
        CONSISTENT);
  }
  if (out != NULL)
    cnms_write_record (out, at, cnms_merge_det (box, score, cls, k));
  return alone;
}

template <bool CONSISTENT>
static __global__ void __launch_bounds__ (CNMS_MERGE_THREADS, 1)
merge_kernel (merge_args a)
{
  extern __shared__ __align__ (16) unsigned char smem[];
  const merge_layout l = merge_layout_of (a.n2, CONSISTENT);
  cnms_merge_rec *rec = (cnms_merge_rec *) (smem + l.recs);
  double *box64 = (double *) (smem + l.recs);
  u64 *keys = (u64 *) (smem + l.recs);
  int *scratch = (int *) (smem + l.scratch);
  uint16_t *order = (uint16_t *) (smem + l.order);
  int16_t *owner = (int16_t *) (smem + l.owner);
  int16_t *step = (int16_t *) (smem + l.step);
  int16_t *seg = (int16_t *) (smem + l.seg);
  int16_t *starts = (int16_t *) (smem + l.starts);
  uint8_t *valid = (uint8_t *) (smem + l.valid);
  const cnms_match_metric metric = (cnms_match_metric) a.metric;
  const int n = a.n, n2 = a.n2, nt = blockDim.x, t = threadIdx.x;
  const int lane = t & 31;
  char *body = a.out + CNMS_HEADER_BYTES;
  int n_in = 0, runs, base, j, q, n_out;

  /* the records, which of them take part, and the walk's state */
  for (j = t; j < n2; j += nt) {
    int v = 0;

    if (j < n) {
      double b[4];
      const double sc = a.scores[j];

      load_box (a, j, b);
      v = cnms_merge_takes_part (b, sc);
      if (CONSISTENT) {
        box64[4 * j] = b[0];
        box64[4 * j + 1] = b[1];
        box64[4 * j + 2] = b[2];
        box64[4 * j + 3] = b[3];
      } else {
        rec[j] = cnms_merge_rec_of (b, sc, a.classes[j]);
      }
    }
    valid[j] = (uint8_t) v;
    order[j] = (uint16_t) j;
    owner[j] = -1;
    step[j] = -1;
  }
  for (base = 0; base < n2; base += nt)
    n_in += __syncthreads_count (base + t < n2 && valid[base + t]);

  /* the walk order: the records that take part first; by class when
   * each class merges alone; SAHI's order; the index */
  block_sort (order, n2, [&] (int x, int y) -> bool {
        int c = 0;

        if (valid[x] != valid[y])
          return valid[x] != 0;
        if (!valid[x])
          return x < y;
        if (!a.agnostic) {
          if (CONSISTENT) {
            if (a.classes[x] != a.classes[y])
              c = a.classes[x] < a.classes[y] ? -1 : 1;
          } else if (rec[x].cls != rec[y].cls) {
            c = rec[x].cls < rec[y].cls ? -1 : 1;
          }
        }
        if (c == 0)
          c = CONSISTENT ? cnms_merge_order64 (box64 + 4 * x, a.scores[x],
              box64 + 4 * y, a.scores[y]) :
              cnms_merge_order32 (&rec[x], &rec[y]);
        return c != 0 ? c < 0 : x < y;
      });

  /* the classes' runs of positions: seg[p], and starts[] */
  {
    auto first = [&] (int p) -> int {
      if (p == 0)
        return 1;
      if (a.agnostic)
        return 0;
      return CONSISTENT ? a.classes[order[p]] != a.classes[order[p - 1]] :
          rec[order[p]].cls != rec[order[p - 1]].cls;
    };
    runs = block_scan (n_in, scratch, first, [&] (int p, int r) {
          const int f = first (p);
          seg[p] = (int16_t) (r + f - 1);
          if (f)
            starts[r] = (int16_t) p;
        });

    if (t == 0)
      starts[runs] = (int16_t) n_in;
    __syncthreads ();
  }

  /* the walk: owner[q] the keeper's position of each record taken, and
   * step[q] the position that took it (NMM) */
  {
    auto match = [&] (int i, int jj) -> bool {
      return CONSISTENT ? cnms_merge_metric64 (box64 + 4 * i,
          box64 + 4 * jj, metric) >= a.thr :
          cnms_merge_match32 (&rec[i], &rec[jj], metric, a.thr32) != 0;
    };
    /* NMM: may i claim jj (SAHI: it dominates it; the consistent rules:
     * every later record), and does it match? */
    auto claims = [&] (int i, int jj) -> bool {
      return (CONSISTENT || cnms_merge_dominates (&rec[i], &rec[jj]))
          && match (i, jj);
    };
    warp_team wt;
    block_team bt;
    int r, f, e;

    wt.rank = lane;
    bt.rank = t;
    bt.size = nt;
    bt.next = scratch + 36;
    bt.s = 0;
    if (a.rule == CNMS_MERGE_NMM && !CONSISTENT && !(a.thr > 0.0)) {
      /* SAHI's nmm_match_all: each run's first record takes every record
       * of a lower score and its exact duplicates; the run's other
       * records of its score keep alone */
      for (q = t; q < n_in; q += nt) {
        f = starts[seg[q]];
        if (q != f) {
          const cnms_merge_rec *c = &rec[order[q]], *top = &rec[order[f]];
          const int tied = c->score == top->score;
          const int dup = tied && c->x1 == top->x1 && c->y1 == top->y1
              && c->x2 == top->x2 && c->y2 == top->y2;

          if (!tied || dup) {
            owner[q] = (int16_t) f;
            step[q] = (int16_t) f;
          }
        }
      }
    } else {
      /* the short runs a warp each, then the long ones by the block */
      if (t == 0)
        bt.next[0] = bt.next[1] = bt.next[2] = INT_MAX;
      for (r = t >> 5; r < runs; r += nt >> 5) {
        f = starts[r];
        e = starts[r + 1];
        if (e - f > CNMS_MERGE_WARP_RUN)
          continue;
        if (a.rule == CNMS_MERGE_NMM)
          walk_nmm (wt, f, e, order, owner, step, claims);
        else
          walk_keepers (wt, f, e, order, owner, match);
      }
      __syncthreads ();
      for (r = 0; r < runs; r++) {
        f = starts[r];
        e = starts[r + 1];
        if (e - f <= CNMS_MERGE_WARP_RUN)
          continue;
        if (a.rule == CNMS_MERGE_NMM)
          walk_nmm (bt, f, e, order, owner, step, claims);
        else
          walk_keepers (bt, f, e, order, owner, match);
      }
    }
    __syncthreads ();
  }

  if (a.rule == CNMS_MERGE_NMS) {
    /* the keepers in walk order (into step), for per-class merging then by
     * score, stably; each kept unchanged */
    int16_t *kept = step;
    int n_keep, k2 = 32;

    __syncthreads ();
    n_keep = block_scan (n_in, scratch, [&] (int p) -> int {
          return owner[p] < 0;
        }, [&] (int p, int r) {
          if (owner[p] < 0)
            kept[r] = (int16_t) p;
        });
    if (!a.agnostic) {
      while (k2 < n_keep)
        k2 *= 2;
      for (j = n_keep + t; j < k2; j += nt)
        kept[j] = (int16_t) (n2 + j);
      __syncthreads ();
      block_sort (kept, k2, [&] (int x, int y) -> bool {
            if (x >= n_in || y >= n_in)
              return x < y;
            {
              const double sx = CONSISTENT ? a.scores[order[x]] :
                  (double) rec[order[x]].score;
              const double sy = CONSISTENT ? a.scores[order[y]] :
                  (double) rec[order[y]].score;

              if (sx != sy)
                return sx > sy;
            }
            return x < y;
          });
    }
    for (j = t; j < n_keep; j += nt) {
      const int k = order[kept[j]];
      double b[4];

      load_box (a, k, b);
      cnms_write_record (body, j, cnms_merge_det (b, a.scores[k],
              a.classes[k], k));
    }
    n_out = n_keep;
  } else {
    /* the merge lists: a key a record, sorted */
    int16_t *kpos = owner, *alone = step, *at = seg;
    int n_keep, g;

    __syncthreads ();
    for (q = t; q < n2; q += nt) {
      u64 key = ~0ull;

      if (q < n_in) {
        if (owner[q] < 0)
          key = (u64) q << (2 * KEY_BITS);
        else
          key = (u64) owner[q] << (2 * KEY_BITS)
              | (u64) ((a.rule == CNMS_MERGE_NMM ? step[q] : owner[q]) + 1)
              << KEY_BITS
              | (u64) (a.rule == CNMS_MERGE_NMM ? order[q] : q);
      }
      keys[q] = key;
    }
    __syncthreads ();
    block_sort (keys, n2, [] (u64 x, u64 y) -> bool {
          return x < y;
        });
    /* the keepers' places among the keys (kpos[g]), one past the last */
    n_keep = block_scan (n_in, scratch, [&] (int s) -> int {
          return ((keys[s] >> KEY_BITS) & KEY_MASK) == 0;
        }, [&] (int s, int r) {
          if (((keys[s] >> KEY_BITS) & KEY_MASK) == 0)
            kpos[r] = (int16_t) s;
        });
    if (t == 0)
      kpos[n_keep] = (int16_t) n_in;
    __syncthreads ();
    if (!CONSISTENT) {
      for (g = t; g < n_keep; g += nt)
        merge_group<CONSISTENT> (a, keys, order, kpos[g], kpos[g + 1], body,
            g);
      n_out = n_keep;
    } else {
      /* the records each keeper's merge keeps alone, then every result's
       * place */
      for (g = t; g < n_keep; g += nt)
        alone[g] = (int16_t) merge_group<CONSISTENT> (a, keys, order,
            kpos[g], kpos[g + 1], NULL, 0);
      __syncthreads ();
      n_out = block_scan (n_keep, scratch, [&] (int g) -> int {
            return 1 + alone[g];
          }, [&] (int g, int r) {
            at[g] = (int16_t) r;
          });
      for (g = t; g < n_keep; g += nt)
        merge_group<CONSISTENT> (a, keys, order, kpos[g], kpos[g + 1], body,
            at[g]);
    }
  }
  if (t == 0)
    ((int32_t *) a.out)[0] = n_out;
}

cudaError_t
cnms_cuda_merge_allow_smem (size_t max_dynamic)
{
  cudaError_t e = cudaFuncSetAttribute (merge_kernel<false>,
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);

  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (merge_kernel<true>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
  return e;
}

/* The records' upload: boxes [n][4], scores [n], classes [n]. */
static size_t
merge_in_bytes (int n)
{
  return (size_t) n * (4 * sizeof (double) + sizeof (double)
      + sizeof (int32_t));
}

/* Enqueues the upload and the kernel (threads, smem bytes). */
static cnms_status
enqueue_merge (cnms_backend_ctx *ctx, cnms_cuda_priv *s,
    const double *boxes, const double *scores, const int32_t *classes,
    int n, int n2, const cnms_merge_params *m, int threads, size_t smem)
{
  const size_t nn = (size_t) n, in_bytes = merge_in_bytes (n);
  const size_t off_scores = nn * 4 * sizeof (double);
  const size_t off_classes = off_scores + nn * sizeof (double);
  const bool consistent = m->rules == CNMS_MERGE_RULES_CONSISTENT;
  char *h_in, *d_in;
  merge_args a;

  CNMS_TRY (cnms_cuda_reserve_device (ctx, &s->d_merge, in_bytes,
          "merge's records"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_merge_stage, in_bytes,
          "merge's records staging"));
  CNMS_TRY (cnms_cuda_reserve_pinned (ctx, &s->h_merge_out,
          CNMS_HEADER_BYTES + nn * sizeof (cnms_det), "merge's results"));
  h_in = (char *) s->h_merge_stage.p;
  d_in = (char *) s->d_merge.p;
  memcpy (h_in, boxes, off_scores);
  memcpy (h_in + off_scores, scores, nn * sizeof (double));
  memcpy (h_in + off_classes, classes, nn * sizeof (int32_t));

  memset (&a, 0, sizeof a);
  a.boxes = (const double *) d_in;
  a.scores = (const double *) (d_in + off_scores);
  a.classes = (const int32_t *) (d_in + off_classes);
  a.out = (char *) s->h_merge_out.dev;
  a.thr = m->threshold;
  a.thr32 = (float) m->threshold;
  a.n = n;
  a.n2 = n2;
  a.rule = (int) m->rule;
  a.metric = (int) m->metric;
  a.agnostic = m->class_agnostic != 0;

  CNMS_TRY (cnms_cuda_timing_begin (ctx));
  CNMS_CUDA_TRY (ctx, cudaMemcpyAsync (d_in, h_in, in_bytes,
          cudaMemcpyHostToDevice, s->stream), "uploading the merge's records");
  if (consistent)
    merge_kernel<true> <<< 1, threads, smem, s->stream >>> (a);
  else
    merge_kernel<false> <<< 1, threads, smem, s->stream >>> (a);
  CNMS_CUDA_TRY (ctx, cudaGetLastError (), "merge kernel");
  return cnms_cuda_timing_end (ctx);
}

extern "C" cnms_status
cnms_cuda_merge (cnms_backend_ctx *ctx, const double *boxes,
    const double *scores, const int32_t *classes, int n,
    const cnms_merge_params *m, cnms_det *out, int *n_out)
{
  cnms_cuda_priv *s = (cnms_cuda_priv *) ctx->priv;
  const bool consistent = m->rules == CNMS_MERGE_RULES_CONSISTENT;
  int n2 = 32, threads, kept;
  size_t smem;
  cnms_status st;
  cudaError_t e;

  *n_out = 0;
  /* only with CNMS_TEST_CUDA_UNPROVEN (not yet run on a GPU) */
  if (!s->unproven)
    return CNMS_ERR_UNSUPPORTED;
  if (n > CNMS_MERGE_MAX)
    return CNMS_ERR_UNSUPPORTED;
  while (n2 < n)
    n2 *= 2;
  smem = merge_layout_of (n2, consistent).total;
  if (smem > s->merge_smem)
    return CNMS_ERR_UNSUPPORTED;
  /* a quarter of the records (a sort's step swaps half of them), at
   * least a warp */
  threads = n2 / 4 < 32 ? 32 : n2 / 4 < CNMS_MERGE_THREADS ? n2 / 4 :
      CNMS_MERGE_THREADS;

  cnms_device_scope scope (s->device);
  if (scope.err != cudaSuccess)
    return cnms_cuda_error (ctx, scope.err, "selecting the CUDA device");
  st = enqueue_merge (ctx, s, boxes, scores, classes, n, n2, m, threads,
      smem);
  if (st != CNMS_OK) {
    /* nothing queued may still read the staging at the next call */
    (void) cudaStreamSynchronize (s->stream);
    (void) cudaGetLastError ();
    return st;
  }
  e = cudaStreamSynchronize (s->stream);
  if (e != cudaSuccess)
    return cnms_cuda_error (ctx, e, "running the merge kernel");
  CNMS_TRY (cnms_cuda_timing_read (ctx));

  kept = ((const int32_t *) s->h_merge_out.p)[0];
  if (kept < 0 || kept > n)
    return cnms_fail (ctx, CNMS_ERR_CUDA,
        "CUDA: the merge kernel gave %d results of %d records", kept, n);
  memcpy (out, (const char *) s->h_merge_out.p + CNMS_HEADER_BYTES,
      (size_t) kept * sizeof (cnms_det));
  *n_out = kept;
  return CNMS_OK;
}
