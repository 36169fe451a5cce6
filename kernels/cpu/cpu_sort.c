/* CPU sort of candidate keys (cnms_sort_key): a stable LSD radix sort on
 * the score half of the key. The index half already ascends in array
 * order, so stability alone orders equal scores by index. */
#include <string.h>

#include "cpu_priv.h"

#define RADIX_BITS 8
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_PASSES (32 / RADIX_BITS)
/* Below this, insertion sort beats four histogram passes. */
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
  uint32_t hist[RADIX_PASSES][RADIX_SIZE];
  uint64_t *src_k = keys, *dst_k = tmp_keys, *swap_k;
  uint32_t *src_p = perm, *dst_p = tmp_perm, *swap_p;
  int i, pass;

  if (n < SMALL_SORT) {
    insertion_sort (keys, perm, n);
    return;
  }

  memset (hist, 0, sizeof hist);
  for (i = 0; i < n; i++) {
    uint32_t hi = (uint32_t) (keys[i] >> 32);
    for (pass = 0; pass < RADIX_PASSES; pass++)
      hist[pass][(hi >> (pass * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
  }

  for (pass = 0; pass < RADIX_PASSES; pass++) {
    uint32_t *h = hist[pass];
    uint32_t sum = 0, c;
    int shift = 32 + pass * RADIX_BITS;
    int b;

    /* A digit shared by every key moves nothing: skip the pass. */
    if (h[(src_k[0] >> shift) & (RADIX_SIZE - 1)] == (uint32_t) n)
      continue;
    for (b = 0; b < RADIX_SIZE; b++) {
      c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++) {
      uint32_t d = (uint32_t) (src_k[i] >> shift) & (RADIX_SIZE - 1);
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
