/*
 * ngram.h - n-gram counting for the reference metrics: a vocabulary that gives every
 * distinct word one id (so n-grams compare as id sequences), and a per-segment trie of
 * n-grams with counters that each metric uses as it needs.
 */
#ifndef CALIBENCH_EVAL_NGRAM_H
#define CALIBENCH_EVAL_NGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Word -> id. Ids are dense from 0. */
typedef struct cb__eval_vocab {
  struct vocab_slot *slots;
  size_t cap, used;
  char *arena;
  size_t arena_len, arena_cap;
} cb__eval_vocab;

uint32_t cb__eval_vocab_id(cb__eval_vocab *v, const char *s, size_t n);
void cb__eval_vocab_free(cb__eval_vocab *v);

/* A trie of n-grams (BLEU's, chrF's): node 0 is the empty n-gram, and the child of node p by
 * id x is p's n-gram followed by x, kept in a hash table of (p, x) -> node. Nodes are
 * dense from 1 in order of addition, each with counters; an n-gram of order n is the
 * node n steps below the root, so the n-grams of every order that start at one
 * position are one step each, and a missing node ends the walk. */
typedef struct cb__trie {
  uint64_t *key;   /* per slot: p << 32 | x */
  uint32_t *node;  /* per slot: its node, 0 = empty */
  size_t cap;
  uint32_t *filled; /* the filled slots, for reset */
  uint32_t nodes;   /* nodes added (ids 1..nodes) */
  uint32_t *hyp, *cur, *mark, *ref; /* per node: hypothesis count, count in the current
                                       reference, which reference that is, and the
                                       highest count in one reference (BLEU's clip) */
  size_t node_cap;
} cb__trie;

void cb__trie_reset(cb__trie *t);
void cb__trie_free(cb__trie *t);
/* Room for one more node (table at most half full, counters for it). */
void cb__trie_grow(cb__trie *t);

static inline uint64_t cb__trie_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
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
  size_t j = cb__trie_hash(k) & (t->cap - 1);
  for (; t->node[j]; j = (j + 1) & (t->cap - 1))
    if (t->key[j] == k) return t->node[j];
  if (!add) return 0;
  uint32_t n = ++t->nodes;
  t->key[j] = k;
  t->node[j] = n;
  t->filled[n - 1] = (uint32_t)j;
  t->hyp[n] = t->cur[n] = t->mark[n] = t->ref[n] = 0;
  return n;
}

#endif
