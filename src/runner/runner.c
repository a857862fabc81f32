/*
 * runner.c - the runner's event loop: one libevent base drives the transport (h1.c,
 * calibench's own HTTP/1.1 reader, or curl.c, libcurl's multi interface), a timer for
 * the next scheduled send, and a tick that watches the stop flag and reports progress.
 *
 * Open loop: item i is sent at origin + at_ns; when --max-concurrency is reached it
 * waits in a FIFO and its lag (sent - scheduled) is recorded, never hidden.
 * Closed loop: `concurrency` requests are kept in flight; each completion sends the
 * next. The send time is taken immediately before the request is handed to the
 * transport.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/secret.h"
#include "runner/runner_internal.h"

struct cb__runner {
  const cb_runner_params *p;
  cb_runner_source_fn source;
  void *source_ctx;
  cb_runner_record_fn on_record;
  void *record_ctx;
  cb_runner_stats *stats;

  struct event_base *base;
  cb__transport *tx;
  struct event *send_timer;   /* next scheduled send */
  struct event *tick;         /* stop flag, drain deadline, progress */

  cb_runner_item next;        /* the next item from the source, if have_next */
  int have_next;
  int source_done;
  cb__runner_req *queue_head, *queue_tail; /* open loop: due, waiting for a slot */
  uint64_t queued;
  cb__runner_req *free_list;
  cb__runner_req *live;       /* in flight, most recent first */
  uint64_t in_flight;
  int stopping;               /* no more new sends: the drain has begun */
  int cut_short;              /* stopped by a signal or the duration: no retries either */
  uint64_t stop_at_ns;        /* when sending stopped (drain deadline base) */
  uint64_t last_progress_ns;
  cb_rng rng;                 /* retry backoff jitter, seeded */
  char *auth_line;            /* "Authorization: Bearer KEY" for requests without their own
                                 Authorization, or NULL; wiped when the run ends */
  cb_secrets secrets;         /* the run's secrets, redacted from what servers say */
};

void cb_runner_default_params(cb_runner_params *p) { *p = (cb_runner_params)CB_RUNNER_PARAMS_DEFAULT; }

int cb_runner_has_header(const char *const *headers, size_t n_headers, const char *name) {
  size_t len = strlen(name);
  for (size_t i = 0; i < n_headers; i++) {
    const char *h = headers[i];
    while (*h == ' ' || *h == '\t') h++;
    if (!strncasecmp(h, name, len) && (h[len] == ':' || h[len] == ' ' || h[len] == '\t')) return 1;
  }
  return 0;
}

static uint64_t since_origin(const cb__runner *rn, uint64_t now) {
  return now > rn->stats->origin_ns ? now - rn->stats->origin_ns : 0;
}

/* ---- requests ------------------------------------------------------------------------ */

static cb__runner_req *req_new(cb__runner *rn, const cb_runner_item *it) {
  cb__runner_req *q = rn->free_list;
  if (q) {
    rn->free_list = q->next;
    cb_buf keep = q->headers; /* its storage and its retry timer are reused */
    struct event *timer = q->retry_timer;
    memset(q, 0, sizeof *q);
    q->headers = keep;
    q->retry_timer = timer;
    cb_buf_reset(&q->headers);
  } else {
    q = cb_calloc(1, sizeof *q);
    q->headers.secret = 1; /* the key goes with each request's own headers */
  }
  q->rn = rn;
  cb_record_init(&q->rec);
  q->rec.index = it->index;
  q->rec.warmup = it->warmup;
  q->rec.prompt_tokens = it->prompt_tokens;
  q->rec.prompt_source = it->prompt_source;
  q->rec.has_target_rate = it->has_target_rate;
  q->rec.target_rate = it->target_rate;
  q->rec.image_bytes = it->image_bytes;
  q->rec.has_session = it->has_session;
  q->rec.session = it->session;
  q->rec.turn = it->turn;
  snprintf(q->rec.class_name, sizeof q->rec.class_name, "%s", it->class_name ? it->class_name : "");
  snprintf(q->rec.request_id, sizeof q->rec.request_id, "%s-%llu", rn->p->run_id,
           (unsigned long long)it->index);
  q->body = cb_strndup(it->body, it->body_len);
  q->body_len = it->body_len;
  /* This request's own headers: its class's, and the request id. */
  for (size_t i = 0; i < it->n_headers; i++) cb_buf_appendf(&q->headers, "%s\r\n", it->headers[i]);
  /* The key, unless this request's class sends an Authorization of its own. */
  if (rn->auth_line && !cb_runner_has_header(it->headers, it->n_headers, "Authorization"))
    cb_buf_appendf(&q->headers, "%s\r\n", rn->auth_line);
  cb_buf_appendf(&q->headers, "X-Request-Id: %s\r\n", q->rec.request_id);
  return q;
}

