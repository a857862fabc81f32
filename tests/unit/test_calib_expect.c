/*
 * test_calib_expect.c - `calibrate expect`: production = paper x data x environment x
 * task x safety margin, each factor from the right input with its source, worked
 * examples with their arithmetic, result directories (measured and predicted), and
 * clear errors for conflicting or bad inputs.
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

#include "calibench/calib.h"
#include "test_calib_common.h"
#include "calibench/results.h"

static char drift_path[64];

/* The classic example's drift result (test_calib_drift.c), written as `drift --out` would. */
static int write_drift(void **state) {
  (void)state;
  cb_calib_dist bench, prod, acc;
  cb_error err;
  cb_error_clear(&err);
  if (cb_calib_dist_load(&bench, data("intents_benchmark.json"), &err) ||
      cb_calib_sample_labels_load(&prod, data("intents_production.jsonl"), "intent", &err) ||
      cb_calib_label_values_load(&acc, data("intents_accuracy.json"), &err))
    return -1;
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  p.task = CB_CALIB_TASK_CLASSIFICATION;
  p.boot.replicates = 100;
  cb_calib_drift_result r;
  if (cb_calib_drift_compute(&bench, &prod, &acc, &p, &r, &err)) return -1;
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_calib_drift_write_json(&r, &out);
  snprintf(drift_path, sizeof drift_path, "/tmp/cb-calib-expect-%ld.json", (long)getpid());
  int rc = cb_results_write_file(drift_path, out.data, out.len, &err) == CB_OK ? 0 : -1;
  cb_calib_drift_result_free(&r);
  cb_buf_free(&out);
  cb_calib_dist_free(&bench);
  cb_calib_dist_free(&prod);
  cb_calib_dist_free(&acc);
  return rc;
}

static int remove_drift(void **state) {
  (void)state;
  remove(drift_path);
  return 0;
}

/* The defaults and the one required input, --paper. */
static cb_calib_expect_params with_paper(double paper) {
  cb_calib_expect_params p;
  cb_calib_expect_default_params(&p);
  p.paper = paper;
  return p;
}

/* p computes into *r. */
static void computes(const cb_calib_expect_params *p, cb_calib_expect_result *r) {
  cb_error err;
  cb_error_clear(&err);
  if (cb_calib_expect_compute(p, r, &err) != CB_OK) fail_msg("%s", err.msg);
}

/* p is refused with code and a message holding want. */
static void refused(const cb_calib_expect_params *p, cb_status code, const char *want) {
  cb_calib_expect_result r;
  cb_error err;
  cb_error_clear(&err);
  expect_error(cb_calib_expect_compute(p, &r, &err), code, &err, want);
}

/*
 * The classic chain: an intent classifier at 92% on its balanced benchmark.
 *   data:        drift result with per-intent accuracies: 0.8675 / 0.92 = 0.942935 (measured)
 *   environment: 64 concurrent requests on a deployment that holds 48 within SLO:
 *                max(0.3, 48 / 64) = 0.75 (stated)
 *   task:        the agent makes 3 tool calls: 0.95^3 = 0.857375 (stated)
 *   margin:      0.85 (default)
 *   production = 0.92 x 0.942935 x 0.75 x 0.857375 x 0.85
 *              = 0.8675 x 0.75 x 0.857375 x 0.85 = 0.474155
 */
