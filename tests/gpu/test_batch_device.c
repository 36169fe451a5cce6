/* cnms_detect_batch on the CUDA backend with device tensors: every frame's
 * result bit-identical to a cnms_detect of that frame alone on the CUDA
 * backend (its device tensor) and on the CPU backend (its host copy), for
 * every layout and head, float32 and float16, one tensor a frame and one
 * [B, ...] tensor, B = 1 .. 256, N differing by 100x in one batch, a bad
 * frame among good ones, per-class caps; the same bits on every repeat,
 * and no allocation once warm. The heads of a batch of device tensors
 * (keypoints; masks, yolov8-seg B = 1, 2, 8, 32, 128, 256, with frames
 * of no record and of many masks, per-class caps, a batch over the
 * masks' room after a small one and the same batch again) are made in
 * the batch's launches: every frame of B >= 2 says so
 * (cnms_ctx_batch_heads_made), but the first call of a seg batch, which
 * may pass the room, and the same batch on a context with
 * CNMS_TEST_NO_BATCH_HEADS (its heads frame by frame) gives the same
 * bits. CNMS_GPU_CASES scales the B list down (1: B = 1 and 8 only, seg
 * B up to 128; 0: the least that reaches each path, for
 * compute-sanitizer).
 *
 * LaneATT batches (the lane engine's batch) besides, host and device
 * tensors: S = 72 frames of LaneATT-like proposals (gpu_lane_case), frames
 * with no proposal above the threshold, frames of 10 and of 3000
 * proposals in one batch (the block-local front and the global phases in
 * one launch), a frame of 5000 (no front in the batch, the pruned mask),
 * lanes at exactly the distance (kept) and just under it (suppressed),
 * lanes without points in the frame, max_detections cutting the resolve,
 * a distance the library refuses; B = 1, 2, 8, 32, 128, 256 (CNMS_GPU_CASES
 * 1: up to 128, 0: 8). Each frame against its single calls, every repeat
 * the first call's bits. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "batch_frames.h"

static cnms_ctx *ctx_cpu, *ctx_one, *ctx_batch, *ctx_nobh;
static long frames_total, mismatches, lines;
/* seg frames whose masks the batch's launches made; frames compared with
 * the same batch under CNMS_TEST_NO_BATCH_HEADS */
static long seg_made, heads_compared;
/* per-class caps on the cases' params (bf_caps) */
static int caps_on;
static cnms_class_params caps_classes[BF_CLASSES];
/* the cases' knobs: max_detections (0: bf_params'), every frame i with
 * i % empty_every == 2 drawn without a score above the threshold (0:
 * none), one frame size for all (index of run_case's sizes + 1; 0: they
 * cycle), and whether the batch's first call must pass the masks' room
 * (then no frame's masks are made in it) */
static int case_max_det, empty_every, case_size, expect_over;

/* A device copy of n bytes at h (NULL for n 0). */
static void *
to_device (const void *h, size_t n)
{
  void *d = NULL;

  if (n == 0)
    return NULL;
  if (cudaMalloc (&d, n) != cudaSuccess
      || cudaMemcpy (d, h, n, cudaMemcpyHostToDevice) != cudaSuccess
      /* a copy from pageable memory may return before its DMA is done:
       * the contexts' own streams would not wait for it */
      || cudaDeviceSynchronize () != cudaSuccess) {
    fprintf (stderr, "FAIL cannot copy %zu bytes to the device\n", n);
    exit (1);
  }
  return d;
}

/* Frame i of a batch result against its own calls: CUDA on its device
 * tensor dt (dp), CPU on its host tensor ht (hp). */
static int
frame_ok (const cnms_frame_result *r, const cnms_tensor *dt,
    const cnms_tensor *dp, const cnms_tensor *ht, const cnms_tensor *hp,
    cnms_layout layout, const cnms_params *p, const char *what, int i)
{
  const cnms_det *dets;
  cnms_payloads pl;
  cnms_status st;
  int n, ok = 1;
  char why[200];

  frames_total++;
  st = cnms_detect (ctx_one, dt, dp, layout, p, &dets, &n);
  cnms_ctx_payload (ctx_one, &pl);
  if (!bf_same (r, st, dets, n, cnms_ctx_report (ctx_one), &pl, why,
          sizeof why)) {
    fprintf (stderr, "FAIL %s frame %d against CUDA alone: %s\n", what, i,
        why);
    ok = 0;
  }
  st = cnms_detect (ctx_cpu, ht, hp, layout, p, &dets, &n);
  cnms_ctx_payload (ctx_cpu, &pl);
  if (!bf_same (r, st, dets, n, cnms_ctx_report (ctx_cpu), &pl, why,
          sizeof why)) {
    fprintf (stderr, "FAIL %s frame %d against the CPU: %s\n", what, i, why);
    ok = 0;
  }
  if (!ok)
    mismatches++;
  return ok;
}

