#include <cuda_runtime.h>
#include "cnms_internal.h"
extern "C" int cnms_cuda_backend_device_count (void) { int n = 0; if (cudaGetDeviceCount (&n) != cudaSuccess) return 0; return n; }
