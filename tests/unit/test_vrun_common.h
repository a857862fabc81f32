/*
 * test_vrun_common.h - helpers shared by the `sim run` and performance-calibration
 * tests (test_sim_vrun*.c, test_calib_perf*.c): a workload turned into runner items
 * (the request bodies `calibench run` would send, or the fast path's entries), a record
 * collector, and one call of cb_sim_run_virtual over them. Header-only (each test is its
 * own executable); include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_VRUN_COMMON_H
#define CALIBENCH_TEST_VRUN_COMMON_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "calibench/sim_run.h"
#include "calibench/workload.h"

/* A synthetic workload: n requests, open loop at `rate` (0: closed loop), lognormal
 * input lengths around in_mean (spread sigma; 0: fixed), max_tokens out. */
typedef struct tv_load {
  uint64_t seed;
  size_t n;
  double rate;
  double in_mean, in_sigma;
  uint32_t out;
  uint32_t prefix_count, prefix_len;
  int uniform;              /* input lengths uniform with range ratio in_sigma */
} tv_load;

typedef struct tv_items {
  cb_workload_class_params cls;
  cb_workload_params wp;
  cb_workload *wl;
  cb_schedule sched;
  char **bodies;            /* [n] request bodies (run's encoding) */
  size_t *lens;
  size_t next;
  int fast;                 /* 1: items without bodies, ids from the entries */
  cb_sim_prompt_ids *ids;
  cb_schedule_entry entry;
} tv_items;

static inline void tv_items_make(tv_items *t, const tv_load *l, int chat, int fast,
                                 uint32_t vocab) {
  memset(t, 0, sizeof *t);
  cb_workload_default_class(&t->cls);
  t->cls.data.input_len.mean = l->in_mean;
  if (l->in_sigma > 0) {
    t->cls.data.input_len.kind = l->uniform ? CB_LEN_UNIFORM : CB_LEN_LOGNORMAL;
    t->cls.data.input_len.spread = l->in_sigma;
  }
  t->cls.data.output_len.mean = l->out;
  t->cls.data.prefix_count = l->prefix_count;
  t->cls.data.prefix_len = l->prefix_len;
  cb_workload_default_params(&t->wp);
  t->wp.seed = l->seed;
  t->wp.num_requests = l->n;
  if (l->rate > 0) {
    t->wp.arrival.kind = CB_ARRIVAL_POISSON;
    t->wp.arrival.rate = l->rate;
  }
  t->wp.arrival.burstiness = 1;
  t->wp.arrival.trace_speed = 1;
  t->wp.classes = &t->cls;
  t->wp.num_classes = 1;
  cb_error err;
  cb_error_clear(&err);
  if (cb_workload_open(&t->wp, &t->wl, &err) != CB_OK) fail_msg("workload: %s", err.msg);
  if (cb_workload_schedule(t->wl, &t->sched, &err) != CB_OK) fail_msg("schedule: %s", err.msg);
  t->fast = fast;
  if (fast) {
    if (cb_sim_prompt_ids_new(t->wl, &t->wp, chat, vocab, &t->ids, &err) != CB_OK)
      fail_msg("prompt ids: %s", err.msg);
    return;
  }
  t->bodies = cb_calloc(t->sched.count, sizeof *t->bodies);
  t->lens = cb_calloc(t->sched.count, sizeof *t->lens);
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  cb_buf b;
  cb_buf_init(&b, 0);
  for (size_t i = 0; i < t->sched.count; i++) {
    if (cb_workload_render(t->wl, &t->sched.entries[i], &pr, &err) != CB_OK)
      fail_msg("render: %s", err.msg);
    cb_client_request rq;
    cb_client_request_init(&rq);
    rq.api = chat ? CB_CLIENT_API_CHAT : CB_CLIENT_API_COMPLETIONS;
    rq.model = "llama-3.1-8b";
    rq.prompt = pr.text.data;
    rq.prompt_len = pr.text.len;
    rq.max_tokens = pr.output_len ? (int64_t)pr.output_len : -1;
    cb_buf_reset(&b);
    if (cb_client_request_encode(&rq, &b, &err) != CB_OK) fail_msg("encode: %s", err.msg);
    t->bodies[i] = cb_strndup(b.data, b.len);
    t->lens[i] = b.len;
  }
  cb_buf_free(&b);
  cb_workload_prompt_free(&pr);
}

static inline void tv_items_free(tv_items *t) {
  for (size_t i = 0; t->bodies && i < t->sched.count; i++) cb_free(t->bodies[i]);
  cb_free(t->bodies);
  cb_free(t->lens);
  cb_sim_prompt_ids_free(t->ids);
  cb_schedule_free(&t->sched);
  cb_workload_free(t->wl);
}

