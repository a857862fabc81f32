/*
 * tukey.c - Tukey's fences (Tukey 1977, "Exploratory Data Analysis"): values beyond
 * Q1 - k IQR or Q3 + k IQR are outliers. The gate's adaptive thresholds recompute them
 * each time over the metric's recent history, so a threshold follows the series'
 * own spread instead of a hand-picked number. Quartiles are numpy's "linear".
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

cb_status cb_stats_tukey_fences(const double *values, size_t n, double k, double *scratch,
                                cb_stats_fences *out, cb_error *err) {
  if (n == 0) return cb_error_set(err, CB_ERR_INVALID, "Tukey's fences need at least one value");
  if (!(k >= 0)) return cb_error_set(err, CB_ERR_INVALID, "Tukey's fences: k must be >= 0, got %g", k);
  for (size_t i = 0; i < n; i++)
    if (isnan(values[i]))
      return cb_error_set(err, CB_ERR_INVALID, "Tukey's fences: value %zu is NaN", i);
  double *s = scratch ? scratch : cb_malloc(n * sizeof *s);
  if (s != values) memcpy(s, values, n * sizeof *s);
  cb_stats_sort(s, n);
  out->n = n;
  out->q1 = cb_stats_quantile_sorted(s, n, 0.25);
  out->q3 = cb_stats_quantile_sorted(s, n, 0.75);
  out->iqr = out->q3 - out->q1;
  out->low = out->q1 - k * out->iqr;
  out->high = out->q3 + k * out->iqr;
  if (!scratch) cb_free(s);
  return CB_OK;
}
