/*
 * test_results.c - records (JSON round trip, loading errors, torn lines), the
 * summary on hand-built runs with known answers, SLO parsing and the binomial
 * verdicts against SciPy.
 */
#include <jansson.h>
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

#include "calibench/alloc.h"
#include "calibench/results.h"
#include "calibench/rng.h"
#include "test_file.h"

#define MS 1000000ull

static void close_to(const char *what, double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want) + 1e-300))
    fail_msg("%s: got %.17g, want %.17g (rel %g)", what, got, want, rel);
}

/* An ITL percentile, from the histogram (docs/results.md): never below the exact
 * value, less than 2^-10 of it above. */
static void hist_close_to(const char *what, double got, double want) {
  if (!(got >= want && got < want * (1 + 1.0 / 1024)))
    fail_msg("%s: got %.17g, want [%.17g, %.17g)", what, got, want, want * (1 + 1.0 / 1024));
}

/* A successful streamed request: sent at `sent`, content chunks at the given
 * offsets (ms after sent), one token each unless tokens is given. */
static cb_record ok_record(uint64_t index, uint64_t sent, const double *chunk_ms, size_t n,
                           const uint32_t *tokens) {
  cb_record r;
  cb_record_init(&r);
  r.index = index;
  snprintf(r.request_id, sizeof r.request_id, "run-%llu", (unsigned long long)index);
  r.scheduled_ns = sent;
  r.sent_ns = sent;
  r.chunk_ns = cb_calloc(n, sizeof *r.chunk_ns);
  r.chunk_tokens = cb_calloc(n, sizeof *r.chunk_tokens);
  r.n_chunks = n;
  int64_t out = 0;
  for (size_t i = 0; i < n; i++) {
    r.chunk_ns[i] = sent + (uint64_t)(chunk_ms[i] * MS);
    r.chunk_tokens[i] = tokens ? tokens[i] : 1;
    out += r.chunk_tokens[i];
  }
  r.first_byte_ns = r.first_chunk_ns = r.first_choices_ns = r.first_content_ns = r.chunk_ns[0];
  r.last_content_ns = r.end_ns = r.chunk_ns[n - 1];
  r.output_tokens = out;
  r.output_source = CB_TOKENS_USAGE;
  r.prompt_tokens = 100;
  r.prompt_source = CB_TOKENS_USAGE;
  r.http_status = 200;
  snprintf(r.finish_reason, sizeof r.finish_reason, "length");
  return r;
}

static cb_record failed_record(uint64_t index, uint64_t sent, const char *cls) {
  cb_record r;
  cb_record_init(&r);
  r.index = index;
  r.scheduled_ns = r.sent_ns = sent;
  r.end_ns = sent + 5 * MS;
  snprintf(r.error_class, sizeof r.error_class, "%s", cls);
  snprintf(r.error_message, sizeof r.error_message, "boom \"%s\"", cls);
  return r;
}

/* A new temporary file from the template `path` (rewritten with its name), open. */
static int make_temp(char *path) {
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  return fd;
}

/* Loads path into set (initialised here), which must succeed; the torn lines it
 * skipped. */
static size_t load_ok(const char *path, cb_record_set *set) {
  cb_record_set_init(set);
  size_t torn;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_record_set_load(set, path, &torn, &err), CB_OK);
  return torn;
}

/* summary.json's summary object of s (the caller frees it). */
static cb_buf summary_json(const cb_summary *s) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_summary_write_json(s, &b);
  return b;
}

/* The vLLM benchmark JSON of set and s, parsed. */
static json_t *vllm_json(const cb_record_set *set, const cb_summary *s,
                         const cb_vllm_export_params *vp) {
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_results_write_vllm_json(set, s, vp, &out);
  json_error_t je;
  json_t *o = json_loads(out.data, 0, &je);
  if (!o) fail_msg("not JSON: %s", je.text);
  cb_buf_free(&out);
  return o;
}

static void test_record_round_trip(void **state) {
  (void)state;
  char path[] = "/tmp/cb_records_XXXXXX";
  int fd = make_temp(path);
  double chunks[] = {100, 110, 130};
  uint32_t toks[] = {1, 3, 2};
  cb_record a = ok_record(7, 5 * MS, chunks, 3, toks);
  snprintf(a.class_name, sizeof a.class_name, "tenant \"A\"");
  snprintf(a.server_request_id, sizeof a.server_request_id, "srv-7");
  a.output_text = cb_strdup("<script>alert(1)</script>\n");
  a.tool_calls = cb_strdup("[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                           "\"arguments\":\"{\\\"a\\\":1}\"}}]");
  a.cached_tokens = 64;
  a.warmup = 1;
  a.has_target_rate = 1;
  a.target_rate = 12.375; /* a ramped run's offered rate at the send */
  a.has_session = 1;      /* a live session's turn */
  a.session = 3;
  a.turn = 2;
  cb_record b = failed_record(8, 9 * MS, "http_status");
  b.http_status = 429;
  b.has_target_rate = 1; /* a linear ramp from 0 offers 0 at its start: recorded as 0 */
  b.target_rate = 0;
  b.retries = 2; /* each earlier attempt's outcome is kept */
  b.n_attempts = 2;
  b.attempts = cb_reallocarray(NULL, 2, sizeof *b.attempts);
  b.attempts[0] = (cb_record_attempt){.http_status = 503, .error_class = "http_status", .wait_ns = 187500000};
  b.attempts[1] = (cb_record_attempt){.http_status = 0, .error_class = "connect", .wait_ns = 3000000000};
  cb_buf buf;
  cb_buf_init(&buf, 0);
  cb_record_write_json(&a, &buf);
  cb_record_write_json(&b, &buf);
  assert_non_null(strstr(buf.data, ",\"sent_ns\":5000000,"));
  assert_non_null(strstr(buf.data, ",\"target_rate\":12.375,\"session\":3,\"turn\":2,"));
  assert_non_null(strstr(buf.data, ",\"target_rate\":0,"));
  assert_non_null(strstr(buf.data, ",\"chunk_ns\":[100000000,110000000,130000000],"));
  {/* the extremes of the hand-written decimal encoder */
    cb_record e = failed_record(0, 0, "connect");
    e.scheduled_ns = UINT64_MAX;
    cb_buf one;
    cb_buf_init(&one, 0);
    cb_record_write_json(&e, &one);
    assert_non_null(strstr(one.data, "{\"index\":0,"));
    assert_non_null(strstr(one.data, ",\"scheduled_ns\":18446744073709551615,\"sent_ns\":0,"));
    assert_null(strstr(one.data, "target_rate")); /* not ramped: no field */
    assert_null(strstr(one.data, "\"session\"")); /* no session: no field */
    cb_buf_free(&one);
    cb_record_free(&e);
  }
  cb_buf_append_str(&buf, "{\"index\": 9, \"sent_"); /* a torn last line */
  assert_int_equal(write(fd, buf.data, buf.len), (ssize_t)buf.len);
  close(fd);

  cb_record_set set;
  assert_int_equal(load_ok(path, &set), 1);
  assert_int_equal(set.count, 2);
  const cb_record *x = &set.items[0];
  assert_int_equal(x->index, 7);
  assert_string_equal(x->class_name, "tenant \"A\"");
  assert_string_equal(x->server_request_id, "srv-7");
  assert_true(x->warmup);
  assert_int_equal(x->n_chunks, 3);
  assert_int_equal(x->chunk_ns[2], a.chunk_ns[2]);
  assert_int_equal(x->chunk_tokens[1], 3);
  assert_int_equal(x->output_tokens, 6);
  assert_int_equal(x->output_source, CB_TOKENS_USAGE);
  assert_int_equal(x->cached_tokens, 64);
  assert_true(x->has_target_rate);
  assert_float_equal(x->target_rate, 12.375, 0);
  assert_true(x->has_session);
  assert_int_equal(x->session, 3);
  assert_int_equal(x->turn, 2);
  assert_string_equal(x->output_text, a.output_text);
  assert_string_equal(x->tool_calls, a.tool_calls); /* the model's tool calls, as sent */
  assert_true(cb_record_ok(x));
  const cb_record *y = &set.items[1];
  assert_false(cb_record_ok(y));
  assert_string_equal(y->error_class, "http_status");
  assert_string_equal(y->error_message, "boom \"http_status\"");
  assert_int_equal(y->http_status, 429);
  assert_int_equal(y->output_tokens, -1);
  assert_true(y->has_target_rate);
  assert_float_equal(y->target_rate, 0, 0);
  assert_false(y->has_session);
  assert_int_equal(y->retries, 2);
  assert_int_equal(y->n_attempts, 2);
  assert_int_equal(y->attempts[0].http_status, 503);
  assert_int_equal(y->attempts[0].wait_ns, 187500000);
  assert_string_equal(y->attempts[1].error_class, "connect");
  assert_int_equal(y->attempts[1].wait_ns, UINT64_C(3000000000));
  assert_int_equal(x->n_attempts, 0);
  assert_null(strstr(buf.data, "\"attempts\":[]")); /* written only for retried requests */
  assert_non_null(strstr(buf.data, "\"attempts\":[{\"http_status\":503,\"error\":\"http_status\",\"wait_ms\":187.500}"));
  cb_record_set_free(&set);

  /* A bad field in the middle is an error naming the line and field. */
  write_file(path, "{\"index\":1,\"sent_ns\":5}\n{\"index\":2,\"sent_ns\":5,\"output_tokens\":\"x\"}\n");
  cb_record_set_init(&set);
  size_t torn;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, ":2: field 'output_tokens'"));
  cb_record_set_free(&set);
  write_file(path, "{\"index\":1,\"sent_ns\":5,\"target_rate\":-3}\n");
  cb_record_set_init(&set);
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, ":1: field 'target_rate': expected a number"));
  cb_record_set_free(&set);
  /* a live session's turn: session and turn go together */
  write_file(path, "{\"index\":1,\"sent_ns\":5,\"session\":2}\n");
  cb_record_set_init(&set);
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, ":1: field 'turn': expected the turn's index in its session"));
  cb_record_set_free(&set);
  write_file(path, "{\"index\":1,\"sent_ns\":5,\"session\":-2,\"turn\":0}\n");
  cb_record_set_init(&set);
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, ":1: field 'session': expected a non-negative integer"));
  cb_record_set_free(&set);
  write_file(path, "{\"index\":1,\"sent_ns\":5}\nnot json\n{\"index\":2,\"sent_ns\":5}\n");
  cb_record_set_init(&set);
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, ":2:"));
  cb_record_set_free(&set);

  cb_record_free(&a);
  cb_record_free(&b);
  cb_buf_free(&buf);
  unlink(path);
}

