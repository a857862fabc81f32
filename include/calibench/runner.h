/*
 * runner.h - the load generator's engine: one libevent loop driving the HTTP
 * transport (calibench's own HTTP/1.1 reader for http://; libcurl's multi interface
 * for https://, HTTP/2 and proxies), sending requests at their scheduled times (open
 * loop) or as soon as a slot frees (closed loop), timing every byte, and handing back
 * one cb_record per request as it completes.
 *
 * The runner knows HTTP and the OpenAI stream format (through the client module),
 * not datasets or arrival processes: the caller supplies request bodies and times
 * through a source callback. Network failures are data: they become records with
 * an error class, never a failed run.
 */
#ifndef CALIBENCH_RUNNER_H
#define CALIBENCH_RUNNER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One request to send. Memory is the source's until its next call. */
typedef struct cb_runner_item {
  uint64_t index;             /* schedule index; also in X-Request-Id */
  uint64_t at_ns;             /* open loop: send time, ns after the run start */
  int warmup;
  const char *class_name;     /* "" for none */
  const char *body;           /* JSON request body */
  size_t body_len;
  int64_t prompt_tokens;      /* the dataset's count, -1 unknown (usage wins) */
  cb_token_source prompt_source;
  uint64_t image_bytes;       /* encoded image files sent in the body (0: none) */
  const char *const *headers; /* extra "Name: value" headers of this request's class */
  size_t n_headers;
  int has_target_rate;        /* 1: a ramped run, target_rate goes into the record */
  double target_rate;         /* req/s the workload offers at at_ns (>= 0; a linear ramp
                                 from 0 offers 0 at its start) */
  int has_session;            /* 1: a turn of a live multi-turn session: session and
                                 turn go into the record */
  uint64_t session;           /* the session's id in the run */
  uint32_t turn;              /* the turn's index in its session, from 0 */
} cb_runner_item;

/* Fill *out with the next request and return 1, or return 0 when there is none.
 * Items come in nondecreasing at_ns.
 *
 * A live source (a conversation whose next request is built from the answer to the
 * one before) may return CB_RUNNER_SOURCE_WAIT instead: nothing is ready now. The
 * runner asks again after each record it hands to on_record (the answer a waiting
 * request needs arrives there first), and ends the run when the source waits while
 * nothing is in flight, since nothing could wake it. A live item's at_ns is
 * normally 0: sent at once, in an open loop too. sim run's virtual-time runner asks
 * a live source the same way, on its virtual clock (sim_run.h). */
#define CB_RUNNER_SOURCE_WAIT 2
/* A live source may also return CB_RUNNER_SOURCE_LATER: nothing is ready before
 * out->at_ns (ns after the run start, the only field it sets), unless an answer
 * comes first (a think time between a reply and the next turn). The runner asks
 * again then, or after the next record, and does not end the run meanwhile. */
#define CB_RUNNER_SOURCE_LATER 3
typedef int (*cb_runner_source_fn)(void *ctx, cb_runner_item *out);

/* Called once per finished request, in completion order. The record is the
 * callback's to keep: move it with cb_record_set_push or let it be freed after the
 * call returns. */
typedef void (*cb_runner_record_fn)(void *ctx, cb_record *rec);

/* Text -> tokens, used for output tokens when the server sends no usage. */
typedef size_t (*cb_runner_count_fn)(void *ctx, const char *text, size_t len);

/* What only the runner knows, for a progress line (the counts come from the caller's
 * own tally of on_request and on_record: one source for every figure shown). */
typedef struct cb_runner_progress {
  uint64_t elapsed_ns;
  uint64_t queued;             /* open loop: due, waiting for a slot (--max-concurrency) */
} cb_runner_progress;

typedef void (*cb_runner_progress_fn)(void *ctx, const cb_runner_progress *p);

/* A request's steps before its record, for live counters (on_request). */
typedef enum {
  CB_RUNNER_REQUEST_DUE = 0, /* its time came: an open loop sends or queues it, a closed
                                loop sends it (items a stop leaves in the source never
                                come due) */
  CB_RUNNER_REQUEST_SENT     /* its first attempt was handed to the transport */
} cb_runner_request_step;

