/* Small tensor builders shared by the decode tests, and cnms_detect
 * checked (check.h). */
#ifndef CNMS_TEST_TENSORS_H
#define CNMS_TEST_TENSORS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cudanms.h"
#include "check.h"

/* A host tensor of n_dims dims (d0, d1, d2: the first n_dims count) over
 * size bytes of data. */
static inline cnms_tensor
tensor_dims (const void *data, size_t size, cnms_dtype dtype, int n_dims,
    int64_t d0, int64_t d1, int64_t d2)
{
  cnms_tensor t;

  memset (&t, 0, sizeof t);
  t.data = data;
  t.size = size;
  t.dtype = dtype;
  t.n_dims = n_dims;
  t.dims[0] = d0;
  t.dims[1] = d1;
  t.dims[2] = d2;
  return t;
}

/* A float32 tensor [1, a, b] over data. */
static inline cnms_tensor
tensor3 (const float *data, int a, int b)
{
  return tensor_dims (data, (size_t) a * (size_t) b * sizeof (float),
      CNMS_DTYPE_FLOAT32, 3, 1, a, b);
}

/* Float to half for values that half holds exactly (normal numbers and
 * zero); returns 0 and leaves *out alone otherwise. */
static inline int
half_exact (float f, uint16_t *out)
{
  uint32_t u, sign, man;
  int exp;

  memcpy (&u, &f, sizeof u);
  sign = (u >> 16) & 0x8000u;
  if ((u & 0x7fffffffu) == 0) {
    *out = (uint16_t) sign;
    return 1;
  }
  exp = (int) ((u >> 23) & 0xffu) - 127 + 15;
  man = u & 0x7fffffu;
  if (exp < 1 || exp > 30 || (man & 0x1fffu) != 0)
    return 0;
  *out = (uint16_t) (sign | ((uint32_t) exp << 10) | (man >> 13));
  return 1;
}

/* YOLOv8 anchor n of a [1, 4+C, N] tensor. */
static inline void
put_v8 (float *t, int n_classes, int n_anchors, int n, float cx, float cy,
    float w, float h, const float *cls)
{
  int c;

  t[0 * n_anchors + n] = cx;
  t[1 * n_anchors + n] = cy;
  t[2 * n_anchors + n] = w;
  t[3 * n_anchors + n] = h;
  for (c = 0; c < n_classes; c++)
    t[(4 + c) * n_anchors + n] = cls[c];
}

/* YOLOv5 anchor n of a [1, N, 5+C] tensor. */
static inline void
put_v5 (float *t, int n_classes, int n, float cx, float cy, float w,
    float h, float obj, const float *cls)
{
  float *row = t + (size_t) n * (5 + n_classes);
  int c;

  row[0] = cx;
  row[1] = cy;
  row[2] = w;
  row[3] = h;
  row[4] = obj;
  for (c = 0; c < n_classes; c++)
    row[5 + c] = cls[c];
}

/* cnms_detect on ctx, checked to succeed (the context's message printed
 * when it fails); returns the record count, -1 on failure. */
static inline int
detect_checked (cnms_ctx *ctx, const cnms_tensor *t, cnms_layout layout,
    const cnms_params *p, const cnms_det **dets)
{
  int n = -1;
  cnms_status st = cnms_detect (ctx, t, NULL, layout, p, dets, &n);

  CHECK_INT (st, CNMS_OK);
  if (st != CNMS_OK) {
    fprintf (stderr, "  cnms_detect: %s\n", cnms_ctx_error (ctx));
    return -1;
  }
  return n;
}

/* Float i of kept record k's values in the payload pl (keypoints: x y
 * score triples; lane points: x y pairs), at pl->data +
 * pl->records[k].offset; NaN when pl holds no such record or value. */
static inline float
payload_float (const cnms_payloads *pl, int k, int i)
{
  const cnms_payload *r;

  if (pl->data == NULL || pl->records == NULL || k < 0 || k >= pl->n)
    return NAN;
  r = &pl->records[k];
  if (i < 0 || i >= r->n_points * r->point_dims)
    return NAN;
  return ((const float *) (const void *) (pl->data + r->offset))[i];
}

/* The context of a test binary: the CPU backend, or with the argument
 * "cuda" the CUDA backend (*backend says which). Returns 0 with *ctx, 77
 * when "cuda" finds no device, 1 when no context can be made. */
static inline int
test_ctx_from_args (int argc, char **argv, cnms_backend *backend,
    cnms_ctx **ctx)
{
  *ctx = NULL;
  if (argc > 1 && strcmp (argv[1], "cuda") == 0) {
    *backend = CNMS_BACKEND_CUDA;
    if (cnms_cuda_device_count () == 0) {
      printf ("no CUDA device: skipped\n");
      return 77;
    }
  }
  if (cnms_ctx_new (*backend, -1, ctx) != CNMS_OK) {
    fprintf (stderr, "cannot create a context\n");
    return 1;
  }
  return 0;
}

#endif /* CNMS_TEST_TENSORS_H */
