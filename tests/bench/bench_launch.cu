/* bench-launch: what the GPU charges a frame before any work, between
 * CUDA events as bench-frame's GPU time is measured: an empty kernel
 * launched plainly and cooperatively (the engine's launch), on 1 to 528
 * blocks of 256 threads, with no parameters and with 616 bytes of them
 * (about cnms_engine_args); a store to mapped pinned host memory (where
 * the engine writes its results); 1, 2 and 4 grid barriers; and a second
 * kernel behind the first. An instrument, not a test: it asserts nothing.
 *
 *   bench-launch [ITERS]        (default 2000; medians, minima and 90th
 *                                percentiles of ITERS timed launches)
 *
 * Exits 77 without a CUDA device. The figures: docs/performance.md,
 * "Where the YOLOv8 device frame's time goes". */
#include <cooperative_groups.h>

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

namespace cg = cooperative_groups;

/* About the size of the engine's parameters. */
struct big_params {
  char bytes[608];
  int *flag;
};

__global__ void
k_empty (void)
{
}

__global__ void
k_big (big_params a)
{
  if (a.bytes[0] == 42 && threadIdx.x == 9999)
    a.flag[0] = 1;
}

__global__ void
k_host (int *h, int stores)
{
  if (blockIdx.x == 0 && (int) threadIdx.x < stores)
    h[threadIdx.x] = 1;
}

__global__ void
k_sync (int barriers, int *h)
{
  cg::grid_group g = cg::this_grid ();

  for (int i = 0; i < barriers; i++)
    g.sync ();
  if (h != NULL && blockIdx.x == 0 && threadIdx.x == 0)
    h[0] = 1;
}

static cudaStream_t stream;
static cudaEvent_t ev0, ev1;
static int iters = 2000;

template <typename F>
static void
row (const char *what, int blocks, F launch)
{
  std::vector <float> us;
  char name[96];

  for (int i = 0; i < 300; i++)
    launch ();
  cudaStreamSynchronize (stream);
  for (int i = 0; i < iters; i++) {
    float ms = 0.0f;

    cudaEventRecord (ev0, stream);
    launch ();
    cudaEventRecord (ev1, stream);
    cudaEventSynchronize (ev1);
    cudaEventElapsedTime (&ms, ev0, ev1);
    us.push_back (ms * 1000.0f);
  }
  std::sort (us.begin (), us.end ());
  if (blocks > 0)
    snprintf (name, sizeof name, "%s, %d blocks", what, blocks);
  else
    snprintf (name, sizeof name, "%s", what);
  printf ("%-58s median %6.2f us  min %6.2f  p90 %6.2f%s\n", name,
      us[us.size () / 2], us[0], us[us.size () * 9 / 10],
      cudaGetLastError () == cudaSuccess ? "" : "  FAILED");
}

int
main (int argc, char **argv)
{
  int devices = 0, *h, *hd, *d;
  big_params big = { };
  cudaDeviceProp prop;

  if (argc > 1)
    iters = atoi (argv[1]) > 0 ? atoi (argv[1]) : iters;
  if (cudaGetDeviceCount (&devices) != cudaSuccess || devices < 1) {
    fprintf (stderr, "bench-launch: no CUDA device\n");
    return 77;
  }
  cudaGetDeviceProperties (&prop, 0);
  printf ("bench-launch: %s, %d multiprocessors; GPU time between CUDA "
      "events, %d launches a row\n", prop.name, prop.multiProcessorCount,
      iters);
  if (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking)
      != cudaSuccess || cudaEventCreate (&ev0) != cudaSuccess
      || cudaEventCreate (&ev1) != cudaSuccess
      || cudaHostAlloc ((void **) &h, 4096, cudaHostAllocMapped)
      != cudaSuccess || cudaHostGetDevicePointer ((void **) &hd, h, 0)
      != cudaSuccess || cudaMalloc ((void **) &d, 4096) != cudaSuccess) {
    fprintf (stderr, "bench-launch: cannot set up the device\n");
    return 1;
  }
  big.flag = d;

  row ("the events alone", 0, [&] { });
  for (int blocks : { 1, 84, 264, 528 }) {
    row ("plain, empty", blocks, [&] { k_empty <<< blocks, 256, 0,
            stream >>> (); });
    row ("cooperative, empty", blocks, [&] {
          void *a[] = { NULL };
          cudaLaunchCooperativeKernel ((void *) k_empty, blocks, 256, a, 0,
              stream); });
    row ("plain, 616 bytes of parameters", blocks, [&] { k_big <<< blocks,
            256, 0, stream >>> (big); });
    row ("cooperative, 616 bytes of parameters", blocks, [&] {
          void *a[] = { &big };
          cudaLaunchCooperativeKernel ((void *) k_big, blocks, 256, a, 0,
              stream); });
    for (int stores : { 1, 16 }) {
      char what[64];
      snprintf (what, sizeof what, "plain, %d store%s to mapped host memory",
          stores, stores > 1 ? "s" : "");
      row (what, blocks, [&] { k_host <<< blocks, 256, 0, stream >>> (hd,
              stores); });
    }
    for (int barriers : { 1, 2, 4 }) {
      char what[64];
      int *none = NULL;
      snprintf (what, sizeof what, "cooperative, %d grid barrier%s",
          barriers, barriers > 1 ? "s" : "");
      row (what, blocks, [&] {
            void *a[] = { &barriers, &none };
            cudaLaunchCooperativeKernel ((void *) k_sync, blocks, 256, a, 0,
                stream); });
    }
    row ("cooperative, 2 grid barriers and a host store", blocks, [&] {
          int barriers = 2;
          void *a[] = { &barriers, &hd };
          cudaLaunchCooperativeKernel ((void *) k_sync, blocks, 256, a, 0,
              stream); });
  }
  row ("two plain empty kernels, one behind the other", 84, [&] {
        k_empty <<< 84, 256, 0, stream >>> ();
        k_empty <<< 84, 256, 0, stream >>> (); });
  cudaFreeHost (h);
  cudaFree (d);
  return 0;
}
