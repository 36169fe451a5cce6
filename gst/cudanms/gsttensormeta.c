/* cudanms: the tensor input (see gsttensormeta.h): the meta it comes in,
 * finding and mapping it on a buffer, and its description in caps. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <stdio.h>

#include "gsttensormeta.h"
#include "gstcudanmslabels.h"

#ifdef HAVE_GST_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#endif

/* The fields of a CudanmsTensorMeta structure, by quarks made once (see
 * gst_cudanms_quark_table). */
enum
{
  F_ID, F_DATA_TYPE, F_DIMS_ORDER, F_DIMS, F_DATA, N_FIELDS
};

static const GQuark *
field_quarks (void)
{
  static const gchar *const names[N_FIELDS] = { "id", "data-type",
    "dims-order", "dims", "data"
  };
  static GQuark quarks[N_FIELDS];
  static gsize done = 0;

  gst_cudanms_quark_table (quarks, names, N_FIELDS, &done);
  return quarks;
}

/* gst_structure_get_string by quark. */
static const gchar *
field_string (const GstStructure * s, gint field)
{
  const GValue *v = gst_structure_id_get_value (s, field_quarks ()[field]);

  return v != NULL && G_VALUE_HOLDS_STRING (v) ? g_value_get_string (v) : NULL;
}

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

/* GStreamer's standard tensor ids (the tensor-id registry, as 1.28's
 * decoders use them) that are not one detection tensor cudanms decodes. */
static const struct
{
  const gchar *id;
  const gchar *what;
} not_detection_ids[] = {
  {GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS, "segmentation mask prototypes"},
  {"ssd-mobilenet-v1-variant-1-out-boxes", "SSD boxes (split output)"},
  {"ssd-mobilenet-v1-variant-1-out-scores", "SSD scores (split output)"},
  {"ssd-mobilenet-v1-variant-1-out-classes", "SSD classes (split output)"},
  {"generic-variant-1-out-count", "a detection count"},
  {"ultra-lightweight-face-detection-rfb-320-v1-variant-1-out-scores",
      "face detector scores (split output)"},
  {"classification-generic-out", "classifier scores"},
  {"classification-generic-softmaxed-out", "classifier scores"},
};

const gchar *
gst_cudanms_tensor_id_not_detection (const gchar * id)
{
  guint i;

  for (i = 0; id != NULL && i < G_N_ELEMENTS (not_detection_ids); i++) {
    if (strcmp (id, not_detection_ids[i].id) == 0)
      return not_detection_ids[i].what;
  }
  return NULL;
}

/* GStreamer's segmentation detections [1, 4+C+M, N]: read whole only
 * under layout yolov8-seg (with their prototypes), else as their first
 * 4+C planes. */
static gboolean
is_seg_id (const gchar * id)
{
  return g_strcmp0 (id, GST_CUDANMS_TENSOR_ID (CNMS_LAYOUT_YOLOV8_SEG)) == 0;
}

cnms_layout
gst_cudanms_tensor_id_layout (const gchar * id, cnms_layout requested)
{
  gint l;

  if (requested != CNMS_LAYOUT_AUTO || id == NULL)
    return requested;
  for (l = CNMS_LAYOUT_AUTO + 1; l < CNMS_N_LAYOUTS; l++) {
    const cnms_layout_desc *desc = cnms_layout_info ((cnms_layout) l);

    if (desc->tensor_id == NULL || strcmp (id, desc->tensor_id) != 0)
      continue;
    /* the masks need layout yolov8-seg: auto reads the boxes */
    return desc->head == CNMS_HEAD_MASK ? CNMS_LAYOUT_YOLOV8 :
        (cnms_layout) l;
  }
  return CNMS_LAYOUT_AUTO;
}