/* Five measured requests one second apart plus one warm-up; one of the five fails. */
static void build_run(cb_record_set *set) {
  cb_record_set_init(set);
  double c0[] = {100, 110, 120, 130, 140}; /* ttft 100, 4 gaps of 10 ms */
  double c1[] = {200, 220, 240};           /* ttft 200 */
  double c2[] = {300, 330};                /* ttft 300 */
  double c3[] = {400, 450, 500};           /* ttft 400; a 3-token chunk */
  uint32_t t3[] = {1, 1, 3};
  double w[] = {5000};
  cb_record r = ok_record(0, 0, w, 1, NULL);
  r.warmup = 1;
  cb_record_set_push(set, &r);
  r = ok_record(1, 1000 * MS, c0, 5, NULL);
  cb_record_set_push(set, &r);
  r = ok_record(2, 2000 * MS, c1, 3, NULL);
  cb_record_set_push(set, &r);
  r = ok_record(3, 3000 * MS, c2, 2, NULL);
  cb_record_set_push(set, &r);
  r = ok_record(4, 4000 * MS, c3, 3, t3);
  r.scheduled_ns = 3990 * MS; /* sent 10 ms late */
  cb_record_set_push(set, &r);
  r = failed_record(5, 5000 * MS, "stream_cut");
  cb_record_set_push(set, &r);
}

/* A stream longer than the client's 65,536 kept chunk times: the record says how many
 * it dropped, reads back the same, and the summary counts the request (JSON and the
 * report's notes say so) instead of passing its short chunk_ns off as the whole. */
static void test_chunk_times_truncated(void **state) {
  (void)state;
  char path[] = "/tmp/cb_records_XXXXXX";
  int fd = make_temp(path);
  double chunks[] = {100, 110, 130};
  cb_record a = ok_record(1, 5 * MS, chunks, 3, NULL);
  a.chunks_dropped = 1934464; /* 2,000,000 output tokens, 65,536 times kept */
  cb_record b = ok_record(2, 6 * MS, chunks, 3, NULL);
  cb_buf buf;
  cb_buf_init(&buf, 0);
  cb_record_write_json(&a, &buf);
  assert_non_null(strstr(buf.data, ",\"chunk_ns_dropped\":1934464"));
  size_t first_len = buf.len;
  cb_record_write_json(&b, &buf);
  assert_null(strstr(buf.data + first_len, "chunk_ns_dropped")); /* absent when none */
  assert_int_equal(write(fd, buf.data, buf.len), (ssize_t)buf.len);
  close(fd);
  cb_record_set set;
  load_ok(path, &set);
  assert_int_equal(set.items[0].chunks_dropped, 1934464);
  assert_int_equal(set.items[1].chunks_dropped, 0);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.chunk_times_truncated, 1);
  cb_buf js = summary_json(&s);
  assert_non_null(strstr(js.data, "\"chunk_times_truncated\":1"));
  cb_buf_free(&js);
  cb_record_set_free(&set);
  cb_record_free(&a);
  cb_record_free(&b);
  cb_buf_free(&buf);
  unlink(path);
}