static inline int tv_source(void *ctx, cb_runner_item *out) {
  tv_items *t = ctx;
  if (t->next >= t->sched.count) return 0;
  const cb_schedule_entry *e = &t->sched.entries[t->next];
  *out = (cb_runner_item){.index = e->index, .at_ns = e->offset_ns, .class_name = "",
                          .body = t->fast ? NULL : t->bodies[t->next],
                          .body_len = t->fast ? 0 : t->lens[t->next],
                          .prompt_tokens = e->input_len, .prompt_source = CB_TOKENS_DATASET};
  t->entry = *e;
  t->next++;
  return 1;
}

static inline cb_status tv_prompt(void *ctx, const cb_runner_item *item, cb_sim_vrun_request *out,
                                  cb_error *err) {
  (void)item;
  tv_items *t = ctx;
  out->max_tokens = t->entry.output_len ? (int64_t)t->entry.output_len : -1;
  return cb_sim_prompt_ids_of(t->ids, &t->entry, &out->prompt_ids, &out->prompt_len, err);
}

static inline void tv_collect(void *ctx, cb_record *r) { cb_record_set_push(ctx, r); }

/* Run the items through the engine in virtual time; records go to *set. */
static inline void tv_run(tv_items *t, const cb_sim_params *engine, uint64_t seed, int replicas,
                          int chat, int concurrency, cb_record_set *set, cb_runner_stats *stats) {
  cb_sim_vrun_params vp;
  cb_sim_vrun_default_params(&vp);
  vp.sim.engine = *engine;
  vp.sim.seed = seed;
  vp.sim.replicas = replicas;
  vp.runner.chat = chat;
  vp.runner.run_id = "test";
  vp.runner.concurrency = concurrency;
  if (t->fast) {
    vp.prompt = tv_prompt;
    vp.prompt_ctx = t;
  }
  t->next = 0;
  cb_error err;
  cb_error_clear(&err);
  cb_record_set_init(set);
  if (cb_sim_run_virtual(&vp, tv_source, t, tv_collect, set, stats, &err) != CB_OK)
    fail_msg("cb_sim_run_virtual: %s", err.msg);
}

/* The record of schedule index `index`, or NULL. */
static inline const cb_record *tv_find(const cb_record_set *s, uint64_t index) {
  for (size_t i = 0; i < s->count; i++)
    if (s->items[i].index == index) return &s->items[i];
  return NULL;
}

/* ---- distributions -------------------------------------------------------------------- */

typedef enum { TV_TTFT, TV_TPOT, TV_E2E, TV_ITL } tv_metric;

/* Values of a metric over the successes, in ns x scale (allocated; *n set). */
static inline double *tv_values(const cb_record_set *s, tv_metric m, double scale, size_t *n) {
  size_t cap = 16;
  for (size_t i = 0; i < s->count; i++) cap += s->items[i].n_chunks;
  double *v = cb_calloc(cap, sizeof *v);
  *n = 0;
  for (size_t i = 0; i < s->count; i++) {
    const cb_record *r = &s->items[i];
    if (!cb_record_ok(r) || !r->first_content_ns) continue;
    double ttft = (double)(r->first_content_ns - r->sent_ns), e2e = (double)(r->end_ns - r->sent_ns);
    if (m == TV_TTFT) v[(*n)++] = ttft * scale;
    else if (m == TV_E2E) v[(*n)++] = e2e * scale;
    else if (m == TV_TPOT && r->output_tokens > 1)
      v[(*n)++] = (double)(r->last_content_ns - r->first_content_ns) / (double)(r->output_tokens - 1) * scale;
    else if (m == TV_ITL)
      for (size_t k = 1; k < r->n_chunks; k++) v[(*n)++] = (double)(r->chunk_ns[k] - r->chunk_ns[k - 1]) * scale;
  }
  return v;
}

static int tv_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Two-sample Kolmogorov-Smirnov statistic D (sorts both arrays). */
static inline double tv_ks_d(double *a, size_t n, double *b, size_t m) {
  qsort(a, n, sizeof *a, tv_cmp_double);
  qsort(b, m, sizeof *b, tv_cmp_double);
  size_t i = 0, j = 0;
  double d = 0;
  while (i < n && j < m) {
    double x = a[i] <= b[j] ? a[i] : b[j];
    while (i < n && a[i] <= x) i++;
    while (j < m && b[j] <= x) j++;
    double g = fabs((double)i / (double)n - (double)j / (double)m);
    if (g > d) d = g;
  }
  return d;
}

/* Linear-interpolated quantile of a sorted array. */
static inline double tv_q(const double *s, size_t n, double q) {
  double h = (double)(n - 1) * q;
  size_t i = (size_t)h;
  return i + 1 < n ? s[i] + (h - (double)i) * (s[i + 1] - s[i]) : s[n - 1];
}

#endif
