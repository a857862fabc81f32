/*
 * context_breakpoint.c - the breakpoint of `probe context` (probe_context.h) and its
 * bootstrap interval.
 *
 * The estimate: over the tested lengths in order, the last one before the first whose
 * mean score falls more than `tolerance` below the shortest's. The grid's first
 * failure brackets it, and each bisection midpoint lands inside the bracket, so over
 * all tested lengths this rule gives the bisection's answer.
 *
 * The interval: each tested length's scores resampled with replacement, the rule
 * applied again over the same lengths (the design stays as it ran: the midpoints are
 * where bisection put them), the percentiles of the resampled breakpoints. It says
 * how far sampling noise in the trials could move the breakpoint among the lengths
 * tested; it cannot be narrower than the final bisection step.
 */
#include <math.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/probe_context.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

static double mean(const double *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return n ? s / (double)n : NAN;
}

/* The rule over per-level means. */
static size_t rule(const cb_probe_context_level *levels, const double *means, size_t n,
                   double tolerance, size_t *first_fail) {
  size_t i = 1;
  while (i < n && means[i] >= means[0] - tolerance - 1e-12) i++;
  if (first_fail) *first_fail = n > 1 ? i : n;
  return levels[i - 1].length;
}

size_t cb_probe_context_breakpoint(const cb_probe_context_level *levels, size_t n,
                                   double tolerance, size_t *first_fail) {
  if (!n) {
    if (first_fail) *first_fail = 0;
    return 0;
  }
  double *means = cb_calloc(n, sizeof *means);
  for (size_t i = 0; i < n; i++) means[i] = mean(levels[i].scores, levels[i].n);
  size_t bp = rule(levels, means, n, tolerance, first_fail);
  cb_free(means);
  return bp;
}

void cb_probe_context_breakpoint_interval(const cb_probe_context_level *levels, size_t n,
                                          double tolerance, size_t resamples, double level,
                                          uint64_t seed, cb_probe_context_interval *out) {
  out->lo = out->hi = out->agree = NAN;
  if (!n || resamples < 2) return;
  size_t estimate = cb_probe_context_breakpoint(levels, n, tolerance, NULL);
  double *means = cb_calloc(n, sizeof *means);
  double *bps = cb_calloc(resamples, sizeof *bps);
  size_t agree = 0;
  for (size_t r = 0; r < resamples; r++) {
    cb_rng rng;
    cb_rng_init_stream(&rng, seed, UINT64_C(0x626f6f74), r); /* "boot" */
    for (size_t i = 0; i < n; i++) {
      double s = 0;
      for (size_t k = 0; k < levels[i].n; k++) s += levels[i].scores[cb_rng_below(&rng, levels[i].n)];
      means[i] = levels[i].n ? s / (double)levels[i].n : NAN;
    }
    size_t bp = rule(levels, means, n, tolerance, NULL);
    bps[r] = (double)bp;
    agree += bp == estimate;
  }
  /* order statistics, not interpolated: the ends are lengths that were tested */
  cb_stats_sort(bps, resamples);
  out->lo = bps[(size_t)floor((1 - level) / 2 * (double)(resamples - 1))];
  out->hi = bps[(size_t)ceil((1 + level) / 2 * (double)(resamples - 1))];
  out->agree = (double)agree / (double)resamples;
  cb_free(means);
  cb_free(bps);
}
