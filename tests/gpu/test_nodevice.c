/* The other side of the skip: on a machine without a CUDA device, asking
 * for the CUDA backend fails cleanly with CNMS_ERR_NO_DEVICE. Skips (77)
 * where a device exists. */
#include "gpu_common.h"

int
main (void)
{
  cnms_ctx *ctx = NULL;
  cnms_status st;

  if (cnms_cuda_device_count () > 0) {
    printf ("cuda-no-device: SKIP, a CUDA device is present\n");
    return GPU_SKIP;
  }
  st = cnms_ctx_new (CNMS_BACKEND_CUDA, -1, &ctx);
  if (st != CNMS_ERR_NO_DEVICE || ctx != NULL) {
    printf ("FAIL: cnms_ctx_new(cuda) without a device: %s\n",
        cnms_status_str (st));
    cnms_ctx_free (ctx);
    return 1;
  }
  printf ("cuda-no-device: %s, as expected\n", cnms_status_str (st));
  return 0;
}
