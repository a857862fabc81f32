/*
 * test_workload_schedule.c - the schedule as a whole: determinism (same seed, same
 * entries and the same prompt bytes; another seed, other ones; the data and arrival
 * seeds each change only their part), shards whose union is the unsharded schedule
 * entry for entry and whose own processes stay faithful, classes by share and by
 * superposition, the class filter, item orders, the hash (XXH64 vectors from
 * python3-xxhash) and parameter errors.
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

#include "calibench/stats.h"
#include "calibench/workload.h"
#include "workload/workload_internal.h"
#include "test_workload_common.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void open_build(const cb_workload_params *p, cb_workload **w, cb_schedule *s) {
  cb_error err;
  cb_error_clear(&err);
  if (cb_workload_open(p, w, &err) != CB_OK) fail_msg("open: %s", err.msg);
  if (s && cb_workload_schedule(*w, s, &err) != CB_OK) fail_msg("schedule: %s", err.msg);
}

/* ---- the hash ------------------------------------------------------------------------- */

/*
 * XXH64 vectors from python3-xxhash 3.2.0 (Debian bookworm):
 *   /usr/bin/python3 -c "import xxhash; print(hex(xxhash.xxh64(DATA, seed=SEED).intdigest()))"
 * for b'', b'a', b'abc', b'The quick brown fox jumps over the lazy dog' (seed 0),
 * bytes(range(256))*3 (seed 0) and b'calibench' (seed 12345).
 */
static void test_xxh64_vectors(void **state) {
  (void)state;
  static const char *const fox = "The quick brown fox jumps over the lazy dog";
  assert_int_equal(cb__xxh64("", 0, 0), UINT64_C(0xef46db3751d8e999));
  assert_int_equal(cb__xxh64("a", 1, 0), UINT64_C(0xd24ec4f1a98c6e5b));
  assert_int_equal(cb__xxh64("abc", 3, 0), UINT64_C(0x44bc2cf5ad770999));
  assert_int_equal(cb__xxh64(fox, strlen(fox), 0), UINT64_C(0x0b242d361fda71bc));
  assert_int_equal(cb__xxh64("calibench", 9, 12345), UINT64_C(0xbc28c4f62b63b3d9));
  unsigned char big[768];
  for (int i = 0; i < 768; i++) big[i] = (unsigned char)(i % 256);
  assert_int_equal(cb__xxh64(big, sizeof big, 0), UINT64_C(0x8e03c838c596036f));
  /* Streaming over any split gives the same digest. */
  for (size_t step = 1; step <= 67; step += 11) {
    cb__xxh64_state h;
    cb__xxh64_init(&h, 0);
    for (size_t off = 0; off < sizeof big; off += step)
      cb__xxh64_update(&h, big + off, off + step <= sizeof big ? step : sizeof big - off);
    assert_int_equal(cb__xxh64_digest(&h), UINT64_C(0x8e03c838c596036f));
  }
}

/* ---- determinism -------------------------------------------------------------------------- */

static cb_workload_class_params classes2[2];
static char sharegpt_spec[1100];

/* Two share classes: synthetic with lognormal lengths and 3 shared prefixes, and
 * ShareGPT; Poisson at 20/s. */
static void mixed_params(cb_workload_params *p, uint64_t seed) {
  cb_workload_default_class(&classes2[0]);
  classes2[0].name = "synth";
  classes2[0].share = 2;
  classes2[0].data.input_len = (cb_dataset_len){CB_LEN_LOGNORMAL, 300, 0.6, 0, 2000};
  classes2[0].data.output_len = (cb_dataset_len){CB_LEN_UNIFORM, 64, 0.5, 0, 0};
  classes2[0].data.prefix_count = 3;
  classes2[0].data.prefix_len = 32;
  cb_workload_default_class(&classes2[1]);
  classes2[1].name = "chat";
  snprintf(sharegpt_spec, sizeof sharegpt_spec, "sharegpt:%s",
           fixture("sharegpt_fastchat_first40.json"));
  classes2[1].dataset = sharegpt_spec;
  cb_workload_default_params(p);
  p->seed = seed;
  p->arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 20.0,
                                   .burstiness = 1.0, .trace_speed = 1.0};
  p->num_requests = 300;
  p->classes = classes2;
  p->num_classes = 2;
}

