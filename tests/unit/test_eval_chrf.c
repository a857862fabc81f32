/*
 * test_eval_chrf.c - chrF and chrF++ against sacrebleu 2.6.0 on every vector of
 * tests/data/eval/chrf_vectors.jsonl (sacrebleu's test/test_chrf.py cases and seeded
 * random corpora; tests/data/eval/README.md): corpus and sentence scores to 1e-9, the
 * summed [hyp, ref, match] statistics of every order exactly, score lines and
 * signatures character for character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_eval_vectors.h"
#include "test_skip.h"

static void test_chrf_vectors(void **state) {
  (void)state;
  FILE *f = eval_open_data("chrf_vectors.jsonl");
  long line = 0, cases = 0, sentences = 0, plus = 0;
  json_t *v;
  while ((v = eval_next_vector(f, &line))) {
    plus += !strcmp(json_string_value(json_object_get(v, "metric")), "chrf++");
    sentences += eval_replay_vector(NULL, v, line, eval_stats_exact);
    json_decref(v);
    cases++;
  }
  fclose(f);
  /* 25 cases from sacrebleu's tests, 48 random corpora (half chrF++). */
  assert_true(cases >= 73);
  assert_true(plus >= 24);
  assert_true(sentences >= 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chrf_vectors),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
