/* cudanms: the per-class controls (see gstcudanmsclasses.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gstcudanmsclasses.h"

static const gchar *const spec_names[GST_CUDANMS_N_CLASS_SPECS] = {
  "class-score-thresholds", "class-ious", "class-max-detections", "classes",
  "exclude-classes"
};

/* One parsed entry: a class (an id, or a name still to resolve) and its
 * value. */
typedef struct
{
  gint id;                      /* -1: by name */
  gchar *name;
  gdouble value;
} Entry;

const gchar *
gst_cudanms_class_spec_name (GstCudanmsClassSpec which)
{
  return which < GST_CUDANMS_N_CLASS_SPECS ? spec_names[which] : "unknown";
}

static void
rules_free (GstCudanmsClassRules * r)
{
  if (r == NULL)
    return;
  g_free (r->thr);
  g_free (r->iou);
  g_free (r->max);
  g_free (r->dropped);
  g_free (r);
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

  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++)
    g_clear_pointer (&c->spec[i], g_free);
  g_clear_pointer (&c->rules, rules_free);
  g_clear_pointer (&c->params, g_free);
  c->params_cap = 0;
}

static void
entries_free (GArray * entries)
{
  guint i;

  for (i = 0; i < entries->len; i++)
    g_free (g_array_index (entries, Entry, i).name);
  g_array_unref (entries);
}

/* Splits "key=value,key,..." of spec which into entries; keys are ids
 * (decimal, below 2^24) or label names. */
static GArray *
parse (GstCudanmsClassSpec which, const gchar * value, GError ** error)
{
  const gboolean valued = which <= GST_CUDANMS_CLASS_MAX_DETECTIONS;
  GArray *entries = g_array_new (FALSE, TRUE, sizeof (Entry));
  gchar **items = g_strsplit (value, ",", -1);
  guint i;

  for (i = 0; items[i] != NULL; i++) {
    gchar *item = g_strstrip (items[i]), *eq = strchr (item, '='), *end;
    Entry e = { -1, NULL, 0.0 };
    const gchar *key = item;

    if (item[0] == '\0' && items[1] == NULL && i == 0)
      break;                    /* "" */
    if (valued != (eq != NULL)) {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          valued ? "'%s' is not CLASS=VALUE" : "'%s' is not a class (an id "
          "or a label, without a value)", item);
      goto failed;
    }
    if (eq != NULL) {
      const gchar *v;

      *eq = '\0';
      v = g_strstrip (eq + 1);
      key = g_strstrip (item);
      errno = 0;
      e.value = g_ascii_strtod (v, &end);
      if (v[0] == '\0' || *end != '\0' || errno != 0 || isnan (e.value)) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "the value '%s' of class '%s' is not a number", v, key);
        goto failed;
      }
      if (which == GST_CUDANMS_CLASS_IOUS
          && !(e.value >= 0.0 && e.value <= 1.0)) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "the iou %s of class '%s' is outside [0, 1]", v, key);
        goto failed;
      }
      if (which == GST_CUDANMS_CLASS_THRESHOLDS
          && !(e.value >= 0.0 && e.value <= 1.0)) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "the score threshold %s of class '%s' is outside [0, 1]", v, key);
        goto failed;
      }
      if (which == GST_CUDANMS_CLASS_MAX_DETECTIONS
          && (e.value != floor (e.value) || e.value < 0.0
              || e.value > G_MAXINT)) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "the cap %s of class '%s' is not an integer >= 0", v, key);
        goto failed;
      }
    }
    if (key[0] == '\0') {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          "an empty class in '%s'", value);
      goto failed;
    }
    if (g_ascii_isdigit (key[0])) {
      guint64 id;

      if (!g_ascii_string_to_unsigned (key, 10, 0,
              CNMS_MAX_CLASS_PARAMS - 1, &id, NULL)) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "class id '%s' is not an integer in [0, %d)", key,
            CNMS_MAX_CLASS_PARAMS);
        goto failed;
      }
      e.id = (gint) id;
    } else {
      e.name = g_strdup (key);
    }
    g_array_append_val (entries, e);
  }
  g_strfreev (items);
  return entries;

failed:
  g_strfreev (items);
  entries_free (entries);
  return NULL;
}

/* The id of label name, or -1 (the file's labels only: their table does
 * not change while the stream runs). */
static gint
label_id (const GstCudanmsLabels * labels, const gchar * name)
{
  gpointer v = labels->ids ? g_hash_table_lookup (labels->ids, name) : NULL;

  return v != NULL ? (gint) GPOINTER_TO_UINT (v) - 1 : -1;
}

/* Gives every entry its id; names with labels (NULL: names wait). */
static gboolean
resolve_entries (GstCudanmsClassSpec which, GArray * entries,
    const GstCudanmsLabels * labels, GError ** error)
{
  guint i;

  for (i = 0; i < entries->len; i++) {
    Entry *e = &g_array_index (entries, Entry, i);

    if (e->name == NULL || labels == NULL)
      continue;
    e->id = label_id (labels, e->name);
    if (e->id < 0) {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          "%s: the label file has no class '%s' (%u labels)",
          spec_names[which], e->name, labels->n_from_file);
      return FALSE;
    }
  }
  return TRUE;
}

