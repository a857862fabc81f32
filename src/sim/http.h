/*
 * http.h - the simulator's HTTP/1.1 server (internal to the sim module).
 *
 * Generic: it knows nothing about OpenAI or the engine. Two layers:
 *
 *  1. A resumable request parser (http_parse.c): a state machine fed any number of
 *     bytes at a time that reports "need more", "head complete", "request complete"
 *     or an error carrying the HTTP status to answer with. Request line, headers,
 *     Content-Length and chunked bodies, keep-alive, Expect: 100-continue, and the
 *     framing rules of RFC 9112 that prevent request smuggling. Every buffer it owns
 *     is capped by cb__sim_http_limits, so its memory is bounded by the limits.
 *
 *  2. A server (http_server.c) on libevent: evconnlistener + one socket bufferevent
 *     per connection + one server-wide "flush" event. The handler is called once per
 *     complete request with an exchange handle and answers with respond() or with a
 *     stream (stream_start / stream_write / stream_end), synchronously or later from
 *     timers; abort() cuts the connection for fault injection.
 *
 * Threading: none. Every function must be called on the thread running the
 * event_base given to cb__sim_http_server_start.
 *
 * The states, limits, lifecycle and memory figures are in docs/internals/sim-http.md.
 */
#ifndef CALIBENCH_SIM_HTTP_H
#define CALIBENCH_SIM_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "calibench/buf.h"
#include "calibench/error.h"

struct event_base;

/* ---- Limits -------------------------------------------------------------------- */

typedef struct cb__sim_http_limits {
  size_t max_header_bytes; /* request line + header fields (+ trailer fields), raw
                              bytes incl. CRLFs; over it: 431. Default 64 KiB,
                              at most 1 GiB */
  size_t max_headers;      /* header field lines per request; over it: 431. Def. 100 */
  size_t max_body_bytes;   /* decoded body bytes; over it: 413. Default 16 MiB */
} cb__sim_http_limits;

void cb__sim_http_default_limits(cb__sim_http_limits *l);

/* ---- Parser -------------------------------------------------------------------- */

typedef enum {
  CB__SIM_HTTP_PARSE_NEED_MORE = 0, /* all given bytes consumed; feed more */
  CB__SIM_HTTP_PARSE_HEAD,          /* head complete (request fields valid, no body
                                       byte consumed yet); feed again to continue */
  CB__SIM_HTTP_PARSE_DONE,          /* one request complete; bytes after `consumed`
                                       belong to the next request */
  CB__SIM_HTTP_PARSE_ERROR          /* stop: answer p->error_status and close */
} cb__sim_http_parse_result;

/* Header field index entry: offsets into the parser's head storage. */
typedef struct cb__sim_http_hdr_ {
  uint32_t name_off, name_len;   /* lowercased name, NUL-terminated */
  uint32_t value_off, value_len; /* value without surrounding whitespace, NUL-term. */
} cb__sim_http_hdr_;

/* The parsed request. Pointers are owned by the parser and stay valid until
 * cb__sim_http_parser_reset / _free. Valid from the HEAD result on (body: from DONE). */
typedef struct cb__sim_http_request {
  const char *method;      /* NUL-terminated token, e.g. "POST" (case kept) */
  size_t method_len;
  const char *target;      /* request-target as sent, e.g. "/v1/models?x=1" */
  size_t target_len;
  size_t path_len;         /* bytes of target before '?' (== target_len when none) */
  int version_minor;       /* 0: HTTP/1.0; 1: HTTP/1.1 (1.2+ are treated as 1.1) */
  int keep_alive;          /* 1 when the connection may be reused afterwards */
  int expect_continue;     /* 1: HTTP/1.1 "Expect: 100-continue" and a body follows */
  int chunked;             /* 1: body sent with Transfer-Encoding: chunked */
  int has_content_length;
  uint64_t content_length; /* declared length (when has_content_length) */
  const char *body;        /* NUL-terminated decoded body ("" when none); from DONE */
  size_t body_len;         /* bytes */
  size_t header_count;     /* header field lines kept (duplicates kept) */
} cb__sim_http_request;

