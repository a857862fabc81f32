/*
 * test_gate.c - the gate: policy files (every error names file, line and key), the
 * default policy (exactly docs/gate.md's table), each kind of condition on hand-built
 * runs with known answers, rules of one scenario class, block/warn/info actions, the
 * contract's stages, the multiple-testing family, the outputs (JSON, Markdown,
 * JUnit, text) and the notification's bodies.
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

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/gate.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

static char path_buf[1024];
static const char *data(const char *name) {
  const char *dir = getenv("CB_DATA_DIR");
  snprintf(path_buf, sizeof path_buf, "%s/gate/%s", dir ? dir : "tests/data", name);
  return path_buf;
}

/* tests/data/gate/good.yaml, which must load. */
static void load_good(cb_gate_policy *p) {
  cb_error err;
  cb_error_clear(&err);
  if (cb_gate_policy_load(p, data("good.yaml"), &err) != CB_OK) fail_msg("%s", err.msg);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void test_policy_good(void **state) {
  (void)state;
  cb_gate_policy p;
  load_good(&p);
  assert_int_equal(p.n_rules, 5);
  assert_true(p.alpha == 0.05 && p.resamples == 500 && p.seed == 7);
  assert_string_equal(p.rules[0].name, "ttft-p99-slo");
  assert_true(p.rules[0].has_static && p.rules[0].static_limit == 800);
  assert_int_equal(p.rules[0].direction, CB_BETTER_LOWER);
  assert_true(p.rules[1].has_relative && fabs(p.rules[1].relative - 0.12) < 1e-15);
  assert_int_equal(p.rules[1].test, CB_GATE_TEST_MANNWHITNEY);
  assert_true(p.rules[2].has_absolute && p.rules[2].absolute == 85);
  assert_int_equal(p.rules[2].action, CB_GATE_WARN);
  assert_true(p.rules[3].has_tukey && p.rules[3].tukey_window == 72 && p.rules[3].tukey_min_runs == 5);
  assert_string_equal(p.rules[4].name, "e2e.p90@chat"); /* named after metric and class */
  assert_true(p.rules[4].static_limit == 2500);         /* 2.5s in ms */
  assert_int_equal(p.n_stages, 2);
  assert_string_equal(p.stages[1].owner, "sre-oncall");
  assert_int_equal(p.stages[1].n_requires, 3);
  assert_int_equal(p.stages[1].requires[2], 4);
  assert_int_equal(p.stages[1].action, CB_GATE_WARN);
  assert_true(cb_gate_policy_needs_baseline(&p) && cb_gate_policy_needs_history(&p));
  cb_gate_policy_free(&p);
}

/* Each bad file: the error names the file, the line and the key. */
static void test_policy_errors(void **state) {
  (void)state;
  static const struct {
    const char *file;
    long line;
    const char *needle1, *needle2;
  } cases[] = {
      {"bad_unknown_metric.yaml", 7, "key 'rules[1].metric'", "unknown metric 'ttft.p98'"},
      {"bad_missing_direction.yaml", 3, "rules[0]", "key 'direction' is required"},
      {"bad_duration.yaml", 5, "key 'rules[0].max'", "expected a duration"},
      {"bad_unknown_key.yaml", 5, "unknown key 'rules[0].maximum'", "known:"},
      {"bad_stage_item.yaml", 9, "key 'stages[0].requires[1]'", "no rule is named 'throughput'"},
      {"bad_percent.yaml", 5, "key 'rules[0].relative'", "percentage"},
      {"bad_test_itl.yaml", 5, "key 'rules[0].test'", "no per-request sample"},
      {"bad_min_for_lower.yaml", 5, "key 'rules[0].min'", "takes 'max'"},
      {"bad_number_unit.yaml", 5, "key 'rules[0].min'", "expected a number"},
      {"bad_direction.yaml", 4, "key 'rules[0].direction'", "expected lower or higher"},
      {"bad_no_condition.yaml", 2, "rules[0]", "no condition"},
      {"bad_yaml.yaml", 4, "YAML", ""},
      {"bad_duplicate_key.yaml", 6, "key 'max' repeated", "first on line 5"},
      {"bad_rule_not_mapping.yaml", 6, "key 'rules[1]'", "expected a mapping (name, metric"},
      {"bad_stage_not_mapping.yaml", 7, "key 'stages[0]'",
       "expected a mapping (name, owner, action, requires)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_gate_policy p;
    cb_error err;
    cb_error_clear(&err);
    const char *path = data(cases[i].file);
    if (cb_gate_policy_load(&p, path, &err) == CB_OK) fail_msg("%s: loaded", cases[i].file);
    char want[1100];
    snprintf(want, sizeof want, "%s:%ld:", path, cases[i].line);
    if (strncmp(err.msg, want, strlen(want)) || !strstr(err.msg, cases[i].needle1) ||
        !strstr(err.msg, cases[i].needle2))
      fail_msg("%s: message '%s' lacks '%s' / '%s' / '%s'", cases[i].file, err.msg, want,
               cases[i].needle1, cases[i].needle2);
    assert_int_equal(err.line, cases[i].line);
    assert_string_equal(err.file, path);
  }
  cb_gate_policy p;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_gate_policy_load(&p, data("no_such_file.yaml"), &err), CB_ERR_IO);
}

/* The default policy is exactly docs/gate.md's table ("Default policy"). */
static void test_policy_default(void **state) {
  (void)state;
  static const struct {
    const char *name, *metric;
    cb_store_better dir;
    double relative, absolute; /* 0 = not given */
    cb_gate_test test;
  } doc[] = {
      {"throughput", "throughput.output_tokens_per_s", CB_BETTER_HIGHER, 0.10, 0, CB_GATE_TEST_MANNWHITNEY},
      {"error-rate", "error_rate", CB_BETTER_LOWER, 0, 0.01, CB_GATE_TEST_MANNWHITNEY},
      {"ttft-p50", "ttft.p50", CB_BETTER_LOWER, 0.10, 0, CB_GATE_TEST_MANNWHITNEY},
      {"ttft-p99", "ttft.p99", CB_BETTER_LOWER, 0.25, 0, CB_GATE_TEST_BOOTSTRAP},
      {"tpot-p50", "tpot.p50", CB_BETTER_LOWER, 0.10, 0, CB_GATE_TEST_MANNWHITNEY},
      {"tpot-p99", "tpot.p99", CB_BETTER_LOWER, 0.25, 0, CB_GATE_TEST_BOOTSTRAP},
  };
  cb_gate_policy p;
  cb_gate_policy_default(&p);
  assert_int_equal(p.n_rules, sizeof doc / sizeof doc[0]);
  for (size_t i = 0; i < p.n_rules; i++) {
    const cb_gate_rule *r = &p.rules[i];
    assert_string_equal(r->name, doc[i].name);
    assert_non_null(r->metric);
    assert_string_equal(r->metric->name, doc[i].metric);
    assert_int_equal(r->direction, doc[i].dir);
    assert_int_equal(r->action, CB_GATE_BLOCK);
    assert_int_equal(r->has_relative, doc[i].relative > 0);
    assert_true(r->relative == doc[i].relative);
    assert_int_equal(r->has_absolute, doc[i].absolute > 0);
    assert_true(r->absolute == doc[i].absolute);
    assert_int_equal(r->test, doc[i].test);
    assert_false(r->has_static || r->has_tukey);
  }
  assert_true(p.alpha == 0.05 && p.correction == CB_GATE_CORRECT_HOLM);
  assert_true(p.resamples == 2000 && p.seed == 0 && p.n_stages == 0);
  assert_true(cb_gate_policy_needs_baseline(&p) && !cb_gate_policy_needs_history(&p));
  cb_gate_policy_free(&p);
}

/* ---- evaluation on hand-built runs ---------------------------------------------------- */

static void put(cb_run_data *r, const char *metric, double v) {
  cb_run_data_add_value(r, "", cb_store_metric_find(metric), v);
}

/* n TTFT samples (ns) from rng: lognormal around 20 ms, times `scale`. Their sorted
 * copy goes to *sorted; the caller frees both. */
static double *ttft_samples(cb_rng *rng, int n, double scale, double **sorted) {
  double *v = cb_malloc((size_t)n * sizeof *v), *s = cb_malloc((size_t)n * sizeof *s);
  for (int i = 0; i < n; i++) s[i] = v[i] = scale * cb_rng_lognormal(rng, log(20e6), 0.3);
  cb_stats_sort(s, (size_t)n);
  *sorted = s;
  return v;
}

/* n lognormal samples (ns) scaled by `scale`, and matching ttft.p50/p99 values. */
static void make_run(cb_run_data *r, const char *id, uint64_t seed, double scale, double tput) {
  cb_run_data_init(r);
  snprintf(r->run_id, sizeof r->run_id, "%s", id);
  enum { N = 400 };
  cb_rng rng;
  cb_rng_init(&rng, seed);
  double *s, *v = ttft_samples(&rng, N, scale, &s);
  put(r, "ttft.p50", cb_stats_quantile_sorted(s, N, 0.5) / 1e6);
  put(r, "ttft.p99", cb_stats_quantile_sorted(s, N, 0.99) / 1e6);
  put(r, "throughput.output_tokens_per_s", tput);
  put(r, "error_rate", 0);
  cb_free(s);
  cb_run_data_add_samples(r, "", "ttft", v, N);
  double *e = cb_calloc(N, sizeof *e);
  cb_run_data_add_samples(r, "", "error", e, N);
  double *bins = cb_malloc(20 * sizeof *bins);
  for (int i = 0; i < 20; i++) bins[i] = tput * (1 + 0.01 * cb_rng_normal(&rng, 0, 1));
  cb_run_data_add_samples(r, "", "throughput.output_tokens_per_s", bins, 20);
  r->has_samples = 1;
}

static cb_gate_rule rule(const char *name, const char *metric, cb_store_better dir) {
  cb_gate_rule r;
  memset(&r, 0, sizeof r);
  snprintf(r.name, sizeof r.name, "%s", name);
  r.metric = cb_store_metric_find(metric);
  r.direction = dir;
  r.action = CB_GATE_BLOCK;
  return r;
}

/* A Tukey rule over the last 72 runs, k 1.5, from 5 runs on. */
static cb_gate_rule tukey_rule(const char *name, const char *metric, cb_store_better dir) {
  cb_gate_rule r = rule(name, metric, dir);
  r.has_tukey = 1;
  r.tukey_window = 72;
  r.tukey_k = 1.5;
  r.tukey_min_runs = 5;
  return r;
}

static cb_gate_policy policy_of(cb_gate_rule *rules, size_t n) {
  cb_gate_policy p;
  memset(&p, 0, sizeof p);
  snprintf(p.source, sizeof p.source, "test");
  p.alpha = 0.05;
  p.resamples = 1000;
  p.rules = rules;
  p.n_rules = n;
  return p;
}

static void test_evaluate_conditions(void **state) {
  (void)state;
  cb_run_data base, same, slow;
  make_run(&base, "base", 1, 1.0, 1000);
  make_run(&same, "same", 2, 1.0, 1000);
  make_run(&slow, "slow", 3, 1.3, 850);
  cb_gate_rule rules[6];
  rules[0] = rule("static", "ttft.p50", CB_BETTER_LOWER);
  rules[0].has_static = 1;
  rules[0].static_limit = 22; /* ms: base ~20, slow ~26 */
  rules[1] = rule("relative+test", "ttft.p50", CB_BETTER_LOWER);
  rules[1].has_relative = 1;
  rules[1].relative = 0.10;
  rules[1].test = CB_GATE_TEST_AUTO; /* p50 -> Mann-Whitney */
  rules[2] = rule("p99-bootstrap", "ttft.p99", CB_BETTER_LOWER);
  rules[2].test = CB_GATE_TEST_AUTO; /* p99 -> bootstrap */
  rules[3] = rule("throughput", "throughput.output_tokens_per_s", CB_BETTER_HIGHER);
  rules[3].has_relative = 1;
  rules[3].relative = 0.10;
  rules[3].test = CB_GATE_TEST_MANNWHITNEY;
  rules[4] = rule("absolute-warn", "ttft.p50", CB_BETTER_LOWER);
  rules[4].has_absolute = 1;
  rules[4].absolute = 1; /* ms */
  rules[4].action = CB_GATE_WARN;
  rules[5] = rule("missing", "tpot.p50", CB_BETTER_LOWER);
  rules[5].has_static = 1;
  rules[5].static_limit = 50;
  cb_gate_policy p = policy_of(rules, 6);

  cb_gate_pair pair = {&same, &base, NULL, 0, NULL, NULL};
  cb_gate_result res;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.n_verdicts, 6);
  for (int i = 0; i < 5; i++)
    if (res.verdicts[i].status != CB_GATE_PASS)
      fail_msg("noise: rule %s: %s (%s)", rules[i].name, cb_gate_status_name(res.verdicts[i].status),
               res.verdicts[i].note);
  assert_int_equal(res.verdicts[5].status, CB_GATE_FAIL); /* missing metric fails */
  assert_non_null(strstr(res.verdicts[5].note, "missing"));
  assert_int_equal(res.verdicts[1].test, CB_GATE_TEST_MANNWHITNEY);
  assert_int_equal(res.verdicts[2].test, CB_GATE_TEST_BOOTSTRAP);
  assert_true(res.verdicts[1].p_adjusted >= res.verdicts[1].p_value);
  cb_gate_result_free(&res);

  pair.current = &slow;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  for (int i = 0; i < 5; i++)
    if (res.verdicts[i].status != CB_GATE_FAIL)
      fail_msg("regression: rule %s: %s (%s)", rules[i].name,
               cb_gate_status_name(res.verdicts[i].status), res.verdicts[i].note);
  assert_true(res.blocked && res.warned);
  assert_true(res.verdicts[1].p_value < 1e-6);
  assert_true(res.verdicts[2].ci_low > 0); /* the p99 got worse: the interval excludes 0 */
  assert_true(fabs(res.verdicts[3].change_rel + 0.15) < 1e-12);
  assert_string_equal(cb_gate_result_status(&res), "blocked");
  cb_gate_result_free(&res);

  /* No baseline: baseline conditions cannot be evaluated; static still works. */
  pair.baseline = NULL;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_FAIL);
  assert_int_equal(res.verdicts[1].status, CB_GATE_SKIP);
  assert_int_equal(res.verdicts[3].status, CB_GATE_SKIP);
  cb_gate_result_free(&res);

  /* A baseline without samples: the test is dropped, the relative condition decides. */
  cb_run_data nosamp;
  make_run(&nosamp, "nosamp", 1, 1.0, 1000);
  nosamp.has_samples = 0;
  pair.baseline = &nosamp;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[1].status, CB_GATE_FAIL);
  assert_non_null(strstr(res.verdicts[1].note, "no per-request samples"));
  assert_int_equal(res.verdicts[2].status, CB_GATE_SKIP); /* test only */
  cb_gate_result_free(&res);
  cb_run_data_free(&nosamp);

  /* A relative condition on a baseline of 0 cannot be judged, and says why. */
  cb_gate_rule zero = rule("errors-relative", "error_rate", CB_BETTER_LOWER);
  zero.has_relative = 1;
  zero.relative = 0.10;
  cb_gate_policy pz = policy_of(&zero, 1);
  pair.baseline = &base;
  assert_int_equal(cb_gate_evaluate(&pz, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_SKIP);
  assert_non_null(strstr(res.verdicts[0].note, "the baseline is 0"));
  cb_gate_result_free(&res);
  cb_run_data_free(&base);
  cb_run_data_free(&same);
  cb_run_data_free(&slow);
}

