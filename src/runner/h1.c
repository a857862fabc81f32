/*
 * h1.c - calibench's own HTTP/1.1 transport for http:// URLs: non-blocking sockets on
 * the runner's libevent base, kept-alive connections reused one request at a time,
 * responses framed by h1_parse.c.
 *
 * Why not libcurl here: a streamed token is one small read, and libcurl 7.88 pays a
 * poll() after every recv() plus its transfer state machine and timer bookkeeping on
 * each socket event (about 15-20 us of client CPU per token on the benchmark machine,
 * bench/RESULTS.md). This reader makes one recv() per readiness event, stamps the time
 * right after it, and hands the bytes in place to the stream parser. Its sockets sit in
 * one epoll set of their own, which the libevent base watches as a single descriptor:
 * a wakeup handles every ready socket in one batch, without libevent's per-event
 * dispatch, and the runner dispatches new sends once per batch.
 *
 * Receive times come from the kernel: SO_TIMESTAMPNS stamps each segment as it
 * arrives, and recvmsg returns the stamp of the last segment read. A busy client,
 * working through a burst of ready sockets one after another, therefore does not
 * make later tokens look late. The stamp is CLOCK_REALTIME; it is moved to the
 * monotonic clock with the offset between the two taken at each wakeup, and kept
 * between the request's send and the read. Without a stamp the time after the
 * read is used: the kernel turns stamping on from deferred work shortly after the
 * first socket asks, so the first reads of a run may come unstamped (the manifest
 * counts kernel-stamped reads against all reads).
 *
 * Failures behave as with libcurl: a connect failure or a connection closed before
 * any response byte is a connect error, a cut after bytes a transport failure, and a
 * kept-alive connection the server closed before answering is re-sent once on a new
 * connection, as libcurl does.
 */
#include <errno.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "runner/h1_parse.h"
#include "runner/runner_internal.h"

#ifndef SCM_TIMESTAMPNS /* hidden by _POSIX_C_SOURCE; Linux defines it as the option */
#define SCM_TIMESTAMPNS SO_TIMESTAMPNS
#endif

#define READ_BUF 65536
#define BATCH 256 /* ready sockets taken per epoll_wait */

typedef struct h1 h1;

typedef struct h1_conn {
  h1 *t;
  int fd;
  struct event *timer;
  uint32_t watched;           /* the epoll events asked for; 0 = not in the set */
  int dead;                   /* closed; freed after the batch (events may still name it) */
  uint64_t skip_batch;        /* its socket changed in this batch: its events are stale */
  cb__runner_req *q;          /* the request in flight, NULL when idle */
  int connecting;
  const struct addrinfo *addr; /* the resolved address this socket tries */
  int reused;                 /* has carried a whole response before */
  int idle;                   /* on the idle list */
  char fail_msg[320];         /* a failure found while starting, reported from the timer */
  uint64_t connect_deadline, request_deadline; /* monotonic ns, 0 = none */
  cb_buf out;                 /* the request head being written */
  size_t out_off, body_off;
  int writing;
  uint64_t now;               /* when the bytes being parsed were read; never decreases */
  cb__h1_parser parser;
  struct h1_conn *idle_next;
  struct h1_conn *prev, *next; /* every connection */
} h1_conn;

struct h1 {
  cb__transport ops;
  cb__runner *rn;
  struct event_base *base;
  const cb_runner_params *p;
  struct addrinfo *ai;        /* resolved once at the start; NULL: resolve_error says why */
  char resolve_error[128];
  char *authority;            /* Host header and messages */
  char *path;
  cb_buf common;              /* "Name: value\r\n" lines of every request (may hold the key) */
  h1_conn *idle, *all;
  h1_conn *dead;              /* closed, to be freed (linked by idle_next) */
  int ep;                     /* the epoll set of every socket */
  struct event *ep_ev;        /* the base watches it */
  uint64_t batch;             /* wakeups so far */
  int64_t real_minus_mono;    /* CLOCK_REALTIME - CLOCK_MONOTONIC at this wakeup, ns */
  cb_runner_stats *stats;     /* reads and kernel-stamped reads are counted here */
  struct sockaddr_storage *src; /* --source-addrs (NULL: the kernel picks) ... */
  size_t n_src, next_src;     /* ... how many, and the next one's turn */
  uint64_t open;              /* sockets open now */
  char rbuf[READ_BUF];
};

/* ---- the URL ---------------------------------------------------------------------- */

