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

/* The high 32 bits of the next value. */
static inline uint32_t
test_rng_u32 (test_rng *r)
{
  return (uint32_t) (test_rng_next (r) >> 32);
}

/* Uniform in [lo, hi): test_rng_unit scaled. */
static inline float
test_rng_float (test_rng *r, float lo, float hi)
{
  return lo + (hi - lo) * test_rng_unit (r);
}

/* Uniform in [lo, hi); lo when hi <= lo. */
static inline int
test_rng_int (test_rng *r, int lo, int hi)
{
  if (hi <= lo)
    return lo;
  return lo + (int) (test_rng_next (r) % (uint64_t) (hi - lo));
}

/* For a test drawing from one generator, gen (a static test_rng of the
 * file): rnd () is test_rng_u32 (&gen), uni (lo, hi) test_rng_float (&gen,
 * lo, hi). */
#define TEST_RNG_SHORTHANDS(gen)                                        \
  static inline uint32_t                                                \
  rnd (void)                                                            \
  {                                                                     \
    return test_rng_u32 (&gen);                                         \
  }                                                                     \
  static inline float                                                   \
  uni (float lo, float hi)                                              \
  {                                                                     \
    return test_rng_float (&gen, lo, hi);                               \
  }

#endif /* CNMS_TEST_RNG_H */
