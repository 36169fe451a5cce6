/* The heads on the CUDA backend against the CPU reference, bit for bit:
 * - pose parity: seeded yolov8-pose tensors (K 1..20, D 2 and 3,
 *   letterbox and stretch of several frames, clustered boxes with tied
 *   scores, keypoints inside and outside the model, a few NaN / Inf
 *   values), float32 and float16, host and device memory: the records and
 *   every keypoint (the same bits; NaN counts as equal to NaN);
 * - segmentation parity: seeded yolov8-seg tensors (C 1..8, M 1..40 and
 *   32, prototypes model / 4 and odd sizes), float32 and float16, the
 *   detections and the prototypes each on the host or the device: the
 *   records, the mask table and every mask byte; both on the device, the
 *   heads enqueued behind the detect's NMS and (CNMS_TEST_NO_HEADS_AHEAD)
 *   made after it;
 * - determinism: one YOLOv8-seg frame (80 classes, 32 x 160 x 160
 *   prototypes) and one pose frame (17 x 3 keypoints), CNMS_GPU_REPEAT
 *   (200) runs from device memory identical, nothing allocated after the
 *   first (a smaller frame in between).
 * Exits 77 without a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "gpu_common.h"

static test_rng gen;
TEST_RNG_SHORTHANDS (gen)

/* A heads case: a float32 tensor (and prototypes), the params. */
typedef struct {
  int pose;
  int n, c, m, k, d, hp, wp;
  cnms_params p;
  float *t;
  size_t t_count;
  float *pr;
  size_t pr_count;
} heads_case;

static void
heads_case_free (heads_case *hc)
{
  free (hc->t);
  free (hc->pr);
  memset (hc, 0, sizeof *hc);
}

static void
heads_case_print (const heads_case *hc, uint64_t seed, int idx)
{
  printf ("  case %d (seed %llu): %s N %d C %d M %d K %d D %d protos %dx%d "
      "model %dx%d frame %dx%d %s score %g iou %g max %d max/class %d\n",
      idx,
      (unsigned long long) seed, hc->pose ? "pose" : "seg", hc->n, hc->c,
      hc->m, hc->k, hc->d, hc->wp, hc->hp, hc->p.model_width,
      hc->p.model_height, hc->p.frame_width, hc->p.frame_height,
      hc->p.letterbox ? "letterbox" : "stretch",
      (double) hc->p.score_threshold, (double) hc->p.iou,
      hc->p.max_detections, hc->p.max_detections_per_class);
}

/* Boxes in clusters (near duplicates), scores with ties. Rows 0..3 of a
 * [rows, n] tensor, the score rows at 4 .. 4 + c. */
static void
fill_boxes (float *t, int n, int c, int mw, int mh)
{
  float cx[16], cy[16], sw[16], sh[16];
  int g = 1 + (int) (rnd () % 12), i, j;

  for (i = 0; i < g; i++) {
    cx[i] = uni (0.0f, (float) mw);
    cy[i] = uni (0.0f, (float) mh);
    sw[i] = uni (4.0f, (float) mw / 4.0f);
    sh[i] = uni (4.0f, (float) mh / 4.0f);
  }
  for (i = 0; i < n; i++) {
    int q = (int) (rnd () % (unsigned) g);
    int best = (int) (rnd () % (unsigned) c);

    t[0 * (size_t) n + i] = cx[q] + uni (-8.0f, 8.0f);
    t[1 * (size_t) n + i] = cy[q] + uni (-8.0f, 8.0f);
    t[2 * (size_t) n + i] = sw[q] * uni (0.8f, 1.2f);
    t[3 * (size_t) n + i] = sh[q] * uni (0.8f, 1.2f);
    for (j = 0; j < c; j++) {
      float s = uni (0.0f, 0.3f);
      if (j == best)
        s = rnd () % 3 == 0 ? (float) (rnd () % 16) / 16.0f
            : uni (0.0f, 1.0f);
      t[(4 + (size_t) j) * n + i] = s;
    }
  }
}

