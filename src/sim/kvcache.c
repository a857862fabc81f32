/*
 * kvcache.c - block pool, LRU free queue and prefix-cache hash table for the
 * simulator (contract in kvcache.h; behaviour matches vLLM V1's BlockPool and
 * FreeKVCacheBlockQueue as described in docs/internals/sim-scheduler.md).
 *
 * The free queue is a doubly linked list through prev/next arrays: popping the head,
 * appending at the tail and unlinking a touched block are O(1). The hash table maps
 * a block hash to the one block that holds that content.
 */
#include "kvcache.h"

#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"

/* ---- u64 map ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x) {
  /* SplitMix64's finaliser: a bijection with good avalanche. */
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

static void map_alloc(cb__sim_map *m, size_t cap) {
  m->cap = cap;
  m->len = 0;
  m->slots = cb_malloc(cap * sizeof *m->slots);
  m->used = cb_calloc(cap, 1);
}

void cb__sim_map_init(cb__sim_map *m, size_t expected) {
  size_t cap = 16;
  while (cap < expected * 2) cap *= 2;
  map_alloc(m, cap);
}

void cb__sim_map_free(cb__sim_map *m) {
  cb_free(m->slots);
  cb_free(m->used);
  memset(m, 0, sizeof *m);
}

static size_t map_find_slot(const cb__sim_map *m, uint64_t key, int *found) {
  size_t mask = m->cap - 1;
  size_t i = (size_t)mix64(key) & mask;
  while (m->used[i]) {
    if (m->slots[i].key == key) {
      *found = 1;
      return i;
    }
    i = (i + 1) & mask;
  }
  *found = 0;
  return i;
}

int cb__sim_map_get(const cb__sim_map *m, uint64_t key, uint64_t *val) {
  int found;
  size_t i = map_find_slot(m, key, &found);
  if (found && val) *val = m->slots[i].val;
  return found;
}

static void map_grow(cb__sim_map *m) {
  cb__sim_map old = *m;
  map_alloc(m, old.cap * 2);
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i]) cb__sim_map_put(m, old.slots[i].key, old.slots[i].val);
  cb__sim_map_free(&old);
}

/* Insert at a free slot found for key; grows first when the table would pass 1/2. */
static void map_insert(cb__sim_map *m, size_t i, uint64_t key, uint64_t val) {
  if ((m->len + 1) * 2 > m->cap) {
    int found;
    map_grow(m);
    i = map_find_slot(m, key, &found);
  }
  m->used[i] = 1;
  m->slots[i].key = key;
  m->slots[i].val = val;
  m->len++;
}

void cb__sim_map_put(cb__sim_map *m, uint64_t key, uint64_t val) {
  int found;
  size_t i = map_find_slot(m, key, &found);
  if (found)
    m->slots[i].val = val;
  else
    map_insert(m, i, key, val);
}

int cb__sim_map_put_new(cb__sim_map *m, uint64_t key, uint64_t val) {
  int found;
  size_t i = map_find_slot(m, key, &found);
  if (found) return 0;
  map_insert(m, i, key, val);
  return 1;
}

int cb__sim_map_del(cb__sim_map *m, uint64_t key) {
  int found;
  size_t i = map_find_slot(m, key, &found);
  if (!found) return 0;
  /* Backward-shift deletion: move later entries of the probe run into the hole when
   * their home slot does not lie cyclically in (hole, entry]. */
  size_t mask = m->cap - 1;
  size_t hole = i;
  size_t j = (i + 1) & mask;
  while (m->used[j]) {
    size_t home = (size_t)mix64(m->slots[j].key) & mask;
    int in_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!in_between) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
    j = (j + 1) & mask;
  }
  m->used[hole] = 0;
  m->len--;
  return 1;
}

/* ---- block hashing ------------------------------------------------------------------ */

uint64_t cb__sim_block_hash(uint64_t parent, const uint32_t *tokens, size_t n) {
  /* Two 32-bit token ids per 64-bit mixing round. */
  uint64_t h = mix64(parent ^ UINT64_C(0x9e3779b97f4a7c15));
  size_t i = 0;
  for (; i + 1 < n; i += 2) h = mix64(h ^ ((uint64_t)tokens[i] | (uint64_t)tokens[i + 1] << 32));
  if (i < n) h = mix64(h ^ (uint64_t)tokens[i] ^ UINT64_C(0x8000000000000000));
  return mix64(h ^ (uint64_t)n);
}

/* ---- free queue --------------------------------------------------------------------- */

static void fq_append(cb__sim_kv *kv, int32_t b) {
  kv->prev[b] = kv->tail;
  kv->next[b] = -1;
  if (kv->tail >= 0)
    kv->next[kv->tail] = b;
  else
    kv->head = b;
  kv->tail = b;
  kv->in_free[b] = 1;
  kv->num_free++;
}

static void fq_unlink(cb__sim_kv *kv, int32_t b) {
  int32_t p = kv->prev[b], n = kv->next[b];
  if (p >= 0)
    kv->next[p] = n;
  else
    kv->head = n;
  if (n >= 0)
    kv->prev[n] = p;
  else
    kv->tail = p;
  kv->prev[b] = kv->next[b] = -1;
  kv->in_free[b] = 0;
  kv->num_free--;
}

/* ---- pool --------------------------------------------------------------------------- */

