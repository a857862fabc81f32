/*
 * server_gen.c - generation requests of `sim serve`: from a parsed request to an
 * engine request, from engine events to SSE chunks or a whole response, plus fault
 * injection, request metrics and the --trace-out ground truth.
 *
 * Per-request state is a gen_stream; the engine request id is the stream's address,
 * unique among live requests. Token text is stateless (cb_sim_text_token or the
 * scripted response), so nothing per token is stored except, with --trace-out, the
 * emission time of each token.
 */
#include <event2/event.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "sim/gen_plan.h"
#include "sim/server.h"

typedef struct gen_stream {
  struct cb_sim_server *srv;
  cb__sim_replica *rep;
  cb__sim_http_exchange *ex;    /* NULL once the exchange ended */
  cb__sim_api_response resp;    /* id/model/kind/logprob settings for rendering */
  char id[48];
  char request_id[128];
  char peer[56];                /* with --trace-out: the client's address and port */
  int stream, include_usage;
  uint64_t seed;                /* output text and logprobs */
  const cb__sim_response *scripted;
  cb__sim_response *behaved;    /* owned: the behaviour's answer (scripted points at it) */
  cb__sim_answer *answer;       /* owned: a behaviour's planted answer (scripted is its text) */
  cb__sim_prompt *prompt;       /* owned: completions' echo or prompt_logprobs, or NULL */
  int echo_only;                /* echo with max_tokens 0: the prompt, not the token made */
  char tool_name[64], call_id[32]; /* the behaved answer is this tool call */
  cb__sim_api_tool_call call;   /* resp.tool_call points here */
  int64_t output_len;           /* tokens the engine will produce */
  const char *finish_reason;    /* decided at admission: "stop" or "length" */
  int64_t produced;             /* TOKEN events received */
  int64_t sent;                 /* tokens written to the client */
  int role_sent;                /* chat stream: the role chunk is out */
  size_t text_offset;           /* bytes of output text sent so far */
  int finished;                 /* engine FINISHED received */
  const cb_sim_fault *fault;
  int fault_struck;
  struct event *stall_timer;    /* while a stall fault holds output back */
  /* ground truth, monotonic wall ns */
  uint64_t arrival_ns, admitted_ns, first_scheduled_ns, end_ns;
  uint64_t first_token_ns, last_token_ns;
  int64_t prefix_hit_tokens;
  int preemptions;
  uint64_t *token_ns;           /* with --trace-out: emission time of each token */
  uint64_t *due_ns;             /* ... when the engine's step produced it (engine clock) */
  uint64_t *written_ns;         /* ... when a write handed it to the kernel (0: unknown:
                                   still queued when the response ended, or cut) */
  uint64_t *token_end;          /* ... the connection's queued total after it */
  int64_t n_written;            /* tokens known written */
} gen_stream;

static uint64_t engine_id(const gen_stream *g) { return (uint64_t)(uintptr_t)g; }

/* ---- token source ----------------------------------------------------------------- */

/* The perturb section's distribution of token k: the chosen word first, then up to
 * n alternatives in decreasing probability. */
static void planted_logprobs(const cb__sim_answer *a, int64_t k, int n, cb__sim_api_token *t) {
  const double *lp = a->logprob + (size_t)k * (size_t)a->candidates;
  t->logprob = lp[0];
  if (n > a->candidates - 1) n = a->candidates - 1;
  if (n > CB__SIM_API_MAX_ALTS) n = CB__SIM_API_MAX_ALTS;
  t->num_alts = n > 0 ? n : 0;
  for (int j = 0; j < t->num_alts; j++) {
    memcpy(t->alt_text[j], a->cand[(size_t)k * (size_t)a->candidates + 1 + (size_t)j],
           sizeof t->alt_text[j]);
    t->alt_logprob[j] = lp[1 + j];
  }
}

static void token_at(gen_stream *g, int64_t k, char *buf, cb__sim_api_token *t) {
  if (g->scripted) {
    size_t start = k ? g->scripted->ends[k - 1] : 0;
    t->text = g->scripted->text + start;
    t->len = g->scripted->ends[k] - start;
  } else {
    cb_sim_text_token(g->seed, k, (uint32_t)g->srv->p.engine.model.vocab_size, buf);
    t->text = buf;
    t->len = strlen(buf);
  }
  if (!g->resp.logprobs) return;
  if (g->answer && g->answer->candidates) {
    planted_logprobs(g->answer, k, g->resp.top_logprobs - 1, t);
    return;
  }
  cb__sim_api_token_logprobs(g->seed, k, g->resp.top_logprobs - 1, t);
}

