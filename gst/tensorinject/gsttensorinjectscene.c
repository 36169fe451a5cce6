/* A seeded synthetic scene rendered as raw YOLO output tensors.
 *
 * Anchors sit on the usual stride 8/16/32 grids (three per cell for
 * yolov5). The background is precomputed once: low class scores everywhere
 * plus `noise` anchors scoring 0.05..0.24 (one in twenty just above 0.25).
 * Each object moves at a constant velocity, bouncing off the edges, and
 * yields a cluster of 10-60 anchors around its centre with jittered boxes
 * and scores falling off from its peak; some objects also score a second
 * class on every third anchor. A private splitmix64 keeps it reproducible.
 *
 * An oriented scene (YOLOv8-OBB [1, 4+C+1, N]) has the same anchors and
 * clusters; each object also turns at a constant rate (its angle kept in
 * ultralytics' [-pi/4, 3pi/4)), bounces so that its whole rotated box stays
 * in the model input, and its anchors jitter in angle too. The background's
 * angles are small random ones. The box scenes draw the same random numbers
 * as without it.
 *
 * A lane scene (LaneATT [1, N, 5+S], S = 72 rows, N = 1000 proposals) is a
 * road of 2-4 lanes (as many as the seed says) whose bottom ends spread
 * over 10%..90% of the model width; lane k's x at height t (0 at the
 * bottom row, 1 at the horizon, 42% of the model height from the top) is
 * b_k + (v - b_k) t + c t (1 - t): towards the vanishing point v, bent by
 * the road's curve c; v and c sway slowly frame to frame (at most ~3 model
 * pixels a frame). A lane runs from the bottom row up to t = 0.85. Each
 * lane has 4-8 proposals at fixed rows of the tensor: its best one (lane
 * logit 4..4.1, start_y 0, its exact length) and near-duplicates (lane
 * logit 1.5..3.5, starting up to 2 rows higher, up to 2 rows shorter);
 * each shifts its x by up to 1.8 model pixels plus up to 0.9 per row. The
 * other proposals are static background: short straight segments with
 * logits (3..5, -1..0), scores below 0.12.
 *
 * A pose scene (YOLOv8-pose [1, 4+1+17*3, N], one class: person) moves
 * people as box scenes move objects: each is a skeleton of COCO's 17
 * keypoints laid on its box by a fixed template (a standing person facing
 * the camera), arms and legs swinging at the person's own pace, each
 * keypoint with a fixed visibility (one in seven occluded: 0.05..0.3,
 * else 0.6..0.99). A segmentation scene (YOLOv8-seg, detections
 * [1, 4+C+32, N] and prototypes [1, 32, mh/4, mw/4]) moves ellipses,
 * rectangles and diamonds: object i's shape is prototype channel i (its
 * signed distance at each prototype pixel, in prototype pixels, clamped to
 * +-4: positive inside), and its anchors' coefficients are one-hot on i,
 * so that its true mask is known. In both, an object's best anchor (its
 * centre cell, scoring its peak, written after every cluster so that no
 * other object's cluster covers it) holds its true box and payload
 * exactly; the others jitter them as in the box scenes. A segmentation shape
 * scores one class, and an anchor it writes is its alone (the classes and
 * coefficients of a shape written before are cleared). Background anchors have
 * keypoints about their cell with visibility below 0.05, and zero mask
 * coefficients (an empty mask).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "cudanms_static.h"
#include "gsttensorinjectscene.h"

#define N_LEVELS 3
#define CLUSTER_RADIUS 4        /* ring search radius, in cells */
#define JITTER 0.03
#define ANGLE_JITTER 0.03       /* radians */
#define OBB_MIN_ANGLE (-G_PI / 4)

static const gint strides[N_LEVELS] = { 8, 16, 32 };

#define LANE_S GST_TENSOR_INJECT_LANE_ROWS
#define LANE_N GST_TENSOR_INJECT_LANE_PROPOSALS
#define LANE_MAX 4
#define LANE_MAX_PROPS 8
#define LANE_HORIZON 0.42       /* of the model height, from the top */
#define LANE_TOP 0.85           /* a lane stops at this height */

typedef struct
{
  gdouble b;                    /* x at the bottom row */
  gint n_props;
  gint rows[LANE_MAX_PROPS];    /* its proposals' tensor rows */
} SynthLane;

typedef struct
{
  gint class_id;
  gint second_class;            /* -1: none */
  gdouble w, h;                 /* model pixels */
  gdouble x0, y0, vx, vy;       /* centre at frame 0, pixels per frame */
  gdouble peak;
  gint n_anchors;
  gdouble angle0, omega;        /* oriented: angle at frame 0, per frame */
  /* pose: each keypoint's visibility, the limbs' phase and pace */
  gdouble vis[GST_TENSOR_INJECT_POSE_KEYPOINTS];
  gdouble phase0, pace;
  GstTensorInjectShape shape;   /* segmentation */
} SynthObject;

