/*
 * test_eval_rouge.c - ROUGE against rouge-score itself: every vector of
 * tests/data/eval/rouge/scores.jsonl (rouge-score's own test cases and seeded random
 * corpora: prose, code, CJK, Arabic, Devanagari, Greek, emoji, empty and long lines,
 * several references, with and without the stemmer, both tokenizers) to 1e-9, the
 * tokens of tokenize.jsonl, and the API's errors.
 */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/eval_rouge.h"
#include "eval/rouge_internal.h"
#include "eval/word_hash.h"
#include "test_eval_rouge_vectors.h"

static const int all_types[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, CB_EVAL_ROUGE_L, CB_EVAL_ROUGE_LSUM};
#define N_TYPES (sizeof all_types / sizeof all_types[0])

typedef struct {
  cb_eval_rouge *r[2][2]; /* [unicode][stem] */
  size_t checked;
} score_ctx;

static cb_eval_rouge_tokenizer tokenizer_of(json_t *v) {
  return strcmp(json_string_value(json_object_get(v, "tokenizer")), "unicode") == 0
             ? CB_EVAL_ROUGE_TOK_UNICODE
             : CB_EVAL_ROUGE_TOK_DEFAULT;
}

static void check_score(json_t *v, size_t line, void *vctx) {
  score_ctx *ctx = vctx;
  int uni = tokenizer_of(v) == CB_EVAL_ROUGE_TOK_UNICODE;
  int stem = json_is_true(json_object_get(v, "stem"));
  json_t *refs = json_object_get(v, "refs"), *hyp = json_object_get(v, "hyp");
  size_t n = json_array_size(refs);
  const char *ref_s[8];
  size_t ref_n[8];
  assert_true(n >= 1 && n <= 8);
  for (size_t i = 0; i < n; i++) {
    ref_s[i] = json_string_value(json_array_get(refs, i));
    ref_n[i] = json_string_length(json_array_get(refs, i));
  }
  cb_eval_prf got[N_TYPES];
  cb_error err = {0};
  cb_status st = n == 1 ? cb_eval_rouge_score(ctx->r[uni][stem], ref_s[0], ref_n[0],
                                              json_string_value(hyp), json_string_length(hyp),
                                              got, &err)
                        : cb_eval_rouge_score_multi(ctx->r[uni][stem], ref_s, ref_n, n,
                                                    json_string_value(hyp),
                                                    json_string_length(hyp), got, &err);
  if (st != CB_OK) fail_msg("scores.jsonl:%zu: %s", line, err.msg);
  json_t *want = json_object_get(v, "scores");
  for (size_t t = 0; t < N_TYPES; t++) {
    json_t *w = json_object_get(want, cb_eval_rouge_type_name(all_types[t]));
    double e[3] = {json_number_value(json_array_get(w, 0)), json_number_value(json_array_get(w, 1)),
                   json_number_value(json_array_get(w, 2))};
    double g[3] = {got[t].precision, got[t].recall, got[t].fmeasure};
    for (int k = 0; k < 3; k++)
      if (!(fabs(g[k] - e[k]) <= VEC_TOL))
        fail_msg("scores.jsonl:%zu (%s, %s%s): %s %s: got %.17g, rouge-score %.17g", line,
                 json_string_value(json_object_get(v, "src")), uni ? "unicode" : "default",
                 stem ? ", stemmer" : "", cb_eval_rouge_type_name(all_types[t]),
                 k == 0 ? "precision" : k == 1 ? "recall" : "fmeasure", g[k], e[k]);
  }
  ctx->checked++;
}

static void test_scores_equal_rouge_score(void **state) {
  (void)state;
  score_ctx ctx = {0};
  for (int u = 0; u < 2; u++)
    for (int s = 0; s < 2; s++) {
      cb_eval_rouge_config cfg = {all_types, N_TYPES, s,
                                  u ? CB_EVAL_ROUGE_TOK_UNICODE : CB_EVAL_ROUGE_TOK_DEFAULT};
      cb_error err = {0};
      if (cb_eval_rouge_new(&cfg, &ctx.r[u][s], &err) != CB_OK) fail_msg("%s", err.msg);
    }
  size_t n = read_vectors("rouge/scores.jsonl", check_score, &ctx);
  assert_true(n > 1000);
  assert_int_equal(ctx.checked, n);
  for (int u = 0; u < 2; u++)
    for (int s = 0; s < 2; s++) cb_eval_rouge_free(ctx.r[u][s]);
}

