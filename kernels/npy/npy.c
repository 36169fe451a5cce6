/* .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
 * Only what cudanms needs; anything else is rejected with a reason rather
 * than guessed at. Assumes a little-endian host, like the whole project. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnms_npy.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* A header this long is not a tensor description. */
#define NPY_MAX_HEADER (1 << 20)

static const char *const dtype_descr[] = { "<f4", "<f2", "<i4", "<i8" };

size_t
cnms_npy_dtype_size (cnms_npy_dtype dtype)
{
  switch (dtype) {
    case CNMS_NPY_F4:
    case CNMS_NPY_I4:
      return 4;
    case CNMS_NPY_F2:
      return 2;
    case CNMS_NPY_I8:
      return 8;
    default:
      return 0;
  }
}

const char *
cnms_npy_dtype_name (cnms_npy_dtype dtype)
{
  switch (dtype) {
    case CNMS_NPY_F4:
      return "float32";
    case CNMS_NPY_F2:
      return "float16";
    case CNMS_NPY_I4:
      return "int32";
    case CNMS_NPY_I8:
      return "int64";
    default:
      return "unknown";
  }
}

static int
fail (char *err, size_t err_size, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static int
fail (char *err, size_t err_size, const char *fmt, ...)
{
  va_list ap;

  if (err != NULL && err_size > 0) {
    va_start (ap, fmt);
    vsnprintf (err, err_size, fmt, ap);
    va_end (ap);
  }
  return -1;
}

static const char *
skip_space (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n')
    p++;
  return p;
}

/* Finds the value that follows the dict key 'key' (quoted either way). */
static const char *
find_key (const char *h, const char *key)
{
  size_t klen = strlen (key);
  const char *p = h;

  while ((p = strstr (p, key)) != NULL) {
    if (p > h && (p[-1] == '\'' || p[-1] == '"') && p[klen] == p[-1]) {
      p = skip_space (p + klen + 1);
      if (*p == ':')
        return skip_space (p + 1);
    }
    p += klen;
  }
  return NULL;
}

static int
parse_header (const char *h, cnms_npy *a, char *err, size_t err_size)
{
  const char *p;
  char quote;
  int i;

  p = find_key (h, "descr");
  if (p == NULL || (*p != '\'' && *p != '"'))
    return fail (err, err_size, "npy header has no 'descr'");
  quote = *p++;
  for (i = 0; i < 4; i++) {
    size_t len = strlen (dtype_descr[i]);
    if (strncmp (p, dtype_descr[i], len) == 0 && p[len] == quote)
      break;
  }
  if (i == 4) {
    char shown[16];
    size_t k;

    /* echo the descr, but only printable bytes of it */
    for (k = 0; k + 1 < sizeof shown && p[k] != '\0' && p[k] != quote; k++)
      shown[k] = isprint ((unsigned char) p[k]) ? p[k] : '?';
    shown[k] = '\0';
    return fail (err, err_size, "unsupported npy dtype '%s' (expected "
        "<f4, <f2, <i4 or <i8)", shown);
  }
  a->dtype = (cnms_npy_dtype) i;

  p = find_key (h, "fortran_order");
  if (p == NULL)
    return fail (err, err_size, "npy header has no 'fortran_order'");
  if (strncmp (p, "True", 4) == 0)
    return fail (err, err_size, "fortran-ordered npy arrays are not "
        "supported");
  if (strncmp (p, "False", 5) != 0)
    return fail (err, err_size, "npy header has a bad 'fortran_order'");

  p = find_key (h, "shape");
  if (p == NULL || *p != '(')
    return fail (err, err_size, "npy header has no 'shape' tuple");
  p = skip_space (p + 1);
  a->n_dims = 0;
  a->count = 1;
  while (*p != ')') {
    char *end;
    long long v;

    if (!isdigit ((unsigned char) *p))
      return fail (err, err_size, "npy header has a bad 'shape'");
    errno = 0;
    v = strtoll (p, &end, 10);
    if (errno != 0 || v < 0 || v > INT64_MAX / 2)
      return fail (err, err_size, "npy shape value out of range");
    if (a->n_dims == CNMS_NPY_MAX_DIMS)
      return fail (err, err_size, "npy array has more than %d dims",
          CNMS_NPY_MAX_DIMS);
    a->dims[a->n_dims++] = v;
    if (v != 0 && a->count > SIZE_MAX / (size_t) v)
      return fail (err, err_size, "npy array is too large");
    a->count *= (size_t) v;
    p = skip_space (end);
    if (*p == ',')
      p = skip_space (p + 1);
    else if (*p != ')')
      return fail (err, err_size, "npy header has a bad 'shape'");
  }
  if (a->count > SIZE_MAX / cnms_npy_dtype_size (a->dtype))
    return fail (err, err_size, "npy array is too large");
  return 0;
}

int
cnms_npy_read (const char *path, cnms_npy *a, char *err, size_t err_size)
{
  FILE *f;
  unsigned char pre[NPY_MAGIC_LEN + 2 + 4];
  size_t hlen, got;
  char *header = NULL;
  long data_start, file_end;
  int extra;

  memset (a, 0, sizeof *a);
  f = fopen (path, "rb");
  if (f == NULL)
    return fail (err, err_size, "%s: %s", path, strerror (errno));

  if (fread (pre, 1, NPY_MAGIC_LEN + 2, f) != NPY_MAGIC_LEN + 2
      || memcmp (pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    fail (err, err_size, "%s: not a .npy file (bad magic)", path);
    goto error;
  }
  if (pre[6] == 1) {
    if (fread (pre + 8, 1, 2, f) != 2)
      goto truncated;
    hlen = pre[8] | ((size_t) pre[9] << 8);
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread (pre + 8, 1, 4, f) != 4)
      goto truncated;
    hlen = pre[8] | ((size_t) pre[9] << 8) | ((size_t) pre[10] << 16)
        | ((size_t) pre[11] << 24);
  } else {
    fail (err, err_size, "%s: unsupported .npy version %d.%d", path,
        pre[6], pre[7]);
    goto error;
  }
  if (hlen == 0 || hlen > NPY_MAX_HEADER) {
    fail (err, err_size, "%s: bad .npy header length %zu", path, hlen);
    goto error;
  }
  header = malloc (hlen + 1);
  if (header == NULL) {
    fail (err, err_size, "%s: out of memory", path);
    goto error;
  }
  if (fread (header, 1, hlen, f) != hlen)
    goto truncated;
  header[hlen] = '\0';
  if (memchr (header, '\0', hlen) != NULL || header[0] != '{') {
    fail (err, err_size, "%s: bad .npy header", path);
    goto error;
  }
  if (parse_header (header, a, err, err_size) != 0) {
    /* prefix the path to the reason */
    char reason[256];
    snprintf (reason, sizeof reason, "%s", err ? err : "");
    fail (err, err_size, "%s: %s", path, reason);
    goto error;
  }

  a->size = a->count * cnms_npy_dtype_size (a->dtype);
  /* A corrupt shape must not make us allocate more than the file holds. */
  data_start = ftell (f);
  if (data_start < 0 || fseek (f, 0, SEEK_END) != 0
      || (file_end = ftell (f)) < 0 || fseek (f, data_start, SEEK_SET) != 0) {
    fail (err, err_size, "%s: cannot seek in the file", path);
    goto error;
  }
  if ((uint64_t) (file_end - data_start) < (uint64_t) a->size) {
    fail (err, err_size, "%s: truncated .npy data (%ld of %zu bytes)", path,
        file_end - data_start, a->size);
    goto error;
  }
  /* one spare byte so that an empty array still gets a pointer */
  a->data = malloc (a->size + 1);
  if (a->data == NULL) {
    fail (err, err_size, "%s: out of memory (%zu bytes)", path, a->size);
    goto error;
  }
  got = fread (a->data, 1, a->size, f);
  if (got != a->size) {
    fail (err, err_size, "%s: truncated .npy data (%zu of %zu bytes)", path,
        got, a->size);
    goto error;
  }
  extra = fgetc (f);
  if (extra != EOF) {
    fail (err, err_size, "%s: trailing bytes after the .npy data", path);
    goto error;
  }
  free (header);
  fclose (f);
  return 0;

truncated:
  fail (err, err_size, "%s: truncated .npy header", path);
error:
  free (header);
  cnms_npy_clear (a);
  fclose (f);
  return -1;
}

int
cnms_npy_write (const char *path, cnms_npy_dtype dtype, int n_dims,
    const int64_t *dims, const void *data, char *err, size_t err_size)
{
  char header[512];
  char shape[256];
  size_t count = 1, size, hlen, total;
  int len = 0, i;
  unsigned char pre[10];
  FILE *f;

  if (n_dims < 0 || n_dims > CNMS_NPY_MAX_DIMS
      || cnms_npy_dtype_size (dtype) == 0)
    return fail (err, err_size, "%s: bad array description", path);
  shape[0] = '\0';
  for (i = 0; i < n_dims; i++) {
    len += snprintf (shape + len, sizeof shape - (size_t) len, "%lld%s",
        (long long) dims[i], n_dims == 1 ? "," : (i + 1 < n_dims ? ", " : ""));
    count *= (size_t) dims[i];
  }
  size = count * cnms_npy_dtype_size (dtype);
  len = snprintf (header, sizeof header,
      "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
      dtype_descr[dtype], shape);
  /* pad with spaces so that the data starts on a 64-byte boundary */
  total = 10 + (size_t) len + 1;
  hlen = (size_t) len + ((64 - total % 64) % 64);
  memset (header + len, ' ', hlen - (size_t) len);
  header[hlen] = '\n';
  hlen++;

  memcpy (pre, NPY_MAGIC, NPY_MAGIC_LEN);
  pre[6] = 1;
  pre[7] = 0;
  pre[8] = (unsigned char) (hlen & 0xff);
  pre[9] = (unsigned char) (hlen >> 8);

  f = fopen (path, "wb");
  if (f == NULL)
    return fail (err, err_size, "%s: %s", path, strerror (errno));
  if (fwrite (pre, 1, 10, f) != 10 || fwrite (header, 1, hlen, f) != hlen
      || (size > 0 && fwrite (data, 1, size, f) != size)) {
    fclose (f);
    return fail (err, err_size, "%s: write failed", path);
  }
  if (fclose (f) != 0)
    return fail (err, err_size, "%s: write failed", path);
  return 0;
}

void
cnms_npy_clear (cnms_npy *a)
{
  free (a->data);
  memset (a, 0, sizeof *a);
}
