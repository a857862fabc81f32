/*
 * test_calib_cost.c - `calibrate cost`: cost per 1,000 requests from per-token and
 * GPU-hour prices (stated, measured and predicted throughputs), accuracy per unit cost,
 * the cheapest candidate within a tolerance, and candidates files with errors naming
 * file, line and key.
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

static const cb_calib_candidate *cand(const cb_calib_cost_set *s, const char *model) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->candidates[i].model, model)) return &s->candidates[i];
  fail_msg("no candidate '%s'", model);
  return NULL;
}

/*
 * tests/data/calib/candidates.yaml, 600 input and 150 output tokens per request:
 *   frontier-api          93%    600 x 0.0025 + 150 x 0.010   = 1.5 + 1.5   = 3.00 per 1k
 *   mid-api               90%    600 x 0.00015 + 150 x 0.0006 = 0.09 + 0.09 = 0.18
 *   llama-3.1-70b-2xh100  90.5%  (eval_70b.json metrics.accuracy); 2 GPUs x 2.50/h at
 *                                4.1 req/s (run_predicted, simulated):
 *                                2 x 2.5 x 1000 / (3600 x 4.1) = 5000 / 14760 = 0.338753
 *   llama-3.1-8b-1xl40s   84%    1 GPU x 0.90/h at 6 req/s: 900 / 21600 = 0.041667
 * Reference: the most accurate, frontier-api (93%). Within 5% (relative):
 * accuracy >= 0.93 x 0.95 = 0.8835, so frontier, mid and 70b; the cheapest is mid-api,
 * 94% cheaper at -3 pp. Accuracy per unit cost is highest for the 8b: 0.84 / 0.041667
 * = 20.16.
 */
static void test_candidates_example(void **state) {
  (void)state;
  cb_calib_cost_set set;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_cost_load(data("candidates.yaml"), &set, &err), CB_OK);
  assert_int_equal(set.n, 4);
  assert_string_equal(set.currency, "USD");
  cb_calib_cost_params p;
  cb_calib_cost_default_params(&p);
  cb_calib_cost_result r;
  assert_int_equal(cb_calib_cost_compute(&set, &p, &r, &err), CB_OK);
  check_close("frontier", cand(&set, "frontier-api")->cost_per_1k_requests, 3.0, 1e-12);
  check_close("mid", cand(&set, "mid-api")->cost_per_1k_requests, 0.18, 1e-12);
  check_close("70b", cand(&set, "llama-3.1-70b-2xh100")->cost_per_1k_requests, 5000.0 / 14760.0,
              1e-12);
  check_close("8b", cand(&set, "llama-3.1-8b-1xl40s")->cost_per_1k_requests, 900.0 / 21600.0,
              1e-12);
  check_close("70b accuracy from eval", cand(&set, "llama-3.1-70b-2xh100")->accuracy, 0.905, 0);
  assert_int_equal(cand(&set, "llama-3.1-70b-2xh100")->throughput_source, CB_CALIB_FROM_SIMULATED);
  check_close("mid accuracy from 90%", cand(&set, "mid-api")->accuracy, 0.90, 1e-15);
  check_close("per 1k correct", cand(&set, "frontier-api")->cost_per_1k_correct, 3.0 / 0.93, 1e-12);
  check_close("accuracy per cost", cand(&set, "llama-3.1-8b-1xl40s")->accuracy_per_cost, 20.16,
              1e-12);
  assert_string_equal(set.candidates[r.reference].model, "frontier-api");
  check_close("threshold", r.threshold, 0.8835, 1e-12);
  assert_string_equal(set.candidates[r.cheapest].model, "mid-api");
  assert_string_equal(set.candidates[r.best_value].model, "llama-3.1-8b-1xl40s");
  assert_false(cand(&set, "llama-3.1-8b-1xl40s")->within_tolerance);
  assert_true(cand(&set, "llama-3.1-70b-2xh100")->within_tolerance);
  const char *order[] = {"llama-3.1-8b-1xl40s", "mid-api", "llama-3.1-70b-2xh100", "frontier-api"};
  for (size_t k = 0; k < 4; k++) assert_string_equal(set.candidates[r.order[k]].model, order[k]);

  cb_buf out;
  cb_buf_init(&out, 0);
  cb_calib_cost_write_json(&set, &r, &out);
  assert_non_null(strstr(out.data, "\"kind\": \"calibrate.cost\""));
  assert_non_null(strstr(out.data, "\"cost_formula\": \"600 x 0.0025 + 150 x 0.01 = 3\""));
  assert_non_null(strstr(out.data, "\"saving_vs_reference\": 0.94"));
  cb_buf_reset(&out);
  cb_calib_cost_format(&set, &r, &out);
  assert_non_null(strstr(out.data,
                         "'mid-api': 0.18 USD per 1k requests at 90.00% (94.0% cheaper than "
                         "'frontier-api', -3.00 pp accuracy)"));
  cb_buf_free(&out);
  cb_calib_cost_result_free(&r);

  /* 2 accuracy points: only >= 91% qualifies, the reference itself */
  p.tolerance = 0.02;
  p.tolerance_points = true;
  assert_int_equal(cb_calib_cost_compute(&set, &p, &r, &err), CB_OK);
  check_close("threshold pp", r.threshold, 0.91, 1e-12);
  assert_string_equal(set.candidates[r.cheapest].model, "frontier-api");
  cb_calib_cost_result_free(&r);
  /* from mid-api, 10% relative: >= 0.81, so the 8b qualifies and is cheapest */
  p.tolerance = 0.10;
  p.tolerance_points = false;
  p.reference = "mid-api";
  assert_int_equal(cb_calib_cost_compute(&set, &p, &r, &err), CB_OK);
  assert_string_equal(set.candidates[r.cheapest].model, "llama-3.1-8b-1xl40s");
  cb_calib_cost_result_free(&r);
  p.reference = "gpt-9";
  expect_error(cb_calib_cost_compute(&set, &p, &r, &err), CB_ERR_NOT_FOUND, &err,
               "--reference 'gpt-9' is not a candidate");
  /* --input-tokens/--output-tokens override the file for candidates without their own */
  p.reference = NULL;
  p.input_tokens = 1000;
  p.output_tokens = 500;
  assert_int_equal(cb_calib_cost_compute(&set, &p, &r, &err), CB_OK);
  check_close("frontier 1000/500", cand(&set, "frontier-api")->cost_per_1k_requests, 2.5 + 5.0,
              1e-12);
  cb_calib_cost_result_free(&r);
  cb_calib_cost_set_free(&set);
}

