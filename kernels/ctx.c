/* cudanms front end: argument checking, tensor shape rules, the
 * model->frame mapping and backend dispatch. Backends only ever see
 * validated input (see cnms_backend_ops). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnms_internal.h"
#include "cnms_heads.h"

/* A context: the backend it runs on, and the state that backend fills. */
struct cnms_ctx {
  const cnms_backend_ops *ops;
  cnms_backend backend;
  cnms_backend_ctx b;
  /* the per-class rules of the last call (grow-only, rule_cap entries) */
  float *rule_thr, *rule_iou;
  int rule_cap;
  /* per-class caps: kept boxes per class id, in an open-addressing table
   * (ids may reach 2^24), and the records that pass */
  int32_t *cap_ids;
  int *cap_counts;
  size_t cap_slots;
  cnms_det *capped;
  size_t capped_cap;
  /* the masks' table of the last seg detect (grow-only) */
  cnms_mask *masks;
  size_t masks_cap;
};

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
}

cnms_status
cnms_parse_size (const char *s, int *width, int *height)
{
  char *end = NULL;
  long long w, h;

  if (s == NULL || width == NULL || height == NULL)
    return CNMS_ERR_INVALID_ARG;
  /* digits only: strtoll would also take signs and spaces */
  if (*s < '0' || *s > '9')
    return CNMS_ERR_INVALID_ARG;
  w = strtoll (s, &end, 10);
  if (*end != 'x' && *end != 'X')
    return CNMS_ERR_INVALID_ARG;
  s = end + 1;
  if (*s < '0' || *s > '9')
    return CNMS_ERR_INVALID_ARG;
  h = strtoll (s, &end, 10);
  if (*end != '\0' || w < 1 || h < 1 || w > CNMS_SIZE_MAX
      || h > CNMS_SIZE_MAX)
    return CNMS_ERR_INVALID_ARG;
  *width = (int) w;
  *height = (int) h;
  return CNMS_OK;
}

void
cnms_floats_to_halfs (const float *f, size_t n, uint16_t *h)
{
  size_t i;

  for (i = 0; i < n; i++)
    h[i] = cnms_float_to_half (f[i]);
}

void
cnms_halfs_to_floats (const uint16_t *h, size_t n, float *f)
{
  size_t i;

  for (i = 0; i < n; i++)
    f[i] = cnms_half_to_float (h[i]);
}

static void
set_msg (char *msg, size_t msg_size, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static void
set_msg (char *msg, size_t msg_size, const char *fmt, ...)
{
  va_list ap;

  if (msg == NULL || msg_size == 0)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, msg_size, fmt, ap);
  va_end (ap);
}

/* "[1, 84, 8400]": every dim of t, as a message names a tensor. */
static const char *
dims_text (const cnms_tensor *t, char *buf, size_t size)
{
  size_t len = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < t->n_dims && i < CNMS_MAX_DIMS && len + 1 < size; i++) {
    int w = snprintf (buf + len, size - len, "%s%lld", i ? ", " : "[",
        (long long) t->dims[i]);
    if (w < 0)
      break;
    len += (size_t) w;
  }
  if (len + 1 < size)
    snprintf (buf + len, size - len, "]");
  return buf;
}

/* Does layout l fit the two trailing dims [a, b]? Fills out on success. */
static int
layout_fits (cnms_layout l, int64_t a, int64_t b, cnms_shape *out)
{
  switch (l) {
    case CNMS_LAYOUT_END2END:
      if (b != 6)
        return 0;
      out->n_anchors = (int) a;
      out->n_classes = 0;
      break;
    case CNMS_LAYOUT_YOLOV5:
      if (b < 6)
        return 0;
      out->n_anchors = (int) a;
      out->n_classes = (int) (b - 5);
      break;
    case CNMS_LAYOUT_YOLOV8:
      if (a < 5)
        return 0;
      out->n_anchors = (int) b;
      out->n_classes = (int) (a - 4);
      break;
    case CNMS_LAYOUT_YOLOV8_OBB:
      /* cx cy w h, at least one class, the angle */
      if (a < 6)
        return 0;
      out->n_anchors = (int) b;
      out->n_classes = (int) (a - 5);
      break;
    case CNMS_LAYOUT_LANEATT:
      /* two logits, start_y, start_x, length, S >= 2 x offsets */
      if (b < 7)
        return 0;
      out->n_anchors = (int) a;
      out->n_classes = (int) (b - 5);
      break;
    case CNMS_LAYOUT_YOLOV8_POSE:
      /* cx cy w h, the score, at least one keypoint of at least x y */
      if (a < 7)
        return 0;
      out->n_anchors = (int) b;
      out->n_classes = 1;
      break;
    case CNMS_LAYOUT_YOLOV8_SEG:
      /* cx cy w h, at least one class and one coefficient */
      if (a < 6)
        return 0;
      out->n_anchors = (int) b;
      out->n_classes = (int) (a - 4);
      break;
    default:
      return 0;
  }
  out->layout = l;
  return 1;
}

