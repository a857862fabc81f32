/*
 * interval.c - intervals for a proportion and a mean: Wilson's score interval
 * (E. B. Wilson, "Probable inference, the law of succession, and statistical
 * inference", JASA 22, 1927) and the percentile bootstrap of a mean (Efron), with the
 * standard normal quantile they need (P. J. Acklam's rational approximation, relative
 * error below 1.15e-9, refined by one Halley step on erfc).
 */
#include <math.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

double cb_stats_normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x, q, r;
  if (p < 0.02425) {
    q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    q = sqrt(-2 * log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    q = p - 0.5;
    r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double e = 0.5 * erfc(-x / sqrt(2)) - p;
  double u = e * 2.5066282746310002 /* sqrt(2 pi) */ * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

void cb_stats_wilson(uint64_t successes, uint64_t n, double confidence, double *lo, double *hi) {
  if (n == 0) {
    *lo = 0;
    *hi = 1;
    return;
  }
  double z = cb_stats_normal_quantile(0.5 + confidence / 2), p = (double)successes / (double)n;
  double nn = (double)n, z2 = z * z;
  double center = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  double half = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  *lo = center - half < 0 ? 0 : center - half;
  *hi = center + half > 1 ? 1 : center + half;
  if (successes == 0) *lo = 0; /* exact at the ends, not off by rounding */
  if (successes == n) *hi = 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void cb_stats_bootstrap_mean(const double *x, size_t n, size_t resamples, double confidence,
                             uint64_t seed, double *lo, double *hi) {
  if (n == 0) {
    *lo = *hi = NAN;
    return;
  }
  if (n == 1 || resamples < 2) {
    *lo = *hi = x[0];
    if (n > 1)
      for (size_t i = 1; i < n; i++) *lo = *hi = *lo + (x[i] - *lo) / (double)(i + 1);
    return;
  }
  double *reps = cb_reallocarray(NULL, resamples, sizeof *reps);
  for (size_t b = 0; b < resamples; b++) {
    cb_rng rng;
    cb_rng_init_stream(&rng, seed, UINT64_C(0x6d65616e) /* "mean" */, b);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += x[cb_rng_below(&rng, n)];
    reps[b] = sum / (double)n;
  }
  qsort(reps, resamples, sizeof *reps, cmp_double);
  /* numpy.percentile's "linear" rule at (1 - c) / 2 and (1 + c) / 2. */
  double qs[2] = {(1 - confidence) / 2, (1 + confidence) / 2};
  double out[2];
  for (int k = 0; k < 2; k++) {
    double h = qs[k] * (double)(resamples - 1);
    size_t i = (size_t)floor(h);
    double f = h - (double)i;
    out[k] = i + 1 < resamples ? reps[i] + f * (reps[i + 1] - reps[i]) : reps[i];
  }
  *lo = out[0];
  *hi = out[1];
  cb_free(reps);
}
