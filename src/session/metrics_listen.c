/*
 * metrics_listen.c - `run --metrics-listen ADDR:PORT`: the run's tally
 * (live_metrics.c) served as Prometheus text at GET /metrics, by the simulator's
 * HTTP/1.1 server (sim/http.h: its parser, limits and timeouts) on a thread and an
 * event loop of its own, so a scrape never runs on the runner's loop. The server is
 * bound on the caller's thread (a bad or busy address fails cb_session_open before
 * anything is sent) and stopped through a pipe, as the embedded simulator is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "session_internal.h"
#include "sim/http.h"

struct cb__metrics_listener {
  cb__live_metrics *tally;
  struct event_base *base;
  cb__sim_http_server *server;
  struct event *stop_event;
  int stop_pipe[2];
  pthread_t thread;
};

cb_status cb_session_listen_parse(const char *spec, char host[64], uint16_t *port,
                                  cb_error *err) {
  const char *colon = spec ? strrchr(spec, ':') : NULL;
  const char *addr = spec;
  size_t addr_len = colon ? (size_t)(colon - spec) : 0;
  if (addr_len >= 2 && addr[0] == '[' && addr[addr_len - 1] == ']') { /* [IPv6]:PORT */
    addr++;
    addr_len -= 2;
  } else if (colon && memchr(spec, ':', addr_len)) {
    addr_len = 0; /* an IPv6 address without brackets: its port is ambiguous */
  }
  unsigned char bin[16];
  char *end = NULL;
  long p = colon && colon[1] >= '0' && colon[1] <= '9' ? strtol(colon + 1, &end, 10) : -1;
  int ok = addr_len > 0 && addr_len < 64 && p >= 0 && p <= 65535 && end && !*end;
  if (ok) {
    memcpy(host, addr, addr_len);
    host[addr_len] = '\0';
    ok = inet_pton(addr == spec ? AF_INET : AF_INET6, host, bin) == 1;
  }
  if (!ok)
    return cb_error_set(err, CB_ERR_INVALID,
                        "expected ADDR:PORT with a numeric address (127.0.0.1:9464, "
                        "[::1]:9464) and a port 0 to 65535 (0: any free one), got '%s'",
                        spec ? spec : "");
  *port = (uint16_t)p;
  return CB_OK;
}

static const cb__sim_http_field TEXT[] = {{"Content-Type", "text/plain; charset=utf-8"}};

static void on_request(void *ctx, cb__sim_http_exchange *ex) {
  cb__metrics_listener *l = ctx;
  const cb__sim_http_request *rq = cb__sim_http_request_of(ex);
  int get = !strcmp(rq->method, "GET") || !strcmp(rq->method, "HEAD");
  if (rq->path_len != 8 || memcmp(rq->target, "/metrics", 8)) {
    static const char body[] = "not found: the run's metrics are at /metrics\n";
    cb__sim_http_respond(ex, 404, TEXT, 1, body, sizeof body - 1);
    return;
  }
  if (!get) {
    static const char body[] = "method not allowed: GET /metrics\n";
    const cb__sim_http_field fields[] = {TEXT[0], {"Allow", "GET, HEAD"}};
    cb__sim_http_respond(ex, 405, fields, 2, body, sizeof body - 1);
    return;
  }
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__live_metrics_render(l->tally, &b); /* the tally is copied under its lock, then rendered */
  static const cb__sim_http_field fields[] = {
      {"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}};
  cb__sim_http_respond(ex, 200, fields, 1, b.data, b.len);
  cb_buf_free(&b);
}

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopbreak(arg);
}

static void *serve(void *arg) {
  cb__metrics_listener *l = arg;
  event_base_dispatch(l->base);
  return NULL;
}

static void release(cb__metrics_listener *l) {
  cb__sim_http_server_free(l->server);
  if (l->stop_event) event_free(l->stop_event);
  if (l->base) event_base_free(l->base);
  if (l->stop_pipe[0] >= 0) close(l->stop_pipe[0]);
  if (l->stop_pipe[1] >= 0) close(l->stop_pipe[1]);
  cb_free(l);
}

cb_status cb__metrics_listener_start(const char *spec, cb__live_metrics *m,
                                     cb__metrics_listener **out, char *url, size_t url_size,
                                     cb_error *err) {
  *out = NULL;
  char host[64];
  uint16_t port;
  if (cb_session_listen_parse(spec, host, &port, err) != CB_OK) return CB_ERR_INVALID;
  cb__metrics_listener *l = cb_calloc(1, sizeof *l);
  l->tally = m;
  l->stop_pipe[0] = l->stop_pipe[1] = -1;
  if (pipe(l->stop_pipe)) {
    int e = errno;
    release(l);
    return cb_error_set(err, CB_ERR_IO, "pipe: %s", strerror(e));
  }
  l->base = event_base_new();
  if (!l->base) {
    release(l);
    return cb_error_set(err, CB_ERR_IO, "cannot create the metrics listener's event loop");
  }
  cb__sim_http_config hc;
  cb__sim_http_default_config(&hc);
  hc.host = host;
  hc.port = port;
  hc.backlog = 64;
  hc.limits.max_body_bytes = 4096; /* a scrape sends none */
  cb_status st = cb__sim_http_server_start(l->base, &hc, on_request, l, &l->server, err);
  if (st != CB_OK) {
    release(l);
    return st;
  }
  l->stop_event = event_new(l->base, l->stop_pipe[0], EV_READ, on_stop, l->base);
  event_add(l->stop_event, NULL);
  snprintf(url, url_size, strchr(host, ':') ? "http://[%s]:%u/metrics" : "http://%s:%u/metrics",
           host, (unsigned)cb__sim_http_server_port(l->server));
  if (pthread_create(&l->thread, NULL, serve, l)) {
    release(l);
    return cb_error_set(err, CB_ERR_IO, "cannot start the metrics listener's thread");
  }
  *out = l;
  return CB_OK;
}

void cb__metrics_listener_stop(cb__metrics_listener *l) {
  if (!l) return;
  char b = 1;
  if (write(l->stop_pipe[1], &b, 1) != 1) perror("calibench: stopping the metrics listener");
  pthread_join(l->thread, NULL);
  release(l);
}