/* A scenario class's values and ttft samples (n lognormal, scaled). */
static void add_class(cb_run_data *r, const char *cls, uint64_t seed, double scale) {
  enum { N = 300 };
  cb_rng rng;
  cb_rng_init(&rng, seed);
  double *s, *v = ttft_samples(&rng, N, scale, &s);
  cb_run_data_add_value(r, cls, cb_store_metric_find("ttft.p50"),
                        cb_stats_quantile_sorted(s, N, 0.5) / 1e6);
  cb_free(s);
  cb_run_data_add_samples(r, cls, "ttft", v, N);
}

/* A rule of one class judges that class's value and samples, not the whole run's. */
static void test_evaluate_class(void **state) {
  (void)state;
  cb_run_data base, cur;
  make_run(&base, "base", 1, 1.0, 1000);
  make_run(&cur, "cur", 2, 1.0, 1000);
  add_class(&base, "chat", 11, 1.0);
  add_class(&cur, "chat", 12, 1.4); /* only the chat class got slower */
  cb_gate_rule rules[2];
  for (int i = 0; i < 2; i++) {
    rules[i] = rule(i ? "ttft-p50@chat" : "ttft-p50", "ttft.p50", CB_BETTER_LOWER);
    rules[i].has_relative = 1;
    rules[i].relative = 0.10;
    rules[i].test = CB_GATE_TEST_AUTO;
  }
  snprintf(rules[1].class_name, sizeof rules[1].class_name, "chat");
  cb_gate_policy p = policy_of(rules, 2);
  cb_gate_pair pair = {&cur, &base, NULL, 0, NULL, NULL};
  cb_gate_result res;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_PASS);
  assert_int_equal(res.verdicts[1].status, CB_GATE_FAIL);
  assert_true(res.verdicts[1].current == cb_run_data_value(&cur, "ttft.p50", "chat"));
  assert_true(res.verdicts[1].change_rel > 0.3);
  assert_int_equal(res.verdicts[1].n_current, 300); /* the class's samples, not the run's 400 */
  assert_int_equal(res.verdicts[0].n_current, 400);
  cb_gate_result_free(&res);
  cb_run_data_free(&base);
  cb_run_data_free(&cur);
}

