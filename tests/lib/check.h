/* A tiny assertion kit for the library tests: every failed CHECK prints
 * where and what, and main returns check_result () (non-zero on any
 * failure), so one run reports every broken expectation. */
#ifndef CNMS_TEST_CHECK_H
#define CNMS_TEST_CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do { \
    check_count++; \
    if (!(cond)) { \
      fprintf (stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
          #cond); \
      check_failures++; \
    } \
  } while (0)

/* Exact integer equality, printing both sides. */
#define CHECK_INT(a, b) do { \
    long long va_ = (long long) (a), vb_ = (long long) (b); \
    check_count++; \
    if (va_ != vb_) { \
      fprintf (stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
          __FILE__, __LINE__, #a, #b, va_, vb_); \
      check_failures++; \
    } \
  } while (0)

/* Bit-exact float equality (+0.0 == -0.0), printing both sides. */
#define CHECK_FLOAT(a, b) do { \
    float fa_ = (a), fb_ = (b); \
    check_count++; \
    if (!(fa_ == fb_)) { \
      fprintf (stderr, "%s:%d: CHECK failed: %s == %s (%.9g / %a != " \
          "%.9g / %a)\n", __FILE__, __LINE__, #a, #b, (double) fa_, \
          (double) fa_, (double) fb_, (double) fb_); \
      check_failures++; \
    } \
  } while (0)

static inline int
check_result (const char *name)
{
  printf ("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif /* CNMS_TEST_CHECK_H */