/* rougeLsum alone takes rouge-score's other path (no whole-text tokens): same scores */
static void test_lsum_alone(void **state) {
  (void)state;
  int lsum = CB_EVAL_ROUGE_LSUM;
  cb_eval_rouge_config cfg = {&lsum, 1, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  cb_eval_rouge *r;
  assert_int_equal(cb_eval_rouge_new(&cfg, &r, NULL), CB_OK);
  cb_eval_prf s;
  /* rouge_scorer_test.py testRougeLsum: recall 4/5, precision 4/10 */
  const char *ref = "w1 w2 w3 w4 w5", *hyp = "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5";
  assert_int_equal(cb_eval_rouge_score(r, ref, strlen(ref), hyp, strlen(hyp), &s, NULL), CB_OK);
  assert_true(s.recall == 0.8 && s.precision == 0.4);
  assert_true(fabs(s.fmeasure - 2 * 0.4 * 0.8 / 1.2) < 1e-15);
  cb_eval_rouge_free(r);
}

typedef struct {
  size_t checked;
} tok_ctx;

static void check_tokens(json_t *v, size_t line, void *vctx) {
  tok_ctx *ctx = vctx;
  int uni = tokenizer_of(v) == CB_EVAL_ROUGE_TOK_UNICODE;
  int stem = json_is_true(json_object_get(v, "stem"));
  json_t *text = json_object_get(v, "text"), *want = json_object_get(v, "tokens");
  cb__rouge_tokenizer tk, *t = &tk;
  cb_error err = {0};
  assert_int_equal(cb__rouge_tokenizer_init(&tk, uni ? CB_EVAL_ROUGE_TOK_UNICODE
                                                     : CB_EVAL_ROUGE_TOK_DEFAULT,
                                            stem, &err),
                   CB_OK);
  cb__rouge_toks toks = {0};
  if (cb__rouge_tokenize(t, json_string_value(text), json_string_length(text), 0, &toks, &err) != CB_OK)
    fail_msg("tokenize.jsonl:%zu: %s", line, err.msg);
  if (toks.n != json_array_size(want))
    fail_msg("tokenize.jsonl:%zu: %zu tokens, rouge-score %zu", line, toks.n, json_array_size(want));
  for (size_t i = 0; i < toks.n; i++) {
    const struct cb__rouge_word *w = &t->vocab.words[toks.ids[i]];
    json_t *e = json_array_get(want, i);
    if (w->len != json_string_length(e) || memcmp(t->vocab.text + w->off, json_string_value(e), w->len))
      fail_msg("tokenize.jsonl:%zu: token %zu is '%.*s', rouge-score '%s'", line, i, (int)w->len,
               t->vocab.text + w->off, json_string_value(e));
  }
  free(toks.ids);
  cb__rouge_tokenizer_free(t);
  ctx->checked++;
}

static void test_tokens_equal_rouge_score(void **state) {
  (void)state;
  tok_ctx ctx = {0};
  size_t n = read_vectors("rouge/tokenize.jsonl", check_tokens, &ctx);
  assert_true(n > 500);
  assert_int_equal(ctx.checked, n);
}

/* The default tokenizer's runs of [a-z0-9], taken eight bytes at a time, and the
 * vocabulary's hash and compare, which read a word by overlapping loads: every run
 * length 1-40 at every alignment, ended by each kind of byte that ends one (ASCII
 * punctuation and space, a capital that starts a new token, a non-ASCII letter, a
 * newline, the text's end), against the definition (tokenize.py: lowercase, every
 * other character a separator); then words that differ in one byte only, at every
 * position, which must get ids of their own; words that a slot's copy of the bytes
 * its hash takes last does not tell apart ("a" and "aaa", "abab" and "ababab" load
 * alike), one pair of them met on one probe; and thousands of words, whose ids must
 * survive the table's growth. */
static void test_token_runs_and_vocab(void **state) {
  (void)state;
  static const char *const stops[] = {" ", "-", "Bc", "\xC3\xA9", "\n", "", "9.", "\x7F"};
  const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (size_t len = 1; len <= 40; len++) {
    for (size_t lead = 0; lead < 8; lead++) {
      for (size_t k = 0; k < sizeof stops / sizeof *stops; k++) {
        char text[128], want[128];
        size_t n = 0;
        for (size_t i = 0; i < lead; i++) text[n++] = ' ';
        for (size_t i = 0; i < len; i++) text[n++] = alnum[(i * 7 + len) % 36];
        n += (size_t)snprintf(text + n, sizeof text - n, "%sxy", stops[k]);
        /* the definition: lowercase, anything but [a-z0-9] separates */
        cb__rouge_tokenizer tk;
        assert_int_equal(cb__rouge_tokenizer_init(&tk, CB_EVAL_ROUGE_TOK_DEFAULT, 0, NULL), CB_OK);
        cb__rouge_toks toks = {0};
        assert_int_equal(cb__rouge_tokenize(&tk, text, n, 0, &toks, NULL), CB_OK);
        size_t at = 0, tok = 0;
        while (at < n) {
          size_t w = 0;
          while (at < n) {
            char c = text[at];
            if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) break;
            want[w++] = c;
            at++;
          }
          if (w) {
            if (tok >= toks.n) fail_msg("len %zu lead %zu stop %zu: too few tokens", len, lead, k);
            const struct cb__rouge_word *got = &tk.vocab.words[toks.ids[tok++]];
            if (got->len != w || memcmp(tk.vocab.text + got->off, want, w))
              fail_msg("len %zu lead %zu stop %zu: token '%.*s', expected '%.*s'", len, lead, k,
                       (int)got->len, tk.vocab.text + got->off, (int)w, want);
          } else {
            at++;
          }
        }
        if (tok != toks.n) fail_msg("len %zu lead %zu stop %zu: %zu tokens, expected %zu", len, lead, k, toks.n, tok);
        free(toks.ids);
        cb__rouge_tokenizer_free(&tk);
      }
    }
  }
  cb__rouge_vocab v = {0};
  char word[32];
  for (size_t len = 1; len <= 24; len++) {
    for (size_t i = 0; i < len; i++) word[i] = alnum[(i * 5 + len) % 36];
    uint32_t base = cb__rouge_vocab_id(&v, word, len);
    for (size_t p = 0; p < len; p++) {
      char keep = word[p];
      word[p] = '#';
      uint32_t id = cb__rouge_vocab_id(&v, word, len);
      assert_int_not_equal(id, base);
      assert_int_equal(cb__rouge_vocab_id(&v, word, len), id);
      word[p] = keep;
    }
    assert_int_equal(cb__rouge_vocab_id(&v, word, len), base);
  }
  assert_int_equal(v.n, 24 + 24 * 25 / 2); /* every word and every variant its own */
  cb__rouge_vocab_clear(&v);
  memset(word, 'a', sizeof word);
  for (size_t len = 1; len <= sizeof word; len++)
    assert_int_equal(cb__rouge_vocab_id(&v, word, len), len - 1);
  for (size_t len = sizeof word; len >= 1; len--)
    assert_int_equal(cb__rouge_vocab_id(&v, word, len), len - 1);
  cb__rouge_vocab_clear(&v);
  uint32_t n_slots = v.n_slots;
  for (uint32_t i = 0; i < 5000; i++) {
    int len = snprintf(word, sizeof word, "w%" PRIu32 "x%" PRIu32, i, i * 2654435761u);
    assert_int_equal(cb__rouge_vocab_id(&v, word, (size_t)len), i);
  }
  assert_true(v.n_slots > n_slots); /* it grew */
  for (uint32_t i = 0; i < 5000; i++) {
    int len = snprintf(word, sizeof word, "w%" PRIu32 "x%" PRIu32, i, i * 2654435761u);
    assert_int_equal(cb__rouge_vocab_id(&v, word, (size_t)len), i);
  }
  assert_int_equal(v.n, 5000);
  cb__rouge_vocab_free(&v);
  /* Words of 4, 6 and 8 bytes repeating two letters ("abab", "ababab") load alike: a
   * lookup of the longer one that meets the shorter one's slot must go on. Their hashes
   * never share a slot (they differ by the length alone), so the slots from the longer
   * one's to the shorter one's are filled with other words, found by their hashes. */
  assert_int_equal(cb__rouge_vocab_id(&v, "x", 1), 0); /* the first table */
  const uint32_t mask = v.n_slots - 1;
  char ab[9] = {0};
  size_t n1 = 0, n2 = 0;
  uint32_t s1 = 0, s2 = 0;
  for (uint32_t c = 0; c < 36 * 36 * 3 && !n1; c++) {
    for (int i = 0; i < 8; i++) ab[i] = alnum[i % 2 ? c / 36 % 36 : c % 36];
    static const size_t lens[3][2] = {{4, 6}, {4, 8}, {6, 8}};
    const size_t *l = lens[c / (36 * 36)];
    uint64_t last1, last2;
    uint32_t a = (uint32_t)cb__eval_word_hash_last(ab, l[0], &last1) & mask;
    uint32_t b = (uint32_t)cb__eval_word_hash_last(ab, l[1], &last2) & mask;
    assert_true(last1 == last2);
    if (((a - b) & mask) < 6) { /* the longer one's probe reaches the shorter one's slot */
      n1 = l[0], n2 = l[1], s1 = a, s2 = b;
    }
  }
  assert_true(n1);
  cb__rouge_vocab_clear(&v);
  assert_int_equal(cb__rouge_vocab_id(&v, ab, n1), 0);
  uint32_t next = 1;
  for (uint32_t slot = s2; slot != s1; slot = (slot + 1) & mask) {
    char filler[16];
    int len = 0;
    for (uint32_t k = 0;; k++) {
      uint64_t last;
      len = snprintf(filler, sizeof filler, "f%" PRIu32, k);
      if (((uint32_t)cb__eval_word_hash_last(filler, (size_t)len, &last) & mask) == slot) break;
    }
    assert_int_equal(cb__rouge_vocab_id(&v, filler, (size_t)len), next++);
  }
  assert_int_equal(cb__rouge_vocab_id(&v, ab, n2), next); /* a word of its own */
  assert_int_equal(cb__rouge_vocab_id(&v, ab, n1), 0);
  cb__rouge_vocab_free(&v);
}

