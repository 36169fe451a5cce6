/* cudanms: device=auto's choice of backend for host tensors (see
 * gstcudanmspick.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudanmspick.h"

static void
pick_reset (GstCudanmsPick * pick, const cnms_tensor * t)
{
  pick->dtype = t->dtype;
  pick->n_dims = t->n_dims;
  memcpy (pick->dims, t->dims, sizeof (pick->dims));
  memset (pick->runs, 0, sizeof (pick->runs));
  memset (pick->us, 0, sizeof (pick->us));
  pick->choice = -1;
}

void
gst_cudanms_pick_init (GstCudanmsPick * pick)
{
  memset (pick, 0, sizeof (*pick));
  pick->n_dims = -1;            /* no shape yet */
  pick->choice = -1;
}

cnms_backend
gst_cudanms_pick_next (GstCudanmsPick * pick, const cnms_tensor * t,
    gboolean * timed)
{
  if (t->dtype != pick->dtype || t->n_dims != pick->n_dims
      || memcmp (t->dims, pick->dims, sizeof (pick->dims)) != 0)
    pick_reset (pick, t);
  *timed = pick->choice < 0;
  if (pick->choice >= 0)
    return (cnms_backend) pick->choice;
  /* alternate, CUDA first */
  return pick->runs[CNMS_BACKEND_CUDA] <= pick->runs[CNMS_BACKEND_CPU] ?
      CNMS_BACKEND_CUDA : CNMS_BACKEND_CPU;
}

gboolean
gst_cudanms_pick_record (GstCudanmsPick * pick, cnms_backend b, gint64 us)
{
  if (pick->choice >= 0)
    return FALSE;
  /* run 1 warms up; runs 2 .. count, the fastest */
  if (pick->runs[b]++ > 0 && (pick->runs[b] == 2 || us < pick->us[b]))
    pick->us[b] = us;
  if (pick->runs[CNMS_BACKEND_CPU] < GST_CUDANMS_AUTO_TRIALS
      || pick->runs[CNMS_BACKEND_CUDA] < GST_CUDANMS_AUTO_TRIALS)
    return FALSE;
  pick->choice = pick->us[CNMS_BACKEND_CUDA] < pick->us[CNMS_BACKEND_CPU] ?
      CNMS_BACKEND_CUDA : CNMS_BACKEND_CPU;
  return TRUE;
}