static void test_summary_known_answers(void **state) {
  (void)state;
  cb_record_set set;
  build_run(&set);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_error err;
  assert_int_equal(cb_slo_parse("ttft=250ms,itl=25ms@p90", p.slos, &p.n_slos, &err), CB_OK);
  p.requested_rate = 1.0;
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.requests, 6);
  assert_int_equal(s.warmup, 1);
  assert_int_equal(s.measured, 5);
  assert_int_equal(s.succeeded, 4);
  assert_int_equal(s.failed, 1);
  /* TTFT over successes: 100, 200, 300, 400 ms; numpy linear p50 = 250, p90 = 370. */
  const cb_dist *ttft = &s.metrics[CB_METRIC_TTFT];
  assert_int_equal(ttft->count, 4);
  close_to("ttft p50", ttft->p50, 250 * 1e6, 1e-12);
  close_to("ttft p90", ttft->p90, 370 * 1e6, 1e-12);
  close_to("ttft mean", ttft->mean, 250 * 1e6, 1e-12);
  close_to("ttft std (population)", ttft->std, sqrt(12500.0) * 1e6, 1e-12);
  /* Adjusted: the failure is +inf: p50 of {100,200,300,400,inf} = 300, p90 = inf. */
  close_to("adjusted ttft p50", s.metrics_adjusted[CB_METRIC_TTFT].p50, 300 * 1e6, 1e-12);
  assert_true(isinf(s.metrics_adjusted[CB_METRIC_TTFT].p90));
  /* TPOT: (e2e - ttft) / (tokens - 1): 40/4, 40/2, 30/1, 100/4 ms. */
  const cb_dist *tpot = &s.metrics[CB_METRIC_TPOT];
  assert_int_equal(tpot->count, 4);
  close_to("tpot min", tpot->min, 10 * 1e6, 1e-12);
  close_to("tpot max", tpot->max, 30 * 1e6, 1e-12);
  /* ITL per chunk: 10,10,10,10, 20,20, 30, 50,50 -> 9 gaps; per token the last
   * 3-token chunk gives three gaps of 50/3 ms -> 11 values. */
  assert_int_equal(s.metrics[CB_METRIC_ITL].count, 9);
  close_to("itl max", s.metrics[CB_METRIC_ITL].max, 50 * 1e6, 1e-12);
  assert_int_equal(s.metrics[CB_METRIC_ITL_TOKEN].count, 11);
  close_to("itl/token min", s.metrics[CB_METRIC_ITL_TOKEN].min, 10 * 1e6, 1e-12);
  /* 10 x4, 20 x2, 30, 50, 50/3 x3: the gaps before the 3-token chunk count once each. */
  close_to("itl/token mean", s.metrics[CB_METRIC_ITL_TOKEN].mean, 210.0 / 11 * 1e6, 1e-12);
  hist_close_to("itl/token p50", s.metrics[CB_METRIC_ITL_TOKEN].p50, 50.0 / 3 * 1e6);
  close_to("itl/token max", s.metrics[CB_METRIC_ITL_TOKEN].max, 50 * 1e6, 1e-12);
  /* Lag: 0,0,0,10,0 ms; E2E from schedule is 10 ms longer for request 4. */
  close_to("lag max", s.metrics[CB_METRIC_LAG].max, 10 * 1e6, 1e-12);
  close_to("e2e_sched max", s.metrics[CB_METRIC_E2E_SCHED].max, 510 * 1e6, 1e-12);
  assert_true(s.client_fell_behind); /* p99 lag 9.6 ms > 1 ms */
  /* Window: sends from 1 s to 5 s: 4 s, 5 sends -> achieved 1.0 req/s. */
  close_to("window", s.window_s, 4.0, 1e-12);
  close_to("achieved rate", s.achieved_rate, 1.0, 1e-12);
  close_to("scheduled rate (1 s .. 5 s)", s.scheduled_rate, 1.0, 1e-12);
  /* Completed in window: requests 1..4 (ends at 1.14, 2.24, 3.33, 4.5 s). */
  close_to("request throughput", s.request_throughput, 1.0, 1e-12);
  close_to("output throughput", s.output_throughput, (5 + 3 + 2 + 5) / 4.0, 1e-12);
  /* SLO ttft <= 250: met by two of five -> 0.4; itl <= 25 ms per request: the first
   * two requests meet it; the failure never meets. Joint: only request 1 (ttft 100,
   * gaps 10) and request 2 (ttft 200, gaps 20) -> 2 of 5. Goodput: 2 / 4 s. */
  close_to("ttft attainment", s.slos[0].attainment, 0.4, 1e-12);
  close_to("itl attainment", s.slos[1].attainment, 0.4, 1e-12);
  close_to("joint", s.joint_attainment, 0.4, 1e-12);
  close_to("goodput", s.goodput, 0.5, 1e-12);
  /* The ITL verdict counts gaps: 9 gaps + 1 failure, 3 over 25 ms (30, 50, 50) + 1. */
  assert_int_equal(s.slos[1].units, 10);
  assert_int_equal(s.slos[1].over, 4);
  assert_int_equal(s.n_error_classes, 1);
  assert_string_equal(s.errors[0].error_class, "stream_cut");
  assert_int_equal(s.errors[0].count, 1);

  cb_buf json = summary_json(&s);
  assert_non_null(strstr(json.data, "\"adjusted\":{\"count\":5,\"p50_ms\":300,\"p90_ms\":null"));
  assert_non_null(strstr(json.data, "\"verdict\":\"violated\""));
  assert_non_null(strstr(json.data, "\"fell_behind\":true"));
  cb_buf_free(&json);

  /* Per class: records of class "b" only. */
  snprintf(set.items[2].class_name, sizeof set.items[2].class_name, "b");
  p.class_name = "b";
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.measured, 1);
  close_to("class b ttft", s.metrics[CB_METRIC_TTFT].p50, 200 * 1e6, 1e-12);
  const char *names[4];
  assert_int_equal(cb_record_set_classes(&set, names, 4), 2);
  assert_string_equal(names[1], "b");
  cb_record_set_free(&set);
}

static void test_summary_degenerate(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_summary s;
  cb_summary_compute(&set, &p, &s); /* empty */
  assert_int_equal(s.measured, 0);
  assert_true(isnan(s.metrics[CB_METRIC_TTFT].p50));
  cb_buf json = summary_json(&s);
  assert_non_null(strstr(json.data, "\"p50_ms\":null"));
  /* Every request failed: no division by zero, adjusted percentiles all infinite. */
  cb_record r = failed_record(0, 0, "connect");
  cb_record_set_push(&set, &r);
  r = failed_record(1, 0, "connect");
  cb_record_set_push(&set, &r);
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.failed, 2);
  assert_true(isinf(s.metrics_adjusted[CB_METRIC_E2E].p50));
  assert_true(s.window_s > 0); /* simultaneous sends: to the last completion */
  assert_true(s.request_throughput == 0);
  cb_buf_free(&json);
  cb_record_set_free(&set);
}

/* A result directory says where each appended line starts, and gives back a line's
 * output_text as the file holds it (run keeps the text only in records.jsonl). */