gboolean
gst_cudanms_dims_order_ok (const gchar * order)
{
  return order == NULL || strcmp (order, "row-major") == 0
      || strcmp (order, "col-major") == 0;
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

/* Maps buf (one GstCudaMemory of context) for reading in device memory:
 * map->data is then a device pointer. FALSE when buf is not such memory
 * (map it on the host instead), or without gst-cuda. */
static gboolean
cuda_map_in_place (GstBuffer * buf, GstMapInfo * map, GstObject * context)
{
#ifdef HAVE_GST_CUDA
  GstMemory *mem;

  if (context == NULL || gst_buffer_n_memory (buf) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buf, 0);
  if (!gst_is_cuda_memory (mem)
      || ((GstCudaMemory *) mem)->context != (GstCudaContext *) context)
    return FALSE;
  return gst_buffer_map (buf, map, GST_MAP_READ | GST_MAP_CUDA);
#else
  (void) buf;
  (void) map;
  (void) context;
  return FALSE;
#endif
}

/* With context set: the GstCudaContext of the first GstCudaMemory of buf
 * that belongs to another context, else NULL (borrowed). */
static GstObject *
cuda_other_context (GstBuffer * buf, GstObject * context)
{
#ifdef HAVE_GST_CUDA
  guint i, n = gst_buffer_n_memory (buf);

  if (context == NULL)
    return NULL;
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);

    if (gst_is_cuda_memory (mem)
        && ((GstCudaMemory *) mem)->context != (GstCudaContext *) context)
      return GST_OBJECT (((GstCudaMemory *) mem)->context);
  }
#else
  (void) buf;
  (void) context;
#endif
  return NULL;
}

static gboolean
map_buffer (GstCudanmsTensorView * view, GstBuffer * buf)
{
  if (buf == NULL)
    return FALSE;
  if (cuda_map_in_place (buf, &view->map, view->device_context)) {
    view->tensor.on_device = 1;
  } else {
    /* another context's device memory: gst-cuda's map copies it to the
     * host; the backend then reads it as a host tensor */
    if (!gst_buffer_map (buf, &view->map, GST_MAP_READ))
      return FALSE;
    view->other_context = cuda_other_context (buf, view->device_context);
  }
  view->data = gst_buffer_ref (buf);
  view->tensor.data = view->map.data;
  view->tensor.size = view->map.size;
  return TRUE;
}

static gboolean
map_data (GstCudanmsTensorView * view, const GValue * data)
{
  if (data != NULL && GST_VALUE_HOLDS_BUFFER (data))
    return map_buffer (view, gst_value_get_buffer (data));
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
  const gchar *dtype = field_string (s, F_DATA_TYPE);
  const gchar *order = field_string (s, F_DIMS_ORDER);
  const GValue *dims = gst_structure_id_get_value (s, field_quarks ()[F_DIMS]);

  if (dtype == NULL)
    goto no_dtype;
  if (!dtype_from_string (dtype, &view->tensor.dtype))
    goto bad_dtype;
  if (dims == NULL || !parse_dims (dims, &view->tensor))
    goto bad_dims;
  if (!gst_cudanms_dims_order_ok (order))
    goto bad_order;
  if (!map_data (view, gst_structure_id_get_value (s,
              field_quarks ()[F_DATA])))
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
      "(row-major or col-major expected)", order);
  return GST_CUDANMS_TENSOR_BAD;
bad_data:
  g_snprintf (msg, msg_size, "tensor data missing or not readable "
      "(a GstBuffer or GBytes expected)");
  return GST_CUDANMS_TENSOR_BAD;
}

