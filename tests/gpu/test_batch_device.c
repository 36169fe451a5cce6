/* cnms_detect_batch on the CUDA backend with device tensors: every frame's
 * result bit-identical to a cnms_detect of that frame alone on the CUDA
 * backend (its device tensor) and on the CPU backend (its host copy), for
 * every layout and head, float32 and float16, one tensor a frame and one
 * [B, ...] tensor, B = 1 .. 256, N differing by 100x in one batch, a bad
 * frame among good ones, per-class caps; the same bits on every repeat,
 * and no allocation
 * once warm. CNMS_GPU_CASES scales the B list down (1: B = 1 and 8 only,
 * for compute-sanitizer). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "batch_frames.h"

static cnms_ctx *ctx_cpu, *ctx_one, *ctx_batch;
static long frames_total, mismatches, lines;
/* per-class caps on the cases' params (bf_caps) */
static int caps_on;
static cnms_class_params caps_classes[BF_CLASSES];

/* A device copy of n bytes at h (NULL for n 0). */
static void *
to_device (const void *h, size_t n)
{
  void *d = NULL;

  if (n == 0)
    return NULL;
  if (cudaMalloc (&d, n) != cudaSuccess
      || cudaMemcpy (d, h, n, cudaMemcpyHostToDevice) != cudaSuccess
      /* a copy from pageable memory may return before its DMA is done:
       * the contexts' own streams would not wait for it */
      || cudaDeviceSynchronize () != cudaSuccess) {
    fprintf (stderr, "FAIL cannot copy %zu bytes to the device\n", n);
    exit (1);
  }
  return d;
}

/* Frame i of a batch result against its own calls: CUDA on its device
 * tensor dt (dp), CPU on its host tensor ht (hp). */
static int
frame_ok (const cnms_frame_result *r, const cnms_tensor *dt,
    const cnms_tensor *dp, const cnms_tensor *ht, const cnms_tensor *hp,
    cnms_layout layout, const cnms_params *p, const char *what, int i)
{
  const cnms_det *dets;
  cnms_payloads pl;
  cnms_status st;
  int n, ok = 1;
  char why[200];

  frames_total++;
  st = cnms_detect (ctx_one, dt, dp, layout, p, &dets, &n);
  cnms_ctx_payload (ctx_one, &pl);
  if (!bf_same (r, st, dets, n, cnms_ctx_report (ctx_one), &pl, why,
          sizeof why)) {
    fprintf (stderr, "FAIL %s frame %d against CUDA alone: %s\n", what, i,
        why);
    ok = 0;
  }
  st = cnms_detect (ctx_cpu, ht, hp, layout, p, &dets, &n);
  cnms_ctx_payload (ctx_cpu, &pl);
  if (!bf_same (r, st, dets, n, cnms_ctx_report (ctx_cpu), &pl, why,
          sizeof why)) {
    fprintf (stderr, "FAIL %s frame %d against the CPU: %s\n", what, i, why);
    ok = 0;
  }
  if (!ok)
    mismatches++;
  return ok;
}

/* A batch case: B frames of layout, N from lo to hi (one N when
 * batch_tensor: one [B, ...] device tensor), sizes cycling; bad: frame
 * index whose tensor is short (per-frame only), or -1. */