static void req_recycle(cb__runner *rn, cb__runner_req *q) {
  cb__runner_stream_free(q);
  cb_free(q->body);
  q->body = NULL;
  cb_record_free(&q->rec);
  q->next = rn->free_list;
  rn->free_list = q;
}

static void live_add(cb__runner *rn, cb__runner_req *q);

static void came_due(const cb__runner *rn, const cb__runner_req *q) {
  if (rn->p->on_request)
    rn->p->on_request(rn->p->request_ctx, CB_RUNNER_REQUEST_DUE, q->rec.class_name, 0);
}

/* Hand a request to the transport. The send time is taken here. */
static void send_req(cb__runner *rn, cb__runner_req *q) {
  cb__runner_stream_begin(q, rn->p, &rn->secrets);
  q->attempts++;
  uint64_t now = cb_clock_now_ns();
  if (q->attempts == 1) {
    q->rec.sent_ns = now;
    rn->stats->sent++;
    /* a closed loop schedules at the send: scheduled_ns is still 0 here */
    uint64_t sched = q->rec.scheduled_ns;
    if (rn->p->on_request)
      rn->p->on_request(rn->p->request_ctx, CB_RUNNER_REQUEST_SENT, q->rec.class_name,
                        sched && now > sched ? now - sched : 0);
  }
  live_add(rn, q);
  rn->tx->send(rn->tx, q);
}

/* ---- dispatch -------------------------------------------------------------------------- */

/* Take the next item when there is none waiting. A live source that waits while
 * nothing is in flight or queued has nothing left to wait for: it is done. One that
 * has something later is asked again at that time (the send timer). */
static int pull(cb__runner *rn) {
  if (rn->have_next || rn->source_done) return rn->have_next;
  int got = rn->source(rn->source_ctx, &rn->next);
  if (got == 1) rn->have_next = 1;
  else if (got == CB_RUNNER_SOURCE_LATER) {
    uint64_t due = rn->stats->origin_ns + rn->next.at_ns, now = cb_clock_now_ns();
    struct timeval tv = cb_clock_timeval(due > now ? due - now : 0);
    if (!rn->stopping) evtimer_add(rn->send_timer, &tv);
  }
  else if (got != CB_RUNNER_SOURCE_WAIT || (!rn->in_flight && !rn->queue_head)) rn->source_done = 1;
  return rn->have_next;
}

static int slot_free(const cb__runner *rn) {
  const cb_runner_params *p = rn->p;
  uint64_t cap = p->concurrency > 0 ? (uint64_t)p->concurrency
                                    : p->max_concurrency > 0 ? (uint64_t)p->max_concurrency : 0;
  return cap == 0 || rn->in_flight < cap;
}

static void finish_waiting(cb__runner *rn, cb__runner_req *q);

static void stop_sending(cb__runner *rn, uint64_t now) {
  if (rn->cut_short) return;
  rn->stopping = rn->cut_short = 1;
  rn->stop_at_ns = now;
  evtimer_del(rn->send_timer);
  /* No retries after a stop: requests waiting for one end now with their failure. */
  for (cb__runner_req *q = rn->live, *next; q; q = next) {
    next = q->live_next;
    if (q->waiting) finish_waiting(rn, q);
  }
  /* What was due but queued, and what the source still holds, is never sent. */
  while (rn->queue_head) {
    cb__runner_req *q = rn->queue_head;
    rn->queue_head = q->next;
    rn->stats->not_sent++;
    req_recycle(rn, q);
  }
  rn->queue_tail = NULL;
  rn->queued = 0;
  if (rn->have_next) rn->stats->not_sent++;
  rn->have_next = 0;
  /* A finite source is counted out; an endless one (a closed loop bounded only by
   * the duration) would never return, so nothing more is taken from it. */
  if (!rn->p->source_endless)
    while (rn->source(rn->source_ctx, &rn->next) == 1) rn->stats->not_sent++;
  rn->source_done = 1;
}