/* The same batch on ctx_nobh (CNMS_TEST_NO_BATCH_HEADS: the heads frame
 * by frame, none made in the batch) against res, ctx_batch's, frame by
 * frame, bit for bit. */
static void
nobh_same (const cnms_frame_result *res, int b, const cnms_tensor *bt,
    const cnms_tensor *bp, const cnms_frame *frames, cnms_layout layout,
    const cnms_params *p, const char *what)
{
  const cnms_frame_result *res2 = NULL;
  cnms_status st = cnms_detect_batch (ctx_nobh, bt, bp, frames, b, layout,
      p, &res2);
  int i, bad = 0;
  char why[200];

  if (st != CNMS_OK) {
    fprintf (stderr, "FAIL %s without the batch's heads: %s: %s\n", what,
        cnms_status_str (st), cnms_ctx_error (ctx_nobh));
    mismatches++;
    return;
  }
  if (cnms_ctx_batch_heads_made (ctx_nobh) != 0) {
    fprintf (stderr, "FAIL %s: CNMS_TEST_NO_BATCH_HEADS made the heads of "
        "%d frames in the batch\n", what,
        cnms_ctx_batch_heads_made (ctx_nobh));
    bad = 1;
  }
  for (i = 0; i < b; i++) {
    heads_compared++;
    if (!bf_same (&res[i], res2[i].status, res2[i].dets, res2[i].n_dets,
            &res2[i].report, &res2[i].payload, why, sizeof why)) {
      fprintf (stderr, "FAIL %s frame %d against the batch without its "
          "heads: %s\n", what, i, why);
      bad = 1;
    }
  }
  mismatches += bad;
}

/* A batch case: B frames of layout, N from lo to hi (one N when
 * batch_tensor: one [B, ...] device tensor), sizes cycling; bad: frame
 * index whose tensor is short (per-frame only), or -1. */
