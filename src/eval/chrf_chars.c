/*
 * chrf_chars.c - chrf_chars.h's packed character n-grams: one open-addressing table
 * (linear probing, multiplicative hash, at most half full) per hypothesis. Slots and
 * character ids carry the hypothesis' stamp, so nothing is cleared between segments.
 */
#include "chrf_chars.h"

#include <string.h>

#include "calibench/alloc.h"

#define CODE_POINTS 0x110000u
#define ID_BITS 11
#define MAX_ID ((1u << ID_BITS) - 1)
#define MAX_STAMP (1u << (32 - ID_BITS))
/* The orders whose keys all lie below DIRECT index a table of their own directly (no
 * hash, no probe): the unigrams, and the bigrams of a hypothesis of up to 64 distinct
 * characters. */
#define DIRECT_BITS 12u
#define DIRECT (1u << DIRECT_BITS)
/* The packed keys' highest order: every id takes at least one bit of 64. */
#define MAX_ORDER 64
/* The references' trigrams' filter: one bit per hash of a trigram's key, 8192 bits
 * for a reference's ~100 trigrams (about 1% of the others pass by collision). */
#define FILTER_BITS 13u
#define FILTER_WORDS ((1u << FILTER_BITS) / 64)

struct cb__chrf_slot {
  uint64_t key;
  uint32_t stamp; /* the slot is in use for the hypothesis with this stamp */
  uint32_t left;  /* the n-gram's count in the hypothesis, less the current
                     reference's matches of it so far */
};

static void need_ids(cb__chrf_chars *t, size_t len) {
  if (len <= t->ids_cap) return;
  t->ids_cap = len > 256 ? len : 256;
  cb_free(t->ids);
  t->ids = cb_reallocarray(NULL, t->ids_cap, sizeof *t->ids);
}

/* The table of one hypothesis in locals: stores to slots could otherwise be taken to
 * change t's fields, which the compiler would then load again at every probe. */
typedef struct {
  struct cb__chrf_slot *slots, *direct;
  size_t mask;
  unsigned shift, bits;
  uint32_t stamp;
} table;

static inline table table_of(const cb__chrf_chars *t) {
  return (table){t->slots, t->direct, t->mask, t->shift, t->bits, t->stamp};
}

/* Orders 1..direct_orders(bits) have keys below DIRECT only (an order-n key is below
 * 2^(bits n)): their slots are indexed without a test of the key at each n-gram. */
static inline size_t direct_orders(unsigned bits) {
  return DIRECT_BITS / bits;
}

/* The hash table's slot of key (of an order above direct_orders), or the empty one
 * where it would go. */
static inline struct cb__chrf_slot *probe(table tb, uint64_t key) {
  size_t j = (size_t)((key * 0x9E3779B97F4A7C15ull) >> tb.shift);
  while (tb.slots[j].stamp == tb.stamp && tb.slots[j].key != key) j = (j + 1) & tb.mask;
  return &tb.slots[j];
}

/* One more of the hypothesis' n-gram key, in its slot s. */
static inline void count_hyp(table tb, struct cb__chrf_slot *s, uint64_t key) {
  if (s->stamp == tb.stamp) {
    s->left++;
  } else {
    *s = (struct cb__chrf_slot){key, tb.stamp, 1};
  }
}

/* One more of the reference's n-gram in slot s: a match while the hypothesis has one
 * left, taken then (and its slot logged at *undo when `restore`, for the next
 * reference); 0 when the hypothesis lacks the n-gram. Whether one is left follows no
 * pattern, so it is counted with no branch (the log written always, kept on a match). */
static inline int count_ref(table tb, struct cb__chrf_slot *s, uint64_t *match, int restore,
                            struct cb__chrf_slot ***undo) {
  if (s->stamp != tb.stamp) return 0;
  uint32_t take = s->left != 0;
  s->left -= take;
  *match += take;
  if (restore) {
    **undo = s;
    *undo += take;
  }
  return 1;
}

