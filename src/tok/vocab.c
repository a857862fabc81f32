/*
 * vocab.c - the two hash maps of a BPE tokenizer.
 *
 * cb__vocab maps token bytes to ids and back. All token bytes live in one arena (no
 * allocation per token); the table is open addressing with linear probing, each slot
 * holding the key's length and first 8 bytes beside the id, so a probe for a key of
 * up to 8 bytes (most lookups of the merge loop) touches one cache line and never the
 * arena. It is kept at most half full. cb__pairmap maps a merge pair of ids
 * to its rank and merged id, keyed by one 64-bit integer.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

uint64_t cb__key_head(const unsigned char *p, size_t n) {
  uint64_t w = 0;
  if (n >= 8) memcpy(&w, p, 8);
  else
    for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
  return w;
}

/* A fast hash for short byte strings: 8 bytes at a time through a multiply-xorshift
 * mix (one multiply for keys of up to 8 bytes, the usual case). It only needs to
 * spread well; vocabularies are trusted input. */
uint32_t cb__hash_bytes(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = cb__key_head(s, n) ^ (n * 0x9E3779B97F4A7C15ULL);
  for (size_t i = 8; i < n; i += 8) {
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;
    h ^= cb__key_head(s + i, n - i);
  }
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  return (uint32_t)(h >> 32);
}

static size_t pow2_at_least(size_t n) {
  size_t p = 16;
  while (p < n) p *= 2;
  return p;
}

static void vocab_alloc_table(cb__vocab *v, size_t size) {
  v->slots = cb_reallocarray(NULL, size, sizeof *v->slots);
  for (size_t i = 0; i < size; i++) v->slots[i].id = CB__TOK_NONE;
  v->mask = size - 1;
}

void cb__vocab_init(cb__vocab *v, size_t expected) {
  memset(v, 0, sizeof *v);
  vocab_alloc_table(v, pow2_at_least(expected * 2 + 2));
  for (int i = 0; i < 256; i++) v->byte_id[i] = CB__TOK_NONE;
}

void cb__vocab_free(cb__vocab *v) {
  cb_free(v->pair_id);
  cb_free(v->bytes);
  cb_free(v->tok);
  cb_free(v->slots);
  memset(v, 0, sizeof *v);
}

static void vocab_insert_slot(cb__vocab *v, uint32_t id) {
  const cb__vocab_tok *t = &v->tok[id];
  const unsigned char *key = (const unsigned char *)v->bytes + t->off;
  size_t i = cb__hash_bytes(key, t->len) & v->mask;
  while (v->slots[i].id != CB__TOK_NONE) i = (i + 1) & v->mask;
  v->slots[i].head = cb__key_head(key, t->len);
  v->slots[i].len = t->len;
  v->slots[i].id = id;
}

static void vocab_grow(cb__vocab *v) {
  cb__vocab_slot *old = v->slots;
  size_t old_size = v->mask + 1;
  vocab_alloc_table(v, old_size * 2);
  for (size_t i = 0; i < old_size; i++)
    if (old[i].id != CB__TOK_NONE) vocab_insert_slot(v, old[i].id);
  cb_free(old);
}

uint32_t cb__vocab_find(const cb__vocab *v, const void *bytes, size_t len) {
  const unsigned char *key = bytes;
  uint64_t head = cb__key_head(key, len);
  size_t i = cb__hash_bytes(key, len) & v->mask;
  for (;;) {
    const cb__vocab_slot *s = &v->slots[i];
    if (s->id == CB__TOK_NONE) return CB__TOK_NONE;
    if (s->head == head && s->len == len &&
        (len <= 8 || !memcmp(v->bytes + v->tok[s->id].off + 8, key + 8, len - 8)))
      return s->id;
    i = (i + 1) & v->mask;
  }
}

