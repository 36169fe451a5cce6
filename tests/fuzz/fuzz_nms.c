/* libFuzzer target: plain NMS (cnms_nms) against a pairwise greedy
 * reference written from the README's semantics: boxes whose coordinates
 * or score are not finite take no part; order is (score desc, index asc)
 * with -0 equal to +0; box j is suppressed by an earlier kept box i of
 * its class (any class when agnostic) when inter / (area_i + area_j -
 * inter) > iou in float32, 0 when that denominator is 0; at most
 * max_detections kept (0: all). The keep lists must be identical.
 *
 * Input: byte 0 flags (classes given, agnostic, value mode), byte 1 iou,
 * byte 2 max_detections, then per box 4 coordinates, a score and a class,
 * as raw float bits or small values (mode), to the end of the input. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"

#define MAX_BOXES 600

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static cnms_ctx *ctx;

typedef struct {
  const uint8_t *p, *end;
} reader;

static uint8_t
byte (reader *r)
{
  return r->p < r->end ? *r->p++ : 0;
}

static float
value (reader *r, int mode, int is_score)
{
  uint32_t u = 0;
  float f;
  int i;

  switch (mode) {
    case 0:                    /* raw bits: NaN, Inf, huge, subnormal */
      for (i = 0; i < 4; i++)
        u |= (uint32_t) byte (r) << (8 * i);
      memcpy (&f, &u, 4);
      return f;
    case 1:                    /* a small grid: many overlaps and ties */
      return is_score ? (float) (byte (r) % 8) / 8.0f
          : (float) (byte (r) % 32);
    default:                   /* signed values, inverted boxes */
      return is_score ? (float) (int8_t) byte (r) / 16.0f
          : (float) (int8_t) byte (r) * 0.5f;
  }
}

static float
iou_ref (const float *a, const float *b)
{
  float w = fmaxf (0.0f, fminf (a[2], b[2]) - fmaxf (a[0], b[0]));
  float h = fmaxf (0.0f, fminf (a[3], b[3]) - fmaxf (a[1], b[1]));
  float inter = w * h;
  float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  float den = area_a + area_b - inter;

  return den == 0.0f ? 0.0f : inter / den;
}

static const float *sort_scores;

static int
by_score (const void *pa, const void *pb)
{
  int a = *(const int *) pa, b = *(const int *) pb;

  if (sort_scores[a] > sort_scores[b])
    return -1;
  if (sort_scores[a] < sort_scores[b])
    return 1;
  return a < b ? -1 : a > b;
}

static int
reference (const float *boxes, const float *scores, const int32_t *classes,
    int n, float iou, int agnostic, int max_det, int64_t *keep)
{
  int order[MAX_BOXES], kept[MAX_BOXES];
  int m = 0, n_kept = 0, i, j, k;

  for (i = 0; i < n; i++) {
    const float *b = boxes + 4 * i;

    if (isfinite (scores[i]) && isfinite (b[0]) && isfinite (b[1])
        && isfinite (b[2]) && isfinite (b[3]))
      order[m++] = i;
  }
  sort_scores = scores;
  qsort (order, (size_t) m, sizeof order[0], by_score);
  for (k = 0; k < m && (max_det <= 0 || n_kept < max_det); k++) {
    int cand = order[k], suppressed = 0;

    for (j = 0; j < n_kept && !suppressed; j++) {
      int other = kept[j];

      if ((agnostic || classes == NULL || classes[other] == classes[cand])
          && iou_ref (boxes + 4 * other, boxes + 4 * cand) > iou)
        suppressed = 1;
    }
    if (!suppressed)
      kept[n_kept++] = cand;
  }
  for (j = 0; j < n_kept; j++)
    keep[j] = kept[j];
  return n_kept;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static float boxes[MAX_BOXES * 4], scores[MAX_BOXES];
  static int32_t classes[MAX_BOXES];
  static int64_t keep[MAX_BOXES], want[MAX_BOXES];
  reader r = { data, data + size };
  uint8_t flags = byte (&r);
  int with_classes = flags & 1, agnostic = (flags >> 1) & 1;
  int mode = (flags >> 2) % 3;
  float iou = (float) byte (&r) / 255.0f;
  int max_det = byte (&r) % 16;
  int n = 0, n_keep = -1, n_want, i;

  if (ctx == NULL && cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK)
    abort ();
  while (r.p < r.end && n < MAX_BOXES) {
    for (i = 0; i < 4; i++)
      boxes[4 * n + i] = value (&r, mode, 0);
    scores[n] = value (&r, mode, 1);
    classes[n] = (int32_t) (byte (&r) % 4) - (mode == 2);
    n++;
  }
  if (cnms_nms (ctx, boxes, scores, with_classes ? classes : NULL, n, iou,
          agnostic, max_det, keep, &n_keep) != CNMS_OK)
    abort ();
  n_want = reference (boxes, scores, with_classes ? classes : NULL, n, iou,
      agnostic, max_det, want);
  if (n_keep != n_want || memcmp (keep, want, (size_t) n_want * 8) != 0)
    abort ();
  return 0;
}
