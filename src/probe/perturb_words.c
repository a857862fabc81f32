/*
 * perturb_words.c - what the word-level families share: finding words, keeping their
 * case, and choosing which to edit.
 */
#include <string.h>

#include "probe/perturb_internal.h"

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int cb__perturb_next_word(const char *text, size_t len, size_t *pos, size_t *start, size_t *n) {
  size_t i = *pos;
  while (i < len && !is_letter(text[i])) i++;
  if (i >= len) {
    *pos = len;
    return 0;
  }
  size_t j = i;
  while (j < len && (is_letter(text[j]) || (text[j] == '\'' && j + 1 < len && is_letter(text[j + 1]) &&
                                            j > i)))
    j++;
  *start = i;
  *n = j - i;
  *pos = j;
  return 1;
}

void cb__perturb_append_cased(cb_buf *out, const char *orig, size_t orig_n, const char *repl) {
  int all_caps = orig_n > 1, first_cap = orig_n && orig[0] >= 'A' && orig[0] <= 'Z';
  for (size_t i = 0; i < orig_n && all_caps; i++)
    if (orig[i] >= 'a' && orig[i] <= 'z') all_caps = 0;
  for (size_t i = 0; repl[i]; i++) {
    char c = repl[i];
    if ((all_caps || (first_cap && i == 0)) && c >= 'a' && c <= 'z') c = (char)(c - 32);
    cb_buf_append_char(out, c);
  }
}

size_t cb__perturb_choose(size_t n, double rate, cb_rng *rng, unsigned char *chosen) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++) count += chosen[i] = cb_rng_uniform(rng) < rate;
  if (!count && n) {
    chosen[cb_rng_below(rng, n)] = 1;
    count = 1;
  }
  return count;
}
