/*
 * test_stats_binomial.c - the normal quantile and Wilson's interval against values
 * from Python 3.11's statistics.NormalDist().inv_cdf and Wilson's formula evaluated
 * with it (the values statsmodels' proportion_confint(method="wilson") gives).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "calibench/stats.h"

static void test_normal_quantile(void **state) {
  (void)state;
  assert_true(fabs(cb_stats_normal_quantile(0.975) - 1.959963984540054) < 1e-12);
  assert_true(fabs(cb_stats_normal_quantile(0.5)) < 1e-15);
  assert_true(fabs(cb_stats_normal_quantile(0.995) - 2.5758293035489004) < 1e-12);
  assert_true(fabs(cb_stats_normal_quantile(1e-10) + 6.361340902404056) < 1e-9);
  assert_true(fabs(cb_stats_normal_quantile(0.01) + 2.3263478740408408) < 1e-12);
  assert_true(isnan(cb_stats_normal_quantile(0)));
  assert_true(isnan(cb_stats_normal_quantile(1)));
}

static void test_wilson(void **state) {
  (void)state;
  double lo, hi;
  cb_stats_wilson(8, 10, 0.95, &lo, &hi);
  assert_true(fabs(lo - 0.4901624715) < 1e-8 && fabs(hi - 0.9433178485) < 1e-8);
  cb_stats_wilson(0, 20, 0.95, &lo, &hi);
  assert_true(lo == 0 && fabs(hi - 0.1611251581) < 1e-8);
  cb_stats_wilson(20, 20, 0.95, &lo, &hi);
  assert_true(fabs(lo - 0.8388748419) < 1e-8 && hi == 1);
  cb_stats_wilson(0, 0, 0.95, &lo, &hi);
  assert_true(lo == 0 && hi == 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_normal_quantile),
      cmocka_unit_test(test_wilson),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
