/* The layouts: one table that names each layout and says what its tensor
 * holds, and the shape rules that read a tensor by it
 * (cnms_tensor_shape). The element's layout enum, the CLI's --layout and
 * the front end's checks all read the table; docs/design.md ("Adding a
 * layout, a geometry, a head") says what else a new layout touches. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "front.h"

/* By cnms_layout value. least and fixed count the rows of a [1, rows, N]
 * tensor (anchors_last) or the values of a [1, N, values] one. */
static const cnms_layout_row layouts[CNMS_N_LAYOUTS] = {
  {{CNMS_LAYOUT_AUTO, "auto", "Detect from the tensor dims", NULL,
          CNMS_HEAD_NONE, 0, 0}, 0, 0, 0, CNMS_GEOM_BOX},
  /* cx cy w h obj, C >= 1 class scores */
  {{CNMS_LAYOUT_YOLOV5, "yolov5", "YOLOv5/v7 [1, N, 5+C]", NULL,
          CNMS_HEAD_NONE, 0, 1}, 0, 6, 5, CNMS_GEOM_BOX},
  /* cx cy w h, C >= 1 class scores */
  {{CNMS_LAYOUT_YOLOV8, "yolov8", "YOLOv8/v11 [1, 4+C, N]", "yolo-v8-out",
          CNMS_HEAD_NONE, 0, 1}, 1, 5, 4, CNMS_GEOM_BOX},
  /* x1 y1 x2 y2 score class */
  {{CNMS_LAYOUT_END2END, "end2end", "End-to-end [1, K, 6], decode only",
          NULL, CNMS_HEAD_NONE, 0, 1}, 0, 6, 6, CNMS_GEOM_BOX, 1},
  /* cx cy w h, C >= 1 class scores, the angle */
  {{CNMS_LAYOUT_YOLOV8_OBB, "yolov8-obb", "YOLOv8/v11-OBB [1, 4+C+1, N], "
              "oriented boxes (cx cy w h, classes, angle)", "yolo-v8-obb-out",
          CNMS_HEAD_NONE, 1, 0}, 1, 6, 5, CNMS_GEOM_OBB},
  /* two logits, start_y, start_x, length, S >= 2 x offsets */
  {{CNMS_LAYOUT_LANEATT, "laneatt", "LaneATT [1, N, 5+S], lane proposals (2 "
              "logits, start_y, start_x, length, S x offsets)",
          "laneatt-proposals", CNMS_HEAD_LANE, 0, 0}, 0, 7, 5,
      CNMS_GEOM_LANE},
  /* cx cy w h, the person score, K >= 1 keypoints of D values */
  {{CNMS_LAYOUT_YOLOV8_POSE, "yolov8-pose", "YOLOv8/v11-pose [1, 4+1+K*D, "
              "N], keypoints (cx cy w h, person score, K keypoints of D "
              "values)", NULL, CNMS_HEAD_KEYPOINTS, 0, 0}, 1, 7, 5,
      CNMS_GEOM_BOX},
  /* cx cy w h, C >= 1 class scores, M >= 1 coefficients */
  {{CNMS_LAYOUT_YOLOV8_SEG, "yolov8-seg", "YOLOv8/v11-seg [1, 4+C+M, N] "
              "with prototypes [1, M, Hp, Wp], instance masks",
          "yolo-v8-segmentation-out-detections", CNMS_HEAD_MASK, 0, 0}, 1, 6,
      4, CNMS_GEOM_BOX},
};

const cnms_layout_row *
cnms_layout_row_of (cnms_layout l)
{
  return (int) l > 0 && (int) l < CNMS_N_LAYOUTS ? &layouts[l] : NULL;
}

const cnms_layout_desc *
cnms_layout_info (cnms_layout l)
{
  return (int) l >= 0 && (int) l < CNMS_N_LAYOUTS ? &layouts[l].d : NULL;
}

