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
 * index a table directly. A
 * hypothesis whose keys would not fit (more than
 * 2047 distinct characters, or bits x order > 64) is left to the trie.
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
  uint32_t *ids;     /* the current text's character ids */
  size_t ids_cap;
} cb__chrf_chars;

/* Counts the hypothesis' n-grams of orders 1..order (cps: its code points). 0 when
 * they do not pack: the caller counts them in the trie instead. */
int cb__chrf_chars_hyp(cb__chrf_chars *t, const uint32_t *cps, size_t len, long order);
/* For one reference (mark: its number in the segment, from 1), match[n - 1] = the
 * n-grams of order n it shares with the hypothesis counted last (chrf.py
 * _get_match_statistics: each up to the hypothesis' count). */
void cb__chrf_chars_ref(cb__chrf_chars *t, uint32_t mark, const uint32_t *cps, size_t len, long order,
                        double *match);
void cb__chrf_chars_free(cb__chrf_chars *t);

#endif