cnms_status
cnms_tensor_shape (const cnms_tensor *t, cnms_layout requested,
    cnms_shape *out, char *msg, size_t msg_size)
{
  size_t esize;
  int64_t a, b;
  int i;
  cnms_shape s;
  cnms_layout l;
  uint64_t count = 1;
  int empty;
  char dims[160];

  if (t == NULL || out == NULL) {
    set_msg (msg, msg_size, "tensor or shape pointer is NULL");
    return CNMS_ERR_INVALID_ARG;
  }
  esize = cnms_dtype_size (t->dtype);
  if (esize == 0) {
    set_msg (msg, msg_size, "unsupported tensor data type %d "
        "(expected float32 or float16)", (int) t->dtype);
    return CNMS_ERR_BAD_TENSOR;
  }
  if (t->n_dims == 3) {
    if (t->dims[0] != 1) {
      set_msg (msg, msg_size, "tensor batch dimension is %lld, expected 1",
          (long long) t->dims[0]);
      return CNMS_ERR_BAD_TENSOR;
    }
  } else if (t->n_dims != 2) {
    set_msg (msg, msg_size, "tensor has %d dims, expected [1, a, b] or "
        "[a, b]", t->n_dims);
    return CNMS_ERR_BAD_TENSOR;
  }
  a = t->dims[t->n_dims - 2];
  b = t->dims[t->n_dims - 1];
  /* An end2end model that found nothing answers [1, 0, 6]: a valid,
   * empty result. Every other zero dim is a bad tensor. */
  empty = a == 0 && b == 6 && (requested == CNMS_LAYOUT_AUTO
      || requested == CNMS_LAYOUT_END2END);
  for (i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || (t->dims[i] == 0 && !empty)) {
      set_msg (msg, msg_size, "tensor dim %d is %lld, must be > 0", i,
          (long long) t->dims[i]);
      return CNMS_ERR_BAD_TENSOR;
    }
    /* Each fits in int (an anchor or class count is an int). With the
     * batch dim 1, at most two of them multiply: no uint64 overflow. */
    if (t->dims[i] > INT32_MAX) {
      set_msg (msg, msg_size, "tensor dim %d is %lld, too large", i,
          (long long) t->dims[i]);
      return CNMS_ERR_BAD_TENSOR;
    }
    count *= (uint64_t) t->dims[i];
  }

  dims_text (t, dims, sizeof dims);
  l = requested;
  if (l == CNMS_LAYOUT_AUTO) {
    if (b == 6)
      l = CNMS_LAYOUT_END2END;
    else if (b >= 6 && a > b)
      l = CNMS_LAYOUT_YOLOV5;
    else if (a >= 5 && b > a)
      l = CNMS_LAYOUT_YOLOV8;
    else {
      set_msg (msg, msg_size, "cannot detect the layout of a %s tensor "
          "(expected [1,N,5+C], [1,4+C,N] or [1,K,6])", dims);
      return CNMS_ERR_BAD_TENSOR;
    }
  }
  if (!layout_fits (l, a, b, &s)) {
    set_msg (msg, msg_size, "a %s tensor does not fit layout %s", dims,
        cnms_layout_name (l));
    return CNMS_ERR_BAD_TENSOR;
  }
  if (count > SIZE_MAX / esize) {
    set_msg (msg, msg_size, "a %s tensor is too large", dims);
    return CNMS_ERR_BAD_TENSOR;
  }
  /* Exactly the dims' bytes: more is as wrong as less (dims [1, 84, 8000]
   * over 8400 anchors of data would read garbage without a word). */
  if (t->size != count * esize) {
    set_msg (msg, msg_size, "tensor data is %zu bytes, %llu %s for a "
        "%s %s tensor%s", t->size,
        (unsigned long long) count * esize,
        t->size < count * esize ? "needed" : "expected", dims,
        esize == 2 ? "float16" : "float32",
        t->size > count * esize ? " (longer than its dims say: wrong dims?)"
        : "");
    return CNMS_ERR_BAD_TENSOR;
  }
  if (t->data == NULL && count > 0) {
    set_msg (msg, msg_size, "tensor data pointer is NULL");
    return CNMS_ERR_BAD_TENSOR;
  }
  *out = s;
  set_msg (msg, msg_size, "%s", "");
  return CNMS_OK;
}

cnms_status
cnms_pose_shape (const cnms_tensor *t, int keypoint_dims, cnms_shape *out,
    int *n_keypoints, char *msg, size_t msg_size)
{
  cnms_shape s;
  cnms_status st;
  int64_t rows;
  int d = keypoint_dims == 0 ? 3 : keypoint_dims;
  char dims[160];

  if (d != 2 && d != 3) {
    set_msg (msg, msg_size, "keypoint dims %d: must be 2 or 3 (0: 3)",
        keypoint_dims);
    return CNMS_ERR_INVALID_ARG;
  }
  st = cnms_tensor_shape (t, CNMS_LAYOUT_YOLOV8_POSE, &s, msg, msg_size);
  if (st != CNMS_OK)
    return st;
  rows = t->dims[t->n_dims - 2];
  if ((rows - 5) % d != 0) {
    set_msg (msg, msg_size, "a %s yolov8-pose tensor: its %lld keypoint "
        "rows (after cx cy w h score) are not a multiple of %d values a "
        "keypoint (keypoint-dims)", dims_text (t, dims, sizeof dims),
        (long long) (rows - 5), d);
    return CNMS_ERR_BAD_TENSOR;
  }
  if (out != NULL)
    *out = s;
  if (n_keypoints != NULL)
    *n_keypoints = (int) ((rows - 5) / d);
  return CNMS_OK;
}

