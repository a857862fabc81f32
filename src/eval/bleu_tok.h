/*
 * bleu_tok.h - sacrebleu's BLEU tokenizers (sacrebleu/tokenizers/, release 2.6.0):
 * 13a (mteval-v13a), intl (mteval-v14 international), zh, char and none. Each turns
 * one segment into its tokens: joined by single spaces, they are exactly the string
 * sacrebleu's tokenizer returns (for none: its words, which is all BLEU uses of it).
 */
#ifndef CALIBENCH_EVAL_BLEU_TOK_H
#define CALIBENCH_EVAL_BLEU_TOK_H

#include <stddef.h>

#include "calibench/buf.h"

typedef enum { CB__BLEU_TOK_13A, CB__BLEU_TOK_INTL, CB__BLEU_TOK_ZH, CB__BLEU_TOK_CHAR,
               CB__BLEU_TOK_NONE } cb__bleu_tok;

/* The tokenizer named as in sacrebleu's signature ("13a", ...); -1 when unknown. */
int cb__bleu_tok_from_name(const char *name);
const char *cb__bleu_tok_name(cb__bleu_tok tok);

/* A token: text[at..at + len). */
typedef struct cb__bleu_span {
  size_t at, len;
} cb__bleu_span;

/* Scratch buffers reused across segments, and the last segment's tokens. */
typedef struct cb__bleu_tok_scratch {
  cb_buf a, b;
  cb__bleu_span *spans;
  size_t spans_cap;
} cb__bleu_tok_scratch;
void cb__bleu_tok_scratch_free(cb__bleu_tok_scratch *s);

/* Tokenize s[0..n) (well-formed UTF-8): *count tokens in scratch->spans, each a span
 * of the text returned (s itself, or one of scratch's buffers; valid until scratch is
 * used again). What BLEU counts, without joining the tokens into one string. */
const char *cb__bleu_tokens(cb__bleu_tok tok, const char *s, size_t n, cb__bleu_tok_scratch *scratch,
                            size_t *count);

/* Tokenize s[0..n) into out (reset first): the tokens joined by single spaces. */
void cb__bleu_tokenize(cb__bleu_tok tok, const char *s, size_t n, cb__bleu_tok_scratch *scratch,
                       cb_buf *out);

/* s.split(): the words of s[0..n) (split at Python's whitespace) into sc->spans;
 * returns their number. */
size_t cb__eval_word_spans(const char *s, size_t n, cb__bleu_tok_scratch *sc);

#endif
