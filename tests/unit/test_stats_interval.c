/*
 * test_stats_interval.c - the normal quantile, Wilson's score interval and the
 * bootstrap interval of a mean (src/stats/interval.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "calibench/stats.h"

static void test_normal_quantile(void **state) {
  (void)state;
  /* scipy.stats.norm.ppf */
  assert_true(fabs(cb_stats_normal_quantile(0.975) - 1.959963984540054) < 1e-12);
  assert_true(fabs(cb_stats_normal_quantile(0.5)) < 1e-15);
  assert_true(fabs(cb_stats_normal_quantile(0.001) + 3.090232306167813) < 1e-11);
  assert_true(fabs(cb_stats_normal_quantile(1e-10) + 6.361340902404056) < 1e-9);
  assert_true(isinf(cb_stats_normal_quantile(1)) && isnan(cb_stats_normal_quantile(2)));
}

/* Each bound p0 is where the score test is at its edge: |p - p0| = z sqrt(p0 (1 - p0) / n). */
static void test_wilson(void **state) {
  (void)state;
  double z = 1.959963984540054, lo, hi;
  const uint64_t cases[][2] = {{81, 263}, {1, 10}, {50, 100}, {3, 1000}};
  for (size_t i = 0; i < 4; i++) {
    uint64_t k = cases[i][0], n = cases[i][1];
    cb_stats_wilson(k, n, 0.95, &lo, &hi);
    double p = (double)k / (double)n;
    assert_true(lo < p && p < hi);
    assert_true(fabs(fabs(p - lo) - z * sqrt(lo * (1 - lo) / (double)n)) < 1e-12);
    assert_true(fabs(fabs(p - hi) - z * sqrt(hi * (1 - hi) / (double)n)) < 1e-12);
  }
  cb_stats_wilson(0, 20, 0.95, &lo, &hi);
  assert_true(lo == 0 && fabs(hi - 0.16112515) < 1e-7); /* z^2 / (n + z^2) */
  cb_stats_wilson(20, 20, 0.95, &lo, &hi);
  assert_true(hi == 1 && fabs(lo - (1 - 0.16112515)) < 1e-7);
  cb_stats_wilson(0, 0, 0.95, &lo, &hi);
  assert_true(lo == 0 && hi == 1);
}

static void test_bootstrap_mean(void **state) {
  (void)state;
  double x[400], lo, hi, lo2, hi2;
  cb_rng rng;
  cb_rng_init(&rng, 11);
  double mean = 0;
  for (int i = 0; i < 400; i++) mean += (x[i] = cb_rng_normal(&rng, 3, 1)) / 400;
  cb_stats_bootstrap_mean(x, 400, 2000, 0.95, 5, &lo, &hi);
  assert_true(lo < mean && mean < hi);
  /* The normal theory width 2 * 1.96 / sqrt(400) = 0.196, within the sample's spread. */
  assert_true(hi - lo > 0.16 && hi - lo < 0.23);
  cb_stats_bootstrap_mean(x, 400, 2000, 0.95, 5, &lo2, &hi2);
  assert_true(lo == lo2 && hi == hi2); /* seeded */
  cb_stats_bootstrap_mean(x, 1, 2000, 0.95, 5, &lo, &hi);
  assert_true(lo == x[0] && hi == x[0]);
  cb_stats_bootstrap_mean(x, 0, 2000, 0.95, 5, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_normal_quantile),
      cmocka_unit_test(test_wilson),
      cmocka_unit_test(test_bootstrap_mean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
