/* A small .npy reader for tensorinject (float32/float16, C order). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstnpy.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

/* Returns the text after 'key': in the header dict, or NULL. */
static const gchar *
npy_field (const gchar * header, const gchar * key)
{
  gchar *needle = g_strdup_printf ("'%s':", key);
  const gchar *p = strstr (header, needle);
  gsize len = strlen (needle);

  g_free (needle);
  if (p == NULL)
    return NULL;
  p += len;
  while (*p == ' ')
    p++;
  return p;
}

static gboolean
npy_parse_header (const gchar * header, CudanmsNpy * npy)
{
  const gchar *descr = npy_field (header, "descr");
  const gchar *order = npy_field (header, "fortran_order");
  const gchar *shape = npy_field (header, "shape");

  if (descr == NULL || order == NULL || shape == NULL)
    return FALSE;
  if (g_str_has_prefix (descr, "'<f4'"))
    npy->dtype = CNMS_DTYPE_FLOAT32;
  else if (g_str_has_prefix (descr, "'<f2'"))
    npy->dtype = CNMS_DTYPE_FLOAT16;
  else
    return FALSE;
  if (!g_str_has_prefix (order, "False") || *shape != '(')
    return FALSE;

  npy->n_dims = 0;
  shape++;
  while (*shape != ')') {
    gchar *end = NULL;
    gint64 d;

    while (*shape == ' ' || *shape == ',')
      shape++;
    if (*shape == ')')
      break;
    d = g_ascii_strtoll (shape, &end, 10);
    if (end == shape || d < 0 || npy->n_dims >= CNMS_MAX_DIMS)
      return FALSE;
    npy->dims[npy->n_dims++] = d;
    shape = end;
  }
  return npy->n_dims > 0;
}

gboolean
cudanms_npy_load (const gchar * path, CudanmsNpy * npy, GError ** error)
{
  gchar *contents = NULL, *header = NULL;
  gsize len = 0, offset, hlen, need;
  gint i;

  memset (npy, 0, sizeof (*npy));
  if (!g_file_get_contents (path, &contents, &len, error))
    return FALSE;
  if (len < 10 || memcmp (contents, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    goto bad;
  if (contents[6] == 1) {
    hlen = GST_READ_UINT16_LE (contents + 8);
    offset = 10;
  } else if (len >= 12 && (contents[6] == 2 || contents[6] == 3)) {
    hlen = GST_READ_UINT32_LE (contents + 8);
    offset = 12;
  } else {
    goto bad;
  }
  if (hlen > len - offset)
    goto bad;
  header = g_strndup (contents + offset, hlen);
  offset += hlen;
  if (!npy_parse_header (header, npy))
    goto bad;

  need = npy->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  for (i = 0; i < npy->n_dims; i++) {
    if (npy->dims[i] != 0 && need > G_MAXSIZE / (gsize) npy->dims[i])
      goto bad;
    need *= (gsize) npy->dims[i];
  }
  if (need > len - offset)
    goto bad;

  npy->data = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, contents,
      len, offset, need, contents, g_free);
  g_free (header);
  return TRUE;

bad:
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
      "%s is not a float32/float16 C-order .npy file, or it is truncated",
      path);
  g_free (header);
  g_free (contents);
  return FALSE;
}

void
cudanms_npy_clear (CudanmsNpy * npy)
{
  gst_clear_buffer (&npy->data);
}
