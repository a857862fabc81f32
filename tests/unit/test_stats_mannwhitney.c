/*
 * test_stats_mannwhitney.c - the Mann-Whitney U test against SciPy, and Holm's
 * adjustment against a hand-worked example.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "calibench/stats.h"

static void check_close(const char *what, double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want) + 1e-300))
    fail_msg("%s: got %.17g, want %.17g (rel %g)", what, got, want, rel);
}

/*
 * Expected values from SciPy 1.10.1 (Debian bookworm python3-scipy), produced by
 *   /usr/bin/python3 - <<'EOF'
 *   import numpy as np
 *   from scipy import stats
 *   rng = np.random.default_rng(20250101)
 *   a = rng.exponential(1.0, 6); b = rng.exponential(1.5, 9)
 *   c = np.round(rng.normal(10, 2, 30)); d = np.round(rng.normal(11, 2, 40))
 *   e = rng.lognormal(0, 0.5, 8); f = rng.lognormal(0.3, 0.5, 25)
 *   for (x, y) in [(a, b), (c, d), (e, f)]:
 *       for alt in ("two-sided", "greater", "less"):
 *           for meth in ("auto", "asymptotic", "exact"):
 *               r = stats.mannwhitneyu(x, y, alternative=alt, method=meth)
 *               print(repr(float(r.statistic)), repr(float(r.pvalue)))
 *   EOF
 * (the samples are printed with repr and copied below).
 */
static const double a[] = {0.2483963473844713, 0.6860134548723736, 0.28507627191800927,
                           1.436094193017155, 0.025094498045026364, 0.17121172778375895};
static const double b[] = {2.458181619099588, 0.23278456475670056, 0.7215223481062474,
                           1.0757099161545554, 1.198841651319074, 1.0313568381210483,
                           3.415297911403557, 0.9181748148115437, 1.2072450695213854};
static const double c[] = {10.0, 10.0, 11.0, 12.0, 9.0, 15.0, 9.0, 14.0, 10.0, 10.0,
                           7.0,  10.0, 9.0,  12.0, 9.0, 8.0,  9.0, 9.0,  12.0, 12.0,
                           8.0,  10.0, 10.0, 12.0, 13.0, 11.0, 14.0, 9.0, 8.0,  9.0};
static const double d[] = {13.0, 9.0,  9.0,  10.0, 12.0, 9.0,  11.0, 11.0, 14.0, 11.0,
                           9.0,  9.0,  9.0,  11.0, 16.0, 12.0, 11.0, 14.0, 9.0,  13.0,
                           10.0, 14.0, 8.0,  10.0, 12.0, 11.0, 10.0, 8.0,  10.0, 11.0,
                           10.0, 14.0, 14.0, 12.0, 10.0, 11.0, 14.0, 14.0, 12.0, 11.0};
static const double e[] = {1.0207397717243636, 0.5868693533273748, 0.4257869220962928,
                           0.5196865691727584, 0.7830339630452745, 1.1906971661523675,
                           0.6763519501019402, 0.6248088820281239};
static const double f[] = {
    1.2918928861978785, 2.6548895440452327, 1.2893468283352352, 1.0700717823017765,
    0.45397074192949965, 1.153958078100899, 0.9728646907542526, 1.1023625326823365,
    1.3322647575489486, 2.3517024338902575, 1.7137632902959865, 2.208617108937022,
    0.8846520859293001, 0.42134134215799784, 1.178092673980983, 0.7891671153938816,
    3.722592746236629, 1.1363824163786291, 1.2420225066626345, 1.3720853783765474,
    1.6425511646422855, 0.7742762296943186, 1.2266427618997726, 1.180589741522013,
    1.4261864481416024};

#define N(v) (sizeof(v) / sizeof((v)[0]))

typedef struct mwu_case {
  const double *x;
  size_t nx;
  const double *y;
  size_t ny;
  cb_stats_alternative alt;
  cb_stats_mwu_method method;
  double u, p;
  int exact;
} mwu_case;

