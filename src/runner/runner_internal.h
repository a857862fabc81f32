/*
 * runner_internal.h - state shared by the runner's files: runner.c (the event loop,
 * dispatch and completion), the two transports that move requests and bytes (h1.c:
 * calibench's own HTTP/1.1 reader for http:// URLs; curl.c: libcurl's multi
 * interface for https://, HTTP/2 and proxies) and stream.c (reading one response into
 * its record through the client module). Internal to the runner module.
 */
#ifndef CALIBENCH_RUNNER_INTERNAL_H
#define CALIBENCH_RUNNER_INTERNAL_H

#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/rng.h"
#include "calibench/runner.h"
#include "calibench/secret.h"
#include "util/curl_api.h"

struct event;
struct event_base;
struct cb__runner_stream; /* stream.c */
typedef struct cb__runner cb__runner; /* runner.c */

/* One request in flight. */
typedef struct cb__runner_req {
  cb__runner *rn;
  void *tx;                   /* the transport's handle while in flight */
  cb_buf headers;             /* this request's own "Name: value\r\n" lines */
  char *body;                 /* owned copy of the request body */
  size_t body_len;
  cb_record rec;              /* filled as the response arrives */
  struct cb__runner_stream *stream; /* response reader (stream.c) */
  int http_status;
  int attempts;               /* sends so far (1 + retries) */
  int resent;                 /* re-sent on a new connection after a kept-alive one
                                 closed before answering (not a retry) */
  int fresh;                  /* a retry: send it on a new connection */
  int has_retry_after;        /* the answer said Retry-After ... */
  uint64_t retry_after_ns;    /* ... this long (capped) */
  int waiting;                /* failed, waiting for its retry on retry_timer */
  struct event *retry_timer;  /* made on the first retry, kept with the request */
  struct cb__runner_req *next; /* free list / queue link */
  struct cb__runner_req *live_prev, *live_next; /* in-flight list */
} cb__runner_req;

/* How a transfer ended, as the transport saw it. */
typedef enum cb__runner_result {
  CB__RUNNER_OK,      /* the response ended by its own framing */
  CB__RUNNER_ABORTED, /* cut by the runner: the drain deadline or a second signal */
  CB__RUNNER_TIMEOUT, /* the request timeout ran out */
  CB__RUNNER_FAILED   /* the transport failed: before any response byte a connect error,
                         after one a cut stream (the message says how) */
} cb__runner_result;

/* What a transport needs from the runner. The common headers are "Name: value"
 * strings sent with every request (they may hold the API key). */
typedef struct cb__transport_config {
  cb__runner *rn;
  struct event_base *base;
  const cb_runner_params *p;
  const char *const *common;
  size_t n_common;
  cb_runner_stats *stats;
} cb__transport_config;

/* A transport: starts transfers and reports each end through cb__runner_done. */
typedef struct cb__transport {
  /* Start q (its send time is already taken). Never completes inside the call. */
  void (*send)(struct cb__transport *t, cb__runner_req *q);
  /* Drop q's transfer without a completion (the runner completes it). */
  void (*cancel)(struct cb__transport *t, cb__runner_req *q);
  void (*free)(struct cb__transport *t);
} cb__transport;

cb__transport *cb__transport_h1_new(const cb__transport_config *c, cb_error *err);
cb__transport *cb__transport_curl_new(const cb__transport_config *c, cb_error *err);
/* A libcurl handle's TLS checks (verify_tls: the peer's certificate and its host name)
 * and, with http2, HTTP/2: negotiated by ALPN over https, with prior knowledge over
 * http (no upgrade round trip). The load's handles (curl.c) and the session's target
 * check set up alike. */
void cb__runner_curl_tls(CURL *e, const char *url, int verify_tls, int http2);
/* curl_slist_free_all, each line wiped first: header lists hold the Authorization line. */
void cb__runner_slist_wipe_free(struct curl_slist *list);
/* Whether calibench's own HTTP/1.1 reader serves these parameters. */
int cb__transport_h1_serves(const cb_runner_params *p);

/* runner.c, called by the transports: q's transfer ended (q is detached from the
 * transport); then, once per batch of I/O, dispatch what may go and end the loop
 * when everything is done. */
void cb__runner_done(cb__runner *rn, cb__runner_req *q, cb__runner_result res, const char *msg);
void cb__runner_after_io(cb__runner *rn);

/* stream.c: read a response into req->rec. All times are absolute monotonic ns. */
/* secrets: the run's, redacted from every server text the record keeps. */
void cb__runner_stream_begin(cb__runner_req *q, const cb_runner_params *p,
                             const cb_secrets *secrets);
void cb__runner_stream_header(cb__runner_req *q, const char *line, size_t len, uint64_t now_ns);
void cb__runner_stream_body(cb__runner_req *q, const char *data, size_t len, uint64_t now_ns);
/* Finish the record from the transfer's result; origin is the run start, and the
 * record's times become relative to it. Sets error_class/message for every failure. */
void cb__runner_stream_end(cb__runner_req *q, cb__runner_result res, const char *msg,
                           uint64_t now_ns, uint64_t origin_ns);
/* retry.c. Waits before a retry are capped at one minute, however long a server asks
 * for; backoff starts at 250 ms (retry 1 waits 125-250 ms, each next up to twice
 * that). */
#define CB__RETRY_WAIT_MAX_NS UINT64_C(60000000000)
#define CB__RETRY_BACKOFF_BASE_NS UINT64_C(250000000)
/* A Retry-After value (delay-seconds or an HTTP-date, against the wall clock now):
 * 1 and the wait in *out_ns, or 0 when it is neither. */
int cb__runner_retry_after_ns(const char *v, size_t len, uint64_t now_wall_ns, uint64_t *out_ns);
/* The jittered exponential wait before retry number `retry` (1, 2, ...). */
uint64_t cb__runner_backoff_ns(cb_rng *rng, int retry);

/* 1 when the request failed in a way a retry may fix (connect, 429, 5xx). */
int cb__runner_stream_retryable(const cb__runner_req *q);
void cb__runner_stream_free(cb__runner_req *q);

#endif
