/*
 * http_server.c - the simulator's HTTP/1.1 server: connections, responses, streams.
 *
 * One evconnlistener accepts; each connection is one socket bufferevent (reading,
 * EOF/error detection, timeouts, and writing when the socket is full) plus a small
 * `conn` holding the request parser and the one exchange in flight. Requests on a
 * connection are handled one at a time: while the handler holds an exchange, later
 * pipelined bytes wait in the input buffer (read stops at a 64 KiB high-water mark).
 *
 * Write path (the hot path of SSE streaming): responses and chunks are appended to
 * the connection's output evbuffer (one evbuffer_reserve_space/commit per chunk, no
 * syscall) and the connection is queued on the server's "dirty" list; one event,
 * activated when the list becomes non-empty, runs after the callbacks of the
 * current loop iteration and writes each dirty connection with one writev. Only
 * when the kernel does not take everything does the bufferevent's own write event
 * take over until the buffer drains (then it is disabled again). This keeps
 * EV_WRITE off epoll in the common case: per chunk there is no epoll_ctl, and per
 * connection and loop iteration at most one writev.
 *
 * Lifetime: a conn is freed when it is closed and nothing on the stack refers to it
 * (`busy` counts our own active callbacks for it, `dirty` its place in the queue).
 * The exchange is embedded in the conn; see http.h for when a handle is valid.
 * docs/internals/sim-http.md has the state diagram.
 */
#include "sim/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"

#define INPUT_HIGH_WATERMARK (64 * 1024) /* bytes buffered while a request is held */
#define ERROR_BODY_MAX (64 * 1024)
#define ACCEPT_PAUSE_US 100000

enum {
  C_READING = 0, /* parsing a request (idle, or part of one received) */
  C_EXCHANGE,    /* request handed to the handler, no response started */
  C_STREAMING,   /* stream_start done, stream_end not yet */
  C_CLOSING,     /* last bytes queued; flush, then shut down the write side */
  C_LINGER       /* FIN sent; draining the peer's input until EOF or timeout */
};

typedef struct conn conn;

struct cb__sim_http_exchange {
  conn *conn;
  cb__sim_http_close_fn on_close;
  cb__sim_http_written_fn on_written;
  void *user;
  uint8_t active;          /* held by the handler */
  uint8_t head_only;       /* HEAD request: headers only */
  uint8_t close_delimited; /* HTTP/1.0 stream: body ends at close */
  uint8_t keep_alive;      /* the connection survives this exchange */
};

struct conn {
  cb__sim_http_server *srv;
  struct bufferevent *bev; /* owned; NULL once closed */
  conn *prev, *next;       /* srv->conns (open connections) */
  conn *dirty_next;        /* srv dirty queue */
  uint8_t state;           /* C_* */
  uint8_t dirty;           /* in the dirty queue */
  uint8_t busy;            /* our callbacks for this conn on the stack */
  uint8_t closed;
  uint8_t need_parse;      /* pipelined input waits for the parser */
  uint8_t write_blocked;   /* the bufferevent's write event is draining output */
  uint8_t counting;        /* the output buffer's byte counter is installed */
  struct event *header_timer; /* owned; pending from a request's first byte to its end */
  uint64_t queued_total;   /* bytes ever queued on this connection (when counting) */
  uint64_t written_total;  /* ... and taken by the kernel */
  socklen_t peer_len;
  union {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
  } peer;
  cb__sim_http_exchange ex;
  cb__sim_http_parser parser;
};

struct cb__sim_http_server {
  struct event_base *base;            /* borrowed */
  cb__sim_http_config cfg;            /* copy; host = NULL */
  cb__sim_http_handler_fn handler;
  void *ctx;
  struct evconnlistener *listener;    /* owned */
  struct event *flush_ev;             /* owned; writes the dirty queue */
  struct event *accept_resume_ev;     /* owned; re-enables accepting after errors */
  const struct timeval *idle_tv;      /* common timeout (owned by base), NULL = none */
  const struct timeval *linger_tv;    /* common timeout */
  const struct timeval *header_tv;    /* common timeout, NULL = none */
  uint16_t port;
  int flush_scheduled;
  conn *conns;                        /* open connections */
  conn *dirty_head, *dirty_tail;
  cb_buf scratch;                     /* response heads (reused, grows to the largest) */
  cb_buf errbody;                     /* error bodies, cap ERROR_BODY_MAX */
  time_t date_sec;                    /* second `date` was formatted for */
  char date[64];                      /* IMF-fixdate, e.g. "Tue, 02 Dec 2025 13:07:34 GMT" */
  cb__sim_http_stats stats;
};