int
cnms_layout_from_name (const char *name)
{
  int i;

  for (i = 0; name != NULL && i < CNMS_N_LAYOUTS; i++)
    if (strcmp (layouts[i].d.name, name) == 0)
      return i;
  return -1;
}

const char *
cnms_layout_name (cnms_layout l)
{
  const cnms_layout_desc *d = cnms_layout_info (l);

  return d != NULL ? d->name : "unknown";
}

void
cnms_set_msg (char *msg, size_t msg_size, const char *fmt, ...)
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

/* Does layout l fit the two trailing dims [a, b]? Fills out's layout,
 * anchors, values and the count its rows give (classes, or a laneatt
 * tensor's lane rows) on success. */
static int
layout_fits (cnms_layout l, int64_t a, int64_t b, cnms_shape *out)
{
  const cnms_layout_row *r = cnms_layout_row_of (l);
  int64_t rows = 0;

  if (r == NULL)
    return 0;
  rows = r->anchors_last ? a : b;
  if (rows < r->least || (l == CNMS_LAYOUT_END2END && rows != 6))
    return 0;
  memset (out, 0, sizeof *out);
  out->layout = l;
  out->n_anchors = (int) (r->anchors_last ? b : a);
  out->n_values = (int) rows;
  switch (l) {
    case CNMS_LAYOUT_END2END:
      break;
    case CNMS_LAYOUT_LANEATT:
      out->n_classes = 1;
      out->n_lane_rows = (int) (rows - r->fixed);
      break;
    case CNMS_LAYOUT_YOLOV8_POSE:
      out->n_classes = 1;
      break;
    case CNMS_LAYOUT_YOLOV8_OBB:
      /* the angle after the classes */
      out->n_classes = (int) (rows - r->fixed);
      break;
    default:
      /* seg: the classes and the coefficients together, until the
       * prototypes tell them apart */
      out->n_classes = (int) (rows - r->fixed);
      break;
  }
  return 1;
}

/* The checks of one tensor under requested: its dims, dtype and bytes,
 * the layout (AUTO's rule) and its least rows. */
