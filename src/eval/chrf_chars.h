/*
 * chrf_chars.h - chrF's character n-grams of one hypothesis and its references, each
 * n-gram packed exactly into one 64-bit key: the hypothesis' distinct characters get
 * dense ids 1..d, bits = the width of d, and the n-gram c1..cn is the key
 * (((c1 << bits) | c2) << bits ...) | cn. Every id is nonzero, so keys of different
 * orders never meet (an order-n key lies in [2^(bits(n-1)), 2^(bits n))). The keys of
 * every order that start at one position come from one another by a shift and an or,
 * and each is one probe of a hash table, where the trie (ngram.h) walked a chain of
 * lookups, each waiting for the last. The orders whose keys all lie below 4096 (a
 * hypothesis' unigrams, and its bigrams when it has at most 64 distinct characters)
 * index a table directly. A hypothesis whose keys would not fit (more than 2047
 * distinct characters, or bits x order > 64) is left to the trie.
 *
 * The references are read before the hypothesis is counted: an n-gram of order 3 or
 * more can match only if each trigram in it is in some reference, so the hypothesis
 * counts only those whose trigrams all pass a filter of the references' trigrams (a
 * bit per hash: one that passes may still be missing, one that fails is). Every
 * occurrence of an n-gram that a reference has passes, so its count is whole; on
 * prose about 40% of orders 3-6 are left out.
 */
#ifndef CALIBENCH_EVAL_CHRF_CHARS_H
#define CALIBENCH_EVAL_CHRF_CHARS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cb__chrf_chars {
  uint32_t *cp_ids; /* per code point: stamp << 11 | id, when stamp is this hypothesis' */
  uint32_t stamp;   /* this hypothesis' number (from 1) */
  unsigned bits;
  struct cb__chrf_slot *direct; /* the slots of small keys, indexed by the key */
  struct cb__chrf_slot *slots;  /* the others' hash table */
  size_t cap;        /* slots allocated (a power of two) */
  size_t mask;       /* this hypothesis' table: slots[0..mask] */
  unsigned shift;    /* 64 - log2(mask + 1) */
  uint32_t *ids;     /* the hypothesis' character ids */
  size_t ids_cap, len;
  long order;
  uint32_t *ref_ids; /* the references' ids one after another (0: not in the hypothesis) */
  size_t ref_len, ref_cap;
  size_t *ref_at;    /* reference r's ids: ref_ids[ref_at[r]..ref_at[r + 1]) */
  size_t refs, ref_at_cap;
  uint64_t *trigrams; /* the references' trigrams' filter */
  size_t grams;       /* the hypothesis' n-grams, all orders */
  struct cb__chrf_slot **undo; /* the slots a reference took matches from */
  size_t undo_cap;
} cb__chrf_chars;

/* Starts a segment: numbers the hypothesis' characters (cps: its code points; orders
 * 1..order). 0 when its n-grams do not pack: the caller counts them in the trie
 * instead, and calls nothing else below for this segment. */
int cb__chrf_chars_hyp(cb__chrf_chars *t, const uint32_t *cps, size_t len, long order);
/* Adds the segment's next reference (its code points), numbered from 0. */
void cb__chrf_chars_add_ref(cb__chrf_chars *t, const uint32_t *cps, size_t len);
/* After the last reference: counts the hypothesis' n-grams. */
void cb__chrf_chars_count_hyp(cb__chrf_chars *t);
/* For reference r, match[n - 1] += the n-grams of order n it shares with the
 * hypothesis (chrf.py _get_match_statistics: each up to the hypothesis' count). */
void cb__chrf_chars_ref(cb__chrf_chars *t, size_t r, double *match);
void cb__chrf_chars_free(cb__chrf_chars *t);

#endif