static void test_classic_chain(void **state) {
  (void)state;
  cb_calib_expect_params p = with_paper(0.92);
  p.drift_path = drift_path;
  p.concurrency = 64;
  p.capacity = 48;
  p.tool_calls = 3;
  cb_calib_expect_result r;
  computes(&p, &r);
  check_close("data", r.data.value, 0.8675 / 0.92, 1e-12);
  assert_int_equal(r.data.source, CB_CALIB_FROM_MEASURED);
  check_close("environment", r.environment.value, 0.75, 1e-15);
  assert_int_equal(r.environment.source, CB_CALIB_FROM_INPUT);
  check_close("task", r.task.value, 0.857375, 1e-12);
  check_close("margin", r.margin.value, 0.85, 0);
  assert_int_equal(r.margin.source, CB_CALIB_FROM_DEFAULT);
  check_close("expected", r.expected, 0.8675 * 0.75 * 0.857375 * 0.85, 1e-12);
  check_close("expected by hand", r.expected, 0.474155, 1e-6);
  assert_string_equal(r.environment.formula, "max(0.3, 48 / 64) = 0.7500");
  assert_string_equal(r.task.formula, "0.95 ^ 3 = 0.8574");
  assert_string_equal(r.data.formula, "0.8675 / 0.92 = 0.9429");

  cb_buf out = {0};
  cb_calib_expect_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"kind\": \"calibrate.expect\""));
  assert_non_null(strstr(out.data, "\"measured\": [\n    \"data\"\n  ]"));
  assert_non_null(strstr(out.data, "\"stated\": [\n    \"environment\",\n    \"task\"\n  ]"));
  assert_non_null(strstr(out.data, "\"defaults\": [\n    \"safety_margin\"\n  ]"));
  assert_non_null(strstr(out.data, "\"capacity\": 48"));
  cb_buf_reset(&out);
  cb_calib_expect_format(&r, &out);
  assert_non_null(strstr(out.data, "= 0.92 x 0.9429 x 0.7500 x 0.8574 x 0.8500 = 0.4742"));
  assert_non_null(strstr(out.data, "measured: data"));
  cb_buf_free(&out);

  /* the same with the JS model instead (--js, classification): exp(-2.5 x 0.110852) */
  p = with_paper(0.92);
  p.js_bits = 0.11085192172164743;
  p.task = CB_CALIB_TASK_CLASSIFICATION;
  computes(&p, &r);
  check_close("JS data factor", r.data.value, exp(-2.5 * 0.11085192172164743), 1e-12);
  assert_int_equal(r.data.source, CB_CALIB_FROM_INPUT);
  /* 0.92 x 0.757956 x 0.95 (default environment) x 1 x 0.85 = 0.563086 */
  check_close("JS chain", r.expected, 0.92 * exp(-2.5 * 0.11085192172164743) * 0.95 * 0.85, 1e-12);
  check_close("JS chain by hand", r.expected, 0.563086, 1e-6);
}

/*
 * A drift result without per-label accuracies: the data factor is its JS model,
 * max(0.5, exp(-s JS)) with JS = 0.11085192172164743 (test_calib_drift.c), still
 * measured. s is the file's (2.5, classification) unless --task or --sensitivity is
 * given: generation exp(-1.5 JS) = 0.846811, --sensitivity 2 exp(-2 JS) = 0.801153.
 * A reweighted factor (measured per-label accuracies) wins over any s.
 */
static void test_drift_js_model(void **state) {
  (void)state;
  cb_calib_dist bench, prod;
  load_classic(&bench, &prod);
  cb_calib_drift_params dp;
  cb_calib_drift_default_params(&dp);
  dp.task = CB_CALIB_TASK_CLASSIFICATION;
  dp.boot.replicates = 0;
  cb_calib_drift_result d;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_drift_compute(&bench, &prod, NULL, &dp, &d, &err), CB_OK);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_calib_drift_write_json(&d, &out);
  char path[64];
  snprintf(path, sizeof path, "/tmp/cb-calib-expect-js-%ld.json", (long)getpid());
  assert_int_equal(cb_results_write_file(path, out.data, out.len, &err), CB_OK);
  cb_calib_drift_result_free(&d);
  cb_calib_dist_free(&bench);
  cb_calib_dist_free(&prod);

  cb_calib_expect_params p = with_paper(0.92);
  p.drift_path = path;
  cb_calib_expect_result r;
  computes(&p, &r);
  check_close("file's s", r.data.value, exp(-2.5 * CLASSIC_JS), 1e-12);
  assert_int_equal(r.data.source, CB_CALIB_FROM_MEASURED);
  assert_string_equal(r.data.formula, "max(0.5, exp(-2.5 * 0.110852)) = 0.7580");
  assert_non_null(strstr(r.data.note, "as in the drift result"));
  p.task = CB_CALIB_TASK_GENERATION;
  computes(&p, &r);
  check_close("task's s", r.data.value, 0.846811, 1e-6);
  assert_non_null(strstr(r.data.note, "from task generation"));
  p.sensitivity = 2;
  computes(&p, &r);
  check_close("given s", r.data.value, 0.801153, 1e-6);
  cb_buf_reset(&out);
  cb_calib_expect_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"sensitivity\": 2"));
  remove(path);
  /* the reweighted file: measured accuracies, s does not apply */
  p.drift_path = drift_path;
  computes(&p, &r);
  check_close("reweighted wins", r.data.value, 0.8675 / 0.92, 1e-12);
  cb_buf_free(&out);
}

