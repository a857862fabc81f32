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
#include "eval/ngram.h"
#include "test_eval_vectors.h"
#include "test_skip.h"

/* BLEU's statistics as sacrebleu reports them: counts, totals and lengths exactly,
 * precisions and brevity penalty to 1e-9. */
static void check_bleu_stats(long line, json_t *want, const cb_eval_result *r) {
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
    eval_check_close("precision", line, json_number_value(json_array_get(wp, k)),
                     json_number_value(json_array_get(gp, k)));
  eval_check_close("bp", line, json_number_value(json_object_get(want, "bp")),
                   json_number_value(json_object_get(r->stats, "bp")));
}

static void bleu_stats_check(long line, json_t *want, const double *sum, size_t k,
                             const cb_eval_result *r) {
  (void)sum, (void)k;
  check_bleu_stats(line, want, r);
}

static void test_bleu_vectors(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("bleu");
  assert_non_null(m);
  FILE *f = eval_open_data("bleu_vectors.jsonl");
  long line = 0, cases = 0, sentences = 0;
  json_t *v;
  while ((v = eval_next_vector(f, &line))) {
    cb_eval_options o;
    void *st = eval_create(m, v, line, &o);
    json_t *stats = json_object_get(v, "stats");
    if (stats) { /* BLEU.compute_bleu on given statistics */
      size_t k = m->n_stats(st);
      double *s = cb_calloc(k, sizeof *s);
      assert_int_equal(json_array_size(stats), k);
      for (size_t i = 0; i < k; i++) s[i] = json_number_value(json_array_get(stats, i));
      cb_eval_sig_info sig = {.nrefs = "1"};
      cb_eval_result r = {0};
      m->result(st, s, &sig, &r);
      eval_check_line(line, json_object_get(v, "corpus"), &r);
      check_bleu_stats(line, json_object_get(v, "corpus"), &r);
      cb_eval_result_free(&r);
      cb_free(s);
    } else {
      sentences += eval_replay(m, st, v, line, bleu_stats_check);
    }
    m->destroy(st);
    cb_free(o.v);
    json_decref(v);
    cases++;
  }
  fclose(f);
  /* The file holds 46 cases from sacrebleu's tests and 120 random corpora. */
  assert_true(cases >= 166);
  assert_true(sentences >= 300);
}

static void test_bleu_tokenizers(void **state) {
  (void)state;
  FILE *f = eval_open_data("bleu_tokenize.jsonl");
  long line = 0, cases = 0;
  json_t *v;
  cb__bleu_tok_scratch sc = {0};
  cb_buf out = {0};
  while ((v = eval_next_vector(f, &line))) {
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
  assert_true(cases >= 3700);
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

/* s.split() by cb__eval_word_spans (BLEU's tokens), which scans runs of ASCII word
 * bytes in one piece, against the words cb__eval_next_word gives (str.split's words
 * one by one), on seeded random strings of ASCII, Unicode whitespace (every kind
 * str.split splits on) and other non-ASCII characters. */
static void test_word_spans(void **state) {
  (void)state;
  static const char *const pieces[] = {
      "a", "word", "x.y", "\xC3\xA9t\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "!", "\x7F", " ", "  ",
      "\t", "\n", "\v", "\f", "\r", "\x1C", "\x1D", "\x1E", "\x1F", "\xC2\x85", "\xC2\xA0",
      "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x8A", "\xE2\x80\x8B", "\xE2\x80\xA8", "\xE2\x80\xA9",
      "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80", "\xC2\x84", "\x01", "\x20\x21", "abcdefghijklmnop"};
  uint64_t x = 20261203;
  cb__bleu_tok_scratch sc = {0};
  for (int iter = 0; iter < 20000; iter++) {
    char text[1024];
    size_t n = 0;
    for (int k = (int)((x >> 40) % 24); k >= 0; k--) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const char *p = pieces[(x >> 33) % (sizeof pieces / sizeof *pieces)];
      size_t l = strlen(p);
      memcpy(text + n, p, l);
      n += l;
    }
    size_t count = cb__eval_word_spans(text, n, &sc), k = 0, pos = 0, st, en;
    while (cb__eval_next_word(text, n, &pos, &st, &en)) {
      if (k >= count || sc.spans[k].at != st || sc.spans[k].len != en - st)
        fail_msg("iteration %d: '%.*s': word %zu is [%zu, %zu), spans gave %s", iter, (int)n, text, k, st,
                 en, k < count ? "another" : "none");
      k++;
    }
    if (k != count) fail_msg("iteration %d: '%.*s': %zu words, %zu spans", iter, (int)n, text, k, count);
  }
  cb__bleu_tok_scratch_free(&sc);
}

/* BLEU's statistics of random segments (words of a small vocabulary, --tokenize none,
 * 1-3 references, orders 1-6) against counting by brute force: per order the
 * hypothesis' n-grams, each matched up to its highest count in one reference (bleu.py
 * _compute_segment_statistics). The references' words are partly missing from the
 * hypothesis, so the n-grams BLEU leaves out of its trie (those with a word the
 * hypothesis lacks) sit at every place: first, last, alone, in runs. */
static uint64_t bf_state = 20261203;
static uint32_t bf_rnd(uint32_t n) {
  bf_state = bf_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(bf_state >> 33) % n;
}

static size_t bf_count(const uint32_t *w, size_t len, const uint32_t *g, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i + n <= len; i++) c += !memcmp(w + i, g, n * sizeof *g);
  return c;
}

