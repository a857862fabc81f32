/*
 * test_eval_chrf.c - chrF and chrF++ against sacrebleu 2.6.0 on every vector of
 * tests/data/eval/chrf_vectors.jsonl (sacrebleu's test/test_chrf.py cases and seeded
 * random corpora; tests/data/eval/README.md): corpus and sentence scores to 1e-9, the
 * summed [hyp, ref, match] statistics of every order exactly, score lines and
 * signatures character for character. Then the character n-gram counts of both
 * ways chrF keeps them (packed 64-bit keys, and the trie for a hypothesis whose keys
 * do not pack: more than 2047 distinct characters, or too high an order) against
 * counting by brute force, with two references in either order.
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

/* --- character n-grams against brute force ------------------------------------- */

static uint64_t rng_state = 20261203;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

static size_t put_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Per order 1..order: [hyp, ref, match] as chrf.py counts them, n-gram by n-gram. */
static void brute_stats(const uint32_t *h, size_t nh, const uint32_t *r, size_t nr, long order, double *out) {
  for (long n = 1; n <= order; n++) {
    size_t gh = nh >= (size_t)n ? nh - (size_t)n + 1 : 0, gr = nr >= (size_t)n ? nr - (size_t)n + 1 : 0;
    double match = 0;
    for (size_t i = 0; i < gh; i++) {
      int first = 1;
      for (size_t k = 0; k < i && first; k++) first = memcmp(h + k, h + i, (size_t)n * 4) != 0;
      if (!first) continue; /* each distinct n-gram once */
      size_t ch = 0, cr = 0;
      for (size_t k = i; k < gh; k++) ch += !memcmp(h + k, h + i, (size_t)n * 4);
      for (size_t k = 0; k < gr; k++) cr += !memcmp(r + k, h + i, (size_t)n * 4);
      match += (double)(ch < cr ? ch : cr);
    }
    out[3 * (n - 1)] = gr ? (double)gh : 0;
    out[3 * (n - 1) + 1] = (double)gr;
    out[3 * (n - 1) + 2] = match;
  }
}

/* A random character of the alphabet; skewed: 3 times in 4 its first, so that long
 * n-grams repeat and differ only far from their end. */
static uint32_t pick(const uint32_t *alphabet, size_t na, int skewed) {
  return alphabet[skewed && rnd(4) ? 0 : rnd((uint32_t)na)];
}

static void check_chars(const char *what, const uint32_t *alphabet, size_t na, size_t len, long order,
                        int segments, int skewed) {
  char order_s[8];
  snprintf(order_s, sizeof order_s, "%ld", order);
  cb_eval_option ov[] = {{"char-order", order_s, 0}};
  cb_eval_options o = {ov, 1, 0, 0};
  const cb_eval_metric *m = cb_eval_metric_find("chrf");
  void *st = NULL;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(m->create(&o, &st, &err), CB_OK);
  size_t k = m->n_stats(st);
  uint32_t *h = calloc(len, 4), *r = calloc(len, 4);
  char *hs = calloc(len, 4), *rs = calloc(len, 4), junk[320];
  double *got = calloc(k, sizeof *got), *want = calloc(k, sizeof *want);
  for (int seg = 0; seg < segments; seg++) {
    size_t nh = len - rnd((uint32_t)len / 8 + 1), nr = len - rnd((uint32_t)len / 4 + 1), bh = 0, br = 0;
    for (size_t i = 0; i < nh; i++) /* a large alphabet: each character at least once */
      bh += put_utf8(hs + bh, h[i] = na > 2047 && i < na ? alphabet[i] : pick(alphabet, na, skewed));
    for (size_t i = 0; i < nr; i++) /* the reference: the hypothesis, edited */
      br += put_utf8(rs + br, r[i] = i < nh && rnd(4) ? h[i] : pick(alphabet, na, skewed));
    /* A poorer reference sharing a little, first in even segments (the second's counts
     * must start afresh) and last in odd ones (the filter of the references' trigrams
     * must hold the first's too): the hypothesis' first two characters 40 times, more
     * often than the hypothesis has them, so that some of its n-grams find none left. */
    size_t nj = 0;
    for (int rep = 0; rep < 40; rep++) {
      nj += put_utf8(junk + nj, h[0]);
      nj += put_utf8(junk + nj, h[1]);
    }
    cb_eval_text refs[] = {{junk, nj}, {rs, br}, {junk, nj}};
    cb_eval_segment sg = {{hs, bh}, refs + seg % 2, 2};
    memset(got, 0, k * sizeof *got);
    assert_int_equal(m->segment(st, &sg, got, &err), CB_OK);
    brute_stats(h, nh, r, nr, order, want);
    for (size_t i = 0; i < k; i++)
      if (got[i] != want[i])
        fail_msg("%s, segment %d: stats[%zu] (order %zu, %s): %.0f, by brute force %.0f", what, seg, i,
                 i / 3 + 1, (const char *[]){"hyp", "ref", "match"}[i % 3], got[i], want[i]);
  }
  m->destroy(st);
  free(h), free(r), free(hs), free(rs), free(got), free(want);
}

