/*
 * ks.c - the one-sample Kolmogorov-Smirnov test and the distribution of its statistic.
 *
 * cb_stats_ks_1samp computes D+, D- and D exactly as scipy.stats.ks_1samp does, and
 * its p-value from the exact finite-n law of D_n (cb_stats_kolmogorov_n_sf), which
 * follows SciPy's scipy/stats/_ksstats.py: the branch structure of
 *   R. Simard, P. L'Ecuyer, "Computing the two-sided Kolmogorov-Smirnov distribution",
 *   J. Stat. Software 39(11), 2011,
 * implemented here from the published methods:
 *   - Ruben & Gambino (1982): closed forms for n d <= 1 and n d >= n - 1;
 *   - Birnbaum & Tingey (1951): the exact one-sided tail P(D+ >= d); for d >= 0.5 the
 *     two tails are disjoint, so P(D > d) = 2 P(D+ >= d) exactly, and in the far tail
 *     2 P(D+ >= d) is the two-sided value to double precision;
 *   - Durbin (1968) in the matrix-power form of Marsaglia, Tsang & Wang (2003),
 *     "Evaluating Kolmogorov's distribution", J. Stat. Software 8(18): exact;
 *   - Pelz & Good (1976): the asymptotic series in 1/sqrt(n) up to n^-3/2, written in
 *     the theta-function form that converges for small z = d sqrt(n).
 * SciPy's Pomeranz recursion (n <= 140, 0.754693 < n d^2 <= 4) is replaced by the
 * Durbin matrix, which is also exact there; the rest follows SciPy branch for branch
 * so the p-values agree to rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

#define KS_SCALE_EXP 128 /* rescale by 2^128 to keep matrix powers in range */
#define KS_PI 3.14159265358979323846

static double clip01(double p) { return p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p; }

/* ---- one-sided exact tail ---------------------------------------------------------- */

double cb_stats_smirnov_sf(size_t n, double d) {
  if (n == 0 || isnan(d)) return NAN;
  if (d <= 0.0) return 1.0;
  if (d >= 1.0) return 0.0;
  if (n == 1) return 1.0 - d;
  /* d * sum_{j=0}^{floor(n(1-d))} C(n,j) (1-d-j/n)^(n-j) (d+j/n)^(j-1), each term in
   * log space; log C(n, j) by the recurrence C(n,j) = C(n,j-1) (n-j+1)/j. */
  double nd = (double)n;
  double jmax_f = floor(nd * (1.0 - d));
  size_t jmax = (size_t)jmax_f;
  double log_binom = 0.0, sum = 0.0;
  for (size_t j = 0; j <= jmax; j++) {
    double jj = (double)j;
    if (j > 0) log_binom += log((nd - jj + 1.0) / jj);
    double a = 1.0 - d - jj / nd; /* >= 0 */
    double b = d + jj / nd;       /* > 0 */
    if (a <= 0.0) continue;       /* 0^(n-j) with n - j > 0 */
    double lt = log_binom + (nd - jj) * log(a) + (jj - 1.0) * log(b);
    sum += exp(lt);
  }
  return clip01(d * sum);
}

/* ---- Durbin matrix (Marsaglia-Tsang-Wang) ----------------------------------------- */

/* c = a b for m x m row-major matrices (c distinct from a and b). */
static void matmul(const double *a, const double *b, double *c, size_t m) {
  for (size_t i = 0; i < m; i++) {
    double *ci = c + i * m;
    for (size_t j = 0; j < m; j++) ci[j] = 0.0;
    for (size_t l = 0; l < m; l++) {
      double ail = a[i * m + l];
      if (ail == 0.0) continue;
      const double *bl = b + l * m;
      for (size_t j = 0; j < m; j++) ci[j] += ail * bl[j];
    }
  }
}