/* Parser state. Caller-allocated; init before use; free releases the buffers. */
typedef struct cb__sim_http_parser {
  cb__sim_http_limits limits;
  int state;                /* internal state enum (http_parse.c) */
  size_t head_bytes;        /* raw head (and trailer) bytes seen for this request */
  size_t line_bytes;        /* bytes of the current chunk-size line */
  uint64_t remaining;       /* body bytes left (Content-Length or current chunk) */
  uint32_t cur_off;         /* start of the current name/value in `head` */
  uint32_t cur_name_off, cur_name_len;
  char version[8];          /* "HTTP/x.y" being collected */
  uint8_t version_len;
  uint8_t chunk_digits;     /* hex digits of the current chunk size */
  cb_buf head;              /* method\0target\0name\0value\0...; cap max_header_bytes */
  cb_buf body;              /* decoded body; cap max_body_bytes */
  cb__sim_http_hdr_ *hdrs;  /* header index, owned; grows up to max_headers */
  size_t hdrs_alloc;
  int error_status;         /* when ERROR: 400, 413, 417, 431, 501 or 505 */
  const char *error_msg;    /* when ERROR: static text saying what was wrong */
  cb__sim_http_request req;
} cb__sim_http_parser;

/* Limits are copied; NULL = defaults. max_header_bytes is clamped to 1 GiB and
 * max_headers to at least 1. Allocates nothing until bytes arrive. */
void cb__sim_http_parser_init(cb__sim_http_parser *p, const cb__sim_http_limits *limits);
/* Release the buffers; p may be init'ed again. */
void cb__sim_http_parser_free(cb__sim_http_parser *p);
/* Forget the current request and get ready for the next one. Buffers up to 4 KiB
 * are kept for reuse, larger ones released (idle connections stay small).
 * Invalidates every pointer in p->req. */
void cb__sim_http_parser_reset(cb__sim_http_parser *p);

/*
 * Consume bytes of data[0..len). *consumed (required) gets how many were used:
 * all of them on NEED_MORE; up to the end of the head on HEAD; up to the end of the
 * request on DONE (the rest belongs to the next request: feed it after reset); the
 * position of the offending byte (or len) on ERROR. len may be 0.
 * HEAD is reported once per request; DONE and ERROR are sticky until reset.
 * Never allocates more than the limits allow; never reads past data + len.
 */
cb__sim_http_parse_result cb__sim_http_parser_feed(cb__sim_http_parser *p,
                                                   const char *data, size_t len,
                                                   size_t *consumed);

/* The request parsed so far (see cb__sim_http_request for validity). */
const cb__sim_http_request *cb__sim_http_parser_request(const cb__sim_http_parser *p);

/* First header field named `name` (case-insensitive), NULL when absent. *value_len
 * (may be NULL) gets its length. Valid from HEAD on. */
const char *cb__sim_http_parser_header(const cb__sim_http_parser *p, const char *name,
                                       size_t *value_len);
/* Header i (0 <= i < header_count) in arrival order; name is lowercased. */
void cb__sim_http_parser_header_at(const cb__sim_http_parser *p, size_t i,
                                   const char **name, const char **value,
                                   size_t *value_len);

/* Reason phrase for a status ("Not Found"); "" for codes it does not know. */
const char *cb__sim_http_reason(int status);

/* ---- Server -------------------------------------------------------------------- */

typedef struct cb__sim_http_server cb__sim_http_server;
typedef struct cb__sim_http_exchange cb__sim_http_exchange;

/*
 * Renders the body of a response the server sends on its own (parse and limit
 * errors: 400, 413, 417, 431, 501, 505). Append the body to `body` (capped at
 * 64 KiB; content that does not fit is cut) and point *content_type at a string
 * that outlives the call (a literal). `message` says what was wrong.
 */
typedef void (*cb__sim_http_format_error_fn)(void *ctx, int status, const char *message,
                                             cb_buf *body, const char **content_type);

typedef struct cb__sim_http_config {
  const char *host;          /* numeric address or name to bind; borrowed during
                                start only. Default "127.0.0.1" */
  uint16_t port;             /* 0 = any free port (see cb__sim_http_server_port).
                                Default 8000 */
  int backlog;               /* listen(2) backlog. Default 4096 */
  int reuse_port;            /* SO_REUSEPORT: several servers share the port, the kernel
                                spreads connections over them. Default 0 */
  cb__sim_http_limits limits;
  uint64_t idle_timeout_ms;  /* close a connection with no request in progress after
                                this long without input; also the send timeout (no
                                write progress while output is pending). Def. 60000 */
  uint64_t header_timeout_ms;/* a request must arrive whole (head and body) within
                                this long of its first byte, however slowly it
                                trickles in (slowloris): then 408 and close. The idle
                                timeout cannot catch it, as every byte restarts it.
                                0 = none. Default 10000 */
  uint64_t linger_timeout_ms;/* after the last response of a closing connection:
                                how long to drain the peer's input before close.
                                Default 2000 */
  size_t max_output_bytes;   /* per connection: bytes queued for a peer that does not
                                read; an append beyond it aborts the connection.
                                Default 4 MiB */
  cb__sim_http_format_error_fn format_error; /* NULL = text/plain "message\n" */
  void *format_error_ctx;
} cb__sim_http_config;

