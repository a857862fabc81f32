/*
 * vrun.c - `sim run`: the engine driven in virtual time behind the runner's
 * interface (sim_run.h). One discrete-event loop over the replicas' engines:
 *
 *   repeat: send every item due now (open loop: at its time, if a slot is free;
 *           closed loop: one per idle user); then jump to the earliest of the next
 *           send time and the replicas' next step events, and advance every engine
 *           to it (each reports its step events through on_event).
 *
 * At one instant t: the steps that end at t end (their completions free users), a
 * busy engine begins its next step at once, then the sends due at t reach the
 * engines. So requests sent together all meet the same schedule() (vLLM's engine core
 * drains its input queue before it schedules), and a request sent at t while an
 * engine is busy waits for the step after the one begun at t: a real client's next
 * request reaches vLLM after the step that follows its last response has started
 * (response and request cross HTTP; the engine core goes on at once). An idle engine
 * begins a step at t with everything sent at t.
 *
 * A send does what sim serve does on a request: parse the body (or take the fast
 * path's prompt ids), check model and context window, pick the replica holding the
 * fewest requests, decide the output (gen_plan.c) and add the request to that
 * engine. Engine events fill the request's record; FINISHED hands it to the record
 * callback and frees the slot (closed loop: the user sends again, now).
 *
 * Clock: record time t = T0 + virtual engine time, T0 = 1 us, so no event of a run
 * that starts at 0 lands on 0, which records reserve for "did not happen".
 *
 * Cost: per request one parse (or one id fill) and one engine add; per token one
 * event (a store into the record's chunk times, grown by doubling, so a request still
 * queued holds none). Requests in flight are pooled.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "calibench/sim_run.h"
#include "sim/api.h"
#include "sim/gen_plan.h"
#include "sim/responses.h"

#define T0_NS CB_SIM_VRUN_T0_NS

typedef struct vreq {
  struct vrun *vr;
  int replica;
  cb_record rec;
  int64_t output_len;
  int64_t produced;
  const char *finish_reason;
  uint64_t seed;                  /* output text stream */
  const cb__sim_response *scripted;
  cb__sim_response *behaved;      /* owned: the behaviour's answer (scripted points at it) */
  cb__sim_answer *answer;         /* owned: a behaviour's planted answer (scripted is its text) */
  char tool_name[64], call_id[32]; /* the behaved answer is this tool call (agent) */
  int scheduled;                  /* SCHEDULED seen */
  size_t chunk_cap;               /* rec.chunk_ns allocated */
  struct vreq *next_free;
} vreq;

typedef struct replica {
  cb_sim_engine *engine;
  int64_t live;                   /* requests it holds (routing load) */
} replica;

typedef struct vrun {
  const cb_sim_vrun_params *p;
  cb_runner_source_fn source;
  void *source_ctx;
  cb_runner_record_fn on_record;
  void *record_ctx;
  cb_runner_stats *stats;
  cb_error *err;

  replica *reps;
  int n_reps;
  cb__sim_gen_config gen;
  cb__sim_tokens tokens;
  cb_tok *tok;                    /* owned, or NULL */
  cb__sim_responses *responses;   /* owned, or NULL */
  cb_sim_behavior *behavior;      /* owned, or NULL */
  uint32_t vocab;                 /* the model's (output token ids) */
  uint64_t accepted;              /* generation requests admitted (output seed index) */

  cb_runner_item next;            /* the next item from the source, if have_next */
  int have_next;
  int source_done;
  /* A live source that had nothing ready: ask again at ask_at (its LATER time;
   * UINT64_MAX: only after a record, as for WAIT), or once a record was delivered. */
  int source_waits;
  uint64_t ask_at;
  int delivered;                  /* a record went out since the source last waited */
  int failed;                     /* the prompt callback failed: stop sending */
  uint64_t in_flight;
  uint64_t idle_users;            /* closed loop: users ready to send now */
  vreq *free_list;
  uint64_t now;                   /* virtual ns (engine time) */
  char text[CB_SIM_TOKEN_TEXT_MAX];
} vrun;