typedef struct url_parts {
  const char *host, *port, *path; /* host without brackets; port NULL for 80 */
  size_t host_len, port_len;
  const char *authority;
  size_t authority_len;
} url_parts;

static int parse_url(const char *url, url_parts *u) {
  if (strncasecmp(url, "http://", 7)) return 0;
  memset(u, 0, sizeof *u);
  const char *a = url + 7, *e = a + strcspn(a, "/?#");
  if (e == a || memchr(a, '@', (size_t)(e - a))) return 0; /* no host, or user info */
  u->authority = a;
  u->authority_len = (size_t)(e - a);
  const char *port_sep;
  if (*a == '[') {
    const char *rb = memchr(a, ']', (size_t)(e - a));
    if (!rb) return 0;
    u->host = a + 1;
    u->host_len = (size_t)(rb - a - 1);
    port_sep = rb + 1 < e ? rb + 1 : NULL;
    if (port_sep && *port_sep != ':') return 0;
  } else {
    port_sep = memchr(a, ':', (size_t)(e - a));
    u->host = a;
    u->host_len = (size_t)((port_sep ? port_sep : e) - a);
  }
  if (!u->host_len) return 0;
  if (port_sep) {
    u->port = port_sep + 1;
    u->port_len = (size_t)(e - u->port);
    if (!u->port_len || u->port_len > 5) return 0;
    for (size_t i = 0; i < u->port_len; i++)
      if (u->port[i] < '0' || u->port[i] > '9') return 0;
  }
  u->path = e;
  return 1;
}

static int env_set(const char *name) {
  const char *v = getenv(name);
  return v && *v;
}

int cb__transport_h1_serves(const cb_runner_params *p) {
  url_parts u;
  /* libcurl honours proxies from the environment (not HTTP_PROXY, by its rule). */
  return !p->http2 && p->url && parse_url(p->url, &u) && !env_set("http_proxy") &&
         !env_set("all_proxy") && !env_set("ALL_PROXY");
}

/* ---- connections ------------------------------------------------------------------ */

static void on_timer(evutil_socket_t fd, short what, void *arg);

static void parsed_header(void *ctx, const char *line, size_t len) {
  h1_conn *c = ctx;
  cb__runner_stream_header(c->q, line, len, c->now);
}

static void parsed_body(void *ctx, const char *data, size_t len) {
  h1_conn *c = ctx;
  cb__runner_stream_body(c->q, data, len, c->now);
}

static h1_conn *conn_new(h1 *t) {
  h1_conn *c = cb_calloc(1, sizeof *c);
  c->out.secret = 1; /* the request head holds the key */
  c->t = t;
  c->fd = -1;
  c->timer = evtimer_new(t->base, on_timer, c);
  cb__h1_parser_init(&c->parser, &(cb__h1_callbacks){parsed_header, parsed_body, c});
  c->next = t->all;
  if (t->all) t->all->prev = c;
  t->all = c;
  return c;
}

