/* The fast path: a device-side count of at most CNMS_FAST_CAP candidates,
 * sorted, capped, suppressed and written out by one block of
 * CNMS_FAST_CAP threads, one candidate per thread, all in shared memory,
 * with no mask in global memory and no grid sized for the host's bound.
 *
 *  1. Sort: each thread counts the keys below its own (keys are unique),
 *     which is its candidate's rank; the sort values land in rank order.
 *  2. The first n = min(count, cap) are gathered (box, area, class).
 *  3. Greedy NMS by 64-box tiles: the tile's diagonal words (which tile
 *     box suppresses which later one) come from warp ballots; every thread
 *     resolves the tile in registers (cnms_resolve_tile); then each later
 *     candidate tests itself against the tile's kept boxes and marks
 *     itself removed. It stops at max_keep.
 *
 * The test is cnms_box4_suppresses with the kept (earlier) box first, as
 * in the bitmask kernel and the CPU backend, so the kept list is the same
 * bit for bit. A count above the cap of this path leaves everything to
 * the large path (cuda_sort.cu, cuda_nms.cu). */
#include "cnms_cuda_device.cuh"

__global__ void __launch_bounds__ (CNMS_FAST_CAP)
fast_kernel (cnms_cand_src src, const uint64_t *__restrict__ keys,
    const uint32_t *__restrict__ vals, const int32_t *__restrict__ hdr,
    cnms_nms_args a, char *__restrict__ out)
{
  __shared__ uint64_t s_key[CNMS_FAST_CAP];
  __shared__ float4 s_box[CNMS_FAST_CAP];
  __shared__ float s_area[CNMS_FAST_CAP];
  __shared__ int32_t s_cls[CNMS_FAST_CAP];
  __shared__ uint32_t s_val[CNMS_FAST_CAP];
  __shared__ unsigned char s_dead[CNMS_FAST_CAP];
  __shared__ uint64_t s_diag[CNMS_TILE];
  __shared__ uint64_t s_avail;
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int32_t count = hdr[CNMS_HDR_COUNT];
  char *body = out + CNMS_HEADER_BYTES;
  int32_t *out_hdr = (int32_t *) out;

  /* uniform: the large path takes this count */
  if (count > CNMS_FAST_CAP)
    return;
  const int m = count > 0 ? count : 0;
  const int n = m < a.cap ? m : a.cap;

  if (tid < m)
    s_key[tid] = keys[tid];
  __syncthreads ();
  if (tid < m) {
    const uint64_t k = s_key[tid];
    int rank = 0;
    for (int j = 0; j < m; j++)
      rank += s_key[j] < k;
    if (rank < n)
      s_val[rank] = vals[tid];
  }
  __syncthreads ();
  if (tid < n) {
    float4 b;
    int32_t c;
    cnms_cand_read (src, s_val[tid], &b, &c);
    s_box[tid] = b;
    s_area[tid] = cnms_box4_area (b);
    s_cls[tid] = c;
    s_dead[tid] = 0;
  }
  if (tid == 0)
    out_hdr[CNMS_OUT_CANDIDATES] = count;
  __syncthreads ();

  if (!a.suppress) {
    const int k = n < a.max_keep ? n : a.max_keep;
    if (tid < k)
      cnms_write_kept (body, tid, s_val[tid], src.recs);
    if (tid == 0)
      out_hdr[CNMS_OUT_KEPT] = k;
    return;
  }

  int kept = 0;
  for (int base = 0; base < n && kept < a.max_keep; base += CNMS_TILE) {
    const int size = min (CNMS_TILE, n - base);

    /* the tile's diagonal: warp w takes rows w and w + 32, a lane the
     * columns lane and lane + 32 */
    for (int r = warp; r < CNMS_TILE; r += CNMS_FAST_CAP / 32) {
      const int i = base + r;
      unsigned half[2];
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int k = lane + 32 * h;
        bool v = false;
        if (r < size && k > r && k < size) {
          const int j = base + k;
          v = cnms_box4_suppresses (s_box[i], s_area[i], s_cls[i], s_box[j],
              s_area[j], s_cls[j], a.iou, a.agnostic);
        }
        half[h] = __ballot_sync (CNMS_FULL_WARP, v);
      }
      if (lane == 0)
        s_diag[r] = ((uint64_t) half[1] << 32) | half[0];
    }
    if (warp == 0) {
      const unsigned lo = __ballot_sync (CNMS_FULL_WARP, lane < size
          && !s_dead[base + lane]);
      const unsigned hi = __ballot_sync (CNMS_FULL_WARP, lane + 32 < size
          && !s_dead[base + 32 + lane]);
      if (lane == 0)
        s_avail = ((uint64_t) hi << 32) | lo;
    }
    __syncthreads ();

    const uint64_t kept_bits = cnms_resolve_tile < 8 > (s_diag, s_avail, kept,
        a.max_keep);
    if (tid >= base && tid < base + size && ((kept_bits >> (tid - base)) & 1)) {
      const int rank = kept + __popcll (kept_bits
          & ((1ull << (tid - base)) - 1));
      cnms_write_kept (body, rank, s_val[tid], src.recs);
    }
    kept += __popcll (kept_bits);

    /* each later candidate against the tile's kept boxes */
    if (tid >= base + CNMS_TILE && tid < n && !s_dead[tid]) {
      const float4 bj = s_box[tid];
      const float aj = s_area[tid];
      const int32_t cj = s_cls[tid];
      uint64_t kb = kept_bits;
      while (kb != 0) {
        const int i = base + __ffsll ((long long) kb) - 1;
        kb &= kb - 1;
        if (cnms_box4_suppresses (s_box[i], s_area[i], s_cls[i], bj, aj, cj,
                a.iou, a.agnostic)) {
          s_dead[tid] = 1;
          break;
        }
      }
    }
    /* s_diag, s_avail and s_dead are read again by the next tile */
    __syncthreads ();
  }
  if (tid == 0)
    out_hdr[CNMS_OUT_KEPT] = kept;
}

cudaError_t
cnms_cuda_fast (const cnms_cand_src *src, const uint64_t *d_keys,
    const uint32_t *d_vals, const int32_t *d_hdr, const cnms_nms_args *a,
    void *d_out, cudaStream_t stream)
{
  fast_kernel <<<1, CNMS_FAST_CAP, 0, stream>>> (*src, d_keys, d_vals, d_hdr,
      *a, (char *) d_out);
  return cudaGetLastError ();
}