/* Render every entry into one buffer (text, a separator, messages, a separator). */
static void all_prompts(const cb_workload *w, const cb_schedule *s, cb_buf *out) {
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  for (size_t i = 0; i < s->count; i++) {
    cb_error err;
    cb_error_clear(&err);
    if (cb_workload_render(w, &s->entries[i], &pr, &err) != CB_OK) fail_msg("%s", err.msg);
    if (s->entries[i].class_id == 0)
      assert_int_equal(cb_workload_approx_count(NULL, pr.text.data, pr.text.len),
                       s->entries[i].input_len);
    cb_buf_append(out, pr.text.data, pr.text.len);
    cb_buf_append(out, "\x1e", 1);
    cb_buf_append(out, pr.messages.data, pr.messages.len);
    cb_buf_append(out, "\x1f", 1);
  }
  cb_workload_prompt_free(&pr);
}

static void test_same_seed_same_bytes(void **state) {
  (void)state;
  cb_workload_params p;
  cb_workload *w1, *w2, *w3;
  cb_schedule s1, s2, s3;
  mixed_params(&p, 7);
  open_build(&p, &w1, &s1);
  open_build(&p, &w2, &s2);
  mixed_params(&p, 8);
  open_build(&p, &w3, &s3);
  assert_int_equal(s1.count, 300);
  assert_int_equal(s1.count, s2.count);
  assert_memory_equal(s1.entries, s2.entries, s1.count * sizeof *s1.entries);
  assert_int_equal(s1.hash, s2.hash);
  assert_int_equal(cb_workload_hash(w1), cb_workload_hash(w2));
  cb_buf b1, b2, b3;
  cb_buf_init(&b1, 0);
  cb_buf_init(&b2, 0);
  cb_buf_init(&b3, 0);
  all_prompts(w1, &s1, &b1);
  all_prompts(w2, &s2, &b2);
  all_prompts(w3, &s3, &b3);
  assert_int_equal(b1.len, b2.len);
  assert_memory_equal(b1.data, b2.data, b1.len); /* byte for byte */
  /* Another seed: other times, lengths, classes, prompts; another hash. */
  assert_true(s1.hash != s3.hash);
  assert_true(cb_workload_hash(w1) != cb_workload_hash(w3));
  size_t same_time = 0, same_seed = 0;
  for (size_t i = 1; i < s1.count; i++) {
    same_time += s1.entries[i].offset_ns == s3.entries[i].offset_ns;
    same_seed += s1.entries[i].seed == s3.entries[i].seed;
  }
  assert_int_equal(same_time, 0);
  assert_int_equal(same_seed, 0);
  assert_true(b1.len != b3.len || memcmp(b1.data, b3.data, b1.len) != 0);
  /* Both classes and all three prefixes are used. */
  size_t per_class[2] = {0, 0}, per_prefix[3] = {0, 0, 0};
  for (size_t i = 0; i < s1.count; i++) {
    per_class[s1.entries[i].class_id]++;
    if (s1.entries[i].class_id == 0) per_prefix[s1.entries[i].prefix_id]++;
    else assert_int_equal(s1.entries[i].prefix_id, CB_NO_PREFIX);
  }
  assert_true(per_class[0] > 150 && per_class[1] > 50);
  assert_true(per_prefix[0] && per_prefix[1] && per_prefix[2]);
  cb_buf_free(&b1);
  cb_buf_free(&b2);
  cb_buf_free(&b3);
  cb_schedule_free(&s1);
  cb_schedule_free(&s2);
  cb_schedule_free(&s3);
  cb_workload_free(w1);
  cb_workload_free(w2);
  cb_workload_free(w3);
}

