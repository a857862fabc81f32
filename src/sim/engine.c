/*
 * engine.c - the simulator's scheduler and step loop: vLLM V1's continuous batching
 * with a per-step token budget, chunked prefill, prefix caching and recompute
 * preemption, timed by the roofline in roofline.c. Pure: no I/O, no clock.
 *
 * One step (docs/internals/sim-scheduler.md has the full account and invariants):
 *   1. RUNNING first, in admission order: each request gets
 *      min(num_tokens − num_computed, long_prefill_token_threshold, budget) tokens;
 *      when its KV blocks cannot be allocated the newest running request is preempted
 *      (recompute: its blocks are freed, hashes kept, computed tokens reset, and it is
 *      put at the FRONT of the waiting queue), until the allocation fits or the
 *      victim is the request itself.
 *   2. WAITING next, FIFO, only if nothing was preempted in this step: prefix-cache
 *      lookup, then as many prompt tokens as the budget allows; stop when the budget
 *      is spent, the running set is full, the head has not arrived yet, or its blocks
 *      cannot be allocated (admission never preempts).
 *   3. The step's duration is the roofline of exactly that batch (× warm-up, ×
 *      jitter). At its end each request's computed count catches up, and a request
 *      whose computed count reaches its known tokens samples one output token.
 *
 * Time: a step starts at the previous step's end, or, when nothing runs, at the
 * arrival of the waiting head. Its SCHEDULED/PREEMPTED events carry its start time
 * and are reported as soon as it starts; TOKEN/FINISHED carry its end and are
 * reported once advance() reaches it.
 *
 * Cost: O(batch + preempted) per step and O(1) per KV block operation; requests
 * allocate their arrays once, at add. No allocation per token.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "engine_internal.h"
#include "kvcache.h"

enum { RS_WAITING = 0, RS_RUNNING, RS_DONE };

typedef struct sim_req {
  uint64_t id;
  uint64_t output_seed;
  uint64_t arrival_ns;
  double encoder_flops;   /* vision encoder FLOPs not yet charged to a step */
  int64_t prompt_len;
  int64_t output_len;
  int64_t num_output;     /* output tokens produced so far */
  int64_t num_computed;   /* tokens whose KV is in the cache */
  int64_t sched_new;      /* tokens scheduled in the step in flight (0 when none) */
  uint32_t *tokens;       /* [prompt_len + output_len]: prompt, then outputs produced */
  int has_output_ids;     /* 1: tokens[prompt_len..] were given by the caller */
  cb_sim_text_cursor text;/* the next output token's text, otherwise */
  int32_t *blocks;        /* [max_blocks] KV blocks, in token order */
  int32_t n_blocks;
  int32_t n_cached;       /* leading blocks already offered to the prefix cache */
  uint64_t *hashes;       /* [max_full_blocks] chained block hashes, computed lazily */
  int32_t n_hashes;
  int state;              /* RS_* */
  int zombie;             /* aborted while a step was in flight or in a callback */
  struct sim_req *prev, *next; /* waiting queue links; next also links the spare list */
  size_t cap_tokens, cap_blocks, cap_hashes; /* array capacities, kept when recycled */
} sim_req;

typedef struct batch_entry {
  sim_req *r;
  int64_t num_new;
  int64_t context;        /* computed tokens before the step */
  int samples;            /* 1: the step completes the known tokens, a token is sampled */
  double encoder_flops;   /* the request's images encoded in this step */
} batch_entry;

typedef struct start_event {
  cb_sim_event_kind kind; /* SCHEDULED or PREEMPTED */
  sim_req *r;
  int64_t prefix_hit_tokens;
} start_event;

struct cb_sim_engine {
  cb_sim_params p;
  cb_sim_capacity cap;
  cb__sim_kv kv;
  cb__sim_map ids;                 /* request id → sim_req* (live requests only) */

  sim_req *wait_head, *wait_tail;  /* waiting queue, admitted from the head */
  int64_t n_waiting;
  sim_req **running;               /* running set in admission order */
  size_t n_running, cap_running;
  int64_t n_running_zombies;

