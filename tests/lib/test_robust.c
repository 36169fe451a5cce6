/* Bad and hostile input never crashes the library and gets a defined
 * answer: thousands of seeded random tensors (random dims, data types,
 * byte sizes short of the shape, NaN/Inf/huge values, random parameters)
 * through cnms_tensor_shape and cnms_detect on the CPU backend.
 *
 * For every call the status must be one of the documented ones, and every
 * successful result must satisfy the contract: at most max_detections
 * records, scores finite and above the threshold, boxes finite, inside the
 * frame and of positive size, anchors in range, order (score desc, anchor
 * asc), and no two kept boxes of one class with IoU above the threshold.
 * Run it under valgrind or ASan for memory errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudanms.h"
#include "cudanms_static.h"
#include "cnms_math.h"
#include "check.h"
#include "rng.h"

#define ITERATIONS 3000
#define MAX_ELEMS (1 << 16)

/* A raw state, not test_rng_seed's: it fixes this test's cases. */
static test_rng rng_state = { 0x5eedf00dULL };

static uint64_t
rng (void)
{
  return test_rng_next (&rng_state);
}

static int
rng_int (int lo, int hi)
{
  return lo + (int) (rng () % (uint64_t) (hi - lo + 1));
}

static float
rng_unit (void)
{
  return test_rng_unit (&rng_state);
}

/* A value of the kind detector outputs hold, or a hostile one. */
static float
random_value (void)
{
  switch (rng_int (0, 15)) {
    case 0:
      return NAN;
    case 1:
      return INFINITY;
    case 2:
      return -INFINITY;
    case 3:
      return 3.0e38f;
    case 4:
      return -rng_unit () * 1000.0f;
    case 5:
      return 0.0f;
    case 6:
    case 7:
    case 8:
      return rng_unit () * 640.0f;
    default:
      return rng_unit ();
  }
}

/* Checks the output contract of one successful cnms_detect. */
static int
contract_holds (const cnms_det *d, int n, const cnms_params *p,
    const cnms_shape *shape)
{
  /* end2end is decode only: no suppression to check */
  int nms = shape->layout != CNMS_LAYOUT_END2END;
  int i, j;

  if (n < 0 || n > p->max_detections)
    return 0;
  for (i = 0; i < n; i++) {
    if (!cnms_isfinite (d[i].score) || !(d[i].score > p->score_threshold))
      return 0;
    if (!(d[i].x1 >= 0 && d[i].y1 >= 0 && d[i].x2 <= p->frame_width
            && d[i].y2 <= p->frame_height && d[i].x2 > d[i].x1
            && d[i].y2 > d[i].y1))
      return 0;
    if (d[i].anchor < 0 || d[i].anchor >= shape->n_anchors
        || d[i].class_id < 0)
      return 0;
    if (i > 0 && cnms_sort_key (d[i - 1].score, (uint32_t) d[i - 1].anchor)
        >= cnms_sort_key (d[i].score, (uint32_t) d[i].anchor))
      return 0;
    for (j = 0; j < i && nms; j++) {
      const float *a = &d[j].x1, *b = &d[i].x1;
      if ((p->class_agnostic || d[j].class_id == d[i].class_id)
          && cnms_iou (a, cnms_box_area (a[0], a[1], a[2], a[3]), b,
              cnms_box_area (b[0], b[1], b[2], b[3])) > p->iou)
        return 0;
    }
  }
  return 1;
}

/* An angle that is no number has no corners: every coordinate NaN, and
 * no float-to-int conversion of it on the way (UBSan's float-cast-overflow
 * in the sanitizer build). */
static void
test_obb_corners_nonfinite (void)
{
  const float angles[3] = { NAN, INFINITY, -INFINITY };
  int a, i;

  for (a = 0; a < 3; a++) {
    float out[8];

    cnms_obb_corners (10.0f, 20.0f, 4.0f, 2.0f, angles[a], out);
    for (i = 0; i < 8; i++)
      CHECK (isnan (out[i]));
  }
}