static void
run_case (cnms_layout layout, int f16, int b, int lo, int hi,
    int batch_tensor, int bad, uint64_t seed)
{
  static const int sizes[][2] = {
    {640, 640}, {1280, 720}, {320, 240}, {1920, 1080}, {100, 64},
  };
  const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
  bf_frame *fr = calloc ((size_t) b, sizeof *fr);
  cnms_tensor *dt = calloc ((size_t) b, sizeof *dt);
  cnms_tensor *dp = calloc ((size_t) b, sizeof *dp);
  cnms_frame *frames = calloc ((size_t) b, sizeof *frames);
  void **dmem = calloc (2 * (size_t) b, sizeof *dmem);
  const cnms_frame_result *res = NULL;
  cnms_tensor bt, bp;
  void *dall = NULL, *dallp = NULL;
  cnms_params p;
  test_rng r;
  char what[128];
  long before = mismatches;
  int i, rep;

  if (fr == NULL || dt == NULL || dp == NULL || frames == NULL
      || dmem == NULL)
    exit (1);
  test_rng_seed (&r, seed);
  bf_params (&p, layout);
  if (case_max_det > 0)
    p.max_detections = case_max_det;
  if (caps_on)
    bf_caps (&p, caps_classes);
  for (i = 0; i < b; i++) {
    const int n = batch_tensor || hi <= lo ? lo :
        lo + test_rng_int (&r, 0, hi - lo + 1);
    const int sz = case_size > 0 ? case_size - 1 : (i + (int) seed) % 5;

    bf_make (&fr[i], layout, f16, n, seed * 7777u + (uint64_t) i, i == 3 ?
        1 : empty_every > 0 && i % empty_every == 2 ? 2 : 0);
    frames[i].frame_width = sizes[sz][0];
    frames[i].frame_height = sizes[sz][1];
  }
  if (batch_tensor) {
    char *h = malloc (fr[0].size * (size_t) b);
    char *hp = seg ? malloc (fr[0].protos_size * (size_t) b) : NULL;

    if (h == NULL || (seg && hp == NULL))
      exit (1);
    for (i = 0; i < b; i++) {
      memcpy (h + (size_t) i * fr[0].size, fr[i].data, fr[0].size);
      if (seg)
        memcpy (hp + (size_t) i * fr[0].protos_size, fr[i].protos,
            fr[0].protos_size);
    }
    dall = to_device (h, fr[0].size * (size_t) b);
    if (seg)
      dallp = to_device (hp, fr[0].protos_size * (size_t) b);
    free (h);
    free (hp);
    bt = fr[0].t;
    bt.data = dall;
    bt.size = fr[0].size * (size_t) b;
    bt.dims[0] = b;
    bt.on_device = 1;
    bp = fr[0].pt;
    bp.data = dallp;
    bp.size = fr[0].protos_size * (size_t) b;
    bp.dims[0] = b;
    bp.on_device = 1;
    for (i = 0; i < b; i++) {
      dt[i] = fr[i].t;
      dt[i].data = (char *) dall + (size_t) i * fr[0].size;
      dt[i].on_device = 1;
      if (seg) {
        dp[i] = fr[i].pt;
        dp[i].data = (char *) dallp + (size_t) i * fr[0].protos_size;
        dp[i].on_device = 1;
      }
    }
  } else {
    for (i = 0; i < b; i++) {
      dmem[2 * i] = to_device (fr[i].data, fr[i].size);
      dt[i] = fr[i].t;
      dt[i].data = dmem[2 * i];
      dt[i].on_device = 1;
      if (i == bad)
        dt[i].size -= 2;
      frames[i].tensor = &dt[i];
      if (seg) {
        dmem[2 * i + 1] = to_device (fr[i].protos, fr[i].protos_size);
        dp[i] = fr[i].pt;
        dp[i].data = dmem[2 * i + 1];
        dp[i].on_device = 1;
        frames[i].protos = &dp[i];
      }
    }
  }
  snprintf (what, sizeof what, "%s %s %s B=%d N=%d..%d%s%s%s%s",
      cnms_layout_name (layout), f16 ? "f16" : "f32", batch_tensor ?
      "batch-tensor" : "per-frame", b, lo, batch_tensor ? lo : hi,
      bad >= 0 ? " bad-frame" : caps_on ? " caps" : "",
      empty_every > 0 ? " empty-frames" : "",
      case_max_det > 0 ? " many-masks" : "",
      expect_over ? " over-the-room" : "");

  for (rep = 0; rep < 3; rep++) {
    uint64_t allocs = cnms_ctx_alloc_count (ctx_batch);
    cnms_status st = batch_tensor ?
        cnms_detect_batch (ctx_batch, &bt, seg ? &bp : NULL, frames, b,
        layout, &p, &res) :
        cnms_detect_batch (ctx_batch, NULL, NULL, frames, b, layout, &p,
        &res);
    int ok_frames = 0, made, want = -1;

    if (st != CNMS_OK) {
      fprintf (stderr, "FAIL %s: %s: %s\n", what, cnms_status_str (st),
          cnms_ctx_error (ctx_batch));
      mismatches++;
      break;
    }
    if (rep == 2 && cnms_ctx_alloc_count (ctx_batch) != allocs) {
      fprintf (stderr, "FAIL %s: the third call allocated\n", what);
      mismatches++;
    }
    /* the heads of device tensors: made in the batch's launches, but
     * for a seg batch's first call, which may pass the masks' room (it
     * must when expect_over); B = 1 is the single call */
    for (i = 0; i < b; i++)
      ok_frames += res[i].status == CNMS_OK;
    made = cnms_ctx_batch_heads_made (ctx_batch);
    if ((seg || layout == CNMS_LAYOUT_YOLOV8_POSE) && ok_frames >= 2)
      want = !seg || rep > 0 ? ok_frames : expect_over ? 0 : -1;
    else
      want = 0;
    if (want >= 0 && made != want) {
      fprintf (stderr, "FAIL %s call %d: the batch made the heads of %d "
          "frames, not %d\n", what, rep + 1, made, want);
      mismatches++;
    }
    if (seg)
      seg_made += made;
    for (i = 0; i < b; i++) {
      cnms_params fp = p;
      cnms_tensor ht = fr[i].t;

      fp.frame_width = frames[i].frame_width;
      fp.frame_height = frames[i].frame_height;
      if (i == bad)
        ht.size -= 2;
      if (i == bad && res[i].status != CNMS_ERR_BAD_TENSOR) {
        fprintf (stderr, "FAIL %s: bad frame %d has status %d\n", what, i,
            (int) res[i].status);
        mismatches++;
      }
      frame_ok (&res[i], &dt[i], seg ? &dp[i] : NULL, &ht,
          seg ? &fr[i].pt : NULL, layout, &fp, what, i);
    }
    if (rep == 2 && (seg || layout == CNMS_LAYOUT_YOLOV8_POSE))
      nobh_same (res, b, batch_tensor ? &bt : NULL, seg && batch_tensor ?
          &bp : NULL, frames, layout, &p, what);
  }
  printf ("batch parity %s: %d frames x 3 calls, %ld mismatches\n", what,
      b, mismatches - before);
  lines++;
  for (i = 0; i < b; i++) {
    cudaFree (dmem[2 * i]);
    cudaFree (dmem[2 * i + 1]);
    bf_free (&fr[i]);
  }
  cudaFree (dall);
  cudaFree (dallp);
  free (fr);
  free (dt);
  free (dp);
  free (frames);
  free (dmem);
}