void cb_sim_vrun_default_params(cb_sim_vrun_params *p) {
  memset(p, 0, sizeof *p);
  cb_sim_server_default_params(&p->sim);
  p->runner = (cb_runner_params)CB_RUNNER_PARAMS_DEFAULT; /* not a call into the runner */
}

/* ---- requests ------------------------------------------------------------------------- */

static vreq *req_get(vrun *v) {
  vreq *q = v->free_list;
  if (q) v->free_list = q->next_free;
  else q = cb_malloc(sizeof *q);
  memset(q, 0, sizeof *q);
  q->vr = v;
  cb_record_init(&q->rec);
  return q;
}

static void req_put(vrun *v, vreq *q) {
  cb_record_free(&q->rec);
  cb__sim_response_free(q->behaved);
  q->behaved = NULL;
  cb__sim_answer_free(q->answer);
  q->answer = NULL;
  q->next_free = v->free_list;
  v->free_list = q;
}

static uint64_t rec_time(uint64_t virtual_ns) { return T0_NS + virtual_ns; }

/* The first max_output_text bytes of the output, as the client would keep them. */
static void fill_text(vrun *v, vreq *q) {
  size_t cap = v->p->runner.max_output_text;
  if (!cap || q->produced == 0) return;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_sim_text_cursor cur;
  cb_sim_text_cursor_init(&cur, q->seed, 0);
  int64_t k = 0;
  for (; k < q->produced && b.len < cap; k++) {
    const char *t;
    size_t n;
    if (q->scripted) {
      size_t start = k ? q->scripted->ends[k - 1] : 0;
      t = q->scripted->text + start;
      n = q->scripted->ends[k] - start;
    } else {
      cb_sim_text_cursor_next(&cur, v->vocab, v->text);
      t = v->text;
      n = strlen(t);
    }
    if (n > cap - b.len) {
      n = cap - b.len;
      q->rec.output_text_cut = 1;
    }
    cb_buf_append(&b, t, n);
  }
  if (k < q->produced) q->rec.output_text_cut = 1;
  if (q->tool_name[0]) { /* a tool call: the text is its arguments, as sim serve streams them */
    cb_buf calls;
    cb_buf_init(&calls, 0);
    cb_buf_append_str(&calls, "[{\"id\":\"");
    cb_buf_append_json_string(&calls, q->call_id, strlen(q->call_id));
    cb_buf_append_str(&calls, "\",\"type\":\"function\",\"function\":{\"name\":\"");
    cb_buf_append_json_string(&calls, q->tool_name, strlen(q->tool_name));
    cb_buf_append_str(&calls, "\",\"arguments\":\"");
    cb_buf_append_json_string(&calls, b.data ? b.data : "", b.len);
    cb_buf_append_str(&calls, "\"}}]");
    q->rec.tool_calls = cb_strndup(calls.data, calls.len);
    cb_buf_free(&calls);
  } else {
    q->rec.output_text = cb_strndup(b.data, b.len);
  }
  cb_buf_free(&b);
}

static void deliver(vrun *v, vreq *q) {
  cb_runner_stats *s = v->stats;
  if (cb_record_ok(&q->rec)) s->completed++;
  else s->failed++;
  if (q->rec.end_ns > s->last_end_ns) s->last_end_ns = q->rec.end_ns;
  v->delivered = 1;
  v->on_record(v->record_ctx, &q->rec);
  req_put(v, q);
}

/* The request left the system at now: a slot (open loop) or a user (closed) frees. */
static void release(vrun *v) {
  v->in_flight--;
  if (v->p->runner.concurrency > 0) v->idle_users++;
}

