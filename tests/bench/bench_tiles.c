/* bench-tiles: a large frame's slices through cnms_detect_tiles (sliced
 * inference, SAHI's rules: docs/contracts.md, "Tiles").
 *
 *   bench-tiles DATA_DIR OUT_JSON [--backend cuda|cpu] [--iters N]
 *       [--save-dir DIR]
 *
 * DATA_DIR holds gen_data.py's tiles.npy, float32 [33, 84, 8400]: a
 * 3840x2160 frame cut by SAHI's grid into 640x640 slices overlapping by
 * 0.2 (8 x 4 = 32 slices), then the whole frame (SAHI's standard
 * prediction), each a YOLOv8 frame of the 640x640 model (params.json
 * "tiles"). On the device for the CUDA backend (the default; as an
 * inference engine leaves it), on the host for the CPU backend. The
 * parameters: score 0.25, IoU 0.45, 80 classes, class-aware, top 300 a
 * slice, letterbox (the cnms_params defaults), SAHI's merge defaults
 * (greedy NMM, IoS, 0.5, each class alone). Each round, on one context:
 *   - tiles: cnms_detect_tiles of the 33 slices (decode, the map into the
 *     frame, the merge): wall time and, on CUDA, GPU time (CUDA events
 *     around the slices' batch and around the merge kernel:
 *     cnms_ctx_last_gpu_us; the map runs on the host between them);
 *   - decode: cnms_detect_batch of the same slices, each a frame of its
 *     size (what the tiles call decodes): wall and GPU time;
 *   - merge: cnms_merge of the decode's records mapped into the frame as
 *     SAHI maps them (the bench's own loop, untimed): wall time, and on
 *     CUDA the merge kernel's GPU time (upload to results). Its result is
 *     checked equal to the tiles call's (count, every record byte):
 *     "mismatches", exit 1 when it differs;
 *   - host merge (CUDA only): the same cnms_merge on the same context
 *     with CNMS_TEST_HOST_MERGE, the host's merge the CPU backend runs:
 *     wall time, beside the kernel's; its result checked equal too.
 * Medians and minima over --iters rounds after 3 warm-up rounds. Writes
 * one record ("bench": "tiles") a backend, prints one line, and writes
 * DIR (--save-dir, default DATA_DIR)/dets_<cuda|cpu>_tiles.npy, float32
 * [K, 7]: score x1 y1 x2 y2 class anchor (the merged detections in
 * SAHI's order; anchor: the keeping record's index among the mapped
 * records), and records_<cuda|cpu>_tiles.npy, float32 [R, 7]: score x1
 * y1 x2 y2 class slice (each slice's decoded records in its own pixels,
 * slice by slice, each in its kept order), for bench_torch.py --tiles to
 * compare. Never a test: it asserts no time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "config.h"
#if HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define MAX_ITERS 100000
/* gen_data.py's params.json "tiles" */
#define FRAME_W 3840
#define FRAME_H 2160
#define SLICE 640
#define OVERLAP 0.2
#define MAX_SLICES 64

static double tw[MAX_ITERS], tg[MAX_ITERS], dw[MAX_ITERS], dg[MAX_ITERS],
    mw[MAX_ITERS], mg[MAX_ITERS], hw[MAX_ITERS];

/* Rows of 7 floats: score x1 y1 x2 y2 class, then last (the anchor, or
 * the slice of each record). */
static float *
rows_of (const cnms_det *d, int n, const int *last)
{
  float *r = malloc (sizeof (float) * 7 * (size_t) (n > 0 ? n : 1));
  int i;

  if (r == NULL)
    exit (1);
  for (i = 0; i < n; i++) {
    r[7 * i] = d[i].score;
    r[7 * i + 1] = d[i].x1;
    r[7 * i + 2] = d[i].y1;
    r[7 * i + 3] = d[i].x2;
    r[7 * i + 4] = d[i].y2;
    r[7 * i + 5] = (float) d[i].class_id;
    r[7 * i + 6] = (float) (last != NULL ? last[i] : d[i].anchor);
  }
  return r;
}

