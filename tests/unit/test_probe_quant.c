/*
 * test_probe_quant.c - probe quant's per-position estimators (probe_quant.h): KLD over
 * the shared top-k tokens plus a tail bucket equals the exact KL divergence when the
 * lists cover all mass, never exceeds it when they are truncated, and tightens as k
 * grows; top-1 agreement, delta log-probability, and the errors of malformed lists.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/probe_quant.h"

/* Two 6-token distributions, listed most likely first (as top_logprobs lists them). */
static const double P6[6] = {0.40, 0.25, 0.15, 0.10, 0.06, 0.04};
static const double Q6[6] = {0.30, 0.30, 0.10, 0.12, 0.10, 0.08};

static double exact_kl(const double *p, const double *q, size_t n) {
  double kl = 0;
  for (size_t i = 0; i < n; i++) kl += p[i] * log(p[i] / q[i]);
  return kl;
}

/* The first k tokens of a distribution over ids 0..5, in the order given. */
static void top(const double *p, const int64_t *order, size_t k, cb_quant_entry *out) {
  for (size_t i = 0; i < k; i++) out[i] = (cb_quant_entry){order[i], log(p[order[i]])};
}

/* The score of P6's first k tokens in p_order against Q6's first k in q_order. */
static cb_quant_position score_p6_q6(const int64_t *p_order, const int64_t *q_order, size_t k) {
  cb_quant_entry p[6], q[6];
  top(P6, p_order, k, p);
  top(Q6, q_order, k, q);
  cb_quant_position r;
  cb_error err = {0};
  assert_int_equal(cb_quant_position_score(p, k, q, k, &r, &err), CB_OK);
  return r;
}

static void test_identical_lists(void **state) {
  (void)state;
  cb_quant_entry l[3] = {{5, log(0.5)}, {9, log(0.3)}, {2, log(0.1)}};
  cb_quant_position r;
  cb_error err = {0};
  assert_int_equal(cb_quant_position_score(l, 3, l, 3, &r, &err), CB_OK);
  assert_true(r.kld < 1e-15);
  assert_int_equal(r.shared, 3);
  assert_true(r.top1_same);
  assert_true(fabs(r.delta_logprob) < 1e-15);
  assert_true(fabs(r.tail_ref - 0.1) < 1e-12 && fabs(r.tail_cand - 0.1) < 1e-12);
}

static void test_complete_lists_are_exact(void **state) {
  (void)state;
  const int64_t order[6] = {0, 1, 2, 3, 4, 5};
  cb_quant_position r = score_p6_q6(order, order, 6);
  assert_true(fabs(r.kld - exact_kl(P6, Q6, 6)) < 1e-12);
  assert_true(r.tail_ref < 1e-12 && r.tail_cand < 1e-12);
  assert_true(r.top1_same); /* Q6 ties 0 and 1: the first listed wins */
  assert_true(fabs(r.delta_logprob - (log(0.30) - log(0.40))) < 1e-12);
}

static void test_truncation_bounds_from_below(void **state) {
  (void)state;
  const double full = exact_kl(P6, Q6, 6);
  const int64_t p_order[6] = {0, 1, 2, 3, 4, 5};
  const int64_t q_order[6] = {0, 1, 3, 4, 2, 5}; /* Q6 by probability */
  double last = -1;
  for (size_t k = 1; k <= 6; k++) {
    cb_quant_position r = score_p6_q6(p_order, q_order, k);
    assert_true(r.kld <= full + 1e-12);
    /* Here each k's shared set contains the last one's: the estimate never falls. */
    assert_true(r.kld >= last - 1e-12);
    last = r.kld;
  }
  assert_true(fabs(last - full) < 1e-12);
  /* k = 2: shared {0, 1}; buckets (0.40, 0.25, tail 0.35) vs (0.30, 0.30, 0.40). */
  cb_quant_position r = score_p6_q6(p_order, q_order, 2);
  double want = 0.40 * log(0.40 / 0.30) + 0.25 * log(0.25 / 0.30) + 0.35 * log(0.35 / 0.40);
  assert_true(fabs(r.kld - want) < 1e-12);
}

static void test_disagreeing_top1(void **state) {
  (void)state;
  cb_quant_entry ref[2] = {{1, log(0.6)}, {2, log(0.3)}};
  cb_quant_entry cand[2] = {{3, log(0.5)}, {2, log(0.4)}};
  cb_quant_position r;
  cb_error err = {0};
  assert_int_equal(cb_quant_position_score(ref, 2, cand, 2, &r, &err), CB_OK);
  assert_false(r.top1_same);
  assert_true(isnan(r.delta_logprob)); /* token 1 is not in the candidate's list */
  assert_int_equal(r.shared, 1);
  double want = 0.3 * log(0.3 / 0.4) + 0.7 * log(0.7 / 0.6);
  assert_true(fabs(r.kld - want) < 1e-12);
}

static void expect_invalid(const cb_quant_entry *ref, size_t nr, const cb_quant_entry *cand,
                           size_t nc, const char *want) {
  cb_quant_position r;
  cb_error err = {0};
  assert_int_equal(cb_quant_position_score(ref, nr, cand, nc, &r, &err), CB_ERR_INVALID);
  if (!strstr(err.msg, want)) fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_malformed_lists(void **state) {
  (void)state;
  cb_quant_entry ok[2] = {{1, log(0.5)}, {2, log(0.2)}};
  cb_quant_entry dup[2] = {{7, log(0.5)}, {7, log(0.2)}};
  cb_quant_entry pos[2] = {{1, log(0.5)}, {2, 0.5}};
  cb_quant_entry nan_[1] = {{1, NAN}};
  cb_quant_entry heavy[2] = {{1, log(0.7)}, {2, log(0.7)}};
  expect_invalid(ok, 0, ok, 2, "reference: expected 1 or more entries");
  expect_invalid(ok, 2, dup, 2, "candidate[1]: token 7: also at [0]");
  expect_invalid(pos, 2, ok, 2, "reference[1]: logprob: expected a finite number <= 0, got 0.5");
  expect_invalid(ok, 2, nan_, 1, "candidate[0]: logprob: expected a finite number <= 0");
  expect_invalid(heavy, 2, ok, 2, "reference: probabilities sum to 1.4");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical_lists),
      cmocka_unit_test(test_complete_lists_are_exact),
      cmocka_unit_test(test_truncation_bounds_from_below),
      cmocka_unit_test(test_disagreeing_top1),
      cmocka_unit_test(test_malformed_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
