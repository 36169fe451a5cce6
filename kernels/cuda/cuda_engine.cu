/* The NMS engine: everything after decode in one cooperative kernel, so
 * that a frame costs one launch whatever its device-side candidate count;
 * a YOLOv8 tensor is decoded in it too (one launch per frame in all).
 *
 *   [yolov8 decode, or plain NMS's filter -> grid barrier] -> sort (+
 *   cap and gather) -> grid barrier -> bitmask -> every block checks in
 *   its mask words -> greedy resolve in the block that checks in last ->
 *   the kept records or indices, and the output header
 *
 * The host never learns the count before the results: each phase reads
 * it on the device and sizes its own work (a rank sort over the count; a
 * mask of ceil(n / 64) words a row; the resolve from shared memory when
 * the mask fits there, else from its rows' lists of nonzero words). end2end
 * stops after the sort: the sorted candidates are the detections. The
 * phases are cuda_sort.cuh, the mask (cuda_mask.cuh, all pairs, for the
 * cached resolve; cuda_prune.cuh, the pairs whose boxes can overlap, found
 * through a grid, for the others) and cuda_resolve.cuh. A LaneATT tensor small
 * enough takes the lane engine's block-local front instead of the first
 * phases (cuda_lane_local.cuh: every block decodes and ranks on its own,
 * no grid barrier), then the same check-in and resolve.
 *
 * The geometry is the kernel's template parameter (cuda_geom.cuh): boxes
 * (CNMS_GEOM_BOX: a YOLOv8 tensor, decoded candidates of the other
 * layouts, cnms_nms) or oriented boxes (CNMS_GEOM_OBB: a YOLOv8-OBB
 * tensor, cnms_nms_rotated). It decides what the decode phase maps, what
 * the sort phase gathers for each sorted candidate and the mask phase's
 * suppression test; resolve and output are the same code for both. */
#include <cooperative_groups.h>

#include "cuda_decode.cuh"
#include "cuda_lane_local.cuh"
#include "cuda_mask.cuh"
#include "cuda_prune.cuh"
#include "cuda_resolve.cuh"
#include "cuda_sort.cuh"

namespace cg = cooperative_groups;

/* The barrier of the blocks of one frame of a batch (gridDim.x of them,
 * the grid's blockIdx.y-th row): bar[0] counts the arrivals, bar[1] is
 * the generation the last arrival advances. Every block of the launch is
 * resident (a cooperative launch), so the waiting cannot starve. bar[0]
 * is zero again after every barrier. */
__device__ __forceinline__ void
cnms_frame_barrier (uint32_t *bar)
{
  __syncthreads ();
  if (threadIdx.x == 0) {
    volatile uint32_t *gen = bar + 1;
    /* read before arriving: it cannot advance before this block arrives */
    const uint32_t now = *gen;

    __threadfence ();
    if (atomicAdd (&bar[0], 1u) == gridDim.x - 1) {
      atomicExch (&bar[0], 0u);
      __threadfence ();
      atomicAdd (&bar[1], 1u);
    } else {
      while (*gen == now)
        __nanosleep (32);
    }
    __threadfence ();
  }
  __syncthreads ();
}

/* The engine's grid barrier: the whole grid's (a launch of one frame), or
 * the frame's own blocks' (a batch: bar, the frame's two words). */
struct cnms_engine_sync {
  uint32_t *bar;
  __device__ __forceinline__ void sync ()
  {
    if (bar == nullptr)
      cg::this_grid ().sync ();
    else
      cnms_frame_barrier (bar);
  }
};

/* The value of a first-row key (cnms_report_first); 0 when none. */
__device__ __forceinline__ int32_t
cnms_report_value (const int32_t *first)
{
  const unsigned long long key = __ldcg ((const unsigned long long *) first);

  return (int32_t) (uint32_t) (key & 0xffffffffull);
}

/* Copies the decode's row counts into the output header and zeroes them:
 * the decode is done (a grid barrier or the launch before), and nothing
 * else reads them. */
