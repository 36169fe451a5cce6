/* Small tensor builders shared by the decode tests. */
#ifndef CNMS_TEST_TENSORS_H
#define CNMS_TEST_TENSORS_H

#include <string.h>

#include "cudanms.h"

/* A float32 tensor [1, a, b] over data. */
static inline cnms_tensor
tensor3 (const float *data, int a, int b)
{
  cnms_tensor t;

  memset (&t, 0, sizeof t);
  t.data = data;
  t.size = (size_t) a * (size_t) b * sizeof (float);
  t.dtype = CNMS_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = 1;
  t.dims[1] = a;
  t.dims[2] = b;
  return t;
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

#endif /* CNMS_TEST_TENSORS_H */
