/*
 * test_sim_vrun_serve.c - `sim run` against `sim serve`: the same workload and seed,
 * once over HTTP to the simulator in real time (scaled) through the load generator,
 * once through the engine in virtual time, must give the same requests (prompt and
 * output token counts, request by request) and matching latency distributions (the
 * same engine). Distributions are compared with the two-sample Kolmogorov-Smirnov
 * statistic (p-value from the Kolmogorov distribution in stats) and by quantiles.
 *
 * The server runs on its own thread in real time (--time-scale 1: a faster scale turns
 * every millisecond a loaded host stalls into several simulated ones) and writes its
 * ground truth (--trace-out): the timings it served, from each request's arrival. Those
 * are compared tightly (p50 and p90 within 10%, KS p > 0.01; measured: TTFT p50 67.2 vs
 * 65.3 ms, TPOT 12.64 vs 12.63, E2E 1161 vs 1159, KS p 1.00 on a 2-vCPU VM at a load
 * average of 6; under ASan the server's parse of a 1,500-token prompt delays admission:
 * TTFT +7%); what the client measured over HTTP adds loopback, parsing and the host's
 * scheduling (~0.2 ms idle, a few ms on a loaded host, more under sanitizers) and is
 * compared loosely. Prompts are long (~1,500 tokens, TTFT ~65 ms) so that offset stays
 * a few percent. A host busy enough to serve the real-time steps late gets up to
 * HTTP_PASSES passes over HTTP; the last one must agree.
 */
#include <event2/event.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <jansson.h>

#include "calibench/runner.h"
#include "calibench/sim_server.h"
#include "calibench/stats.h"
#include "test_vrun_common.h"

#define TIME_SCALE 1.0

typedef struct server_thread {
  cb_sim_server_params p;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int ready, port;
  int stop_pipe[2];
} server_thread;

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopbreak(arg);
}

static void *serve(void *arg) {
  server_thread *s = arg;
  struct event_base *base = cb_sim_server_event_base_new();
  cb_sim_server *srv = NULL;
  cb_error err;
  cb_status st = cb_sim_server_start(base, &s->p, &srv, &err);
  pthread_mutex_lock(&s->lock);
  s->ready = st == CB_OK ? 1 : -1;
  if (st == CB_OK) s->port = cb_sim_server_port(srv);
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->lock);
  if (st == CB_OK) {
    struct event *stop = event_new(base, s->stop_pipe[0], EV_READ, on_stop, base);
    event_add(stop, NULL);
    event_base_dispatch(base);
    event_free(stop);
    cb_sim_server_free(srv);
  }
  event_base_free(base);
  return NULL;
}

/* Compare one metric: a from sim serve (already in simulated ns), b from sim run.
 * tol: the largest relative difference of p50 and p90; ks: check the KS p-value too.
 * Returns whether it agrees; with `enforce`, a disagreement fails the test. */
static int compare(const char *name, const char *side, double *a, size_t n1, double *b,
                   size_t n2, double tol, int ks, int enforce) {
  double d = tv_ks_d(a, n1, b, n2);
  double p = cb_stats_kolmogorov_sf(d * sqrt((double)n1 * (double)n2 / (double)(n1 + n2)));
  printf("%-5s n %5zu/%5zu  p50 %8.3f / %8.3f ms  p90 %8.3f / %8.3f ms  p99 %8.3f / %8.3f ms"
         "  KS D %.4f p %.3f   (sim serve, %s / sim run)\n",
         name, n1, n2, tv_q(a, n1, 0.5) / 1e6, tv_q(b, n2, 0.5) / 1e6, tv_q(a, n1, 0.9) / 1e6,
         tv_q(b, n2, 0.9) / 1e6, tv_q(a, n1, 0.99) / 1e6, tv_q(b, n2, 0.99) / 1e6, d, p, side);
  int p50 = fabs(tv_q(a, n1, 0.5) / tv_q(b, n2, 0.5) - 1) < tol;
  int p90 = fabs(tv_q(a, n1, 0.9) / tv_q(b, n2, 0.9) - 1) < tol;
  int ksok = !ks || p > 0.01;
  if (enforce) {
    assert_true(p50);
    assert_true(p90);
    assert_true(ksok);
  }
  return p50 && p90 && ksok;
}

/* sim serve's own ground truth (--trace-out): per request, from its admission to the
 * engine, in simulated ns. */