/* The merged detections and each slice's records of the last round. */
static void
save (const char *dir, const char *backend, const cnms_det *dets, int n,
    const cnms_frame_result *res, int n_slices)
{
  cnms_det *all;
  int *slice, total = 0, i, r;
  float *rows;
  char name[64];

  rows = rows_of (dets, n, NULL);
  snprintf (name, sizeof name, "dets_%s_tiles.npy", backend);
  bench_save_npy (dir, name, CNMS_NPY_F4, rows, n, 7);
  free (rows);
  for (i = 0; i < n_slices; i++)
    total += res[i].n_dets;
  all = malloc (sizeof *all * (size_t) (total > 0 ? total : 1));
  slice = malloc (sizeof *slice * (size_t) (total > 0 ? total : 1));
  if (all == NULL || slice == NULL)
    exit (1);
  total = 0;
  for (i = 0; i < n_slices; i++)
    for (r = 0; r < res[i].n_dets; r++) {
      all[total] = res[i].dets[r];
      slice[total++] = i;
    }
  rows = rows_of (all, total, slice);
  snprintf (name, sizeof name, "records_%s_tiles.npy", backend);
  bench_save_npy (dir, name, CNMS_NPY_F4, rows, total, 7);
  free (rows);
  free (all);
  free (slice);
}

static int
usage (void)
{
  fprintf (stderr, "usage: bench-tiles DATA_DIR OUT_JSON [--backend "
      "cuda|cpu] [--iters N] [--save-dir DIR]\n");
  return 2;
}