/* Ask epoll for `events` on c's socket. */
static void watch(h1_conn *c, uint32_t events) {
  if (events == c->watched) return;
  struct epoll_event ev = {.events = events, .data.ptr = c};
  epoll_ctl(c->t->ep, c->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
  c->watched = events;
}

/* Closing the descriptor takes it out of the epoll set. */
static void close_socket(h1_conn *c) {
  if (c->fd >= 0) {
    close(c->fd);
    c->t->open--;
  }
  c->fd = -1;
  c->watched = 0;
  c->skip_batch = c->t->batch;
}

/* Close c now; free it when no batch can still name it (reap). */
static void conn_free(h1_conn *c) {
  h1 *t = c->t;
  close_socket(c);
  evtimer_del(c->timer);
  c->dead = 1;
  cb_buf_free(&c->out); /* secret: the head may hold the key, so it is wiped */
  cb__h1_parser_free(&c->parser);
  if (c->prev) c->prev->next = c->next;
  else t->all = c->next;
  if (c->next) c->next->prev = c->prev;
  if (c->idle) /* rare: the server closed an idle connection */
    for (h1_conn **pp = &t->idle; *pp; pp = &(*pp)->idle_next)
      if (*pp == c) {
        *pp = c->idle_next;
        break;
      }
  c->idle_next = t->dead;
  t->dead = c;
}

static void reap(h1 *t) {
  while (t->dead) {
    h1_conn *c = t->dead;
    t->dead = c->idle_next;
    event_free(c->timer);
    cb_free(c);
  }
}

/* A failure to report from the timer, so that no completion happens inside send. */
static void defer_failure(h1_conn *c, const char *what, const char *detail) {
  snprintf(c->fail_msg, sizeof c->fail_msg, "%s %.120s: %.180s", what, c->t->authority, detail);
  event_active(c->timer, EV_TIMEOUT, 1);
}

/* Bind fd to the next source address of its family (--source-addrs), if any. The
 * port is left to connect(), which picks it for the whole four-tuple: bind() alone
 * would reserve one port per socket, whatever the destination
 * (IP_BIND_ADDRESS_NO_PORT, Linux 4.2). 0; or the errno of the bind, with the address
 * in `which`; or NO_SOURCE_OF_FAMILY, with what is wrong in `which`. */
#define NO_SOURCE_OF_FAMILY (-1)
static int bind_source(h1 *t, int fd, int family, char *which, size_t which_size) {
  for (size_t tries = 0; tries < t->n_src; tries++) {
    const struct sockaddr_storage *a = &t->src[t->next_src++ % t->n_src];
    if (a->ss_family != family) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    if (bind(fd, (const struct sockaddr *)a, len) == 0) return 0;
    const void *ip = family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
                                       : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;
    inet_ntop(family, ip, which, (socklen_t)which_size);
    return errno;
  }
  snprintf(which, which_size, "none of --source-addrs is an IPv%d address, as the target is",
           family == AF_INET ? 4 : 6);
  return NO_SOURCE_OF_FAMILY;
}

/* Say why a socket could not be had or connected, with what to do about it where the
 * cause is a limit of this host. */
static void open_failure(h1_conn *c, int e, const char *bound) {
  h1 *t = c->t;
  char detail[200];
  if (e == EMFILE) {
    struct rlimit rl = {0};
    getrlimit(RLIMIT_NOFILE, &rl);
    t->stats->fd_exhausted++;
    snprintf(detail, sizeof detail,
             "no file descriptor left: this process's limit (RLIMIT_NOFILE %llu) is reached",
             (unsigned long long)rl.rlim_cur);
  } else if (e == ENFILE) {
    t->stats->fd_exhausted++;
    snprintf(detail, sizeof detail, "no file descriptor left: the system's (fs.file-max) are open");
  } else if (e == EADDRNOTAVAIL && !bound[0]) {
    snprintf(detail, sizeof detail, "%s: no local port left for this source address "
             "(--source-addrs spreads connections over several)", strerror(e));
  } else if (e == NO_SOURCE_OF_FAMILY) {
    snprintf(detail, sizeof detail, "%s", bound);
  } else if (bound[0]) {
    snprintf(detail, sizeof detail, "source address %s: %s", bound, strerror(e));
  } else {
    snprintf(detail, sizeof detail, "%s", strerror(e));
  }
  defer_failure(c, "connect to", detail);
}

/* Open a socket to c->addr, moving on to the next address while connect() fails at
 * once; the last failure is deferred. */
static void conn_open(h1_conn *c) {
  h1 *t = c->t;
  if (!t->ai) {
    defer_failure(c, "cannot resolve", t->resolve_error);
    return;
  }
  int last = 0;
  char bound[INET6_ADDRSTRLEN + 40] = "";
  for (; c->addr; c->addr = c->addr->ai_next) {
    const struct addrinfo *a = c->addr;
    bound[0] = '\0';
    int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    if (t->n_src && (last = bind_source(t, fd, a->ai_family, bound, sizeof bound)) != 0) {
      close(fd);
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
      c->fd = fd;
      if (++t->open > t->stats->peak_connections) t->stats->peak_connections = t->open;
      c->connecting = 1;
      c->skip_batch = t->batch; /* a new socket: this batch's events are not its own */
      watch(c, EPOLLOUT); /* writable = connected (or failed: SO_ERROR says) */
      c->writing = 1;
      return;
    }
    last = errno;
    bound[0] = '\0';
    close(fd);
  }
  open_failure(c, last, bound);
}

static void arm_timer(h1_conn *c) {
  uint64_t d = c->connecting && c->connect_deadline ? c->connect_deadline : 0;
  if (c->request_deadline && (!d || c->request_deadline < d)) d = c->request_deadline;
  if (!d) {
    evtimer_del(c->timer);
    return;
  }
  uint64_t now = cb_clock_now_ns();
  struct timeval tv = cb_clock_timeval(d > now ? d - now : 0);
  evtimer_add(c->timer, &tv);
}

/* Write what is left of the request; 0 or the errno that stopped it. */
static int write_some(h1_conn *c) {
  const cb__runner_req *q = c->q;
  while (c->out_off < c->out.len || c->body_off < q->body_len) {
    struct iovec iov[2];
    int n_iov = 0;
    if (c->out_off < c->out.len)
      iov[n_iov++] = (struct iovec){c->out.data + c->out_off, c->out.len - c->out_off};
    if (c->body_off < q->body_len)
      iov[n_iov++] = (struct iovec){q->body + c->body_off, q->body_len - c->body_off};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
    ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        watch(c, EPOLLIN | EPOLLOUT);
        c->writing = 1;
        return 0;
      }
      return errno;
    }
    size_t k = (size_t)n, head = c->out.len - c->out_off;
    if (k <= head) c->out_off += k;
    else {
      c->out_off = c->out.len;
      c->body_off += k - head;
    }
  }
  if (c->writing) watch(c, EPOLLIN);
  c->writing = 0;
  return 0;
}