static void test_dir_output_text(void **state) {
  (void)state;
  char dir[] = "/tmp/cb_dir_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sub[64];
  snprintf(sub, sizeof sub, "%s/run", dir);
  cb_results_dir *d;
  cb_error err;
  assert_int_equal(cb_results_dir_create(sub, &d, &err), CB_OK);
  double ms[] = {10, 20};
  cb_record a = ok_record(0, 0, ms, 2, NULL), b = ok_record(1, MS, ms, 2, NULL);
  a.output_text = cb_strdup("first \"text\"\n");
  assert_int_equal(cb_results_dir_records_bytes(d), 0);
  assert_int_equal(cb_results_dir_append(d, &a, &err), CB_OK);
  uint64_t at_b = cb_results_dir_records_bytes(d);
  assert_true(at_b > 0);
  assert_int_equal(cb_results_dir_append(d, &b, &err), CB_OK);
  char *text;
  assert_int_equal(cb_results_dir_output_text(d, 0, &text, &err), CB_OK);
  assert_string_equal(text, "first \"text\"\n");
  cb_free(text);
  assert_int_equal(cb_results_dir_output_text(d, at_b, &text, &err), CB_OK);
  assert_null(text); /* the second record has none */
  assert_int_not_equal(cb_results_dir_output_text(d, at_b + 3, &text, &err), CB_OK);
  assert_non_null(strstr(err.msg, "no record at byte"));
  assert_int_not_equal(cb_results_dir_output_text(d, 1u << 30, &text, &err), CB_OK);
  /* a record's chunk times, read back by its position among the appends */
  cb_record back;
  cb_record_init(&back);
  assert_int_equal(cb_results_dir_record_times(d, 1, &back, &err), CB_OK);
  assert_int_equal(back.n_chunks, 2);
  assert_int_equal(back.sent_ns, b.sent_ns);
  assert_memory_equal(back.chunk_ns, b.chunk_ns, 2 * sizeof *b.chunk_ns);
  assert_null(back.chunk_tokens); /* all one token: not written */
  cb_record_free(&back);
  assert_int_equal(cb_results_dir_record_times(d, 2, &back, &err), CB_ERR_NOT_FOUND);
  cb_results_dir_close(d);
  cb_record_free(&a);
  cb_record_free(&b);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* ---- a set that drops its records' chunk times ------------------------------------ */

/* A seeded mix as records arrive in completion order: two classes ("b" streams chunks of
 * up to 3 tokens), warm-up, failures with and without chunks, and requests still in
 * flight at later sends and at the last one. */
static void make_mixed(cb_record *out, size_t n) {
  cb_rng rng;
  cb_rng_init(&rng, 20261203);
  uint64_t t = 1000 * MS;
  for (size_t i = 0; i < n; i++) {
    t += (uint64_t)(cb_rng_exponential(&rng, 1.0 / 20) * MS);
    size_t chunks = 1 + (size_t)cb_rng_below(&rng, 40);
    double c[40], at = 20 + 100 * cb_rng_uniform(&rng);
    uint32_t toks[40];
    int multi = i % 2 == 1;
    for (size_t k = 0; k < chunks; k++) {
      c[k] = at;
      at += 1 + cb_rng_lognormal(&rng, 2.3, 0.6);
      toks[k] = multi ? 1 + (uint32_t)cb_rng_below(&rng, 3) : 1;
    }
    out[i] = ok_record(i, t, c, chunks, toks);
    if (!multi) { /* sim run's records: one token per chunk, no array */
      cb_free(out[i].chunk_tokens);
      out[i].chunk_tokens = NULL;
    }
    snprintf(out[i].class_name, sizeof out[i].class_name, "%s", multi ? "b" : "a");
    out[i].warmup = i < 15;
    if (i % 23 == 5) { /* a stream cut after its chunks */
      snprintf(out[i].error_class, sizeof out[i].error_class, "stream");
      out[i].end_ns += 3 * MS;
    }
  }
  /* completion order (ties by send) */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && out[j].end_ns < out[j - 1].end_ns; j--) {
      cb_record x = out[j];
      out[j] = out[j - 1];
      out[j - 1] = x;
    }
}

/* Chunk times read back from the set that kept them (as a run reads records.jsonl). */
static size_t rereads;
static cb_status reread_kept(void *ctx, size_t position, cb_record *out, cb_error *err) {
  const cb_record_set *kept = ctx;
  if (!kept) return cb_error_set(err, CB_ERR_IO, "records.jsonl: cannot read");
  const cb_record *r = &kept->items[position];
  rereads++;
  out->sent_ns = r->sent_ns;
  out->n_chunks = r->n_chunks;
  out->chunk_ns = cb_reallocarray(NULL, r->n_chunks, sizeof *out->chunk_ns);
  memcpy(out->chunk_ns, r->chunk_ns, r->n_chunks * sizeof *out->chunk_ns);
  if (r->chunk_tokens) {
    out->chunk_tokens = cb_reallocarray(NULL, r->n_chunks, sizeof *out->chunk_tokens);
    memcpy(out->chunk_tokens, r->chunk_tokens, r->n_chunks * sizeof *out->chunk_tokens);
  }
  return CB_OK;
}

static cb_record copy_record(const cb_record *r) {
  cb_record c = *r;
  c.chunk_ns = cb_reallocarray(NULL, r->n_chunks, sizeof *c.chunk_ns);
  memcpy(c.chunk_ns, r->chunk_ns, r->n_chunks * sizeof *c.chunk_ns);
  c.chunk_tokens = NULL;
  if (r->chunk_tokens) {
    c.chunk_tokens = cb_reallocarray(NULL, r->n_chunks, sizeof *c.chunk_tokens);
    memcpy(c.chunk_tokens, r->chunk_tokens, r->n_chunks * sizeof *c.chunk_tokens);
  }
  return c;
}

static void summary_text(const cb_record_set *set, const cb_summary_params *p, const char *cls,
                         cb_buf *out) {
  cb_summary_params q = *p;
  q.class_name = cls;
  cb_summary s;
  cb_summary_compute(set, &q, &s);
  cb_buf_reset(out);
  cb_summary_write_json(&s, out);
}

/* Dropping chunk times changes no summary: the whole run's and each class's, SLO
 * verdicts on ITL included, and the set's ITL statistics and token bins. */
static void test_drop_chunk_times(void **state) {
  (void)state;
  enum { N = 600 };
  static cb_record made[N];
  make_mixed(made, N);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_error err;
  assert_int_equal(cb_slo_parse("itl=14ms,itl_token=9ms@p90,ttft=80ms", p.slos, &p.n_slos, &err), CB_OK);
  /* whole: every time kept; dropped: times kept while a later send may cut the
   * window inside them; reread: every success's dropped at once, read back when a
   * summary needs them; unreadable: the same, read-back failing */
  cb_record_set whole, dropped, reread, unreadable;
  cb_record_set_init(&whole);
  cb_record_set_init(&dropped);
  cb_record_set_init(&reread);
  cb_record_set_init(&unreadable);
  cb_record_set_drop_chunk_times(&dropped, p.slos, p.n_slos);
  cb_record_set_drop_chunk_times(&reread, p.slos, p.n_slos);
  cb_record_set_reread(&reread, reread_kept, &whole);
  cb_record_set_drop_chunk_times(&unreadable, p.slos, p.n_slos);
  cb_record_set_reread(&unreadable, reread_kept, NULL);
  for (size_t i = 0; i < N; i++) {
    cb_record c1 = copy_record(&made[i]), c2 = copy_record(&made[i]), c3 = copy_record(&made[i]);
    cb_record_set_push(&whole, &made[i]);
    cb_record_set_push(&dropped, &c1);
    cb_record_set_push(&reread, &c2);
    cb_record_set_push(&unreadable, &c3);
  }
  for (size_t i = 0; i < N; i++) /* reread mode keeps only the failures' times */
    assert_true((reread.items[i].chunk_ns == NULL) == cb_record_ok(&reread.items[i]));
  size_t without = 0, failed_kept = 0;
  for (size_t i = 0; i < N; i++) {
    const cb_record *r = &dropped.items[i];
    if (!r->chunk_ns) {
      without++;
      assert_int_equal(r->n_chunks, whole.items[i].n_chunks);
    }
    failed_kept += !cb_record_ok(r) && r->chunk_ns;
  }
  if (without < N * 3 / 4 || without == N) fail_msg("%zu of %d records dropped their times", without, N);
  assert_true(failed_kept > 0);

  cb_buf a, b;
  cb_buf_init(&a, 0);
  cb_buf_init(&b, 0);
  const char *classes[] = {NULL, "a", "b"};
  rereads = 0;
  for (size_t k = 0; k < 3; k++) {
    summary_text(&whole, &p, classes[k], &a);
    const cb_record_set *sets[] = {&dropped, &reread};
    for (size_t j = 0; j < 2; j++) {
      summary_text(sets[j], &p, classes[k], &b);
      if (a.len != b.len || memcmp(a.data, b.data, a.len))
        fail_msg("class %s, set %zu:\nall times: %s\ndropped:   %s", classes[k] ? classes[k] : "(all)", j,
                 a.data, b.data);
    }
  }
  /* the requests generating at the window's end were read back, and only they */
  if (rereads == 0 || rereads > 3 * 40) fail_msg("%zu records read back", rereads);
  /* unreadable: those few counted as spread evenly, the rest exact */
  cb_summary s0, s3;
  cb_summary_compute(&whole, &p, &s0);
  cb_summary_compute(&unreadable, &p, &s3);
  close_to("output throughput, straddlers spread evenly", s3.output_throughput, s0.output_throughput, 0.01);
  assert_true(s3.request_throughput == s0.request_throughput);
  cb_token_bins x, y;
  cb_record_set_token_bins(&whole, &x);
  cb_record_set_token_bins(&dropped, &y);
  assert_int_equal(x.width_ns, y.width_ns);
  assert_int_equal(x.n, y.n);
  assert_memory_equal(x.tokens, y.tokens, x.n * sizeof *x.tokens);
  cb_token_bins_free(&x);
  cb_token_bins_free(&y);

  /* An ITL SLO the set was not told of: counted from the histogram, never kinder. */
  cb_summary_params q = p;
  assert_int_equal(cb_slo_parse("itl=11ms", q.slos, &q.n_slos, &err), CB_OK);
  cb_summary s1, s2;
  cb_summary_compute(&whole, &q, &s1);
  cb_summary_compute(&dropped, &q, &s2);
  assert_int_equal(s1.slos[0].units, s2.slos[0].units);
  assert_true(s2.slos[0].over >= s1.slos[0].over);
  assert_true(s2.slos[0].over <= s1.slos[0].over + s1.slos[0].units / 50);
  cb_buf_free(&a);
  cb_buf_free(&b);
  cb_record_set_free(&whole);
  cb_record_set_free(&dropped);
  cb_record_set_free(&reread);
  cb_record_set_free(&unreadable);
}