  batch_entry *batch;              /* the step in flight */
  size_t n_batch, cap_batch;
  cb_sim_batch_item *items;        /* its roofline input */
  size_t cap_items;
  start_event *sev;                /* its SCHEDULED/PREEMPTED events */
  size_t n_sev, cap_sev;
  sim_req **grave;                 /* aborted waiting requests freed after callbacks */
  size_t n_grave, cap_grave;
  sim_req *spare;                  /* finished requests kept for reuse (no malloc churn) */

  int in_flight;
  int in_callback;
  uint64_t last_end_ns;            /* end of the last step (0 before the first) */
  cb__sim_step_info step;

  uint32_t *text_ids;              /* output token ids by piece (cb_sim_text_ids_new) */
  cb_rng rng;                      /* jitter */
  double jitter_mu, jitter_sigma;  /* of the underlying normal */

  uint64_t prefix_queries, prefix_hits, preemptions, prompt_tokens, generation_tokens;
  uint64_t steps, finished;
};

/* ---- small helpers ------------------------------------------------------------------ */

#define GROW(arr, n, capv)                                              \
  do {                                                                  \
    if ((n) >= (capv)) {                                                \
      (capv) = (capv) ? (capv) * 2 : 16;                                \
      (arr) = cb_reallocarray((arr), (capv), sizeof *(arr));            \
    }                                                                   \
  } while (0)

static int64_t num_tokens(const sim_req *r) { return r->prompt_len + r->num_output; }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void destroy_req(sim_req *r) {
  cb_free(r->tokens);
  cb_free(r->blocks);
  cb_free(r->hashes);
  cb_free(r);
}

/* A finished or aborted request goes to the spare list with its arrays (under
 * AddressSanitizer it is freed instead, so a use after free is caught). */
static void free_req(cb_sim_engine *e, sim_req *r) {
#if defined(__SANITIZE_ADDRESS__)
  (void)e;
  destroy_req(r);
#else
  r->next = e->spare;
  e->spare = r;
#endif
}

/* A request with room for `total` tokens, from the spare list when there is one. */
static sim_req *new_req(cb_sim_engine *e, int64_t total) {
  sim_req *r = e->spare;
  size_t cap_tokens = 0, cap_blocks = 0, cap_hashes = 0;
  uint32_t *tokens = NULL;
  int32_t *blocks = NULL;
  uint64_t *hashes = NULL;
  if (r) {
    e->spare = r->next;
    cap_tokens = r->cap_tokens, cap_blocks = r->cap_blocks, cap_hashes = r->cap_hashes;
    tokens = r->tokens, blocks = r->blocks, hashes = r->hashes;
  } else {
    r = cb_malloc(sizeof *r);
  }
  size_t bs = (size_t)e->p.block_size, ntok = (size_t)total;
  size_t nblocks = (ntok + bs - 1) / bs, nhashes = ntok / bs + 1;
  if (cap_tokens < ntok) tokens = cb_reallocarray(tokens, cap_tokens = ntok, sizeof *tokens);
  if (cap_blocks < nblocks) blocks = cb_reallocarray(blocks, cap_blocks = nblocks, sizeof *blocks);
  if (cap_hashes < nhashes) hashes = cb_reallocarray(hashes, cap_hashes = nhashes, sizeof *hashes);
  memset(r, 0, sizeof *r);
  r->tokens = tokens, r->blocks = blocks, r->hashes = hashes;
  r->cap_tokens = cap_tokens, r->cap_blocks = cap_blocks, r->cap_hashes = cap_hashes;
  return r;
}

static void wait_unlink(cb_sim_engine *e, sim_req *r) {
  if (r->prev) r->prev->next = r->next; else e->wait_head = r->next;
  if (r->next) r->next->prev = r->prev; else e->wait_tail = r->prev;
  r->prev = r->next = NULL;
  e->n_waiting--;
}

static void wait_push_back(cb_sim_engine *e, sim_req *r) {
  r->next = NULL;
  r->prev = e->wait_tail;
  if (e->wait_tail) e->wait_tail->next = r; else e->wait_head = r;
  e->wait_tail = r;
  e->n_waiting++;
}

