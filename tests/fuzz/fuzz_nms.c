/* libFuzzer target: plain NMS (cnms_nms, and cnms_nms_rotated for
 * oriented boxes) against a pairwise greedy reference written from the
 * README's semantics: boxes whose coordinates or score are not finite take
 * no part; order is (score desc, index asc) with -0 equal to +0; box j is
 * suppressed by an earlier kept box i of its class (any class when
 * agnostic) when they overlap; at most max_detections kept (0: all). The
 * keep lists must be identical. Overlap of boxes: inter / (area_i +
 * area_j - inter) > iou in float32, 0 when that denominator is 0. Overlap
 * of oriented boxes (cx cy w h angle): the library's own rule, asked pair
 * by pair (cnms_obb_prepare, cnms_obb_suppresses of cnms_math.h): this
 * target checks the walk around it (order, classes, caps, boxes taking no
 * part), the golden tests the rule itself.
 *
 * Lanes (cnms_nms_lanes, when bit 7 is set and bits 2-6 are 24 or more):
 * LaneATT proposals of 5 + S values, against the same greedy walk asking
 * the library's lane rule pair by pair (cnms_lane_rows, cnms_lane_close).
 *
 * Input: byte 0 flags (bit 0 classes given, bit 1 agnostic, bits 2-6
 * value mode (% 3), bit 7 oriented boxes), byte 1 iou (lanes: distance
 * / 4), byte 2 max_detections, then per box 4 coordinates (5 values when
 * oriented: the angle last), a score and a class, as raw float bits or
 * small values (mode), to the end of the input. Lanes: byte 3 S - 2
 * (% 10), then per proposal its 5 + S values and a score. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cnms_math.h"

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

/* An angle by mode: raw bits, multiples of 22.5 degrees (exact turns,
 * ties), or small signed values in radians. */
