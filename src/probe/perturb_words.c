/*
 * perturb_words.c - what the word-level families share: finding words, keeping their
 * case, choosing which to edit, and swapping the chosen words.
 */
#include <string.h>

#include "calibench/alloc.h"
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

size_t cb__perturb_replace_words(const cb__perturb_words *w, double rate, const char *text,
                                 size_t len, cb_rng *rng, cb_buf *out) {
  /* The candidates: start, length, tag. */
  size_t cap = 16, count = 0, pos = 0, start, n, tag;
  size_t *at = cb_reallocarray(NULL, cap, 3 * sizeof *at);
  while (cb__perturb_next_word(text, len, &pos, &start, &n)) {
    if (!w->find(w->ctx, text + start, n, &tag)) continue;
    if (count == cap) at = cb_reallocarray(at, cap *= 2, 3 * sizeof *at);
    at[3 * count] = start;
    at[3 * count + 1] = n;
    at[3 * count + 2] = tag;
    count++;
  }
  unsigned char *chosen = count ? cb_calloc(count, 1) : NULL;
  size_t edits = cb__perturb_choose(count, rate, rng, chosen), done = 0;
  for (size_t k = 0; k < count; k++) {
    if (!chosen[k]) continue;
    size_t s = at[3 * k], m = at[3 * k + 1];
    const char *repl = w->replace(w->ctx, text + s, m, at[3 * k + 2], rng);
    cb_buf_append(out, text + done, s - done);
    cb__perturb_append_cased(out, text + s, m, repl);
    done = s + m;
  }
  cb_buf_append(out, text + done, len - done);
  cb_free(chosen);
  cb_free(at);
  return edits;
}
