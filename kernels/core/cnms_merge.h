/* The arithmetic of the tiles' merge (cnms_merge, docs/contracts.md,
 * "Tiles"; docs/sahi-rules.md, section c): the first pass's float32
 * records, their order and match, NMM's dominance, the consistent rules'
 * float64 metric, the merge pass's re-check and what a merge does to the
 * merged box, score and class. Shared verbatim by the host merge
 * (kernels/front/tiles.c) and the CUDA merge (kernels/cuda/cuda_merge.cu),
 * every float operation one IEEE-754 round-to-nearest operation on both
 * sides, so that both give the same bits. */
#ifndef CNMS_MERGE_H
#define CNMS_MERGE_H

#include "cudanms.h"
#include "cnms_math.h"

/* A record as SAHI's first pass sees it: float32 values. */
typedef struct {
  float x1, y1, x2, y2, score, cls;
} cnms_merge_rec;

/* Is the double d finite (by its bits)? */
CNMS_HD int cnms_dfinite (double d)
{
  uint64_t u;

#ifdef __CUDA_ARCH__
  u = (uint64_t) __double_as_longlong (d);
#else
  memcpy (&u, &d, sizeof u);
#endif
  return (u & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
}

/* Does a record take part in the merge: its box (x1 y1 x2 y2) and score
 * finite? */
CNMS_HD int cnms_merge_takes_part (const double *box, double score)
{
  return cnms_dfinite (box[0]) && cnms_dfinite (box[1])
      && cnms_dfinite (box[2]) && cnms_dfinite (box[3])
      && cnms_dfinite (score);
}

/* The first pass's record of box, score and class: each value rounded to
 * float32. */
CNMS_HD cnms_merge_rec cnms_merge_rec_of (const double *box, double score,
    int32_t cls)
{
  cnms_merge_rec f;

  f.x1 = (float) box[0];
  f.y1 = (float) box[1];
  f.x2 = (float) box[2];
  f.y2 = (float) box[3];
  f.score = (float) score;
  f.cls = (float) cls;
  return f;
}

/* SAHI's walk order of two float32 records (np.lexsort ((y2, x2, y1, x1,
 * -score))): score descending, then x1, y1, x2, y2 ascending; < 0, a
 * first; > 0, b first; 0, the index decides. */
CNMS_HD int cnms_merge_order32 (const cnms_merge_rec *ra,
    const cnms_merge_rec *rb)
{
  if (ra->score != rb->score)
    return ra->score > rb->score ? -1 : 1;
  if (ra->x1 != rb->x1)
    return ra->x1 < rb->x1 ? -1 : 1;
  if (ra->y1 != rb->y1)
    return ra->y1 < rb->y1 ? -1 : 1;
  if (ra->x2 != rb->x2)
    return ra->x2 < rb->x2 ? -1 : 1;
  if (ra->y2 != rb->y2)
    return ra->y2 < rb->y2 ? -1 : 1;
  return 0;
}

/* The consistent rules' walk order: the same on the caller's doubles (box
 * x1 y1 x2 y2 and score of a and of b). */
CNMS_HD int cnms_merge_order64 (const double *ba, double sa,
    const double *bb, double sb)
{
  int k;

  if (sa != sb)
    return sa > sb ? -1 : 1;
  for (k = 0; k < 4; k++)
    if (ba[k] != bb[k])
      return ba[k] < bb[k] ? -1 : 1;
  return 0;
}

/* The first pass's match: the float32 IoU or IoS of a and b (each step
 * rounded to float32; 0 where its denominator is not > 0) >= thr. */
CNMS_HD int cnms_merge_match32 (const cnms_merge_rec *a,
    const cnms_merge_rec *b, cnms_match_metric metric, float thr)
{
  const float area_a = cnms_fmul (cnms_fsub (a->x2, a->x1),
      cnms_fsub (a->y2, a->y1));
  const float area_b = cnms_fmul (cnms_fsub (b->x2, b->x1),
      cnms_fsub (b->y2, b->y1));
  float iw = cnms_fsub (a->x2 < b->x2 ? a->x2 : b->x2,
      a->x1 > b->x1 ? a->x1 : b->x1);
  float ih = cnms_fsub (a->y2 < b->y2 ? a->y2 : b->y2,
      a->y1 > b->y1 ? a->y1 : b->y1);
  float inter, den, v = 0.0f;

  iw = iw > 0.0f ? iw : 0.0f;
  ih = ih > 0.0f ? ih : 0.0f;
  inter = cnms_fmul (iw, ih);
  den = metric == CNMS_MATCH_IOU ? cnms_fsub (cnms_fadd (area_a, area_b),
      inter) : (area_a < area_b ? area_a : area_b);
  if (den > 0.0f)
    v = cnms_fdiv (inter, den);
  return v >= thr;
}

/* The float64 intersection of a and b (x1 y1 x2 y2) into *inter and the
 * metric's denominator into *den. */
CNMS_HD void cnms_merge_parts64 (const double *a, const double *b,
    cnms_match_metric metric, double *inter, double *den)
{
  const double area_a = cnms_dmul (cnms_dsub (a[2], a[0]),
      cnms_dsub (a[3], a[1]));
  const double area_b = cnms_dmul (cnms_dsub (b[2], b[0]),
      cnms_dsub (b[3], b[1]));
  double w = cnms_dsub (a[2] < b[2] ? a[2] : b[2], a[0] > b[0] ? a[0] : b[0]);
  double h = cnms_dsub (a[3] < b[3] ? a[3] : b[3], a[1] > b[1] ? a[1] : b[1]);

  w = w > 0.0 ? w : 0.0;
  h = h > 0.0 ? h : 0.0;
  *inter = cnms_dmul (w, h);
  *den = metric == CNMS_MATCH_IOU ? cnms_dsub (cnms_dadd (area_a, area_b),
      *inter) : (area_a < area_b ? area_a : area_b);
}

/* The consistent rules' metric: the float64 IoU or IoS of a and b, 0
 * where its denominator is not > 0. */
CNMS_HD double cnms_merge_metric64 (const double *a, const double *b,
    cnms_match_metric metric)
{
  double inter, den;

  cnms_merge_parts64 (a, b, metric, &inter, &den);
  return den > 0.0 ? cnms_ddiv (inter, den) : 0.0;
}

/* SAHI's merge-time re-check: the float64 IoU or IoS of a and b > thr,
 * strictly; a zero denominator gives inf or NaN, as NumPy's scalar
 * division does (NaN > thr is false). */
CNMS_HD int cnms_merge_recheck (const double *a, const double *b,
    cnms_match_metric metric, double thr)
{
  double inter, den;

  cnms_merge_parts64 (a, b, metric, &inter, &den);
  return cnms_ddiv (inter, den) > thr;
}

/* Does i dominate j (SAHI's NMM): a higher float32 score, or an equal one
 * and (x1, y1, x2, y2) of i not lexicographically before j's. */
CNMS_HD int cnms_merge_dominates (const cnms_merge_rec *i,
    const cnms_merge_rec *j)
{
  if (i->score != j->score)
    return i->score > j->score;
  if (i->x1 != j->x1)
    return !(i->x1 < j->x1);
  if (i->y1 != j->y1)
    return !(i->y1 < j->y1);
  if (i->x2 != j->x2)
    return !(i->x2 < j->x2);
  return !(i->y2 < j->y2);
}

/* Does the merge pass take the absorbed box jb into box (merged so far)?
 * SAHI's rules: the re-check (> thr); the consistent ones: the metric
 * >= thr. */
CNMS_HD int cnms_merge_takes (const double *box, const double *jb,
    cnms_match_metric metric, double thr, int consistent)
{
  return consistent ? cnms_merge_metric64 (box, jb, metric) >= thr :
      cnms_merge_recheck (box, jb, metric, thr);
}

/* Merges the absorbed record (box jb, score js, class jc) into box,
 * *score and *cls: the enclosing box, the higher score; the class SAHI's
 * (the absorbed record's unless the merged score is higher) or the
 * consistent rules' (the merged class unless the absorbed score is
 * higher). */
CNMS_HD void cnms_merge_absorb (double *box, double *score, int32_t *cls,
    const double *jb, double js, int32_t jc, int consistent)
{
  if (consistent)
    *cls = js > *score ? jc : *cls;
  else
    *cls = *score > js ? *cls : jc;
  *score = *score >= js ? *score : js;
  box[0] = box[0] < jb[0] ? box[0] : jb[0];
  box[1] = box[1] < jb[1] ? box[1] : jb[1];
  box[2] = box[2] > jb[2] ? box[2] : jb[2];
  box[3] = box[3] > jb[3] ? box[3] : jb[3];
}

/* A result: box (x1 y1 x2 y2), score and class rounded to float, anchor
 * the keeping record, angle 0. */
CNMS_HD cnms_det cnms_merge_det (const double *box, double score,
    int32_t cls, int32_t k)
{
  cnms_det d;

  d.score = (float) score;
  d.x1 = (float) box[0];
  d.y1 = (float) box[1];
  d.x2 = (float) box[2];
  d.y2 = (float) box[3];
  d.class_id = cls;
  d.anchor = k;
  d.angle = 0.0f;
  return d;
}

#endif /* CNMS_MERGE_H */