static void wait_push_front(cb_sim_engine *e, sim_req *r) {
  r->prev = NULL;
  r->next = e->wait_head;
  if (e->wait_head) e->wait_head->prev = r; else e->wait_tail = r;
  e->wait_head = r;
  e->n_waiting++;
}

static void emit(cb_sim_engine *e, cb_sim_event_fn fn, void *ctx, const cb_sim_event *ev) {
  if (!fn) return;
  e->in_callback = 1;
  fn(ctx, ev);
  e->in_callback = 0;
}

/* ---- KV bookkeeping per request ----------------------------------------------------- */

/* Hashes of the first n full blocks (all of whose tokens are known). */
static void ensure_hashes(cb_sim_engine *e, sim_req *r, int32_t n) {
  int bs = e->p.block_size;
  for (int32_t i = r->n_hashes; i < n; i++) {
    uint64_t parent = i ? r->hashes[i - 1] : CB__SIM_NONE_HASH;
    r->hashes[i] = cb__sim_block_hash(parent, r->tokens + (size_t)i * (size_t)bs, (size_t)bs);
  }
  if (n > r->n_hashes) r->n_hashes = n;
}

/* Offer the blocks that are full once ntok tokens are computed to the prefix cache. */
static void cache_full_blocks(cb_sim_engine *e, sim_req *r, int64_t ntok) {
  if (!e->p.enable_prefix_caching) return;
  int32_t full = (int32_t)(ntok / e->p.block_size);
  if (full <= r->n_cached) return;
  ensure_hashes(e, r, full);
  for (int32_t i = r->n_cached; i < full; i++) cb__sim_kv_cache_block(&e->kv, r->blocks[i], r->hashes[i]);
  r->n_cached = full;
}

/* Blocks to add so that ntok tokens have slots. */
static int32_t blocks_needed(const cb_sim_engine *e, const sim_req *r, int64_t ntok) {
  int64_t need = ceil_div(ntok, e->p.block_size) - r->n_blocks;
  return need > 0 ? (int32_t)need : 0;
}

static void alloc_blocks(cb_sim_engine *e, sim_req *r, int32_t need) {
  for (int32_t i = 0; i < need; i++) r->blocks[r->n_blocks++] = cb__sim_kv_alloc(&e->kv);
}

static void release_blocks(cb_sim_engine *e, sim_req *r) {
  cb__sim_kv_release(&e->kv, r->blocks, (size_t)r->n_blocks);
  r->n_blocks = 0;
  r->n_cached = 0;
}

/* ---- life cycle ---------------------------------------------------------------------- */

cb_status cb_sim_engine_new(const cb_sim_params *p, cb_sim_engine **out, cb_error *err) {
  *out = NULL;
  cb_sim_capacity cap;
  cb_status st = cb_sim_capacity_compute(p, &cap, err);
  if (st != CB_OK) return st;
  cb_sim_engine *e = cb_calloc(1, sizeof *e);
  e->p = *p;
  e->cap = cap;
  cb__sim_kv_init(&e->kv, (int32_t)cap.num_blocks, p->block_size, p->enable_prefix_caching);
  cb__sim_map_init(&e->ids, 1024);
  e->text_ids = cb_sim_text_ids_new((uint32_t)p->model.vocab_size);
  cb_rng_init_stream(&e->rng, p->seed, UINT64_C(0x6a6974746572) /* "jitter" */, 0);
  if (p->jitter_cv > 0) {
    /* Lognormal with mean 1 and coefficient of variation cv. */
    double s2 = log1p(p->jitter_cv * p->jitter_cv);
    e->jitter_sigma = sqrt(s2);
    e->jitter_mu = -0.5 * s2;
  }
  *out = e;
  return CB_OK;
}

void cb_sim_engine_free(cb_sim_engine *e) {
  if (!e) return;
  for (sim_req *r = e->wait_head, *n; r; r = n) {
    n = r->next;
    destroy_req(r);
  }
  for (sim_req *r = e->spare, *n; r; r = n) {
    n = r->next;
    destroy_req(r);
  }
  for (size_t i = 0; i < e->n_running; i++) destroy_req(e->running[i]);
  for (size_t i = 0; i < e->n_grave; i++) destroy_req(e->grave[i]);
  cb__sim_kv_free(&e->kv);
  cb__sim_map_free(&e->ids);
  cb_free(e->running);
  cb_free(e->batch);
  cb_free(e->items);
  cb_free(e->sev);
  cb_free(e->grave);
  cb_free(e->text_ids);
  cb_free(e);
}

