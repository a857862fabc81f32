/*
 * test_eval_ter.c - TER against sacrebleu 2.6.0 on every vector of
 * tests/data/eval/ter_vectors.jsonl (sacrebleu's test/test_ter.py and
 * test/test_tokenizer_ter.py cases, seeded random corpora with moved blocks, very
 * different lengths and long runs of repeated words; tests/data/eval/README.md):
 * corpus and sentence scores to 1e-9, the summed edits and reference lengths
 * exactly, score lines and signatures character for character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_eval_vectors.h"
#include "test_skip.h"

static void test_ter_vectors(void **state) {
  (void)state;
  FILE *f = eval_open_data("ter_vectors.jsonl");
  long line = 0, cases = 0, sentences = 0;
  json_t *v;
  while ((v = eval_next_vector(f, &line))) {
    sentences += eval_replay_vector("ter", v, line, eval_stats_exact);
    json_decref(v);
    cases++;
  }
  fclose(f);
  /* 11 cases from sacrebleu's tests, 48 random corpora. */
  assert_true(cases >= 59);
  assert_true(sentences >= 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ter_vectors),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