/* A seg batch over the masks' room on a context that has seen only a
 * small one: its first call makes no frame's masks in the batch (the
 * heads call makes them, and the room grows), the same batch again all
 * of them, allocating nothing. big: 1920x1080 frames of up to 300 masks,
 * else 640x640 frames of up to 100 (for compute-sanitizer). */
static void
room_case (int b, int big, uint64_t seed)
{
  cnms_ctx *const shared = ctx_batch;

  ctx_batch = gpu_ctx_new (CNMS_BACKEND_CUDA);
  /* 100x64 frames: small masks, within the least room */
  case_size = 5;
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, 2, 50, 200, 0, -1, seed);
  case_size = big ? 4 : 1;
  case_max_det = big ? 300 : 100;
  expect_over = 1;
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, b, big ? 1000 : 300, big ? 4000 : 900,
      0, -1, seed + 1);
  case_size = 0;
  case_max_det = 0;
  expect_over = 0;
  cnms_ctx_free (ctx_batch);
  ctx_batch = shared;
}

/* The masks made in the batch's launches, beyond the layouts' cases:
 * frames of no record, frames of many masks, float16 among them. */
static void
seg_cases (int small)
{
  empty_every = 3;
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, small ? 8 : 32, 50, 2000, 0, -1,
      7001u);
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 1, 8, 800, 0, 1, -1, 7002u);
  empty_every = 0;
  case_max_det = 300;
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, small ? 4 : 16, 3000, 8000, 0, -1,
      7003u);
  run_case (CNMS_LAYOUT_YOLOV8_SEG, 1, 8, 6000, 0, 1, -1, 7004u);
  case_max_det = 0;
  room_case (small ? 8 : 32, 1, 7005u);
}

/* ------------------------------------------------------------- lanes */

/* LaneATT's rows: S = 72 (n = 71 strips) in a 640 x 360 model. */
#define LANE_S 72
#define LANE_STRIDE (5 + LANE_S)

/* What a lane frame holds. */
enum {
  LANE_RANDOM,                  /* gpu_lane_case's proposals */
  LANE_NONE,                    /* none above the threshold (a few NaN) */
  LANE_EXACT,                   /* pairs at and just under the distance */
  LANE_DENSE,                   /* nearly every proposal a candidate */
  LANE_KINDS
};

/* Proposal i of p: logits (background, lane), start row 0, length len,
 * x (integers, exact in float16 below 2048). */
static void
lane_put (float *p, int i, float l1, int len, const float *x)
{
  float *r = p + (size_t) i * LANE_STRIDE;

  r[0] = 0.0f;
  r[1] = l1;
  r[2] = 0.0f;
  r[3] = x[0];
  r[4] = (float) len;
  memcpy (r + 5, x, LANE_S * sizeof (float));
}

/* Families of lanes against distance d (an integer): lane a, then lane b
 * at a mean horizontal distance over their shared rows of exactly d (kept:
 * the rule is strict), evenly or not, right or left of a, or just under d
 * (suppressed), with sums that float32 and float16 hold exactly; and a
 * lane left of the frame (no point: the lanes' rule leaves it out).
 * Returns the proposals put. */
