/* What a kept record carries besides its box: the heads a layout asks of
 * the backend after NMS (keypoints, masks), the place of each record's
 * values in the call's one payload buffer (cnms_payload), and the lanes'
 * rule (a lane is its points in the frame: fewer than two are no lane). */
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "cnms_heads.h"

/* The least points in the frame that make a lane. */
#define LANE_POINTS_MIN 2

/* What each head is to the front end: the floats a point of its payload
 * holds (0: bytes), whether the backend makes it after NMS (else the
 * detect returns it with the records), and what its values are called. */
static const struct {
  int point_dims;
  int after_nms;
  int batched;                  /* a batch's frames share the backend's
                                 * batch (the heads after it, frame by
                                 * frame), rather than one detect each */
  const char *values;
} heads[] = {
  {0, 0, 1, "nothing"},         /* CNMS_HEAD_NONE */
  {2, 0, 1, "lane points"},     /* CNMS_HEAD_LANE: the backend's batch
                                 * makes them with the records */
  {3, 1, 1, "keypoints"},       /* CNMS_HEAD_KEYPOINTS */
  /* masks: in the batch's launches (CUDA, device tensors), else after
   * the batch's engine, frame by frame, which measured faster than a
   * detect each (docs/performance.md, "Batches") */
  {0, 1, 1, "masks"},           /* CNMS_HEAD_MASK */
};

int
cnms_head_batched (cnms_head head)
{
  return heads[head].batched;
}

/* The points of a record's payload under shape (0: bytes). */
static int
head_points (cnms_head head, const cnms_shape *shape)
{
  return head == CNMS_HEAD_LANE ? shape->n_lane_rows :
      head == CNMS_HEAD_KEYPOINTS ? shape->n_keypoints : 0;
}

int
cnms_heads_init (cnms_heads_args *h, const cnms_job *job, cnms_head head,
    const cnms_tensor *t, const cnms_tensor *protos, const cnms_shape *shape)
{
  memset (h, 0, sizeof *h);
  if (!heads[head].after_nms)
    return 0;
  h->kind = head;
  h->t = t;
  h->protos = protos;
  h->shape = *shape;
  /* the payload rows follow cx cy w h and the scores */
  h->row0 = 4 + shape->n_classes;
  h->model_w = job->p->model_width;
  h->model_h = job->p->model_height;
  cnms_map_init (&h->map, job->p->model_width, job->p->model_height,
      job->p->frame_width, job->p->frame_height, job->p->letterbox);
  return 1;
}

/* Room for n entries of the payload table. */
static cnms_status
reserve_table (cnms_ctx *ctx, int n)
{
  cnms_payload *t;

  if ((size_t) n + 1 <= ctx->payload_cap)
    return CNMS_OK;
  t = realloc (ctx->payload, ((size_t) n + 1) * sizeof *t);
  if (t == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
        "cannot allocate the payload table of %d records", n);
  ctx->payload = t;
  ctx->payload_cap = (size_t) n + 1;
  ctx->b.alloc_count++;
  return CNMS_OK;
}

cnms_status
cnms_payload_table (cnms_ctx *ctx, cnms_head head, const cnms_shape *shape,
    const cnms_det *dets, int n, size_t *bytes)
{
  const int points = head_points (head, shape);
  const int dims = heads[head].point_dims;
  const size_t each = (size_t) points * (size_t) dims * sizeof (float);
  size_t total = 0;
  cnms_status st;
  int i;

  *bytes = 0;
  if (head == CNMS_HEAD_NONE)
    return CNMS_OK;
  st = reserve_table (ctx, n);
  if (st != CNMS_OK)
    return st;
  for (i = 0; i < n; i++) {
    cnms_payload *r = &ctx->payload[i];

    memset (r, 0, sizeof *r);
    r->offset = total;
    if (head == CNMS_HEAD_MASK) {
      cnms_mask_rect (dets[i].x1, dets[i].y1, dets[i].x2, dets[i].y2,
          &r->x, &r->y, &r->width, &r->height);
      total += (size_t) r->width * (size_t) r->height;
      if (total > CNMS_MASK_BYTES_MAX)
        return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
            "the masks of %d records take more than %zu bytes", n,
            CNMS_MASK_BYTES_MAX);
    } else {
      r->n_points = points;
      r->point_dims = dims;
      total += each;
    }
  }
  *bytes = total;
  return CNMS_OK;
}

/* The points of lane row i that lie in the frame: both values a number. */
static int
lane_points (const float *pts, int n_rows)
{
  int i, k = 0;

  for (i = 0; i < n_rows; i++)
    k += pts[2 * i] == pts[2 * i] && pts[2 * i + 1] == pts[2 * i + 1];
  return k;
}

