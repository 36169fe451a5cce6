/* The CUDA engine's pruned mask phase (kernels/cuda/cuda_prune.cuh: a
 * grid over the boxes, the big list, rows held in registers or spilled)
 * against the CPU backend, bit for bit, on the inputs that stress it: many
 * boxes in one cell, huge boxes (the big list) among small ones, boxes
 * spread over a huge extent (and rectangles reaching +-3e38), identical
 * boxes, counts just above the cached resolve's limit, zero-width and
 * inverted boxes, rows with many nonzero words (IoU 0: any overlap
 * suppresses), and a benchmark-like scene. Each family runs as boxes
 * (cnms_nms) and as oriented boxes (cnms_nms_rotated, the same rectangles
 * turned by seeded angles), class-agnostic and with 3 and 80 classes,
 * under IoU 0.5 and 0, with and without max_detections, on a default CUDA
 * context and on one forced onto the large-count paths.
 * Then lanes (cnms_nms_lanes, and cnms_detect of laneatt tensors of 6000
 * proposals from host and device memory, the points compared too), 2048
 * to 3000 proposals over shared rows, which the pruned mask bins by
 * cnms_lane_rect (their rows by their x range): columns of lanes 200
 * pixels apart (all kept), columns at gaps around the rectangles' padding
 * with lanes at a mean distance of exactly the distance and one float
 * below, lanes with NaN and infinite x in some rows and at +-FLT_MAX and
 * 3e38, and lanes across a 640-wide model; distances 50, 15, 0 and 1e30,
 * S = 72 and 3, with and without max_detections.
 * CNMS_GPU_SEED overrides the seed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

enum {
  F_ONE_CELL, F_BIG_MIX, F_HUGE_EXTENT, F_IDENTICAL, F_JUST_ABOVE,
  F_DEGENERATE, F_DENSE_ROWS, F_BENCH, N_FAMILIES
};

static const char *family_names[] = { "one-cell", "big-mix", "huge-extent",
  "identical", "just-above", "degenerate", "dense-rows", "bench"
};

static const int just_above[] = { 1025, 1100, 2048, 2049, 2112, 2113 };

/* Box i of family f as x1 y1 x2 y2 into b. */
static void
make_box (test_rng *r, int f, int i, int n, float *b)
{
  float cx, cy, w, h;

  switch (f) {
    case F_ONE_CELL:
      cx = test_rng_float (r, 0, 50);
      cy = test_rng_float (r, 0, 50);
      w = test_rng_float (r, 10, 40);
      h = test_rng_float (r, 10, 40);
      break;
    case F_BIG_MIX:
      cx = test_rng_float (r, 0, 1920);
      cy = test_rng_float (r, 0, 1080);
      if (i % 10 == 3) {
        w = test_rng_float (r, 500, 1900);
        h = test_rng_float (r, 300, 1000);
      } else {
        w = test_rng_float (r, 8, 40);
        h = test_rng_float (r, 8, 40);
      }
      break;
    case F_HUGE_EXTENT:
      if (i % 100 == 5) {
        /* rectangles reaching the ends of the float range */
        b[0] = -3e38f;
        b[1] = test_rng_float (r, -1e7f, 1e7f);
        b[2] = i % 200 == 5 ? 3e38f : test_rng_float (r, -1e7f, 1e7f);
        b[3] = b[1] + test_rng_float (r, 1, 1e6f);
        return;
      }
      if (i % 2) {
        cx = test_rng_float (r, -1e7f, 1e7f);
        cy = test_rng_float (r, -1e7f, 1e7f);
      } else {
        /* a few clusters, so that some pairs overlap */
        const int k = test_rng_int (r, 0, 8);
        cx = 1e6f * (float) (k - 4) + test_rng_float (r, -30, 30);
        cy = -1e6f * (float) (k - 4) + test_rng_float (r, -30, 30);
      }
      w = test_rng_float (r, 5, 50);
      h = test_rng_float (r, 5, 50);
      break;
    case F_IDENTICAL:
      cx = 300;
      cy = 200;
      w = 120;
      h = 80;
      break;
    case F_DEGENERATE:
      cx = test_rng_float (r, 0, 640);
      cy = test_rng_float (r, 0, 640);
      w = test_rng_float (r, 0, 60);
      h = test_rng_float (r, 0, 60);
      switch (i % 5) {
        case 0:
          w = 0;
          break;
        case 1:
          h = 0;
          break;
        case 2:
          w = -w;               /* inverted */
          break;
        default:
          break;
      }
      break;
    case F_DENSE_ROWS:
      cx = test_rng_float (r, 0, 400);
      cy = test_rng_float (r, 0, 400);
      w = i % 7 == 0 ? 200 : test_rng_float (r, 5, 30);
      h = i % 7 == 0 ? 200 : test_rng_float (r, 5, 30);
      break;
    default:                   /* F_JUST_ABOVE, F_BENCH: gen_data.py's */
      cx = test_rng_float (r, 0, 1920);
      cy = test_rng_float (r, 0, 1080);
      w = test_rng_float (r, 8, 258);
      h = test_rng_float (r, 8, 258);
      break;
  }
  (void) n;
  b[0] = cx - w / 2;
  b[1] = cy - h / 2;
  b[2] = cx + w / 2;
  b[3] = cy + h / 2;
}