static int
lane_exact (float *p, int n, float d, uint64_t seed)
{
  test_rng r;
  int k = 0, c;

  test_rng_seed (&r, seed);
  for (c = 0; c < 8 && k + 2 <= n; c++) {
    const int la = test_rng_int (&r, 10, LANE_S + 1);
    const int lb = test_rng_int (&r, 10, LANE_S + 1);
    const int shared = la < lb ? la : lb;
    float xa[LANE_S], xb[LANE_S];
    int j;

    for (j = 0; j < LANE_S; j++) {
      xa[j] = (float) (30 + 75 * c + 2 * j);
      xb[j] = xa[j] + d;
    }
    switch (c % 4) {
      case 1:
        /* the same sum, unevenly: exactly d on average, kept */
        xb[0] += 1.0f;
        xb[shared - 1] -= 1.0f;
        break;
      case 2:
        /* one row 1 nearer: the mean just under d, suppressed */
        xb[shared / 2] -= 1.0f;
        break;
      case 3:
        /* left of a: |x_a - x_b| the same */
        for (j = 0; j < LANE_S; j++)
          xb[j] = xa[j] - d;
        break;
      default:
        break;
    }
    lane_put (p, k++, 3.0f - 0.25f * (float) c, la, xa);
    lane_put (p, k++, 2.0f - 0.25f * (float) c, lb, xb);
  }
  if (k < n) {
    float x[LANE_S];
    int j;

    for (j = 0; j < LANE_S; j++)
      x[j] = -200.0f - (float) j;
    lane_put (p, k++, 4.0f, LANE_S, x);
  }
  return k;
}

/* The proposals [n][LANE_STRIDE] of a frame of kind under distance d. */
static float *
lane_frame (int kind, int n, float d, uint64_t seed)
{
  gpu_lane_case lc;
  float *p;
  int i;

  /* case indices 0 mod 4: S = 72 */
  gpu_lane_case_make_n (&lc, seed, 4 * (int) (seed % 64), n);
  if (lc.s != LANE_S)
    abort ();
  p = lc.props;
  lc.props = NULL;
  gpu_lane_case_free (&lc);
  switch (kind) {
    case LANE_NONE:
      for (i = 0; i < n; i++) {
        p[(size_t) i * LANE_STRIDE] = i % 97 == 5 ? NAN : 9.0f;
        p[(size_t) i * LANE_STRIDE + 1] = -9.0f;
      }
      break;
    case LANE_EXACT:
      for (i = 0; i < n; i++)
        p[(size_t) i * LANE_STRIDE + 1] = -9.0f;
      lane_exact (p, n, d, seed);
      break;
    case LANE_DENSE:
      for (i = 0; i < n; i++) {
        float *r = p + (size_t) i * LANE_STRIDE;

        r[0] = -4.0f;
        r[1] = 4.0f + (float) (i % 7) * 0.125f;
        r[2] = 0.0f;
        r[4] = (float) (20 + i % 50);
      }
      break;
    default:
      break;
  }
  return p;
}

/* A batch's results, copied: the later calls must give these bits. */
typedef struct {
  cnms_frame_result r;
  cnms_det *dets;
  cnms_payload *table;
  void *data;
} lane_copy;

static void
lane_keep (lane_copy *c, const cnms_frame_result *r)
{
  c->r = *r;
  c->dets = malloc ((size_t) (r->n_dets + 1) * sizeof *c->dets);
  c->table = malloc ((size_t) (r->payload.n + 1) * sizeof *c->table);
  c->data = malloc (r->payload.size + 1);
  if (c->dets == NULL || c->table == NULL || c->data == NULL)
    exit (1);
  if (r->n_dets > 0)
    memcpy (c->dets, r->dets, (size_t) r->n_dets * sizeof *c->dets);
  if (r->payload.n > 0)
    memcpy (c->table, r->payload.records, (size_t) r->payload.n
        * sizeof *c->table);
  if (r->payload.size > 0)
    memcpy (c->data, r->payload.data, r->payload.size);
}

