/* Device helpers shared by the CUDA backend's kernels. */
#ifndef CNMS_CUDA_DEVICE_CUH
#define CNMS_CUDA_DEVICE_CUH

#include "cnms_cuda.cuh"

#define CNMS_FULL_WARP 0xffffffffu

/* One tensor element as float: float32 as is, float16 through the exact
 * conversion that the CPU backend uses. */
__device__ __forceinline__ float
cnms_ld (const float *p, size_t i)
{
  return p[i];
}

__device__ __forceinline__ float
cnms_ld (const uint16_t *p, size_t i)
{
  return cnms_half_to_float (p[i]);
}

/* An element loaded as it is, as float (cnms_ld's conversion). */
__device__ __forceinline__ float
cnms_elem_float (float v)
{
  return v;
}

__device__ __forceinline__ float
cnms_elem_float (uint16_t v)
{
  return cnms_half_to_float (v);
}

/* Warp-aggregated slot reservation in a count-header buffer: one
 * atomicAdd per warp for all of its lanes with ok set. Every lane of the
 * warp must call it (blocks are whole warps, no lane has returned).
 * Returns this lane's slot, or -1 when ok is false. The count may grow
 * past the buffer capacity: callers check the slot, readers clamp. */
__device__ __forceinline__ int
cnms_warp_reserve (bool ok, int32_t *counter)
{
  const unsigned ballot = __ballot_sync (CNMS_FULL_WARP, ok);
  const int lane = threadIdx.x & 31;
  int base = 0;

  if (ballot == 0)
    return -1;
  if (lane == __ffs (ballot) - 1)
    base = atomicAdd (counter, __popc (ballot));
  base = __shfl_sync (CNMS_FULL_WARP, base, __ffs (ballot) - 1);
  return ok ? base + __popc (ballot & ((1u << lane) - 1u)) : -1;
}

/* Programmatic dependent launch (compute capability 9.0 on; no-ops
 * before, and when the kernel was launched without it): a kernel behind
 * another waits, before its first read of what that one wrote, until it
 * has completed and its writes are visible (cnms_pdl_wait); a kernel lets
 * the one behind it be scheduled early, each block once past the point
 * after which it launches nothing that the next one would wait on
 * (cnms_pdl_launch_next: it implies no completion). */
