/*
 * test_sim_behavior_lm.c - the simulator's `lm` section (docs/probe.md, "lm"): its
 * answer to a prompt extended by its own first words goes on with the words that
 * followed them (the distribution is a function of the text so far, what probe quant
 * relies on when it re-feeds a continuation), and its load errors.
 */
#define _XOPEN_SOURCE 700
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
#define TEST_TMPDIR_PREFIX "cb-behavior-lm"
#include "test_sim_behavior_file.h"

static void test_load_errors(void **state) {
  (void)state;
  expect_error("lm:\n  vocab: 40\n", "b.yaml:2: key 'lm.vocab'");
  expect_error("lm:\n  vocab: 2.5\n", "b.yaml:2: key 'lm.vocab': expected a whole number");
  expect_error("lm:\n  scale: -1\n", "b.yaml:2: key 'lm.scale'");
  expect_error("lm:\n  answer_tokens: 0\n", "b.yaml:2: key 'lm.answer_tokens'");
  expect_error("lm:\n  words: 3\n", "b.yaml:2: unknown key 'lm.words'");
}

static void answer(const cb_sim_behavior *b, const char *prompt, cb_buf *out) {
  cb_buf_reset(out);
  assert_int_equal(cb_sim_behavior_answer(b, prompt, strlen(prompt), 10, 7, out), 1);
}

static void test_continuation_consistent(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("lm:\n  vocab: 8\n  answer_tokens: 6\n");
  cb_buf a, next, p;
  cb_buf_init(&a, 0);
  cb_buf_init(&next, 0);
  cb_buf_init(&p, 0);
  const char *prompt = "The harbour master counted the boats";
  answer(b, prompt, &a);
  assert_true(a.len > 0);
  /* At each of the 5 boundaries between the answer's 6 words, the prompt with the
   * answer so far is answered with the rest of the answer (and a new last word);
   * elsewhere (inside a word) the text is another context. */
  size_t consistent = 0;
  for (size_t cut = 1; cut < a.len; cut++) {
    cb_buf_reset(&p);
    cb_buf_append_str(&p, prompt);
    cb_buf_append(&p, a.data, cut);
    answer(b, p.data, &next);
    size_t rest = a.len - cut;
    consistent += next.len > rest && !memcmp(next.data, a.data + cut, rest);
  }
  assert_int_equal(consistent, 5);
  /* the same text, the same answer; another seed, another model */
  answer(b, prompt, &next);
  assert_true(next.len == a.len && !memcmp(next.data, a.data, a.len));
  cb_buf_reset(&next);
  assert_int_equal(cb_sim_behavior_answer(b, prompt, strlen(prompt), 10, 8, &next), 1);
  assert_false(next.len == a.len && !memcmp(next.data, a.data, a.len));
  cb_buf_free(&a);
  cb_buf_free(&next);
  cb_buf_free(&p);
  cb_sim_behavior_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_continuation_consistent),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
