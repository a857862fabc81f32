/*
 * test_sim_kvcache.c - the simulator's u64 hash map and KV block pool (src/sim/kvcache.c):
 * map against a brute-force model, LRU eviction order, reverse-order freeing, prefix
 * lookup, touch of cached free blocks, and the pool's own consistency check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/rng.h"
#include "sim/kvcache.h"

static void check_pool(const cb__sim_kv *kv) {
  char why[256];
  if (cb__sim_kv_check(kv, why, sizeof why) != CB_OK) fail_msg("pool check: %s", why);
}

/* ---- map ---------------------------------------------------------------------------- */

static void test_map_basic(void **state) {
  (void)state;
  cb__sim_map m;
  cb__sim_map_init(&m, 0);
  uint64_t v = 99;
  assert_false(cb__sim_map_get(&m, 0, &v));
  cb__sim_map_put(&m, 0, 7); /* key 0 is an ordinary key */
  cb__sim_map_put(&m, UINT64_MAX, 8);
  assert_true(cb__sim_map_get(&m, 0, &v));
  assert_int_equal(v, 7);
  assert_true(cb__sim_map_get(&m, UINT64_MAX, &v));
  assert_int_equal(v, 8);
  cb__sim_map_put(&m, 0, 9); /* overwrite */
  assert_true(cb__sim_map_get(&m, 0, &v));
  assert_int_equal(v, 9);
  assert_int_equal(m.len, 2);
  assert_true(cb__sim_map_del(&m, 0));
  assert_false(cb__sim_map_del(&m, 0));
  assert_false(cb__sim_map_get(&m, 0, NULL));
  assert_int_equal(m.len, 1);
  cb__sim_map_free(&m);
}

/* Random puts/deletes (many colliding keys) against a brute-force array model. */
static void test_map_random_against_model(void **state) {
  (void)state;
  enum { KEYS = 600, OPS = 200000 };
  static uint64_t keys[KEYS], vals[KEYS];
  static int present[KEYS];
  cb_rng rng;
  cb_rng_init(&rng, 42);
  for (int i = 0; i < KEYS; i++) {
    /* Half random, half structured (multiples of 2^40). */
    keys[i] = i % 2 ? cb_rng_next(&rng) : ((uint64_t)i << 40);
    present[i] = 0;
  }
  cb__sim_map m;
  cb__sim_map_init(&m, 4);
  size_t live = 0;
  for (int op = 0; op < OPS; op++) {
    int k = (int)cb_rng_below(&rng, KEYS);
    uint64_t r = cb_rng_below(&rng, 3);
    if (r == 0) {
      uint64_t v = cb_rng_next(&rng);
      cb__sim_map_put(&m, keys[k], v);
      live += !present[k];
      present[k] = 1;
      vals[k] = v;
    } else if (r == 1 && cb_rng_below(&rng, 4) == 0) {
      uint64_t v = cb_rng_next(&rng);
      int inserted = cb__sim_map_put_new(&m, keys[k], v);
      assert_int_equal(inserted, !present[k]);
      if (inserted) {
        present[k] = 1;
        vals[k] = v;
        live++;
      }
    } else if (r == 1) {
      int had = cb__sim_map_del(&m, keys[k]);
      assert_int_equal(had, present[k]);
      live -= (size_t)present[k];
      present[k] = 0;
    } else {
      uint64_t v;
      int got = cb__sim_map_get(&m, keys[k], &v);
      assert_int_equal(got, present[k]);
      if (got) assert_int_equal(v, vals[k]);
    }
    assert_int_equal(m.len, live);
  }
  for (int i = 0; i < KEYS; i++) {
    uint64_t v;
    assert_int_equal(cb__sim_map_get(&m, keys[i], &v), present[i]);
    if (present[i]) assert_int_equal(v, vals[i]);
  }
  cb__sim_map_free(&m);
}

/* ---- block hashes -------------------------------------------------------------------- */