/* One token per chunk (sim run's records): ITL per token is ITL, field for field. */
static void test_summary_itl_token_single(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  double c0[] = {100, 110, 125, 160}, c1[] = {200, 207};
  cb_record r = ok_record(0, 0, c0, 4, NULL);
  cb_record_set_push(&set, &r);
  r = ok_record(1, 1000 * MS, c1, 2, NULL);
  cb_record_set_push(&set, &r);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  const cb_dist *itl = &s.metrics[CB_METRIC_ITL], *tok = &s.metrics[CB_METRIC_ITL_TOKEN];
  assert_int_equal(itl->count, 4);
  hist_close_to("itl p50", itl->p50, 12.5 * 1e6);
  assert_memory_equal(itl, tok, sizeof *itl);
  assert_memory_equal(&s.metrics_adjusted[CB_METRIC_ITL], &s.metrics_adjusted[CB_METRIC_ITL_TOKEN],
                      sizeof *itl);
  /* chunk_tokens NULL (sim run's records, a file without the key) means the same:
   * the same summary, the same record line. */
  cb_buf with, without;
  cb_buf_init(&with, 0);
  cb_buf_init(&without, 0);
  cb_summary_write_json(&s, &with);
  cb_record_write_json(&set.items[0], &with);
  for (size_t i = 0; i < set.count; i++) {
    cb_free(set.items[i].chunk_tokens);
    set.items[i].chunk_tokens = NULL;
  }
  cb_summary_compute(&set, &p, &s);
  cb_summary_write_json(&s, &without);
  cb_record_write_json(&set.items[0], &without);
  assert_string_equal(with.data, without.data);
  assert_null(strstr(without.data, "chunk_tokens"));
  cb_buf_free(&with);
  cb_buf_free(&without);
  cb_record_set_free(&set);
}

/* Records whose times are impossible (a corrupt or edited records.jsonl): counted as
 * invalid, named, and kept out of every statistic - no difference wraps to 2^64. */
static void test_summary_invalid_times(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  static const double ms[] = {10, 20, 30};
  cb_record r = ok_record(0, 1000 * MS, ms, 3, NULL);
  cb_record_set_push(&set, &r);
  r = ok_record(1, 1100 * MS, ms, 3, NULL);
  r.end_ns = r.sent_ns - 5; /* ends before it was sent */
  cb_record_set_push(&set, &r);
  r = ok_record(2, 1200 * MS, ms, 3, NULL);
  r.chunk_ns[2] = r.chunk_ns[1] - 31; /* a chunk before the one before it */
  cb_record_set_push(&set, &r);
  assert_null(cb_record_times_invalid(&set.items[0]));
  assert_non_null(strstr(cb_record_times_invalid(&set.items[1]), "end_ns is before sent_ns"));
  assert_non_null(strstr(cb_record_times_invalid(&set.items[2]), "chunk_ns goes backwards"));
  { /* in order, but the first or the last chunk outside [sent_ns, end_ns] */
    cb_record e = ok_record(3, 1300 * MS, ms, 3, NULL);
    e.chunk_ns[0] = e.sent_ns - 1;
    assert_non_null(strstr(cb_record_times_invalid(&e), "a chunk time is outside"));
    e.chunk_ns[0] = e.sent_ns;
    assert_null(cb_record_times_invalid(&e));
    e.chunk_ns[2] = e.end_ns + 1;
    assert_non_null(strstr(cb_record_times_invalid(&e), "a chunk time is outside"));
    cb_record_free(&e);
  }
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_error err;
  assert_int_equal(cb_slo_parse("itl=15ms", p.slos, &p.n_slos, &err), CB_OK);
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.requests, 3);
  assert_int_equal(s.invalid, 2);
  assert_int_equal(s.measured, 1);
  assert_non_null(strstr(s.invalid_example, "run-1"));
  assert_non_null(strstr(s.invalid_example, "end_ns is before sent_ns"));
  for (int m = 0; m < CB_METRIC_COUNT_; m++)
    if (s.metrics[m].count && !(s.metrics[m].max < 1e9))
      fail_msg("%s max %g ns", cb_metric_name((cb_metric)m), s.metrics[m].max);
  assert_int_equal(s.metrics[CB_METRIC_E2E].count, 1);
  close_to("e2e", s.metrics[CB_METRIC_E2E].max, 30 * MS, 1e-12);
  assert_int_equal(s.slos[0].units, 2); /* the valid record's two gaps only */
  assert_true(s.window_s < 1);
  cb_buf json = summary_json(&s);
  assert_non_null(strstr(json.data, "\"invalid\":2"));
  cb_buf_free(&json);
  cb_record_set_free(&set);
}