/* Tukey on a history with known fences. */
static void test_evaluate_tukey(void **state) {
  (void)state;
  cb_gate_rule r = tukey_rule("adaptive", "ttft.p50", CB_BETTER_LOWER);
  cb_gate_policy p = policy_of(&r, 1);
  /* history 1..10: Q1 3.25, Q3 7.75, high fence 14.5 */
  cb_history h;
  h.count = 10;
  h.rows = cb_calloc(10, sizeof *h.rows);
  for (size_t i = 0; i < 10; i++) {
    h.rows[i].values = cb_malloc(sizeof(double));
    h.rows[i].values[0] = (double)(i + 1);
  }
  cb_run_data cur;
  cb_run_data_init(&cur);
  put(&cur, "ttft.p50", 14.0);
  cb_gate_pair pair = {&cur, NULL, &h, 1, NULL, NULL};
  cb_gate_result res;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_PASS);
  assert_true(res.verdicts[0].fence == 14.5 && res.verdicts[0].hist_n == 10);
  cb_gate_result_free(&res);
  cur.values[0].value = 14.6;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_FAIL);
  assert_true(res.blocked);
  cb_gate_result_free(&res);
  /* an info rule that fails neither blocks nor warns; JUnit passes it with INFO: */
  r.action = CB_GATE_INFO;
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_FAIL);
  assert_false(res.blocked || res.warned);
  assert_string_equal(cb_gate_result_status(&res), "pass");
  cb_buf ju = {0};
  snprintf(res.current_id, sizeof res.current_id, "cur");
  cb_gate_write_junit(&res, &ju);
  assert_non_null(strstr(ju.data, "failures=\"0\""));
  assert_non_null(strstr(ju.data, "<system-out>INFO: "));
  cb_buf_free(&ju);
  cb_gate_result_free(&res);
  r.action = CB_GATE_BLOCK;
  /* higher is better: the low fence, Q1 - 1.5 IQR = -3.5 */
  cb_gate_rule hi = tukey_rule("adaptive-higher", "throughput.output_tokens_per_s", CB_BETTER_HIGHER);
  cb_gate_policy ph = policy_of(&hi, 1);
  cb_run_data low;
  cb_run_data_init(&low);
  put(&low, "throughput.output_tokens_per_s", -3.4);
  pair.current = &low;
  assert_int_equal(cb_gate_evaluate(&ph, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_PASS);
  assert_true(res.verdicts[0].fence == -3.5);
  cb_gate_result_free(&res);
  low.values[0].value = -3.6;
  assert_int_equal(cb_gate_evaluate(&ph, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_FAIL);
  cb_gate_result_free(&res);
  cb_run_data_free(&low);
  pair.current = &cur;
  h.count = 4; /* fewer than min_runs */
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
  assert_int_equal(res.verdicts[0].status, CB_GATE_SKIP);
  cb_gate_result_free(&res);
  h.count = 10;
  cb_history_free(&h);
  cb_run_data_free(&cur);
}

/* The contract: a stage's required rules take its action, rules only other stages
 * require are not applicable; outputs carry the matrix. */
static void test_stages_and_outputs(void **state) {
  (void)state;
  cb_gate_policy p;
  load_good(&p);
  cb_run_data base, cur;
  make_run(&base, "base", 1, 1.0, 1000);
  make_run(&cur, "cur", 2, 1.0, 800); /* -20% throughput */
  put(&cur, "tpot.p50", 10.0);
  cb_gate_pair pair = {&cur, &base, NULL, 0, NULL, NULL};
  cb_gate_result res;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, "nope", &res, &err), CB_ERR_NOT_FOUND);
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, "prod", &res, &err), CB_OK);
  /* prod requires ttft-p99-slo, ttft-p99-risk, e2e.p90@chat; throughput-drop is only
   * quantized's: n/a; tpot-adaptive is nobody's: evaluated (skipped: no history) */
  assert_int_equal(res.verdicts[1].status, CB_GATE_NA);
  assert_int_equal(res.verdicts[3].status, CB_GATE_SKIP);
  assert_int_equal(res.verdicts[0].action, CB_GATE_WARN); /* prod's action */
  assert_int_equal(res.verdicts[4].status, CB_GATE_FAIL); /* e2e.p90 of class chat is missing */
  assert_false(res.blocked);                               /* ... but prod only warns */
  assert_true(res.warned);
  snprintf(res.current_id, sizeof res.current_id, "cur");
  snprintf(res.baseline_kind, sizeof res.baseline_kind, "dir");
  snprintf(res.baseline_id, sizeof res.baseline_id, "base");
  cb_buf j = {0}, md = {0}, ju = {0}, tx = {0};
  cb_gate_write_json(&res, &j);
  json_error_t je;
  json_t *doc = json_loads(j.data, 0, &je);
  if (!doc) fail_msg("JSON: %s at %d: %s", je.text, je.position, j.data);
  assert_string_equal(json_string_value(json_object_get(doc, "status")), "warn");
  assert_int_equal(json_array_size(json_object_get(doc, "verdicts")), 5);
  json_t *items = json_object_get(json_object_get(doc, "traceability"), "items");
  assert_int_equal(json_array_size(items), 5);
  assert_string_equal(json_string_value(json_object_get(json_array_get(items, 1), "status")), "n/a");
  json_decref(doc);
  cb_gate_write_markdown(&res, NULL, 0, &md);
  assert_non_null(strstr(md.data, "### Traceability matrix"));
  assert_non_null(strstr(md.data, "prod (checked)"));
  assert_non_null(strstr(md.data, "sre-oncall"));
  cb_gate_write_junit(&res, &ju);
  assert_non_null(strstr(ju.data, "<testsuites name=\"calibench gate\" tests=\"5\" failures=\"0\" "
                                  "errors=\"0\" skipped=\"2\">"));
  assert_int_equal(count(ju.data, "<testcase "), 5);
  assert_int_equal(count(ju.data, "</testcase>"), 5);
  assert_int_equal(count(ju.data, "<skipped message="), 2); /* the n/a and the skip */
  assert_int_equal(count(ju.data, "WARNING: "), 1);         /* e2e.p90@chat, prod warns */
  assert_int_equal(count(ju.data, "<failure"), 0);
  cb_gate_write_text(&res, &tx);
  assert_non_null(strstr(tx.data, "PASS with warnings"));
  /* every verdict states its threshold, in the text table too */
  assert_non_null(strstr(tx.data, "threshold"));
  assert_non_null(strstr(tx.data, "<= 800 ms"));
  assert_non_null(strstr(md.data, "<= 800 ms"));
  cb_gate_result_free(&res);

  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, "quantized", &res, &err), CB_OK);
  assert_int_equal(res.verdicts[1].status, CB_GATE_FAIL); /* -20% and significant */
  assert_true(res.blocked);
  cb_buf_reset(&ju);
  cb_gate_write_junit(&res, &ju);
  assert_non_null(strstr(ju.data, "<failure type=\"block\""));
  cb_gate_result_free(&res);
  cb_buf_free(&j);
  cb_buf_free(&md);
  cb_buf_free(&ju);
  cb_buf_free(&tx);
  cb_run_data_free(&base);
  cb_run_data_free(&cur);
  cb_gate_policy_free(&p);
}

