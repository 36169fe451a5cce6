/* tensorbatch: gathers the frames of several streams into batch buffers
 * (GStreamer >= 1.28, GstAnalyticsBatchMeta), the stand-in for a batching
 * muxer (DeepStream's nvstreammux, DL Streamer's gvastreammux,
 * gst-plugins-rs's analyticscombiner) in tests, benches and the demo.
 *
 *   videotestsrc ! tensorinject seed=1 ! b.sink_0
 *   videotestsrc ! tensorinject seed=2 ! b.sink_1
 *   tensorbatch name=b frames=2 ! cudanms ! ...
 *
 * Each request pad sink_%u is a stream of index %u. A batch holds, for
 * every stream in pad order, its next `frames` buffers (fewer, or none,
 * once the stream ended) and its sticky events (stream-start, caps,
 * segment), as GStreamer 1.28's batch meta asks: an empty buffer whose
 * meta owns one reference per slot. The batch's PTS is its first frame's.
 * The last batch goes out when every stream has ended; then EOS.
 *
 * batch-tensor=true moves the tensors of every frame into one [B, ...]
 * tensor of each id on the batch buffer (system memory; B the frames of
 * the batch in stream order, each frame's tensors alike in id, dims and
 * data type, or the batch is an error): the other convention a detector
 * of a fixed batch uses. The frames keep no tensor then. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <gst/base/gstaggregator.h>
#include <gst/analytics/analytics.h>

#include "gsttensorbatch.h"

GST_DEBUG_CATEGORY_STATIC (gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

#define TENSOR_META_NAME "CudanmsTensorMeta"
#define DEFAULT_FRAMES 1
#define DEFAULT_BATCH_TENSOR FALSE
#define MAX_FRAMES 256

/* A stream's pad: the frames taken for the next batch. */
#define GST_TYPE_TENSOR_BATCH_PAD (gst_tensor_batch_pad_get_type ())
G_DECLARE_FINAL_TYPE (GstTensorBatchPad, gst_tensor_batch_pad, GST,
    TENSOR_BATCH_PAD, GstAggregatorPad);

struct _GstTensorBatchPad
{
  GstAggregatorPad parent;
  guint index;                  /* the %u of sink_%u */
  GPtrArray *pending;           /* GstBuffer *, taken for the next batch */
};

G_DEFINE_TYPE (GstTensorBatchPad, gst_tensor_batch_pad,
    GST_TYPE_AGGREGATOR_PAD);

static void
gst_tensor_batch_pad_init (GstTensorBatchPad * pad)
{
  pad->pending = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
}

static void
gst_tensor_batch_pad_finalize (GObject * object)
{
  g_ptr_array_unref (GST_TENSOR_BATCH_PAD (object)->pending);
  G_OBJECT_CLASS (gst_tensor_batch_pad_parent_class)->finalize (object);
}

static GstFlowReturn
gst_tensor_batch_pad_flush (GstAggregatorPad * aggpad, GstAggregator * agg)
{
  g_ptr_array_set_size (GST_TENSOR_BATCH_PAD (aggpad)->pending, 0);
  return GST_FLOW_OK;
}

static void
gst_tensor_batch_pad_class_init (GstTensorBatchPadClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_tensor_batch_pad_finalize;
  GST_AGGREGATOR_PAD_CLASS (klass)->flush = gst_tensor_batch_pad_flush;
}

struct _GstTensorBatch
{
  GstAggregator parent;
  guint frames;
  gboolean batch_tensor;
};

enum
{
  PROP_0,
  PROP_FRAMES,
  PROP_BATCH_TENSOR,
};

static GstStaticPadTemplate sink_template =
GST_STATIC_PAD_TEMPLATE ("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS
    ("multistream/x-analytics-batch(meta:GstAnalyticsBatchMeta)"));

