/*
 * perturb_synonym.c - synonym substitution: each content word (three letters or more,
 * not a function word) that WordNet has a synonym for is, with probability `rate`,
 * replaced by one of the synonyms of its most common sense (perturb_wordnet.c), in
 * the word's case; at least one when there is one.
 */
#include <string.h>

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

typedef struct synonyms {
  cb__wordnet *wn;
  cb_buf syn; /* the last word's synonyms, each NUL-ended */
} synonyms;

/* word lowercased into low, NUL-ended; 0 when it does not fit. */
static int lower_word(const char *word, size_t n, char low[48]) {
  if (n >= 48) return 0;
  for (size_t i = 0; i < n; i++) low[i] = (char)(word[i] | 0x20);
  low[n] = '\0';
  return 1;
}

/* A content word of three letters or more that WordNet has a synonym for. */
static int find_synonym(void *ctx, const char *word, size_t n, size_t *tag) {
  synonyms *sy = ctx;
  char low[48];
  *tag = 0;
  if (n < 3 || !lower_word(word, n, low)) return 0;
  if (strchr(low, '\'') || is_function_word(low)) return 0;
  cb_buf_reset(&sy->syn);
  return cb__wordnet_synonyms(sy->wn, low, &sy->syn) > 0;
}

static const char *replace_synonym(void *ctx, const char *word, size_t n, size_t tag,
                                   cb_rng *rng) {
  (void)tag;
  synonyms *sy = ctx;
  char low[48];
  lower_word(word, n, low);
  cb_buf_reset(&sy->syn);
  size_t ns = cb__wordnet_synonyms(sy->wn, low, &sy->syn), pick = cb_rng_below(rng, ns);
  const char *w = sy->syn.data;
  while (pick--) w += strlen(w) + 1;
  return w;
}

size_t cb__perturb_synonyms(cb__wordnet *wn, double rate, const char *text, size_t len,
                            cb_rng *rng, cb_buf *out) {
  synonyms sy = {.wn = wn};
  cb_buf_init(&sy.syn, 0);
  const cb__perturb_words w = {find_synonym, replace_synonym, &sy};
  size_t edits = cb__perturb_replace_words(&w, rate, text, len, rng, out);
  cb_buf_free(&sy.syn);
  return edits;
}