/* The notification's bodies on a result with every status (prod: a warn failure, an
 * n/a, a skip) and hostile identity text, and the URL as messages show it. */
static void test_notify_payloads(void **state) {
  (void)state;
  cb_gate_policy p;
  load_good(&p);
  cb_run_data base, cur;
  make_run(&base, "base", 1, 1.0, 1000);
  make_run(&cur, "cur", 2, 1.0, 800);
  put(&cur, "tpot.p50", 10.0);
  cb_gate_pair pair = {&cur, &base, NULL, 0, NULL, NULL};
  cb_gate_result res;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_gate_evaluate(&p, &pair, 1, "prod", &res, &err), CB_OK);
  /* a run id with a control character, ill-formed UTF-8 and a Slack mention */
  snprintf(res.current_id, sizeof res.current_id, "cur\x1b[2J\xff<!here>");
  snprintf(res.baseline_kind, sizeof res.baseline_kind, "dir");
  cb_buf b = {0};
  cb_gate_notify_payload(&res, CB_GATE_NOTIFY_GENERIC, NULL, &b);
  json_error_t je;
  json_t *d = json_loads(b.data, 0, &je);
  if (!d) fail_msg("generic: %s: %s", je.text, b.data);
  assert_string_equal(json_string_value(json_object_get(d, "status")), "warn");
  assert_string_equal(json_string_value(json_object_get(json_object_get(d, "current"), "run_id")),
                      "cur\xef\xbf\xbd[2J\xef\xbf\xbd<!here>");
  assert_true(json_is_null(json_object_get(json_object_get(d, "baseline"), "run_id")));
  assert_true(json_is_null(json_object_get(d, "link")));
  json_t *rules = json_object_get(d, "rules");
  assert_int_equal(json_array_size(rules), 5);
  assert_true(json_is_true(json_object_get(json_array_get(rules, 0), "passed")));  /* pass */
  assert_true(json_is_null(json_object_get(json_array_get(rules, 1), "passed")));  /* n/a */
  assert_true(json_is_null(json_object_get(json_array_get(rules, 3), "passed")));  /* skip */
  assert_true(json_is_false(json_object_get(json_array_get(rules, 4), "passed"))); /* fail */
  /* the missing metric has no value: null, never NaN (which is not JSON) */
  assert_true(json_is_null(json_object_get(json_array_get(rules, 4), "current")));
  assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 4), "action")), "warn");
  json_t *counts = json_object_get(d, "counts");
  assert_int_equal(json_integer_value(json_object_get(counts, "failed")), 1);
  assert_int_equal(json_integer_value(json_object_get(counts, "blocking")), 0);
  assert_int_equal(json_integer_value(json_object_get(counts, "skipped")), 2);
  json_decref(d);

  cb_buf_reset(&b);
  cb_gate_notify_payload(&res, CB_GATE_NOTIFY_SLACK, "https://ci/x?a=1&b=<2>|3", &b);
  d = json_loads(b.data, 0, &je);
  if (!d) fail_msg("slack: %s: %s", je.text, b.data);
  assert_non_null(strstr(json_string_value(json_object_get(d, "text")), "calibench gate: WARN: 1 of 5 rules failed"));
  assert_null(strstr(b.data, "<!here>"));
  assert_non_null(strstr(b.data, "&lt;!here&gt;"));
  json_t *blocks = json_object_get(d, "blocks");
  assert_int_equal(json_array_size(blocks), 4); /* header, status, the failed rule, the link */
  const char *rule = json_string_value(json_object_get(json_object_get(json_array_get(blocks, 2), "text"), "text"));
  assert_non_null(strstr(rule, ":warning: *e2e.p90@chat* (warn) `e2e.p90@chat`"));
  const char *link = json_string_value(json_object_get(json_object_get(json_array_get(blocks, 3), "text"), "text"));
  assert_string_equal(link, "<https://ci/x?a=1&amp;b=&lt;2&gt;%7C3|Open the results>");
  json_decref(d);

  /* 45 failed rules (a sweep of many points): Slack takes 50 blocks, so 40 are listed
   * and a count of the rest */
  cb_gate_verdict *many = cb_calloc(45, sizeof *many);
  for (size_t i = 0; i < 45; i++) {
    many[i] = res.verdicts[4];
    snprintf(many[i].point, sizeof many[i].point, "rate=%zu", i);
  }
  cb_gate_verdict *kept = res.verdicts;
  size_t n_kept = res.n_verdicts;
  res.verdicts = many;
  res.n_verdicts = 45;
  cb_buf_reset(&b);
  cb_gate_notify_payload(&res, CB_GATE_NOTIFY_SLACK, NULL, &b);
  d = json_loads(b.data, 0, &je);
  if (!d) fail_msg("slack, 45 rules: %s", je.text);
  blocks = json_object_get(d, "blocks");
  assert_int_equal(json_array_size(blocks), 2 + 40 + 1);
  assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(blocks, 42), "text"), "text")),
                      "… and 5 more failed rules");
  json_decref(d);
  res.verdicts = kept;
  res.n_verdicts = n_kept;
  cb_free(many);
  cb_buf_free(&b);
  cb_gate_result_free(&res);
  cb_run_data_free(&base);
  cb_run_data_free(&cur);
  cb_gate_policy_free(&p);

  /* what a message may show of a notification URL: never its path, query or user */
  static const struct {
    const char *url, *shown;
  } urls[] = {
      {"https://hooks.slack.com/services/T0/B0/tok", "https://hooks.slack.com/…"},
      {"http://user:pw@x@127.0.0.1:9/a?k=v", "http://127.0.0.1:9/…"},
      {"http://127.0.0.1:9", "http://127.0.0.1:9"},
      {"http://h?token=abc", "http://h/…"},
      {"hooks.slack.com/services/x", "the notification URL"},
  };
  for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
    char shown[128];
    cb_gate_notify_shown_url(urls[i].url, shown, sizeof shown);
    if (strcmp(shown, urls[i].shown))
      fail_msg("case %zu: shown as %s, want %s", i, shown, urls[i].shown);
  }
}

