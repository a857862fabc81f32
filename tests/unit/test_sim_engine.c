/*
 * test_sim_engine.c - the simulator's scheduler (src/sim/engine.c): invariants under
 * many seeded random workloads (tiny KV caches that force preemption, shared prefixes,
 * random arrivals and aborts, aborts from inside the event callback), plus targeted
 * checks of rejection, preemption, prefix hits, chunked prefill, timing, warm-up and
 * jitter.
 *
 * Invariants checked after every step (the driver never lets advance() run more than
 * one step end and one step start per call, so every step is seen):
 *   - tokens scheduled <= max_num_batched_tokens, sequences <= max_num_seqs;
 *   - KV blocks in use <= capacity and cb__sim_engine_check's ref-count audit;
 *   - event times never decrease; TOKEN indexes are 0..n-1 in order, each request
 *     gets exactly output_len of them and one FINISHED, none after an abort;
 *   - no starvation: first admissions happen in arrival order (FIFO) and every
 *     request that is not aborted finishes before the engine goes idle.
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

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "sim/engine_internal.h"

static void engine_ok(const cb_sim_engine *e) {
  char why[256];
  if (cb__sim_engine_check(e, why, sizeof why) != CB_OK) fail_msg("engine check: %s", why);
}

/* ---- a recording callback --------------------------------------------------------- */

typedef struct rec {
  int64_t output_len;
  int64_t next_index;   /* next TOKEN index expected */
  int finished;         /* FINISHED events seen */
  int aborted;
  int scheduled;        /* SCHEDULED events seen */
  int preempted;        /* PREEMPTED events seen */
  int64_t first_hit;    /* prefix_hit_tokens of the first SCHEDULED */
  uint64_t arrival_ns, first_sched_ns, first_token_ns, last_token_ns, finish_ns;
  uint64_t seed;
  uint32_t last_id;
} rec;

typedef struct world {
  cb_sim_engine *e;
  rec *recs;            /* indexed by request id */
  size_t n;
  uint64_t last_time;
  uint64_t last_first_admit_arrival;
  cb_rng rng;
  double cb_abort_prob; /* abort from inside the callback */
  int check_in_callback;
  uint32_t vocab;
} world;

static void on_event(void *ctx, const cb_sim_event *ev) {
  world *w = ctx;
  assert_true(ev->request_id < w->n);
  rec *r = &w->recs[ev->request_id];
  if (ev->time_ns < w->last_time)
    fail_msg("time went backwards: %llu after %llu", (unsigned long long)ev->time_ns,
             (unsigned long long)w->last_time);
  w->last_time = ev->time_ns;
  if (r->aborted) fail_msg("event %d for request %llu after its abort", ev->kind,
                           (unsigned long long)ev->request_id);
  switch (ev->kind) {
  case CB_SIM_EV_SCHEDULED:
    if (r->scheduled == 0) {
      r->first_sched_ns = ev->time_ns;
      r->first_hit = ev->prefix_hit_tokens;
      /* FIFO admission: first admissions come in arrival order. */
      if (r->arrival_ns < w->last_first_admit_arrival)
        fail_msg("request %llu (arrival %llu) admitted after a later arrival %llu",
                 (unsigned long long)ev->request_id, (unsigned long long)r->arrival_ns,
                 (unsigned long long)w->last_first_admit_arrival);
      w->last_first_admit_arrival = r->arrival_ns;
    }
    assert_true(ev->time_ns >= r->arrival_ns);
    r->scheduled++;
    break;
  case CB_SIM_EV_PREEMPTED:
    r->preempted++;
    break;
  case CB_SIM_EV_TOKEN:
    if (ev->token_index != r->next_index)
      fail_msg("request %llu: token index %lld, expected %lld", (unsigned long long)ev->request_id,
               (long long)ev->token_index, (long long)r->next_index);
    if (r->next_index == 0) r->first_token_ns = ev->time_ns;
    else assert_true(ev->time_ns > r->last_token_ns);
    r->last_token_ns = ev->time_ns;
    r->last_id = ev->token_id;
    assert_true(ev->token_id < w->vocab);
    r->next_index++;
    assert_true(r->next_index <= r->output_len);
    break;
  case CB_SIM_EV_FINISHED:
    assert_int_equal(r->next_index, r->output_len);
    assert_int_equal(r->finished, 0);
    r->finished++;
    r->finish_ns = ev->time_ns;
    break;
  }
  if (w->check_in_callback) engine_ok(w->e);
  if (ev->kind == CB_SIM_EV_TOKEN && w->cb_abort_prob > 0 &&
      cb_rng_uniform(&w->rng) < w->cb_abort_prob) {
    /* Abort this request or a random other one, from inside the callback. */
    uint64_t victim = cb_rng_uniform(&w->rng) < 0.5 ? ev->request_id : cb_rng_below(&w->rng, w->n);
    if (!w->recs[victim].finished && !w->recs[victim].aborted && w->recs[victim].output_len > 0) {
      cb_sim_engine_abort(w->e, victim);
      w->recs[victim].aborted = 1;
    }
    engine_ok(w->e);
  }
}

