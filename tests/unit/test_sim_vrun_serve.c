/*
 * test_sim_vrun_serve.c - `sim run` against `sim serve`: the same engine in virtual
 * time and behind HTTP in real time.
 *
 * A real-time server on a loaded host takes requests in late, and queueing amplifies
 * that, so distributions from the schedule's own times agree only as well as the host
 * keeps time. The test therefore compares what does not depend on the host: sim serve
 * writes its ground truth (--trace-out) on the engine's own clock (admitted_ns, when
 * the engine took each request; due_ns, when its steps produced each token), and sim
 * run replays those admission times. The same engine given the same requests at the
 * same times must produce every token at the same time, to the nanosecond, and the
 * same prompt and output token counts, request by request: one pass, exact, on any
 * host. What the client measured over HTTP (loopback, parsing, the server's and the
 * client's own lateness on a busy host) is compared against the replay with bounds
 * measured on a loaded 2-core machine (below).
 */
#include <math.h>
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
#include "session/session_internal.h"
#include "test_vrun_common.h"

/* sim serve's ground truth (--trace-out), one request. */
typedef struct served {
  uint64_t index;         /* schedule index, from the request id "test-N" */
  uint64_t admitted_ns;   /* the engine's clock */
  uint64_t *due_ns;       /* [output_tokens], the engine's clock */
  int64_t prompt_tokens, output_tokens;
} served;

static served *read_trace(const char *path, size_t n) {
  served *v = cb_calloc(n, sizeof *v);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  json_error_t je;
  char *line = NULL;
  size_t lcap = 0, got = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, &je);
    if (!o) fail_msg("trace line %zu: %s", got + 1, je.text);
    assert_true(got < n);
    served *x = &v[got++];
    const char *rid = json_string_value(json_object_get(o, "request_id"));
    assert_non_null(rid);
    assert_int_equal(sscanf(rid, "test-%llu", (unsigned long long *)&x->index), 1);
    x->admitted_ns = (uint64_t)json_integer_value(json_object_get(o, "admitted_ns"));
    x->prompt_tokens = json_integer_value(json_object_get(o, "prompt_tokens"));
    x->output_tokens = json_integer_value(json_object_get(o, "output_tokens"));
    json_t *due = json_object_get(o, "due_ns");
    assert_int_equal(json_array_size(due), (size_t)x->output_tokens);
    x->due_ns = cb_calloc((size_t)x->output_tokens + 1, sizeof *x->due_ns);
    for (int64_t k = 0; k < x->output_tokens; k++)
      x->due_ns[k] = (uint64_t)json_integer_value(json_array_get(due, (size_t)k));
    json_decref(o);
  }
  free(line);
  fclose(f);
  assert_int_equal(got, n);
  return v;
}

static int by_admission(const void *a, const void *b) {
  const served *x = a, *y = b;
  return x->admitted_ns < y->admitted_ns ? -1 : x->admitted_ns > y->admitted_ns;
}

/* Reorder t's schedule and bodies into sim serve's admission order, each sent at its
 * admission time (engine clock, from the first admission). */
static void replay_admissions(tv_items *t, served *v, size_t n) {
  qsort(v, n, sizeof *v, by_admission);
  cb_schedule_entry *e = cb_calloc(n, sizeof *e);
  char **bodies = cb_calloc(n, sizeof *bodies);
  size_t *lens = cb_calloc(n, sizeof *lens);
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < n && t->sched.entries[j].index != v[i].index) j++;
    assert_true(j < n);
    e[i] = t->sched.entries[j];
    e[i].offset_ns = v[i].admitted_ns - v[0].admitted_ns;
    bodies[i] = t->bodies[j];
    lens[i] = t->lens[j];
  }
  memcpy(t->sched.entries, e, n * sizeof *e);
  memcpy(t->bodies, bodies, n * sizeof *bodies);
  memcpy(t->lens, lens, n * sizeof *lens);
  cb_free(e);
  cb_free(bodies);
  cb_free(lens);
}

/* sim serve on its own thread (the session's embedded simulator) in real time (time
 * scale 1: the trace's engine times are then whole wall nanoseconds), the load generator
 * sending t's schedule; its records go to *http, its ground truth to `trace`. Returns the p99 of the send lag (sent -
 * scheduled, ns): how late the host ran the client's timers. */