cnms_status
cnms_seg_shape (const cnms_tensor *dets, const cnms_tensor *protos,
    cnms_shape *out, int *n_coeffs, int *proto_height, int *proto_width,
    char *msg, size_t msg_size)
{
  cnms_shape s;
  cnms_status st;
  int64_t rows, m, hp, wp;
  uint64_t count;
  size_t esize;
  int i, lead;
  char dd[160], pd[160];

  if (protos == NULL) {
    set_msg (msg, msg_size, "yolov8-seg: the prototypes are missing "
        "(protos is NULL)");
    return CNMS_ERR_INVALID_ARG;
  }
  st = cnms_tensor_shape (dets, CNMS_LAYOUT_YOLOV8_SEG, &s, msg, msg_size);
  if (st != CNMS_OK)
    return st;
  dims_text (dets, dd, sizeof dd);
  dims_text (protos, pd, sizeof pd);
  if (protos->dtype != dets->dtype) {
    set_msg (msg, msg_size, "yolov8-seg: the prototypes are %s, the "
        "detections %s (one dtype for both)",
        protos->dtype == CNMS_DTYPE_FLOAT16 ? "float16" :
        protos->dtype == CNMS_DTYPE_FLOAT32 ? "float32" : "of no known dtype",
        dets->dtype == CNMS_DTYPE_FLOAT16 ? "float16" : "float32");
    return CNMS_ERR_BAD_TENSOR;
  }
  if (protos->n_dims != 3 && protos->n_dims != 4) {
    set_msg (msg, msg_size, "yolov8-seg: prototypes %s have %d dims, "
        "expected [1, M, Hp, Wp] or [M, Hp, Wp]", pd, protos->n_dims);
    return CNMS_ERR_BAD_TENSOR;
  }
  lead = protos->n_dims - 3;
  if (lead == 1 && protos->dims[0] != 1) {
    set_msg (msg, msg_size, "yolov8-seg: prototypes %s have batch %lld, "
        "expected 1", pd, (long long) protos->dims[0]);
    return CNMS_ERR_BAD_TENSOR;
  }
  m = protos->dims[lead];
  hp = protos->dims[lead + 1];
  wp = protos->dims[lead + 2];
  for (i = lead; i < protos->n_dims; i++)
    if (protos->dims[i] < 1 || (i > lead && protos->dims[i] > CNMS_SIZE_MAX)
        || protos->dims[i] > INT32_MAX) {
      set_msg (msg, msg_size, "yolov8-seg: prototypes %s: dim %d is %lld, "
          "must be in 1 .. %d", pd, i, (long long) protos->dims[i],
          i > lead ? CNMS_SIZE_MAX : INT32_MAX);
      return CNMS_ERR_BAD_TENSOR;
    }
  count = (uint64_t) m * (uint64_t) hp * (uint64_t) wp;
  if (count >= ((uint64_t) 1 << 31)) {
    set_msg (msg, msg_size, "yolov8-seg: prototypes %s are too large "
        "(2^31 values or more)", pd);
    return CNMS_ERR_BAD_TENSOR;
  }
  rows = dets->dims[dets->n_dims - 2];
  if (rows - 4 - m < 1) {
    set_msg (msg, msg_size, "yolov8-seg: detections %s have %lld rows, "
        "too few for cx cy w h, a class and the %lld coefficients of "
        "prototypes %s (wrong M?)", dd, (long long) rows, (long long) m, pd);
    return CNMS_ERR_BAD_TENSOR;
  }
  esize = cnms_dtype_size (protos->dtype);
  if (protos->size != count * esize) {
    set_msg (msg, msg_size, "yolov8-seg: prototypes %s are %zu bytes, "
        "%llu expected", pd, protos->size,
        (unsigned long long) (count * esize));
    return CNMS_ERR_BAD_TENSOR;
  }
  if (protos->data == NULL) {
    set_msg (msg, msg_size, "yolov8-seg: the prototypes' data pointer is "
        "NULL");
    return CNMS_ERR_BAD_TENSOR;
  }
  s.n_classes = (int) (rows - 4 - m);
  if (out != NULL)
    *out = s;
  if (n_coeffs != NULL)
    *n_coeffs = (int) m;
  if (proto_height != NULL)
    *proto_height = (int) hp;
  if (proto_width != NULL)
    *proto_width = (int) wp;
  set_msg (msg, msg_size, "%s", "");
  return CNMS_OK;
}

/* What a call leaves behind for the accessors (lane points, keypoints,
 * masks): nothing, until a call of their kind succeeds. */
static void
clear_outputs (cnms_ctx *ctx)
{
  ctx->b.lane_points = NULL;
  ctx->b.lane_rows = 0;
  ctx->b.keypoints = NULL;
  ctx->b.keypoints_k = 0;
  ctx->b.keypoints_d = 0;
  ctx->b.masks = NULL;
  ctx->b.mask_data = NULL;
  ctx->b.n_masks = 0;
}

cnms_status
cnms_ctx_new (cnms_backend backend, int device_id, cnms_ctx **out)
{
  cnms_ctx *ctx;
  cnms_status st;

  if (out == NULL)
    return CNMS_ERR_INVALID_ARG;
  *out = NULL;
  if (backend != CNMS_BACKEND_CPU && backend != CNMS_BACKEND_CUDA)
    return CNMS_ERR_INVALID_ARG;

  ctx = calloc (1, sizeof *ctx);
  if (ctx == NULL)
    return CNMS_ERR_NO_MEMORY;
  ctx->backend = backend;
  ctx->b.last_gpu_us = -1.0;
#if HAVE_CUDA
  ctx->ops = backend == CNMS_BACKEND_CPU ? &cnms_cpu_ops : &cnms_cuda_ops;
#else
  if (backend == CNMS_BACKEND_CUDA) {
    free (ctx);
    return CNMS_ERR_UNSUPPORTED;
  }
  ctx->ops = &cnms_cpu_ops;
#endif
  st = ctx->ops->create (&ctx->b, device_id);
  if (st != CNMS_OK) {
    free (ctx);
    return st;
  }
  *out = ctx;
  return CNMS_OK;
}