__device__ __forceinline__ void
cnms_report_out (int32_t *rep, int32_t *out_hdr)
{
  out_hdr[CNMS_OUT_NONFINITE] = __ldcg (&rep[CNMS_REP_NONFINITE]);
  out_hdr[CNMS_OUT_INVALID] = __ldcg (&rep[CNMS_REP_INVALID]);
  out_hdr[CNMS_OUT_FRACTIONAL] = __ldcg (&rep[CNMS_REP_FRACTIONAL]);
  out_hdr[CNMS_OUT_FIRST_INVALID] =
      cnms_report_value (&rep[CNMS_REP_FIRST_INVALID]);
  out_hdr[CNMS_OUT_FIRST_FRACTIONAL] =
      cnms_report_value (&rep[CNMS_REP_FIRST_FRACTIONAL]);
  for (int w = 0; w < CNMS_REPORT_BYTES / 4; w++)
    rep[w] = 0;
}

/* The YOLOv8 decode phase: a round of a block takes CNMS_FUSED_V8_GROUPS
 * groups of 32 anchors; warp w scans the classes w / G, w / G + S, ... (S =
 * warps / G slices) of group w % G, the slices' first maxima merge in
 * shared memory (s: 2 words a thread), and the first G warps emit the
 * candidates (cuda_decode.cuh). Boxes: cnms_anchor_candidate's rule.
 * Oriented boxes (YOLOv8-OBB, the angle in row 4 + C): an anchor whose
 * best score passes its class's threshold reads its five box rows and is
 * a candidate when cnms_map_obb maps them (the rows of a warp without
 * such an anchor are not read). */
template <typename T, int GEOM>
__device__ __forceinline__ void
cnms_engine_decode_v8 (const cnms_engine_decode &d, int32_t *hdr,
    uint64_t *s)
{
  const int groups_per_round = CNMS_FUSED_V8_GROUPS;
  const int slices = CNMS_ENGINE_THREADS / 32 / groups_per_round;
  float *s_best = (float *) s;
  int32_t *s_cls = (int32_t *) (s_best + CNMS_ENGINE_THREADS);
  const T *t = (const T *) d.tensor;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = warp % groups_per_round, slice = warp / groups_per_round;
  const int groups = cnms_ceil_div (d.n_anchors, 32);
  const size_t n = (size_t) d.n_anchors;

  /* this thread's anchors without a finite score: added to the report
   * once, after the rounds, and only when there are any (rare) */
  int nonfinite = 0;

  /* uniform per block: the rounds have barriers */
  for (int g0 = blockIdx.x * groups_per_round; g0 < groups;
      g0 += gridDim.x * groups_per_round) {
    const int a = (g0 + grp) * 32 + lane;
    float best = CNMS_BEST_CLASS_INIT;
    float box[5] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f };
    int32_t bc = 0;
    bool ok = false;

    if (a < d.n_anchors)
      cnms_v8_scan < 8 > (t, n, a, d.n_classes, slice, slices, &best, &bc);
    s_best[threadIdx.x] = best;
    s_cls[threadIdx.x] = bc;
    __syncthreads ();
    if (slice == 0) {
      for (int w = 1; w < slices; w++)
        cnms_best_merge (s_best[threadIdx.x + w * groups_per_round * 32],
            s_cls[threadIdx.x + w * groups_per_round * 32], &best, &bc);
      nonfinite += a < d.n_anchors && !cnms_isfinite (best);
      if constexpr (GEOM == CNMS_GEOM_OBB) {
        float hull[4];
        if (a < d.n_anchors
            && cnms_score_ok (best, cnms_class_thr (&d.rules, bc)))
          ok = cnms_map_obb (&d.map, cnms_ld (t, a), cnms_ld (t, n + a),
              cnms_ld (t, 2 * n + a), cnms_ld (t, 3 * n + a),
              cnms_ld (t, (4 + (size_t) d.n_classes) * n + a), box,
              hull) != 0;
      } else if (a < d.n_anchors) {
        ok = cnms_anchor_candidate (&d.map, best,
            cnms_class_thr (&d.rules, bc), cnms_ld (t, a),
            cnms_ld (t, n + a), cnms_ld (t, 2 * n + a),
            cnms_ld (t, 3 * n + a), box) != 0;
      }
      cnms_emit_candidate (ok, best, box, GEOM == CNMS_GEOM_OBB ? box[4] :
          0.0f, bc, a, d.n_anchors, d.abits, hdr, d.recs, d.keys, d.vals);
    }
    /* the next round overwrites the maxima */
    __syncthreads ();
  }
  if (nonfinite > 0)
    atomicAdd (&d.report[CNMS_REP_NONFINITE], nonfinite);
}

