/*
 * test_probe_agent.c - `probe agent`'s library parts without a server: the workflow
 * file (and its file:line errors), the simulated tools (templates, error rates,
 * latency distributions, seeds) and the statistics over runs with planted truth
 * (the per-call factor of success = p^calls, failure given a tool error, the path
 * entropy, the chi-square test against expected paths).
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

#include "calibench/alloc.h"
#include "probe/agent_internal.h"
#include "test_file.h"

static const char *const WORKFLOW =
    "task: \"Find the weather. Answer as ANSWER: <t>.\"\n"
    "system: be brief\n"
    "max_tokens: 64\n"
    "tools:\n"
    "  - name: search\n"
    "    description: Search the web\n"
    "    parameters: {type: object, properties: {query: {type: string}, n: {type: integer, minimum: 1}}, required: [query]}\n"
    "    latency: {dist: lognormal, mean: 200ms, sigma: 0.5}\n"
    "    result: '{\"q\": \"{{args.query}}\", \"n\": {{args.n}}, \"tool\": \"{{tool}}\", \"x\": \"{{nope}}\"}'\n"
    "    error_rate: 0.25\n"
    "    error: backend timed out\n"
    "  - name: fetch\n"
    "    latency: {dist: uniform, min: 100ms, max: 300ms}\n"
    "  - name: lookup\n"
    "    latency: 50\n"
    "success:\n"
    "  answer_regex: \"^ANSWER: [0-9]+\"\n"
    "  required_tools: [fetch]\n";

static cb_probe_agent_workflow *load_text(const char *text, cb_error *err) {
  char path[] = "/tmp/cb_workflow_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  write_file(path, text);
  cb_probe_agent_workflow *w = NULL;
  cb_probe_agent_workflow_load(path, &w, err);
  unlink(path);
  return w;
}

static void test_workflow(void **state) {
  (void)state;
  cb_error err;
  cb_probe_agent_workflow *w = load_text(WORKFLOW, &err);
  if (!w) fail_msg("%s", err.msg);
  assert_int_equal(w->n_tools, 3);
  assert_int_equal(w->max_tokens, 64);
  assert_string_equal(w->system, "be brief");
  assert_int_equal(w->tools[0].latency.kind, CB__AGENT_LAT_LOGNORMAL);
  assert_true(fabs(w->tools[2].latency.a_s - 0.05) < 1e-12); /* a bare number is ms */
  char *body = cb__agent_tools_body(w);
  /* OpenAI's tools: the schema's plain scalars typed, quoted ones strings. */
  assert_non_null(strstr(body, "{\"type\":\"function\",\"function\":{\"name\":\"search\",\"description\":"
                               "\"Search the web\",\"parameters\":{\"type\":\"object\",\"properties\":"
                               "{\"query\":{\"type\":\"string\"},\"n\":{\"type\":\"integer\",\"minimum\":1}},"
                               "\"required\":[\"query\"]}}}"));
  cb_free(body);
  assert_true(cb__agent_answer_ok(w, "ANSWER: 18", 10));
  assert_false(cb__agent_answer_ok(w, "I could not", 11));
  assert_int_equal(w->n_required, 1);
  assert_int_equal(w->required[0], 1);
  cb_probe_agent_workflow_free(w);
}

static void expect_error(const char *text, const char *want) {
  cb_error err;
  cb_probe_agent_workflow *w = load_text(text, &err);
  assert_null(w);
  if (!strstr(err.msg, want)) fail_msg("error '%s' does not say '%s'", err.msg, want);
}

static void test_workflow_errors(void **state) {
  (void)state;
  expect_error("task: t\ntools:\n  - name: a\n    colour: red\n", ":4: key 'tools': unknown key 'colour'");
  expect_error("task: t\ntools:\n  - name: a\n    error_rate: 2\n", ":4: key 'error_rate': must be in [0, 1], got 2");
  expect_error("task: t\ntools:\n  - name: a\n    latency: {dist: normal, mean: 1s}\n",
               ":4: key 'latency': normal needs mean and sd");
  expect_error("task: t\ntools:\n  - name: a\n    latency: {dist: gamma, mean: 1s}\n",
               ":4: key 'dist': expected fixed, uniform, normal or lognormal, got 'gamma'");
  expect_error("task: t\ntools:\n  - name: a\n    latency: soon\n", ":4: key 'latency': expected a duration");
  expect_error("task: t\ntools:\n  - name: a\n  - name: a\n", ":4: key 'tools': tool 'a' is defined twice");
  expect_error("task: t\ntools:\n  - description: x\n", ":3: key 'tools': each tool needs a 'name'");
  expect_error("tools:\n  - name: a\n", ":1: 'task' (the prompt) is required");
  expect_error("task: t\ntools: []\n", ":2: key 'tools': expected at least one tool");
  expect_error("task: t\ntools:\n  - name: a\nsuccess:\n  required_tools: [b]\n",
               ":5: key 'required_tools': 'b' is not one of the workflow's tools");
  expect_error("task: t\ntools:\n  - name: a\nsuccess:\n  answer_regex: \"(\"\n",
               ":5: key 'answer_regex': not a valid regular expression");
  expect_error("task: t\ntools:\n  - name: a\nsteps: 3\n", ":4: unknown key 'steps'");
  expect_error("task: [t]\n", ":1: key 'task': expected a single value");
}