G_DEFINE_TYPE (GstTensorBatch, gst_tensor_batch, GST_TYPE_AGGREGATOR);
GST_ELEMENT_REGISTER_DEFINE (tensorbatch, "tensorbatch", GST_RANK_NONE,
    GST_TYPE_TENSOR_BATCH);

static void
gst_tensor_batch_init (GstTensorBatch * self)
{
  self->frames = DEFAULT_FRAMES;
  self->batch_tensor = DEFAULT_BATCH_TENSOR;
}

static void
gst_tensor_batch_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTensorBatch *self = GST_TENSOR_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FRAMES:
      self->frames = g_value_get_uint (value);
      break;
    case PROP_BATCH_TENSOR:
      self->batch_tensor = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_tensor_batch_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstTensorBatch *self = GST_TENSOR_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FRAMES:
      g_value_set_uint (value, self->frames);
      break;
    case PROP_BATCH_TENSOR:
      g_value_set_boolean (value, self->batch_tensor);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static GstPad *
gst_tensor_batch_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstPad *pad = GST_ELEMENT_CLASS (gst_tensor_batch_parent_class)
      ->request_new_pad (element, templ, name, caps);
  guint index = 0;

  if (pad != NULL) {
    gchar *pad_name = gst_pad_get_name (pad);

    if (sscanf (pad_name, "sink_%u", &index) != 1)
      index = 0;
    GST_TENSOR_BATCH_PAD (pad)->index = index;
    g_free (pad_name);
  }
  return pad;
}

/* The custom tensor metas of buf, in their order. */
static GPtrArray *
tensor_metas (GstBuffer * buf)
{
  GPtrArray *a = g_ptr_array_new ();
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta (buf, &state)) != NULL)
    if (gst_meta_info_is_custom (m->info)
        && gst_custom_meta_has_name ((GstCustomMeta *) m, TENSOR_META_NAME))
      g_ptr_array_add (a, m);
  return a;
}

/* The batch's frames (in stream order) as one [B, ...] tensor of each id
 * on out; the frames made writable (in place in their slots) and stripped
 * of their tensors. FALSE (with *why) when the frames' tensors differ. */