static void
pick_map (cnms_params *p, int seg)
{
  static const int models[4][2] = { {640, 640}, {320, 256}, {512, 384},
    {1024, 576} };
  static const int frames[5][2] = { {1920, 1080}, {640, 640}, {1280, 720},
    {333, 777}, {100, 60} };
  int mi = (int) (rnd () % 4), fi = (int) (rnd () % 5);

  cnms_params_init (p);
  if (seg && mi == 3)
    mi = 0;
  if (seg && fi == 0)
    fi = 2;
  p->model_width = models[mi][0];
  p->model_height = models[mi][1];
  p->frame_width = frames[fi][0];
  p->frame_height = frames[fi][1];
  p->letterbox = (int) (rnd () % 2);
  p->score_threshold = rnd () % 2 ? 0.25f : 0.5f;
  p->iou = rnd () % 2 ? 0.45f : 0.7f;
  p->max_detections = seg ? 50 : 100;
  /* a third of the cases cap every class: the caps run between the NMS
   * and the heads enqueued behind it */
  if (rnd () % 3 == 0)
    p->max_detections_per_class = 1 + (int) (rnd () % 8);
}

static void
make_pose (heads_case *hc, uint64_t seed, int idx)
{
  int i, rows;

  test_rng_seed (&gen, seed * 1000003u + (uint64_t) idx);
  memset (hc, 0, sizeof *hc);
  hc->pose = 1;
  hc->n = 1 + (int) (rnd () % 3000);
  hc->c = 1;
  hc->k = idx % 5 == 0 ? 17 : 1 + (int) (rnd () % 20);
  hc->d = idx % 2 ? 2 : 3;
  pick_map (&hc->p, 0);
  hc->p.keypoint_dims = hc->d;
  rows = 5 + hc->k * hc->d;
  hc->t_count = (size_t) rows * hc->n;
  hc->t = calloc (hc->t_count, sizeof (float));
  fill_boxes (hc->t, hc->n, 1, hc->p.model_width, hc->p.model_height);
  for (i = 0; i < hc->n; i++) {
    int j;
    for (j = 0; j < hc->k; j++) {
      size_t r = 5 + (size_t) j * hc->d;
      hc->t[r * hc->n + i] = uni (-20.0f, (float) hc->p.model_width + 20.0f);
      hc->t[(r + 1) * hc->n + i] = uni (-20.0f,
          (float) hc->p.model_height + 20.0f);
      if (hc->d == 3)
        hc->t[(r + 2) * hc->n + i] = uni (-0.5f, 1.5f);
      if (rnd () % 500 == 0)
        hc->t[(r + rnd () % (unsigned) hc->d) * hc->n + i] =
            rnd () % 2 ? NAN : INFINITY;
    }
  }
}

static void
make_seg (heads_case *hc, uint64_t seed, int idx)
{
  size_t i;
  int rows, j;

  test_rng_seed (&gen, seed * 1000033u + (uint64_t) idx);
  memset (hc, 0, sizeof *hc);
  hc->n = 1 + (int) (rnd () % 2000);
  hc->c = 1 + (int) (rnd () % 8);
  hc->m = idx % 3 == 0 ? 32 : 1 + (int) (rnd () % 40);
  pick_map (&hc->p, 1);
  if (idx % 4 == 3) {
    hc->hp = 1 + (int) (rnd () % 50);
    hc->wp = 1 + (int) (rnd () % 50);
  } else {
    hc->hp = hc->p.model_height / 4;
    hc->wp = hc->p.model_width / 4;
  }
  rows = 4 + hc->c + hc->m;
  hc->t_count = (size_t) rows * hc->n;
  hc->t = calloc (hc->t_count, sizeof (float));
  fill_boxes (hc->t, hc->n, hc->c, hc->p.model_width, hc->p.model_height);
  for (j = 0; j < hc->m; j++)
    for (i = 0; i < (size_t) hc->n; i++)
      hc->t[(4 + (size_t) hc->c + j) * hc->n + i] = uni (-2.0f, 2.0f);
  hc->pr_count = (size_t) hc->m * hc->hp * hc->wp;
  hc->pr = malloc (hc->pr_count * sizeof (float));
  for (i = 0; i < hc->pr_count; i++) {
    hc->pr[i] = uni (-1.0f, 1.0f);
    /* quantised values now and then: logits exactly 0 happen */
    if (idx % 5 == 4)
      hc->pr[i] = (float) ((int) (hc->pr[i] * 4.0f)) / 4.0f;
  }
}

/* What one run leaves: records, keypoints, masks (owned copies): kp
 * holds record i's K keypoints at 3 K i, bytes each mask's bytes, one
 * after the other in kept order (the payload's records say where each
 * lies in the library's buffer). */
