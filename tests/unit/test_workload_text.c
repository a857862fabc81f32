/*
 * test_workload_text.c - prompts of an exact token length: the approximate tokenizer
 * and two awkward counters (not additive; not even monotonic on prefixes), natural
 * variety, determinism, shared prefixes that really share their first L tokens, and
 * trace prompts whose equal hash_id prefixes give equal text.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/tok.h"
#include "calibench/workload.h"
#include "test_workload_common.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static size_t approx(const char *t, size_t n) { return cb_workload_approx_count(NULL, t, n); }

/* ceil(bytes / 4): monotonic, not additive over words. */
static size_t chars4(void *ctx, const char *t, size_t n) {
  (void)ctx;
  (void)t;
  return (n + 3) / 4;
}

/* The approximate count plus 1 when the length is a multiple of 5: appending a byte
 * can lower the count, so it is not monotonic on prefixes. */
static size_t wobbly(void *ctx, const char *t, size_t n) {
  (void)ctx;
  return approx(t, n) + (n % 5 == 0 ? 1 : 0);
}

static const uint32_t lengths[] = {1,   2,   3,   4,   5,    7,    10,   16,   31,   32,
                                   63,  64,  100, 127, 128,  255,  256,  511,  512,  777,
                                   1000, 1023, 1024, 2048, 3000, 4096, 8192, 16384};

static void check_exact(const cb_token_counter *c, size_t (*count)(const char *, size_t, void *),
                        void *cctx, int seeds, size_t max_len) {
  cb_workload_prompt scratch;
  cb_workload_prompt_init(&scratch);
  cb_buf out;
  cb_buf_init(&out, 0);
  for (size_t i = 0; i < ARRAY_LEN(lengths); i++) {
    if (lengths[i] > max_len) continue;
    for (int s = 0; s < seeds; s++)
      for (int lead = 0; lead <= 1; lead++) {
        cb_buf_reset(&out);
        cb_error err;
        cb_error_clear(&err);
        uint64_t seed = (uint64_t)s * 7919 + lengths[i];
        cb_status st = cb_workload_synth_text(c, lengths[i], seed, lead, &scratch, &out, &err);
        if (st != CB_OK)
          fail_msg("N=%u seed=%llu: %s", lengths[i], (unsigned long long)seed, err.msg);
        size_t got = count(out.data, out.len, cctx);
        if (got != lengths[i])
          fail_msg("N=%u seed=%llu lead=%d: text counts %zu tokens: '%.80s'", lengths[i],
                   (unsigned long long)seed, lead, got, out.data);
        assert_int_equal(out.data[0] == ' ', lead);
      }
  }
  cb_buf_free(&out);
  cb_workload_prompt_free(&scratch);
}

static size_t count_approx(const char *t, size_t n, void *ctx) {
  (void)ctx;
  return approx(t, n);
}
static size_t count_via(const char *t, size_t n, void *ctx) {
  const cb_token_counter *c = ctx;
  return c->count(c->ctx, t, n);
}

static void test_exact_length_approx(void **state) {
  (void)state;
  /* 28 lengths x 20 seeds x 2 = 1120 texts, each re-counted. */
  check_exact(NULL, count_approx, NULL, 20, SIZE_MAX);
}

static void test_exact_length_not_additive(void **state) {
  (void)state;
  cb_token_counter c = {chars4, NULL, "chars/4"};
  check_exact(&c, count_via, &c, 5, 4096);
}

static void test_exact_length_not_monotonic(void **state) {
  (void)state;
  cb_token_counter c = {wobbly, NULL, "wobbly"};
  check_exact(&c, count_via, &c, 5, 4096);
}

