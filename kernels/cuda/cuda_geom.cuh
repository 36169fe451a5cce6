/* The geometries of the engine (included by cuda_engine.cu through its
 * phases): what a sorted candidate is to the mask phase, what the sort
 * phase gathers for each of the first n sorted candidates, and the
 * suppression test the mask phase asks of two of them. The engine's
 * phases take the geometry as a template parameter (cnms_geom <GEOM>);
 * sort order, cap, resolve and output are the same for every geometry.
 *
 * - CNMS_GEOM_BOX: x1 y1 x2 y2 as a float4 (g.boxes), the area computed
 *   where a box is tested; the test is cnms_suppresses
 *   (cnms_box4_suppresses).
 * - CNMS_GEOM_OBB: cx cy w h angle, prepared once per sorted candidate by
 *   cnms_obb_prepare into its cnms_obb (g.obbs) and its widened hull
 *   (g.boxes); the test is cnms_obb_suppresses, whose hull check is the
 *   cheap first bound before the polygon clip.
 * - CNMS_GEOM_LANE: a LaneATT proposal, its rows and sort value (g.lanes)
 *   and its rectangle cnms_lane_rect (g.boxes); the test is
 *   cnms_lane_close.
 *
 * For all, g.boxes holds a rectangle that two boxes' rectangles must
 * overlap with positive area (cnms_hulls_meet) for one to suppress the
 * other: the pruned mask phase (cuda_prune.cuh) bins and tests by it. For
 * boxes, IoU > t >= 0 needs a positive intersection; for lanes,
 * cnms_lane_rect says why. */
#ifndef CNMS_CUDA_GEOM_CUH
#define CNMS_CUDA_GEOM_CUH

#include "cnms_cuda_device.cuh"

template <int GEOM> struct cnms_geom;

template <> struct cnms_geom <CNMS_GEOM_BOX> {
  /* blocks per multiprocessor the engine is compiled for (64 registers):
   * the plain NMS bitmask of large N wants the blocks */
  static constexpr int MIN_BLOCKS = 4;
  /* column tests of a row unrolled together in the mask phase */
  static constexpr int MASK_UNROLL = 4;

  /* a row box of the mask phase, in registers */
  struct item {
    float4 box;
    float area;
  };

  /* the 64 column boxes of a tile, staged in shared memory */
  struct tile {
    float4 box[CNMS_TILE];
    float area[CNMS_TILE];
  };

  /* Sorted position r has sort value v: its box and class. Returns the
   * box (what the pruned mask bins). */
  static __device__ __forceinline__ float4
  gather (const cnms_engine_args &g, int r, uint32_t v)
  {
    float4 b;
    int32_t c;

    cnms_cand_read (g.src, v, &b, &c);
    g.boxes[r] = b;
    g.cls[r] = c;
    return b;
  }

  static __device__ __forceinline__ item
  load (const cnms_engine_args &g, int i)
  {
    const float4 b = g.boxes[i];
    item it = { b, cnms_box4_area (b) };

    return it;
  }

  /* load (g, i) when g.boxes[i], b, is at hand */
  static __device__ __forceinline__ item
  from_box (const cnms_engine_args &g, int i, float4 b)
  {
    item it = { b, cnms_box4_area (b) };

    (void) g;
    (void) i;
    return it;
  }

  static __device__ __forceinline__ void
  stage (tile &t, int k, const item &it)
  {
    t.box[k] = it.box;
    t.area[k] = it.area;
  }

  /* Does row box a (class ca) suppress column box k of t (class ck)? */
  static __device__ __forceinline__ bool
  row_suppresses (const item &a, int32_t ca, const tile &t, int k,
      int32_t ck, float iou, int agnostic)
  {
    return cnms_box4_suppresses (a.box, a.area, ca, t.box[k], t.area[k], ck,
        iou, agnostic);
  }

  /* Does column box k of t (class ck) suppress row box b (class cb)? */
  static __device__ __forceinline__ bool
  col_suppresses (const tile &t, int k, int32_t ck, const item &b,
      int32_t cb, float iou, int agnostic)
  {
    return cnms_box4_suppresses (t.box[k], t.area[k], ck, b.box, b.area, cb,
        iou, agnostic);
  }

  /* Does row box a (class ca) suppress box b (class cb)? The same test as
   * row_suppresses, b loaded rather than staged. */
  static __device__ __forceinline__ bool
  pair_suppresses (const item &a, int32_t ca, const item &b, int32_t cb,
      float iou, int agnostic)
  {
    return cnms_box4_suppresses (a.box, a.area, ca, b.box, b.area, cb, iou,
        agnostic);
  }
};