/* Whether the values of box i are all finite: x1 y1 x2 y2, or cx cy w h
 * angle. */
template <int GEOM>
__device__ __forceinline__ bool
cnms_filter_finite (const float *__restrict__ boxes, int i)
{
  if constexpr (GEOM == CNMS_GEOM_OBB) {
    const float *b = boxes + 5 * (size_t) i;
    return cnms_isfinite (b[0]) && cnms_isfinite (b[1])
        && cnms_isfinite (b[2]) && cnms_isfinite (b[3])
        && cnms_isfinite (b[4]);
  } else {
    const float4 b = ((const float4 *) boxes)[i];
    return cnms_isfinite (b.x) && cnms_isfinite (b.y) && cnms_isfinite (b.z)
        && cnms_isfinite (b.w);
  }
}

/* The plain NMS filter phase (cnms_engine_filter): a warp takes 32
 * consecutive input boxes a round, its candidates' slots reserved
 * together (the sort makes their order irrelevant). */
template <int GEOM>
__device__ __forceinline__ void
cnms_engine_filter_phase (const cnms_engine_args &g)
{
  const cnms_engine_filter &f = g.filt;
  const int step = gridDim.x * blockDim.x;

  /* uniform per warp: whole warps go round */
  for (int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < f.n;
      base += step) {
    const int i = base + (threadIdx.x & 31);
    bool ok = false;
    float score = 0.0f;

    if (i < f.n) {
      score = f.scores[i];
      ok = cnms_filter_finite <GEOM> (f.boxes, i) && cnms_isfinite (score);
    }
    const int slot = cnms_warp_reserve (ok, &g.hdr[CNMS_HDR_COUNT]);
    if (slot >= 0 && slot < f.n) {
      f.keys[slot] = cnms_cuda_compact_key (score, (uint32_t) i, f.abits);
      f.vals[slot] = (uint32_t) i;
    }
  }
}

/* The LaneATT decode phase: a round of the grid takes an anchor a thread
 * (cnms_decode_lane). */
__device__ __forceinline__ void
cnms_engine_decode_lanes (const cnms_engine_decode &d, int32_t *hdr)
{
  const int stride = 5 + d.n_classes;

  /* uniform per warp: the decode's ballots and shuffles */
  for (int base = blockIdx.x * blockDim.x; base < d.n_anchors;
      base += gridDim.x * blockDim.x) {
    const int a = base + (int) threadIdx.x;

    if (d.f16)
      cnms_decode_lane ((const uint16_t *) d.tensor, a, d.n_anchors, stride,
          d.n_classes - 1, d.lane_thr, d.abits, hdr, d.recs, d.keys, d.vals,
          d.report);
    else
      cnms_decode_lane ((const float *) d.tensor, a, d.n_anchors, stride,
          d.n_classes - 1, d.lane_thr, d.abits, hdr, d.recs, d.keys, d.vals,
          d.report);
  }
}

/* The output header's report of the block-local front: its nonfinite
 * count (the other rows are the end2end layout's); the decode's row
 * counts in global memory were never added to. */
__device__ __forceinline__ void
cnms_report_local (int32_t *out_hdr, int nonfinite)
{
  out_hdr[CNMS_OUT_NONFINITE] = nonfinite;
  out_hdr[CNMS_OUT_INVALID] = 0;
  out_hdr[CNMS_OUT_FRACTIONAL] = 0;
  out_hdr[CNMS_OUT_FIRST_INVALID] = 0;
  out_hdr[CNMS_OUT_FIRST_FRACTIONAL] = 0;
}

/* After the mask: every block checks in, and the last to arrive resolves
 * the n sorted candidates; prune: the pruned mask's grid is reset;
 * local: after the block-local front (its resolve, and its report:
 * nonfinite), else the decode's row counts are copied out. */
