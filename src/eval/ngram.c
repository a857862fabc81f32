/*
 * ngram.c - open-addressing hash tables (linear probing, power-of-two sizes, at most
 * half full) for the vocabulary and the n-gram trie. Keys are always compared in full
 * (a word's bytes, or for one of up to 16 bytes its length, hash and last eight bytes,
 * which determine it; a trie edge's parent and id), so a collision never merges two.
 */
#include "ngram.h"

#include <string.h>

#include "calibench/alloc.h"

static void vocab_grow(cb__eval_vocab *v) {
  size_t cap = v->cap ? v->cap * 2 : 1024;
  cb__eval_vocab_slot *s = cb_calloc(cap, sizeof *s);
  for (size_t i = 0; i < v->cap; i++) {
    if (!v->slots[i].used) continue;
    size_t j = v->slots[i].hash & (cap - 1);
    while (s[j].used) j = (j + 1) & (cap - 1);
    s[j] = v->slots[i];
  }
  cb_free(v->slots);
  v->slots = s;
  v->cap = cap;
}

uint32_t cb__eval_vocab_add(cb__eval_vocab *v, const char *s, size_t n, uint64_t h, uint64_t last) {
  if ((v->used + 1) * 2 > v->cap) vocab_grow(v);
  size_t j = h & (v->cap - 1);
  while (v->slots[j].used) j = (j + 1) & (v->cap - 1);
  if (v->arena_len + n > v->arena_cap) {
    v->arena_cap = (v->arena_len + n) * 2 + 4096;
    v->arena = cb_realloc(v->arena, v->arena_cap);
  }
  memcpy(v->arena + v->arena_len, s, n);
  v->slots[j] = (cb__eval_vocab_slot){h, last, v->arena_len, n, (uint32_t)v->used, 1};
  v->arena_len += n;
  return (uint32_t)v->used++;
}

void cb__eval_vocab_free(cb__eval_vocab *v) {
  cb_free(v->slots);
  cb_free(v->arena);
  memset(v, 0, sizeof *v);
}

void cb__trie_reset(cb__trie *t) {
  for (uint32_t i = 0; i < t->nodes; i++) t->slots[t->filled[i]].node = 0;
  t->nodes = 0;
}

void cb__trie_free(cb__trie *t) {
  cb_free(t->slots);
  cb_free(t->filled);
  cb_free(t->count);
  memset(t, 0, sizeof *t);
}

void cb__trie_grow(cb__trie *t) {
  if ((t->nodes + 1) * 2 <= t->cap && t->nodes + 2 <= t->node_cap) return;
  if (t->nodes + 2 > t->node_cap) {
    t->node_cap = t->node_cap ? t->node_cap * 2 : 1024;
    t->filled = cb_reallocarray(t->filled, t->node_cap, sizeof *t->filled);
    t->count = cb_reallocarray(t->count, t->node_cap, sizeof *t->count);
  }
  if ((t->nodes + 1) * 2 <= t->cap) return;
  size_t cap = t->cap ? t->cap * 2 : 1024;
  unsigned shift = t->cap ? t->shift - 1 : 64 - 10;
  cb__trie_slot *slots = cb_calloc(cap, sizeof *slots);
  for (uint32_t i = 0; i < t->nodes; i++) {
    uint32_t s = t->filled[i];
    size_t j = cb__trie_home(t->slots[s].key, shift);
    while (slots[j].node) j = (j + 1) & (cap - 1);
    slots[j] = t->slots[s];
    t->filled[i] = (uint32_t)j;
  }
  cb_free(t->slots);
  t->slots = slots;
  t->cap = cap;
  t->shift = shift;
}
