/* libFuzzer target: tensor validation + decode + NMS (cnms_tensor_shape,
 * cnms_detect on the CPU backend) with arbitrary dims, dtype, byte size,
 * layout, parameters and data, against the output contract:
 *
 * - cnms_detect accepts exactly what cnms_tensor_shape accepts; a refusal
 *   is CNMS_ERR_BAD_TENSOR with a message;
 * - an accepted tensor gives bit for bit what a plain reference gives:
 *   every anchor decoded on its own (score, first best class, box mapped
 *   and clipped by cnms_math.h's mapping; an oriented box mapped by
 *   cnms_map_obb), candidates sorted by (score desc, anchor asc), the best
 *   max_candidates kept, then pairwise greedy suppression (not end2end;
 *   oriented boxes by the library's own rule, cnms_obb_suppresses, asked
 *   pair by pair) and max_detections; and the candidate count;
 * - every detection lies inside the frame with x2 > x1 and y2 > y1 (an
 *   oriented one: w, h > 0 and its clipped hull, cnms_obb_hull, not
 *   empty);
 * - a second call gives the same bits.
 *
 * Input: a 24-byte header (see parse ()), then the tensor bytes, repeated
 * or cut to the size the header asks for. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define MAX_ELEMS (1 << 17)

static cnms_ctx *ctx;

typedef struct {
  cnms_tensor t;
  cnms_layout layout;
  cnms_params p;
} fuzz_case;

static unsigned
u16 (const uint8_t *h, int i)
{
  return (unsigned) h[2 * i] | ((unsigned) h[2 * i + 1] << 8);
}

/* A dim: small mostly, sometimes a value at a limit. */
static int64_t
dim_of (unsigned v, unsigned mod)
{
  static const int64_t edge[8] = { 0, -1, 1, 6, INT32_MAX,
    (int64_t) INT32_MAX + 1, (int64_t) 1 << 40, INT64_MAX
  };

  if (v >= 0xfff8)
    return edge[v - 0xfff8];
  return (int64_t) (v % mod);
}

/* Tensor element k from the data bytes, by value mode. */
static float
element (const uint8_t *d, size_t n, size_t k, int mode)
{
  uint32_t u = 0;
  float f;
  int i;

  if (n == 0)
    return 0.0f;
  switch (mode) {
    case 0:
      for (i = 0; i < 4; i++)
        u |= (uint32_t) d[(4 * k + (size_t) i) % n] << (8 * i);
      memcpy (&f, &u, 4);
      return f;
    case 1:                    /* box-like values: ties and overlaps */
      return (float) (d[k % n] % 128) * 5.0f;
    case 2:                    /* score-like values */
      return (float) d[k % n] / 255.0f;
    default:                   /* small signed values */
      return (float) ((int) d[k % n] - 128) * 0.25f;
  }
}

/* Header: 0 flags (f16, layout x2, agnostic, letterbox, size mode x3);
 * 1 dims (count x3, value mode x2, yolov8-obb layout x1, unused x1, data
 * NULL when empty x1); 2..7 three dims; 8 score threshold;
 * 10 iou; 12 max_detections; 14 max_candidates; 16, 18 model size;
 * 20, 22 frame size (16-bit little-endian values). */
