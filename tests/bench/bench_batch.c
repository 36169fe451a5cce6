/* bench-batch: B frames in one cnms_detect_batch against the same B frames
 * in B cnms_detect calls (the anchor, same context kind, same run).
 *
 *   bench-batch DATA_DIR OUT_JSON [--backend cuda|cpu] [--iters N]
 *       [--bs 1,8,32,128] [--layouts yolov8,yolov8_obb,...]
 *       [--batch-heads both|on|off]
 *
 * DATA_DIR holds gen_data.py's frames (yolov8.npy, yolov8_obb.npy,
 * yolov8_pose.npy, yolov8_seg.npy + its prototypes, yolov5.npy, laneatt.npy
 * with LaneATT's test config). A batch of
 * B is B copies of the layout's frame as one [B, ...] tensor: on the device
 * for the CUDA backend (as an inference engine leaves it), on the host for
 * the CPU backend. Each row: the batch call's GPU time (CUDA events around
 * the whole batch, cnms_ctx_last_gpu_us) and wall time, per frame, beside
 * the B single calls' summed GPU and wall time per frame; medians over
 * --iters rounds. Every frame of the batch is checked equal to its single
 * call, records and payload (the bench exits 1 when one differs). On CUDA
 * the heads of yolov8_pose and yolov8_seg are made in the batch's
 * launches (heads "batch") and, with --batch-heads both (the default) or
 * off, in a row of their own with CNMS_TEST_NO_BATCH_HEADS (heads
 * "frame": frame by frame after the batch); each row says of how many
 * frames the last batch made the heads. Never a test: it asserts no
 * time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "config.h"
#if HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define MAX_ITERS 4096

static const char *const all_layouts[] = {
  "yolov8", "yolov8_obb", "yolov5", "yolov8_pose", "yolov8_seg", "laneatt",
};

static cnms_layout
layout_of (const char *name, cnms_params *p)
{
  cnms_params_init (p);
  if (strcmp (name, "yolov8_obb") == 0) {
    p->model_width = p->model_height = 1024;
    p->frame_width = p->frame_height = 1024;
    return CNMS_LAYOUT_YOLOV8_OBB;
  }
  if (strcmp (name, "yolov8_pose") == 0)
    return CNMS_LAYOUT_YOLOV8_POSE;
  if (strcmp (name, "yolov8_seg") == 0)
    return CNMS_LAYOUT_YOLOV8_SEG;
  if (strcmp (name, "yolov5") == 0)
    return CNMS_LAYOUT_YOLOV5;
  if (strcmp (name, "laneatt") == 0) {
    bench_laneatt_params (p);
    return CNMS_LAYOUT_LANEATT;
  }
  return CNMS_LAYOUT_YOLOV8;
}

/* B copies of t's bytes, on the device when device. */
static void *
copies (const cnms_tensor *t, int b, int device)
{
  char *h = malloc (t->size * (size_t) b);
  void *d = h;

  if (h == NULL)
    exit (1);
  for (int i = 0; i < b; i++)
    memcpy (h + t->size * (size_t) i, t->data, t->size);
#if HAVE_CUDA
  if (device) {
    if (cudaMalloc (&d, t->size * (size_t) b) != cudaSuccess
        || cudaMemcpy (d, h, t->size * (size_t) b, cudaMemcpyHostToDevice)
        != cudaSuccess
        /* a copy from pageable memory may return before its DMA is
         * done: the context's own stream would not wait for it */
        || cudaDeviceSynchronize () != cudaSuccess) {
      fprintf (stderr, "bench-batch: cannot place %d frames on the device\n",
          b);
      exit (1);
    }
    free (h);
  }
#else
  (void) device;
#endif
  return d;
}

static void
release (void *p, int device)
{
#if HAVE_CUDA
  if (device) {
    cudaFree (p);
    return;
  }
#else
  (void) device;
#endif
  free (p);
}

/* 1 when frame f's batch result r equals its single call's (d, n, its
 * payload pl); the first few differences are printed (round i). */