#ifdef HAVE_GST_TENSOR_META
/* A GStreamer >= 1.26 GstTensor (onnxinference, tfliteinference). */
static GstCudanmsTensorLookup
view_from_gst_tensor (GstCudanmsTensorView * view, const GstTensor * t,
    gchar * msg, gsize msg_size)
{
  gsize i;

  if (t->data_type == GST_TENSOR_DATA_TYPE_FLOAT32)
    view->tensor.dtype = CNMS_DTYPE_FLOAT32;
  else if (t->data_type == GST_TENSOR_DATA_TYPE_FLOAT16)
    view->tensor.dtype = CNMS_DTYPE_FLOAT16;
  else
    goto bad_dtype;
  if (t->dims_order != GST_TENSOR_DIM_ORDER_ROW_MAJOR
      && t->dims_order != GST_TENSOR_DIM_ORDER_COL_MAJOR)
    goto bad_order;
  if (t->num_dims == 0 || t->num_dims > CNMS_MAX_DIMS)
    goto bad_dims;
  for (i = 0; i < t->num_dims; i++) {
    if (t->dims[i] > G_MAXINT64)
      goto bad_dims;
    view->tensor.dims[i] = (int64_t) t->dims[i];
  }
  view->tensor.n_dims = (int) t->num_dims;
  if (!map_buffer (view, t->data))
    goto bad_data;
  return GST_CUDANMS_TENSOR_FOUND;

bad_dtype:
#ifdef HAVE_GST_TENSOR_CAPS
  g_snprintf (msg, msg_size, "unsupported GstTensor data type '%s' "
      "(float32 or float16 expected)",
      gst_tensor_data_type_get_name (t->data_type));
#else
  g_snprintf (msg, msg_size, "unsupported GstTensor data type %d "
      "(float32 or float16 expected)", (gint) t->data_type);
#endif
  return GST_CUDANMS_TENSOR_BAD;
bad_order:
  g_snprintf (msg, msg_size, "unsupported GstTensor dims order %d "
      "(row-major or col-major expected)", (gint) t->dims_order);
  return GST_CUDANMS_TENSOR_BAD;
bad_dims:
  g_snprintf (msg, msg_size, "GstTensor has %" G_GSIZE_FORMAT " dims "
      "(1 to %d expected) or a dim out of range", t->num_dims, CNMS_MAX_DIMS);
  return GST_CUDANMS_TENSOR_BAD;
bad_data:
  g_snprintf (msg, msg_size, "GstTensor data missing or not readable");
  return GST_CUDANMS_TENSOR_BAD;
}

/* yolov8 segmentation detections [1, 4+C+M, N]: the first 4+C planes are
 * the detection tensor; M is dims[1] of the protos tensor [1, M, h, w] of
 * the same GstTensorMeta (as 1.28's yolov8segtensordec reads it). */
static gboolean
strip_mask_rows (GstCudanmsTensorView * view, GstTensorMeta * tmeta,
    gchar * msg, gsize msg_size)
{
  GQuark protos_id = g_quark_from_static_string
      (GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS);
  cnms_tensor *t = &view->tensor;
  const GstTensor *protos = NULL;
  gsize i, esize = t->dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  gint64 rows;

  for (i = 0; i < tmeta->num_tensors && protos == NULL; i++) {
    if (tmeta->tensors[i]->id == protos_id)
      protos = tmeta->tensors[i];
  }
  if (protos == NULL || protos->num_dims != 4) {
    g_snprintf (msg, msg_size, "needs the %s tensor [1, M, h, w] in the "
        "same GstTensorMeta (M is its mask count)",
        GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS);
    return FALSE;
  }
  if (t->n_dims != 3 || t->dims[1] < 5 + (gint64) protos->dims[1]) {
    g_snprintf (msg, msg_size, "not [1, 4+C+%" G_GSIZE_FORMAT ", N] with "
        "C >= 1", protos->dims[1]);
    return FALSE;
  }
  rows = t->dims[1] - (gint64) protos->dims[1];
  t->dims[1] = rows;
  /* the planes are contiguous: the detection part is a prefix */
  if ((guint64) rows * (guint64) t->dims[2] * esize <= t->size)
    t->size = (gsize) rows * (gsize) t->dims[2] * esize;
  return TRUE;
}
#endif

/* The search over a buffer's tensors (see gsttensormeta.h for the order). */
typedef struct
{
  const gchar *id;              /* tensor-id, or NULL */
  gboolean raw;                 /* the tensor of id, whatever it holds (the
                                 * prototypes of a segmentation model) */
  cnms_layout layout;           /* the layout property */
  const cnms_tensor *protos;    /* layout yolov8-seg: its prototypes */
  const cnms_params *p;         /* keypoint_dims, or NULL */
  gboolean batch;               /* a [B, ...] tensor: a frame of it fits */
  GstCudanmsTensorView *view;
  gchar *msg;
  gsize msg_size;
  GstCudanmsTensorLookup result;
  guint n_unfit;                /* default search: tensors that fit no layout */
  guint n_skipped;              /* default search: non-detection standard ids */
  gboolean done;
} Search;