int cb__chrf_chars_hyp(cb__chrf_chars *t, const uint32_t *cps, size_t len, long order) {
  if (!t->cp_ids) {
    t->cp_ids = cb_calloc(CODE_POINTS, sizeof *t->cp_ids); /* pages touched lazily */
    t->direct = cb_calloc(DIRECT, sizeof *t->direct);
    t->trigrams = cb_calloc(FILTER_WORDS, sizeof *t->trigrams);
  }
  if (++t->stamp == MAX_STAMP) { /* every stamp used: start again from a clean table */
    memset(t->cp_ids, 0, CODE_POINTS * sizeof *t->cp_ids);
    memset(t->direct, 0, DIRECT * sizeof *t->direct);
    if (t->slots) memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->stamp = 1;
  }
  need_ids(t, len);
  uint32_t d = 0, tag = t->stamp << ID_BITS;
  for (size_t i = 0; i < len; i++) {
    uint32_t v = t->cp_ids[cps[i]];
    if (v >> ID_BITS != t->stamp) {
      if (d == MAX_ID) return 0;
      v = tag | ++d;
      t->cp_ids[cps[i]] = v;
    }
    t->ids[i] = v & MAX_ID;
  }
  t->bits = d ? 32u - (unsigned)__builtin_clz(d) : 1u;
  if ((long)t->bits * order > 64) return 0;
  t->len = len;
  t->order = order;
  t->refs = t->ref_len = 0;
  memset(t->trigrams, 0, FILTER_WORDS * sizeof *t->trigrams);
  return 1;
}

/* The filter's bit of a trigram's key. */
static inline uint64_t trigram_bit(uint64_t key3, size_t *word) {
  uint64_t h = (key3 * 0x9E3779B97F4A7C15ull) >> (64 - FILTER_BITS);
  *word = (size_t)(h >> 6);
  return 1ull << (h & 63);
}

void cb__chrf_chars_add_ref(cb__chrf_chars *t, const uint32_t *cps, size_t len) {
  if (t->ref_len + len > t->ref_cap) {
    t->ref_cap = (t->ref_len + len) * 2 + 256;
    t->ref_ids = cb_reallocarray(t->ref_ids, t->ref_cap, sizeof *t->ref_ids);
  }
  if (t->refs + 2 > t->ref_at_cap) {
    t->ref_at_cap = t->ref_at_cap ? t->ref_at_cap * 2 : 16;
    t->ref_at = cb_reallocarray(t->ref_at, t->ref_at_cap, sizeof *t->ref_at);
  }
  uint32_t *ids = t->ref_ids + t->ref_len;
  for (size_t i = 0; i < len; i++) { /* 0: a character the hypothesis lacks */
    uint32_t v = t->cp_ids[cps[i]];
    ids[i] = v >> ID_BITS == t->stamp ? v & MAX_ID : 0;
  }
  t->ref_at[t->refs] = t->ref_len;
  t->ref_len += len;
  t->ref_at[++t->refs] = t->ref_len;
  if (t->order < 3 || len < 3) return;
  unsigned bits = t->bits;
  uint64_t key3 = (uint64_t)ids[0] << bits | ids[1], mask3 = (1ull << 3 * bits) - 1;
  for (size_t i = 2; i < len; i++) { /* key3: the trigram ending at i */
    size_t w;
    key3 = (key3 << bits | ids[i]) & mask3;
    uint64_t bit = trigram_bit(key3, &w);
    t->trigrams[w] |= bit;
  }
}