static cnms_status
tensor_shape (const cnms_tensor *t, cnms_layout requested, cnms_shape *out,
    char *msg, size_t msg_size)
{
  size_t esize;
  int64_t a, b;
  int i;
  cnms_shape s;
  cnms_layout l;
  uint64_t count = 1;
  int empty;
  char dims[160];

  esize = cnms_dtype_size (t->dtype);
  if (esize == 0) {
    cnms_set_msg (msg, msg_size, "unsupported tensor data type %d "
        "(expected float32 or float16)", (int) t->dtype);
    return CNMS_ERR_BAD_TENSOR;
  }
  if (t->n_dims == 3) {
    if (t->dims[0] != 1) {
      cnms_set_msg (msg, msg_size, "tensor batch dimension is %lld, "
          "expected 1", (long long) t->dims[0]);
      return CNMS_ERR_BAD_TENSOR;
    }
  } else if (t->n_dims != 2) {
    cnms_set_msg (msg, msg_size, "tensor has %d dims, expected [1, a, b] or "
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
      cnms_set_msg (msg, msg_size, "tensor dim %d is %lld, must be > 0", i,
          (long long) t->dims[i]);
      return CNMS_ERR_BAD_TENSOR;
    }
    /* Each fits in int (an anchor or class count is an int). With the
     * batch dim 1, at most two of them multiply: no uint64 overflow. */
    if (t->dims[i] > INT32_MAX) {
      cnms_set_msg (msg, msg_size, "tensor dim %d is %lld, too large", i,
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
      cnms_set_msg (msg, msg_size, "cannot detect the layout of a %s tensor "
          "(expected [1,N,5+C], [1,4+C,N] or [1,K,6])", dims);
      return CNMS_ERR_BAD_TENSOR;
    }
  }
  if (!layout_fits (l, a, b, &s)) {
    cnms_set_msg (msg, msg_size, "a %s tensor does not fit layout %s", dims,
        cnms_layout_name (l));
    return CNMS_ERR_BAD_TENSOR;
  }
  if (count > SIZE_MAX / esize) {
    cnms_set_msg (msg, msg_size, "a %s tensor is too large", dims);
    return CNMS_ERR_BAD_TENSOR;
  }
  /* Exactly the dims' bytes: more is as wrong as less (dims [1, 84, 8000]
   * over 8400 anchors of data would read garbage without a word). */
  if (t->size != count * esize) {
    cnms_set_msg (msg, msg_size, "tensor data is %zu bytes, %llu %s for a "
        "%s %s tensor%s", t->size,
        (unsigned long long) count * esize,
        t->size < count * esize ? "needed" : "expected", dims,
        esize == 2 ? "float16" : "float32",
        t->size > count * esize ? " (longer than its dims say: wrong dims?)"
        : "");
    return CNMS_ERR_BAD_TENSOR;
  }
  if (t->data == NULL && count > 0) {
    cnms_set_msg (msg, msg_size, "tensor data pointer is NULL");
    return CNMS_ERR_BAD_TENSOR;
  }
  *out = s;
  return CNMS_OK;
}

/* Pose: K = (rows - 5) / D keypoints of D values, exactly. */
static cnms_status
pose_shape (const cnms_tensor *t, int keypoint_dims, cnms_shape *s,
    char *msg, size_t msg_size)
{
  const int d = keypoint_dims == 0 ? 3 : keypoint_dims;
  const int64_t rows = s->n_values;
  char dims[160];

  if (d != 2 && d != 3) {
    cnms_set_msg (msg, msg_size, "keypoint-dims %d must be 2 or 3 (0: 3)",
        keypoint_dims);
    return CNMS_ERR_INVALID_ARG;
  }
  if ((rows - 5) % d != 0) {
    cnms_set_msg (msg, msg_size, "a %s yolov8-pose tensor: its %lld "
        "keypoint rows (after cx cy w h score) are not a multiple of %d "
        "values a keypoint (keypoint-dims)", dims_text (t, dims,
            sizeof dims), (long long) (rows - 5), d);
    return CNMS_ERR_BAD_TENSOR;
  }
  s->n_keypoints = (int) ((rows - 5) / d);
  s->keypoint_dims = d;
  return CNMS_OK;
}

static const char *
dtype_name (cnms_dtype d)
{
  return d == CNMS_DTYPE_FLOAT16 ? "float16" :
      d == CNMS_DTYPE_FLOAT32 ? "float32" : "of no known dtype";
}

/* Seg: the prototypes [1, M, Hp, Wp] tell the classes from the
 * coefficients. */
static cnms_status
seg_shape (const cnms_tensor *dets, const cnms_tensor *protos, cnms_shape *s,
    char *msg, size_t msg_size)
{
  const int64_t rows = s->n_values;
  int64_t m, hp, wp;
  uint64_t count;
  size_t esize;
  int i, lead;
  char dd[160], pd[160];

  dims_text (dets, dd, sizeof dd);
  dims_text (protos, pd, sizeof pd);
  if (protos->dtype != dets->dtype) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: the prototypes are %s, the "
        "detections %s (one dtype for both)", dtype_name (protos->dtype),
        dtype_name (dets->dtype));
    return CNMS_ERR_BAD_TENSOR;
  }
  if (protos->n_dims != 3 && protos->n_dims != 4) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: prototypes %s have %d dims, "
        "expected [1, M, Hp, Wp] or [M, Hp, Wp]", pd, protos->n_dims);
    return CNMS_ERR_BAD_TENSOR;
  }
  lead = protos->n_dims - 3;
  if (lead == 1 && protos->dims[0] != 1) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: prototypes %s have batch "
        "%lld, expected 1", pd, (long long) protos->dims[0]);
    return CNMS_ERR_BAD_TENSOR;
  }
  m = protos->dims[lead];
  hp = protos->dims[lead + 1];
  wp = protos->dims[lead + 2];
  for (i = lead; i < protos->n_dims; i++)
    if (protos->dims[i] < 1 || (i > lead && protos->dims[i] > CNMS_SIZE_MAX)
        || protos->dims[i] > INT32_MAX) {
      cnms_set_msg (msg, msg_size, "yolov8-seg: prototypes %s: dim %d is "
          "%lld, must be in 1 .. %d", pd, i, (long long) protos->dims[i],
          i > lead ? CNMS_SIZE_MAX : INT32_MAX);
      return CNMS_ERR_BAD_TENSOR;
    }
  count = (uint64_t) m * (uint64_t) hp * (uint64_t) wp;
  if (count >= ((uint64_t) 1 << 31)) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: prototypes %s are too large "
        "(2^31 values or more)", pd);
    return CNMS_ERR_BAD_TENSOR;
  }
  if (rows - 4 - m < 1) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: detections %s have %lld "
        "rows, too few for cx cy w h, a class and the %lld coefficients of "
        "prototypes %s (wrong M?)", dd, (long long) rows, (long long) m, pd);
    return CNMS_ERR_BAD_TENSOR;
  }
  esize = cnms_dtype_size (protos->dtype);
  if (protos->size != count * esize) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: prototypes %s are %zu bytes, "
        "%llu expected", pd, protos->size,
        (unsigned long long) (count * esize));
    return CNMS_ERR_BAD_TENSOR;
  }
  if (protos->data == NULL) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: the prototypes' data pointer "
        "is NULL");
    return CNMS_ERR_BAD_TENSOR;
  }
  s->n_classes = (int) (rows - 4 - m);
  s->n_coeffs = (int) m;
  s->proto_height = (int) hp;
  s->proto_width = (int) wp;
  return CNMS_OK;
}