/* The data seed decides what is sent, the arrival seed when. */
static void test_seed_roles(void **state) {
  (void)state;
  cb_workload_params p;
  cb_workload *wa, *wb;
  cb_schedule a, b;
  mixed_params(&p, 7);
  open_build(&p, &wa, &a);
  p.has_arrival_seed = 1;
  p.arrival_seed = 99;
  open_build(&p, &wb, &b);
  for (size_t i = 1; i < a.count; i++) {
    assert_true(a.entries[i].offset_ns != b.entries[i].offset_ns);
    assert_int_equal(a.entries[i].seed, b.entries[i].seed);
    assert_int_equal(a.entries[i].input_len, b.entries[i].input_len);
    assert_int_equal(a.entries[i].class_id, b.entries[i].class_id);
    assert_int_equal(a.entries[i].item, b.entries[i].item);
  }
  cb_schedule_free(&b);
  cb_workload_free(wb);
  p.has_arrival_seed = 0;
  p.has_data_seed = 1;
  p.data_seed = 99;
  open_build(&p, &wb, &b);
  size_t same_len = 0;
  for (size_t i = 0; i < a.count; i++) {
    assert_int_equal(a.entries[i].offset_ns, b.entries[i].offset_ns);
    assert_true(a.entries[i].seed != b.entries[i].seed);
    same_len += a.entries[i].input_len == b.entries[i].input_len;
  }
  assert_true(same_len < a.count / 4);
  cb_workload_seeds seeds;
  cb_workload_get_seeds(wb, &seeds);
  assert_int_equal(seeds.data, 99);
  cb_workload_seeds derived;
  cb_workload_derive_seeds(7, &derived);
  assert_int_equal(seeds.arrival, derived.arrival);
  assert_int_equal(derived.data, cb_hash3_u64(7, 0x64617461, 0));
  assert_int_equal(cb_workload_sampling_seed(wb, 5),
                   cb_hash3_u64(derived.sampling, 0x736d706c, 5));
  assert_true(cb_workload_sampling_seed(wb, 5) != cb_workload_sampling_seed(wb, 6));
  cb_schedule_free(&a);
  cb_schedule_free(&b);
  cb_workload_free(wa);
  cb_workload_free(wb);
}

/* ---- shards -------------------------------------------------------------------------------- */

static cb_workload_class_params sup[3];
static char trace_spec[1100];

/* Superposition: class 0 Poisson 10/s (own), class 1 constant 5/s (own), class 2 a
 * Mooncake trace replayed at 4x (own); 60 s. */
static void superposed_params(cb_workload_params *p) {
  for (int i = 0; i < 3; i++) {
    cb_workload_default_class(&sup[i]);
    sup[i].share = 0;
    sup[i].data.input_len.mean = 16;
  }
  sup[0].name = "poisson";
  sup[0].arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 10.0,
                                       .burstiness = 1.0, .trace_speed = 1.0};
  sup[1].name = "constant";
  sup[1].arrival = (cb_arrival_params){.kind = CB_ARRIVAL_CONSTANT, .rate = 5.0,
                                       .burstiness = 1.0, .trace_speed = 1.0};
  sup[2].name = "trace";
  snprintf(trace_spec, sizeof trace_spec, "trace:%s",
           fixture("mooncake_conversation_first200.jsonl"));
  sup[2].dataset = trace_spec;
  sup[2].arrival = (cb_arrival_params){.kind = CB_ARRIVAL_TRACE, .rate = 0,
                                       .burstiness = 1.0, .trace_speed = 4.0};
  cb_workload_default_params(p);
  p->seed = 3;
  p->arrival.kind = CB_ARRIVAL_POISSON; /* no share classes: unused, open loop */
  p->duration_ns = UINT64_C(60000000000);
  p->classes = sup;
  p->num_classes = 3;
}

