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

static const char *const dtype_descr[] = {
  "<f4", "<f2", "<i4", "<i8", "|u1"
};
static const size_t n_descr = sizeof dtype_descr / sizeof dtype_descr[0];

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
    case CNMS_NPY_U1:
      return 1;
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
    case CNMS_NPY_U1:
      return "uint8";
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

/* The header is a Python dict literal (numpy writes it with repr and reads
 * it with ast.literal_eval). This parser walks it with a cursor bounded by
 * the header's length, never past it: a dict of exactly the keys 'descr',
 * 'fortran_order' and 'shape' (numpy refuses others), string values
 * without escapes, True/False, and a tuple of non-negative integers. As in
 * Python, a key given twice takes its last value. */
typedef struct {
  const char *p, *end;
} cursor;

static void
skip_ws (cursor *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n'
          || *c->p == '\r'))
    c->p++;
}

static int
take (cursor *c, char ch)
{
  skip_ws (c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes: [*s, *s + *len). */
static int
take_string (cursor *c, const char **s, size_t *len)
{
  char quote;
  const char *q;

  skip_ws (c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return 0;
  quote = *c->p++;
  for (q = c->p; q < c->end && *q != quote; q++) {
    if (*q == '\\')
      return 0;
  }
  if (q >= c->end)
    return 0;
  *s = c->p;
  *len = (size_t) (q - c->p);
  c->p = q + 1;
  return 1;
}

static int
take_word (cursor *c, const char *word)
{
  size_t n = strlen (word);

  skip_ws (c);
  if ((size_t) (c->end - c->p) < n || memcmp (c->p, word, n) != 0)
    return 0;
  /* not the prefix of a longer name */
  if ((size_t) (c->end - c->p) > n && (isalnum ((unsigned char) c->p[n])
          || c->p[n] == '_'))
    return 0;
  c->p += n;
  return 1;
}

/* Echoes s into out with only printable bytes, cut to fit. */
static void
shown (const char *s, size_t len, char *out, size_t out_size)
{
  size_t k;

  for (k = 0; k + 1 < out_size && k < len; k++)
    out[k] = isprint ((unsigned char) s[k]) ? s[k] : '?';
  out[k] = '\0';
}

/* The 'shape' tuple: "()" or "(d,)" or "(d0, d1, ...)" with an optional
 * trailing comma; "(d)" is an integer in Python, not a tuple. */
static int
parse_shape (cursor *c, cnms_npy *a, char *err, size_t err_size)
{
  int commas = 0;

  if (!take (c, '('))
    return fail (err, err_size, "npy header has no 'shape' tuple");
  a->n_dims = 0;
  skip_ws (c);
  while (!take (c, ')')) {
    long long v = 0;

    skip_ws (c);
    if (c->p >= c->end || !isdigit ((unsigned char) *c->p))
      return fail (err, err_size, "npy header has a bad 'shape'");
    while (c->p < c->end && isdigit ((unsigned char) *c->p)) {
      if (v > (INT64_MAX / 2 - 9) / 10)
        return fail (err, err_size, "npy shape value out of range");
      v = v * 10 + (*c->p++ - '0');
    }
    if (a->n_dims == CNMS_NPY_MAX_DIMS)
      return fail (err, err_size, "npy array has more than %d dims",
          CNMS_NPY_MAX_DIMS);
    a->dims[a->n_dims++] = v;
    if (take (c, ','))
      commas++;
    else if (!take (c, ')'))
      return fail (err, err_size, "npy header has a bad 'shape'");
    else
      break;
  }
  if (a->n_dims == 1 && commas == 0)
    return fail (err, err_size, "npy header has a bad 'shape' (an integer, "
        "not a tuple)");
  return 0;
}

static int
parse_header (const char *h, size_t hlen, cnms_npy *a, char *err,
    size_t err_size)
{
  cursor c = { h, h + hlen };
  int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
  const char *descr = NULL;
  size_t descr_len = 0, i;
  cnms_npy tmp;
  char name[32];

  memset (&tmp, 0, sizeof tmp);
  if (!take (&c, '{'))
    return fail (err, err_size, "npy header is not a dict");
  while (!take (&c, '}')) {
    const char *key;
    size_t klen;

    if (!take_string (&c, &key, &klen) || !take (&c, ':'))
      return fail (err, err_size, "npy header is not a dict of quoted keys");
    if (klen == 5 && memcmp (key, "descr", 5) == 0) {
      if (!take_string (&c, &descr, &descr_len))
        return fail (err, err_size, "npy header has a bad 'descr' (a "
            "string expected)");
      have_descr = 1;
    } else if (klen == 13 && memcmp (key, "fortran_order", 13) == 0) {
      if (take_word (&c, "True"))
        fortran = 1;
      else if (take_word (&c, "False"))
        fortran = 0;
      else
        return fail (err, err_size, "npy header has a bad 'fortran_order'");
      have_order = 1;
    } else if (klen == 5 && memcmp (key, "shape", 5) == 0) {
      if (parse_shape (&c, &tmp, err, err_size) != 0)
        return -1;
      have_shape = 1;
    } else {
      shown (key, klen, name, sizeof name);
      return fail (err, err_size, "npy header has an unexpected key '%s'",
          name);
    }
    if (!take (&c, ',')) {
      if (!take (&c, '}'))
        return fail (err, err_size, "npy header is not a dict (',' or '}' "
            "expected)");
      break;
    }
  }
  skip_ws (&c);
  if (c.p != c.end)
    return fail (err, err_size, "npy header has bytes after its dict");
  if (!have_descr)
    return fail (err, err_size, "npy header has no 'descr'");
  if (!have_order)
    return fail (err, err_size, "npy header has no 'fortran_order'");
  if (!have_shape)
    return fail (err, err_size, "npy header has no 'shape' tuple");

  for (i = 0; i < n_descr; i++) {
    if (strlen (dtype_descr[i]) == descr_len
        && memcmp (descr, dtype_descr[i], descr_len) == 0)
      break;
  }
  if (i == n_descr) {
    shown (descr, descr_len, name, 16);
    return fail (err, err_size, "unsupported npy dtype '%s' (expected "
        "<f4, <f2, <i4, <i8 or |u1)", name);
  }
  if (fortran)
    return fail (err, err_size, "fortran-ordered npy arrays are not "
        "supported");

  a->dtype = (cnms_npy_dtype) i;
  a->n_dims = tmp.n_dims;
  a->count = 1;
  for (i = 0; i < (size_t) tmp.n_dims; i++) {
    a->dims[i] = tmp.dims[i];
    if (tmp.dims[i] == 0)
      a->count = 0;
  }
  /* a zero dim makes an empty array whatever the others are (as numpy
   * reads it); else the product must fit */
  for (i = 0; a->count != 0 && i < (size_t) tmp.n_dims; i++) {
    size_t v = (size_t) tmp.dims[i];

    if (a->count > SIZE_MAX / v)
      return fail (err, err_size, "npy array is too large");
    a->count *= v;
  }
  if (a->count > SIZE_MAX / cnms_npy_dtype_size (a->dtype))
    return fail (err, err_size, "npy array is too large");
  return 0;
}

int
cnms_npy_read (const char *path, cnms_npy *a, char *err, size_t err_size)
{
  FILE *f;
  int r;

  memset (a, 0, sizeof *a);
  f = fopen (path, "rb");
  if (f == NULL)
    return fail (err, err_size, "%s: %s", path, strerror (errno));
  r = cnms_npy_read_stream (f, path, a, err, err_size);
  fclose (f);
  return r;
}

int
cnms_npy_read_stream (FILE *f, const char *path, cnms_npy *a, char *err,
    size_t err_size)
{
  unsigned char pre[NPY_MAGIC_LEN + 2 + 4];
  size_t hlen, got;
  char *header = NULL;
  long data_start, file_end;
  int extra;

  memset (a, 0, sizeof *a);
  if (fread (pre, 1, NPY_MAGIC_LEN + 2, f) != NPY_MAGIC_LEN + 2
      || memcmp (pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    fail (err, err_size, "%s: not a .npy file (bad magic)", path);
    goto error;
  }
  /* the versions numpy reads: 1.0, 2.0 and 3.0 */
  if (pre[7] != 0) {
    fail (err, err_size, "%s: unsupported .npy version %d.%d", path,
        pre[6], pre[7]);
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
  if (memchr (header, '\0', hlen) != NULL) {
    fail (err, err_size, "%s: bad .npy header (a NUL byte)", path);
    goto error;
  }
  if (parse_header (header, hlen, a, err, err_size) != 0) {
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
  return 0;

truncated:
  fail (err, err_size, "%s: truncated .npy header", path);
error:
  free (header);
  cnms_npy_clear (a);
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