template <> struct cnms_geom <CNMS_GEOM_OBB> {
  /* the polygon clip of the mask phase needs more than 64 registers */
  static constexpr int MIN_BLOCKS = 2;
  /* one polygon clip at a time: its vertex arrays are local memory */
  static constexpr int MASK_UNROLL = 1;

  /* a row box: prepared, and its hull x1 y1 x2 y2 */
  struct item {
    cnms_obb o;
    float hull[4];
  };

  struct tile {
    cnms_obb o[CNMS_TILE];
    float hull[CNMS_TILE][4];
  };

  /* Sorted position r has sort value v: its oriented box, prepared once
   * here (cnms_obb_prepare), its hull and its class. Returns the hull. */
  static __device__ __forceinline__ float4
  gather (const cnms_engine_args &g, int r, uint32_t v)
  {
    float cx, cy, w, h, angle, hull[4];
    int32_t c;
    cnms_obb o;

    if (g.src.recs != NULL) {
      const cnms_det rec = g.src.recs[v];
      cx = rec.cx;
      cy = rec.cy;
      w = rec.w;
      h = rec.h;
      angle = rec.angle;
      c = rec.class_id;
    } else {
      const float *b = g.src.obbs_in + 5 * (size_t) v;
      cx = b[0];
      cy = b[1];
      w = b[2];
      h = b[3];
      angle = b[4];
      c = g.src.classes_in != NULL ? g.src.classes_in[v] : 0;
    }
    cnms_obb_prepare (cx, cy, w, h, angle, &o, hull);
    ((float4 *) (g.obbs + r))[0] = make_float4 (o.cx, o.cy, o.ux, o.uy);
    ((float4 *) (g.obbs + r))[1] = make_float4 (o.vx, o.vy, o.area, o.pad);
    const float4 h4 = make_float4 (hull[0], hull[1], hull[2], hull[3]);
    g.boxes[r] = h4;
    g.cls[r] = c;
    return h4;
  }

  static __device__ __forceinline__ item
  load (const cnms_engine_args &g, int i)
  {
    const float4 p = ((const float4 *) (g.obbs + i))[0];
    const float4 q = ((const float4 *) (g.obbs + i))[1];
    const float4 h = g.boxes[i];
    item it;

    it.o.cx = p.x;
    it.o.cy = p.y;
    it.o.ux = p.z;
    it.o.uy = p.w;
    it.o.vx = q.x;
    it.o.vy = q.y;
    it.o.area = q.z;
    it.o.pad = q.w;
    it.hull[0] = h.x;
    it.hull[1] = h.y;
    it.hull[2] = h.z;
    it.hull[3] = h.w;
    return it;
  }

  static __device__ __forceinline__ void
  stage (tile &t, int k, const item &it)
  {
    t.o[k] = it.o;
    for (int e = 0; e < 4; e++)
      t.hull[k][e] = it.hull[e];
  }

  static __device__ __forceinline__ bool
  row_suppresses (const item &a, int32_t ca, const tile &t, int k,
      int32_t ck, float iou, int agnostic)
  {
    return cnms_obb_suppresses (&a.o, a.hull, ca, &t.o[k], t.hull[k], ck, iou,
        agnostic) != 0;
  }

  static __device__ __forceinline__ bool
  col_suppresses (const tile &t, int k, int32_t ck, const item &b,
      int32_t cb, float iou, int agnostic)
  {
    return cnms_obb_suppresses (&t.o[k], t.hull[k], ck, &b.o, b.hull, cb, iou,
        agnostic) != 0;
  }

  static __device__ __forceinline__ bool
  pair_suppresses (const item &a, int32_t ca, const item &b, int32_t cb,
      float iou, int agnostic)
  {
    return cnms_obb_suppresses (&a.o, a.hull, ca, &b.o, b.hull, cb, iou,
        agnostic) != 0;
  }
};

