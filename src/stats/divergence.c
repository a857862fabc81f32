/*
 * divergence.c - Shannon entropy, Kullback-Leibler and Jensen-Shannon divergences of
 * discrete distributions, evaluated the way SciPy evaluates them so the numbers agree
 * to rounding:
 *   entropy(p)      = scipy.stats.entropy(p, base=b)            = -sum p log p / log b
 *   KL(p || q)      = scipy.stats.entropy(p, q, base=b)         = sum rel_entr(p, q) / log b
 *   JS(p, q)        = scipy.spatial.distance.jensenshannon(p, q, base=b) ** 2
 *                   = (sum rel_entr(p, m) + sum rel_entr(q, m)) / (2 log b), m = (p + q) / 2
 * where every input is first divided by its own sum (SciPy normalises the same way),
 * and rel_entr(x, y) = x log(x / y) for x, y > 0, 0 for x = 0, +inf for x > 0 = y.
 * Sums use Neumaier's compensated summation (numpy's pairwise sum differs from it by a
 * few ulps at most). Nothing here allocates.
 */
#include <math.h>

#include "calibench/stats.h"

/* Neumaier's compensated sum. */
typedef struct ksum {
  double s, c;
} ksum;

static void ksum_add(ksum *k, double x) {
  double t = k->s + x;
  if (fabs(k->s) >= fabs(x))
    k->c += (k->s - t) + x;
  else
    k->c += (x - t) + k->s;
  k->s = t;
}

static double ksum_value(const ksum *k) { return k->s + k->c; }

/* Sum of w, or NAN when n == 0, a weight is negative / NaN / infinite, or the sum is 0. */
static double weight_sum(const double *w, size_t n) {
  if (n == 0) return NAN;
  ksum k = {0, 0};
  for (size_t i = 0; i < n; i++) {
    if (!(w[i] >= 0.0) || !isfinite(w[i])) return NAN;
    ksum_add(&k, w[i]);
  }
  double s = ksum_value(&k);
  return s > 0.0 && isfinite(s) ? s : NAN;
}

static int base_ok(double base) { return base > 0.0 && base != 1.0 && isfinite(base); }

/* x log(x / y) as scipy.special.rel_entr. */
static double rel_entr(double x, double y) {
  if (x == 0.0) return 0.0;
  if (y == 0.0) return INFINITY;
  return x * log(x / y);
}

double cb_stats_entropy(const double *w, size_t n, double base) {
  double sw = weight_sum(w, n);
  if (isnan(sw) || !base_ok(base)) return NAN;
  ksum k = {0, 0};
  for (size_t i = 0; i < n; i++) {
    double p = w[i] / sw;
    if (p > 0.0) ksum_add(&k, -p * log(p));
  }
  return ksum_value(&k) / log(base);
}

double cb_stats_kl(const double *p, const double *q, size_t n, double base) {
  double sp = weight_sum(p, n), sq = weight_sum(q, n);
  if (isnan(sp) || isnan(sq) || !base_ok(base)) return NAN;
  ksum k = {0, 0};
  for (size_t i = 0; i < n; i++) {
    double r = rel_entr(p[i] / sp, q[i] / sq);
    if (isinf(r)) return INFINITY;
    ksum_add(&k, r);
  }
  return ksum_value(&k) / log(base);
}

double cb_stats_js_terms(const double *p, const double *q, size_t n, double base, double *terms) {
  double sp = weight_sum(p, n), sq = weight_sum(q, n);
  if (isnan(sp) || isnan(sq) || !base_ok(base)) return NAN;
  double lb = log(base);
  ksum k = {0, 0};
  for (size_t i = 0; i < n; i++) {
    double pi = p[i] / sp, qi = q[i] / sq;
    double m = (pi + qi) / 2.0;
    double t = rel_entr(pi, m) + rel_entr(qi, m); /* finite: m >= x / 2 */
    if (terms) terms[i] = t / (2.0 * lb);
    ksum_add(&k, t);
  }
  double js = ksum_value(&k) / lb / 2.0;
  return js < 0.0 ? 0.0 : js; /* rounding can leave -1e-17 for equal inputs */
}

double cb_stats_js(const double *p, const double *q, size_t n, double base) {
  return cb_stats_js_terms(p, q, n, base, NULL);
}

cb_status cb_stats_smooth_additive(const double *w, size_t n, double epsilon, double *out,
                                   cb_error *err) {
  if (!(epsilon >= 0.0) || !isfinite(epsilon))
    return cb_error_set(err, CB_ERR_INVALID, "smoothing epsilon must be >= 0, got %g", epsilon);
  double sw = weight_sum(w, n);
  if (isnan(sw))
    return cb_error_set(err, CB_ERR_INVALID,
                        "smoothing: weights must be non-negative, finite and not all zero");
  double den = 1.0 + (double)n * epsilon;
  for (size_t i = 0; i < n; i++) out[i] = (w[i] / sw + epsilon) / den;
  return CB_OK;
}
