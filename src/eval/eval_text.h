/*
 * eval_text.h - Python's str semantics on valid UTF-8, as sacrebleu relies on them:
 * what str.split()/strip() call whitespace, str.lower() (with capital sigma's final
 * form), and the Unicode classes its tokenizers test. Input is well-formed UTF-8
 * (eval_input.c checks every file before a metric sees it).
 */
#ifndef CALIBENCH_EVAL_TEXT_H
#define CALIBENCH_EVAL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"

typedef struct cb__eval_range {
  uint32_t lo, hi; /* inclusive */
} cb__eval_range;

/* Tables from scripts/gen_eval_unicode.py (unicode_data.c); the lowercase map is util's
 * (util/unicode_lower.h), checked equal to this Python's by its generator. */
extern const cb__eval_range cb__eval_sigma_ignorable[], cb__eval_sigma_cased[];
extern const size_t cb__eval_sigma_ignorable_len, cb__eval_sigma_cased_len;
extern const cb__eval_range cb__eval_intl_n[], cb__eval_intl_p[], cb__eval_intl_s[];
extern const size_t cb__eval_intl_n_len, cb__eval_intl_p_len, cb__eval_intl_s_len;

/* 1 when cp lies in one of the sorted ranges r[0..n). */
int cb__eval_in(const cb__eval_range *r, size_t n, uint32_t cp);

/* The code point at s[0..n) (well-formed UTF-8, n >= 1); *len gets its byte length. */
uint32_t cb__eval_decode(const char *s, size_t n, size_t *len);
/* Append cp as UTF-8. */
void cb__eval_encode(cb_buf *out, uint32_t cp);

/* An ASCII byte that Python calls whitespace: \t..\r, \x1c..\x1f and space. */
static inline int cb__eval_ascii_space(unsigned char c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

/* Byte length of the whitespace character at s[0..n) (Python's str.isspace: the
 * characters str.split() splits on), 0 when s starts with anything else. */
size_t cb__eval_space_len(const char *s, size_t n);
/* Length of s[0..n) without its trailing whitespace (str.rstrip()). */
size_t cb__eval_rstrip(const char *s, size_t n);
/* Bytes of leading whitespace (str.lstrip()). */
size_t cb__eval_lstrip(const char *s, size_t n);

/* str.lower() of s[0..n), appended to out. */
void cb__eval_lower_text(const char *s, size_t n, cb_buf *out);

/* The next whitespace-separated word of s[0..n) at or after *pos (str.split()):
 * 1 and [*start, *end) when there is one (*pos moves past it), 0 at the end. */
int cb__eval_next_word(const char *s, size_t n, size_t *pos, size_t *start, size_t *end);

#endif
