/*
 * test_sim_behavior_answer.c - the simulator's `refusal` and `perturb` behaviour
 * sections (src/sim/behavior_refusal.c, behavior_perturb.c, behavior_answer.c), read
 * through the loader (sim_behavior.h): FILE:LINE errors, the refusal decision and its
 * induced-compliance share, and answers whose first-token distribution drifts with
 * the edit distance in proportion to the planted sensitivity.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim_behavior.h"
#include "calibench/workload.h"
#include "sim/behavior_answer.h"
#include "sim/behavior_perturb.h"
#define TEST_TMPDIR_PREFIX "cb-behavior-answer"
#include "test_sim_behavior_file.h"

#define VOCAB 128256u

static void test_parse_errors(void **state) {
  (void)state;
  expect_error("refusal:\n  induced_compliance: 0.3\n", "b.yaml:2: key 'refusal': needs 'triggers'");
  expect_error("refusal:\n  triggers: [a]\n  induced_compliance: 1.5\n",
               "b.yaml:3: key 'refusal.induced_compliance': must be in [0, 1]");
  expect_error("refusal:\n  triggers: [a]\n  mode: loud\n",
               "b.yaml:3: key 'refusal.mode': expected content, field or content_filter, got 'loud'");
  expect_error("refusal:\n  triggers: []\n", "b.yaml:2: key 'refusal.triggers': expected at least one");
  expect_error("refusal:\n  triggers: [a, \"\"]\n", "b.yaml:2: key 'refusal.triggers': expected a non-empty");
  expect_error("refusal:\n  triggers: [a]\n  trigger: b\n", "b.yaml:3: unknown key 'refusal.trigger'");
  expect_error("refusal: [a]\n", "b.yaml:1: key 'refusal': expected a mapping");
  expect_error("perturb:\n  sensitivity: -1\n", "b.yaml:2: key 'perturb.sensitivity': must be in");
  expect_error("perturb:\n  candidates: 2.5\n", "b.yaml:2: key 'perturb.candidates': expected a whole number");
  expect_error("perturb:\n  candidates: 21\n", "b.yaml:2: key 'perturb.candidates'");
  expect_error("perturb:\n  drift: 1\n", "b.yaml:2: unknown key 'perturb.drift'");
}

static void test_refusal_decision(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("refusal:\n  triggers: [\"forbidden topic\"]\n  induced_compliance: 0.3\n"
                               "  text: No way.\n");
  cb_buf out;
  cb_buf_init(&out, 0);
  const char *plain = "Tell me about the weather.";
  const char *trig = "Tell me about the Forbidden Topic, please.";
  assert_false(cb_sim_behavior_answer(b, plain, strlen(plain), 8, 1, &out));
  assert_true(cb_sim_behavior_answer(b, trig, strlen(trig), 8, 1, &out));
  assert_string_equal(out.data, "No way.");
  /* With an inducement, 30% comply; the same prompt, the same decision. */
  size_t n_ind;
  const char *const *ind = cb_workload_inducements(&n_ind);
  char buf[512];
  int complied = 0, trials = 2000;
  for (int i = 0; i < trials; i++) {
    snprintf(buf, sizeof buf, "Question %d on the forbidden topic. %s", i, ind[i % n_ind]);
    cb_buf_reset(&out);
    int a = cb_sim_behavior_answer(b, buf, strlen(buf), 8, 7, &out);
    assert_int_equal(a, cb_sim_behavior_answer(b, buf, strlen(buf), 8, 7, &out));
    complied += !a;
  }
  /* Binomial(2000, 0.3): sd 20.5; 4 sd either side. */
  assert_in_range(complied, 600 - 82, 600 + 82);
  cb_buf_free(&out);
  cb_sim_behavior_free(b);
  /* The forms: a content filter sends no text, the refusal field the text. */
  cb__sim_refusal r = {.text = (char *)"No.", .mode = CB__SIM_REFUSAL_FILTER};
  cb__sim_answer *a = cb__sim_refusal_answer(&r, VOCAB);
  assert_true(a->refusal && a->mode == CB__SIM_REFUSAL_FILTER);
  assert_int_equal(a->text->num_tokens, 1);
  assert_int_equal(a->text->text_len, 0);
  cb__sim_answer_free(a);
  r.mode = CB__SIM_REFUSAL_FIELD;
  a = cb__sim_refusal_answer(&r, VOCAB);
  assert_string_equal(a->text->text, "No.");
  assert_int_equal(a->text->num_tokens, 2);
  cb__sim_answer_free(a);
}

