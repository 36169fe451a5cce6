/* The edges of the CUDA engine's paths: the mask is resolved from shared
 * memory up to 1024 candidates, from global memory above; the rank sort
 * takes counts up to 2048 in one stage, by lane groups, and larger ones
 * stage by stage; a frame's few mask tiles are split in 4 or 2 row parts
 * when the grid has blocks to spare (1, 3 and 15 tiles here); the YOLOv8
 * decode runs in the engine, in groups of 32 anchors (4100 anchors: the
 * last group partial). Cases: 0 and 1 candidates, 300, 1023 / 1024 / 1025
 * and 2047 / 2048 / 2049 candidates all kept, every anchor kept, all but
 * one per class suppressed, max-detections reached inside the first tile,
 * and max-candidates below the count on both sides of each edge; plain NMS
 * at 1023 / 1024 / 1025 boxes. The oriented-box engine takes the same
 * edges: a YOLOv8-OBB tensor of the same boxes turned by ANGLE (apart,
 * their hulls do not meet) and cnms_nms_rotated at 1023 / 1024 / 1025
 * boxes. Every case runs on the CPU backend, on the
 * CUDA backend's default paths and with the large-count paths forced at
 * every count; the results must be identical, and equal to the hand-built
 * expectation (the kept anchors in score order, their boxes). The default
 * context runs each case twice: its cached resolve is sized for the
 * previous call's count, so the second call of a count up to 1024 is
 * resolved from shared memory whatever case came before. */
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"

#define N_ANCHORS 4100
#define N_CLASSES 2
#define GRID 53                 /* cells per row: 8-pixel boxes 12 apart */
#define ANGLE 0.7f              /* oriented boxes: turned 40 degrees, an
                                 * 8-pixel square's hull is 11.3 wide */

static int failures;

/* Candidate a of k scores 0.3 .. 0.9, distinct, in a scrambled order
 * (7919 is prime, so a -> 7919 a mod k is a permutation). */
static float
score_of (int a, int k)
{
  return 0.3f + 0.6f * (float) ((long) a * 7919 % k) / (float) k;
}

/* A [1, 4 + 2, 4100] tensor (obb: [1, 4 + 2 + 1, 4100], each box turned
 * by ANGLE) whose first k anchors are candidates of class (a % 2): apart
 * (8x8 boxes on a 12-pixel grid) or all the same box. */
static float *
make_tensor (int k, int same_box, int obb, cnms_tensor *t)
{
  const size_t n = N_ANCHORS, rows = 4 + N_CLASSES + (obb ? 1 : 0);
  float *d = calloc (rows * n, sizeof (float));
  int a;

  if (d == NULL)
    exit (1);
  for (a = 0; a < N_ANCHORS; a++) {
    d[0 * n + a] = same_box ? 320.0f : 6.0f + 12.0f * (float) (a % GRID);
    d[1 * n + a] = same_box ? 320.0f : 6.0f + 12.0f * (float) (a / GRID);
    d[2 * n + a] = 8.0f;
    d[3 * n + a] = 8.0f;
    if (a < k)
      d[(4 + (size_t) (a % N_CLASSES)) * n + a] = score_of (a, k);
    if (obb)
      d[(4 + N_CLASSES) * n + a] = ANGLE;
  }
  memset (t, 0, sizeof *t);
  t->data = d;
  t->size = rows * n * sizeof (float);
  t->n_dims = 3;
  t->dims[0] = 1;
  t->dims[1] = (int64_t) rows;
  t->dims[2] = N_ANCHORS;
  return d;
}

/* The first k anchors sorted by score, descending (scores are distinct). */
static void
expected_order (int k, int *order)
{
  int i, j;

  for (i = 0; i < k; i++)
    order[i] = i;
  for (i = 1; i < k; i++) {
    int v = order[i];
    for (j = i; j > 0 && score_of (order[j - 1], k) < score_of (v, k); j--)
      order[j] = order[j - 1];
    order[j] = v;
  }
}

/* One detect case on the three contexts (obb: the YOLOv8-OBB tensor);
 * want_n kept: with apart boxes the best want_n in score order, with one
 * box the best of each class; cap > 0: at most cap of each class (the
 * first in score order), then max_det. */