/* P(D_n <= d) exactly, for 0.5 < n d (caller guarantees) and d < 1. */
static double kolmogn_dmtw_cdf(size_t n, double d) {
  double nd = (double)n * d;
  size_t k = (size_t)ceil(nd);
  double h = (double)k - nd;
  size_t m = 2 * k - 1;
  double *H = cb_calloc(m * m, sizeof *H);
  double *P = cb_calloc(m * m, sizeof *P);
  double *T = cb_calloc(m * m, sizeof *T);
  double *v = cb_malloc(m * sizeof *v);
  double *w = cb_malloc(m * sizeof *w);

  double fac = 1.0;
  for (size_t j = 1; j <= m; j++) {
    w[j - 1] = fac;
    fac /= (double)j; /* may underflow to 0: harmless */
    v[j - 1] = (1.0 - pow(h, (double)j)) * fac;
  }
  double two_h_1 = 2.0 * h - 1.0;
  double tt = pow(two_h_1 > 0.0 ? two_h_1 : 0.0, (double)m) - 2.0 * pow(h, (double)m);
  v[m - 1] = (1.0 + tt) * fac;
  /* H[r][i] = w[r - i + 1] for r >= i - 1 (i >= 1); first column v; last row v reversed. */
  for (size_t i = 1; i < m; i++)
    for (size_t r = i - 1; r < m; r++) H[r * m + i] = w[r - (i - 1)];
  for (size_t r = 0; r < m; r++) H[r * m] = v[r];
  for (size_t c = 0; c < m; c++) H[(m - 1) * m + c] = v[m - 1 - c];

  for (size_t i = 0; i < m; i++) P[i * m + i] = 1.0;
  long expnt = 0, h_expnt = 0;
  const double big = ldexp(1.0, KS_SCALE_EXP), small = ldexp(1.0, -KS_SCALE_EXP);
  for (size_t nn = n; nn > 0; nn /= 2) {
    if (nn % 2) {
      matmul(P, H, T, m);
      memcpy(P, T, m * m * sizeof *P);
      expnt += h_expnt;
    }
    matmul(H, H, T, m);
    memcpy(H, T, m * m * sizeof *H);
    h_expnt *= 2;
    if (fabs(H[(k - 1) * m + (k - 1)]) > big) {
      for (size_t i = 0; i < m * m; i++) H[i] /= big;
      h_expnt += KS_SCALE_EXP;
    }
  }
  double p = P[(k - 1) * m + (k - 1)];
  for (size_t i = 1; i <= n; i++) {
    p = (double)i * p / (double)n;
    if (fabs(p) < small) {
      p *= big;
      expnt -= KS_SCALE_EXP;
    }
  }
  if (expnt != 0) p = ldexp(p, (int)expnt);
  cb_free(H);
  cb_free(P);
  cb_free(T);
  cb_free(v);
  cb_free(w);
  return clip01(p);
}

/* ---- Pelz-Good asymptotic series -------------------------------------------------- */

static double kolmogn_pelz_good_cdf(size_t n, double x) {
  const double pi2 = KS_PI * KS_PI, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
  const double sqrt2pi = sqrt(2.0 * KS_PI), sqrt3 = sqrt(3.0);
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  double z = sqrt((double)n) * x;
  double z2 = z * z, z3 = z2 * z, z4 = z2 * z2, z6 = z4 * z2;
  double qlog = -pi2 / 8.0 / z2;
  if (qlog < -708.0) return 0.0;
  double q = exp(qlog);

  double k1a = -z2, k1b = pi2 / 4.0;
  double k2a = 6.0 * z6 + 2.0 * z4, k2b = (2.0 * z4 - 5.0 * z2) * pi2 / 4.0,
         k2c = pi4 * (1.0 - 2.0 * z2) / 16.0;
  double k3d = pi6 * (5.0 - 30.0 * z2) / 64.0, k3c = pi4 * (-60.0 * z2 + 212.0 * z4) / 16.0,
         k3b = pi2 * (135.0 * z4 - 96.0 * z6) / 4.0, k3a = -30.0 * z6 - 90.0 * z4 * z4;

  double K[4] = {0, 0, 0, 0};
  long maxk = (long)ceil(16.0 * z / KS_PI);
  for (long k = maxk; k > 0; k--) {
    double mm = (double)(2 * k - 1);
    double m2 = mm * mm, m4 = m2 * m2, m6 = m4 * m2;
    double qp = pow(q, (double)(8 * k));
    double c[4] = {1.0, k1a + k1b * m2, k2a + k2b * m2 + k2c * m4,
                   k3a + k3b * m2 + k3c * m4 + k3d * m6};
    for (int i = 0; i < 4; i++) K[i] = K[i] * qp + c[i];
  }
  double den[4] = {z, 6.0 * z4, 72.0 * z6 * z, 6480.0 * z6 * z4};
  for (int i = 0; i < 4; i++) K[i] = K[i] * q * sqrt2pi / den[i];

  double q2 = exp(-pi2 / 2.0 / z2);
  double k2extra = 0.0, k3extra = 0.0;
  for (long k = maxk; k > 0; k--) {
    double kk = (double)k, ks2 = kk * kk;
    double qpw = pow(q2, ks2);
    k2extra += ks2 * qpw;
    double kspi = KS_PI * kk;
    k3extra += (sqrt3 * z + kspi) * (sqrt3 * z - kspi) * ks2 * qpw;
  }
  K[2] += k2extra * pi2 * sqrt2pi / (-36.0 * z3);
  K[3] += k3extra * pi2 * sqrt2pi / (216.0 * z6);
  double sum = 0.0;
  for (int i = 0; i < 4; i++) sum += K[i] / pow((double)n, (double)i / 2.0);
  return sum;
}

