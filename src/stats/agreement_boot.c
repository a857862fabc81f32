/*
 * agreement_boot.c - percentile bootstrap intervals for the agreement statistics:
 * each replicate draws n items with replacement (the pairs stay together) and
 * recomputes the statistic; the interval is numpy.percentile's "linear" quantiles of
 * the replicates. A replicate where the statistic is undefined (a resample whose
 * values are all equal) is left out and counted, not taken as 0.
 */
#include <math.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

cb_status cb_stats_agreement_bootstrap(cb_stats_agreement_kind kind, const double *x,
                                       const double *y, size_t n, size_t replicates,
                                       double level, uint64_t seed,
                                       cb_stats_agreement_interval *out, cb_error *err) {
  if ((unsigned)kind >= CB_STATS_AGREE_COUNT)
    return cb_error_set(err, CB_ERR_INVALID, "agreement bootstrap: unknown statistic %d",
                        (int)kind);
  if (replicates < 2)
    return cb_error_set(err, CB_ERR_INVALID,
                        "agreement bootstrap: replicates: expected >= 2, got %zu", replicates);
  if (!(level > 0 && level < 1))
    return cb_error_set(err, CB_ERR_INVALID,
                        "agreement bootstrap: level: expected in (0, 1), got %g", level);
  *out = (cb_stats_agreement_interval){
      .estimate = cb_stats_agreement(kind, x, y, n), .lo = NAN, .hi = NAN, .level = level,
      .replicates = replicates};
  if (n == 0) return CB_OK;
  double *rx = cb_malloc(2 * n * sizeof *rx), *ry = rx + n;
  double *reps = cb_malloc(replicates * sizeof *reps);
  size_t kept = 0;
  for (size_t r = 0; r < replicates; r++) {
    cb_rng rng;
    cb_rng_init_stream(&rng, seed, (uint64_t)kind, r);
    for (size_t i = 0; i < n; i++) {
      size_t j = (size_t)cb_rng_below(&rng, n);
      rx[i] = x[j];
      ry[i] = y[j];
    }
    double v = cb_stats_agreement(kind, rx, ry, n);
    if (!isnan(v)) reps[kept++] = v;
  }
  out->undefined = replicates - kept;
  if (kept) {
    cb_stats_sort(reps, kept);
    out->lo = cb_stats_quantile_sorted(reps, kept, (1 - level) / 2);
    out->hi = cb_stats_quantile_sorted(reps, kept, (1 + level) / 2);
  }
  cb_free(reps);
  cb_free(rx);
  return CB_OK;
}
