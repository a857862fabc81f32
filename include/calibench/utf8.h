/*
 * utf8.h - the one UTF-8 sequence check every module uses (JSON escaping, the
 * client's JSON scanner, the tokenizers, the simulator's approximate tokenizer, the
 * report's escaping), and truncation on a character boundary.
 */
#ifndef CALIBENCH_UTF8_H
#define CALIBENCH_UTF8_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Length (1-4) of the well-formed UTF-8 sequence at s[0..n), or 0 when s[0] starts
 * an ill-formed one (Unicode's Table 3-7: no overlongs, no surrogates, nothing above
 * U+10FFFF, no truncation). n >= 1. When 0 and `maximal` is not NULL, *maximal is the
 * length of the maximal subpart (>= 1): what one U+FFFD replaces under Unicode's
 * "substitution of maximal subparts", as WHATWG decoders do.
 */
size_t cb_utf8_seq_len(const void *s, size_t n, size_t *maximal);

/* The longest prefix of s[0..n) of at most max bytes that does not split a
 * well-formed sequence (an ill-formed byte counts as one): where to truncate text. */
size_t cb_utf8_cut(const char *s, size_t n, size_t max);

/* s[0..n) made safe to print on a terminal, appended to out: every C0 control but
 * newline and tab, DEL, every C1 control (U+0080..U+009F, e.g. the one-byte CSI) and
 * every ill-formed byte becomes U+FFFD, so text a server or model sent can never be an
 * escape sequence, a carriage return or a backspace. With one_line, newline and tab
 * become spaces too (text inside a message line). */
struct cb_buf;
void cb_utf8_clean(struct cb_buf *out, const char *s, size_t n, int one_line);

#ifdef __cplusplus
}
#endif
#endif
