/*
 * summary.c - the one-call summary of a sample: moments plus exact percentiles.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

static void summarize_sorted(const double *sorted, size_t n, cb_stats_summary *out) {
  out->min = sorted[0];
  out->p50 = cb_stats_quantile_sorted(sorted, n, 0.5);
  out->p90 = cb_stats_quantile_sorted(sorted, n, 0.9);
  out->p95 = cb_stats_quantile_sorted(sorted, n, 0.95);
  out->p99 = cb_stats_quantile_sorted(sorted, n, 0.99);
  out->p999 = cb_stats_quantile_sorted(sorted, n, 0.999);
  out->max = sorted[n - 1];
}

void cb_stats_summarize(const double *values, size_t n, double *scratch,
                        cb_stats_summary *out) {
  cb_stats_moments m;
  cb_stats_moments_init(&m);
  for (size_t i = 0; i < n; i++) cb_stats_moments_add(&m, values[i]);
  out->count = n;
  out->mean = cb_stats_moments_mean(&m);
  out->std = cb_stats_moments_std(&m);
  out->cv = cb_stats_moments_cv(&m);
  if (n == 0) {
    out->min = out->p50 = out->p90 = out->p95 = out->p99 = out->p999 = out->max = NAN;
    return;
  }
  double *sorted = scratch ? scratch : cb_malloc(n * sizeof *sorted);
  if (sorted != values) memcpy(sorted, values, n * sizeof *sorted);
  cb_stats_sort(sorted, n);
  summarize_sorted(sorted, n, out);
  if (!scratch) cb_free(sorted);
}