static void test_bleu_brute_force(void **state) {
  (void)state;
  static const char *const vocab[] = {"a", "b", "c", "d", "e", "f", "x", "y", "z"};
  const cb_eval_metric *m = cb_eval_metric_find("bleu");
  for (long order = 1; order <= 6; order++) {
    char order_s[4];
    snprintf(order_s, sizeof order_s, "%ld", order);
    cb_eval_option ov[] = {{"max-ngram-order", order_s, 0}, {"tokenize", "none", 0}};
    cb_eval_options o = {ov, 2, 0, 0};
    void *st = NULL;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(m->create(&o, &st, &err), CB_OK);
    size_t k = m->n_stats(st);
    for (int seg = 0; seg < 300; seg++) {
      uint32_t w[4][40];
      size_t len[4];
      char text[4][160];
      cb_eval_text refs[3];
      size_t nrefs = 1 + bf_rnd(3);
      for (size_t t = 0; t <= nrefs; t++) { /* t 0: the hypothesis, of a-f only */
        len[t] = bf_rnd(40);
        size_t at = 0;
        for (size_t i = 0; i < len[t]; i++) {
          w[t][i] = t && i < len[0] && bf_rnd(3) ? w[0][i] : bf_rnd(t ? 9 : 6);
          at += (size_t)snprintf(text[t] + at, sizeof text[t] - at, "%s ", vocab[w[t][i]]);
        }
        text[t][at] = 0;
        if (t) refs[t - 1] = (cb_eval_text){text[t], at};
      }
      cb_eval_segment sg = {{text[0], strlen(text[0])}, refs, nrefs};
      double got[2 + 2 * 6] = {0}, want[2 + 2 * 6] = {0};
      assert_int_equal(m->segment(st, &sg, got, &err), CB_OK);
      want[0] = (double)len[0];
      size_t best = len[1];
      for (size_t t = 1; t <= nrefs; t++) {
        size_t d = len[t] > len[0] ? len[t] - len[0] : len[0] - len[t];
        size_t bd = best > len[0] ? best - len[0] : len[0] - best;
        if (d < bd || (d == bd && len[t] < best)) best = len[t];
      }
      want[1] = (double)best;
      for (size_t n = 1; n <= (size_t)order && n <= len[0]; n++) {
        want[2 + order + n - 1] = (double)(len[0] - n + 1);
        for (size_t i = 0; i + n <= len[0]; i++) {
          if (bf_count(w[0], i + n - 1, w[0] + i, n)) continue; /* each distinct n-gram once */
          size_t h = bf_count(w[0], len[0], w[0] + i, n), r = 0;
          for (size_t t = 1; t <= nrefs; t++) {
            size_t c = bf_count(w[t], len[t], w[0] + i, n);
            if (c > r) r = c;
          }
          want[2 + n - 1] += (double)(h < r ? h : r);
        }
      }
      for (size_t i = 0; i < k; i++)
        if (got[i] != want[i])
          fail_msg("order %ld, segment %d: stats[%zu]: %.0f, by brute force %.0f", order, seg, i, got[i],
                   want[i]);
    }
    m->destroy(st);
  }
}