static int past_duration(const cb__runner *rn, uint64_t now) {
  return rn->p->duration_s > 0 &&
         since_origin(rn, now) >= (uint64_t)(rn->p->duration_s * 1e9);
}

/* Send whatever may be sent now; arm the timer for the next scheduled item. */
static void dispatch(cb__runner *rn) {
  uint64_t now = cb_clock_now_ns();
  if (rn->stopping) return;
  if (past_duration(rn, now)) {
    stop_sending(rn, now);
    return;
  }
  if (rn->p->concurrency > 0) { /* closed loop */
    while (slot_free(rn) && pull(rn)) {
      cb__runner_req *q = req_new(rn, &rn->next);
      rn->have_next = 0;
      q->rec.scheduled_ns = 0; /* set to the send time below */
      came_due(rn, q);
      send_req(rn, q);
      q->rec.scheduled_ns = q->rec.sent_ns;
    }
    return;
  }
  /* Open loop: queued (due) requests first, in order, as slots free. */
  while (rn->queue_head && slot_free(rn)) {
    cb__runner_req *q = rn->queue_head;
    rn->queue_head = q->next;
    if (!rn->queue_head) rn->queue_tail = NULL;
    rn->queued--;
    send_req(rn, q);
  }
  while (pull(rn)) {
    uint64_t due = rn->stats->origin_ns + rn->next.at_ns;
    if (due > now) {
      struct timeval tv = cb_clock_timeval(due - now);
      evtimer_add(rn->send_timer, &tv);
      return;
    }
    if (rn->p->duration_s > 0 && rn->next.at_ns >= (uint64_t)(rn->p->duration_s * 1e9)) {
      stop_sending(rn, now);
      return;
    }
    cb__runner_req *q = req_new(rn, &rn->next);
    rn->have_next = 0;
    q->rec.scheduled_ns = due;
    came_due(rn, q);
    if (slot_free(rn) && !rn->queue_head) {
      send_req(rn, q);
    } else {
      if (rn->queue_tail) rn->queue_tail->next = q;
      else rn->queue_head = q;
      rn->queue_tail = q;
      rn->queued++;
    }
    now = cb_clock_now_ns();
  }
}

static void on_send_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  dispatch(arg);
}

/* ---- completion -------------------------------------------------------------------------- */

static void live_add(cb__runner *rn, cb__runner_req *q) {
  rn->in_flight++;
  q->live_prev = NULL;
  q->live_next = rn->live;
  if (rn->live) rn->live->live_prev = q;
  rn->live = q;
}

static void live_remove(cb__runner *rn, cb__runner_req *q) {
  rn->in_flight--;
  if (q->live_prev) q->live_prev->live_next = q->live_next;
  else rn->live = q->live_next;
  if (q->live_next) q->live_next->live_prev = q->live_prev;
}

/* The request's last attempt is its record. */
static void finish(cb__runner *rn, cb__runner_req *q) {
  if (cb_record_ok(&q->rec)) rn->stats->completed++;
  else rn->stats->failed++;
  uint64_t end = q->rec.end_ns;
  if (end > rn->stats->last_end_ns) rn->stats->last_end_ns = end;
  rn->on_record(rn->record_ctx, &q->rec);
  req_recycle(rn, q);
}

/* q was waiting for a retry that will not be made (a stop, the drain deadline): its
 * last failure is its record, and the attempt kept for the retry is dropped. */
static void finish_waiting(cb__runner *rn, cb__runner_req *q) {
  evtimer_del(q->retry_timer);
  q->waiting = 0;
  live_remove(rn, q);
  q->rec.n_attempts--;
  finish(rn, q);
}

