/*
 * test_tok_bpe.c - the two merge implementations agree: the flat-array scan used for
 * short pieces and the linked-list + heap used for long ones give the same ids on
 * random input, for tiktoken's rule (rank of the merged bytes) and tokenizer.json's
 * (rank of the pair), over vocabularies built here by random merges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "tok/tok_internal.h"

#define ALPHABET "abcd "

/* A tiktoken-like vocab: 256 bytes, then `n` tokens each the concatenation of two
 * random earlier tokens over ALPHABET (so every token is reachable by merges, and
 * many are not: ranks do not follow lengths). Also records the pairs for the HF rule. */
static void build(cb__vocab *v, cb__pairmap *pm, int n, uint64_t seed) {
  cb__vocab_init(v, 256 + (size_t)n);
  cb__pairmap_init(pm, (size_t)n);
  for (int b = 0; b < 256; b++) {
    unsigned char c = (unsigned char)b;
    cb__vocab_add(v, &c, 1, (uint32_t)b);
  }
  cb_rng rng;
  cb_rng_init(&rng, seed);
  uint32_t pool[4096];
  size_t np = 0;
  for (const char *a = ALPHABET; *a; a++) pool[np++] = (unsigned char)*a;
  uint32_t id = 256, rank = 0;
  while (id < 256 + (uint32_t)n) {
    uint32_t l = pool[cb_rng_below(&rng, np)], r = pool[cb_rng_below(&rng, np)];
    const cb__vocab_tok *tl = &v->tok[l], *tr = &v->tok[r];
    char buf[256];
    if (tl->len + tr->len > sizeof buf) continue;
    memcpy(buf, v->bytes + tl->off, tl->len);
    memcpy(buf + tl->len, v->bytes + tr->off, tr->len);
    if (cb__vocab_find(v, buf, tl->len + tr->len) != CB__TOK_NONE) continue;
    cb__vocab_add(v, buf, tl->len + tr->len, id);
    cb__pairmap_add(pm, l, r, rank++, id);
    if (np < sizeof pool / sizeof pool[0]) pool[np++] = id;
    id++;
  }
  cb__vocab_index_pairs(v);
}

static void compare(const char *label, const cb_tok_ids *a, const cb_tok_ids *b, const char *text) {
  int same = a->len == b->len && !memcmp(a->ids, b->ids, a->len * sizeof *a->ids);
  if (!same) {
    fprintf(stderr, "%s: text '%s'\n  small:", label, text);
    for (size_t i = 0; i < a->len; i++) fprintf(stderr, " %u", (unsigned)a->ids[i]);
    fprintf(stderr, "\n  heap: ");
    for (size_t i = 0; i < b->len; i++) fprintf(stderr, " %u", (unsigned)b->ids[i]);
    fprintf(stderr, "\n");
  }
  assert_true(same);
}

static void run(int hf) {
  cb_tok *tok = cb__tok_new(CB_TOK_KIND_HF_BPE, "random");
  build(&tok->vocab, &tok->pairs, 600, hf ? 11 : 7);
  tok->byte_level = 1;
  cb__scratch s;
  cb__scratch_init(&s);
  cb_rng rng;
  cb_rng_init(&rng, 99);
  char text[400];
  size_t saved = cb__bpe_small_max;
  for (int iter = 0; iter < 3000; iter++) {
    size_t n = 1 + (size_t)cb_rng_below(&rng, sizeof text - 1);
    for (size_t i = 0; i < n; i++) text[i] = ALPHABET[cb_rng_below(&rng, sizeof ALPHABET - 1)];
    text[n] = '\0';
    cb_tok_ids a = {0}, b = {0};
    cb__bpe_small_max = SIZE_MAX;
    if (hf) cb__bpe_hf(tok, (const unsigned char *)text, n, &s, &a);
    else cb__bpe_tiktoken(&tok->vocab, (const unsigned char *)text, n, &s, &a);
    cb__bpe_small_max = 0;
    if (hf) cb__bpe_hf(tok, (const unsigned char *)text, n, &s, &b);
    else cb__bpe_tiktoken(&tok->vocab, (const unsigned char *)text, n, &s, &b);
    compare(hf ? "pair ranks" : "byte ranks", &a, &b, text);
    /* the ids spell the text */
    size_t off = 0;
    for (size_t i = 0; i < a.len; i++) {
      const cb__vocab_tok *t = &tok->vocab.tok[a.ids[i]];
      assert_true(off + t->len <= n);
      assert_memory_equal(tok->vocab.bytes + t->off, text + off, t->len);
      off += t->len;
    }
    assert_int_equal(off, n);
    cb_tok_ids_free(&a);
    cb_tok_ids_free(&b);
  }
  cb__bpe_small_max = saved;
  cb__scratch_free(&s);
  cb_tok_free(tok);
}

static void test_tiktoken_rule(void **state) {
  (void)state;
  run(0);
}

static void test_pair_rule(void **state) {
  (void)state;
  run(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiktoken_rule),
      cmocka_unit_test(test_pair_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
