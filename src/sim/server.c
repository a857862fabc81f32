/*
 * server.c - `sim serve`: set-up, routing, the virtual clock, replica timers and
 * the simple endpoints (/health, /v1/models, /metrics, /v1/embeddings).
 * Generation requests are in server_gen.c.
 *
 * Clock: virtual engine time v (ns) maps to monotonic wall time
 * w = origin + v × time_scale, so time_scale 0.1 runs ten times faster than real.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "sim/server.h"

#define DEFAULT_MAX_BODY_BYTES ((size_t)1 << 20)

void cb_sim_server_default_params(cb_sim_server_params *p) {
  memset(p, 0, sizeof *p);
  cb_sim_default_params(&p->engine);
  p->host = "127.0.0.1";
  p->port = 8000;
  p->time_scale = 1.0;
  p->replicas = 1;
  p->max_body_bytes = DEFAULT_MAX_BODY_BYTES;
  p->header_timeout_ms = 10000;
  p->idle_timeout_ms = 60000;
  p->embedding_dim = 1024;
  p->seed = 0;
}

uint64_t cb__sim_server_virtual_now(const struct cb_sim_server *s) {
  uint64_t now = cb_clock_now_ns();
  if (now <= s->origin_ns) return 0;
  return (uint64_t)((double)(now - s->origin_ns) / s->p.time_scale);
}

uint64_t cb__sim_server_wall_of(const struct cb_sim_server *s, uint64_t virtual_ns) {
  return s->origin_ns + (uint64_t)((double)virtual_ns * s->p.time_scale);
}

/* ---- replica timers ----------------------------------------------------------- */

static void replica_timer_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  cb__sim_replica *r = arg;
  cb_sim_engine_advance(r->engine, cb__sim_server_virtual_now(r->srv),
                        cb__sim_server_on_engine_event, r);
  cb__sim_server_arm(r);
}

void cb__sim_server_arm(cb__sim_replica *r) {
  uint64_t next = cb_sim_engine_next_event_ns(r->engine);
  if (next == UINT64_MAX) {
    event_del(r->timer);
    return;
  }
  uint64_t due = cb__sim_server_wall_of(r->srv, next), now = cb_clock_now_ns();
  struct timeval tv = cb_clock_timeval(due > now ? due - now : 0);
  event_add(r->timer, &tv);
}

/* ---- responses ----------------------------------------------------------------- */

void cb__sim_server_send_error(cb__sim_http_exchange *ex, const char *request_id,
                               const cb__sim_api_error *e, const cb__sim_http_field *extra,
                               size_t n_extra) {
  cb_buf body;
  cb_buf_init(&body, 0);
  cb__sim_api_render_error(&body, e);
  cb__sim_http_field fields[4] = {{"Content-Type", "application/json"},
                                  {"x-request-id", request_id}};
  size_t n = 2;
  for (size_t i = 0; i < n_extra && n < 4; i++) fields[n++] = extra[i];
  cb__sim_http_respond(ex, e->status, fields, n, body.data, body.len);
  cb_buf_free(&body);
}

static void send_json(cb__sim_http_exchange *ex, const char *request_id, const cb_buf *body) {
  cb__sim_http_field fields[] = {{"Content-Type", "application/json"},
                                 {"x-request-id", request_id}};
  cb__sim_http_respond(ex, 200, fields, 2, body->data, body->len);
}

static void handle_models(struct cb_sim_server *s, cb__sim_http_exchange *ex, const char *rid) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_buf_append_str(&b, "{\"object\":\"list\",\"data\":[{\"id\":\"");
  cb_buf_append_json_string(&b, s->model, strlen(s->model));
  cb_buf_appendf(&b, "\",\"object\":\"model\",\"created\":%llu,\"owned_by\":\"calibench\",\"root\":\"",
                 (unsigned long long)(s->origin_ns ? cb_clock_wall_ns() / CB_NS_PER_S : 0));
  cb_buf_append_json_string(&b, s->model, strlen(s->model));
  cb_buf_appendf(&b, "\",\"parent\":null,\"max_model_len\":%d}]}", s->max_model_len);
  send_json(ex, rid, &b);
  cb_buf_free(&b);
}

static void handle_metrics(struct cb_sim_server *s, cb__sim_http_exchange *ex, const char *rid) {
  int n = s->p.replicas;
  cb_sim_engine_stats *st = cb_calloc((size_t)n, sizeof *st);
  cb__sim_metrics *m = cb_calloc((size_t)n, sizeof *m);
  for (int i = 0; i < n; i++) {
    cb_sim_engine_get_stats(s->replicas[i].engine, &st[i]);
    m[i] = s->replicas[i].metrics;
  }
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_metrics_render(&b, s->model, (size_t)n, st, m);
  cb__sim_lateness_render(&b, &s->lateness);
  cb__sim_http_field fields[] = {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"},
                                 {"x-request-id", rid}};
  cb__sim_http_respond(ex, 200, fields, 2, b.data, b.len);
  cb_buf_free(&b);
  cb_free(st);
  cb_free(m);
}

