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
 * at 1023 / 1024 / 1025 boxes. Every case runs on the CPU backend, on the
 * CUDA backend's default paths and with the large-count paths forced at
 * every count; the results must be identical, and equal to the hand-built
 * expectation (the kept anchors in score order, their boxes). The default
 * context runs each case twice: its cached resolve is sized for the
 * previous call's count, so the second call of a count up to 1024 is
 * resolved from shared memory whatever case came before. */
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "cnms_internal.h"

#define N_ANCHORS 4100
#define N_CLASSES 2
#define GRID 53                 /* cells per row: 8-pixel boxes 12 apart */

static int failures;

/* Candidate a of k scores 0.3 .. 0.9, distinct, in a scrambled order
 * (7919 is prime, so a -> 7919 a mod k is a permutation). */
static float
score_of (int a, int k)
{
  return 0.3f + 0.6f * (float) ((long) a * 7919 % k) / (float) k;
}

/* A [1, 4 + 2, 4100] tensor whose first k anchors are candidates of class
 * (a % 2): apart (8x8 boxes on a 12-pixel grid) or all the same box. */
static float *
make_tensor (int k, int same_box, cnms_tensor *t)
{
  const size_t n = N_ANCHORS;
  float *d = calloc ((4 + N_CLASSES) * n, sizeof (float));
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
  }
  memset (t, 0, sizeof *t);
  t->data = d;
  t->size = (4 + N_CLASSES) * n * sizeof (float);
  t->n_dims = 3;
  t->dims[0] = 1;
  t->dims[1] = 4 + N_CLASSES;
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

/* One detect case on the three contexts; want_n kept: with apart boxes
 * the best want_n in score order, with one box the best of each class. */
static void
detect_case (cnms_ctx *ctx[3], const char *name, int k, int same_box,
    int max_det, int max_cand, int want_n)
{
  static int order[N_ANCHORS];
  cnms_tensor t;
  cnms_params p;
  gpu_result r[4];
  float *d = make_tensor (k, same_box, &t);
  char why[512];
  int i, bad = 0;

  cnms_params_init (&p);
  p.max_detections = max_det;
  p.max_candidates = max_cand;
  p.iou = 0.5f;
  /* 78 rows of 12 pixels: a 1280 model and frame hold them */
  p.model_width = p.model_height = 1280;
  p.frame_width = p.frame_height = 1280;
  for (i = 0; i < 3; i++)
    gpu_run_tensor (ctx[i], &t, CNMS_LAYOUT_YOLOV8, &p, &r[i]);
  /* the default context again, now sized for this count */
  gpu_run_tensor (ctx[1], &t, CNMS_LAYOUT_YOLOV8, &p, &r[3]);
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
  if (same_box) {
    /* the first of each class in score order survives */
    int seen[N_CLASSES] = { 0 }, m = 0;
    for (i = 0; i < k; i++)
      if (!seen[order[i] % N_CLASSES]++)
        order[m++] = order[i];
  }
  for (i = 0; i < r[0].n && !bad; i++) {
    const cnms_det *x = &r[0].dets[i];
    const int a = order[i];
    const float cx = same_box ? 320.0f : 6.0f + 12.0f * (float) (a % GRID);
    const float cy = same_box ? 320.0f : 6.0f + 12.0f * (float) (a / GRID);
    if (x->anchor != a || x->class_id != a % N_CLASSES
        || x->score != score_of (a, k) || x->x1 != cx - 4.0f
        || x->y1 != cy - 4.0f || x->x2 != cx + 4.0f || x->y2 != cy + 4.0f) {
      printf ("FAIL %s: kept #%d is anchor %d class %d score %a box "
          "%g,%g,%g,%g; want anchor %d\n", name, i, x->anchor, x->class_id,
          (double) x->score, (double) x->x1, (double) x->y1, (double) x->x2,
          (double) x->y2, a);
      bad++;
    }
  }
  printf ("%-40s %s: %d candidates, %d kept\n", name, bad ? "FAIL" : "ok",
      r[0].n_candidates, r[0].n);
  failures += bad;
  for (i = 0; i < 4; i++)
    gpu_result_free (&r[i]);
  free (d);
}

/* Plain NMS of n apart boxes: all kept, in score order. */
static void
nms_case (cnms_ctx *ctx[3], int n)
{
  float *boxes = malloc (sizeof (float) * 4 * (size_t) n);
  float *scores = malloc (sizeof (float) * (size_t) n);
  int64_t *keep[3];
  int n_keep[3], *order = malloc (sizeof (int) * (size_t) n);
  int i, c, bad = 0;

  if (boxes == NULL || scores == NULL || order == NULL)
    exit (1);
  for (i = 0; i < n; i++) {
    boxes[4 * i + 0] = 12.0f * (float) (i % GRID);
    boxes[4 * i + 1] = 12.0f * (float) (i / GRID);
    boxes[4 * i + 2] = boxes[4 * i + 0] + 8.0f;
    boxes[4 * i + 3] = boxes[4 * i + 1] + 8.0f;
    scores[i] = score_of (i, n);
  }
  expected_order (n, order);
  for (c = 0; c < 3; c++) {
    keep[c] = malloc (sizeof (int64_t) * (size_t) n);
    if (keep[c] == NULL
        || cnms_nms (ctx[c], boxes, scores, NULL, n, 0.5f, 1, 0, keep[c],
            &n_keep[c]) != CNMS_OK)
      bad++;
    else if (n_keep[c] != n)
      bad++;
    for (i = 0; !bad && i < n; i++)
      if (keep[c][i] != order[i])
        bad++;
  }
  printf ("nms, %-35d %s: %d %d %d kept (cpu, cuda, cuda large)\n", n,
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
  for (i = 1023; i <= 1025; i++)
    nms_case (ctx, i);

  for (i = 0; i < 3; i++)
    cnms_ctx_free (ctx[i]);
  printf ("cuda-fastpath: %d failures\n", failures);
  return failures ? 1 : 0;
}