static void test_block_hash_chained(void **state) {
  (void)state;
  uint32_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
  uint64_t h1 = cb__sim_block_hash(CB__SIM_NONE_HASH, a, 4);
  assert_int_equal(h1, cb__sim_block_hash(CB__SIM_NONE_HASH, a, 4));
  assert_int_not_equal(h1, cb__sim_block_hash(CB__SIM_NONE_HASH, b, 4));
  /* Same tokens under a different parent: a different block. */
  assert_int_not_equal(cb__sim_block_hash(h1, a, 4), cb__sim_block_hash(CB__SIM_NONE_HASH, a, 4));
}

/* ---- pool ---------------------------------------------------------------------------- */

static void test_pool_alloc_release_lru(void **state) {
  (void)state;
  cb__sim_kv kv;
  cb__sim_kv_init(&kv, 4, 16, 1);
  check_pool(&kv);
  assert_int_equal(cb__sim_kv_num_free(&kv), 4);
  int32_t a[2], b[2];
  a[0] = cb__sim_kv_alloc(&kv);
  a[1] = cb__sim_kv_alloc(&kv);
  b[0] = cb__sim_kv_alloc(&kv);
  b[1] = cb__sim_kv_alloc(&kv);
  assert_int_equal(a[0], 0); /* initial free order is id order */
  assert_int_equal(b[1], 3);
  assert_int_equal(cb__sim_kv_alloc(&kv), -1);
  assert_int_equal(cb__sim_kv_num_used(&kv), 4);
  check_pool(&kv);
  /* Release request a, then b: each in reverse, so the queue is a1 a0 b1 b0. */
  cb__sim_kv_release(&kv, a, 2);
  cb__sim_kv_release(&kv, b, 2);
  check_pool(&kv);
  assert_int_equal(cb__sim_kv_alloc(&kv), a[1]);
  assert_int_equal(cb__sim_kv_alloc(&kv), a[0]);
  assert_int_equal(cb__sim_kv_alloc(&kv), b[1]);
  assert_int_equal(cb__sim_kv_alloc(&kv), b[0]);
  cb__sim_kv_free(&kv);
}

static void test_pool_prefix_lookup_touch_evict(void **state) {
  (void)state;
  cb__sim_kv kv;
  cb__sim_kv_init(&kv, 4, 2, 1);
  uint32_t toks[6] = {10, 11, 12, 13, 14, 15};
  uint64_t h[3];
  h[0] = cb__sim_block_hash(CB__SIM_NONE_HASH, toks, 2);
  h[1] = cb__sim_block_hash(h[0], toks + 2, 2);
  h[2] = cb__sim_block_hash(h[1], toks + 4, 2);

  /* Request A computes three full blocks and finishes. */
  int32_t a[3];
  for (int i = 0; i < 3; i++) {
    a[i] = cb__sim_kv_alloc(&kv);
    cb__sim_kv_cache_block(&kv, a[i], h[i]);
  }
  check_pool(&kv);
  cb__sim_kv_release(&kv, a, 3); /* free queue: 3 a2 a1 a0, all a* still hashed */
  check_pool(&kv);
  assert_int_equal(kv.table.len, 3);

  /* Request B with the same first two blocks finds them, not the third. */
  uint64_t hb[3] = {h[0], h[1], 12345};
  int32_t found[3];
  assert_int_equal(cb__sim_kv_find_prefix(&kv, hb, 3, found), 2);
  assert_int_equal(found[0], a[0]);
  assert_int_equal(found[1], a[1]);
  assert_int_equal(cb__sim_kv_count_free(&kv, found, 2), 2);
  cb__sim_kv_touch(&kv, found, 2); /* ref 0 → 1: they leave the free queue */
  assert_int_equal(cb__sim_kv_num_free(&kv), 2);
  check_pool(&kv);

  /* The LRU head is the never-used block 3, then a2 (evicted: its hash is dropped). */
  assert_int_equal(cb__sim_kv_alloc(&kv), 3);
  assert_int_equal(kv.evictions, 0);
  assert_int_equal(cb__sim_kv_alloc(&kv), a[2]);
  assert_int_equal(kv.evictions, 1);
  assert_int_equal(cb__sim_kv_find_prefix(&kv, h, 3, found), 2);
  check_pool(&kv);

  /* A second holder of a cached block: ref 2, released twice before it is free. */
  cb__sim_kv_touch(&kv, found, 1);
  assert_int_equal(kv.ref[a[0]], 2);
  cb__sim_kv_release(&kv, found, 1);
  assert_int_equal(kv.ref[a[0]], 1);
  assert_int_equal(cb__sim_kv_num_free(&kv), 0);
  check_pool(&kv);
  cb__sim_kv_free(&kv);
}

