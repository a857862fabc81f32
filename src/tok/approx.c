/*
 * approx.c - the approximate tokenizer: token counts and ids when no real tokenizer
 * is configured (the workload's default counter, the simulator's prompts and output
 * text; docs/simulator.md, "The approximate tokenizer").
 *
 * Modelled on the shape of tiktoken's cl100k pre-tokenizer, with every piece one
 * token except where noted:
 *   - a letter run with at most one leading space: chunks of up to 6 letters (the
 *     space joins the first chunk), since common English words are single tokens and
 *     long words split;
 *   - a digit run: groups of up to 3 digits (cl100k's \p{N}{1,3});
 *   - a run of ASCII punctuation with at most one leading space: chunks of up to 4;
 *   - a run of newlines (with any spaces/tabs before them): one token;
 *   - a run of spaces/tabs: one token, except that a single space directly before a
 *     letter or punctuation joins that piece instead (when the run is longer, its
 *     last space does);
 *   - any other byte sequence: one token per UTF-8 code point (invalid bytes: one
 *     token per byte).
 * Each piece's id is its FNV-1a 64-bit hash modulo the vocabulary size, so equal
 * text gives equal ids, which is what prefix caching needs.
 */
#include <stdint.h>

#include "calibench/rng.h"
#include "calibench/tok.h"
#include "calibench/utf8.h"

enum { LETTER_CHUNK = 6, DIGIT_CHUNK = 3, PUNCT_CHUNK = 4 };

static int is_letter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_blank(unsigned char c) { return c == ' ' || c == '\t'; }
static int is_newline(unsigned char c) { return c == '\n' || c == '\r'; }
static int is_punct(unsigned char c) {
  return c > 0x20 && c < 0x7f && !is_letter(c) && !is_digit(c);
}

uint32_t cb_tok_approx_id(const char *piece, size_t n, uint32_t vocab) {
  return (uint32_t)(cb_fnv1a64(piece, n) % vocab);
}

/* Length of the next piece starting at p (n > 0 bytes left). */
static size_t next_piece(const unsigned char *p, size_t n) {
  size_t i = 0;
  if (is_blank(p[0])) {
    while (i < n && is_blank(p[i])) i++;
    if (i < n && is_newline(p[i])) {
      while (i < n && (is_newline(p[i]) || is_blank(p[i]))) i++;
      return i;
    }
    /* A single space before a letter or punctuation joins it. */
    if (i < n && p[i - 1] == ' ' && (is_letter(p[i]) || is_punct(p[i]))) {
      if (i > 1) return i - 1;
      i = 1;
    } else {
      return i;
    }
  }
  if (i >= n) return i;
  size_t start = i;
  if (is_letter(p[i])) {
    while (i < n && is_letter(p[i]) && i - start < LETTER_CHUNK) i++;
    return i;
  }
  if (is_punct(p[i])) {
    while (i < n && is_punct(p[i]) && i - start < PUNCT_CHUNK) i++;
    return i;
  }
  if (is_digit(p[i])) {
    while (i < n && is_digit(p[i]) && i - start < DIGIT_CHUNK) i++;
    return i;
  }
  if (is_newline(p[i])) {
    while (i < n && (is_newline(p[i]) || is_blank(p[i]))) i++;
    return i;
  }
  size_t len = cb_utf8_seq_len(p + i, n - i, NULL);
  return i + (len ? len : 1); /* an invalid byte is a token of its own */
}

size_t cb_tok_approx_split(const char *text, size_t len, uint32_t vocab, uint32_t *ids,
                           size_t *ends, size_t max_tokens) {
  const unsigned char *p = (const unsigned char *)text;
  size_t count = 0, pos = 0;
  while (pos < len) {
    size_t n = next_piece(p + pos, len - pos);
    if (count < max_tokens) {
      if (ids) ids[count] = cb_tok_approx_id(text + pos, n, vocab);
      if (ends) ends[count] = pos + n;
    }
    count++;
    pos += n;
  }
  return count;
}

size_t cb_tok_approx_tokenize(const char *text, size_t len, uint32_t vocab,
                              uint32_t *ids, size_t max_ids) {
  return cb_tok_approx_split(text, len, vocab, ids, NULL, max_ids);
}
