/*
 * test_probe_context.c - the parts of `probe context` that need no server: prompts of
 * exact length with the needles where asked, RULER's string match, the breakpoint
 * rule and its bootstrap interval.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/probe_context.h"

static size_t occurrences(const char *s, const char *pat) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, pat)); p++) n++;
  return n;
}

static void test_prompt_exact_length(void **state) {
  (void)state;
  cb_probe_context_params p;
  cb_probe_context_params_init(&p);
  p.seed = 11;
  cb_buf b = {0};
  cb_error err;
  static const size_t lengths[] = {100, 1000, 4096, 20000};
  for (size_t i = 0; i < 4; i++) {
    cb_probe_context_needle nd;
    assert_int_equal(cb_probe_context_prompt(&p, 0, lengths[i], 0.5, 2, 0, &b, &nd, &err), CB_OK);
    assert_int_equal(nd.tokens, lengths[i]);
    assert_int_equal(cb_workload_approx_count(NULL, b.data, b.len), lengths[i]);
    char needle[128];
    snprintf(needle, sizeof needle, "One of the special magic numbers for %s is: %s.", nd.key, nd.values[0]);
    assert_non_null(strstr(b.data, needle));
    assert_int_equal(occurrences(b.data, "special magic numbers for "), 2); /* needle, question */
    char question[128];
    snprintf(question, sizeof question, "What are all the special magic numbers for %s mentioned "
             "in the provided text?", nd.key);
    assert_non_null(strstr(b.data, question));
    assert_int_equal(strlen(b.data) - (size_t)(strstr(b.data, question) - b.data), strlen(question));
  }
  cb_buf_free(&b);
}

/* Where the needle lands: its offset over the question's, near the depth asked. */
static double placed(const cb_probe_context_params *p, double depth, size_t trial) {
  cb_buf b = {0};
  cb_error err;
  cb_probe_context_needle nd;
  assert_int_equal(cb_probe_context_prompt(p, 0, 8000, depth, trial, 0, &b, &nd, &err), CB_OK);
  const char *q = strstr(b.data, "\nWhat are all");
  const char *n = strstr(b.data, "One of the special magic");
  double share = (double)(n - b.data) / (double)(q - b.data);
  cb_buf_free(&b);
  return share;
}

static void test_prompt_depth_and_kinds(void **state) {
  (void)state;
  cb_probe_context_params p;
  cb_probe_context_params_init(&p);
  assert_true(placed(&p, 0, 0) < 0.01);
  assert_true(fabs(placed(&p, 0.25, 0) - 0.25) < 0.02);
  assert_true(fabs(placed(&p, 0.5, 1) - 0.5) < 0.02);
  assert_true(placed(&p, 1, 0) > 0.98);

  cb_buf a = {0}, b = {0};
  cb_error err;
  cb_probe_context_needle na, nb;
  /* deterministic; another trial asks another key */
  assert_int_equal(cb_probe_context_prompt(&p, 0, 2000, 0.5, 0, 0, &a, &na, &err), CB_OK);
  assert_int_equal(cb_probe_context_prompt(&p, 0, 2000, 0.5, 0, 0, &b, &nb, &err), CB_OK);
  assert_string_equal(a.data, b.data);
  assert_int_equal(cb_probe_context_prompt(&p, 0, 2000, 0.5, 1, 0, &b, &nb, &err), CB_OK);
  assert_true(strcmp(na.values[0], nb.values[0]) || strcmp(na.key, nb.key));

  p.needle = CB_PROBE_NEEDLE_MULTI_VALUE;
  p.values = 3;
  assert_int_equal(cb_probe_context_prompt(&p, 0, 2000, 0.3, 0, 0, &a, &na, &err), CB_OK);
  assert_int_equal(na.n_values, 3);
  assert_int_equal(na.tokens, 2000);
  for (size_t v = 0; v < 3; v++) {
    assert_non_null(strstr(a.data, na.values[v]));
    for (size_t w = 0; w < v; w++) assert_string_not_equal(na.values[v], na.values[w]);
  }
  p.needle = CB_PROBE_NEEDLE_MULTI_KEY;
  p.keys = 5;
  assert_int_equal(cb_probe_context_prompt(&p, 0, 2000, 0.3, 0, 0, &a, &na, &err), CB_OK);
  assert_int_equal(na.distractors, 4);
  assert_int_equal(occurrences(a.data, "is: "), 5);
  /* pressure: 10 distractors per 1k tokens, most within a few scales of the needle */
  p.needle = CB_PROBE_NEEDLE_SINGLE;
  assert_int_equal(cb_probe_context_prompt(&p, 0, 4000, 0.5, 0, 10, &a, &na, &err), CB_OK);
  assert_int_equal(na.distractors, 40);
  assert_int_equal(na.tokens, 4000);
  assert_int_equal(occurrences(a.data, "is: "), 41);
  const char *q = strstr(a.data, "\nWhat are all");
  char mine[64];
  snprintf(mine, sizeof mine, "for %s is: ", na.key);
  double at = (double)(strstr(a.data, mine) - a.data), near = 0;
  for (const char *s = a.data; (s = strstr(s, "is: ")); s++)
    near += fabs((double)(s - a.data) - at) < 4 * p.pressure_scale * (double)(q - a.data);
  assert_true(near >= 38); /* P(|Exp| > 4 scales) = e^-4: ~0.7 of 40 expected */
  cb_buf_free(&a);
  cb_buf_free(&b);
}

