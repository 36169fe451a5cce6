/* cnms_detect's yolov8-seg masks against the plain per-pixel formula: random
 * seeded cases (float32 and float16; letterbox and stretch maps; 1 to 37
 * coefficients; prototype planes from 2x2 to 160x160, masks from one pixel
 * to the whole frame, touching the prototypes' edges; many masks over one
 * another; half the cases with logits near 0, their sign up to the
 * roundings), every mask byte compared with cnms_heads.h's functions applied
 * pixel by pixel: the rectangle (cnms_mask_rect), the samples
 * (cnms_mask_sample), the four logits (cnms_mask_logit) and their
 * bilinear value (cnms_mask_bilinear) > 0. The CPU backend runs each case
 * with and without its AVX paths; "cuda" runs the CUDA backend instead.
 * The optimised paths may reorganise the work, never the arithmetic: one
 * byte off fails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms_static.h"
#include "cnms_heads.h"
#include "tensors.h"

static cnms_backend backend = CNMS_BACKEND_CPU;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd (void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t) (rng_state >> 32);
}

/* An integer in [lo, hi]. */
static int
rnd_int (int lo, int hi)
{
  return lo + (int) (rnd () % (uint32_t) (hi - lo + 1));
}

/* A float in [lo, hi). */
static float
rnd_float (float lo, float hi)
{
  return lo + (hi - lo) * (float) (rnd () >> 8) * (1.0f / 16777216.0f);
}

typedef struct {
  int m;                        /* coefficients */
  int hp, wp;                   /* prototypes */
  int model_w, model_h, frame_w, frame_h, letterbox;
  int n_anchors, n_classes;
  int f16;
  int cancel;                   /* logits near 0 */
  float iou;
  int class_agnostic, max_detections;
} seg_case;

/* The mask bytes of the kept records, each against the formula; returns
 * the bytes that differ (and counts the masks and pixels compared). */
static long
compare_masks (const seg_case *c, const float *dets, const float *protos,
    const cnms_det *d, int n, const cnms_payload *mk, const uint8_t *data,
    long *pixels)
{
  const size_t plane = (size_t) c->hp * (size_t) c->wp;
  const int row0 = 4 + c->n_classes;
  cnms_map map;
  cnms_mask_axis ax, ay;
  float *coef = malloc ((size_t) c->m * sizeof (float));
  long bad = 0;
  int i, k;

  cnms_map_init (&map, c->model_w, c->model_h, c->frame_w, c->frame_h,
      c->letterbox);
  cnms_mask_axis_init (&ax, map.gain_x, map.pad_x, c->wp, c->model_w);
  cnms_mask_axis_init (&ay, map.gain_y, map.pad_y, c->hp, c->model_h);
  for (i = 0; i < n; i++) {
    int x, y, w, h, px, py;

    cnms_mask_rect (d[i].x1, d[i].y1, d[i].x2, d[i].y2, &x, &y, &w, &h);
    CHECK_INT (mk[i].x, x);
    CHECK_INT (mk[i].y, y);
    CHECK_INT (mk[i].width, w);
    CHECK_INT (mk[i].height, h);
    if (mk[i].width != w || mk[i].height != h) {
      bad++;
      continue;
    }
    for (k = 0; k < c->m; k++)
      coef[k] = dets[(size_t) (row0 + k) * c->n_anchors + d[i].anchor];
    for (py = 0; py < h; py++) {
      int y0, y1;
      float wy0, wy1;

      cnms_mask_sample (&ay, y + py, &y0, &y1, &wy0, &wy1);
      for (px = 0; px < w; px++) {
        int x0, x1;
        float wx0, wx1, v;
        uint8_t want;

        cnms_mask_sample (&ax, x + px, &x0, &x1, &wx0, &wx1);
        v = cnms_mask_bilinear (cnms_mask_logit (coef, protos + (size_t) y0
                * c->wp + x0, plane, c->m), cnms_mask_logit (coef,
                protos + (size_t) y0 * c->wp + x1, plane, c->m),
            cnms_mask_logit (coef, protos + (size_t) y1 * c->wp + x0,
                plane, c->m), cnms_mask_logit (coef, protos + (size_t) y1
                * c->wp + x1, plane, c->m), wx0, wx1, wy0, wy1);
        want = v > 0.0f;
        if (data[mk[i].offset + (size_t) py * w + px] != want) {
          if (bad < 5)
            fprintf (stderr, "  mask %d pixel (%d, %d): %d, the formula %d "
                "(%a)\n", i, x + px, y + py,
                data[mk[i].offset + (size_t) py * w + px], want, v);
          bad++;
        }
        (*pixels)++;
      }
    }
  }
  free (coef);
  return bad;
}

/* One random case: tensors made, detected (on the CPU with AVX and
 * without), every mask compared. */