/* Embeddings answer after the roofline time of one prefill step over all inputs
 * (no queueing behind generation: documented simplification). */
typedef struct embed_job {
  struct cb_sim_server *srv;
  cb__sim_http_exchange *ex;
  struct event *timer;
  cb__sim_api_request req;
  char request_id[128];
} embed_job;

static void embed_job_free(embed_job *j) {
  event_free(j->timer);
  cb__sim_api_request_free(&j->req);
  cb_free(j);
}

static void embed_on_close(void *user, cb__sim_http_exchange *ex) {
  (void)ex;
  embed_job_free(user);
}

static void embed_timer_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  embed_job *j = arg;
  int dim = j->req.dimensions ? j->req.dimensions : j->srv->p.embedding_dim;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_render_embeddings(&b, &j->req, j->srv->model, dim, j->srv->behavior);
  send_json(j->ex, j->request_id, &b);
  cb_buf_free(&b);
  embed_job_free(j);
}

static int model_matches(const struct cb_sim_server *s, const char *model, const char *rid,
                         cb__sim_http_exchange *ex) {
  if (!model || !strcmp(model, s->model)) return 1;
  cb__sim_api_error e;
  cb__sim_api_fail(&e, 404, "invalid_request_error", "model", "model_not_found",
                   "The model `%s` does not exist.", model);
  cb__sim_server_send_error(ex, rid, &e, NULL, 0);
  return 0;
}

static void handle_embeddings(struct cb_sim_server *s, cb__sim_http_exchange *ex, const char *rid) {
  const cb__sim_http_request *hr = cb__sim_http_request_of(ex);
  embed_job *j = cb_calloc(1, sizeof *j);
  cb__sim_api_error e;
  if (cb__sim_api_parse(CB__SIM_API_EMBEDDINGS, hr->body, hr->body_len, &s->tokens, &j->req,
                        &e) != CB_OK) {
    cb__sim_server_send_error(ex, rid, &e, NULL, 0);
    cb_free(j);
    return;
  }
  if (j->req.dimensions > s->p.embedding_dim) {
    cb__sim_api_fail(&e, 400, "invalid_request_error", "dimensions", NULL,
                     "'dimensions' must be at most %d for this model, got %d",
                     s->p.embedding_dim, j->req.dimensions);
    cb__sim_server_send_error(ex, rid, &e, NULL, 0);
    cb__sim_api_request_free(&j->req);
    cb_free(j);
    return;
  }
  if (!model_matches(s, j->req.model, rid, ex)) {
    cb__sim_api_request_free(&j->req);
    cb_free(j);
    return;
  }
  cb_sim_batch_item *items = cb_calloc(j->req.num_inputs, sizeof *items);
  for (size_t i = 0; i < j->req.num_inputs; i++) items[i].new_tokens = (int64_t)j->req.inputs[i].num_ids;
  cb_sim_step_cost cost;
  cb_sim_step_cost_compute(&s->p.engine, items, j->req.num_inputs, &cost);
  cb_free(items);
  uint64_t wait = (uint64_t)(cost.total_ns * s->p.time_scale);
  j->srv = s;
  j->ex = ex;
  snprintf(j->request_id, sizeof j->request_id, "%s", rid);
  j->timer = evtimer_new(s->base, embed_timer_cb, j);
  cb__sim_http_set_user(ex, j);
  cb__sim_http_on_close(ex, embed_on_close);
  struct timeval tv = cb_clock_timeval(wait);
  evtimer_add(j->timer, &tv);
}

/* ---- routing --------------------------------------------------------------------- */

/* The request id to echo: the client's X-Request-Id when it is a sane token, else
 * a generated one. */
static void request_id_of(struct cb_sim_server *s, cb__sim_http_exchange *ex, char *out, size_t n) {
  size_t len = 0;
  const char *v = cb__sim_http_header(ex, "x-request-id", &len);
  int ok = v && len > 0 && len < n;
  for (size_t i = 0; ok && i < len; i++) ok = v[i] > 0x20 && v[i] < 0x7f;
  if (ok) {
    memcpy(out, v, len);
    out[len] = '\0';
  } else {
    snprintf(out, n, "sim-%016llx", (unsigned long long)++s->ids);
  }
}

static int path_is(const cb__sim_http_request *r, const char *path) {
  return r->path_len == strlen(path) && !memcmp(r->target, path, r->path_len);
}

