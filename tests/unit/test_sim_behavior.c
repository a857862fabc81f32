/*
 * test_sim_behavior.c - the simulator's planted behaviour (sim_behavior.h): the
 * loader's FILE:LINE errors, and the context section's recall by length and depth,
 * recovered from many prompts against its formula (docs/probe.md, "context").
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

#include "calibench/buf.h"
#include "calibench/sim_behavior.h"
#define TEST_TMPDIR_PREFIX "cb-behavior"
#include "test_sim_behavior_file.h"

static void test_load_errors(void **state) {
  (void)state;
  expect_error("context:\n  breakpoint_tokens: 100\nbogus: 1\n", "b.yaml:3: unknown key 'bogus'");
  expect_error("context:\n  breakpoint_tokens: 100\n  widht: 3\n",
               "b.yaml:3: unknown key 'context.widht' (known: breakpoint_tokens, width_tokens, "
               "recall, middle_dip, distractor_penalty, distractor_window_tokens)");
  expect_error("context:\n  breakpoint_tokens: 100\n  recall: 1.5\n", "b.yaml:3: key 'context.recall'");
  expect_error("context:\n  breakpoint_tokens: many\n", "b.yaml:2: key 'context.breakpoint_tokens'");
  expect_error("context:\n  width_tokens: 10\n", "key 'breakpoint_tokens' is required");
  expect_error("context: 3\n", "b.yaml:1: key 'context': expected a mapping");
  expect_error("- context\n", "b.yaml:1: expected a mapping of sections");
  expect_error("context:\n  breakpoint_tokens: 1\n  breakpoint_tokens: 2\n", "b.yaml:3");
  expect_error("", "empty file");
  cb_sim_behavior *b = load_ok("seed: 3\ncontext:\n  breakpoint_tokens: 100\n");
  cb_sim_behavior_free(b);
}

/* A RULER-style prompt: filler, the needle at depth d of `words` filler words, the
 * question. */
static void needle_prompt(cb_buf *p, int trial, double depth, int words, int values) {
  cb_buf_reset(p);
  cb_buf_append_str(p, "Some special magic numbers are hidden within the following text.\n");
  int at = (int)(depth * words);
  for (int w = 0; w <= words; w++) {
    if (w == at)
      for (int v = 0; v < values; v++)
        cb_buf_appendf(p, "One of the special magic numbers for key-%d is: %07d. ", trial,
                       1000000 + trial * 10 + v);
    if (w < words) cb_buf_appendf(p, "word%d ", w % 97);
  }
  cb_buf_appendf(p, "\nWhat are all the special magic numbers for key-%d mentioned in the "
                    "provided text?", trial);
}

/* Share of `n` trials whose answer holds the value, prompts of `tokens` tokens. */
static double recall_rate_in(const cb_sim_behavior *b, int n, double depth, int64_t tokens,
                             uint64_t seed, int words) {
  cb_buf p = {0}, out = {0};
  int hit = 0;
  for (int t = 0; t < n; t++) {
    needle_prompt(&p, t, depth, words, 1);
    cb_buf_reset(&out);
    assert_int_equal(cb_sim_behavior_answer(b, p.data, p.len, tokens, seed, &out), 1);
    char value[16];
    snprintf(value, sizeof value, "%07d", 1000000 + t * 10);
    hit += strstr(out.data, value) != NULL;
  }
  cb_buf_free(&p);
  cb_buf_free(&out);
  return (double)hit / n;
}

static double recall_rate(const cb_sim_behavior *b, int n, double depth, int64_t tokens,
                          uint64_t seed) {
  return recall_rate_in(b, n, depth, tokens, seed, 200);
}