cb_status cb_sim_engine_add(cb_sim_engine *e, const cb_sim_request *r, uint64_t now_ns,
                            cb_error *err) {
  if (e->in_callback)
    return cb_error_set(err, CB_ERR_STATE, "cb_sim_engine_add called from an event callback");
  if (r->prompt_len < 1 || !r->prompt_ids)
    return cb_error_set(err, CB_ERR_INVALID, "request %llu: the prompt is empty",
                        (unsigned long long)r->id);
  if (r->output_len < 1)
    return cb_error_set(err, CB_ERR_INVALID, "request %llu: output_len must be >= 1, got %lld",
                        (unsigned long long)r->id, (long long)r->output_len);
  int64_t total = (int64_t)r->prompt_len + r->output_len;
  if (total > e->cap.max_model_len)
    return cb_error_set(err, CB_ERR_RANGE,
                        "This model's maximum context length is %d tokens. However, you "
                        "requested %lld tokens (%lld in the messages, %lld in the completion). "
                        "Please reduce the length of the messages or completion.",
                        e->cap.max_model_len, (long long)total, (long long)r->prompt_len,
                        (long long)r->output_len);
  if (cb__sim_map_get(&e->ids, r->id, NULL))
    return cb_error_set(err, CB_ERR_INVALID, "request id %llu is already in use",
                        (unsigned long long)r->id);

  sim_req *q = new_req(e, total);
  q->id = r->id;
  q->output_seed = r->output_seed;
  cb_sim_text_cursor_init(&q->text, q->output_seed, 0);
  q->arrival_ns = now_ns;
  q->prompt_len = (int64_t)r->prompt_len;
  q->output_len = r->output_len;
  q->encoder_flops = r->encoder_flops > 0 ? r->encoder_flops : 0.0;
  memcpy(q->tokens, r->prompt_ids, r->prompt_len * sizeof *q->tokens);
  if (r->output_ids) {
    memcpy(q->tokens + r->prompt_len, r->output_ids, (size_t)r->output_len * sizeof *q->tokens);
    q->has_output_ids = 1;
  }
  q->state = RS_WAITING;
  wait_push_back(e, q);
  cb__sim_map_put(&e->ids, q->id, (uint64_t)(uintptr_t)q);
  return CB_OK;
}

static void running_remove_at(cb_sim_engine *e, size_t i) {
  memmove(e->running + i, e->running + i + 1, (e->n_running - i - 1) * sizeof *e->running);
  e->n_running--;
}

void cb_sim_engine_abort(cb_sim_engine *e, uint64_t id) {
  uint64_t v;
  if (!cb__sim_map_get(&e->ids, id, &v)) return;
  sim_req *r = (sim_req *)(uintptr_t)v;
  cb__sim_map_del(&e->ids, id);
  if (r->state == RS_WAITING) {
    wait_unlink(e, r);
    r->state = RS_DONE;
    if (e->in_callback || e->in_flight) {
      r->zombie = 1; /* a start event may still refer to it */
      GROW(e->grave, e->n_grave, e->cap_grave);
      e->grave[e->n_grave++] = r;
    } else {
      free_req(e, r);
    }
    return;
  }
  /* Running: its blocks go back now; the struct goes when no step refers to it. */
  release_blocks(e, r);
  if (e->in_flight || e->in_callback) {
    r->zombie = 1;
    e->n_running_zombies++;
    return;
  }
  for (size_t i = 0; i < e->n_running; i++) {
    if (e->running[i] == r) {
      running_remove_at(e, i);
      break;
    }
  }
  free_req(e, r);
}

/* Drop finished and aborted requests from the running set, free buried ones. Only
 * when no step refers to them. */