static void
run_case (cnms_layout layout, int f16, int b, int lo, int hi,
    int batch_tensor, int bad, uint64_t seed)
{
  static const int sizes[][2] = {
    {640, 640}, {1280, 720}, {320, 240}, {1920, 1080}, {100, 64},
  };
  const int seg = layout == CNMS_LAYOUT_YOLOV8_SEG;
  bf_frame *fr = calloc ((size_t) b, sizeof *fr);
  cnms_tensor *dt = calloc ((size_t) b, sizeof *dt);
  cnms_tensor *dp = calloc ((size_t) b, sizeof *dp);
  cnms_frame *frames = calloc ((size_t) b, sizeof *frames);
  void **dmem = calloc (2 * (size_t) b, sizeof *dmem);
  const cnms_frame_result *res = NULL;
  cnms_tensor bt, bp;
  void *dall = NULL, *dallp = NULL;
  cnms_params p;
  test_rng r;
  char what[128];
  long before = mismatches;
  int i, rep;

  if (fr == NULL || dt == NULL || dp == NULL || frames == NULL
      || dmem == NULL)
    exit (1);
  test_rng_seed (&r, seed);
  bf_params (&p, layout);
  if (caps_on)
    bf_caps (&p, caps_classes);
  for (i = 0; i < b; i++) {
    const int n = batch_tensor || hi <= lo ? lo :
        lo + test_rng_int (&r, 0, hi - lo + 1);

    bf_make (&fr[i], layout, f16, n, seed * 7777u + (uint64_t) i, i == 3 ?
        1 : 0);
    frames[i].frame_width = sizes[(i + (int) seed) % 5][0];
    frames[i].frame_height = sizes[(i + (int) seed) % 5][1];
  }
  if (batch_tensor) {
    char *h = malloc (fr[0].size * (size_t) b);
    char *hp = seg ? malloc (fr[0].protos_size * (size_t) b) : NULL;

    if (h == NULL || (seg && hp == NULL))
      exit (1);
    for (i = 0; i < b; i++) {
      memcpy (h + (size_t) i * fr[0].size, fr[i].data, fr[0].size);
      if (seg)
        memcpy (hp + (size_t) i * fr[0].protos_size, fr[i].protos,
            fr[0].protos_size);
    }
    dall = to_device (h, fr[0].size * (size_t) b);
    if (seg)
      dallp = to_device (hp, fr[0].protos_size * (size_t) b);
    free (h);
    free (hp);
    bt = fr[0].t;
    bt.data = dall;
    bt.size = fr[0].size * (size_t) b;
    bt.dims[0] = b;
    bt.on_device = 1;
    bp = fr[0].pt;
    bp.data = dallp;
    bp.size = fr[0].protos_size * (size_t) b;
    bp.dims[0] = b;
    bp.on_device = 1;
    for (i = 0; i < b; i++) {
      dt[i] = fr[i].t;
      dt[i].data = (char *) dall + (size_t) i * fr[0].size;
      dt[i].on_device = 1;
      if (seg) {
        dp[i] = fr[i].pt;
        dp[i].data = (char *) dallp + (size_t) i * fr[0].protos_size;
        dp[i].on_device = 1;
      }
    }
  } else {
    for (i = 0; i < b; i++) {
      dmem[2 * i] = to_device (fr[i].data, fr[i].size);
      dt[i] = fr[i].t;
      dt[i].data = dmem[2 * i];
      dt[i].on_device = 1;
      if (i == bad)
        dt[i].size -= 2;
      frames[i].tensor = &dt[i];
      if (seg) {
        dmem[2 * i + 1] = to_device (fr[i].protos, fr[i].protos_size);
        dp[i] = fr[i].pt;
        dp[i].data = dmem[2 * i + 1];
        dp[i].on_device = 1;
        frames[i].protos = &dp[i];
      }
    }
  }
  snprintf (what, sizeof what, "%s %s %s B=%d N=%d..%d%s",
      cnms_layout_name (layout), f16 ? "f16" : "f32", batch_tensor ?
      "batch-tensor" : "per-frame", b, lo, batch_tensor ? lo : hi,
      bad >= 0 ? " bad-frame" : caps_on ? " caps" : "");

  for (rep = 0; rep < 3; rep++) {
    uint64_t allocs = cnms_ctx_alloc_count (ctx_batch);
    cnms_status st = batch_tensor ?
        cnms_detect_batch (ctx_batch, &bt, seg ? &bp : NULL, frames, b,
        layout, &p, &res) :
        cnms_detect_batch (ctx_batch, NULL, NULL, frames, b, layout, &p,
        &res);

    if (st != CNMS_OK) {
      fprintf (stderr, "FAIL %s: %s: %s\n", what, cnms_status_str (st),
          cnms_ctx_error (ctx_batch));
      mismatches++;
      break;
    }
    if (rep == 2 && cnms_ctx_alloc_count (ctx_batch) != allocs) {
      fprintf (stderr, "FAIL %s: the third call allocated\n", what);
      mismatches++;
    }
    for (i = 0; i < b; i++) {
      cnms_params fp = p;
      cnms_tensor ht = fr[i].t;

      fp.frame_width = frames[i].frame_width;
      fp.frame_height = frames[i].frame_height;
      if (i == bad)
        ht.size -= 2;
      if (i == bad && res[i].status != CNMS_ERR_BAD_TENSOR) {
        fprintf (stderr, "FAIL %s: bad frame %d has status %d\n", what, i,
            (int) res[i].status);
        mismatches++;
      }
      frame_ok (&res[i], &dt[i], seg ? &dp[i] : NULL, &ht,
          seg ? &fr[i].pt : NULL, layout, &fp, what, i);
    }
  }
  printf ("batch parity %s: %d frames x 3 calls, %ld mismatches\n", what,
      b, mismatches - before);
  lines++;
  for (i = 0; i < b; i++) {
    cudaFree (dmem[2 * i]);
    cudaFree (dmem[2 * i + 1]);
    bf_free (&fr[i]);
  }
  cudaFree (dall);
  cudaFree (dallp);
  free (fr);
  free (dt);
  free (dp);
  free (frames);
  free (dmem);
}

