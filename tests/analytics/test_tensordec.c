/* cudanms against GStreamer 1.28's yolov8tensordec on the same tensors
 * (tensordec_frames.h: agnostic, no letterbox, the same thresholds, cap
 * and labels), proven box by box with a reference model of each:
 *
 *   model_cudanms    the documented semantics: float32 boxes clipped to the
 *                    frame, torchvision's IoU, floor/ceil output boxes;
 *   model_tensordec  yolov8tensordec 1.28 read line by line: its candidate
 *                    test on (cx, cy, w, h), integer boxes ((int)(cx - w/2),
 *                    (int)(w + 0.5)), gst_analytics_image_util_iou_int();
 *   model_between    cudanms's float boxes and IoU, but clipped and
 *                    filtered the way yolov8tensordec does.
 *
 * Both elements must give exactly their model's boxes (order, class,
 * score bits, x, y, w, h). The three models share the decode and the
 * greedy loop (the same score, class and order for every anchor) and
 * differ in one rule at a time, so every box the elements disagree on is
 * accounted for by clipping (cudanms vs between) or by integer boxes
 * (between vs tensordec); common boxes must have the same class and the
 * same score bits. Exit 77 (skip) without yolov8tensordec. */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>

#include "analytics_common.h"

#if defined (HAVE_GST_TENSOR_META) && defined (HAVE_GST_ANALYTICS)
#include "tensordec_frames.h"

typedef enum
{
  MODEL_CUDANMS,
  MODEL_BETWEEN,
  MODEL_TENSORDEC
} Model;

typedef struct
{
  gint anchor;
  gint class_id;
  gfloat score;
  gfloat x1, y1, x2, y2;        /* as the model's IoU sees the box */
  gint ix, iy, iw, ih;          /* the output box */
} Cand;

static gint
cand_order (gconstpointer pa, gconstpointer pb)
{
  const Cand *a = pa, *b = pb;

  /* score descending, then anchor ascending: cudanms's order, and what
   * yolov8tensordec's stable g_array_sort on the score leaves */
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  return a->anchor - b->anchor;
}

/* yolov8tensordec's gst_yolo_tensor_decoder_decode_valid_bb (). */
static gboolean
tensordec_valid (gfloat cx, gfloat cy, gfloat w, gfloat h, gint fw, gint fh)
{
  if (cx > fw || cy > fh)
    return FALSE;
  if (cx < -(gfloat) (fw / 2.0) || cy < -(gfloat) (fh / 2.0))
    return FALSE;
  if (w <= 0 || h <= 0 || w > fw || h > fh)
    return FALSE;
  return TRUE;
}

/* gst_analytics_image_util_iou_int () of 1.28, in its own arithmetic. */
static gboolean
clip_int (gint * xy, gint * wh)
{
  if (*xy < 0) {
    if (*xy + *wh < 0)
      return FALSE;
    *wh += *xy;
    *xy = 0;
  }
  return TRUE;
}

static guint
lin_inter (guint a_min, guint a_max, guint b_min, guint b_max)
{
  if (a_max > b_min && b_max > a_min)
    return MIN (a_max, b_max) - MAX (a_min, b_min);
  return 0;
}

static gfloat
iou_int (const Cand * a, const Cand * b)
{
  gint ax = a->ix, ay = a->iy, aw = a->iw, ah = a->ih;
  gint bx = b->ix, by = b->iy, bw = b->iw, bh = b->ih;
  guint xi, yi, ua, ub, inter, uni;

  if (!clip_int (&ax, &aw) || !clip_int (&ay, &ah) || !clip_int (&bx, &bw)
      || !clip_int (&by, &bh))
    return 0.0f;
  xi = lin_inter (ax, ax + aw, bx, bx + bw);
  if (xi == 0)
    return 0.0f;
  yi = lin_inter (ay, ay + ah, by, by + bh);
  if (yi == 0)
    return 0.0f;
  ua = (guint) aw *(guint) ah;
  ub = (guint) bw *(guint) bh;
  inter = xi * yi;
  uni = ua + ub - inter;
  return uni == 0 ? 0.0f : ((gfloat) inter) / uni;
}

