/*
 * test_eval_bleu.c - BLEU against sacrebleu 2.6.0 on every vector of
 * tests/data/eval/bleu_vectors.jsonl (sacrebleu's own test cases and seeded random
 * corpora; tests/data/eval/README.md says how they were made): corpus and sentence
 * scores to 1e-9, statistics exactly, score lines and signatures character for
 * character; and the five tokenizers on bleu_tokenize.jsonl. Plus the pieces of
 * Python's str behaviour the metrics rely on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "eval/bleu_tok.h"
#include "eval/eval_text.h"
#include "test_skip.h"

static FILE *open_data(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/eval/%s", getenv("CB_DATA_DIR"), name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  return f;
}

/* Each line of a JSONL vector file, parsed; NULL at the end. */
static json_t *next_vector(FILE *f, long *line) {
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n = getline(&buf, &cap, f);
  if (n < 0) {
    free(buf);
    return NULL;
  }
  (*line)++;
  json_error_t je;
  json_t *v = json_loadb(buf, (size_t)n, 0, &je);
  if (!v) fail_msg("line %ld: %s", *line, je.text);
  free(buf);
  return v;
}

/* The vector's "options" as command-line options. */
static cb_eval_options options_of(json_t *opts, int sentence) {
  cb_eval_options o = {cb_calloc(json_object_size(opts) + 1, sizeof *o.v), 0, sentence};
  const char *key;
  json_t *val;
  json_object_foreach(opts, key, val) {
    o.v[o.n++] = (cb_eval_option){key, json_is_string(val) ? json_string_value(val) : NULL, 0};
  }
  return o;
}

static void check_close(const char *what, long line, double want, double got) {
  double d = want - got;
  if (d < 0) d = -d;
  if (d > 1e-9) fail_msg("line %ld: %s: sacrebleu %.17g, calibench %.17g", line, what, want, got);
}

static void check_result(long line, json_t *want, const cb_eval_result *r, int stats) {
  check_close("score", line, json_number_value(json_object_get(want, "score")), r->score);
  cb_buf got = {0};
  cb_eval_score_line(r, 1, &got);
  const char *want_line = json_string_value(json_object_get(want, "line"));
  if (strcmp(want_line, got.data))
    fail_msg("line %ld: score line\n  sacrebleu: %s\n  calibench: %s", line, want_line, got.data);
  cb_buf_free(&got);
  if (!stats) return;
  static const char *const exact[] = {"counts", "totals", "sys_len", "ref_len"};
  for (size_t i = 0; i < 4; i++) {
    json_t *w = json_object_get(want, exact[i]), *g = json_object_get(r->stats, exact[i]);
    if (json_is_array(w)) {
      assert_int_equal(json_array_size(w), json_array_size(g));
      for (size_t k = 0; k < json_array_size(w); k++)
        if (json_number_value(json_array_get(w, k)) != json_number_value(json_array_get(g, k)))
          fail_msg("line %ld: %s[%zu]: sacrebleu %g, calibench %g", line, exact[i], k,
                   json_number_value(json_array_get(w, k)), json_number_value(json_array_get(g, k)));
    } else if (json_number_value(w) != json_number_value(g)) {
      fail_msg("line %ld: %s: sacrebleu %g, calibench %g", line, exact[i], json_number_value(w),
               json_number_value(g));
    }
  }
  json_t *wp = json_object_get(want, "precisions"), *gp = json_object_get(r->stats, "precisions");
  for (size_t k = 0; k < json_array_size(wp); k++)
    check_close("precision", line, json_number_value(json_array_get(wp, k)),
                json_number_value(json_array_get(gp, k)));
  check_close("bp", line, json_number_value(json_object_get(want, "bp")),
              json_number_value(json_object_get(r->stats, "bp")));
}

static cb_eval_text text_of(json_t *s) {
  return (cb_eval_text){json_string_value(s), json_string_length(s)};
}