/* Nothing but the paper: 0.92 x 1 x 0.95 x 1 x 0.85 = 0.7429, every factor a default. */
static void test_defaults(void **state) {
  (void)state;
  cb_calib_expect_params p = with_paper(0.92);
  cb_calib_expect_result r;
  computes(&p, &r);
  check_close("expected", r.expected, 0.7429, 1e-12);
  assert_int_equal(r.data.source, CB_CALIB_FROM_DEFAULT);
  assert_int_equal(r.environment.source, CB_CALIB_FROM_DEFAULT);
  assert_int_equal(r.task.source, CB_CALIB_FROM_DEFAULT);
  assert_int_equal(r.margin.source, CB_CALIB_FROM_DEFAULT);
  assert_non_null(strstr(r.environment.note, "--results"));
}

static void test_environment_rules(void **state) {
  (void)state;
  cb_calib_expect_params p;
  cb_calib_expect_result r;
  cb_error err;
  cb_error_clear(&err);
  p = with_paper(1);
  p.concurrency = 48;
  p.capacity = 48; /* at capacity: within */
  computes(&p, &r);
  check_close("within", r.environment.value, 0.95, 0);
  p.concurrency = 1000;
  p.capacity = 100; /* 0.1 -> the floor */
  computes(&p, &r);
  check_close("floor", r.environment.value, 0.3, 0);

  /* a measured run at the production load: 3100 tokens/s against the paper's 5000 */
  p = with_paper(5000);
  p.metric = "output_tokens_per_s";
  p.results_dir = data("run_measured");
  computes(&p, &r);
  check_close("measured", r.environment.value, 0.62, 1e-15);
  assert_int_equal(r.environment.source, CB_CALIB_FROM_MEASURED);
  /* 5000 x 1 x 0.62 x 1 x 0.85 = 2635 tokens/s */
  check_close("throughput expected", r.expected, 2635, 1e-12);
  /* a predicted run (sim run), compared on requests/s with the paper's 5 */
  p = with_paper(0.92);
  p.results_dir = data("run_predicted");
  p.env_metric = "requests_per_s";
  p.env_paper = 5;
  computes(&p, &r);
  check_close("simulated", r.environment.value, 4.1 / 5, 1e-15);
  assert_int_equal(r.environment.source, CB_CALIB_FROM_SIMULATED);
  cb_calib_factor f;
  memset(&f, 0, sizeof f);
  assert_int_equal(
      cb_calib_env_from_results(data("run_predicted"), "goodput_requests_per_s", 4, &f, &err),
      CB_OK);
  check_close("goodput", f.value, 0.95, 1e-15);
}

static void test_task_rules(void **state) {
  (void)state;
  cb_calib_expect_params p;
  cb_calib_expect_result r;
  p = with_paper(1);
  const double steps[] = {0.98, 0.9, 0.95};
  p.steps = steps;
  p.n_steps = 3;
  computes(&p, &r);
  check_close("steps", r.task.value, 0.8379, 1e-12);
  assert_string_equal(r.task.formula, "0.98 * 0.9 * 0.95 = 0.8379");
  p = with_paper(1);
  p.tool_calls = 0; /* a single step */
  computes(&p, &r);
  check_close("single step", r.task.value, 1.0, 0);
  p.tool_calls = 5;
  p.step_success = 0.9;
  computes(&p, &r);
  check_close("0.9^5", r.task.value, pow(0.9, 5), 1e-15);
  p.margin = 0.9;
  p.data_factor = 0.8;
  p.env_factor = 1.1;
  computes(&p, &r);
  check_close("stated", r.expected, 0.8 * 1.1 * pow(0.9, 5) * 0.9, 1e-12);
  assert_int_equal(r.margin.source, CB_CALIB_FROM_INPUT);
}