/* ---- the random workload ------------------------------------------------------------ */

static cb_sim_params tiny_params(cb_rng *rng) {
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.block_size = cb_rng_below(rng, 2) ? 16 : 4;
  p.num_gpu_blocks_override = 8 + (int64_t)cb_rng_below(rng, 72);
  int64_t cap_tokens = p.num_gpu_blocks_override * p.block_size;
  p.max_model_len = (int)(cap_tokens < 600 ? cap_tokens : 600);
  p.max_num_batched_tokens = 8 + (int)cb_rng_below(rng, 500);
  p.max_num_seqs = 1 + (int)cb_rng_below(rng, 32);
  p.long_prefill_token_threshold = cb_rng_below(rng, 3) == 0 ? 1 + (int)cb_rng_below(rng, 64) : 0;
  p.enable_prefix_caching = cb_rng_below(rng, 4) != 0;
  p.jitter_cv = cb_rng_below(rng, 3) == 0 ? 0.3 : 0.0;
  p.warmup_steps = (int)cb_rng_below(rng, 4);
  p.seed = cb_rng_next(rng);
  return p;
}

typedef struct planned {
  uint64_t arrival_ns;
  uint64_t abort_ns; /* UINT64_MAX = never */
  size_t prompt_len;
  int64_t output_len;
  uint32_t *prompt;
} planned;

typedef struct totals {
  uint64_t preemptions, prefix_hits, rejected, aborted, finished, steps;
} totals;