/* ---- the two-sided law -------------------------------------------------------------- */

/* log(n! / n^n) by Stirling's series (SciPy's _log_nfactorial_div_n_pow_n). */
static double log_nfact_div_npown(double n) {
  static const double c[] = {-2.955065359477124183e-2, 6.4102564102564102564e-3,
                             -1.9175269175269175269e-3, 8.4175084175084175084e-4,
                             -5.952380952380952381e-4,  7.9365079365079365079e-4,
                             -2.7777777777777777778e-3, 8.3333333333333333333e-2};
  double rn = 1.0 / n, t = rn / n, poly = 0.0;
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) poly = poly * t + c[i];
  return log(n) / 2.0 - n + log(2.0 * KS_PI) / 2.0 + rn * poly;
}

/* Sets *cdf and *sf; one of them may be computed as 1 - the other (as SciPy does). */
static void kolmogn(size_t n, double x, double *cdf, double *sf) {
  double nd = (double)n;
  if (x >= 1.0) {
    *cdf = 1.0, *sf = 0.0;
    return;
  }
  if (x <= 0.0) {
    *cdf = 0.0, *sf = 1.0;
    return;
  }
  double t = nd * x;
  if (t <= 1.0) {
    if (t <= 0.5) {
      *cdf = 0.0, *sf = 1.0;
      return;
    }
    double prob;
    if (n <= 140) {
      prob = 1.0;
      for (size_t i = 1; i <= n; i++) prob *= (double)i * (1.0 / nd) * (2.0 * t - 1.0);
    } else {
      prob = exp(log_nfact_div_npown(nd) + nd * log(2.0 * t - 1.0));
    }
    *cdf = clip01(prob), *sf = clip01(1.0 - prob);
    return;
  }
  if (t >= nd - 1.0) {
    double prob = 2.0 * pow(1.0 - x, nd);
    *cdf = clip01(1.0 - prob), *sf = clip01(prob);
    return;
  }
  if (x >= 0.5) {
    double prob = 2.0 * cb_stats_smirnov_sf(n, x);
    *cdf = clip01(1.0 - prob), *sf = clip01(prob);
    return;
  }
  double nx2 = t * x;
  if (n <= 140) {
    if (nx2 <= 4.0) {
      double p = kolmogn_dmtw_cdf(n, x);
      *cdf = p, *sf = clip01(1.0 - p);
    } else {
      double prob = 2.0 * cb_stats_smirnov_sf(n, x);
      *cdf = clip01(1.0 - prob), *sf = clip01(prob);
    }
    return;
  }
  /* n > 140. The survival in the tail comes straight from the one-sided sum (SciPy does
   * this for sf only; the CDF there is 1 - that sum, which differs from SciPy's CDF by
   * less than the CDF's own rounding). */
  if (nx2 >= 370.0) {
    *cdf = 1.0, *sf = 0.0;
    return;
  }
  if (nx2 >= 2.2) {
    double prob = clip01(2.0 * cb_stats_smirnov_sf(n, x));
    *sf = prob;
    double c;
    if (nx2 >= 18.0)
      c = 1.0;
    else if (n <= 100000 && nd * pow(x, 1.5) <= 1.4)
      c = kolmogn_dmtw_cdf(n, x);
    else
      c = kolmogn_pelz_good_cdf(n, x);
    *cdf = clip01(c);
    return;
  }
  double c;
  if (n <= 100000 && nd * pow(x, 1.5) <= 1.4)
    c = kolmogn_dmtw_cdf(n, x);
  else
    c = kolmogn_pelz_good_cdf(n, x);
  *cdf = clip01(c), *sf = clip01(1.0 - c);
}