/* The task factor from `probe agent`'s measured per-call success (its probe.json). */
static void test_task_from_probe(void **state) {
  (void)state;
  char dir[] = "/tmp/cb_probe_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/probe.json", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("{\"probe\":\"agent\",\"version\":1,\"metrics\":{\"per_call_success\":{\"value\":0.8,"
        "\"lo\":0.7,\"hi\":0.9,\"higher_is_better\":true}},\"tool_calls\":{\"mean\":2.5}}", f);
  fclose(f);
  cb_calib_expect_params p;
  cb_calib_expect_result r;
  cb_error err;
  p = with_paper(1);
  p.task_factor_from = dir; /* the directory: its probe.json */
  computes(&p, &r);
  check_close("0.8^2.5 (the runs' mean calls)", r.task.value, pow(0.8, 2.5), 1e-12);
  assert_int_equal(r.task.source, CB_CALIB_FROM_MEASURED);
  p.task_factor_from = path;
  p.tool_calls = 3;
  computes(&p, &r);
  check_close("0.8^3", r.task.value, 0.512, 1e-12);
  p.step_success = 0.9; /* the constant and the measurement exclude each other */
  assert_int_equal(cb_calib_expect_compute(&p, &r, &err), CB_ERR_INVALID);
  p.step_success = NAN;
  f = fopen(path, "w");
  fputs("{\"probe\":\"context\",\"metrics\":{}}", f);
  fclose(f);
  assert_int_equal(cb_calib_expect_compute(&p, &r, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "key 'probe': expected \"agent\""));
  f = fopen(path, "w");
  fputs("{\"probe\":\"agent\",\"metrics\":{\"per_call_success\":{\"value\":null}}}", f);
  fclose(f);
  assert_int_equal(cb_calib_expect_compute(&p, &r, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "per_call_success.value"));
  unlink(path);
  rmdir(dir);
}

static void test_errors(void **state) {
  (void)state;
  cb_calib_expect_params p;
  cb_calib_expect_default_params(&p);
  refused(&p, CB_ERR_INVALID, "--paper must be a number > 0");
  p.paper = 0.9;
  p.js_bits = 0.1;
  p.data_factor = 0.9;
  refused(&p, CB_ERR_INVALID, "data factor: give one of --data-factor, --drift and --js");
  p = with_paper(0.9);
  p.margin = 1.2;
  refused(&p, CB_ERR_INVALID, "--margin must be in (0, 1], got 1.2");
  p = with_paper(0.9);
  p.concurrency = 10;
  refused(&p, CB_ERR_INVALID, "--concurrency and --capacity go together");
  p = with_paper(0.9);
  p.results_dir = data("run_measured");
  refused(&p, CB_ERR_INVALID, "--results needs the paper's output_tokens_per_s to compare with");
  p.env_paper = 5000;
  p.env_metric = "goodput_requests_per_s";
  refused(&p, CB_ERR_INVALID,
          "summary.json: key 'summary.throughput.goodput_requests_per_s' is null (goodput needs a "
          "run with --slo)");
  p.env_metric = "tokens";
  refused(&p, CB_ERR_INVALID, "unknown environment metric 'tokens'");
  p.env_metric = NULL;
  p.results_dir = data("no-such-dir");
  refused(&p, CB_ERR_IO, "no-such-dir/summary.json");
  p = with_paper(0.9);
  p.drift_path = data("run_measured/summary.json");
  refused(&p, CB_ERR_PARSE, "summary.json: key 'kind': expected \"calibrate.drift\"");
  p = with_paper(0.9);
  p.step_success = 0.9;
  refused(&p, CB_ERR_INVALID, "--step-success applies to --tool-calls");
  p.tool_calls = 2;
  p.task_factor = 0.9;
  refused(&p, CB_ERR_INVALID, "task factor: give one of --task-factor, --steps and --tool-calls");
  p = with_paper(0.9);
  const double bad[] = {0.9, 1.5};
  p.steps = bad;
  p.n_steps = 2;
  refused(&p, CB_ERR_INVALID, "step 2's success rate must be in (0, 1], got 1.5");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classic_chain),
      cmocka_unit_test(test_drift_js_model),
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_environment_rules),
      cmocka_unit_test(test_task_rules),
      cmocka_unit_test(test_task_from_probe),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, write_drift, remove_drift);
}
