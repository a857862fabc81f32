/*
 * binning.c - shared bin edges for two numeric samples, and counting a sample into
 * them, so two samples (benchmark and production prompt lengths, say) can be compared
 * as discrete distributions over the same bins.
 */
#include <math.h>

#include "calibench/stats.h"

size_t cb_stats_quantile_edges(const double *sorted, size_t n, size_t bins, double *edges) {
  if (n == 0 || bins == 0) return 0;
  size_t k = 0;
  for (size_t j = 0; j <= bins; j++) {
    double e =
        j == bins ? sorted[n - 1] : cb_stats_quantile_sorted(sorted, n, (double)j / (double)bins);
    if (k == 0 || e > edges[k - 1]) edges[k++] = e;
  }
  if (k == 1) edges[k++] = edges[0]; /* every value equal: one closed bin [x, x] */
  return k;
}

/* Index of the bin of x among n_edges ascending edges, or -1 below / n_edges - 1 above. */
static long bin_of(double x, const double *edges, size_t n_edges, int last_closed) {
  size_t nb = n_edges - 1;
  if (x < edges[0]) return -1;
  if (x > edges[nb] || (x == edges[nb] && !last_closed)) return (long)nb;
  if (x == edges[nb]) return (long)nb - 1;
  /* largest i with edges[i] <= x, i < nb */
  size_t lo = 0, hi = nb; /* edges[lo] <= x < edges[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (edges[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return (long)lo;
}

cb_status cb_stats_bin_count(const double *x, size_t n, const double *edges, size_t n_edges,
                             bool last_closed, double *counts, uint64_t *below, uint64_t *above,
                             cb_error *err) {
  if (n_edges < 2)
    return cb_error_set(err, CB_ERR_INVALID, "binning needs at least 2 edges, got %zu", n_edges);
  for (size_t i = 0; i < n_edges; i++) {
    if (!isfinite(edges[i]))
      return cb_error_set(err, CB_ERR_INVALID, "bin edge %zu is not a finite number", i + 1);
    if (i && !(edges[i] > edges[i - 1]) && !(n_edges == 2 && last_closed && edges[1] == edges[0]))
      return cb_error_set(err, CB_ERR_INVALID,
                          "bin edges must increase: edge %zu (%g) is not above edge %zu (%g)",
                          i + 1, edges[i], i, edges[i - 1]);
  }
  size_t nb = n_edges - 1;
  for (size_t b = 0; b < nb; b++) counts[b] = 0.0;
  *below = 0;
  *above = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(x[i])) return cb_error_set(err, CB_ERR_INVALID, "value %zu is NaN", i + 1);
    long b = bin_of(x[i], edges, n_edges, last_closed);
    if (b < 0)
      (*below)++;
    else if ((size_t)b == nb)
      (*above)++;
    else
      counts[b] += 1.0;
  }
  return CB_OK;
}