/* How long q waits before its next attempt: the server's Retry-After, else backoff.
 * *fits = 0 when the wait would outlast the drain deadline (no retry then). */
static uint64_t retry_wait(cb__runner *rn, const cb__runner_req *q, uint64_t now, int *fits) {
  uint64_t wait = q->has_retry_after ? q->retry_after_ns : cb__runner_backoff_ns(&rn->rng, q->attempts);
  *fits = !rn->stopping ||
          now + wait < rn->stop_at_ns + (uint64_t)(rn->p->drain_timeout_s * 1e9);
  return wait;
}

/* The wait is over: send q again, on a new connection, as the same request (its send
 * and scheduled times stay the first attempt's), keeping each failed attempt. */
static void on_retry_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  cb__runner_req *q = arg;
  cb__runner *rn = q->rn;
  live_remove(rn, q);
  q->waiting = 0;
  uint64_t first_sent = q->rec.sent_ns + rn->stats->origin_ns;
  uint64_t sched = q->rec.scheduled_ns + rn->stats->origin_ns;
  cb_record keep = q->rec;
  cb__runner_stream_free(q);
  cb_record_init(&q->rec);
  q->rec.index = keep.index;
  q->rec.warmup = keep.warmup;
  q->rec.prompt_tokens = keep.prompt_tokens;
  q->rec.prompt_source = keep.prompt_source;
  q->rec.has_target_rate = keep.has_target_rate;
  q->rec.target_rate = keep.target_rate;
  q->rec.image_bytes = keep.image_bytes;
  q->rec.has_session = keep.has_session;
  q->rec.session = keep.session;
  q->rec.turn = keep.turn;
  memcpy(q->rec.class_name, keep.class_name, sizeof keep.class_name);
  memcpy(q->rec.request_id, keep.request_id, sizeof keep.request_id);
  q->rec.retries = keep.retries + 1;
  q->rec.attempts = keep.attempts; /* moved */
  q->rec.n_attempts = keep.n_attempts;
  keep.attempts = NULL;
  cb_record_free(&keep);
  rn->stats->retried++;
  q->fresh = 1;
  send_req(rn, q);
  q->rec.sent_ns = first_sent;
  q->rec.scheduled_ns = sched;
  cb__runner_after_io(rn);
}

void cb__runner_done(cb__runner *rn, cb__runner_req *q, cb__runner_result res, const char *msg) {
  uint64_t now = cb_clock_now_ns();
  live_remove(rn, q);
  cb__runner_stream_end(q, res, msg, now, rn->stats->origin_ns);
  int fits = 0;
  uint64_t wait = 0;
  if (!cb_record_ok(&q->rec) && q->attempts <= rn->p->retries && !rn->cut_short &&
      cb__runner_stream_retryable(q))
    wait = retry_wait(rn, q, now, &fits);
  if (!fits) {
    finish(rn, q);
    return;
  }
  /* Keep this attempt's outcome; the request stays in flight (its closed-loop slot
   * taken, the drain waiting for it) until the timer sends it again. */
  q->rec.attempts = cb_reallocarray(q->rec.attempts, q->rec.n_attempts + 1, sizeof *q->rec.attempts);
  cb_record_attempt *a = &q->rec.attempts[q->rec.n_attempts++];
  *a = (cb_record_attempt){.http_status = q->rec.http_status, .wait_ns = wait};
  snprintf(a->error_class, sizeof a->error_class, "%s", q->rec.error_class);
  if (!q->retry_timer) q->retry_timer = evtimer_new(rn->base, on_retry_timer, q);
  q->waiting = 1;
  live_add(rn, q);
  struct timeval tv = cb_clock_timeval(wait);
  evtimer_add(q->retry_timer, &tv);
}

void cb__runner_after_io(cb__runner *rn) {
  dispatch(rn);
  if (rn->stopping || rn->source_done) {
    if (rn->in_flight == 0 && !rn->queue_head && !pull(rn)) event_base_loopbreak(rn->base);
  }
}

/* Requests still in flight when the drain deadline passes, or when a second signal
 * arrives, end as "interrupted"; why says which. */
