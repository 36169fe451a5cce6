#include "cnms_internal.h"
int cnms_cuda_device_count (void) { return cnms_cuda_backend_device_count (); }