/* Case idx of family f; variant v: bit 0 rotated, bits 1-2 classes (0
 * agnostic, 1: 3 classes, 2: 80 classes), bit 3 IoU 0, bit 4 max_det 10. */
static void
make_case (gpu_nms_case *nc, uint64_t seed, int f, int idx, int v)
{
  test_rng r;
  const int rotated = v & 1, cls = (v >> 1) & 3;
  int i;

  memset (nc, 0, sizeof *nc);
  test_rng_seed (&r, seed ^ ((uint64_t) f << 40) ^ ((uint64_t) idx << 20)
      ^ (uint64_t) v);
  nc->seed = seed;
  nc->mode = family_names[f];
  switch (f) {
    case F_JUST_ABOVE:
      nc->n = just_above[idx % (int) (sizeof just_above / sizeof (int))];
      break;
    case F_BENCH:
      nc->n = rotated ? 8192 : 20000;
      break;
    case F_HUGE_EXTENT:
      nc->n = 4000;
      break;
    default:
      nc->n = 3000;
      break;
  }
  nc->rotated = rotated;
  nc->iou = (v & 8) ? 0.0f : 0.5f;
  nc->max_det = (v & 16) ? 10 : 0;
  nc->agnostic = cls == 0;
  nc->boxes = malloc ((size_t) nc->n * (rotated ? 5 : 4) * sizeof (float));
  nc->scores = malloc ((size_t) nc->n * sizeof (float));
  nc->classes = cls != 0 ? malloc ((size_t) nc->n * sizeof (int32_t)) : NULL;
  if (nc->boxes == NULL || nc->scores == NULL
      || (cls != 0 && nc->classes == NULL)) {
    fprintf (stderr, "out of host memory\n");
    exit (1);
  }
  for (i = 0; i < nc->n; i++) {
    float b[4];

    make_box (&r, f, i, nc->n, b);
    if (rotated) {
      float *o = nc->boxes + 5 * (size_t) i;
      o[0] = b[0] / 2 + b[2] / 2;
      o[1] = b[1] / 2 + b[3] / 2;
      o[2] = b[2] - b[0];
      o[3] = b[3] - b[1];
      o[4] = f == F_IDENTICAL ? 0.3f : test_rng_float (&r, -3.2f, 3.2f);
    } else {
      memcpy (nc->boxes + 4 * (size_t) i, b, sizeof b);
    }
    nc->scores[i] = f == F_IDENTICAL && i % 2 ? 0.5f :
        test_rng_float (&r, 0, 1);
    if (cls != 0)
      nc->classes[i] = test_rng_int (&r, 0, cls == 1 ? 3 : 80);
  }
}

/* Lane families: columns 200 apart, columns at gaps around the padding,
 * spoiled x, lanes across a 640-wide model. */
enum {
  L_FAR, L_GAPS, L_SPOILED, L_WIDE, N_LANE_FAMILIES
};

static const char *lane_family_names[] = { "far", "gaps", "spoiled",
  "wide"
};

/* Lane case of family f, variant v: bits 0-1 the distance (50, 15, 0,
 * 1e30), bit 2 S = 3 (else 72), bit 3 max_detections 10; n proposals
 * (0: the family's count). */
