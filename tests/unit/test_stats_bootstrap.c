/*
 * test_stats_bootstrap.c - the percentile bootstrap of a quantile's difference: its
 * arithmetic equals numpy's on the same resample index sets, its intervals cover the
 * true difference at about the stated rate on known distributions, and Tukey's fences
 * on known series.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

static void check_close(const char *what, double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want) + 1e-12))
    fail_msg("%s: got %.17g, want %.17g (rel %g)", what, got, want, rel);
}

static const double x[37] = {
    20.1,  24.029, 17.039, 11.771, 15.29,  11.079, 20.824, 44.886, 14.949, 13.842,
    26.948, 24.882, 21.397, 11.493, 19.736, 30.483, 8.966, 15.263, 6.419,  9.265,
    6.652, 17.443, 9.389,  23.636, 22.066, 17.955, 4.437,  14.538, 19.509, 21.499,
    8.02,  15.08,  11.166, 12.363, 37.96,  12.373, 19.697};
static const double y[53] = {
    37.737, 15.64,  20.759, 23.719, 23.064, 10.644, 23.236, 50.164, 8.773,  37.175, 23.846,
    15.106, 73.718, 35.07,  10.81,  23.213, 31.375, 19.821, 33.44,  21.329, 33.127, 52.621,
    14.8,   25.075, 16.811, 23.959, 10.888, 15.681, 19.733, 38.064, 44.13,  10.033, 13.78,
    32.725, 6.716,  16.812, 20.939, 47.191, 33.57,  18.241, 17.794, 19.104, 55.374, 17.17,
    18.5,   27.428, 20.646, 19.72,  11.377, 22.045, 17.011, 44.687, 32.847};

/* The fixed index sets both sides use. */
static uint32_t idx(size_t b, size_t i, size_t n) {
  return (uint32_t)((b * 7919 + i * 104729 + (b * i) % 97 * 13) % n);
}

/*
 * Expected values from numpy 1.24.2 (Debian bookworm python3-numpy):
 *   /usr/bin/python3 - <<'EOF'
 *   import numpy as np
 *   rng = np.random.default_rng(7)
 *   x = np.round(rng.lognormal(3, 0.6, 37), 3); y = np.round(rng.lognormal(3.1, 0.6, 53), 3)
 *   def idx(B, n):
 *       return np.array([[(b*7919 + i*104729 + (b*i) % 97 * 13) % n for i in range(n)]
 *                        for b in range(B)])
 *   B = 200; ix, iy = idx(B, len(x)), idx(B, len(y))
 *   for q in (0.5, 0.9, 0.99):
 *       reps = np.percentile(x[ix], 100*q, axis=1) - np.percentile(y[iy], 100*q, axis=1)
 *       lo, hi = np.percentile(reps, [5, 95])
 *       pg = (1 + np.sum(reps <= 0)) / (B + 1); pl = (1 + np.sum(reps >= 0)) / (B + 1)
 *       print(q, reps[0], reps[17], reps[199], reps.sum(), lo, hi, pg, pl)
 *   EOF
 */
static void test_bootstrap_numpy(void **state) {
  (void)state;
  enum { B = 200 };
  static const struct {
    double q, r0, r17, r199, sum, lo, hi, pg, pl;
  } want[] = {
      {0.5, -6.0390000000000015, -5.620999999999999, -5.8100000000000005, -1099.2450000000003,
       -8.287, -1.612900000000008, 0.9900497512437811, 0.014925373134328358},
      {0.9, -18.867200000000004, -17.738999999999997, -19.379000000000005, -3661.501000000003,
       -25.7938, -8.73020000000001, 0.9950248756218906, 0.009950248756218905},
      {0.99, -21.786479999999933, -26.21911999999994, -12.981359999999995, -4412.934359999994,
       -38.49209, -7.734999999999999, 0.9900497512437811, 0.014925373134328358},
  };
  uint32_t *ix = cb_malloc(B * 37 * sizeof *ix), *iy = cb_malloc(B * 53 * sizeof *iy);
  for (size_t b = 0; b < B; b++) {
    for (size_t i = 0; i < 37; i++) ix[b * 37 + i] = idx(b, i, 37);
    for (size_t i = 0; i < 53; i++) iy[b * 53 + i] = idx(b, i, 53);
  }
  double reps[B];
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    cb_stats_bootstrap_replicates(x, 37, y, 53, want[k].q, ix, iy, B, reps);
    check_close("rep 0", reps[0], want[k].r0, 1e-13);
    check_close("rep 17", reps[17], want[k].r17, 1e-13);
    check_close("rep 199", reps[199], want[k].r199, 1e-13);
    double sum = 0;
    for (size_t b = 0; b < B; b++) sum += reps[b];
    check_close("sum of reps", sum, want[k].sum, 1e-12);
    cb_stats_boot_result r;
    cb_stats_bootstrap_summarize(reps, B, 0.9, &r);
    check_close("ci low", r.ci_low, want[k].lo, 1e-12);
    check_close("ci high", r.ci_high, want[k].hi, 1e-12);
    check_close("p greater", r.p_greater, want[k].pg, 1e-15);
    check_close("p less", r.p_less, want[k].pl, 1e-15);
  }
  cb_free(ix);
  cb_free(iy);
}

