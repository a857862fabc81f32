/*
 * test_sim_text.c - the simulator's synthetic text and the approximate tokenizer it
 * is written for (tok's cb_tok_approx_*).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/sim.h"
#include "calibench/tok.h"

#define VOCAB 128256u

static size_t count(const char *s) { return cb_tok_approx_tokenize(s, strlen(s), VOCAB, NULL, 0); }

static void test_tokenizer_pieces(void **state) {
  (void)state;
  assert_int_equal(count(""), 0);
  assert_int_equal(count("Hello"), 1);
  assert_int_equal(count("Hello world"), 2);           /* "Hello" " world" */
  assert_int_equal(count("internationalization"), 4);  /* 20 letters in chunks of 6 */
  assert_int_equal(count("1234567"), 3);               /* 123 456 7 */
  assert_int_equal(count("a, b."), 4);                 /* a "," " b" "." */
  assert_int_equal(count("x   y"), 3);                 /* x "  " " y" */
  assert_int_equal(count("line\n\nnext"), 3);          /* line "\n\n" next */
  assert_int_equal(count("\xE4\xBD\xA0\xE5\xA5\xBD"), 2); /* two CJK code points */
  assert_int_equal(count("\xFF\xFE"), 2);              /* invalid bytes: one each */
  assert_int_equal(count("\t\tindent"), 2);            /* tabs, then the word */
}

static void test_tokenizer_ids_stable(void **state) {
  (void)state;
  uint32_t a[8], b[8];
  const char *s = "The cache hit rate";
  size_t n = cb_tok_approx_tokenize(s, strlen(s), VOCAB, a, 8);
  assert_int_equal(n, 4);
  cb_tok_approx_tokenize(s, strlen(s), VOCAB, b, 8);
  assert_memory_equal(a, b, sizeof(uint32_t) * n);
  for (size_t i = 0; i < n; i++) assert_true(a[i] < VOCAB);
  /* A shared prefix gives the same leading ids. */
  const char *t = "The cache hit ratio";
  cb_tok_approx_tokenize(t, strlen(t), VOCAB, b, 8);
  assert_memory_equal(a, b, sizeof(uint32_t) * 3);
  assert_int_not_equal(a[3], b[3]);
  /* max_ids bounds what is written, the count covers the whole text. */
  uint32_t one[1] = {0};
  assert_int_equal(cb_tok_approx_tokenize(s, strlen(s), VOCAB, one, 1), 4);
  assert_int_equal(one[0], a[0]);
}

/* Generated text re-tokenizes to exactly the generated pieces and ids. */
static void test_text_round_trip(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    enum { N = 2000 };
    static uint32_t gen[N], back[N];
    cb_buf text;
    cb_buf_init(&text, 0);
    for (int64_t k = 0; k < N; k++) {
      char piece[CB_SIM_TOKEN_TEXT_MAX];
      gen[k] = cb_sim_text_token(seed, k, VOCAB, piece);
      assert_true(strlen(piece) < CB_SIM_TOKEN_TEXT_MAX);
      cb_buf_append_str(&text, piece);
    }
    size_t n = cb_tok_approx_tokenize(text.data, text.len, VOCAB, back, N);
    if (n != N) fail_msg("seed %llu: %zu tokens re-counted, %d generated", (unsigned long long)seed, n, N);
    assert_memory_equal(gen, back, sizeof gen);
    cb_buf_free(&text);
  }
}

/* A cursor gives cb_sim_text_token's pieces and ids in order, from any start, and
 * the same ids from a vocabulary's id table. */
static void test_text_cursor(void **state) {
  (void)state;
  const int64_t starts[] = {0, 1, 2, 3, 777};
  const uint32_t vocabs[2] = {VOCAB, 1000};
  uint32_t *ids[2] = {cb_sim_text_ids_new(vocabs[0]), cb_sim_text_ids_new(vocabs[1])};
  for (uint64_t seed = 1; seed <= 8; seed++)
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
      cb_sim_text_cursor c;
      cb_sim_text_cursor_init(&c, seed, starts[s]);
      for (int64_t k = starts[s]; k < starts[s] + 600; k++) {
        char want[CB_SIM_TOKEN_TEXT_MAX], got[CB_SIM_TOKEN_TEXT_MAX];
        uint32_t iw = cb_sim_text_token(seed, k, VOCAB, want);
        assert_int_equal(c.k, k);
        cb_sim_text_cursor d[2] = {c, c};
        uint32_t ig = cb_sim_text_cursor_next(&c, VOCAB, got);
        assert_string_equal(got, want);
        assert_int_equal(ig, iw);
        for (size_t v = 0; v < 2; v++) /* the id alone, from each vocabulary's table */
          assert_int_equal(cb_sim_text_cursor_next_id(&d[v], ids[v]),
                           cb_sim_text_token(seed, k, vocabs[v], want));
      }
    }
  for (size_t v = 0; v < 2; v++) cb_free(ids[v]);
}

/* Stateless: token k is the same whatever was asked before; text reads as sentences. */
static void test_text_shape(void **state) {
  (void)state;
  char a[CB_SIM_TOKEN_TEXT_MAX], b[CB_SIM_TOKEN_TEXT_MAX];
  uint32_t ia = cb_sim_text_token(7, 500, VOCAB, a);
  for (int64_t k = 0; k < 500; k++) cb_sim_text_token(7, k, VOCAB, b);
  uint32_t ib = cb_sim_text_token(7, 500, VOCAB, b);
  assert_string_equal(a, b);
  assert_int_equal(ia, ib);

  cb_sim_text_token(7, 0, VOCAB, a);
  assert_true(a[0] >= 'A' && a[0] <= 'Z');
  int periods = 0, commas = 0, capitals_after_period = 0;
  char prev[CB_SIM_TOKEN_TEXT_MAX] = "";
  for (int64_t k = 0; k < 5000; k++) {
    cb_sim_text_token(7, k, VOCAB, a);
    if (!strcmp(a, ".")) periods++;
    if (!strcmp(a, ",")) commas++;
    if (!strcmp(prev, ".")) {
      assert_true(a[0] == ' ' && a[1] >= 'A' && a[1] <= 'Z');
      capitals_after_period++;
    }
    assert_false((!strcmp(prev, ".") || !strcmp(prev, ",")) && (!strcmp(a, ".") || !strcmp(a, ",")));
    strcpy(prev, a);
  }
  /* About 1 in 8 positions is a candidate, 7/8 of those are not preceded by one. */
  assert_in_range(periods + commas, 350, 700);
  assert_true(periods > commas);
  assert_true(capitals_after_period > 0);
  /* Different seeds give different text. */
  cb_sim_text_token(8, 3, VOCAB, b);
  cb_sim_text_token(7, 3, VOCAB, a);
  int same = !strcmp(a, b);
  cb_sim_text_token(8, 4, VOCAB, b);
  cb_sim_text_token(7, 4, VOCAB, a);
  assert_false(same && !strcmp(a, b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokenizer_pieces),
      cmocka_unit_test(test_tokenizer_ids_stable),
      cmocka_unit_test(test_text_round_trip),
      cmocka_unit_test(test_text_cursor),
      cmocka_unit_test(test_text_shape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