void cb__sim_http_default_config(cb__sim_http_config *cfg);

/*
 * Called once per complete request. `ex` is valid until the handler ends the
 * exchange (respond, stream_end, abort, or a call returning CB_ERR_CAPACITY) or
 * until on_close returns, whichever comes first. The handle lives inside the
 * connection and is reused by its next request: a stale handle silently addresses
 * that request, so never keep one past the end. A handler that keeps `ex` past its
 * own return MUST register on_close (to learn that the client went away); one that
 * always responds before returning need not.
 */
typedef void (*cb__sim_http_handler_fn)(void *ctx, cb__sim_http_exchange *ex);

/*
 * Called exactly once when the connection ends while the exchange is still held by
 * the handler (peer disconnected or reset, socket error, send timeout, server freed)
 * - never as a result of a call the handler made on this exchange. Read accessors
 * work inside it; response calls do not. `ex` is invalid once it returns.
 */
typedef void (*cb__sim_http_close_fn)(void *user, cb__sim_http_exchange *ex);

/*
 * Called after a write handed bytes of the connection to the kernel, while the
 * exchange is held, with the connection's total bytes written so far and the time
 * (CLOCK_MONOTONIC ns) right after the write. Compare with cb__sim_http_queued_total
 * taken after queueing a piece: the piece has left once written_total reaches it.
 * Only records; response calls are not allowed inside it.
 */
typedef void (*cb__sim_http_written_fn)(void *user, cb__sim_http_exchange *ex,
                                        uint64_t written_total, uint64_t now_ns);

typedef struct cb__sim_http_stats {
  uint64_t connections_open;   /* now */
  uint64_t connections_total;  /* accepted since start */
  uint64_t requests;           /* complete requests handed to the handler */
  uint64_t responses;          /* exchanges ended properly (respond / stream_end) */
  uint64_t streams_open;       /* exchanges between stream_start and their end, now */
  uint64_t parse_errors;       /* requests rejected by the parser, all statuses */
  uint64_t parse_errors_400, parse_errors_413, parse_errors_417, parse_errors_431,
      parse_errors_501, parse_errors_505; /* ... by status */
  uint64_t aborted_by_handler; /* abort() calls */
  uint64_t aborted_output_cap; /* connections cut because max_output_bytes was hit */
  uint64_t client_closed;      /* exchanges ended by the peer or a socket error
                                  (on_close fired), incl. send timeouts */
  uint64_t idle_timeouts;      /* idle keep-alive connections closed */
  uint64_t header_timeouts;    /* connections closed: a request came too slowly (408) */
  uint64_t send_timeouts;      /* connections closed: no write progress in time */
  uint64_t accept_errors;      /* accept(2) failures (EMFILE ...); accepting pauses
                                  100 ms after each */
  uint64_t socket_full;        /* times a write left output queued (the peer reads
                                  slower than we write); the socket's write event
                                  then drains it */
} cb__sim_http_stats;

/*
 * Bind (SO_REUSEADDR), listen and register with `base`. *cfg is copied (host is not
 * kept). handler and ctx are stored. On success *out owns the listener; on failure
 * *out is NULL, nothing is left allocated and err says why (CB_ERR_NETWORK for
 * resolve/bind/listen failures, CB_ERR_INVALID for a bad config).
 * Sets SIGPIPE to SIG_IGN when it is SIG_DFL (writes to a dead peer must fail with
 * EPIPE, not kill the process). The caller keeps `base` alive until server_free and
 * may create it with EVENT_BASE_FLAG_PRECISE_TIMER for sub-ms timer accuracy.
 */
cb_status cb__sim_http_server_start(struct event_base *base, const cb__sim_http_config *cfg,
                                    cb__sim_http_handler_fn handler, void *ctx,
                                    cb__sim_http_server **out, cb_error *err);

/* The bound port (the real one when config.port was 0). */
uint16_t cb__sim_http_server_port(const cb__sim_http_server *s);

/* Snapshot of the counters. */
void cb__sim_http_server_get_stats(const cb__sim_http_server *s, cb__sim_http_stats *out);

/*
 * Close the listener and every connection at once (queued output is dropped) and
 * free the server. on_close fires for every exchange still held by the handler.
 * NULL is a no-op. Must not be called from inside a handler or on_close callback.
 * libevent may run the sockets' finalizers on the next loop iteration or in
 * event_base_free.
 */
void cb__sim_http_server_free(cb__sim_http_server *s);

/* ---- Exchange: the request ------------------------------------------------------ */

const cb__sim_http_request *cb__sim_http_request_of(const cb__sim_http_exchange *ex);
/* First header named `name` (case-insensitive) or NULL; *len may be NULL. */
const char *cb__sim_http_header(const cb__sim_http_exchange *ex, const char *name,
                                size_t *len);