static void test_text_is_varied_and_deterministic(void **state) {
  (void)state;
  cb_workload_prompt scratch;
  cb_workload_prompt_init(&scratch);
  cb_buf a, b, c;
  cb_buf_init(&a, 0);
  cb_buf_init(&b, 0);
  cb_buf_init(&c, 0);
  assert_int_equal(cb_workload_synth_text(NULL, 2000, 42, 0, &scratch, &a, NULL), CB_OK);
  assert_int_equal(cb_workload_synth_text(NULL, 2000, 42, 0, &scratch, &b, NULL), CB_OK);
  assert_int_equal(cb_workload_synth_text(NULL, 2000, 43, 0, &scratch, &c, NULL), CB_OK);
  assert_int_equal(a.len, b.len);
  assert_memory_equal(a.data, b.data, a.len);
  assert_true(a.len != c.len || memcmp(a.data, c.data, a.len) != 0);
  /* Natural text: many distinct words, none dominating, sentences. */
  char *copy = strdup(a.data);
  char *words[4096];
  size_t nw = 0;
  for (char *w = strtok(copy, " "); w && nw < ARRAY_LEN(words); w = strtok(NULL, " "))
    words[nw++] = w;
  size_t distinct = 0, most = 0;
  for (size_t i = 0; i < nw; i++) {
    size_t same = 0, seen_before = 0;
    for (size_t j = 0; j < nw; j++)
      if (strcmp(words[i], words[j]) == 0) {
        same++;
        if (j < i) seen_before = 1;
      }
    distinct += !seen_before;
    if (same > most) most = same;
  }
  if (distinct < 250 || most * 10 > nw)
    fail_msg("%zu words, %zu distinct, the most frequent %zu times", nw, distinct, most);
  assert_non_null(strchr(a.data, '.'));
  assert_non_null(strchr(a.data, ','));
  free(copy);
  cb_buf_free(&a);
  cb_buf_free(&b);
  cb_buf_free(&c);
  cb_workload_prompt_free(&scratch);
}

/* ---- shared prefixes ------------------------------------------------------------------- */

static size_t ids_of(const char *t, size_t n, uint32_t **ids) {
  size_t k = cb_tok_approx_tokenize(t, n, CB_WORKLOAD_APPROX_VOCAB, NULL, 0);
  *ids = malloc((k ? k : 1) * sizeof **ids);
  cb_tok_approx_tokenize(t, n, CB_WORKLOAD_APPROX_VOCAB, *ids, k);
  return k;
}

