/*
 * ter_tok.h - sacrebleu's Tercom tokenizer (tokenizers/tokenizer_ter.py, 2.6.0).
 */
#ifndef CALIBENCH_EVAL_TER_TOK_H
#define CALIBENCH_EVAL_TER_TOK_H

#include <stddef.h>

#include "calibench/buf.h"

typedef struct cb__ter_tok_opts {
  int normalized, no_punct, asian_support, case_sensitive;
} cb__ter_tok_opts;

/* The words of s[0..n) joined by single spaces into out (reset first). */
void cb__ter_tokenize(const cb__ter_tok_opts *o, const char *s, size_t n, cb_buf *scratch_a,
                      cb_buf *scratch_b, cb_buf *out);

#endif