static void test_mannwhitney_scipy(void **state) {
  (void)state;
  const cb_stats_alternative T = CB_STATS_TWO_SIDED, G = CB_STATS_GREATER, L = CB_STATS_LESS;
  const cb_stats_mwu_method AU = CB_STATS_MWU_AUTO, AS = CB_STATS_MWU_ASYMPTOTIC,
                            EX = CB_STATS_MWU_EXACT;
  const mwu_case cases[] = {
      {a, N(a), b, N(b), T, AU, 10.0, 0.04955044955044956, 1},
      {a, N(a), b, N(b), T, AS, 10.0, 0.05182992721790963, 0},
      {a, N(a), b, N(b), T, EX, 10.0, 0.04955044955044956, 1},
      {a, N(a), b, N(b), G, AU, 10.0, 0.9820179820179822, 1},
      {a, N(a), b, N(b), G, AS, 10.0, 0.980414916985008, 0},
      {a, N(a), b, N(b), L, AU, 10.0, 0.02477522477522478, 1},
      {a, N(a), b, N(b), L, AS, 10.0, 0.025914963608954816, 0},
      /* ties: auto is asymptotic with the tie-corrected variance */
      {c, N(c), d, N(d), T, AU, 454.0, 0.08001924257232026, 0},
      {c, N(c), d, N(d), G, AU, 454.0, 0.961016506963219, 0},
      {c, N(c), d, N(d), L, AU, 454.0, 0.04000962128616013, 0},
      {c, N(c), d, N(d), T, EX, 454.0, 0.08422266533395423, 1},
      {c, N(c), d, N(d), G, EX, 454.0, 0.9589583145627831, 1},
      {c, N(c), d, N(d), L, EX, 454.0, 0.042111332666977114, 1},
      /* n1 = 8: auto is exact */
      {e, N(e), f, N(f), T, AU, 30.0, 0.002189546127254692, 1},
      {e, N(e), f, N(f), T, AS, 30.0, 0.0035049894735165324, 0},
      {e, N(e), f, N(f), G, AU, 30.0, 0.9990816870683394, 1},
      {e, N(e), f, N(f), G, AS, 30.0, 0.9984697366584937, 0},
      {e, N(e), f, N(f), L, AU, 30.0, 0.001094773063627346, 1},
      {e, N(e), f, N(f), L, AS, 30.0, 0.0017524947367582662, 0},
  };
  for (size_t i = 0; i < N(cases); i++) {
    const mwu_case *k = &cases[i];
    cb_stats_mwu_result r;
    assert_int_equal(cb_stats_mannwhitney(k->x, k->nx, k->y, k->ny, k->alt, k->method, &r, NULL),
                     CB_OK);
    char what[64];
    snprintf(what, sizeof what, "case %zu U1", i);
    check_close(what, r.u1, k->u, 0);
    snprintf(what, sizeof what, "case %zu p", i);
    check_close(what, r.p_value, k->p, 1e-12);
    assert_int_equal(r.exact, k->exact);
    assert_true(r.u1 + r.u2 == (double)(k->nx * k->ny));
  }
}

