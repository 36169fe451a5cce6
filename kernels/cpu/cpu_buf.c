/* The CPU backend's grow-only host buffers (cpu_buf.h). */
#include <stdlib.h>

#include "cpu_buf.h"

/* Sizes are rounded up to this, so that small growth does not reallocate
 * every time. */
#define BUF_ROUND 4096

cnms_status
cnms_buf_reserve (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes)
{
  void *p;

  if (b->cap >= bytes)
    return CNMS_OK;
  bytes = (bytes + BUF_ROUND - 1) & ~(size_t) (BUF_ROUND - 1);
  p = malloc (bytes);
  if (p == NULL)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "cannot allocate %zu bytes of host memory", bytes);
  free (b->p);
  ctx->host_bytes -= b->cap;
  b->p = p;
  b->cap = bytes;
  ctx->host_bytes += bytes;
  ctx->alloc_count++;
  return CNMS_OK;
}

cnms_status
cnms_buf_grow (cnms_backend_ctx *ctx, cnms_buf *b, size_t bytes)
{
  void *p;

  if (b->cap >= bytes)
    return CNMS_OK;
  if (bytes < 2 * b->cap)
    bytes = 2 * b->cap;
  bytes = (bytes + BUF_ROUND - 1) & ~(size_t) (BUF_ROUND - 1);
  p = realloc (b->p, bytes);
  if (p == NULL)
    return cnms_fail (ctx, CNMS_ERR_NO_MEMORY,
        "cannot allocate %zu bytes of host memory", bytes);
  ctx->host_bytes += bytes - b->cap;
  b->p = p;
  b->cap = bytes;
  ctx->alloc_count++;
  return CNMS_OK;
}

void
cnms_buf_release (cnms_backend_ctx *ctx, cnms_buf *b)
{
  free (b->p);
  ctx->host_bytes -= b->cap;
  b->p = NULL;
  b->cap = 0;
}