static int
same (const cnms_frame_result *r, const cnms_det *d, int n,
    const cnms_payloads *pl, int i, int f)
{
  static int told;
  int k;

  if (r->status == CNMS_OK && r->n_dets == n
      && (n == 0 || memcmp (r->dets, d, (size_t) n * sizeof *d) == 0)
      && r->payload.head == pl->head && r->payload.n == pl->n
      && r->payload.size == pl->size
      && (pl->n == 0 || memcmp (r->payload.records, pl->records,
              (size_t) pl->n * sizeof *pl->records) == 0)
      && (pl->size == 0 || memcmp (r->payload.data, pl->data, pl->size)
          == 0))
    return 1;
  if (told++ >= 8)
    return 0;
  fprintf (stderr, "bench-batch: round %d frame %d: batch status %d, %d "
      "records, %zu payload bytes; single %d records, %zu payload bytes\n",
      i, f, (int) r->status, r->n_dets, r->payload.size, n, pl->size);
  for (k = 0; r->status == CNMS_OK && k < n && k < r->n_dets; k++)
    if (memcmp (&r->dets[k], &d[k], sizeof *d) != 0) {
      fprintf (stderr, "  first difference at record %d: batch anchor %d "
          "score %.9g box %.9g %.9g %.9g %.9g class %d; single anchor %d "
          "score %.9g box %.9g %.9g %.9g %.9g class %d\n", k,
          r->dets[k].anchor, r->dets[k].score, r->dets[k].x1, r->dets[k].y1,
          r->dets[k].x2, r->dets[k].y2, r->dets[k].class_id, d[k].anchor,
          d[k].score, d[k].x1, d[k].y1, d[k].x2, d[k].y2, d[k].class_id);
      break;
    }
  return 0;
}

/* Frame results copied out of a batch's (which the next call on the
 * context replaces): records, payload tables and bytes, grown only. */
typedef struct {
  cnms_frame_result *res;
  cnms_det *dets;
  cnms_payload *table;
  uint8_t *data;
  size_t res_cap, dets_cap, table_cap, data_cap;
} kept_copy;

static void *
grow_to (void *p, size_t *cap, size_t n, size_t size)
{
  if (n <= *cap)
    return p;
  p = realloc (p, n * size);
  if (p == NULL)
    exit (1);
  *cap = n;
  return p;
}

/* The b results res copied into k (k->res[f] points into k's arrays). */
static void
copy_results (kept_copy *k, const cnms_frame_result *res, int b)
{
  size_t nd = 0, nt = 0, nb = 0;
  int f;

  for (f = 0; f < b; f++) {
    nd += (size_t) res[f].n_dets;
    nt += (size_t) res[f].payload.n;
    nb += res[f].payload.size;
  }
  k->res = grow_to (k->res, &k->res_cap, (size_t) b, sizeof *k->res);
  k->dets = grow_to (k->dets, &k->dets_cap, nd + 1, sizeof *k->dets);
  k->table = grow_to (k->table, &k->table_cap, nt + 1, sizeof *k->table);
  k->data = grow_to (k->data, &k->data_cap, nb + 1, 1);
  nd = nt = nb = 0;
  for (f = 0; f < b; f++) {
    cnms_frame_result *c = &k->res[f];

    *c = res[f];
    c->dets = k->dets + nd;
    c->payload.records = k->table + nt;
    c->payload.data = k->data + nb;
    if (res[f].n_dets > 0)
      memcpy (k->dets + nd, res[f].dets, (size_t) res[f].n_dets
          * sizeof *k->dets);
    if (res[f].payload.n > 0)
      memcpy (k->table + nt, res[f].payload.records,
          (size_t) res[f].payload.n * sizeof *k->table);
    if (res[f].payload.size > 0)
      memcpy (k->data + nb, res[f].payload.data, res[f].payload.size);
    nd += (size_t) res[f].n_dets;
    nt += (size_t) res[f].payload.n;
    nb += res[f].payload.size;
  }
}

/* One row: layout name at B; nobh: with CNMS_TEST_NO_BATCH_HEADS (the
 * heads after the batch, frame by frame). */