static void test_pool_duplicate_hash_and_no_caching(void **state) {
  (void)state;
  cb__sim_kv kv;
  cb__sim_kv_init(&kv, 3, 4, 1);
  int32_t x = cb__sim_kv_alloc(&kv), y = cb__sim_kv_alloc(&kv);
  cb__sim_kv_cache_block(&kv, x, 777);
  cb__sim_kv_cache_block(&kv, y, 777); /* same content computed twice: table keeps x */
  assert_int_equal(kv.has_hash[x], 1);
  assert_int_equal(kv.has_hash[y], 0);
  check_pool(&kv);
  cb__sim_kv_free(&kv);

  cb__sim_kv_init(&kv, 3, 4, 0);
  x = cb__sim_kv_alloc(&kv);
  cb__sim_kv_cache_block(&kv, x, 777);
  uint64_t h = 777;
  int32_t out[1];
  assert_int_equal(cb__sim_kv_find_prefix(&kv, &h, 1, out), 0);
  check_pool(&kv);
  cb__sim_kv_free(&kv);
}

/* Random operations keep the pool consistent and the free count exact. */
static void test_pool_random_consistency(void **state) {
  (void)state;
  enum { NB = 64, HOLDERS = 12, MAXB = 16 };
  cb__sim_kv kv;
  cb__sim_kv_init(&kv, NB, 4, 1);
  int32_t held[HOLDERS][MAXB];
  int nheld[HOLDERS] = {0};
  cb_rng rng;
  cb_rng_init(&rng, 7);
  for (int op = 0; op < 20000; op++) {
    int h = (int)cb_rng_below(&rng, HOLDERS);
    uint64_t r = cb_rng_below(&rng, 4);
    if (r == 0 && nheld[h] < MAXB && cb__sim_kv_num_free(&kv) > 0) {
      int32_t b = cb__sim_kv_alloc(&kv);
      /* Content hash from a small space, so blocks are often shared via lookup. */
      cb__sim_kv_cache_block(&kv, b, cb_rng_below(&rng, 40));
      held[h][nheld[h]++] = b;
    } else if (r == 1 && nheld[h] < MAXB) {
      uint64_t hash = cb_rng_below(&rng, 40);
      int32_t b;
      if (cb__sim_kv_find_prefix(&kv, &hash, 1, &b) == 1) {
        cb__sim_kv_touch(&kv, &b, 1);
        held[h][nheld[h]++] = b;
      }
    } else if (r == 2 && nheld[h] > 0) {
      cb__sim_kv_release(&kv, held[h], (size_t)nheld[h]);
      nheld[h] = 0;
    }
    if (op % 97 == 0) check_pool(&kv);
  }
  int total = 0;
  for (int h = 0; h < HOLDERS; h++) total += nheld[h];
  int32_t refsum = 0;
  for (int b = 0; b < NB; b++) refsum += kv.ref[b];
  assert_int_equal(refsum, total);
  check_pool(&kv);
  cb__sim_kv_free(&kv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_map_basic),
      cmocka_unit_test(test_map_random_against_model),
      cmocka_unit_test(test_block_hash_chained),
      cmocka_unit_test(test_pool_alloc_release_lru),
      cmocka_unit_test(test_pool_prefix_lookup_touch_evict),
      cmocka_unit_test(test_pool_duplicate_hash_and_no_caching),
      cmocka_unit_test(test_pool_random_consistency),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