#define POSE_K GST_TENSOR_INJECT_POSE_KEYPOINTS
#define SEG_M GST_TENSOR_INJECT_SEG_MASKS

/* A standing person facing the camera, keypoint k at (u, v) of its box
 * (0..1 from the top left); COCO's order, so the person's left is on the
 * image's right. swing[k]: how far u moves with the limbs' swing. */
static const gdouble pose_template[POSE_K][3] = {
  {0.50, 0.08, 0.0}, {0.55, 0.06, 0.0}, {0.45, 0.06, 0.0},
  {0.61, 0.08, 0.0}, {0.39, 0.08, 0.0},
  {0.72, 0.22, 0.0}, {0.28, 0.22, 0.0},
  {0.82, 0.38, 0.04}, {0.18, 0.38, -0.04},
  {0.86, 0.53, 0.09}, {0.14, 0.53, -0.09},
  {0.63, 0.55, 0.0}, {0.37, 0.55, 0.0},
  {0.64, 0.75, -0.04}, {0.36, 0.75, 0.04},
  {0.66, 0.95, -0.08}, {0.34, 0.95, 0.08},
};

struct _GstTensorInjectScene
{
  GstTensorInjectSceneConfig cfg;
  gint grid_w[N_LEVELS];
  gint grid_h[N_LEVELS];
  gint level_offset[N_LEVELS];
  gint n_cells;
  gint n_anchors;
  gint n_channels;
  gsize elem_size;
  gsize size;
  guint8 *base;
  SynthObject *objects;
  /* lane scenes */
  gint n_lanes;
  gint lane_end;                /* the lanes' last row */
  gdouble v_phase, c_phase;
  SynthLane lanes[LANE_MAX];
};

