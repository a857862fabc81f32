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

struct cb__chrf_slot {
  uint64_t key;
  uint32_t stamp; /* the slot is in use for the hypothesis with this stamp */
  uint32_t hyp;   /* the n-gram's count in the hypothesis */
  uint32_t mark;  /* the reference `cur` counts for */
  uint32_t cur;   /* its count in that reference so far */
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
    s->hyp++;
  } else {
    *s = (struct cb__chrf_slot){key, tb.stamp, 1, 0, 0};
  }
}

/* One more of reference mark's n-gram in slot s: counted into *match while the
 * hypothesis has as many; 0 when the hypothesis lacks it. */
static inline int count_ref(table tb, struct cb__chrf_slot *s, uint32_t mark, uint64_t *match) {
  if (s->stamp != tb.stamp) return 0;
  if (s->mark != mark) {
    s->mark = mark;
    s->cur = 0;
  }
  if (++s->cur <= s->hyp) (*match)++;
  return 1;
}

int cb__chrf_chars_hyp(cb__chrf_chars *t, const uint32_t *cps, size_t len, long order) {
  if (!t->cp_ids) {
    t->cp_ids = cb_calloc(CODE_POINTS, sizeof *t->cp_ids); /* pages touched lazily */
    t->direct = cb_calloc(DIRECT, sizeof *t->direct);
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
  size_t grams = 0;
  for (long n = 1; n <= order && (size_t)n <= len; n++) grams += len - (size_t)n + 1;
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
  table tb = table_of(t);
  size_t nd = direct_orders(tb.bits);
  for (size_t i = 0; i < len; i++) {
    uint64_t key = 0;
    size_t top = len - i < (size_t)order ? len - i : (size_t)order;
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
  return 1;
}

void cb__chrf_chars_ref(cb__chrf_chars *t, uint32_t mark, const uint32_t *cps, size_t len, long order,
                        double *match) {
  need_ids(t, len);
  uint32_t *ids = t->ids;
  for (size_t i = 0; i < len; i++) { /* 0: a character the hypothesis lacks */
    uint32_t v = t->cp_ids[cps[i]];
    ids[i] = v >> ID_BITS == t->stamp ? v & MAX_ID : 0;
  }
  table tb = table_of(t);
  size_t nd = direct_orders(tb.bits);
  /* Counted in integers, added to match at the end: a double in memory incremented at
   * each hit made every hit wait for the last one's store. */
  uint64_t hits[MAX_ORDER] = {0};
  for (size_t i = 0; i < len; i++) {
    uint64_t key = 0;
    size_t top = len - i < (size_t)order ? len - i : (size_t)order;
    size_t n = 0;
    /* The hypothesis lacks this n-gram, so it lacks every longer one from here. */
    for (size_t dtop = top < nd ? top : nd; n < dtop; n++) {
      if (!ids[i + n]) break;
      key = key << tb.bits | ids[i + n];
      if (!count_ref(tb, &tb.direct[key], mark, &hits[n])) break;
    }
    if (n < nd) continue; /* stopped, or no order left */
    for (; n < top; n++) {
      if (!ids[i + n]) break;
      key = key << tb.bits | ids[i + n];
      if (!count_ref(tb, probe(tb, key), mark, &hits[n])) break;
    }
  }
  for (long n = 0; n < order; n++) match[n] += hits[n];
}

void cb__chrf_chars_free(cb__chrf_chars *t) {
  cb_free(t->cp_ids);
  cb_free(t->direct);
  cb_free(t->slots);
  cb_free(t->ids);
  memset(t, 0, sizeof *t);
}