static void libevent_oom(void) {
  fprintf(stderr, "calibench: out of memory (libevent buffer)\n");
  abort();
}

/* ---- Config --------------------------------------------------------------------- */

void cb__sim_http_default_config(cb__sim_http_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->host = "127.0.0.1";
  cfg->port = 8000;
  cfg->backlog = 4096;
  cb__sim_http_default_limits(&cfg->limits);
  cfg->idle_timeout_ms = 60000;
  cfg->header_timeout_ms = 10000;
  cfg->linger_timeout_ms = 2000;
  cfg->max_output_bytes = 4 * 1024 * 1024;
  cfg->format_error = NULL;
  cfg->format_error_ctx = NULL;
}

static void default_format_error(void *ctx, int status, const char *message, cb_buf *body,
                                 const char **content_type) {
  (void)ctx;
  (void)status;
  cb_buf_append_str(body, message);
  cb_buf_append_char(body, '\n');
  *content_type = "text/plain; charset=utf-8";
}

/* ---- Connection bookkeeping ------------------------------------------------------- */

static void conn_maybe_free(conn *c) {
  if (c->closed && !c->busy && !c->dirty) cb_free(c);
}

static void mark_dirty(conn *c) {
  cb__sim_http_server *s = c->srv;
  if (!c->dirty) {
    c->dirty = 1;
    c->dirty_next = NULL;
    if (s->dirty_tail)
      s->dirty_tail->dirty_next = c;
    else
      s->dirty_head = c;
    s->dirty_tail = c;
  }
  if (!s->flush_scheduled) {
    s->flush_scheduled = 1;
    event_active(s->flush_ev, EV_WRITE, 1);
  }
}

static void set_timeouts(conn *c, const struct timeval *rd, const struct timeval *wr) {
  bufferevent_set_timeouts(c->bev, rd, wr);
}

/* Close the socket now (queued output is dropped) and free c once nothing refers to
 * it. Fires on_close when the handler still holds the exchange. */
static void conn_close(conn *c) {
  if (c->closed) return;
  cb__sim_http_server *s = c->srv;
  c->closed = 1;
  if (c->ex.active) {
    c->ex.active = 0;
    s->stats.client_closed++;
    if (c->state == C_STREAMING) s->stats.streams_open--;
    if (c->ex.on_close) {
      c->busy++;
      c->ex.on_close(c->ex.user, &c->ex);
      c->busy--;
    }
  }
  event_free(c->header_timer);
  c->header_timer = NULL;
  bufferevent_free(c->bev);
  c->bev = NULL;
  if (c->prev)
    c->prev->next = c->next;
  else
    s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  s->stats.connections_open--;
  cb__sim_http_parser_free(&c->parser);
  conn_maybe_free(c);
}

/* Close with RST: drop whatever is queued here and in the kernel. */
static void conn_reset(conn *c) {
  struct linger lg = {1, 0};
  evutil_socket_t fd = bufferevent_getfd(c->bev);
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  conn_close(c);
}

/* All output is sent on a closing connection: FIN, then drain input until the peer
 * closes or linger_timeout_ms passes (closing with unread input would send RST and
 * could destroy the response in the peer's receive buffer). */
static void conn_linger(conn *c) {
  c->state = C_LINGER;
  evutil_socket_t fd = bufferevent_getfd(c->bev);
  if (fd < 0 || shutdown(fd, SHUT_WR) != 0) {
    conn_close(c);
    return;
  }
  struct evbuffer *in = bufferevent_get_input(c->bev);
  evbuffer_drain(in, evbuffer_get_length(in));
  set_timeouts(c, c->srv->linger_tv, NULL);
  bufferevent_enable(c->bev, EV_READ);
}

/* One writev of the queued output. A socket bufferevent keeps the start of its
 * output buffer frozen (only its own write callback drains it), so unfreeze around
 * the write exactly as that callback does. Returns evbuffer_write's result. */
static int write_now(conn *c) {
  struct evbuffer *out = bufferevent_get_output(c->bev);
  evbuffer_unfreeze(out, 1);
  int n = evbuffer_write(out, bufferevent_getfd(c->bev));
  int saved = errno;
  evbuffer_freeze(out, 1);
  errno = saved;
  return n;
}