static void
detect_case_of (cnms_ctx *ctx[3], const char *name, int obb, int k,
    int same_box, int max_det, int max_cand, int cap, int want_n)
{
  static int order[N_ANCHORS];
  const cnms_layout layout = obb ? CNMS_LAYOUT_YOLOV8_OBB :
      CNMS_LAYOUT_YOLOV8;
  cnms_tensor t;
  cnms_params p;
  gpu_result r[4];
  float *d = make_tensor (k, same_box, obb, &t);
  char why[512];
  int i, bad = 0, n_order;

  cnms_params_init (&p);
  p.max_detections = max_det;
  p.max_candidates = max_cand;
  p.max_detections_per_class = cap;
  p.iou = 0.5f;
  /* 78 rows of 12 pixels: a 1280 model and frame hold them */
  p.model_width = p.model_height = 1280;
  p.frame_width = p.frame_height = 1280;
  for (i = 0; i < 3; i++)
    gpu_run_tensor (ctx[i], &t, layout, &p, &r[i]);
  /* the default context again, now sized for this count */
  gpu_run_tensor (ctx[1], &t, layout, &p, &r[3]);
  for (i = 1; i < 4; i++)
    if (!gpu_result_equal (&r[0], &r[i], why, sizeof why)) {
      printf ("FAIL %s: %s differs from the CPU backend: %s\n", name,
          i == 1 ? "cuda (default)" : i == 2 ? "cuda (large)" :
          "cuda (default, second call)", why);
      bad++;
    }
  if (r[0].st != CNMS_OK || r[0].n != want_n || r[0].n_candidates != k) {
    printf ("FAIL %s: status %s, %d kept (want %d), %d candidates (want %d)"
        "\n", name, cnms_status_str (r[0].st), r[0].n, want_n,
        r[0].n_candidates, k);
    bad++;
  }
  expected_order (k, order);
  n_order = k;
  if (same_box) {
    /* the first of each class in score order survives */
    int seen[N_CLASSES] = { 0 }, m = 0;
    for (i = 0; i < k; i++)
      if (!seen[order[i] % N_CLASSES]++)
        order[m++] = order[i];
    n_order = m;
  }
  if (cap > 0) {
    /* the caps: the first cap of each class in kept order */
    int seen[N_CLASSES] = { 0 }, m = 0;
    for (i = 0; i < n_order; i++)
      if (seen[order[i] % N_CLASSES]++ < cap)
        order[m++] = order[i];
  }
  for (i = 0; i < r[0].n && !bad; i++) {
    const cnms_det *x = &r[0].dets[i];
    const int a = order[i];
    const float cx = same_box ? 320.0f : 6.0f + 12.0f * (float) (a % GRID);
    const float cy = same_box ? 320.0f : 6.0f + 12.0f * (float) (a / GRID);
    const int box_ok = obb ? x->cx == cx && x->cy == cy && x->w == 8.0f
        && x->h == 8.0f && x->angle == ANGLE : x->x1 == cx - 4.0f
        && x->y1 == cy - 4.0f && x->x2 == cx + 4.0f && x->y2 == cy + 4.0f
        && x->angle == 0.0f;
    if (x->anchor != a || x->class_id != a % N_CLASSES
        || x->score != score_of (a, k) || !box_ok) {
      printf ("FAIL %s: kept #%d is anchor %d class %d score %a box "
          "%g,%g,%g,%g; want anchor %d\n", name, i, x->anchor, x->class_id,
          (double) x->score, (double) x->x1, (double) x->y1, (double) x->x2,
          (double) x->y2, a);
      bad++;
    }
  }
  printf ("%s%-*s %s: %d candidates, %d kept\n", obb ? "obb, " : "",
      obb ? 35 : 40, name, bad ? "FAIL" : "ok", r[0].n_candidates, r[0].n);
  failures += bad;
  for (i = 0; i < 4; i++)
    gpu_result_free (&r[i]);
  free (d);
}

/* The case for boxes, then for oriented boxes. */
static void
detect_case (cnms_ctx *ctx[3], const char *name, int k, int same_box,
    int max_det, int max_cand, int want_n)
{
  detect_case_of (ctx, name, 0, k, same_box, max_det, max_cand, 0, want_n);
  detect_case_of (ctx, name, 1, k, same_box, max_det, max_cand, 0, want_n);
}

/* The same with every class capped at cap (the caps after the NMS, in
 * the engine's kept order: cuda_caps.cu's rounds of 1024 records). */
static void
caps_case (cnms_ctx *ctx[3], const char *name, int k, int same_box,
    int max_det, int cap, int want_n)
{
  detect_case_of (ctx, name, 0, k, same_box, max_det, 30000, cap, want_n);
  detect_case_of (ctx, name, 1, k, same_box, max_det, 30000, cap, want_n);
}

/* Plain NMS of n apart boxes (rotated: cnms_nms_rotated of the same
 * squares turned by ANGLE): all kept, in score order. */