__device__ __forceinline__ void
cnms_engine_finish (const cnms_engine_args &g, int n, bool prune,
    bool reporter, bool local, int nonfinite, uint64_t *s)
{
  __shared__ int s_last;
  int32_t *out_hdr = (int32_t *) g.out;

  /* only one block reads the whole mask: every block checks in once its
   * words are out, and the one whose check-in completes the count goes on
   * to the resolve while the others leave (no block waits: a grid barrier
   * would hold every block until the last arrived, and a block set to
   * resolve would wait for the count) */
  __syncthreads ();
  if (threadIdx.x == 0) {
    /* release: the block's words (ordered before by the block barrier);
     * acquire: every block's, for the last */
    s_last = cnms_add_acq_rel (&g.hdr[CNMS_HDR_MASKED], 1)
        == (int) gridDim.x - 1;
    /* ready for the next launch (which the kernel's end orders after) */
    if (s_last) {
      g.hdr[CNMS_HDR_MASKED] = 0;
      if (prune)
        cnms_prune_reset (g);
    }
  }
  __syncthreads ();
  if (s_last) {
    /* the other blocks have left: heads enqueued behind the engine may
     * be scheduled now, to wait for its end (cnms_pdl_wait) */
    cnms_pdl_launch_next ();
    if (local)
      cnms_lane_local_resolve (g, n, s);
    else
      cnms_resolve (g, n, s);
    /* lanes of a device tensor: their kept rows out (the host computes
     * their points), here rather than in a kernel of their own */
    if (!local && g.src.kept_dst != NULL && g.kept_dev != NULL) {
      __syncthreads ();
      cnms_copy_kept_rows (g.src, g.kept_dev, threadIdx.x, blockDim.x);
    }
  }
  if (reporter) {
    if (local)
      cnms_report_local (out_hdr, nonfinite);
    else
      cnms_report_out (g.report, out_hdr);
  }
}

/* The engine after its decode or filter phase: sort, cap, mask (or, for
 * end2end, the sorted candidates out), resolve. */
template <int GEOM>
__device__ __forceinline__ void
cnms_engine_rest (const cnms_engine_args &g, cnms_engine_sync &grid,
    bool reporter, uint64_t *s)
{
  /* L2, not a stale L1 line: the count was just added to by every block */
  const int32_t count = __ldcg (&g.hdr[CNMS_HDR_COUNT]);
  const int m = cnms_clamp_count (count, g.capacity);
  const int n = m < g.a.cap ? m : g.a.cap;
  char *body = g.out + CNMS_HEADER_BYTES;
  int32_t *out_hdr = (int32_t *) g.out;
  /* the counts that the cached resolve does not take have the pruned
   * mask (cuda_prune.cuh): its grid's cells are zeroed, and the sort adds
   * the boxes' extent into its state */
  const bool prune = g.a.suppress && !cnms_engine_cached (g, n);
  cnms_extent ext;

  cnms_extent_init (&ext);
  if (prune)
    cnms_prune_zero (g, n);
  cnms_sort_rank <GEOM> (g, m, n, s, prune ? &ext : NULL);
  if (prune)
    cnms_extent_flush (g, ext);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    out_hdr[CNMS_OUT_CANDIDATES] = count;
  grid.sync ();
  /* every block has read the count: zero it for the next call, so that
   * the host need not (a failed call leaves the host to do it) */
  if (blockIdx.x == 0 && threadIdx.x == 0)
    g.hdr[CNMS_HDR_COUNT] = 0;

  if (!g.a.suppress) {
    const int k = n < g.a.max_keep ? n : g.a.max_keep;
    cnms_write_kept (body, k, g.src.recs, blockIdx.x * blockDim.x +
        threadIdx.x, gridDim.x * blockDim.x,
        [&] (int r) { return g.order[r]; });
    cnms_write_kept_dev (g, k, blockIdx.x * blockDim.x + threadIdx.x,
        gridDim.x * blockDim.x, [&] (int r) { return g.order[r]; });
    if (blockIdx.x == 0 && threadIdx.x == 0)
      out_hdr[CNMS_OUT_KEPT] = k;
    if (reporter)
      cnms_report_out (g.report, out_hdr);
    return;
  }

  if (prune)
    cnms_prune_mask <GEOM, cnms_engine_sync> (g, n, grid, s);
  else if constexpr (GEOM == CNMS_GEOM_LANE)
    cnms_build_mask_lanes (g, n, s);
  else
    cnms_build_mask <GEOM> (g, n);
  cnms_engine_finish (g, n, prune, reporter, false, 0, s);
}

