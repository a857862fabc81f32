/*
 * test_eval_bootstrap.c - confidence intervals and paired tests against sacrebleu
 * 2.6.0 with numpy 1.24.2 (tests/data/eval/bootstrap_vectors.jsonl,
 * tests/data/eval/README.md):
 *  - numpy's generator draw for draw: PCG64 seeded by SeedSequence, choice(n) by
 *    Lemire's method on 32-bit halves, integers(2, dtype=bool) bit by bit;
 *  - --bootstrap (corpus_score with n_bootstrap): the score line with its
 *    " (μ = MEAN ± CI)" character for character, mean and half-width;
 *  - --paired-bs and --paired-ar (PairedTest): scores, intervals, p-values.
 * BLEU's statistics are integers, summed exactly in sacrebleu's float32 too, so its
 * intervals and p-values must be equal to 1e-9. sacrebleu scores chrF's and TER's
 * resamples in numpy float32 arithmetic, calibench in double: there the intervals
 * must agree to 1e-5 (the printed digits) and the p-values exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>

#include <cmocka.h>

#include "eval/nprng.h"
#include "test_eval_vectors.h"
#include "test_skip.h"

static void check_draws(json_t *v, long line) {
  const char *kind = json_string_value(json_object_get(v, "kind"));
  uint64_t seed = (uint64_t)json_integer_value(json_object_get(v, "seed"));
  json_t *draws = json_object_get(v, "draws");
  cb__nprng g;
  cb__nprng_init(&g, seed);
  for (size_t i = 0; i < json_array_size(draws); i++) {
    json_t *d = json_array_get(draws, i);
    uint64_t want, got;
    if (!strcmp(kind, "raw64")) {
      want = strtoull(json_string_value(d), NULL, 10);
      got = cb__nprng_next64(&g);
    } else if (!strcmp(kind, "choice")) {
      want = (uint64_t)json_integer_value(d);
      got = cb__nprng_below(&g, (uint32_t)json_integer_value(json_object_get(v, "n")));
    } else {
      want = (uint64_t)json_integer_value(d);
      got = (uint64_t)cb__nprng_bool(&g);
    }
    if (want != got)
      fail_msg("line %ld (%s, seed %" PRIu64 "): draw %zu: numpy %" PRIu64 ", calibench %" PRIu64,
               line, kind, seed, i, want, got);
  }
}

static double tolerance(const char *metric) { return !strcmp(metric, "bleu") ? 1e-9 : 1e-5; }

static void check_iv(long line, const char *what, json_t *want, const cb_eval_interval *iv, double tol) {
  double dm = json_number_value(json_object_get(want, "mean")) - iv->mean;
  double dc = json_number_value(json_object_get(want, "ci")) - iv->ci;
  if (dm > tol || dm < -tol || dc > tol || dc < -tol)
    fail_msg("line %ld: %s: sacrebleu mean %.17g ci %.17g, calibench %.17g %.17g", line, what,
             json_number_value(json_object_get(want, "mean")),
             json_number_value(json_object_get(want, "ci")), iv->mean, iv->ci);
}

static void check_bootstrap(json_t *v, long line) {
  const char *name = json_string_value(json_object_get(v, "metric"));
  const cb_eval_metric *m = cb_eval_metric_find(name);
  assert_non_null(m);
  cb_eval_options o;
  void *st = eval_create(m, v, line, &o);
  size_t k = m->n_stats(st);
  uint64_t seed = (uint64_t)json_integer_value(json_object_get(v, "seed"));
  long samples = (long)json_integer_value(json_object_get(v, "samples"));
  cb_eval_corpus c = eval_corpus_of(json_object_get(v, "hyps"), json_object_get(v, "refs"));
  cb_eval_corpus b = eval_corpus_of(json_object_get(v, "baseline"), json_object_get(v, "refs"));
  double *rows, *brows;
  cb_error err;
  assert_int_equal(cb_eval_segment_stats(m, st, &c, &rows, &err), CB_OK);
  assert_int_equal(cb_eval_segment_stats(m, st, &b, &brows, &err), CB_OK);
  double *sum = cb_calloc(k, sizeof *sum);
  cb_eval_sum_stats(rows, c.n, k, sum);
  char nb[24];
  cb_eval_sig_info sig = {.nrefs = cb_eval_corpus_nrefs(&c, nb), .bootstrap = samples, .seed = seed};
  cb_eval_result r = {0};
  m->result(st, sum, &sig, &r);
  cb_eval_interval iv = cb_eval_bootstrap(m, st, rows, c.n, k, samples, seed);
  json_t *want = json_object_get(v, "corpus");
  eval_check_line_iv(line, want, &r, &iv);
  check_iv(line, "bootstrap", want, &iv, tolerance(name));
  cb_eval_result_free(&r);
  for (int ar = 0; ar < 2; ar++) {
    json_t *pw = json_object_get(v, ar ? "paired_ar" : "paired_bs");
    long n = (long)json_integer_value(json_object_get(pw, "samples"));
    cb_eval_paired p = ar ? cb_eval_paired_ar(m, st, brows, rows, c.n, k, n, seed)
                          : cb_eval_paired_bs(m, st, brows, rows, c.n, k, n, seed);
    json_t *wb = json_object_get(pw, "baseline"), *ws = json_object_get(pw, "system");
    eval_check_close("paired baseline", line, json_number_value(json_object_get(wb, "score")), p.baseline);
    eval_check_close("paired system", line, json_number_value(json_object_get(ws, "score")), p.system);
    if (json_number_value(json_object_get(pw, "p_value")) != p.p_value)
      fail_msg("line %ld: paired %s p: sacrebleu %.17g, calibench %.17g", line, ar ? "ar" : "bs",
               json_number_value(json_object_get(pw, "p_value")), p.p_value);
    if (!ar) {
      check_iv(line, "paired bs baseline", wb, &p.baseline_ci, tolerance(name));
      check_iv(line, "paired bs system", ws, &p.system_ci, tolerance(name));
    }
    cb_eval_sig_info psig = {.nrefs = sig.nrefs, .seed = seed};
    if (ar) psig.ar = n;
    else psig.bootstrap = n;
    cb_eval_result pr = {0};
    m->result(st, sum, &psig, &pr);
    const char *want_sig = json_string_value(json_object_get(pw, "signature"));
    if (strcmp(want_sig, pr.signature.data))
      fail_msg("line %ld: paired signature\n  sacrebleu: %s\n  calibench: %s", line, want_sig,
               pr.signature.data);
    cb_eval_result_free(&pr);
  }
  cb_free(sum);
  cb_free(rows);
  cb_free(brows);
  eval_corpus_free(&c);
  eval_corpus_free(&b);
  m->destroy(st);
  cb_free(o.v);
}

static void test_bootstrap_vectors(void **state) {
  (void)state;
  FILE *f = eval_open_data("bootstrap_vectors.jsonl");
  long line = 0, draws = 0, boots = 0;
  json_t *v;
  while ((v = eval_next_vector(f, &line))) {
    if (!strcmp(json_string_value(json_object_get(v, "kind")), "bootstrap")) {
      check_bootstrap(v, line);
      boots++;
    } else {
      check_draws(v, line);
      draws++;
    }
    json_decref(v);
  }
  fclose(f);
  assert_true(draws >= 32);
  assert_true(boots >= 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bootstrap_vectors),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
