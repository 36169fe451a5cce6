/* The greedy walk of one class (or of all, agnostic), included by
 * cpu_nms.c once per cell scan: WALK (name) names the functions,
 * WALK_SCAN is the scan, WALK_TARGET the functions' target attribute (so
 * that the AVX scan inlines into its walk). No include guard. */

/* Is p->b suppressed by a kept box of grid g? */
WALK_TARGET static inline int
WALK (suppressed) (const walk *w, const grid *g, const probe *p)
{
  const float *arena = w->ws->arena.p;
  const cell *cells = w->ws->cells.p;
  const float *q = p->q;
  int32_t c[4];
  int x0, x1, y0, y1, x, y;

  cells_of (g, q[0], q[1], q[2], q[3], c);
  /* lo > hi: a suppressor spans both, one cell is enough (step 1) */
  x0 = q[0] < q[2] ? c[0] : c[2];
  x1 = c[2];
  y0 = q[1] < q[3] ? c[1] : c[3];
  y1 = c[3];
  /* a query over most of the grid reads each kept box once instead */
  if ((x1 - x0 + 1) * (y1 - y0 + 1) > 16
      && 2 * (x1 - x0 + 1) * (y1 - y0 + 1) > g->gx * g->gy)
    return scan_list (w->ws->klink.p, g->last, p);
  for (y = y0; y <= y1; y++) {
    for (x = x0; x <= x1; x++) {
      if (WALK_SCAN (arena, &cells[y * g->gx + x], p))
        return 1;
    }
  }
  return g->big.n > 0 && WALK_SCAN (w->ws->bigbuf.p, &g->big, p);
}

/* Files kept box v (its w->na values, x1 y1 x2 y2 first) in grid g: in
 * its cells, or in g's big cell (which has room for every box of the
 * walk). */
WALK_TARGET static inline cnms_status
WALK (file_kept) (walk *w, grid *g, const float *v)
{
  cell *cells = w->ws->cells.p;
  int32_t c[4];
  int x, y, r;

  cells_of (g, v[0], v[1], v[2], v[3], c);
  if ((c[2] - c[0] + 1) * (c[3] - c[1] + 1) <= g->max_cells) {
    for (y = c[1]; y <= c[3]; y++) {
      cell *row = cells + (size_t) y * g->gx;
      for (x = c[0]; x <= c[2]; x++) {
        r = file_in (w, &row[x], v);
        if (r < 0)
          return CNMS_ERR_NO_MEMORY;
        /* no room: big holds it for every query (a copy in some cells
         * does no harm) */
        if (r > 0)
          goto big;
      }
    }
    return CNMS_OK;
  }
big:
  put_box (w->ws->bigbuf.p, &g->big, v, w->na);
  return CNMS_OK;
}

/* The greedy walk over n boxes of one class (or all, agnostic), in order;
 * stops after max_keep. Writes the kept positions into kept. */
WALK_TARGET static cnms_status
WALK (run_class) (walk *w, const float *boxes, const float *areas, int n,
    int max_keep, int32_t *kept, int *n_kept)
{
  cnms_greedy_ws *ws = w->ws;
  float *kbox, *karea;
  int32_t *klink;
  grid g;
  probe p;
  float q[4];
  int j, nk = 0, n_cells;
  cnms_status st;

  n_cells = plan_grid (&g, boxes, n, w->may_grow ? (size_t) 1 << 30 :
      ws->cells.cap / sizeof (cell));
  if (n_cells > 0) {
    st = cnms_buf_reserve (w->ctx, &ws->cells, (size_t) n_cells *
        sizeof (cell));
    if (st != CNMS_OK)
      return st;
    memset (ws->cells.p, 0, (size_t) n_cells * sizeof (cell));
  }
  w->used = 0;
  w->cap0 = g.cap0;
  kbox = ws->kbox.p;
  karea = ws->karea.p;
  klink = ws->klink.p;
  p.kbox = kbox;
  p.karea = karea;
  p.iou = w->iou;
  p.q = q;
  p.geom = w->geom;
  p.obbs = w->obbs;
  p.bo = NULL;
  p.lanes = w->lanes;
  p.bl = NULL;
  p.n_strips = w->n_strips;
  p.bound = w->geom == CNMS_GEOM_BOX && w->iou >= CORE_MIN_IOU;
  p.k1 = 1.0f + w->iou;
  p.k2 = w->iou * (1.0f - 0x1p-10f);
  p.obb_bound = 0;
  p.ok = cnms_fmul (4.0f, cnms_fadd (1.0f, w->iou));
  p.blu = p.blv = 0.0f;
  p.tests = &ws->tests;
  for (j = 0; j < n && nk < max_keep; j++) {
    const float *b = boxes + 4 * (size_t) j;

    if (nonempty (b)) {
      /* what a kept b is filed with */
      float v[CELL_ARRAYS_OBB];

      p.b = b;
      p.area = areas[j];
      if (p.geom == CNMS_GEOM_OBB) {
        const cnms_obb *o = &p.obbs[cnms_float_bits (areas[j])];

        p.bo = o;
        /* where cnms_obb_iou_above asks cnms_obb_may_exceed, which then
         * returns 1 for every a unless b's area is in range */
        p.obb_bound = w->iou >= 0.0625f && o->area > 0x1p-40f
            && o->area < 0x1p40f;
        p.blu = cnms_fadd (cnms_fmul (o->ux, o->ux), cnms_fmul (o->uy, o->uy));
        p.blv = cnms_fadd (cnms_fmul (o->vx, o->vx), cnms_fmul (o->vy, o->vy));
      } else if (p.geom == CNMS_GEOM_LANE)
        p.bl = &p.lanes[cnms_float_bits (areas[j])];
      if (g.list) {
        /* one cell, b itself the query rectangle */
        p.q = b;
        if (WALK_SCAN (ws->bigbuf.p, &g.big, &p))
          continue;
      } else {
        p.q = q;
        query_rect (b, w->margin, q);
        if (WALK (suppressed) (w, &g, &p))
          continue;
      }
      v[0] = b[0];
      v[1] = b[1];
      v[2] = b[2];
      v[3] = b[3];
      v[4] = areas[j];
      if (p.geom == CNMS_GEOM_OBB) {
        v[5] = p.bo->cx;
        v[6] = p.bo->cy;
        v[7] = p.bo->ux;
        v[8] = p.bo->uy;
        v[9] = p.bo->vx;
        v[10] = p.bo->vy;
        v[11] = p.bo->area;
      }
      if (g.list) {
        put_box (ws->bigbuf.p, &g.big, v, w->na);
        st = CNMS_OK;
      } else {
        kbox[4 * (size_t) nk + 0] = b[0];
        kbox[4 * (size_t) nk + 1] = b[1];
        kbox[4 * (size_t) nk + 2] = b[2];
        kbox[4 * (size_t) nk + 3] = b[3];
        karea[nk] = areas[j];
        klink[nk] = g.last;
        g.last = nk;
        st = WALK (file_kept) (w, &g, v);
      }
      if (st != CNMS_OK)
        return st;
    }
    kept[nk++] = j;
  }
  *n_kept = nk;
  return CNMS_OK;
}