/* The engine after the block-local front of lanes (its mask is out):
 * count candidates, nonfinite proposals without a finite score. */
__device__ __forceinline__ void
cnms_engine_local_tail (const cnms_engine_args &g, int count, int nonfinite,
    bool reporter, uint64_t *s)
{
  const int n = count < g.a.cap ? count : g.a.cap;

  if (blockIdx.x == 0 && threadIdx.x == 0)
    ((int32_t *) g.out)[CNMS_OUT_CANDIDATES] = count;
  cnms_engine_finish (g, n, false, reporter, true, nonfinite, s);
}

/* The engine of one frame g: its blocks are the grid's (a launch of one
 * frame) or a row of it (a batch); grid, their barrier. */
template <int GEOM>
__device__ __forceinline__ void
engine_run (const cnms_engine_args &g, cnms_engine_sync &grid)
{
  extern __shared__ uint64_t s_dyn[];
  /* the last block copies the decode's row counts out, off block 0's path
   * to the grid barriers (their stores to host memory would hold it up) */
  const bool reporter = g.report != NULL && threadIdx.x == 0
      && blockIdx.x == gridDim.x - 1;
  /* a LaneATT tensor through the block-local front: decoded, sorted and
   * masked with no grid barrier (cuda_lane_local.cuh) */
  bool local = false;
  int local_count = 0, local_nonfinite = 0;

  if constexpr (GEOM == CNMS_GEOM_LANE) {
    if (g.dec.tensor != NULL) {
      if (g.dec.lane_local && g.a.suppress)
        local = g.dec.f16 ? cnms_lane_local_run <uint16_t> (g, s_dyn,
            &local_count, &local_nonfinite) :
            cnms_lane_local_run <float> (g, s_dyn, &local_count,
            &local_nonfinite);
      if (!local) {
        cnms_engine_decode_lanes (g.dec, g.hdr);
        grid.sync ();
      }
    }
  } else {
    if (g.filt.boxes != NULL) {
      cnms_engine_filter_phase <GEOM> (g);
      grid.sync ();
    } else if (g.dec.tensor != NULL) {
      if (g.dec.f16)
        cnms_engine_decode_v8 < uint16_t, GEOM > (g.dec, g.hdr, s_dyn);
      else
        cnms_engine_decode_v8 < float, GEOM > (g.dec, g.hdr, s_dyn);
      grid.sync ();
    }
  }
  if (local)
    cnms_engine_local_tail (g, local_count, local_nonfinite, reporter,
        s_dyn);
  else
    cnms_engine_rest <GEOM> (g, grid, reporter, s_dyn);
}

/* The engine of one geometry; cnms_geom <GEOM>::MIN_BLOCKS blocks a
 * multiprocessor (4: at most 64 registers a thread) */
template <int GEOM>
__global__ void __launch_bounds__ (CNMS_ENGINE_THREADS,
    cnms_geom <GEOM>::MIN_BLOCKS)
engine_kernel (cnms_engine_args g)
{
  cnms_engine_sync grid = { nullptr };

  engine_run <GEOM> (g, grid);
}

/* The engine of a batch: frame blockIdx.y (its arguments frames[y]) on
 * the gridDim.x blocks of its row, their barrier bars[2 y ..]. */
template <int GEOM>
__global__ void __launch_bounds__ (CNMS_ENGINE_THREADS,
    cnms_geom <GEOM>::MIN_BLOCKS)
engine_batch_kernel (const cnms_engine_args *__restrict__ frames,
    uint32_t *bars)
{
  cnms_engine_sync grid = { bars + 2 * (size_t) blockIdx.y };

  engine_run <GEOM> (frames[blockIdx.y], grid);
}

/* The kernel of geometry geom. */
static const void *
engine_of (int geom)
{
  return geom == CNMS_GEOM_OBB ? (const void *) engine_kernel <CNMS_GEOM_OBB>
      : geom == CNMS_GEOM_LANE ?
      (const void *) engine_kernel <CNMS_GEOM_LANE>
      : (const void *) engine_kernel <CNMS_GEOM_BOX>;
}