static int
lane_same (const lane_copy *c, const cnms_frame_result *r)
{
  return c->r.status == r->status && c->r.n_dets == r->n_dets
      && memcmp (&c->r.report, &r->report, sizeof r->report) == 0
      && (r->n_dets == 0 || memcmp (c->dets, r->dets, (size_t) r->n_dets
              * sizeof *c->dets) == 0)
      && c->r.payload.head == r->payload.head
      && c->r.payload.n == r->payload.n
      && c->r.payload.size == r->payload.size
      && (r->payload.n == 0 || memcmp (c->table, r->payload.records,
              (size_t) r->payload.n * sizeof *c->table) == 0)
      && (r->payload.size == 0 || memcmp (c->data, r->payload.data,
              r->payload.size) == 0);
}

static void
lane_unkeep (lane_copy *c)
{
  free (c->dets);
  free (c->table);
  free (c->data);
}

/* A LaneATT batch of b frames, frame i of kind i % LANE_KINDS and
 * ns[i % n_ns] proposals (batch_tensor: ns[0] each, one [B, ...]
 * tensor), host or device tensors, float16 or float32, distance d,
 * max_det (0: 100); big: one more frame of 5000 proposals at the end
 * (per-frame only). */
static void
run_lanes (int b, int f16, int device, int batch_tensor, const int *ns,
    int n_ns, float d, int max_det, int big, uint64_t seed)
{
  static const int sizes[][2] = {
    {1280, 720}, {1640, 590}, {640, 360}, {1920, 1080}, {100, 64},
  };
  const size_t esize = f16 ? 2 : 4;
  const int nf = b + (big && !batch_tensor ? 1 : 0);
  cnms_tensor *ht = calloc ((size_t) nf, sizeof *ht);
  cnms_tensor *dt = calloc ((size_t) nf, sizeof *dt);
  cnms_frame *frames = calloc ((size_t) nf, sizeof *frames);
  void **hmem = calloc ((size_t) nf, sizeof *hmem);
  void **dmem = calloc ((size_t) nf, sizeof *dmem);
  lane_copy *first = calloc ((size_t) nf, sizeof *first);
  const cnms_frame_result *res = NULL;
  cnms_tensor bt;
  void *hall = NULL, *dall = NULL;
  cnms_params p;
  char what[160];
  long before = mismatches;
  int i, rep;

  if (ht == NULL || dt == NULL || frames == NULL || hmem == NULL
      || dmem == NULL || first == NULL)
    exit (1);
  cnms_params_init (&p);
  p.model_width = 640;
  p.model_height = 360;
  p.score_threshold = 0.5f;
  p.lane_distance = d;
  p.max_detections = max_det > 0 ? max_det : 100;
  if (batch_tensor) {
    hall = malloc ((size_t) nf * (size_t) ns[0] * LANE_STRIDE * esize);
    if (hall == NULL)
      exit (1);
  }
  for (i = 0; i < nf; i++) {
    const int n = i == b ? 5000 : batch_tensor ? ns[0] : ns[i % n_ns];
    const int kind = i % LANE_KINDS;
    const size_t count = (size_t) n * LANE_STRIDE;
    float *props = lane_frame (kind, n, d, seed * 1000003u + (uint64_t) i);
    void *h = batch_tensor ? (char *) hall + (size_t) i * count * esize :
        malloc (count * esize);

    if (h == NULL)
      exit (1);
    if (f16)
      cnms_floats_to_halves (props, count, h);
    else
      memcpy (h, props, count * sizeof (float));
    free (props);
    if (!batch_tensor)
      hmem[i] = h;
    memset (&ht[i], 0, sizeof ht[i]);
    ht[i].data = h;
    ht[i].size = count * esize;
    ht[i].dtype = f16 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
    ht[i].n_dims = 3;
    ht[i].dims[0] = 1;
    ht[i].dims[1] = n;
    ht[i].dims[2] = LANE_STRIDE;
    dt[i] = ht[i];
    if (device && !batch_tensor) {
      dmem[i] = to_device (h, ht[i].size);
      dt[i].data = dmem[i];
      dt[i].on_device = 1;
    }
    frames[i].tensor = batch_tensor ? NULL : device ? &dt[i] : &ht[i];
    frames[i].frame_width = sizes[(i + (int) seed) % 5][0];
    frames[i].frame_height = sizes[(i + (int) seed) % 5][1];
  }
  bt = ht[0];
  bt.dims[0] = nf;
  bt.size = ht[0].size * (size_t) nf;
  bt.data = hall;
  if (batch_tensor && device) {
    dall = to_device (hall, bt.size);
    bt.data = dall;
    bt.on_device = 1;
    for (i = 0; i < nf; i++) {
      dt[i].data = (char *) dall + (size_t) i * ht[0].size;
      dt[i].on_device = 1;
    }
  }
  snprintf (what, sizeof what, "laneatt %s %s %s B=%d N=%d%s distance %g "
      "max_det %d%s", f16 ? "f16" : "f32", device ? "device" : "host",
      batch_tensor ? "batch-tensor" : "per-frame", nf, ns[0],
      n_ns > 1 ? ".." : "", (double) d, p.max_detections,
      big && !batch_tensor ? " +5000" : "");

  for (rep = 0; rep < 3; rep++) {
    uint64_t allocs = cnms_ctx_alloc_count (ctx_batch);
    cnms_status st = cnms_detect_batch (ctx_batch, batch_tensor ? &bt :
        NULL, NULL, frames, nf, CNMS_LAYOUT_LANEATT, &p, &res);

    if (st != CNMS_OK) {
      fprintf (stderr, "FAIL %s: %s: %s\n", what, cnms_status_str (st),
          cnms_ctx_error (ctx_batch));
      mismatches++;
      break;
    }
    if (rep == 2 && cnms_ctx_alloc_count (ctx_batch) != allocs) {
      fprintf (stderr, "FAIL %s: the third call allocated\n", what);
      mismatches++;
    }
    for (i = 0; i < nf; i++) {
      cnms_params fp = p;

      fp.frame_width = frames[i].frame_width;
      fp.frame_height = frames[i].frame_height;
      if (rep == 0) {
        lane_keep (&first[i], &res[i]);
      } else if (!lane_same (&first[i], &res[i])) {
        fprintf (stderr, "FAIL %s frame %d: call %d differs from the "
            "first\n", what, i, rep + 1);
        mismatches++;
      }
      frame_ok (&res[i], device ? &dt[i] : &ht[i], NULL, &ht[i], NULL,
          CNMS_LAYOUT_LANEATT, &fp, what, i);
    }
  }
  printf ("batch parity %s: %d frames x 3 calls, %ld mismatches\n", what,
      nf, mismatches - before);
  lines++;
  for (i = 0; i < nf; i++) {
    lane_unkeep (&first[i]);
    free (hmem[i]);
    cudaFree (dmem[i]);
  }
  free (hall);
  cudaFree (dall);
  free (ht);
  free (dt);
  free (frames);
  free (hmem);
  free (dmem);
  free (first);
}

