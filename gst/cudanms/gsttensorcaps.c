/* cudanms: tensor descriptions in caps (GStreamer >= 1.28).
 *
 * 1.28's inference elements describe their output tensors in the video
 * caps, e.g. from onnxinference:
 *
 *   video/x-raw, ..., tensors=(structure)[tensorgroups,
 *       yolo-v8-out=(/uniquelist){ (GstCaps)[tensor/strided,
 *           tensor-id=(string)yolo-v8-out, dims=<1, 84, 8400>,
 *           dims-order=(string)col-major, type=(string)float32] }]
 *
 * cudanms passes such caps through untouched and checks the description
 * of its detection tensor once, at negotiation.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gsttensormeta.h"

#if GST_CHECK_VERSION (1, 28, 0)
/* The description with tensor_id, else the first with a standard YOLOv8
 * id, in a group of descriptions (a list of GstCaps). */
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
          (g_strcmp0 (id, GST_CUDANMS_TENSOR_ID_YOLOV8) == 0
              || g_strcmp0 (id, GST_CUDANMS_TENSOR_ID_YOLOV8_SEG) == 0))
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
check_description (const GstStructure * s, cnms_layout layout, gchar * msg,
    gsize msg_size)
{
  const gchar *id = gst_structure_get_string (s, "tensor-id");
  const gchar *type = gst_structure_get_string (s, "type");
  const gchar *order = gst_structure_get_string (s, "dims-order");
  const GValue *dims = gst_structure_get_value (s, "dims");
  gchar reason[200];
  cnms_tensor t;
  cnms_shape shape;
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
  /* segmentation detections: their mask count is in another tensor */
  if (g_strcmp0 (id, GST_CUDANMS_TENSOR_ID_YOLOV8_SEG) == 0 || dims == NULL
      || !GST_VALUE_HOLDS_ARRAY (dims) || !fixed_dims (dims, &t))
    return TRUE;
  /* only the dims are checked: give them their exact byte size */
  t.data = &t;
  t.size = t.dtype == CNMS_DTYPE_FLOAT16 ? 2 : 4;
  for (i = 0; i < t.n_dims; i++)
    t.size = t.size <= G_MAXSIZE / (gsize) t.dims[i] ?
        t.size * (gsize) t.dims[i] : G_MAXSIZE;
  if (cnms_tensor_shape (&t, gst_cudanms_tensor_id_layout (id, layout),
          &shape, reason, sizeof (reason)) != CNMS_OK) {
    g_snprintf (msg, msg_size, "caps describe tensor '%s': %s", id, reason);
    return FALSE;
  }
  return TRUE;
}
#endif

gboolean
gst_cudanms_tensor_caps_check (const GstCaps * caps, const gchar * tensor_id,
    cnms_layout layout, gchar * msg, gsize msg_size)
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
        return check_description (s, layout, msg, msg_size);
    }
  }
#endif
  return TRUE;
}
