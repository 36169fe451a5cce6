/* The element's counters and once-per-stream warnings alone (the plugin's
 * gstcudanmsstats library linked into the test), where no GPU is needed:
 * tensors in GstCudaMemory of another CUDA context than the element's.
 * Stand-in contexts (a GObject with gst-cuda's "cuda-device-id" property,
 * a guint as GstCudaContext's) name the devices; the pipelines with real
 * GPUs are suite gpu's element-multi. */
#include <gst/check/gstcheck.h>

#include "gstcudanmsstats.h"

/* the plugin's category (gstcudanmsdebug.c), which plugin_init would set
 * up; its header would redefine gstcheck's GST_CAT_DEFAULT */
GST_DEBUG_CATEGORY_EXTERN (gst_cudanms_debug);

#define OTHER "buffers-from-other-cuda-context"

/* A stand-in GstCudaContext: its device, read-only after construction. */
typedef struct
{
  GObject parent;
  guint device;
} FakeContext;

typedef struct
{
  GObjectClass parent;
} FakeContextClass;

static GType fake_context_get_type (void);
G_DEFINE_TYPE (FakeContext, fake_context, G_TYPE_OBJECT);

static void
fake_context_set_property (GObject * object, guint id, const GValue * v,
    GParamSpec * pspec)
{
  ((FakeContext *) object)->device = g_value_get_uint (v);
}

static void
fake_context_get_property (GObject * object, guint id, GValue * v,
    GParamSpec * pspec)
{
  g_value_set_uint (v, ((FakeContext *) object)->device);
}

static void
fake_context_class_init (FakeContextClass * klass)
{
  GObjectClass *o = G_OBJECT_CLASS (klass);

  o->set_property = fake_context_set_property;
  o->get_property = fake_context_get_property;
  g_object_class_install_property (o, 1, g_param_spec_uint ("cuda-device-id",
          "device", "device", 0, G_MAXUINT, 0, G_PARAM_CONSTRUCT_ONLY |
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
}

static void
fake_context_init (FakeContext * self)
{
}

static GObject *
context_on (guint device)
{
  return g_object_new (fake_context_get_type (), "cuda-device-id", device,
      NULL);
}

static guint64
counted (GstElement * el, GstCudanmsStats * stats)
{
  GstStructure *s;
  guint64 v = G_MAXUINT64;

  GST_OBJECT_LOCK (el);
  s = gst_cudanms_stats_to_structure (stats);
  GST_OBJECT_UNLOCK (el);
  fail_unless (gst_structure_get_uint64 (s, OTHER, &v));
  fail_unless_equals_int (gst_structure_n_fields (s), 17);
  gst_structure_free (s);
  return v;
}

/* Pops the one warning on bus: its text must be want, its details kind
 * other-cuda-context with both devices; then no other warning. */
static void
expect_one_warning (GstBus * bus, const gchar * want, gint tensor_device,
    gint element_device)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  const GstStructure *details = NULL;
  GError *err = NULL;
  gint td = -1, ed = -1;

  fail_unless (msg != NULL, "no warning '%s'", want);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless_equals_string (err->message, want);
  gst_message_parse_warning_details (msg, &details);
  fail_unless (details != NULL);
  fail_unless_equals_string (gst_structure_get_string (details, "kind"),
      "other-cuda-context");
  fail_unless (gst_structure_get_int (details, "tensor-device", &td));
  fail_unless (gst_structure_get_int (details, "element-device", &ed));
  fail_unless_equals_int (td, tensor_device);
  fail_unless_equals_int (ed, element_device);
  g_clear_error (&err);
  gst_message_unref (msg);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg == NULL, "a second warning");
}

/* Every buffer of another context counts; the first of each stream posts
 * one warning naming both devices (another GPU, or another context of
 * the same GPU); a start zeroes the count. */
GST_START_TEST (test_other_context)
{
  GstElement *el = gst_element_factory_make ("fakesink", "nms");
  GstBus *bus = gst_bus_new ();
  GstCudanmsStats stats;
  GObject *gpu0 = context_on (0), *gpu1 = context_on (1);
  GObject *gpu0_again = context_on (0);
  gint i;

  fail_unless (el != NULL);
  gst_element_set_bus (el, bus);
  gst_cudanms_stats_init (&stats);
  gst_cudanms_stats_start (el, &stats);
  fail_unless_equals_uint64 (counted (el, &stats), 0);

  for (i = 0; i < 5; i++)
    gst_cudanms_stats_other_context (el, &stats, gpu0, gpu1);
  fail_unless_equals_uint64 (counted (el, &stats), 5);
  expect_one_warning (bus, "Tensors in CUDA memory of GPU 1 reach the "
      "element on GPU 0: each is copied through host memory and decoded as "
      "a host tensor.", 1, 0);

  /* a new stream: said once more; another context of the same GPU */
  gst_cudanms_stats_new_stream (&stats);
  gst_cudanms_stats_other_context (el, &stats, gpu0, gpu0_again);
  gst_cudanms_stats_other_context (el, &stats, gpu0, gpu1);
  fail_unless_equals_uint64 (counted (el, &stats), 7);
  expect_one_warning (bus, "Tensors in CUDA memory of another CUDA context "
      "on GPU 0 reach the element (its own context on GPU 0): each is "
      "copied through host memory and decoded as a host tensor.", 0, 0);

  /* a start: zero, and said again */
  gst_cudanms_stats_start (el, &stats);
  fail_unless_equals_uint64 (counted (el, &stats), 0);
  gst_cudanms_stats_other_context (el, &stats, gpu1, gpu0);
  fail_unless_equals_uint64 (counted (el, &stats), 1);
  expect_one_warning (bus, "Tensors in CUDA memory of GPU 0 reach the "
      "element on GPU 1: each is copied through host memory and decoded as "
      "a host tensor.", 0, 1);

  gst_cudanms_stats_clear (&stats);
  g_object_unref (gpu0);
  g_object_unref (gpu1);
  g_object_unref (gpu0_again);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (el, NULL);
  gst_object_unref (bus);
  gst_object_unref (el);
}

GST_END_TEST;

static Suite *
stats_suite (void)
{
  Suite *s = suite_create ("stats");
  TCase *tc = tcase_create ("general");

  GST_DEBUG_CATEGORY_INIT (gst_cudanms_debug, "cudanms", 0, "test");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_other_context);
  return s;
}

GST_CHECK_MAIN (stats);