/* A word of 9-16 bytes is found by its slot alone (hash, last eight bytes, length):
 * two 12-byte words with the same last eight bytes whose hashes start in the same slot
 * must still be two words, whether the second meets the first in its first slot (the
 * inline lookup) or one further on (the probe). */
/* The vocabularies' hash (cb__eval_word_hash_last, with selects for 4-16 bytes) equals
 * its plain form written with branches on the length (word_hash.h), hash and tail, for
 * every length 1-40 on seeded random bytes; each word in a buffer of its own exact size,
 * so that a read past it is an error under ASan. The vocabulary relies on the bijection
 * word_hash.h states for the plain form (slots compared without the text). */
static void test_word_hash_same(void **state) {
  (void)state;
  uint64_t x = 0x2545F4914F6CDD1Dull;
  for (size_t n = 1; n <= 40; n++)
    for (int rep = 0; rep < 200; rep++) {
      char *w = malloc(n);
      assert_non_null(w);
      for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w[i] = (char)(rep % 2 ? 'a' + x % 26 : x); /* letters, or any byte */
      }
      uint64_t l1 = 0, l2 = 1, h1 = cb__eval_word_hash_last_plain(w, n, &l1);
      uint64_t h2 = cb__eval_word_hash_last(w, n, &l2);
      free(w);
      if (h1 != h2 || l1 != l2) fail_msg("length %zu: hash or tail differs", n);
    }
}