static int
bench_one (cnms_ctx *ctx, const char *name, const cnms_tensor *t,
    const cnms_tensor *pt, int b, int iters, int nobh, bench_json *j)
{
  const int device = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA;
  static double bw[MAX_ITERS], bg[MAX_ITERS], sw[MAX_ITERS], sg[MAX_ITERS];
  cnms_tensor bt = *t, bp, ft, fpt;
  cnms_params p;
  const cnms_layout l = layout_of (name, &p);
  const cnms_frame_result *res = NULL;
  void *data = copies (t, b, device), *pdata = NULL;
  double bwm, bwn, bgm, bgn, swm, swn, sgm, sgn;
  int i, f, bad = 0, n_bg = 0, n_sg = 0, kept = 0, made = 0;
  static kept_copy kc;

  bt.data = data;
  bt.size = t->size * (size_t) b;
  bt.dims[0] = b;
  bt.on_device = device;
  if (pt != NULL) {
    pdata = copies (pt, b, device);
    bp = *pt;
    bp.data = pdata;
    bp.size = pt->size * (size_t) b;
    bp.dims[0] = b;
    bp.on_device = device;
  }
  cnms_ctx_test_option (ctx, CNMS_TEST_NO_BATCH_HEADS, nobh);
  for (i = -3; i < iters; i++) {
    double t0, t1, gsum = 0, wsum = 0;
    int gok = 1;
    cnms_status st;

    /* the batch */
    t0 = bench_now_us ();
    st = cnms_detect_batch (ctx, &bt, pt != NULL ? &bp : NULL, NULL, b, l,
        &p, &res);
    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-batch: %s B=%d: %s\n", name, b,
          cnms_ctx_error (ctx));
      exit (1);
    }
    if (i >= 0) {
      bw[i] = (t1 - t0) / b;
      if (cnms_ctx_last_gpu_us (ctx) >= 0)
        bg[n_bg++] = cnms_ctx_last_gpu_us (ctx) / b;
    }
    made = cnms_ctx_batch_heads_made (ctx);
    /* the same frames one call each (frame f's result checked against
     * the batch's, which the next call replaces: copied first), each
     * call's wall time summed, the checks outside it */
    copy_results (&kc, res, b);
    kept = 0;
    for (f = 0; f < b; f++) {
      if (res[f].status != CNMS_OK)
        bad++;
      kept += res[f].n_dets;
    }
    for (f = 0; f < b; f++) {
      const cnms_det *d;
      cnms_payloads pl;
      int n;

      ft = *t;
      ft.data = (const char *) data + t->size * (size_t) f;
      ft.on_device = device;
      if (pt != NULL) {
        fpt = *pt;
        fpt.data = (const char *) pdata + pt->size * (size_t) f;
        fpt.on_device = device;
      }
      t0 = bench_now_us ();
      st = cnms_detect (ctx, &ft, pt != NULL ? &fpt : NULL, l, &p, &d, &n);
      t1 = bench_now_us ();
      wsum += t1 - t0;
      if (st != CNMS_OK) {
        fprintf (stderr, "bench-batch: %s frame %d: %s\n", name, f,
            cnms_ctx_error (ctx));
        exit (1);
      }
      if (cnms_ctx_last_gpu_us (ctx) >= 0)
        gsum += cnms_ctx_last_gpu_us (ctx);
      else
        gok = 0;
      cnms_ctx_payload (ctx, &pl);
      bad += !same (&kc.res[f], d, n, &pl, i, f);
    }
    if (i >= 0) {
      sw[i] = wsum / b;
      if (gok)
        sg[n_sg++] = gsum / b;
    }
  }
  bench_json_begin (j);
  bench_json_str (j, "bench", "batch");
  bench_json_str (j, "impl", bench_backend_name (cnms_ctx_backend (ctx)));
  bench_json_str (j, "layout", name);
  bench_json_str (j, "input", device ? "device" : "host");
  bench_json_str (j, "heads", nobh ? "frame" : "batch");
  bench_json_num (j, "heads_made", made);
  bench_json_num (j, "batch", b);
  bench_json_num (j, "iters", iters);
  bench_json_num (j, "kept", kept);
  bench_json_num (j, "mismatches", bad);
  bench_json_stats (j, "batch_wall_frame", bw, iters, &bwm, &bwn);
  bench_json_stats (j, "batch_gpu_frame", bg, n_bg, &bgm, &bgn);
  bench_json_stats (j, "single_wall_frame", sw, iters, &swm, &swn);
  bench_json_stats (j, "single_gpu_frame", sg, n_sg, &sgm, &sgn);
  bench_json_end (j);
  printf ("%-5s %-11s %-12s B=%-4d kept %-6d | batch a frame: gpu %7.2f "
      "wall %7.2f us | single calls a frame: gpu %7.2f wall %7.2f us | gpu "
      "x%.1f wall x%.1f | heads made in the batch: %d frames%s\n",
      bench_backend_name (cnms_ctx_backend (ctx)), name, nobh ?
      "heads-frame" : "heads-batch", b, kept, bgm, bwm, sgm, swm, sgm / bgm,
      swm / bwm, made, bad ? "  MISMATCH" : "");
  cnms_ctx_test_option (ctx, CNMS_TEST_NO_BATCH_HEADS, 0);
  release (data, device);
  if (pdata != NULL)
    release (pdata, device);
  return bad;
}

