/*
 * test_stats_agreement.c - Pearson, Spearman, Kendall tau-b and Cohen's kappa against
 * SciPy 1.10.1 / scikit-learn 1.2.1 (tests/data/stats/agreement/vectors.jsonl, made by
 * scripts/gen_agreement_vectors.py with /usr/bin/python3), and their bootstrap intervals.
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
#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

static double *numbers(json_t *a, size_t *n) {
  *n = json_array_size(a);
  double *v = cb_malloc((*n ? *n : 1) * sizeof *v);
  for (size_t i = 0; i < *n; i++) v[i] = json_number_value(json_array_get(a, i));
  return v;
}

/* A statistic against the reference: null is nan; otherwise within 1e-12. */
static void check(const char *name, const char *stat, json_t *want, double got) {
  if (json_is_null(want)) {
    if (!isnan(got)) fail_msg("%s: %s: reference nan, calibench %.17g", name, stat, got);
    return;
  }
  double w = json_number_value(want);
  if (!(fabs(w - got) <= 1e-12))
    fail_msg("%s: %s: reference %.17g, calibench %.17g", name, stat, w, got);
}

static void test_reference_vectors(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/stats/agreement/vectors.jsonl", getenv("CB_DATA_DIR"));
  json_error_t je;
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *line = NULL;
  size_t cap = 0;
  size_t cases = 0, kappa_cases = 0;
  assert_true(getline(&line, &cap, f) > 0); /* the versions */
  while (getline(&line, &cap, f) > 0) {
    json_t *v = json_loads(line, 0, &je);
    if (!v) fail_msg("%s: %s", path, je.text);
    const char *name = json_string_value(json_object_get(v, "name"));
    size_t n, ny;
    double *x = numbers(json_object_get(v, "x"), &n);
    double *y = numbers(json_object_get(v, "y"), &ny);
    assert_int_equal(n, ny);
    for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
      const char *stat = cb_stats_agreement_name((cb_stats_agreement_kind)k);
      json_t *want = json_object_get(v, stat);
      double got = cb_stats_agreement((cb_stats_agreement_kind)k, x, y, n);
      if (want) {
        check(name, stat, want, got);
        kappa_cases += k == CB_STATS_AGREE_KAPPA;
      } else if (!isnan(got)) {
        /* sklearn refuses non-integral labels: calibench has no kappa for them either */
        fail_msg("%s: %s: the reference has none, calibench %.17g", name, stat, got);
      }
    }
    cb_free(x);
    cb_free(y);
    json_decref(v);
    cases++;
  }
  free(line);
  fclose(f);
  assert_true(cases >= 20);
  assert_true(kappa_cases >= 15);
}

static void test_average_ranks(void **state) {
  (void)state;
  double x[] = {3, 1, 3, 2, 3, 1};
  double r[6];
  cb_stats_rank_average(x, 6, r);
  double want[] = {5, 1.5, 5, 3, 5, 1.5}; /* scipy.stats.rankdata(x) */
  for (int i = 0; i < 6; i++) assert_true(r[i] == want[i]);
}

/* Kendall by the O(n^2) definition, to hold Knight's count on ties-heavy data. */
static double tau_b_naive(const double *x, const double *y, size_t n) {
  double c = 0, d = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double s = (x[i] - x[j]) * (y[i] - y[j]);
      c += s > 0;
      d += s < 0;
      tx += x[i] == x[j] && y[i] != y[j];
      ty += y[i] == y[j] && x[i] != x[j];
    }
  return (c - d) / sqrt((c + d + tx) * (c + d + ty));
}

static void test_kendall_matches_definition(void **state) {
  (void)state;
  uint64_t s = 12345;
  for (size_t n = 2; n < 300; n += 7) {
    double *x = cb_malloc(2 * n * sizeof *x), *y = x + n;
    for (size_t i = 0; i < n; i++) {
      s = s * 6364136223846793005u + 1442695040888963407u;
      x[i] = (double)((s >> 33) % 4);
      y[i] = (double)((s >> 45) % 6);
    }
    double want = tau_b_naive(x, y, n), got = cb_stats_kendall_tau_b(x, y, n);
    if (isnan(want)) assert_true(isnan(got));
    else if (!(fabs(want - got) <= 1e-12)) fail_msg("n %zu: %.17g vs %.17g", n, want, got);
    cb_free(x);
  }
}

static void test_bootstrap(void **state) {
  (void)state;
  enum { N = 80 };
  double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = 1 + i % 5;
    y[i] = 1 + (i % 5 + (i % 7 == 0)) % 5; /* mostly equal, a few off */
  }
  cb_error err;
  for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
    cb_stats_agreement_interval a, b;
    assert_int_equal(cb_stats_agreement_bootstrap((cb_stats_agreement_kind)k, x, y, N, 500,
                                                  0.95, 7, &a, &err), CB_OK);
    assert_int_equal(cb_stats_agreement_bootstrap((cb_stats_agreement_kind)k, x, y, N, 500,
                                                  0.95, 7, &b, &err), CB_OK);
    /* seeded: the same interval again */
    assert_true(a.lo == b.lo && a.hi == b.hi);
    assert_true(a.estimate == cb_stats_agreement((cb_stats_agreement_kind)k, x, y, N));
    assert_true(a.lo <= a.estimate + 1e-12 && a.estimate <= a.hi + 1e-12);
    assert_true(a.hi - a.lo > 0.01 && a.hi - a.lo < 0.6);
    assert_int_equal(a.undefined, 0);
  }
  /* two values, one of them rare: resamples of one value are undefined and counted */
  double u[] = {1, 1, 1, 1, 1, 1, 1, 2}, v[] = {1, 1, 1, 1, 1, 1, 1, 2};
  cb_stats_agreement_interval c;
  assert_int_equal(cb_stats_agreement_bootstrap(CB_STATS_AGREE_PEARSON, u, v, 8, 1000, 0.9, 1,
                                                &c, &err), CB_OK);
  /* P(no draw of the 2) = (7/8)^8 = 0.344 */
  assert_true(c.undefined > 250 && c.undefined < 440);
  assert_true(c.lo == 1 && c.hi == 1);
  assert_int_equal(cb_stats_agreement_bootstrap(CB_STATS_AGREE_PEARSON, u, v, 8, 1, 0.9, 1,
                                                &c, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "replicates"));
  assert_int_equal(cb_stats_agreement_bootstrap(CB_STATS_AGREE_PEARSON, u, v, 8, 10, 1.0, 1,
                                                &c, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "level"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_vectors),
      cmocka_unit_test(test_average_ranks),
      cmocka_unit_test(test_kendall_matches_definition),
      cmocka_unit_test(test_bootstrap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