static void on_event(void *ctx, const cb_sim_event *ev) {
  vrun *v = ctx;
  vreq *q = (vreq *)(uintptr_t)ev->request_id;
  cb_record *r = &q->rec;
  uint64_t t = rec_time(ev->time_ns);
  switch (ev->kind) {
    case CB_SIM_EV_SCHEDULED:
      if (!q->scheduled) r->cached_tokens = ev->prefix_hit_tokens;
      q->scheduled = 1;
      break;
    case CB_SIM_EV_PREEMPTED:
      break;
    case CB_SIM_EV_TOKEN: {
      int64_t k = ev->token_index;
      if (k == 0) {
        r->first_content_ns = t;
        if (!r->first_chunk_ns) r->first_chunk_ns = t;
        if (!r->first_choices_ns) r->first_choices_ns = t;
      }
      if ((size_t)k >= q->chunk_cap) { /* grown as tokens come: a queued request holds none */
        size_t cap = q->chunk_cap ? 2 * q->chunk_cap : 16;
        q->chunk_cap = cap < (size_t)q->output_len ? cap : (size_t)q->output_len;
        if (q->chunk_cap <= (size_t)k) q->chunk_cap = (size_t)k + 1;
        r->chunk_ns = cb_reallocarray(r->chunk_ns, q->chunk_cap, sizeof *r->chunk_ns);
      }
      r->chunk_ns[k] = t;
      r->last_content_ns = t;
      r->n_chunks = (size_t)k + 1;
      q->produced = k + 1;
      break;
    }
    case CB_SIM_EV_FINISHED:
      r->end_ns = t;
      r->output_tokens = q->produced;
      snprintf(r->finish_reason, sizeof r->finish_reason, "%s", q->finish_reason);
      fill_text(v, q);
      v->reps[q->replica].live--;
      release(v);
      deliver(v, q);
      break;
  }
}

/* ---- sending ---------------------------------------------------------------------------- */

static void refuse(vrun *v, vreq *q, const cb__sim_api_error *e) {
  cb_record *r = &q->rec;
  r->http_status = e->status;
  r->first_byte_ns = r->end_ns = r->sent_ns;
  snprintf(r->error_class, sizeof r->error_class, "http_status");
  /* As the runner words it; a message too long for the record is cut. */
  int n = snprintf(r->error_message, sizeof r->error_message, "HTTP %d: ", e->status);
  if (n > 0 && (size_t)n < sizeof r->error_message)
    snprintf(r->error_message + n, sizeof r->error_message - (size_t)n, "%.*s",
             (int)(sizeof r->error_message - (size_t)n - 1), e->message);
  release(v);
  deliver(v, q);
}

