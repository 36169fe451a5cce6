/* cnms_detect_batch: every frame's result is bit-identical to a
 * cnms_detect of that frame alone (its size in p), for every layout and
 * head, float32 and float16, both tensor conventions (one tensor a frame,
 * a [B, ...] batch tensor), B from 1 to 256, frames whose N differ by 100x,
 * empty frames, frames of several sizes, a frame bad on its own,
 * per-class caps; and the
 * batch's own errors name the frame. argv[1] "cuda" runs it on the CUDA
 * backend (77 without a device), else the CPU backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "batch_frames.h"

static cnms_ctx *ctx_b, *ctx_1;
static int frames_checked;
/* per-class caps on the cases' params (bf_caps) */
static int caps_on;
static cnms_class_params caps_classes[BF_CLASSES];

/* Frame sizes the frames cycle through (0: p's). */
static const int sizes[][2] = {
  {0, 0}, {1280, 720}, {320, 240}, {1920, 1080}, {640, 480}, {100, 64},
};
#define N_SIZES ((int) (sizeof sizes / sizeof sizes[0]))

/* Each of the n results against cnms_detect of its frame alone. */
static void
check_frames (const cnms_frame_result *res, const cnms_tensor *ts,
    const cnms_tensor *ps, const cnms_frame *frames, int n,
    cnms_layout layout, const cnms_params *p, const char *what)
{
  int i;

  for (i = 0; i < n; i++) {
    cnms_params fp = *p;
    const cnms_det *dets = NULL;
    cnms_payloads pl;
    int nd = 0;
    cnms_status st;
    char why[200];

    if (frames != NULL && frames[i].frame_width > 0) {
      fp.frame_width = frames[i].frame_width;
      fp.frame_height = frames[i].frame_height;
    }
    st = cnms_detect (ctx_1, &ts[i], ps != NULL ? &ps[i] : NULL, layout,
        &fp, &dets, &nd);
    cnms_ctx_payload (ctx_1, &pl);
    check_count++;
    frames_checked++;
    if (!bf_same (&res[i], st, dets, nd, cnms_ctx_report (ctx_1), &pl, why,
            sizeof why)) {
      fprintf (stderr, "FAIL %s %s frame %d of %d: %s\n", what,
          cnms_layout_name (layout), i, n, why);
      check_failures++;
    }
    if (st == CNMS_OK)
      CHECK (res[i].error != NULL && res[i].error[0] == '\0');
  }
}

/* B frames of one layout, one tensor each, of N drawn per frame (from
 * lo to hi), sizes cycling; mode_at: the frame drawn with mode 1 (NaN
 * scores), and the one after it with mode 2 (no candidate), or -1. */
static void
per_frame_case (cnms_layout layout, int f16, int b, int lo, int hi,
    uint64_t seed, int mode_at)
{
  bf_frame *fr = calloc ((size_t) b, sizeof *fr);
  cnms_tensor *ts = calloc ((size_t) b, sizeof *ts);
  cnms_tensor *ps = calloc ((size_t) b, sizeof *ps);
  cnms_frame *frames = calloc ((size_t) b, sizeof *frames);
  const cnms_frame_result *res = NULL;
  const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
  cnms_params p;
  test_rng r;
  char what[64];
  int i;

  if (fr == NULL || ts == NULL || ps == NULL || frames == NULL)
    abort ();
  test_rng_seed (&r, seed);
  bf_params (&p, layout);
  if (caps_on)
    bf_caps (&p, caps_classes);
  for (i = 0; i < b; i++) {
    const int n = lo + (hi > lo ? test_rng_int (&r, 0, hi - lo + 1) : 0);
    const int mode = i == mode_at ? 1 : i == mode_at + 1 ? 2 : 0;

    bf_make (&fr[i], layout, f16, n, seed * 1000u + (uint64_t) i, mode);
    ts[i] = fr[i].t;
    ps[i] = fr[i].pt;
    frames[i].tensor = &ts[i];
    frames[i].protos = seg ? &ps[i] : NULL;
    frames[i].frame_width = sizes[(i + (int) seed) % N_SIZES][0];
    frames[i].frame_height = sizes[(i + (int) seed) % N_SIZES][1];
  }
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, b, layout, &p,
          &res), CNMS_OK);
  /* the same batch again: nothing allocated, the same results */
  {
    const uint64_t allocs = cnms_ctx_alloc_count (ctx_b);

    CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, b, layout, &p,
            &res), CNMS_OK);
    CHECK_INT (cnms_ctx_alloc_count (ctx_b), allocs);
  }
  snprintf (what, sizeof what, "per-frame %s%s B=%d N=%d..%d",
      f16 ? "f16" : "f32", caps_on ? " caps" : "", b, lo, hi);
  if (res != NULL)
    check_frames (res, ts, seg ? ps : NULL, frames, b, layout, &p, what);
  if (res != NULL && mode_at >= 0 && mode_at + 1 < b && fr[mode_at].n > 0) {
    /* every score NaN: counted, nothing kept; no candidate: nothing */
    CHECK_INT (res[mode_at].n_dets, 0);
    CHECK_INT (res[mode_at].report.candidates, 0);
    CHECK_INT (res[mode_at].report.nonfinite_scores, fr[mode_at].n);
    CHECK_INT (res[mode_at + 1].n_dets, 0);
  }
  for (i = 0; i < b; i++)
    bf_free (&fr[i]);
  free (fr);
  free (ts);
  free (ps);
  free (frames);
}