static void test_shared_prefixes(void **state) {
  (void)state;
  enum { COUNT = 4, LEN = 64, N = 48 };
  cb_workload_class_params cls;
  cb_workload_default_class(&cls);
  cls.data.prefix_count = COUNT;
  cls.data.prefix_len = LEN;
  cls.data.input_len = (cb_dataset_len){CB_LEN_UNIFORM, 200, 0.5, 0, 0};
  cb_workload_params p;
  cb_workload_default_params(&p);
  p.seed = 11;
  p.num_requests = N;
  p.classes = &cls;
  p.num_classes = 1;
  cb_workload *w;
  cb_error err;
  cb_error_clear(&err);
  if (cb_workload_open(&p, &w, &err) != CB_OK) fail_msg("%s", err.msg);
  cb_schedule s;
  assert_int_equal(cb_workload_schedule(w, &s, &err), CB_OK);
  assert_int_equal(s.count, N);
  uint32_t *first[COUNT] = {0};
  int seen[COUNT] = {0};
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  for (size_t i = 0; i < s.count; i++) {
    const cb_schedule_entry *e = &s.entries[i];
    assert_true(e->prefix_id < COUNT);
    assert_true(e->input_len > LEN);
    assert_int_equal(cb_workload_render(w, e, &pr, &err), CB_OK);
    uint32_t *ids;
    size_t k = ids_of(pr.text.data, pr.text.len, &ids);
    assert_int_equal(k, e->input_len);
    if (!first[e->prefix_id]) {
      first[e->prefix_id] = ids;
    } else {
      if (memcmp(first[e->prefix_id], ids, LEN * sizeof *ids) != 0)
        fail_msg("entry %zu: the first %d tokens differ from its prefix's", i, LEN);
      /* The body after the prefix is the request's own. */
      assert_true(memcmp(first[e->prefix_id] + LEN, ids + LEN, 8 * sizeof *ids) != 0);
      free(ids);
    }
    seen[e->prefix_id]++;
  }
  for (int a = 0; a < COUNT; a++) {
    assert_true(seen[a] > 0);
    for (int b = a + 1; b < COUNT; b++)
      assert_true(memcmp(first[a], first[b], LEN * sizeof(uint32_t)) != 0);
    free(first[a]);
  }
  cb_workload_prompt_free(&pr);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

/* ---- trace prompts: hash ids -> shared text --------------------------------------------- */

static void render_item(const cb_dataset *ds, size_t item, uint64_t seed, cb_workload_prompt *pr) {
  cb_dataset_item it;
  assert_int_equal(cb_dataset_get_item(ds, item, &it, NULL), CB_OK);
  cb_error err;
  cb_error_clear(&err);
  if (cb_dataset_render(ds, item, it.input_len, it.output_len, seed, CB_NO_PREFIX, pr, &err) !=
      CB_OK)
    fail_msg("item %zu: %s", item, err.msg);
  assert_int_equal(approx(pr->text.data, pr->text.len), it.input_len);
}

/* Rows (0-based) of mooncake_conversation_first200.jsonl, checked with Python:
 * rows 64 and 166 share their first 38 hash ids (19694 and 19878 tokens, 39 ids each);
 * rows 1 and 137 share 14 ([0, 14..26]; 7322 and 7833 tokens); rows 0 and 1 share only
 * id 0. */
static void test_trace_hash_ids_share_text(void **state) {
  (void)state;
  cb_dataset *ds;
  cb_error err;
  cb_error_clear(&err);
  char spec[1100];
  snprintf(spec, sizeof spec, "trace:%s", fixture("mooncake_conversation_first200.jsonl"));
  if (cb_dataset_open(spec, NULL, NULL, 5, &ds, &err) != CB_OK) fail_msg("%s", err.msg);
  static const struct {
    size_t a, b, shared_blocks;
  } pairs[] = {{64, 166, 38}, {1, 137, 14}, {0, 1, 1}};
  cb_workload_prompt pa, pb;
  cb_workload_prompt_init(&pa);
  cb_workload_prompt_init(&pb);
  for (size_t i = 0; i < ARRAY_LEN(pairs); i++) {
    /* Different request seeds: only the hash ids may make text equal. */
    render_item(ds, pairs[i].a, 1000 + i, &pa);
    render_item(ds, pairs[i].b, 2000 + i, &pb);
    uint32_t *ia, *ib;
    size_t na = ids_of(pa.text.data, pa.text.len, &ia);
    size_t nb = ids_of(pb.text.data, pb.text.len, &ib);
    size_t shared = pairs[i].shared_blocks * 512;
    assert_true(na > shared && nb > shared);
    if (memcmp(ia, ib, shared * sizeof *ia) != 0)
      fail_msg("rows %zu and %zu: the first %zu tokens differ", pairs[i].a, pairs[i].b, shared);
    /* The next block differs (different hash ids). */
    assert_true(memcmp(ia + shared, ib + shared, 16 * sizeof *ia) != 0);
    free(ia);
    free(ib);
  }
  /* A row rendered twice with different request seeds: identical (every token is in a
   * hash-id block, the last one cut short). */
  render_item(ds, 3, 1, &pa);
  render_item(ds, 3, 2, &pb);
  assert_int_equal(pa.text.len, pb.text.len);
  assert_memory_equal(pa.text.data, pb.text.data, pa.text.len);
  cb_workload_prompt_free(&pa);
  cb_workload_prompt_free(&pb);
  cb_dataset_free(ds);
}

/* Azure rows have no hash ids: the whole prompt comes from the request seed. */
static void test_trace_without_hash_ids(void **state) {
  (void)state;
  cb_dataset *ds;
  cb_error err;
  cb_error_clear(&err);
  char spec[1100];
  snprintf(spec, sizeof spec, "trace:%s", fixture("azure_code_2023_first200.csv"));
  if (cb_dataset_open(spec, NULL, NULL, 5, &ds, &err) != CB_OK) fail_msg("%s", err.msg);
  cb_workload_prompt pa, pb;
  cb_workload_prompt_init(&pa);
  cb_workload_prompt_init(&pb);
  render_item(ds, 0, 1, &pa); /* 4808 tokens */
  render_item(ds, 0, 2, &pb);
  assert_true(pa.text.data[0] != ' ');
  assert_true(pa.text.len != pb.text.len || memcmp(pa.text.data, pb.text.data, pa.text.len));
  for (size_t i = 0; i < 20; i++) render_item(ds, i, i, &pa);
  cb_workload_prompt_free(&pa);
  cb_workload_prompt_free(&pb);
  cb_dataset_free(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_length_approx),
      cmocka_unit_test(test_exact_length_not_additive),
      cmocka_unit_test(test_exact_length_not_monotonic),
      cmocka_unit_test(test_text_is_varied_and_deterministic),
      cmocka_unit_test(test_shared_prefixes),
      cmocka_unit_test(test_trace_hash_ids_share_text),
      cmocka_unit_test(test_trace_without_hash_ids),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
