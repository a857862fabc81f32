/*
 * perturb_synonym.c - synonym substitution: each content word (three letters or more,
 * not a function word) that WordNet has a synonym for is, with probability `rate`,
 * replaced by one of the synonyms of its most common sense (perturb_wordnet.c), in
 * the word's case; at least one when there is one.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

/* Words whose WordNet entries are rare senses ("can" the container, "will" the
 * document): replacing them changes the grammar, not the wording. */
static const char *const function_words[] = {
    "the", "and", "are", "was", "were", "has", "have", "had", "does", "did", "can", "could",
    "will", "would", "shall", "should", "may", "might", "must", "not", "for", "from", "with",
    "that", "this", "these", "those", "what", "which", "who", "whom", "whose", "when",
    "where", "why", "how", "than", "then", "there", "here", "its", "his", "her", "their",
    "our", "your", "you", "they", "she", "him", "them", "all", "any", "some", "one", "about",
    "into", "onto", "over", "under", "very", "also", "just", "only", "but", "yet", "nor",
};

static int is_function_word(const char *w) {
  for (size_t i = 0; i < sizeof function_words / sizeof function_words[0]; i++)
    if (!strcmp(w, function_words[i])) return 1;
  return 0;
}

size_t cb__perturb_synonyms(cb__wordnet *wn, double rate, const char *text, size_t len,
                            cb_rng *rng, cb_buf *out) {
  size_t cap = 16, count = 0, pos = 0, start, n;
  size_t *at = cb_reallocarray(NULL, cap, 2 * sizeof *at);
  cb_buf syn;
  cb_buf_init(&syn, 0);
  while (cb__perturb_next_word(text, len, &pos, &start, &n)) {
    char low[48];
    if (n < 3 || n >= sizeof low) continue;
    for (size_t i = 0; i < n; i++) low[i] = (char)(text[start + i] | 0x20);
    low[n] = '\0';
    if (strchr(low, '\'') || is_function_word(low)) continue;
    cb_buf_reset(&syn);
    if (!cb__wordnet_synonyms(wn, low, &syn)) continue;
    if (count == cap) at = cb_reallocarray(at, cap *= 2, 2 * sizeof *at);
    at[2 * count] = start;
    at[2 * count + 1] = n;
    count++;
  }
  unsigned char *chosen = count ? cb_calloc(count, 1) : NULL;
  size_t edits = cb__perturb_choose(count, rate, rng, chosen), done = 0;
  for (size_t k = 0; k < count; k++) {
    if (!chosen[k]) continue;
    size_t s = at[2 * k], m = at[2 * k + 1];
    char low[48];
    for (size_t i = 0; i < m; i++) low[i] = (char)(text[s + i] | 0x20);
    low[m] = '\0';
    cb_buf_reset(&syn);
    size_t ns = cb__wordnet_synonyms(wn, low, &syn), pick = cb_rng_below(rng, ns);
    const char *w = syn.data;
    while (pick--) w += strlen(w) + 1;
    cb_buf_append(out, text + done, s - done);
    cb__perturb_append_cased(out, text + s, m, w);
    done = s + m;
  }
  cb_buf_append(out, text + done, len - done);
  cb_buf_free(&syn);
  cb_free(chosen);
  cb_free(at);
  return edits;
}