static double first_token_kl(const cb__sim_perturb *p, const char *a, const char *b) {
  double za[CB__SIM_PERTURB_MAX_CANDIDATES], zb[CB__SIM_PERTURB_MAX_CANDIDATES];
  cb__sim_perturb_logits(p, 3, a, strlen(a), 0, za);
  cb__sim_perturb_logits(p, 3, b, strlen(b), 0, zb);
  double sa = 0, sb = 0, kl = 0;
  for (int v = 0; v < p->candidates; v++) sa += exp(za[v]), sb += exp(zb[v]);
  for (int v = 0; v < p->candidates; v++) {
    double pa = exp(za[v]) / sa, pb = exp(zb[v]) / sb;
    kl += pa * log(pa / pb);
  }
  return kl;
}

/* Replace `edits` letters of s at seeded positions. */
static void edit(char *s, int edits, uint64_t seed) {
  cb_rng rng;
  cb_rng_init(&rng, seed);
  size_t n = strlen(s);
  for (int i = 0; i < edits; i++) {
    size_t at = (size_t)(cb_rng_uniform(&rng) * (double)n);
    s[at] = s[at] == 'q' ? 'z' : 'q';
  }
}

static void test_perturb_drift(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("perturb:\n  sensitivity: 1\n  answer_tokens: 6\n");
  const char *prompt = "What is the capital city of the country north of the river?";
  cb_buf x, y;
  cb_buf_init(&x, 0);
  cb_buf_init(&y, 0);
  assert_true(cb_sim_behavior_answer(b, prompt, strlen(prompt), 12, 3, &x));
  assert_true(cb_sim_behavior_answer(b, prompt, strlen(prompt), 12, 3, &y));
  assert_string_equal(x.data, y.data); /* a function of the prompt */
  cb_buf_free(&x);
  cb_buf_free(&y);
  cb_sim_behavior_free(b);

  cb__sim_perturb p = {.sensitivity = 1, .answer_tokens = 6, .candidates = 8};
  cb__sim_answer *a = cb__sim_perturb_answer(&p, 3, prompt, strlen(prompt), VOCAB);
  assert_int_equal(a->text->num_tokens, 6);
  assert_int_equal(a->text->ends[5], strlen(a->text->text));
  double total = 0;
  for (int v = 0; v < 8; v++) {
    total += exp(a->logprob[v]);
    if (v) assert_true(a->logprob[v] <= a->logprob[v - 1]);
  }
  assert_true(fabs(total - 1) < 1e-9);
  /* The chosen token is the most likely candidate. */
  assert_memory_equal(a->text->text, a->cand[0], strlen(a->cand[0]));
  cb__sim_answer_free(a);

  /* Mean KL of the first token over 200 prompts: grows with the edits and with the
   * sensitivity (about as its square). */
  double kl[3][3] = {{0}};
  const double sens[3] = {0.5, 1, 2};
  const int edits[3] = {1, 4, 16};
  for (int si = 0; si < 3; si++) {
    p.sensitivity = sens[si];
    for (int ei = 0; ei < 3; ei++) {
      for (int i = 0; i < 200; i++) {
        char clean[128], dirty[128];
        snprintf(clean, sizeof clean, "Prompt number %d asks about item %d and its colour.", i, i * 7);
        memcpy(dirty, clean, sizeof clean);
        edit(dirty, edits[ei], (uint64_t)i);
        kl[si][ei] += first_token_kl(&p, clean, dirty) / 200;
      }
    }
  }
  for (int si = 0; si < 3; si++)
    for (int ei = 0; ei < 3; ei++) {
      if (ei) assert_true(kl[si][ei] > 1.5 * kl[si][ei - 1]);
      if (si) assert_true(kl[si][ei] > 2.5 * kl[si - 1][ei]);
    }
  p.sensitivity = 0;
  assert_true(first_token_kl(&p, "abcdef", "xyzxyz") == 0);
}

/* A refused prompt stays refused however the perturb section would answer it. */
static void test_refusal_before_perturb(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("perturb:\n  sensitivity: 1\nrefusal:\n  triggers: [secret]\n"
                               "  text: Refused.\n");
  cb_buf out;
  cb_buf_init(&out, 0);
  assert_true(cb_sim_behavior_answer(b, "the secret", 10, 3, 1, &out));
  assert_string_equal(out.data, "Refused.");
  cb_buf_reset(&out);
  assert_true(cb_sim_behavior_answer(b, "the public", 10, 3, 1, &out));
  assert_string_not_equal(out.data, "Refused.");
  cb_buf_free(&out);
  cb_sim_behavior_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_refusal_decision),
      cmocka_unit_test(test_perturb_drift),
      cmocka_unit_test(test_refusal_before_perturb),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