/* cudanms's IoU (kernels/cnms_math.h, torchvision's formula). */
static gfloat
iou_float (const Cand * a, const Cand * b)
{
  gfloat w = MAX (0.0f, MIN (a->x2, b->x2) - MAX (a->x1, b->x1));
  gfloat h = MAX (0.0f, MIN (a->y2, b->y2) - MAX (a->y1, b->y1));
  gfloat inter = w * h;
  gfloat area_a = (a->x2 - a->x1) * (a->y2 - a->y1);
  gfloat area_b = (b->x2 - b->x1) * (b->y2 - b->y1);
  gfloat den = (area_a + area_b) - inter;

  return den == 0.0f ? 0.0f : inter / den;
}

/* Decode + greedy NMS of one [1, 4+C, N] tensor by model m. */
static GArray *
model_run (Model m, const gfloat * t, gint n_classes, gint n,
    const TdSetup * s)
{
  GArray *cands = g_array_new (FALSE, FALSE, sizeof (Cand));
  GArray *kept = g_array_new (FALSE, FALSE, sizeof (Cand));
  gint a, c;
  guint i, k;

  for (a = 0; a < n; a++) {
    gfloat cx = t[a], cy = t[n + a], w = t[2 * n + a], h = t[3 * n + a];
    gfloat best = -INFINITY, hw = w * 0.5f, hh = h * 0.5f;
    Cand cd;

    cd.class_id = -1;
    for (c = 0; c < n_classes; c++) {
      gfloat v = t[(4 + c) * n + a];

      if (v > best) {           /* the first maximum; NaN never wins */
        best = v;
        cd.class_id = c;
      }
    }
    if (!isfinite (best) || !(best > s->score_threshold))
      continue;
    cd.anchor = a;
    cd.score = best;
    cd.x1 = cx - hw;
    cd.y1 = cy - hh;
    cd.x2 = cx + hw;
    cd.y2 = cy + hh;
    if (m == MODEL_CUDANMS) {
      /* clipped to the frame; a candidate keeps some area */
      cd.x1 = CLAMP (cd.x1, 0.0f, (gfloat) s->size);
      cd.y1 = CLAMP (cd.y1, 0.0f, (gfloat) s->size);
      cd.x2 = CLAMP (cd.x2, 0.0f, (gfloat) s->size);
      cd.y2 = CLAMP (cd.y2, 0.0f, (gfloat) s->size);
      if (!(cd.x2 > cd.x1 && cd.y2 > cd.y1))
        continue;
      cd.ix = CLAMP ((gint) floorf (cd.x1), 0, s->size);
      cd.iy = CLAMP ((gint) floorf (cd.y1), 0, s->size);
      cd.iw = CLAMP ((gint) ceilf (cd.x2), cd.ix, s->size) - cd.ix;
      cd.ih = CLAMP ((gint) ceilf (cd.y2), cd.iy, s->size) - cd.iy;
    } else {
      if (!tensordec_valid (cx, cy, w, h, s->size, s->size))
        continue;
      /* gst_yolo_tensor_decoder_convert_bbox () */
      cd.ix = (gint) (cx - (w / 2));
      cd.iy = (gint) (cy - (h / 2));
      cd.iw = (gint) (w + 0.5);
      cd.ih = (gint) (h + 0.5);
      if (m == MODEL_BETWEEN) {
        /* only the left and top are clipped, inside the IoU */
        cd.x1 = MAX (cd.x1, 0.0f);
        cd.y1 = MAX (cd.y1, 0.0f);
      }
    }
    g_array_append_val (cands, cd);
  }
  g_array_sort (cands, cand_order);

  for (i = 0; i < cands->len && (gint) kept->len < s->max_detections; i++) {
    const Cand *cd = &g_array_index (cands, Cand, i);
    gboolean keep = TRUE;

    for (k = 0; k < kept->len && keep; k++) {
      const Cand *kc = &g_array_index (kept, Cand, k);
      gfloat iou;

      if (m == MODEL_TENSORDEC)
        iou = iou_int (cd, kc);
      else if (m == MODEL_BETWEEN && (cd->x2 < 0 || cd->y2 < 0 || kc->x2 < 0
              || kc->y2 < 0))
        iou = 0.0f;             /* its clip: wholly left of or above 0 */
      else
        iou = iou_float (kc, cd);
      keep = !(iou > s->iou);
    }
    if (keep)
      g_array_append_val (kept, *cd);
  }
  g_array_unref (cands);
  return kept;
}