static gboolean
move_tensors (GstBuffer * out, GstMiniObject *** slots, guint n, gchar ** why)
{
  GPtrArray *first;
  guint t, i;
  gboolean ok = TRUE;

  if (n == 0)
    return TRUE;
  first = tensor_metas ((GstBuffer *) * slots[0]);
  for (t = 0; ok && t < first->len; t++) {
    GstStructure *s0 = gst_custom_meta_get_structure (first->pdata[t]);
    const gchar *id = gst_structure_get_string (s0, "id");
    const gchar *type = gst_structure_get_string (s0, "data-type");
    const GValue *dims0 = gst_structure_get_value (s0, "dims");
    GstBuffer *data = gst_buffer_new ();
    GstStructure *bs;
    GstCustomMeta *bm;
    GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
    guint d, nd = dims0 ? gst_value_array_get_size (dims0) : 0;

    for (i = 0; ok && i < n; i++) {
      GPtrArray *metas = tensor_metas ((GstBuffer *) * slots[i]);
      GstStructure *s = metas->len > t ?
          gst_custom_meta_get_structure (metas->pdata[t]) : NULL;
      GstBuffer *fd = NULL;
      GstMapInfo map;

      if (s == NULL || g_strcmp0 (gst_structure_get_string (s, "id"), id)
          || g_strcmp0 (gst_structure_get_string (s, "data-type"), type)
          || gst_value_compare (gst_structure_get_value (s, "dims"), dims0)
          != GST_VALUE_EQUAL
          || !gst_structure_get (s, "data", GST_TYPE_BUFFER, &fd, NULL)) {
        *why = g_strdup_printf ("frame %u's tensor \"%s\" differs from "
            "frame 0's (id, data type, dims) or is missing", i,
            id ? id : "(none)");
        ok = FALSE;
      } else if (!gst_buffer_map (fd, &map, GST_MAP_READ)) {
        *why = g_strdup_printf ("frame %u's tensor cannot be read", i);
        ok = FALSE;
      } else {
        gst_buffer_append_memory (data,
            gst_memory_new_wrapped (0, g_memdup2 (map.data, map.size),
                map.size, 0, map.size, NULL, NULL));
        gst_buffer_unmap (fd, &map);
      }
      if (fd != NULL)
        gst_buffer_unref (fd);
      g_ptr_array_unref (metas);
    }
    if (ok) {
      bm = (GstCustomMeta *) gst_buffer_add_custom_meta (out,
          TENSOR_META_NAME);
      bs = gst_custom_meta_get_structure (bm);
      g_value_init (&arr, GST_TYPE_ARRAY);
      g_value_init (&v, G_TYPE_UINT64);
      g_value_set_uint64 (&v, (guint64) n);
      gst_value_array_append_value (&arr, &v);
      /* frame 0's dims less its batch dimension of 1 */
      for (d = 1; d < nd; d++)
        gst_value_array_append_value (&arr,
            gst_value_array_get_value (dims0, d));
      g_value_unset (&v);
      if (id != NULL)
        gst_structure_set (bs, "id", G_TYPE_STRING, id, NULL);
      gst_structure_set (bs, "data-type", G_TYPE_STRING, type,
          "dims-order", G_TYPE_STRING, "row-major",
          "data", GST_TYPE_BUFFER, data, NULL);
      gst_structure_take_value (bs, "dims", &arr);
    }
    gst_buffer_unref (data);
  }
  g_ptr_array_unref (first);
  /* the frames keep no tensor */
  for (i = 0; ok && i < n; i++) {
    GstBuffer *b = gst_buffer_make_writable ((GstBuffer *) * slots[i]);
    GPtrArray *metas = tensor_metas (b);

    for (t = 0; t < metas->len; t++)
      gst_buffer_remove_meta (b, metas->pdata[t]);
    g_ptr_array_unref (metas);
    *slots[i] = GST_MINI_OBJECT_CAST (b);
  }
  return ok;
}

/* The sticky events of pad a batch stream carries. */
static void
stream_events (GstPad * pad, GstAnalyticsBatchStream * st)
{
  static const GstEventType types[] = { GST_EVENT_STREAM_START,
    GST_EVENT_CAPS, GST_EVENT_SEGMENT
  };
  guint k;

  st->sticky_events = g_new0 (GstEvent *, G_N_ELEMENTS (types));
  for (k = 0; k < G_N_ELEMENTS (types); k++) {
    GstEvent *e = gst_pad_get_sticky_event (pad, types[k], 0);

    if (e != NULL)
      st->sticky_events[st->n_sticky_events++] = e;
  }
}