static void test_slo_parse(void **state) {
  (void)state;
  cb_slo slos[CB_MAX_SLOS];
  size_t n;
  cb_error err;
  assert_int_equal(cb_slo_parse("ttft=500ms,tpot=50,e2e=2s@p99.9,itl=800us", slos, &n, &err), CB_OK);
  assert_int_equal(n, 4);
  close_to("ttft bound", slos[0].bound_ns, 5e8, 0);
  close_to("tpot bound (ms default)", slos[1].bound_ns, 5e7, 0);
  close_to("e2e bound", slos[2].bound_ns, 2e9, 0);
  close_to("e2e percentile", slos[2].percentile, 99.9, 0);
  close_to("itl bound", slos[3].bound_ns, 8e5, 0);
  /* The one duration syntax (cb_duration_parse): minutes too, bare numbers in ms. */
  assert_int_equal(cb_slo_parse("e2e=1m,ttft=1.5@p95", slos, &n, &err), CB_OK);
  /* Without an error struct a failure is still a failure. */
  assert_true(cb_slo_parse("speed=1s", slos, &n, NULL) != CB_OK);
  assert_true(cb_slo_parse("e2e=soon", slos, &n, NULL) != CB_OK);
  close_to("e2e=1m", slos[0].bound_ns, 6e10, 0);
  close_to("ttft=1.5 (ms)", slos[1].bound_ns, 1.5e6, 0);
  close_to("ttft percentile", slos[1].percentile, 95, 0);
  /* METRIC<=BOUND reads as METRIC=BOUND (probe agent's "--slo e2e<=5s"). */
  assert_int_equal(cb_slo_parse("e2e<=5s,ttft=1s", slos, &n, &err), CB_OK);
  assert_int_equal(slos[0].metric, CB_METRIC_E2E);
  close_to("e2e<=5s", slos[0].bound_ns, 5e9, 0);
  static const struct { const char *spec, *fragment; } bad[] = {
      {"ttft", "expected METRIC=BOUND"},   {"speed=5ms", "unknown metric 'speed'"},
      {"ttft=fast", "--slo: ttft=fast: expected a duration such as 500ms, 2s or 1m, got 'fast'"},
      {"ttft=5ms@p100", "not a percentile"},
      {"", "no SLO given"},
      {"ttft=5minutes", "--slo: ttft=5minutes: expected a duration such as 500ms, 2s or 1m, got "
                        "'5minutes' (unknown unit 'minutes'"},
      {"ttft=0", "--slo: ttft=0: an SLO bound must be > 0, got '0'"},
      {"e2e=-1s", "--slo: e2e=-1s: a duration must be >= 0"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error_clear(&err);
    if (cb_slo_parse(bad[i].spec, slos, &n, &err) == CB_OK) fail_msg("'%s' accepted", bad[i].spec);
    if (!strstr(err.msg, bad[i].fragment)) fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err.msg, bad[i].fragment);
  }
}

/* Expected values from SciPy 1.10.1 (Debian python3-scipy):
 *   /usr/bin/python3 -c "from scipy.stats import binom; print(binom.cdf(t,n,q), binom.sf(t-1,n,q))"
 * The verdict's p-value is the CDF when it HOLDS or is UNDECIDED, the upper tail when
 * it is VIOLATED (confidence 0.95). */
