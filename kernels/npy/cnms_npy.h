/* Minimal .npy reader/writer for cudanms-tool and the tests: format
 * versions 1.0-3.0, little-endian '<f4' '<f2' '<i4' '<i8' and '|u1', C order. */
#ifndef CNMS_NPY_H
#define CNMS_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CNMS_NPY_MAX_DIMS 8

typedef enum {
  CNMS_NPY_F4 = 0,
  CNMS_NPY_F2,
  CNMS_NPY_I4,
  CNMS_NPY_I8,
  CNMS_NPY_U1
} cnms_npy_dtype;

typedef struct {
  cnms_npy_dtype dtype;
  int n_dims;                   /* 0 for a scalar */
  int64_t dims[CNMS_NPY_MAX_DIMS];
  size_t count;                 /* number of elements */
  void *data;                   /* count elements, malloc'ed */
  size_t size;                  /* bytes at data */
} cnms_npy;

/* Reads path into a. Returns 0, or -1 with a one-line reason in err.
 * The header must be what numpy writes: a dict of exactly 'descr',
 * 'fortran_order' and 'shape' (a key given twice takes its last value,
 * as numpy reads it), and the data exactly what the shape says. */
int cnms_npy_read (const char *path, cnms_npy *a, char *err, size_t err_size);
/* The same from an open, seekable stream from its current position to its
 * end; name prefixes the messages. The stream stays open. */
int cnms_npy_read_stream (FILE *f, const char *name, cnms_npy *a, char *err,
    size_t err_size);

/* Writes a .npy v1.0 file. Returns 0, or -1 with a reason in err. */
int cnms_npy_write (const char *path, cnms_npy_dtype dtype, int n_dims,
    const int64_t *dims, const void *data, char *err, size_t err_size);

/* Frees the data of a and zeroes it. */
void cnms_npy_clear (cnms_npy *a);

size_t cnms_npy_dtype_size (cnms_npy_dtype dtype);
const char *cnms_npy_dtype_name (cnms_npy_dtype dtype);

#endif /* CNMS_NPY_H */