static void run_random_workload(uint64_t seed, totals *tot) {
  cb_rng rng;
  cb_rng_init_stream(&rng, seed, 1, 0);
  cb_sim_params p = tiny_params(&rng);
  cb_sim_engine *e;
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_new(&p, &e, &err) != CB_OK) fail_msg("seed %llu: %s", (unsigned long long)seed, err.msg);
  const cb_sim_capacity *cap = cb_sim_engine_capacity(e);
  int maxlen = cap->max_model_len;

  size_t n = 40 + cb_rng_below(&rng, 120);
  planned *plan = cb_calloc(n, sizeof *plan);
  /* Three prefix families for shared prefixes. */
  uint32_t fam[3][96];
  for (int f = 0; f < 3; f++)
    for (int i = 0; i < 96; i++) fam[f][i] = (uint32_t)cb_rng_below(&rng, 128256);
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) {
    t += cb_rng_below(&rng, 3) == 0 ? 0 : cb_rng_below(&rng, 8000000); /* bursts and gaps */
    plan[i].arrival_ns = t;
    plan[i].prompt_len = 1 + cb_rng_below(&rng, (uint64_t)(maxlen * 3 / 4));
    plan[i].output_len = 1 + (int64_t)cb_rng_below(&rng, (uint64_t)(maxlen / 3 + 1));
    plan[i].prompt = cb_malloc(plan[i].prompt_len * sizeof *plan[i].prompt);
    size_t shared = 0;
    if (cb_rng_below(&rng, 2)) {
      int f = (int)cb_rng_below(&rng, 3);
      shared = cb_rng_below(&rng, 97);
      if (shared > plan[i].prompt_len) shared = plan[i].prompt_len;
      memcpy(plan[i].prompt, fam[f], shared * sizeof *plan[i].prompt);
    }
    for (size_t k = shared; k < plan[i].prompt_len; k++)
      plan[i].prompt[k] = (uint32_t)cb_rng_below(&rng, 128256);
    plan[i].abort_ns = cb_rng_below(&rng, 20) == 0 ? t + cb_rng_below(&rng, 50000000) : UINT64_MAX;
  }

  world w = {.e = e, .n = n, .vocab = 128256, .cb_abort_prob = 0.002,
             .check_in_callback = (seed % 5) == 0};
  w.recs = cb_calloc(n, sizeof *w.recs);
  cb_rng_init_stream(&w.rng, seed, 2, 0);

  size_t next_add = 0;
  int64_t rejected = 0;
  for (;;) {
    uint64_t t_add = next_add < n ? plan[next_add].arrival_ns : UINT64_MAX;
    uint64_t t_abort = UINT64_MAX;
    size_t abort_i = 0;
    for (size_t i = 0; i < next_add; i++) /* small n: a scan is fine in a test */
      if (plan[i].abort_ns < t_abort && !w.recs[i].aborted && !w.recs[i].finished &&
          w.recs[i].output_len > 0) {
        t_abort = plan[i].abort_ns;
        abort_i = i;
      }
    uint64_t t_ev = cb_sim_engine_next_event_ns(e);
    uint64_t now = t_add < t_ev ? t_add : t_ev;
    if (t_abort < now) now = t_abort;
    if (now == UINT64_MAX) break;

    cb_sim_engine_advance(e, now, on_event, &w);
    engine_ok(e);
    cb__sim_step_info si;
    cb__sim_engine_step_info(e, &si);
    if (si.in_flight) {
      if (si.tokens > p.max_num_batched_tokens)
        fail_msg("seed %llu: step of %lld tokens > budget %d", (unsigned long long)seed,
                 (long long)si.tokens, p.max_num_batched_tokens);
      assert_true(si.seqs >= 1 && si.seqs <= p.max_num_seqs);
      assert_true(si.end_ns > si.start_ns);
    }
    cb_sim_engine_stats st;
    cb_sim_engine_get_stats(e, &st);
    assert_true(st.kv_blocks_used <= st.kv_blocks_total);
    assert_true(st.running <= p.max_num_seqs);

    if (now == t_abort) {
      cb_sim_engine_abort(e, abort_i);
      w.recs[abort_i].aborted = 1;
      engine_ok(e);
    }
    if (now == t_add) {
      planned *pl = &plan[next_add];
      cb_sim_request rq = {.id = next_add, .prompt_ids = pl->prompt, .prompt_len = pl->prompt_len,
                           .output_len = pl->output_len, .output_seed = seed * 1000 + next_add};
      cb_status s = cb_sim_engine_add(e, &rq, now, &err);
      if ((int64_t)pl->prompt_len + pl->output_len > maxlen) {
        assert_int_equal(s, CB_ERR_RANGE);
        rejected++;
      } else {
        assert_int_equal(s, CB_OK);
        w.recs[next_add].output_len = pl->output_len;
        w.recs[next_add].arrival_ns = now;
      }
      next_add++;
      engine_ok(e);
    }
  }

  /* Idle: everything that was neither rejected nor aborted finished exactly once. */
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  assert_int_equal(st.running, 0);
  assert_int_equal(st.waiting, 0);
  uint64_t finished = 0;
  for (size_t i = 0; i < n; i++) {
    rec *r = &w.recs[i];
    if (r->output_len == 0) continue; /* rejected */
    if (r->aborted) continue;
    if (r->finished != 1)
      fail_msg("seed %llu: request %zu finished %d times (%lld/%lld tokens, %d preemptions)",
               (unsigned long long)seed, i, r->finished, (long long)r->next_index,
               (long long)r->output_len, r->preempted);
    finished++;
  }
  assert_int_equal(st.finished, finished);
  tot->preemptions += st.preemptions;
  tot->prefix_hits += st.prefix_hits;
  tot->rejected += (uint64_t)rejected;
  tot->finished += finished;
  tot->steps += st.steps;
  for (size_t i = 0; i < n; i++) tot->aborted += (uint64_t)w.recs[i].aborted;
  for (size_t i = 0; i < n; i++) cb_free(plan[i].prompt);
  cb_free(plan);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

