/*
 * test_stats_interval.c - the bootstrap interval of a mean (src/stats/interval.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "calibench/stats.h"

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
      cmocka_unit_test(test_bootstrap_mean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