static size_t
parse (const uint8_t *h, fuzz_case *c, int *size_mode, int *value_mode)
{
  static const int n_dims_of[8] = { 3, 3, 3, 2, 3, 1, 4, 0 };
  size_t elems = 1;
  int i;

  memset (c, 0, sizeof *c);
  c->t.dtype = (h[0] & 1) ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  c->layout = (cnms_layout) ((h[0] >> 1) & 3);
  if (h[1] & 0x20)
    c->layout = CNMS_LAYOUT_YOLOV8_OBB;
  *size_mode = h[0] >> 5;
  *value_mode = (h[1] >> 3) & 3;
  c->t.n_dims = n_dims_of[h[1] & 7];
  for (i = 0; i < c->t.n_dims && i < 3; i++)
    c->t.dims[i] = dim_of (u16 (h + 2, i), 320);
  if (c->t.n_dims == 3 && u16 (h + 2, 0) < 0x8000)
    c->t.dims[0] = 1;           /* mostly a batch of one */
  for (i = 3; i < c->t.n_dims; i++)
    c->t.dims[i] = 1;
  for (i = 0; i < c->t.n_dims; i++) {
    if (c->t.dims[i] <= 0 || c->t.dims[i] > MAX_ELEMS
        || elems * (size_t) c->t.dims[i] > MAX_ELEMS)
      elems = MAX_ELEMS + 1;    /* too large to build: size checks only */
    else
      elems *= (size_t) c->t.dims[i];
    if (c->t.dims[i] == 0)
      elems = 0;
  }
  cnms_params_init (&c->p);
  c->p.score_threshold = (float) u16 (h + 8, 0) / 32768.0f - 0.5f;
  c->p.iou = (float) u16 (h + 10, 0) / 65535.0f;
  c->p.max_detections = 1 + (int) (u16 (h + 12, 0) % 512);
  c->p.max_candidates = 1 + (int) (u16 (h + 14, 0) % 1024);
  c->p.class_agnostic = (h[0] >> 3) & 1;
  c->p.letterbox = (h[0] >> 4) & 1;
  c->p.model_width = 1 + (int) (u16 (h + 16, 0) % 2048);
  c->p.model_height = 1 + (int) (u16 (h + 18, 0) % 2048);
  c->p.frame_width = 1 + (int) (u16 (h + 20, 0) % 4096);
  c->p.frame_height = 1 + (int) (u16 (h + 22, 0) % 4096);
  return elems;
}

/* The reference: one anchor at a time. */
typedef struct {
  cnms_det d;
} cand;

static float
at (const float *v, size_t i)
{
  return v[i];
}

