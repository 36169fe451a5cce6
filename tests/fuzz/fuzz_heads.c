/* libFuzzer target: the heads' layouts (yolov8-pose, and yolov8-seg with
 * its prototypes, through cnms_detect) on the CPU backend with arbitrary
 * dims, dtypes, byte sizes, keypoint dims, prototypes (missing, of
 * another dtype, of a wrong M, size or batch) and data, against the
 * contract:
 *
 * - a call accepts exactly what cnms_tensor_shape accepts, and refuses
 *   with the same status and a message; no payload after a refusal;
 * - an accepted call keeps the records a yolov8 detect of the tensor's
 *   first 5 (pose) or 4 + C (seg) rows keeps, bit for bit;
 * - the payload holds a record for each kept record; every keypoint is
 *   (v - pad) / gain of its anchor's values, the visibility score as it
 *   is (NaN for D = 2);
 * - every mask's rectangle is the pixels of its box (ceil (x1) ..
 *   ceil (x2)), inside the frame; its offset is the sum of those before;
 *   every byte is 0 or 1 and equal to a per-pixel reference (the full dot
 *   product of each of the four neighbours' logits, no window);
 * - a second call gives the same bits.
 *
 * Input: a 24-byte header (see parse ()), then the data bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_heads.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define MAX_ELEMS (1 << 16)

static cnms_ctx *ctx, *ref_ctx;

static unsigned
u16 (const uint8_t *h, int i)
{
  return (unsigned) h[2 * i] | ((unsigned) h[2 * i + 1] << 8);
}

/* A dim: small mostly, sometimes a value at a limit. */
static int64_t
dim_of (unsigned v, unsigned mod)
{
  static const int64_t edge[8] = { 0, -1, 1, 5, INT32_MAX,
    (int64_t) INT32_MAX + 1, 65537, INT64_MAX
  };

  if (v >= 0xfff8)
    return edge[v - 0xfff8];
  return (int64_t) (v % mod);
}

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
    case 1:                    /* box-like values */
      return (float) (d[k % n] % 64);
    case 2:                    /* score-like values */
      return (float) d[k % n] / 255.0f;
    default:                   /* small signed values: logits of 0 */
      return (float) ((int) d[k % n] - 128) * 0.25f;
  }
}

typedef struct {
  cnms_tensor t, pr;
  int seg, no_protos;
  cnms_params p;
} fuzz_case;

/* The bytes of a tensor of these dims, or 0 when too large to build. */
static size_t
elems_of (const cnms_tensor *t)
{
  size_t e = 1;
  int i;

  for (i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || t->dims[i] > MAX_ELEMS
        || e * (size_t) t->dims[i] > MAX_ELEMS)
      return 0;
    e *= (size_t) t->dims[i];
  }
  return e;
}

/* Header: 0 flags (f16, seg, letterbox, dets size x2, protos size x2,
 * protos of the other dtype); 1 (keypoint dims x2, dets [a, b], protos
 * [M, Hp, Wp], value mode x2, protos missing, protos batch 2); 2 rows;
 * 4 anchors; 6 M; 8 Hp; 10 Wp; 12 score threshold; 14 iou; 16, 18 model
 * size; 20, 22 frame size (16-bit little-endian). */