/* class_name: the item's ("" none); lag_ns, for SENT: the record's sent_ns -
 * scheduled_ns, exactly (0 in a closed loop, which schedules at the send). Called on
 * the runner's thread, SENT between taking the send time and handing the request to
 * the transport (after the hand-over a failure may already have ended it): it must be
 * a few additions, never I/O or a wait. */
typedef void (*cb_runner_request_fn)(void *ctx, cb_runner_request_step step,
                                     const char *class_name, uint64_t lag_ns);

typedef struct cb_runner_params {
  const char *url;            /* endpoint URL, e.g. http://127.0.0.1:8000/v1/chat/completions */
  int chat;                   /* 1: chat dialect, 0: completions */
  const char *run_id;         /* X-Request-Id is "<run_id>-<index>" */
  const char *api_key;        /* NULL: none; sent as a bearer token unless headers hold an
                                 Authorization of their own; never logged */
  const char *const *headers; /* extra "Name: value" headers for every request */
  size_t n_headers;
  int verify_tls;             /* 1 */
  int http2;                  /* 0: HTTP/1.1 with keep-alive; 1: HTTP/2 (h2c prior knowledge
                                 over http://, ALPN over https://) */
  int use_libcurl;            /* 1: libcurl for http:// too (it is always used for https://,
                                 HTTP/2, and when http_proxy or all_proxy is set) */
  double request_timeout_s;   /* 0: none */
  double connect_timeout_s;   /* 10 */
  const char *source_addrs;   /* NULL: the kernel picks; else local addresses to spread
                                 new connections over, round robin
                                 (cb_runner_source_addrs_parse's syntax) */
  int concurrency;            /* > 0: closed loop with this many in flight */
  int max_concurrency;        /* open loop: cap in flight (0 = none); waiting requests
                                 queue in the client and their lag is recorded */
  double duration_s;          /* 0: until the source runs out; else no send after it */
  int source_endless;         /* 1: the source never runs out (a closed loop bounded by
                                 the duration): a stop takes nothing more from it, and
                                 not_sent counts only what it had already given */
  int source_live;            /* 1: a live source (it builds each request from the answers
                                 so far): asked only when a request can go out, never
                                 ahead of a free slot */
  double drain_timeout_s;     /* after the last send or a stop: wait this long (30) */
  int retries;                /* retry a failed request (connect, 429, 5xx) this many times
                                 (0), each on a new connection, after the server's
                                 Retry-After or a jittered exponential backoff (capped at
                                 60 s; never past the drain deadline) */
  uint64_t seed;              /* the backoff's jitter */
  size_t max_output_text;     /* bytes of output text kept per record (4096) */
  size_t max_choice_events;   /* bytes of raw response events kept per record
                                 (cb_record.choice_events); 0: none */
  cb_runner_count_fn count_tokens; /* NULL: one token per content chunk */
  void *count_ctx;
  volatile sig_atomic_t *stop; /* signals received: 1 = stop sending and drain for
                                  drain_timeout_s; 2 or more = cut in-flight now */
  /* Called once when the first stop signal begins the drain of in_flight requests
   * (none: not called); NULL = none. */
  void (*on_drain)(void *ctx, uint64_t in_flight, double drain_timeout_s);
  void *drain_ctx;
  cb_runner_progress_fn progress; /* every progress_interval_s; NULL = none */
  void *progress_ctx;
  double progress_interval_s; /* 1 */
  cb_runner_request_fn on_request; /* each request coming due and being sent; NULL = none */
  void *request_ctx;
} cb_runner_params;

/* The defaults as an initializer: the runner's contract (these types) is shared with
 * sim run's virtual-time runner, which starts from the same defaults without calling
 * into the runner (the two front ends do not know each other: docs/design.md). */
