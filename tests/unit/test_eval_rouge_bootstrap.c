/*
 * test_eval_rouge_bootstrap.c - rouge-score's BootstrapAggregator: the vectors of
 * tests/data/eval/rouge/bootstrap.jsonl (scoring_test.py's two fixed cases with seed
 * 123, then segment scores of the random corpora under other seeds, sizes and
 * confidences), each made after np.random.seed(seed), equal to 1e-9; and bad
 * arguments as errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/eval_rouge.h"
#include "test_eval_rouge_vectors.h"

static void prf_of(json_t *a, double out[3]) {
  for (int k = 0; k < 3; k++) out[k] = json_number_value(json_array_get(a, (size_t)k));
}

static void check_bootstrap(json_t *v, size_t line, void *ctx) {
  size_t *checked = ctx;
  json_t *scores = json_object_get(v, "scores");
  size_t n = json_array_size(scores);
  cb_eval_prf *seg = calloc(n, sizeof *seg);
  for (size_t i = 0; i < n; i++) {
    double x[3];
    prf_of(json_array_get(scores, i), x);
    seg[i] = (cb_eval_prf){x[0], x[1], x[2]};
  }
  cb_eval_rouge_interval got;
  cb_error err = {0};
  if (cb_eval_rouge_bootstrap(seg, n, (size_t)json_integer_value(json_object_get(v, "n_samples")),
                              json_number_value(json_object_get(v, "confidence")),
                              (uint32_t)json_integer_value(json_object_get(v, "seed")), &got,
                              &err) != CB_OK)
    fail_msg("bootstrap.jsonl:%zu: %s", line, err.msg);
  const char *names[] = {"low", "mid", "high"};
  const cb_eval_prf *g[] = {&got.low, &got.mid, &got.high};
  for (int b = 0; b < 3; b++) {
    double e[3], x[3] = {g[b]->precision, g[b]->recall, g[b]->fmeasure};
    prf_of(json_object_get(v, names[b]), e);
    for (int k = 0; k < 3; k++)
      if (!(fabs(x[k] - e[k]) <= VEC_TOL))
        fail_msg("bootstrap.jsonl:%zu: %s[%d]: got %.17g, rouge-score %.17g", line, names[b], k,
                 x[k], e[k]);
  }
  free(seg);
  (*checked)++;
}

static void test_bootstrap_equals_rouge_score(void **state) {
  (void)state;
  size_t checked = 0;
  size_t n = read_vectors("rouge/bootstrap.jsonl", check_bootstrap, &checked);
  assert_true(n >= 7);
  assert_int_equal(checked, n);
}

static void test_bad_arguments(void **state) {
  (void)state;
  cb_eval_prf seg[2] = {{1, 1, 1}, {0, 0, 0}};
  cb_eval_rouge_interval out;
  cb_error err = {0};
  assert_int_equal(cb_eval_rouge_bootstrap(seg, 2, 10, 1.5, 1, &out, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "confidence"));
  assert_int_equal(cb_eval_rouge_bootstrap(seg, 2, 10, NAN, 1, &out, &err), CB_ERR_INVALID);
  assert_int_equal(cb_eval_rouge_bootstrap(seg, 2, 0, 0.95, 1, &out, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "samples"));
  assert_int_equal(cb_eval_rouge_bootstrap(seg, 0, 10, 0.95, 1, &out, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "segment"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bootstrap_equals_rouge_score),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