/* Write queued output now with one writev; hand the rest to the bufferevent. */
static void conn_flush(conn *c) {
  if (c->closed || c->write_blocked || c->state == C_LINGER) return;
  struct evbuffer *out = bufferevent_get_output(c->bev);
  if (evbuffer_get_length(out) > 0) {
    int n = write_now(c);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      conn_close(c); /* EPIPE, ECONNRESET ...: the peer is gone */
      return;
    }
    if (evbuffer_get_length(out) > 0) {
      c->srv->stats.socket_full++;
      c->write_blocked = 1;
      bufferevent_enable(c->bev, EV_WRITE);
      return;
    }
  }
  if (c->state == C_CLOSING) conn_linger(c);
}

/* ---- Responses ------------------------------------------------------------------------ */

/* The Date field value (RFC 9110 5.6.7 IMF-fixdate), formatted once per second and
 * without the locale (strftime's %a/%b would follow LC_TIME). */
static const char *http_date(cb__sim_http_server *s) {
  static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t now = time(NULL);
  if (now != s->date_sec || !s->date[0]) {
    struct tm tm;
    gmtime_r(&now, &tm);
    snprintf(s->date, sizeof s->date, "%s, %02d %s %04d %02d:%02d:%02d GMT",
             days[tm.tm_wday % 7], tm.tm_mday, months[tm.tm_mon % 12], tm.tm_year + 1900,
             tm.tm_hour, tm.tm_min, tm.tm_sec);
    s->date_sec = now;
  }
  return s->date;
}

static void count_parse_error(cb__sim_http_stats *st, int status) {
  st->parse_errors++;
  switch (status) {
    case 400: st->parse_errors_400++; break;
    case 413: st->parse_errors_413++; break;
    case 417: st->parse_errors_417++; break;
    case 431: st->parse_errors_431++; break;
    case 501: st->parse_errors_501++; break;
    case 505: st->parse_errors_505++; break;
    default: break;
  }
}

static void enter_closing(conn *c) {
  c->state = C_CLOSING;
  set_timeouts(c, NULL, c->srv->idle_tv);
  mark_dirty(c);
}

/* The exchange's response is fully queued. */
static void exchange_end(conn *c, int keep_alive) {
  cb__sim_http_server *s = c->srv;
  c->ex.active = 0;
  cb__sim_http_parser_reset(&c->parser);
  if (!keep_alive) {
    enter_closing(c);
    return;
  }
  c->state = C_READING;
  set_timeouts(c, s->idle_tv, s->idle_tv);
  if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0) c->need_parse = 1;
  mark_dirty(c);
}

/* Answer a parser error with Connection: close, then close. */
static void send_parse_error(conn *c) {
  cb__sim_http_server *s = c->srv;
  const cb__sim_http_parser *p = &c->parser;
  int status = p->error_status;
  count_parse_error(&s->stats, status);
  char msg[256];
  if (status == 431)
    snprintf(msg, sizeof msg, "%s (limits: %zu bytes, %zu fields)", p->error_msg,
             s->cfg.limits.max_header_bytes, s->cfg.limits.max_headers);
  else if (status == 413)
    snprintf(msg, sizeof msg, "%s (limit: %zu bytes)", p->error_msg,
             s->cfg.limits.max_body_bytes);
  else if (status == 408)
    snprintf(msg, sizeof msg, "%s (limit: %llu ms from its first byte)", p->error_msg,
             (unsigned long long)s->cfg.header_timeout_ms);
  else
    snprintf(msg, sizeof msg, "%s", p->error_msg ? p->error_msg : "bad request");
  const char *ctype = "text/plain; charset=utf-8";
  cb_buf_reset(&s->errbody);
  cb__sim_http_format_error_fn fmt = s->cfg.format_error ? s->cfg.format_error
                                                         : default_format_error;
  fmt(s->cfg.format_error_ctx, status, msg, &s->errbody, &ctype);
  if (!ctype) ctype = "text/plain; charset=utf-8";
  struct evbuffer *out = bufferevent_get_output(c->bev);
  cb_buf_reset(&s->scratch);
  cb_buf_appendf(&s->scratch,
                 "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 status, cb__sim_http_reason(status), http_date(s), ctype, s->errbody.len);
  cb_buf_append(&s->scratch, s->errbody.data ? s->errbody.data : "", s->errbody.len);
  if (evbuffer_add(out, s->scratch.data, s->scratch.len) != 0) libevent_oom();
  enter_closing(c);
}

static int is_token(const char *s) {
  if (!*s) return 0;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          strchr("!#$%&'*+-.^_`|~", ch)))
      return 0;
  }
  return 1;
}