/* The lane cases: small 0 (racecheck), 1 (compute-sanitizer: B up to
 * 128), else every B with both dtypes, both memories and both tensor
 * conventions. */
static void
lane_cases (long cases)
{
  static const int bs[] = { 1, 2, 8, 32, 128, 256 };
  static const int mixed[] = { 1000, 10, 3000, 50, 300 };
  static const int one[] = { 1000 };
  const int n_bs = cases <= 1 ? 5 : 6;
  int k, f16, device, bten;

  if (cases == 0) {
    run_lanes (8, 0, 1, 0, mixed, 5, 15.0f, 0, 0, 31u);
    run_lanes (8, 1, 0, 1, one, 1, 15.0f, 0, 0, 32u);
    return;
  }
  for (k = 0; k < n_bs; k++)
    for (f16 = 0; f16 < 2; f16++)
      for (device = 0; device < 2; device++)
        for (bten = 0; bten < 2; bten++) {
          const uint64_t seed = (uint64_t) (1000 + 8 * k + 4 * f16
              + 2 * device + bten);

          /* compute-sanitizer: f32 device frames and f16 host batch
           * tensors only */
          if (cases <= 1 && (f16 != !device || bten != f16))
            continue;
          run_lanes (bs[k], f16, device, bten, bten ? one : mixed,
              bten ? 1 : 5, 15.0f, 0, 0, seed);
        }
  /* a frame of 5000 proposals among small ones: no block-local front in
   * the launch, the pruned mask for it */
  run_lanes (8, 0, 1, 0, mixed, 5, 15.0f, 0, 1, 2001u);
  run_lanes (8, 1, 0, 0, mixed, 5, 50.0f, 0, 1, 2002u);
  /* LaneATT's test distance; 3 lanes a frame */
  run_lanes (32, 0, 1, 0, mixed, 5, 50.0f, 3, 0, 2003u);
  run_lanes (32, 1, 1, 1, one, 1, 50.0f, 3, 0, 2004u);
  /* a distance the library refuses: every frame refused as alone */
  run_lanes (8, 0, 1, 0, mixed, 5, NAN, 0, 0, 2005u);
  run_lanes (8, 0, 0, 1, one, 1, -1.0f, 0, 0, 2006u);
}

