/*
 * test_live_metrics.c - the run's live tally (session/live_metrics.c) and its
 * listener (session/metrics_listen.c): what each step and record adds, read back
 * through the exposition parser; a reader rendering while the runner's thread adds;
 * GET /metrics over loopback, other paths and methods, a port in use and addresses
 * refused.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/prom.h"
#include "session/session_internal.h"

typedef struct want {
  const char *name, *labels;
  double value;
  int hits;
} want;

static int find_cb(void *ctx, const cb_prom_sample *s) {
  want *w = ctx;
  if (s->name_len == strlen(w->name) && !memcmp(s->name, w->name, s->name_len) &&
      s->labels_len == strlen(w->labels) && !memcmp(s->labels, w->labels, s->labels_len)) {
    w->value = s->value;
    w->hits++;
  }
  return 0;
}

/* The one sample name{labels} of the text; fails when absent or repeated. */
static double sample(const char *text, const char *name, const char *labels) {
  want w = {.name = name, .labels = labels, .value = NAN};
  cb_error err;
  if (cb_prom_parse(text, strlen(text), find_cb, &w, &err) != CB_OK) fail_msg("%s", err.msg);
  if (w.hits != 1) fail_msg("%s{%s}: %d samples, want 1", name, labels, w.hits);
  return w.value;
}

static void expect(const char *text, const char *name, const char *labels, double v) {
  double got = sample(text, name, labels);
  if (!(got == v || (isnan(v) && isnan(got))))
    fail_msg("%s{%s} = %.17g, want %.17g\n%s", name, labels, got, v, text);
}

/* A streamed success: sent at `sent`, content chunks every `gap` ns from `ttft`. */
static void success(cb_record *r, const char *cls, uint64_t sent, uint64_t ttft, uint64_t gap,
                    size_t chunks, uint64_t *times) {
  cb_record_init(r);
  snprintf(r->class_name, sizeof r->class_name, "%s", cls);
  r->scheduled_ns = sent;
  r->sent_ns = sent;
  for (size_t i = 0; i < chunks; i++) times[i] = sent + ttft + i * gap;
  r->chunk_ns = times;
  r->n_chunks = chunks;
  r->first_content_ns = times[0];
  r->last_content_ns = times[chunks - 1];
  r->end_ns = times[chunks - 1] + 1000;
  r->prompt_tokens = 100;
  r->output_tokens = (int64_t)chunks;
}