void cb__sim_kv_init(cb__sim_kv *kv, int32_t num_blocks, int block_size, int enable_caching) {
  memset(kv, 0, sizeof *kv);
  kv->num_blocks = num_blocks;
  kv->block_size = block_size;
  kv->enable_caching = enable_caching;
  size_t nb = (size_t)num_blocks;
  kv->ref = cb_calloc(nb, sizeof *kv->ref);
  kv->hash = cb_calloc(nb, sizeof *kv->hash);
  kv->has_hash = cb_calloc(nb, 1);
  kv->prev = cb_malloc(nb * sizeof *kv->prev);
  kv->next = cb_malloc(nb * sizeof *kv->next);
  kv->in_free = cb_calloc(nb, 1);
  kv->head = kv->tail = -1;
  for (int32_t b = 0; b < num_blocks; b++) fq_append(kv, b);
  cb__sim_map_init(&kv->table, enable_caching ? nb : 1);
}

void cb__sim_kv_free(cb__sim_kv *kv) {
  cb_free(kv->ref);
  cb_free(kv->hash);
  cb_free(kv->has_hash);
  cb_free(kv->prev);
  cb_free(kv->next);
  cb_free(kv->in_free);
  cb__sim_map_free(&kv->table);
  memset(kv, 0, sizeof *kv);
}

size_t cb__sim_kv_find_prefix(const cb__sim_kv *kv, const uint64_t *hashes, size_t n,
                              int32_t *out) {
  if (!kv->enable_caching) return 0;
  size_t k = 0;
  for (; k < n; k++) {
    uint64_t b;
    if (!cb__sim_map_get(&kv->table, hashes[k], &b)) break;
    out[k] = (int32_t)b;
  }
  return k;
}

int32_t cb__sim_kv_count_free(const cb__sim_kv *kv, const int32_t *blocks, size_t n) {
  int32_t c = 0;
  for (size_t i = 0; i < n; i++) c += kv->ref[blocks[i]] == 0;
  return c;
}

void cb__sim_kv_touch(cb__sim_kv *kv, const int32_t *blocks, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int32_t b = blocks[i];
    if (kv->ref[b] == 0) fq_unlink(kv, b);
    kv->ref[b]++;
  }
}

int32_t cb__sim_kv_alloc(cb__sim_kv *kv) {
  int32_t b = kv->head;
  if (b < 0) return -1;
  fq_unlink(kv, b);
  if (kv->has_hash[b]) {
    cb__sim_map_del(&kv->table, kv->hash[b]);
    kv->has_hash[b] = 0;
    kv->evictions++;
  }
  kv->ref[b] = 1;
  return b;
}

void cb__sim_kv_cache_block(cb__sim_kv *kv, int32_t block, uint64_t hash) {
  if (!kv->enable_caching || kv->has_hash[block]) return;
  if (!cb__sim_map_put_new(&kv->table, hash, (uint64_t)block)) return;
  kv->hash[block] = hash;
  kv->has_hash[block] = 1;
}

void cb__sim_kv_release(cb__sim_kv *kv, const int32_t *blocks, size_t n) {
  for (size_t i = n; i-- > 0;) {
    int32_t b = blocks[i];
    if (--kv->ref[b] == 0) fq_append(kv, b);
  }
}

cb_status cb__sim_kv_check(const cb__sim_kv *kv, char *why, size_t n) {
#define FAIL(...)                             \
  do {                                        \
    if (why && n) snprintf(why, n, __VA_ARGS__); \
    return CB_ERR_STATE;                      \
  } while (0)
  int32_t count = 0, prev = -1;
  for (int32_t b = kv->head; b >= 0; b = kv->next[b]) {
    if (b >= kv->num_blocks) FAIL("free queue: block id %d out of range", (int)b);
    if (kv->prev[b] != prev) FAIL("free queue: block %d has prev %d, expected %d", (int)b,
                                  (int)kv->prev[b], (int)prev);
    if (!kv->in_free[b]) FAIL("free queue: block %d linked but not flagged free", (int)b);
    if (kv->ref[b] != 0) FAIL("free queue: block %d has ref %d", (int)b, (int)kv->ref[b]);
    prev = b;
    if (++count > kv->num_blocks) FAIL("free queue: cycle");
  }
  if (prev != kv->tail) FAIL("free queue: tail %d, last linked %d", (int)kv->tail, (int)prev);
  if (count != kv->num_free) FAIL("free queue: %d linked, num_free %d", (int)count,
                                  (int)kv->num_free);
  size_t hashed = 0;
  for (int32_t b = 0; b < kv->num_blocks; b++) {
    if (kv->ref[b] < 0) FAIL("block %d has negative ref %d", (int)b, (int)kv->ref[b]);
    if ((kv->ref[b] == 0) != (kv->in_free[b] == 1))
      FAIL("block %d: ref %d but in_free %d", (int)b, (int)kv->ref[b], (int)kv->in_free[b]);
    if (kv->has_hash[b]) {
      uint64_t v;
      hashed++;
      if (!cb__sim_map_get(&kv->table, kv->hash[b], &v) || v != (uint64_t)b)
        FAIL("block %d: hash not mapped back to it", (int)b);
    }
  }
  if (hashed != kv->table.len) FAIL("%zu hashed blocks, %zu table entries", hashed,
                                    kv->table.len);
  return CB_OK;
#undef FAIL
}