static void sweep(cb_sim_engine *e) {
  size_t w = 0;
  for (size_t i = 0; i < e->n_running; i++) {
    sim_req *r = e->running[i];
    if (r->zombie || r->state == RS_DONE)
      free_req(e, r);
    else
      e->running[w++] = r;
  }
  e->n_running = w;
  e->n_running_zombies = 0;
  for (size_t i = 0; i < e->n_grave; i++) free_req(e, e->grave[i]);
  e->n_grave = 0;
}

static void free_grave(cb_sim_engine *e) {
  for (size_t i = 0; i < e->n_grave; i++) free_req(e, e->grave[i]);
  e->n_grave = 0;
}

/* ---- scheduling ---------------------------------------------------------------------- */

static void add_to_batch(cb_sim_engine *e, sim_req *r, int64_t num_new) {
  GROW(e->batch, e->n_batch, e->cap_batch);
  batch_entry *b = &e->batch[e->n_batch++];
  b->r = r;
  b->num_new = num_new;
  b->context = r->num_computed;
  b->samples = r->num_computed + num_new == num_tokens(r);
  /* The encoder runs once, before the first prompt chunk that needs its output (vLLM
   * V1 keeps encoder outputs in its encoder cache across chunks). */
  b->encoder_flops = r->num_computed < r->prompt_len ? r->encoder_flops : 0.0;
  r->encoder_flops -= b->encoder_flops;
  r->sched_new = num_new;
}

static void record_start_event(cb_sim_engine *e, cb_sim_event_kind kind, sim_req *r, int64_t hit) {
  GROW(e->sev, e->n_sev, e->cap_sev);
  start_event *s = &e->sev[e->n_sev++];
  s->kind = kind;
  s->r = r;
  s->prefix_hit_tokens = hit;
}

static void preempt(cb_sim_engine *e, sim_req *victim) {
  release_blocks(e, victim); /* hashes stay with the blocks */
  victim->num_computed = 0;
  victim->sched_new = 0;
  victim->state = RS_WAITING;
  wait_push_front(e, victim);
  e->preemptions++;
  record_start_event(e, CB_SIM_EV_PREEMPTED, victim, 0);
}

static int64_t cap_new_tokens(const cb_sim_engine *e, int64_t want, int64_t budget) {
  int64_t t = e->p.long_prefill_token_threshold;
  if (t > 0 && want > t) want = t;
  return want < budget ? want : budget;
}

/* Try to admit the waiting head within the budget. Returns the tokens scheduled, 0 when
 * its blocks cannot be allocated (nothing is changed then). */
static int64_t try_admit(cb_sim_engine *e, sim_req *r, int64_t budget, int64_t *hit_tokens) {
  int bs = e->p.block_size;
  int64_t ntok = num_tokens(r);
  int32_t hit_blocks = 0;
  if (e->p.enable_prefix_caching) {
    /* At least the last token is recomputed to get its logits. */
    int32_t max_hit = (int32_t)((ntok - 1) / bs);
    ensure_hashes(e, r, max_hit);
    hit_blocks = (int32_t)cb__sim_kv_find_prefix(&e->kv, r->hashes, (size_t)max_hit, r->blocks);
  }
  int64_t hit = (int64_t)hit_blocks * bs;
  int64_t num_new = cap_new_tokens(e, ntok - hit, budget);
  int64_t need = ceil_div(hit + num_new, bs) - hit_blocks;
  int32_t touched_free = cb__sim_kv_count_free(&e->kv, r->blocks, (size_t)hit_blocks);
  if (need > (int64_t)cb__sim_kv_num_free(&e->kv) - touched_free) return 0;

  cb__sim_kv_touch(&e->kv, r->blocks, (size_t)hit_blocks);
  r->n_blocks = hit_blocks;
  r->n_cached = hit_blocks;
  r->num_computed = hit;
  alloc_blocks(e, r, (int32_t)need);
  cache_full_blocks(e, r, hit + num_new);
  if (e->p.enable_prefix_caching) {
    e->prefix_queries += (uint64_t)ntok;
    e->prefix_hits += (uint64_t)hit;
  }
  *hit_tokens = hit;
  return num_new;
}

