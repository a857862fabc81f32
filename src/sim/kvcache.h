/*
 * kvcache.h - the simulator's paged KV cache: a block pool with reference counts, an
 * LRU free queue, and prefix caching by chained block hashes (vLLM V1's
 * KVCacheManager / BlockPool / FreeKVCacheBlockQueue, see
 * docs/internals/sim-scheduler.md). Also the open-addressing u64 hash map it and the
 * engine use.
 *
 * Every block operation is O(1): the free queue is a doubly linked list threaded
 * through per-block prev/next arrays, and the block-hash table is a hash map.
 * Private to src/sim; names carry the cb__sim_ prefix.
 */
#ifndef CALIBENCH_SIM_KVCACHE_H
#define CALIBENCH_SIM_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"

/* ---- u64 → u64 hash map -------------------------------------------------------------- */

/*
 * Open addressing with linear probing and backward-shift deletion (no tombstones),
 * power-of-two capacity, grown at 1/2 load. Any key is allowed (0 included).
 * Caller-allocated; zero-initialised is NOT valid: call cb__sim_map_init.
 */
typedef struct cb__sim_map_slot {
  uint64_t key;
  uint64_t val;
} cb__sim_map_slot;

typedef struct cb__sim_map {
  cb__sim_map_slot *slots; /* [cap] key and value side by side: one cache line per probe */
  uint8_t *used;           /* [cap] 1 = slot holds an entry */
  size_t cap;        /* slots, power of two */
  size_t len;        /* entries */
} cb__sim_map;

/* Capacity for at least `expected` entries without growing. */
void cb__sim_map_init(cb__sim_map *m, size_t expected);
void cb__sim_map_free(cb__sim_map *m);
/* 1 and *val set when found, else 0. val may be NULL. */
int cb__sim_map_get(const cb__sim_map *m, uint64_t key, uint64_t *val);
/* Insert or overwrite. */
void cb__sim_map_put(cb__sim_map *m, uint64_t key, uint64_t val);
/* Insert when absent (one probe); returns 1 when inserted, 0 when the key was there. */
int cb__sim_map_put_new(cb__sim_map *m, uint64_t key, uint64_t val);
/* 1 when the key was present (and is now removed), else 0. */
int cb__sim_map_del(cb__sim_map *m, uint64_t key);

/* ---- block hashing ------------------------------------------------------------------ */

/* Parent hash of a request's first block (vLLM's NONE_HASH, fixed here). */
#define CB__SIM_NONE_HASH UINT64_C(0x6e6f6e655f686173)

/* hash(parent, tokens[0..n)): the chained hash of one full block. */
uint64_t cb__sim_block_hash(uint64_t parent, const uint32_t *tokens, size_t n);

/* ---- the block pool ----------------------------------------------------------------- */

typedef struct cb__sim_kv {
  int32_t num_blocks;
  int block_size;          /* tokens per block */
  int enable_caching;      /* 0: no hashes are kept, lookups find nothing */
  int32_t *ref;            /* [num_blocks] requests holding the block */
  uint64_t *hash;          /* [num_blocks] block hash when has_hash */
  uint8_t *has_hash;       /* [num_blocks] 1 = block is in the hash table */
  int32_t *prev, *next;    /* [num_blocks] free-queue links, -1 = none */
  uint8_t *in_free;        /* [num_blocks] 1 = block is in the free queue */
  int32_t head, tail;      /* free queue: head is evicted first (LRU) */
  int32_t num_free;        /* blocks in the free queue (ref 0, cached or not) */
  cb__sim_map table;       /* block hash → block id */
  uint64_t evictions;      /* cached blocks whose hash was dropped on reuse */
} cb__sim_kv;

/* All blocks start free, in id order. num_blocks >= 1. */
void cb__sim_kv_init(cb__sim_kv *kv, int32_t num_blocks, int block_size, int enable_caching);
void cb__sim_kv_free(cb__sim_kv *kv);

static inline int32_t cb__sim_kv_num_free(const cb__sim_kv *kv) { return kv->num_free; }
static inline int32_t cb__sim_kv_num_used(const cb__sim_kv *kv) {
  return kv->num_blocks - kv->num_free;
}

/*
 * Longest cached prefix: walks hashes[0..n) and stops at the first hash not in the
 * table; writes the found blocks to out (room for n) and returns how many. Does not
 * touch the blocks. Always 0 when caching is off.
 */
size_t cb__sim_kv_find_prefix(const cb__sim_kv *kv, const uint64_t *hashes, size_t n,
                              int32_t *out);

/* How many of blocks[0..n) have ref 0 (they sit in the free queue and would leave it
 * when touched). */
int32_t cb__sim_kv_count_free(const cb__sim_kv *kv, const int32_t *blocks, size_t n);

/* Take a reference on each block; a block with ref 0 leaves the free queue. */
void cb__sim_kv_touch(cb__sim_kv *kv, const int32_t *blocks, size_t n);

/* Pop the LRU head of the free queue, drop its hash (eviction), ref = 1. The caller
 * must have checked that a block is free; returns -1 otherwise. */
int32_t cb__sim_kv_alloc(cb__sim_kv *kv);

/* Record that a full block holds content with this hash. When another block already
 * holds the hash the table keeps that one and this block stays unhashed. No-op when
 * caching is off or the block is already hashed. */
void cb__sim_kv_cache_block(cb__sim_kv *kv, int32_t block, uint64_t hash);

/* Drop one reference on each of blocks[0..n), last block first; a block reaching
 * ref 0 is appended to the free queue's tail, keeping its hash, so a request's tail
 * blocks are evicted before its head blocks. */
void cb__sim_kv_release(cb__sim_kv *kv, const int32_t *blocks, size_t n);

/* Debug validation of the pool (free-queue links and count, ref >= 0, free ⇔ ref 0,
 * table ⇔ has_hash). O(blocks). Writes a reason and returns CB_ERR_STATE on
 * failure. */
cb_status cb__sim_kv_check(const cb__sim_kv *kv, char *why, size_t n);

#endif