typedef struct {
  cnms_status st;
  char error[256];
  int n;
  cnms_det *dets;
  float *kp;
  int k, d;
  cnms_payload *masks;
  uint8_t *bytes;
  size_t n_bytes;
} heads_result;

static void
heads_result_free (heads_result *r)
{
  free (r->dets);
  free (r->kp);
  free (r->masks);
  free (r->bytes);
  memset (r, 0, sizeof *r);
}

/* A device copy of host bytes (NULL on failure). */
static void *
to_device (const void *p, size_t size)
{
  void *d = NULL;

  /* the copy from pageable memory may still be in flight when cudaMemcpy
   * returns: synchronise before the library's non-blocking stream reads */
  if (cudaMalloc (&d, size > 0 ? size : 1) != cudaSuccess
      || cudaMemcpy (d, p, size, cudaMemcpyHostToDevice) != cudaSuccess
      || cudaDeviceSynchronize () != cudaSuccess) {
    if (d != NULL)
      cudaFree (d);
    return NULL;
  }
  return d;
}

/* 1 when the payload's buffer holds bytes at rec's offset. */
static int
payload_holds (const cnms_payloads *pl, const cnms_payload *rec,
    size_t bytes)
{
  return rec->offset <= pl->size && pl->size - rec->offset >= bytes;
}

/* Runs the case on ctx: float16 or not, each tensor from the device or
 * not: the records, the keypoints and masks of the payload
 * (cnms_ctx_payload) copied into r; a payload that does not fit the
 * records fails r (CNMS_ERR_INVALID_ARG). */
static void
heads_run (cnms_ctx *ctx, const heads_case *hc, int f16, int dev_t,
    int dev_p, heads_result *r)
{
  const size_t es = f16 ? 2 : 4;
  void *th = NULL, *ph = NULL, *td = NULL, *pd = NULL;
  cnms_tensor t, pt;
  const cnms_det *dets;
  cnms_payloads pl;
  int rows = hc->pose ? 5 + hc->k * hc->d : 4 + hc->c + hc->m;
  int i;

  memset (r, 0, sizeof *r);
  if (f16) {
    th = malloc (hc->t_count * 2);
    cnms_floats_to_halves (hc->t, hc->t_count, th);
    if (!hc->pose) {
      ph = malloc (hc->pr_count * 2);
      cnms_floats_to_halves (hc->pr, hc->pr_count, ph);
    }
  }
  memset (&t, 0, sizeof t);
  t.data = f16 ? th : hc->t;
  t.size = hc->t_count * es;
  t.dtype = f16 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = rows;
  t.dims[2] = hc->n;
  if (dev_t) {
    td = to_device (t.data, t.size);
    t.data = td;
    t.on_device = 1;
  }
  memset (&pt, 0, sizeof pt);
  if (!hc->pose) {
    pt.data = f16 ? ph : hc->pr;
    pt.size = hc->pr_count * es;
    pt.dtype = t.dtype;
    pt.n_dims = 4;
    pt.dims[0] = 1;
    pt.dims[1] = hc->m;
    pt.dims[2] = hc->hp;
    pt.dims[3] = hc->wp;
    if (dev_p) {
      pd = to_device (pt.data, pt.size);
      pt.data = pd;
      pt.on_device = 1;
    }
  }
  /* the pose cases have no prototypes: dev_p asks for nothing */
  if ((dev_t && td == NULL) || (!hc->pose && dev_p && pd == NULL)) {
    r->st = CNMS_ERR_CUDA;
    snprintf (r->error, sizeof r->error, "cannot copy to the device");
    goto out;
  }
  if (hc->pose)
    r->st = cnms_detect (ctx, &t, NULL, CNMS_LAYOUT_YOLOV8_POSE, &hc->p,
        &dets, &r->n);
  else
    r->st = cnms_detect (ctx, &t, &pt, CNMS_LAYOUT_YOLOV8_SEG, &hc->p,
        &dets, &r->n);
  snprintf (r->error, sizeof r->error, "%s", cnms_ctx_error (ctx));
  if (r->st != CNMS_OK)
    goto out;
  r->dets = malloc (((size_t) r->n + 1) * sizeof *r->dets);
  memcpy (r->dets, dets, (size_t) r->n * sizeof *r->dets);
  cnms_ctx_payload (ctx, &pl);
  if (pl.n != r->n || (r->n > 0 && (pl.head != (hc->pose ?
                  CNMS_HEAD_KEYPOINTS : CNMS_HEAD_MASK)
              || pl.records == NULL || pl.data == NULL))) {
    r->st = CNMS_ERR_INVALID_ARG;
    snprintf (r->error, sizeof r->error, "payload: head %d, %d records "
        "for %d", (int) pl.head, pl.n, r->n);
    goto out;
  }
  if (hc->pose) {
    const cnms_shape *sh = &cnms_ctx_report (ctx)->shape;
    size_t kp_bytes;

    r->k = sh->n_keypoints;
    r->d = sh->keypoint_dims;
    kp_bytes = (size_t) r->k * 3 * sizeof (float);
    r->kp = malloc ((size_t) r->n * kp_bytes + sizeof (float));
    for (i = 0; i < r->n; i++) {
      const cnms_payload *rec = &pl.records[i];

      if (rec->n_points != r->k || rec->point_dims != 3
          || !payload_holds (&pl, rec, kp_bytes)) {
        r->st = CNMS_ERR_INVALID_ARG;
        snprintf (r->error, sizeof r->error, "record %d's keypoints: %d x "
            "%d at %zu of %zu bytes (K %d)", i, rec->n_points,
            rec->point_dims, rec->offset, pl.size, r->k);
        goto out;
      }
      memcpy (r->kp + (size_t) i * r->k * 3, pl.data + rec->offset,
          kp_bytes);
    }
  } else {
    size_t at = 0;

    for (i = 0; i < r->n; i++) {
      const cnms_payload *rec = &pl.records[i];

      if (rec->width < 0 || rec->height < 0 || !payload_holds (&pl, rec,
              (size_t) rec->width * rec->height)) {
        r->st = CNMS_ERR_INVALID_ARG;
        snprintf (r->error, sizeof r->error, "record %d's mask: %d x %d "
            "at %zu of %zu bytes", i, rec->width, rec->height, rec->offset,
            pl.size);
        goto out;
      }
      r->n_bytes += (size_t) rec->width * rec->height;
    }
    r->masks = malloc (((size_t) r->n + 1) * sizeof *r->masks);
    r->bytes = malloc (r->n_bytes + 1);
    if (r->n > 0)
      memcpy (r->masks, pl.records, (size_t) r->n * sizeof *r->masks);
    for (i = 0; i < r->n; i++) {
      const cnms_payload *rec = &pl.records[i];
      const size_t bytes = (size_t) rec->width * rec->height;

      memcpy (r->bytes + at, pl.data + rec->offset, bytes);
      at += bytes;
    }
  }
out:
  if (td != NULL)
    cudaFree (td);
  if (pd != NULL)
    cudaFree (pd);
  free (th);
  free (ph);
}