void
cnms_ctx_free (cnms_ctx *ctx)
{
  if (ctx == NULL)
    return;
  ctx->ops->destroy (&ctx->b);
  free (ctx->rule_thr);
  free (ctx->rule_iou);
  free (ctx->cap_ids);
  free (ctx->cap_counts);
  free (ctx->capped);
  free (ctx->masks);
  free (ctx);
}

cnms_backend
cnms_ctx_backend (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->backend : CNMS_BACKEND_CPU;
}

const char *
cnms_ctx_error (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.error : "no context";
}

uint64_t
cnms_ctx_alloc_count (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.alloc_count : 0;
}

void
cnms_ctx_memory (const cnms_ctx *ctx, size_t *host_bytes,
    size_t *pinned_bytes, size_t *device_bytes)
{
  if (host_bytes)
    *host_bytes = ctx ? ctx->b.host_bytes : 0;
  if (pinned_bytes)
    *pinned_bytes = ctx ? ctx->b.pinned_bytes : 0;
  if (device_bytes)
    *device_bytes = ctx ? ctx->b.device_bytes : 0;
}

const cnms_report *
cnms_ctx_report (const cnms_ctx *ctx)
{
  static const cnms_report none;

  return ctx != NULL ? &ctx->b.report : &none;
}

void
cnms_ctx_set_timing (cnms_ctx *ctx, int on)
{
  if (ctx != NULL) {
    ctx->b.timing = on != 0;
    ctx->b.last_gpu_us = -1.0;
  }
}

double
cnms_ctx_last_gpu_us (const cnms_ctx *ctx)
{
  return ctx != NULL ? ctx->b.last_gpu_us : -1.0;
}

static cnms_status
check_params (cnms_ctx *ctx, const cnms_params *p)
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

void
cnms_class_params_init (cnms_class_params *c, const cnms_params *p)
{
  if (c == NULL)
    return;
  c->score_threshold = p ? p->score_threshold : CNMS_DEFAULT_SCORE_THRESHOLD;
  c->iou = p ? p->iou : CNMS_DEFAULT_IOU;
  c->max_detections = 0;
}

/* The per-class rules of p into ctx's tables; *caps: some class has a cap
 * of its own. */
