/* cudanms: the per-class controls (see gstcudanmsclasses.h), parsed and
 * applied by the library's per-class lists (cudanms_static.h), the very
 * rules of cudanms-tool's options. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudanmsclasses.h"

G_STATIC_ASSERT ((gint) GST_CUDANMS_CLASS_THRESHOLDS
    == (gint) CNMS_CLASS_LIST_THRESHOLDS);
G_STATIC_ASSERT ((gint) GST_CUDANMS_CLASS_IOUS == (gint) CNMS_CLASS_LIST_IOUS);
G_STATIC_ASSERT ((gint) GST_CUDANMS_CLASS_MAX_DETECTIONS
    == (gint) CNMS_CLASS_LIST_MAX_DETECTIONS);
G_STATIC_ASSERT ((gint) GST_CUDANMS_CLASS_KEEP == (gint) CNMS_CLASS_LIST_KEEP);
G_STATIC_ASSERT ((gint) GST_CUDANMS_CLASS_DROP == (gint) CNMS_CLASS_LIST_DROP);
G_STATIC_ASSERT ((gint) GST_CUDANMS_N_CLASS_SPECS == (gint) CNMS_N_CLASS_LISTS);

static const gchar *const spec_names[GST_CUDANMS_N_CLASS_SPECS] = {
  "class-score-thresholds", "class-ious", "class-max-detections", "classes",
  "exclude-classes"
};

const gchar *
gst_cudanms_class_spec_name (GstCudanmsClassSpec which)
{
  return which < GST_CUDANMS_N_CLASS_SPECS ? spec_names[which] : "unknown";
}

void
gst_cudanms_classes_init (GstCudanmsClasses * c)
{
  memset (c, 0, sizeof (*c));
}

void
gst_cudanms_classes_clear (GstCudanmsClasses * c)
{
  guint i;

  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    g_clear_pointer (&c->spec[i], g_free);
    cnms_class_list_clear (&c->list[i]);
  }
  g_clear_pointer (&c->params, g_free);
  c->params_cap = 0;
  c->n = 0;
}

/* The label file as the lists look labels up in it. */
static void
class_labels (const GstCudanmsLabels * labels, cnms_class_labels * out)
{
  out->find = gst_cudanms_labels_find;
  out->data = (gpointer) labels;
  out->n_labels = (gint) labels->n_from_file;
}

/* Looks up the labels of list l (spec which); FALSE with *error naming
 * the property. */
static gboolean
resolve_list (GstCudanmsClassSpec which, cnms_class_list * l,
    const GstCudanmsLabels * labels, GError ** error)
{
  cnms_class_labels cl;
  gchar err[512];

  class_labels (labels, &cl);
  if (cnms_class_list_resolve (l, &cl, err, sizeof (err)) == CNMS_OK)
    return TRUE;
  g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, "%s: %s",
      spec_names[which], err);
  return FALSE;
}

gboolean
gst_cudanms_classes_set (GstCudanmsClasses * c, GstCudanmsClassSpec which,
    const gchar * value, const GstCudanmsLabels * labels, GError ** error)
{
  cnms_class_list l;
  gchar err[512];

  memset (&l, 0, sizeof (l));
  if (cnms_class_list_parse (&l, (cnms_class_list_kind) which, value, err,
          sizeof (err)) != CNMS_OK) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, "%s", err);
    return FALSE;
  }
  if (labels != NULL && !resolve_list (which, &l, labels, error)) {
    cnms_class_list_clear (&l);
    return FALSE;
  }
  cnms_class_list_clear (&c->list[which]);
  c->list[which] = l;
  g_free (c->spec[which]);
  /* an empty or blank list is an unset one */
  c->spec[which] = l.n > 0 ? g_strdup (value) : NULL;
  c->n = (guint) cnms_class_lists_size (c->list);
  return TRUE;
}

gboolean
gst_cudanms_classes_resolve (GstCudanmsClasses * c,
    const GstCudanmsLabels * labels, GError ** error)
{
  gboolean ok = TRUE;
  guint i;

  /* a spec that does not resolve is dropped, the first one's reason
   * reported */
  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    GError *e = NULL;

    if (c->list[i].n == 0)
      continue;
    if (!resolve_list (i, &c->list[i], labels, &e)) {
      if (ok)
        g_propagate_error (error, e);
      else
        g_clear_error (&e);
      cnms_class_list_clear (&c->list[i]);
      g_clear_pointer (&c->spec[i], g_free);
      ok = FALSE;
    }
  }
  c->n = (guint) cnms_class_lists_size (c->list);
  return ok;
}

void
gst_cudanms_classes_apply (GstCudanmsClasses * c, cnms_params * p)
{
  gboolean any = FALSE;
  guint i;

  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++)
    any |= c->list[i].n > 0;
  if (!any)
    return;
  if (c->n > c->params_cap) {
    g_free (c->params);
    c->params = g_new (cnms_class_params, c->n);
    c->params_cap = c->n;
  }
  p->other_classes_filtered = cnms_class_lists_fill (c->list, p, c->params,
      (gint) c->n);
  p->classes = c->n > 0 ? c->params : NULL;
  p->n_classes = (gint) c->n;
}