/* Same bits, NaN equal to NaN. */
static int
same_float (float a, float b)
{
  uint32_t ua, ub;

  if (a != a && b != b)
    return 1;
  memcpy (&ua, &a, 4);
  memcpy (&ub, &b, 4);
  return ua == ub;
}

/* 1 when a and b are the same; else 0 with a reason. */
static int
heads_equal (const heads_result *a, const heads_result *b, char *why,
    size_t size)
{
  size_t i;

  if (a->st != b->st) {
    snprintf (why, size, "status %d vs %d (%.200s | %.200s)", a->st, b->st,
        a->error, b->error);
    return 0;
  }
  if (a->st != CNMS_OK)
    return 1;
  if (a->n != b->n) {
    snprintf (why, size, "%d records vs %d", a->n, b->n);
    return 0;
  }
  if (memcmp (a->dets, b->dets, (size_t) a->n * sizeof *a->dets) != 0) {
    snprintf (why, size, "records differ");
    return 0;
  }
  if (a->kp != NULL || b->kp != NULL) {
    if (a->kp == NULL || b->kp == NULL || a->k != b->k || a->d != b->d) {
      snprintf (why, size, "keypoint shapes differ");
      return 0;
    }
    for (i = 0; i < (size_t) a->n * a->k * 3; i++)
      if (!same_float (a->kp[i], b->kp[i])) {
        snprintf (why, size, "keypoint value %zu: %a vs %a", i,
            (double) a->kp[i], (double) b->kp[i]);
        return 0;
      }
  }
  if (a->masks != NULL || b->masks != NULL) {
    if (a->masks == NULL || b->masks == NULL
        || memcmp (a->masks, b->masks, (size_t) a->n * sizeof *a->masks)
        != 0 || a->n_bytes != b->n_bytes) {
      snprintf (why, size, "mask tables differ");
      return 0;
    }
    for (i = 0; i < a->n_bytes; i++)
      if (a->bytes[i] != b->bytes[i]) {
        snprintf (why, size, "mask byte %zu of %zu: %d vs %d", i,
            a->n_bytes, a->bytes[i], b->bytes[i]);
        return 0;
      }
  }
  return 1;
}

