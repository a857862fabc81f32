/*
 * curl.c - the libcurl transport: libcurl's multi interface driven by the runner's
 * libevent base (curl tells us which sockets to watch and when its timer is due; we
 * tell curl when they fire). It serves https://, HTTP/2 (multiplexed on one
 * connection), proxies from the environment, and plain http:// when asked
 * (--libcurl). Easy handles are kept and reused across requests.
 */
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "runner/runner_internal.h"

typedef struct curl_tx {
  cb__transport ops;
  cb__runner *rn;
  struct event_base *base;
  const cb_runner_params *p;
  CURLM *multi;
  struct event *timer;        /* curl's timeout */
  struct curl_slist *common;  /* headers of every request (owned; may hold the key) */
  CURL **spare;               /* easy handles not in use */
  size_t n_spare, cap_spare;
  char (*src)[INET6_ADDRSTRLEN + 8]; /* --source-addrs as CURLOPT_INTERFACE "host!ADDR" */
  size_t n_src, next_src;
} curl_tx;

typedef struct curl_req {     /* q->tx while in flight */
  CURL *easy;
  struct curl_slist *headers;
} curl_req;

/* libcurl's word for a failure, said as calibench's reader says it where libcurl's
 * would mislead: a header line over its 100 KiB limit is "Out of memory", and an
 * answer that is not HTTP/1.x reaches no header callback, so it would look like no
 * answer at all (a connect error) though bytes came. */
static const char *describe(cb__runner_req *q, CURLcode rc) {
  switch (rc) {
    case CURLE_OUT_OF_MEMORY:
      return "malformed HTTP response: a header line over libcurl's limit (100 KiB)";
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_WEIRD_SERVER_REPLY:
      if (!q->rec.first_byte_ns) q->rec.first_byte_ns = cb_clock_now_ns();
      return "malformed HTTP response: not an HTTP/1.x status line";
    default:
      return cb__curl.easy_strerror(rc);
  }
}

/* Every transfer libcurl has finished goes back to the runner. */
static void read_done(curl_tx *t) {
  CURLMsg *m;
  int left;
  while ((m = cb__curl.multi_info_read(t->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    CURL *easy = m->easy_handle;
    CURLcode rc = m->data.result;
    cb__runner_req *q;
    cb__curl.easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&q);
    t->ops.cancel(&t->ops, q); /* detach: the handle goes back to the spares */
    cb__runner_result res = rc == CURLE_OK                  ? CB__RUNNER_OK
                            : rc == CURLE_OPERATION_TIMEDOUT ? CB__RUNNER_TIMEOUT
                                                             : CB__RUNNER_FAILED;
    cb__runner_done(t->rn, q, res, describe(q, rc));
  }
  cb__runner_after_io(t->rn);
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg) {
  curl_tx *t = arg;
  int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
  int running;
  cb__curl.multi_socket_action(t->multi, fd, flags, &running);
  read_done(t);
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
  (void)easy;
  curl_tx *t = userp;
  struct event *ev = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (ev) event_free(ev);
    cb__curl.multi_assign(t->multi, s, NULL);
    return 0;
  }
  short kind = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
  if (ev) {
    event_del(ev);
    event_assign(ev, t->base, s, kind, on_socket_event, t);
  } else {
    ev = event_new(t->base, s, kind, on_socket_event, t);
    cb__curl.multi_assign(t->multi, s, ev);
  }
  event_add(ev, NULL);
  return 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  curl_tx *t = arg;
  int running;
  cb__curl.multi_socket_action(t->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  read_done(t);
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  curl_tx *t = userp;
  if (timeout_ms < 0) {
    evtimer_del(t->timer);
  } else {
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    evtimer_add(t->timer, &tv);
  }
  return 0;
}

static size_t write_cb(char *data, size_t size, size_t n, void *userp) {
  cb__runner_stream_body(userp, data, size * n, cb_clock_now_ns());
  return size * n;
}

static size_t header_cb(char *data, size_t size, size_t n, void *userp) {
  cb__runner_stream_header(userp, data, size * n, cb_clock_now_ns());
  return size * n;
}

/* curl_slist_free_all, each line wiped first: the lists hold the Authorization line
 * (libcurl's own copies while it sends are its business). */
void cb__runner_slist_wipe_free(struct curl_slist *list) {
  for (struct curl_slist *h = list; h; h = h->next) cb_wipe(h->data, strlen(h->data));
  cb__curl.slist_free_all(list);
}

static void send_req(cb__transport *ops, cb__runner_req *q) {
  curl_tx *t = (curl_tx *)ops;
  const cb_runner_params *p = t->p;
  curl_req *cr = cb_calloc(1, sizeof *cr);
  cr->easy = t->n_spare ? t->spare[--t->n_spare] : cb__curl.easy_init();
  if (!cr->easy) {
    fprintf(stderr, "calibench: out of memory (curl handle)\n");
    abort();
  }
  CURL *e = cr->easy;
  cb__curl.easy_reset(e);
  /* The common headers, then this request's own lines. */
  for (struct curl_slist *h = t->common; h; h = h->next)
    cr->headers = cb__curl.slist_append(cr->headers, h->data);
  const char *s = q->headers.data, *end = s ? s + q->headers.len : NULL;
  while (s && s < end) {
    const char *crlf = strstr(s, "\r\n");
    size_t n = crlf ? (size_t)(crlf - s) : (size_t)(end - s);
    char *line = cb_strndup(s, n);
    cr->headers = cb__curl.slist_append(cr->headers, line);
    cb_wipe(line, n); /* may be the Authorization line */
    cb_free(line);
    s += n + 2;
  }
  q->tx = cr;
  cb__curl.easy_setopt(e, CURLOPT_URL, p->url);
  cb__curl.easy_setopt(e, CURLOPT_HTTPHEADER, cr->headers);
  cb__curl.easy_setopt(e, CURLOPT_POSTFIELDS, q->body);
  cb__curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
  cb__curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
  cb__curl.easy_setopt(e, CURLOPT_WRITEDATA, q);
  cb__curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
  cb__curl.easy_setopt(e, CURLOPT_HEADERDATA, q);
  cb__curl.easy_setopt(e, CURLOPT_PRIVATE, q);
  cb__curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  cb__curl.easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  if (q->fresh) cb__curl.easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L); /* a retry: a new connection */
  /* Round robin over the source addresses: libcurl reuses a kept connection only for
   * a request asking for the same one. */
  if (t->n_src) cb__curl.easy_setopt(e, CURLOPT_INTERFACE, t->src[t->next_src++ % t->n_src]);
  cb__curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(p->connect_timeout_s * 1000));
  if (p->request_timeout_s > 0)
    cb__curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(p->request_timeout_s * 1000));
  cb__runner_curl_tls(e, p->url, p->verify_tls, p->http2);
  /* HTTP/2: wait for the connection being set up rather than opening one per request
   * (requests share one multiplexed connection). */
  if (p->http2) cb__curl.easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  else cb__curl.easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  cb__curl.multi_add_handle(t->multi, e);
}

