/*
 * bench_sim_client.c - load driver for the `sim serve` benchmark (bench/sim_serve.sh).
 *
 * Opens N keep-alive connections to a running `calibench sim serve`, keeps one
 * streaming completion in flight on each (a new one as soon as the previous ends),
 * and counts the SSE events it receives. Connections are opened over --ramp-ms so
 * the server's engines do not all step in phase. After --duration-s it prints one
 * line of key=value figures: streams, requests completed, tokens received, tokens/s,
 * and the time window measured (after --warmup-s).
 *
 * usage: bench_sim_client PORT STREAMS DURATION_S WARMUP_S RAMP_MS MAX_TOKENS
 */
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"

typedef struct conn {
  struct bufferevent *bev;
  struct client *cl;
  char prefix[12]; /* first bytes of the current line (lines span reads) */
  int nprefix;
} conn;

typedef struct client {
  struct event_base *base;
  struct sockaddr_in addr;
  int streams, max_tokens;
  uint64_t measure_from_ns, measure_to_ns;
  uint64_t tokens, requests, tokens_measured, requests_measured, errors;
  char request[512];
  size_t request_len;
  conn *conns;
} client;

static void send_request(conn *c) {
  bufferevent_write(c->bev, c->cl->request, c->cl->request_len);
}

/* Count lines starting "data: {" (tokens, plus one finish chunk per request) and
 * end each response at "data: [DONE]". Each SSE event arrives inside one HTTP chunk,
 * so chunk-size lines never split an event line. */
static void end_of_line(conn *c, int measuring, uint64_t now) {
  client *cl = c->cl;
  if (c->nprefix >= 7 && !memcmp(c->prefix, "data: {", 7)) {
    cl->tokens++;
    cl->tokens_measured += measuring;
  } else if (c->nprefix >= 12 && !memcmp(c->prefix, "data: [DONE]", 12)) {
    cl->requests++;
    cl->requests_measured += measuring;
    cl->tokens--; /* the finish chunk is not a token */
    if (measuring && cl->tokens_measured) cl->tokens_measured--;
    if (now < cl->measure_to_ns) send_request(c);
  }
  c->nprefix = 0;
}

static void on_read(struct bufferevent *bev, void *arg) {
  conn *c = arg;
  client *cl = c->cl;
  struct evbuffer *in = bufferevent_get_input(bev);
  size_t len = evbuffer_get_length(in);
  const char *p = (const char *)evbuffer_pullup(in, -1);
  uint64_t now = cb_clock_now_ns();
  int measuring = now >= cl->measure_from_ns && now < cl->measure_to_ns;
  for (size_t i = 0; i < len; i++) {
    if (p[i] == '\n') end_of_line(c, measuring, now);
    else if (c->nprefix < (int)sizeof c->prefix) c->prefix[c->nprefix++] = p[i];
  }
  evbuffer_drain(in, len);
}

static void on_event(struct bufferevent *bev, short what, void *arg) {
  conn *c = arg;
  if (what & BEV_EVENT_CONNECTED) {
    int one = 1;
    setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    send_request(c);
    return;
  }
  if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
    c->cl->errors++;
    bufferevent_free(bev);
    c->bev = NULL;
  }
}

static void open_conn(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conn *c = arg;
  c->bev = bufferevent_socket_new(c->cl->base, -1, BEV_OPT_CLOSE_ON_FREE);
  bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
  bufferevent_enable(c->bev, EV_READ | EV_WRITE);
  if (bufferevent_socket_connect(c->bev, (struct sockaddr *)&c->cl->addr, sizeof c->cl->addr))
    c->cl->errors++;
}

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopbreak(arg);
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s PORT STREAMS DURATION_S WARMUP_S RAMP_MS MAX_TOKENS\n", argv[0]);
    return 2;
  }
  client cl = {0};
  int port = atoi(argv[1]);
  cl.streams = atoi(argv[2]);
  double duration = atof(argv[3]), warmup = atof(argv[4]);
  int ramp_ms = atoi(argv[5]);
  cl.max_tokens = atoi(argv[6]);
  cl.base = event_base_new();
  cl.addr.sin_family = AF_INET;
  cl.addr.sin_port = htons((uint16_t)port);
  cl.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  char body[256];
  int blen = snprintf(body, sizeof body,
                      "{\"prompt\":\"The benchmark prompt is short.\",\"max_tokens\":%d,"
                      "\"ignore_eos\":true,\"stream\":true}",
                      cl.max_tokens);
  cl.request_len = (size_t)snprintf(cl.request, sizeof cl.request,
                                    "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                                    blen, body);
  uint64_t start = cb_clock_now_ns();
  cl.measure_from_ns = start + (uint64_t)(warmup * 1e9);
  cl.measure_to_ns = start + (uint64_t)(duration * 1e9);
  cl.conns = cb_calloc((size_t)cl.streams, sizeof *cl.conns);
  struct event **openers = cb_calloc((size_t)cl.streams, sizeof *openers);
  for (int i = 0; i < cl.streams; i++) {
    cl.conns[i].cl = &cl;
    struct timeval tv = {0, (suseconds_t)((int64_t)ramp_ms * 1000 * i / cl.streams)};
    tv.tv_sec = tv.tv_usec / 1000000;
    tv.tv_usec %= 1000000;
    openers[i] = evtimer_new(cl.base, open_conn, &cl.conns[i]);
    evtimer_add(openers[i], &tv);
  }
  struct timeval stop = {(time_t)duration, (suseconds_t)((duration - (time_t)duration) * 1e6)};
  struct event *stopper = evtimer_new(cl.base, on_stop, cl.base);
  evtimer_add(stopper, &stop);
  uint64_t cpu0 = cb_clock_cpu_ns();
  event_base_dispatch(cl.base);
  uint64_t cpu1 = cb_clock_cpu_ns();
  double window = duration - warmup;
  printf("streams=%d requests=%llu tokens=%llu window_s=%.1f tokens_per_s=%.0f "
         "requests_per_s=%.1f errors=%llu client_cpu_s=%.2f\n",
         cl.streams, (unsigned long long)cl.requests_measured,
         (unsigned long long)cl.tokens_measured, window, (double)cl.tokens_measured / window,
         (double)cl.requests_measured / window, (unsigned long long)cl.errors,
         (double)(cpu1 - cpu0) / 1e9);
  for (int i = 0; i < cl.streams; i++) {
    if (cl.conns[i].bev) bufferevent_free(cl.conns[i].bev);
    event_free(openers[i]);
  }
  event_free(stopper);
  cb_free(openers);
  cb_free(cl.conns);
  event_base_free(cl.base);
  return 0;
}