static void test_verdict_vs_scipy(void **state) {
  (void)state;
  static const struct {
    size_t n, t;
    double q, cdf, sf;
    cb_verdict_kind want;
  } cases[] = {
      {1000, 3, 0.01, 0.010072654772014291, 0.9973205680062085, CB_VERDICT_HOLDS},
      {1000, 10, 0.01, 0.5830408033010972, 0.54269940782511317, CB_VERDICT_UNDECIDED},
      {1000, 18, 0.01, 0.99309500523241923, 0.013832581730008509, CB_VERDICT_VIOLATED},
      {200, 0, 0.01, 0.13397967485796192, 1, CB_VERDICT_UNDECIDED},
      {5000, 40, 0.01, 0.08499265788600309, 0.93637668923890927, CB_VERDICT_UNDECIDED},
      {100, 12, 0.05, 0.99853565199196559, 0.0042741824663659186, CB_VERDICT_VIOLATED},
      {20, 20, 0.5, 1, 9.5367431640625e-07, CB_VERDICT_VIOLATED},
      {300, 1, 0.001, 0.96314157634712028, 0.25929296784390055, CB_VERDICT_UNDECIDED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double pv;
    size_t more;
    cb_verdict_kind v = cb_verdict_binomial(cases[i].n, cases[i].t, cases[i].q, 0.95, &pv, &more);
    if (v != cases[i].want) fail_msg("case %zu: verdict %d, want %d", i, v, cases[i].want);
    double want = v == CB_VERDICT_VIOLATED ? cases[i].sf : cases[i].cdf;
    char what[64];
    snprintf(what, sizeof what, "case %zu p-value", i);
    close_to(what, pv, want, 1e-10);
  }
  /* p99 with no request over the bound: 0.99^N <= 0.05 first at N = 299, so 50
   * clean requests need 249 more (LoadGen's minimum-query arithmetic, at 95%). */
  double pv;
  size_t more;
  assert_int_equal(cb_verdict_binomial(50, 0, 0.01, 0.95, &pv, &more), CB_VERDICT_UNDECIDED);
  assert_int_equal(more, 249);
  assert_int_equal(cb_verdict_binomial(299, 0, 0.01, 0.95, &pv, &more), CB_VERDICT_HOLDS);
  assert_int_equal(cb_verdict_binomial(298, 0, 0.01, 0.95, &pv, &more), CB_VERDICT_UNDECIDED);
  assert_int_equal(more, 1);
}

static double jnum(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (!json_is_number(v)) fail_msg("key '%s' missing or not a number", key);
  return json_number_value(v);
}

/* vLLM's keys and definitions over the same hand-built run. */
static void test_vllm_export(void **state) {
  (void)state;
  cb_record_set set;
  build_run(&set);
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  double pcts[] = {50, 99, 99.9};
  cb_vllm_export_params vp = {.backend = "openai-chat", .model_id = "llama-3.1-8b",
                              .request_rate = 1.0, .start_wall_ns = 1764680854000000000ull,
                              .duration_s = 4.5, .percentiles = pcts, .n_percentiles = 3};
  json_t *o = vllm_json(&set, &s, &vp);
  assert_string_equal(json_string_value(json_object_get(o, "date")), "20251202-130734");
  assert_int_equal((int)jnum(o, "completed"), 4);
  assert_int_equal((int)jnum(o, "failed"), 1);
  assert_int_equal((int)jnum(o, "num_prompts"), 5);
  close_to("request_throughput", jnum(o, "request_throughput"), 4 / 4.5, 1e-12);
  close_to("total_output_tokens", jnum(o, "total_output_tokens"), 15, 0);
  close_to("mean_ttft_ms", jnum(o, "mean_ttft_ms"), 250, 1e-9);
  close_to("p99_ttft_ms (numpy linear)", jnum(o, "p99_ttft_ms"), 397, 1e-9);
  close_to("p50_ttft_ms", jnum(o, "p50_ttft_ms"), 250, 1e-9);
  assert_non_null(json_object_get(o, "p99.9_ttft_ms"));
  close_to("mean_itl_ms", jnum(o, "mean_itl_ms"), 210.0 / 9, 1e-9);
  assert_int_equal((int)jnum(o, "max_concurrent_requests"), 1);
  assert_true(json_is_null(json_object_get(o, "request_goodput")));
  assert_int_equal(json_array_size(json_object_get(o, "ttfts")), 5);
  json_decref(o);
  cb_record_set_free(&set);
}

/* Where vLLM's definitions differ from calibench's (/work/shared/reference, vLLM's
 * serve.py): a chat stream whose role-only chunk (non-empty choices, empty content)
 * comes at 50 ms, content chunks at 200, 230 and 300 ms, the usage chunk and [DONE]
 * at 400 ms. vLLM: TTFT 50 (role chunk), ITL 150/30/70 (from the role chunk),
 * E2EL 300 (last content chunk), TPOT (300 - 50) / 2. calibench's summary over the
 * same record: TTFT 200, ITL 30/70, E2E 400. Swapping either side fails here. */
static void test_vllm_export_definitions(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  const double c[] = {200, 230, 300};
  cb_record r = ok_record(0, 1000 * MS, c, 3, NULL);
  r.first_chunk_ns = r.first_choices_ns = r.sent_ns + 50 * MS;
  r.end_ns = r.sent_ns + 400 * MS;
  cb_record_set_push(&set, &r);
  cb_summary_params sp;
  cb_summary_default_params(&sp);
  cb_summary s;
  cb_summary_compute(&set, &sp, &s);
  close_to("calibench ttft", s.metrics[CB_METRIC_TTFT].mean, 200 * MS, 1e-9);
  close_to("calibench itl", s.metrics[CB_METRIC_ITL].mean, 50 * MS, 1e-9);
  close_to("calibench e2e", s.metrics[CB_METRIC_E2E].mean, 400 * MS, 1e-9);
  close_to("calibench tpot", s.metrics[CB_METRIC_TPOT].mean, 100 * MS, 1e-9);
  cb_vllm_export_params vp = {.backend = "openai-chat", .model_id = "m", .request_rate = 1.0,
                              .start_wall_ns = 1764680854000000000ull, .duration_s = 1.0};
  json_t *o = vllm_json(&set, &s, &vp);
  close_to("vllm mean_ttft_ms", jnum(o, "mean_ttft_ms"), 50, 1e-9);
  close_to("vllm mean_itl_ms", jnum(o, "mean_itl_ms"), 250.0 / 3, 1e-9);
  close_to("vllm median_itl_ms", jnum(o, "median_itl_ms"), 70, 1e-9);
  close_to("vllm mean_e2el_ms", jnum(o, "mean_e2el_ms"), 300, 1e-9);
  close_to("vllm mean_tpot_ms", jnum(o, "mean_tpot_ms"), 125, 1e-9);
  json_decref(o);
  cb_record_set_free(&set);
}

/*
 * A ramped run's break rate: 200 requests offered at 1 .. 20 req/s evenly, TTFT 50 ms
 * below 12 req/s and 500 ms from it. Bins of (20 - 1) / 10 = 1.9 req/s: 12 falls in
 * bin 5, [10.5, 12.4), whose ~4 slow requests out of ~21 violate p99 <= 100 ms at 95%
 * (P(X >= 4 | n = 21, q = 0.01) ~ 5e-5); bins 0-4 are all fast. So the p99 TTFT SLO
 * stopped holding at 10.5 req/s; a 1 s bound holds throughout (null in JSON); an
 * unramped set has no bins and no "ramp" member.
 */
static void test_ramp_break_rate(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  for (int i = 0; i < 200; i++) {
    double rate = 1 + 19.0 * i / 199;
    double c[] = {rate < 12 ? 50 : 500, 600};
    cb_record r = ok_record((uint64_t)i, (uint64_t)i * 100 * MS, c, 2, NULL);
    r.has_target_rate = 1;
    r.target_rate = rate;
    cb_record_set_push(&set, &r);
  }
  cb_summary_params sp;
  cb_summary_default_params(&sp);
  assert_int_equal(cb_slo_parse("ttft=100ms,ttft=1s", sp.slos, &sp.n_slos, NULL), CB_OK);
  cb_summary s;
  cb_summary_compute(&set, &sp, &s);
  assert_int_equal(s.ramp.n_bins, CB_RAMP_BINS);
  assert_float_equal(s.ramp.lo, 1, 1e-12);
  assert_float_equal(s.ramp.width, 1.9, 1e-12);
  size_t total = 0;
  for (size_t b = 0; b < s.ramp.n_bins; b++) total += s.ramp.count[b];
  assert_int_equal(total, 200);
  assert_int_equal(s.slos[0].break_bin, 5);
  assert_float_equal(s.slos[0].break_rate, 10.5, 1e-9);
  assert_int_equal(s.ramp.met[0][4], s.ramp.count[4]);
  assert_true(s.ramp.met[0][5] < s.ramp.count[5]);
  assert_int_equal(s.slos[1].break_bin, -1);
  assert_true(isnan(s.slos[1].break_rate));
  assert_int_equal(cb_ramp_bin_of(&s.ramp, 20), 9); /* the top edge is in the last bin */
  assert_int_equal(cb_ramp_bin_of(&s.ramp, 0.5), 0);
  cb_buf j;
  cb_buf_init(&j, 0);
  cb_summary_write_json(&s, &j);
  assert_non_null(strstr(j.data, "\"break_rate\":10.5,"));
  assert_non_null(strstr(j.data, "\"break_rate\":null,"));
  assert_non_null(strstr(j.data, "\"ramp\":{\"bin_width\":1.9,\"bins\":[{\"rate_lo\":1,\"rate_hi\":2.9,"));
  for (size_t i = 0; i < set.count; i++) set.items[i].has_target_rate = 0;
  cb_summary_compute(&set, &sp, &s);
  assert_int_equal(s.ramp.n_bins, 0);
  cb_buf_reset(&j);
  cb_summary_write_json(&s, &j);
  assert_null(strstr(j.data, "\"ramp\""));
  assert_null(strstr(j.data, "break_rate"));
  cb_buf_free(&j);
  cb_record_set_free(&set);
}

static void test_capacity_at_slo(void **state) {
  (void)state;
  double a[] = {1.0, 0.995, 0.99, 0.97, 0.999};
  /* 0.99 is met (inclusive); the miss at index 3 ends the search even though the
   * last point meets it again (noise past the knee is not capacity). */
  assert_int_equal(cb_capacity_at_slo(a, 5, 0.99), 2);
  assert_int_equal(cb_capacity_at_slo(a, 5, 0.996), 0);
  double none[] = {0.5, 1.0};
  assert_int_equal(cb_capacity_at_slo(none, 2, 0.99), -1);
  double nan_[] = {NAN};
  assert_int_equal(cb_capacity_at_slo(nan_, 1, 0.99), -1);
  assert_int_equal(cb_capacity_at_slo(a, 0, 0.99), -1);
}

/* The sample requests: first sent (not first in the file), the lower median and the
 * slowest E2E among measured successes; warm-up and failures never median/slowest. */
static void test_record_samples(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  cb_record_samples pick;
  cb_record_set_samples(&set, &pick);
  assert_true(pick.first == SIZE_MAX && pick.median == SIZE_MAX && pick.slowest == SIZE_MAX);

  /* E2E (ms): pos 0 -> 30, pos 1 -> 10 (sent first), pos 2 failed, pos 3 -> 50,
   * pos 4 warm-up -> 900, pos 5 -> 20 */
  const double c30[] = {5, 30}, c10[] = {5, 10}, c50[] = {5, 50}, c900[] = {5, 900}, c20[] = {5, 20};
  cb_record r;
  r = ok_record(0, 200 * MS, c30, 2, NULL), cb_record_set_push(&set, &r);
  r = ok_record(1, 100 * MS, c10, 2, NULL), cb_record_set_push(&set, &r);
  r = failed_record(2, 150 * MS, "timeout"), cb_record_set_push(&set, &r);
  r = ok_record(3, 300 * MS, c50, 2, NULL), cb_record_set_push(&set, &r);
  r = ok_record(4, 400 * MS, c900, 2, NULL), cb_record_set_push(&set, &r);
  set.items[4].warmup = 1;
  r = ok_record(5, 500 * MS, c20, 2, NULL), cb_record_set_push(&set, &r);
  cb_record_set_samples(&set, &pick);
  assert_int_equal(pick.first, 1);   /* sent at 100 ms */
  assert_int_equal(pick.median, 5);  /* 10, 20, 30, 50: the lower median is 20 */
  assert_int_equal(pick.slowest, 3); /* 50, not the warm-up's 900 */

  /* Only failures: a first, no median or slowest. */
  cb_record_set_free(&set);
  cb_record_set_init(&set);
  r = failed_record(0, 0, "connect"), cb_record_set_push(&set, &r);
  cb_record_set_samples(&set, &pick);
  assert_true(pick.first == 0 && pick.median == SIZE_MAX && pick.slowest == SIZE_MAX);
  cb_record_set_free(&set);
}

/* Live sessions: per turn index TTFT, tokens, cached tokens and SLO attainment; per
 * session its duration (first send to last end), complete sessions only. Session 0:
 * turns at 0 s and 1 s (ttft 100, 40 ms; ends 140 ms and 1.06 s); session 1: turns at
 * 0.5 s (ttft 200 ms), 2 s (ttft 60 ms), and a third that fails. A record without a
 * session and a warm-up turn count nowhere here. */
/* summary.json's parameters read back as the run used them; a bad SLO names the file
 * and the field. */
static void test_summary_params_from_json(void **state) {
  (void)state;
  json_t *s = json_loads("{\"requested_rate\": 12.5, \"client\": {\"lag_warning_ms\": 3},"
                         " \"slos\": [{\"metric\": \"ttft\", \"bound_ms\": 200, \"percentile\": 90,"
                         " \"confidence\": 0.9}, {\"metric\": \"e2e\", \"bound_ms\": 2000}]}",
                         0, NULL);
  cb_summary_params p;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_summary_params_from_json(s, "d/summary.json", "summary", &p, &err), CB_OK);
  close_to("rate", p.requested_rate, 12.5, 0);
  close_to("lag", p.lag_warning_ns, 3e6, 0);
  close_to("confidence", p.confidence, 0.9, 0);
  assert_int_equal(p.n_slos, 2);
  assert_int_equal(p.slos[0].metric, CB_METRIC_TTFT);
  close_to("bound", (double)p.slos[0].bound_ns, 200e6, 0);
  close_to("percentile", p.slos[0].percentile, 90, 0);
  assert_int_equal(p.slos[1].metric, CB_METRIC_E2E);
  close_to("default percentile", p.slos[1].percentile, 99, 0);
  json_decref(s);

  s = json_loads("{\"slos\": [{\"metric\": \"ttft\", \"bound_ms\": 1}, {\"metric\": \"speed\", \"bound_ms\": 5}]}", 0, NULL);
  assert_int_equal(cb_summary_params_from_json(s, "d/summary.json", "classes[1]", &p, &err), CB_ERR_PARSE);
  if (!strstr(err.msg, "d/summary.json: classes[1].slos[1]: expected"))
    fail_msg("does not name file and field: %s", err.msg);
  json_decref(s);
  s = json_loads("{\"slos\": {}}", 0, NULL);
  assert_int_equal(cb_summary_params_from_json(s, "f", "summary", &p, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "f: summary.slos: expected an array"));
  json_decref(s);
  /* more SLOs than a run can have: an error, not the first eight silently */
  s = json_array();
  for (int i = 0; i < CB_MAX_SLOS + 1; i++) json_array_append_new(s, json_pack("{s:s,s:i}", "metric", "ttft", "bound_ms", 100 + i));
  json_t *o = json_pack("{s:o}", "slos", s);
  assert_int_equal(cb_summary_params_from_json(o, "f", "summary", &p, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "summary.slos: 9 SLOs, more than the 8"));
  json_decref(o);
}