static GstFlowReturn
gst_tensor_batch_aggregate (GstAggregator * agg, gboolean timeout)
{
  GstTensorBatch *self = GST_TENSOR_BATCH (agg);
  GstElement *element = GST_ELEMENT (agg);
  gboolean ready = TRUE, any = FALSE, batch_tensor;
  guint frames, n_streams = 0, s = 0, n_frames = 0, k;
  GstClockTime pts = GST_CLOCK_TIME_NONE, dur = GST_CLOCK_TIME_NONE;
  GstAnalyticsBatchMeta *meta;
  GstMiniObject ***slots;
  GstBuffer *out;
  GList *l;
  gchar *why = NULL;

  GST_OBJECT_LOCK (self);
  frames = self->frames;
  batch_tensor = self->batch_tensor;
  /* one more frame of every stream that has one and wants it */
  for (l = element->sinkpads; l != NULL; l = l->next) {
    GstTensorBatchPad *pad = l->data;
    GstAggregatorPad *ap = GST_AGGREGATOR_PAD (pad);

    if (pad->pending->len < frames) {
      GstBuffer *b = gst_aggregator_pad_pop_buffer (ap);

      if (b != NULL)
        g_ptr_array_add (pad->pending, b);
    }
    if (pad->pending->len < frames && !gst_aggregator_pad_is_eos (ap))
      ready = FALSE;
    any |= pad->pending->len > 0;
    n_streams++;
  }
  if (!ready || !any) {
    GST_OBJECT_UNLOCK (self);
    return ready ? GST_FLOW_EOS : GST_FLOW_OK;
  }

  out = gst_buffer_new ();
  meta = gst_buffer_add_analytics_batch_meta (out);
  meta->streams = g_new0 (GstAnalyticsBatchStream, n_streams);
  meta->n_streams = n_streams;
  slots = g_new0 (GstMiniObject **, (gsize) n_streams * frames);
  for (l = element->sinkpads; l != NULL; l = l->next, s++) {
    GstTensorBatchPad *pad = l->data;
    GstAnalyticsBatchStream *st = &meta->streams[s];

    st->index = pad->index;
    stream_events (GST_PAD (pad), st);
    st->n_objects = pad->pending->len;
    st->objects = st->n_objects ? g_new0 (GstMiniObject *, st->n_objects) :
        NULL;
    for (k = 0; k < st->n_objects; k++) {
      GstBuffer *b = g_ptr_array_index (pad->pending, k);

      st->objects[k] = GST_MINI_OBJECT_CAST (gst_buffer_ref (b));
      slots[n_frames++] = &st->objects[k];
      if (!GST_CLOCK_TIME_IS_VALID (pts) && GST_BUFFER_PTS_IS_VALID (b)) {
        pts = GST_BUFFER_PTS (b);
        dur = GST_BUFFER_DURATION (b);
      }
    }
    g_ptr_array_set_size (pad->pending, 0);
  }
  GST_OBJECT_UNLOCK (self);

  GST_BUFFER_PTS (out) = pts;
  GST_BUFFER_DURATION (out) = dur;
  if (batch_tensor && !move_tensors (out, slots, n_frames, &why)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Cannot make the batch's tensor: %s", why), (NULL));
    g_free (why);
    g_free (slots);
    gst_buffer_unref (out);
    return GST_FLOW_ERROR;
  }
  g_free (slots);
  return gst_aggregator_finish_buffer (agg, out);
}

static void
gst_tensor_batch_class_init (GstTensorBatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstAggregatorClass *agg_class = GST_AGGREGATOR_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;

  GST_DEBUG_CATEGORY_INIT (gst_tensor_batch_debug, "tensorbatch", 0,
      "Batches of many streams' frames");
  gobject_class->set_property = gst_tensor_batch_set_property;
  gobject_class->get_property = gst_tensor_batch_get_property;
  g_object_class_install_property (gobject_class, PROP_FRAMES,
      g_param_spec_uint ("frames", "Frames",
          "Frames of each stream in a batch (fewer once a stream ended)",
          1, MAX_FRAMES, DEFAULT_FRAMES, flags));
  g_object_class_install_property (gobject_class, PROP_BATCH_TENSOR,
      g_param_spec_boolean ("batch-tensor", "Batch tensor",
          "Move the frames' tensors into one [B, ...] tensor of each id on "
          "the batch buffer (system memory; B: the batch's frames in stream "
          "order)", DEFAULT_BATCH_TENSOR, flags));

  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &sink_template, GST_TYPE_TENSOR_BATCH_PAD);
  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &src_template, GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_set_static_metadata (element_class,
      "Tensor batch", "Muxer/Analytics",
      "Gathers the frames of several streams (each with its tensors) into "
      "batch buffers (GstAnalyticsBatchMeta), for tests and demos",
      "cudanms developers");
  element_class->request_new_pad = gst_tensor_batch_request_new_pad;
  agg_class->aggregate = gst_tensor_batch_aggregate;
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_BATCH_PAD, 0);
}