/* ---- ends of a transfer ----------------------------------------------------------- */

static void start(h1 *t, cb__runner_req *q, h1_conn *c);

/* q leaves the connection; the connection is kept for the next request or closed. */
static cb__runner_req *detach(h1_conn *c, int keep) {
  cb__runner_req *q = c->q;
  c->q = NULL;
  q->tx = NULL;
  evtimer_del(c->timer);
  c->request_deadline = c->connect_deadline = 0;
  if (keep) {
    c->reused = c->idle = 1;
    c->idle_next = c->t->idle;
    c->t->idle = c;
  } else {
    conn_free(c);
  }
  return q;
}

static void fail(h1_conn *c, cb__runner_result res, const char *msg) {
  h1 *t = c->t;
  char keep[sizeof c->fail_msg]; /* msg may live in c, which detach frees */
  snprintf(keep, sizeof keep, "%s", msg);
  cb__runner_req *q = detach(c, 0);
  cb__runner_done(t->rn, q, res, keep);
}

/* The connection broke. A kept-alive one that broke before any byte of the answer
 * was most likely closed by the server while idle: send once more on a new one. */
static void broke(h1_conn *c, const char *msg) {
  h1 *t = c->t;
  if (c->reused && c->parser.bytes == 0 && !c->q->resent) {
    cb__runner_req *q = detach(c, 0);
    q->resent = 1;
    start(t, q, NULL);
    return;
  }
  fail(c, CB__RUNNER_FAILED, msg);
}

static void complete(h1_conn *c, int keep) {
  h1 *t = c->t;
  cb__runner_req *q = detach(c, keep && !c->writing && cb__h1_keep_alive(&c->parser));
  cb__runner_done(t->rn, q, CB__RUNNER_OK, NULL);
}

/* ---- events ------------------------------------------------------------------------ */

/* When the bytes just read arrived: the kernel's stamp on the monotonic clock, kept
 * within [floor, now]; else now. The floor is the send, or the connection's previous
 * read if later: the stamps of two reads of coalesced segments, each moved by the
 * offset taken at its own wakeup, can come out a few ns in the wrong order. */
static uint64_t arrival(h1 *t, struct msghdr *m, uint64_t floor, uint64_t now) {
  for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec ts;
    memcpy(&ts, CMSG_DATA(h), sizeof ts);
    int64_t mono = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - t->real_minus_mono;
    t->stats->kernel_stamped_reads++;
    if (mono > (int64_t)now) return now;
    return mono < (int64_t)floor ? floor : (uint64_t)mono;
  }
  return now;
}

static void handle_read(h1_conn *c) {
  h1 *t = c->t;
  union {
    char buf[CMSG_SPACE(sizeof(struct timespec)) * 2];
    struct cmsghdr align;
  } control;
  struct iovec iov = {t->rbuf, sizeof t->rbuf};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                     .msg_controllen = sizeof control.buf};
  ssize_t n = recvmsg(c->fd, &m, 0);
  uint64_t prev_read = c->now;
  c->now = cb_clock_now_ns();
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n > 0) {
    t->stats->reads++;
    if (c->q) {
      uint64_t floor = c->q->rec.sent_ns > prev_read ? c->q->rec.sent_ns : prev_read;
      c->now = arrival(t, &m, floor, c->now);
    }
  }
  if (!c->q) { /* idle: the server closed it, or sent what nobody asked for */
    conn_free(c);
    return;
  }
  if (n > 0) {
    if (!c->q->rec.first_byte_ns) c->q->rec.first_byte_ns = c->now;
    size_t used;
    cb__h1_result r = cb__h1_parse(&c->parser, t->rbuf, (size_t)n, &used);
    if (r == CB__H1_COMPLETE) complete(c, used == (size_t)n);
    else if (r == CB__H1_FAILED) fail(c, CB__RUNNER_FAILED, c->parser.error);
  } else if (n == 0) {
    if (cb__h1_parse_eof(&c->parser) == CB__H1_COMPLETE) complete(c, 0);
    else if (c->parser.bytes == 0) broke(c, "the server closed the connection without answering");
    else fail(c, CB__RUNNER_FAILED, c->parser.error);
  } else {
    char msg[160];
    snprintf(msg, sizeof msg, "receive from %s: %s", t->authority, strerror(errno));
    broke(c, msg);
  }
}