/* B frames of one N as one [B, ...] tensor (and [B, M, Hp, Wp]
 * prototypes), frames NULL (every frame p's size) or sized. */
static void
batch_tensor_case (cnms_layout layout, int f16, int b, int n, uint64_t seed,
    int sized)
{
  bf_frame *fr = calloc ((size_t) b, sizeof *fr);
  cnms_tensor *ts = calloc ((size_t) b, sizeof *ts);
  cnms_tensor *ps = calloc ((size_t) b, sizeof *ps);
  cnms_frame *frames = calloc ((size_t) b, sizeof *frames);
  const cnms_frame_result *res = NULL;
  const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
  cnms_tensor bt, bp;
  char *all, *allp = NULL;
  cnms_params p;
  char what[64];
  int i;

  if (fr == NULL || ts == NULL || ps == NULL || frames == NULL)
    abort ();
  bf_params (&p, layout);
  if (caps_on)
    bf_caps (&p, caps_classes);
  for (i = 0; i < b; i++) {
    bf_make (&fr[i], layout, f16, n, seed * 977u + (uint64_t) i, 0);
    frames[i].frame_width = sizes[(i + (int) seed) % N_SIZES][0];
    frames[i].frame_height = sizes[(i + (int) seed) % N_SIZES][1];
  }
  all = malloc (fr[0].size * (size_t) b + 1);
  if (seg)
    allp = malloc (fr[0].protos_size * (size_t) b);
  if (all == NULL || (seg && allp == NULL))
    abort ();
  for (i = 0; i < b; i++) {
    memcpy (all + fr[0].size * (size_t) i, fr[i].data, fr[i].size);
    ts[i] = fr[i].t;
    ts[i].data = all + fr[0].size * (size_t) i;
    if (seg) {
      memcpy (allp + fr[0].protos_size * (size_t) i, fr[i].protos,
          fr[i].protos_size);
      ps[i] = fr[i].pt;
      ps[i].data = allp + fr[0].protos_size * (size_t) i;
    }
  }
  bt = fr[0].t;
  bt.data = all;
  bt.size = fr[0].size * (size_t) b;
  bt.dims[0] = b;
  bp = fr[0].pt;
  bp.data = allp;
  bp.size = fr[0].protos_size * (size_t) b;
  bp.dims[0] = b;
  CHECK_INT (cnms_detect_batch (ctx_b, &bt, seg ? &bp : NULL,
          sized ? frames : NULL, b, layout, &p, &res), CNMS_OK);
  snprintf (what, sizeof what, "batch-tensor %s%s B=%d N=%d%s",
      f16 ? "f16" : "f32", caps_on ? " caps" : "", b, n, sized ? " sized" :
      "");
  if (res != NULL)
    check_frames (res, ts, seg ? ps : NULL, sized ? frames : NULL, b,
        layout, &p, what);

  /* the batch's own errors: B that is not n_frames, a short batch */
  CHECK_INT (cnms_detect_batch (ctx_b, &bt, seg ? &bp : NULL, NULL, b + 1,
          layout, &p, &res), CNMS_ERR_BAD_TENSOR);
  CHECK (strstr (cnms_ctx_error (ctx_b), "frames") != NULL);
  CHECK (res == NULL);
  bt.size -= 2;
  CHECK_INT (cnms_detect_batch (ctx_b, &bt, seg ? &bp : NULL, NULL, b,
          layout, &p, &res), CNMS_ERR_BAD_TENSOR);
  for (i = 0; i < b; i++)
    bf_free (&fr[i]);
  free (all);
  free (allp);
  free (fr);
  free (ts);
  free (ps);
  free (frames);
}

