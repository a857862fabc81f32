/*
 * test_eval_vectors.h - replaying reference vectors (the JSONL files of tests/data/eval, made by
 * scripts/gen_eval_vectors_sacrebleu.py) through a metric of the table: one record
 * per line with "options", "sentence", "hyps", "refs" (per segment, its list) and the
 * reference's "corpus" and "sentences" results. Include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_EVAL_VECTORS_H
#define CALIBENCH_TEST_EVAL_VECTORS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"

static FILE *eval_open_data(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/eval/%s", getenv("CB_DATA_DIR"), name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  return f;
}

/* The next record of a JSONL vector file; NULL at the end. */
static json_t *eval_next_vector(FILE *f, long *line) {
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

/* The vector's "options" as command-line options (strings are values, true a flag). */
static cb_eval_options eval_options_of(json_t *opts, int sentence) {
  cb_eval_options o = {cb_calloc(json_object_size(opts) + 1, sizeof *o.v), 0, sentence, 0};
  const char *key;
  json_t *val;
  json_object_foreach(opts, key, val) {
    o.v[o.n++] = (cb_eval_option){key, json_is_string(val) ? json_string_value(val) : NULL, 0};
  }
  return o;
}

static void eval_check_close(const char *what, long line, double want, double got) {
  double d = want - got;
  if (d < 0) d = -d;
  if (d > 1e-9) fail_msg("line %ld: %s: reference %.17g, calibench %.17g", line, what, want, got);
}

/* Score to 1e-9 and the score line (with its signature) character for character. */
static void eval_check_line_iv(long line, json_t *want, const cb_eval_result *r,
                               const cb_eval_interval *iv) {
  eval_check_close("score", line, json_number_value(json_object_get(want, "score")), r->score);
  cb_buf got = {0};
  cb_eval_score_line(r, 1, iv, &got);
  const char *want_line = json_string_value(json_object_get(want, "line"));
  if (strcmp(want_line, got.data))
    fail_msg("line %ld: score line\n  reference: %s\n  calibench: %s", line, want_line, got.data);
  cb_buf_free(&got);
}

static inline void eval_check_line(long line, json_t *want, const cb_eval_result *r) {
  eval_check_line_iv(line, want, r, NULL);
}

/* A metric instance for the vector, every option consumed. */
static void *eval_create(const cb_eval_metric *m, json_t *v, long line, cb_eval_options *o) {
  *o = eval_options_of(json_object_get(v, "options"), json_is_true(json_object_get(v, "sentence")));
  void *st = NULL;
  cb_error err;
  cb_error_clear(&err);
  if (m->create(o, &st, &err) != CB_OK) fail_msg("line %ld: %s", line, err.msg);
  for (size_t i = 0; i < o->n; i++)
    if (!o->v[i].used) fail_msg("line %ld: option %s unused", line, o->v[i].name);
  return st;
}

/* Callback on each corpus result: the metric-specific checks of its statistics. */
typedef void (*eval_stats_check)(long line, json_t *want, const double *sum, size_t k,
                                 const cb_eval_result *r);

/* The eval_stats_check of metrics whose vectors carry the reference's summed statistics
 * ("stats"): each equal to calibench's exactly. */
static inline void eval_stats_exact(long line, json_t *want, const double *sum, size_t k,
                                    const cb_eval_result *r) {
  (void)r;
  json_t *ws = json_object_get(want, "stats");
  assert_int_equal(json_array_size(ws), k);
  for (size_t i = 0; i < k; i++)
    if (json_number_value(json_array_get(ws, i)) != sum[i])
      fail_msg("line %ld: stats[%zu]: sacrebleu %.17g, calibench %.17g", line, i,
               json_number_value(json_array_get(ws, i)), sum[i]);
}

/* The corpus of a vector's hypotheses (the array `hyps`) and "refs"; the texts stay
 * the vector's. Free with eval_corpus_free. */
static inline cb_eval_corpus eval_corpus_of(json_t *hyps, json_t *refs) {
  size_t n = json_array_size(hyps), all = 0, lo = SIZE_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) all += json_array_size(json_array_get(refs, i));
  cb_eval_text *rt = cb_calloc(all + 1, sizeof *rt);
  cb_eval_corpus c = {.segs = cb_calloc(n, sizeof *c.segs), .n = n, .ref_texts = rt};
  for (size_t i = 0, at = 0; i < n; i++) {
    json_t *sr = json_array_get(refs, i), *h = json_array_get(hyps, i);
    c.segs[i] = (cb_eval_segment){{json_string_value(h), json_string_length(h)}, rt + at,
                                  json_array_size(sr)};
    for (size_t j = 0; j < json_array_size(sr); j++) {
      json_t *r = json_array_get(sr, j);
      rt[at++] = (cb_eval_text){json_string_value(r), json_string_length(r)};
    }
    if (c.segs[i].nrefs < lo) lo = c.segs[i].nrefs;
    if (c.segs[i].nrefs > hi) hi = c.segs[i].nrefs;
  }
  c.nrefs_min = lo, c.nrefs_max = hi;
  return c;
}

