/* cudanms: the tensor input contract (see gsttensormeta.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <stdio.h>

#include "gsttensormeta.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

const GstMetaInfo *
gst_cudanms_tensor_meta_register (void)
{
  static const gchar *tags[] = { NULL };
  const GstMetaInfo *info = gst_meta_get_info (GST_CUDANMS_TENSOR_META_NAME);

  /* A second registration of the same name fails (the GType exists), so
   * whoever comes first wins; the default transform copies the structure. */
  if (info == NULL)
    info = gst_meta_register_custom (GST_CUDANMS_TENSOR_META_NAME, tags, NULL,
        NULL, NULL);
  return info;
}

static gboolean
dtype_from_string (const gchar * str, cnms_dtype * dtype)
{
  if (g_strcmp0 (str, "float32") == 0)
    *dtype = CNMS_DTYPE_FLOAT32;
  else if (g_strcmp0 (str, "float16") == 0)
    *dtype = CNMS_DTYPE_FLOAT16;
  else
    return FALSE;
  return TRUE;
}

static gboolean
value_to_dim (const GValue * v, gint64 * out)
{
  if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    *out = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    *out = g_value_get_int64 (v);
  else if (G_VALUE_HOLDS_UINT64 (v) && g_value_get_uint64 (v) <= G_MAXINT64)
    *out = (gint64) g_value_get_uint64 (v);
  else
    return FALSE;
  return *out >= 0;
}

static gboolean
parse_dims_string (const gchar * str, cnms_tensor * t)
{
  gchar **parts = g_strsplit (str, ",", -1);
  gboolean ok = TRUE;
  guint i, n = g_strv_length (parts);

  if (n == 0 || n > CNMS_MAX_DIMS)
    ok = FALSE;
  for (i = 0; ok && i < n; i++) {
    gchar *end = NULL;
    gint64 d = g_ascii_strtoll (g_strstrip (parts[i]), &end, 10);

    if (end == parts[i] || *end != '\0' || d < 0)
      ok = FALSE;
    t->dims[i] = d;
  }
  t->n_dims = ok ? (int) n : 0;
  g_strfreev (parts);
  return ok;
}

static gboolean
parse_dims (const GValue * dims, cnms_tensor * t)
{
  guint i, n;

  if (G_VALUE_HOLDS_STRING (dims))
    return parse_dims_string (g_value_get_string (dims), t);
  if (!GST_VALUE_HOLDS_ARRAY (dims))
    return FALSE;
  n = gst_value_array_get_size (dims);
  if (n == 0 || n > CNMS_MAX_DIMS)
    return FALSE;
  for (i = 0; i < n; i++) {
    if (!value_to_dim (gst_value_array_get_value (dims, i), &t->dims[i]))
      return FALSE;
  }
  t->n_dims = (int) n;
  return TRUE;
}

static gboolean
map_data (GstCudanmsTensorView * view, const GValue * data)
{
  if (data != NULL && GST_VALUE_HOLDS_BUFFER (data)) {
    GstBuffer *buf = gst_value_get_buffer (data);

    if (buf == NULL || !gst_buffer_map (buf, &view->map, GST_MAP_READ))
      return FALSE;
    view->data = gst_buffer_ref (buf);
    view->tensor.data = view->map.data;
    view->tensor.size = view->map.size;
    return TRUE;
  }
  if (data != NULL && G_VALUE_HOLDS (data, G_TYPE_BYTES)) {
    gsize size = 0;

    view->bytes = g_value_dup_boxed (data);
    if (view->bytes == NULL)
      return FALSE;
    view->tensor.data = g_bytes_get_data (view->bytes, &size);
    view->tensor.size = size;
    return TRUE;
  }
  return FALSE;
}

static GstCudanmsTensorLookup
view_from_structure (GstCudanmsTensorView * view, const GstStructure * s,
    gchar * msg, gsize msg_size)
{
  const gchar *dtype = gst_structure_get_string (s, "data-type");
  const gchar *order = gst_structure_get_string (s, "dims-order");
  const GValue *dims = gst_structure_get_value (s, "dims");

  if (dtype == NULL)
    goto no_dtype;
  if (!dtype_from_string (dtype, &view->tensor.dtype))
    goto bad_dtype;
  if (dims == NULL || !parse_dims (dims, &view->tensor))
    goto bad_dims;
  if (order != NULL && strcmp (order, "row-major") != 0)
    goto bad_order;
  if (!map_data (view, gst_structure_get_value (s, "data")))
    goto bad_data;
  return GST_CUDANMS_TENSOR_FOUND;

no_dtype:
  g_snprintf (msg, msg_size, "tensor has no data-type field");
  return GST_CUDANMS_TENSOR_BAD;
bad_dtype:
  g_snprintf (msg, msg_size, "unknown tensor data-type '%s' "
      "(float32 or float16 expected)", dtype);
  return GST_CUDANMS_TENSOR_BAD;
bad_dims:
  g_snprintf (msg, msg_size, "tensor dims missing or malformed "
      "(1 to %d non-negative integers expected)", CNMS_MAX_DIMS);
  return GST_CUDANMS_TENSOR_BAD;
bad_order:
  g_snprintf (msg, msg_size, "unsupported tensor dims-order '%s' "
      "(row-major expected)", order);
  return GST_CUDANMS_TENSOR_BAD;
bad_data:
  g_snprintf (msg, msg_size, "tensor data missing or not readable "
      "(a GstBuffer or GBytes expected)");
  return GST_CUDANMS_TENSOR_BAD;
}