/* Send the pending item at v->now (engine time). */
static void send_item(vrun *v) {
  const cb_runner_item *it = &v->next;
  const cb_sim_vrun_params *p = v->p;
  vreq *q = req_get(v);
  cb_record *r = &q->rec;
  r->index = it->index;
  snprintf(r->request_id, sizeof r->request_id, "%s-%llu", p->runner.run_id ? p->runner.run_id : "run",
           (unsigned long long)it->index);
  memcpy(r->server_request_id, r->request_id, sizeof r->request_id);
  snprintf(r->class_name, sizeof r->class_name, "%s", it->class_name ? it->class_name : "");
  r->warmup = it->warmup;
  r->sent_ns = rec_time(v->now);
  r->scheduled_ns = p->runner.concurrency > 0 ? r->sent_ns : rec_time(it->at_ns);
  if (r->scheduled_ns > r->sent_ns) r->scheduled_ns = r->sent_ns;
  r->prompt_tokens = it->prompt_tokens;
  r->prompt_source = it->prompt_source;
  r->has_target_rate = it->has_target_rate;
  r->target_rate = it->target_rate;
  r->image_bytes = it->image_bytes;
  r->has_session = it->has_session;
  r->session = it->session;
  r->turn = it->turn;
  v->in_flight++;
  v->stats->sent++;

  cb__sim_api_kind kind = p->runner.chat ? CB__SIM_API_CHAT : CB__SIM_API_COMPLETIONS;
  cb__sim_api_request req;
  cb__sim_api_error e;
  int parsed = 0;
  if (it->body) {
    if (cb__sim_api_parse(kind, it->body, it->body_len, &v->tokens, &req, &e) != CB_OK) {
      refuse(v, q, &e);
      return;
    }
    parsed = 1;
  } else {
    cb_sim_vrun_request fr;
    memset(&fr, 0, sizeof fr);
    fr.max_tokens = -1;
    if (!p->prompt) {
      cb_error_set(v->err, CB_ERR_INVALID, "request %llu has no body and no prompt callback",
                   (unsigned long long)it->index);
      v->failed = 1;
    } else if (p->prompt(p->prompt_ctx, it, &fr, v->err) != CB_OK) {
      v->failed = 1;
    }
    if (v->failed) {
      v->stats->sent--;
      v->in_flight--;
      req_put(v, q);
      return;
    }
    memset(&req, 0, sizeof req);
    req.kind = kind;
    req.prompt_ids = (uint32_t *)(uintptr_t)fr.prompt_ids; /* borrowed, never freed here */
    req.prompt_len = fr.prompt_len;
    req.max_tokens = fr.max_tokens;
    req.min_tokens = fr.min_tokens;
    req.ignore_eos = fr.ignore_eos;
    req.has_seed = fr.has_seed;
    req.seed = fr.seed;
    req.stream = req.include_usage = 1;
  }
  int64_t image_tokens = req.num_images ? req.image_tokens : -1; /* as sim serve's usage */
  int64_t asked;
  if (cb__sim_gen_check(&v->gen, &req, &asked, &e) != CB_OK) {
    if (parsed) cb__sim_api_request_free(&req);
    refuse(v, q, &e);
    return;
  }
  cb__sim_gen_plan plan;
  cb__sim_gen_plan_make(&v->gen, &req, asked, v->accepted++, &plan);
  q->output_len = plan.output_len;
  q->finish_reason = plan.finish_reason;
  q->seed = plan.seed;
  q->scripted = plan.scripted;
  q->behaved = plan.behaved;
  q->answer = plan.answer;
  memcpy(q->tool_name, plan.tool_name, sizeof q->tool_name);
  memcpy(q->call_id, plan.call_id, sizeof q->call_id);

  /* The replica holding the fewest requests, as sim serve routes. */
  int best = 0;
  for (int i = 1; i < v->n_reps; i++)
    if (v->reps[i].live < v->reps[best].live) best = i;
  q->replica = best;
  cb_sim_request er = {.id = (uint64_t)(uintptr_t)q, .prompt_ids = req.prompt_ids,
                       .prompt_len = req.prompt_len, .output_len = plan.output_len,
                       .output_ids = plan.scripted ? plan.scripted->ids : NULL,
                       .output_seed = plan.seed, .encoder_flops = req.encoder_flops};
  /* The loop has already advanced every engine to now. Advancing here again would
   * begin a step with only the requests sent before this one at the same instant;
   * instead all of them are waiting when the loop begins the next step, as vLLM's
   * engine core drains its input queue before it schedules. */
  cb_error aerr;
  cb_status st = cb_sim_engine_add(v->reps[best].engine, &er, v->now, &aerr);
  if (parsed) cb__sim_api_request_free(&req);
  if (st != CB_OK) {
    cb__sim_api_fail(&e, 400, "invalid_request_error", NULL, NULL, "%s", aerr.msg);
    refuse(v, q, &e);
    return;
  }
  v->reps[best].live++;
  /* Streaming: headers leave at admission; the chat role chunk comes with the first
   * token, as in sim serve (server_gen.c), so TOKEN 0 sets the first-chunk times. */
  r->http_status = 200;
  r->first_byte_ns = r->sent_ns;
  r->prompt_tokens = plan.prompt_tokens;
  r->prompt_source = CB_TOKENS_USAGE;
  r->output_source = CB_TOKENS_USAGE;
  r->cached_tokens = 0;
  r->image_tokens = image_tokens;
  /* chunk_ns grows with the tokens (on_event); chunk_tokens stays NULL: one token per
   * chunk (4 bytes a token less to keep) */
}

/* Take the next item when there is none waiting, as the runner's pull() does: a
 * live source that waits is asked again after the next record (WAIT) or at its time
 * (LATER), and is done when it waits with nothing in flight. */