static int
decode_ref (const float *v, const cnms_shape *s, const cnms_params *p,
    cand *out)
{
  cnms_map m;
  int n, c, count = 0, stride;

  cnms_map_init (&m, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  for (n = 0; n < s->n_anchors; n++) {
    float best = -INFINITY, score, box[5] = { 0 }, cx, cy, w, hh, hull[4];
    int32_t cls = 0;
    int ok;

    switch (s->layout) {
      case CNMS_LAYOUT_YOLOV5:
        stride = 5 + s->n_classes;
        for (c = 0; c < s->n_classes; c++) {
          float x = at (v, (size_t) n * stride + 5 + c);
          if (x > best) {
            best = x;
            cls = c;
          }
        }
        score = at (v, (size_t) n * stride + 4) * best;
        cx = at (v, (size_t) n * stride);
        cy = at (v, (size_t) n * stride + 1);
        w = at (v, (size_t) n * stride + 2);
        hh = at (v, (size_t) n * stride + 3);
        ok = isfinite (score) && score > p->score_threshold
            && cnms_map_cxcywh (&m, cx, cy, w, hh, box);
        break;
      case CNMS_LAYOUT_YOLOV8:
        for (c = 0; c < s->n_classes; c++) {
          float x = at (v, (size_t) (4 + c) * s->n_anchors + n);
          if (x > best) {
            best = x;
            cls = c;
          }
        }
        score = best;
        ok = isfinite (score) && score > p->score_threshold
            && cnms_map_cxcywh (&m, at (v, (size_t) n),
            at (v, (size_t) s->n_anchors + n),
            at (v, 2 * (size_t) s->n_anchors + n),
            at (v, 3 * (size_t) s->n_anchors + n), box);
        break;
      case CNMS_LAYOUT_YOLOV8_OBB:
        for (c = 0; c < s->n_classes; c++) {
          float x = at (v, (size_t) (4 + c) * s->n_anchors + n);
          if (x > best) {
            best = x;
            cls = c;
          }
        }
        score = best;
        ok = isfinite (score) && score > p->score_threshold
            && cnms_map_obb (&m, at (v, (size_t) n),
            at (v, (size_t) s->n_anchors + n),
            at (v, 2 * (size_t) s->n_anchors + n),
            at (v, 3 * (size_t) s->n_anchors + n),
            at (v, (size_t) (4 + s->n_classes) * s->n_anchors + n), box,
            hull);
        break;
      default:
        score = at (v, (size_t) n * 6 + 4);
        ok = isfinite (score) && score > p->score_threshold
            && cnms_class_from_float (at (v, (size_t) n * 6 + 5), &cls)
            && cnms_map_box (&m, at (v, (size_t) n * 6),
            at (v, (size_t) n * 6 + 1), at (v, (size_t) n * 6 + 2),
            at (v, (size_t) n * 6 + 3), box);
        break;
    }
    if (!ok)
      continue;
    memset (&out[count].d, 0, sizeof out[count].d);
    out[count].d.score = score;
    out[count].d.x1 = box[0];
    out[count].d.y1 = box[1];
    out[count].d.x2 = box[2];
    out[count].d.y2 = box[3];
    out[count].d.angle = box[4];
    out[count].d.class_id = cls;
    out[count].d.anchor = n;
    count++;
  }
  return count;
}

static int
by_score (const void *pa, const void *pb)
{
  const cnms_det *a = &((const cand *) pa)->d, *b = &((const cand *) pb)->d;

  if (a->score > b->score)
    return -1;
  if (a->score < b->score)
    return 1;
  return a->anchor < b->anchor ? -1 : a->anchor > b->anchor;
}

static float
iou_ref (const cnms_det *a, const cnms_det *b)
{
  float w = fmaxf (0.0f, fminf (a->x2, b->x2) - fmaxf (a->x1, b->x1));
  float h = fmaxf (0.0f, fminf (a->y2, b->y2) - fmaxf (a->y1, b->y1));
  float inter = w * h;
  float den = (a->x2 - a->x1) * (a->y2 - a->y1)
      + (b->x2 - b->x1) * (b->y2 - b->y1) - inter;

  return den == 0.0f ? 0.0f : inter / den;
}

/* Does kept oriented record a suppress record b? */
static int
obb_ref (const cnms_det *a, const cnms_det *b, float iou)
{
  cnms_obb oa, ob;
  float ha[4], hb[4];

  cnms_obb_prepare (a->cx, a->cy, a->w, a->h, a->angle, &oa, ha);
  cnms_obb_prepare (b->cx, b->cy, b->w, b->h, b->angle, &ob, hb);
  return cnms_obb_suppresses (&oa, ha, 0, &ob, hb, 0, iou, 1);
}

/* Sorted, capped, suppressed, cut: the expected detections in c. */
static int
select_ref (cand *c, int count, const cnms_shape *s, const cnms_params *p)
{
  int k = count < p->max_candidates ? count : p->max_candidates;
  int obb = s->layout == CNMS_LAYOUT_YOLOV8_OBB;
  int n_kept = 0, i, j;

  qsort (c, (size_t) count, sizeof *c, by_score);
  for (i = 0; i < k && n_kept < p->max_detections; i++) {
    int suppressed = 0;

    for (j = 0; j < n_kept && s->layout != CNMS_LAYOUT_END2END; j++) {
      if ((p->class_agnostic || c[j].d.class_id == c[i].d.class_id)
          && (obb ? obb_ref (&c[j].d, &c[i].d, p->iou)
              : iou_ref (&c[j].d, &c[i].d) > p->iou)) {
        suppressed = 1;
        break;
      }
    }
    if (!suppressed)
      c[n_kept++] = c[i];
  }
  return n_kept;
}

static int
same_det (const cnms_det *a, const cnms_det *b)
{
  return memcmp (&a->score, &b->score, 4) == 0 && memcmp (&a->x1, &b->x1,
      16) == 0 && memcmp (&a->angle, &b->angle, 4) == 0
      && a->class_id == b->class_id && a->anchor == b->anchor;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static float values[MAX_ELEMS];
  static uint16_t halves[MAX_ELEMS];
  static cand ref[MAX_ELEMS];
  static cnms_det first[MAX_ELEMS];
  uint8_t h[24] = { 0 };
  const uint8_t *d = data + (size < 24 ? size : 24);
  size_t nd = size < 24 ? 0 : size - 24, elems, need, i;
  int size_mode, value_mode, n_dets = -1, n_again = -1, n_ref, k;
  fuzz_case c;
  cnms_shape shape;
  const cnms_det *dets = NULL;
  cnms_status st_shape, st;
  char msg[256];

  if (ctx == NULL && cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK)
    abort ();
  memcpy (h, data, size < 24 ? size : 24);
  elems = parse (h, &c, &size_mode, &value_mode);
  if (elems > MAX_ELEMS)
    elems = 0;
  for (i = 0; i < elems; i++)
    values[i] = element (d, nd, i, value_mode);
  if (c.t.dtype == CNMS_DTYPE_FLOAT16) {
    cnms_floats_to_halves (values, elems, halves);
    /* the reference reads the values the tensor holds */
    cnms_halves_to_floats (halves, elems, values);
    c.t.data = halves;
    need = elems * 2;
  } else {
    c.t.data = values;
    need = elems * 4;
  }
  /* sizes 0-5 exact, 6 short, 7 long (within the buffers) */
  c.t.size = need;
  if (size_mode == 6 && need > 0)
    c.t.size = need - 1 - (nd > 0 ? d[0] % need : 0);
  else if (size_mode == 7 && need + 8 <= sizeof values)
    c.t.size = need + 1 + (nd > 0 ? d[0] % 7 : 0);
  if (elems == 0 && h[1] & 0x80)
    c.t.data = NULL;

  st_shape = cnms_tensor_shape (&c.t, NULL, c.layout, NULL, &shape, msg,
      sizeof msg);
  st = cnms_detect (ctx, &c.t, NULL, c.layout, &c.p, &dets, &n_dets);
  if (st_shape != CNMS_OK) {
    if (st != CNMS_ERR_BAD_TENSOR || cnms_ctx_error (ctx)[0] == '\0'
        || msg[0] == '\0')
      abort ();
    return 0;
  }
  if (st != CNMS_OK || n_dets < 0 || n_dets > c.p.max_detections)
    abort ();
  /* a shape is only accepted with its exact bytes */
  if (c.t.size != need || (size_t) shape.n_anchors * (shape.layout ==
          CNMS_LAYOUT_YOLOV5 ? 5 + shape.n_classes : shape.layout ==
          CNMS_LAYOUT_YOLOV8 ? 4 + shape.n_classes : shape.layout ==
          CNMS_LAYOUT_YOLOV8_OBB ? 5 + shape.n_classes : 6) != elems)
    abort ();
  for (k = 0; k < n_dets; k++) {
    const cnms_det *e = &dets[k];
    float hull[4];

    if (shape.layout == CNMS_LAYOUT_YOLOV8_OBB) {
      cnms_obb_hull (e, c.p.frame_width, c.p.frame_height, hull);
      if (!(e->w > 0 && e->h > 0 && isfinite (e->w) && isfinite (e->h)
              && isfinite (e->cx) && isfinite (e->cy) && isfinite (e->angle)
              && hull[2] > hull[0] && hull[3] > hull[1]))
        abort ();
    } else if (!(e->x1 >= 0 && e->y1 >= 0 && e->x2 <= c.p.frame_width
            && e->y2 <= c.p.frame_height && e->x2 > e->x1 && e->y2 > e->y1))
      abort ();
  }
  memcpy (first, dets, (size_t) n_dets * sizeof *dets);

  n_ref = decode_ref (values, &shape, &c.p, ref);
  if (n_ref != cnms_ctx_report (ctx)->candidates)
    abort ();
  n_ref = select_ref (ref, n_ref, &shape, &c.p);
  if (n_ref != n_dets)
    abort ();
  for (k = 0; k < n_dets; k++) {
    if (!same_det (&first[k], &ref[k].d))
      abort ();
  }
  /* deterministic: the same call gives the same bits */
  if (cnms_detect (ctx, &c.t, NULL, c.layout, &c.p, &dets, &n_again) != CNMS_OK
      || n_again != n_dets
      || memcmp (dets, first, (size_t) n_dets * sizeof *dets) != 0)
    abort ();
  return 0;
}
