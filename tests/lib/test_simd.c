/* The CPU backend's AVX/AVX2 decode against its SSE2/scalar paths
 * (CNMS_TEST_CPU_NO_AVX): every record bit-identical, on seeded tensors of both
 * YOLO layouts, float32 and float16, with class counts and anchor counts
 * around the vector widths and block sizes, values that make the class
 * maximum hard: NaN, +-inf, +-0, ties, rows of NaN only or -inf only, and
 * thresholds below zero (where a zero score passes). On a CPU without AVX
 * both runs take the same path and the test still checks that. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_internal.h"
#include "cpu_priv.h"
#include "check.h"
#include "rng.h"
#include "tensors.h"

#define MAX_ELEMS (104 * 2200)

static cnms_ctx *ctx;
static float data[MAX_ELEMS];
static uint16_t halves[MAX_ELEMS];
static cnms_det ref[2200];
static test_rng rng;
static int n_cases;

TEST_RNG_SHORTHANDS (rng)

/* A class score: mostly small, quantized often (ties), sometimes special. */
static float
class_value (int style)
{
  switch (rnd () % 16) {
    case 0:
      return NAN;
    case 1:
      return (rnd () % 2) ? INFINITY : -INFINITY;
    case 2:
      return (rnd () % 2) ? 0.0f : -0.0f;
    case 3:
    case 4:
    case 5:
      return (float) (rnd () % 8) / 8.0f;
    default:
      return style ? uni (-1, 1) : uni (0, 0.6f);
  }
}

/* Fills a [1, rows, cols] tensor: the box fields in model pixels, the
 * class fields from class_value, some rows all NaN or all -inf. */
static void
fill (int yolov5, int n_classes, int n_anchors, int style)
{
  int fields = (yolov5 ? 5 : 4) + n_classes, n, f;

  for (n = 0; n < n_anchors; n++) {
    int special = rnd () % 20;
    for (f = 0; f < fields; f++) {
      float v;
      if (f < 4)
        v = f < 2 ? uni (0, 640) : uni (1, 200);
      else if (yolov5 && f == 4)
        v = (rnd () % 10) ? uni (0, 1) : (float) (rnd () % 3) - 1.0f;
      else if (special == 0)
        v = NAN;
      else if (special == 1)
        v = -INFINITY;
      else
        v = class_value (style);
      if (yolov5)
        data[(size_t) n * fields + f] = v;
      else
        data[(size_t) f * n_anchors + n] = v;
    }
  }
}

/* The same call with and without the AVX paths: equal records. */
static void
compare (const char *what, const cnms_tensor *t, cnms_layout l,
    const cnms_params *p)
{
  const cnms_det *d;
  int n_ref, n;

  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 1);
  n_ref = detect_checked (ctx, t, l, p, &d);
  if (n_ref > 0)
    memcpy (ref, d, (size_t) n_ref * sizeof *d);
  cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
  n = detect_checked (ctx, t, l, p, &d);
  n_cases++;
  CHECK (n == n_ref && (n <= 0 || memcmp (ref, d, (size_t) n * sizeof *d)
          == 0));
  if (n != n_ref || (n > 0 && memcmp (ref, d, (size_t) n * sizeof *d) != 0))
    fprintf (stderr, "  %s: %d records without AVX, %d with\n", what, n_ref,
        n);
}

static void
test_layouts (void)
{
  static const int classes[] = { 1, 3, 8, 31, 32, 33, 80, 100 };
  static const int anchors[] = { 1, 31, 32, 33, 100, 2100 };
  static const float thresholds[] = { -1.0f, -0.0f, 0.25f };
  static const cnms_layout layout[2] = { CNMS_LAYOUT_YOLOV8,
    CNMS_LAYOUT_YOLOV5
  };
  int ci, ai, l, h, ti;

  test_rng_seed (&rng, 11);
  for (ci = 0; ci < (int) (sizeof classes / sizeof classes[0]); ci++) {
    for (ai = 0; ai < (int) (sizeof anchors / sizeof anchors[0]); ai++) {
      for (l = 0; l < 2; l++) {
        int nc = classes[ci], na = anchors[ai];
        int rows = l ? na : (4 + nc), cols = l ? (5 + nc) : na;
        size_t i, count = (size_t) rows * cols;
        cnms_tensor t = tensor3 (data, rows, cols);
        cnms_params p;

        fill (l, nc, na, (int) (rnd () % 2));
        cnms_params_init (&p);
        p.max_candidates = na;
        p.max_detections = na;
        for (ti = 0; ti < 3; ti++) {
          p.score_threshold = thresholds[ti];
          compare (l ? "yolov5" : "yolov8", &t, layout[l], &p);
        }
        /* float16: the same values, rounded */
        for (i = 0; i < count; i++)
          halves[i] = cnms_float_to_half (data[i]);
        t.data = halves;
        t.dtype = CNMS_DTYPE_FLOAT16;
        t.size = count * sizeof (uint16_t);
        for (h = 0; h < 2; h++) {
          p.score_threshold = thresholds[h + 1];
          compare (l ? "yolov5 f16" : "yolov8 f16", &t, layout[l], &p);
        }
      }
    }
  }
}

int
main (void)
{
  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);
  test_layouts ();
  printf ("test-simd: %d calls compared (AVX %s)\n", n_cases,
#if defined(__GNUC__) && defined(__x86_64__)
      __builtin_cpu_supports ("avx2") ? "and AVX2 on this CPU" :
      __builtin_cpu_supports ("avx") ? "on this CPU" : "absent"
#else
      "absent"
#endif
      );
  cnms_ctx_free (ctx);
  return check_result ("test-simd");
}