static void test_invariants_random_workloads(void **state) {
  (void)state;
  totals tot = {0};
  for (uint64_t seed = 1; seed <= 300; seed++) run_random_workload(seed, &tot);
  /* The workloads must reach the interesting paths, not just pass. */
  print_message("300 workloads: %llu steps, %llu finished, %llu preemptions, %llu prefix-hit "
                "tokens, %llu rejected, %llu aborted\n",
                (unsigned long long)tot.steps, (unsigned long long)tot.finished,
                (unsigned long long)tot.preemptions, (unsigned long long)tot.prefix_hits,
                (unsigned long long)tot.rejected, (unsigned long long)tot.aborted);
  assert_true(tot.preemptions > 100);
  assert_true(tot.prefix_hits > 1000);
  assert_true(tot.rejected > 10);
  assert_true(tot.aborted > 50);
}

/* ---- targeted checks --------------------------------------------------------------- */

static cb_sim_engine *make_engine(const cb_sim_params *p) {
  cb_sim_engine *e;
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_new(p, &e, &err) != CB_OK) fail_msg("engine_new: %s", err.msg);
  return e;
}

static void run_to_idle(world *w) {
  uint64_t t;
  while ((t = cb_sim_engine_next_event_ns(w->e)) != UINT64_MAX) {
    cb_sim_engine_advance(w->e, t, on_event, w);
    engine_ok(w->e);
  }
}

static void add_req(cb_sim_engine *e, uint64_t id, const uint32_t *prompt, size_t plen,
                    int64_t olen, uint64_t now, world *w) {
  cb_sim_request rq = {.id = id, .prompt_ids = prompt, .prompt_len = plen, .output_len = olen,
                       .output_seed = 100 + id};
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_add(e, &rq, now, &err) != CB_OK) fail_msg("add %llu: %s",
                                                             (unsigned long long)id, err.msg);
  w->recs[id].output_len = olen;
  w->recs[id].arrival_ns = now;
  w->recs[id].seed = 100 + id;
}

static void test_reject_and_invalid(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.max_model_len = 100;
  cb_sim_engine *e = make_engine(&p);
  uint32_t prompt[90] = {0};
  cb_error err;
  cb_error_clear(&err);
  cb_sim_request rq = {.id = 1, .prompt_ids = prompt, .prompt_len = 90, .output_len = 20};
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, &err), CB_ERR_RANGE);
  assert_string_equal(err.msg,
                      "This model's maximum context length is 100 tokens. However, you requested "
                      "110 tokens (90 in the messages, 20 in the completion). Please reduce the "
                      "length of the messages or completion.");
  rq.output_len = 10; /* exactly 100: allowed */
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, &err), CB_OK);
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, &err), CB_ERR_INVALID); /* duplicate id */
  rq.id = 2;
  rq.prompt_len = 0;
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, &err), CB_ERR_INVALID); /* empty prompt */
  rq.prompt_len = 5;
  rq.output_len = 0;
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, &err), CB_ERR_INVALID);
  /* After it finishes, the id can be used again. */
  world w = {.e = e, .n = 4, .vocab = 128256};
  w.recs = cb_calloc(4, sizeof *w.recs);
  w.recs[1].output_len = 10;
  run_to_idle(&w);
  assert_int_equal(w.recs[1].finished, 1);
  rq.id = 1;
  rq.output_len = 3;
  assert_int_equal(cb_sim_engine_add(e, &rq, w.last_time, &err), CB_OK);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* Two requests that cannot both hold their KV: the newer one is preempted, resumes by
 * recomputing prompt + generated tokens, and still emits the right token stream. */