int
main (void)
{
  static const int bs[] = { 1, 8, 32, 128, 256 };
  static const int seg_bs[] = { 1, 2, 8, 32, 128, 256 };
  const long cases = gpu_env_int ("CNMS_GPU_CASES", 100);
  const int n_bs = cases <= 1 ? 2 : 5;
  int l, f16, k;

  gpu_require_device ("cuda-batch-device");
  ctx_cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  ctx_one = gpu_ctx_new (CNMS_BACKEND_CUDA);
  ctx_batch = gpu_ctx_new (CNMS_BACKEND_CUDA);
  ctx_nobh = gpu_ctx_new (CNMS_BACKEND_CUDA);
  cnms_ctx_test_option (ctx_nobh, CNMS_TEST_NO_BATCH_HEADS, 1);
  if (cases == 0) {
    /* the least that takes each path of the batch (racecheck): the fused
     * decode, the decode kernel, end2end, oriented boxes; 8 frames */
    for (l = 0; l < 4; l++) {
      run_case (bf_layouts[l], 0, 8, 100, 900, 0, -1, (uint64_t) l + 1);
      run_case (bf_layouts[l], 1, 8, 300, 0, 1, -1, (uint64_t) l + 11);
    }
    /* the heads after the batch, and the caps' kernel */
    run_case (CNMS_LAYOUT_YOLOV8_POSE, 0, 8, 100, 900, 0, -1, 21u);
    run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, 8, 100, 900, 0, -1, 22u);
    caps_on = 1;
    run_case (CNMS_LAYOUT_YOLOV8, 0, 8, 100, 900, 0, -1, 23u);
    run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, 4, 100, 900, 0, -1, 24u);
    caps_on = 0;
    /* the masks' batch over its room, then within it */
    room_case (4, 0, 25u);
    /* the lane engine's batch */
    lane_cases (cases);
    goto done;
  }
  for (l = 0; l < BF_N_LAYOUTS; l++) {
    const cnms_layout layout = bf_layouts[l];
    /* seg: B = 2 too, and up to 128 when small */
    const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
    const int *lbs = seg ? seg_bs : bs;
    const int n_lbs = seg ? (cases <= 1 ? 5 : 6) : n_bs;

    for (f16 = 0; f16 < 2; f16++)
      for (k = 0; k < n_lbs; k++) {
        const int b = lbs[k];
        const uint64_t seed = (uint64_t) (100 * l + 10 * f16 + k + 1);

        run_case (layout, f16, b, b > 32 ? 30 : 200, b > 32 ? 300 : 3000,
            0, -1, seed);
        run_case (layout, f16, b, b > 32 ? 100 : 1500, 0, 1, -1,
            seed + 5000);
      }
    /* N from 20 to 2000 in one batch, and a bad frame */
    run_case (layout, 0, n_bs > 2 ? 64 : 16, 20, 2000, 0, 5,
        (uint64_t) l + 9000);
    /* per-class caps and max_detections after them */
    caps_on = 1;
    run_case (layout, 0, n_bs > 2 ? 32 : 8, 100, 2000, 0, -1,
        (uint64_t) l + 9100);
    run_case (layout, 1, 8, 800, 0, 1, -1, (uint64_t) l + 9200);
    caps_on = 0;
  }
  seg_cases (cases <= 1);
  /* a YOLOv8 batch of 8400 anchors a frame, as a model gives */
  run_case (CNMS_LAYOUT_YOLOV8, 0, n_bs > 2 ? 32 : 4, 8400, 8400, 1, -1,
      424242u);
  lane_cases (cases);
done:
  printf ("cuda-batch-device: %ld lines, %ld frames, %ld mismatches "
      "(seg: %ld frames' masks made in the batch's launches; %ld frames "
      "of pose and seg against CNMS_TEST_NO_BATCH_HEADS)\n", lines,
      frames_total, mismatches, seg_made, heads_compared);
  cnms_ctx_free (ctx_cpu);
  cnms_ctx_free (ctx_one);
  cnms_ctx_free (ctx_batch);
  cnms_ctx_free (ctx_nobh);
  return mismatches == 0 ? 0 : 1;
}
