/*
 * mannwhitney.c - the Mann-Whitney U (Wilcoxon rank-sum) test, computed the way
 * scipy.stats.mannwhitneyu (SciPy 1.10) computes it, so a gate's p-value can be
 * checked against SciPy digit for digit:
 *   - ranks of the pooled sample, ties given their average rank (rankdata "average");
 *   - U1 = R1 - n1 (n1 + 1) / 2, U2 = n1 n2 - U1;
 *   - "greater" uses U1, "less" U2, "two-sided" max(U1, U2) and doubles the tail;
 *   - asymptotic: z = (U - n1 n2 / 2 - 0.5) / sigma with the tie-corrected
 *     sigma^2 = n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))), p = P(Z > z);
 *   - exact: P(U' >= U) from the count of rank arrangements (Mann & Whitney 1947's
 *     recursion f(m, n, k) = f(m - 1, n, k - n) + f(m, n - 1, k)), in doubles as SciPy;
 *   - "auto": exact when either sample has at most 8 values and nothing is tied.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

double cb_stats_norm_sf(double z) { return 0.5 * erfc(z / sqrt(2.0)); }

typedef struct ranked {
  double v;
  size_t from_x; /* 1: the value came from x */
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
  return (x > y) - (x < y);
}

/* P(U >= u) under the null for samples of m and n values, by counting arrangements. */
static double exact_sf(size_t m, size_t n, double u) {
  size_t a = m < n ? m : n, b = m < n ? n : m, kmax = a * b;
  /* t[j * (kmax + 1) + k] = number of arrangements of j values against b' others with
   * U = k; built up for b' = 0..b in place (j ascending reads row j - 1 at b'). */
  double *t = cb_calloc((a + 1) * (kmax + 1), sizeof *t);
  for (size_t j = 0; j <= a; j++) t[j * (kmax + 1)] = 1;
  for (size_t bp = 1; bp <= b; bp++)
    for (size_t j = 1; j <= a; j++) {
      double *row = t + j * (kmax + 1);
      const double *prev = t + (j - 1) * (kmax + 1);
      for (size_t k = j * bp + 1; k-- > bp;) row[k] += prev[k - bp];
    }
  const double *f = t + a * (kmax + 1);
  double total = 0, tail = 0;
  /* SciPy truncates U to an integer and sums the mass at k <= m n - U (symmetry). */
  double ui = floor(u);
  for (size_t k = 0; k <= kmax; k++) {
    total += f[k];
    if ((double)k <= (double)kmax - ui) tail += f[k];
  }
  cb_free(t);
  return tail / total;
}

cb_status cb_stats_mannwhitney(const double *x, size_t n1, const double *y, size_t n2,
                               cb_stats_alternative alt, cb_stats_mwu_method method,
                               cb_stats_mwu_result *out, cb_error *err) {
  if (n1 == 0 || n2 == 0)
    return cb_error_set(err, CB_ERR_INVALID, "Mann-Whitney U needs two non-empty samples (got %zu and %zu)", n1, n2);
  for (size_t i = 0; i < n1; i++)
    if (isnan(x[i])) return cb_error_set(err, CB_ERR_INVALID, "Mann-Whitney U: x[%zu] is NaN", i);
  for (size_t i = 0; i < n2; i++)
    if (isnan(y[i])) return cb_error_set(err, CB_ERR_INVALID, "Mann-Whitney U: y[%zu] is NaN", i);
  size_t n = n1 + n2;
  ranked *v = cb_malloc(n * sizeof *v);
  for (size_t i = 0; i < n1; i++) v[i] = (ranked){x[i], 1};
  for (size_t i = 0; i < n2; i++) v[n1 + i] = (ranked){y[i], 0};
  qsort(v, n, sizeof *v, cmp_ranked);
  /* Average ranks of tied runs; the sum of x's ranks and the tie term. */
  double r1 = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && v[j].v == v[i].v) j++;
    double t = (double)(j - i);
    double avg = ((double)i + 1 + (double)j) / 2.0; /* ranks i+1..j */
    for (size_t k = i; k < j; k++)
      if (v[k].from_x) r1 += avg;
    tie_term += t * t * t - t;
    i = j;
  }
  cb_free(v);

  double dn1 = (double)n1, dn2 = (double)n2, dn = (double)n;
  double u1 = r1 - dn1 * (dn1 + 1) / 2, u2 = dn1 * dn2 - u1;
  double u = alt == CB_STATS_GREATER ? u1 : alt == CB_STATS_LESS ? u2 : fmax(u1, u2);
  double factor = alt == CB_STATS_TWO_SIDED ? 2 : 1;

  int exact;
  if (method == CB_STATS_MWU_EXACT) {
    if (n1 * n2 > CB_STATS_MWU_EXACT_MAX)
      return cb_error_set(err, CB_ERR_RANGE,
                          "Mann-Whitney U: the exact distribution is limited to n1 n2 <= %d "
                          "(got %zu x %zu)", CB_STATS_MWU_EXACT_MAX, n1, n2);
    exact = 1;
  } else if (method == CB_STATS_MWU_ASYMPTOTIC) {
    exact = 0;
  } else {
    exact = (n1 <= 8 || n2 <= 8) && tie_term == 0 && n1 * n2 <= CB_STATS_MWU_EXACT_MAX;
  }

  memset(out, 0, sizeof *out);
  out->n1 = n1;
  out->n2 = n2;
  out->u1 = u1;
  out->u2 = u2;
  out->effect = u1 / (dn1 * dn2);
  out->exact = exact;
  double p;
  if (exact) {
    out->z = NAN;
    p = exact_sf(n1, n2, u);
  } else {
    double sigma = sqrt(dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1))));
    out->z = (u - dn1 * dn2 / 2 - 0.5) / sigma; /* sigma 0 (all tied): -inf, p = 1 */
    p = cb_stats_norm_sf(out->z);
  }
  p *= factor;
  out->p_value = p < 0 ? 0 : p > 1 ? 1 : p;
  return CB_OK;
}