static void
run_case (cnms_ctx *ctx, const seg_case *c, int idx, long *masks,
    long *pixels)
{
  const int rows = 4 + c->n_classes + c->m;
  const size_t nd = (size_t) rows * c->n_anchors;
  const size_t np = (size_t) c->m * c->hp * c->wp;
  float *dets = malloc (nd * sizeof (float));
  float *protos = malloc (np * sizeof (float));
  uint16_t *dets16 = NULL, *protos16 = NULL;
  cnms_tensor tt, pt;
  cnms_params p;
  size_t i;
  int a, pass;

  for (a = 0; a < c->n_anchors; a++) {
    float w = rnd_float (0.0f, 1.3f * (float) c->model_w);
    float h = rnd_float (0.0f, 1.3f * (float) c->model_h);
    int k;

    /* small boxes often, the frame's edges often */
    if (rnd () % 3 == 0) {
      w = rnd_float (0.0f, 4.0f);
      h = rnd_float (0.0f, 4.0f);
    }
    dets[0 * c->n_anchors + a] = rnd_float (-0.2f, 1.2f) * c->model_w;
    dets[1 * c->n_anchors + a] = rnd_float (-0.2f, 1.2f) * c->model_h;
    dets[2 * c->n_anchors + a] = w;
    dets[3 * c->n_anchors + a] = h;
    for (k = 0; k < c->n_classes; k++)
      dets[(size_t) (4 + k) * c->n_anchors + a] = rnd_float (0.0f, 1.0f);
    for (k = 0; k < c->m; k++)
      dets[(size_t) (4 + c->n_classes + k) * c->n_anchors + a] =
          rnd () % 10 == 0 ? 0.0f : rnd_float (-2.0f, 2.0f);
  }
  for (i = 0; i < np; i++)
    protos[i] = rnd () % 16 == 0 ? 0.0f : rnd_float (-4.0f, 4.0f);
  if (c->cancel) {
    /* planes in pairs, the second nearly the first negated, under equal
     * coefficients: logits near 0, their sign up to the roundings */
    const size_t plane = (size_t) c->hp * (size_t) c->wp;
    int k;

    for (k = 1; k < c->m; k += 2) {
      for (i = 0; i < plane; i++)
        protos[k * plane + i] = -protos[(k - 1) * plane + i]
            * rnd_float (0.9999f, 1.0001f);
      for (a = 0; a < c->n_anchors; a++)
        dets[(size_t) (4 + c->n_classes + k) * c->n_anchors + a] =
            dets[(size_t) (4 + c->n_classes + k - 1) * c->n_anchors + a];
    }
  }
  if (c->f16) {
    /* the values float16 holds, the reference on them */
    dets16 = malloc (nd * sizeof (uint16_t));
    protos16 = malloc (np * sizeof (uint16_t));
    cnms_floats_to_halves (dets, nd, dets16);
    cnms_floats_to_halves (protos, np, protos16);
    cnms_halves_to_floats (dets16, nd, dets);
    cnms_halves_to_floats (protos16, np, protos);
  }
  tt = tensor_dims (c->f16 ? (const void *) dets16 : dets, nd * (c->f16 ? 2
          : 4), c->f16 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32, 3, 1, rows,
      c->n_anchors);
  pt = tensor_dims (c->f16 ? (const void *) protos16 : protos, np * (c->f16
          ? 2 : 4), tt.dtype, 4, 1, c->m, c->hp);
  pt.dims[3] = c->wp;
  cnms_params_init (&p);
  p.model_width = c->model_w;
  p.model_height = c->model_h;
  p.frame_width = c->frame_w;
  p.frame_height = c->frame_h;
  p.letterbox = c->letterbox;
  p.iou = c->iou;
  p.class_agnostic = c->class_agnostic;
  p.max_detections = c->max_detections;
  p.score_threshold = 0.3f;
  for (pass = 0; pass < (backend == CNMS_BACKEND_CPU ? 2 : 1); pass++) {
    const cnms_det *d = NULL;
    cnms_payloads pl;
    const cnms_payload *mk;
    const uint8_t *data = NULL;
    int n = -1;
    long bad, px = 0;
    cnms_status st;

    if (backend == CNMS_BACKEND_CPU)
      cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, pass);
    st = cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n);
    CHECK_INT (st, CNMS_OK);
    if (st != CNMS_OK) {
      fprintf (stderr, "  case %d: %s\n", idx, cnms_ctx_error (ctx));
      continue;
    }
    cnms_ctx_payload (ctx, &pl);
    mk = pl.records;
    data = pl.data;
    CHECK_INT (pl.n, n);
    CHECK_INT (pl.head, CNMS_HEAD_MASK);
    if (n > 0)
      CHECK (mk != NULL && data != NULL);
    if (n > 0 && (data == NULL || mk == NULL))
      continue;
    if (pl.n != n)
      continue;
    bad = compare_masks (c, dets, protos, d, n, mk, data, &px);
    if (bad != 0)
      fprintf (stderr, "  case %d (M %d, %dx%d prototypes, model %dx%d, "
          "frame %dx%d, %s, %s%s%s): %ld of %ld bytes differ\n", idx, c->m,
          c->wp, c->hp, c->model_w, c->model_h, c->frame_w, c->frame_h,
          c->letterbox ? "letterbox" : "stretch",
          c->f16 ? "float16" : "float32", c->cancel ? ", cancelling" : "",
          pass ? ", no AVX" : "", bad, px);
    CHECK_INT (bad, 0);
    *masks += n;
    *pixels += px;
  }
  if (backend == CNMS_BACKEND_CPU)
    cnms_ctx_test_option (ctx, CNMS_TEST_CPU_NO_AVX, 0);
  free (dets);
  free (protos);
  free (dets16);
  free (protos16);
}

