/* Internal: the context object and the backend interface. Not installed,
 * never included by gst/. */
#ifndef CNMS_INTERNAL_H
#define CNMS_INTERNAL_H

#include "cudanms.h"
#include "cnms_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A backend implements these. ctx.c validates every argument first, so a
 * backend sees only well-formed input: shape already resolved, params in
 * range, n >= 0. Errors are reported with cnms_ctx_fail(). */
typedef struct cnms_backend_ops {
  const char *name;
  cnms_status (*create) (cnms_ctx *ctx, int device_id);
  void (*destroy) (cnms_ctx *ctx);
  cnms_status (*detect) (cnms_ctx *ctx, const cnms_tensor *t,
      const cnms_shape *shape, const cnms_params *p, const cnms_map *map,
      const cnms_det **dets, int *n_dets);
  cnms_status (*nms) (cnms_ctx *ctx, const float *boxes, const float *scores,
      const int32_t *classes, int n, float iou, int class_agnostic,
      int max_detections, int64_t *keep, int *n_keep);
} cnms_backend_ops;

struct cnms_ctx {
  const cnms_backend_ops *ops;
  cnms_backend backend;
  void *priv;                   /* backend state */
  char error[256];
  uint64_t alloc_count;
  size_t host_bytes, pinned_bytes, device_bytes;
  int last_candidates;
  int timing;                   /* cnms_ctx_set_timing() */
  double last_gpu_us;           /* set by a backend that times; else -1 */
};

/* Records a formatted message on ctx and returns status. */
cnms_status cnms_ctx_fail (cnms_ctx *ctx, cnms_status status,
    const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

/* Computes the model->frame mapping of p (letterbox or stretch). */
void cnms_map_init (cnms_map *m, const cnms_params *p);

extern const cnms_backend_ops cnms_cpu_ops;
/* Defined by kernels/cuda/ in a CUDA build, by cuda_stub.c otherwise. */
extern const cnms_backend_ops cnms_cuda_ops;
int cnms_cuda_backend_device_count (void);

#ifdef __cplusplus
}
#endif
#endif /* CNMS_INTERNAL_H */
