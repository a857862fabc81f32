/*
 * interval.c - the percentile bootstrap interval of a mean (Efron). Wilson's interval
 * of a proportion is binomial.c's.
 */
#include <math.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

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
