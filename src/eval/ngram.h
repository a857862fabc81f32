/*
 * ngram.h - n-gram counting for the reference metrics: a vocabulary that gives every
 * distinct word one id (so n-grams compare as id sequences), and a per-segment trie of
 * n-grams with counters that each metric uses as it needs.
 */
#ifndef CALIBENCH_EVAL_NGRAM_H
#define CALIBENCH_EVAL_NGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "word_hash.h"

/* Word -> id. Ids are dense from 0. */
typedef struct cb__eval_vocab_slot {
  uint64_t hash, last; /* cb__eval_word_hash_last's, of the word */
  size_t off, len;     /* the word in the arena */
  uint32_t id, used;
} cb__eval_vocab_slot;

typedef struct cb__eval_vocab {
  cb__eval_vocab_slot *slots;
  size_t cap, used;
  char *arena;
  size_t arena_len, arena_cap;
} cb__eval_vocab;

/* Adds s[0..n), not in v, with its hash h and last (cb__eval_word_hash_last's). */
uint32_t cb__eval_vocab_add(cb__eval_vocab *v, const char *s, size_t n, uint64_t h, uint64_t last);

/* The id of s[0..n), added when new. Inline, the lookup of a word seen before: BLEU
 * looks up every token. A word of up to 16 bytes is equal to a slot's when its length,
 * hash and last eight bytes are (word_hash.h), so only longer ones are compared in the
 * arena. */
static inline uint32_t cb__eval_vocab_id(cb__eval_vocab *v, const char *s, size_t n) {
  uint64_t last, h = cb__eval_word_hash_last(s, n, &last);
  if (v->cap)
    for (size_t j = h & (v->cap - 1);; j = (j + 1) & (v->cap - 1)) {
      const cb__eval_vocab_slot *e = &v->slots[j];
      if (!e->used) break;
      if (e->hash == h && e->len == n && e->last == last && (n <= 16 || !memcmp(v->arena + e->off, s, n)))
        return e->id;
    }
  return cb__eval_vocab_add(v, s, n, h, last);
}

void cb__eval_vocab_free(cb__eval_vocab *v);

/* A trie of n-grams (BLEU's, chrF's): node 0 is the empty n-gram, and the child of node p by
 * id x is p's n-gram followed by x, kept in a hash table of (p, x) -> node. Nodes are
 * dense from 1 in order of addition, each with counters; an n-gram of order n is the
 * node n steps below the root, so the n-grams of every order that start at one
 * position are one step each, and a missing node ends the walk. */
typedef struct cb__trie_slot {
  uint64_t key; /* p << 32 | x */
  uint32_t node; /* 0 = empty */
} cb__trie_slot;

/* A node's counters, side by side: a step touches one cache line of them. */
typedef struct cb__trie_count {
  uint32_t hyp;  /* the hypothesis' count */
  uint32_t cur;  /* the count in the current reference */
  uint32_t mark; /* which reference that is */
  uint32_t ref;  /* the highest count in one reference (BLEU's clip) */
} cb__trie_count;

typedef struct cb__trie {
  cb__trie_slot *slots;
  size_t cap;
  unsigned shift;   /* 64 - log2(cap) */
  uint32_t *filled; /* the filled slots, for reset */
  uint32_t nodes;   /* nodes added (ids 1..nodes) */
  cb__trie_count *count; /* per node */
  size_t node_cap;
} cb__trie;

void cb__trie_reset(cb__trie *t);
void cb__trie_free(cb__trie *t);
/* Room for one more node (table at most half full, counters for it). */
void cb__trie_grow(cb__trie *t);

/* The slot where a search for key k starts: the high bits of a multiplication (k's
 * two halves both reach them). */
static inline size_t cb__trie_home(uint64_t k, unsigned shift) {
  return (size_t)((k * 0x9E3779B97F4A7C15ull) >> shift);
}

/* The child of `parent` by `id`: added (counters zero) when new and `add`, else 0.
 * Inline: chrF calls it six times per character on each side. */
static inline uint32_t cb__trie_child(cb__trie *t, uint32_t parent, uint32_t id, int add) {
  uint64_t k = (uint64_t)parent << 32 | id;
  if (add) {
    if ((t->nodes + 1) * 2 > t->cap || t->nodes + 2 > t->node_cap) cb__trie_grow(t);
  } else if (!t->cap) {
    return 0;
  }
  size_t j = cb__trie_home(k, t->shift);
  for (; t->slots[j].node; j = (j + 1) & (t->cap - 1))
    if (t->slots[j].key == k) return t->slots[j].node;
  if (!add) return 0;
  uint32_t n = ++t->nodes;
  t->slots[j] = (cb__trie_slot){k, n};
  t->filled[n - 1] = (uint32_t)j;
  t->count[n] = (cb__trie_count){0, 0, 0, 0};
  return n;
}

#endif