void cb__runner_curl_tls(CURL *e, const char *url, int verify_tls, int http2) {
  cb__curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, verify_tls ? 1L : 0L);
  cb__curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, verify_tls ? 2L : 0L);
  if (http2)
    cb__curl.easy_setopt(e, CURLOPT_HTTP_VERSION, !strncmp(url, "https:", 6)
                                                      ? (long)CURL_HTTP_VERSION_2TLS
                                                      : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
}

static void cancel_req(cb__transport *ops, cb__runner_req *q) {
  curl_tx *t = (curl_tx *)ops;
  curl_req *cr = q->tx;
  if (!cr) return;
  cb__curl.multi_remove_handle(t->multi, cr->easy);
  cb__runner_slist_wipe_free(cr->headers);
  if (t->n_spare == t->cap_spare) {
    t->cap_spare = t->cap_spare ? t->cap_spare * 2 : 16;
    t->spare = cb_reallocarray(t->spare, t->cap_spare, sizeof *t->spare);
  }
  t->spare[t->n_spare++] = cr->easy;
  cb_free(cr);
  q->tx = NULL;
}

static void free_tx(cb__transport *ops) {
  curl_tx *t = (curl_tx *)ops;
  for (size_t i = 0; i < t->n_spare; i++) cb__curl.easy_cleanup(t->spare[i]);
  cb_free(t->spare);
  cb_free(t->src);
  cb__runner_slist_wipe_free(t->common);
  event_free(t->timer);
  cb__curl.multi_cleanup(t->multi);
  cb_free(t);
}

cb__transport *cb__transport_curl_new(const cb__transport_config *c, cb_error *err) {
  if (cb__curl_load(err) != CB_OK) return NULL;
  if (cb__curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    cb_error_set(err, CB_ERR_NETWORK, "libcurl failed to initialise");
    return NULL;
  }
  struct sockaddr_storage *addrs = NULL;
  size_t n_src = 0;
  if (c->p->source_addrs) {
    addrs = cb_calloc(CB_RUNNER_MAX_SOURCE_ADDRS, sizeof *addrs);
    if (cb_runner_source_addrs_parse(c->p->source_addrs, addrs, &n_src, err) != CB_OK) {
      cb_free(addrs);
      return NULL;
    }
  }
  curl_tx *t = cb_calloc(1, sizeof *t);
  t->ops = (cb__transport){.send = send_req, .cancel = cancel_req, .free = free_tx};
  t->n_src = n_src;
  t->src = n_src ? cb_calloc(n_src, sizeof *t->src) : NULL;
  for (size_t i = 0; i < n_src; i++) {
    const struct sockaddr_storage *a = &addrs[i];
    char ip[INET6_ADDRSTRLEN];
    inet_ntop(a->ss_family,
              a->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
                                      : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr,
              ip, sizeof ip);
    snprintf(t->src[i], sizeof t->src[i], "host!%s", ip);
  }
  cb_free(addrs);
  t->rn = c->rn;
  t->base = c->base;
  t->p = c->p;
  t->multi = cb__curl.multi_init();
  if (!t->multi) {
    fprintf(stderr, "calibench: out of memory (curl multi)\n");
    abort();
  }
  cb__curl.multi_setopt(t->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
  cb__curl.multi_setopt(t->multi, CURLMOPT_SOCKETDATA, t);
  cb__curl.multi_setopt(t->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
  cb__curl.multi_setopt(t->multi, CURLMOPT_TIMERDATA, t);
  cb__curl.multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
  t->timer = evtimer_new(t->base, on_timer, t);
  for (size_t i = 0; i < c->n_common; i++)
    t->common = cb__curl.slist_append(t->common, c->common[i]);
  t->common = cb__curl.slist_append(t->common, "Expect:"); /* no 100-continue round trip */
  return &t->ops;
}