int
main (void)
{
  static float f32[MAX_ELEMS];
  static uint16_t f16[MAX_ELEMS];
  cnms_ctx *ctx;
  int it, ok_calls = 0, bad_calls = 0, broken = 0, unexpected = 0;

  CHECK_INT (cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx), CNMS_OK);

  for (it = 0; it < ITERATIONS; it++) {
    cnms_tensor t;
    cnms_params p;
    cnms_shape shape;
    const cnms_det *dets = NULL;
    cnms_layout layout = (cnms_layout) rng_int (0, 3);
    cnms_status st;
    char msg[256];
    size_t elems = 1, need_bytes, i;
    int n_dets = -1, d, shaped = 0;

    memset (&t, 0, sizeof t);
    t.dtype = rng_int (0, 3) == 0 ? CNMS_DTYPE_FLOAT16 : CNMS_DTYPE_FLOAT32;
    t.n_dims = rng_int (0, 5);
    if (rng_int (0, 1)) {
      /* half the cases: a well-formed YOLO shape */
      int c = rng_int (1, 80), n = rng_int (1, 600);
      t.n_dims = 3;
      t.dims[0] = 1;
      switch (rng_int (0, 2)) {
        case 0:
          t.dims[1] = 4 + c;
          t.dims[2] = n + 4 + c;
          break;
        case 1:
          t.dims[1] = n + 6 + c;
          t.dims[2] = 5 + c + 1;
          break;
        default:
          t.dims[1] = n;
          t.dims[2] = 6;
          break;
      }
      elems = (size_t) t.dims[1] * (size_t) t.dims[2];
      shaped = 1;
    }
    for (d = 0; !shaped && d < t.n_dims; d++) {
      /* mostly YOLO-like shapes, sometimes zero, negative or enormous */
      switch (rng_int (0, 9)) {
        case 0:
          t.dims[d] = rng_int (-3, 0);
          break;
        case 1:
          t.dims[d] = (int64_t) 1 << rng_int (20, 62);
          break;
        case 2:
          t.dims[d] = 1;
          break;
        default:
          t.dims[d] = rng_int (1, 300);
          break;
      }
      if (t.dims[d] > 0 && elems <= MAX_ELEMS)
        elems *= (size_t) t.dims[d];
    }
    if (elems > MAX_ELEMS)
      elems = MAX_ELEMS;
    for (i = 0; i < elems; i++) {
      f32[i] = random_value ();
      f16[i] = (uint16_t) rng ();
    }
    need_bytes = elems * (t.dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4);
    t.data = t.dtype == CNMS_DTYPE_FLOAT16 ? (const void *) f16 : f32;
    /* sometimes short of what the dims promise */
    t.size = rng_int (0, 3) == 0 ? need_bytes / (size_t) rng_int (1, 4)
        : need_bytes;

    cnms_params_init (&p);
    p.score_threshold = rng_unit ();
    p.iou = rng_unit ();
    p.max_detections = rng_int (1, 400);
    p.max_candidates = rng_int (1, 5000);
    p.class_agnostic = rng_int (0, 1);
    p.letterbox = rng_int (0, 1);
    p.model_width = rng_int (1, 1280);
    p.model_height = rng_int (1, 1280);
    p.frame_width = rng_int (1, 4000);
    p.frame_height = rng_int (1, 4000);

    st = cnms_tensor_shape (&t, NULL, layout, NULL, &shape, msg, sizeof msg);
    if (st != CNMS_OK && st != CNMS_ERR_BAD_TENSOR)
      unexpected++;
    st = cnms_detect (ctx, &t, NULL, layout, &p, &dets, &n_dets);
    if (st == CNMS_OK) {
      ok_calls++;
      if (cnms_tensor_shape (&t, NULL, layout, NULL, &shape, NULL,
              0) != CNMS_OK || !contract_holds (dets, n_dets, &p, &shape))
        broken++;
    } else if (st == CNMS_ERR_BAD_TENSOR || st == CNMS_ERR_INVALID_ARG) {
      bad_calls++;
      if (cnms_ctx_error (ctx)[0] == '\0')
        broken++;               /* a rejection always says why */
    } else {
      unexpected++;
    }
  }

  CHECK_INT (unexpected, 0);
  CHECK_INT (broken, 0);
  /* both kinds of outcome are exercised */
  CHECK (ok_calls > 200);
  CHECK (bad_calls > 200);
  printf ("test-robust: %d calls, %d accepted, %d rejected\n", ITERATIONS,
      ok_calls, bad_calls);
  cnms_ctx_free (ctx);
  test_obb_corners_nonfinite ();
  return check_result ("test-robust");
}