static int name_is(const char *a, const char *lower) {
  for (; *a && *lower; a++, lower++) {
    unsigned char x = (unsigned char)*a;
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
    if (x != (unsigned char)*lower) return 0;
  }
  return *a == *lower;
}

/* Check caller fields; *has_ct = a Content-Type is among them. */
static cb_status check_fields(const cb__sim_http_field *f, size_t n, int *has_ct) {
  *has_ct = 0;
  for (size_t i = 0; i < n; i++) {
    if (!f[i].name || !f[i].value || !is_token(f[i].name)) return CB_ERR_INVALID;
    if (strpbrk(f[i].value, "\r\n")) return CB_ERR_INVALID;
    if (name_is(f[i].name, "content-length") || name_is(f[i].name, "transfer-encoding") ||
        name_is(f[i].name, "connection"))
      return CB_ERR_INVALID;
    if (name_is(f[i].name, "content-type")) *has_ct = 1;
  }
  return CB_OK;
}

enum { FRAME_LENGTH, FRAME_NONE, FRAME_CHUNKED, FRAME_CLOSE };

/* Build the status line and fields in s->scratch. */
static void build_head(conn *c, int status, const cb__sim_http_field *f, size_t n,
                       int add_ct, int framing, size_t length) {
  cb__sim_http_server *s = c->srv;
  cb_buf *b = &s->scratch;
  cb_buf_reset(b);
  cb_buf_appendf(b, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status, cb__sim_http_reason(status),
                 http_date(s));
  for (size_t i = 0; i < n; i++) {
    cb_buf_append_str(b, f[i].name);
    cb_buf_append(b, ": ", 2);
    cb_buf_append_str(b, f[i].value);
    cb_buf_append(b, "\r\n", 2);
  }
  if (add_ct) cb_buf_append_str(b, "Content-Type: application/octet-stream\r\n");
  if (framing == FRAME_LENGTH)
    cb_buf_appendf(b, "Content-Length: %zu\r\n", length);
  else if (framing == FRAME_CHUNKED)
    cb_buf_append_str(b, "Transfer-Encoding: chunked\r\n");
  if (!c->ex.keep_alive)
    cb_buf_append_str(b, "Connection: close\r\n");
  else if (c->parser.req.version_minor == 0)
    cb_buf_append_str(b, "Connection: keep-alive\r\n");
  cb_buf_append(b, "\r\n", 2);
}

/* Would appending `add` bytes exceed the output cap? An empty queue takes anything. */
static int over_output_cap(conn *c, size_t add) {
  size_t pending = evbuffer_get_length(bufferevent_get_output(c->bev));
  size_t cap = c->srv->cfg.max_output_bytes;
  return pending > 0 && (add > cap || pending > cap - add);
}

static void abort_for_cap(conn *c) {
  cb__sim_http_server *s = c->srv;
  s->stats.aborted_output_cap++;
  if (c->state == C_STREAMING) s->stats.streams_open--;
  c->ex.active = 0;
  conn_reset(c);
}

static conn *live_conn(const cb__sim_http_exchange *ex) {
  if (!ex || !ex->active) return NULL;
  return ex->conn;
}

cb_status cb__sim_http_respond(cb__sim_http_exchange *ex, int status,
                               const cb__sim_http_field *fields, size_t n_fields,
                               const void *body, size_t len) {
  conn *c = live_conn(ex);
  if (!c || c->state != C_EXCHANGE) return CB_ERR_STATE;
  int no_body_status = status == 204 || status == 304;
  if (status < 200 || status > 999 || (no_body_status && len) || (len && !body))
    return CB_ERR_INVALID;
  int has_ct;
  if (check_fields(fields, n_fields, &has_ct) != CB_OK) return CB_ERR_INVALID;
  build_head(c, status, fields, n_fields, len > 0 && !has_ct,
             no_body_status ? FRAME_NONE : FRAME_LENGTH, len);
  int send_body = len > 0 && !ex->head_only;
  cb__sim_http_server *s = c->srv;
  if (over_output_cap(c, s->scratch.len + (send_body ? len : 0))) {
    abort_for_cap(c);
    return CB_ERR_CAPACITY;
  }
  struct evbuffer *out = bufferevent_get_output(c->bev);
  if (evbuffer_add(out, s->scratch.data, s->scratch.len) != 0) libevent_oom();
  if (send_body && evbuffer_add(out, body, len) != 0) libevent_oom();
  s->stats.responses++;
  exchange_end(c, ex->keep_alive);
  return CB_OK;
}