/* Write `text` to a temporary file; its path goes to `path` (PATH_MAX-ish). */
static void write_tmp(char *path, size_t n, const char *text) {
  snprintf(path, n, "/tmp/cb-calib-cost-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
}

static void load_error(const char *text, cb_status code, const char *want) {
  char path[64];
  write_tmp(path, sizeof path, text);
  cb_calib_cost_set set;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_calib_cost_load(path, &set, &err);
  remove(path);
  if (st == CB_OK) {
    cb_calib_cost_set_free(&set);
    fail_msg("loaded without error; want '%s'", want);
  }
  expect_error(st, code, &err, want);
  assert_non_null(strstr(err.msg, path)); /* the file is named */
}

static void test_bad_candidates(void **state) {
  (void)state;
  load_error("candidates:\n  - model: a\n    accuracy: 0.9\n    price_in: 1\n", CB_ERR_PARSE,
             ":4: unknown key 'price_in' (known: model, accuracy, eval");
  load_error("currency: EUR\ncandiates: []\n", CB_ERR_PARSE, ":2: unknown key 'candiates'");
  load_error("- accuracy: 0.9\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n", CB_ERR_PARSE,
             ":1: candidate: key 'model' missing");
  load_error("- model: a\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n", CB_ERR_PARSE,
             ":1: candidate 'a': key 'accuracy' missing");
  load_error("- model: a\n  accuracy: 92\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n",
             CB_ERR_INVALID,
             ":2: candidate 'a': key 'accuracy': 92 is not in [0, 1] (write 0.92 or 92%)");
  load_error("- model: a\n  accuracy: 0.9\n  price_input_per_1k: -1\n  price_output_per_1k: 1\n",
             CB_ERR_INVALID, ":3: candidate 'a': key 'price_input_per_1k': -1 is out of range");
  load_error("- model: a\n  accuracy: 0.9\n  price_input_per_1k: cheap\n  price_output_per_1k: 1\n",
             CB_ERR_PARSE,
             ":3: candidate 'a': key 'price_input_per_1k': expected a number, got a string");
  load_error("- model: a\n  accuracy: 0.9\n  price_input_per_1k: 1\n", CB_ERR_PARSE,
             ":1: candidate 'a': key 'price_output_per_1k' missing");
  load_error("- model: a\n  accuracy: 0.9\n", CB_ERR_PARSE, "candidate 'a': no price");
  load_error(
      "- model: a\n  accuracy: 0.9\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n"
      "  gpu_hour_price: 2\n",
      CB_ERR_INVALID, "candidate 'a': give per-token prices or a GPU-hour price");
  load_error("- model: a\n  accuracy: 0.9\n  gpu_hour_price: 2\n", CB_ERR_PARSE,
             "candidate 'a': a GPU-hour price needs exactly one of throughput_rps");
  load_error(
      "- model: a\n  accuracy: 0.9\n  gpu_hour_price: 2\n  throughput_rps: 1\n"
      "  throughput_tokens_per_s: 100\n",
      CB_ERR_PARSE, "got 2");
  load_error(
      "- model: a\n  accuracy: 0.9\n  eval: x.json\n  price_input_per_1k: 1\n"
      "  price_output_per_1k: 1\n",
      CB_ERR_INVALID, ":2: candidate 'a': give 'accuracy' or 'eval', not both");
  load_error(
      "- model: a\n  eval: /nonexistent/eval.json\n  price_input_per_1k: 1\n"
      "  price_output_per_1k: 1\n",
      CB_ERR_IO, ":2: candidate 'a': key 'eval': /nonexistent/eval.json");
  load_error("- model: a\n  accuracy: 0.9\n  gpu_hour_price: 2\n  results: /nonexistent/run\n",
             CB_ERR_IO, ":4: candidate 'a': key 'results': /nonexistent/run/summary.json");
  load_error(
      "- model: a\n  accuracy: 0.9\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n"
      "- model: a\n  accuracy: 0.8\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n",
      CB_ERR_INVALID, ":5: candidate 'a' repeated (first on line 1)");
  load_error("candidates: []\n", CB_ERR_INVALID, ":1: no candidates");
  load_error("model: a\n", CB_ERR_PARSE, ":1: unknown key 'model'");
  load_error("- [1, 2]\n", CB_ERR_PARSE, ":1: a candidate must be a mapping");
  load_error("- model: a\n  accuracy: [0.9\n", CB_ERR_PARSE, ":");
}

/* JSON works too (libyaml reads it as flow YAML), with eval results by dotted key, a
 * calibrate expect result as the eval (its "expected"), and tokens per candidate. */
static void test_json_candidates(void **state) {
  (void)state;
  char expect_path[64], path[64], text[1024];
  write_tmp(expect_path, sizeof expect_path,
            "{\"schema_version\": 1, \"kind\": \"calibrate.expect\", \"expected\": 0.7429}\n");
  snprintf(text, sizeof text,
           "{\"currency\": \"EUR\", \"candidates\": [\n"
           "  {\"model\": \"a\", \"eval\": \"%s\", \"price_input_per_1k\": 0.001,\n"
           "   \"price_output_per_1k\": 0.002, \"input_tokens\": 100, \"output_tokens\": 50},\n"
           "  {\"model\": \"b\", \"accuracy\": \"70%%\", \"gpu_hour_price\": 1.8,\n"
           "   \"throughput_tokens_per_s\": 900, \"output_tokens\": 300}]}\n",
           expect_path);
  write_tmp(path, sizeof path, text);
  cb_calib_cost_set set;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_cost_load(path, &set, &err), CB_OK);
  assert_string_equal(set.currency, "EUR");
  cb_calib_cost_params p;
  cb_calib_cost_default_params(&p);
  cb_calib_cost_result r;
  assert_int_equal(cb_calib_cost_compute(&set, &p, &r, &err), CB_OK);
  check_close("a accuracy = expect's expected", set.candidates[0].accuracy, 0.7429, 0);
  check_close("a cost", set.candidates[0].cost_per_1k_requests, 100 * 0.001 + 50 * 0.002, 1e-12);
  /* 900 tokens/s / 300 tokens = 3 req/s; 1.8 x 1000 / (3600 x 3) = 0.1667 */
  check_close("b rps", set.candidates[1].throughput_rps, 3.0, 1e-15);
  check_close("b cost", set.candidates[1].cost_per_1k_requests, 1800.0 / 10800.0, 1e-12);
  /* 0.70 >= 0.7429 x 0.95 = 0.7058? no: a is the only one within 5% */
  assert_int_equal(r.cheapest, 0);
  cb_calib_cost_result_free(&r);
  cb_calib_cost_set_free(&set);
  remove(path);

  /* per-token prices without token counts */
  write_tmp(path, sizeof path,
            "- model: a\n  accuracy: 0.9\n  price_input_per_1k: 1\n  price_output_per_1k: 1\n");
  assert_int_equal(cb_calib_cost_load(path, &set, &err), CB_OK);
  expect_error(cb_calib_cost_compute(&set, &p, &r, &err), CB_ERR_INVALID, &err,
               ":1: candidate 'a': per-token prices need the tokens per request");
  p.tolerance = 1.5;
  expect_error(cb_calib_cost_compute(&set, &p, &r, &err), CB_ERR_INVALID, &err,
               "--tolerance must be in");
  cb_calib_cost_set_free(&set);
  remove(path);
  remove(expect_path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_candidates_example),
      cmocka_unit_test(test_bad_candidates),
      cmocka_unit_test(test_json_candidates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