int
main (int argc, char **argv)
{
  const char *backend = "cuda", *save_dir = NULL;
  int iters = 200, i, n_slices, n_tg = 0, n_dg = 0, n_mg = 0, bad = 0;
  int n_dets = 0, n_recs = 0, n_merged = 0, kept_sum = 0;
  cnms_slice slices[MAX_SLICES];
  cnms_frame frames[MAX_SLICES];
  cnms_params p;
  cnms_merge_params m;
  cnms_npy a;
  cnms_tensor t;
  cnms_ctx *ctx;
  const cnms_det *dets = NULL, *md = NULL;
  const cnms_frame_result *res = NULL;
  cnms_det *keep = NULL;
  double *boxes = NULL, *scores = NULL;
  int32_t *classes = NULL;
  size_t cap = 0;
  int device;
  bench_json j;
  double twm, twn, tgm, tgn, dwm, dwn, dgm, dgn, mwm, mwn, mgm = NAN,
      mgn = NAN, hwm = NAN, hwn = NAN;

  if (argc < 3)
    return usage ();
  for (i = 3; i < argc; i++) {
    if (i + 1 >= argc)
      return usage ();
    if (strcmp (argv[i], "--backend") == 0)
      backend = argv[++i];
    else if (strcmp (argv[i], "--iters") == 0)
      iters = atoi (argv[++i]);
    else if (strcmp (argv[i], "--save-dir") == 0)
      save_dir = argv[++i];
    else
      return usage ();
  }
  if (iters < 1 || iters > MAX_ITERS
      || (strcmp (backend, "cuda") != 0 && strcmp (backend, "cpu") != 0))
    return usage ();
  if (save_dir == NULL)
    save_dir = argv[1];

  /* SAHI's grid, then the whole frame */
  n_slices = cnms_slice_grid (FRAME_W, FRAME_H, SLICE, SLICE, OVERLAP,
      OVERLAP, slices, MAX_SLICES - 1);
  if (n_slices < 1 || n_slices > MAX_SLICES - 1) {
    fprintf (stderr, "bench-tiles: the grid has %d slices\n", n_slices);
    return 1;
  }
  slices[n_slices].x1 = slices[n_slices].y1 = 0;
  slices[n_slices].x2 = FRAME_W;
  slices[n_slices].y2 = FRAME_H;
  n_slices++;
  memset (frames, 0, sizeof frames);
  for (i = 0; i < n_slices; i++) {
    frames[i].frame_width = slices[i].x2 - slices[i].x1;
    frames[i].frame_height = slices[i].y2 - slices[i].y1;
  }
  bench_load_npy (argv[1], "tiles.npy", CNMS_NPY_F4, &a);
  t = bench_host_tensor (&a);
  if (t.n_dims != 3 || t.dims[0] != n_slices) {
    fprintf (stderr, "bench-tiles: tiles.npy holds %lld frames, the grid "
        "and the whole frame are %d (run gen_data.py again)\n",
        t.n_dims == 3 ? (long long) t.dims[0] : -1LL, n_slices);
    return 1;
  }
  cnms_params_init (&p);
  cnms_merge_params_init (&m);
  ctx = bench_ctx_new (strcmp (backend, "cpu") == 0 ? CNMS_BACKEND_CPU :
      CNMS_BACKEND_CUDA);
  device = cnms_ctx_backend (ctx) == CNMS_BACKEND_CUDA;
#if HAVE_CUDA
  if (device) {
    void *d = NULL;

    if (cudaMalloc (&d, t.size) != cudaSuccess
        || cudaMemcpy (d, t.data, t.size, cudaMemcpyHostToDevice)
        != cudaSuccess
        /* a copy from pageable memory may return before its DMA is
         * done: the context's own stream would not wait for it */
        || cudaDeviceSynchronize () != cudaSuccess) {
      fprintf (stderr, "bench-tiles: cannot place the slices on the "
          "device\n");
      return 1;
    }
    t.data = d;
    t.on_device = 1;
  }
#endif
  if (bench_json_open (&j, argv[2]) != 0) {
    fprintf (stderr, "bench-tiles: cannot write %s\n", argv[2]);
    return 1;
  }

  for (i = -3; i < iters; i++) {
    double t0, t1;
    cnms_status st;
    int f, k;

    /* the whole call */
    t0 = bench_now_us ();
    st = cnms_detect_tiles (ctx, &t, NULL, slices, n_slices, FRAME_W,
        FRAME_H, CNMS_LAYOUT_YOLOV8, &p, &m, &dets, &n_dets);
    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-tiles: cnms_detect_tiles: %s: %s\n",
          cnms_status_str (st), cnms_ctx_error (ctx));
      return 1;
    }
    if (i >= 0) {
      tw[i] = t1 - t0;
      if (cnms_ctx_last_gpu_us (ctx) >= 0)
        tg[n_tg++] = cnms_ctx_last_gpu_us (ctx);
    }
    /* its result, which the next call replaces */
    keep = realloc (keep, sizeof *keep * (size_t) (n_dets > 0 ? n_dets : 1));
    if (keep == NULL)
      return 1;
    memcpy (keep, dets, sizeof *keep * (size_t) n_dets);

    /* the decode alone */
    t0 = bench_now_us ();
    st = cnms_detect_batch (ctx, &t, NULL, frames, n_slices,
        CNMS_LAYOUT_YOLOV8, &p, &res);
    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-tiles: cnms_detect_batch: %s: %s\n",
          cnms_status_str (st), cnms_ctx_error (ctx));
      return 1;
    }
    if (i >= 0) {
      dw[i] = t1 - t0;
      if (cnms_ctx_last_gpu_us (ctx) >= 0)
        dg[n_dg++] = cnms_ctx_last_gpu_us (ctx);
    }
    kept_sum = 0;
    for (f = 0; f < n_slices; f++) {
      if (res[f].status != CNMS_OK) {
        fprintf (stderr, "bench-tiles: slice %d: %s\n", f, res[f].error);
        return 1;
      }
      kept_sum += res[f].n_dets;
    }
    if ((size_t) kept_sum > cap) {
      cap = (size_t) kept_sum;
      boxes = realloc (boxes, sizeof *boxes * 4 * cap);
      scores = realloc (scores, sizeof *scores * cap);
      classes = realloc (classes, sizeof *classes * cap);
      if (boxes == NULL || scores == NULL || classes == NULL)
        return 1;
    }
    n_recs = cnms_tiles_records (res, slices, n_slices, FRAME_W, FRAME_H,
        boxes, scores, classes);
    if (i == iters - 1)
      save (save_dir, backend, keep, n_dets, res, n_slices);

    /* the merge alone, on the records the decode gave */
    t0 = bench_now_us ();
    st = cnms_merge (ctx, boxes, scores, classes, n_recs, &m, &md,
        &n_merged);
    t1 = bench_now_us ();
    if (st != CNMS_OK) {
      fprintf (stderr, "bench-tiles: cnms_merge: %s: %s\n",
          cnms_status_str (st), cnms_ctx_error (ctx));
      return 1;
    }
    if (i >= 0) {
      mw[i] = t1 - t0;
      if (cnms_ctx_last_gpu_us (ctx) >= 0)
        mg[n_mg++] = cnms_ctx_last_gpu_us (ctx);
    }
    if (n_merged == n_dets && device) {
      /* the host's merge on the same context, where the first is the
       * kernel's */
      cnms_ctx_test_option (ctx, CNMS_TEST_HOST_MERGE, 1);
      t0 = bench_now_us ();
      st = cnms_merge (ctx, boxes, scores, classes, n_recs, &m, &md,
          &n_merged);
      t1 = bench_now_us ();
      cnms_ctx_test_option (ctx, CNMS_TEST_HOST_MERGE, 0);
      if (st != CNMS_OK) {
        fprintf (stderr, "bench-tiles: cnms_merge on the host: %s: %s\n",
            cnms_status_str (st), cnms_ctx_error (ctx));
        return 1;
      }
      if (i >= 0)
        hw[i] = t1 - t0;
    }
    if (n_merged != n_dets || (n_dets > 0
            && memcmp (md, keep, sizeof *keep * (size_t) n_dets) != 0)) {
      if (bad++ < 4) {
        fprintf (stderr, "bench-tiles: round %d: the merges of the decode's "
            "records give %d detections, the tiles call %d\n", i,
            n_merged, n_dets);
        for (k = 0; k < n_dets && k < n_merged; k++)
          if (memcmp (&md[k], &keep[k], sizeof *keep) != 0) {
            fprintf (stderr, "  first difference at %d: merge anchor %d "
                "score %.9g box %.9g %.9g %.9g %.9g class %d; tiles anchor "
                "%d score %.9g box %.9g %.9g %.9g %.9g class %d\n", k,
                md[k].anchor, md[k].score, md[k].x1, md[k].y1, md[k].x2,
                md[k].y2, md[k].class_id, keep[k].anchor, keep[k].score,
                keep[k].x1, keep[k].y1, keep[k].x2, keep[k].y2,
                keep[k].class_id);
            break;
          }
      }
    }
  }

  bench_json_begin (&j);
  bench_json_str (&j, "bench", "tiles");
  bench_json_str (&j, "impl", bench_backend_name (cnms_ctx_backend (ctx)));
  bench_json_str (&j, "layout", "tiles");
  bench_json_str (&j, "input", device ? "device" : "host");
  bench_json_num (&j, "frame_width", FRAME_W);
  bench_json_num (&j, "frame_height", FRAME_H);
  bench_json_num (&j, "slices", n_slices);
  bench_json_num (&j, "iters", iters);
  bench_json_num (&j, "slice_dets", kept_sum);
  bench_json_num (&j, "records", n_recs);
  bench_json_num (&j, "dets", n_dets);
  bench_json_num (&j, "mismatches", bad);
  bench_json_stats (&j, "wall", tw, iters, &twm, &twn);
  bench_json_stats (&j, "gpu", tg, n_tg, &tgm, &tgn);
  bench_json_stats (&j, "decode_wall", dw, iters, &dwm, &dwn);
  bench_json_stats (&j, "decode_gpu", dg, n_dg, &dgm, &dgn);
  bench_json_stats (&j, "merge_wall", mw, iters, &mwm, &mwn);
  if (device) {
    bench_json_stats (&j, "merge_gpu", mg, n_mg, &mgm, &mgn);
    bench_json_stats (&j, "merge_host_wall", hw, iters, &hwm, &hwn);
  }
  bench_json_end (&j);
  printf ("%-12s tiles %dx%d, %d slices: %d records -> %d dets | tiles: "
      "gpu %8.2f wall %8.2f us (min %.2f) | decode: gpu %8.2f wall %8.2f us"
      " | merge: wall %7.2f us (min %.2f)", bench_backend_name
      (cnms_ctx_backend (ctx)), FRAME_W, FRAME_H, n_slices, n_recs, n_dets,
      tgm, twm, twn, dgm, dwm, mwm, mwn);
  if (device)
    printf (", kernel gpu %7.2f us (min %.2f) | host merge: wall %7.2f us "
        "(min %.2f)", mgm, mgn, hwm, hwn);
  printf ("%s\n", bad ? "  MISMATCH" : "");
  bench_json_close (&j);
#if HAVE_CUDA
  if (device)
    cudaFree ((void *) t.data);
#endif
  cnms_ctx_free (ctx);
  cnms_npy_clear (&a);
  free (keep);
  free (boxes);
  free (scores);
  free (classes);
  return bad ? 1 : 0;
}