static gboolean
structure_matches (const GstStructure * s, const gchar * id)
{
  return id == NULL || g_strcmp0 (gst_structure_get_string (s, "id"), id) == 0;
}

/* The custom meta first, then the gi-friendly protection-meta carrier. */
static const GstStructure *
find_structure (GstBuffer * buffer, const gchar * id)
{
  const GstMetaInfo *info = gst_meta_get_info (GST_CUDANMS_TENSOR_META_NAME);
  gpointer state = NULL;
  GstMeta *meta;

  if (info != NULL) {
    while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
                info->api))) {
      GstStructure *s = gst_custom_meta_get_structure ((GstCustomMeta *) meta);

      if (structure_matches (s, id))
        return s;
    }
  }
  state = NULL;
  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_PROTECTION_META_API_TYPE))) {
    GstStructure *s = ((GstProtectionMeta *) meta)->info;

    if (gst_structure_has_name (s, GST_CUDANMS_TENSOR_META_NAME)
        && structure_matches (s, id))
      return s;
  }
  return NULL;
}

#ifdef HAVE_GST_ANALYTICS
/* GStreamer >= 1.26 GstTensorMeta (onnxinference, tfliteinference). */
static GstCudanmsTensorLookup
view_from_gst_tensor (GstCudanmsTensorView * view, GstBuffer * buffer,
    const gchar * id, gchar * msg, gsize msg_size)
{
  GstTensorMeta *tmeta = gst_buffer_get_tensor_meta (buffer);
  const GstTensor *t = NULL;
  gsize i;

  if (tmeta == NULL)
    return GST_CUDANMS_TENSOR_MISSING;
  for (i = 0; i < tmeta->num_tensors && t == NULL; i++) {
    if (id == NULL || tmeta->tensors[i]->id == g_quark_try_string (id))
      t = tmeta->tensors[i];
  }
  if (t == NULL)
    return GST_CUDANMS_TENSOR_MISSING;

  if (t->data_type == GST_TENSOR_DATA_TYPE_FLOAT32)
    view->tensor.dtype = CNMS_DTYPE_FLOAT32;
  else if (t->data_type == GST_TENSOR_DATA_TYPE_FLOAT16)
    view->tensor.dtype = CNMS_DTYPE_FLOAT16;
  else
    goto bad;
  if (t->dims_order != GST_TENSOR_DIM_ORDER_ROW_MAJOR || t->num_dims == 0
      || t->num_dims > CNMS_MAX_DIMS || t->data == NULL)
    goto bad;
  for (i = 0; i < t->num_dims; i++)
    view->tensor.dims[i] = (int64_t) t->dims[i];
  view->tensor.n_dims = (int) t->num_dims;
  if (!gst_buffer_map (t->data, &view->map, GST_MAP_READ))
    goto bad;
  view->data = gst_buffer_ref (t->data);
  view->tensor.data = view->map.data;
  view->tensor.size = view->map.size;
  return GST_CUDANMS_TENSOR_FOUND;

bad:
  g_snprintf (msg, msg_size, "GstTensor has an unsupported data type, "
      "dims order or dims (float32/float16, row-major expected)");
  return GST_CUDANMS_TENSOR_BAD;
}
#endif

GstCudanmsTensorLookup
gst_cudanms_tensor_view_acquire (GstCudanmsTensorView * view, GstBuffer * buffer,
    const gchar * id, gchar * msg, gsize msg_size)
{
  const GstStructure *s;

  memset (&view->tensor, 0, sizeof (view->tensor));
  view->data = NULL;
  view->bytes = NULL;

  s = find_structure (buffer, id);
  if (s != NULL)
    return view_from_structure (view, s, msg, msg_size);
#ifdef HAVE_GST_ANALYTICS
  return view_from_gst_tensor (view, buffer, id, msg, msg_size);
#else
  return GST_CUDANMS_TENSOR_MISSING;
#endif
}

void
gst_cudanms_tensor_view_release (GstCudanmsTensorView * view)
{
  if (view->data != NULL) {
    gst_buffer_unmap (view->data, &view->map);
    gst_buffer_unref (view->data);
    view->data = NULL;
  }
  g_clear_pointer (&view->bytes, g_bytes_unref);
  memset (&view->tensor, 0, sizeof (view->tensor));
}

gboolean
gst_cudanms_tensor_is_all_nonfinite (const cnms_tensor * t)
{
  gsize i;

  if (t->on_device || t->data == NULL)
    return FALSE;
  /* Bit tests: an all-ones exponent is NaN or Inf, no float arithmetic. */
  if (t->dtype == CNMS_DTYPE_FLOAT16) {
    const guint8 *p = t->data;

    for (i = 0; i + 2 <= t->size; i += 2) {
      guint16 h;

      memcpy (&h, p + i, 2);
      if ((h & 0x7c00) != 0x7c00)
        return FALSE;
    }
  } else {
    const guint8 *p = t->data;

    for (i = 0; i + 4 <= t->size; i += 4) {
      guint32 f;

      memcpy (&f, p + i, 4);
      if ((f & 0x7f800000u) != 0x7f800000u)
        return FALSE;
    }
  }
  return t->size > 0;
}