static void abort_in_flight(cb__runner *rn, const char *why) {
  while (rn->live) {
    cb__runner_req *q = rn->live;
    if (q->waiting) { /* between attempts: its last failure is its record */
      finish_waiting(rn, q);
      continue;
    }
    rn->stats->aborted++;
    rn->tx->cancel(rn->tx, q);
    cb__runner_done(rn, q, CB__RUNNER_ABORTED, why);
  }
}

static const char DRAIN_RAN_OUT[] = "still in flight when the drain timeout ran out";

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  cb__runner *rn = arg;
  uint64_t now = cb_clock_now_ns();
  if (rn->p->stop && *rn->p->stop && !rn->stats->interrupted) {
    /* A stop signal: no more sends; in-flight requests get the drain timeout. */
    rn->stats->interrupted = 1;
    stop_sending(rn, now);
    rn->stop_at_ns = now;
    if (rn->p->on_drain && rn->in_flight && *rn->p->stop < 2)
      rn->p->on_drain(rn->p->drain_ctx, rn->in_flight, rn->p->drain_timeout_s);
  }
  if (rn->p->stop && *rn->p->stop >= 2) /* a second signal: now */
    abort_in_flight(rn, "cut by a second interrupt signal during the drain");
  if (!rn->stopping && past_duration(rn, now)) stop_sending(rn, now);
  /* Everything sent: the drain has begun. (A closed loop whose last request took the
   * last slot has not asked the source yet: ask, or a server that never answers
   * would hold the run forever. A live source is not asked ahead of a free slot: its
   * next request would be built, and counted by it as sent, before it can go out; it
   * is done only when nothing is in flight, which the next record tells.) */
  if (!rn->stopping && !rn->queue_head && (!rn->p->source_live || slot_free(rn)) && !pull(rn) &&
      rn->source_done) {
    rn->stopping = 1;
    rn->stop_at_ns = now;
  }
  if (rn->stopping && now - rn->stop_at_ns >= (uint64_t)(rn->p->drain_timeout_s * 1e9))
    abort_in_flight(rn, DRAIN_RAN_OUT);
  if (rn->p->progress &&
      now - rn->last_progress_ns >= (uint64_t)(rn->p->progress_interval_s * 1e9)) {
    rn->last_progress_ns = now;
    cb_runner_progress pr = {.elapsed_ns = since_origin(rn, now), .queued = rn->queued};
    rn->p->progress(rn->p->progress_ctx, &pr);
  }
  cb__runner_after_io(rn);
}

/* ---- the run ------------------------------------------------------------------------------ */

static cb_status check_params(const cb_runner_params *p, cb_error *err) {
  if (!p->url || (strncmp(p->url, "http://", 7) && strncmp(p->url, "https://", 8)))
    return cb_error_set(err, CB_ERR_INVALID, "URL must start with http:// or https://, got '%s'",
                        p->url ? p->url : "");
  if (p->concurrency < 0 || p->max_concurrency < 0 || p->retries < 0)
    return cb_error_set(err, CB_ERR_INVALID, "concurrency and retries must be >= 0");
  if (!(p->drain_timeout_s >= 0) || !(p->duration_s >= 0))
    return cb_error_set(err, CB_ERR_INVALID, "duration and drain timeout must be >= 0");
  return CB_OK;
}

static struct event_base *precise_base(void) {
  struct event_config *cfg = event_config_new();
  /* Sub-millisecond timers, and no cached loop time: libevent 2.1 would otherwise
   * compute each send's timeout from the time the loop last woke. */
  event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER | EVENT_BASE_FLAG_NO_CACHE_TIME);
  struct event_base *b = event_base_new_with_config(cfg);
  event_config_free(cfg);
  return b;
}

