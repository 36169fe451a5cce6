/* The CUDA backend as the front end sees it (a CUDA build only): its
 * operations and the devices it can use. */
#ifndef CNMS_CUDA_H
#define CNMS_CUDA_H

#include "cnms_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const cnms_backend_ops cnms_cuda_ops;
/* Usable CUDA devices (0 without one). */
int cnms_cuda_backend_device_count (void);

#ifdef __cplusplus
}
#endif
#endif /* CNMS_CUDA_H */