/* The element's boxes are exactly the model's, in order. */
static void
assert_same (GArray * real, GArray * model, const gchar * who, guint frame)
{
  guint i;

  fail_unless_equals_int (real->len, model->len);
  for (i = 0; i < real->len; i++) {
    const TdBox *r = &g_array_index (real, TdBox, i);
    const Cand *m = &g_array_index (model, Cand, i);

    fail_unless (r->class_id == m->class_id
        && memcmp (&r->score, &m->score, sizeof (gfloat)) == 0
        && r->x == m->ix && r->y == m->iy && r->w == m->iw && r->h == m->ih,
        "%s frame %u box %u: %d %.9g %d,%d %dx%d, model (anchor %d) %d %.9g "
        "%d,%d %dx%d", who, frame, i, r->class_id, r->score, r->x, r->y, r->w,
        r->h, m->anchor, m->class_id, m->score, m->ix, m->iy, m->iw, m->ih);
  }
}

static GHashTable *
anchors_of (GArray * kept)
{
  GHashTable *set = g_hash_table_new (NULL, NULL);
  guint i;

  for (i = 0; i < kept->len; i++)
    g_hash_table_add (set,
        GINT_TO_POINTER (g_array_index (kept, Cand, i).anchor + 1));
  return set;
}

static gboolean
in (GHashTable * set, gint anchor)
{
  return g_hash_table_contains (set, GINT_TO_POINTER (anchor + 1));
}

typedef struct
{
  guint cudanms, tensordec, common, moved, only_cudanms, only_tensordec;
  guint by_clipping, by_integer_boxes;
} Tally;

/* Accounts for an anchor kept by one element only: which model step
 * changes its fate (at least one must, the fates differing at the ends). */
static void
explain (Tally * tally, gint anchor, GHashTable * sc, GHashTable * sb,
    GHashTable * st)
{
  gboolean clip = in (sc, anchor) != in (sb, anchor);
  gboolean round = in (sb, anchor) != in (st, anchor);

  fail_unless (clip || round);
  tally->by_clipping += clip;
  tally->by_integer_boxes += round;
}

static void
tally_frame (Tally * tally, GArray * mc, GArray * mb, GArray * mt)
{
  GHashTable *sc = anchors_of (mc), *sb = anchors_of (mb),
      *st = anchors_of (mt);
  guint i, j;

  tally->cudanms += mc->len;
  tally->tensordec += mt->len;
  for (i = 0; i < mc->len; i++) {
    const Cand *c = &g_array_index (mc, Cand, i);

    if (!in (st, c->anchor)) {
      tally->only_cudanms++;
      explain (tally, c->anchor, sc, sb, st);
      continue;
    }
    for (j = 0; j < mt->len; j++) {
      const Cand *t = &g_array_index (mt, Cand, j);

      if (t->anchor != c->anchor)
        continue;
      /* a common box: the same class and the same score bits */
      fail_unless (t->class_id == c->class_id
          && memcmp (&t->score, &c->score, sizeof (gfloat)) == 0,
          "anchor %d: class %d/%d score %.9g/%.9g", c->anchor, c->class_id,
          t->class_id, c->score, t->score);
      tally->common++;
      tally->moved += t->ix != c->ix || t->iy != c->iy || t->iw != c->iw
          || t->ih != c->ih;
    }
  }
  for (j = 0; j < mt->len; j++) {
    gint anchor = g_array_index (mt, Cand, j).anchor;

    if (!in (sc, anchor)) {
      tally->only_tensordec++;
      explain (tally, anchor, sc, sb, st);
    }
  }
  g_hash_table_unref (sc);
  g_hash_table_unref (sb);
  g_hash_table_unref (st);
}