/* Holm keeps the family's false-alarm rate: 6 tests on pure noise, over many trials,
 * fire together at most alpha of the time. */
static void test_family_false_alarms(void **state) {
  (void)state;
  cb_gate_rule rules[6];
  for (int i = 0; i < 6; i++) {
    char n[16];
    snprintf(n, sizeof n, "r%d", i);
    rules[i] = rule(n, i % 2 ? "ttft.p50" : "throughput.output_tokens_per_s",
                    i % 2 ? CB_BETTER_LOWER : CB_BETTER_HIGHER);
    rules[i].test = CB_GATE_TEST_MANNWHITNEY;
  }
  cb_gate_policy p = policy_of(rules, 6);
  enum { TRIALS = 300 };
  size_t alarms = 0;
  for (int t = 0; t < TRIALS; t++) {
    cb_run_data a, b;
    make_run(&a, "a", 1000 + 2 * (uint64_t)t, 1.0, 1000);
    make_run(&b, "b", 1001 + 2 * (uint64_t)t, 1.0, 1000);
    cb_gate_pair pair = {&a, &b, NULL, 0, NULL, NULL};
    cb_gate_result res;
    assert_int_equal(cb_gate_evaluate(&p, &pair, 1, NULL, &res, NULL), CB_OK);
    alarms += res.blocked;
    cb_gate_result_free(&res);
    cb_run_data_free(&a);
    cb_run_data_free(&b);
  }
  double rate = (double)alarms / TRIALS;
  if (rate > 0.05 + 3 * sqrt(0.05 * 0.95 / TRIALS))
    fail_msg("family-wise false alarms %g > alpha 0.05", rate);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_policy_good),
      cmocka_unit_test(test_policy_errors),
      cmocka_unit_test(test_policy_default),
      cmocka_unit_test(test_evaluate_conditions),
      cmocka_unit_test(test_evaluate_class),
      cmocka_unit_test(test_evaluate_tukey),
      cmocka_unit_test(test_stages_and_outputs),
      cmocka_unit_test(test_notify_payloads),
      cmocka_unit_test(test_family_false_alarms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