static void test_tool_calls(void **state) {
  (void)state;
  cb_error err;
  cb_probe_agent_workflow *w = load_text(WORKFLOW, &err);
  cb__agent_call_result r;
  /* Find a call that did not fail: its result is the filled template. */
  uint64_t call = 1;
  for (;; call++) {
    cb__agent_tool_call(w, "search", "{\"query\": \"paris\", \"n\": 3}", 7, 0, call, &r);
    if (!r.error) break;
    cb_free(r.content);
  }
  assert_string_equal(r.content, "{\"q\": \"paris\", \"n\": 3, \"tool\": \"search\", \"x\": \"{{nope}}\"}");
  cb_free(r.content);
  /* Same seed, run and call: the same draw. */
  cb__agent_call_result a, b;
  cb__agent_tool_call(w, "search", "{}", 7, 3, 2, &a);
  cb__agent_tool_call(w, "search", "{}", 7, 3, 2, &b);
  assert_true(a.latency_s == b.latency_s && a.error == b.error);
  cb_free(a.content);
  cb_free(b.content);
  /* The planted error rate and latency means over many calls. */
  const int n = 20000;
  double errors = 0, lat = 0, lat_fetch = 0;
  for (int i = 0; i < n; i++) {
    cb__agent_tool_call(w, "search", "{}", 11, (uint64_t)i, 1, &r);
    errors += r.error;
    lat += r.latency_s;
    if (r.error) assert_string_equal(r.content, "{\"error\":\"backend timed out\"}");
    cb_free(r.content);
    cb__agent_tool_call(w, "fetch", "{}", 11, (uint64_t)i, 2, &r);
    assert_true(r.latency_s >= 0.1 && r.latency_s <= 0.3);
    lat_fetch += r.latency_s;
    cb_free(r.content);
  }
  assert_true(fabs(errors / n - 0.25) < 0.015);   /* sd 0.0031 */
  assert_true(fabs(lat / n - 0.200) < 0.004);     /* lognormal sd 0.107: mean's sd 0.00076 */
  assert_true(fabs(lat_fetch / n - 0.200) < 0.002);
  /* A tool the workflow lacks, or arguments that are not an object: an error result. */
  cb__agent_tool_call(w, "teleport", "{}", 1, 0, 1, &r);
  assert_true(r.error);
  assert_string_equal(r.content, "{\"error\":\"no such tool\"}");
  cb_free(r.content);
  cb__agent_tool_call(w, "lookup", "not json", 1, 0, 1, &r);
  assert_true(r.error);
  cb_free(r.content);
  cb__agent_tool_call(w, "lookup", " ", 1, 0, 1, &r); /* no arguments: {} */
  assert_false(r.error);
  assert_string_equal(r.content, "{\"ok\": true}");
  cb_free(r.content);
  cb_probe_agent_workflow_free(w);
}

/* A finished run with the given path (tool indices into names) and outcome. */
static void make_run(cb__agent_run *r, const char *const *names, const int *path, int calls,
                     cb__agent_outcome o, int tool_errors, double e2e) {
  memset(r, 0, sizeof *r);
  r->path_alloc = (size_t)calls + 1;
  r->path = cb_calloc(r->path_alloc, sizeof *r->path);
  r->path_names = cb_calloc(r->path_alloc, sizeof *r->path_names);
  for (int i = 0; i < calls; i++) {
    r->path[i] = path[i];
    r->path_names[i] = cb_strdup(names[path[i]]);
  }
  r->calls = calls;
  r->steps = calls + 1;
  r->outcome = o;
  r->tool_errors = tool_errors;
  r->model_s = e2e;
}