static int cmp_index(const void *a, const void *b) {
  const cb_schedule_entry *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The union of shards 0..n-1 equals the unsharded schedule, entry for entry. */
static void check_union(cb_workload_params p, uint32_t n) {
  cb_workload *w;
  cb_schedule whole;
  p.shard_index = 0;
  p.shard_count = 1;
  open_build(&p, &w, &whole);
  cb_workload_free(w);
  cb_schedule_entry *all = calloc(whole.count ? whole.count : 1, sizeof *all);
  size_t got = 0;
  for (uint32_t i = 0; i < n; i++) {
    cb_schedule s;
    p.shard_index = i;
    p.shard_count = n;
    open_build(&p, &w, &s);
    assert_int_equal(s.total_count, whole.total_count);
    assert_int_equal(s.hash, whole.hash); /* every shard names the same workload */
    assert_true(got + s.count <= whole.count);
    memcpy(all + got, s.entries, s.count * sizeof *all);
    got += s.count;
    if (n > 1 && whole.count >= 20 * n) assert_true(s.count > 0);
    cb_schedule_free(&s);
    cb_workload_free(w);
  }
  assert_int_equal(got, whole.count);
  qsort(all, got, sizeof *all, cmp_index);
  assert_memory_equal(all, whole.entries, got * sizeof *all);
  free(all);
  cb_schedule_free(&whole);
}

static void test_shard_union_is_whole(void **state) {
  (void)state;
  static const uint32_t counts[] = {1, 2, 3, 4, 7};
  cb_workload_params p;
  for (size_t c = 0; c < ARRAY_LEN(counts); c++) {
    mixed_params(&p, 7); /* Poisson, two share classes */
    check_union(p, counts[c]);
    p.arrival.kind = CB_ARRIVAL_CONSTANT;
    check_union(p, counts[c]);
    p.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_GAMMA, .rate = 20.0,
                                    .burstiness = 0.3, .trace_speed = 1.0};
    check_union(p, counts[c]);
    p.arrival.kind = CB_ARRIVAL_CLOSED;
    check_union(p, counts[c]);
    superposed_params(&p);
    check_union(p, counts[c]);
  }
}

/* Each shard's own process: constant -> constant at rate/N; Poisson -> Poisson at
 * rate/N (independent thinning), KS against Exp(rate/N). */
static double expon_cdf(void *ctx, double x) {
  return x <= 0 ? 0.0 : -expm1(-*(const double *)ctx * x);
}

static void test_shard_processes(void **state) {
  (void)state;
  cb_workload_params p;
  cb_workload_class_params c;
  cb_workload_default_class(&c);
  c.data.input_len.mean = 8;
  cb_workload_default_params(&p);
  p.seed = 5;
  p.classes = &c;
  p.num_classes = 1;
  p.num_requests = 8000;
  p.shard_count = 4;
  p.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_CONSTANT, .rate = 40.0,
                                  .burstiness = 1.0, .trace_speed = 1.0};
  for (uint32_t i = 0; i < 4; i++) {
    cb_workload *w;
    cb_schedule s;
    p.shard_index = i;
    open_build(&p, &w, &s);
    assert_int_equal(s.count, 2000);
    for (size_t k = 1; k < s.count; k++)
      assert_int_equal(s.entries[k].offset_ns - s.entries[k - 1].offset_ns, 100000000);
    cb_schedule_free(&s);
    cb_workload_free(w);
  }
  p.arrival.kind = CB_ARRIVAL_POISSON;
  for (uint32_t i = 0; i < 4; i++) {
    cb_workload *w;
    cb_schedule s;
    p.shard_index = i;
    open_build(&p, &w, &s);
    /* Binomial(8000, 1/4): 2000 +- 4 x 38.7. */
    assert_true(fabs((double)s.count - 2000) < 155);
    double *g = malloc(s.count * sizeof *g);
    for (size_t k = 1; k < s.count; k++)
      g[k - 1] = (double)(s.entries[k].offset_ns - s.entries[k - 1].offset_ns) * 1e-9;
    double rate = 10.0;
    cb_stats_ks_result r;
    assert_int_equal(cb_stats_ks_1samp(g, s.count - 1, NULL, expon_cdf, &rate, &r, NULL), CB_OK);
    if (r.p_value < 0.01) fail_msg("shard %u gaps vs Exp(10): D %g p %g", i, r.d, r.p_value);
    free(g);
    cb_schedule_free(&s);
    cb_workload_free(w);
  }
}

