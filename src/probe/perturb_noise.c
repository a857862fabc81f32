/*
 * perturb_noise.c - spacing, case and punctuation noise: each character, with
 * probability `rate`, gets one of: its case flipped (a letter), a space doubled or
 * removed (a space), a punctuation mark removed (punctuation), or a stray mark or
 * space inserted after it; at least one edit when the text is not empty.
 */
#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

static int is_punct(char c) {
  return c == '.' || c == ',' || c == '!' || c == '?' || c == ';' || c == ':' || c == '\'' || c == '"';
}

size_t cb__perturb_noise(double rate, const char *text, size_t len, cb_rng *rng, cb_buf *out) {
  unsigned char *chosen = len ? cb_calloc(len, 1) : NULL;
  size_t edits = cb__perturb_choose(len, rate, rng, chosen);
  static const char marks[] = ",.;!?";
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (!chosen[i]) {
      cb_buf_append_char(out, c);
      continue;
    }
    int insert = cb_rng_below(rng, 2);
    if (!insert && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      cb_buf_append_char(out, (char)(c ^ 0x20));
    } else if (!insert && c == ' ') {
      if (cb_rng_below(rng, 2)) cb_buf_append_str(out, "  ");
    } else if (!insert && is_punct(c)) {
      /* removed */
    } else {
      cb_buf_append_char(out, c);
      cb_buf_append_char(out, cb_rng_below(rng, 2) ? ' ' : marks[cb_rng_below(rng, sizeof marks - 1)]);
    }
  }
  cb_free(chosen);
  return edits;
}