void cb__chrf_chars_count_hyp(cb__chrf_chars *t) {
  size_t len = t->len, order = (size_t)t->order;
  size_t grams = 0;
  for (size_t n = 1; n <= order && n <= len; n++) grams += len - n + 1;
  t->grams = grams;
  size_t want = 16;
  unsigned lg = 4;
  while (want < 2 * grams) {
    want *= 2;
    lg++;
  }
  if (want > t->cap) {
    cb_free(t->slots);
    t->slots = cb_calloc(want, sizeof *t->slots);
    t->cap = want;
  }
  t->mask = want - 1;
  t->shift = 64 - lg;
  const uint32_t *ids = t->ids;
  const uint64_t *filter = t->trigrams;
  table tb = table_of(t);
  size_t nd = direct_orders(tb.bits);
  /* From the last position back, so that the trigrams from i on are known at i: key3
   * is the trigram at i, run the number of them from i on that pass the filter. */
  uint64_t key3 = 0;
  size_t run = 0;
  for (size_t i = len; i-- > 0;) {
    uint64_t key = 0;
    size_t top = len - i < order ? len - i : order;
    key3 = key3 >> tb.bits | (uint64_t)ids[i] << 2 * tb.bits;
    if (top > 2) { /* orders 3..top need their trigrams i..i + top - 3 in a reference */
      size_t w;
      uint64_t bit = trigram_bit(key3, &w);
      run = filter[w] & bit ? run + 1 : 0;
      if (top > run + 2) top = run + 2;
    }
    size_t n = 0;
    for (size_t dtop = top < nd ? top : nd; n < dtop; n++) {
      key = key << tb.bits | ids[i + n];
      count_hyp(tb, &tb.direct[key], key);
    }
    for (; n < top; n++) {
      key = key << tb.bits | ids[i + n];
      count_hyp(tb, probe(tb, key), key);
    }
  }
}

/* Reference r's matches into hits; with `restore` the matched slots are logged at
 * undo, which is returned past the last one. Inlined into each call, where restore is
 * a constant: two loops, the last reference's without the log. */
__attribute__((always_inline)) static inline struct cb__chrf_slot **ref_hits(const cb__chrf_chars *t, size_t r, uint64_t *hits,
                                               int restore, struct cb__chrf_slot **undo) {
  const uint32_t *ids = t->ref_ids + t->ref_at[r];
  size_t len = t->ref_at[r + 1] - t->ref_at[r], order = (size_t)t->order;
  table tb = table_of(t);
  size_t nd = direct_orders(tb.bits);
  for (size_t i = 0; i < len; i++) {
    uint64_t key = 0;
    size_t top = len - i < order ? len - i : order;
    size_t n = 0;
    /* The hypothesis lacks this n-gram, so it lacks every longer one from here. */
    for (size_t dtop = top < nd ? top : nd; n < dtop; n++) {
      if (!ids[i + n]) break;
      key = key << tb.bits | ids[i + n];
      if (!count_ref(tb, &tb.direct[key], &hits[n], restore, &undo)) break;
    }
    if (n < nd) continue; /* stopped, or no order left */
    for (; n < top; n++) {
      if (!ids[i + n]) break;
      key = key << tb.bits | ids[i + n];
      if (!count_ref(tb, probe(tb, key), &hits[n], restore, &undo)) break;
    }
  }
  return undo;
}

void cb__chrf_chars_ref(cb__chrf_chars *t, size_t r, double *match) {
  /* Counted in integers, added to match at the end: a double in memory incremented at
   * each hit made every hit wait for the last one's store. */
  uint64_t hits[MAX_ORDER] = {0};
  if (r + 1 == t->refs) { /* the last reference: the counts left may stay as they end */
    ref_hits(t, r, hits, 0, NULL);
  } else { /* at most one match per hypothesis n-gram: grams slots to log, and one
              written past the last match */
    if (t->grams + 1 > t->undo_cap) {
      t->undo_cap = t->grams + 1;
      cb_free(t->undo);
      t->undo = cb_reallocarray(NULL, t->undo_cap, sizeof *t->undo);
    }
    struct cb__chrf_slot **end = ref_hits(t, r, hits, 1, t->undo);
    for (struct cb__chrf_slot **p = t->undo; p < end; p++) (*p)->left++;
  }
  for (size_t n = 0; n < (size_t)t->order; n++) match[n] += (double)hits[n];
}

void cb__chrf_chars_free(cb__chrf_chars *t) {
  cb_free(t->cp_ids);
  cb_free(t->direct);
  cb_free(t->slots);
  cb_free(t->ids);
  cb_free(t->ref_ids);
  cb_free(t->ref_at);
  cb_free(t->trigrams);
  cb_free(t->undo);
  memset(t, 0, sizeof *t);
}