/* A frame bad on its own (short data) among good ones: its status and
 * reason, the others decoded; frames that do not agree fail the call,
 * naming the frame. */
static void
bad_frames (cnms_layout layout)
{
  enum { B = 5 };
  bf_frame fr[B], other;
  cnms_tensor ts[B], ps[B];
  cnms_frame frames[B];
  const cnms_frame_result *res = NULL;
  const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
  cnms_params p;
  int i;

  bf_params (&p, layout);
  if (caps_on)
    bf_caps (&p, caps_classes);
  memset (frames, 0, sizeof frames);
  for (i = 0; i < B; i++) {
    bf_make (&fr[i], layout, 0, 20 + 7 * i, 4242u + (uint64_t) i, 0);
    ts[i] = fr[i].t;
    ps[i] = fr[i].pt;
    frames[i].tensor = &ts[i];
    frames[i].protos = seg ? &ps[i] : NULL;
  }
  /* frame 0 and 3 short by one element: bad on their own */
  ts[0].size -= 4;
  ts[3].size -= 4;
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, B, layout, &p,
          &res), CNMS_OK);
  if (res != NULL) {
    CHECK_INT (res[0].status, CNMS_ERR_BAD_TENSOR);
    CHECK_INT (res[3].status, CNMS_ERR_BAD_TENSOR);
    CHECK (res[3].error != NULL && strstr (res[3].error, "bytes") != NULL);
    CHECK (res[3].dets == NULL && res[3].n_dets == 0);
    check_frames (res, ts, seg ? ps : NULL, frames, B, layout, &p,
        "bad frames");
  }
  ts[0].size += 4;
  ts[3].size += 4;

  /* a frame whose row differs (one more class, keypoint or lane row) */
  bf_make (&other, layout == CNMS_LAYOUT_END2END ? CNMS_LAYOUT_YOLOV5 :
      layout, 0, 30, 99u, 0);
  if (layout != CNMS_LAYOUT_END2END) {
    cnms_tensor t = other.t;

    /* the same floats read with one value more a row */
    const int64_t all = other.a * other.b;

    if (layout == CNMS_LAYOUT_YOLOV5 || layout == CNMS_LAYOUT_LANEATT) {
      t.dims[2] = other.b + 1;
      t.dims[1] = all / t.dims[2];
    } else {
      t.dims[1] = other.a + 1;
      t.dims[2] = all / t.dims[1];
    }
    t.size = (size_t) t.dims[1] * (size_t) t.dims[2] * 4;
    frames[2].tensor = &t;
    CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, B, layout, &p,
            &res), CNMS_ERR_BAD_TENSOR);
    CHECK (strstr (cnms_ctx_error (ctx_b), "frame 2 ") != NULL);
    CHECK (res == NULL);
    frames[2].tensor = &ts[2];
  }
  /* a float16 frame among float32 ones */
  {
    bf_frame h;

    bf_make (&h, layout, 1, 30, 7u, 0);
    frames[4].tensor = &h.t;
    CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, B, layout,
            &p, &res), CNMS_ERR_BAD_TENSOR);
    CHECK (strstr (cnms_ctx_error (ctx_b), "frame 4 ") != NULL);
    CHECK (strstr (cnms_ctx_error (ctx_b), "dtype") != NULL);
    frames[4].tensor = &ts[4];
    bf_free (&h);
  }
  bf_free (&other);
  /* the frame's own tensor beside a batch tensor; no tensor at all */
  CHECK_INT (cnms_detect_batch (ctx_b, &ts[0], seg ? &ps[0] : NULL, frames,
          1, layout, &p, &res), CNMS_ERR_INVALID_ARG);
  frames[1].tensor = NULL;
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, B, layout, &p,
          &res), CNMS_ERR_INVALID_ARG);
  CHECK (strstr (cnms_ctx_error (ctx_b), "frame 1 ") != NULL);
  for (i = 0; i < B; i++)
    bf_free (&fr[i]);
}

