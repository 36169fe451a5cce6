/* What the GStreamer benches (bench-tensordec, bench-segdec) share: the
 * median of their rounds and the machine's name for their header line. */
#ifndef BENCH_GST_H
#define BENCH_GST_H

#include <string.h>

#include <glib.h>

/* qsort's comparison of gdoubles, ascending. */
static inline gint
bench_gst_cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

/* The "model name" of /proc/cpuinfo, or "unknown CPU"; g_free it. */
static inline gchar *
bench_gst_cpu_name (void)
{
  gchar *info = NULL, *name = NULL, **lines;
  guint i;

  if (!g_file_get_contents ("/proc/cpuinfo", &info, NULL, NULL))
    return g_strdup ("unknown CPU");
  lines = g_strsplit (info, "\n", -1);
  for (i = 0; lines[i] != NULL && name == NULL; i++) {
    if (g_str_has_prefix (lines[i], "model name")) {
      const gchar *colon = strchr (lines[i], ':');

      name = g_strdup (g_strstrip ((gchar *) (colon ? colon + 1 : "")));
    }
  }
  g_strfreev (lines);
  g_free (info);
  return name ? name : g_strdup ("unknown CPU");
}

#endif /* BENCH_GST_H */