static void
search_fail (Search * search, const gchar * id, const gchar * reason)
{
  if (search->n_unfit++ == 0) {
    if (id != NULL)
      g_snprintf (search->msg, search->msg_size, "tensor '%s': %s", id, reason);
    else
      g_strlcpy (search->msg, reason, search->msg_size);
  }
  gst_cudanms_tensor_view_release (search->view);
}

/* Visits one tensor: a CudanmsTensorMeta structure s, or GstTensor t of
 * tmeta. Sets search->done when the search is over. */
static void
search_visit (Search * search, const GstStructure * s, gconstpointer t,
    gpointer tmeta)
{
  GstCudanmsTensorView *view = search->view;
  gchar reason[256] = "";
  const gchar *id, *what;
  GstCudanmsTensorLookup r;
  cnms_shape shape;

#ifdef HAVE_GST_TENSOR_META
  id = s != NULL ? field_string (s, F_ID) :
      g_quark_to_string (((const GstTensor *) t)->id);
#else
  id = field_string (s, F_ID);
#endif
  if (search->id != NULL && g_strcmp0 (id, search->id) != 0)
    return;
  what = search->raw ? NULL : gst_cudanms_tensor_id_not_detection (id);
  if (what != NULL && search->id == NULL) {
    search->n_skipped++;
    return;
  }

  memset (&view->tensor, 0, sizeof (view->tensor));
  view->layout = gst_cudanms_tensor_id_layout (id, search->layout);
  g_strlcpy (view->id, id != NULL ? id : "", sizeof (view->id));
  if (what != NULL) {
    g_snprintf (reason, sizeof (reason), "a standard id for %s, not a "
        "detection tensor cudanms decodes", what);
    r = GST_CUDANMS_TENSOR_BAD;
  } else if (s != NULL) {
    r = view_from_structure (view, s, reason, sizeof (reason));
    /* layout yolov8-seg reads the prototypes from another meta */
    if (r == GST_CUDANMS_TENSOR_FOUND && !search->raw
        && view->layout != CNMS_LAYOUT_YOLOV8_SEG && is_seg_id (id)) {
      g_snprintf (reason, sizeof (reason), "segmentation detections are only "
          "read from a GstTensorMeta (with their protos tensor)");
      r = GST_CUDANMS_TENSOR_BAD;
    }
  } else {
#ifdef HAVE_GST_TENSOR_META
    r = view_from_gst_tensor (view, t, reason, sizeof (reason));
    if (r == GST_CUDANMS_TENSOR_FOUND && !search->raw
        && view->layout != CNMS_LAYOUT_YOLOV8_SEG && is_seg_id (id)
        && !strip_mask_rows (view, tmeta, reason, sizeof (reason)))
      r = GST_CUDANMS_TENSOR_BAD;
#else
    g_assert_not_reached ();
#endif
  }

  if (search->id != NULL) {
    /* the selected tensor: cnms_detect judges its fit to the layout (the
     * library checks prototypes with their detections) */
    search->result = r;
    if (r == GST_CUDANMS_TENSOR_BAD)
      search_fail (search, id, reason);
    search->done = TRUE;
    return;
  }
  /* yolov8-seg fits with its prototypes; without them any tensor is taken
   * (and its prototypes are then missing) */
  if (r == GST_CUDANMS_TENSOR_FOUND
      && (view->layout != CNMS_LAYOUT_YOLOV8_SEG || search->protos != NULL)) {
    cnms_tensor one = view->tensor;

    /* a batch: its first frame, [1, ...] */
    if (search->batch && one.n_dims >= 3 && one.dims[0] > 1) {
      one.size /= (size_t) one.dims[0];
      one.dims[0] = 1;
    }
    if (cnms_tensor_shape (&one,
            view->layout == CNMS_LAYOUT_YOLOV8_SEG ? search->protos : NULL,
            view->layout, search->p, &shape, reason, sizeof (reason))
        != CNMS_OK)
      r = GST_CUDANMS_TENSOR_BAD;
  }
  if (r == GST_CUDANMS_TENSOR_BAD) {
    search_fail (search, id, reason);
    return;
  }
  search->result = GST_CUDANMS_TENSOR_FOUND;
  search->done = TRUE;
}