cb_status cb_runner_run(const cb_runner_params *p, cb_runner_source_fn source, void *source_ctx,
                        cb_runner_record_fn on_record, void *record_ctx, cb_runner_stats *stats,
                        cb_error *err) {
  memset(stats, 0, sizeof *stats);
  cb_status st = check_params(p, err);
  if (st != CB_OK) return st;
  cb__runner rn = {.p = p, .source = source, .source_ctx = source_ctx, .on_record = on_record,
                   .record_ctx = record_ctx, .stats = stats};
  cb_rng_init_stream(&rn.rng, p->seed, 0x7265747279ull /* "retry" */, 0);
  /* The same for every request: the API key, each --header value, the URL's password. */
  cb_secrets_init(&rn.secrets);
  if (p->api_key) cb_secrets_add(&rn.secrets, p->api_key, strlen(p->api_key));
  for (size_t i = 0; i < p->n_headers; i++) cb_secrets_add_header(&rn.secrets, p->headers[i]);
  cb_secrets_add_url(&rn.secrets, p->url);
  rn.base = precise_base();
  if (!rn.base) {
    fprintf(stderr, "calibench: out of memory (event loop)\n");
    abort();
  }
  /* Headers of every request. The key goes with each request's own headers (a class
   * may give its own Authorization); its lines are wiped when the run ends. */
  size_t n_common = 0;
  char **common = cb_reallocarray(NULL, p->n_headers + 2, sizeof *common);
  common[n_common++] = cb_strndup("Content-Type: application/json", 64);
  common[n_common++] = cb_strndup("Accept: text/event-stream, application/json", 64);
  for (size_t i = 0; i < p->n_headers; i++) common[n_common++] = cb_strndup(p->headers[i], SIZE_MAX);
  if (p->api_key && *p->api_key && !cb_runner_has_header(p->headers, p->n_headers, "Authorization")) {
    cb_buf auth;
    cb_buf_init(&auth, 0);
    auth.secret = 1; /* the key does not linger in freed memory */
    cb_buf_appendf(&auth, "Authorization: Bearer %s", p->api_key);
    rn.auth_line = cb_strndup(auth.data, auth.len);
    cb_buf_free(&auth);
  }
  cb__transport_config tc = {.rn = &rn, .base = rn.base, .p = p,
                             .common = (const char *const *)common, .n_common = n_common,
                             .stats = stats};
  int own = !p->use_libcurl && cb__transport_h1_serves(p);
  stats->http_client = own ? "calibench" : "libcurl";
  rn.tx = own ? cb__transport_h1_new(&tc, err) : cb__transport_curl_new(&tc, err);
  for (size_t i = 0; i < n_common; i++) {
    cb_wipe(common[i], strlen(common[i]));
    cb_free(common[i]);
  }
  cb_free(common);
  if (!rn.tx) {
    event_base_free(rn.base);
    if (rn.auth_line) cb_wipe(rn.auth_line, strlen(rn.auth_line));
    cb_free(rn.auth_line);
    cb_secrets_free(&rn.secrets);
    return err && err->code != CB_OK ? err->code : CB_ERR_NETWORK;
  }
  rn.send_timer = evtimer_new(rn.base, on_send_timer, &rn);
  rn.tick = event_new(rn.base, -1, EV_PERSIST, on_tick, &rn);
  struct timeval tick = {0, 20000};
  event_add(rn.tick, &tick);

  uint64_t cpu0 = cb_clock_cpu_ns();
  stats->start_wall_ns = cb_clock_wall_ns();
  stats->origin_ns = cb_clock_now_ns();
  rn.last_progress_ns = stats->origin_ns;
  cb__runner_after_io(&rn);
  if (rn.in_flight || !rn.source_done || rn.have_next || rn.queue_head) event_base_dispatch(rn.base);
  stats->cpu_s = (double)(cb_clock_cpu_ns() - cpu0) / 1e9;

  abort_in_flight(&rn, DRAIN_RAN_OUT); /* nothing should be left; belt and braces */
  while (rn.free_list) {
    cb__runner_req *q = rn.free_list;
    rn.free_list = q->next;
    if (q->retry_timer) event_free(q->retry_timer);
    cb_buf_free(&q->headers); /* secret: wiped */
    cb_free(q);
  }
  if (rn.auth_line) {
    cb_wipe(rn.auth_line, strlen(rn.auth_line));
    cb_free(rn.auth_line);
  }
  cb_secrets_free(&rn.secrets);
  rn.tx->free(rn.tx);
  event_free(rn.send_timer);
  event_free(rn.tick);
  event_base_free(rn.base);
  return CB_OK;
}