static void handle_write(h1_conn *c) {
  h1 *t = c->t;
  if (c->connecting) {
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0) e = errno;
    if (e) { /* this address failed: the next one, or the failure */
      close_socket(c);
      c->addr = c->addr->ai_next;
      if (c->addr) conn_open(c);
      else {
        char msg[200];
        snprintf(msg, sizeof msg, "connect to %s: %s", t->authority, strerror(e));
        fail(c, CB__RUNNER_FAILED, msg);
      }
      return;
    }
    c->connecting = 0;
    watch(c, EPOLLIN | EPOLLOUT);
    arm_timer(c);
  }
  int e = write_some(c);
  if (e) {
    char msg[160];
    snprintf(msg, sizeof msg, "send to %s: %s", t->authority, strerror(e));
    broke(c, msg);
  }
}

/* One wakeup: every ready socket, then the runner once. */
static void on_ready(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  h1 *t = arg;
  struct epoll_event evs[BATCH];
  int n = epoll_wait(t->ep, evs, BATCH, 0);
  t->batch++;
  t->real_minus_mono = (int64_t)cb_clock_wall_ns() - (int64_t)cb_clock_now_ns();
  for (int i = 0; i < n; i++) {
    h1_conn *c = evs[i].data.ptr;
    if (c->dead || c->skip_batch == t->batch) continue; /* level-triggered: asks again */
    uint32_t e = evs[i].events;
    if ((c->connecting || c->writing) && (e & (EPOLLOUT | EPOLLERR | EPOLLHUP))) handle_write(c);
    if (!c->dead && !c->connecting && c->skip_batch != t->batch &&
        (e & (EPOLLIN | EPOLLERR | EPOLLHUP)))
      handle_read(c);
  }
  reap(t);
  cb__runner_after_io(t->rn);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  h1_conn *c = arg;
  h1 *t = c->t;
  uint64_t now = cb_clock_now_ns();
  char msg[sizeof c->fail_msg];
  if (c->fail_msg[0]) {
    snprintf(msg, sizeof msg, "%s", c->fail_msg);
    c->fail_msg[0] = '\0';
    broke(c, msg);
  } else if (c->connecting && c->connect_deadline && now >= c->connect_deadline) {
    /* A wakeup takes BATCH ready sockets and the timers run after it: a client that
     * fell behind comes to this timer before it has seen the socket's own readiness.
     * A connect the kernel has completed (or failed) is not one left unanswered. */
    struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
    if (c->fd >= 0 && poll(&pfd, 1, 0) == 1) {
      handle_write(c);
    } else {
      snprintf(msg, sizeof msg, "connect to %s: no answer within %g s", t->authority,
               t->p->connect_timeout_s);
      fail(c, CB__RUNNER_FAILED, msg);
    }
  } else if (c->request_deadline && now >= c->request_deadline) {
    snprintf(msg, sizeof msg, "no complete response within %g s", t->p->request_timeout_s);
    fail(c, CB__RUNNER_TIMEOUT, msg);
  } else {
    arm_timer(c);
    return;
  }
  reap(t);
  cb__runner_after_io(t->rn);
}

/* ---- the transport ------------------------------------------------------------------ */