static void test_tally(void **state) {
  (void)state;
  cb_slo slos[3];
  size_t n = 0;
  cb_error err;
  assert_int_equal(cb_slo_parse("ttft=100ms,e2e=1s,e2e=1s@p95", slos, &n, &err), CB_OK);
  cb__live_metrics *m = cb__live_metrics_new(slos, n);
  cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, "a", 0);
  cb__live_metrics_request(m, CB_RUNNER_REQUEST_SENT, "a", 2000000); /* 2 ms late */
  for (int i = 0; i < 4; i++) {
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, "b\"q", 0);
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_SENT, "b\"q", 0);
  }
  cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, "b\"q", 0); /* queued, not sent */
  uint64_t t1[4], t2[1], t3[3];
  cb_record r;
  success(&r, "b\"q", 1000, 50000000, 10000000, 4, t1); /* TTFT 50 ms, 3 gaps of 10 ms */
  cb__live_metrics_record(m, &r);
  success(&r, "b\"q", 1000, 200000000, 0, 1, t2); /* TTFT 200 ms: misses; 1 token: no TPOT */
  r.retries = 2;
  cb__live_metrics_record(m, &r);
  success(&r, "b\"q", 1000, 1000000, 1000000, 3, t3);
  r.warmup = 1; /* counted, not measured */
  cb__live_metrics_record(m, &r);
  cb_record_init(&r);
  snprintf(r.class_name, sizeof r.class_name, "b\"q");
  snprintf(r.error_class, sizeof r.error_class, "timeout");
  r.sent_ns = r.end_ns = 5;
  r.prompt_tokens = 7;
  cb__live_metrics_record(m, &r);

  cb_buf b;
  cb_buf_init(&b, 0);
  cb__live_metrics_render(m, &b);
  const char *T = b.data, *A = "class=\"a\"", *B = "class=\"b\\\"q\"";
  expect(T, "calibench_requests_scheduled_total", A, 1);
  expect(T, "calibench_requests_sent_total", A, 1);
  expect(T, "calibench_requests_in_flight", A, 1);
  expect(T, "calibench_requests_scheduled_total", B, 5);
  expect(T, "calibench_requests_sent_total", B, 4);
  expect(T, "calibench_requests_completed_total", B, 3);
  expect(T, "calibench_requests_failed_total", "class=\"b\\\"q\",error=\"timeout\"", 1);
  expect(T, "calibench_requests_in_flight", B, 0);
  expect(T, "calibench_request_retries_total", B, 2);
  expect(T, "calibench_prompt_tokens_total", B, 307);
  expect(T, "calibench_output_tokens_total", B, 8);
  expect(T, "calibench_send_lag_seconds_count", A, 1);
  expect(T, "calibench_send_lag_seconds_sum", A, 0.002);
  expect(T, "calibench_send_lag_seconds_bucket", "class=\"a\",le=\"0.0015\"", 0);
  expect(T, "calibench_send_lag_seconds_bucket", "class=\"a\",le=\"0.002\"", 1);
  /* measured successes only: two (the warm-up and the failure left out) */
  expect(T, "calibench_time_to_first_token_seconds_count", B, 2);
  expect(T, "calibench_time_to_first_token_seconds_bucket", "class=\"b\\\"q\",le=\"0.06\"", 1);
  expect(T, "calibench_time_to_first_token_seconds_bucket", "class=\"b\\\"q\",le=\"0.25\"", 2);
  expect(T, "calibench_time_per_output_token_seconds_count", B, 1);
  expect(T, "calibench_inter_token_latency_seconds_count", B, 3);
  expect(T, "calibench_inter_token_latency_seconds_bucket", "class=\"b\\\"q\",le=\"0.01\"", 3);
  expect(T, "calibench_e2e_request_latency_seconds_count", B, 2);
  expect(T, "calibench_e2e_request_latency_seconds_count", A, 0);
  /* SLOs over the 3 measured requests (the failure meets none) */
  expect(T, "calibench_slo_requests_total", "slo=\"ttft<=0.1s\"", 3);
  expect(T, "calibench_slo_met_total", "slo=\"ttft<=0.1s\"", 1);
  expect(T, "calibench_slo_met_total", "slo=\"e2e<=1s\"", 2);
  expect(T, "calibench_slo_met_total", "slo=\"all\"", 1);
  expect(T, "calibench_slo_attainment", "slo=\"e2e<=1s\"", 2.0 / 3);
  expect(T, "calibench_slo_met_total", "slo=\"e2e<=1s@p95\"", 2);
  expect(T, "calibench_run_finished", "", 0);
  cb__live_totals t;
  cb__live_metrics_totals(m, &t);
  assert_int_equal(t.sent, 5);
  assert_int_equal(t.ok, 3);
  assert_int_equal(t.failed, 1);
  assert_int_equal(t.ttft_count, 2);
  assert_true(fabs(t.ttft_sum_s - 0.25) < 1e-12);
  assert_int_equal(t.judged, 3);
  assert_int_equal(t.met[1], 2);
  assert_string_equal(t.slo_names[0], "ttft<=0.1s");
  cb__live_metrics_finish(m);
  cb_buf_reset(&b);
  cb__live_metrics_render(m, &b);
  expect(b.data, "calibench_run_finished", "", 1);
  cb_buf_free(&b);
  cb__live_metrics_free(m);
}

/* A reader renders while a writer adds: every scrape is one consistent state
 * (in flight never below 0, counts never falling back), and the last is exact. The
 * writer waits for a scrape every 1,000 requests, so the two interleave however the
 * threads are scheduled. */
#define N_WRITES 20000
static atomic_int scrapes_done;
static void *writer(void *arg) {
  cb__live_metrics *m = arg;
  uint64_t times[2];
  for (int i = 0; i < N_WRITES; i++) {
    while (atomic_load(&scrapes_done) < i / 1000) sched_yield();
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, "", 0);
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_SENT, "", (uint64_t)i);
    cb_record r;
    success(&r, "", 1000, 1000, 1000, 2, times);
    cb__live_metrics_record(m, &r);
  }
  return NULL;
}

static void test_concurrent_reader(void **state) {
  (void)state;
  cb__live_metrics *m = cb__live_metrics_new(NULL, 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, writer, m), 0);
  double last_done = 0;
  cb_buf b;
  cb_buf_init(&b, 0);
  int scrapes = 0;
  for (; last_done < N_WRITES; scrapes++) {
    cb_buf_reset(&b);
    cb__live_metrics_render(m, &b);
    atomic_fetch_add(&scrapes_done, 1);
    if (!strstr(b.data, "calibench_requests_sent_total{")) continue; /* nothing yet */
    double sent = sample(b.data, "calibench_requests_sent_total", "class=\"\"");
    double done = sample(b.data, "calibench_requests_completed_total", "class=\"\"");
    double in_flight = sample(b.data, "calibench_requests_in_flight", "class=\"\"");
    double itl = sample(b.data, "calibench_inter_token_latency_seconds_count", "class=\"\"");
    assert_true(done >= last_done);
    assert_true(in_flight == sent - done && in_flight <= 1);
    assert_true(itl == done);
    last_done = done;
  }
  pthread_join(th, NULL);
  expect(b.data, "calibench_send_lag_seconds_count", "class=\"\"", N_WRITES);
  cb_buf_free(&b);
  cb__live_metrics_free(m);
  assert_true(scrapes >= N_WRITES / 1000);
}

