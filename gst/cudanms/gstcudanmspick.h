/* cudanms: device=auto's choice of backend for host tensors. The first
 * buffers of a shape (dtype and dims) alternate between the CUDA and the
 * CPU backend, GST_CUDANMS_AUTO_TRIALS each; the first of each warms up
 * its buffers and is not counted, and of the others the fastest counts,
 * so that one buffer delayed by the host (a preempted thread, a page
 * fault) does not decide. The backend whose fastest buffer was faster
 * then takes the shape's buffers (the CPU one on a tie); a buffer of
 * another shape starts over. */
#ifndef __GST_CUDANMS_PICK_H__
#define __GST_CUDANMS_PICK_H__

#include <gst/gst.h>
#include "cudanms.h"

G_BEGIN_DECLS

/* Buffers of a shape that device=auto times on each backend. */
#define GST_CUDANMS_AUTO_TRIALS 4

typedef struct
{
  cnms_dtype dtype;             /* the shape being timed or decided */
  gint n_dims;
  gint64 dims[CNMS_MAX_DIMS];
  gint runs[2];                 /* indexed by cnms_backend */
  gint64 us[2];                 /* the fastest counted buffer */
  gint choice;                  /* a cnms_backend, -1 until decided */
} GstCudanmsPick;

void gst_cudanms_pick_init (GstCudanmsPick * pick);
/* The backend for host tensor t; *timed: TRUE while t's shape is being
 * timed (then report the buffer's time with gst_cudanms_pick_record). */
cnms_backend gst_cudanms_pick_next (GstCudanmsPick * pick,
    const cnms_tensor * t, gboolean * timed);
/* Records that backend b took us microseconds for a timed buffer; TRUE
 * when this decided the shape (pick->choice). */
gboolean gst_cudanms_pick_record (GstCudanmsPick * pick, cnms_backend b,
    gint64 us);

G_END_DECLS

#endif
