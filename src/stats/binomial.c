/*
 * binomial.c - intervals of a proportion (stats.h): the normal quantile and Wilson's
 * score interval.
 */
#include <math.h>

#include "calibench/stats.h"

/* P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
 * function" (2003): coefficients of the central and tail rational approximations. */
static const double A[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                           1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
static const double B[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                           6.680131188771972e+01, -1.328068155288572e+01};
static const double C[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                           -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
static const double D[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                           3.754408661907416e+00};

double cb_stats_normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return NAN;
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
        ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    double q = p - 0.5, r = q * q;
    x = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
        (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
  } else {
    double q = sqrt(-2 * log1p(-p));
    x = -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
        ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  }
  /* One step of Halley's method on Phi(x) - p, Phi from erfc (Acklam's refinement). */
  double e = 0.5 * erfc(-x / sqrt(2)) - p;
  double u = e * 2.5066282746310002 * exp(x * x / 2); /* sqrt(2 pi) */
  return x - u / (1 + x * u / 2);
}

void cb_stats_wilson(double k, double n, double level, double *lo, double *hi) {
  if (!(n > 0)) {
    *lo = 0;
    *hi = 1;
    return;
  }
  double z = cb_stats_normal_quantile(0.5 + level / 2), z2 = z * z;
  double p = k / n, denom = 1 + z2 / n;
  double centre = (p + z2 / (2 * n)) / denom;
  double half = z / denom * sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  /* at k = 0 and k = n the ends are 0 and 1 exactly; rounding would leave 1e-17 */
  *lo = k <= 0 ? 0 : fmax(0, centre - half);
  *hi = k >= n ? 1 : fmin(1, centre + half);
}