static void
parse (const uint8_t *h, fuzz_case *c, int *dsize, int *psize, int *mode)
{
  static const int kd[4] = { 0, 2, 3, 5 };
  int lead;

  memset (c, 0, sizeof *c);
  c->seg = (h[0] >> 1) & 1;
  c->t.dtype = (h[0] & 1) ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
  c->pr.dtype = (h[0] & 0x80) ? (cnms_dtype) (1 - c->t.dtype) : c->t.dtype;
  *dsize = (h[0] >> 3) & 3;
  *psize = (h[0] >> 5) & 3;
  *mode = (h[1] >> 4) & 3;
  c->no_protos = (h[1] >> 6) & 1;
  if (h[1] & 4) {
    c->t.n_dims = 2;
    c->t.dims[0] = dim_of (u16 (h + 2, 0), 64);
    c->t.dims[1] = dim_of (u16 (h + 4, 0), 300);
  } else {
    c->t.n_dims = 3;
    c->t.dims[0] = 1;
    c->t.dims[1] = dim_of (u16 (h + 2, 0), 64);
    c->t.dims[2] = dim_of (u16 (h + 4, 0), 300);
  }
  lead = (h[1] & 8) ? 0 : 1;
  c->pr.n_dims = 3 + lead;
  if (lead)
    c->pr.dims[0] = (h[1] & 0x80) ? 2 : 1;
  c->pr.dims[lead] = dim_of (u16 (h + 6, 0), 20);
  c->pr.dims[lead + 1] = dim_of (u16 (h + 8, 0), 24);
  c->pr.dims[lead + 2] = dim_of (u16 (h + 10, 0), 24);
  cnms_params_init (&c->p);
  c->p.keypoint_dims = kd[h[1] & 3];
  c->p.score_threshold = (float) u16 (h + 12, 0) / 65536.0f;
  c->p.iou = (float) u16 (h + 14, 0) / 65535.0f;
  c->p.max_detections = 1 + (int) (u16 (h + 12, 0) % 16);
  c->p.letterbox = (h[0] >> 2) & 1;
  c->p.model_width = 1 + (int) (u16 (h + 16, 0) % 256);
  c->p.model_height = 1 + (int) (u16 (h + 18, 0) % 256);
  c->p.frame_width = 1 + (int) (u16 (h + 20, 0) % 64);
  c->p.frame_height = 1 + (int) (u16 (h + 22, 0) % 64);
}

/* Fills a tensor's data (float values, as halves for float16) from the
 * bytes; size mode 0-1 exact, 2 short, 3 long. vals receives the values
 * the tensor holds. */
static void
fill (cnms_tensor *t, size_t elems, float *vals, uint16_t *halves,
    const uint8_t *d, size_t nd, size_t off, int mode, int size_mode)
{
  size_t i, need;

  for (i = 0; i < elems; i++)
    vals[i] = element (d, nd, off + i, mode);
  if (t->dtype == CNMS_DTYPE_FLOAT16) {
    cnms_floats_to_halves (vals, elems, halves);
    cnms_halves_to_floats (halves, elems, vals);
    t->data = halves;
    need = elems * 2;
  } else {
    t->data = vals;
    need = elems * 4;
  }
  t->size = need;
  if (size_mode == 2 && need > 0)
    t->size = need - 1;
  else if (size_mode == 3)
    t->size = need + 2;
}

/* The reference byte of pixel (x, y) of a mask: the full dot product of
 * each neighbour's logit. */
