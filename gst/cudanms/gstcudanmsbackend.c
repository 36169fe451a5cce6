/* cudanms: the element's backends (see gstcudanmsbackend.h).
 *
 * The CUDA backend runs in the pipeline's CUDA context: start asks the
 * pipeline for a GstCudaContext (gst_cuda_ensure_element_context, which
 * also answers other elements' context queries through ours), pushes it
 * while creating the library context, whose stream is then a stream of
 * that context, and pushes it again around every call. cudaupload, NVDEC
 * and any other gst-cuda element of the pipeline share it, so their
 * GstCudaMemory is used in place. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "gstcudanmsbackend.h"
#include "gstcudanmsdebug.h"

#ifdef HAVE_GST_CUDA
static gboolean
push (GstObject * context)
{
  return context == NULL || gst_cuda_context_push (GST_CUDA_CONTEXT (context));
}

static void
pop (GstObject * context)
{
  if (context != NULL)
    gst_cuda_context_pop (NULL);
}

/* Makes *context the pipeline's CUDA context for device_id: the one
 * set_context gave, else one a neighbour answers the context query with
 * (delivered through set_context, into *context: the same storage), else a
 * new one announced to the pipeline. FALSE, *context NULL, without
 * gst-cuda's CUDA library or a device (the CUDA backend then runs without
 * a shared context). */
static gboolean
ensure_context (GstElement * element, gint device_id, GstObject ** context)
{
  if (gst_cuda_load_library () && gst_cuda_ensure_element_context (element,
          device_id, (GstCudaContext **) context))
    return TRUE;
  gst_clear_object (context);
  return FALSE;
}
#else
#define push(context) ((void) (context), TRUE)
#define pop(context) ((void) (context))
#define ensure_context(element, device_id, context) ((void) (element), \
    (void) (device_id), (void) (context), FALSE)
#endif

gboolean
gst_cudanms_backend_start (GstCudanmsBackend * be, GstElement * element,
    GstCudanmsDevice device, gint device_id, gchar * msg, gsize msg_size)
{
  const gint n_cuda = cnms_cuda_device_count ();
  /* what set_context gave while stopped stays */
  GstObject *given = be->cuda_context;
  cnms_status st;

  memset (be, 0, sizeof (*be));
  be->device = device;
  gst_cudanms_pick_init (&be->pick);
  be->cuda_context = given;
  given = NULL;
  if (device != GST_CUDANMS_DEVICE_CPU && device_id >= n_cuda) {
    /* an id past the devices: an error on device=cuda, the CPU on auto */
    if (device == GST_CUDANMS_DEVICE_CUDA) {
      g_snprintf (msg, msg_size, "device=cuda, but cuda-device-id=%d names "
          "no device: this host has %d CUDA device%s (CUDA build: %s)",
          device_id, n_cuda, n_cuda == 1 ? "" : "s", HAVE_CUDA ? "yes" : "no");
      gst_clear_object (&be->cuda_context);
      return FALSE;
    }
    GST_ELEMENT_WARNING_WITH_DETAILS (element, RESOURCE, SETTINGS,
        ("cuda-device-id=%d names no device: this host has %d CUDA "
            "device%s; device=auto runs on the CPU.", device_id, n_cuda,
            n_cuda == 1 ? "" : "s"),
        ("Set cuda-device-id to -1 (the pipeline's CUDA context, else the "
            "first device) or to a device below %d", n_cuda),
        ("kind", G_TYPE_STRING, "cuda-device-id-out-of-range",
            "cuda-device-id", G_TYPE_INT, device_id, "cuda-devices",
            G_TYPE_INT, n_cuda, NULL));
  } else if (device != GST_CUDANMS_DEVICE_CPU && n_cuda > 0) {
    (void) ensure_context (element, device_id, &be->cuda_context);
    /* with a shared context its device is the one: the library takes the
     * current device */
    if (push (be->cuda_context)) {
      st = cnms_ctx_new (CNMS_BACKEND_CUDA,
          be->cuda_context != NULL ? -1 : device_id, &be->cuda);
      pop (be->cuda_context);
    } else {
      st = CNMS_ERR_CUDA;
    }
    if (st != CNMS_OK) {
      GST_WARNING_OBJECT (element, "CUDA backend unavailable: %s",
          cnms_status_str (st));
      be->cuda = NULL;
      gst_clear_object (&be->cuda_context);
    }
  }
  if (be->cuda == NULL)
    gst_clear_object (&be->cuda_context);
  if (device == GST_CUDANMS_DEVICE_CUDA && be->cuda == NULL) {
    g_snprintf (msg, msg_size, "device=cuda, but no CUDA device can run "
        "it (%d devices, CUDA build: %s)", n_cuda, HAVE_CUDA ? "yes" : "no");
    return FALSE;
  }
  if (device != GST_CUDANMS_DEVICE_CUDA) {
    st = cnms_ctx_new (CNMS_BACKEND_CPU, -1, &be->cpu);
    if (st != CNMS_OK) {
      g_snprintf (msg, msg_size, "cannot create the CPU context: %s",
          cnms_status_str (st));
      gst_cudanms_backend_stop (be);
      return FALSE;
    }
  }
  GST_INFO_OBJECT (element, "backends: cuda %s (%s context), cpu %s",
      be->cuda != NULL ? "yes" : "no",
      be->cuda_context != NULL ? "the pipeline's" : "no shared",
      be->cpu != NULL ? "yes" : "no");
  return TRUE;
}