static cnms_status
resolve_rules (cnms_ctx *ctx, const cnms_params *p, cnms_class_rules *r,
    int *caps)
{
  int i, n = p->n_classes;

  *caps = 0;
  if (n > ctx->rule_cap) {
    float *thr = realloc (ctx->rule_thr, (size_t) n * sizeof (float));
    float *iou = thr ? realloc (ctx->rule_iou, (size_t) n * sizeof (float))
        : NULL;

    if (thr != NULL)
      ctx->rule_thr = thr;
    if (iou == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the rules of %d classes", n);
    ctx->rule_iou = iou;
    ctx->rule_cap = n;
    ctx->b.alloc_count++;
  }
  *caps = p->max_detections_per_class > 0;
  r->thr_min = p->other_classes_filtered ? CNMS_INF : p->score_threshold;
  for (i = 0; i < n; i++) {
    ctx->rule_thr[i] = p->classes[i].score_threshold;
    ctx->rule_iou[i] = p->classes[i].iou;
    *caps |= p->classes[i].max_detections > 0;
    if (ctx->rule_thr[i] < r->thr_min)
      r->thr_min = ctx->rule_thr[i];
  }
  r->thr = n > 0 ? ctx->rule_thr : NULL;
  r->iou = n > 0 ? ctx->rule_iou : NULL;
  r->n = n;
  r->thr_rest = p->other_classes_filtered ? CNMS_INF : p->score_threshold;
  r->iou_rest = p->iou;
  return CNMS_OK;
}

/* The cap of class c (0: none). */
static int
class_cap (const cnms_params *p, int32_t c)
{
  if (c >= 0 && c < p->n_classes && p->classes[c].max_detections > 0)
    return p->classes[c].max_detections;
  return p->max_detections_per_class;
}

/* Per-class caps, then the frame's, over the kept list dets[0 .. n) in
 * kept order, into ctx->capped. Boxes per class are counted in a table of
 * a power of two >= 2n slots keyed by class id (any id up to 2^24). */
static cnms_status
apply_caps (cnms_ctx *ctx, const cnms_params *p, const cnms_det *dets, int n,
    const cnms_det **out, int *n_out)
{
  size_t slots = 16, mask;
  int i, k = 0;

  while (slots < 2 * (size_t) n)
    slots *= 2;
  if ((size_t) n > ctx->capped_cap || slots > ctx->cap_slots) {
    cnms_det *c = realloc (ctx->capped, (size_t) (n > 0 ? n : 1) * sizeof *c);
    int32_t *ids = c ? realloc (ctx->cap_ids, slots * sizeof *ids) : NULL;
    int *counts = ids ? realloc (ctx->cap_counts, slots * sizeof *counts)
        : NULL;

    if (c != NULL) {
      ctx->capped = c;
      ctx->capped_cap = (size_t) (n > 0 ? n : 1);
    }
    if (ids != NULL)
      ctx->cap_ids = ids;
    if (counts == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate %d capped records", n);
    ctx->cap_counts = counts;
    ctx->cap_slots = slots;
    ctx->b.alloc_count++;
  }
  mask = slots - 1;
  for (i = 0; i < (int) slots; i++)
    ctx->cap_ids[i] = -1;
  for (i = 0; i < n && k < p->max_detections; i++) {
    int32_t c = dets[i].class_id;
    int cap = class_cap (p, c);

    if (cap > 0) {
      /* Fibonacci hashing; class ids of kept records are >= 0 */
      size_t h = ((uint32_t) c * 2654435769u) & mask;

      while (ctx->cap_ids[h] != -1 && ctx->cap_ids[h] != c)
        h = (h + 1) & mask;
      if (ctx->cap_ids[h] == -1) {
        ctx->cap_ids[h] = c;
        ctx->cap_counts[h] = 0;
      }
      if (ctx->cap_counts[h]++ >= cap)
        continue;
    }
    ctx->capped[k++] = dets[i];
  }
  if (k == 0) {
    /* no record: still a valid pointer, as every cnms_detect gives */
    static const cnms_det none[1];

    *out = none;
  } else {
    *out = ctx->capped;
  }
  *n_out = k;
  return CNMS_OK;
}

int
cnms_map_centre_box (const cnms_params *p, float cx, float cy, float w,
    float h, float out[4])
{
  cnms_map map;

  if (p == NULL || out == NULL || p->model_width < 1 || p->model_height < 1
      || p->frame_width < 1 || p->frame_height < 1)
    return 0;
  cnms_map_init (&map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  return cnms_map_cxcywh (&map, cx, cy, w, h, out);
}

/* Decode + NMS of t, whose shape is resolved (a yolov8 prefix for the
 * heads' layouts), and the caps: the common part of cnms_detect and the
 * heads' calls. ahead: the heads that follow (NULL: none), which the
 * backend may enqueue behind its NMS when no caps come after it. On
 * failure clears what it reported. */
static cnms_status
run_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_shape *shape,
    const cnms_params *p, const cnms_heads_args *ahead,
    const cnms_det **dets, int *n_dets)
{
  cnms_map map;
  cnms_status st;
  cnms_class_rules rules;
  cnms_params uncapped;
  const cnms_params *bp = p;
  int caps = 0;

  if (shape->n_anchors == 0) {
    /* an empty end2end result: nothing for a backend to do */
    static const cnms_det none[1];

    ctx->b.report.shape = *shape;
    *dets = none;
    return CNMS_OK;
  }
  cnms_map_init (&map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  map.min_w = p->min_width;
  map.min_h = p->min_height;
  st = resolve_rules (ctx, p, &rules, &caps);
  if (st != CNMS_OK)
    return st;
  if (caps) {
    /* the backend keeps every box NMS keeps: the caps come after */
    uncapped = *p;
    uncapped.max_detections = p->max_candidates;
    bp = &uncapped;
  }
  ctx->b.heads_ahead = caps ? NULL : ahead;
  st = ctx->ops->detect (&ctx->b, t, shape, bp, &map, &rules, dets, n_dets);
  ctx->b.heads_ahead = NULL;
  if (st == CNMS_OK && caps)
    st = apply_caps (ctx, p, *dets, *n_dets, dets, n_dets);
  if (st != CNMS_OK) {
    memset (&ctx->b.report, 0, sizeof ctx->b.report);
    *dets = NULL;
    *n_dets = 0;
    return st;
  }
  ctx->b.report.shape = *shape;
  ctx->b.report.candidates_dropped =
      ctx->b.report.candidates > p->max_candidates ?
      ctx->b.report.candidates - p->max_candidates : 0;
  ctx->b.report.kept = *n_dets;
  return CNMS_OK;
}

/* The first rows rows of a [1, a, N] / [a, N] tensor t (strided by N):
 * a yolov8 tensor [1, rows, N] of its own, at the same address. */
static void
row_prefix (const cnms_tensor *t, int rows, int n_classes, cnms_tensor *sub,
    cnms_shape *shape)
{
  *sub = *t;
  sub->dims[sub->n_dims - 2] = rows;
  sub->size = (size_t) rows * (size_t) t->dims[t->n_dims - 1]
      * cnms_dtype_size (t->dtype);
  shape->layout = CNMS_LAYOUT_YOLOV8;
  shape->n_anchors = (int) t->dims[t->n_dims - 1];
  shape->n_classes = n_classes;
}

/* The common checks of a detect call: params, and that a device tensor
 * comes to a CUDA context. */
static cnms_status
check_call (cnms_ctx *ctx, const cnms_params *p, const cnms_tensor *t)
{
  cnms_status st = check_params (ctx, p);

  if (st != CNMS_OK)
    return st;
  if (t != NULL && t->on_device && ctx->backend != CNMS_BACKEND_CUDA)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "a device tensor needs the CUDA backend (context is %s)",
        ctx->ops->name);
  return CNMS_OK;
}

/* Starts the heads' arguments of kind (CNMS_HEAD_*) for tensor t of n
 * anchors, payload from row row0: the model and its map from p. */
static void
heads_init (cnms_heads_args *h, int kind, const cnms_tensor *t, int n,
    int row0, const cnms_params *p)
{
  memset (h, 0, sizeof *h);
  h->kind = kind;
  h->t = t;
  h->n_anchors = n;
  h->row0 = row0;
  h->model_w = p->model_width;
  h->model_h = p->model_height;
  cnms_map_init (&h->map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
}

/* The heads of the kept records; on failure the call fails whole. */
static cnms_status
run_heads (cnms_ctx *ctx, const cnms_heads_args *h,
    const cnms_det **dets, int *n_dets)
{
  cnms_status st;

  if (ctx->ops->heads == NULL)
    st = cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend has no %s heads", ctx->ops->name,
        h->kind == CNMS_HEAD_POSE ? "pose" : "segmentation");
  else
    st = ctx->ops->heads (&ctx->b, h, *dets, *n_dets);
  if (st != CNMS_OK) {
    memset (&ctx->b.report, 0, sizeof ctx->b.report);
    clear_outputs (ctx);
    *dets = NULL;
    *n_dets = 0;
  }
  return st;
}

static int
pose_dims (int keypoint_dims)
{
  return keypoint_dims == 0 ? 3 : keypoint_dims;
}

cnms_status
cnms_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_layout layout,
    const cnms_params *p, const cnms_det **dets, int *n_dets)
{
  cnms_shape shape, sub_shape;
  cnms_tensor sub;
  cnms_heads_args h;
  cnms_status st;
  int k = 0;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  clear_outputs (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  if (t == NULL || p == NULL || dets == NULL || n_dets == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect: NULL argument");
  *dets = NULL;
  *n_dets = 0;
  if (layout < CNMS_LAYOUT_AUTO || layout > CNMS_LAYOUT_YOLOV8_SEG)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "unknown layout %d", (int) layout);
  if (layout == CNMS_LAYOUT_LANEATT)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "layout laneatt takes cnms_detect_lanes");
  if (layout == CNMS_LAYOUT_YOLOV8_SEG)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "layout yolov8-seg takes cnms_detect_seg (with its prototypes)");
  st = check_call (ctx, p, t);
  if (st != CNMS_OK)
    return st;
  if (layout != CNMS_LAYOUT_YOLOV8_POSE) {
    st = cnms_tensor_shape (t, layout, &shape, ctx->b.error,
        sizeof ctx->b.error);
    if (st != CNMS_OK)
      return st;
    return run_detect (ctx, t, &shape, p, NULL, dets, n_dets);
  }

  if (p->keypoint_dims != 0 && p->keypoint_dims != 2
      && p->keypoint_dims != 3)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "keypoint-dims %d must be 2 or 3 (0: 3)", p->keypoint_dims);
  st = cnms_pose_shape (t, p->keypoint_dims, &shape, &k, ctx->b.error,
      sizeof ctx->b.error);
  if (st != CNMS_OK)
    return st;
  heads_init (&h, CNMS_HEAD_POSE, t, shape.n_anchors, 5, p);
  h.n_keypoints = k;
  h.keypoint_dims = pose_dims (p->keypoint_dims);
  row_prefix (t, 5, 1, &sub, &sub_shape);
  st = run_detect (ctx, &sub, &sub_shape, p, &h, dets, n_dets);
  if (st != CNMS_OK)
    return st;
  ctx->b.report.shape = shape;
  st = run_heads (ctx, &h, dets, n_dets);
  if (st == CNMS_OK && ctx->b.keypoints == NULL)
    st = cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend returned no keypoints", ctx->ops->name);
  if (st == CNMS_OK) {
    ctx->b.keypoints_k = k;
    ctx->b.keypoints_d = h.keypoint_dims;
  }
  return st;
}