static guint64
splitmix64 (guint64 * state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static gdouble
unit (guint64 * state)
{
  return (gdouble) (splitmix64 (state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Element pos of out, in the scene's data type. */
static void
put_at (const GstTensorInjectScene * sc, guint8 * out, gsize pos, gfloat f)
{
  guint16 h;

  if (sc->cfg.dtype == CNMS_DTYPE_FLOAT16) {
    cnms_floats_to_halves (&f, 1, &h);
    memcpy (out + pos * 2, &h, 2);
  } else {
    memcpy (out + pos * 4, &f, 4);
  }
}

static void
put (const GstTensorInjectScene * sc, guint8 * out, gint anchor, gint channel,
    gdouble value)
{
  gsize pos = sc->cfg.yolov5 || sc->cfg.lanes ?
      (gsize) anchor * sc->n_channels + channel :
      (gsize) channel * sc->n_anchors + anchor;

  put_at (sc, out, pos, (gfloat) value);
}

/* Channel of class c's score. */
static gint
class_channel (const GstTensorInjectScene * sc, gint c)
{
  return (sc->cfg.yolov5 ? 5 : 4) + c;
}

/* Channel of the angle (oriented scenes). */
static gint
angle_channel (const GstTensorInjectScene * sc)
{
  return 4 + sc->cfg.num_classes;
}

/* a + k pi in [-pi/4, 3pi/4): the same rectangle. */
static gdouble
wrap_angle (gdouble a)
{
  gdouble m = fmod (a - OBB_MIN_ANGLE, G_PI);

  if (m < 0)
    m += G_PI;
  return OBB_MIN_ANGLE + m;
}

/* Writes a scored box; yolov5 splits score into objectness x class. */
static void
put_box (const GstTensorInjectScene * sc, guint8 * out, gint anchor, gdouble cx,
    gdouble cy, gdouble w, gdouble h, gint class_id, gdouble score,
    gdouble objectness)
{
  put (sc, out, anchor, 0, cx);
  put (sc, out, anchor, 1, cy);
  put (sc, out, anchor, 2, w);
  put (sc, out, anchor, 3, h);
  if (sc->cfg.yolov5) {
    put (sc, out, anchor, 4, objectness);
    score = MIN (score / objectness, 1.0);
  }
  put (sc, out, anchor, class_channel (sc, class_id), score);
}

static gint
anchor_index (const GstTensorInjectScene * sc, gint level, gint gx, gint gy,
    gint sub)
{
  gint cell = sc->level_offset[level] + gy * sc->grid_w[level] + gx;

  return sc->cfg.yolov5 ? cell * 3 + sub : cell;
}

static void
render_background (GstTensorInjectScene * sc, guint64 * rng)
{
  gint level, gx, gy, sub, c, n_sub = sc->cfg.yolov5 ? 3 : 1;
  guint i;

  for (level = 0; level < N_LEVELS; level++) {
    gint s = strides[level];

    for (gy = 0; gy < sc->grid_h[level]; gy++) {
      for (gx = 0; gx < sc->grid_w[level]; gx++) {
        for (sub = 0; sub < n_sub; sub++) {
          gint a = anchor_index (sc, level, gx, gy, sub);

          put (sc, sc->base, a, 0, (gx + 0.5) * s);
          put (sc, sc->base, a, 1, (gy + 0.5) * s);
          put (sc, sc->base, a, 2, s * (1.0 + 3.0 * unit (rng)));
          put (sc, sc->base, a, 3, s * (1.0 + 3.0 * unit (rng)));
          if (sc->cfg.yolov5)
            put (sc, sc->base, a, 4, 0.001 + 0.02 * unit (rng));
          for (c = 0; c < sc->cfg.num_classes; c++)
            put (sc, sc->base, a, class_channel (sc, c), 0.02 * unit (rng));
          if (sc->cfg.obb)
            put (sc, sc->base, a, angle_channel (sc), 0.2 * unit (rng) - 0.1);
          for (c = 0; sc->cfg.pose && c < POSE_K; c++) {
            put (sc, sc->base, a, 5 + 3 * c, (gx + 0.5 + unit (rng)) * s);
            put (sc, sc->base, a, 6 + 3 * c, (gy + 0.5 + unit (rng)) * s);
            put (sc, sc->base, a, 7 + 3 * c, 0.05 * unit (rng));
          }
        }
      }
    }
  }

  /* Background noise: mostly below the usual 0.25 threshold, a few not. */
  for (i = 0; i < sc->cfg.noise; i++) {
    gint a = (gint) (splitmix64 (rng) % (guint64) sc->n_anchors);
    gint cls = (gint) (splitmix64 (rng) % (guint64) sc->cfg.num_classes);
    gdouble score = unit (rng) < 0.05 ?
        0.25 + 0.05 * unit (rng) : 0.05 + 0.19 * unit (rng);
    gdouble obj = 0.5 + 0.4 * unit (rng);

    if (sc->cfg.yolov5)
      put (sc, sc->base, a, 4, obj);
    put (sc, sc->base, a, class_channel (sc, cls),
        sc->cfg.yolov5 ? score / obj : score);
  }
}

static void
make_objects (GstTensorInjectScene * sc, guint64 * rng)
{
  gint i, mw = sc->cfg.model_width, mh = sc->cfg.model_height;

  for (i = 0; i < sc->cfg.num_objects; i++) {
    SynthObject *o = &sc->objects[i];

    o->class_id = (gint) (splitmix64 (rng) % (guint64) sc->cfg.num_classes);
    o->second_class = -1;
    if (sc->cfg.num_classes > 1 && unit (rng) < 0.3)
      o->second_class = (o->class_id + 1 + (gint) (splitmix64 (rng) %
              (guint64) (sc->cfg.num_classes - 1))) % sc->cfg.num_classes;
    o->w = MIN (30.0 + 170.0 * unit (rng), mw * 0.5);
    o->h = MIN (30.0 + 170.0 * unit (rng), mh * 0.5);
    o->x0 = o->w / 2 + unit (rng) * (mw - o->w);
    o->y0 = o->h / 2 + unit (rng) * (mh - o->h);
    o->vx = -4.0 + 8.0 * unit (rng);
    o->vy = -4.0 + 8.0 * unit (rng);
    o->peak = 0.6 + 0.35 * unit (rng);
    o->n_anchors = 10 + (gint) (splitmix64 (rng) % 51);
    if (sc->cfg.obb) {
      o->angle0 = OBB_MIN_ANGLE + G_PI * unit (rng);
      o->omega = -0.05 + 0.1 * unit (rng);
    }
    if (sc->cfg.pose) {
      gint k;

      /* people: taller than wide */
      o->w = MIN (40.0 + 80.0 * unit (rng), mw * 0.5);
      o->h = MIN (o->w * (2.0 + 0.6 * unit (rng)), mh * 0.8);
      o->x0 = o->w / 2 + unit (rng) * (mw - o->w);
      o->y0 = o->h / 2 + unit (rng) * (mh - o->h);
      for (k = 0; k < POSE_K; k++)
        o->vis[k] = unit (rng) < 1.0 / 7 ? 0.05 + 0.25 * unit (rng) :
            0.6 + 0.39 * unit (rng);
      o->phase0 = 2 * G_PI * unit (rng);
      o->pace = 0.1 + 0.15 * unit (rng);
    }
    if (sc->cfg.seg) {
      o->shape = (GstTensorInjectShape) (splitmix64 (rng) % 3);
      o->second_class = -1;     /* one class per shape: one mask each */
    }
  }
}

/* Lanes: height t of row r (0 at the bottom row, 1 at the horizon). */
static gdouble
lane_t (const GstTensorInjectScene * sc, gint r)
{
  return (gdouble) r / (LANE_S - 1) / (1.0 - LANE_HORIZON);
}

/* Lane l's x at every row at frame number frame. */
static void
lane_xs (const GstTensorInjectScene * sc, const SynthLane * l, guint64 frame,
    gdouble x[LANE_S])
{
  gdouble mw = sc->cfg.model_width;
  gdouble v = mw * (0.5 + 0.06 * sin (2 * G_PI * (gdouble) frame / 120.0
          + sc->v_phase));
  gdouble c = mw * 0.25 * sin (2 * G_PI * (gdouble) frame / 120.0
      + sc->c_phase);
  gint r;

  for (r = 0; r < LANE_S; r++) {
    gdouble t = lane_t (sc, r);

    x[r] = l->b + (v - l->b) * t + c * t * (1 - t);
  }
}

static void
make_lanes (GstTensorInjectScene * sc, guint64 * rng)
{
  gint order[LANE_N], i, k, j, used = 0;
  gdouble mw = sc->cfg.model_width;

  /* background proposals: short straight segments, low scores */
  for (i = 0; i < LANE_N; i++) {
    gint start = (gint) (splitmix64 (rng) % 36);
    gint len = 5 + (gint) (splitmix64 (rng) % 30);
    gdouble x0 = mw * unit (rng), slope = -6.0 + 12.0 * unit (rng);
    gint r;

    put (sc, sc->base, i, 0, 3.0 + 2.0 * unit (rng));
    put (sc, sc->base, i, 1, -1.0 + unit (rng));
    put (sc, sc->base, i, 2, (gfloat) start / (gfloat) (LANE_S - 1));
    put (sc, sc->base, i, 3, x0);
    put (sc, sc->base, i, 4, len);
    for (r = 0; r < LANE_S; r++)
      put (sc, sc->base, i, 5 + r, x0 + (r - start) * slope);
    order[i] = i;
  }
  sc->n_lanes = 2 + (gint) (splitmix64 (rng) % 3);
  sc->v_phase = 2 * G_PI * unit (rng);
  sc->c_phase = 2 * G_PI * unit (rng);
  for (sc->lane_end = 0; sc->lane_end + 1 < LANE_S
      && lane_t (sc, sc->lane_end + 1) <= LANE_TOP; sc->lane_end++);
  for (k = 0; k < sc->n_lanes; k++) {
    SynthLane *l = &sc->lanes[k];

    l->b = mw * (0.5 + (k - (sc->n_lanes - 1) / 2.0) * 0.8 /
        (sc->n_lanes - 1) + 0.02 * (2 * unit (rng) - 1));
    l->n_props = 4 + (gint) (splitmix64 (rng) % 5);
    /* distinct rows: a partial shuffle */
    for (j = 0; j < l->n_props; j++, used++) {
      gint pick = used + (gint) (splitmix64 (rng) % (guint64) (LANE_N - used));
      gint tmp = order[used];

      order[used] = order[pick];
      order[pick] = tmp;
      l->rows[j] = order[used];
    }
  }
}

static void
render_lanes (const GstTensorInjectScene * sc, guint64 frame, guint64 * rng,
    guint8 * out)
{
  gint k, j, r;

  for (k = 0; k < sc->n_lanes; k++) {
    const SynthLane *l = &sc->lanes[k];
    gdouble x[LANE_S];

    lane_xs (sc, l, frame, x);
    for (j = 0; j < l->n_props; j++) {
      gint a = l->rows[j], start = 0, len = sc->lane_end + 1;
      gdouble shift, logit;

      if (j == 0) {
        logit = 4.0 + 0.1 * unit (rng);
      } else {
        logit = 1.5 + 2.0 * unit (rng);
        start = (gint) (splitmix64 (rng) % 3);
        len = sc->lane_end + 1 - start - (gint) (splitmix64 (rng) % 3);
      }
      shift = 0.6 * GST_TENSOR_INJECT_LANE_JITTER * (2 * unit (rng) - 1);
      put (sc, out, a, 0, 0.0);
      put (sc, out, a, 1, logit);
      put (sc, out, a, 2, (gfloat) start / (gfloat) (LANE_S - 1));
      put (sc, out, a, 4, len);
      for (r = 0; r < LANE_S; r++) {
        gdouble xr = x[r] + shift
            + 0.3 * GST_TENSOR_INJECT_LANE_JITTER * (2 * unit (rng) - 1);

        put (sc, out, a, 5 + r, xr);
        if (r == start)
          put (sc, out, a, 3, xr);
      }
    }
  }
}

GstTensorInjectScene *
gst_tensor_inject_scene_new (const GstTensorInjectSceneConfig * cfg)
{
  GstTensorInjectScene *sc = g_new0 (GstTensorInjectScene, 1);
  guint64 rng = cfg->seed;
  gint level;

  sc->cfg = *cfg;
  if (cfg->pose)
    sc->cfg.num_classes = 1;
  if (cfg->seg)
    sc->cfg.num_objects = MIN (cfg->num_objects, SEG_M);
  cfg = &sc->cfg;
  for (level = 0; level < N_LEVELS; level++) {
    sc->grid_w[level] = MAX (cfg->model_width / strides[level], 1);
    sc->grid_h[level] = MAX (cfg->model_height / strides[level], 1);
    sc->level_offset[level] = sc->n_cells;
    sc->n_cells += sc->grid_w[level] * sc->grid_h[level];
  }
  sc->n_anchors = cfg->yolov5 ? sc->n_cells * 3 : sc->n_cells;
  sc->n_channels = (cfg->yolov5 ? 5 : 4) + cfg->num_classes
      + (cfg->obb ? 1 : 0) + (cfg->pose ? 3 * POSE_K : 0)
      + (cfg->seg ? SEG_M : 0);
  if (cfg->lanes) {
    sc->n_anchors = LANE_N;
    sc->n_channels = 5 + LANE_S;
  }
  sc->elem_size = cfg->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  sc->size = (gsize) sc->n_anchors * sc->n_channels * sc->elem_size;
  /* zeros: a segmentation scene's background coefficients */
  sc->base = g_malloc0 (sc->size);
  sc->objects = g_new0 (SynthObject, MAX (cfg->num_objects, 1));

  if (cfg->lanes) {
    make_lanes (sc, &rng);
    return sc;
  }
  render_background (sc, &rng);
  make_objects (sc, &rng);
  return sc;
}

void
gst_tensor_inject_scene_free (GstTensorInjectScene * scene)
{
  if (scene == NULL)
    return;
  g_free (scene->base);
  g_free (scene->objects);
  g_free (scene);
}

void
gst_tensor_inject_scene_dims (const GstTensorInjectScene * scene, gint64 dims[3])
{
  dims[0] = 1;
  dims[1] = scene->cfg.yolov5 || scene->cfg.lanes ?
      scene->n_anchors : scene->n_channels;
  dims[2] = scene->cfg.yolov5 || scene->cfg.lanes ?
      scene->n_channels : scene->n_anchors;
}

gsize
gst_tensor_inject_scene_size (const GstTensorInjectScene * scene)
{
  return scene->size;
}

/* Position on [lo, hi] of a point moving from p0 at speed v, bouncing. */
static gdouble
bounce (gdouble p0, gdouble v, guint64 frame, gdouble lo, gdouble hi)
{
  gdouble len = hi - lo, m;

  if (len <= 0)
    return lo;
  m = fmod (p0 - lo + v * (gdouble) frame, 2 * len);
  if (m < 0)
    m += 2 * len;
  return lo + (m <= len ? m : 2 * len - m);
}

static gint
object_level (const SynthObject * o)
{
  gdouble size = MAX (o->w, o->h);

  return size < 64 ? 0 : size < 128 ? 1 : 2;
}

/* The object's centre at frame number frame: its anchors jitter about it.
 * A rotated object keeps its circumscribed circle in the input. */
static void
object_centre (const GstTensorInjectScene * sc, const SynthObject * o,
    guint64 frame, gdouble * cx, gdouble * cy)
{
  gdouble rx = o->w / 2, ry = o->h / 2;

  if (sc->cfg.obb)
    rx = ry = sqrt (o->w * o->w + o->h * o->h) / 2;
  *cx = bounce (o->x0, o->vx, frame, rx, sc->cfg.model_width - rx);
  *cy = bounce (o->y0, o->vy, frame, ry, sc->cfg.model_height - ry);
}

static gdouble
object_angle (const SynthObject * o, guint64 frame)
{
  return wrap_angle (o->angle0 + o->omega * (gdouble) frame);
}

/* Anchor a's keypoints: kp exactly (the best anchor), else jittered by up
 * to 2% of the box and 0.05 in visibility. */
static void
render_keypoints (const GstTensorInjectScene * sc, guint8 * out, gint a,
    const SynthObject * o, const gdouble kp[POSE_K][3], gboolean exact,
    guint64 * rng)
{
  gint k;

  for (k = 0; k < POSE_K; k++) {
    gdouble x = kp[k][0], y = kp[k][1], v = kp[k][2];

    if (!exact) {
      x += 0.02 * o->w * (2 * unit (rng) - 1);
      y += 0.02 * o->h * (2 * unit (rng) - 1);
      v = CLAMP (v + 0.05 * (2 * unit (rng) - 1), 0.0, 1.0);
    }
    put (sc, out, a, 5 + 3 * k, x);
    put (sc, out, a, 6 + 3 * k, y);
    put (sc, out, a, 7 + 3 * k, v);
  }
}

/* A pose object's keypoints at frame number frame (model pixels). */
static void
object_keypoints (const GstTensorInjectScene * sc, const SynthObject * o,
    guint64 frame, gdouble kp[POSE_K][3])
{
  gdouble cx, cy, swing = sin (o->phase0 + o->pace * (gdouble) frame);
  gint k;

  object_centre (sc, o, frame, &cx, &cy);
  for (k = 0; k < POSE_K; k++) {
    kp[k][0] = cx + (pose_template[k][0] + pose_template[k][2] * swing
        - 0.5) * o->w;
    kp[k][1] = cy + (pose_template[k][1] - 0.5) * o->h;
    kp[k][2] = o->vis[k];
  }
}

static void
render_object (const GstTensorInjectScene * sc, gint index,
    const SynthObject * o, guint64 frame, guint64 * rng, guint8 * out)
{
  gdouble kp[POSE_K][3];
  gint level = object_level (o), s = strides[level];
  gdouble cx, cy;
  gint gx0, gy0, r, dx, dy, written = 0;
  gdouble angle = sc->cfg.obb ? object_angle (o, frame) : 0.0;

  object_centre (sc, o, frame, &cx, &cy);
  if (sc->cfg.pose)
    object_keypoints (sc, o, frame, kp);
  gx0 = CLAMP ((gint) (cx / s), 0, sc->grid_w[level] - 1);
  gy0 = CLAMP ((gint) (cy / s), 0, sc->grid_h[level] - 1);

  /* Rings of cells around the centre cell, nearest first. */
  for (r = 0; r <= CLUSTER_RADIUS && written < o->n_anchors; r++) {
    for (dy = -r; dy <= r && written < o->n_anchors; dy++) {
      for (dx = -r; dx <= r && written < o->n_anchors; dx++) {
        gint gx = gx0 + dx, gy = gy0 + dy, a;
        gdouble score;

        if (MAX (ABS (dx), ABS (dy)) != r || gx < 0 || gy < 0
            || gx >= sc->grid_w[level] || gy >= sc->grid_h[level])
          continue;
        a = anchor_index (sc, level, gx, gy, written % 3);
        if (sc->cfg.seg) {
          /* the anchor is this shape's alone (an earlier shape's class
           * score or coefficient would mix two shapes) */
          gint c;

          for (c = 4; c < sc->n_channels; c++)
            put (sc, out, a, c, 0.0);
        }
        score = o->peak * (1.0 - 0.35 * r / CLUSTER_RADIUS)
            - 0.05 * unit (rng);
        put_box (sc, out, a,
            cx + o->w * JITTER * (2 * unit (rng) - 1),
            cy + o->h * JITTER * (2 * unit (rng) - 1),
            o->w * (1 + JITTER * (2 * unit (rng) - 1)),
            o->h * (1 + JITTER * (2 * unit (rng) - 1)),
            o->class_id, score, 0.88 + 0.04 * unit (rng));
        if (sc->cfg.obb)
          put (sc, out, a, angle_channel (sc),
              angle + ANGLE_JITTER * (2 * unit (rng) - 1));
        if (o->second_class >= 0 && written % 3 == 0)
          put (sc, out, a, class_channel (sc, o->second_class),
              sc->cfg.yolov5 ? 0.5 * score / 0.9 : 0.5 * score);
        if ((sc->cfg.pose || sc->cfg.seg) && written == 0)
          /* the best anchor: the true box, the peak score */
          put_box (sc, out, a, cx, cy, o->w, o->h, o->class_id, o->peak, 1.0);
        if (sc->cfg.pose)
          render_keypoints (sc, out, a, o, (const gdouble (*)[3]) kp,
              written == 0, rng);
        if (sc->cfg.seg)
          put (sc, out, a, 4 + sc->cfg.num_classes + index, 1.0);
        written++;
      }
    }
  }
}

/* Pose and segmentation scenes: object index's best anchor (its centre
 * cell) written again after every cluster, so that a later object's
 * cluster cannot cover it: the true box, the peak score, the true
 * keypoints or the one-hot coefficients (a segmentation anchor's other
 * classes and coefficients cleared). */
static void
render_best (const GstTensorInjectScene * sc, gint index,
    const SynthObject * o, guint64 frame, guint8 * out)
{
  gint level = object_level (o), s = strides[level], a, c;
  gdouble cx, cy, kp[POSE_K][3];

  object_centre (sc, o, frame, &cx, &cy);
  a = anchor_index (sc, level,
      CLAMP ((gint) (cx / s), 0, sc->grid_w[level] - 1),
      CLAMP ((gint) (cy / s), 0, sc->grid_h[level] - 1), 0);
  if (sc->cfg.seg) {
    for (c = 4; c < sc->n_channels; c++)
      put (sc, out, a, c, 0.0);
    put (sc, out, a, 4 + sc->cfg.num_classes + index, 1.0);
  }
  put_box (sc, out, a, cx, cy, o->w, o->h, o->class_id, o->peak, 1.0);
  if (sc->cfg.pose) {
    object_keypoints (sc, o, frame, kp);
    render_keypoints (sc, out, a, o, (const gdouble (*)[3]) kp, TRUE, NULL);
  }
}

void
gst_tensor_inject_scene_render (const GstTensorInjectScene * scene, guint64 frame,
    guint8 * out)
{
  guint64 rng = scene->cfg.seed ^ (frame * G_GUINT64_CONSTANT (0x2545f4914f6cdd1d));
  gint i;

  memcpy (out, scene->base, scene->size);
  if (scene->cfg.lanes) {
    render_lanes (scene, frame, &rng, out);
    return;
  }
  for (i = 0; i < scene->cfg.num_objects; i++)
    render_object (scene, i, &scene->objects[i], frame, &rng, out);
  for (i = 0; (scene->cfg.pose || scene->cfg.seg)
      && i < scene->cfg.num_objects; i++)
    render_best (scene, i, &scene->objects[i], frame, out);
}

gint
gst_tensor_inject_scene_n_objects (const GstTensorInjectScene * scene)
{
  return scene->cfg.lanes ? 0 : scene->cfg.num_objects;
}

void
gst_tensor_inject_scene_model_size (const GstTensorInjectScene * scene,
    gint * width, gint * height)
{
  *width = scene->cfg.model_width;
  *height = scene->cfg.model_height;
}

gboolean
gst_tensor_inject_scene_object (const GstTensorInjectScene * scene, gint i,
    guint64 frame, gdouble box[4], gint * class_id)
{
  const SynthObject *o;

  if (i < 0 || i >= gst_tensor_inject_scene_n_objects (scene))
    return FALSE;
  o = &scene->objects[i];
  object_centre (scene, o, frame, &box[0], &box[1]);
  box[2] = o->w;
  box[3] = o->h;
  *class_id = o->class_id;
  return TRUE;
}

gboolean
gst_tensor_inject_scene_oriented (const GstTensorInjectScene * scene)
{
  return scene->cfg.obb;
}

gdouble
gst_tensor_inject_scene_object_angle (const GstTensorInjectScene * scene,
    gint i, guint64 frame)
{
  if (!scene->cfg.obb || i < 0 || i >= scene->cfg.num_objects)
    return 0.0;
  return object_angle (&scene->objects[i], frame);
}

gboolean
gst_tensor_inject_scene_lanes (const GstTensorInjectScene * scene)
{
  return scene->cfg.lanes;
}

gint
gst_tensor_inject_scene_n_lanes (const GstTensorInjectScene * scene)
{
  return scene->cfg.lanes ? scene->n_lanes : 0;
}

gboolean
gst_tensor_inject_scene_lane (const GstTensorInjectScene * scene, gint i,
    guint64 frame, gdouble x[GST_TENSOR_INJECT_LANE_ROWS], gint * end,
    gint first[8], gint * n)
{
  const SynthLane *l;
  gint j;

  if (i < 0 || i >= gst_tensor_inject_scene_n_lanes (scene))
    return FALSE;
  l = &scene->lanes[i];
  lane_xs (scene, l, frame, x);
  *end = scene->lane_end;
  if (first != NULL)
    for (j = 0; j < l->n_props; j++)
      first[j] = l->rows[j];
  if (n != NULL)
    *n = l->n_props;
  return TRUE;
}

gboolean
gst_tensor_inject_scene_pose (const GstTensorInjectScene * scene)
{
  return scene->cfg.pose;
}

gboolean
gst_tensor_inject_scene_object_keypoints (const GstTensorInjectScene * scene,
    gint i, guint64 frame, gdouble kp[GST_TENSOR_INJECT_POSE_KEYPOINTS][3])
{
  if (!scene->cfg.pose || i < 0 || i >= scene->cfg.num_objects)
    return FALSE;
  object_keypoints (scene, &scene->objects[i], frame, kp);
  return TRUE;
}

gboolean
gst_tensor_inject_scene_seg (const GstTensorInjectScene * scene)
{
  return scene->cfg.seg;
}

/* Prototype size: 1/4 of the model's, at least 1. */
static void
proto_size (const GstTensorInjectScene * sc, gint * pw, gint * ph)
{
  *pw = MAX (sc->cfg.model_width / GST_TENSOR_INJECT_SEG_PROTO_STRIDE, 1);
  *ph = MAX (sc->cfg.model_height / GST_TENSOR_INJECT_SEG_PROTO_STRIDE, 1);
}

void
gst_tensor_inject_scene_protos_dims (const GstTensorInjectScene * scene,
    gint64 dims[4])
{
  gint pw, ph;

  proto_size (scene, &pw, &ph);
  dims[0] = 1;
  dims[1] = SEG_M;
  dims[2] = ph;
  dims[3] = pw;
}

gsize
gst_tensor_inject_scene_protos_size (const GstTensorInjectScene * scene)
{
  gint pw, ph;

  if (!scene->cfg.seg)
    return 0;
  proto_size (scene, &pw, &ph);
  return (gsize) SEG_M * ph * pw * scene->elem_size;
}

static gdouble
shape_distance (GstTensorInjectShape shape, gdouble dx, gdouble dy,
    gdouble a, gdouble b)
{
  switch (shape) {
    case GST_TENSOR_INJECT_SHAPE_ELLIPSE:
      return (1.0 - sqrt ((dx / a) * (dx / a) + (dy / b) * (dy / b)))
          * MIN (a, b);
    case GST_TENSOR_INJECT_SHAPE_RECTANGLE:
      return MIN (a - fabs (dx), b - fabs (dy));
    case GST_TENSOR_INJECT_SHAPE_DIAMOND:
    default:
      return (1.0 - fabs (dx) / a - fabs (dy) / b) * a * b
          / sqrt (a * a + b * b);
  }
}

GstTensorInjectShape
gst_tensor_inject_scene_object_shape (const GstTensorInjectScene * scene,
    gint i)
{
  if (!scene->cfg.seg || i < 0 || i >= scene->cfg.num_objects)
    return GST_TENSOR_INJECT_SHAPE_ELLIPSE;
  return scene->objects[i].shape;
}

gdouble
gst_tensor_inject_scene_object_distance (const GstTensorInjectScene * scene,
    gint i, guint64 frame, gdouble x, gdouble y)
{
  const SynthObject *o;
  gdouble cx, cy;

  if (!scene->cfg.seg || i < 0 || i >= scene->cfg.num_objects)
    return -G_MAXDOUBLE;
  o = &scene->objects[i];
  object_centre (scene, o, frame, &cx, &cy);
  return shape_distance (o->shape, x - cx, y - cy, o->w / 2, o->h / 2);
}

/* A distance d (model pixels) as a prototype logit. */
static gfloat
distance_logit (const GstTensorInjectScene * scene, gdouble d)
{
  gint pw, ph;

  proto_size (scene, &pw, &ph);
  d /= (gdouble) scene->cfg.model_width / pw;
  return (gfloat) CLAMP (d, -GST_TENSOR_INJECT_SEG_CLAMP,
      GST_TENSOR_INJECT_SEG_CLAMP);
}

gfloat
gst_tensor_inject_scene_object_logit (const GstTensorInjectScene * scene,
    gint i, guint64 frame, gdouble x, gdouble y)
{
  return distance_logit (scene,
      gst_tensor_inject_scene_object_distance (scene, i, frame, x, y));
}

void
gst_tensor_inject_scene_render_protos (const GstTensorInjectScene * scene,
    guint64 frame, guint8 * out)
{
  gint pw, ph, c, px, py;
  gdouble sx, sy;

  if (!scene->cfg.seg)
    return;
  proto_size (scene, &pw, &ph);
  sx = (gdouble) scene->cfg.model_width / pw;
  sy = (gdouble) scene->cfg.model_height / ph;
  for (c = 0; c < SEG_M; c++) {
    const SynthObject *o = c < scene->cfg.num_objects ?
        &scene->objects[c] : NULL;
    gsize base = (gsize) c * ph * pw;
    gdouble cx = 0, cy = 0;

    if (o != NULL)
      object_centre (scene, o, frame, &cx, &cy);
    for (py = 0; py < ph; py++) {
      for (px = 0; px < pw; px++) {
        /* as gst_tensor_inject_scene_object_logit */
        gfloat v = o != NULL ? distance_logit (scene, shape_distance
            (o->shape, (px + 0.5) * sx - cx, (py + 0.5) * sy - cy,
                o->w / 2, o->h / 2)) :
            (gfloat) - GST_TENSOR_INJECT_SEG_CLAMP;

        put_at (scene, out, base + (gsize) py * pw + px, v);
      }
    }
  }
}