/* ---- classes -------------------------------------------------------------------------------- */

static void test_shares_and_filter(void **state) {
  (void)state;
  cb_workload_class_params c[3];
  const char *names[3] = {"a", "b", "c"};
  const double shares[3] = {1, 2, 7};
  for (int i = 0; i < 3; i++) {
    cb_workload_default_class(&c[i]);
    c[i].name = names[i];
    c[i].share = shares[i];
    c[i].data.input_len.mean = 4;
  }
  cb_workload_params p;
  cb_workload_default_params(&p);
  p.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 100.0,
                                  .burstiness = 1.0, .trace_speed = 1.0};
  p.num_requests = 20000;
  p.classes = c;
  p.num_classes = 3;
  cb_workload *w;
  cb_schedule s;
  open_build(&p, &w, &s);
  size_t n[3] = {0, 0, 0};
  for (size_t i = 0; i < s.count; i++) n[s.entries[i].class_id]++;
  for (int i = 0; i < 3; i++) {
    double q = shares[i] / 10.0, sd = sqrt(20000 * q * (1 - q));
    if (fabs((double)n[i] - 20000 * q) > 4 * sd)
      fail_msg("class %d: %zu of 20000, want %g +- %g", i, n[i], 20000 * q, 4 * sd);
    assert_true(fabs(cb_workload_get_class(w, (size_t)i)->share - q) < 1e-12);
  }
  /* Synthetic items are the class's own request ordinals. */
  size_t ord[3] = {0, 0, 0};
  for (size_t i = 0; i < s.count; i++)
    assert_int_equal(s.entries[i].item, ord[s.entries[i].class_id]++);
  cb_workload_free(w);

  /* The class filter keeps exactly that class's entries, same indices and times. */
  p.class_filter = 1;
  cb_schedule f;
  open_build(&p, &w, &f);
  assert_int_equal(f.count, n[1]);
  assert_int_equal(f.hash, s.hash);
  size_t k = 0;
  for (size_t i = 0; i < s.count; i++)
    if (s.entries[i].class_id == 1)
      assert_memory_equal(&s.entries[i], &f.entries[k++], sizeof *f.entries);
  cb_schedule_free(&f);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