template <> struct cnms_geom <CNMS_GEOM_LANE> {
  /* one: the mask's row loops and the block-local front take up to 220
   * registers a thread (they spill at 128); a frame's grid is a block per
   * multiprocessor or less */
  static constexpr int MIN_BLOCKS = 1;
  static constexpr int MASK_UNROLL = 1;

  /* a lane: its rows, its x (S floats, global memory) and n = S - 1 */
  struct item {
    const float *x;
    int32_t s, e;
    int n;
  };

  /* the 64 column lanes of a tile: rows and where their x are (the x
   * are read from global memory, where L1 keeps a tile's rows) */
  struct tile {
    const float *x[CNMS_TILE];
    int32_t s[CNMS_TILE];
    int32_t e[CNMS_TILE];
  };

  /* Sorted position r has sort value v: its rows (cnms_lane_rows; the
   * filter or decode took only lanes that have them), its class (0) and
   * its rectangle for the pruned mask, cnms_lane_rect as the CPU's
   * gather_box files it: x over its rows, y over its x widened by the
   * distance (g.a.iou); empty (x1 > x2) when it can be close to no lane.
   * Two lanes that cnms_lane_close calls close have rectangles that
   * overlap with positive area (cnms_math.h), the pruned mask's test. */
  static __device__ __forceinline__ float4
  gather (const cnms_engine_args &g, int r, uint32_t v)
  {
    const float *row = g.src.lanes_in + (size_t) g.src.lane_stride * v;
    const int n = g.src.lane_n;
    int32_t s, e;
    float rect[4];
    float4 b;

    if (!cnms_lane_rows (row[2], row[4], n, &s, &e)) {
      s = 0;
      e = -1;
    }
    cnms_lane_rect (row + 5, s, e, n, g.a.iou, rect);
    b = make_float4 (rect[0], rect[1], rect[2], rect[3]);
    g.lanes[r] = make_int4 (s, e, (int) v, 0);
    g.boxes[r] = b;
    g.cls[r] = 0;
    return b;
  }

  static __device__ __forceinline__ item
  load (const cnms_engine_args &g, int i)
  {
    const int4 l = g.lanes[i];
    item it;

    it.x = g.src.lanes_in + (size_t) g.src.lane_stride * (uint32_t) l.z + 5;
    it.s = l.x;
    it.e = l.y;
    it.n = g.src.lane_n;
    return it;
  }

  /* load (g, i): a lane is more than its rectangle b */
  static __device__ __forceinline__ item
  from_box (const cnms_engine_args &g, int i, float4 b)
  {
    (void) b;
    return load (g, i);
  }

  static __device__ __forceinline__ void
  stage (tile &t, int k, const item &it)
  {
    t.x[k] = it.x;
    t.s[k] = it.s;
    t.e[k] = it.e;
  }

  /* iou: the lane distance (the engine runs lanes class-agnostic); the
   * earlier (kept) lane first */
  static __device__ __forceinline__ bool
  row_suppresses (const item &a, int32_t ca, const tile &t, int k,
      int32_t ck, float iou, int agnostic)
  {
    return cnms_lane_close (a.x, a.s, a.e, t.x[k], t.s[k], t.e[k], a.n,
        iou) != 0;
  }

  static __device__ __forceinline__ bool
  col_suppresses (const tile &t, int k, int32_t ck, const item &b,
      int32_t cb, float iou, int agnostic)
  {
    return cnms_lane_close (t.x[k], t.s[k], t.e[k], b.x, b.s, b.e, b.n,
        iou) != 0;
  }

  static __device__ __forceinline__ bool
  pair_suppresses (const item &a, int32_t ca, const item &b, int32_t cb,
      float iou, int agnostic)
  {
    return cnms_lane_close (a.x, a.s, a.e, b.x, b.s, b.e, a.n, iou) != 0;
  }
};

#endif /* CNMS_CUDA_GEOM_CUH */