static void method_not_allowed(cb__sim_http_exchange *ex, const char *rid, const char *allow) {
  cb__sim_api_error e;
  cb__sim_api_fail(&e, 405, "invalid_request_error", NULL, NULL,
                   "Method Not Allowed: use %s", allow);
  cb__sim_http_field extra[] = {{"Allow", allow}};
  cb__sim_server_send_error(ex, rid, &e, extra, 1);
}

static void handle_request(void *ctx, cb__sim_http_exchange *ex) {
  struct cb_sim_server *s = ctx;
  const cb__sim_http_request *r = cb__sim_http_request_of(ex);
  char rid[128];
  request_id_of(s, ex, rid, sizeof rid);
  int get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
  int post = !strcmp(r->method, "POST");
  static const struct {
    const char *path;
    int post; /* 1: POST route, 0: GET route */
  } routes[] = {{"/health", 0},          {"/v1/models", 0},           {"/metrics", 0},
                {"/v1/completions", 1},  {"/v1/chat/completions", 1}, {"/v1/embeddings", 1}};
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    if (!path_is(r, routes[i].path)) continue;
    if (routes[i].post ? !post : !get) {
      method_not_allowed(ex, rid, routes[i].post ? "POST" : "GET, HEAD");
      return;
    }
    switch (i) {
      case 0: {
        cb__sim_http_field f[] = {{"x-request-id", rid}};
        cb__sim_http_respond(ex, 200, f, 1, NULL, 0);
        return;
      }
      case 1: handle_models(s, ex, rid); return;
      case 2: handle_metrics(s, ex, rid); return;
      case 3: cb__sim_server_generate(s, ex, CB__SIM_API_COMPLETIONS, rid); return;
      case 4: cb__sim_server_generate(s, ex, CB__SIM_API_CHAT, rid); return;
      default: handle_embeddings(s, ex, rid); return;
    }
  }
  cb__sim_api_error e;
  cb__sim_api_fail(&e, 404, "invalid_request_error", NULL, NULL, "Not Found: %.*s",
                   (int)(r->path_len > 200 ? 200 : r->path_len), r->target);
  cb__sim_server_send_error(ex, rid, &e, NULL, 0);
}

/* Parse and limit errors from the HTTP layer, rendered as OpenAI error bodies. */
static void format_http_error(void *ctx, int status, const char *message, cb_buf *body,
                              const char **content_type) {
  (void)ctx;
  cb__sim_api_error e;
  if (status == 413)
    cb__sim_api_fail(&e, 413, "invalid_request_error", NULL, NULL, "%s", message);
  else
    cb__sim_api_fail(&e, status, "invalid_request_error", NULL, NULL, "%s", message);
  cb__sim_api_render_error(body, &e);
  *content_type = "application/json";
}

/* ---- lifecycle --------------------------------------------------------------------- */

struct event_base *cb_sim_server_event_base_new(void) {
  struct event_config *cfg = event_config_new();
  event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER | EVENT_BASE_FLAG_NO_CACHE_TIME);
  struct event_base *base = event_base_new_with_config(cfg);
  event_config_free(cfg);
  if (!base) {
    fprintf(stderr, "calibench: out of memory (libevent base)\n");
    abort();
  }
  return base;
}

static char *dup_or_null(const char *s) { return s ? cb_strdup(s) : NULL; }

void cb_sim_server_free(cb_sim_server *s) {
  if (!s) return;
  /* Freeing the HTTP server fires on_close for every open exchange, which releases
   * its stream and aborts its engine request. */
  cb__sim_http_server_free(s->http);
  for (int i = 0; s->replicas && i < s->p.replicas; i++) {
    if (s->replicas[i].timer) event_free(s->replicas[i].timer);
    cb_sim_engine_free(s->replicas[i].engine);
  }
  cb_free(s->replicas);
  cb__sim_responses_free(s->responses);
  cb_sim_behavior_free(s->behavior);
  if (s->trace) fclose(s->trace);
  cb_buf_free(&s->scratch);
  cb_free(s->faults);
  cb_free(s->host);
  cb_free(s->responses_path);
  cb_free(s->trace_out_path);
  cb_tok_free(s->tok);
  cb_free(s);
}