/* GET PATH (or another method) on 127.0.0.1:port; the whole answer into out. */
static void http(uint16_t port, const char *method, const char *path, cb_buf *out) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  char req[256];
  int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n",
                   method, path, strcmp(method, "POST") ? "" : "Content-Length: 0\r\n");
  assert_int_equal(write(fd, req, (size_t)n), n);
  char buf[4096];
  ssize_t got;
  cb_buf_reset(out);
  while ((got = read(fd, buf, sizeof buf)) > 0) cb_buf_append(out, buf, (size_t)got);
  close(fd);
}

static void test_listener(void **state) {
  (void)state;
  cb__live_metrics *m = cb__live_metrics_new(NULL, 0);
  cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, "x", 0);
  cb__metrics_listener *l = NULL;
  char url[128];
  cb_error err;
  assert_int_equal(cb__metrics_listener_start("127.0.0.1:0", m, &l, url, sizeof url, &err), CB_OK);
  unsigned port = 0;
  assert_int_equal(sscanf(url, "http://127.0.0.1:%u/metrics", &port), 1);
  cb_buf b;
  cb_buf_init(&b, 0);
  http((uint16_t)port, "GET", "/metrics", &b);
  assert_non_null(strstr(b.data, "HTTP/1.1 200 "));
  assert_non_null(strstr(b.data, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  assert_non_null(strstr(b.data, "\r\n\r\n# HELP calibench_requests_scheduled_total "));
  assert_non_null(strstr(b.data, "calibench_requests_scheduled_total{class=\"x\"} 1\n"));
  http((uint16_t)port, "GET", "/metrics?x=1", &b); /* a query is fine */
  assert_non_null(strstr(b.data, "HTTP/1.1 200 "));
  http((uint16_t)port, "GET", "/", &b);
  assert_non_null(strstr(b.data, "HTTP/1.1 404 "));
  http((uint16_t)port, "POST", "/metrics", &b);
  assert_non_null(strstr(b.data, "HTTP/1.1 405 "));
  assert_non_null(strstr(b.data, "Allow: GET, HEAD\r\n"));
  /* the same port again: in use */
  char spec[64];
  snprintf(spec, sizeof spec, "127.0.0.1:%u", port);
  cb__metrics_listener *again = NULL;
  assert_int_equal(cb__metrics_listener_start(spec, m, &again, url, sizeof url, &err), CB_ERR_NETWORK);
  assert_null(again);
  if (!strstr(err.msg, "in use")) fail_msg("port in use: %s", err.msg);
  cb__metrics_listener_stop(l);
  cb__metrics_listener_stop(NULL);
  cb_buf_free(&b);
  cb__live_metrics_free(m);
}

static void test_listen_parse(void **state) {
  (void)state;
  char host[64];
  uint16_t port;
  cb_error err;
  assert_int_equal(cb_session_listen_parse("127.0.0.1:9464", host, &port, &err), CB_OK);
  assert_string_equal(host, "127.0.0.1");
  assert_int_equal(port, 9464);
  assert_int_equal(cb_session_listen_parse("[::1]:0", host, &port, &err), CB_OK);
  assert_string_equal(host, "::1");
  assert_int_equal(port, 0);
  static const char *const bad[] = {"localhost:9464", "127.0.0.1", "127.0.0.1:",
                                    "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
                                    "::1:80", "[::1]", "[127.0.0.1]:80", "1.2.3:80", ":80", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error_clear(&err);
    if (cb_session_listen_parse(bad[i], host, &port, &err) == CB_OK) fail_msg("'%s' accepted", bad[i]);
    if (!strstr(err.msg, "expected ADDR:PORT") || !strstr(err.msg, bad[i]))
      fail_msg("'%s': %s", bad[i], err.msg);
  }
  assert_int_equal(cb_session_listen_parse(NULL, host, &port, &err), CB_ERR_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tally),
      cmocka_unit_test(test_concurrent_reader),
      cmocka_unit_test(test_listener),
      cmocka_unit_test(test_listen_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