static void test_bleu_vectors(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("bleu");
  assert_non_null(m);
  FILE *f = open_data("bleu_vectors.jsonl");
  long line = 0, cases = 0, sentences = 0;
  json_t *v;
  while ((v = next_vector(f, &line))) {
    int sentence = json_is_true(json_object_get(v, "sentence"));
    cb_eval_options o = options_of(json_object_get(v, "options"), sentence);
    void *st = NULL;
    cb_error err;
    cb_error_clear(&err);
    if (m->create(&o, &st, &err) != CB_OK) fail_msg("line %ld: %s", line, err.msg);
    for (size_t i = 0; i < o.n; i++)
      if (!o.v[i].used) fail_msg("line %ld: option %s unused", line, o.v[i].name);
    size_t k = m->n_stats(st);
    cb_eval_result r = {0};
    json_t *stats = json_object_get(v, "stats");
    if (stats) { /* BLEU.compute_bleu on given statistics */
      double *s = cb_calloc(k, sizeof *s);
      assert_int_equal(json_array_size(stats), k);
      for (size_t i = 0; i < k; i++) s[i] = json_number_value(json_array_get(stats, i));
      cb_eval_sig_info sig = {"1", 0, 0};
      m->result(st, s, &sig, &r);
      check_result(line, json_object_get(v, "corpus"), &r, 1);
      cb_free(s);
    } else {
      json_t *hyps = json_object_get(v, "hyps"), *refs = json_object_get(v, "refs");
      size_t n = json_array_size(hyps), all = 0, lo = SIZE_MAX, hi = 0;
      for (size_t i = 0; i < n; i++) all += json_array_size(json_array_get(refs, i));
      cb_eval_text *rt = cb_calloc(all, sizeof *rt);
      cb_eval_corpus c = {.segs = cb_calloc(n, sizeof *c.segs), .n = n};
      for (size_t i = 0, at = 0; i < n; i++) {
        json_t *sr = json_array_get(refs, i);
        c.segs[i] = (cb_eval_segment){text_of(json_array_get(hyps, i)), rt + at, json_array_size(sr)};
        for (size_t j = 0; j < json_array_size(sr); j++) rt[at++] = text_of(json_array_get(sr, j));
        if (c.segs[i].nrefs < lo) lo = c.segs[i].nrefs;
        if (c.segs[i].nrefs > hi) hi = c.segs[i].nrefs;
      }
      c.nrefs_min = lo, c.nrefs_max = hi;
      double *rows = cb_eval_segment_stats(m, st, &c), *sum = cb_calloc(k, sizeof *sum);
      cb_eval_sum_stats(rows, n, k, sum);
      char nb[24];
      cb_eval_sig_info sig = {cb_eval_corpus_nrefs(&c, nb), 0, 0};
      m->result(st, sum, &sig, &r);
      check_result(line, json_object_get(v, "corpus"), &r, 1);
      json_t *sents = json_object_get(v, "sentences");
      for (size_t i = 0; i < json_array_size(sents); i++) {
        cb_eval_result sr = {0};
        snprintf(nb, sizeof nb, "%zu", c.segs[i].nrefs);
        cb_eval_sig_info ssig = {nb, 0, 0};
        m->result(st, rows + i * k, &ssig, &sr);
        check_result(line, json_array_get(sents, i), &sr, 0);
        cb_eval_result_free(&sr);
        sentences++;
      }
      cb_free(rows);
      cb_free(sum);
      cb_free(rt);
      cb_free(c.segs);
    }
    cb_eval_result_free(&r);
    m->destroy(st);
    cb_free(o.v);
    json_decref(v);
    cases++;
  }
  fclose(f);
  /* The file holds 42 cases from sacrebleu's tests and 120 random corpora. */
  assert_true(cases >= 160);
  assert_true(sentences >= 300);
}

static void test_bleu_tokenizers(void **state) {
  (void)state;
  FILE *f = open_data("bleu_tokenize.jsonl");
  long line = 0, cases = 0;
  json_t *v;
  cb__bleu_tok_scratch sc = {0};
  cb_buf out = {0};
  while ((v = next_vector(f, &line))) {
    int tok = cb__bleu_tok_from_name(json_string_value(json_object_get(v, "tok")));
    assert_true(tok >= 0);
    json_t *in = json_object_get(v, "in");
    cb__bleu_tokenize((cb__bleu_tok)tok, json_string_value(in), json_string_length(in), &sc, &out);
    const char *want = json_string_value(json_object_get(v, "out"));
    if (strcmp(want, out.data))
      fail_msg("line %ld (%s): sacrebleu '%s', calibench '%s'", line,
               cb__bleu_tok_name((cb__bleu_tok)tok), want, out.data);
    json_decref(v);
    cases++;
  }
  fclose(f);
  cb__bleu_tok_scratch_free(&sc);
  cb_buf_free(&out);
  assert_true(cases >= 3000);
}

/* str.lower(): capital sigma's final form and U+0130's two code points. */
static void test_python_lower(void **state) {
  (void)state;
  static const char *const cases[][2] = {
      {"\xCE\x91\xCE\xA3", "\xCE\xB1\xCF\x82"},          /* ΑΣ -> ας */
      {"\xCE\xA3", "\xCF\x83"},                          /* Σ alone -> σ */
      {"\xCE\x91\xCE\xA3\xCE\x91", "\xCE\xB1\xCF\x83\xCE\xB1"}, /* ΑΣΑ -> ασα */
      {"\xCE\x91.\xCE\xA3", "\xCE\xB1.\xCF\x82"},        /* '.' is case-ignorable */
      {"\xC4\xB0", "i\xCC\x87"},                         /* İ -> i + U+0307 */
      {"ABC xyz", "abc xyz"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_buf out = {0};
    cb__eval_lower_text(cases[i][0], strlen(cases[i][0]), &out);
    assert_string_equal(out.data, cases[i][1]);
    cb_buf_free(&out);
  }
}

/* str.split() and rstrip() whitespace: CPython's set, not C's isspace. */
static void test_python_space(void **state) {
  (void)state;
  assert_int_equal(cb__eval_space_len("\x1c", 1), 1);
  assert_int_equal(cb__eval_space_len("\xC2\x85", 2), 2);
  assert_int_equal(cb__eval_space_len("\xE3\x80\x80", 3), 3);
  assert_int_equal(cb__eval_space_len("\xE2\x80\x8B", 3), 0); /* U+200B is not a space */
  assert_int_equal(cb__eval_rstrip("a\xC2\xA0 \t", 5), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bleu_vectors),
      cmocka_unit_test(test_bleu_tokenizers),
      cmocka_unit_test(test_python_lower),
      cmocka_unit_test(test_python_space),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