static void test_vocab_long_words_same_tail(void **state) {
  (void)state;
  cb__rouge_vocab v = {0};
  assert_int_equal(cb__rouge_vocab_id(&v, "x", 1), 0); /* the first table */
  const uint32_t mask = v.n_slots - 1;
  char w1[13] = "0000tailtail", w2[13] = "0000tailtail";
  uint64_t last1, last2;
  uint32_t home = (uint32_t)cb__eval_word_hash_last(w1, 12, &last1) & mask;
  uint32_t c = 1;
  for (; c < 100000; c++) { /* w2's first four bytes: a letter and three digits */
    char head[8];
    snprintf(head, sizeof head, "%c%03" PRIu32, 'a' + (int)(c / 1000 % 26), c % 1000);
    memcpy(w2, head, 4);
    if (((uint32_t)cb__eval_word_hash_last(w2, 12, &last2) & mask) == home) break;
  }
  assert_true(c < 100000);
  assert_true(last1 == last2 && memcmp(w1, w2, 12) != 0);
  assert_int_equal(cb__rouge_vocab_id(&v, w1, 12), 1);
  assert_int_equal(cb__rouge_vocab_id(&v, w2, 12), 2); /* meets w1 in its first slot */
  assert_int_equal(cb__rouge_vocab_id(&v, w1, 12), 1);
  assert_int_equal(cb__rouge_vocab_id(&v, w2, 12), 2); /* found past w1's slot */
  cb__rouge_vocab_free(&v);
  /* the other order: w2 first, then w1 meets it */
  assert_int_equal(cb__rouge_vocab_id(&v, "x", 1), 0);
  assert_int_equal(cb__rouge_vocab_id(&v, w2, 12), 1);
  assert_int_equal(cb__rouge_vocab_id(&v, w1, 12), 2);
  assert_int_equal(cb__rouge_vocab_id(&v, w2, 12), 1);
  cb__rouge_vocab_free(&v);
}