/* Build the batch of a step starting at start_ns. */
static void schedule(cb_sim_engine *e, uint64_t start_ns) {
  int64_t budget = e->p.max_num_batched_tokens;
  int preempted = 0;
  e->n_batch = 0;
  e->n_sev = 0;

  /* 1. RUNNING, in admission order. */
  for (size_t i = 0; i < e->n_running && budget > 0; i++) {
    sim_req *r = e->running[i];
    int64_t num_new = cap_new_tokens(e, num_tokens(r) - r->num_computed, budget);
    int self_preempted = 0;
    for (;;) {
      int32_t need = blocks_needed(e, r, r->num_computed + num_new);
      if (need <= cb__sim_kv_num_free(&e->kv)) {
        alloc_blocks(e, r, need);
        break;
      }
      sim_req *victim = e->running[--e->n_running]; /* newest first */
      preempt(e, victim);
      preempted = 1;
      if (victim == r) {
        self_preempted = 1;
        break;
      }
    }
    if (self_preempted) break;
    cache_full_blocks(e, r, r->num_computed + num_new);
    add_to_batch(e, r, num_new);
    budget -= num_new;
  }

  /* 2. WAITING, FIFO, only when nothing was preempted in this step. */
  while (!preempted && e->wait_head && budget > 0 &&
         e->n_running < (size_t)e->p.max_num_seqs) {
    sim_req *r = e->wait_head;
    if (r->arrival_ns > start_ns) break;
    int64_t hit = 0;
    int64_t num_new = try_admit(e, r, budget, &hit);
    if (num_new == 0) break;
    wait_unlink(e, r);
    r->state = RS_RUNNING;
    GROW(e->running, e->n_running, e->cap_running);
    e->running[e->n_running++] = r;
    add_to_batch(e, r, num_new);
    record_start_event(e, CB_SIM_EV_SCHEDULED, r, hit);
    budget -= num_new;
  }
}

static uint64_t step_duration_ns(cb_sim_engine *e, cb_sim_step_cost *cost) {
  if (e->n_batch > e->cap_items) {
    e->cap_items = e->cap_batch;
    e->items = cb_reallocarray(e->items, e->cap_items, sizeof *e->items);
  }
  for (size_t i = 0; i < e->n_batch; i++) {
    e->items[i].new_tokens = e->batch[i].num_new;
    e->items[i].context_tokens = e->batch[i].context;
    e->items[i].samples = e->batch[i].samples;
    e->items[i].encoder_flops = e->batch[i].encoder_flops;
  }
  cb_sim_step_cost_compute(&e->p, e->items, e->n_batch, cost);
  double ns = cost->total_ns;
  if ((int64_t)e->steps < e->p.warmup_steps) ns *= e->p.warmup_factor;
  if (e->p.jitter_cv > 0) ns *= cb_rng_lognormal(&e->rng, e->jitter_mu, e->jitter_sigma);
  return ns < 1.0 ? 1 : (uint64_t)llround(ns);
}

/* Start the step at start_ns: schedule, time it, report its start events. */
static void begin_step(cb_sim_engine *e, uint64_t start_ns, cb_sim_event_fn fn, void *ctx) {
  schedule(e, start_ns);
  cb__sim_step_info *s = &e->step;
  memset(s, 0, sizeof *s);
  s->start_ns = start_ns;
  s->running = (int64_t)e->n_running;
  for (size_t i = 0; i < e->n_batch; i++) {
    const batch_entry *b = &e->batch[i];
    s->tokens += b->num_new;
    s->seqs++;
    s->prefill_seqs += b->context < b->r->prompt_len || b->num_new > 1;
  }
  if (e->n_batch > 0) {
    uint64_t dur = step_duration_ns(e, &s->cost);
    s->end_ns = start_ns + dur;
    s->in_flight = 1;
    e->in_flight = 1;
  } else {
    s->end_ns = start_ns; /* nothing to compute: the next step starts at once */
  }
  for (size_t i = 0; i < e->n_sev; i++) {
    const start_event *se = &e->sev[i];
    if (se->r->zombie) continue;
    cb_sim_event ev = {.kind = se->kind, .request_id = se->r->id, .time_ns = start_ns,
                       .prefix_hit_tokens = se->prefix_hit_tokens};
    emit(e, fn, ctx, &ev);
  }
  e->n_sev = 0;
  if (e->in_flight) {
    free_grave(e);
  } else {
    sweep(e);
    e->last_end_ns = start_ns;
  }
}