static inline void eval_corpus_free(cb_eval_corpus *c) {
  cb_free(c->segs);
  cb_free(c->ref_texts);
}

/* Replays one hyps/refs vector: the corpus result and every sentence result. Returns
 * the number of sentences checked. */
static inline long eval_replay(const cb_eval_metric *m, void *st, json_t *v, long line,
                        eval_stats_check check) {
  size_t k = m->n_stats(st);
  cb_eval_corpus c = eval_corpus_of(json_object_get(v, "hyps"), json_object_get(v, "refs"));
  size_t n = c.n;
  double *rows, *sum = cb_calloc(k, sizeof *sum);
  cb_error err;
  if (cb_eval_segment_stats(m, st, &c, &rows, &err) != CB_OK)
    fail_msg("vector at line %ld: %s", line, err.msg);
  cb_eval_sum_stats(rows, n, k, sum);
  char nb[24];
  cb_eval_sig_info sig = {.nrefs = cb_eval_corpus_nrefs(&c, nb)};
  cb_eval_result r = {0};
  m->result(st, sum, &sig, &r);
  json_t *want = json_object_get(v, "corpus");
  eval_check_line(line, want, &r);
  if (check) check(line, want, sum, k, &r);
  cb_eval_result_free(&r);
  json_t *sents = json_object_get(v, "sentences");
  for (size_t i = 0; i < json_array_size(sents); i++) {
    cb_eval_result sr = {0};
    snprintf(nb, sizeof nb, "%zu", c.segs[i].nrefs);
    cb_eval_sig_info ssig = {.nrefs = nb};
    m->result(st, rows + i * k, &ssig, &sr);
    eval_check_line(line, json_array_get(sents, i), &sr);
    cb_eval_result_free(&sr);
  }
  cb_free(rows);
  cb_free(sum);
  eval_corpus_free(&c);
  return (long)json_array_size(sents);
}

/* Replays vector v with the metric named `metric` (NULL: the one the vector names in
 * "metric"): a fresh instance of its options, eval_replay, the instance freed. Returns
 * the sentences checked. */
static inline long eval_replay_vector(const char *metric, json_t *v, long line,
                                      eval_stats_check check) {
  if (!metric) metric = json_string_value(json_object_get(v, "metric"));
  const cb_eval_metric *m = metric ? cb_eval_metric_find(metric) : NULL;
  if (!m) fail_msg("line %ld: no metric %s", line, metric ? metric : "named");
  cb_eval_options o;
  void *st = eval_create(m, v, line, &o);
  long sentences = eval_replay(m, st, v, line, check);
  m->destroy(st);
  cb_free(o.v);
  return sentences;
}

#endif
