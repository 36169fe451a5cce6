/* libFuzzer target: the .npy reader on arbitrary bytes. Any input either
 * reads, with a shape, count and size that agree with each other, or fails
 * with a message; ASan/UBSan see any out-of-bounds access (a header that
 * ends in a quoted key is the hard case of the header search). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnms_npy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  cnms_npy a;
  char err[256];
  FILE *f;
  size_t count = 1;
  int i, r;

  if (size == 0)
    return 0;
  f = fmemopen ((void *) data, size, "rb");
  if (f == NULL)
    return 0;
  err[0] = '\0';
  r = cnms_npy_read_stream (f, "fuzz", &a, err, sizeof err);
  fclose (f);
  if (r != 0) {
    if (err[0] == '\0' || a.data != NULL)
      abort ();                 /* a failure says why and holds nothing */
    return 0;
  }
  if (a.n_dims < 0 || a.n_dims > CNMS_NPY_MAX_DIMS || a.data == NULL)
    abort ();
  for (i = 0; i < a.n_dims; i++) {
    if (a.dims[i] < 0)
      abort ();
    count *= (size_t) a.dims[i];
  }
  if (count != a.count || a.size != a.count * cnms_npy_dtype_size (a.dtype))
    abort ();
  /* the data is exactly the rest of the input */
  if (a.size > size || memcmp (a.data, data + size - a.size, a.size) != 0)
    abort ();
  cnms_npy_clear (&a);
  return 0;
}