static cb_status validate(const cb_sim_server_params *p, cb_error *err) {
  if (!(p->time_scale > 0) || p->time_scale > 1e6)
    return cb_error_set(err, CB_ERR_INVALID, "--time-scale must be > 0, got %g", p->time_scale);
  if (p->replicas < 1 || p->replicas > 1024)
    return cb_error_set(err, CB_ERR_INVALID, "--replicas must be in 1..1024, got %d", p->replicas);
  if (p->port < 0 || p->port > 65535)
    return cb_error_set(err, CB_ERR_INVALID, "--port must be in 0..65535, got %d", p->port);
  if (p->embedding_dim < 1 || p->embedding_dim > 65536)
    return cb_error_set(err, CB_ERR_INVALID, "--embedding-dim must be in 1..65536, got %d",
                        p->embedding_dim);
  if (p->max_body_bytes < 1024)
    return cb_error_set(err, CB_ERR_INVALID, "--max-body must be at least 1024 bytes");
  return cb_sim_params_validate(&p->engine, err);
}

cb_status cb_sim_server_start(struct event_base *base, const cb_sim_server_params *p,
                              cb_sim_server **out, cb_error *err) {
  *out = NULL;
  cb_status st = validate(p, err);
  if (st != CB_OK) return st;
  cb_sim_server *s = cb_calloc(1, sizeof *s);
  s->base = base;
  s->p = *p;
  s->host = dup_or_null(p->host ? p->host : "127.0.0.1");
  s->responses_path = dup_or_null(p->responses_path);
  s->trace_out_path = dup_or_null(p->trace_out_path);
  s->p.host = s->host;
  s->p.responses_path = s->responses_path;
  s->p.trace_out_path = s->trace_out_path;
  s->p.tokenizer = NULL; /* loaded below; the spec is not kept */
  s->p.behavior_path = NULL; /* likewise */
  if (p->num_faults) {
    s->faults = cb_calloc(p->num_faults, sizeof *s->faults);
    memcpy(s->faults, p->faults, p->num_faults * sizeof *s->faults);
  }
  s->p.faults = s->faults;
  s->model = s->p.engine.model.name;
  cb_buf_init(&s->scratch, 0);
  cb_prom_hist_init(&s->lateness, CB_PROM_BUCKETS_LATENESS);

  s->replicas = cb_calloc((size_t)p->replicas, sizeof *s->replicas);
  for (int i = 0; i < p->replicas && st == CB_OK; i++) {
    cb__sim_replica *r = &s->replicas[i];
    r->srv = s;
    r->index = i;
    cb_sim_params ep = s->p.engine;
    ep.seed = cb_hash3_u64(ep.seed, UINT64_C(0x7265706c), (uint64_t)i); /* jitter per replica */
    st = cb_sim_engine_new(&ep, &r->engine, err);
    if (st == CB_OK) {
      r->timer = evtimer_new(base, replica_timer_cb, r);
      cb__sim_metrics_init(&r->metrics);
    }
  }
  if (st == CB_OK) s->max_model_len = cb_sim_engine_capacity(s->replicas[0].engine)->max_model_len;
  s->tokens.vocab = (uint32_t)s->p.engine.model.vocab_size;
  s->tokens.has_vision = cb_sim_vision_preset(s->p.engine.model.name, &s->tokens.vision);
  if (st == CB_OK && p->tokenizer && (st = cb_tok_load(p->tokenizer, &s->tok, err)) == CB_OK) {
    s->tokens.tok = s->tok;
    s->tokens.vocab = (uint32_t)cb_tok_vocab_size(s->tok);
  }
  if (st == CB_OK && s->responses_path)
    st = cb__sim_responses_load(s->responses_path, (uint32_t)s->p.engine.model.vocab_size,
                                &s->responses, err);
  if (st == CB_OK && p->behavior_path)
    st = cb_sim_behavior_load(p->behavior_path, &s->behavior, err);
  if (st == CB_OK && s->trace_out_path) {
    s->trace = fopen(s->trace_out_path, "w");
    if (!s->trace)
      st = cb_error_at(err, CB_ERR_IO, s->trace_out_path, 0, 0, "cannot open --trace-out for writing");
  }
  if (st == CB_OK) {
    cb__sim_http_config cfg;
    cb__sim_http_default_config(&cfg);
    cfg.host = s->host;
    cfg.port = (uint16_t)p->port;
    cfg.reuse_port = p->reuse_port;
    cfg.limits.max_body_bytes = p->max_body_bytes;
    cfg.header_timeout_ms = p->header_timeout_ms;
    cfg.idle_timeout_ms = p->idle_timeout_ms;
    cfg.format_error = format_http_error;
    cfg.format_error_ctx = s;
    st = cb__sim_http_server_start(base, &cfg, handle_request, s, &s->http, err);
  }
  if (st != CB_OK) {
    cb_sim_server_free(s);
    return st;
  }
  s->origin_ns = cb_clock_now_ns();
  *out = s;
  return CB_OK;
}

int cb_sim_server_port(const cb_sim_server *s) { return cb__sim_http_server_port(s->http); }