/* Put q on connection c (an idle one, or NULL for a new one) and start writing. */
static void start(h1 *t, cb__runner_req *q, h1_conn *c) {
  const cb_runner_params *p = t->p;
  uint64_t now = cb_clock_now_ns();
  if (!c) {
    c = conn_new(t);
    c->addr = t->ai;
    c->connect_deadline = p->connect_timeout_s > 0 ? now + (uint64_t)(p->connect_timeout_s * 1e9) : 0;
    conn_open(c);
  }
  c->q = q;
  q->tx = c;
  c->request_deadline = p->request_timeout_s > 0 ? now + (uint64_t)(p->request_timeout_s * 1e9) : 0;
  cb__h1_parser_reset(&c->parser);
  cb_buf_reset(&c->out);
  cb_buf_appendf(&c->out, "POST %s HTTP/1.1\r\nHost: %s\r\n", t->path, t->authority);
  cb_buf_append(&c->out, t->common.data, t->common.len);
  cb_buf_append(&c->out, q->headers.data, q->headers.len);
  cb_buf_appendf(&c->out, "Content-Length: %zu\r\n\r\n", q->body_len);
  c->out_off = c->body_off = 0;
  if (c->fail_msg[0]) return; /* the timer reports it */
  arm_timer(c);
  if (c->connecting) return; /* handle_write starts once connected */
  int e = write_some(c);
  if (e) defer_failure(c, "send to", strerror(e));
}

static void send_req(cb__transport *ops, cb__runner_req *q) {
  h1 *t = (h1 *)ops;
  h1_conn *c = q->fresh ? NULL : t->idle; /* a retry never trusts a kept connection */
  if (c) {
    t->idle = c->idle_next;
    c->idle = 0;
  }
  start(t, q, c);
}

static void cancel_req(cb__transport *ops, cb__runner_req *q) {
  (void)ops;
  if (q->tx) detach(q->tx, 0);
}

static void free_tx(cb__transport *ops) {
  h1 *t = (h1 *)ops;
  t->idle = NULL; /* every connection goes: no list to keep */
  while (t->all) {
    t->all->idle = 0;
    conn_free(t->all);
  }
  reap(t);
  event_free(t->ep_ev);
  close(t->ep);
  cb_buf_free(&t->common); /* secret: wiped */
  if (t->ai) freeaddrinfo(t->ai);
  cb_free(t->authority);
  cb_free(t->path);
  cb_free(t->src);
  cb_free(t);
}

cb__transport *cb__transport_h1_new(const cb__transport_config *cfg, cb_error *err) {
  url_parts u;
  if (!parse_url(cfg->p->url, &u)) {
    cb_error_set(err, CB_ERR_INVALID, "not an http:// URL this reader serves: '%s'", cfg->p->url);
    return NULL;
  }
  struct sockaddr_storage *src = NULL;
  size_t n_src = 0;
  if (cfg->p->source_addrs) {
    src = cb_calloc(CB_RUNNER_MAX_SOURCE_ADDRS, sizeof *src);
    if (cb_runner_source_addrs_parse(cfg->p->source_addrs, src, &n_src, err) != CB_OK) {
      cb_free(src);
      return NULL;
    }
  }
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    cb_error_set(err, CB_ERR_IO, "epoll_create1: %s", strerror(errno));
    cb_free(src);
    return NULL;
  }
  h1 *t = cb_calloc(1, sizeof *t);
  t->ops = (cb__transport){.send = send_req, .cancel = cancel_req, .free = free_tx};
  t->rn = cfg->rn;
  t->base = cfg->base;
  t->p = cfg->p;
  t->stats = cfg->stats;
  t->ep = ep;
  t->src = src;
  t->n_src = n_src;
  t->authority = cb_strndup(u.authority, u.authority_len);
  size_t path_len = strcspn(u.path, "#");
  t->path = path_len ? cb_strndup(u.path, path_len) : cb_strndup("/", 1);
  t->ep_ev = event_new(t->base, t->ep, EV_READ | EV_PERSIST, on_ready, t);
  event_add(t->ep_ev, NULL);
  cb_buf_init(&t->common, 0);
  t->common.secret = 1;
  for (size_t i = 0; i < cfg->n_common; i++) cb_buf_appendf(&t->common, "%s\r\n", cfg->common[i]);
  /* Resolved once: a name that does not resolve fails each request as a connect error,
   * as it would with libcurl. */
  char *host = cb_strndup(u.host, u.host_len);
  char *port = u.port ? cb_strndup(u.port, u.port_len) : cb_strndup("80", 2);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  int rc = getaddrinfo(host, port, &hints, &t->ai);
  if (rc) {
    snprintf(t->resolve_error, sizeof t->resolve_error, "%s", gai_strerror(rc));
    t->ai = NULL;
  }
  cb_free(host);
  cb_free(port);
  return &t->ops;
}