static void test_context_recall_by_length(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("context:\n  breakpoint_tokens: 24000\n  width_tokens: 2000\n"
                               "  recall: 0.9\n");
  const int n = 2000;
  /* planted: 0.9 up to the breakpoint, 0.45 at breakpoint + width/2, ~0.006 at + width.
   * Bounds: 4.5 binomial standard deviations (sd <= 0.0112 for n = 2000). */
  double short_rate = recall_rate(b, n, 0.3, 4000, 1);
  double at_bp = recall_rate(b, n, 0.3, 24000, 1);
  double mid = recall_rate(b, n, 0.3, 25000, 1);
  double past = recall_rate(b, n, 0.3, 26000, 1);
  assert_true(fabs(short_rate - 0.9) < 0.04);
  assert_true(fabs(at_bp - 0.9) < 0.04);
  assert_true(fabs(mid - 0.45) < 0.05);
  assert_true(past < 0.02);
  /* Deterministic per seed: the same rate twice; another seed draws anew. */
  assert_true(recall_rate(b, n, 0.3, 25000, 1) == mid);
  assert_true(recall_rate(b, n, 0.3, 25000, 2) != mid);
  cb_sim_behavior_free(b);
}

static void test_context_middle_dip(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("context:\n  breakpoint_tokens: 24000\n  recall: 1\n"
                               "  middle_dip: 0.4\n");
  /* Depth is the needle's offset over the question's: a long filler makes the
   * preamble's share of it negligible (0.2%). */
  const int n = 1000, words = 3000;
  assert_true(recall_rate_in(b, n, 0.0, 1000, 1, words) > 0.98);
  assert_true(fabs(recall_rate_in(b, n, 0.5, 1000, 1, words) - 0.6) < 0.07);   /* 1 - 0.4 */
  assert_true(fabs(recall_rate_in(b, n, 0.25, 1000, 1, words) - 0.7) < 0.07);  /* 1 - 0.4 * 0.75 */
  assert_true(recall_rate_in(b, n, 1.0, 1000, 1, words) > 0.98);
  cb_sim_behavior_free(b);
}

static void test_context_answers(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("context:\n  breakpoint_tokens: 1000\n  recall: 1\n"
                               "  distractor_penalty: 1\n  distractor_window_tokens: 50\n");
  cb_buf p = {0}, out = {0};
  /* Multi-value: both values listed. */
  needle_prompt(&p, 7, 0.5, 100, 2);
  assert_int_equal(cb_sim_behavior_answer(b, p.data, p.len, 500, 0, &out), 1);
  assert_non_null(strstr(out.data, "1000070"));
  assert_non_null(strstr(out.data, "1000071"));
  assert_non_null(strstr(out.data, "for key-7 mentioned in the provided text are:"));
  /* A distractor of another key next to the needle: penalty 1 loses it. */
  cb_buf_reset(&p);
  cb_buf_append_str(&p, "One of the special magic numbers for other is: 5555555. "
                        "One of the special magic numbers for mine is: 1234567. filler filler\n"
                        "What are all the special magic numbers for mine mentioned in the provided text?");
  cb_buf_reset(&out);
  assert_int_equal(cb_sim_behavior_answer(b, p.data, p.len, 100, 0, &out), 1);
  assert_null(strstr(out.data, "1234567"));
  assert_null(strstr(out.data, "5555555"));
  /* Hundreds of distractors far from the needle (a pressure run's): the needle after
   * all of them is still found and recalled. */
  cb_buf_reset(&p);
  for (int i = 0; i < 300; i++)
    cb_buf_appendf(&p, "One of the special magic numbers for other-%d is: %07d. ", i, 2000000 + i);
  for (int i = 0; i < 200; i++) cb_buf_append_str(&p, "filler words here. ");
  cb_buf_append_str(&p, "One of the special magic numbers for last is: 7654321. \n"
                        "What are all the special magic numbers for last mentioned in the provided text?");
  cb_buf_reset(&out);
  assert_int_equal(cb_sim_behavior_answer(b, p.data, p.len, 900, 0, &out), 1);
  assert_non_null(strstr(out.data, "7654321"));
  /* No question: not the context section's prompt. */
  cb_buf_reset(&out);
  assert_int_equal(cb_sim_behavior_answer(b, "hello there", 11, 3, 0, &out), 0);
  assert_int_equal(out.len, 0);
  cb_buf_free(&p);
  cb_buf_free(&out);
  cb_sim_behavior_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_context_recall_by_length),
      cmocka_unit_test(test_context_middle_dip),
      cmocka_unit_test(test_context_answers),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
