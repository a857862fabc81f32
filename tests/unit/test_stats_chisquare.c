/*
 * test_stats_chisquare.c - the chi-square goodness-of-fit test and Q(a, x) against
 * SciPy 1.10.1 (scipy.stats.chisquare, scipy.special.gammaincc; the values below were
 * printed by it with repr()).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/stats.h"

static void close_rel(double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("got %.17g, want %.17g (relative %g)", got, want, fabs(got - want) / fabs(want));
}

static void test_gamma_q(void **state) {
  (void)state;
  static const struct { double a, x, q; } v[] = {
      {0.5, 0.1, 0.6547208460185768},    {3, 10, 0.0027693957155115775},
      {10.5, 2, 0.9999801284256093},     {100, 120, 0.027863739890520652},
      {1, 1e-08, 0.9999999900000001},    {2.5, 0.0, 1.0},
      {0.5, 30, 9.485737571073857e-15},  {50, 49, 0.5378956063990598},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) close_rel(cb_stats_gamma_q(v[i].a, v[i].x), v[i].q, 1e-12);
  assert_true(isnan(cb_stats_gamma_q(0, 1)));
  assert_true(isnan(cb_stats_gamma_q(1, -1)));
}

static void test_chisquare(void **state) {
  (void)state;
  double stat, p;
  cb_error err;
  const double obs[] = {530, 290, 180}, exp[] = {500, 300, 200};
  assert_int_equal(cb_stats_chisquare(obs, exp, 3, 0, &stat, &p, &err), CB_OK);
  close_rel(stat, 4.133333333333333, 1e-14);
  close_rel(p, 0.1266071027890836, 1e-12);
  const double dice[] = {16, 18, 16, 14, 12, 12}, loaded[] = {16, 16, 16, 16, 16, 8};
  assert_int_equal(cb_stats_chisquare(dice, NULL, 6, 0, &stat, &p, &err), CB_OK);
  close_rel(stat, 2.0, 1e-14);
  close_rel(p, 0.8491450360846096, 1e-12);
  assert_int_equal(cb_stats_chisquare(dice, loaded, 6, 0, &stat, &p, &err), CB_OK);
  close_rel(stat, 3.5, 1e-14);
  close_rel(p, 0.6233876277495822, 1e-12);
  assert_int_equal(cb_stats_chisquare(dice, NULL, 6, 1, &stat, &p, &err), CB_OK);
  close_rel(p, 0.7357588823428847, 1e-12);
  /* Refused: no degrees of freedom, an empty expected category, sums that differ. */
  assert_int_equal(cb_stats_chisquare(dice, NULL, 1, 0, &stat, &p, &err), CB_ERR_INVALID);
  const double zero[] = {500, 0, 500};
  assert_int_equal(cb_stats_chisquare(obs, zero, 3, 0, &stat, &p, &err), CB_ERR_INVALID);
  const double more[] = {500, 300, 300};
  assert_int_equal(cb_stats_chisquare(obs, more, 3, 0, &stat, &p, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "must agree"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gamma_q),
      cmocka_unit_test(test_chisquare),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
