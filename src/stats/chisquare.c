/*
 * chisquare.c - Pearson's chi-square goodness-of-fit test and the regularized upper
 * incomplete gamma function its p-value needs (stats.h, "goodness of fit").
 *
 * Q(a, x) by the two classic expansions (Abramowitz & Stegun 6.5.29 and 6.5.31): the
 * power series of P = 1 - Q converges fast for x < a + 1, Legendre's continued
 * fraction for Q (evaluated by the modified Lentz method) for x >= a + 1.
 */
#include <math.h>

#include "calibench/stats.h"

#define MAX_TERMS 10000
#define EPS 1e-16
#define TINY 1e-300

/* exp(-x) x^a / Gamma(a), the factor both expansions share. */
static double prefactor(double a, double x) { return exp(-x + a * log(x) - lgamma(a)); }

static double p_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < MAX_TERMS; n++) {
    term *= x / (a + n);
    sum += term;
    if (fabs(term) < fabs(sum) * EPS) break;
  }
  return sum * prefactor(a, x);
}

static double q_fraction(double a, double x) {
  double b = x + 1.0 - a, c = 1.0 / TINY, d = 1.0 / b, h = d;
  for (int i = 1; i < MAX_TERMS; i++) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < TINY) d = TINY;
    c = b + an / c;
    if (fabs(c) < TINY) c = TINY;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < EPS) break;
  }
  return prefactor(a, x) * h;
}

double cb_stats_gamma_q(double a, double x) {
  if (!(a > 0) || !(x >= 0) || !isfinite(a)) return NAN;
  if (x == 0) return 1.0;
  if (isinf(x)) return 0.0;
  return x < a + 1.0 ? 1.0 - p_series(a, x) : q_fraction(a, x);
}

cb_status cb_stats_chisquare(const double *obs, const double *exp, size_t k, int ddof,
                             double *stat, double *p, cb_error *err) {
  if ((long)k - 1 - ddof < 1)
    return cb_error_set(err, CB_ERR_INVALID, "chi-square: %zu categories leave %ld degrees of freedom, "
                        "need at least 1", k, (long)k - 1 - ddof);
  double so = 0, se = 0;
  for (size_t i = 0; i < k; i++) {
    if (!(obs[i] >= 0) || !isfinite(obs[i]))
      return cb_error_set(err, CB_ERR_INVALID, "chi-square: observed count %zu is %g", i, obs[i]);
    so += obs[i];
    if (exp) {
      if (!(exp[i] > 0) || !isfinite(exp[i]))
        return cb_error_set(err, CB_ERR_INVALID, "chi-square: expected count %zu is %g, must be > 0",
                            i, exp[i]);
      se += exp[i];
    }
  }
  if (!exp) se = so;
  if (!(se > 0) || fabs(so - se) > 1e-8 * fmax(so, se))
    return cb_error_set(err, CB_ERR_INVALID, "chi-square: the observed counts sum to %g and the "
                        "expected ones to %g: they must agree", so, se);
  double x = 0;
  for (size_t i = 0; i < k; i++) {
    double e = exp ? exp[i] : so / (double)k;
    x += (obs[i] - e) * (obs[i] - e) / e;
  }
  *stat = x;
  *p = cb_stats_gamma_q(0.5 * (double)((long)k - 1 - ddof), 0.5 * x);
  return CB_OK;
}