static GstCudanmsTensorLookup
view_acquire (GstCudanmsTensorView * view, GstBuffer * buffer,
    const gchar * id, gboolean raw, gboolean batch, cnms_layout layout,
    const cnms_tensor * protos, const cnms_params * p, gchar * msg,
    gsize msg_size)
{
  /* looked up once it exists (plugin_init registers it): a lookup by name
   * per buffer takes GStreamer's global meta lock */
  static const GstMetaInfo *custom_info = NULL;
  const GstMetaInfo *custom = g_atomic_pointer_get (&custom_info);
  Search search = { id, raw, layout, protos, p, batch, view, msg, msg_size,
    GST_CUDANMS_TENSOR_MISSING, 0, 0, FALSE
  };
  gpointer state = NULL;
  GstMeta *meta;

  if (custom == NULL) {
    custom = gst_meta_get_info (GST_CUDANMS_TENSOR_META_NAME);
    g_atomic_pointer_set (&custom_info, custom);
  }
  memset (&view->tensor, 0, sizeof (view->tensor));
  view->data = NULL;
  view->bytes = NULL;
  view->layout = layout;
  view->id[0] = '\0';

  /* Every meta, in the order they were attached (GstBuffer keeps it). */
  while (!search.done && (meta = gst_buffer_iterate_meta (buffer, &state))) {
    if (custom != NULL && meta->info == custom) {
      search_visit (&search,
          gst_custom_meta_get_structure ((GstCustomMeta *) meta), NULL, NULL);
    } else if (meta->info->api == GST_PROTECTION_META_API_TYPE) {
      GstStructure *s = ((GstProtectionMeta *) meta)->info;

      if (gst_structure_has_name (s, GST_CUDANMS_TENSOR_META_NAME))
        search_visit (&search, s, NULL, NULL);
#ifdef HAVE_GST_TENSOR_META
    } else if (meta->info->api == GST_TENSOR_META_API_TYPE) {
      GstTensorMeta *tmeta = (GstTensorMeta *) meta;
      gsize i;

      for (i = 0; i < tmeta->num_tensors && !search.done; i++) {
        if (tmeta->tensors[i] != NULL)
          search_visit (&search, NULL, tmeta->tensors[i], tmeta);
      }
#endif
    }
  }

  if (search.result == GST_CUDANMS_TENSOR_FOUND)
    return search.result;
  if (search.n_unfit > 0) {
    if (search.n_unfit > 1) {
      gsize len = strlen (msg);

      g_snprintf (msg + len, msg_size - len, " (and %u more tensors fit no "
          "layout)", search.n_unfit - 1);
    }
    return GST_CUDANMS_TENSOR_BAD;
  }
  if (id != NULL)
    g_snprintf (msg, msg_size, "no tensor with tensor-id '%s'", id);
  else if (search.n_skipped > 0)
    g_snprintf (msg, msg_size, "no detection tensor (%u tensors with "
        "non-detection standard ids skipped)", search.n_skipped);
  else
    g_snprintf (msg, msg_size, "no tensor on the buffer");
  return GST_CUDANMS_TENSOR_MISSING;
}

GstCudanmsTensorLookup
gst_cudanms_tensor_view_acquire (GstCudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, cnms_layout layout,
    const cnms_tensor * protos, const cnms_params * p, gchar * msg,
    gsize msg_size)
{
  return view_acquire (view, buffer, id, FALSE, FALSE, layout, protos, p,
      msg, msg_size);
}

GstCudanmsTensorLookup
gst_cudanms_tensor_view_acquire_batch (GstCudanmsTensorView * view,
    GstBuffer * buffer, const gchar * id, cnms_layout layout,
    const cnms_tensor * protos, const cnms_params * p, gchar * msg,
    gsize msg_size)
{
  return view_acquire (view, buffer, id, FALSE, TRUE, layout, protos, p,
      msg, msg_size);
}