/* Is name one of the comma-separated names of list? */
static int
listed (const char *list, const char *name)
{
  const size_t n = strlen (name);

  for (const char *c = list; c != NULL; c = strchr (c, ',')) {
    if (*c == ',')
      c++;
    if (strncmp (c, name, n) == 0 && (c[n] == ',' || c[n] == '\0'))
      return 1;
  }
  return 0;
}

static int
usage (void)
{
  fprintf (stderr, "usage: bench-batch DATA_DIR OUT_JSON [--backend "
      "cuda|cpu] [--iters N] [--bs 1,8,32,128] [--layouts a,b] "
      "[--batch-heads both|on|off]\n");
  return 2;
}

int
main (int argc, char **argv)
{
  const char *backend = "cuda", *bs_arg = "1,8,32,128", *layouts = NULL;
  const char *heads_arg = "both";
  int iters = 50, bad = 0, bs[32], n_bs = 0;
  bench_json j;
  cnms_ctx *ctx;
  char *s, *save = NULL, list[256];

  if (argc < 3)
    return usage ();
  for (int i = 3; i < argc; i++) {
    if (i + 1 >= argc)
      return usage ();
    if (strcmp (argv[i], "--backend") == 0)
      backend = argv[++i];
    else if (strcmp (argv[i], "--iters") == 0)
      iters = atoi (argv[++i]);
    else if (strcmp (argv[i], "--bs") == 0)
      bs_arg = argv[++i];
    else if (strcmp (argv[i], "--layouts") == 0)
      layouts = argv[++i];
    else if (strcmp (argv[i], "--batch-heads") == 0)
      heads_arg = argv[++i];
    else
      return usage ();
  }
  if (iters < 1 || iters > MAX_ITERS || (strcmp (heads_arg, "both") != 0
          && strcmp (heads_arg, "on") != 0 && strcmp (heads_arg, "off") != 0))
    return usage ();
  snprintf (list, sizeof list, "%s", bs_arg);
  for (s = strtok_r (list, ",", &save); s != NULL && n_bs < 32;
      s = strtok_r (NULL, ",", &save))
    if ((bs[n_bs] = atoi (s)) >= 1)
      n_bs++;
  ctx = bench_ctx_new (strcmp (backend, "cpu") == 0 ? CNMS_BACKEND_CPU :
      CNMS_BACKEND_CUDA);
  if (bench_json_open (&j, argv[2]) != 0)
    return 1;
  for (size_t li = 0; li < sizeof all_layouts / sizeof all_layouts[0];
      li++) {
    const char *name = all_layouts[li];
    char file[64];
    cnms_npy a, pa;
    cnms_tensor t, pt;
    int seg = strcmp (name, "yolov8_seg") == 0;

    if (layouts != NULL && !listed (layouts, name))
      continue;
    snprintf (file, sizeof file, "%s.npy", name);
    bench_load_npy (argv[1], file, CNMS_NPY_F4, &a);
    t = bench_host_tensor (&a);
    if (seg) {
      bench_load_npy (argv[1], "yolov8_seg_protos.npy", CNMS_NPY_F4, &pa);
      pt = bench_host_tensor (&pa);
    }
    for (int k = 0; k < n_bs; k++) {
      /* the heads in the batch's launches, and frame by frame after it
       * (CUDA: pose and seg) */
      const int heads = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA
          && (seg || strcmp (name, "yolov8_pose") == 0);

      if (!heads || strcmp (heads_arg, "off") != 0)
        bad += bench_one (ctx, name, &t, seg ? &pt : NULL, bs[k], iters, 0,
            &j);
      if (heads && strcmp (heads_arg, "on") != 0)
        bad += bench_one (ctx, name, &t, seg ? &pt : NULL, bs[k], iters, 1,
            &j);
    }
    cnms_npy_clear (&a);
    if (seg)
      cnms_npy_clear (&pa);
  }
  bench_json_close (&j);
  cnms_ctx_free (ctx);
  return bad ? 1 : 0;
}
