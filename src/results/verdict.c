/*
 * verdict.c - does "at most a fraction q of requests exceed the bound" hold, judged
 * from t exceedances among n requests, with a stated confidence?
 *
 * One-sided exact binomial tests at the boundary fraction q (MLPerf LoadGen's early
 * stopping asks the same question; its confidence is fixed at 0.99, ours is free):
 *   HOLDS     when P(X <= t | n, q) <= 1 - c   (this few exceedances would be rare if
 *                                               the true fraction were q or more)
 *   VIOLATED  when P(X >= t | n, q) <= 1 - c   (this many would be rare if it were q
 *                                               or less)
 *   otherwise UNDECIDED, with the number of further requests, none exceeding, that
 *   would make it HOLD.
 * Binomial tails are summed term by term in log space (lgamma), exact to double
 * precision for any n the runner can produce.
 */
#include <math.h>

#include "calibench/results.h"

/* log of the binomial pmf. */
static double log_pmf(size_t k, size_t n, double q) {
  double lc = lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);
  return lc + (k ? (double)k * log(q) : 0) + (n - k ? (double)(n - k) * log1p(-q) : 0);
}

/* Sum of the pmf over [from, to], in log space: exp(logsumexp(log pmf)). */
static double pmf_sum(size_t from, size_t to, size_t n, double q) {
  double m = -INFINITY, s = 0;
  for (size_t k = from; k <= to; k++) {
    double l = log_pmf(k, n, q);
    if (l > m) {
      s = s * exp(m - l) + 1;
      m = l;
    } else {
      s += exp(l - m);
    }
  }
  return exp(m + log(s));
}

/* P(X <= t) for X ~ Binomial(n, q). */
static double cdf(size_t t, size_t n, double q) { return t >= n ? 1.0 : pmf_sum(0, t, n, q); }

/* P(X >= t). */
static double sf(size_t t, size_t n, double q) { return t == 0 ? 1.0 : pmf_sum(t, n, n, q); }

cb_verdict_kind cb_verdict_binomial(size_t n, size_t t, double q, double confidence,
                                    double *p_value, size_t *more) {
  double alpha = 1 - confidence;
  *more = 0;
  if (n == 0) {
    *p_value = 1;
  } else {
    double lo = cdf(t, n, q);
    if (lo <= alpha) {
      *p_value = lo;
      return CB_VERDICT_HOLDS;
    }
    double hi = sf(t, n, q);
    if (hi <= alpha) {
      *p_value = hi;
      return CB_VERDICT_VIOLATED;
    }
    *p_value = lo;
  }
  /* Smallest m with P(X <= t | n + m, q) <= alpha: the CDF falls as n grows, so
   * double then bisect. */
  size_t a = 0, b = 1;
  while (cdf(t, n + b, q) > alpha) {
    a = b;
    b *= 2;
    if (b > ((size_t)1 << 40)) return CB_VERDICT_UNDECIDED;
  }
  while (b - a > 1) {
    size_t mid = a + (b - a) / 2;
    if (cdf(t, n + mid, q) > alpha) a = mid;
    else b = mid;
  }
  *more = b;
  return CB_VERDICT_UNDECIDED;
}