static void test_mannwhitney_edges(void **state) {
  (void)state;
  cb_stats_mwu_result r;
  /* all tied: SciPy gives statistic 6.0, p 1.0 */
  const double ones3[] = {1, 1, 1}, ones4[] = {1, 1, 1, 1};
  assert_int_equal(cb_stats_mannwhitney(ones3, 3, ones4, 4, CB_STATS_TWO_SIDED, CB_STATS_MWU_AUTO,
                                        &r, NULL), CB_OK);
  check_close("all tied U", r.u1, 6.0, 0);
  check_close("all tied p", r.p_value, 1.0, 0);
  /* infinities rank last; SciPy: mannwhitneyu([inf, inf, 5], [1, 2, 3], "greater") has a
   * tie, so it is asymptotic: 0.03826125023752961; [inf, 7, 5] is exact: 1 / C(6, 3) */
  const double xi[] = {INFINITY, INFINITY, 5}, xj[] = {INFINITY, 7, 5}, yi[] = {1, 2, 3};
  assert_int_equal(cb_stats_mannwhitney(xi, 3, yi, 3, CB_STATS_GREATER, CB_STATS_MWU_AUTO, &r,
                                        NULL), CB_OK);
  check_close("inf U", r.u1, 9.0, 0);
  check_close("inf, tied: p", r.p_value, 0.03826125023752961, 1e-12);
  assert_int_equal(cb_stats_mannwhitney(xj, 3, yi, 3, CB_STATS_GREATER, CB_STATS_MWU_AUTO, &r,
                                        NULL), CB_OK);
  check_close("inf, exact: p", r.p_value, 0.05, 1e-12);
  /* errors */
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_stats_mannwhitney(a, 0, b, 3, CB_STATS_TWO_SIDED, CB_STATS_MWU_AUTO, &r, &err),
                   CB_ERR_INVALID);
  const double nan1[] = {1, NAN};
  assert_int_equal(cb_stats_mannwhitney(nan1, 2, b, 3, CB_STATS_TWO_SIDED, CB_STATS_MWU_AUTO, &r,
                                        &err), CB_ERR_INVALID);
  static double big[200];
  for (int i = 0; i < 200; i++) big[i] = i;
  assert_int_equal(cb_stats_mannwhitney(big, 200, big, 200, CB_STATS_TWO_SIDED, CB_STATS_MWU_EXACT,
                                        &r, &err), CB_ERR_RANGE);
}

/* Under the null the one-sided p-value is (close to) uniform: P(p <= 0.05) ~ 0.05. */
static void test_mannwhitney_null_calibration(void **state) {
  (void)state;
  enum { TRIALS = 2000, N1 = 60, N2 = 80 };
  static double x[N1], y[N2];
  cb_rng rng;
  cb_rng_init(&rng, 99);
  size_t below = 0;
  for (int t = 0; t < TRIALS; t++) {
    for (int i = 0; i < N1; i++) x[i] = cb_rng_lognormal(&rng, 0, 1);
    for (int i = 0; i < N2; i++) y[i] = cb_rng_lognormal(&rng, 0, 1);
    cb_stats_mwu_result r;
    assert_int_equal(cb_stats_mannwhitney(x, N1, y, N2, CB_STATS_GREATER, CB_STATS_MWU_AUTO, &r,
                                          NULL), CB_OK);
    below += r.p_value <= 0.05;
  }
  double frac = (double)below / TRIALS;
  if (fabs(frac - 0.05) > 4 * sqrt(0.05 * 0.95 / TRIALS))
    fail_msg("P(p <= 0.05) under the null: %g, want 0.05 +- %g", frac,
             4 * sqrt(0.05 * 0.95 / TRIALS));
}

static void test_holm(void **state) {
  (void)state;
  /* sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.06, 0.04) */
  double p[] = {0.01, 0.04, 0.03, 0.005, NAN};
  double adj[5];
  cb_stats_holm(p, 5, adj);
  check_close("holm 0", adj[0], 0.03, 1e-15);
  check_close("holm 1", adj[1], 0.06, 1e-15);
  check_close("holm 2", adj[2], 0.06, 1e-15);
  check_close("holm 3", adj[3], 0.02, 1e-15);
  assert_true(isnan(adj[4]));
  double q[] = {0.5, 0.9};
  cb_stats_holm(q, 2, q); /* in place; capped at 1 */
  check_close("holm cap 0", q[0], 1.0, 0);
  check_close("holm cap 1", q[1], 1.0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mannwhitney_scipy),
      cmocka_unit_test(test_mannwhitney_edges),
      cmocka_unit_test(test_mannwhitney_null_calibration),
      cmocka_unit_test(test_holm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