static int fetch(vrun *v) {
  if (v->have_next || v->source_done || v->failed) return v->have_next;
  if (v->source_waits && !v->delivered && v->now < v->ask_at) return 0;
  if (v->p->now_ns) *v->p->now_ns = v->now;
  v->source_waits = v->delivered = 0;
  int got = v->source(v->source_ctx, &v->next);
  if (got == 1) {
    v->have_next = 1;
  } else if (got == CB_RUNNER_SOURCE_LATER) {
    v->source_waits = 1; /* a time not after now is asked again a nanosecond on */
    v->ask_at = v->next.at_ns > v->now ? v->next.at_ns : v->now + 1;
  } else if (got == CB_RUNNER_SOURCE_WAIT && v->in_flight) {
    v->source_waits = 1;
    v->ask_at = UINT64_MAX;
  } else {
    v->source_done = 1;
  }
  return v->have_next;
}

static int stopped(const vrun *v) {
  return v->failed || (v->p->runner.stop && *v->p->runner.stop);
}

/* Send everything due at v->now. */
static void send_due(vrun *v) {
  const cb_runner_params *rp = &v->p->runner;
  for (;;) {
    if (stopped(v)) return;
    /* closed loop: the source is asked only when a user is free (a live source's
     * turn is built when it can go, as the runner's pull) */
    if (rp->concurrency > 0 && !v->idle_users) return;
    if (!fetch(v)) return;
    if (rp->concurrency > 0) {
      if (rp->duration_s > 0 && (double)v->now >= rp->duration_s * 1e9) {
        v->stats->not_sent++; /* counted once: nothing more is taken from the source */
        v->source_done = 1;
        v->have_next = 0;
        return;
      }
      v->idle_users--;
    } else {
      if (v->next.at_ns > v->now) return;
      if (rp->max_concurrency > 0 && v->in_flight >= (uint64_t)rp->max_concurrency) return;
    }
    v->have_next = 0;
    send_item(v);
  }
}

/* When the next send can happen (UINT64_MAX: only after a completion, or never). A
 * live source waiting for its time is asked again then. */
static uint64_t next_send_ns(vrun *v) {
  const cb_runner_params *rp = &v->p->runner;
  if (stopped(v) || (rp->concurrency > 0 && !v->idle_users)) return UINT64_MAX;
  if (!fetch(v)) return v->source_waits && !v->source_done ? v->ask_at : UINT64_MAX;
  if (rp->concurrency > 0) return v->now;
  if (rp->max_concurrency > 0 && v->in_flight >= (uint64_t)rp->max_concurrency) return UINT64_MAX;
  return v->next.at_ns > v->now ? v->next.at_ns : v->now;
}

/* ---- set-up and the loop ---------------------------------------------------------------- */

static cb_status setup(vrun *v, cb_error *err) {
  const cb_sim_vrun_params *p = v->p;
  const cb_sim_server_params *sp = &p->sim;
  if (sp->replicas < 1 || sp->replicas > 1024)
    return cb_error_set(err, CB_ERR_INVALID, "replicas must be in 1..1024, got %d", sp->replicas);
  if (p->runner.concurrency < 0 || p->runner.max_concurrency < 0)
    return cb_error_set(err, CB_ERR_INVALID, "concurrency must be >= 0");
  cb_status st = cb_sim_params_validate(&sp->engine, err);
  if (st != CB_OK) return st;
  v->n_reps = sp->replicas;
  v->reps = cb_calloc((size_t)v->n_reps, sizeof *v->reps);
  for (int i = 0; i < v->n_reps && st == CB_OK; i++) {
    cb_sim_params ep = sp->engine;
    ep.seed = cb_hash3_u64(ep.seed, UINT64_C(0x7265706c), (uint64_t)i); /* as sim serve */
    st = cb_sim_engine_new(&ep, &v->reps[i].engine, err);
  }
  if (st != CB_OK) return st;
  v->vocab = (uint32_t)sp->engine.model.vocab_size;
  v->tokens.vocab = v->vocab;
  v->tokens.has_vision = cb_sim_vision_preset(sp->engine.model.name, &v->tokens.vision);
  if (sp->tokenizer) {
    if ((st = cb_tok_load(sp->tokenizer, &v->tok, err)) != CB_OK) return st;
    v->tokens.tok = v->tok;
    v->tokens.vocab = (uint32_t)cb_tok_vocab_size(v->tok);
  }
  if (sp->responses_path &&
      (st = cb__sim_responses_load(sp->responses_path, v->vocab, &v->responses, err)) != CB_OK)
    return st;
  if (sp->behavior_path && (st = cb_sim_behavior_load(sp->behavior_path, &v->behavior, err)) != CB_OK)
    return st;
  v->gen = (cb__sim_gen_config){.model = sp->engine.model.name,
                                .max_model_len = cb_sim_engine_capacity(v->reps[0].engine)->max_model_len,
                                .seed = sp->seed, .eos_mean_tokens = sp->engine.eos_mean_tokens,
                                .responses = v->responses, .behavior = v->behavior,
                                .vocab = v->vocab,
                                .logit_noise = cb_sim_logit_noise(sp->engine.weight_dtype)};
  if (p->runner.concurrency > 0) v->idle_users = (uint64_t)p->runner.concurrency;
  return CB_OK;
}