int cb__vocab_add(cb__vocab *v, const void *bytes, size_t len, uint32_t id) {
  if (cb__vocab_has(v, id)) return 2;
  if ((v->count + 1) * 2 > v->mask + 1) vocab_grow(v);
  /* one probe sequence finds a duplicate or the free slot */
  const unsigned char *key = bytes;
  uint64_t head = cb__key_head(key, len);
  size_t i = cb__hash_bytes(key, len) & v->mask;
  for (; v->slots[i].id != CB__TOK_NONE; i = (i + 1) & v->mask) {
    const cb__vocab_slot *s = &v->slots[i];
    if (s->head == head && s->len == len &&
        (len <= 8 || !memcmp(v->bytes + v->tok[s->id].off + 8, key + 8, len - 8)))
      return 1;
  }
  if (id >= v->tok_cap) {
    size_t cap = v->tok_cap ? v->tok_cap : 1024;
    while (cap <= id) cap *= 2;
    v->tok = cb_reallocarray(v->tok, cap, sizeof *v->tok);
    for (size_t k = v->tok_cap; k < cap; k++) v->tok[k].len = CB__TOK_NONE;
    v->tok_cap = cap;
  }
  if (v->bytes_len + len > v->bytes_cap) {
    size_t cap = v->bytes_cap ? v->bytes_cap : 65536;
    while (cap < v->bytes_len + len) cap *= 2;
    v->bytes = cb_realloc(v->bytes, cap);
    v->bytes_cap = cap;
  }
  if (len) memcpy(v->bytes + v->bytes_len, bytes, len);
  v->tok[id].off = (uint32_t)v->bytes_len;
  v->tok[id].len = (uint32_t)len;
  v->bytes_len += len;
  if (id >= v->n_ids) v->n_ids = id + 1;
  v->slots[i].head = head;
  v->slots[i].len = (uint32_t)len;
  v->slots[i].id = id;
  v->count++;
  if (len == 1 && v->byte_id[key[0]] == CB__TOK_NONE) v->byte_id[key[0]] = id;
  return 0;
}

size_t cb__vocab_memory(const cb__vocab *v) {
  return v->bytes_cap + v->tok_cap * sizeof *v->tok + (v->mask + 1) * sizeof *v->slots +
         (v->pair_id ? 65536 * sizeof *v->pair_id : 0);
}

void cb__vocab_index_pairs(cb__vocab *v) {
  if (!v->pair_id) v->pair_id = cb_reallocarray(NULL, 65536, sizeof *v->pair_id);
  for (size_t i = 0; i < 65536; i++) v->pair_id[i] = CB__TOK_NONE;
  for (uint32_t id = 0; id < v->n_ids; id++)
    if (v->tok[id].len == 2) {
      const unsigned char *p = (const unsigned char *)v->bytes + v->tok[id].off;
      if (v->pair_id[p[0] << 8 | p[1]] == CB__TOK_NONE) v->pair_id[p[0] << 8 | p[1]] = id;
    }
}

void cb__pairmap_init(cb__pairmap *m, size_t expected) {
  size_t size = pow2_at_least(expected * 2 + 2);
  m->slots = cb_reallocarray(NULL, size, sizeof *m->slots);
  for (size_t i = 0; i < size; i++) m->slots[i].key = UINT64_MAX;
  m->mask = size - 1;
  m->count = 0;
}

void cb__pairmap_free(cb__pairmap *m) {
  cb_free(m->slots);
  memset(m, 0, sizeof *m);
}

static void pair_insert(cb__pairmap *m, cb__pair_slot s) {
  size_t i = (size_t)cb__pair_hash(s.key) & m->mask;
  while (m->slots[i].key != UINT64_MAX) i = (i + 1) & m->mask;
  m->slots[i] = s;
}

int cb__pairmap_add(cb__pairmap *m, uint32_t left, uint32_t right, uint32_t rank, uint32_t id) {
  if (!m->slots) cb__pairmap_init(m, 1024);
  if (cb__pairmap_find(m, left, right)) return 1;
  if ((m->count + 1) * 2 > m->mask + 1) {
    cb__pair_slot *old = m->slots;
    size_t old_size = m->mask + 1;
    m->slots = cb_reallocarray(NULL, old_size * 2, sizeof *m->slots);
    for (size_t i = 0; i < old_size * 2; i++) m->slots[i].key = UINT64_MAX;
    m->mask = old_size * 2 - 1;
    for (size_t i = 0; i < old_size; i++)
      if (old[i].key != UINT64_MAX) pair_insert(m, old[i]);
    cb_free(old);
  }
  cb__pair_slot s = {(uint64_t)left << 32 | right, rank, id};
  pair_insert(m, s);
  m->count++;
  return 0;
}