double cb_stats_kolmogorov_n_sf(size_t n, double d) {
  if (n == 0 || isnan(d)) return NAN;
  double c, s;
  kolmogn(n, d, &c, &s);
  return s;
}

double cb_stats_kolmogorov_n_cdf(size_t n, double d) {
  if (n == 0 || isnan(d)) return NAN;
  double c, s;
  kolmogn(n, d, &c, &s);
  return c;
}

/* ---- the limiting law ------------------------------------------------------------- */

double cb_stats_kolmogorov_sf(double z) {
  if (isnan(z)) return NAN;
  if (z <= 0.0) return 1.0;
  if (z < 1.0) {
    /* CDF = sqrt(2 pi)/z sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 z^2)): fast for small z. */
    double s = 0.0;
    for (int k = 1; k <= 50; k++) {
      double m = 2.0 * k - 1.0;
      double term = exp(-m * m * KS_PI * KS_PI / (8.0 * z * z));
      s += term;
      if (term < 1e-300 || term < s * 1e-17) break;
    }
    return clip01(1.0 - sqrt(2.0 * KS_PI) / z * s);
  }
  /* SF = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 z^2). */
  double s = 0.0;
  for (int k = 1; k <= 100; k++) {
    double term = exp(-2.0 * k * k * z * z);
    s += (k % 2) ? term : -term;
    if (term < 1e-300 || term < fabs(s) * 1e-17) break;
  }
  return clip01(2.0 * s);
}

/* ---- the test ------------------------------------------------------------------------ */

cb_status cb_stats_ks_1samp(const double *x, size_t n, double *scratch, cb_stats_cdf_fn cdf,
                            void *ctx, cb_stats_ks_result *out, cb_error *err) {
  if (n == 0) return cb_error_set(err, CB_ERR_INVALID, "KS test: the sample is empty");
  if (!cdf) return cb_error_set(err, CB_ERR_INVALID, "KS test: no CDF given");
  for (size_t i = 0; i < n; i++)
    if (isnan(x[i]))
      return cb_error_set(err, CB_ERR_INVALID, "KS test: sample value %zu is NaN", i);
  double *s = scratch ? scratch : cb_malloc(n * sizeof *s);
  if (s != x) memcpy(s, x, n * sizeof *s);
  cb_stats_sort(s, n);
  double dplus = -INFINITY, dminus = -INFINITY;
  double nd = (double)n;
  cb_status st = CB_OK;
  for (size_t i = 0; i < n; i++) {
    double f = cdf(ctx, s[i]);
    if (!(f >= 0.0 && f <= 1.0)) {
      st = cb_error_set(err, CB_ERR_INVALID, "KS test: CDF(%.17g) = %g is not in [0, 1]", s[i],
                        f);
      break;
    }
    double up = (double)(i + 1) / nd - f;
    double down = f - (double)i / nd;
    if (up > dplus) dplus = up;
    if (down > dminus) dminus = down;
  }
  if (!scratch) cb_free(s);
  if (st != CB_OK) return st;
  out->n = n;
  out->d_plus = dplus;
  out->d_minus = dminus;
  out->d = dplus > dminus ? dplus : dminus;
  out->p_value = clip01(cb_stats_kolmogorov_n_sf(n, out->d));
  return CB_OK;
}

/* ---- two samples ------------------------------------------------------------------- */

double cb_stats_ks_2samp_d(const double *x, size_t nx, const double *y, size_t ny) {
  if (!nx || !ny) return NAN;
  /* walk both sorted samples; at each distinct value both empirical CDFs take all the
   * values equal to it before they are compared (ties between the samples count once) */
  size_t i = 0, j = 0;
  double d = 0;
  while (i < nx && j < ny) {
    double v = x[i] < y[j] ? x[i] : y[j];
    while (i < nx && x[i] == v) i++;
    while (j < ny && y[j] == v) j++;
    double gap = fabs((double)i / (double)nx - (double)j / (double)ny);
    if (gap > d) d = gap;
  }
  return d;
}
