/* device=auto's choice of backend for host tensors (the plugin's
 * gstcudanmspick library linked into the test): the order of the timed
 * buffers, the warm-up buffer of each backend left out, the fastest of the
 * others deciding (one slow buffer does not), a tie going to the CPU, and
 * a new shape or dtype timed again. */
#include <gst/check/gstcheck.h>

#include "gstcudanmspick.h"

#define CUDA CNMS_BACKEND_CUDA
#define CPU CNMS_BACKEND_CPU

static cnms_tensor
shape (cnms_dtype dtype, gint64 a, gint64 b, gint64 c)
{
  cnms_tensor t;

  memset (&t, 0, sizeof (t));
  t.dtype = dtype;
  t.n_dims = 3;
  t.dims[0] = a;
  t.dims[1] = b;
  t.dims[2] = c;
  return t;
}

/* Runs the trials of t with the times cuda[i] and cpu[i] (i-th buffer of
 * each), asserting that they alternate CUDA first and are timed, and that
 * the last one decides; returns the choice. */
static cnms_backend
run_trials (GstCudanmsPick * pick, const cnms_tensor * t,
    const gint64 * cuda, const gint64 * cpu)
{
  gint i;

  for (i = 0; i < 2 * GST_CUDANMS_AUTO_TRIALS; i++) {
    gboolean timed = FALSE;
    const cnms_backend want = i % 2 == 0 ? CUDA : CPU;
    const cnms_backend b = gst_cudanms_pick_next (pick, t, &timed);

    fail_unless_equals_int (b, want);
    fail_unless (timed);
    fail_unless_equals_int (gst_cudanms_pick_record (pick, b,
            b == CUDA ? cuda[i / 2] : cpu[i / 2]),
        i == 2 * GST_CUDANMS_AUTO_TRIALS - 1);
  }
  return (cnms_backend) pick->choice;
}

/* After the trials: every buffer of the shape goes to choice, untimed. */
static void
assert_decided (GstCudanmsPick * pick, const cnms_tensor * t,
    cnms_backend choice)
{
  gint i;

  for (i = 0; i < 5; i++) {
    gboolean timed = TRUE;

    fail_unless_equals_int (gst_cudanms_pick_next (pick, t, &timed), choice);
    fail_unless (!timed);
  }
}

GST_START_TEST (test_pick_rule)
{
  /* the warm-ups (first of each) are slowest and do not count */
  const gint64 cuda_slow[] = { 9000, 300, 250, 100000 };
  const gint64 cpu_fast[] = { 5000, 200, 210, 190 };
  const gint64 cuda_fast[] = { 9000, 100, 100, 100 };
  const gint64 cpu_outlier[] = { 5000, 50000, 120, 130 };
  const gint64 same[] = { 1, 150, 150, 150 };
  const gint64 warm_only[] = { 1, 500, 500, 500 };
  const gint64 cold[] = { 1000000, 400, 400, 400 };
  const cnms_tensor v8 = shape (CNMS_DTYPE_FLOAT32, 1, 84, 8400);
  const cnms_tensor v5 = shape (CNMS_DTYPE_FLOAT32, 1, 25200, 85);
  const cnms_tensor v8_f16 = shape (CNMS_DTYPE_FLOAT16, 1, 84, 8400);
  GstCudanmsPick pick;

  fail_unless_equals_int (GST_CUDANMS_AUTO_TRIALS, 4);
  gst_cudanms_pick_init (&pick);
  fail_unless_equals_int (pick.choice, -1);

  /* fastest counted: cuda 250, cpu 190 */
  fail_unless_equals_int (run_trials (&pick, &v8, cuda_slow, cpu_fast), CPU);
  fail_unless_equals_int (pick.us[CUDA], 250);
  fail_unless_equals_int (pick.us[CPU], 190);
  assert_decided (&pick, &v8, CPU);

  /* another shape is timed again; one slow CPU buffer does not decide */
  fail_unless_equals_int (run_trials (&pick, &v5, cuda_fast, cpu_outlier),
      CUDA);
  fail_unless_equals_int (pick.us[CUDA], 100);
  fail_unless_equals_int (pick.us[CPU], 120);
  assert_decided (&pick, &v5, CUDA);

  /* back to the first shape: only the last shape is remembered */
  fail_unless_equals_int (run_trials (&pick, &v8, same, same), CPU);
  assert_decided (&pick, &v8, CPU);

  /* the dtype is part of the shape; a warm-up's time never counts (CPU's
   * cold first buffer would lose, its later ones win) */
  fail_unless_equals_int (run_trials (&pick, &v8_f16, warm_only, cold), CPU);
  fail_unless_equals_int (pick.us[CUDA], 500);
  fail_unless_equals_int (pick.us[CPU], 400);
  assert_decided (&pick, &v8_f16, CPU);
  /* once decided, a record changes nothing */
  fail_unless (!gst_cudanms_pick_record (&pick, CUDA, 1));
  assert_decided (&pick, &v8_f16, CPU);
}

GST_END_TEST;

static Suite *
pick_suite (void)
{
  Suite *s = suite_create ("cudanms-pick");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pick_rule);
  return s;
}

GST_CHECK_MAIN (pick);