/* The vocabulary (ngram.h) gives two words one id exactly when they are equal: 60,000
 * words of 1-24 bytes over two letters, mostly 9-16 (where a word is told from one
 * with its length and last eight bytes by its hash alone), so that every word meets
 * others with its length and tail in its probe run. Checked against the words sorted:
 * one id per distinct word, and each id's words all equal. */
static const char (*vocab_words)[25];
static int by_word(const void *a, const void *b) {
  return strcmp(vocab_words[*(const uint32_t *)a], vocab_words[*(const uint32_t *)b]);
}

static void test_vocab_ids(void **state) {
  (void)state;
  enum { WORDS = 60000 };
  char (*words)[25] = calloc(WORDS, sizeof *words);
  uint32_t *ids = calloc(WORDS, sizeof *ids), *first = calloc(WORDS, sizeof *first);
  uint32_t *order = calloc(WORDS, sizeof *order);
  cb__eval_vocab v = {0};
  uint32_t next = 0; /* ids are given in order from 0 */
  for (uint32_t i = 0; i < WORDS; i++) {
    size_t n = bf_rnd(8) ? 9 + bf_rnd(8) : 1 + bf_rnd(24);
    for (size_t k = 0; k < n; k++) words[i][k] = "ab"[bf_rnd(2)];
    ids[i] = cb__eval_vocab_id(&v, words[i], n);
    assert_true(ids[i] <= next);
    if (ids[i] == next) first[next++] = i;
    if (strcmp(words[first[ids[i]]], words[i]))
      fail_msg("'%s' and '%s': one id, %u", words[first[ids[i]]], words[i], ids[i]);
    order[i] = i;
  }
  vocab_words = (const char (*)[25])words;
  qsort(order, WORDS, sizeof *order, by_word);
  size_t distinct = 0;
  for (size_t i = 0; i < WORDS; i++) {
    int same = i && !strcmp(words[order[i - 1]], words[order[i]]);
    distinct += !same;
    if (same && ids[order[i - 1]] != ids[order[i]]) fail_msg("'%s': two ids", words[order[i]]);
  }
  assert_int_equal(v.used, distinct);
  cb__eval_vocab_free(&v);
  free(words), free(ids), free(first), free(order);
}

/* 13a's first pattern, ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 ', on every ASCII byte
 * between two letters: split off exactly when in that class (here written as its
 * ranges); '.', ',', '-' and whitespace, which other rules split, left out. */
static void test_13a_punct_class(void **state) {
  (void)state;
  cb__bleu_tok_scratch sc = {0};
  cb_buf out = {0};
  for (int b = 1; b < 0x80; b++) {
    if (b == '.' || b == ',' || b == '-' || cb__eval_ascii_space((unsigned char)b)) continue;
    char in[3] = {'a', (char)b, 'z'}, want[6];
    int split = (b >= 0x7B && b <= 0x7E) || (b >= 0x5B && b <= 0x60) || (b >= 0x20 && b <= 0x26) ||
                (b >= 0x28 && b <= 0x2B) || (b >= 0x3A && b <= 0x40) || b == 0x2F;
    if (split) snprintf(want, sizeof want, "a %c z", b);
    else snprintf(want, sizeof want, "a%cz", b);
    cb__bleu_tokenize(CB__BLEU_TOK_13A, in, 3, &sc, &out);
    if (strcmp(out.data, want)) fail_msg("byte 0x%02X: '%s', want '%s'", (unsigned)b, out.data, want);
  }
  cb__bleu_tok_scratch_free(&sc);
  cb_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bleu_vectors),
      cmocka_unit_test(test_bleu_tokenizers),
      cmocka_unit_test(test_13a_punct_class),
      cmocka_unit_test(test_python_lower),
      cmocka_unit_test(test_python_space),
      cmocka_unit_test(test_word_spans),
      cmocka_unit_test(test_bleu_brute_force),
      cmocka_unit_test(test_vocab_ids),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
