/*
 * moments.c - streaming mean/variance (Welford) with pairwise merging (Chan et al.).
 *
 * B. P. Welford, Technometrics 4(3), 1962: one pass, numerically stable.
 * T. F. Chan, G. H. Golub, R. J. LeVeque, "Updating formulae and a pairwise
 * algorithm for computing sample variances", 1979: for parts A and B,
 *   delta = mean_B - mean_A, n = n_A + n_B,
 *   mean  = mean_A + delta n_B / n,
 *   M2    = M2_A + M2_B + delta^2 n_A n_B / n.
 */
#include <math.h>

#include "calibench/stats.h"

void cb_stats_moments_init(cb_stats_moments *m) {
  m->count = 0;
  m->mean = 0.0;
  m->m2 = 0.0;
  m->min = INFINITY;
  m->max = -INFINITY;
}

void cb_stats_moments_add(cb_stats_moments *m, double x) {
  m->count++;
  double delta = x - m->mean;
  m->mean += delta / (double)m->count;
  m->m2 += delta * (x - m->mean);
  if (x < m->min) m->min = x;
  if (x > m->max) m->max = x;
}

void cb_stats_moments_merge(cb_stats_moments *dst, const cb_stats_moments *src) {
  if (src->count == 0) return;
  if (dst->count == 0) {
    *dst = *src;
    return;
  }
  double na = (double)dst->count, nb = (double)src->count, n = na + nb;
  double delta = src->mean - dst->mean;
  dst->mean += delta * (nb / n);
  dst->m2 += src->m2 + delta * delta * (na * nb / n);
  dst->count += src->count;
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
}

double cb_stats_moments_mean(const cb_stats_moments *m) {
  return m->count ? m->mean : NAN;
}

double cb_stats_moments_var_pop(const cb_stats_moments *m) {
  return m->count ? m->m2 / (double)m->count : NAN;
}

double cb_stats_moments_var_sample(const cb_stats_moments *m) {
  return m->count > 1 ? m->m2 / (double)(m->count - 1) : NAN;
}

double cb_stats_moments_std(const cb_stats_moments *m) {
  return sqrt(cb_stats_moments_var_pop(m));
}

double cb_stats_moments_std_sample(const cb_stats_moments *m) {
  return sqrt(cb_stats_moments_var_sample(m));
}

double cb_stats_moments_cv(const cb_stats_moments *m) {
  double mean = cb_stats_moments_mean(m);
  if (isnan(mean) || mean == 0.0) return NAN;
  return cb_stats_moments_std(m) / mean;
}