void
gst_cudanms_backend_stop (GstCudanmsBackend * be)
{
  if (be->cuda != NULL) {
    if (push (be->cuda_context)) {
      cnms_ctx_free (be->cuda);
      pop (be->cuda_context);
    }
    be->cuda = NULL;
  }
  g_clear_pointer (&be->cpu, cnms_ctx_free);
  gst_clear_object (&be->cuda_context);
}

void
gst_cudanms_backend_set_context (GstCudanmsBackend * be, GstElement * element,
    GstContext * context, gint device_id)
{
#ifdef HAVE_GST_CUDA
  /* only while no library context runs in one: it stays in its context */
  if (be->cuda == NULL)
    gst_cuda_handle_set_context (element, context, device_id,
        (GstCudaContext **) & be->cuda_context);
#else
  (void) be;
  (void) element;
  (void) context;
  (void) device_id;
#endif
}

gboolean
gst_cudanms_backend_query (GstCudanmsBackend * be, GstElement * element,
    GstQuery * query)
{
#ifdef HAVE_GST_CUDA
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT)
    return gst_cuda_handle_context_query (element, query,
        (GstCudaContext *) be->cuda_context);
#else
  (void) be;
  (void) element;
  (void) query;
#endif
  return FALSE;
}

GstObject *
gst_cudanms_backend_device_context (const GstCudanmsBackend * be)
{
  return be->cuda != NULL && be->device != GST_CUDANMS_DEVICE_CPU ?
      be->cuda_context : NULL;
}