static uint32_t output_token(const cb_sim_engine *e, sim_req *r, int64_t k) {
  if (r->has_output_ids) return r->tokens[r->prompt_len + k];
  if (r->text.k != k) cb_sim_text_cursor_init(&r->text, r->output_seed, k);
  uint32_t id = cb_sim_text_cursor_next_id(&r->text, e->text_ids);
  r->tokens[r->prompt_len + k] = id;
  return id;
}

/* End the step in flight: computed counts catch up, tokens are sampled. */
static void end_step(cb_sim_engine *e, cb_sim_event_fn fn, void *ctx) {
  uint64_t t = e->step.end_ns;
  for (size_t i = 0; i < e->n_batch; i++) {
    batch_entry *b = &e->batch[i];
    sim_req *r = b->r;
    r->sched_new = 0;
    if (r->zombie) continue;
    int64_t before = r->num_computed;
    r->num_computed += b->num_new;
    if (before < r->prompt_len) {
      int64_t upto = r->num_computed < r->prompt_len ? r->num_computed : r->prompt_len;
      e->prompt_tokens += (uint64_t)(upto - before);
    }
    if (!b->samples) continue;
    int64_t k = r->num_output;
    uint32_t id = output_token(e, r, k);
    r->num_output++;
    e->generation_tokens++;
    cb_sim_event ev = {.kind = CB_SIM_EV_TOKEN, .request_id = r->id, .time_ns = t,
                       .token_index = k, .token_id = id};
    emit(e, fn, ctx, &ev);
    if (r->zombie) continue;
    if (r->num_output == r->output_len) {
      release_blocks(e, r);
      r->state = RS_DONE;
      cb__sim_map_del(&e->ids, r->id);
      e->finished++;
      cb_sim_event fin = {.kind = CB_SIM_EV_FINISHED, .request_id = r->id, .time_ns = t};
      emit(e, fn, ctx, &fin);
    }
  }
  e->n_batch = 0;
  e->in_flight = 0;
  e->step.in_flight = 0;
  e->last_end_ns = t;
  e->steps++;
  sweep(e);
}

static int has_live_running(const cb_sim_engine *e) {
  return (int64_t)e->n_running - e->n_running_zombies > 0;
}

uint64_t cb_sim_engine_next_event_ns(const cb_sim_engine *e) {
  if (e->in_flight) return e->step.end_ns;
  if (has_live_running(e)) return e->last_end_ns;
  if (e->wait_head)
    return e->wait_head->arrival_ns > e->last_end_ns ? e->wait_head->arrival_ns : e->last_end_ns;
  return UINT64_MAX;
}

void cb_sim_engine_advance(cb_sim_engine *e, uint64_t now_ns, cb_sim_event_fn fn, void *ctx) {
  if (e->in_callback) return; /* not allowed from a callback */
  for (;;) {
    if (e->in_flight) {
      if (e->step.end_ns > now_ns) return;
      end_step(e, fn, ctx);
      continue;
    }
    uint64_t start = cb_sim_engine_next_event_ns(e);
    if (start == UINT64_MAX || start > now_ns) return;
    begin_step(e, start, fn, ctx);
  }
}

/* ---- introspection ------------------------------------------------------------------- */

void cb_sim_engine_get_stats(const cb_sim_engine *e, cb_sim_engine_stats *out) {
  memset(out, 0, sizeof *out);
  out->running = (int64_t)e->n_running - e->n_running_zombies;
  out->waiting = e->n_waiting;
  out->kv_blocks_total = e->kv.num_blocks;
  out->kv_blocks_used = cb__sim_kv_num_used(&e->kv);
  out->kv_usage = e->kv.num_blocks ? (double)out->kv_blocks_used / e->kv.num_blocks : 0.0;
  out->prefix_queries = e->prefix_queries;
  out->prefix_hits = e->prefix_hits;
  out->preemptions = e->preemptions;
  out->prompt_tokens = e->prompt_tokens;
  out->generation_tokens = e->generation_tokens;
  out->steps = e->steps;
  out->finished = e->finished;
}