int
main (int argc, char **argv)
{
  const int cuda = argc > 1 && strcmp (argv[1], "cuda") == 0;
  const cnms_frame_result *res = NULL;
  cnms_params p;
  int l, f16;

  if (cuda && cnms_cuda_device_count () <= 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  if (cnms_ctx_new (cuda ? CNMS_BACKEND_CUDA : CNMS_BACKEND_CPU, -1, &ctx_b)
      != CNMS_OK || cnms_ctx_new (cuda ? CNMS_BACKEND_CUDA :
          CNMS_BACKEND_CPU, -1, &ctx_1) != CNMS_OK) {
    fprintf (stderr, "cannot create the contexts\n");
    return 1;
  }
  /* on CUDA, LaneATT frames in the batch's launches too */
  cnms_ctx_test_option (ctx_b, CNMS_TEST_CUDA_UNPROVEN, 1);

  /* no frame: nothing, and OK */
  cnms_params_init (&p);
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, NULL, 0,
          CNMS_LAYOUT_YOLOV8, &p, &res), CNMS_OK);
  CHECK (res != NULL);
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, NULL, -1,
          CNMS_LAYOUT_YOLOV8, &p, &res), CNMS_ERR_INVALID_ARG);
  p.iou = 2.0f;
  CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, NULL, 0,
          CNMS_LAYOUT_YOLOV8, &p, &res), CNMS_ERR_INVALID_ARG);

  for (l = 0; l < BF_N_LAYOUTS; l++) {
    const cnms_layout layout = bf_layouts[l];

    for (f16 = 0; f16 < 2; f16++) {
      const uint64_t s = (uint64_t) (l * 2 + f16 + 1);

      per_frame_case (layout, f16, 1, 50, 50, s, -1);
      per_frame_case (layout, f16, 7, 0, 300, s + 100, 2);
      /* N from 20 to 2000 in one batch: 100x */
      per_frame_case (layout, f16, 4, 20, 20, s + 200, -1);
      per_frame_case (layout, f16, 3, 2000, 2000, s + 300, -1);
      batch_tensor_case (layout, f16, 1, 64, s + 400, 0);
      batch_tensor_case (layout, f16, 9, 150, s + 500, 1);
    }
    /* mixed N in one call, 20 and 2000 */
    per_frame_case (layout, 0, 32, 20, 2000, (uint64_t) l + 600, 5);
    per_frame_case (layout, 0, 256, 1, 40, (uint64_t) l + 700, 100);
    batch_tensor_case (layout, 1, 256, 16, (uint64_t) l + 800, 1);
    /* per-class caps and max_detections after them */
    caps_on = 1;
    per_frame_case (layout, 0, 12, 20, 600, (uint64_t) l + 900, 2);
    batch_tensor_case (layout, 1, 9, 200, (uint64_t) l + 950, 1);
    caps_on = 0;
    bad_frames (layout);
  }
  /* an end2end frame with K = 0 beside others */
  {
    bf_frame a, z;
    cnms_frame frames[2];
    cnms_tensor zt;

    bf_make (&a, CNMS_LAYOUT_END2END, 0, 10, 5u, 0);
    bf_make (&z, CNMS_LAYOUT_END2END, 0, 0, 6u, 0);
    zt = z.t;
    zt.data = NULL;
    memset (frames, 0, sizeof frames);
    frames[0].tensor = &zt;
    frames[1].tensor = &a.t;
    bf_params (&p, CNMS_LAYOUT_END2END);
    CHECK_INT (cnms_detect_batch (ctx_b, NULL, NULL, frames, 2,
            CNMS_LAYOUT_END2END, &p, &res), CNMS_OK);
    if (res != NULL) {
      cnms_tensor ts[2] = { zt, a.t };

      CHECK_INT (res[0].status, CNMS_OK);
      CHECK_INT (res[0].n_dets, 0);
      check_frames (res, ts, NULL, frames, 2, CNMS_LAYOUT_END2END, &p,
          "empty end2end");
    }
    bf_free (&a);
    bf_free (&z);
  }
  /* the report and payload of the context are left empty */
  CHECK_INT (cnms_ctx_report (ctx_b)->kept, 0);
  printf ("batch (%s): %d frames equal to their own calls\n",
      cuda ? "cuda" : "cpu", frames_checked);
  cnms_ctx_free (ctx_b);
  cnms_ctx_free (ctx_1);
  return check_result (cuda ? "batch-cuda" : "batch-cpu");
}