static void test_superposition(void **state) {
  (void)state;
  cb_workload_params p;
  superposed_params(&p);
  cb_workload *w;
  cb_schedule s;
  open_build(&p, &w, &s);
  size_t n[3] = {0, 0, 0};
  uint64_t last_const = 0;
  for (size_t i = 0; i < s.count; i++) {
    const cb_schedule_entry *e = &s.entries[i];
    if (i) assert_true(e->offset_ns >= s.entries[i - 1].offset_ns);
    assert_true(e->offset_ns < p.duration_ns);
    if (e->class_id == 1) {
      if (n[1]) assert_int_equal(e->offset_ns - last_const, 200000000);
      last_const = e->offset_ns;
    }
    if (e->class_id == 2) assert_int_equal(e->item, n[2]); /* trace rows in order */
    n[e->class_id]++;
  }
  assert_int_equal(n[1], 300); /* 5/s for 60 s, first at 0 */
  if (fabs((double)n[0] - 601) > 4 * sqrt(600.0)) fail_msg("Poisson class: %zu in 60 s", n[0]);
  assert_true(n[2] > 0 && n[2] <= 200);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

/* ---- item order ----------------------------------------------------------------------------- */

static void test_item_orders(void **state) {
  (void)state;
  /* shuffle: each pass over n items is a permutation, and passes differ. */
  for (uint64_t n = 1; n <= 300; n += 37) {
    unsigned char *seen = calloc(n, 1);
    uint64_t first_pass[300], second_pass[300];
    for (uint64_t k = 0; k < 2 * n; k++) {
      uint64_t it = cb__order_item(CB_ORDER_SHUFFLE, 42, 3, k, n);
      assert_true(it < n);
      if (k < n) {
        assert_int_equal(seen[it], 0);
        seen[it] = 1;
        first_pass[k] = it;
      } else {
        second_pass[k - n] = it;
      }
    }
    if (n > 5) assert_true(memcmp(first_pass, second_pass, n * sizeof *first_pass) != 0);
    free(seen);
  }
  assert_int_equal(cb__order_item(CB_ORDER_SEQUENTIAL, 42, 0, 45, 40), 5);
  for (uint64_t k = 0; k < 100; k++) assert_true(cb__order_item(CB_ORDER_RANDOM, 1, 0, k, 7) < 7);

  /* Through a workload: 40 ShareGPT items, sequential and shuffled. */
  cb_workload_class_params c;
  cb_workload_default_class(&c);
  char spec[1100];
  snprintf(spec, sizeof spec, "sharegpt:%s", fixture("sharegpt_fastchat_first40.json"));
  c.dataset = spec;
  c.data.order = CB_ORDER_SEQUENTIAL;
  cb_workload_params p;
  cb_workload_default_params(&p);
  p.num_requests = 80;
  p.classes = &c;
  p.num_classes = 1;
  cb_workload *w;
  cb_schedule s;
  open_build(&p, &w, &s);
  for (size_t i = 0; i < 80; i++) assert_int_equal(s.entries[i].item, i % 40);
  cb_schedule_free(&s);
  cb_workload_free(w);
  c.data.order = CB_ORDER_AUTO; /* shuffle for ShareGPT */
  open_build(&p, &w, &s);
  int seen[40] = {0};
  size_t in_place = 0;
  for (size_t i = 0; i < 40; i++) {
    seen[s.entries[i].item]++;
    in_place += s.entries[i].item == i;
  }
  for (int i = 0; i < 40; i++) assert_int_equal(seen[i], 1);
  assert_true(in_place < 10);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

/* ---- the description and the hash ----------------------------------------------------------- */

static void test_description_and_hash(void **state) {
  (void)state;
  cb_workload_params p;
  mixed_params(&p, 7);
  cb_workload *w;
  open_build(&p, &w, NULL);
  cb_buf d;
  cb_buf_init(&d, 0);
  assert_int_equal(cb_workload_describe(w, &d), CB_OK);
  static const char *const want[] = {
      "calibench-workload 1\n", "seed=7\n", "arrival=poisson rate=20\n", "num_requests=300\n",
      "counter=approx-128256\n", "class.0.name=synth\n",
      "class.0.input_len=lognormal mean=300 spread=0.59999999999999998 min=0 max=2000\n",
      "class.0.prefix=3x32\n", "class.1.dataset=sharegpt xxh64=4faaeea83d155d3d bytes=19623",
      "class.1.order=shuffle"};
  for (size_t i = 0; i < ARRAY_LEN(want); i++)
    if (!strstr(d.data, want[i])) fail_msg("description lacks '%s':\n%s", want[i], d.data);
  assert_int_equal(cb_workload_hash(w), cb__xxh64(d.data, d.len, 0));
  uint64_t h = cb_workload_hash(w);
  cb_workload_free(w);
  cb_buf_free(&d);

  /* Shard and class filter do not change it; the counter, a length, the data do. */
  p.shard_count = 3;
  p.shard_index = 2;
  p.class_filter = 1;
  open_build(&p, &w, NULL);
  assert_int_equal(cb_workload_hash(w), h);
  cb_workload_free(w);
  p.counter = (cb_token_counter){cb_workload_approx_count, NULL, "tiktoken:cl100k_base"};
  open_build(&p, &w, NULL);
  assert_true(cb_workload_hash(w) != h);
  cb_workload_free(w);
  mixed_params(&p, 7);
  classes2[0].data.input_len.mean = 301;
  open_build(&p, &w, NULL);
  assert_true(cb_workload_hash(w) != h);
  cb_workload_free(w);
  mixed_params(&p, 7);
  snprintf(sharegpt_spec, sizeof sharegpt_spec, "sharegpt:%s", fixture("sharegpt_mixed.json"));
  open_build(&p, &w, NULL);
  assert_true(cb_workload_hash(w) != h);
  cb_workload_free(w);
}

/* ---- iterator, errors ----------------------------------------------------------------------- */

static void test_iterator_matches_schedule(void **state) {
  (void)state;
  cb_workload_params p;
  superposed_params(&p);
  p.shard_count = 2;
  p.shard_index = 1;
  cb_workload *w;
  cb_schedule s;
  open_build(&p, &w, &s);
  cb_workload_iter *it;
  assert_int_equal(cb_workload_iter_new(w, &it, NULL), CB_OK);
  cb_schedule_entry e;
  size_t k = 0;
  while (cb_workload_iter_next(it, &e)) {
    assert_true(k < s.count);
    assert_memory_equal(&e, &s.entries[k], sizeof e);
    k++;
  }
  assert_int_equal(k, s.count);
  assert_int_equal(cb_workload_iter_next(it, &e), 0);
  cb_workload_iter_free(it);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

static void expect_open_error(const cb_workload_params *p, const char *about) {
  cb_workload *w = (cb_workload *)1;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_workload_open(p, &w, &err);
  if (st != CB_ERR_INVALID)
    fail_msg("status %s, want CB_ERR_INVALID (%s)", cb_status_name(st), err.msg);
  assert_null(w);
  if (!strstr(err.msg, about)) fail_msg("message '%s' lacks '%s'", err.msg, about);
}

static void test_parameter_errors(void **state) {
  (void)state;
  cb_workload_class_params c[2];
  cb_workload_default_class(&c[0]);
  cb_workload_default_class(&c[1]);
  cb_workload_params p;
  cb_workload_default_params(&p);
  expect_open_error(&p, "at least one class");
  p.classes = c;
  p.num_classes = 2;
  expect_open_error(&p, "classes[1]: the name 'default' is used twice");
  c[1].name = "batch";
  c[1].share = 0;
  c[1].arrival = (cb_arrival_params){.kind = CB_ARRIVAL_CONSTANT, .rate = 2.0,
                                     .burstiness = 1.0, .trace_speed = 1.0};
  expect_open_error(&p, "classes[1] 'batch': in a closed-loop workload every class needs a share");
  p.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 5.0,
                                  .burstiness = 1.0, .trace_speed = 1.0};
  p.shard_index = 4;
  p.shard_count = 4;
  expect_open_error(&p, "shard 4/4");
  p.shard_index = 0;
  const char *bad_header[] = {"X-Tenant batch"};
  c[1].headers = bad_header;
  c[1].num_headers = 1;
  expect_open_error(&p, "header 0 must be 'Name: value'");
  const char *good_header[] = {"X-Tenant: batch"};
  c[1].headers = good_header;
  c[1].arrival.rate = -1;
  expect_open_error(&p, "classes[1] 'batch': rate must be in (0, 1e9]");
  c[1].arrival.rate = 2;
  c[1].dataset = "jsonl:/nonexistent/file.jsonl";
  cb_workload *w;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_workload_open(&p, &w, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "classes[1] 'batch': /nonexistent/file.jsonl: cannot open"));
  c[1].dataset = "synthetic";
  p.num_requests = 10;
  cb_schedule s;
  open_build(&p, &w, &s);
  assert_int_equal(cb_workload_get_class(w, 1)->num_headers, 1);
  assert_string_equal(cb_workload_get_class(w, 1)->headers[0], "X-Tenant: batch");
  assert_null(cb_workload_get_class(w, 2));
  cb_schedule_free(&s);
  cb_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_xxh64_vectors),
      cmocka_unit_test(test_same_seed_same_bytes),
      cmocka_unit_test(test_seed_roles),
      cmocka_unit_test(test_shard_union_is_whole),
      cmocka_unit_test(test_shard_processes),
      cmocka_unit_test(test_shares_and_filter),
      cmocka_unit_test(test_superposition),
      cmocka_unit_test(test_item_orders),
      cmocka_unit_test(test_description_and_hash),
      cmocka_unit_test(test_iterator_matches_schedule),
      cmocka_unit_test(test_parameter_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