/* Selection gives numpy's "linear" quantile, equal to sorting. */
static void test_quantile_select(void **state) {
  (void)state;
  cb_rng rng;
  cb_rng_init(&rng, 5);
  double v[101], s[101], w[101];
  for (int n = 1; n <= 101; n += 4) {
    for (int i = 0; i < n; i++) v[i] = floor(cb_rng_uniform(&rng) * 20); /* many ties */
    for (int i = 0; i < n; i++) s[i] = v[i];
    cb_stats_sort(s, (size_t)n);
    const double qs[] = {0, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
      for (int i = 0; i < n; i++) w[i] = v[i];
      double got = cb_stats_quantile_select(w, (size_t)n, qs[k]);
      double want = cb_stats_quantile_sorted(s, (size_t)n, qs[k]);
      if (got != want) fail_msg("n %d q %g: select %.17g, sort %.17g", n, qs[k], got, want);
    }
  }
  assert_true(isnan(cb_stats_quantile_select(w, 0, 0.5)));
}

/* Coverage on known distributions: the 90% interval of the p90 difference covers the
 * true difference in about 90% of trials. */
static void test_bootstrap_coverage(void **state) {
  (void)state;
  enum { TRIALS = 200, N = 300 };
  static double a[N], b[N];
  cb_rng rng;
  cb_rng_init(&rng, 2024);
  const double shifts[] = {0, 1.0};
  for (size_t s = 0; s < 2; s++) {
    size_t covered = 0, significant = 0;
    for (int t = 0; t < TRIALS; t++) {
      for (int i = 0; i < N; i++) a[i] = cb_rng_exponential(&rng, 1) + shifts[s];
      for (int i = 0; i < N; i++) b[i] = cb_rng_exponential(&rng, 1);
      cb_stats_boot_result r;
      assert_int_equal(cb_stats_bootstrap_quantile_diff(a, N, b, N, 0.9, 500, 0.9,
                                                        (uint64_t)t, &r, NULL), CB_OK);
      covered += r.ci_low <= shifts[s] && shifts[s] <= r.ci_high;
      significant += r.p_greater <= 0.05;
    }
    double frac = (double)covered / TRIALS;
    double tol = 4 * sqrt(0.9 * 0.1 / TRIALS);
    if (fabs(frac - 0.9) > tol)
      fail_msg("shift %g: coverage %g, want 0.9 +- %g", shifts[s], frac, tol);
    double sig = (double)significant / TRIALS;
    if (s == 0 && sig > 0.05 + 4 * sqrt(0.05 * 0.95 / TRIALS))
      fail_msg("no shift: P(p <= 0.05) = %g, want <= 0.05", sig);
    if (s == 1 && sig < 0.9) fail_msg("shift 1 (p90 of Exp(1) is 2.3): power %g < 0.9", sig);
  }
}

static void test_bootstrap_errors_and_determinism(void **state) {
  (void)state;
  cb_stats_boot_result r1, r2;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 37, y, 53, 0.9, 300, 0.9, 11, &r1, &err), CB_OK);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 37, y, 53, 0.9, 300, 0.9, 11, &r2, &err), CB_OK);
  assert_true(r1.ci_low == r2.ci_low && r1.ci_high == r2.ci_high && r1.p_greater == r2.p_greater);
  check_close("estimate", r1.estimate, 25.708399999999997 - 44.5756 /* np.percentile x, y */, 1e-12);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 0, y, 53, 0.9, 300, 0.9, 1, &r1, &err), CB_ERR_INVALID);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 37, y, 53, 1.5, 300, 0.9, 1, &r1, &err), CB_ERR_INVALID);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 37, y, 53, 0.9, 0, 0.9, 1, &r1, &err), CB_ERR_INVALID);
  assert_int_equal(cb_stats_bootstrap_quantile_diff(x, 37, y, 53, 0.9, 10, 1.0, 1, &r1, &err), CB_ERR_INVALID);
}

/* Expected from numpy: q1, q3 = np.percentile(s, [25, 75]); q3 + 1.5 iqr; q1 - 1.5 iqr */
static void test_tukey_fences(void **state) {
  (void)state;
  cb_stats_fences f;
  const double s1[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  assert_int_equal(cb_stats_tukey_fences(s1, 10, 1.5, NULL, &f, NULL), CB_OK);
  check_close("q1", f.q1, 3.25, 0);
  check_close("q3", f.q3, 7.75, 0);
  check_close("high", f.high, 14.5, 0);
  check_close("low", f.low, -3.5, 0);
  assert_int_equal(f.n, 10);
  const double s2[] = {12.1, 11.8, 12.4, 12.0, 11.9, 12.2, 12.3, 12.0, 30.0};
  double scratch[9];
  assert_int_equal(cb_stats_tukey_fences(s2, 9, 1.5, scratch, &f, NULL), CB_OK);
  check_close("q1 with outlier", f.q1, 12.0, 1e-15);
  check_close("q3 with outlier", f.q3, 12.3, 1e-15);
  check_close("high with outlier", f.high, 12.750000000000002, 1e-15);
  check_close("low with outlier", f.low, 11.549999999999999, 1e-15);
  assert_true(30.0 > f.high); /* the outlier is outside */
  const double s3[] = {5};
  assert_int_equal(cb_stats_tukey_fences(s3, 1, 3, NULL, &f, NULL), CB_OK);
  assert_true(f.low == 5 && f.high == 5 && f.iqr == 0);
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_stats_tukey_fences(s3, 0, 1.5, NULL, &f, &err), CB_ERR_INVALID);
  assert_int_equal(cb_stats_tukey_fences(s3, 1, -1, NULL, &f, &err), CB_ERR_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bootstrap_numpy),
      cmocka_unit_test(test_quantile_select),
      cmocka_unit_test(test_bootstrap_coverage),
      cmocka_unit_test(test_bootstrap_errors_and_determinism),
      cmocka_unit_test(test_tukey_fences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
