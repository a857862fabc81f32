/*
 * test_probe_quant_stats.c - probe quant's aggregates (cb_quant_summarize) against
 * llama.cpp's definitions computed here by hand on a small set, and the reading of
 * both logprobs shapes (cb_quant_parse_events): OpenAI's legacy completions arrays and
 * llama-server's entries with token ids.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/probe_quant.h"

#define N 12

static void fill(cb_quant_scored *x) {
  for (int i = 0; i < N; i++)
    x[i] = (cb_quant_scored){.kld = 0.01 * (i + 1) * (i + 1), .top1_same = i % 4 != 0,
                             .lp_ref = -0.5 - 0.05 * i, .lp_cand = -0.6 - 0.04 * i};
}

static void test_kld_and_same_top(void **state) {
  (void)state;
  cb_quant_scored x[N];
  fill(x);
  cb_quant_summary s;
  cb_error err = {0};
  assert_int_equal(cb_quant_summarize(x, N, &s, &err), CB_OK);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < N; i++) {
    sum += x[i].kld;
    sum2 += x[i].kld * x[i].kld;
  }
  double mean = sum / N, se = sqrt((sum2 / N - mean * mean) / (N - 1));
  assert_true(fabs(s.kld.value - mean) < 1e-12);
  assert_true(fabs(s.kld.se - se) < 1e-12);
  /* sorted already: median of 12 = mean of the 6th and 7th; p99 at 0.99 * 11 = 10.89 */
  assert_true(fabs(s.kld_median - 0.5 * (0.36 + 0.49)) < 1e-12);
  assert_true(fabs(s.kld_p99 - (0.11 * 1.21 + 0.89 * 1.44)) < 1e-12);
  assert_true(fabs(s.kld_max - 1.44) < 1e-12 && fabs(s.kld_min - 0.01) < 1e-12);
  /* 9 of 12 agree: p = 0.75, se sqrt(p (1 - p) / 11) */
  assert_true(fabs(s.same_top.value - 0.75) < 1e-12);
  assert_true(fabs(s.same_top.se - sqrt(0.75 * 0.25 / 11)) < 1e-12);
}

static void test_ppl_and_delta_p(void **state) {
  (void)state;
  cb_quant_scored x[N];
  fill(x);
  x[3].lp_cand = NAN; /* the token outside the candidate's list: out of the ppl sums */
  cb_quant_summary s;
  cb_error err = {0};
  assert_int_equal(cb_quant_summarize(x, N, &s, &err), CB_OK);
  assert_int_equal(s.with_token, N - 1);
  double nq = 0, nb = 0, d2 = 0, d = 0;
  for (int i = 0; i < N; i++) {
    if (i == 3) continue;
    nq -= x[i].lp_cand;
    nb -= x[i].lp_ref;
    double dp = exp(x[i].lp_cand) - exp(x[i].lp_ref);
    d += dp;
    d2 += dp * dp;
  }
  assert_true(fabs(s.ppl_cand.value - exp(nq / (N - 1))) < 1e-12);
  assert_true(fabs(s.ppl_ref.value - exp(nb / (N - 1))) < 1e-12);
  assert_true(fabs(s.delta_ppl.value - (exp(nq / (N - 1)) - exp(nb / (N - 1)))) < 1e-12);
  assert_true(fabs(s.ppl_ratio.value - exp(nq / (N - 1) - nb / (N - 1))) < 1e-12);
  assert_true(fabs(s.delta_p.value - d / (N - 1)) < 1e-12);
  assert_true(fabs(s.rms_dp.value - sqrt(d2 / (N - 1))) < 1e-12);
  assert_true(s.delta_ppl.se > 0 && s.ln_ppl_ratio.se >= 0);
  /* ten or fewer values: no uncertainty, as perplexity.cpp */
  assert_int_equal(cb_quant_summarize(x, 10, &s, &err), CB_OK);
  assert_true(s.kld.se == 0);
  assert_int_equal(cb_quant_summarize(x, 0, &s, &err), CB_ERR_INVALID);
}

static void test_parse_legacy_arrays(void **state) {
  (void)state;
  const char *ev =
      "{\"choices\":[{\"text\":\" a\",\"logprobs\":{\"tokens\":[\" a\"],\"token_logprobs\":[-0.2],"
      "\"top_logprobs\":[{\" a\":-0.2,\" b\":-1.9}],\"text_offset\":[0]}}]}\n"
      "{\"choices\":[{\"text\":\" b\",\"logprobs\":{\"tokens\":[\" b\"],\"token_logprobs\":[-0.4],"
      "\"top_logprobs\":[{\" b\":-0.4,\" a\":-1.2,\"<\\/s>\":-3}],\"text_offset\":[2]}}]}\n"
      "{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":3}}\n";
  cb_quant_token *t;
  size_t n;
  int ids;
  cb_error err = {0};
  assert_int_equal(cb_quant_parse_events(ev, &t, &n, &ids, &err), CB_OK);
  assert_int_equal(n, 2);
  assert_false(ids);
  assert_string_equal(t[1].text, " b");
  assert_true(t[1].logprob == -0.4);
  assert_int_equal(t[1].n_top, 3);
  assert_true(t[1].id == cb_quant_text_id(" b", 2) && t[1].top[0].id == t[1].id);
  assert_true(t[1].top[1].id == t[0].id); /* " a" in both: the same id */
  cb_quant_tokens_free(t, n);
}

static void test_parse_llama_entries(void **state) {
  (void)state;
  const char *ev =
      "{\"choices\":[{\"text\":\"x\",\"logprobs\":{\"content\":[{\"id\":42,\"token\":\"x\","
      "\"bytes\":[120],\"logprob\":-0.1,\"top_logprobs\":[{\"id\":42,\"token\":\"x\",\"logprob\":-0.1},"
      "{\"id\":7,\"token\":\"y\",\"logprob\":-2.5}]}]}}]}\n";
  cb_quant_token *t;
  size_t n;
  int ids;
  cb_error err = {0};
  assert_int_equal(cb_quant_parse_events(ev, &t, &n, &ids, &err), CB_OK);
  assert_int_equal(n, 1);
  assert_true(ids);
  assert_true(t[0].id == 42 && t[0].top[1].id == 7 && t[0].top[1].logprob == -2.5);
  cb_quant_tokens_free(t, n);
  /* a logprob that is not a number: the event's line and the field */
  const char *bad = "{}\n{\"choices\":[{\"logprobs\":{\"content\":[{\"token\":\"x\",\"logprob\":\"low\"}]}}]}\n";
  assert_int_equal(cb_quant_parse_events(bad, &t, &n, &ids, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "response event 2: logprobs.content[].logprob: expected a number"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kld_and_same_top),
      cmocka_unit_test(test_ppl_and_delta_p),
      cmocka_unit_test(test_parse_legacy_arrays),
      cmocka_unit_test(test_parse_llama_entries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