static void test_preemption_recompute_completes(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.block_size = 4;
  p.num_gpu_blocks_override = 10; /* 40 token slots */
  p.max_model_len = 40;
  p.enable_prefix_caching = 0;
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 2, .vocab = 128256, .check_in_callback = 1};
  w.recs = cb_calloc(2, sizeof *w.recs);
  uint32_t a[12], b[12];
  for (int i = 0; i < 12; i++) a[i] = (uint32_t)i, b[i] = (uint32_t)(100 + i);
  /* Each needs 12 + 25 = 37 slots at the end; together they exceed 40. */
  add_req(e, 0, a, 12, 26, 0, &w);
  add_req(e, 1, b, 12, 26, 0, &w);
  run_to_idle(&w);
  assert_int_equal(w.recs[0].finished, 1);
  assert_int_equal(w.recs[1].finished, 1);
  assert_true(w.recs[1].preempted >= 1); /* the newest is the victim */
  assert_int_equal(w.recs[0].preempted, 0);
  assert_true(w.recs[1].scheduled >= 2);  /* SCHEDULED again on resume */
  /* The stream is the deterministic text stream, whatever the preemptions. */
  char text[CB_SIM_TOKEN_TEXT_MAX];
  assert_int_equal(w.recs[1].last_id, cb_sim_text_token(101, 25, 128256, text));
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  assert_true(st.preemptions >= 1);
  assert_int_equal(st.generation_tokens, 52);
  /* Recompute counts prompt tokens again. */
  assert_true(st.prompt_tokens >= 36);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* The same prompt twice: the second finds every full block but the one holding the
 * last token. */
static void test_prefix_hit_tokens(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 3, .vocab = 128256};
  w.recs = cb_calloc(3, sizeof *w.recs);
  uint32_t prompt[100];
  for (int i = 0; i < 100; i++) prompt[i] = (uint32_t)(7 * i + 3);
  add_req(e, 0, prompt, 100, 4, 0, &w);
  run_to_idle(&w);
  add_req(e, 1, prompt, 100, 4, w.last_time, &w);
  run_to_idle(&w);
  assert_int_equal(w.recs[0].first_hit, 0);
  assert_int_equal(w.recs[1].first_hit, 96); /* floor(99 / 16) blocks × 16 */
  /* Exactly a multiple of the block size: the last block is recomputed. */
  add_req(e, 2, prompt, 96, 2, w.last_time, &w);
  run_to_idle(&w);
  assert_int_equal(w.recs[2].first_hit, 80);
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  assert_int_equal(st.prefix_queries, 100 + 100 + 96);
  assert_int_equal(st.prefix_hits, 96 + 80);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* Chunked prefill under the budget and under long_prefill_token_threshold; the first
 * token comes in the step that completes the prompt. */
static void test_chunked_prefill_steps(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.max_num_batched_tokens = 32;
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 1, .vocab = 128256};
  w.recs = cb_calloc(1, sizeof *w.recs);
  uint32_t prompt[100] = {0};
  add_req(e, 0, prompt, 100, 3, 0, &w);
  run_to_idle(&w);
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  /* 100 prompt tokens in chunks of 32: 4 steps, then 2 decode steps. */
  assert_int_equal(st.steps, 6);
  assert_int_equal(st.prompt_tokens, 100);
  cb_sim_engine_free(e);

  p.max_num_batched_tokens = 8192;
  p.long_prefill_token_threshold = 25;
  e = make_engine(&p);
  w.e = e;
  memset(w.recs, 0, sizeof *w.recs);
  w.last_time = 0;
  add_req(e, 0, prompt, 100, 3, 0, &w);
  run_to_idle(&w);
  cb_sim_engine_get_stats(e, &st);
  assert_int_equal(st.steps, 4 + 2);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

