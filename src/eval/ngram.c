/*
 * ngram.c - open-addressing hash tables (linear probing, power-of-two sizes, at most
 * half full) for the vocabulary and the per-segment n-grams. Hashes are only a fast
 * filter: keys are always compared in full, so a collision never merges two words.
 */
#include "ngram.h"

#include <string.h>

#include "calibench/alloc.h"

struct vocab_slot {
  uint64_t hash;
  size_t off, len; /* the word in the arena */
  uint32_t id;
  int used;
};

/* FNV-1a over bytes, finished by a SplitMix64-style mix so low bits are spread. */
static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return mix(h);
}

static void vocab_grow(cb__eval_vocab *v) {
  size_t cap = v->cap ? v->cap * 2 : 1024;
  struct vocab_slot *s = cb_calloc(cap, sizeof *s);
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

uint32_t cb__eval_vocab_id(cb__eval_vocab *v, const char *s, size_t n) {
  if ((v->used + 1) * 2 > v->cap) vocab_grow(v);
  uint64_t h = hash_bytes(s, n);
  size_t j = h & (v->cap - 1);
  for (;; j = (j + 1) & (v->cap - 1)) {
    struct vocab_slot *e = &v->slots[j];
    if (!e->used) break;
    if (e->hash == h && e->len == n && !memcmp(v->arena + e->off, s, n)) return e->id;
  }
  if (v->arena_len + n > v->arena_cap) {
    v->arena_cap = (v->arena_len + n) * 2 + 4096;
    v->arena = cb_realloc(v->arena, v->arena_cap);
  }
  memcpy(v->arena + v->arena_len, s, n);
  v->slots[j] = (struct vocab_slot){h, v->arena_len, n, (uint32_t)v->used, 1};
  v->arena_len += n;
  return (uint32_t)v->used++;
}

void cb__eval_vocab_free(cb__eval_vocab *v) {
  cb_free(v->slots);
  cb_free(v->arena);
  memset(v, 0, sizeof *v);
}

void cb__ngram_reset(cb__ngram_table *t) {
  for (size_t i = 0; i < t->nused; i++) t->slots[t->used[i]].n = 0;
  t->nused = 0;
  t->nkeys = 0;
}

void cb__ngram_free(cb__ngram_table *t) {
  cb_free(t->slots);
  cb_free(t->used);
  cb_free(t->keys);
  memset(t, 0, sizeof *t);
}

uint32_t cb__ngram_push_keys(cb__ngram_table *t, const uint32_t *ids, size_t n) {
  if (t->nkeys + n > t->keys_cap) {
    t->keys_cap = (t->nkeys + n) * 2 + 256;
    t->keys = cb_reallocarray(t->keys, t->keys_cap, sizeof *t->keys);
  }
  uint32_t off = (uint32_t)t->nkeys;
  if (n) memcpy(t->keys + t->nkeys, ids, n * sizeof *ids);
  t->nkeys += n;
  return off;
}

static uint64_t hash_ids(const uint32_t *k, uint32_t n) {
  uint64_t h = CB__NGRAM_HASH_SEED;
  for (uint32_t i = 0; i < n; i++) h = cb__ngram_hash_step(h, k[i]);
  return cb__ngram_hash_final(h, n);
}

static void table_grow(cb__ngram_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 256;
  cb__ngram *s = cb_calloc(cap, sizeof *s);
  for (size_t i = 0; i < t->nused; i++) {
    cb__ngram *e = &t->slots[t->used[i]];
    size_t j = e->hash & (cap - 1);
    while (s[j].n) j = (j + 1) & (cap - 1);
    s[j] = *e;
    t->used[i] = (uint32_t)j;
  }
  cb_free(t->slots);
  t->slots = s;
  t->cap = cap;
}

static inline int same_ids(const uint32_t *a, const uint32_t *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

cb__ngram *cb__ngram_get(cb__ngram_table *t, uint32_t off, uint32_t n) {
  return cb__ngram_get_hashed(t, off, n, hash_ids(t->keys + off, n));
}

cb__ngram *cb__ngram_find_hashed(cb__ngram_table *t, uint32_t off, uint32_t n, uint64_t h) {
  if (!t->cap) return NULL;
  const uint32_t *k = t->keys + off;
  for (size_t j = h & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
    cb__ngram *e = &t->slots[j];
    if (!e->n) return NULL;
    if (e->hash == h && e->n == n && same_ids(t->keys + e->off, k, n)) return e;
  }
}

cb__ngram *cb__ngram_get_hashed(cb__ngram_table *t, uint32_t off, uint32_t n, uint64_t h) {
  if ((t->nused + 1) * 2 > t->cap) table_grow(t);
  const uint32_t *k = t->keys + off;
  size_t j = h & (t->cap - 1);
  for (;; j = (j + 1) & (t->cap - 1)) {
    cb__ngram *e = &t->slots[j];
    if (!e->n) break;
    if (e->hash == h && e->n == n && (e->off == off || same_ids(t->keys + e->off, k, n))) return e;
  }
  if (t->nused == t->used_cap) {
    t->used_cap = t->used_cap ? t->used_cap * 2 : 256;
    t->used = cb_reallocarray(t->used, t->used_cap, sizeof *t->used);
  }
  t->used[t->nused++] = (uint32_t)j;
  t->slots[j] = (cb__ngram){.hash = h, .off = off, .n = n};
  return &t->slots[j];
}
