/* CPU sort of candidate keys (cnms_sort_key): a stable LSD radix sort on
 * the score half of the key. The index half already ascends in array
 * order, so stability alone orders equal scores by index. */
#include <string.h>

#include "cpu_priv.h"

/* Large inputs: three passes of 11, 11 and 10 bits over the 32-bit score
 * half; small ones: four of 8 bits (fewer buckets to sum). */
#define WIDE_BITS 11
#define WIDE_MIN 2048
#define MAX_BUCKETS (1 << WIDE_BITS)
/* Below this, insertion sort beats the histogram passes. */
#define SMALL_SORT 48

static void
insertion_sort (uint64_t *keys, uint32_t *perm, int n)
{
  int i, j;

  for (i = 1; i < n; i++) {
    uint64_t k = keys[i];
    uint32_t p = perm[i];
    for (j = i; j > 0 && keys[j - 1] > k; j--) {
      keys[j] = keys[j - 1];
      perm[j] = perm[j - 1];
    }
    keys[j] = k;
    perm[j] = p;
  }
}

void
cnms_cpu_sort (uint64_t *keys, uint32_t *perm, uint64_t *tmp_keys,
    uint32_t *tmp_perm, int n)
{
  uint32_t hist[4][MAX_BUCKETS];
  uint64_t *src_k = keys, *dst_k = tmp_keys, *swap_k;
  uint32_t *src_p = perm, *dst_p = tmp_perm, *swap_p;
  int i, pass, bits, passes, size;

  if (n < SMALL_SORT) {
    insertion_sort (keys, perm, n);
    return;
  }

  if (n >= WIDE_MIN) {
    bits = WIDE_BITS;
    passes = 3;
    size = 1 << WIDE_BITS;
    memset (hist, 0, 3 * sizeof hist[0]);
    for (i = 0; i < n; i++) {
      uint32_t hi = (uint32_t) (keys[i] >> 32);
      hist[0][hi & (MAX_BUCKETS - 1)]++;
      hist[1][(hi >> WIDE_BITS) & (MAX_BUCKETS - 1)]++;
      hist[2][hi >> (2 * WIDE_BITS)]++;
    }
  } else {
    bits = 8;
    passes = 4;
    size = 256;
    for (pass = 0; pass < 4; pass++)
      memset (hist[pass], 0, 256 * sizeof hist[0][0]);
    for (i = 0; i < n; i++) {
      uint32_t hi = (uint32_t) (keys[i] >> 32);
      hist[0][hi & 255]++;
      hist[1][(hi >> 8) & 255]++;
      hist[2][(hi >> 16) & 255]++;
      hist[3][hi >> 24]++;
    }
  }

  for (pass = 0; pass < passes; pass++) {
    uint32_t *h = hist[pass];
    uint32_t sum = 0, c, mask = (uint32_t) size - 1;
    int shift = 32 + pass * bits;
    int b;

    /* A digit shared by every key moves nothing: skip the pass. */
    if (h[(src_k[0] >> shift) & mask] == (uint32_t) n)
      continue;
    for (b = 0; b < size; b++) {
      c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++) {
      uint32_t d = (uint32_t) (src_k[i] >> shift) & mask;
      uint32_t at = h[d]++;
      dst_k[at] = src_k[i];
      dst_p[at] = src_p[i];
    }
    swap_k = src_k;
    src_k = dst_k;
    dst_k = swap_k;
    swap_p = src_p;
    src_p = dst_p;
    dst_p = swap_p;
  }
  if (src_k != keys) {
    memcpy (keys, src_k, (size_t) n * sizeof *keys);
    memcpy (perm, src_p, (size_t) n * sizeof *perm);
  }
}