/* The LCS routines against rouge_scorer.py's own algorithm written out plainly
 * (_lcs_table, then _backtrack_norec: diagonal on equal tokens, else left when
 * table[i][j-1] > table[i-1][j], else up), on seeded random sequences over small
 * alphabets, 1 to 150 columns: rows of one word (up to 64 columns, kept in a register)
 * and of several. Every other sequence draws from four times the columns' alphabet, so
 * most of its tokens are no column (the one-word rows keep only the others). */
static void test_lcs_against_table(void **state) {
  (void)state;
  enum { MAX = 150 };
  static size_t table[MAX + 1][MAX + 1];
  uint32_t a[MAX], b[MAX];
  unsigned char hit[MAX], want[MAX];
  cb__rouge_lcs l = {0};
  uint64_t x = 0x2545F4914F6CDD1Dull;
  for (int iter = 0; iter < 3000; iter++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t na = 1 + x % MAX, nb = 1 + (x >> 16) % MAX, alphabet = 2 + (x >> 32) % 12;
    size_t a_alphabet = iter % 2 ? alphabet * 4 : alphabet;
    if (iter % 3 == 0) nb = 1 + (x >> 16) % 64; /* more of the one-word rows */
    for (size_t i = 0; i < na; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, a[i] = (uint32_t)(x % a_alphabet);
    for (size_t j = 0; j < nb; j++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, b[j] = (uint32_t)(x % alphabet);
    for (size_t i = 0; i <= na; i++)
      for (size_t j = 0; j <= nb; j++)
        table[i][j] = !i || !j ? 0
                      : a[i - 1] == b[j - 1] ? table[i - 1][j - 1] + 1
                      : table[i - 1][j] > table[i][j - 1] ? table[i - 1][j] : table[i][j - 1];
    memset(want, 0, na);
    for (size_t i = na, j = nb; i && j;) {
      if (a[i - 1] == b[j - 1]) want[--i] = 1, j--;
      else if (table[i][j - 1] > table[i - 1][j]) j--;
      else i--;
    }
    cb__rouge_lcs_cols(&l, b, nb, 64);
    assert_int_equal(cb__rouge_lcs_len(&l, a, na), table[na][nb]);
    memset(hit, 0, na);
    cb__rouge_lcs_mark(&l, a, na, hit);
    cb__rouge_lcs_cols_done(&l);
    if (memcmp(hit, want, na)) fail_msg("iteration %d (%zu x %zu): marks differ", iter, na, nb);
  }
  cb__rouge_lcs_free(&l);
}

/* rouge2 against the clipped bigram count written out plainly, on seeded random texts
 * over five words, so that a first token often starts several different bigrams of the
 * reference (rouge.c keeps them in one list per first token) and bigrams repeat; one
 * scorer for every pair, so a list left behind by one pair would spoil the next. */
static void test_rouge2_against_counting(void **state) {
  (void)state;
  static const char *const words[] = {"a", "b", "c", "d", "e"};
  enum { MAX = 40 };
  int two = 2;
  cb_eval_rouge_config cfg = {&two, 1, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  cb_eval_rouge *r = NULL;
  cb_error err = {0};
  assert_int_equal(cb_eval_rouge_new(&cfg, &r, &err), CB_OK);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int iter = 0; iter < 2000; iter++) {
    int ref[MAX], hyp[MAX];
    char rt[MAX * 2 + 1], ht[MAX * 2 + 1];
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t nr = x % MAX, nh = (x >> 8) % MAX, alphabet = 2 + (x >> 16) % 4, rl = 0, hl = 0;
    for (size_t i = 0; i < nr; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      ref[i] = (int)(x % alphabet);
      rl += (size_t)sprintf(rt + rl, "%s ", words[ref[i]]);
    }
    for (size_t i = 0; i < nh; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      hyp[i] = (int)(x % alphabet);
      hl += (size_t)sprintf(ht + hl, "%s ", words[hyp[i]]);
    }
    size_t hits = 0, used[MAX] = {0}; /* used[i]: reference bigram i matched */
    for (size_t j = 0; j + 1 < nh; j++)
      for (size_t i = 0; i + 1 < nr; i++)
        if (!used[i] && ref[i] == hyp[j] && ref[i + 1] == hyp[j + 1]) {
          used[i] = 1;
          hits++;
          break;
        }
    size_t bt = nr > 1 ? nr - 1 : 0, bh = nh > 1 ? nh - 1 : 0;
    cb_eval_prf got;
    assert_int_equal(cb_eval_rouge_score(r, rt, rl, ht, hl, &got, &err), CB_OK);
    double p = (double)hits / (double)(bh ? bh : 1), rec = (double)hits / (double)(bt ? bt : 1);
    if (got.precision != p || got.recall != rec)
      fail_msg("iteration %d: '%s' vs '%s': P %g R %g, want %g %g", iter, rt, ht, got.precision,
               got.recall, p, rec);
  }
  cb_eval_rouge_free(r);
}

static void test_types(void **state) {
  (void)state;
  int t = 0;
  cb_error err = {0};
  assert_int_equal(cb_eval_rouge_type_parse("rouge1", &t, &err), CB_OK);
  assert_int_equal(t, 1);
  assert_int_equal(cb_eval_rouge_type_parse("rouge9", &t, &err), CB_OK);
  assert_int_equal(t, 9);
  assert_int_equal(cb_eval_rouge_type_parse("rougeLsum", &t, &err), CB_OK);
  assert_int_equal(t, CB_EVAL_ROUGE_LSUM);
  assert_string_equal(cb_eval_rouge_type_name(CB_EVAL_ROUGE_L), "rougeL");
  /* rouge_scorer_test.py testInvalidRougeTypes */
  const char *bad[] = {"rougen", "rouge0", "rouge10", "rougel", "", "rouge1 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(cb_eval_rouge_type_parse(bad[i], &t, &err), CB_ERR_INVALID);
    assert_non_null(strstr(err.msg, "invalid rouge type"));
  }
  cb_eval_rouge *r = (cb_eval_rouge *)1;
  cb_eval_rouge_config none = {all_types, 0, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  assert_int_equal(cb_eval_rouge_new(&none, &r, &err), CB_ERR_INVALID);
  assert_null(r);
  int zero = 0;
  cb_eval_rouge_config zero_type = {&zero, 1, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  assert_int_equal(cb_eval_rouge_new(&zero_type, &r, &err), CB_ERR_INVALID);
}

/* Ill-formed UTF-8 is an error naming the side and the byte, never a score. */
static void test_invalid_utf8(void **state) {
  (void)state;
  for (int u = 0; u < 2; u++) {
    cb_eval_rouge_config cfg = {all_types, N_TYPES, 1,
                                u ? CB_EVAL_ROUGE_TOK_UNICODE : CB_EVAL_ROUGE_TOK_DEFAULT};
    cb_eval_rouge *r;
    cb_error err = {0};
    assert_int_equal(cb_eval_rouge_new(&cfg, &r, &err), CB_OK);
    cb_eval_prf s[N_TYPES];
    const char good[] = "one two", bad[] = "one \xC3\x28 two", trunc[] = "x\xE2\x82";
    assert_int_equal(cb_eval_rouge_score(r, good, 7, bad, sizeof bad - 1, s, &err), CB_ERR_PARSE);
    assert_non_null(strstr(err.msg, "hypothesis"));
    assert_non_null(strstr(err.msg, "byte 4"));
    assert_int_equal(cb_eval_rouge_score(r, trunc, sizeof trunc - 1, good, 7, s, &err), CB_ERR_PARSE);
    assert_non_null(strstr(err.msg, "reference"));
    assert_non_null(strstr(err.msg, "byte 1"));
    const char *refs[] = {good, "\xFF"};
    size_t lens[] = {7, 1};
    assert_int_equal(cb_eval_rouge_score_multi(r, refs, lens, 2, good, 7, s, &err), CB_ERR_PARSE);
    assert_non_null(strstr(err.msg, "reference 2"));
    assert_int_equal(cb_eval_rouge_score_multi(r, refs, lens, 0, good, 7, s, &err), CB_ERR_INVALID);
    /* without an error to fill, the status alone still says it failed */
    assert_int_equal(cb_eval_rouge_score(r, good, 7, bad, sizeof bad - 1, s, NULL), CB_ERR_PARSE);
    assert_int_equal(cb_eval_rouge_score(r, trunc, sizeof trunc - 1, good, 7, s, NULL), CB_ERR_PARSE);
    /* still usable after an error */
    assert_int_equal(cb_eval_rouge_score(r, good, 7, good, 7, s, &err), CB_OK);
    assert_true(s[0].fmeasure == 1.0);
    cb_eval_rouge_free(r);
  }
}

/* score_multi keeps, per type, the reference of highest F; the first on a tie. */
static void test_multi_takes_best_per_type(void **state) {
  (void)state;
  int types[] = {1, 2};
  cb_eval_rouge_config cfg = {types, 2, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  cb_eval_rouge *r;
  assert_int_equal(cb_eval_rouge_new(&cfg, &r, NULL), CB_OK);
  /* ref A: all words, wrong order (rouge1 1.0, rouge2 low); ref B: one bigram */
  const char *refs[] = {"c b a", "a b x y z w"};
  size_t lens[] = {5, 11};
  cb_eval_prf s[2];
  assert_int_equal(cb_eval_rouge_score_multi(r, refs, lens, 2, "a b c", 5, s, NULL), CB_OK);
  assert_true(s[0].fmeasure == 1.0);        /* rouge1 from A */
  assert_true(s[1].precision == 0.5);       /* rouge2 from B: "a b" of 2 bigrams */
  assert_true(fabs(s[1].recall - 0.2) < 1e-15);
  cb_eval_rouge_free(r);
}

/* A pair whose LCS would take more than the cell limit is refused, not run for hours. */
static void test_lcs_limit(void **state) {
  (void)state;
  int types[] = {CB_EVAL_ROUGE_L};
  cb_eval_rouge_config cfg = {types, 1, 0, CB_EVAL_ROUGE_TOK_DEFAULT};
  cb_eval_rouge *r;
  assert_int_equal(cb_eval_rouge_new(&cfg, &r, NULL), CB_OK);
  size_t words = 50000; /* 50,000^2 > 2^31 */
  char *text = malloc(words * 2);
  for (size_t i = 0; i < words; i++) {
    text[2 * i] = 'a';
    text[2 * i + 1] = ' ';
  }
  cb_eval_prf s;
  cb_error err = {0};
  assert_int_equal(cb_eval_rouge_score(r, text, words * 2, text, words * 2, &s, &err),
                   CB_ERR_CAPACITY);
  assert_non_null(strstr(err.msg, "50000 x 50000"));
  free(text);
  cb_eval_rouge_free(r);
}

/* Seeded random bytes (valid and ill-formed UTF-8, newlines, NULs, capitals, the
 * Kelvin sign, CJK) through every type and both tokenizers: either scores in [0, 1]
 * with P(ref, hyp) = R(hyp, ref), or CB_ERR_PARSE; never a crash (run under ASan). */
static void test_random_bytes(void **state) {
  (void)state;
  static const char *const pieces[] = {"a", "B", "the", " ", "\n", "\r\n", "\0", "\xE2\x84\xAA",
                                       "\xC4\xB0", "\xE4\xB8\x96", "\xCC\x81", "\xF0\x9F\x98\x80",
                                       "9", ".", "running", "\xCE\xA3"};
  static const char *const bad[] = {"\xC3", "\xED\xA0\x80", "\xFF", "\xF4\x90\x80\x80"};
  size_t n_pieces = sizeof pieces / sizeof pieces[0], scored = 0, refused = 0;
  uint64_t x = 88172645463325252ull;
  for (int u = 0; u < 2; u++)
    for (int stem = 0; stem < 2; stem++) {
      cb_eval_rouge_config cfg = {all_types, N_TYPES, stem,
                                  u ? CB_EVAL_ROUGE_TOK_UNICODE : CB_EVAL_ROUGE_TOK_DEFAULT};
      cb_eval_rouge *r;
      assert_int_equal(cb_eval_rouge_new(&cfg, &r, NULL), CB_OK);
      for (int iter = 0; iter < 1500; iter++) {
        char text[2][512];
        size_t len[2];
        for (int side = 0; side < 2; side++) {
          len[side] = 0;
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          size_t parts = x % 40;
          for (size_t k = 0; k < parts; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* one piece in 150 ill-formed: most texts are valid */
            const char *p = x % 150 == 0 ? bad[(x >> 8) % 4] : pieces[(x >> 8) % n_pieces];
            size_t pl = p[0] ? strlen(p) : 1; /* "\0": one NUL byte */
            memcpy(text[side] + len[side], p, pl);
            len[side] += pl;
          }
        }
        cb_eval_prf ab[N_TYPES], ba[N_TYPES];
        cb_error err = {0};
        cb_status st = cb_eval_rouge_score(r, text[0], len[0], text[1], len[1], ab, &err);
        if (st == CB_ERR_PARSE) {
          assert_non_null(strstr(err.msg, "invalid UTF-8"));
          refused++;
          continue;
        }
        scored++;
        assert_int_equal(st, CB_OK);
        assert_int_equal(cb_eval_rouge_score(r, text[1], len[1], text[0], len[0], ba, &err), CB_OK);
        for (size_t t = 0; t < N_TYPES; t++) {
          assert_true(ab[t].precision >= 0 && ab[t].precision <= 1);
          assert_true(ab[t].recall >= 0 && ab[t].recall <= 1);
          assert_true(ab[t].fmeasure >= 0 && ab[t].fmeasure <= 1);
          if (all_types[t] != CB_EVAL_ROUGE_LSUM) /* rougeLsum's union is not symmetric */
            assert_true(ab[t].precision == ba[t].recall && ab[t].recall == ba[t].precision);
        }
      }
      cb_eval_rouge_free(r);
    }
  assert_true(scored > 4000 && refused > 1000); /* both paths taken, of 6000 pairs */
}

static void test_mean(void **state) {
  (void)state;
  cb_eval_prf seg[] = {{1, 0.5, 0.25}, {0, 0.5, 0.75}};
  cb_eval_prf m = cb_eval_rouge_mean(seg, 2);
  assert_true(m.precision == 0.5 && m.recall == 0.5 && m.fmeasure == 0.5);
  m = cb_eval_rouge_mean(seg, 0);
  assert_true(m.precision == 0 && m.recall == 0 && m.fmeasure == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scores_equal_rouge_score),
      cmocka_unit_test(test_lsum_alone),
      cmocka_unit_test(test_tokens_equal_rouge_score),
      cmocka_unit_test(test_token_runs_and_vocab),
      cmocka_unit_test(test_word_hash_same),
      cmocka_unit_test(test_vocab_long_words_same_tail),
      cmocka_unit_test(test_rouge2_against_counting),
      cmocka_unit_test(test_types),
      cmocka_unit_test(test_invalid_utf8),
      cmocka_unit_test(test_multi_takes_best_per_type),
      cmocka_unit_test(test_lcs_limit),
      cmocka_unit_test(test_lcs_against_table),
      cmocka_unit_test(test_random_bytes),
      cmocka_unit_test(test_mean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