/* For whole responses: token k with its offset, recomputed in order. */
typedef struct whole_ctx {
  gen_stream *g;
  char buf[CB_SIM_TOKEN_TEXT_MAX];
  int64_t next_k;
  size_t offset;
} whole_ctx;

static void whole_token(void *ctx, int64_t k, cb__sim_api_token *t) {
  whole_ctx *w = ctx;
  if (k == 0) w->offset = 0;
  token_at(w->g, k, w->buf, t);
  t->text_offset = w->offset;
  w->offset += t->len;
}

/* ---- ending a request -------------------------------------------------------------- */

static double secs(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) / 1e9 : 0.0; }

static void observe_metrics(gen_stream *g, cb__sim_finish reason) {
  cb__sim_metrics *m = &g->rep->metrics;
  m->success[reason]++;
  if (!g->first_token_ns) return;
  cb_prom_hist_observe(&m->ttft, secs(g->arrival_ns, g->first_token_ns));
  cb_prom_hist_observe(&m->e2e, secs(g->arrival_ns, g->end_ns));
  cb_prom_hist_observe(&m->queue, secs(g->arrival_ns, g->first_scheduled_ns));
  cb_prom_hist_observe(&m->prefill, secs(g->first_scheduled_ns, g->first_token_ns));
  cb_prom_hist_observe(&m->decode, secs(g->first_token_ns, g->last_token_ns));
  if (g->sent > 1)
    cb_prom_hist_observe(&m->tpot, secs(g->first_token_ns, g->last_token_ns) / (double)(g->sent - 1));
}

static void write_trace(gen_stream *g, const char *finish) {
  FILE *f = g->srv->trace;
  if (!f) return;
  cb_buf *b = &g->srv->scratch;
  cb_buf_reset(b);
  cb_buf_append_str(b, "{\"request_id\":\"");
  cb_buf_append_json_string(b, g->request_id, strlen(g->request_id));
  cb_buf_append_str(b, "\",\"peer\":\"");
  cb_buf_append_json_string(b, g->peer, strlen(g->peer));
  cb_buf_appendf(b,
                 "\",\"endpoint\":\"%s\",\"stream\":%s,\"replica\":%d,\"arrival_ns\":%llu,\"admitted_ns\":%llu,"
                 "\"first_scheduled_ns\":%llu,\"first_token_ns\":%llu,\"end_ns\":%llu,"
                 "\"prompt_tokens\":%lld,\"output_tokens\":%lld,\"prefix_hit_tokens\":%lld,"
                 "\"preemptions\":%d,\"finish_reason\":\"%s\",\"fault\":",
                 g->resp.kind == CB__SIM_API_CHAT ? "chat" : "completions",
                 g->stream ? "true" : "false", g->rep->index,
                 (unsigned long long)g->arrival_ns, (unsigned long long)g->admitted_ns,
                 (unsigned long long)g->first_scheduled_ns,
                 (unsigned long long)g->first_token_ns, (unsigned long long)g->end_ns,
                 (long long)g->resp.prompt_tokens, (long long)g->sent,
                 (long long)g->prefix_hit_tokens, g->preemptions, finish);
  if (g->fault && g->fault_struck)
    cb_buf_appendf(b, "\"%s\"", cb_sim_fault_kind_name(g->fault->kind));
  else
    cb_buf_append_str(b, "null");
  cb_buf_append_str(b, ",\"token_ns\":[");
  for (int64_t k = 0; k < g->sent; k++)
    cb_buf_appendf(b, k ? ",%llu" : "%llu", (unsigned long long)g->token_ns[k]);
  cb_buf_append_char(b, ']');
  cb_buf_append_str(b, ",\"due_ns\":[");
  for (int64_t k = 0; k < g->sent; k++)
    cb_buf_appendf(b, k ? ",%llu" : "%llu", (unsigned long long)g->due_ns[k]);
  cb_buf_append_char(b, ']');
  if (g->written_ns) {
    cb_buf_append_str(b, ",\"written_ns\":[");
    for (int64_t k = 0; k < g->sent; k++)
      cb_buf_appendf(b, k ? ",%llu" : "%llu", (unsigned long long)g->written_ns[k]);
    cb_buf_append_char(b, ']');
  }
  cb_buf_append_str(b, "}\n");
  fwrite(b->data, 1, b->len, f);
  fflush(f);
}