const float *
cnms_ctx_keypoints (const cnms_ctx *ctx, int *n_keypoints, int *n_dims)
{
  const float *kp = ctx != NULL ? ctx->b.keypoints : NULL;

  if (n_keypoints != NULL)
    *n_keypoints = kp != NULL ? ctx->b.keypoints_k : 0;
  if (n_dims != NULL)
    *n_dims = kp != NULL ? ctx->b.keypoints_d : 0;
  return kp;
}

/* The masks' table of n records: each record's pixel rectangle
 * (cnms_mask) and offset; CNMS_ERR_NO_MEMORY past CNMS_MASK_BYTES_MAX. */
static cnms_status
mask_table (cnms_ctx *ctx, const cnms_det *dets, int n, size_t *bytes)
{
  size_t total = 0;
  int i;

  if ((size_t) n + 1 > ctx->masks_cap) {
    cnms_mask *m = realloc (ctx->masks, ((size_t) n + 1) * sizeof *m);

    if (m == NULL)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "cannot allocate the table of %d masks", n);
    ctx->masks = m;
    ctx->masks_cap = (size_t) n + 1;
    ctx->b.alloc_count++;
  }
  for (i = 0; i < n; i++) {
    cnms_mask *m = &ctx->masks[i];

    cnms_mask_rect (dets[i].x1, dets[i].y1, dets[i].x2, dets[i].y2,
        &m->x, &m->y, &m->width, &m->height);
    m->offset = total;
    total += (size_t) m->width * (size_t) m->height;
    if (total > CNMS_MASK_BYTES_MAX)
      return cnms_fail (&ctx->b, CNMS_ERR_NO_MEMORY,
          "the masks of %d records take more than %zu bytes", n,
          CNMS_MASK_BYTES_MAX);
  }
  *bytes = total;
  return CNMS_OK;
}