cnms_status
gst_cudanms_backend_detect (GstCudanmsBackend * be, const cnms_tensor * t,
    const cnms_tensor * protos, cnms_layout layout, const cnms_params * p,
    const cnms_det ** dets, int *n_dets, cnms_ctx ** used,
    GstClockTime * took)
{
  cnms_backend b;
  gboolean timed = FALSE;
  GstClockTime t0;
  cnms_status st;

  *took = 0;
  if (t->on_device || (protos != NULL && protos->on_device)
      || be->cpu == NULL)
    b = CNMS_BACKEND_CUDA;
  else if (be->cuda == NULL)
    b = CNMS_BACKEND_CPU;
  else
    b = gst_cudanms_pick_next (&be->pick, t, &timed);
  *used = b == CNMS_BACKEND_CUDA ? be->cuda : be->cpu;
  if (*used == NULL)
    return CNMS_ERR_NO_DEVICE;
  t0 = gst_util_get_timestamp ();
  if (b == CNMS_BACKEND_CUDA && !push (be->cuda_context))
    return CNMS_ERR_CUDA;
  st = cnms_detect (*used, t, protos, layout, p, dets, n_dets);
  if (b == CNMS_BACKEND_CUDA)
    pop (be->cuda_context);
  *took = gst_util_get_timestamp () - t0;
  if (timed && st == CNMS_OK
      && gst_cudanms_pick_record (&be->pick, b, (gint64) (*took / 1000)))
    GST_INFO ("device=auto: host tensors of this shape go to the %s "
        "backend (%" G_GINT64_FORMAT " us on cuda, %" G_GINT64_FORMAT
        " us on cpu: the fastest of %d buffers each)", be->pick.choice ==
        CNMS_BACKEND_CUDA ? "cuda" : "cpu", be->pick.us[CNMS_BACKEND_CUDA],
        be->pick.us[CNMS_BACKEND_CPU], GST_CUDANMS_AUTO_TRIALS - 1);
  return st;
}

/* The context of a batch (device: a tensor of it lies on the device):
 * the CUDA one wherever there is one, made current; *used, and *t0 the
 * time it starts. leave_batch after the call. */
static cnms_status
enter_batch (GstCudanmsBackend * be, gboolean device, cnms_ctx ** used,
    GstClockTime * t0)
{
  /* a batch goes to the GPU wherever there is one */
  const cnms_backend b = device || be->cpu == NULL || be->cuda != NULL ?
      CNMS_BACKEND_CUDA : CNMS_BACKEND_CPU;

  *used = b == CNMS_BACKEND_CUDA ? be->cuda : be->cpu;
  if (*used == NULL)
    return CNMS_ERR_NO_DEVICE;
  *t0 = gst_util_get_timestamp ();
  if (b == CNMS_BACKEND_CUDA && !push (be->cuda_context))
    return CNMS_ERR_CUDA;
  return CNMS_OK;
}

static void
leave_batch (GstCudanmsBackend * be, cnms_ctx * used, GstClockTime t0,
    GstClockTime * took)
{
  if (used == be->cuda)
    pop (be->cuda_context);
  *took = gst_util_get_timestamp () - t0;
}

cnms_status
gst_cudanms_backend_detect_batch (GstCudanmsBackend * be,
    const cnms_tensor * batch, const cnms_tensor * protos,
    const cnms_frame * frames, int n_frames, cnms_layout layout,
    const cnms_params * p, const cnms_frame_result ** results,
    cnms_ctx ** used, GstClockTime * took)
{
  gboolean device = batch != NULL ? batch->on_device != 0 : FALSE;
  GstClockTime t0 = 0;
  cnms_status st;
  int i;

  *took = 0;
  for (i = 0; batch == NULL && i < n_frames; i++)
    device |= frames[i].tensor->on_device
        || (frames[i].protos != NULL && frames[i].protos->on_device);
  st = enter_batch (be, device, used, &t0);
  if (st != CNMS_OK)
    return st;
  st = cnms_detect_batch (*used, batch, protos, frames, n_frames, layout, p,
      results);
  leave_batch (be, *used, t0, took);
  return st;
}

cnms_status
gst_cudanms_backend_detect_tiles (GstCudanmsBackend * be,
    const cnms_tensor * batch, const cnms_slice * slices, int n_slices,
    int frame_width, int frame_height, cnms_layout layout,
    const cnms_params * p, const cnms_merge_params * m,
    const cnms_det ** dets, int *n_dets, cnms_ctx ** used,
    GstClockTime * took)
{
  GstClockTime t0 = 0;
  cnms_status st;

  *took = 0;
  st = enter_batch (be, batch->on_device != 0, used, &t0);
  if (st != CNMS_OK)
    return st;
  st = cnms_detect_tiles (*used, batch, NULL, slices, n_slices, frame_width,
      frame_height, layout, p, m, dets, n_dets);
  leave_batch (be, *used, t0, took);
  return st;
}