cb_status cb__sim_http_stream_start(cb__sim_http_exchange *ex, int status,
                                    const cb__sim_http_field *fields, size_t n_fields) {
  conn *c = live_conn(ex);
  if (!c || c->state != C_EXCHANGE) return CB_ERR_STATE;
  if (status < 200 || status > 999 || status == 204 || status == 304) return CB_ERR_INVALID;
  int has_ct;
  if (check_fields(fields, n_fields, &has_ct) != CB_OK) return CB_ERR_INVALID;
  if (c->parser.req.version_minor == 0) {
    ex->close_delimited = 1;
    ex->keep_alive = 0;
  }
  build_head(c, status, fields, n_fields, !has_ct,
             ex->close_delimited ? FRAME_CLOSE : FRAME_CHUNKED, 0);
  cb__sim_http_server *s = c->srv;
  if (over_output_cap(c, s->scratch.len)) {
    abort_for_cap(c);
    return CB_ERR_CAPACITY;
  }
  if (evbuffer_add(bufferevent_get_output(c->bev), s->scratch.data, s->scratch.len) != 0)
    libevent_oom();
  c->state = C_STREAMING;
  s->stats.streams_open++;
  mark_dirty(c);
  return CB_OK;
}

cb_status cb__sim_http_stream_write(cb__sim_http_exchange *ex, const void *data,
                                    size_t len) {
  conn *c = live_conn(ex);
  if (!c || c->state != C_STREAMING) return CB_ERR_STATE;
  if (len == 0 || ex->head_only) return CB_OK;
  struct evbuffer *out = bufferevent_get_output(c->bev);
  if (ex->close_delimited) {
    if (over_output_cap(c, len)) {
      abort_for_cap(c);
      return CB_ERR_CAPACITY;
    }
    if (evbuffer_add(out, data, len) != 0) libevent_oom();
  } else {
    size_t need = len + 16 + 4; /* hex size (<= 16 digits) CRLF data CRLF */
    if (len > SIZE_MAX - 20 || over_output_cap(c, need)) {
      abort_for_cap(c);
      return CB_ERR_CAPACITY;
    }
    struct evbuffer_iovec v;
    if (evbuffer_reserve_space(out, (ev_ssize_t)need, &v, 1) < 1) libevent_oom();
    char *w = v.iov_base;
    char hex[16];
    int nd = 0;
    size_t x = len;
    do {
      hex[nd++] = "0123456789abcdef"[x & 15];
      x >>= 4;
    } while (x);
    size_t k = 0;
    while (nd) w[k++] = hex[--nd];
    w[k++] = '\r';
    w[k++] = '\n';
    memcpy(w + k, data, len);
    k += len;
    w[k++] = '\r';
    w[k++] = '\n';
    v.iov_len = k;
    if (evbuffer_commit_space(out, &v, 1) != 0) libevent_oom();
  }
  mark_dirty(c);
  return CB_OK;
}

cb_status cb__sim_http_stream_end(cb__sim_http_exchange *ex) {
  conn *c = live_conn(ex);
  if (!c || c->state != C_STREAMING) return CB_ERR_STATE;
  if (!ex->close_delimited && !ex->head_only &&
      evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5) != 0)
    libevent_oom();
  cb__sim_http_server *s = c->srv;
  s->stats.streams_open--;
  s->stats.responses++;
  exchange_end(c, ex->keep_alive);
  return CB_OK;
}

void cb__sim_http_abort(cb__sim_http_exchange *ex, cb__sim_http_abort_mode mode) {
  conn *c = live_conn(ex);
  if (!c) return;
  cb__sim_http_server *s = c->srv;
  s->stats.aborted_by_handler++;
  if (c->state == C_STREAMING) s->stats.streams_open--;
  ex->active = 0;
  if (mode == CB__SIM_HTTP_ABORT_RESET) {
    conn_reset(c);
    return;
  }
  enter_closing(c);
}

