/* The points of a kept lane, shared by the backends (each calls it on
 * the host for its kept lanes, so that both give the same bits). */
#ifndef CNMS_LANES_H
#define CNMS_LANES_H

#include "cnms_internal.h"

/* Row i's y in model pixels: (S - 1 - i) / (S - 1) of the model height,
 * row 0 at the bottom. */
static inline float
cnms_lane_row_y (int i, int n, float mh)
{
  return cnms_fdiv (cnms_fmul ((float) (n - i), mh), (float) n);
}

/* The points of one kept lane (its proposal row r) into pts[2 S], NaN
 * where there is none, and its frame rectangle into rect (zeros when it
 * has no point). LaneATT's proposals_to_pred: rows start .. min (end,
 * S - 1), and below start the rows down to which every x lies in
 * [0, model width]; a row whose x is below 0 is none; then a point
 * outside the frame is none. */
static inline void
cnms_lane_points (const float *r, int n, const cnms_map *m, float mw, float mh,
    float *pts, float *rect)
{
  const float nan = cnms_bits_float (0x7fc00000u);
  const float *x = r + 5;
  int32_t start, end;
  int i, ext = 1, any = 0;

  rect[0] = rect[1] = rect[2] = rect[3] = 0.0f;
  for (i = 0; i <= n; i++)
    pts[2 * i] = pts[2 * i + 1] = nan;
  if (!cnms_lane_rows (r[2], r[4], n, &start, &end))
    return;
  if (end > n)
    end = n;
  for (i = n; i >= 0; i--) {
    int in;
    float fx, fy;

    if (i < start)
      ext = ext && x[i] >= 0.0f && x[i] <= mw;
    in = i <= end && (i >= start || ext) && x[i] >= 0.0f;
    if (!in)
      continue;
    fx = cnms_fdiv (cnms_fsub (x[i], m->pad_x), m->gain_x);
    fy = cnms_fdiv (cnms_fsub (cnms_lane_row_y (i, n, mh), m->pad_y), m->gain_y);
    if (!(fx >= 0.0f && fx <= m->frame_w && fy >= 0.0f && fy <= m->frame_h))
      continue;
    pts[2 * i] = fx;
    pts[2 * i + 1] = fy;
    if (!any) {
      rect[0] = rect[2] = fx;
      rect[1] = rect[3] = fy;
      any = 1;
    }
    rect[0] = cnms_fmin (rect[0], fx);
    rect[1] = cnms_fmin (rect[1], fy);
    rect[2] = cnms_fmax (rect[2], fx);
    rect[3] = cnms_fmax (rect[3], fy);
  }
}

#endif /* CNMS_LANES_H */