#define CB_RUNNER_PARAMS_DEFAULT                                                          \
  {.chat = 1, .run_id = "run", .verify_tls = 1, .connect_timeout_s = 10,                  \
   .drain_timeout_s = 30, .max_output_text = 4096, .progress_interval_s = 1}

/* *p = CB_RUNNER_PARAMS_DEFAULT */
void cb_runner_default_params(cb_runner_params *p);

/* 1 when one of the "Name: value" headers is called name (case-insensitive). An
 * Authorization header the caller gives wins: the API key is then not sent. */
int cb_runner_has_header(const char *const *headers, size_t n_headers, const char *name);

typedef struct cb_runner_stats {
  uint64_t origin_ns;        /* CLOCK_MONOTONIC at the run start (records are relative) */
  uint64_t start_wall_ns;    /* wall clock at the start, for labels */
  uint64_t sent, completed, failed, retried;
  uint64_t not_sent;         /* items left unsent by a stop or the duration */
  uint64_t aborted;          /* in flight when the drain timeout ran out */
  uint64_t last_end_ns;      /* last completion, from the origin */
  double cpu_s;              /* CPU time of the runner's thread */
  const char *http_client;   /* "calibench" (its own HTTP/1.1 reader) or "libcurl" */
  uint64_t reads;            /* calibench's reader: reads that returned bytes ... */
  uint64_t kernel_stamped_reads; /* ... and those timed by the kernel's receive stamp */
  uint64_t peak_connections; /* calibench's reader: most sockets open at once */
  uint64_t fd_exhausted;     /* connections not opened: no descriptor left (EMFILE: the
                                process's RLIMIT_NOFILE; ENFILE: the system's) */
  int interrupted;           /* stopped by *stop */
} cb_runner_stats;

/*
 * Run until the source is exhausted (or the duration ends, or *stop is set) and
 * every sent request has finished or the drain timeout has run out. Records are
 * delivered through on_record as they complete; requests cut off by the drain
 * timeout or a second stop signal are delivered with error class "interrupted" (the
 * message says which). Fails only when it cannot
 * start (bad URL, libcurl init).
 */
/* Local addresses new connections are bound to (runner params' source_addrs): a
 * comma-separated list of IP literals and inclusive IPv4 ranges A-B, e.g.
 * "127.0.0.2-127.0.0.9,127.0.1.1", at most CB_RUNNER_MAX_SOURCE_ADDRS in all. Fills
 * out (room for CB_RUNNER_MAX_SOURCE_ADDRS; NULL only checks) and *n; CB_ERR_INVALID
 * naming the part that is not one. */
#define CB_RUNNER_MAX_SOURCE_ADDRS 4096
cb_status cb_runner_source_addrs_parse(const char *spec, struct sockaddr_storage *out, size_t *n,
                                       cb_error *err);

cb_status cb_runner_run(const cb_runner_params *p, cb_runner_source_fn source, void *source_ctx,
                        cb_runner_record_fn on_record, void *record_ctx, cb_runner_stats *stats,
                        cb_error *err);

/* ---- one request ------------------------------------------------------------------ */

/* One POST outside a load (an embeddings batch, a gate notification). */
typedef struct cb_runner_post_req {
  const char *url;
  const char *const *headers; /* "Name: value" lines; libcurl's copies are wiped after */
  size_t n_headers;
  const char *body;
  size_t body_len;
  double timeout_s;           /* the whole transfer; connecting takes at most 10 s of it */
  size_t max_response;        /* response bytes kept; more is an error (0: no cap) */
} cb_runner_post_req;

/*
 * POST over libcurl's easy interface, the peer's certificate checked; no redirect is
 * followed. CB_OK when an HTTP answer came (*status its code, resp its body). Otherwise
 * CB_ERR_NETWORK (*status 0, *timed_out 1 when the timeout ran out) with libcurl's
 * reason; the message never names the URL, which the caller shows as it may.
 */
cb_status cb_runner_post(const cb_runner_post_req *r, cb_buf *resp, long *status, int *timed_out,
                         cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