static void test_summary_sessions(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  struct {
    uint64_t session, sent_ms;
    uint32_t turn;
    double chunks[2];
    int64_t prompt, cached;
    int failed, warmup, no_session;
  } rows[] = {
      {0, 0, 0, {100, 140}, 50, 0, 0, 0, 0},      {0, 1000, 1, {40, 60}, 120, 48, 0, 0, 0},
      {1, 500, 0, {200, 240}, 70, -1, 0, 0, 0},   {1, 2000, 1, {60, 80}, 150, 64, 0, 0, 0},
      {1, 3000, 2, {0, 0}, 0, 0, 1, 0, 0},        {9, 9000, 0, {1, 2}, 5, 0, 0, 1, 0},
      {0, 0, 0, {1, 2}, 5, 0, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cb_record r = rows[i].failed ? failed_record(i, rows[i].sent_ms * MS, "http_status")
                                 : ok_record(i, rows[i].sent_ms * MS, rows[i].chunks, 2, NULL);
    r.has_session = !rows[i].no_session;
    r.session = rows[i].session;
    r.turn = rows[i].turn;
    r.warmup = rows[i].warmup;
    if (!rows[i].failed) {
      r.prompt_tokens = rows[i].prompt;
      r.cached_tokens = rows[i].cached;
    }
    cb_record_set_push(&set, &r);
  }
  cb_summary_params p;
  cb_summary_default_params(&p);
  p.slos[0] = (cb_slo){.metric = CB_METRIC_TTFT, .bound_ns = 100 * MS, .percentile = 90};
  p.n_slos = 1;
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  const cb_session_stats *ss = &s.sessions;
  assert_int_equal(ss->sessions, 2);
  assert_int_equal(ss->complete, 1);
  assert_int_equal(ss->duration.count, 1);
  close_to("session 0's duration", ss->duration.p50, 1060 * 1e6, 1e-12);
  assert_int_equal(ss->n_turns, 3);
  assert_int_equal(ss->turn[0].count, 2);
  close_to("turn 0 ttft mean", ss->turn[0].ttft.mean, 150 * 1e6, 1e-12);
  close_to("turn 0 prompt", ss->turn[0].prompt_tokens_mean, 60, 1e-12);
  close_to("turn 0 cached", ss->turn[0].cached_tokens_mean, 0, 1e-12); /* -1 is unknown */
  assert_int_equal(ss->turn[0].met[0], 1);
  close_to("turn 1 ttft p50", ss->turn[1].ttft.p50, 50 * 1e6, 1e-12);
  close_to("turn 1 prompt", ss->turn[1].prompt_tokens_mean, 135, 1e-12);
  close_to("turn 1 cached", ss->turn[1].cached_tokens_mean, 56, 1e-12);
  assert_int_equal(ss->turn[1].met[0], 2);
  assert_int_equal(ss->turn[2].count, 1);
  assert_int_equal(ss->turn[2].ttft.count, 0);
  assert_int_equal(ss->turn[2].met[0], 0);
  assert_true(isnan(ss->turn[2].cached_tokens_mean));
  cb_buf json = summary_json(&s);
  assert_non_null(strstr(json.data, "\"sessions\":{\"count\":2,\"complete\":1,\"duration\":{\"count\":1,"));
  assert_non_null(strstr(json.data, "\"prompt_tokens_mean\":135,\"cached_tokens_mean\":56,\"attainment\":[1]}"));
  assert_non_null(strstr(json.data, "{\"turn\":2,\"count\":1,"));
  cb_buf_free(&json);
  /* no sessions: no key */
  for (size_t i = 0; i < set.count; i++) set.items[i].has_session = 0;
  cb_summary_compute(&set, &p, &s);
  assert_int_equal(s.sessions.sessions, 0);
  json = summary_json(&s);
  assert_null(strstr(json.data, "\"sessions\""));
  cb_buf_free(&json);
  cb_record_set_free(&set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_round_trip), cmocka_unit_test(test_chunk_times_truncated),
      cmocka_unit_test(test_summary_known_answers), cmocka_unit_test(test_summary_degenerate),
      cmocka_unit_test(test_summary_itl_token_single), cmocka_unit_test(test_summary_sessions),
      cmocka_unit_test(test_drop_chunk_times),
      cmocka_unit_test(test_dir_output_text),
      cmocka_unit_test(test_summary_invalid_times), cmocka_unit_test(test_slo_parse),
      cmocka_unit_test(test_verdict_vs_scipy), cmocka_unit_test(test_vllm_export),
      cmocka_unit_test(test_vllm_export_definitions),
      cmocka_unit_test(test_capacity_at_slo), cmocka_unit_test(test_ramp_break_rate),
      cmocka_unit_test(test_record_samples), cmocka_unit_test(test_summary_params_from_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