/* The rules of the stored specs, parsed and resolved again (every spec
 * parsed when it was set); NULL on error, with *error. */
static GstCudanmsClassRules *
build (gchar ** spec, const GstCudanmsLabels * labels, gboolean * any,
    GError ** error)
{
  GArray *entries[GST_CUDANMS_N_CLASS_SPECS] = { NULL };
  GstCudanmsClassRules *r = NULL;
  guint i, j, n = 0;

  *any = FALSE;
  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    if (spec[i] == NULL)
      continue;
    entries[i] = parse (i, spec[i], error);
    if (entries[i] == NULL || !resolve_entries (i, entries[i], labels, error))
      goto done;
    *any = TRUE;
    for (j = 0; j < entries[i]->len; j++) {
      gint id = g_array_index (entries[i], Entry, j).id;

      if (id >= 0 && (guint) id + 1 > n)
        n = (guint) id + 1;
    }
  }
  r = g_new0 (GstCudanmsClassRules, 1);
  r->n = n;
  r->thr = g_new (gfloat, MAX (n, 1));
  r->iou = g_new (gfloat, MAX (n, 1));
  r->max = g_new0 (gint, MAX (n, 1));
  r->dropped = g_new0 (guint8, MAX (n, 1));
  for (j = 0; j < n; j++)
    r->thr[j] = r->iou[j] = NAN;
  r->keep_only = entries[GST_CUDANMS_CLASS_KEEP] != NULL;
  if (r->keep_only)
    memset (r->dropped, 1, n);
  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    for (j = 0; entries[i] != NULL && j < entries[i]->len; j++) {
      const Entry *e = &g_array_index (entries[i], Entry, j);

      if (e->id < 0)
        continue;               /* a name to resolve at start */
      switch (i) {
        case GST_CUDANMS_CLASS_THRESHOLDS:
          r->thr[e->id] = (gfloat) e->value;
          break;
        case GST_CUDANMS_CLASS_IOUS:
          r->iou[e->id] = (gfloat) e->value;
          break;
        case GST_CUDANMS_CLASS_MAX_DETECTIONS:
          r->max[e->id] = (gint) e->value;
          break;
        case GST_CUDANMS_CLASS_KEEP:
          r->dropped[e->id] = 0;
          break;
        default:
          r->dropped[e->id] = 1;
          break;
      }
    }
  }
done:
  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    if (entries[i] != NULL)
      entries_free (entries[i]);
  }
  return r;
}

gboolean
gst_cudanms_classes_set (GstCudanmsClasses * c, GstCudanmsClassSpec which,
    const gchar * value, const GstCudanmsLabels * labels, GError ** error)
{
  gchar *old = c->spec[which];
  GstCudanmsClassRules *r;
  gboolean any;

  c->spec[which] = value != NULL && value[0] != '\0' ? g_strdup (value) :
      NULL;
  r = build (c->spec, labels, &any, error);
  if (r == NULL) {
    g_free (c->spec[which]);
    c->spec[which] = old;
    return FALSE;
  }
  g_free (old);
  rules_free (c->rules);
  c->rules = any ? r : NULL;
  if (!any)
    rules_free (r);
  return TRUE;
}

gboolean
gst_cudanms_classes_resolve (GstCudanmsClasses * c,
    const GstCudanmsLabels * labels, GError ** error)
{
  GstCudanmsClassRules *r;
  gboolean any, ok = TRUE;
  guint i;

  /* a spec that does not resolve on its own is dropped, the first one's
   * reason reported */
  for (i = 0; i < GST_CUDANMS_N_CLASS_SPECS; i++) {
    gchar *alone[GST_CUDANMS_N_CLASS_SPECS] = { NULL };
    GError *e = NULL;

    if (c->spec[i] == NULL)
      continue;
    alone[i] = c->spec[i];
    r = build (alone, labels, &any, &e);
    if (r == NULL) {
      if (ok)
        g_propagate_error (error, e);
      else
        g_clear_error (&e);
      g_clear_pointer (&c->spec[i], g_free);
      ok = FALSE;
    }
    rules_free (r);
  }
  r = build (c->spec, labels, &any, NULL);
  rules_free (c->rules);
  c->rules = r != NULL && any ? r : NULL;
  if (r != NULL && !any)
    rules_free (r);
  return ok;
}

void
gst_cudanms_classes_apply (GstCudanmsClasses * c, cnms_params * p)
{
  const GstCudanmsClassRules *r = c->rules;
  guint i;

  if (r == NULL)
    return;
  if (r->n > c->params_cap) {
    g_free (c->params);
    c->params = g_new (cnms_class_params, r->n);
    c->params_cap = r->n;
  }
  for (i = 0; i < r->n; i++) {
    cnms_class_params *k = &c->params[i];

    k->score_threshold = r->dropped[i] ? INFINITY :
        isnan (r->thr[i]) ? p->score_threshold : r->thr[i];
    k->iou = isnan (r->iou[i]) ? p->iou : r->iou[i];
    k->max_detections = r->max[i];
  }
  p->classes = r->n > 0 ? c->params : NULL;
  p->n_classes = (int) r->n;
  p->other_classes_filtered = r->keep_only;
}
