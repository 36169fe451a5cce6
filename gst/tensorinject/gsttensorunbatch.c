/* tensorunbatch: splits batch buffers (GStreamer >= 1.28,
 * GstAnalyticsBatchMeta) back into their streams, the stand-in for a
 * demuxing splitter (gst-plugins-rs's analyticssplitter, which Debian does
 * not ship; DeepStream's nvstreamdemux) in tests and the batch demo.
 *
 *   tensorbatch name=b frames=2 ! cudanms ! tensorunbatch name=u
 *   u.src_0 ! videoconvert ! ...
 *   u.src_1 ! videoconvert ! ...
 *
 * Each stream of index %u of the meta goes out of the "sometimes" pad
 * src_%u, made (and added) when a batch first carries that stream. For
 * each batch buffer, for each of its streams in the meta's order: the
 * stream's sticky events (stream-start, caps, segment) that differ from
 * what its pad has already (so its caps come before its first buffer),
 * then its objects in order: a buffer or buffer list pushed with a
 * reference of its own (the frame as cudanms left it, its ROI metas and
 * analytics metas with it), a serialized event pushed. A stream that a
 * batch does not carry gets nothing from it. EOS, FLUSH_START and
 * FLUSH_STOP go to every pad; the batches' own stream-start, caps and
 * segment go nowhere. The flow returns of the pads are combined
 * (GstFlowCombiner): the batches flow while any stream's does. A batch
 * buffer without the meta is an error. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/base/gstflowcombiner.h>
#include <gst/analytics/analytics.h>

#include "gsttensorunbatch.h"

GST_DEBUG_CATEGORY_STATIC (gst_tensor_unbatch_debug);
#define GST_CAT_DEFAULT gst_tensor_unbatch_debug

struct _GstTensorUnbatch
{
  GstElement parent;
  GstPad *sinkpad;
  GHashTable *srcpads;          /* stream index -> its src_%u (a ref) */
  GstFlowCombiner *combiner;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS
    ("multistream/x-analytics-batch(meta:GstAnalyticsBatchMeta)"));
static GstStaticPadTemplate src_template =
GST_STATIC_PAD_TEMPLATE ("src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS_ANY);

G_DEFINE_TYPE (GstTensorUnbatch, gst_tensor_unbatch, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (tensorunbatch, "tensorunbatch", GST_RANK_NONE,
    GST_TYPE_TENSOR_UNBATCH);

/* Whether the sticky event want says something else than have, the one of
 * its type the pad has (NULL: none yet). */
static gboolean
event_differs (GstEvent * have, GstEvent * want)
{
  if (have == want)
    return FALSE;
  if (have == NULL)
    return TRUE;
  switch (GST_EVENT_TYPE (want)) {
    case GST_EVENT_STREAM_START:{
      const gchar *a = NULL, *b = NULL;
      guint ga = 0, gb = 0;
      gboolean ha, hb;

      gst_event_parse_stream_start (have, &a);
      gst_event_parse_stream_start (want, &b);
      ha = gst_event_parse_group_id (have, &ga);
      hb = gst_event_parse_group_id (want, &gb);
      return g_strcmp0 (a, b) != 0 || ha != hb || ga != gb;
    }
    case GST_EVENT_CAPS:{
      GstCaps *a, *b;

      gst_event_parse_caps (have, &a);
      gst_event_parse_caps (want, &b);
      return !gst_caps_is_equal (a, b);
    }
    case GST_EVENT_SEGMENT:{
      const GstSegment *a, *b;

      gst_event_parse_segment (have, &a);
      gst_event_parse_segment (want, &b);
      return !gst_segment_is_equal (a, b);
    }
    default:{
      const GstStructure *a = gst_event_get_structure (have);
      const GstStructure *b = gst_event_get_structure (want);

      if (a == NULL || b == NULL)
        return a != b;
      return !gst_structure_is_equal (a, b);
    }
  }
}

/* The src pad of stream index, made and added the first time. */
static GstPad *
stream_pad (GstTensorUnbatch * self, guint index)
{
  GstPad *pad;
  gchar *name;

  GST_OBJECT_LOCK (self);
  pad = g_hash_table_lookup (self->srcpads, GUINT_TO_POINTER (index));
  GST_OBJECT_UNLOCK (self);
  if (pad != NULL)
    return pad;

  name = g_strdup_printf ("src_%u", index);
  pad = gst_pad_new_from_static_template (&src_template, name);
  g_free (name);
  gst_pad_use_fixed_caps (pad);
  gst_pad_set_active (pad, TRUE);
  GST_OBJECT_LOCK (self);
  g_hash_table_insert (self->srcpads, GUINT_TO_POINTER (index),
      gst_object_ref (pad));
  GST_OBJECT_UNLOCK (self);
  gst_flow_combiner_add_pad (self->combiner, pad);
  GST_DEBUG_OBJECT (self, "stream %u: a new pad", index);
  gst_element_add_pad (GST_ELEMENT (self), pad);
  return pad;
}

/* Stream st of a batch out of its pad: its changed sticky events, then
 * its objects. The pad's flow return. */
static GstFlowReturn
push_stream (GstTensorUnbatch * self, GstAnalyticsBatchStream * st)
{
  GstPad *pad = stream_pad (self, st->index);
  GstFlowReturn ret = GST_FLOW_OK;
  gsize k;

  for (k = 0; k < st->n_sticky_events; k++) {
    GstEvent *e = st->sticky_events[k], *have;

    if (e == NULL)
      continue;
    have = gst_pad_get_sticky_event (pad, GST_EVENT_TYPE (e), 0);
    if (event_differs (have, e)) {
      GST_DEBUG_OBJECT (pad, "stream %u: %" GST_PTR_FORMAT, st->index, e);
      gst_pad_push_event (pad, gst_event_ref (e));
    }
    if (have != NULL)
      gst_event_unref (have);
  }
  for (k = 0; k < st->n_objects && ret == GST_FLOW_OK; k++) {
    GstMiniObject *o = st->objects[k];

    if (o == NULL)
      continue;
    if (GST_IS_BUFFER (o))
      ret = gst_pad_push (pad, gst_buffer_ref (GST_BUFFER_CAST (o)));
    else if (GST_IS_BUFFER_LIST (o))
      ret = gst_pad_push_list (pad,
          gst_buffer_list_ref (GST_BUFFER_LIST_CAST (o)));
    else if (GST_IS_EVENT (o))
      gst_pad_push_event (pad, gst_event_ref (GST_EVENT_CAST (o)));
    else
      GST_WARNING_OBJECT (self, "stream %u: object %" G_GSIZE_FORMAT
          " is no buffer, buffer list or event: left out", st->index, k);
  }
  return ret;
}

static GstFlowReturn
gst_tensor_unbatch_chain (GstPad * sinkpad, GstObject * parent,
    GstBuffer * buf)
{
  GstTensorUnbatch *self = GST_TENSOR_UNBATCH (parent);
  GstAnalyticsBatchMeta *meta = gst_buffer_get_analytics_batch_meta (buf);
  GstFlowReturn ret = GST_FLOW_OK;
  gsize s;

  if (meta == NULL) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A batch buffer has no GstAnalyticsBatchMeta: nothing to split"),
        ("%" GST_PTR_FORMAT " of caps multistream/x-analytics-batch carries "
            "no batch meta; tensorunbatch splits only what a batching muxer "
            "(e.g. tensorbatch) made", buf));
    gst_buffer_unref (buf);
    return GST_FLOW_ERROR;
  }
  for (s = 0; s < meta->n_streams && ret == GST_FLOW_OK; s++) {
    GstAnalyticsBatchStream *st = &meta->streams[s];
    GstFlowReturn r = push_stream (self, st);

    ret = gst_flow_combiner_update_pad_flow (self->combiner,
        stream_pad (self, st->index), r);
  }
  gst_buffer_unref (buf);
  return ret;
}