/* The batch kernel of geometry geom. */
static const void *
batch_of (int geom)
{
  return geom == CNMS_GEOM_OBB ?
      (const void *) engine_batch_kernel <CNMS_GEOM_OBB>
      : geom == CNMS_GEOM_LANE ?
      (const void *) engine_batch_kernel <CNMS_GEOM_LANE>
      : (const void *) engine_batch_kernel <CNMS_GEOM_BOX>;
}

cudaError_t
cnms_cuda_engine_allow_smem (size_t max_dynamic)
{
  cudaError_t e = cudaFuncSetAttribute (engine_of (CNMS_GEOM_BOX),
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);

  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (batch_of (CNMS_GEOM_BOX),
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (batch_of (CNMS_GEOM_OBB),
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (batch_of (CNMS_GEOM_LANE),
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);

  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (engine_of (CNMS_GEOM_OBB),
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute (engine_of (CNMS_GEOM_LANE),
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) max_dynamic);
  return e;
}

cudaError_t
cnms_cuda_engine_max_blocks (int geom, size_t smem_bytes, int *per_sm)
{
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor (per_sm,
      engine_of (geom), CNMS_ENGINE_THREADS, smem_bytes);
}

cudaError_t
cnms_cuda_engine_batch_max_blocks (int geom, size_t smem_bytes, int *per_sm)
{
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor (per_sm,
      batch_of (geom), CNMS_ENGINE_THREADS, smem_bytes);
}

cudaError_t
cnms_cuda_engine_batch (const cnms_engine_args *d_frames, uint32_t *d_bars,
    int geom, int frames, int blocks, size_t smem_bytes, bool ordinary,
    cudaStream_t stream)
{
  const cnms_engine_args *f = d_frames;
  uint32_t *b = d_bars;
  void *args[] = { &f, &b };
  const dim3 grid ((unsigned) blocks, (unsigned) frames);

  /* a frame of one block: its barriers pass at once (cnms_frame_barrier),
   * and it checks in alone, so it waits for no block of the launch */
  if (blocks == 1 && ordinary)
    return cudaLaunchKernel (batch_of (geom), grid, CNMS_ENGINE_THREADS,
        args, smem_bytes, stream);
  return cudaLaunchCooperativeKernel (batch_of (geom), grid,
      CNMS_ENGINE_THREADS, args, smem_bytes, stream);
}

size_t
cnms_cuda_engine_smem_bytes (int cap, bool plain, size_t budget, int expect)
{
  /* the rank sort's stage, the removed bitmap of cap boxes, and room for
   * the cached resolve of expect of them, 1024 at most; none above 1024
   * for plain NMS, where every box is a candidate (and the smaller launch
   * fits more blocks on a multiprocessor for the bitmask) */
  const int room = expect < cap ? expect : cap;
  const long long bitmap = cnms_ceil_div (cap, CNMS_TILE);
  const long long cached = plain && cap > 1024 ? 0 :
      cnms_resolve_cached_words (room < 1024 ? room : 1024);
  long long words = CNMS_SORT_SMEM_WORDS;
  size_t bytes;

  if (bitmap > words)
    words = bitmap;
  if (cached > words)
    words = cached;
  bytes = (size_t) words * sizeof (uint64_t);
  return bytes > budget ? budget : bytes;
}

size_t
cnms_cuda_engine_smem_min (int cap)
{
  const size_t bitmap = (size_t) cnms_ceil_div (cap, CNMS_TILE)
      * sizeof (uint64_t);
  const size_t sort = CNMS_SORT_SMEM_WORDS * sizeof (uint64_t);

  return bitmap > sort ? bitmap : sort;
}

cudaError_t
cnms_cuda_engine (const cnms_engine_args *g, int geom, int blocks,
    size_t smem_bytes, cudaStream_t stream)
{
  cnms_engine_args a = *g;
  void *args[] = { &a };

  a.smem_words = (long long) (smem_bytes / sizeof (uint64_t));
  return cudaLaunchCooperativeKernel (engine_of (geom), blocks,
      CNMS_ENGINE_THREADS, args, smem_bytes, stream);
}

cudaError_t
cnms_cuda_image_check (void)
{
  cudaFuncAttributes attr;

  /* fails with cudaErrorNoKernelImageForDevice (or an invalid-PTX error)
   * when no machine code or PTX of this build runs on the device */
  return cudaFuncGetAttributes (&attr, engine_of (CNMS_GEOM_BOX));
}
