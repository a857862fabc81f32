/*
 * multinomial.c - exact binomial draws (inversion for small means, Hormann's BTRD
 * rejection otherwise) and multinomial draws by conditional binomials: the resampling
 * of the JS bootstrap in O(k) per replicate instead of O(n).
 */
#include <math.h>

#include "multinomial_internal.h"

/* log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2]: Stirling's correction. */
static double stirling_tail(double k) {
  static const double table[10] = {0.08106146679532726, 0.04134069595540929, 0.02767792568499834,
                                   0.02079067210376509, 0.01664469118982119, 0.01387612882307075,
                                   0.01189670994589177, 0.01041126526197209, 0.009255462182712733,
                                   0.008330563433362871};
  if (k <= 9.0) return table[(int)k];
  double k1 = k + 1.0, k2 = k1 * k1;
  return (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / k2) / k2) / k1;
}

/* Inversion by sequential search from 0; for n p < 10 (p <= 1/2). */
static uint64_t binomial_inversion(cb_rng *rng, uint64_t n, double p) {
  double q = 1.0 - p, s = p / q, a = ((double)n + 1.0) * s;
  for (;;) {
    double r = pow(q, (double)n), u = cb_rng_uniform(rng);
    uint64_t x = 0;
    while (u > r) {
      u -= r;
      x++;
      if (x > n) break; /* rounding ran past the support: draw again */
      r *= a / (double)x - s;
    }
    if (x <= n) return x;
  }
}

/* BTRD for n p >= 10, p <= 1/2. */
static uint64_t binomial_btrd(cb_rng *rng, uint64_t n_u, double p) {
  double n = (double)n_u;
  double m = floor((n + 1.0) * p);
  double r = p / (1.0 - p), nr = (n + 1.0) * r, npq = n * p * (1.0 - p);
  double spq = sqrt(npq);
  double b = 1.15 + 2.53 * spq;
  double a = -0.0873 + 0.0248 * b + 0.01 * p;
  double c = n * p + 0.5;
  double alpha = (2.83 + 5.1 / b) * spq;
  double vr = 0.92 - 4.2 / b;
  double urvr = 0.86 * vr;
  for (;;) {
    double v = cb_rng_uniform(rng);
    double u;
    if (v <= urvr) {
      u = v / vr - 0.43;
      return (uint64_t)floor((2.0 * a / (0.5 - fabs(u)) + b) * u + c);
    }
    if (v >= vr) {
      u = cb_rng_uniform(rng) - 0.5;
    } else {
      u = v / vr - 0.93;
      u = (u < 0 ? -0.5 : 0.5) - u;
      v = cb_rng_uniform(rng) * vr;
    }
    double us = 0.5 - fabs(u);
    double k = floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    v = v * alpha / (a / (us * us) + b);
    double km = fabs(k - m);
    if (km <= 15.0) {
      /* f(k) / f(m) by the recurrence f(i) / f(i - 1) = nr / i - r */
      double f = 1.0;
      if (m < k)
        for (double i = m + 1.0; i <= k; i += 1.0) f *= nr / i - r;
      else if (m > k)
        for (double i = k + 1.0; i <= m; i += 1.0) v *= nr / i - r;
      if (v <= f) return (uint64_t)k;
      continue;
    }
    /* squeeze on log v, then the exact test */
    v = log(v);
    double rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
    double t = -km * km / (2.0 * npq);
    if (v < t - rho) return (uint64_t)k;
    if (v > t + rho) continue;
    double nm = n - m + 1.0;
    double h = (m + 0.5) * log((m + 1.0) / (r * nm)) + stirling_tail(m) + stirling_tail(n - m);
    double nk = n - k + 1.0;
    if (v <= h + (n + 1.0) * log(nm / nk) + (k + 0.5) * log(nk * r / (k + 1.0)) - stirling_tail(k) -
                 stirling_tail(n - k))
      return (uint64_t)k;
  }
}

uint64_t cb__stats_binomial(cb_rng *rng, uint64_t n, double p) {
  if (n == 0 || !(p > 0.0)) return 0;
  if (p >= 1.0) return n;
  if (p > 0.5) return n - cb__stats_binomial(rng, n, 1.0 - p);
  if ((double)n * p < 10.0) return binomial_inversion(rng, n, p);
  return binomial_btrd(rng, n, p);
}

void cb__stats_multinomial(cb_rng *rng, uint64_t n, const double *shares, size_t k,
                           double *counts) {
  size_t last = k; /* the last category with weight takes what is left */
  double rest = 0.0;
  for (size_t i = 0; i < k; i++) {
    counts[i] = 0.0;
    if (shares[i] > 0.0) last = i, rest += shares[i];
  }
  for (size_t i = 0; i < last && n > 0; i++) {
    if (!(shares[i] > 0.0)) continue;
    double p = shares[i] / rest;
    uint64_t d = cb__stats_binomial(rng, n, p < 1.0 ? p : 1.0);
    counts[i] = (double)d;
    n -= d;
    rest -= shares[i];
  }
  if (last < k) counts[last] += (double)n;
}