GstCudanmsTensorLookup
gst_cudanms_tensor_view_acquire_protos (GstCudanmsTensorView * view,
    GstBuffer * buffer, gchar * msg, gsize msg_size)
{
  GstCudanmsTensorLookup r = view_acquire (view, buffer,
      GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS, TRUE, FALSE, CNMS_LAYOUT_AUTO,
      NULL,
      NULL, msg, msg_size);

  if (r == GST_CUDANMS_TENSOR_MISSING)
    g_snprintf (msg, msg_size, "layout yolov8-seg needs the prototypes: no "
        "tensor with id '%s' on the buffer",
        GST_CUDANMS_TENSOR_ID_YOLOV8_SEG_PROTOS);
  return r;
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
  view->other_context = NULL;
}

#ifdef HAVE_GST_TENSOR_CAPS
gboolean
gst_cudanms_tensor_view_take (const GstCudanmsTensorView * view,
    GstBuffer * buffer)
{
  gpointer state = NULL;
  GstMeta *meta;

  if (view->data == NULL)
    return FALSE;
  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_TENSOR_META_API_TYPE))) {
    GstTensorMeta *tmeta = (GstTensorMeta *) meta;
    GstTensor **kept;
    gsize i, j, n = tmeta->num_tensors;

    /* a copy of the buffer shares the tensors' data */
    for (i = 0; i < n; i++) {
      if (tmeta->tensors[i] != NULL && tmeta->tensors[i]->data == view->data)
        break;
    }
    if (i == n)
      continue;
    if (n == 1)
      return gst_buffer_remove_meta (buffer, meta);
    kept = g_new (GstTensor *, n - 1);
    for (j = 0; j < n; j++) {
      if (j != i)
        kept[j < i ? j : j - 1] = gst_tensor_copy (tmeta->tensors[j]);
    }
    gst_tensor_meta_set (tmeta, (guint) (n - 1), kept);
    return TRUE;
  }
  return FALSE;
}
#endif

/* Tensor descriptions in caps (GStreamer >= 1.28). 1.28's inference
 * elements describe their output tensors in the video caps, e.g. from
 * onnxinference:
 *
 *   video/x-raw, ..., tensors=(structure)[tensorgroups,
 *       yolo-v8-out=(/uniquelist){ (GstCaps)[tensor/strided,
 *           tensor-id=(string)yolo-v8-out, dims=<1, 84, 8400>,
 *           dims-order=(string)col-major, type=(string)float32] }]
 *
 * cudanms passes such caps through untouched and checks the description
 * of its detection tensor once, at negotiation. */
#if GST_CHECK_VERSION (1, 28, 0)
/* The description with tensor_id, else the first with a standard YOLOv8
 * or YOLOv8-OBB id, in a group of descriptions (a list of GstCaps). */
static const GstStructure *
find_in_group (const GValue * group, const gchar * tensor_id)
{
  guint i, n;

  if (GST_VALUE_HOLDS_UNIQUE_LIST (group))
    n = gst_value_unique_list_get_size (group);
  else if (GST_VALUE_HOLDS_LIST (group))
    n = gst_value_list_get_size (group);
  else
    return NULL;
  for (i = 0; i < n; i++) {
    const GValue *v = GST_VALUE_HOLDS_UNIQUE_LIST (group) ?
        gst_value_unique_list_get_value (group, i) :
        gst_value_list_get_value (group, i);
    const GstCaps *caps;
    guint j;

    if (!GST_VALUE_HOLDS_CAPS (v) || (caps = gst_value_get_caps (v)) == NULL)
      continue;
    for (j = 0; j < gst_caps_get_size (caps); j++) {
      const GstStructure *s = gst_caps_get_structure (caps, j);
      const gchar *id = gst_structure_get_string (s, "tensor-id");

      if (tensor_id != NULL ? g_strcmp0 (id, tensor_id) == 0 :
          (g_strcmp0 (id, GST_CUDANMS_TENSOR_ID (CNMS_LAYOUT_YOLOV8)) == 0
              || is_seg_id (id)
              || g_strcmp0 (id,
                  GST_CUDANMS_TENSOR_ID (CNMS_LAYOUT_YOLOV8_OBB)) == 0))
        return s;
    }
  }
  return NULL;
}

/* Fills t->dims from a description's dims; FALSE when one is not fixed
 * (0 or a range: a dynamic dim). */