static double value(json_t *doc, const char *metric) {
  return json_number_value(json_object_get(json_object_get(json_object_get(doc, "metrics"), metric), "value"));
}

/* Success = p^calls planted with p = 0.9 over 1..4 calls; tool errors fail 80%. */
static void test_stats_planted(void **state) {
  (void)state;
  cb_error err;
  cb_probe_agent_workflow *w = load_text(WORKFLOW, &err);
  static const char *const names[] = {"search", "fetch", "lookup"};
  static const int path[] = {0, 1, 0, 1};
  const size_t n = 4000;
  cb__agent_run *runs = cb_calloc(n, sizeof *runs);
  cb_rng rng;
  cb_rng_init(&rng, 5);
  for (size_t i = 0; i < n; i++) {
    int calls = 1 + (int)(i % 4);
    int err_run = i % 10 == 0; /* 10% of runs see a tool error; 80% of them fail */
    int ok = err_run ? cb_rng_uniform(&rng) < 0.2 : cb_rng_uniform(&rng) < pow(0.9, calls);
    make_run(&runs[i], names, path, calls, ok ? CB__AGENT_SUCCESS : CB__AGENT_WRONG, err_run, 0.1 * calls);
  }
  cb_probe_agent_params p;
  cb_probe_agent_params_init(&p);
  p.bootstrap = 200;
  json_t *doc = NULL;
  assert_int_equal(cb__agent_stats(&p, w, runs, n, &doc, &err), CB_OK);
  /* The error runs pull p down a little: p^c (0.9) * 0.9 + 0.2 * 0.1 on average. */
  double pc = value(doc, "per_call_success");
  json_t *m = json_object_get(json_object_get(doc, "metrics"), "per_call_success");
  assert_true(pc > 0.86 && pc < 0.90);
  assert_true(json_number_value(json_object_get(m, "lo")) < pc && json_number_value(json_object_get(m, "hi")) > pc);
  assert_true(fabs(value(doc, "failure_given_tool_error") - 0.8) < 0.05); /* n 400: sd 0.02 */
  /* Four equally likely paths: 2 bits. */
  assert_true(fabs(value(doc, "path_entropy_bits") - 2.0) < 1e-9);
  assert_true(fabs(value(doc, "steps_mean") - 3.5) < 1e-9);
  json_t *paths = json_object_get(doc, "paths");
  assert_int_equal(json_array_size(paths), 4);
  assert_string_equal(json_string_value(json_object_get(json_array_get(paths, 0), "path")), "search");
  json_decref(doc);

  /* The chi-square test against expected paths: the right shares pass, wrong ones fail. */
  char ref[] = "/tmp/cb_paths_XXXXXX";
  int fd = mkstemp(ref);
  close(fd);
  write_file(ref, "{\"search\": 0.25, \"search > fetch\": 0.25, \"search > fetch > search\": 0.25, "
                  "\"search > fetch > search > fetch\": 0.25}");
  p.expected_paths = ref;
  assert_int_equal(cb__agent_stats(&p, w, runs, n, &doc, &err), CB_OK);
  json_t *r = json_object_get(doc, "reference");
  assert_true(json_number_value(json_object_get(r, "chi2")) < 1e-9); /* exactly 1000 each */
  assert_int_equal(json_integer_value(json_object_get(r, "df")), 3);
  json_decref(doc);
  write_file(ref, "{\"search\": 0.4, \"search > fetch\": 0.2, \"search > fetch > search\": 0.2, "
                  "\"search > fetch > search > fetch\": 0.2}");
  assert_int_equal(cb__agent_stats(&p, w, runs, n, &doc, &err), CB_OK);
  assert_true(json_number_value(json_object_get(json_object_get(doc, "reference"), "p_value")) < 1e-6);
  json_decref(doc);
  write_file(ref, "{\"search\": 0.5, \"search > fetch\": 0.2}");
  assert_int_equal(cb__agent_stats(&p, w, runs, n, &doc, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "the probabilities sum to 0.7, expected 1"));
  unlink(ref);
  for (size_t i = 0; i < n; i++) cb__agent_run_free(&runs[i]);
  cb_free(runs);
  cb_probe_agent_workflow_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_workflow),
      cmocka_unit_test(test_workflow_errors),
      cmocka_unit_test(test_tool_calls),
      cmocka_unit_test(test_stats_planted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