cnms_status
cnms_detect_seg (cnms_ctx *ctx, const cnms_tensor *dets,
    const cnms_tensor *protos, const cnms_params *p, const cnms_det **out,
    int *n_out)
{
  cnms_shape shape, sub_shape;
  cnms_tensor sub;
  cnms_heads_args h;
  cnms_status st;
  int m = 0, hp = 0, wp = 0;
  size_t bytes = 0;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  clear_outputs (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  if (dets == NULL || p == NULL || out == NULL || n_out == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_seg: NULL argument");
  *out = NULL;
  *n_out = 0;
  if (protos == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_seg: the prototypes are missing (protos is NULL)");
  st = check_call (ctx, p, dets);
  if (st == CNMS_OK)
    st = check_call (ctx, p, protos);
  if (st != CNMS_OK)
    return st;
  st = cnms_seg_shape (dets, protos, &shape, &m, &hp, &wp, ctx->b.error,
      sizeof ctx->b.error);
  if (st != CNMS_OK)
    return st;
  heads_init (&h, CNMS_HEAD_SEG, dets, shape.n_anchors, 4 + shape.n_classes,
      p);
  h.protos = protos;
  h.n_coeffs = m;
  h.proto_h = hp;
  h.proto_w = wp;
  row_prefix (dets, 4 + shape.n_classes, shape.n_classes, &sub, &sub_shape);
  st = run_detect (ctx, &sub, &sub_shape, p, &h, out, n_out);
  if (st != CNMS_OK)
    return st;
  ctx->b.report.shape = shape;
  st = mask_table (ctx, *out, *n_out, &bytes);
  if (st != CNMS_OK) {
    memset (&ctx->b.report, 0, sizeof ctx->b.report);
    *out = NULL;
    *n_out = 0;
    return st;
  }
  h.masks = ctx->masks;
  h.mask_bytes = bytes;
  st = run_heads (ctx, &h, out, n_out);
  if (st == CNMS_OK && ctx->b.mask_data == NULL)
    st = cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend returned no masks", ctx->ops->name);
  if (st == CNMS_OK) {
    ctx->b.masks = ctx->masks;
    ctx->b.n_masks = *n_out;
  }
  return st;
}

const cnms_mask *
cnms_ctx_masks (const cnms_ctx *ctx, const uint8_t **data, int *n)
{
  const cnms_mask *m = ctx != NULL ? ctx->b.masks : NULL;

  if (data != NULL)
    *data = m != NULL ? ctx->b.mask_data : NULL;
  if (n != NULL)
    *n = m != NULL ? ctx->b.n_masks : 0;
  return m;
}

/* cnms_nms and cnms_nms_rotated: the checks, then the backend. */
static cnms_status
plain_nms (cnms_ctx *ctx, int geom, const char *fn, const float *boxes,
    const float *scores, const int32_t *classes, int n, float iou,
    int class_agnostic, int max_detections, int64_t *keep, int *n_keep)
{
  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  clear_outputs (ctx);
  if (n_keep == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: n_keep is NULL", fn);
  *n_keep = 0;
  if (n < 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: n = %d is negative", fn, n);
  if (n > 0 && (boxes == NULL || scores == NULL || keep == NULL))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "%s: NULL boxes, scores or keep", fn);
  if (!(iou >= 0.0f && iou <= 1.0f))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "iou %g is outside [0, 1]", (double) iou);
  if (n == 0)
    return CNMS_OK;
  return ctx->ops->nms (&ctx->b, geom, boxes, scores, classes, n, iou,
      class_agnostic, max_detections, keep, n_keep);
}

/* A lane distance: finite and >= 0 (model pixels). */
static cnms_status
check_distance (cnms_ctx *ctx, float distance)
{
  if (!(distance >= 0.0f) || !cnms_isfinite (distance))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "lane distance %g is not a finite value >= 0", (double) distance);
  if (ctx->ops->detect_lanes == NULL || ctx->ops->nms_lanes == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend does not run lanes", ctx->ops->name);
  return CNMS_OK;
}

cnms_status
cnms_detect_lanes (cnms_ctx *ctx, const cnms_tensor *t, const cnms_params *p,
    float distance, const cnms_det **dets, int *n_dets)
{
  cnms_shape shape;
  cnms_map map;
  cnms_status st;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  clear_outputs (ctx);
  memset (&ctx->b.report, 0, sizeof ctx->b.report);
  if (t == NULL || p == NULL || dets == NULL || n_dets == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_detect_lanes: NULL argument");
  *dets = NULL;
  *n_dets = 0;
  st = check_params (ctx, p);
  if (st == CNMS_OK)
    st = check_distance (ctx, distance);
  if (st != CNMS_OK)
    return st;
  if (t->on_device && ctx->backend != CNMS_BACKEND_CUDA)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "a device tensor needs the CUDA backend (context is %s)",
        ctx->ops->name);
  st = cnms_tensor_shape (t, CNMS_LAYOUT_LANEATT, &shape, ctx->b.error,
      sizeof ctx->b.error);
  if (st != CNMS_OK)
    return st;
  cnms_map_init (&map, p->model_width, p->model_height, p->frame_width,
      p->frame_height, p->letterbox);
  st = ctx->ops->detect_lanes (&ctx->b, t, &shape, p, &map, distance, dets,
      n_dets);
  if (st != CNMS_OK) {
    memset (&ctx->b.report, 0, sizeof ctx->b.report);
    clear_outputs (ctx);
    *dets = NULL;
    *n_dets = 0;
    return st;
  }
  ctx->b.report.shape = shape;
  ctx->b.report.candidates_dropped =
      ctx->b.report.candidates > p->max_candidates ?
      ctx->b.report.candidates - p->max_candidates : 0;
  ctx->b.report.kept = *n_dets;
  return CNMS_OK;
}

const float *
cnms_ctx_lane_points (const cnms_ctx *ctx, int *n_rows)
{
  if (n_rows != NULL)
    *n_rows = ctx != NULL && ctx->b.lane_points != NULL ? ctx->b.lane_rows : 0;
  return ctx != NULL ? ctx->b.lane_points : NULL;
}

cnms_status
cnms_nms_lanes (cnms_ctx *ctx, const float *proposals, int n_offsets,
    const float *scores, int n, float distance, int max_detections,
    int64_t *keep, int *n_keep)
{
  cnms_status st;

  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  clear_outputs (ctx);
  if (n_keep == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_nms_lanes: n_keep is NULL");
  *n_keep = 0;
  if (n < 0)
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_nms_lanes: n = %d is negative", n);
  if (n_offsets < 2 || n_offsets > (1 << 20))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_nms_lanes: n_offsets = %d is outside [2, 2^20]", n_offsets);
  if (n > 0 && (proposals == NULL || scores == NULL || keep == NULL))
    return cnms_fail (&ctx->b, CNMS_ERR_INVALID_ARG,
        "cnms_nms_lanes: NULL proposals, scores or keep");
  st = check_distance (ctx, distance);
  if (st != CNMS_OK || n == 0)
    return st;
  return ctx->ops->nms_lanes (&ctx->b, proposals, n_offsets, scores, n,
      distance, max_detections, keep, n_keep);
}

cnms_status
cnms_nms (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  return plain_nms (ctx, CNMS_GEOM_BOX, "cnms_nms", boxes, scores, classes,
      n, iou, class_agnostic, max_detections, keep, n_keep);
}

cnms_status
cnms_nms_rotated (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  return plain_nms (ctx, CNMS_GEOM_OBB, "cnms_nms_rotated", boxes, scores,
      classes, n, iou, class_agnostic, max_detections, keep, n_keep);
}

void
cnms_obb_corners (float cx, float cy, float w, float h, float angle,
    float out[8])
{
  double sd, cd;
  float sn, cs, ux, uy, vx, vy;

  cnms_sincos_d ((double) angle, &sd, &cd);
  sn = (float) sd;
  cs = (float) cd;
  ux = cnms_fmul (cnms_fmul (w, 0.5f), cs);
  uy = cnms_fmul (cnms_fmul (w, 0.5f), sn);
  vx = -cnms_fmul (cnms_fmul (h, 0.5f), sn);
  vy = cnms_fmul (cnms_fmul (h, 0.5f), cs);
  out[0] = cnms_fadd (cx, cnms_fadd (ux, vx));
  out[1] = cnms_fadd (cy, cnms_fadd (uy, vy));
  out[2] = cnms_fadd (cx, cnms_fsub (vx, ux));
  out[3] = cnms_fadd (cy, cnms_fsub (vy, uy));
  out[4] = cnms_fsub (cx, cnms_fadd (ux, vx));
  out[5] = cnms_fsub (cy, cnms_fadd (uy, vy));
  out[6] = cnms_fsub (cx, cnms_fsub (vx, ux));
  out[7] = cnms_fsub (cy, cnms_fsub (vy, uy));
}

void
cnms_obb_hull (const cnms_det *d, int frame_width, int frame_height,
    float out[4])
{
  float b[5];

  if (d == NULL || out == NULL)
    return;
  b[0] = d->cx;
  b[1] = d->cy;
  b[2] = d->w;
  b[3] = d->h;
  b[4] = d->angle;
  cnms_obb_hull_clipped (b, (float) frame_width, (float) frame_height, out);
}

cnms_status
cnms_ctx_set_cuda_stream (cnms_ctx *ctx, void *stream)
{
  if (ctx == NULL)
    return CNMS_ERR_INVALID_ARG;
  ctx->b.error[0] = '\0';
  if (ctx->ops->set_stream == NULL)
    return cnms_fail (&ctx->b, CNMS_ERR_UNSUPPORTED,
        "the %s backend has no CUDA stream", ctx->ops->name);
  return ctx->ops->set_stream (&ctx->b, stream);
}

void
cnms_ctx_test_option (cnms_ctx *ctx, int option, int value)
{
  if (ctx != NULL && ctx->ops->test_option != NULL)
    ctx->ops->test_option (&ctx->b, option, value);
}

int
cnms_cuda_device_count (void)
{
#if HAVE_CUDA
  return cnms_cuda_backend_device_count ();
#else
  return 0;
#endif
}

const char *
cnms_status_str (cnms_status s)
{
  switch (s) {
    case CNMS_OK:
      return "ok";
    case CNMS_ERR_INVALID_ARG:
      return "invalid argument";
    case CNMS_ERR_BAD_TENSOR:
      return "bad tensor";
    case CNMS_ERR_NO_MEMORY:
      return "out of memory";
    case CNMS_ERR_NO_DEVICE:
      return "no CUDA device";
    case CNMS_ERR_UNSUPPORTED:
      return "unsupported";
    case CNMS_ERR_CUDA:
      return "CUDA error";
    default:
      return "unknown status";
  }
}

const char *
cnms_layout_name (cnms_layout l)
{
  switch (l) {
    case CNMS_LAYOUT_AUTO:
      return "auto";
    case CNMS_LAYOUT_YOLOV5:
      return "yolov5";
    case CNMS_LAYOUT_YOLOV8:
      return "yolov8";
    case CNMS_LAYOUT_END2END:
      return "end2end";
    case CNMS_LAYOUT_YOLOV8_OBB:
      return "yolov8-obb";
    case CNMS_LAYOUT_LANEATT:
      return "laneatt";
    case CNMS_LAYOUT_YOLOV8_POSE:
      return "yolov8-pose";
    case CNMS_LAYOUT_YOLOV8_SEG:
      return "yolov8-seg";
    default:
      return "unknown";
  }
}
