/*
 * quantile.c - exact quantiles by numpy's default method (sorting: sort.c).
 *
 * numpy.percentile(x, 100 q) with method "linear" (Hyndman & Fan type 7) takes the
 * virtual index h = (n - 1) q into the sorted sample and interpolates between its
 * neighbours. numpy evaluates the interpolation as a + t (b - a) when t < 0.5 and
 * as b - (1 - t) (b - a) otherwise (numpy/lib/function_base.py, _lerp); doing the
 * same keeps our results equal to numpy's to the last bit in the common cases.
 */
#include <math.h>

#include "calibench/stats.h"

/* numpy's _lerp: interpolate from whichever end is nearer to t. */
static double lerp(double a, double b, double t) {
  double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

double cb_stats_quantile_by_rank(double (*at)(const void *ctx, uint64_t k), const void *ctx,
                                 uint64_t n, double q) {
  if (n == 0 || !(q >= 0.0 && q <= 1.0)) return NAN;
  double h = (double)(n - 1) * q;
  if (h >= (double)(n - 1)) return at(ctx, n - 1);
  uint64_t i = (uint64_t)floor(h);
  return lerp(at(ctx, i), at(ctx, i + 1), h - (double)i);
}

static double sorted_at(const void *ctx, uint64_t k) { return ((const double *)ctx)[k]; }

double cb_stats_quantile_sorted(const double *sorted, size_t n, double q) {
  return cb_stats_quantile_by_rank(sorted_at, sorted, n, q);
}