static double *trace_values(const char *path, tv_metric m, size_t *n) {
  json_error_t je;
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t cap = 1024;
  double *v = cb_calloc(cap, sizeof *v);
  *n = 0;
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, &je);
    assert_non_null(o);
    /* from admission, as the engine (and sim run) counts: parsing the body on a slow
     * host is not the engine's time */
    double arr = (double)json_integer_value(json_object_get(o, "admitted_ns"));
    assert_true(arr > 0);
    double first = (double)json_integer_value(json_object_get(o, "first_token_ns"));
    double end = (double)json_integer_value(json_object_get(o, "end_ns"));
    json_t *tok = json_object_get(o, "token_ns");
    size_t k = json_array_size(tok);
    if (*n + k + 1 > cap) {
      cap = 2 * (*n + k + 1);
      v = cb_reallocarray(v, cap, sizeof *v);
    }
    if (m == TV_TTFT) v[(*n)++] = (first - arr) / TIME_SCALE;
    else if (m == TV_E2E) v[(*n)++] = (end - arr) / TIME_SCALE;
    else if (m == TV_TPOT && k > 1) v[(*n)++] = (end - first) / (double)(k - 1) / TIME_SCALE;
    else if (m == TV_ITL)
      for (size_t i = 1; i < k; i++)
        v[(*n)++] = (double)(json_integer_value(json_array_get(tok, i)) -
                             json_integer_value(json_array_get(tok, i - 1))) / TIME_SCALE;
    json_decref(o);
  }
  free(line);
  fclose(f);
  return v;
}

/* One pass over HTTP: sim serve on its own thread in real time, the load generator
 * sending t's schedule; its records go to *http, its ground truth to `trace`. Returns the
 * p99 of the send lag (sent - scheduled, ns): how late the host ran the client's timers. */
static double run_http(tv_items *t, const cb_sim_params *engine, uint64_t seed,
                       const char *trace, cb_record_set *http) {
  server_thread s;
  memset(&s, 0, sizeof s);
  cb_sim_server_default_params(&s.p);
  s.p.port = 0;
  s.p.time_scale = TIME_SCALE;
  s.p.engine = *engine;
  s.p.seed = seed;
  s.p.quiet = 1;
  s.p.trace_out_path = trace;
  assert_int_equal(pipe(s.stop_pipe), 0);
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.cv, NULL);
  assert_int_equal(pthread_create(&s.thread, NULL, serve, &s), 0);
  pthread_mutex_lock(&s.lock);
  while (!s.ready) pthread_cond_wait(&s.cv, &s.lock);
  pthread_mutex_unlock(&s.lock);
  assert_int_equal(s.ready, 1);

  /* The schedule's times stretched by the time scale, and back afterwards. */
  for (size_t i = 0; i < t->sched.count; i++)
    t->sched.entries[i].offset_ns = (uint64_t)((double)t->sched.entries[i].offset_ns * TIME_SCALE);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", s.port);
  cb_runner_params rp;
  cb_runner_default_params(&rp);
  rp.url = url;
  rp.run_id = "test";
  cb_record_set_init(http);
  cb_runner_stats hs;
  cb_error err;
  cb_error_clear(&err);
  t->next = 0;
  assert_int_equal(cb_runner_run(&rp, tv_source, t, tv_collect, http, &hs, &err), CB_OK);
  char b = 1;
  assert_int_equal(write(s.stop_pipe[1], &b, 1), 1);
  pthread_join(s.thread, NULL);
  close(s.stop_pipe[0]);
  close(s.stop_pipe[1]);
  pthread_mutex_destroy(&s.lock);
  pthread_cond_destroy(&s.cv);
  for (size_t i = 0; i < t->sched.count; i++)
    t->sched.entries[i].offset_ns =
        (uint64_t)llround((double)t->sched.entries[i].offset_ns / TIME_SCALE);
  double *lag = cb_calloc(http->count + 1, sizeof *lag);
  for (size_t i = 0; i < http->count; i++)
    lag[i] = (double)(http->items[i].sent_ns - http->items[i].scheduled_ns);
  qsort(lag, http->count, sizeof *lag, tv_cmp_double);
  double lag_p99 = tv_q(lag, http->count, 0.99);
  printf("over HTTP: %zu records, %llu failed, client CPU %.2f s, send lag p50 %.3f ms, p99 "
         "%.3f ms\n", http->count, (unsigned long long)hs.failed, hs.cpu_s,
         tv_q(lag, http->count, 0.5) / 1e6, lag_p99 / 1e6);
  cb_free(lag);
  assert_int_equal(http->count, t->sched.count);
  assert_int_equal(hs.failed, 0);
  return lag_p99;
}

/* The passes over HTTP allowed: a real-time server on a host busy with other work
 * (2 shared cores running the test suite) serves its steps late, and queueing
 * amplifies that (measured at a load average of 6.5 under ASan: TTFT p50 +18% with a
 * send lag p99 of 85 ms, +5% with 27 ms). An engine that differs from sim run's differs
 * on every pass; a late host rarely on three in a row. A last pass that disagrees
 * fails the test when the host kept time (the client's send lag p99 within
 * HOST_LAG_LIMIT_NS: idle ~0.2 ms, loaded a few ms); on a host that did not, the
 * comparison is inconclusive and the test is skipped, saying so. */
