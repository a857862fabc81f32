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

static void ter_stats_check(long line, json_t *want, const double *sum, size_t k,
                            const cb_eval_result *r) {
  (void)r;
  json_t *ws = json_object_get(want, "stats");
  assert_int_equal(json_array_size(ws), k);
  for (size_t i = 0; i < k; i++)
    if (json_number_value(json_array_get(ws, i)) != sum[i])
      fail_msg("line %ld: stats[%zu]: sacrebleu %.17g, calibench %.17g", line, i,
               json_number_value(json_array_get(ws, i)), sum[i]);
}

static void test_ter_vectors(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("ter");
  assert_non_null(m);
  FILE *f = eval_open_data("ter_vectors.jsonl");
  long line = 0, cases = 0, sentences = 0;
  json_t *v;
  while ((v = eval_next_vector(f, &line))) {
    cb_eval_options o;
    void *st = eval_create(m, v, line, &o);
    sentences += eval_replay(m, st, v, line, ter_stats_check);
    m->destroy(st);
    cb_free(o.v);
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