/* Parity of a family: every case on the CPU (float32 and float16), then
 * on CUDA from each memory combination. */
static void
parity (cnms_ctx *cpu, cnms_ctx *cuda, int pose, int n_cases, uint64_t seed)
{
  int idx, bad = 0, runs = 0, kept = 0, empty = 0;
  long long pixels = 0, set = 0;
  char why[512];

  for (idx = 0; idx < n_cases; idx++) {
    heads_case hc;
    int f16;

    if (pose)
      make_pose (&hc, seed, idx);
    else
      make_seg (&hc, seed, idx);
    for (f16 = 0; f16 < 2; f16++) {
      heads_result a, b;
      int combo;

      heads_run (cpu, &hc, f16, 0, 0, &a);
      GPU_CHECK (a.st == CNMS_OK, "case %d on the CPU: %s", idx, a.error);
      kept += a.n;
      empty += a.n == 0;
      if (!pose && f16 == 0) {
        size_t i;
        pixels += (long long) a.n_bytes;
        for (i = 0; i < a.n_bytes; i++)
          set += a.bytes[i];
      }
      /* host/host, device/device, for masks the two mixed; then
       * device/device again with the heads after the detect instead of
       * enqueued behind its NMS (combo 4) */
      for (combo = 0; combo < (pose ? 2 : 4) + 1; combo++) {
        const int all_dev = combo == (pose ? 2 : 4);
        const int dev_t = all_dev || (combo & 1);
        const int dev_p = all_dev || ((combo >> 1) & 1);

        cnms_ctx_test_option (cuda, CNMS_TEST_NO_HEADS_AHEAD, all_dev);
        heads_run (cuda, &hc, f16, dev_t, dev_p, &b);
        cnms_ctx_test_option (cuda, CNMS_TEST_NO_HEADS_AHEAD, 0);
        runs++;
        if (!heads_equal (&a, &b, why, sizeof why)) {
          if (bad++ < 10) {
            printf ("MISMATCH %s case %d (%s, tensor %s, protos %s%s): "
                "%s\n", pose ? "pose" : "seg", idx,
                f16 ? "float16" : "float32", dev_t ? "device" : "host",
                dev_p ? "device" : "host",
                all_dev ? ", heads after the detect" : "", why);
            heads_case_print (&hc, seed, idx);
          }
        }
        heads_result_free (&b);
      }
      heads_result_free (&a);
    }
    heads_case_free (&hc);
  }
  GPU_CHECK (bad == 0, "%s parity: %d mismatches", pose ? "pose" : "seg",
      bad);
  if (pose)
    printf ("cuda-heads: pose parity: %d cases, %d comparisons (float32 / "
        "float16, host / device, device with the heads after the detect), "
        "%d records, %d empty, %d mismatches, seed %llu\n", n_cases, runs,
        kept, empty, bad, (unsigned long long) seed);
  else
    printf ("cuda-heads: seg parity: %d cases, %d comparisons (float32 / "
        "float16, detections and prototypes each host / device, both on "
        "the device with the heads after the detect), %d records, %d "
        "empty, %lld mask pixels (%lld set), %d mismatches, seed %llu\n",
        n_cases, runs, kept, empty, pixels, set, bad,
        (unsigned long long) seed);
}

/* A YOLOv8-seg frame: [1, 116, 8400], protos [1, 32, 160, 160], 640 ->
 * 1280x720 letterboxed; or a pose frame [1, 56, 8400]. */