#define HTTP_PASSES 3
#define HOST_LAG_LIMIT_NS 20e6

static void test_serve_and_run_agree(void **state) {
  (void)state;
  const uint64_t seed = 11;
  cb_sim_params engine;
  cb_sim_default_params(&engine);
  /* 200 requests at 10/s: ~20 s over HTTP. */
  tv_load l = {.seed = 21, .n = 200, .rate = 10, .in_mean = 1500, .in_sigma = 0.5, .out = 96};
  tv_items t;
  tv_items_make(&t, &l, 1, 0, (uint32_t)engine.model.vocab_size);

  /* In virtual time, with the schedule's own times: once (it is deterministic). */
  cb_record_set virt;
  cb_runner_stats vs;
  tv_run(&t, &engine, seed, 1, 1, 0, &virt, &vs);
  assert_int_equal(virt.count, l.n);

  char trace[] = "/tmp/cb_vrun_trace_XXXXXX";
  int tfd = mkstemp(trace);
  assert_true(tfd >= 0);
  close(tfd);
  for (int pass = 1;; pass++) {
    int last = pass == HTTP_PASSES, agree = 1;
    cb_record_set http;
    double lag_p99 = run_http(&t, &engine, seed, trace, &http);
    int overloaded = lag_p99 > HOST_LAG_LIMIT_NS, enforce = last && !overloaded;

    /* The same requests: what the server counted and generated, request by request (the
     * output seed follows arrival order, which the schedule fixes at this rate). */
    size_t same_prompt = 0, same_output = 0;
    for (size_t i = 0; i < l.n; i++) {
      const cb_record *x = tv_find(&http, i), *y = tv_find(&virt, i);
      assert_non_null(x);
      assert_non_null(y);
      same_prompt += x->prompt_tokens == y->prompt_tokens;
      same_output += x->output_tokens == y->output_tokens;
    }
    printf("prompt tokens equal for %zu/%zu requests, output tokens for %zu/%zu\n", same_prompt,
           l.n, same_output, l.n);
    assert_int_equal(same_prompt, l.n);
    /* Two requests sent within a millisecond or two of each other (~2% of Poisson gaps at
     * 10/s) can reach the server in the other order and swap their output seeds; a busy
     * host sends more of them out of order. */
    int outputs_agree = same_output >= l.n * 94 / 100;
    if (enforce) assert_true(outputs_agree);
    agree &= outputs_agree;

    /* 1. sim serve's own timings (its --trace-out, from arrival at the server): the same
     *    engine, so the same distributions up to timer lateness. 2. What the client saw
     *    over HTTP: plus loopback, parsing and the host's scheduling (a few ms on a loaded
     *    host, more under sanitizers), so medians within 25%. ITL gaps in virtual time are
     *    exact step durations (many ties), so only their quantiles are compared. */
    static const struct {
      const char *name;
      tv_metric m;
    } ms[] = {{"ttft", TV_TTFT}, {"tpot", TV_TPOT}, {"e2e", TV_E2E}, {"itl", TV_ITL}};
    for (size_t i = 0; i < 4; i++) {
      size_t n1, n2, n3;
      double *srv = trace_values(trace, ms[i].m, &n1);
      double *cli = tv_values(&http, ms[i].m, 1.0 / TIME_SCALE, &n2);
      double *vir = tv_values(&virt, ms[i].m, 1.0, &n3);
      /* ITL's p90 falls on the jump between decode-only steps and steps shared with a
       * prefill, where a few gaps on either side move it: 15%. */
      int itl = ms[i].m == TV_ITL;
      agree &=
          compare(ms[i].name, "its trace", srv, n1, vir, n3, itl ? 0.15 : 0.10, !itl, enforce);
      double *vir2 = tv_values(&virt, ms[i].m, 1.0, &n3);
      agree &= compare(ms[i].name, "client", cli, n2, vir2, n3, 0.25, 0, enforce);
      cb_free(srv);
      cb_free(cli);
      cb_free(vir);
      cb_free(vir2);
    }
    cb_record_set_free(&http);
    if (agree) break;
    if (last) {
      printf("inconclusive: the last pass disagrees on a host that ran the client's timers "
             "up to %.1f ms late (p99; limit %.0f ms)\n",
             lag_p99 / 1e6, HOST_LAG_LIMIT_NS / 1e6);
      unlink(trace);
      cb_record_set_free(&virt);
      tv_items_free(&t);
      skip();
    }
    printf("pass %d of %d: outputs or distributions differ beyond the tolerance (a busy host "
           "serves real-time steps late); again\n", pass, HTTP_PASSES);
  }
  unlink(trace);
  cb_record_set_free(&virt);
  tv_items_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_serve_and_run_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