size_t cb__sim_http_pending_bytes(const cb__sim_http_exchange *ex) {
  conn *c = live_conn(ex);
  if (!c || !c->bev) return 0;
  return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* ---- Exchange accessors ----------------------------------------------------------------- */

const cb__sim_http_request *cb__sim_http_request_of(const cb__sim_http_exchange *ex) {
  return &ex->conn->parser.req;
}

const char *cb__sim_http_header(const cb__sim_http_exchange *ex, const char *name,
                                size_t *len) {
  return cb__sim_http_parser_header(&ex->conn->parser, name, len);
}

const struct sockaddr *cb__sim_http_peer(const cb__sim_http_exchange *ex, socklen_t *len) {
  if (len) *len = ex->conn->peer_len;
  return &ex->conn->peer.sa;
}

char *cb__sim_http_peer_string(const cb__sim_http_exchange *ex, char *out, size_t n) {
  const conn *c = ex->conn;
  char ip[INET6_ADDRSTRLEN] = "?";
  if (n == 0) return out;
  if (c->peer.sa.sa_family == AF_INET) {
    inet_ntop(AF_INET, &c->peer.in4.sin_addr, ip, sizeof ip);
    snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(c->peer.in4.sin_port));
  } else if (c->peer.sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &c->peer.in6.sin6_addr, ip, sizeof ip);
    snprintf(out, n, "[%s]:%u", ip, (unsigned)ntohs(c->peer.in6.sin6_port));
  } else {
    snprintf(out, n, "?");
  }
  return out;
}

void cb__sim_http_set_user(cb__sim_http_exchange *ex, void *user) { ex->user = user; }
void *cb__sim_http_user(const cb__sim_http_exchange *ex) { return ex->user; }
void cb__sim_http_on_close(cb__sim_http_exchange *ex, cb__sim_http_close_fn fn) {
  ex->on_close = fn;
}

/* Counts the bytes added to and drained from a connection's output: drained bytes
 * are the ones a write handed to the kernel (both write paths drain this buffer). */
static void output_counter(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg) {
  (void)b;
  conn *c = arg;
  c->queued_total += info->n_added;
  c->written_total += info->n_deleted;
  cb__sim_http_exchange *ex = &c->ex;
  if (info->n_deleted && ex->active && ex->on_written)
    ex->on_written(ex->user, ex, c->written_total, cb_clock_now_ns());
}

void cb__sim_http_on_written(cb__sim_http_exchange *ex, cb__sim_http_written_fn fn) {
  conn *c = ex->conn;
  ex->on_written = fn;
  if (!c->counting && c->bev) {
    struct evbuffer *out = bufferevent_get_output(c->bev);
    c->queued_total = c->written_total + evbuffer_get_length(out);
    evbuffer_add_cb(out, output_counter, c);
    c->counting = 1;
  }
}

uint64_t cb__sim_http_queued_total(const cb__sim_http_exchange *ex) { return ex->conn->queued_total; }

/* ---- Reading and dispatch ---------------------------------------------------------------- */

static void start_exchange(conn *c) {
  cb__sim_http_server *s = c->srv;
  const cb__sim_http_request *r = &c->parser.req;
  cb__sim_http_exchange *ex = &c->ex;
  s->stats.requests++;
  c->state = C_EXCHANGE;
  ex->on_close = NULL;
  ex->on_written = NULL;
  ex->user = NULL;
  ex->active = 1;
  ex->keep_alive = (uint8_t)r->keep_alive;
  ex->close_delimited = 0;
  ex->head_only = r->method_len == 4 && !memcmp(r->method, "HEAD", 4);
  evtimer_del(c->header_timer);
  set_timeouts(c, NULL, s->idle_tv);
  s->handler(s->ctx, ex);
}

/* Parse buffered input while the connection is between exchanges. The caller holds
 * c->busy. */
static void conn_process_input(conn *c) {
  while (!c->closed && c->state == C_READING) {
    struct evbuffer *in = bufferevent_get_input(c->bev);
    struct evbuffer_iovec v;
    const char *data = "";
    size_t len = 0;
    if (evbuffer_peek(in, -1, NULL, &v, 1) > 0) {
      data = v.iov_base;
      len = v.iov_len;
    }
    size_t used = 0;
    cb__sim_http_parse_result r = cb__sim_http_parser_feed(&c->parser, data, len, &used);
    if (used) evbuffer_drain(in, used);
    switch (r) {
      case CB__SIM_HTTP_PARSE_NEED_MORE:
        if (evbuffer_get_length(in) == 0) {
          /* Part of a request is here: the rest has header_timeout_ms from now. */
          if (c->srv->header_tv && c->parser.head_bytes > 0 &&
              !evtimer_pending(c->header_timer, NULL))
            evtimer_add(c->header_timer, c->srv->header_tv);
          return;
        }
        break;
      case CB__SIM_HTTP_PARSE_HEAD:
        /* Ask for the body unless it is already arriving (RFC 9110 10.1.1). */
        if (c->parser.req.expect_continue && evbuffer_get_length(in) == 0) {
          if (evbuffer_add(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n",
                           25) != 0)
            libevent_oom();
          mark_dirty(c);
        }
        break;
      case CB__SIM_HTTP_PARSE_DONE:
        start_exchange(c);
        break;
      case CB__SIM_HTTP_PARSE_ERROR:
        send_parse_error(c);
        return;
    }
  }
}

