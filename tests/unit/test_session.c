/*
 * test_session.c - the session through its public API only (the headers in include/calibench, as a
 * program linking libcalibench sees it): a point and a sweep of two against the
 * built-in simulator (100x faster than real time), the result directories they
 * leave, the records handed back, and bad configurations refused with their field.
 */
#define _XOPEN_SOURCE 700
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/session.h"

#define TEST_TMPDIR_PREFIX "cb-session"
#include "test_tmpdir.h"

/* A small, fast run of the built-in simulator: 64-token prompts, 16-token answers. */
static void small_config(cb_session_config *cfg, const char *dir, uint64_t n) {
  cb_session_config_init(cfg);
  cfg->workload.num_requests = n;
  cfg->workload.concurrency = 4;
  cfg->cls.data.input_len.mean = 64;
  cfg->cls.data.output_len.mean = 16;
  cfg->sim.time_scale = 0.01;
  cfg->no_report = 1;
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s/%s", tmp, dir);
}

static size_t count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = 0;
  for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
  fclose(f);
  return n;
}

static json_t *load_json(const char *dir, const char *name) {
  char path[1400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  json_error_t je;
  /* the manifest's seeds are 64-bit: numbers are read as doubles (exact below 2^53) */
  json_t *j = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
  if (!j) fail_msg("%s: %s", path, je.text);
  return j;
}

static double num_at(const json_t *j, const char *a, const char *b) {
  const json_t *v = b ? json_object_get(json_object_get(j, a), b) : json_object_get(j, a);
  if (!json_is_number(v)) fail_msg("%s.%s: not a number", a, b ? b : "");
  return json_number_value(v);
}

/* A session on cfg; it must open. */
static cb_session *open_ok(cb_session_config *cfg) {
  cb_session *ses;
  cb_error err;
  cb_session_outcome o = cb_session_open(cfg, &ses, &err);
  if (o != CB_SESSION_OK) fail_msg("open: %s", err.msg);
  return ses;
}

/* Its point; it must run. */
static void run_ok(cb_session *ses, cb_session_result *r) {
  cb_error err;
  cb_session_outcome o = cb_session_run(ses, r, &err);
  if (o != CB_SESSION_OK) fail_msg("run: %s", err.msg);
}

/* The end of a test that ran a point. */
static void close_all(cb_session *ses, cb_session_result *r, cb_session_config *cfg) {
  cb_session_result_free(r);
  cb_session_close(ses);
  cb_session_config_free(cfg);
}

typedef struct seen {
  size_t records, with_text, ok;
  uint64_t index_sum;
} seen;

static void on_record(void *ctx, const cb_record *r) {
  seen *s = ctx;
  s->records++;
  s->with_text += r->output_text && r->output_text[0];
  s->ok += cb_record_ok(r);
  s->index_sum += r->index;
}

static void test_point(void **state) {
  (void)state;
  cb_session_config cfg;
  small_config(&cfg, "point", 24);
  seen s = {0};
  cfg.on_record = on_record;
  cfg.record_ctx = &s;
  cfg.metrics_listen = "127.0.0.1:0";
  cb_session *ses = open_ok(&cfg);
  assert_string_equal(cb_session_model(ses), "llama-3.1-8b");
  /* the port the system gave, bound from open on */
  unsigned port = 0;
  assert_int_equal(sscanf(cb_session_metrics_url(ses), "http://127.0.0.1:%u/metrics", &port), 1);
  assert_true(port > 0);
  cb_session_result r;
  run_ok(ses, &r);
  assert_true(r.ran);
  assert_string_equal(r.dir, cfg.out_dir);
  assert_int_equal(r.all.requests, 24);
  assert_int_equal(r.all.succeeded, 24);
  assert_false(r.all.interrupted);
  /* every record came back, with its answer, indices 0..23 */
  assert_int_equal(s.records, 24);
  assert_int_equal(s.ok, 24);
  assert_int_equal(s.with_text, 24);
  assert_int_equal(s.index_sum, 23 * 24 / 2);
  /* the result directory */
  char path[1400];
  snprintf(path, sizeof path, "%s/records.jsonl", cfg.out_dir);
  assert_int_equal(count_lines(path), 24);
  json_t *sum = load_json(cfg.out_dir, "summary.json");
  assert_int_equal(num_at(sum, "summary", "requests"), 24);
  assert_int_equal(num_at(sum, "summary", "measured"), 24);
  json_decref(sum);
  json_t *man = load_json(cfg.out_dir, "manifest.json");
  assert_int_equal(num_at(man, "runner", "sent"), 24);
  assert_int_equal(num_at(man, "runner", "completed"), 24);
  assert_int_equal(num_at(man, "scheduled", NULL), 24);
  assert_string_equal(json_string_value(json_object_get(man, "run_id")), cfg.run_id);
  assert_non_null(json_object_get(json_object_get(man, "server"), "embedded_simulator"));
  json_decref(man);
  json_t *smp = load_json(cfg.out_dir, "samples.json");
  assert_true(json_array_size(json_object_get(smp, "samples")) >= 1);
  json_decref(smp);
  cb_session_result_free(&r);

  /* The same directory again: refused as bad input, nothing overwritten. */
  cb_error err;
  assert_int_equal(cb_session_run(ses, &r, &err), CB_SESSION_BAD_INPUT);
  assert_non_null(strstr(err.msg, cfg.out_dir));
  assert_int_equal(count_lines(path), 24);
  close_all(ses, &r, &cfg);
}

static void test_sweep(void **state) {
  (void)state;
  cb_session_config cfg;
  small_config(&cfg, "sweep", 10);
  cfg.sweep = CB_SESSION_SWEEP_CONCURRENCY;
  cfg.sweep_values[0] = 1;
  cfg.sweep_values[1] = 2;
  cfg.n_sweep = 2;
  cb_session *ses = open_ok(&cfg);
  cb_session_sweep sw;
  cb_error err;
  cb_session_outcome o = cb_session_run_sweep(ses, &sw, &err);
  if (o != CB_SESSION_OK) fail_msg("sweep: %s", err.msg);
  assert_int_equal(sw.n_points, 2);
  assert_int_equal(sw.capacity_point, -1); /* no SLOs, no capacity at SLO */
  for (size_t i = 0; i < 2; i++) {
    const cb_session_result *p = &sw.points[i];
    char want[1200], path[1400];
    snprintf(want, sizeof want, "%s/points/%02zu-concurrency=%zu", cfg.out_dir, i, i + 1);
    assert_string_equal(p->dir, want);
    assert_int_equal(p->concurrency, i + 1);
    assert_true(p->ran);
    assert_int_equal(p->all.requests, 10);
    snprintf(path, sizeof path, "%s/records.jsonl", p->dir);
    assert_int_equal(count_lines(path), 10);
    json_t *man = load_json(p->dir, "manifest.json");
    assert_int_equal(num_at(man, "runner", "completed"), 10);
    json_decref(man);
  }
  json_t *j = load_json(cfg.out_dir, "sweep.json");
  const json_t *pts = json_object_get(j, "points");
  assert_int_equal(json_array_size(pts), 2);
  assert_int_equal(num_at(json_array_get(pts, 1), "measured", NULL), 10);
  json_decref(j);
  cb_session_sweep_free(&sw);
  cb_session_close(ses);
  cb_session_config_free(&cfg);
}

/* sim run through the API: the engine in virtual time, the run marked predicted. */
static void test_virtual(void **state) {
  (void)state;
  cb_session_config cfg;
  small_config(&cfg, "virtual", 40);
  cfg.virtual_time = 1;
  cb_session *ses = open_ok(&cfg);
  assert_string_equal(cb_session_target(ses), "PREDICTED by the simulator in virtual time");
  cb_session_result r;
  run_ok(ses, &r);
  assert_int_equal(r.all.succeeded, 40);
  assert_true(r.all.predicted);
  json_t *man = load_json(cfg.out_dir, "manifest.json");
  assert_true(json_is_true(json_object_get(man, "predicted")));
  assert_int_equal(num_at(man, "runner", "completed"), 40);
  json_decref(man);
  close_all(ses, &r, &cfg);
}

/* A stop already signalled: the runner sees it on its first tick (20 ms), sends
 * nothing more and drains; the point is written and marked. In real time, so the
 * 50 requests (about 0.1 s each, 4 at a time) cannot all be sent before that tick. */
static void test_stopped(void **state) {
  (void)state;
  cb_session_config cfg;
  small_config(&cfg, "stopped", 50);
  cfg.sim.time_scale = 1;
  volatile sig_atomic_t stop = 1;
  cfg.stop = &stop;
  cb_session *ses = open_ok(&cfg);
  cb_session_result r;
  run_ok(ses, &r);
  assert_true(r.all.interrupted);
  assert_true(r.all.requests < 50);
  json_t *man = load_json(cfg.out_dir, "manifest.json");
  assert_true(json_is_true(json_object_get(man, "interrupted")));
  assert_int_equal(num_at(man, "runner", "sent") + num_at(man, "runner", "not_sent"), 50);
  json_decref(man);
  close_all(ses, &r, &cfg);
}

/* ---- live requests -------------------------------------------------------------------- */

/* Conversations of TURNS chat turns; turn t of conversation c (index c*TURNS+t)
 * carries every earlier user message and the answers the session handed back, and
 * asks for at most 8 tokens. */
#define CONVS 3
#define TURNS 3
typedef struct live {
  int given[CONVS];            /* turns handed out */
  int answered[CONVS];         /* answers back */
  char *answer[CONVS][TURNS];  /* the answers' texts */
  int64_t prompt_tokens[CONVS][TURNS], output_tokens[CONVS][TURNS];
  cb_buf messages;
  size_t records, in_flight, max_in_flight;
} live;

static int live_next(void *ctx, cb_session_live_request *out) {
  live *l = ctx;
  int open = 0;
  for (int c = 0; c < CONVS; c++) {
    if (l->given[c] == TURNS) continue;
    open = 1;
    if (l->answered[c] < l->given[c]) continue;
    int t = l->given[c]++;
    cb_buf_reset(&l->messages);
    cb_buf_append_char(&l->messages, '[');
    for (int k = 0; k <= t; k++) {
      cb_buf_appendf(&l->messages, "%s{\"role\":\"user\",\"content\":\"conversation %d, turn %d\"}",
                     k ? "," : "", c, k);
      if (k == t) break;
      cb_buf_append_str(&l->messages, ",{\"role\":\"assistant\",\"content\":\"");
      cb_buf_append_json_string(&l->messages, l->answer[c][k], strlen(l->answer[c][k]));
      cb_buf_append_str(&l->messages, "\"}");
    }
    cb_buf_append_char(&l->messages, ']');
    *out = (cb_session_live_request){.index = (uint64_t)(c * TURNS + t), .messages_json = l->messages.data,
                                     .messages_json_len = l->messages.len, .max_tokens = 8,
                                     .extra_json = "{\"seed\":5}", .extra_json_len = 10};
    if (++l->in_flight > l->max_in_flight) l->max_in_flight = l->in_flight;
    return 1;
  }
  return open ? CB_SESSION_LIVE_WAIT : 0;
}

static void on_live_record(void *ctx, const cb_record *r) {
  live *l = ctx;
  int c = (int)(r->index / TURNS), t = (int)(r->index % TURNS);
  assert_true(cb_record_ok(r));
  assert_int_equal(t, l->answered[c]); /* in order, each once */
  l->answer[c][t] = cb_strdup(r->output_text ? r->output_text : "");
  l->prompt_tokens[c][t] = r->prompt_tokens;
  l->output_tokens[c][t] = r->output_tokens;
  l->answered[c]++;
  l->records++;
  l->in_flight--;
}

/* Each turn goes out after the answer before it, with that answer in its messages
 * (the server counts its tokens), conversations side by side up to the concurrency;
 * the manifest says the requests were live. In real time and in sim run's virtual
 * time (a source that waits for answers: CB_SESSION_LIVE_WAIT). */
static void run_live(int virtual_time) {
  cb_session_config cfg;
  small_config(&cfg, virtual_time ? "live-virtual" : "live", 1);
  cfg.virtual_time = virtual_time;
  cfg.workload.concurrency = 2;
  live l = {0};
  cb_buf_init(&l.messages, 0);
  cfg.live = live_next;
  cfg.live_ctx = &l;
  cfg.on_record = on_live_record;
  cfg.record_ctx = &l;
  cfg.max_output_text = CB_SESSION_ANSWER_MAX;
  cb_session *ses = open_ok(&cfg);
  cb_session_result r;
  run_ok(ses, &r);
  assert_int_equal(r.all.requests, CONVS * TURNS);
  assert_int_equal(l.records, CONVS * TURNS);
  assert_int_equal(l.max_in_flight, 2);
  for (int c = 0; c < CONVS; c++)
    for (int t = 1; t < TURNS; t++) /* the last prompt holds the answer before it */
      assert_true(l.prompt_tokens[c][t] >= l.prompt_tokens[c][t - 1] + l.output_tokens[c][t - 1]);
  char path[1400];
  snprintf(path, sizeof path, "%s/records.jsonl", cfg.out_dir);
  assert_int_equal(count_lines(path), CONVS * TURNS);
  json_t *man = load_json(cfg.out_dir, "manifest.json");
  assert_true(json_is_true(json_object_get(man, "live")));
  assert_int_equal(num_at(man, "runner", "sent"), CONVS * TURNS);
  json_decref(man);
  snprintf(path, sizeof path, "%s/samples.json", cfg.out_dir);
  assert_int_equal(access(path, F_OK), -1);
  close_all(ses, &r, &cfg);
  for (int c = 0; c < CONVS; c++)
    for (int t = 0; t < TURNS; t++) cb_free(l.answer[c][t]);
  cb_buf_free(&l.messages);
}

static void test_live(void **state) {
  (void)state;
  run_live(0);
  run_live(1);
}

/* open must refuse cfg with a message naming `want`, as `outcome`, and make nothing;
 * cfg is freed. */
static void refused(cb_session_config *cfg, cb_session_outcome outcome, const char *want) {
  cb_session *ses = (cb_session *)1;
  cb_error err;
  cb_session_outcome o = cb_session_open(cfg, &ses, &err);
  if (o != outcome || !strstr(err.msg, want))
    fail_msg("expected outcome %d with '%s', got %d: %s", outcome, want, o, err.msg);
  assert_null(ses);
  assert_int_equal(access(cfg->out_dir, F_OK), -1);
  cb_session_config_free(cfg);
}

static void test_bad_config(void **state) {
  (void)state;
  cb_session_config cfg;
  small_config(&cfg, "bad", 5);
  cfg.confidence = 2;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: confidence: expected 0.5 <= C < 1, got 2");

  small_config(&cfg, "bad", 5);
  cfg.url = cb_strdup("ftp://127.0.0.1/v1");
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: url: expected http://");

  small_config(&cfg, "bad", 5);
  cfg.sweep = CB_SESSION_SWEEP_RATE;
  cfg.sweep_values[0] = 2;
  cfg.sweep_values[1] = 1;
  cfg.n_sweep = 2;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: sweep_values[1]: expected a positive value above");

  small_config(&cfg, "bad", 5);
  cfg.max_concurrency = 3; /* with the default closed loop */
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: max_concurrency: applies to open-loop runs");

  small_config(&cfg, "bad", 5);
  cfg.headers[0] = "no colon";
  cfg.n_headers = 1;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: headers[0]: expected 'Name: value'");

  small_config(&cfg, "bad", 5);
  cfg.out_dir[0] = '\0';
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: out_dir");

  /* the workload is opened before anything starts: a missing dataset names its path */
  small_config(&cfg, "bad", 5);
  cfg.cls.dataset = "jsonl:/nonexistent/calibench-prompts.jsonl";
  refused(&cfg, CB_SESSION_BAD_INPUT, "/nonexistent/calibench-prompts.jsonl");

  /* live requests: one point */
  small_config(&cfg, "bad", 5);
  cfg.live = live_next;
  cfg.sweep = CB_SESSION_SWEEP_CONCURRENCY;
  cfg.sweep_values[0] = 1;
  cfg.n_sweep = 1;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: live: runs one point");

  /* live metrics: a numeric address, real time, a linger in range */
  small_config(&cfg, "bad", 5);
  cfg.metrics_listen = "localhost:9464";
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: metrics_listen: expected ADDR:PORT with a numeric address");
  small_config(&cfg, "bad", 5);
  cfg.metrics_listen = "127.0.0.1:0";
  cfg.virtual_time = 1;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: metrics_listen: a run in virtual time has no live metrics");
  small_config(&cfg, "bad", 5);
  cfg.metrics_linger_s = -1;
  refused(&cfg, CB_SESSION_BAD_INPUT, "session: metrics_linger_s: expected 0 to 86400 s, got -1");

  /* nothing listens on port 1: the target check fails, as FAILED (not bad input) */
  small_config(&cfg, "bad", 5);
  cfg.url = cb_strdup("http://127.0.0.1:1/v1");
  refused(&cfg, CB_SESSION_FAILED, "cannot reach http://127.0.0.1:1/v1/models");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_point),
      cmocka_unit_test(test_sweep),
      cmocka_unit_test(test_virtual),
      cmocka_unit_test(test_stopped),
      cmocka_unit_test(test_bad_config),
      cmocka_unit_test(test_live),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