/* The peer's address (sockaddr_in or sockaddr_in6) and its length. */
const struct sockaddr *cb__sim_http_peer(const cb__sim_http_exchange *ex, socklen_t *len);
/* "127.0.0.1:53412" / "[::1]:53412" into out (>= 64 bytes recommended); returns out. */
char *cb__sim_http_peer_string(const cb__sim_http_exchange *ex, char *out, size_t n);

/* Per-exchange user pointer (NULL initially) and close callback. */
void cb__sim_http_set_user(cb__sim_http_exchange *ex, void *user);
void *cb__sim_http_user(const cb__sim_http_exchange *ex);
void cb__sim_http_on_close(cb__sim_http_exchange *ex, cb__sim_http_close_fn fn);
/* Report writes of this exchange's connection (installs a byte counter on it, which
 * costs a little on every later write of the connection: for ground-truth tracing). */
void cb__sim_http_on_written(cb__sim_http_exchange *ex, cb__sim_http_written_fn fn);
/* Bytes ever queued on the exchange's connection; valid after on_written is set. */
uint64_t cb__sim_http_queued_total(const cb__sim_http_exchange *ex);

/* ---- Exchange: the response ----------------------------------------------------- */

/* A response header field. The server writes Content-Length, Transfer-Encoding and
 * Connection itself: passing them is CB_ERR_INVALID, as is a name that is not a
 * token or a value containing CR, LF or NUL. */
typedef struct cb__sim_http_field {
  const char *name;
  const char *value;
} cb__sim_http_field;

/*
 * Send a complete response with Content-Length and end the exchange (ex becomes
 * invalid on CB_OK and on CB_ERR_CAPACITY). Body bytes are copied (len 0: no body;
 * body may then be NULL). A Content-Type field is added when the body is non-empty
 * and `fields` has none ("application/octet-stream"). No body is sent for HEAD
 * requests and 1xx/204/304 statuses (a non-empty body there is CB_ERR_INVALID).
 * Adds Date, and "Connection: close" when the connection will close afterwards
 * (request asked, HTTP/1.0 without keep-alive). Fields named Date are the caller's
 * to avoid (they would be sent twice).
 * Errors: CB_ERR_INVALID (status outside 200..999, bad field; exchange unchanged),
 * CB_ERR_STATE (a response was already started; unchanged), CB_ERR_CAPACITY (output
 * cap exceeded: connection aborted, no on_close).
 */
cb_status cb__sim_http_respond(cb__sim_http_exchange *ex, int status,
                               const cb__sim_http_field *fields, size_t n_fields,
                               const void *body, size_t len);

/*
 * Start a streamed response: HTTP/1.1 requests get Transfer-Encoding: chunked (the
 * connection may be kept alive); HTTP/1.0 requests get a close-delimited body and
 * "Connection: close". Errors as respond (CB_ERR_INVALID leaves ex unchanged).
 */
cb_status cb__sim_http_stream_start(cb__sim_http_exchange *ex, int status,
                                    const cb__sim_http_field *fields, size_t n_fields);

/*
 * Queue `len` bytes as one chunk (len 0: no-op). Cheap: one append to the
 * connection's output buffer, no syscall; every connection with new output is
 * written once per event-loop iteration, after the callbacks that ran in it.
 * CB_ERR_STATE when no stream is open; CB_ERR_CAPACITY when the bytes already
 * queued plus these would exceed max_output_bytes (and the queue is not empty):
 * the connection is aborted, ex is invalid, on_close does not fire.
 */
cb_status cb__sim_http_stream_write(cb__sim_http_exchange *ex, const void *data,
                                    size_t len);

/* Write the terminating chunk (or, close-delimited, close after the data is sent)
 * and end the exchange; ex becomes invalid. CB_ERR_STATE when no stream is open. */
cb_status cb__sim_http_stream_end(cb__sim_http_exchange *ex);

typedef enum {
  CB__SIM_HTTP_ABORT_CUT = 0, /* send what is already queued (while the peer keeps
                                 reading: send timeout), then FIN: the peer sees EOF
                                 without a proper end of the response */
  CB__SIM_HTTP_ABORT_RESET    /* drop queued output and reset (RST) at once */
} cb__sim_http_abort_mode;

/* End the exchange without a proper response end and close the connection.
 * ex becomes invalid; on_close does not fire. Counted in aborted_by_handler. */
void cb__sim_http_abort(cb__sim_http_exchange *ex, cb__sim_http_abort_mode mode);

/* Bytes queued on this connection and not yet accepted by the kernel (backpressure
 * signal; O(1)). */
size_t cb__sim_http_pending_bytes(const cb__sim_http_exchange *ex);

#endif
