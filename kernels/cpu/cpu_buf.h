/* The CPU backend's host buffers: owned by a context, they only grow, and
 * every allocation is counted on it (cnms_ctx_alloc_count, host bytes). */
#ifndef CNMS_CPU_BUF_H
#define CNMS_CPU_BUF_H

#include "cnms_internal.h"

typedef struct {
  void *p;
  size_t cap;                   /* bytes */
} cnms_buf;

/* Makes b hold at least bytes (contents are not kept). */
cnms_status cnms_buf_reserve (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes);
/* Like cnms_buf_reserve, but keeps the contents (at least doubling). */
cnms_status cnms_buf_grow (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes);
void cnms_buf_release (cnms_backend_ctx *ctx, cnms_buf *b);

#endif /* CNMS_CPU_BUF_H */