static void test_max_num_seqs_and_fifo(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.max_num_seqs = 2;
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 4, .vocab = 128256};
  w.recs = cb_calloc(4, sizeof *w.recs);
  uint32_t prompt[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (uint64_t i = 0; i < 4; i++) add_req(e, i, prompt, 8, 5, 0, &w);
  cb_sim_engine_advance(e, 0, on_event, &w);
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  assert_int_equal(st.running, 2);
  assert_int_equal(st.waiting, 2);
  run_to_idle(&w);
  for (int i = 0; i < 4; i++) assert_int_equal(w.recs[i].finished, 1);
  assert_true(w.recs[2].first_sched_ns >= w.recs[0].finish_ns);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* Step timing: the first step starts at the arrival, its TOKEN at its end; steps are
 * back to back; the step's duration is the roofline of its batch. */
static void test_step_timing_and_warmup(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.warmup_steps = 1;
  p.warmup_factor = 3.0;
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 1, .vocab = 128256};
  w.recs = cb_calloc(1, sizeof *w.recs);
  uint32_t prompt[64] = {0};
  uint64_t t0 = 5000000000ull;
  add_req(e, 0, prompt, 64, 2, t0, &w);
  assert_int_equal(cb_sim_engine_next_event_ns(e), t0);
  cb_sim_engine_advance(e, t0, on_event, &w);
  assert_int_equal(w.recs[0].first_sched_ns, t0);
  cb__sim_step_info si;
  cb__sim_engine_step_info(e, &si);
  cb_sim_batch_item it = {.new_tokens = 64, .context_tokens = 0, .samples = 1};
  cb_sim_step_cost c;
  cb_sim_step_cost_compute(&p, &it, 1, &c);
  assert_int_equal(si.end_ns - si.start_ns, (uint64_t)llround(3.0 * c.total_ns));
  run_to_idle(&w);
  assert_int_equal(w.recs[0].first_token_ns, si.end_ns);
  /* Second step: no warm-up, decode of 1 token over 64 cached. */
  cb_sim_batch_item it2 = {.new_tokens = 1, .context_tokens = 64, .samples = 1};
  cb_sim_step_cost_compute(&p, &it2, 1, &c);
  assert_int_equal(w.recs[0].last_token_ns - w.recs[0].first_token_ns, (uint64_t)llround(c.total_ns));
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* Seeded lognormal jitter: deterministic per seed, mean ≈ 1, CV ≈ the setting. */
static void test_jitter_mean_and_determinism(void **state) {
  (void)state;
  double ratios[2][400];
  for (int run = 0; run < 2; run++) {
    cb_sim_params p;
    cb_sim_default_params(&p);
    p.jitter_cv = 0.2;
    p.seed = 1234;
    cb_sim_engine *e = make_engine(&p);
    world w = {.e = e, .n = 1, .vocab = 128256};
    w.recs = cb_calloc(1, sizeof *w.recs);
    uint32_t prompt[1] = {5};
    add_req(e, 0, prompt, 1, 400, 0, &w);
    cb_sim_batch_item it = {.new_tokens = 1, .context_tokens = 0, .samples = 1};
    for (int k = 0; k < 400; k++) {
      cb_sim_engine_advance(e, cb_sim_engine_next_event_ns(e), on_event, &w);
      cb__sim_step_info si;
      cb__sim_engine_step_info(e, &si);
      if (!si.in_flight) break;
      it.context_tokens = k;
      cb_sim_step_cost c;
      cb_sim_step_cost_compute(&p, &it, 1, &c);
      ratios[run][k] = (double)(si.end_ns - si.start_ns) / c.total_ns;
    }
    cb_free(w.recs);
    cb_sim_engine_free(e);
  }
  double sum = 0, sq = 0;
  for (int k = 0; k < 400; k++) {
    assert_true(ratios[0][k] == ratios[1][k]);
    sum += ratios[0][k];
    sq += ratios[0][k] * ratios[0][k];
  }
  double mean = sum / 400, sd = sqrt(sq / 400 - mean * mean);
  /* Standard error of the mean is 0.2/20 = 0.01: allow 4 of them. */
  if (fabs(mean - 1.0) > 0.04) fail_msg("jitter mean %.4f", mean);
  if (fabs(sd / mean - 0.2) > 0.04) fail_msg("jitter CV %.4f", sd / mean);
}

/* Aborts: a waiting request, a running request between steps, a running request in
 * flight, and a request aborting itself from its own TOKEN callback. */
static void self_abort_cb(void *ctx, const cb_sim_event *ev) {
  world *w = ctx;
  on_event(ctx, ev);
  if (ev->kind == CB_SIM_EV_TOKEN && ev->request_id == 3 && ev->token_index == 1) {
    uint32_t one = 1;
    cb_sim_request rq = {.id = 77, .prompt_ids = &one, .prompt_len = 1, .output_len = 1};
    assert_int_equal(cb_sim_engine_add(w->e, &rq, ev->time_ns, NULL), CB_ERR_STATE);
  }
  if (ev->kind == CB_SIM_EV_TOKEN && ev->request_id == 3 && ev->token_index == 2) {
    cb_sim_engine_abort(w->e, 3);
    w->recs[3].aborted = 1;
    cb_sim_engine_abort(w->e, 3); /* twice: ignored */
  }
}

static void test_aborts(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  p.max_num_seqs = 3;
  cb_sim_engine *e = make_engine(&p);
  world w = {.e = e, .n = 5, .vocab = 128256};
  w.recs = cb_calloc(5, sizeof *w.recs);
  uint32_t prompt[20] = {0};
  for (uint64_t i = 0; i < 5; i++) add_req(e, i, prompt, 20, 10, 0, &w);
  cb_sim_engine_abort(e, 4); /* waiting */
  w.recs[4].aborted = 1;
  engine_ok(e);
  cb_sim_engine_advance(e, 0, self_abort_cb, &w); /* first step in flight: 0, 1, 2 */
  cb_sim_engine_abort(e, 1); /* running, in flight */
  w.recs[1].aborted = 1;
  engine_ok(e);
  cb_sim_engine_abort(e, 999); /* unknown: ignored */
  uint64_t t;
  while ((t = cb_sim_engine_next_event_ns(e)) != UINT64_MAX) {
    cb_sim_engine_advance(e, t, self_abort_cb, &w);
    engine_ok(e);
    if (w.recs[0].next_index == 3 && !w.recs[2].aborted) {
      cb_sim_engine_abort(e, 2); /* running, between advance calls */
      w.recs[2].aborted = 1;
      engine_ok(e);
    }
  }
  assert_int_equal(w.recs[0].finished, 1);
  assert_int_equal(w.recs[3].finished, 0);
  assert_int_equal(w.recs[3].next_index, 3);
  assert_int_equal(w.recs[1].next_index, 0);
  cb_sim_engine_stats st;
  cb_sim_engine_get_stats(e, &st);
  assert_int_equal(st.kv_blocks_used, 0);
  assert_int_equal(st.finished, 1);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

/* Caller-given output ids are emitted as given. */
static void test_output_ids(void **state) {
  (void)state;
  cb_sim_params p;
  cb_sim_default_params(&p);
  cb_sim_engine *e = make_engine(&p);
  uint32_t prompt[3] = {1, 2, 3}, out[4] = {11, 22, 33, 44};
  cb_sim_request rq = {.id = 0, .prompt_ids = prompt, .prompt_len = 3, .output_len = 4,
                       .output_ids = out};
  assert_int_equal(cb_sim_engine_add(e, &rq, 0, NULL), CB_OK);
  world w = {.e = e, .n = 1, .vocab = 128256};
  w.recs = cb_calloc(1, sizeof *w.recs);
  w.recs[0].output_len = 4;
  run_to_idle(&w);
  assert_int_equal(w.recs[0].last_id, 44);
  assert_int_equal(w.recs[0].finished, 1);
  cb_free(w.recs);
  cb_sim_engine_free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reject_and_invalid),
      cmocka_unit_test(test_preemption_recompute_completes),
      cmocka_unit_test(test_prefix_hit_tokens),
      cmocka_unit_test(test_chunked_prefill_steps),
      cmocka_unit_test(test_max_num_seqs_and_fifo),
      cmocka_unit_test(test_step_timing_and_warmup),
      cmocka_unit_test(test_jitter_mean_and_determinism),
      cmocka_unit_test(test_aborts),
      cmocka_unit_test(test_output_ids),
      cmocka_unit_test(test_invariants_random_workloads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