const cb_sim_params *cb_sim_engine_params(const cb_sim_engine *e) { return &e->p; }
const cb_sim_capacity *cb_sim_engine_capacity(const cb_sim_engine *e) { return &e->cap; }

void cb__sim_engine_step_info(const cb_sim_engine *e, cb__sim_step_info *out) { *out = e->step; }

cb_status cb__sim_engine_check(const cb_sim_engine *e, char *why, size_t n) {
#define FAIL(...)                                 \
  do {                                            \
    if (why && n) snprintf(why, n, __VA_ARGS__);  \
    cb_free(expect);                              \
    return CB_ERR_STATE;                          \
  } while (0)
  int32_t *expect = NULL;
  cb_status st = cb__sim_kv_check(&e->kv, why, n);
  if (st != CB_OK) return st;
  expect = cb_calloc((size_t)e->kv.num_blocks, sizeof *expect);
  int bs = e->p.block_size;
  int64_t live = 0;
  for (size_t i = 0; i < e->n_running; i++) {
    const sim_req *r = e->running[i];
    if (r->zombie) {
      if (r->n_blocks != 0) FAIL("aborted request %llu still holds %d blocks",
                                 (unsigned long long)r->id, (int)r->n_blocks);
      continue;
    }
    if (r->state == RS_DONE) continue; /* finished this step, swept at its end */
    if (r->state != RS_RUNNING) FAIL("request %llu in the running set has state %d",
                                     (unsigned long long)r->id, r->state);
    live++;
    int64_t slots = r->num_computed + (e->in_flight ? r->sched_new : 0);
    if (r->n_blocks != ceil_div(slots, bs))
      FAIL("request %llu holds %d blocks for %lld token slots", (unsigned long long)r->id,
           (int)r->n_blocks, (long long)slots);
    if (r->num_computed + r->sched_new > num_tokens(r))
      FAIL("request %llu: %lld computed + %lld scheduled > %lld tokens",
           (unsigned long long)r->id, (long long)r->num_computed, (long long)r->sched_new,
           (long long)num_tokens(r));
    if (r->num_output > r->output_len) FAIL("request %llu produced too many tokens",
                                            (unsigned long long)r->id);
    for (int32_t b = 0; b < r->n_blocks; b++) expect[r->blocks[b]]++;
  }
  if (live > e->p.max_num_seqs) FAIL("%lld running > max_num_seqs %d", (long long)live,
                                     e->p.max_num_seqs);
  int64_t nw = 0;
  const sim_req *prev = NULL;
  for (const sim_req *r = e->wait_head; r; r = r->next) {
    if (r->prev != prev) FAIL("waiting queue: broken back link at request %llu",
                              (unsigned long long)r->id);
    if (r->state != RS_WAITING || r->n_blocks != 0 || r->num_computed != 0)
      FAIL("waiting request %llu: state %d, %d blocks, %lld computed",
           (unsigned long long)r->id, r->state, (int)r->n_blocks, (long long)r->num_computed);
    prev = r;
    if (++nw > e->n_waiting) FAIL("waiting queue longer than its count %lld",
                                  (long long)e->n_waiting);
  }
  if (prev != e->wait_tail) FAIL("waiting queue: tail pointer is stale");
  if (nw != e->n_waiting) FAIL("waiting queue has %lld requests, count %lld", (long long)nw,
                               (long long)e->n_waiting);
  for (int32_t b = 0; b < e->kv.num_blocks; b++)
    if (expect[b] != e->kv.ref[b])
      FAIL("block %d: ref %d but %d requests hold it", (int)b, (int)e->kv.ref[b], (int)expect[b]);
  if ((int64_t)e->ids.len != nw + live)
    FAIL("%zu live ids, %lld waiting + %lld running", e->ids.len, (long long)nw, (long long)live);
  cb_free(expect);
  return CB_OK;
#undef FAIL
}