static GArray *
run_element (GstHarness * h, const TdFrames * f, guint i)
{
  GstBuffer *out;
  GArray *boxes;

  fail_unless_equals_int (gst_harness_push (h, td_buffer (f, i)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  boxes = td_od_boxes (out);
  gst_buffer_unref (out);
  return boxes;
}

static void
compare (const TdSetup * setup)
{
  TdFrames *f = td_frames_new (setup);
  GstHarness *hc = td_harness_cudanms (f), *ht = td_harness_tensordec (f);
  Tally tally = { 0 };
  guint frame;

  for (frame = 0; frame < setup->n_frames; frame++) {
    GstMapInfo map;
    GArray *mc, *mb, *mt, *rc, *rt;

    fail_unless (gst_buffer_map (f->tensors[frame], &map, GST_MAP_READ));
    mc = model_run (MODEL_CUDANMS, (const gfloat *) map.data,
        setup->n_classes, f->n_anchors, setup);
    mb = model_run (MODEL_BETWEEN, (const gfloat *) map.data,
        setup->n_classes, f->n_anchors, setup);
    mt = model_run (MODEL_TENSORDEC, (const gfloat *) map.data,
        setup->n_classes, f->n_anchors, setup);
    gst_buffer_unmap (f->tensors[frame], &map);

    rc = run_element (hc, f, frame);
    rt = run_element (ht, f, frame);
    assert_same (rc, mc, "cudanms", frame);
    assert_same (rt, mt, "yolov8tensordec", frame);
    tally_frame (&tally, mc, mb, mt);
    g_array_unref (mc);
    g_array_unref (mb);
    g_array_unref (mt);
    g_array_unref (rc);
    g_array_unref (rt);
  }
  g_print ("yolov8tensordec comparison, %s: %u frames %dx%d, %d classes, "
      "score > %g, IoU > %g suppresses, class-agnostic, at most %d: cudanms "
      "kept %u boxes, yolov8tensordec %u; %u common (class and score bits "
      "identical; %u with another x,y,w,h), %u only cudanms, %u only "
      "yolov8tensordec; of these %u change with clipping and %u with "
      "integer boxes (cudanms == its model, yolov8tensordec == its model, "
      "box for box)\n", setup->name, setup->n_frames, setup->size,
      setup->size, setup->n_classes, setup->score_threshold, setup->iou,
      setup->max_detections, tally.cudanms, tally.tensordec, tally.common,
      tally.moved, tally.only_cudanms, tally.only_tensordec,
      tally.by_clipping, tally.by_integer_boxes);
  gst_harness_teardown (hc);
  gst_harness_teardown (ht);
  td_frames_free (f);
}

GST_START_TEST (test_normal_frames)
{
  compare (&td_normal);
}

GST_END_TEST;

GST_START_TEST (test_edge_frames)
{
  compare (&td_edges);
}

GST_END_TEST;

GST_START_TEST (test_dense_frames)
{
  compare (&td_dense);
}

GST_END_TEST;

static Suite *
tensordec_suite (void)
{
  Suite *s = suite_create ("analytics-tensordec");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_normal_frames);
  tcase_add_test (tc, test_edge_frames);
  tcase_add_test (tc, test_dense_frames);
  return s;
}

ANALYTICS_TEST_MAIN (tensordec, "yolov8tensordec");
#else
ANALYTICS_SKIP_MAIN ("GStreamer >= 1.26 analytics");
#endif