static float
angle (reader *r, int mode)
{
  switch (mode) {
    case 0:
      return value (r, 0, 0);
    case 1:
      return (float) (byte (r) % 16) * 0.39269908169872414f;
    default:
      return (float) (int8_t) byte (r) / 8.0f;
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

/* Does kept box a suppress box b (both oriented: cx cy w h angle)? */
static int
obb_ref (const float *a, const float *b, float iou)
{
  cnms_obb oa, ob;
  float ha[4], hb[4];

  cnms_obb_prepare (a[0], a[1], a[2], a[3], a[4], &oa, ha);
  cnms_obb_prepare (b[0], b[1], b[2], b[3], b[4], &ob, hb);
  return cnms_obb_suppresses (&oa, ha, 0, &ob, hb, 0, iou, 1);
}

static int
reference (const float *boxes, int stride, const float *scores,
    const int32_t *classes, int n, float iou, int agnostic, int max_det,
    int64_t *keep)
{
  int order[MAX_BOXES], kept[MAX_BOXES];
  int m = 0, n_kept = 0, i, j, k, c, finite;

  for (i = 0; i < n; i++) {
    const float *b = boxes + stride * i;

    for (finite = isfinite (scores[i]), c = 0; c < stride; c++)
      finite &= isfinite (b[c]) != 0;
    if (finite)
      order[m++] = i;
  }
  sort_scores = scores;
  qsort (order, (size_t) m, sizeof order[0], by_score);
  for (k = 0; k < m && (max_det <= 0 || n_kept < max_det); k++) {
    int cand = order[k], suppressed = 0;

    for (j = 0; j < n_kept && !suppressed; j++) {
      int other = kept[j];

      if ((agnostic || classes == NULL || classes[other] == classes[cand])
          && (stride == 5 ? obb_ref (boxes + 5 * other, boxes + 5 * cand,
                  iou) : iou_ref (boxes + 4 * other, boxes + 4 * cand) > iou))
        suppressed = 1;
    }
    if (!suppressed)
      kept[n_kept++] = cand;
  }
  for (j = 0; j < n_kept; j++)
    keep[j] = kept[j];
  return n_kept;
}

/* A lane value: start_y on the rows' grid, a length around the rows,
 * x on a small grid (ties and exact distances), or raw bits. */
static float
lane_value (reader *r, int mode, int field, int s_rows)
{
  if (mode == 0)
    return value (r, 0, 0);
  if (field == 2)
    return (float) (byte (r) % (s_rows + 2)) / (float) (s_rows - 1)
        - (mode == 2 ? 0.05f : 0.0f);
  if (field == 4)
    return (float) ((int) (byte (r) % (2 * s_rows + 8)) - 4) / 2.0f;
  return (float) (byte (r) % 16) * (mode == 2 ? 0.5f : 4.0f);
}

static int
lanes_ref (const float *p, int s_rows, const float *scores, int n,
    float distance, int max_det, int64_t *keep)
{
  static int32_t st[MAX_BOXES], en[MAX_BOXES];
  int order[MAX_BOXES], kept[MAX_BOXES];
  const int stride = 5 + s_rows;
  int m = 0, n_kept = 0, i, j, k;

  for (i = 0; i < n; i++) {
    const float *q = p + stride * i;
    if (isfinite (scores[i])
        && cnms_lane_rows (q[2], q[4], s_rows - 1, &st[i], &en[i]))
      order[m++] = i;
  }
  sort_scores = scores;
  qsort (order, (size_t) m, sizeof order[0], by_score);
  for (k = 0; k < m && (max_det <= 0 || n_kept < max_det); k++) {
    int c = order[k], suppressed = 0;

    for (j = 0; j < n_kept && !suppressed; j++) {
      int a = kept[j];
      suppressed = cnms_lane_close (p + stride * a + 5, st[a], en[a],
          p + stride * c + 5, st[c], en[c], s_rows - 1, distance);
    }
    if (!suppressed)
      kept[n_kept++] = c;
  }
  for (j = 0; j < n_kept; j++)
    keep[j] = kept[j];
  return n_kept;
}

static void
run_lanes (reader *r, int mode, float distance, int max_det)
{
  static float props[MAX_BOXES * 16], scores[MAX_BOXES];
  static int64_t keep[MAX_BOXES], want[MAX_BOXES];
  const int s_rows = 2 + byte (r) % 10;
  const int stride = 5 + s_rows;
  int n = 0, n_keep = -1, n_want, f;

  while (r->p < r->end && n < MAX_BOXES) {
    for (f = 0; f < stride; f++)
      props[stride * n + f] = lane_value (r, mode, f, s_rows);
    scores[n] = value (r, mode, 1);
    n++;
  }
  if (cnms_nms_lanes (ctx, props, s_rows, scores, n, distance, max_det,
          keep, &n_keep) != CNMS_OK)
    abort ();
  n_want = lanes_ref (props, s_rows, scores, n, distance, max_det, want);
  if (n_keep != n_want || memcmp (keep, want, (size_t) n_want * 8) != 0)
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static float boxes[MAX_BOXES * 5], scores[MAX_BOXES];
  static int32_t classes[MAX_BOXES];
  static int64_t keep[MAX_BOXES], want[MAX_BOXES];
  reader r = { data, data + size };
  uint8_t flags = byte (&r);
  int with_classes = flags & 1, agnostic = (flags >> 1) & 1;
  int mode = ((flags & 0x7f) >> 2) % 3, obb = flags >> 7;
  int stride = obb ? 5 : 4;
  float iou = (float) byte (&r) / 255.0f;
  int max_det = byte (&r) % 16;
  int n = 0, n_keep = -1, n_want, i;

  if (ctx == NULL && cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK)
    abort ();
  if (obb && ((flags >> 2) & 0x1f) >= 24) {
    run_lanes (&r, mode, iou * 255.0f / 4.0f, max_det);
    return 0;
  }
  while (r.p < r.end && n < MAX_BOXES) {
    for (i = 0; i < 4; i++)
      boxes[stride * n + i] = value (&r, mode, 0);
    if (obb)
      boxes[stride * n + 4] = angle (&r, mode);
    scores[n] = value (&r, mode, 1);
    classes[n] = (int32_t) (byte (&r) % 4) - (mode == 2);
    n++;
  }
  if ((obb ? cnms_nms_rotated : cnms_nms) (ctx, boxes, scores,
          with_classes ? classes : NULL, n, iou, agnostic, max_det, keep,
          &n_keep) != CNMS_OK)
    abort ();
  n_want = reference (boxes, stride, scores, with_classes ? classes : NULL,
      n, iou, agnostic, max_det, want);
  if (n_keep != n_want || memcmp (keep, want, (size_t) n_want * 8) != 0)
    abort ();
  return 0;
}