/* A request that began header_timeout_ms ago is still incomplete: 408, then close. */
static void header_timeout_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conn *c = arg;
  if (c->closed || c->state != C_READING) return;
  c->busy++;
  c->srv->stats.header_timeouts++;
  c->parser.error_status = 408;
  c->parser.error_msg = "the request did not arrive in time";
  send_parse_error(c);
  c->busy--;
  conn_maybe_free(c);
}

static void read_cb(struct bufferevent *bev, void *arg) {
  conn *c = arg;
  c->busy++;
  if (c->state == C_READING) {
    conn_process_input(c);
  } else if (c->state == C_CLOSING || c->state == C_LINGER) {
    struct evbuffer *in = bufferevent_get_input(bev);
    evbuffer_drain(in, evbuffer_get_length(in));
  } /* else: a request is held; pipelined bytes wait (bounded by the watermark) */
  c->busy--;
  conn_maybe_free(c);
}

static void write_cb(struct bufferevent *bev, void *arg) {
  conn *c = arg;
  c->busy++;
  c->write_blocked = 0;
  bufferevent_disable(bev, EV_WRITE);
  if (c->state == C_CLOSING) conn_linger(c);
  c->busy--;
  conn_maybe_free(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg) {
  conn *c = arg;
  cb__sim_http_server *s = c->srv;
  c->busy++;
  if (what & BEV_EVENT_TIMEOUT) {
    if (what & BEV_EVENT_WRITING)
      s->stats.send_timeouts++;
    else if (c->state == C_READING)
      s->stats.idle_timeouts++;
    conn_close(c);
  } else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
    /* A peer that half-closed may still read what is queued (a completed response
     * not yet flushed this iteration): one last try before closing. */
    if ((what & BEV_EVENT_EOF) && !c->write_blocked && c->state != C_LINGER &&
        evbuffer_get_length(bufferevent_get_output(bev)) > 0)
      (void)write_now(c);
    conn_close(c);
  }
  c->busy--;
  conn_maybe_free(c);
}

/* Runs once per loop iteration in which something was queued: parse pipelined input
 * of connections whose exchange ended, and write every dirty connection. */
static void flush_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  cb__sim_http_server *s = arg;
  conn *c;
  while ((c = s->dirty_head) != NULL) {
    s->dirty_head = c->dirty_next;
    if (!s->dirty_head) s->dirty_tail = NULL;
    c->dirty = 0;
    c->dirty_next = NULL;
    if (c->closed) {
      conn_maybe_free(c);
      continue;
    }
    c->busy++;
    if (c->need_parse && c->state == C_READING) {
      c->need_parse = 0;
      conn_process_input(c);
    }
    if (!c->closed) conn_flush(c);
    c->busy--;
    conn_maybe_free(c);
  }
  s->flush_scheduled = 0;
}

/* ---- Accepting ---------------------------------------------------------------------------- */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg) {
  (void)l;
  cb__sim_http_server *s = arg;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct bufferevent *bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
  if (!bev) {
    evutil_closesocket(fd);
    s->stats.accept_errors++;
    return;
  }
  conn *c = cb_calloc(1, sizeof *c);
  c->srv = s;
  c->bev = bev;
  if (salen > 0) {
    size_t n = (size_t)salen < sizeof c->peer ? (size_t)salen : sizeof c->peer;
    memcpy(&c->peer, sa, n);
    c->peer_len = (socklen_t)n;
  }
  c->ex.conn = c;
  c->state = C_READING;
  c->header_timer = evtimer_new(s->base, header_timeout_cb, c);
  if (!c->header_timer) libevent_oom();
  cb__sim_http_parser_init(&c->parser, &s->cfg.limits);
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->stats.connections_open++;
  s->stats.connections_total++;
  bufferevent_setcb(bev, read_cb, write_cb, event_cb, c);
  bufferevent_setwatermark(bev, EV_READ, 0, INPUT_HIGH_WATERMARK);
  bufferevent_disable(bev, EV_WRITE); /* written by conn_flush; see the file comment */
  set_timeouts(c, s->idle_tv, s->idle_tv);
  bufferevent_enable(bev, EV_READ);
}