/* A write took the connection's bytes up to `total`: the tokens they end are out. */
static void on_written(void *user, cb__sim_http_exchange *ex, uint64_t total, uint64_t now_ns) {
  (void)ex;
  gen_stream *g = user;
  while (g->n_written < g->sent && g->token_end[g->n_written] <= total)
    g->written_ns[g->n_written++] = now_ns;
}

/* Release a stream whose engine request is gone (finished or aborted). */
static void stream_free(gen_stream *g) {
  if (g->stall_timer) event_free(g->stall_timer);
  g->rep->live--;
  cb__sim_response_free(g->behaved);
  cb__sim_answer_free(g->answer);
  cb__sim_prompt_free(g->prompt);
  cb_free(g->token_ns);
  cb_free(g->due_ns);
  cb_free(g->written_ns);
  cb_free(g->token_end);
  cb_free(g);
}

/* The client went away (or the server is shutting down). */
static void on_client_close(void *user, cb__sim_http_exchange *ex) {
  (void)ex;
  gen_stream *g = user;
  g->ex = NULL;
  if (!g->finished) cb_sim_engine_abort(g->rep->engine, engine_id(g));
  g->end_ns = cb_clock_now_ns();
  observe_metrics(g, CB__SIM_FINISH_ABORT);
  write_trace(g, "abort");
  cb__sim_server_arm(g->rep);
  stream_free(g);
}

/* Cut the connection (fault) and drop the request. */
static void cut(gen_stream *g) {
  g->fault_struck = 1;
  if (!g->finished) cb_sim_engine_abort(g->rep->engine, engine_id(g));
  g->finished = 1;
  if (g->ex) cb__sim_http_abort(g->ex, CB__SIM_HTTP_ABORT_CUT);
  g->ex = NULL;
  g->end_ns = cb_clock_now_ns();
  observe_metrics(g, CB__SIM_FINISH_ABORT);
  write_trace(g, "abort");
  stream_free(g);
}

