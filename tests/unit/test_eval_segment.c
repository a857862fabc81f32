/*
 * test_eval_segment.c - a segment a metric cannot score is an error the caller gets
 * (eval.h, cb_eval_metric.segment and cb_eval_segment_stats), never the library
 * leaving the process: ROUGE's pair past the LCS limit scored without prepare (a
 * --baseline system's segments), SQuAD's segment without a reference, embed-cosine's
 * text that prepare did not fetch; on several threads (cb_eval_segment_stats_opts), the
 * first failing segment's error as one thread gives it, and the same rows bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/eval.h"
#include "calibench/eval_rouge.h"

static void *create(const char *name, cb_eval_option *opts, size_t n) {
  const cb_eval_metric *m = cb_eval_metric_find(name);
  assert_non_null(m);
  cb_eval_options o = {opts, n, 0, 0};
  void *state = NULL;
  cb_error err;
  assert_int_equal(m->create(&o, &state, &err), CB_OK);
  return state;
}

/* rougeL of a 46,400-word pair (46,400^2 > 2^31 cells), unprepared: CB_ERR_CAPACITY
 * naming the segment, and the corpus's rows not given. */
static void test_rouge_over_limit(void **state) {
  (void)state;
  size_t words = 46400;
  char *text = malloc(words * 2);
  assert_non_null(text);
  for (size_t i = 0; i < words; i++) {
    text[2 * i] = 'w';
    text[2 * i + 1] = ' ';
  }
  cb_eval_text ok = {"short", 5}, long_text = {text, words * 2 - 1};
  cb_eval_segment segs[2] = {{ok, &ok, 1}, {long_text, &long_text, 1}};
  cb_eval_corpus c = {.segs = segs, .n = 2, .nrefs_min = 1, .nrefs_max = 1};
  const cb_eval_metric *m = cb_eval_metric_find("rougeL");
  void *st = create("rougeL", NULL, 0);
  double stats[4] = {0};
  cb_error err = {0};
  assert_int_equal(m->segment(st, &segs[1], stats, &err), CB_ERR_CAPACITY);
  assert_non_null(strstr(err.msg, "46400 x 46400"));
  double *rows = (double *)&rows;
  assert_int_equal(cb_eval_segment_stats(m, st, &c, &rows, &err), CB_ERR_CAPACITY);
  assert_null(rows);
  assert_non_null(strstr(err.msg, "segment 2: rouge: rougeL: 46400 x 46400"));
  /* the short segment alone scores */
  c.n = 1;
  assert_int_equal(cb_eval_segment_stats(m, st, &c, &rows, &err), CB_OK);
  assert_true(rows[2] == 1.0 && rows[3] == 1.0);
  free(rows);
  m->destroy(st);
  free(text);
}

static void test_squad_without_reference(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("f1");
  void *st = create("f1", NULL, 0);
  cb_eval_segment seg = {{"an answer", 9}, NULL, 0};
  double stats[3] = {0};
  cb_error err = {0};
  assert_int_not_equal(m->segment(st, &seg, stats, &err), CB_OK);
  assert_true(err.msg[0] != 0);
  m->destroy(st);
}

/* embed-cosine's vectors come from prepare: a segment it did not see has none. */
static void test_embed_unprepared(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("embed-cosine");
  cb_eval_option url = {"embed-url", "http://127.0.0.1:9/v1", 0};
  void *st = create("embed-cosine", &url, 1);
  cb_eval_text hyp = {"cancel my order", 15}, ref = {"withdraw my purchase request", 28};
  cb_eval_segment seg = {hyp, &ref, 1};
  double stats[2] = {0};
  cb_error err = {0};
  assert_int_equal(m->segment(st, &seg, stats, &err), CB_ERR_STATE);
  assert_non_null(strstr(err.msg, "embed-cosine: a text with no vector"));
  /* the same text is 1, an empty one 0: no vector needed */
  cb_eval_segment same = {hyp, &hyp, 1};
  assert_int_equal(m->segment(st, &same, stats, &err), CB_OK);
  assert_true(stats[0] == 1.0);
  m->destroy(st);
}

/* 12 f1 segments, 6 and 10 without a reference: with 1, 3, 4, 12 and 40 threads the
 * error names segment 6 (blocks of 3 and 4 put the two in different blocks), as one
 * thread; with every reference there, bleu's and f1's rows are the same bit for bit. */
static void test_threads_first_error(void **state) {
  (void)state;
  static const char *const texts[] = {"a cat sat", "on the mat", "東京 😀 café", "", "the the the",
                                      "x y z w", "running runs", "New York", "3.5 1,000",
                                      "one two three", "well-known", "naïve Straße"};
  cb_eval_text t[12];
  cb_eval_segment segs[12];
  for (size_t i = 0; i < 12; i++) t[i] = (cb_eval_text){texts[i], strlen(texts[i])};
  for (size_t i = 0; i < 12; i++) segs[i] = (cb_eval_segment){t[(i + 1) % 12], &t[i], 1};
  cb_eval_corpus c = {.segs = segs, .n = 12, .nrefs_min = 1, .nrefs_max = 1};
  static const char *const names[] = {"bleu", "f1"};
  for (size_t k = 0; k < 2; k++) {
    const cb_eval_metric *m = cb_eval_metric_find(names[k]);
    void *st = create(names[k], NULL, 0);
    cb_error err = {0};
    double *one = NULL;
    assert_int_equal(cb_eval_segment_stats(m, st, &c, &one, &err), CB_OK);
    size_t n_stats = m->n_stats(st);
    static const int threads[] = {2, 3, 4, 12, 40};
    for (size_t i = 0; i < 5; i++) {
      cb_eval_options o = {NULL, 0, 0, threads[i]};
      double *rows = NULL;
      assert_int_equal(cb_eval_segment_stats_opts(m, st, &o, &c, &rows, &err), CB_OK);
      assert_memory_equal(rows, one, 12 * n_stats * sizeof *rows);
      free(rows);
    }
    free(one);
    m->destroy(st);
  }
  const cb_eval_metric *m = cb_eval_metric_find("f1");
  void *st = create("f1", NULL, 0);
  segs[5].nrefs = segs[9].nrefs = 0;
  segs[5].refs = segs[9].refs = NULL;
  cb_error one_err = {0};
  double *rows = (double *)&rows;
  assert_int_not_equal(cb_eval_segment_stats(m, st, &c, &rows, &one_err), CB_OK);
  assert_null(rows);
  assert_non_null(strstr(one_err.msg, "segment 6: "));
  static const int threads[] = {3, 4, 12, 40};
  for (size_t i = 0; i < 4; i++) {
    cb_eval_options o = {NULL, 0, 0, threads[i]};
    cb_error err = {0};
    rows = (double *)&rows;
    assert_int_not_equal(cb_eval_segment_stats_opts(m, st, &o, &c, &rows, &err), CB_OK);
    assert_null(rows);
    assert_string_equal(err.msg, one_err.msg);
  }
  m->destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rouge_over_limit),
      cmocka_unit_test(test_squad_without_reference),
      cmocka_unit_test(test_embed_unprepared),
      cmocka_unit_test(test_threads_first_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
