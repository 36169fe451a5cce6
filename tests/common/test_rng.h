/* The seeded generator of every C test: splitmix64, so a fixed seed gives
 * the same cases on every machine. Header-only. */
#ifndef CNMS_TEST_RNG_H
#define CNMS_TEST_RNG_H

#include <stdint.h>

typedef struct {
  uint64_t s;
} test_rng;

/* Seeds r; different seeds give unrelated streams. */
static inline void
test_rng_seed (test_rng *r, uint64_t seed)
{
  r->s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
}

static inline uint64_t
test_rng_next (test_rng *r)
{
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1), 24 bits. */
static inline float
test_rng_unit (test_rng *r)
{
  return (float) (test_rng_next (r) >> 40) / 16777216.0f;
}

#endif /* CNMS_TEST_RNG_H */