cnms_status
cnms_lanes_in_frame (cnms_ctx *ctx, const cnms_shape *shape,
    const cnms_det **dets, int *n, const void **points)
{
  const size_t s2 = 2 * (size_t) shape->n_lane_rows;
  const float *pts = *points;
  int i, k, short_lanes = 0;

  for (i = 0; i < *n; i++)
    short_lanes += lane_points (pts + (size_t) i * s2, shape->n_lane_rows)
        < LANE_POINTS_MIN;
  ctx->b.report.lanes_without_points = short_lanes;
  if (short_lanes == 0)
    return CNMS_OK;
  /* the lanes with their points, in kept order, into the front end's
   * own arrays */
  if ((size_t) *n > ctx->lane_dets_cap) {
    cnms_det *d = realloc (ctx->lane_dets, (size_t) *n * sizeof *d);

    if (d == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate %d lanes", *n);
    ctx->lane_dets = d;
    ctx->lane_dets_cap = (size_t) *n;
    ctx->b.alloc_count++;
  }
  if ((size_t) *n * s2 > ctx->lane_points_cap) {
    float *p = realloc (ctx->lane_points, (size_t) *n * s2 * sizeof *p);

    if (p == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the points of %d lanes", *n);
    ctx->lane_points = p;
    ctx->lane_points_cap = (size_t) *n * s2;
    ctx->b.alloc_count++;
  }
  for (i = 0, k = 0; i < *n; i++) {
    const float *lp = pts + (size_t) i * s2;

    if (lane_points (lp, shape->n_lane_rows) < LANE_POINTS_MIN)
      continue;
    ctx->lane_dets[k] = (*dets)[i];
    memcpy (ctx->lane_points + (size_t) k * s2, lp, s2 * sizeof (float));
    k++;
  }
  *dets = ctx->lane_dets;
  *n = k;
  *points = ctx->lane_points;
  return CNMS_OK;
}

/* Are the values the backend made with the detect (out: a batch's
 * heads) those of the front end's table (h->masks for n records, bytes
 * in all)? Their bytes, and for masks every record's rectangle and
 * offset as the backend made them. */
static int
backend_values_fit (const cnms_heads_args *h, const cnms_backend_out *out,
    int n, size_t bytes)
{
  int i;

  if (out->payload_bytes != bytes)
    return 0;
  if (h->kind != CNMS_HEAD_MASK)
    return 1;
  if (out->payload_table == NULL)
    return 0;
  for (i = 0; i < n; i++) {
    const cnms_payload *a = &h->masks[i], *b = &out->payload_table[i];

    if (a->offset != b->offset || a->x != b->x || a->y != b->y
        || a->width != b->width || a->height != b->height
        || a->n_points != b->n_points || a->point_dims != b->point_dims)
      return 0;
  }
  return 1;
}

/* The heads h of the records the backend kept: the payload table, then
 * the values: those the backend made with the detect when they fit the
 * table (else out->payload and payload_table are cleared), or the heads
 * call's. */
static cnms_status
run_heads (cnms_ctx *ctx, const cnms_job *job, cnms_heads_args *h,
    const cnms_shape *shape, cnms_backend_out *out)
{
  const void *values = NULL;
  size_t bytes = 0;
  cnms_status st;

  st = cnms_payload_table (ctx, h->kind, shape, out->dets, out->n_dets,
      &bytes);
  if (st != CNMS_OK)
    return st;
  h->masks = ctx->payload;
  h->mask_bytes = bytes;
  /* made with the detect (a batch's keypoints and masks), or now */
  if (out->payload != NULL
      && !backend_values_fit (h, out, out->n_dets, bytes)) {
    out->payload = NULL;
    out->payload_table = NULL;
  }
  values = out->payload;
  if (values == NULL && ctx->ops->heads == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend makes no %s", ctx->ops->name, heads[h->kind].values);
  if (values == NULL) {
    st = ctx->ops->heads (&ctx->b, job, h, out->dets, out->n_dets, &values);
    if (st != CNMS_OK)
      return st;
  }
  if (values == NULL && out->n_dets > 0)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend returned no %s", ctx->ops->name,
        heads[h->kind].values);
  cnms_payload_set (ctx, h->kind, out->n_dets, values, bytes);
  return CNMS_OK;
}

cnms_status
cnms_payload_finish (cnms_ctx *ctx, const cnms_job *job, cnms_head head,
    cnms_heads_args *h, const cnms_shape *shape, cnms_backend_out *out)
{
  size_t bytes = 0;
  cnms_status st;

  if (heads[head].after_nms)
    return run_heads (ctx, job, h, shape, out);
  if (head == CNMS_HEAD_NONE)
    return CNMS_OK;
  /* the detect's own values: the lanes', of which those with points
   * enough are the lanes */
  st = cnms_lanes_in_frame (ctx, shape, &out->dets, &out->n_dets,
      &out->payload);
  if (st == CNMS_OK)
    st = cnms_payload_table (ctx, head, shape, out->dets, out->n_dets,
        &bytes);
  if (st == CNMS_OK)
    cnms_payload_set (ctx, head, out->n_dets, out->payload, bytes);
  return st;
}

void
cnms_payload_clear (cnms_ctx *ctx)
{
  memset (&ctx->out, 0, sizeof ctx->out);
}

void
cnms_payload_set (cnms_ctx *ctx, cnms_head head, int n, const void *data,
    size_t size)
{
  ctx->out.head = head;
  ctx->out.n = n;
  ctx->out.records = ctx->payload;
  ctx->out.data = data;
  ctx->out.size = size;
}

void
cnms_ctx_payload (const cnms_ctx *ctx, cnms_payloads *out)
{
  if (out == NULL)
    return;
  if (ctx == NULL)
    memset (out, 0, sizeof *out);
  else
    *out = ctx->out;
}