static double run_http(tv_items *t, const cb_sim_params *engine, uint64_t seed,
                       const char *trace, cb_record_set *http) {
  cb_sim_server_params p;
  cb_sim_server_default_params(&p);
  p.time_scale = 1;
  p.engine = *engine;
  p.seed = seed;
  p.trace_out_path = trace;
  cb__session_sim *sim = NULL;
  char base[64], url[128];
  cb_error err;
  cb_error_clear(&err);
  if (cb__session_sim_start(&p, &sim, base, sizeof base, &err) != CB_OK) fail_msg("sim: %s", err.msg);
  snprintf(url, sizeof url, "%s/chat/completions", base);
  cb_runner_params rp;
  cb_runner_default_params(&rp);
  rp.url = url;
  rp.run_id = "test";
  cb_record_set_init(http);
  cb_runner_stats hs;
  t->next = 0;
  assert_int_equal(cb_runner_run(&rp, tv_source, t, tv_collect, http, &hs, &err), CB_OK);
  cb__session_sim_stop(sim);
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

/* What a client over HTTP adds to the engine's times, per request: from its send to the
 * engine taking the request (loopback, parsing the ~1,500-token body), then the
 * server's and the client's lateness at the first token. BOUNDS_MS below. */
static double *overhead(const cb_record_set *http, const cb_record_set *replay,
                        const served *v, size_t n, int tpot) {
  double *d = cb_calloc(n, sizeof *d);
  for (size_t i = 0; i < n; i++) {
    const cb_record *h = tv_find(http, v[i].index), *r = tv_find(replay, v[i].index);
    if (!tpot) {
      d[i] = (double)(h->first_content_ns - h->sent_ns) - (double)(r->first_content_ns - r->sent_ns);
    } else if (h->output_tokens > 1) {
      double k = (double)(h->output_tokens - 1);
      d[i] = (double)(h->last_content_ns - h->first_content_ns) / k -
             (double)(r->last_content_ns - r->first_content_ns) / k;
    }
  }
  qsort(d, n, sizeof *d, tv_cmp_double);
  return d;
}

static void test_serve_and_run_agree(void **state) {
  (void)state;
  const uint64_t seed = 11;
  cb_sim_params engine;
  cb_sim_default_params(&engine);
  /* 200 requests at 10/s: ~20 s over HTTP; prompts of ~1,500 tokens, TTFT ~65 ms. */
  tv_load l = {.seed = 21, .n = 200, .rate = 10, .in_mean = 1500, .in_sigma = 0.5, .out = 96};
  tv_items t;
  tv_items_make(&t, &l, 1, 0, (uint32_t)engine.model.vocab_size);

  char trace[] = "/tmp/cb_vrun_trace_XXXXXX";
  int tfd = mkstemp(trace);
  assert_true(tfd >= 0);
  close(tfd);
  cb_record_set http;
  double lag_p99 = run_http(&t, &engine, seed, trace, &http);
  served *v = read_trace(trace, l.n);
  unlink(trace);

  /* sim run, replaying the admissions sim serve's engine saw. */
  replay_admissions(&t, v, l.n);
  cb_record_set replay;
  cb_runner_stats vs;
  tv_run(&t, &engine, seed, 1, 1, 0, &replay, &vs);
  assert_int_equal(replay.count, l.n);

  /* Exact: token counts, and every token's time from admission, request by request. */
  size_t tokens = 0;
  for (size_t i = 0; i < l.n; i++) {
    const cb_record *r = tv_find(&replay, v[i].index), *h = tv_find(&http, v[i].index);
    assert_non_null(r);
    assert_non_null(h);
    if (r->prompt_tokens != v[i].prompt_tokens || r->output_tokens != v[i].output_tokens)
      fail_msg("request %llu: sim run %lld prompt / %lld output tokens, sim serve %lld / %lld",
               (unsigned long long)v[i].index, (long long)r->prompt_tokens,
               (long long)r->output_tokens, (long long)v[i].prompt_tokens,
               (long long)v[i].output_tokens);
    assert_int_equal(h->output_tokens, v[i].output_tokens); /* and the client got them all */
    assert_int_equal(r->n_chunks, (size_t)r->output_tokens);
    for (size_t k = 0; k < r->n_chunks; k++) {
      uint64_t want = v[i].due_ns[k] - v[i].admitted_ns, got = r->chunk_ns[k] - r->sent_ns;
      if (got != want)
        fail_msg("request %llu token %zu: sim run at %llu ns from admission, sim serve's "
                 "engine at %llu ns", (unsigned long long)v[i].index, k,
                 (unsigned long long)got, (unsigned long long)want);
      tokens++;
    }
  }
  printf("sim run replaying sim serve's admissions: %zu requests, %zu tokens, every one at "
         "the same engine time (client send lag p99 %.2f ms)\n", l.n, tokens, lag_p99 / 1e6);

  /* What the client adds over HTTP: TTFT and TPOT, client minus replay. */
  double *ttft = overhead(&http, &replay, v, l.n, 0), *tpot = overhead(&http, &replay, v, l.n, 1);
  printf("client over HTTP minus the engine: TTFT min %.3f p50 %.3f p99 %.3f max %.3f ms; "
         "TPOT p50 %.4f p99 %.4f ms\n", ttft[0] / 1e6, tv_q(ttft, l.n, 0.5) / 1e6,
         tv_q(ttft, l.n, 0.99) / 1e6, ttft[l.n - 1] / 1e6, tv_q(tpot, l.n, 0.5) / 1e6,
         tv_q(tpot, l.n, 0.99) / 1e6);
  /* No client sees a first token before the engine made it (it sent before the
   * engine took the request; its receive stamps and the trace share CLOCK_MONOTONIC). */
  if (ttft[0] < -0.1e6) fail_msg("a first token received %.3f ms before it was due", -ttft[0] / 1e6);
  /* TPOT: the median request's decode is the engine's, whatever the host (a 12.6 ms
   * TPOT; measured |p50| <= 0.04 ms at a load average of 10 on 2 cores, 0.07 ms under
   * ASan at 14.5). */
  assert_true(fabs(tv_q(tpot, l.n, 0.5)) < 0.5e6);
  /* TTFT adds the send-to-admission time (loopback, parsing ~1,500 tokens) and the
   * host's lateness, which a loaded host makes large. Measured p50 on 2 cores (idle /
   * load average 10 / 15.5, with two busy loops and other builds): 0.44 / 6.8 / 11.7 ms;
   * under ASan at 14.5: 77 ms (p99 1.3 s: the host took requests in up to 0.6 s late). */
#ifdef __SANITIZE_ADDRESS__
  const double ttft_p50_bound = 250e6;
#else
  const double ttft_p50_bound = 40e6;
#endif
  assert_true(tv_q(ttft, l.n, 0.5) < ttft_p50_bound);
  cb_free(ttft);
  cb_free(tpot);

  for (size_t i = 0; i < l.n; i++) cb_free(v[i].due_ns);
  cb_free(v);
  cb_record_set_free(&http);
  cb_record_set_free(&replay);
  tv_items_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_serve_and_run_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
