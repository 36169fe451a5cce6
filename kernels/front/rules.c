/* The parameters of a call: their defaults, their checks, and the
 * per-class rules (thresholds, IoUs, caps) they resolve to, as the
 * backends read them (cnms_class_rules). */
#include <stdlib.h>
#include <string.h>

#include "front.h"

void
cnms_params_init (cnms_params *p)
{
  if (p == NULL)
    return;
  memset (p, 0, sizeof *p);
  p->score_threshold = CNMS_DEFAULT_SCORE_THRESHOLD;
  p->iou = CNMS_DEFAULT_IOU;
  p->max_detections = CNMS_DEFAULT_MAX_DETECTIONS;
  p->max_candidates = CNMS_DEFAULT_MAX_CANDIDATES;
  p->class_agnostic = 0;
  p->model_width = CNMS_DEFAULT_MODEL_WIDTH;
  p->model_height = CNMS_DEFAULT_MODEL_HEIGHT;
  p->frame_width = CNMS_DEFAULT_MODEL_WIDTH;
  p->frame_height = CNMS_DEFAULT_MODEL_HEIGHT;
  p->letterbox = CNMS_DEFAULT_LETTERBOX;
  p->lane_distance = CNMS_DEFAULT_LANE_DISTANCE;
}

void
cnms_class_params_init (cnms_class_params *c, const cnms_params *p)
{
  if (c == NULL)
    return;
  c->score_threshold = p ? p->score_threshold : CNMS_DEFAULT_SCORE_THRESHOLD;
  c->iou = p ? p->iou : CNMS_DEFAULT_IOU;
  c->max_detections = 0;
}

cnms_status
cnms_check_params (cnms_ctx *ctx, const cnms_params *p)
{
  int i;

  if (p->score_threshold != p->score_threshold)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "score threshold is NaN");
  if (!(p->iou >= 0.0f && p->iou <= 1.0f))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "iou %g is outside [0, 1]", (double) p->iou);
  if (p->max_detections < 1)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "max-detections %d must be >= 1", p->max_detections);
  if (p->max_candidates < 1)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "max-candidates %d must be >= 1", p->max_candidates);
  if (p->model_width < 1 || p->model_height < 1)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "model size %dx%d must be at least 1x1", p->model_width,
        p->model_height);
  if (p->frame_width < 1 || p->frame_height < 1)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "frame size %dx%d must be at least 1x1", p->frame_width,
        p->frame_height);
  if (!(p->min_width >= 0.0f && p->min_height >= 0.0f)
      || !cnms_isfinite (p->min_width) || !cnms_isfinite (p->min_height))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "minimum box size %gx%g must be finite and >= 0",
        (double) p->min_width, (double) p->min_height);
  if (p->max_detections_per_class < 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "max-detections-per-class %d must be >= 0",
        p->max_detections_per_class);
  if (p->n_classes < 0 || p->n_classes > CNMS_MAX_CLASS_PARAMS
      || (p->n_classes > 0 && p->classes == NULL))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%d per-class entries (%s): 0 to %d, with their array",
        p->n_classes, p->classes ? "given" : "NULL", CNMS_MAX_CLASS_PARAMS);
  for (i = 0; i < p->n_classes; i++) {
    const cnms_class_params *c = &p->classes[i];

    if (c->score_threshold != c->score_threshold)
      return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
          "class %d: score threshold is NaN", i);
    if (!(c->iou >= 0.0f && c->iou <= 1.0f))
      return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
          "class %d: iou %g is outside [0, 1]", i, (double) c->iou);
    if (c->max_detections < 0)
      return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
          "class %d: max-detections %d must be >= 0", i, c->max_detections);
  }
  return CNMS_OK;
}

cnms_status
cnms_resolve_rules (cnms_ctx *ctx, const cnms_params *p, cnms_class_rules *r)
{
  int i, n = p->n_classes;

  if (n > ctx->rule_cap) {
    float *thr = realloc (ctx->rule_thr, (size_t) n * sizeof (float));
    float *iou = thr ? realloc (ctx->rule_iou, (size_t) n * sizeof (float))
        : NULL;
    int32_t *caps = iou ? realloc (ctx->rule_caps,
        (size_t) n * sizeof (int32_t)) : NULL;

    if (thr != NULL)
      ctx->rule_thr = thr;
    if (iou != NULL)
      ctx->rule_iou = iou;
    if (caps == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the rules of %d classes", n);
    ctx->rule_caps = caps;
    ctx->rule_cap = n;
    ctx->b.alloc_count++;
  }
  memset (r, 0, sizeof *r);
  r->caps = p->max_detections_per_class > 0;
  r->thr_min = p->other_classes_filtered ? CNMS_INF : p->score_threshold;
  for (i = 0; i < n; i++) {
    ctx->rule_thr[i] = p->classes[i].score_threshold;
    ctx->rule_iou[i] = p->classes[i].iou;
    ctx->rule_caps[i] = p->classes[i].max_detections;
    r->caps |= p->classes[i].max_detections > 0;
    if (ctx->rule_thr[i] < r->thr_min)
      r->thr_min = ctx->rule_thr[i];
  }
  r->thr = n > 0 ? ctx->rule_thr : NULL;
  r->iou = n > 0 ? ctx->rule_iou : NULL;
  r->cap = n > 0 ? ctx->rule_caps : NULL;
  r->n = n;
  r->thr_rest = p->other_classes_filtered ? CNMS_INF : p->score_threshold;
  r->iou_rest = p->iou;
  r->cap_rest = p->max_detections_per_class;
  return CNMS_OK;
}