static void
make_frame (heads_case *hc, int pose, uint64_t seed)
{
  test_rng_seed (&gen, seed);
  memset (hc, 0, sizeof *hc);
  hc->pose = pose;
  hc->n = 8400;
  cnms_params_init (&hc->p);
  hc->p.frame_width = 1280;
  hc->p.frame_height = 720;
  if (pose) {
    int i, j;
    hc->c = 1;
    hc->k = 17;
    hc->d = 3;
    hc->t_count = (size_t) 56 * hc->n;
    hc->t = calloc (hc->t_count, sizeof (float));
    fill_boxes (hc->t, hc->n, 1, 640, 640);
    for (j = 0; j < 51; j++)
      for (i = 0; i < hc->n; i++)
        hc->t[(5 + (size_t) j) * hc->n + i] = j % 3 == 2 ? uni (0.0f, 1.0f)
            : uni (0.0f, 640.0f);
  } else {
    size_t i;
    int j;
    hc->c = 80;
    hc->m = 32;
    hc->hp = hc->wp = 160;
    hc->t_count = (size_t) 116 * hc->n;
    hc->t = calloc (hc->t_count, sizeof (float));
    fill_boxes (hc->t, hc->n, 80, 640, 640);
    for (j = 0; j < 32; j++)
      for (i = 0; i < (size_t) hc->n; i++)
        hc->t[(84 + (size_t) j) * hc->n + i] = uni (-2.0f, 2.0f);
    hc->pr_count = (size_t) 32 * 160 * 160;
    hc->pr = malloc (hc->pr_count * sizeof (float));
    for (i = 0; i < hc->pr_count; i++)
      hc->pr[i] = uni (-1.0f, 1.0f);
  }
}

static void
determinism (cnms_ctx *cpu, cnms_ctx *cuda, int pose, int repeat)
{
  heads_case hc, small;
  heads_result ref, first, r;
  uint64_t allocs;
  int i, diffs = 0;
  char why[512];
  const char *name = pose ? "pose frame" : "seg frame";

  make_frame (&hc, pose, pose ? 91 : 92);
  if (pose)
    make_pose (&small, 93, 1);
  else
    make_seg (&small, 93, 1);
  heads_run (cpu, &hc, 0, 0, 0, &ref);
  heads_run (cuda, &hc, 0, 1, 1, &first);
  GPU_CHECK (first.st == CNMS_OK, "%s: %s", name, first.error);
  GPU_CHECK (heads_equal (&ref, &first, why, sizeof why),
      "%s differs from the CPU backend: %s", name, why);
  allocs = cnms_ctx_alloc_count (cuda);
  for (i = 1; i < repeat; i++) {
    if (i == repeat / 2) {
      heads_run (cuda, &small, 0, 1, 1, &r);
      heads_result_free (&r);
      /* the smaller one may grow what the frame did not need */
      allocs = cnms_ctx_alloc_count (cuda);
    }
    heads_run (cuda, &hc, 0, 1, 1, &r);
    if (!heads_equal (&first, &r, why, sizeof why) && diffs++ < 3)
      printf ("%s run %d differs: %s\n", name, i, why);
    heads_result_free (&r);
  }
  GPU_CHECK (diffs == 0, "%s: %d of %d runs differ", name, diffs, repeat);
  GPU_CHECK (cnms_ctx_alloc_count (cuda) == allocs,
      "%s: alloc_count went from %llu to %llu", name,
      (unsigned long long) allocs,
      (unsigned long long) cnms_ctx_alloc_count (cuda));
  printf ("cuda-heads: %s: %d runs identical from device memory, equal to "
      "the CPU backend (%d records, %zu mask bytes), allocations steady\n",
      name, repeat - diffs, first.n, first.n_bytes);
  heads_result_free (&ref);
  heads_result_free (&first);
  heads_case_free (&hc);
  heads_case_free (&small);
}

int
main (void)
{
  const uint64_t seed = (uint64_t) gpu_env_int ("CNMS_GPU_SEED", 2323);
  const int n_pose = (int) gpu_env_int ("CNMS_GPU_POSE_CASES", 200);
  const int n_seg = (int) gpu_env_int ("CNMS_GPU_SEG_CASES", 100);
  const int repeat = (int) gpu_env_int ("CNMS_GPU_REPEAT", 200);
  cnms_ctx *cpu, *cuda;

  gpu_require_device ("cuda-heads");
  cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  cuda = gpu_ctx_new (CNMS_BACKEND_CUDA);
  parity (cpu, cuda, 1, n_pose, seed);
  parity (cpu, cuda, 0, n_seg, seed);
  determinism (cpu, cuda, 1, repeat);
  determinism (cpu, cuda, 0, repeat);
  cnms_ctx_free (cpu);
  cnms_ctx_free (cuda);
  printf ("cuda-heads: %s\n", gpu_failures ? "FAILED" : "ok");
  return gpu_failures ? 1 : 0;
}
