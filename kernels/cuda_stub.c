/* The CUDA backend of a build without CUDA: contexts cannot be created and
 * no device is ever reported. */
#include "cnms_internal.h"

static cnms_status
stub_create (cnms_ctx *ctx, int device_id)
{
  (void) device_id;
  return cnms_ctx_fail (ctx, CNMS_ERR_UNSUPPORTED,
      "cudanms was built without CUDA");
}

static void
stub_destroy (cnms_ctx *ctx)
{
  (void) ctx;
}

static cnms_status
stub_detect (cnms_ctx *ctx, const cnms_tensor *t, const cnms_shape *shape,
    const cnms_params *p, const cnms_map *map, const cnms_det **dets,
    int *n_dets)
{
  (void) t;
  (void) shape;
  (void) p;
  (void) map;
  (void) dets;
  (void) n_dets;
  return cnms_ctx_fail (ctx, CNMS_ERR_UNSUPPORTED,
      "cudanms was built without CUDA");
}

static cnms_status
stub_nms (cnms_ctx *ctx, const float *boxes, const float *scores,
    const int32_t *classes, int n, float iou, int class_agnostic,
    int max_detections, int64_t *keep, int *n_keep)
{
  (void) boxes;
  (void) scores;
  (void) classes;
  (void) n;
  (void) iou;
  (void) class_agnostic;
  (void) max_detections;
  (void) keep;
  (void) n_keep;
  return cnms_ctx_fail (ctx, CNMS_ERR_UNSUPPORTED,
      "cudanms was built without CUDA");
}

const cnms_backend_ops cnms_cuda_ops = {
  "cuda (not built)",
  stub_create,
  stub_destroy,
  stub_detect,
  stub_nms,
};

int
cnms_cuda_backend_device_count (void)
{
  return 0;
}
