/*
 * rouge_internal.h - what the ROUGE and SQuAD files share: the Porter stemmer, the
 * token vocabulary (token text -> dense id, with each token's stem cached), the two
 * tokenizers, UTF-8 decoding, PCRE2 scanning and the LCS routines.
 */
#ifndef CB_EVAL_ROUGE_INTERNAL_H
#define CB_EVAL_ROUGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/eval_rouge.h"
#include "tok/tok_internal.h" /* cb__regex: PCRE2 with UTF + UCP through alloc.h */

/* NLTK's PorterStemmer(mode=NLTK_EXTENSIONS).stem(word) for a lowercase ASCII word
 * (nltk/stem/porter.py). Writes the stem to out (room for len bytes: a stem is never
 * longer than its word) and returns its length. */
size_t cb__eval_porter_stem(const char *word, size_t len, char *out);

/* A compiled pattern and its match data, for scanning text match by match. */
typedef struct cb__eval_re {
  cb__regex re;
  pcre2_match_data *md;
} cb__eval_re;

cb_status cb__eval_re_init(cb__eval_re *r, const char *pattern, cb_error *err);
void cb__eval_re_free(cb__eval_re *r);
/* The next match in s[0..n) at or after pos: 1 with [*a, *b), 0 when none, -1 on a
 * PCRE2 failure (err set). s must be valid UTF-8. */
int cb__eval_re_next(cb__eval_re *r, const char *s, size_t n, size_t pos, size_t *a,
                     size_t *b, cb_error *err);

/* Token vocabulary: every distinct token text gets a dense id; `stem` caches the id
 * of its stemmed form (UINT32_MAX until asked). Kept across calls of one scorer. */
typedef struct cb__rouge_vocab {
  char *text;       /* all token texts back to back */
  size_t text_len, text_cap;
  struct cb__rouge_word {
    uint64_t hash;
    size_t off;
    uint32_t len;
    uint32_t stem;
  } *words;
  uint32_t n, cap;
  struct cb__rouge_slot { /* open addressing */
    uint64_t hash; /* the word's hash (word_hash.h) */
    uint64_t last; /* the eight bytes its hash takes last: with len, the whole word
                    * when it has 8 bytes or fewer; with len and hash, the whole word
                    * when it has 16 or fewer (cb__eval_word_hash_last), so nearly every
                    * lookup reads nothing but the slot */
    uint32_t id1;  /* id + 1, 0 = empty */
    uint32_t len;
  } *slots;
  uint32_t n_slots; /* a power of two */
} cb__rouge_vocab;

void cb__rouge_vocab_free(cb__rouge_vocab *v);
void cb__rouge_vocab_clear(cb__rouge_vocab *v);
uint32_t cb__rouge_vocab_id(cb__rouge_vocab *v, const char *s, size_t len);
/* The id of word `id`'s stem (Porter when longer than 3 bytes and ASCII alnum). */
uint32_t cb__rouge_vocab_stem(cb__rouge_vocab *v, uint32_t id);

/* A token sequence. */
typedef struct cb__rouge_toks {
  uint32_t *ids;
  size_t n, cap;
} cb__rouge_toks;

void cb__rouge_toks_push(cb__rouge_toks *t, uint32_t id);

/* What tokenizing needs: the vocabulary, the options, scratch space. */
typedef struct cb__rouge_tokenizer {
  cb__rouge_vocab vocab;
  cb_eval_rouge_tokenizer kind;
  int use_stemmer;
  cb__eval_re unicode; /* the Unicode tokenizer's token pattern */
  cb_buf scratch;
} cb__rouge_tokenizer;

cb_status cb__rouge_tokenizer_init(cb__rouge_tokenizer *t, cb_eval_rouge_tokenizer kind,
                                   int use_stemmer, cb_error *err);
void cb__rouge_tokenizer_free(cb__rouge_tokenizer *t);
/* Append the tokens of text[0..len) to out. `base` is the offset of text in the
 * caller's input, for the error message's byte position. */
cb_status cb__rouge_tokenize(cb__rouge_tokenizer *t, const char *text, size_t len,
                             size_t base, cb__rouge_toks *out, cb_error *err);

/* Decode the well-formed sequence at s[0..n) (n >= 1): its length, 0 when ill-formed. */
size_t cb__eval_utf8_next(const char *s, size_t n, uint32_t *cp);

/* LCS of token sequences against one set of columns (rouge_lcs.c). */
typedef struct cb__rouge_lcs {
  uint32_t *slot; /* per token id: its match mask's number (from 1), 0 = not a column */
  size_t slot_cap;
  uint64_t *pm;   /* match masks, k words each; mask 0 is all zero */
  size_t pm_cap;
  uint64_t *rows; /* the table's rows as bit vectors */
  size_t rows_cap;
  uint32_t *at; /* one-word rows: the reference index of each row stored */
  size_t at_cap;
  const uint32_t *cols;
  size_t m, k; /* columns, words per row */
} cb__rouge_lcs;

void cb__rouge_lcs_free(cb__rouge_lcs *l);
/* Make b[0..nb) the columns (ids < vocab); cols_done before the next set. */
void cb__rouge_lcs_cols(cb__rouge_lcs *l, const uint32_t *b, size_t nb, size_t vocab);
void cb__rouge_lcs_cols_done(cb__rouge_lcs *l);
/* Length of the LCS of a and the columns (rouge_scorer._lcs_table's last cell). */
size_t cb__rouge_lcs_len(cb__rouge_lcs *l, const uint32_t *a, size_t na);
/* Set hit[i] for each index i of ref in the LCS that rouge_scorer.lcs_ind(ref,
 * columns) reads out of its table (_backtrack_norec's tie-breaking). */
void cb__rouge_lcs_mark(cb__rouge_lcs *l, const uint32_t *ref, size_t nr, unsigned char *hit);

#endif