static int
ref_pixel (const float *coef, const float *protos, int m, int hp, int wp,
    const cnms_mask_axis *ax, const cnms_mask_axis *ay, int x, int y)
{
  const size_t plane = (size_t) hp * (size_t) wp;
  int x0, x1, y0, y1;
  float wx0, wx1, wy0, wy1;

  cnms_mask_sample (ax, x, &x0, &x1, &wx0, &wx1);
  cnms_mask_sample (ay, y, &y0, &y1, &wy0, &wy1);
  if (x0 < 0 || x1 >= wp || y0 < 0 || y1 >= hp || x0 > x1 || y0 > y1)
    abort ();
  return cnms_mask_bilinear (
      cnms_mask_logit (coef, protos + (size_t) y0 * wp + x0, plane, m),
      cnms_mask_logit (coef, protos + (size_t) y0 * wp + x1, plane, m),
      cnms_mask_logit (coef, protos + (size_t) y1 * wp + x0, plane, m),
      cnms_mask_logit (coef, protos + (size_t) y1 * wp + x1, plane, m),
      wx0, wx1, wy0, wy1) > 0.0f;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static float tv[MAX_ELEMS + 4], pv[MAX_ELEMS + 4];
  static uint16_t th[MAX_ELEMS + 4], ph[MAX_ELEMS + 4];
  static cnms_det first[4096];
  static float kfirst[MAX_ELEMS * 3];
  static uint8_t mfirst[1 << 20];
  uint8_t h[24] = { 0 };
  const uint8_t *d = data + (size < 24 ? size : 24);
  size_t nd = size < 24 ? 0 : size - 24, te, pe;
  int dsize, psize, mode, n = -1, k, i;
  fuzz_case c;
  cnms_shape shape;
  cnms_payloads pl;
  const cnms_det *dets = NULL;
  const cnms_tensor *protos;
  cnms_status st_shape, st;
  char msg[256];
  int nk = 0, kdim = 0, m = 0, hp = 0, wp = 0;

  if (ctx == NULL && (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx) != CNMS_OK
          || cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ref_ctx) != CNMS_OK))
    abort ();
  memcpy (h, data, size < 24 ? size : 24);
  parse (h, &c, &dsize, &psize, &mode);
  te = elems_of (&c.t);
  pe = elems_of (&c.pr);
  fill (&c.t, te, tv, th, d, nd, 0, mode, dsize);
  fill (&c.pr, pe, pv, ph, d, nd, te, mode == 1 ? 3 : mode, psize);
  if (c.pr.dtype != c.t.dtype) {
    /* the data as the other dtype holds it */
    if (c.pr.dtype == CNMS_DTYPE_FLOAT16) {
      cnms_floats_to_halves (pv, pe, ph);
      c.pr.data = ph;
      c.pr.size = pe * 2;
    } else {
      c.pr.data = pv;
      c.pr.size = pe * 4;
    }
  }

  protos = c.seg && !c.no_protos ? &c.pr : NULL;
  st_shape = cnms_tensor_shape (&c.t, protos, c.seg ? CNMS_LAYOUT_YOLOV8_SEG
      : CNMS_LAYOUT_YOLOV8_POSE, &c.p, &shape, msg, sizeof msg);
  st = cnms_detect (ctx, &c.t, protos, c.seg ? CNMS_LAYOUT_YOLOV8_SEG :
      CNMS_LAYOUT_YOLOV8_POSE, &c.p, &dets, &n);
  cnms_ctx_payload (ctx, &pl);
  if (st_shape != CNMS_OK) {
    if (st != st_shape || cnms_ctx_error (ctx)[0] == '\0' || msg[0] == '\0'
        || n != 0 || pl.head != CNMS_HEAD_NONE || pl.data != NULL || pl.n != 0)
      abort ();
    return 0;
  }
  nk = shape.n_keypoints;
  m = shape.n_coeffs;
  hp = shape.proto_height;
  wp = shape.proto_width;
  if (st != CNMS_OK || n < 0 || n > c.p.max_detections || n > 4096)
    abort ();
  memcpy (first, dets, (size_t) n * sizeof *dets);

  /* the records of a yolov8 detect of the leading rows */
  {
    cnms_tensor sub = c.t;
    const cnms_det *rd;
    int rn = -1, rows = c.seg ? 4 + shape.n_classes : 5;

    sub.dims[sub.n_dims - 2] = rows;
    sub.size = (size_t) rows * (size_t) shape.n_anchors
        * (c.t.dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4);
    if (cnms_detect (ref_ctx, &sub, NULL, CNMS_LAYOUT_YOLOV8, &c.p, &rd, &rn)
        != CNMS_OK || rn != n || memcmp (rd, first, (size_t) n * sizeof *rd))
      abort ();
  }

  if (!c.seg) {
    cnms_map mp;
    const size_t na = (size_t) shape.n_anchors;

    k = nk;
    kdim = shape.keypoint_dims;
    if (pl.head != CNMS_HEAD_KEYPOINTS || pl.n != n || (n > 0
            && (pl.data == NULL || pl.records == NULL)) || k < 1
        || kdim != (c.p.keypoint_dims ? c.p.keypoint_dims : 3)
        || shape.n_classes != 1)
      abort ();
    for (i = 0; i < n; i++)
      if (pl.records[i].n_points != k || pl.records[i].point_dims != 3
          || pl.records[i].offset % sizeof (float) != 0
          || pl.records[i].offset + (size_t) k * 3 * sizeof (float) > pl.size)
        abort ();
    cnms_map_init (&mp, c.p.model_width, c.p.model_height, c.p.frame_width,
        c.p.frame_height, c.p.letterbox);
    for (i = 0; i < n; i++) {
      const float *kp = (const float *) (const void *) (pl.data
          + pl.records[i].offset);
      int j;
      for (j = 0; j < k; j++) {
        const float *g = kp + 3 * (size_t) j;
        const size_t r = 5 + (size_t) j * kdim, a = (size_t) first[i].anchor;
        float x = (tv[r * na + a] - mp.pad_x) / mp.gain_x;
        float y = (tv[(r + 1) * na + a] - mp.pad_y) / mp.gain_y;
        float s = kdim == 3 ? tv[(r + 2) * na + a] : NAN;

        if (!(memcmp (&g[0], &x, 4) == 0 || (isnan (g[0]) && isnan (x)))
            || !(memcmp (&g[1], &y, 4) == 0 || (isnan (g[1]) && isnan (y)))
            || !(memcmp (&g[2], &s, 4) == 0 || (isnan (g[2]) && isnan (s))))
          abort ();
      }
    }
    if ((size_t) n * k * 3 <= sizeof kfirst / sizeof kfirst[0])
      for (i = 0; i < n; i++)
        memcpy (kfirst + (size_t) i * k * 3, pl.data + pl.records[i].offset,
            (size_t) k * 3 * sizeof (float));
  } else {
    const uint8_t *bytes = pl.data;
    const cnms_payload *mk = pl.records;
    cnms_map mp;
    cnms_mask_axis ax, ay;
    size_t off = 0;
    float coef[64];

    if (pl.head != CNMS_HEAD_MASK || pl.n != n || (n > 0 && mk == NULL)
        || m < 1 || m > 64 || shape.n_classes < 1
        || shape.n_values != 4 + shape.n_classes + m)
      abort ();
    cnms_map_init (&mp, c.p.model_width, c.p.model_height, c.p.frame_width,
        c.p.frame_height, c.p.letterbox);
    cnms_mask_axis_init (&ax, mp.gain_x, mp.pad_x, wp, c.p.model_width);
    cnms_mask_axis_init (&ay, mp.gain_y, mp.pad_y, hp, c.p.model_height);
    for (i = 0; i < n; i++) {
      const cnms_det *e = &first[i];
      int x, y, w, hh, px, py, j;

      cnms_mask_rect (e->x1, e->y1, e->x2, e->y2, &x, &y, &w, &hh);
      if (mk[i].x != x || mk[i].y != y || mk[i].width != w
          || mk[i].height != hh || mk[i].offset != off || x < 0 || y < 0
          || mk[i].n_points != 0 || mk[i].point_dims != 0
          || (w > 0 && hh > 0 && bytes == NULL)
          || x + w > c.p.frame_width || y + hh > c.p.frame_height
          || (w > 0 && !(x >= e->x1 && x - 1 < e->x1
                  && x + w - 1 < e->x2 && x + w >= e->x2)))
        abort ();
      for (j = 0; j < m; j++)
        coef[j] = tv[((size_t) 4 + shape.n_classes + j) * shape.n_anchors
            + (size_t) e->anchor];
      for (py = 0; py < hh; py++)
        for (px = 0; px < w; px++) {
          const uint8_t b = bytes[off + (size_t) py * w + px];
          if (b > 1 || b != ref_pixel (coef, pv, m, hp, wp, &ax, &ay,
                  x + px, y + py))
            abort ();
        }
      off += (size_t) w * hh;
    }
    if (pl.size != off)
      abort ();
    if (off > 0 && off <= sizeof mfirst)
      memcpy (mfirst, bytes, off);
    /* deterministic */
    if (cnms_detect (ctx, &c.t, &c.pr, CNMS_LAYOUT_YOLOV8_SEG, &c.p, &dets,
            &n) != CNMS_OK
        || memcmp (dets, first, (size_t) n * sizeof *dets) != 0)
      abort ();
    cnms_ctx_payload (ctx, &pl);
    if (pl.head != CNMS_HEAD_MASK || pl.n != n || pl.size != off
        || (off > 0 && off <= sizeof mfirst
            && memcmp (pl.data, mfirst, off) != 0))
      abort ();
    return 0;
  }
  if (cnms_detect (ctx, &c.t, NULL, CNMS_LAYOUT_YOLOV8_POSE, &c.p, &dets, &n)
      != CNMS_OK || memcmp (dets, first, (size_t) n * sizeof *dets) != 0)
    abort ();
  cnms_ctx_payload (ctx, &pl);
  if (pl.head != CNMS_HEAD_KEYPOINTS || pl.n != n)
    abort ();
  if ((size_t) n * k * 3 <= sizeof kfirst / sizeof kfirst[0])
    for (i = 0; i < n; i++)
      if (pl.records[i].n_points != k
          || memcmp (pl.data + pl.records[i].offset, kfirst + (size_t) i * k
              * 3, (size_t) k * 3 * sizeof (float)) != 0)
        abort ();
  return 0;
}