static gboolean
gst_tensor_unbatch_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstTensorUnbatch *self = GST_TENSOR_UNBATCH (parent);
  guint n;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
      GST_OBJECT_LOCK (self);
      n = g_hash_table_size (self->srcpads);
      GST_OBJECT_UNLOCK (self);
      if (n == 0)
        GST_ELEMENT_ERROR (self, STREAM, FAILED,
            ("End of stream before any batch: no stream to end"), (NULL));
      /* every stream's pad */
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_FLUSH_START:
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_FLUSH_STOP:
      gst_flow_combiner_reset (self->combiner);
      return gst_pad_event_default (pad, parent, event);
    default:
      /* the batches' own stream-start, caps and segment (each stream's
       * come with its batches) and the rest */
      GST_LOG_OBJECT (self, "not passed on: %" GST_PTR_FORMAT, event);
      gst_event_unref (event);
      return TRUE;
  }
}

static gboolean
gst_tensor_unbatch_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  /* a batch buffer has no memory: no stream's allocator fits it */
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    return FALSE;
  return gst_pad_query_default (pad, parent, query);
}

/* Every stream's pad removed. */
static void
remove_pads (GstTensorUnbatch * self)
{
  GList *pads, *l;

  GST_OBJECT_LOCK (self);
  pads = g_hash_table_get_values (self->srcpads);
  g_list_foreach (pads, (GFunc) gst_object_ref, NULL);
  g_hash_table_remove_all (self->srcpads);
  GST_OBJECT_UNLOCK (self);
  for (l = pads; l != NULL; l = l->next) {
    gst_flow_combiner_remove_pad (self->combiner, l->data);
    gst_pad_set_active (l->data, FALSE);
    gst_element_remove_pad (GST_ELEMENT (self), l->data);
  }
  g_list_free_full (pads, gst_object_unref);
  gst_flow_combiner_reset (self->combiner);
}

static GstStateChangeReturn
gst_tensor_unbatch_change_state (GstElement * element,
    GstStateChange transition)
{
  GstTensorUnbatch *self = GST_TENSOR_UNBATCH (element);
  GstStateChangeReturn ret = GST_ELEMENT_CLASS
      (gst_tensor_unbatch_parent_class)->change_state (element, transition);

  if (ret != GST_STATE_CHANGE_FAILURE
      && transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    remove_pads (self);
  return ret;
}

static void
gst_tensor_unbatch_init (GstTensorUnbatch * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_tensor_unbatch_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_tensor_unbatch_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_tensor_unbatch_sink_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
  self->srcpads = g_hash_table_new_full (NULL, NULL, NULL, gst_object_unref);
  self->combiner = gst_flow_combiner_new ();
}

static void
gst_tensor_unbatch_finalize (GObject * object)
{
  GstTensorUnbatch *self = GST_TENSOR_UNBATCH (object);

  g_hash_table_unref (self->srcpads);
  gst_flow_combiner_free (self->combiner);
  G_OBJECT_CLASS (gst_tensor_unbatch_parent_class)->finalize (object);
}

static void
gst_tensor_unbatch_class_init (GstTensorUnbatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (gst_tensor_unbatch_debug, "tensorunbatch", 0,
      "Batches split into their streams");
  gobject_class->finalize = gst_tensor_unbatch_finalize;
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Tensor unbatch", "Demuxer/Analytics",
      "Splits batch buffers (GstAnalyticsBatchMeta) into their streams, "
      "one src pad a stream, for tests and demos", "cudanms developers");
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_tensor_unbatch_change_state);
}