static gboolean
fixed_dims (const GValue * dims, cnms_tensor * t)
{
  guint i, n = gst_value_array_get_size (dims);

  if (n == 0 || n > CNMS_MAX_DIMS)
    return FALSE;
  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (dims, i);

    if (!G_VALUE_HOLDS_INT (v) || g_value_get_int (v) <= 0)
      return FALSE;
    t->dims[i] = g_value_get_int (v);
  }
  t->n_dims = (int) n;
  return TRUE;
}

static gboolean
check_description (const GstStructure * s, cnms_layout layout,
    const cnms_params * p, gchar * msg, gsize msg_size)
{
  const gchar *id = gst_structure_get_string (s, "tensor-id");
  const gchar *type = gst_structure_get_string (s, "type");
  const gchar *order = gst_structure_get_string (s, "dims-order");
  const GValue *dims = gst_structure_get_value (s, "dims");
  gchar reason[200];
  cnms_tensor t;
  cnms_shape shape;
  cnms_layout l;
  gint i;

  memset (&t, 0, sizeof (t));
  if (g_strcmp0 (type, "float32") == 0)
    t.dtype = CNMS_DTYPE_FLOAT32;
  else if (g_strcmp0 (type, "float16") == 0)
    t.dtype = CNMS_DTYPE_FLOAT16;
  else {
    g_snprintf (msg, msg_size, "caps describe tensor '%s' with type '%s' "
        "(float32 or float16 expected)", id, GST_STR_NULL (type));
    return FALSE;
  }
  if (!gst_cudanms_dims_order_ok (order)) {
    g_snprintf (msg, msg_size, "caps describe tensor '%s' with dims-order "
        "'%s' (row-major or col-major expected)", id, order);
    return FALSE;
  }
  if (gst_cudanms_tensor_id_not_detection (id) != NULL) {
    g_snprintf (msg, msg_size, "caps describe tensor '%s': a standard id for "
        "%s, not a detection tensor cudanms decodes", id,
        gst_cudanms_tensor_id_not_detection (id));
    return FALSE;
  }
  /* segmentation detections: their mask count is in another tensor (the
   * prototypes, which layout yolov8-seg checks them with) */
  l = gst_cudanms_tensor_id_layout (id, layout);
  if (is_seg_id (id) || l == CNMS_LAYOUT_YOLOV8_SEG || dims == NULL
      || !GST_VALUE_HOLDS_ARRAY (dims) || !fixed_dims (dims, &t))
    return TRUE;
  /* only the dims are checked: give them their exact byte size */
  t.data = &t;
  t.size = t.dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  for (i = 0; i < t.n_dims; i++)
    t.size = t.size <= G_MAXSIZE / (gsize) t.dims[i] ?
        t.size * (gsize) t.dims[i] : G_MAXSIZE;
  if (cnms_tensor_shape (&t, NULL, l, p, &shape, reason,
          sizeof (reason)) != CNMS_OK) {
    g_snprintf (msg, msg_size, "caps describe tensor '%s': %s", id, reason);
    return FALSE;
  }
  return TRUE;
}
#endif

gboolean
gst_cudanms_tensor_caps_check (const GstCaps * caps, const gchar * tensor_id,
    cnms_layout layout, const cnms_params * p, gchar * msg, gsize msg_size)
{
#if GST_CHECK_VERSION (1, 28, 0)
  guint i;

  for (i = 0; i < gst_caps_get_size (caps); i++) {
    const GValue *v = gst_structure_get_value (gst_caps_get_structure (caps,
            i), "tensors");
    const GstStructure *groups;
    guint g;

    if (v == NULL || !GST_VALUE_HOLDS_STRUCTURE (v)
        || (groups = gst_value_get_structure (v)) == NULL)
      continue;
    for (g = 0; g < (guint) gst_structure_n_fields (groups); g++) {
      const GValue *group = gst_structure_get_value (groups,
          gst_structure_nth_field_name (groups, g));
      const GstStructure *s = find_in_group (group, tensor_id);

      if (s != NULL)
        return check_description (s, layout, p, msg, msg_size);
    }
  }
#endif
  return TRUE;
}