static void
test_random_cases (cnms_ctx *ctx)
{
  static const int ms[] = { 1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 33, 37 };
  long masks = 0, pixels = 0;
  int idx;

  for (idx = 0; idx < 160; idx++) {
    seg_case c;
    int sx, sy;

    memset (&c, 0, sizeof c);
    c.m = ms[rnd () % (sizeof ms / sizeof ms[0])];
    if (idx % 20 == 0) {
      /* the usual geometry: 160x160 prototypes of a 640x640 model */
      c.m = 32;
      c.hp = c.wp = 160;
      c.model_w = c.model_h = 640;
    } else {
      c.hp = rnd_int (2, 48);
      c.wp = rnd_int (2, 72);
      /* models 1 to 8 times the prototypes, some not a multiple */
      sx = rnd_int (1, 8);
      sy = rnd () % 2 ? sx : rnd_int (1, 8);
      c.model_w = c.wp * sx + (rnd () % 4 == 0 ? rnd_int (1, 3) : 0);
      c.model_h = c.hp * sy + (rnd () % 4 == 0 ? rnd_int (1, 3) : 0);
    }
    c.frame_w = rnd_int (1, 400);
    c.frame_h = rnd_int (1, 400);
    c.letterbox = (int) (rnd () % 2);
    c.n_anchors = rnd_int (1, 64);
    c.n_classes = rnd_int (1, 3);
    c.f16 = idx % 3 == 1;
    c.cancel = idx % 4 >= 2;
    /* IoU 1 keeps every candidate: masks over one another */
    c.iou = rnd () % 2 ? 1.0f : 0.45f;
    c.class_agnostic = (int) (rnd () % 2);
    c.max_detections = rnd () % 4 == 0 ? rnd_int (1, 5) : 300;
    run_case (ctx, &c, idx, &masks, &pixels);
  }
  printf ("random cases: %ld masks, %ld pixels compared\n", masks, pixels);
  /* the cases must reach masks at all (the seed makes these fixed) */
  CHECK (masks > 1000);
  CHECK (pixels > 1000000);
}

/* Nothing kept from float16 tensors: no masks, the call succeeds. */
static void
test_none_kept (cnms_ctx *ctx)
{
  enum { N = 8, M = 4, ROWS = 4 + 1 + M, HP = 4, WP = 4 };
  uint16_t t[ROWS * N], pr[M * HP * WP];
  float f[ROWS * N] = { 0 }, fp[M * HP * WP];
  cnms_tensor tt, pt;
  cnms_params p;
  const cnms_det *d;
  cnms_payloads pl;
  int n = -1, i;

  for (i = 0; i < M * HP * WP; i++)
    fp[i] = 1.0f;
  for (i = 0; i < N; i++) {
    f[0 * N + i] = 8.0f;
    f[1 * N + i] = 8.0f;
    f[2 * N + i] = 4.0f;
    f[3 * N + i] = 4.0f;
    f[4 * N + i] = 0.1f;        /* below the threshold */
  }
  cnms_floats_to_halves (f, ROWS * N, t);
  cnms_floats_to_halves (fp, M * HP * WP, pr);
  tt = tensor_dims (t, sizeof t, CNMS_DTYPE_FLOAT16, 3, 1, ROWS, N);
  pt = tensor_dims (pr, sizeof pr, CNMS_DTYPE_FLOAT16, 4, 1, M, HP);
  pt.dims[3] = WP;
  cnms_params_init (&p);
  p.model_width = p.model_height = 16;
  p.frame_width = p.frame_height = 16;
  CHECK_INT (cnms_detect (ctx, &tt, &pt, CNMS_LAYOUT_YOLOV8_SEG, &p, &d, &n),
      CNMS_OK);
  CHECK_INT (n, 0);
  cnms_ctx_payload (ctx, &pl);
  CHECK_INT (pl.n, 0);
  CHECK_INT (pl.head, CNMS_HEAD_MASK);
  CHECK_INT (pl.size, 0);
}

int
main (int argc, char **argv)
{
  cnms_ctx *ctx;
  const int st = test_ctx_from_args (argc, argv, &backend, &ctx);

  if (st != 0)
    return st;
  test_random_cases (ctx);
  test_none_kept (ctx);
  cnms_ctx_free (ctx);
  return check_result (backend == CNMS_BACKEND_CUDA ? "test-seg-ref cuda"
      : "test-seg-ref");
}