static void accept_error_cb(struct evconnlistener *l, void *arg) {
  cb__sim_http_server *s = arg;
  s->stats.accept_errors++;
  /* EMFILE and friends leave the connection in the backlog, so the listener would
   * fire again at once: pause accepting briefly instead of spinning. */
  evconnlistener_disable(l);
  struct timeval tv = {0, ACCEPT_PAUSE_US};
  evtimer_add(s->accept_resume_ev, &tv);
}

static void accept_resume_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  cb__sim_http_server *s = arg;
  evconnlistener_enable(s->listener);
}

/* ---- Server lifetime ------------------------------------------------------------------------ */

static const struct timeval *common_timeout(struct event_base *base, uint64_t ms) {
  if (ms == 0) return NULL;
  struct timeval tv;
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
  return event_base_init_common_timeout(base, &tv);
}

cb_status cb__sim_http_server_start(struct event_base *base, const cb__sim_http_config *cfg,
                                    cb__sim_http_handler_fn handler, void *ctx,
                                    cb__sim_http_server **out, cb_error *err) {
  *out = NULL;
  if (!base || !cfg || !handler)
    return cb_error_set(err, CB_ERR_INVALID, "http server: base, config and handler are required");
  if (cfg->max_output_bytes == 0)
    return cb_error_set(err, CB_ERR_INVALID, "http server: max_output_bytes must be > 0");

  struct sigaction old;
  if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);
  }

  const char *host = cfg->host && *cfg->host ? cfg->host : "127.0.0.1";
  char port_str[8];
  snprintf(port_str, sizeof port_str, "%u", (unsigned)cfg->port);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = getaddrinfo(host, port_str, &hints, &res);
  if (gai != 0)
    return cb_error_set(err, CB_ERR_NETWORK, "http server: cannot resolve '%s': %s", host,
                        gai_strerror(gai));

  cb__sim_http_server *s = cb_calloc(1, sizeof *s);
  s->base = base;
  s->cfg = *cfg;
  s->cfg.host = NULL;
  s->handler = handler;
  s->ctx = ctx;
  int saved_errno = 0;
  for (struct addrinfo *ai = res; ai && !s->listener; ai = ai->ai_next) {
    s->listener = evconnlistener_new_bind(
        base, accept_cb, s,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC |
            (cfg->reuse_port ? LEV_OPT_REUSEABLE_PORT : 0),
        cfg->backlog > 0 ? cfg->backlog : -1, ai->ai_addr, (int)ai->ai_addrlen);
    if (!s->listener) saved_errno = errno;
  }
  freeaddrinfo(res);
  if (!s->listener) {
    cb_free(s);
    return cb_error_set(err, CB_ERR_NETWORK, "http server: cannot listen on %s:%u: %s", host,
                        (unsigned)cfg->port, strerror(saved_errno));
  }
  evconnlistener_set_error_cb(s->listener, accept_error_cb);

  struct sockaddr_storage ss;
  socklen_t sslen = sizeof ss;
  if (getsockname(evconnlistener_get_fd(s->listener), (struct sockaddr *)&ss, &sslen) == 0) {
    if (ss.ss_family == AF_INET)
      s->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    else if (ss.ss_family == AF_INET6)
      s->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  }
  s->flush_ev = event_new(base, -1, 0, flush_cb, s);
  s->accept_resume_ev = evtimer_new(base, accept_resume_cb, s);
  if (!s->flush_ev || !s->accept_resume_ev) libevent_oom();
  s->idle_tv = common_timeout(base, cfg->idle_timeout_ms);
  s->linger_tv = common_timeout(base, cfg->linger_timeout_ms ? cfg->linger_timeout_ms : 1);
  s->header_tv = common_timeout(base, cfg->header_timeout_ms);
  cb_buf_init(&s->scratch, 0);
  cb_buf_init(&s->errbody, ERROR_BODY_MAX);
  *out = s;
  return CB_OK;
}

uint16_t cb__sim_http_server_port(const cb__sim_http_server *s) { return s->port; }

void cb__sim_http_server_get_stats(const cb__sim_http_server *s, cb__sim_http_stats *out) {
  *out = s->stats;
}

void cb__sim_http_server_free(cb__sim_http_server *s) {
  if (!s) return;
  evconnlistener_free(s->listener);
  event_free(s->accept_resume_ev);
  while (s->conns) conn_close(s->conns);
  /* Closed conns still queued for a flush are freed here with the queue. */
  conn *c = s->dirty_head;
  while (c) {
    conn *next = c->dirty_next;
    cb_free(c);
    c = next;
  }
  event_free(s->flush_ev);
  cb_buf_free(&s->scratch);
  cb_buf_free(&s->errbody);
  cb_free(s);
}
