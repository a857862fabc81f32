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

/* The moments, over the values in their given order; 0 when n == 0 (all NAN). */
static int moments_of(const double *values, size_t n, cb_stats_summary *out) {
  cb_stats_moments m;
  cb_stats_moments_init(&m);
  for (size_t i = 0; i < n; i++) cb_stats_moments_add(&m, values[i]);
  out->count = n;
  out->mean = cb_stats_moments_mean(&m);
  out->std = cb_stats_moments_std(&m);
  out->cv = cb_stats_moments_cv(&m);
  if (n == 0) out->min = out->p50 = out->p90 = out->p95 = out->p99 = out->p999 = out->max = NAN;
  return n > 0;
}

void cb_stats_summarize(const double *values, size_t n, double *scratch,
                        cb_stats_summary *out) {
  if (!moments_of(values, n, out)) return;
  double *sorted = scratch ? scratch : cb_malloc(n * sizeof *sorted);
  if (sorted != values) memcpy(sorted, values, n * sizeof *sorted);
  cb_stats_sort(sorted, n);
  summarize_sorted(sorted, n, out);
  if (!scratch) cb_free(sorted);
}

/* The ranks cb_stats_quantile_sorted reads for q. */
static size_t ranks_of(size_t n, double q, size_t *r) {
  double h = (double)(n - 1) * q;
  if (h >= (double)(n - 1)) {
    r[0] = n - 1;
    return 1;
  }
  size_t i = (size_t)floor(h);
  r[0] = i;
  r[1] = i + 1;
  return 2;
}

void cb_stats_summarize_inplace(double *values, size_t n, cb_stats_summary *out) {
  if (!moments_of(values, n, out)) return;
  static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
  size_t r[2 + 2 * sizeof qs / sizeof qs[0]], nr = 0;
  r[nr++] = 0;
  for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) nr += ranks_of(n, qs[k], r + nr);
  r[nr++] = n - 1;
  /* ascending (the q's are), duplicates dropped */
  size_t u = 0;
  for (size_t i = 0; i < nr; i++)
    if (!u || r[u - 1] < r[i]) r[u++] = r[i];
  cb_stats_select(values, n, r, u);
  summarize_sorted(values, n, out); /* reads only the ranks just placed */
}