static void test_score(void **state) {
  (void)state;
  cb_probe_context_needle nd = {.n_values = 2};
  strcpy(nd.values[0], "1234567");
  strcpy(nd.values[1], "7654321");
  assert_true(cb_probe_context_score(&nd, "They are 1234567 and 7654321.") == 1);
  assert_true(cb_probe_context_score(&nd, "Only 7654321.") == 0.5);
  assert_true(cb_probe_context_score(&nd, "none") == 0);
  assert_true(cb_probe_context_score(&nd, NULL) == 0);
  strcpy(nd.values[0], "AbC");
  nd.n_values = 1;
  assert_true(cb_probe_context_score(&nd, "the answer: abc") == 1); /* case-insensitive */
}

static void test_breakpoint(void **state) {
  (void)state;
  static const double hold[] = {1, 1, 1, 0.5, 1, 1, 1, 1, 1, 1}; /* 0.95 */
  static const double fall[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0};   /* 0.1 */
  static const double edge[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0.5}; /* 0.85 */
  cb_probe_context_level lv[] = {{1000, hold, 10}, {2000, hold, 10}, {3000, edge, 10},
                                 {3500, fall, 10}, {4000, hold, 10}};
  size_t fail;
  /* 0.85 is within 0.1 of 0.95; 3500 falls; 4000 holding again does not count */
  assert_int_equal(cb_probe_context_breakpoint(lv, 5, 0.1, &fail), 3000);
  assert_int_equal(fail, 3);
  assert_int_equal(cb_probe_context_breakpoint(lv, 5, 0.05, &fail), 2000);
  assert_int_equal(fail, 2);
  assert_int_equal(cb_probe_context_breakpoint(lv, 3, 0.1, &fail), 3000);
  assert_int_equal(fail, 3); /* censored: every level holds */

  /* well separated: every resample agrees */
  cb_probe_context_level clean[] = {{1000, hold, 10}, {2000, hold, 10}, {3000, fall, 10}};
  cb_probe_context_interval iv;
  cb_probe_context_breakpoint_interval(clean, 3, 0.3, 500, 0.95, 1, &iv);
  assert_true(iv.lo == 2000 && iv.hi == 2000 && iv.agree > 0.99);
  /* 0.85 against 0.95 with tolerance 0.1 is a coin toss under resampling */
  cb_probe_context_breakpoint_interval(lv, 4, 0.1, 2000, 0.95, 1, &iv);
  assert_true(iv.lo <= 2000 && iv.hi == 3000);
  assert_true(iv.agree > 0.2 && iv.agree < 0.9);
}

static void test_params_check(void **state) {
  (void)state;
  cb_probe_context_params p;
  cb_error err;
  cb_probe_context_params_init(&p);
  assert_int_equal(cb_probe_context_params_check(&p, &err), CB_OK);
  p.lengths[2] = p.lengths[1];
  assert_int_equal(cb_probe_context_params_check(&p, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "--lengths: expected increasing"));
  cb_probe_context_params_init(&p);
  p.depths[0] = 1.5;
  assert_int_equal(cb_probe_context_params_check(&p, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "--depths"));
}

/* The probe borrows the session config and gives it back as it came: a caller may run
 * it again, or read its dataset, after the probe's state is gone. */
static void test_run_gives_config_back(void **state) {
  (void)state;
  char dir[] = "/tmp/cb-probe-run-XXXXXX";
  assert_non_null(mkdtemp(dir));
  cb_session_config cfg;
  cb_session_config_init(&cfg);
  cfg.sim.time_scale = 0.01;
  cfg.no_report = 1;
  cfg.no_server_metrics = 1;
  snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s/run", dir);
  const char *dataset = cfg.cls.dataset;
  uint64_t n = cfg.workload.num_requests;
  cb_probe_context_params p;
  cb_probe_context_params_init(&p);
  p.lengths[0] = 100;
  p.lengths[1] = 200;
  p.n_lengths = 2;
  p.depths[0] = 0.5;
  p.n_depths = 1;
  p.trials = 1;
  p.bisect_rounds = 0;
  p.bootstrap = 10;
  cb_error err;
  json_t *doc = NULL;
  assert_int_equal(cb_probe_context_run(&p, &cfg, &doc, &err), CB_SESSION_OK);
  assert_non_null(doc);
  assert_ptr_equal(cfg.cls.dataset, dataset);
  assert_int_equal(cfg.workload.num_requests, n);
  assert_null(cfg.on_record);
  assert_non_null(strstr(cfg.out_dir, "/run"));
  json_decref(doc);
  cb_session_config_free(&cfg);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prompt_exact_length),
      cmocka_unit_test(test_prompt_depth_and_kinds),
      cmocka_unit_test(test_score),
      cmocka_unit_test(test_breakpoint),
      cmocka_unit_test(test_params_check),
      cmocka_unit_test(test_run_gives_config_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