cnms_status
cnms_tensor_shape (const cnms_tensor *t, const cnms_tensor *protos,
    cnms_layout requested, const cnms_params *p, cnms_shape *out, char *msg,
    size_t msg_size)
{
  const cnms_layout_desc *d;
  cnms_shape s;
  cnms_status st;

  if (t == NULL || out == NULL) {
    cnms_set_msg (msg, msg_size, "tensor or shape pointer is NULL");
    return CNMS_ERR_INVALID_ARG;
  }
  d = cnms_layout_info (requested);
  if (d == NULL) {
    cnms_set_msg (msg, msg_size, "unknown layout %d", (int) requested);
    return CNMS_ERR_INVALID_ARG;
  }
  if (d->head == CNMS_HEAD_MASK && protos == NULL) {
    cnms_set_msg (msg, msg_size, "yolov8-seg: the prototypes are missing "
        "(protos is NULL)");
    return CNMS_ERR_INVALID_ARG;
  }
  if (d->head != CNMS_HEAD_MASK && protos != NULL) {
    cnms_set_msg (msg, msg_size, "layout %s takes no prototypes (only "
        "yolov8-seg does)", d->name);
    return CNMS_ERR_INVALID_ARG;
  }
  if (requested == CNMS_LAYOUT_YOLOV8_POSE && p != NULL
      && p->keypoint_dims != 0 && p->keypoint_dims != 2
      && p->keypoint_dims != 3) {
    cnms_set_msg (msg, msg_size, "keypoint-dims %d must be 2 or 3 (0: 3)",
        p->keypoint_dims);
    return CNMS_ERR_INVALID_ARG;
  }
  st = tensor_shape (t, requested, &s, msg, msg_size);
  if (st == CNMS_OK && s.layout == CNMS_LAYOUT_YOLOV8_POSE)
    st = pose_shape (t, p != NULL ? p->keypoint_dims : 0, &s, msg, msg_size);
  else if (st == CNMS_OK && s.layout == CNMS_LAYOUT_YOLOV8_SEG)
    st = seg_shape (t, protos, &s, msg, msg_size);
  if (st != CNMS_OK)
    return st;
  *out = s;
  cnms_set_msg (msg, msg_size, "%s", "");
  return CNMS_OK;
}