static void test_char_ngrams_brute_force(void **state) {
  (void)state;
  uint32_t alpha[3000];
  /* packed: few characters (small keys indexed directly, the rest hashed) */
  for (size_t i = 0; i < 4; i++) alpha[i] = "abcd"[i];
  check_chars("4 letters, order 6", alpha, 4, 60, 6, 40, 0);
  for (size_t i = 0; i < 63; i++) alpha[i] = 0x21 + (uint32_t)i;
  check_chars("63 characters, order 6", alpha, 63, 120, 6, 20, 1);
  for (size_t i = 0; i < 70; i++) alpha[i] = i % 2 ? 0x4E00 + (uint32_t)i : 0x1F600 + (uint32_t)i;
  check_chars("70 CJK and emoji, order 6", alpha, 70, 300, 6, 10, 1);
  for (size_t i = 0; i < 15; i++) alpha[i] = 0xE0 + (uint32_t)i;
  check_chars("15 characters, order 12 (4 bits x 12)", alpha, 15, 80, 12, 10, 1);
  /* the trie: 6 bits x 12 > 64 (over 32 distinct characters), and more distinct
   * characters than ids */
  for (size_t i = 0; i < 60; i++) alpha[i] = 'A' + (uint32_t)i;
  check_chars("60 characters, order 12", alpha, 60, 400, 12, 10, 1);
  for (size_t i = 0; i < 3000; i++) alpha[i] = 0x4E00 + (uint32_t)i;
  check_chars("2100 CJK characters, order 6", alpha, 2100, 2600, 6, 2, 0);
  check_chars("2100 CJK characters, order 5 (ids of 12 bits)", alpha, 2100, 2600, 5, 2, 0);
}

/* Every ASCII byte between two letters: chrF drops Python's ASCII whitespace (str.split's:
 * 0x09-0x0D, 0x1C-0x1F, ' ') and keeps every other byte; with --whitespace it keeps all. */
static void test_ascii_whitespace(void **state) {
  (void)state;
  const cb_eval_metric *m = cb_eval_metric_find("chrf");
  for (int keep = 0; keep < 2; keep++) {
    cb_eval_option ov[] = {{"whitespace", NULL, 0}};
    cb_eval_options o = {ov, (size_t)keep, 0, 0};
    void *st = NULL;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(m->create(&o, &st, &err), CB_OK);
    size_t k = m->n_stats(st);
    double *got = calloc(k, sizeof *got);
    for (int b = 1; b < 0x80; b++) {
      char text[3] = {'x', (char)b, 'y'};
      cb_eval_text ref = {text, 3};
      cb_eval_segment sg = {{text, 3}, &ref, 1};
      assert_int_equal(m->segment(st, &sg, got, &err), CB_OK);
      int space = (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F) || b == ' ';
      double want = keep || !space ? 3 : 2;
      if (got[0] != want || got[1] != want || got[2] != want)
        fail_msg("byte 0x%02X%s: unigrams hyp %.0f ref %.0f match %.0f, want %.0f", (unsigned)b,
                 keep ? " (--whitespace)" : "", got[0], got[1], got[2], want);
    }
    free(got);
    m->destroy(st);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chrf_vectors),
      cmocka_unit_test(test_char_ngrams_brute_force),
      cmocka_unit_test(test_ascii_whitespace),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
