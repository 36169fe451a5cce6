/* The per-class caps on the CUDA backend: one block after the engine, in
 * the engine's kept order, before the heads behind it. A kept record
 * passes when fewer records of its class came before it in kept order
 * than its class's cap (cnms_class_cap, cnms_math.h: the rule the CPU
 * backend applies in the same order), and then while fewer than max_out
 * passed. The block takes the kept records a round of CNMS_CAPS_THREADS at
 * a time: each capped record finds its class's slot in a hash table of
 * counts in global memory (inserted by compare-and-swap), counts the
 * records of the same slot before it in the round, and passes when that
 * and the slot's count before the round stay below the cap; the slots'
 * counts then grow by the round's records, and the records that pass are
 * compacted, by a block scan, into the output and into the kept list.
 * A batch's frames take a block each, in one launch. */
#include "cnms_cuda.cuh"
#include "cnms_cuda_device.cuh"

#define CNMS_CAPS_THREADS 1024

/* The table's slots for most records: a power of two >= 2 most. */
static int
caps_slots (int most)
{
  int s = 64;

  while (s < 2 * most)
    s *= 2;
  return s;
}

size_t
cnms_caps_table_bytes (int most)
{
  return (size_t) caps_slots (most) * 2 * sizeof (int32_t);
}

/* The caps of one frame, by the whole block. */
static __device__ __forceinline__ void
caps_block (const cnms_det *recs, int32_t *kept, char *out,
    const cnms_class_rules &rules, int max_out, int32_t *ids,
    int32_t *counts, int slots)
{
  __shared__ int32_t s_slot[CNMS_CAPS_THREADS];
  __shared__ int s_warp[CNMS_CAPS_THREADS / 32];
  __shared__ int s_total;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int k = kept[0];
  char *body = out + CNMS_HEADER_BYTES;
  int n_out = 0;

  for (int i = t; i < slots; i += blockDim.x) {
    ids[i] = -1;
    counts[i] = 0;
  }
  __syncthreads ();
  for (int base = 0; base < k && n_out < max_out; base += blockDim.x) {
    const int r = base + t;
    int32_t v = 0, cap = 0, slot = -1;

    if (r < k) {
      const int32_t c = recs[kept[1 + r]].class_id;

      v = kept[1 + r];
      cap = cnms_class_cap (&rules, c);
      if (cap > 0) {
        /* Fibonacci hashing, linear probing; class ids are >= 0 */
        uint32_t h = ((uint32_t) c * 2654435769u) & (uint32_t) (slots - 1);

        for (;;) {
          const int32_t was = atomicCAS (&ids[h], -1, c);

          if (was == -1 || was == c)
            break;
          h = (h + 1) & (uint32_t) (slots - 1);
        }
        slot = (int32_t) h;
      }
    }
    s_slot[t] = slot;
    __syncthreads ();
    int before = 0;
    if (slot >= 0) {
      before = __ldcg (&counts[slot]);
      for (int j = 0; j < t; j++)
        before += s_slot[j] == slot;
    }
    const bool pass = r < k && (slot < 0 || before < cap);
    __syncthreads ();
    if (slot >= 0)
      atomicAdd (&counts[slot], 1);
    /* the passing records' ranks in the round */
    const unsigned ballot = __ballot_sync (0xffffffffu, pass);
    if (lane == 0)
      s_warp[warp] = __popc (ballot);
    __syncthreads ();
    if (t < 32) {
      int w = t < (int) (blockDim.x / 32) ? s_warp[t] : 0, x = w;

      for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync (0xffffffffu, x, d);
        if (t >= d)
          x += y;
      }
      s_warp[t] = x - w;
      if (t == 31)
        s_total = x;
    }
    __syncthreads ();
    const int dst = n_out + s_warp[warp]
        + __popc (ballot & ((1u << lane) - 1));
    if (pass && dst < max_out) {
      kept[1 + dst] = v;
      cnms_write_kept_piece (body, 2 * dst, (uint32_t) v, recs);
      cnms_write_kept_piece (body, 2 * dst + 1, (uint32_t) v, recs);
    }
    n_out = min (n_out + s_total, max_out);
    __syncthreads ();
  }
  if (t == 0) {
    kept[0] = n_out;
    ((int32_t *) out)[CNMS_OUT_KEPT] = n_out;
  }
}

static __global__ void __launch_bounds__ (CNMS_CAPS_THREADS)
caps_kernel (const cnms_det *recs, int32_t *kept, char *out,
    cnms_class_rules rules, int max_out, int32_t *ids, int32_t *counts,
    int slots)
{
  caps_block (recs, kept, out, rules, max_out, ids, counts, slots);
}

/* A batch's: block f takes frame f. */
static __global__ void __launch_bounds__ (CNMS_CAPS_THREADS)
caps_batch_kernel (const cnms_caps_frame *frames, cnms_class_rules rules,
    int slots)
{
  const cnms_caps_frame f = frames[blockIdx.x];

  caps_block (f.recs, f.kept, f.out, rules, f.max_out, f.table,
      f.table + slots, slots);
}

cudaError_t
cnms_cuda_caps_batch (const cnms_caps_frame *d_frames, int n,
    const cnms_class_rules *rules, int most, cudaStream_t stream)
{
  caps_batch_kernel <<< n, CNMS_CAPS_THREADS, 0, stream >>> (d_frames,
      *rules, caps_slots (most));
  return cudaGetLastError ();
}

cudaError_t
cnms_cuda_caps (const cnms_det *recs, int32_t *kept, char *out,
    const cnms_class_rules *rules, int max_out, int most, void *table,
    cudaStream_t stream)
{
  const int slots = caps_slots (most);
  int32_t *ids = (int32_t *) table;

  caps_kernel <<< 1, CNMS_CAPS_THREADS, 0, stream >>> (recs, kept, out,
      *rules, max_out, ids, ids + slots, slots);
  return cudaGetLastError ();
}