__device__ __forceinline__ void
cnms_pdl_wait (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void
cnms_pdl_launch_next (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* atomicAdd with acquire and release semantics at device scope (the
 * check-in of cnms_engine_finish): returns the old value. */
__device__ __forceinline__ int
cnms_add_acq_rel (int32_t *p, int v)
{
  int old;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  asm volatile ("atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;"
      : "=r" (old) : "l" (p), "r" (v) : "memory");
#else
  __threadfence ();
  old = atomicAdd (p, v);
  __threadfence ();
#endif
  return old;
}

/* Number of candidates taken from a count-header buffer: min(count, cap). */
__device__ __forceinline__ int
cnms_clamp_count (int32_t count, int cap)
{
  return count < 0 ? 0 : (count < cap ? count : cap);
}

/* Box and class of the candidate whose sort value is v. */
__device__ __forceinline__ void
cnms_cand_read (const cnms_cand_src &s, uint32_t v, float4 *box,
    int32_t *cls)
{
  if (s.recs != NULL) {
    const cnms_det r = s.recs[v];
    *box = make_float4 (r.x1, r.y1, r.x2, r.y2);
    *cls = r.class_id;
  } else {
    *box = s.boxes_in[v];
    *cls = s.classes_in != NULL ? s.classes_in[v] : 0;
  }
}

/* The output lies in mapped host memory, where every store becomes a
 * write over the bus: records go out in 16-byte pieces (records and the
 * body are 32-byte aligned), and the callers give consecutive threads
 * consecutive pieces, so that a warp's stores fill whole lines. */

/* Piece c of the kept records: half c & 1 of output record c >> 1, the
 * record whose sort value is v. */
__device__ __forceinline__ void
cnms_write_kept_piece (char *body, int c, uint32_t v, const cnms_det *recs)
{
  ((int4 *) body)[c] = ((const int4 *) (recs + v))[c & 1];
}

/* Record r (in registers) as output record rank. */
__device__ __forceinline__ void
cnms_write_record (char *body, int rank, const cnms_det &r)
{
  int4 *dst = (int4 *) (body + (size_t) rank * sizeof (cnms_det));

  dst[0] = make_int4 (__float_as_int (r.score), __float_as_int (r.x1),
      __float_as_int (r.y1), __float_as_int (r.x2));
  dst[1] = make_int4 (__float_as_int (r.y2), r.class_id, r.anchor,
      __float_as_int (r.angle));
}

/* The kept sort values at output ranks 0 .. k - 1 (order (r) gives rank
 * r's), the k threads of index t = first, first + step, ...: records
 * when recs is given, else input indices as int64. */
template <typename F>
__device__ __forceinline__ void
cnms_write_kept (char *body, int k, const cnms_det *recs, int first,
    int step, F order)
{
  if (recs != NULL) {
    for (int c = first; c < 2 * k; c += step)
      cnms_write_kept_piece (body, c, order (c >> 1), recs);
  } else {
    for (int r = first; r < k; r += step)
      ((int64_t *) body)[r] = (int64_t) order (r);
  }
}

/* The kept count k and sort values (order (r) gives rank r's) into
 * g.kept_dev when it is given, by the threads first, first + step, ... */
template <typename F>
__device__ __forceinline__ void
cnms_write_kept_dev (const cnms_engine_args &g, int k, int first, int step,
    F order)
{
  if (g.kept_dev == NULL)
    return;
  for (int r = first; r < k; r += step)
    g.kept_dev[1 + r] = (int32_t) order (r);
  if (first == 0)
    g.kept_dev[0] = k;
}

/* Piece p (16 bytes) of kept rank r's tensor row, its anchor a, into
 * cnms_cand_src.kept_dst. */
__device__ __forceinline__ void
cnms_copy_kept_piece (const cnms_cand_src &s, int r, int p, uint32_t a)
{
  const uint16_t *src = s.kept_tensor + (size_t) a
      * (size_t) s.kept_row_units + (size_t) p * 8;
  uint16_t v[8];

#pragma unroll
  for (int j = 0; j < 8; j++)
    v[j] = p * 8 + j < s.kept_row_units ? src[j] : 0;
  ((uint4 *) (s.kept_dst + (size_t) r * (size_t) s.kept_dst_units))[p] =
      make_uint4 (v[0] | (uint32_t) v[1] << 16,
      v[2] | (uint32_t) v[3] << 16, v[4] | (uint32_t) v[5] << 16,
      v[6] | (uint32_t) v[7] << 16);
}

/* The kept lanes' tensor rows (cnms_cand_src.kept_dst): the kept ranks
 * 0 .. kept_dev[0] - 1 in 16-byte pieces, the threads of index t = first,
 * first + step, ... a piece each; kept_dev ([count | sort values],
 * cnms_write_kept_dev) was written by this block before a barrier. */
__device__ __forceinline__ void
cnms_copy_kept_rows (const cnms_cand_src &s, const int32_t *kept_dev,
    int first, int step)
{
  const int pieces = s.kept_dst_units / 8;
  const int k = kept_dev[0];

  for (int c = first; c < k * pieces; c += step) {
    const int r = c / pieces, p = c - r * pieces;

    cnms_copy_kept_piece (s, r, p,
        (uint32_t) s.recs[kept_dev[1 + r]].anchor);
  }
}

__device__ __forceinline__ float
cnms_box4_area (float4 b)
{
  return cnms_box_area (b.x, b.y, b.z, b.w);
}

/* The engine's suppression test (cnms_suppresses) on float4 boxes. */
__device__ __forceinline__ bool
cnms_box4_suppresses (float4 a, float area_a, int32_t cls_a, float4 b,
    float area_b, int32_t cls_b, float iou, int agnostic)
{
  const float fa[4] = { a.x, a.y, a.z, a.w };
  const float fb[4] = { b.x, b.y, b.z, b.w };

  return cnms_suppresses (fa, area_a, cls_a, fb, area_b, cls_b, iou,
      agnostic) != 0;
}

/* The mask of n boxes in slab layout: tile row b (the 64 rows of tile b)
 * holds the words b .. nb - 1 of each of its rows, the upper triangle of
 * the nb x nb tiles. First word of tile row b (and, for b = nb, the
 * words of all of it). */
__host__ __device__ __forceinline__ long long
cnms_slab_offset (int b, int nb)
{
  return 64LL * ((long long) b * nb - (long long) b * (b - 1) / 2);
}

/* Shared memory words the cached resolve of n boxes needs: the removed
 * bitmap, the mask in slab layout, the sort values and the kept
 * positions. */
__host__ __device__ __forceinline__ long long
cnms_resolve_cached_words (int n)
{
  const int nb = (n + CNMS_TILE - 1) / CNMS_TILE;
  return nb + cnms_slab_offset (nb, nb) + n;
}

/* Whether the engine resolves n boxes from shared memory (cached): the
 * mask phase then writes the slab layout and no row lists. Uniform over
 * the grid (n is). */
__device__ __forceinline__ bool
cnms_engine_cached (const cnms_engine_args &g, int n)
{
  /* g.cache_max <= CNMS_CACHE_MAX */
  return n <= g.cache_max && cnms_resolve_cached_words (n) <= g.smem_words;
}

#endif /* CNMS_CUDA_DEVICE_CUH */