static void teardown(vrun *v) {
  for (int i = 0; v->reps && i < v->n_reps; i++) cb_sim_engine_free(v->reps[i].engine);
  cb_free(v->reps);
  for (vreq *q = v->free_list, *n; q; q = n) {
    n = q->next_free;
    cb_free(q);
  }
  cb__sim_responses_free(v->responses);
  cb_sim_behavior_free(v->behavior);
  cb_tok_free(v->tok);
}

cb_status cb_sim_run_virtual(const cb_sim_vrun_params *p, cb_runner_source_fn source,
                             void *source_ctx, cb_runner_record_fn on_record, void *record_ctx,
                             cb_runner_stats *stats, cb_error *err) {
  memset(stats, 0, sizeof *stats);
  stats->start_wall_ns = cb_clock_wall_ns();
  uint64_t cpu0 = cb_clock_cpu_ns();
  vrun v;
  memset(&v, 0, sizeof v);
  v.p = p;
  v.source = source;
  v.source_ctx = source_ctx;
  v.on_record = on_record;
  v.record_ctx = record_ctx;
  v.stats = stats;
  v.err = err;
  cb_status st = setup(&v, err);
  if (st != CB_OK) {
    teardown(&v);
    return st;
  }
  for (;;) {
    send_due(&v);
    uint64_t t = next_send_ns(&v);
    for (int i = 0; i < v.n_reps; i++) {
      uint64_t e = cb_sim_engine_next_event_ns(v.reps[i].engine);
      if (e < t) t = e;
    }
    if (t == UINT64_MAX) break;
    if (t > v.now) v.now = t;
    for (int i = 0; i < v.n_reps; i++) cb_sim_engine_advance(v.reps[i].engine, v.now, on_event, &v);
  }
  /* Items the source still holds were never sent (stop, or the duration). */
  if (v.have_next) stats->not_sent++;
  if (!v.failed && p->runner.stop && *p->runner.stop) stats->interrupted = 1;
  if (p->engine_stats) {
    memset(p->engine_stats, 0, sizeof *p->engine_stats);
    for (int i = 0; i < v.n_reps; i++) {
      cb_sim_engine_stats s;
      cb_sim_engine_get_stats(v.reps[i].engine, &s);
      cb_sim_engine_stats *o = p->engine_stats;
      o->kv_blocks_total += s.kv_blocks_total;
      o->prefix_queries += s.prefix_queries;
      o->prefix_hits += s.prefix_hits;
      o->preemptions += s.preemptions;
      o->prompt_tokens += s.prompt_tokens;
      o->generation_tokens += s.generation_tokens;
      o->steps += s.steps;
      o->finished += s.finished;
    }
  }
  teardown(&v);
  stats->cpu_s = (double)(cb_clock_cpu_ns() - cpu0) / 1e9;
  return v.failed ? (err && err->code != CB_OK ? err->code : CB_ERR_INVALID) : CB_OK;
}