static void
make_lane_case (gpu_lane_case *lc, uint64_t seed, int f, int v, int n)
{
  static const float dists[] = { 50.0f, 15.0f, 0.0f, 1e30f };
  /* gaps between columns, in distances: below, at and above what can be
   * close (1.0646) and what the rectangles keep apart (9/8) */
  static const float gaps[] = { 0.999f, 1.0645f, 1.1249f, 1.125f, 1.2f,
    3.0f
  };
  const int s = (v & 4) ? 3 : 72;
  const size_t stride = 5 + (size_t) s;
  test_rng r;
  float d, gap;
  int i, j;

  memset (lc, 0, sizeof *lc);
  test_rng_seed (&r, seed ^ ((uint64_t) (f + 16) << 40) ^ (uint64_t) v
      ^ ((uint64_t) n << 8));
  lc->seed = seed;
  lc->s = s;
  lc->n = n > 0 ? n : f == L_FAR ? 3000 : f == L_GAPS ? 2500 :
      f == L_SPOILED ? 2100 : 2048;
  lc->distance = dists[v & 3];
  lc->max_det = (v & 8) ? 10 : 0;
  /* the columns' scale: the distance, or 50 where it is 0 or huge */
  d = lc->distance > 0.0f && lc->distance < 1e6f ? lc->distance : 50.0f;
  gap = gaps[test_rng_int (&r, 0, 6)] * d;
  lc->props = malloc ((size_t) lc->n * stride * sizeof (float));
  lc->scores = malloc ((size_t) lc->n * sizeof (float));
  if (lc->props == NULL || lc->scores == NULL)
    exit (1);
  for (i = 0; i < lc->n; i++) {
    float *p = lc->props + (size_t) i * stride;
    const int col = test_rng_int (&r, 0, lc->n / 3 + 1);
    const int twin = test_rng_int (&r, 0, 8);
    float x0, slope;

    switch (f) {
      case L_FAR:
      case L_SPOILED:
        x0 = 200.0f * (float) i;
        slope = test_rng_float (&r, -0.5f, 0.5f) * 72.0f / (float) s;
        break;
      case L_GAPS:
        /* a column's lanes share x; some are d off (mean distance
         * exactly d: kept) or one float less (suppressed) */
        x0 = (float) col * gap + (twin == 0 ? d : twin == 1 ?
            nextafterf (d, 0.0f) : 0.0f);
        slope = 0.0f;
        break;
      default:
        x0 = test_rng_float (&r, -200.0f, 840.0f);
        slope = test_rng_float (&r, -6.0f, 6.0f) * 72.0f / (float) s;
        break;
    }
    p[0] = 0.0f;
    p[1] = test_rng_float (&r, -1.0f, 4.0f);
    /* every row, or from a random row */
    p[2] = test_rng_int (&r, 0, 4) ? 0.0f : (float) test_rng_int (&r, 0, s)
        / (float) (s - 1);
    p[3] = x0;
    p[4] = test_rng_int (&r, 0, 4) ? (float) s : test_rng_float (&r, 1.0f,
        (float) s + 2.0f);
    for (j = 0; j < s; j++) {
      float x = f == L_GAPS ? x0 : x0 + slope * (float) j
          + test_rng_float (&r, -2.0f, 2.0f);

      if (f == L_SPOILED) {
        const int k = test_rng_int (&r, 0, 64);
        if (k < 4)
          x = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY : 1e30f;
        else if (i % 10 == 3)
          x = (i / 10) % 3 == 0 ? 3.4028235e38f : (i / 10) % 3 == 1 ?
              -3.4028235e38f : 3e38f;
      }
      p[5 + j] = x;
    }
    lc->scores[i] = test_rng_int (&r, 0, 4) ? test_rng_float (&r, 0, 1) :
        (float) test_rng_int (&r, 0, 16) / 16.0f;
  }
}

/* The lane families on both CUDA contexts against the CPU: returns the
 * cases run; mismatches into *bad, indices kept into *kept. */