int
main (void)
{
  static const int bs[] = { 1, 8, 32, 128, 256 };
  const long cases = gpu_env_int ("CNMS_GPU_CASES", 100);
  const int n_bs = cases <= 1 ? 2 : 5;
  int l, f16, k;

  gpu_require_device ("cuda-batch-device");
  ctx_cpu = gpu_ctx_new (CNMS_BACKEND_CPU);
  ctx_one = gpu_ctx_new (CNMS_BACKEND_CUDA);
  ctx_batch = gpu_ctx_new (CNMS_BACKEND_CUDA);
  if (cases == 0) {
    /* the least that takes each path of the batch (racecheck): the fused
     * decode, the decode kernel, end2end, oriented boxes; 8 frames */
    for (l = 0; l < 4; l++) {
      run_case (bf_layouts[l], 0, 8, 100, 900, 0, -1, (uint64_t) l + 1);
      run_case (bf_layouts[l], 1, 8, 300, 0, 1, -1, (uint64_t) l + 11);
    }
    /* the heads after the batch, and the caps' kernel */
    run_case (CNMS_LAYOUT_YOLOV8_POSE, 0, 8, 100, 900, 0, -1, 21u);
    run_case (CNMS_LAYOUT_YOLOV8_SEG, 0, 8, 100, 900, 0, -1, 22u);
    caps_on = 1;
    run_case (CNMS_LAYOUT_YOLOV8, 0, 8, 100, 900, 0, -1, 23u);
    caps_on = 0;
    goto done;
  }
  for (l = 0; l < BF_N_LAYOUTS; l++) {
    const cnms_layout layout = bf_layouts[l];
    const int lanes = layout == CNMS_LAYOUT_LANEATT;

    for (f16 = 0; f16 < 2; f16++)
      for (k = 0; k < n_bs; k++) {
        const int b = bs[k];
        const uint64_t seed = (uint64_t) (100 * l + 10 * f16 + k + 1);

        /* lanes go frame by frame: fewer of them */
        if (lanes && b > 32)
          continue;
        run_case (layout, f16, b, b > 32 ? 30 : 200, b > 32 ? 300 : 3000,
            0, -1, seed);
        run_case (layout, f16, b, b > 32 ? 100 : 1500, 0, 1, -1,
            seed + 5000);
      }
    /* N from 20 to 2000 in one batch, and a bad frame */
    run_case (layout, 0, n_bs > 2 ? 64 : 16, 20, 2000, 0, 5,
        (uint64_t) l + 9000);
    /* per-class caps and max_detections after them */
    caps_on = 1;
    run_case (layout, 0, n_bs > 2 ? 32 : 8, 100, 2000, 0, -1,
        (uint64_t) l + 9100);
    run_case (layout, 1, 8, 800, 0, 1, -1, (uint64_t) l + 9200);
    caps_on = 0;
  }
  /* a YOLOv8 batch of 8400 anchors a frame, as a model gives */
  run_case (CNMS_LAYOUT_YOLOV8, 0, n_bs > 2 ? 32 : 4, 8400, 8400, 1, -1,
      424242u);
done:
  printf ("cuda-batch-device: %ld lines, %ld frames, %ld mismatches\n",
      lines, frames_total, mismatches);
  cnms_ctx_free (ctx_cpu);
  cnms_ctx_free (ctx_one);
  cnms_ctx_free (ctx_batch);
  return mismatches == 0 ? 0 : 1;
}
