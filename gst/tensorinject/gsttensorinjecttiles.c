/* tensorinject's tiles (gsttensorinjecttiles.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "cudanms_static.h"
#include "gsttensorinjecttiles.h"

/* Objects' sides, frame pixels, and the least gap between two. */
#define SIDE_MIN 12
#define SIDE_MAX 60
#define GAP 4
/* Tries to place an object before giving up on it. */
#define TRIES 200
/* The anchors after the objects' (background, score 0.01). */
#define NOISE_ANCHORS 16

typedef struct
{
  gint box[4];
  gint class_id;
  gfloat score;
} TileObject;

struct _GstTensorInjectTiles
{
  GstTensorInjectTilesConfig cfg;
  cnms_slice *slices;           /* the grid, then the whole frame */
  gint n_slices;
  TileObject *objects;
  gint n_objects;
  gint anchors;                 /* N: 2 a possible object and the noise */
};

static guint64
splitmix64 (guint64 * state)
{
  guint64 z = (*state += 0x9e3779b97f4a7c15ull);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* An integer in [lo, hi]. */
static gint
draw_int (guint64 * rng, gint lo, gint hi)
{
  return lo + (gint) (splitmix64 (rng) % (guint64) (hi - lo + 1));
}

GstTensorInjectTiles *
gst_tensor_inject_tiles_new (const GstTensorInjectTilesConfig * cfg,
    const gchar ** why)
{
  GstTensorInjectTiles *t;
  guint64 rng = cfg->seed;
  gint n, i;

  n = cnms_slice_grid (cfg->frame_width, cfg->frame_height,
      cfg->slice_width, cfg->slice_height, cfg->overlap, cfg->overlap, NULL,
      0);
  if (n < 0 || n + 1 > CNMS_BATCH_MAX) {
    if (why != NULL)
      *why = "the frame has no grid of such slices";
    return NULL;
  }
  t = g_new0 (GstTensorInjectTiles, 1);
  t->cfg = *cfg;
  t->slices = g_new0 (cnms_slice, n + 1);
  cnms_slice_grid (cfg->frame_width, cfg->frame_height, cfg->slice_width,
      cfg->slice_height, cfg->overlap, cfg->overlap, t->slices, n);
  t->slices[n].x2 = cfg->frame_width;
  t->slices[n].y2 = cfg->frame_height;
  t->n_slices = n + (cfg->full_frame ? 1 : 0);
  t->objects = g_new0 (TileObject, MAX (cfg->num_objects, 1));
  t->anchors = 2 * cfg->num_objects + NOISE_ANCHORS;

  /* seeded places, each at least GAP pixels from the others */
  for (i = 0; i < cfg->num_objects; i++) {
    gint tries;

    for (tries = 0; tries < TRIES; tries++) {
      const gint w = draw_int (&rng, SIDE_MIN, SIDE_MAX);
      const gint h = draw_int (&rng, SIDE_MIN, SIDE_MAX);
      TileObject o;
      gint k;

      if (w > cfg->frame_width || h > cfg->frame_height)
        break;
      o.box[0] = draw_int (&rng, 0, cfg->frame_width - w);
      o.box[1] = draw_int (&rng, 0, cfg->frame_height - h);
      o.box[2] = o.box[0] + w;
      o.box[3] = o.box[1] + h;
      for (k = 0; k < t->n_objects; k++) {
        const gint *b = t->objects[k].box;

        if (o.box[0] < b[2] + GAP && b[0] < o.box[2] + GAP
            && o.box[1] < b[3] + GAP && b[1] < o.box[3] + GAP)
          break;
      }
      if (k < t->n_objects)
        continue;
      o.class_id = draw_int (&rng, 0, cfg->num_classes - 1);
      /* scores that are floats exactly: 154/256 .. 243/256 */
      o.score = (gfloat) draw_int (&rng, 154, 243) / 256.0f;
      t->objects[t->n_objects++] = o;
      break;
    }
  }
  return t;
}

void
gst_tensor_inject_tiles_free (GstTensorInjectTiles * tiles)
{
  if (tiles == NULL)
    return;
  g_free (tiles->slices);
  g_free (tiles->objects);
  g_free (tiles);
}

void
gst_tensor_inject_tiles_dims (const GstTensorInjectTiles * tiles,
    gint64 dims[3], gboolean whole)
{
  dims[0] = whole ? 1 : tiles->n_slices;
  dims[1] = 4 + tiles->cfg.num_classes;
  dims[2] = tiles->anchors;
}

gsize
gst_tensor_inject_tiles_size (const GstTensorInjectTiles * tiles,
    gboolean whole)
{
  gint64 dims[3];

  gst_tensor_inject_tiles_dims (tiles, dims, whole);
  return (gsize) (dims[0] * dims[1] * dims[2])
      * (tiles->cfg.dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4);
}

/* Value v at row r, anchor a of the frame at out. */
static void
put (const GstTensorInjectTiles * t, guint8 * out, gint r, gint a, gfloat v)
{
  const gsize at = (gsize) r * (gsize) t->anchors + (gsize) a;

  if (t->cfg.dtype == CNMS_DTYPE_FLOAT16) {
    guint16 h;

    cnms_floats_to_halves (&v, 1, &h);
    memcpy (out + at * 2, &h, 2);
  } else {
    memcpy (out + at * 4, &v, 4);
  }
}

/* Anchor a of a frame: box (frame pixels x1 y1 x2 y2, relative to the
 * slice's origin) through the slice's letterbox into the model, class
 * cls at score. */
static void
put_box (const GstTensorInjectTiles * t, guint8 * out, gint a,
    const gdouble b[4], gdouble gain, gdouble pad_x, gdouble pad_y,
    gint cls, gfloat score)
{
  const gdouble x1 = b[0] * gain + pad_x, x2 = b[2] * gain + pad_x;
  const gdouble y1 = b[1] * gain + pad_y, y2 = b[3] * gain + pad_y;

  put (t, out, 0, a, (gfloat) ((x1 + x2) / 2));
  put (t, out, 1, a, (gfloat) ((y1 + y2) / 2));
  put (t, out, 2, a, (gfloat) (x2 - x1));
  put (t, out, 3, a, (gfloat) (y2 - y1));
  put (t, out, 4 + cls, a, score);
}

/* The frame [1, 4+C, N] of slice r into out; whole: the whole frame's
 * pass. */
static void
render_slice (const GstTensorInjectTiles * t, const cnms_slice * r,
    gboolean whole, guint8 * out)
{
  const gint sw = r->x2 - r->x1, sh = r->y2 - r->y1;
  const gdouble gx = (gdouble) t->cfg.model_width / sw;
  const gdouble gy = (gdouble) t->cfg.model_height / sh;
  const gdouble gain = gx < gy ? gx : gy;
  const gdouble pad_x = (t->cfg.model_width - sw * gain) / 2;
  const gdouble pad_y = (t->cfg.model_height - sh * gain) / 2;
  gint k, a;

  for (a = 0; a < t->anchors; a++) {
    put (t, out, 0, a, 0.0f);
    put (t, out, 1, a, 0.0f);
    put (t, out, 2, a, 0.0f);
    put (t, out, 3, a, 0.0f);
    for (k = 0; k < t->cfg.num_classes; k++)
      put (t, out, 4 + k, a, 0.01f);
  }
  for (k = 0; k < t->n_objects; k++) {
    const TileObject *o = &t->objects[k];
    const gint x1 = MAX (o->box[0], r->x1), y1 = MAX (o->box[1], r->y1);
    const gint x2 = MIN (o->box[2], r->x2), y2 = MIN (o->box[3], r->y2);
    gdouble b[4];

    if (x2 <= x1 || y2 <= y1)
      continue;
    put (t, out, 4 + o->class_id, 2 * k, 0.0f);
    put (t, out, 4 + o->class_id, 2 * k + 1, 0.0f);
    if (whole) {
      /* the whole frame's pass: big enough objects, shrunk by a model
       * pixel on each side */
      const gdouble inset = 1.0 / gain;

      if ((o->box[2] - o->box[0]) * gain < GST_TENSOR_INJECT_TILES_LEAST
          || (o->box[3] - o->box[1]) * gain < GST_TENSOR_INJECT_TILES_LEAST)
        continue;
      b[0] = o->box[0] + inset;
      b[1] = o->box[1] + inset;
      b[2] = o->box[2] - inset;
      b[3] = o->box[3] - inset;
      put_box (t, out, 2 * k, b, gain, pad_x, pad_y, o->class_id,
          0.9f * o->score);
      continue;
    }
    {
      const gdouble share = (gdouble) (x2 - x1) * (y2 - y1)
          / ((gdouble) (o->box[2] - o->box[0]) * (o->box[3] - o->box[1]));
      const gfloat score = (gfloat) (o->score * (0.5 + 0.5 * share));

      b[0] = x1 - r->x1;
      b[1] = y1 - r->y1;
      b[2] = x2 - r->x1;
      b[3] = y2 - r->y1;
      put_box (t, out, 2 * k, b, gain, pad_x, pad_y, o->class_id,
          share >= 1.0 ? o->score : score);
      if (x2 - x1 > 2 && y2 - y1 > 2) {
        b[0] += 1;
        b[1] += 1;
        b[2] -= 1;
        b[3] -= 1;
        put_box (t, out, 2 * k + 1, b, gain, pad_x, pad_y, o->class_id,
            0.75f * score);
      }
    }
  }
}

void
gst_tensor_inject_tiles_render (const GstTensorInjectTiles * tiles,
    gboolean whole, guint8 * out)
{
  const gsize each = gst_tensor_inject_tiles_size (tiles, TRUE);
  const gint n_grid = tiles->n_slices - (tiles->cfg.full_frame ? 1 : 0);
  gint s;

  /* the whole frame is the slice after the grid */
  if (whole) {
    render_slice (tiles, &tiles->slices[n_grid], TRUE, out);
    return;
  }
  for (s = 0; s < tiles->n_slices; s++)
    render_slice (tiles, &tiles->slices[s], s == n_grid,
        out + (gsize) s * each);
}

gint
gst_tensor_inject_tiles_n_objects (const GstTensorInjectTiles * tiles)
{
  return tiles->n_objects;
}

void
gst_tensor_inject_tiles_object (const GstTensorInjectTiles * tiles, gint i,
    gint box[4], gint * class_id, gfloat * score)
{
  const TileObject *o = &tiles->objects[i];

  memcpy (box, o->box, sizeof (o->box));
  *class_id = o->class_id;
  *score = o->score;
}
