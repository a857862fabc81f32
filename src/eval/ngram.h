/*
 * ngram.h - n-gram counting for the reference metrics: a vocabulary that gives every
 * distinct word one id (so n-grams compare as id sequences), and a per-segment table
 * of n-grams with counters that each metric uses as it needs (BLEU: count in the
 * current reference, max over references, count in the hypothesis).
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

/* One distinct n-gram of the segment: its ids are keys[off .. off+n). */
typedef struct cb__ngram {
  uint64_t hash;
  uint32_t off, n;
  uint32_t mark;  /* which reference last touched cur */
  uint32_t cur;   /* count in that reference */
  uint32_t ref;   /* metric's reference count (BLEU: max over references) */
  uint32_t hyp;   /* count in the hypothesis */
} cb__ngram;

typedef struct cb__ngram_table {
  cb__ngram *slots; /* open addressing; n == 0 marks an empty slot */
  size_t cap;
  uint32_t *used;   /* indices of the filled slots, in insertion order */
  size_t nused, used_cap;
  uint32_t *keys;   /* the segment's id sequences that n-grams point into */
  size_t nkeys, keys_cap;
} cb__ngram_table;

/* Forget every n-gram and key (keeps the storage). */
void cb__ngram_reset(cb__ngram_table *t);
void cb__ngram_free(cb__ngram_table *t);
/* Append ids to the key store; returns the offset of the first. */
uint32_t cb__ngram_push_keys(cb__ngram_table *t, const uint32_t *ids, size_t n);
/* The entry for keys[off .. off+n) (n >= 1), added with zero counters when new. */
cb__ngram *cb__ngram_get(cb__ngram_table *t, uint32_t off, uint32_t n);
/* The same with the n-gram's hash already known: `h` folded over its ids with
 * cb__ngram_hash_step from CB__NGRAM_HASH_SEED, then cb__ngram_hash_final(h, n), so
 * the n-grams of every order that start at one position cost one step each. */
cb__ngram *cb__ngram_get_hashed(cb__ngram_table *t, uint32_t off, uint32_t n, uint64_t hash);
/* The entry if the n-gram is in the table, NULL if not (nothing added). */
cb__ngram *cb__ngram_find_hashed(cb__ngram_table *t, uint32_t off, uint32_t n, uint64_t hash);

#define CB__NGRAM_HASH_SEED 0x243F6A8885A308D3ULL
static inline uint64_t cb__ngram_hash_step(uint64_t h, uint32_t id) {
  return (h ^ id) * 0x9E3779B97F4A7C15ULL;
}
static inline uint64_t cb__ngram_hash_final(uint64_t h, uint32_t n) {
  h ^= n;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

#endif