static int
run_lanes (cnms_ctx *cpu, cnms_ctx *cuda, cnms_ctx *large, uint64_t seed,
    int first, int *bad, long *kept)
{
  static const int variants[] = { 0, 1, 2, 3, 4, 8 };
  int f, k, cases = 0;

  for (f = 0; f < N_LANE_FAMILIES; f++) {
    for (k = 0; k < (int) (sizeof variants / sizeof variants[0]); k++) {
      const int v = variants[k];
      gpu_lane_case lc;
      gpu_result a, b, c;

      make_lane_case (&lc, seed, f, v, 0);
      gpu_run_nms_lanes (cpu, &lc, &a);
      gpu_run_nms_lanes (cuda, &lc, &b);
      gpu_run_nms_lanes (large, &lc, &c);
      if (gpu_parity_mismatch (&a, &b, first + cases, bad)
          || gpu_parity_mismatch (&a, &c, first + cases, bad)) {
        printf ("  lane family %s, variant %d\n", lane_family_names[f], v);
        gpu_lane_case_print (stdout, &lc);
      }
      cases++;
      *kept += a.n;
      gpu_result_free (&a);
      gpu_result_free (&b);
      gpu_result_free (&c);
      gpu_lane_case_free (&lc);
    }
  }
  /* cnms_detect: 6000 proposals, every one a candidate (past the
   * block-local front and the cached resolve), host and device memory */
  for (f = 0; f < N_LANE_FAMILIES; f++) {
    gpu_lane_case lc;
    cnms_params p;
    gpu_result a, b;
    float *pa = NULL, *pb = NULL;
    int dev;

    make_lane_case (&lc, seed, f, 0, 6000);
    cnms_params_init (&p);
    p.model_width = 640;
    p.model_height = 360;
    p.frame_width = 1280;
    p.frame_height = 720;
    p.letterbox = 0;
    p.score_threshold = 0.0f;
    p.max_candidates = 1000000;
    p.max_detections = 100000;
    gpu_run_detect_lanes (cpu, &lc, CNMS_DTYPE_FLOAT32, 0, &p, &a, &pa);
    for (dev = 0; dev < 2; dev++) {
      const int before = *bad;

      gpu_run_detect_lanes (cuda, &lc, CNMS_DTYPE_FLOAT32, dev, &p, &b,
          &pb);
      if (gpu_parity_mismatch (&a, &b, first + cases, bad)) {
        printf ("  lane family %s, detect, %s memory\n",
            lane_family_names[f], dev ? "device" : "host");
        gpu_lane_case_print (stdout, &lc);
      } else if (*bad == before && a.st == CNMS_OK && a.n > 0
          && memcmp (pa, pb, (size_t) a.n * (size_t) lc.s * 2
              * sizeof (float)) != 0) {
        if ((*bad)++ < 10) {
          printf ("MISMATCH case %d: lane points differ (family %s, %s "
              "memory)\n", first + cases, lane_family_names[f],
              dev ? "device" : "host");
          gpu_lane_case_print (stdout, &lc);
        }
      }
      cases++;
      gpu_result_free (&b);
      free (pb);
      pb = NULL;
    }
    *kept += a.n;
    gpu_result_free (&a);
    free (pa);
    gpu_lane_case_free (&lc);
  }
  return cases;
}

int
main (int argc, char **argv)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 20261202);
  /* variants run per family: every class kind and flag for the small
   * families, fewer for the large ones */
  static const int variants[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 16, 17,
    24, 25, 26, 27
  };
  const int n_variants = (int) (sizeof variants / sizeof variants[0]);
  cnms_ctx *cpu, *cuda, *large;
  int f, idx, k, cases = 0, bad = 0;
  long kept = 0;

  (void) argc;
  (void) argv;
  gpu_require_device ("cuda-prune");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_ctx_new (CNMS_BACKEND_CUDA);
  large = gpu_ctx_new (CNMS_BACKEND_CUDA);
  cnms_ctx_test_option (large, CNMS_TEST_FORCE_LARGE_PATH, 1);

  for (f = 0; f < N_FAMILIES; f++) {
    const int n_idx = f == F_JUST_ABOVE ? 6 : 1;
    for (idx = 0; idx < n_idx; idx++) {
      for (k = 0; k < n_variants; k++) {
        const int v = variants[k];
        gpu_nms_case nc;
        gpu_result a, b, c;

        /* the benchmark scene: agnostic and 80 classes, IoU 0.5 */
        if (f == F_BENCH && (v & 8 || ((v >> 1) & 3) == 1))
          continue;
        make_case (&nc, seed, f, idx, v);
        gpu_run_nms (cpu, &nc, &a);
        gpu_run_nms (cuda, &nc, &b);
        gpu_run_nms (large, &nc, &c);
        if (gpu_parity_mismatch (&a, &b, cases, &bad)
            || gpu_parity_mismatch (&a, &c, cases, &bad)) {
          printf ("  family %s, n %d, variant %d\n", nc.mode, nc.n, v);
          gpu_nms_case_print (stdout, &nc);
        }
        cases++;
        kept += a.n;
        gpu_result_free (&a);
        gpu_result_free (&b);
        gpu_result_free (&c);
        gpu_nms_case_free (&nc);
      }
    }
  }
  {
    int lane_bad = 0, lane_cases;
    long lane_kept = 0;

    lane_cases = run_lanes (cpu, cuda, large, seed, cases, &lane_bad,
        &lane_kept);
    printf ("cuda-prune: %d lane cases, %d mismatches, %ld indices or "
        "records kept in all\n", lane_cases, lane_bad, lane_kept);
    bad += lane_bad;
  }
  printf ("cuda-prune: %d cases on both paths, %d mismatches, %ld indices "
      "kept in all, seed %llu\n", cases, bad, kept,
      (unsigned long long) seed);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  cnms_ctx_free (large);
  return bad ? 1 : 0;
}