static void
nms_case (cnms_ctx *ctx[3], int n, int rotated)
{
  const size_t values = rotated ? 5 : 4;
  float *boxes = malloc (sizeof (float) * values * (size_t) n);
  float *scores = malloc (sizeof (float) * (size_t) n);
  int64_t *keep[3];
  int n_keep[3], *order = malloc (sizeof (int) * (size_t) n);
  int i, c, bad = 0;

  if (boxes == NULL || scores == NULL || order == NULL)
    exit (1);
  for (i = 0; i < n; i++) {
    float *b = boxes + values * (size_t) i;
    if (rotated) {
      b[0] = 12.0f * (float) (i % GRID) + 4.0f;
      b[1] = 12.0f * (float) (i / GRID) + 4.0f;
      b[2] = 8.0f;
      b[3] = 8.0f;
      b[4] = ANGLE;
    } else {
      b[0] = 12.0f * (float) (i % GRID);
      b[1] = 12.0f * (float) (i / GRID);
      b[2] = b[0] + 8.0f;
      b[3] = b[1] + 8.0f;
    }
    scores[i] = score_of (i, n);
  }
  expected_order (n, order);
  for (c = 0; c < 3; c++) {
    keep[c] = malloc (sizeof (int64_t) * (size_t) n);
    if (keep[c] == NULL
        || (rotated ? cnms_nms_rotated : cnms_nms) (ctx[c], boxes, scores,
            NULL, n, 0.5f, 1, 0, keep[c], &n_keep[c]) != CNMS_OK)
      bad++;
    else if (n_keep[c] != n)
      bad++;
    for (i = 0; !bad && i < n; i++)
      if (keep[c][i] != order[i])
        bad++;
  }
  printf ("%s, %-*d %s: %d %d %d kept (cpu, cuda, cuda large)\n",
      rotated ? "nms-rotated" : "nms", rotated ? 27 : 35, n,
      bad ? "FAIL" : "ok", n_keep[0], n_keep[1], n_keep[2]);
  failures += bad;
  for (c = 0; c < 3; c++)
    free (keep[c]);
  free (boxes);
  free (scores);
  free (order);
}

int
main (void)
{
  cnms_ctx *ctx[3];
  int i;

  gpu_require_device ("cuda-fastpath");
  ctx[0] = gpu_ctx_new (CNMS_BACKEND_CPU);
  ctx[1] = gpu_ctx_new (CNMS_BACKEND_CUDA);
  ctx[2] = gpu_ctx_new (CNMS_BACKEND_CUDA);
  cnms_ctx_test_option (ctx[2], CNMS_TEST_FORCE_LARGE_PATH, 1);

  detect_case (ctx, "0 candidates", 0, 0, 300, 30000, 0);
  detect_case (ctx, "1 candidate", 1, 0, 300, 30000, 1);
  detect_case (ctx, "130 candidates, all kept", 130, 0, 300, 30000, 130);
  detect_case (ctx, "300 candidates, all kept", 300, 0, 300, 30000, 300);
  detect_case (ctx, "1023 candidates, all kept", 1023, 0, 2048, 30000, 1023);
  detect_case (ctx, "1024 candidates, all kept", 1024, 0, 2048, 30000, 1024);
  detect_case (ctx, "1025 candidates, all kept", 1025, 0, 2048, 30000, 1025);
  detect_case (ctx, "1024 identical boxes, 2 kept", 1024, 1, 300, 30000, 2);
  detect_case (ctx, "1025 identical boxes, 2 kept", 1025, 1, 300, 30000, 2);
  detect_case (ctx, "max-detections 10 of 100", 100, 0, 10, 30000, 10);
  detect_case (ctx, "max-detections 1 of 1025", 1025, 0, 1, 30000, 1);
  detect_case (ctx, "max-candidates 5 of 1024", 1024, 0, 300, 5, 5);
  detect_case (ctx, "max-candidates 1024 of 1025", 1025, 0, 2048, 1024,
      1024);
  for (i = 2047; i <= 2049; i++) {
    char name[64];
    snprintf (name, sizeof name, "%d candidates, all kept", i);
    detect_case (ctx, name, i, 0, 4100, 30000, i);
  }
  detect_case (ctx, "4100 candidates (every anchor), all kept", N_ANCHORS,
      0, 4100, 30000, N_ANCHORS);
  detect_case (ctx, "2049 identical boxes, 2 kept", 2049, 1, 300, 30000, 2);
  detect_case (ctx, "max-candidates 2048 of 2049", 2049, 0, 4100, 2048,
      2048);
  detect_case (ctx, "max-detections 3 of 4100", N_ANCHORS, 0, 3, 30000, 3);
  caps_case (ctx, "caps 3 a class of 300", 300, 0, 300, 3, 6);
  caps_case (ctx, "caps 1 a class, 1025 identical boxes", 1025, 1, 300, 1,
      2);
  caps_case (ctx, "caps 600 a class of 2049", 2049, 0, 4100, 600, 1200);
  caps_case (ctx, "caps 600, max-detections 1000 of 2049", 2049, 0, 1000,
      600, 1000);
  caps_case (ctx, "caps 1000 a class of 4100", N_ANCHORS, 0, 4100, 1000,
      2000);
  caps_case (ctx, "caps 2100 a class of 4100 (none capped)", N_ANCHORS, 0,
      4100, 2100, N_ANCHORS);
  for (i = 1023; i <= 1025; i++) {
    nms_case (ctx, i, 0);
    nms_case (ctx, i, 1);
  }

  for (i = 0; i < 3; i++)
    cnms_ctx_free (ctx[i]);
  printf ("cuda-fastpath: %d failures\n", failures);
  return failures ? 1 : 0;
}
