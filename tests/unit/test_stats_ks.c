/*
 * test_stats_ks.c - the one-sample Kolmogorov-Smirnov test and the laws of its
 * statistic, against SciPy.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "calibench/stats.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* |got - want| <= abs_tol + rel * |want|. */
static void check_close(const char *what, double got, double want, double rel, double abs_tol) {
  if (!(fabs(got - want) <= abs_tol + rel * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (rel %g, abs %g)", what, got, want, rel, abs_tol);
}

/*
 * Expected values from SciPy 1.10.1 (Debian bookworm python3-scipy, installed with
 * `apt-get install -y python3-scipy`), produced by
 *   /usr/bin/python3 - <<'EOF'
 *   from scipy import stats, special
 *   cases = [(1,0.3),(1,0.75),(2,0.2),(2,0.3),(2,0.6),(5,0.05),(5,0.15),(5,0.3),(5,0.5),
 *            (5,0.85),(10,0.12),(10,0.2),(10,0.35),(10,0.55),(50,0.08),(50,0.2),(50,0.3),
 *            (140,0.05),(140,0.12),(140,0.2),(141,0.05),(141,0.1),(141,0.2),(1000,0.01),
 *            (1000,0.03),(1000,0.05),(1000,0.1),(10000,0.005),(10000,0.01),(10000,0.02),
 *            (100000,0.002),(100000,0.004),(100000,0.01),(200000,0.002),(200000,0.003),
 *            (1000,0.6),(1000,0.0006),(1000,0.0009),(200,0.999),(3,0.3),(4,0.24),(5,0.81),
 *            (10,0.92),(100,0.0075),(140,0.99),(300,0.0025),(300,0.9968)]
 *   for n, d in cases:
 *       print("{%d, %r, %r, %r}," % (n, d, float(stats.kstwo.sf(d, n)),
 *                                    float(stats.kstwo.cdf(d, n))))
 *   for n, d in [(1,0.3),(5,0.2),(10,0.5),(100,0.1),(1000,0.05),(20000,0.02)]:
 *       print("{%d, %r, %r}," % (n, d, float(special.smirnov(n, d))))
 *   for z in [0.2,0.5,0.8,1.0,1.2,1.36,2.0,3.0]:
 *       print("{%r, %r}," % (z, float(special.kolmogorov(z))))
 *   EOF
 * The cases reach every branch of SciPy's _kolmogn: n d <= 1/2, 1/2 < n d <= 1,
 * n d >= n - 1, d >= 1/2, the Durbin matrix and Pomeranz regions for n <= 140, the
 * far tail, the Durbin matrix and Pelz-Good regions for n > 140.
 */
typedef struct law_case {
  size_t n;
  double d, sf, cdf;
} law_case;

static const law_case law_cases[] = {
    {1, 0.3, 1.0, 0.0},
    {1, 0.75, 0.5, 0.5},
    {2, 0.2, 1.0, 0.0},
    {2, 0.3, 0.98, 0.01999999999999999},
    {2, 0.6, 0.32000000000000006, 0.6799999999999999},
    {5, 0.05, 1.0, 0.0},
    {5, 0.15, 0.9988, 0.0012000000000000005},
    {5, 0.3, 0.664, 0.33599999999999997},
    {5, 0.5, 0.112, 0.888},
    {5, 0.85, 0.0001518750000000001, 0.999848125},
    {10, 0.12, 0.9948566839762616, 0.0051433160237383665},
    {10, 0.2, 0.7487190399999999, 0.25128096000000005},
    {10, 0.35, 0.1339605462624991, 0.8660394537375009},
    {10, 0.55, 0.0022805103214843725, 0.9977194896785156},
    {50, 0.08, 0.880839701941023, 0.11916029805897697},
    {50, 0.2, 0.03143877776953241, 0.9685612222304676},
    {50, 0.3, 0.00017353260202718738, 0.9998264673979728},
    {140, 0.05, 0.857648029765611, 0.14235197023438895},
    {140, 0.12, 0.03252638258561632, 0.9674736174143836},
    {140, 0.2, 2.1981563302200222e-05, 0.9999780184366978},
    {141, 0.05, 0.8548456930096628, 0.1451543069903371},
    {141, 0.1, 0.11128445516467944, 0.8887155448353206},
    {141, 0.2, 2.0276784223976912e-05, 0.9999797514476229},
    {1000, 0.01, 0.9999496745370611, 5.032546293896399e-05},
    {1000, 0.03, 0.3226902143914636, 0.6773097856085364},
    {1000, 0.05, 0.013012074781090332, 0.9869879197970768},
    {1000, 0.1, 3.703687096817711e-09, 0.9999999962983145},
    {10000, 0.005, 0.9628778025204304, 0.03712219747956955},
    {10000, 0.01, 0.2682191277029192, 0.7317808722970808},
    {10000, 0.02, 0.0006616848639387309, 0.9993383151443062},
    {100000, 0.002, 0.8178408363081542, 0.18215916369184587},
    {100000, 0.004, 0.08130148920222469, 0.9186985107977753},
    {100000, 0.01, 4.093278023549254e-09, 0.999999995906722},
    {200000, 0.002, 0.39995085369038097, 0.600049146309619},
    {200000, 0.003, 0.0545369786611305, 0.9454630213388695},
    {1000, 0.6, 0.0, 1.0},
    {1000, 0.0006, 1.0, 0.0},
    {1000, 0.0009, 1.0, 0.0},
    {200, 0.999, 0.0, 1.0},
    {3, 0.3, 0.8862222222222222, 0.11377777777777771},
    {4, 0.24, 0.93283816, 0.06716183999999999},
    {5, 0.81, 0.0004952197999999993, 0.9995047802},
    {10, 0.92, 2.1474836479999892e-11, 0.9999999999785252},
    {100, 0.0075, 1.0, 7.362140279596113e-73},
    {140, 0.99, 2.0000000000002487e-280, 1.0},
    {300, 0.0025, 1.0, 1.0975591348413985e-219},
    {300, 0.9968, 0.0, 1.0},
};

static void test_kolmogorov_n_scipy(void **state) {
  (void)state;
  for (size_t i = 0; i < ARRAY_LEN(law_cases); i++) {
    const law_case *c = &law_cases[i];
    char what[96];
    snprintf(what, sizeof what, "kstwo.sf(%g, %zu)", c->d, c->n);
    /* Relative 1e-9 (absolute 1e-15 for values computed as 1 - x). */
    check_close(what, cb_stats_kolmogorov_n_sf(c->n, c->d), c->sf, 1e-9, 1e-15);
    snprintf(what, sizeof what, "kstwo.cdf(%g, %zu)", c->d, c->n);
    check_close(what, cb_stats_kolmogorov_n_cdf(c->n, c->d), c->cdf, 1e-9, 1e-15);
  }
  assert_true(isnan(cb_stats_kolmogorov_n_sf(0, 0.5)));
  assert_true(isnan(cb_stats_kolmogorov_n_sf(10, NAN)));
}

static void test_smirnov_and_limit_scipy(void **state) {
  (void)state;
  static const struct {
    size_t n;
    double d, want;
  } sm[] = {
      {1, 0.3, 0.7},
      {5, 0.2, 0.58528},
      {10, 0.5, 0.003888705},
      {100, 0.1, 0.1265906584562817},
      {1000, 0.05, 0.006506037390545166},
      {20000, 0.02, 1.1090635035024872e-07},
  };
  for (size_t i = 0; i < ARRAY_LEN(sm); i++) {
    char what[64];
    snprintf(what, sizeof what, "smirnov(%zu, %g)", sm[i].n, sm[i].d);
    check_close(what, cb_stats_smirnov_sf(sm[i].n, sm[i].d), sm[i].want, 1e-9, 0);
  }
  static const struct {
    double z, want;
  } kg[] = {
      {0.2, 0.999999999999495},       {0.5, 0.9639452436648751},
      {0.8, 0.5441424115741981},      {1.0, 0.26999967167735456},
      {1.2, 0.11224966667072497},     {1.36, 0.049485876755377876},
      {2.0, 0.0006709252557796953},   {3.0, 3.045995948942526e-08},
  };
  for (size_t i = 0; i < ARRAY_LEN(kg); i++) {
    char what[64];
    snprintf(what, sizeof what, "kolmogorov(%g)", kg[i].z);
    check_close(what, cb_stats_kolmogorov_sf(kg[i].z), kg[i].want, 1e-12, 1e-15);
  }
  assert_true(cb_stats_kolmogorov_sf(0.0) == 1.0);
}

/* ---- the test statistic --------------------------------------------------------------- */

static double expon_cdf(void *ctx, double x) {
  double scale = *(const double *)ctx;
  return x <= 0 ? 0.0 : -expm1(-x / scale);
}

static double uniform01_cdf(void *ctx, double x) {
  (void)ctx;
  return x <= 0 ? 0.0 : x >= 1 ? 1.0 : x;
}

/*
 * Expected values from SciPy 1.10.1:
 *   /usr/bin/python3 - <<'EOF'
 *   import numpy as np
 *   from scipy import stats
 *   x = np.random.default_rng(20240917).exponential(2.0, 20)
 *   print(", ".join(repr(float(v)) for v in x))
 *   for scale in (2.0, 1.0):
 *       r = stats.kstest(x, stats.expon(scale=scale).cdf)
 *       print(scale, repr(float(r.statistic)), repr(float(r.pvalue)))
 *   phi = 0.6180339887498949
 *   u = np.mod(np.arange(1, 1001) * phi, 1.0)
 *   for a in (1.0, 0.9):
 *       r = stats.kstest(u * a, stats.uniform.cdf)
 *       print(a, repr(float(r.statistic)), repr(float(r.pvalue)))
 *   EOF
 */
static void test_ks_1samp_scipy(void **state) {
  (void)state;
  static const double x[20] = {
      8.844730862836439,   0.25731407103276177, 1.261741565145784,  1.4919579738690567,
      0.2422256619706859,  0.056261997712807425, 0.9955929891464698, 1.6364690128392976,
      1.2698320996574384,  2.415351732410855,   6.706270230839613,  3.6042672217744296,
      1.0268186642579151,  0.48081748730219176, 1.4194544566797724, 0.13120211549392913,
      1.1065460570832841,  0.5446934253513263,  1.2426189034071211, 0.0025589355028860644};
  cb_stats_ks_result r;
  double scale = 2.0;
  assert_int_equal(cb_stats_ks_1samp(x, 20, NULL, expon_cdf, &scale, &r, NULL), CB_OK);
  assert_int_equal(r.n, 20);
  check_close("D vs Exp(scale 2)", r.d, 0.24120992057433432, 1e-14, 0);
  check_close("p vs Exp(scale 2)", r.p_value, 0.16501930672605747, 1e-9, 0);
  assert_true(r.d == (r.d_plus > r.d_minus ? r.d_plus : r.d_minus));
  scale = 1.0;
  double scratch[20];
  assert_int_equal(cb_stats_ks_1samp(x, 20, scratch, expon_cdf, &scale, &r, NULL), CB_OK);
  check_close("D vs Exp(scale 1)", r.d, 0.28049573245453785, 1e-14, 0);
  check_close("p vs Exp(scale 1)", r.p_value, 0.06956664828476167, 1e-9, 0);
  for (int i = 1; i < 20; i++) assert_true(scratch[i - 1] <= scratch[i]);

  enum { N = 1000 };
  double *u = malloc(N * sizeof *u);
  const double phi = 0.6180339887498949;
  for (int i = 0; i < N; i++) u[i] = fmod((double)(i + 1) * phi, 1.0);
  assert_int_equal(cb_stats_ks_1samp(u, N, NULL, uniform01_cdf, NULL, &r, NULL), CB_OK);
  check_close("D golden n=1000", r.d, 0.0013362337334979213, 1e-12, 0);
  check_close("p golden n=1000", r.p_value, 1.0, 0, 1e-15);
  for (int i = 0; i < N; i++) u[i] *= 0.9;
  assert_int_equal(cb_stats_ks_1samp(u, N, u, uniform01_cdf, NULL, &r, NULL), CB_OK);
  check_close("D golden*0.9 n=1000", r.d, 0.10040779346834372, 1e-12, 0);
  check_close("p golden*0.9 n=1000", r.p_value, 3.142145497313147e-09, 1e-9, 0);
  free(u);
}

static double bad_cdf(void *ctx, double x) {
  (void)ctx;
  return x > 1 ? 2.0 : 0.5;
}

static void test_ks_1samp_errors(void **state) {
  (void)state;
  cb_stats_ks_result r;
  cb_error err;
  cb_error_clear(&err);
  double x[3] = {0.5, 1.5, 2.5};
  assert_int_equal(cb_stats_ks_1samp(x, 0, NULL, uniform01_cdf, NULL, &r, &err),
                   CB_ERR_INVALID);
  assert_int_equal(cb_stats_ks_1samp(x, 3, NULL, NULL, NULL, &r, &err), CB_ERR_INVALID);
  assert_int_equal(cb_stats_ks_1samp(x, 3, NULL, bad_cdf, NULL, &r, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "not in [0, 1]"));
  x[1] = NAN;
  assert_int_equal(cb_stats_ks_1samp(x, 3, NULL, uniform01_cdf, NULL, &r, &err),
                   CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "NaN"));
}

/* Under the null the p-value is uniform: over many seeded samples the fraction below
 * 0.05 is near 0.05 (binomial, 400 trials: sd 0.011; bound 4 sd). */
static void test_ks_null_calibration(void **state) {
  (void)state;
  enum { TRIALS = 400, N = 200 };
  double x[N];
  double scale = 1.0;
  int below = 0;
  for (int t = 0; t < TRIALS; t++) {
    cb_rng rng;
    cb_rng_init_stream(&rng, 7, 1, (uint64_t)t);
    for (int i = 0; i < N; i++) x[i] = cb_rng_exponential(&rng, 1.0);
    cb_stats_ks_result r;
    assert_int_equal(cb_stats_ks_1samp(x, N, x, expon_cdf, &scale, &r, NULL), CB_OK);
    below += r.p_value < 0.05;
  }
  double frac = (double)below / TRIALS;
  if (fabs(frac - 0.05) > 4 * 0.0109)
    fail_msg("fraction of p < 0.05 under the null: %g, want 0.05 +- 0.044", frac);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kolmogorov_n_scipy),
      cmocka_unit_test(test_smirnov_and_limit_scipy),
      cmocka_unit_test(test_ks_1samp_scipy),
      cmocka_unit_test(test_ks_1samp_errors),
      cmocka_unit_test(test_ks_null_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