static const cb__sim_http_field sse_fields_tmpl[] = {
    {"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}, {"x-request-id", NULL}};

/* Chat streams open with a role-only chunk. vLLM yields it on the request's first
 * engine output, together with the first token (serving_chat.py,
 * chat_completion_stream_generator, first_iteration), not at admission: a client
 * taking TTFT at the first chunk with choices (vLLM's bench) must see prefill. */
static void role_chunk(gen_stream *g, cb_buf *out) {
  if (!g->stream || g->resp.kind != CB__SIM_API_CHAT || g->role_sent) return;
  cb__sim_api_render_role_chunk(out, &g->resp);
  g->role_sent = 1;
}

/* Finish a request normally: closing chunks or the whole response. */
static void complete(gen_stream *g) {
  struct cb_sim_server *s = g->srv;
  g->end_ns = cb_clock_now_ns();
  cb_buf *b = &s->scratch;
  int broken = g->fault && (g->fault->kind == CB_SIM_FAULT_MALFORMED_SSE ||
                            g->fault->kind == CB_SIM_FAULT_INVALID_JSON);
  if (g->stream) {
    cb_buf_reset(b);
    role_chunk(g, b); /* a stream that ends with no token still opens with it */
    cb__sim_api_render_finish_chunk(b, &g->resp, g->finish_reason);
    if (g->include_usage) cb__sim_api_render_usage_chunk(b, &g->resp, g->sent);
    cb__sim_api_render_done(b);
    if (cb__sim_http_stream_write(g->ex, b->data, b->len) == CB_OK) cb__sim_http_stream_end(g->ex);
  } else {
    cb_buf body;
    cb_buf_init(&body, 0);
    if (broken && g->fault->after_tokens <= g->sent) {
      /* A body cut short: the non-streaming form of a broken-payload fault. */
      g->fault_struck = 1;
      cb_buf_appendf(&body, "{\"id\":\"%s\",\"object\":\"%s\",\"choices\":[", g->id,
                     g->resp.kind == CB__SIM_API_CHAT ? "chat.completion" : "text_completion");
    } else {
      whole_ctx w = {.g = g};
      cb__sim_api_render_completion(&body, &g->resp, g->echo_only ? 0 : g->sent, whole_token, &w,
                                    g->finish_reason);
    }
    cb__sim_http_field f[] = {{"Content-Type", "application/json"}, {"x-request-id", g->request_id}};
    cb__sim_http_respond(g->ex, 200, f, 2, body.data, body.len);
    cb_buf_free(&body);
  }
  g->ex = NULL;
  observe_metrics(g, !strcmp(g->finish_reason, "length") ? CB__SIM_FINISH_LENGTH
                                                         : CB__SIM_FINISH_STOP);
  write_trace(g, g->finish_reason);
  stream_free(g);
}

/* ---- sending tokens ----------------------------------------------------------------- */

/* Queue bytes on the stream. When the client's output queue is over its cap the HTTP
 * layer has already dropped the connection: end the request and return 1. */
static int write_or_cut(gen_stream *g, const char *data, size_t len) {
  if (cb__sim_http_stream_write(g->ex, data, len) == CB_OK) return 0;
  g->ex = NULL;
  cut(g);
  return 1;
}

static void stall_timer_cb(evutil_socket_t fd, short what, void *arg);

/* Apply a stream fault due before token `sent`; returns 1 when the request ended. */
static int strike_fault(gen_stream *g) {
  const cb_sim_fault *f = g->fault;
  if (!f || g->fault_struck || g->sent != f->after_tokens) return 0;
  switch (f->kind) {
    case CB_SIM_FAULT_CUT:
      cut(g);
      return 1;
    case CB_SIM_FAULT_STALL: {
      g->fault_struck = 1;
      g->stall_timer = evtimer_new(g->srv->base, stall_timer_cb, g);
      struct timeval tv = {.tv_sec = (time_t)(f->stall_ms / 1000),
                           .tv_usec = (suseconds_t)(f->stall_ms % 1000) * 1000};
      evtimer_add(g->stall_timer, &tv);
      return 0;
    }
    case CB_SIM_FAULT_MALFORMED_SSE:
    case CB_SIM_FAULT_INVALID_JSON:
      if (!g->stream) return 0; /* handled when the whole body is rendered */
      g->fault_struck = 1;
      {
        const char *bad = f->kind == CB_SIM_FAULT_MALFORMED_SSE
                              ? "{\"this line\": \"is not server-sent events\"}\n\n"
                              : "data: {\"id\":\"broken\",\"choices\":[{\"delta\":{\"content\":\n\n";
        return write_or_cut(g, bad, strlen(bad));
      }
    default:
      return 0;
  }
}

/* Write every produced token not yet sent (unless stalled), then finish if done. */
static void flush_tokens(gen_stream *g, uint64_t due_ns) {
  struct cb_sim_server *s = g->srv;
  while (g->sent < g->produced) {
    if (strike_fault(g)) return;
    if (g->stall_timer) return; /* held back until the stall ends */
    uint64_t now = cb_clock_now_ns();
    if (g->stream) {
      char buf[CB_SIM_TOKEN_TEXT_MAX];
      cb__sim_api_token t;
      token_at(g, g->sent, buf, &t);
      t.text_offset = g->text_offset;
      g->text_offset += t.len;
      cb_buf_reset(&s->scratch);
      role_chunk(g, &s->scratch);
      cb__sim_api_render_token_chunk(&s->scratch, &g->resp, g->echo_only ? NULL : &t);
      g->resp.echo_pending = 0;
      if (write_or_cut(g, s->scratch.data, s->scratch.len)) return;
      if (g->token_end) g->token_end[g->sent] = cb__sim_http_queued_total(g->ex);
    }
    if (due_ns) cb_prom_hist_observe(&s->lateness, secs(due_ns, now));
    if (g->token_ns) g->token_ns[g->sent] = now;
    if (!g->first_token_ns) g->first_token_ns = now;
    else cb_prom_hist_observe(&g->rep->metrics.itl, secs(g->last_token_ns, now));
    g->last_token_ns = now;
    g->sent++;
  }
  if (g->finished && g->sent == g->produced && !strike_fault(g)) complete(g);
}

static void stall_timer_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  gen_stream *g = arg;
  event_free(g->stall_timer);
  g->stall_timer = NULL;
  flush_tokens(g, 0);
}

void cb__sim_server_on_engine_event(void *ctx, const cb_sim_event *ev) {
  cb__sim_replica *r = ctx;
  gen_stream *g = (gen_stream *)(uintptr_t)ev->request_id;
  uint64_t wall = cb__sim_server_wall_of(r->srv, ev->time_ns);
  switch (ev->kind) {
    case CB_SIM_EV_SCHEDULED:
      if (!g->first_scheduled_ns) {
        g->first_scheduled_ns = wall;
        g->prefix_hit_tokens = ev->prefix_hit_tokens;
        g->resp.cached_tokens = ev->prefix_hit_tokens;
      }
      break;
    case CB_SIM_EV_PREEMPTED:
      g->preemptions++;
      break;
    case CB_SIM_EV_TOKEN:
      g->produced = ev->token_index + 1;
      if (g->due_ns) g->due_ns[ev->token_index] = wall;
      flush_tokens(g, wall);
      break;
    case CB_SIM_EV_FINISHED:
      g->finished = 1;
      flush_tokens(g, wall);
      break;
  }
}

/* ---- admission -------------------------------------------------------------------- */

static cb__sim_replica *pick_replica(struct cb_sim_server *s) {
  cb__sim_replica *best = &s->replicas[0];
  for (int i = 1; i < s->p.replicas; i++)
    if (s->replicas[i].live < best->live) best = &s->replicas[i];
  return best;
}

static void reject_fault(struct cb_sim_server *s, cb__sim_http_exchange *ex, const char *rid,
                         const cb_sim_fault *f) {
  (void)s;
  cb__sim_api_error e;
  char retry[16];
  snprintf(retry, sizeof retry, "%d", f->retry_after_s);
  cb__sim_http_field extra[] = {{"Retry-After", retry}};
  if (f->kind == CB_SIM_FAULT_HTTP_429) {
    cb__sim_api_fail(&e, 429, "rate_limit_error", NULL, "rate_limit_exceeded",
                     "Rate limit reached (injected fault). Please try again in %ds.", f->retry_after_s);
    cb__sim_server_send_error(ex, rid, &e, extra, 1);
  } else if (f->kind == CB_SIM_FAULT_HTTP_503) {
    cb__sim_api_fail(&e, 503, "server_error", NULL, "service_unavailable",
                     "The server is overloaded (injected fault).");
    cb__sim_server_send_error(ex, rid, &e, extra, 1);
  } else {
    cb__sim_api_fail(&e, 500, "server_error", NULL, NULL, "Internal server error (injected fault).");
    cb__sim_server_send_error(ex, rid, &e, NULL, 0);
  }
}

void cb__sim_server_generate(struct cb_sim_server *s, cb__sim_http_exchange *ex,
                             cb__sim_api_kind kind, const char *request_id) {
  uint64_t arrival = cb_clock_now_ns();
  const cb__sim_http_request *hr = cb__sim_http_request_of(ex);
  cb__sim_api_request req;
  cb__sim_api_error e;
  if (cb__sim_api_parse(kind, hr->body, hr->body_len, &s->tokens, &req, &e) != CB_OK) {
    cb__sim_server_send_error(ex, request_id, &e, NULL, 0);
    return;
  }
  /* Served model and context window (gen_plan.c, shared with `sim run`). */
  cb__sim_gen_config gc = {.model = s->model, .max_model_len = s->max_model_len,
                           .seed = s->p.seed, .eos_mean_tokens = s->p.engine.eos_mean_tokens,
                           .responses = s->responses, .behavior = s->behavior,
                           .vocab = (uint32_t)s->p.engine.model.vocab_size,
                           .logit_noise = cb_sim_logit_noise(s->p.engine.weight_dtype)};
  int64_t asked;
  if (cb__sim_gen_check(&gc, &req, &asked, &e) != CB_OK) {
    cb__sim_server_send_error(ex, request_id, &e, NULL, 0);
    cb__sim_api_request_free(&req);
    return;
  }
  int64_t prompt = (int64_t)req.prompt_len;
  cb__sim_prompt *echoed = NULL; /* the prompt's tokens, for echo and prompt_logprobs */
  int listed = req.prompt_logprobs > req.top_logprobs ? req.prompt_logprobs : req.top_logprobs;
  if ((req.echo || req.prompt_logprobs >= 0) &&
      cb__sim_gen_prompt(&gc, &req, &s->tokens, listed, &echoed, &e) != CB_OK) {
    cb__sim_server_send_error(ex, request_id, &e, NULL, 0);
    cb__sim_api_request_free(&req);
    return;
  }
  uint64_t index = s->requests++;
  const cb_sim_fault *fault = cb_sim_fault_pick(s->faults, s->p.num_faults, s->p.seed, index);
  if (fault && fault->kind <= CB_SIM_FAULT_HTTP_503) {
    reject_fault(s, ex, request_id, fault);
    cb__sim_prompt_free(echoed);
    cb__sim_api_request_free(&req);
    return;
  }

  gen_stream *g = cb_calloc(1, sizeof *g);
  g->srv = s;
  g->rep = pick_replica(s);
  g->rep->live++;
  g->ex = ex;
  g->arrival_ns = arrival;
  g->stream = req.stream;
  g->include_usage = req.include_usage;
  g->fault = fault;
  snprintf(g->request_id, sizeof g->request_id, "%s", request_id);
  if (s->trace) cb__sim_http_peer_string(ex, g->peer, sizeof g->peer);
  snprintf(g->id, sizeof g->id, "%s-%016llx", kind == CB__SIM_API_CHAT ? "chatcmpl" : "cmpl",
           (unsigned long long)cb_hash3_u64(s->p.seed, index, UINT64_C(0x6964)));
  cb__sim_gen_plan plan;
  cb__sim_gen_plan_make(&gc, &req, asked, index, &plan);
  g->seed = plan.seed;
  g->scripted = plan.scripted;
  g->behaved = plan.behaved;
  g->answer = plan.answer;
  g->output_len = plan.output_len;
  g->finish_reason = plan.finish_reason;
  g->resp = (cb__sim_api_response){.kind = kind, .id = g->id, .model = s->model,
                                   .created = cb_clock_wall_ns() / CB_NS_PER_S,
                                   .logprobs = req.logprobs, .top_logprobs = req.top_logprobs,
                                   .prompt_tokens = prompt,
                                   .image_tokens = req.num_images ? req.image_tokens : -1,
                                   .refusal_field = g->answer && g->answer->refusal &&
                                                    g->answer->mode == CB__SIM_REFUSAL_FIELD,
                                   .prompt = echoed, .echo = req.echo, .echo_pending = req.echo,
                                   .prompt_logprobs = req.prompt_logprobs};
  g->prompt = echoed;
  g->echo_only = req.echo && req.max_tokens == 0;
  if (plan.tool_name[0] && kind == CB__SIM_API_CHAT) { /* the agent behaviour's tool call */
    memcpy(g->tool_name, plan.tool_name, sizeof g->tool_name);
    memcpy(g->call_id, plan.call_id, sizeof g->call_id);
    g->call = (cb__sim_api_tool_call){.id = g->call_id, .name = g->tool_name};
    g->resp.tool_call = &g->call;
  }
  if (s->trace) {
    g->token_ns = cb_calloc((size_t)g->output_len, sizeof *g->token_ns);
    g->due_ns = cb_calloc((size_t)g->output_len, sizeof *g->due_ns);
  }

  cb_sim_request er = {.id = engine_id(g), .prompt_ids = req.prompt_ids,
                       .prompt_len = req.prompt_len, .output_len = g->output_len,
                       .output_ids = g->scripted ? g->scripted->ids : NULL,
                       .output_seed = g->seed, .encoder_flops = req.encoder_flops};
  cb_error err;
  /* After parsing and tokenizing the body; on the engine's clock, so the trace says
   * exactly when the engine took the request (replaying it reproduces the engine). */
  uint64_t now_v = cb__sim_server_virtual_now(s);
  g->admitted_ns = cb__sim_server_wall_of(s, now_v);
  cb_sim_engine_advance(g->rep->engine, now_v, cb__sim_server_on_engine_event, g->rep);
  if (cb_sim_engine_add(g->rep->engine, &er, now_v, &err) != CB_OK) {
    cb__sim_api_fail(&e, 400, "invalid_request_error", NULL, NULL, "%s", err.msg);
    cb__sim_server_send_error(ex, request_id, &e, NULL, 0);
    cb__sim_api_request_free(&req);
    stream_free(g);
    return;
  }
  cb__sim_api_request_free(&req);
  cb__sim_http_set_user(ex, g);
  cb__sim_http_on_close(ex, on_client_close);
  if (g->stream) {
    cb__sim_http_field f[3];
    memcpy(f, sse_fields_tmpl, sizeof f);
    f[2].value = g->request_id;
    cb__sim_replica *rep = g->rep; /* g is freed when the stream is cut */
    if (cb__sim_http_stream_start(ex, 200, f, 3) != CB_OK) {
      g->ex = NULL;
      cut(g);
      cb__sim_server_arm(rep);
      return;
    }
    if (s->trace) { /* when each token leaves, for the trace */
      g->written_ns = cb_calloc((size_t)g->output_len, sizeof *g->written_ns);
      g->token_end = cb_calloc((size_t)g->output_len, sizeof *g->token_end);
      cb__sim_http_on_written(ex, on_written);
    }
  }
  cb__sim_server_arm(g->rep);
}
