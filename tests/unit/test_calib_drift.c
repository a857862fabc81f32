/*
 * test_calib_drift.c - `calibrate drift` in the library: the classic worked example
 * (an intent classifier at 92% on a balanced benchmark, production concentrated on a few
 * intents) with its arithmetic written out, labels on one side only, numeric samples on
 * shared bins, severity and factor rules, and bad inputs with errors naming file, line
 * and key.
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

#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "test_calib_common.h"

static const cb_calib_drift_row *row_of(const cb_calib_drift_result *r, const char *label) {
  for (size_t i = 0; i < r->n_rows; i++)
    if (!strcmp(r->rows[i].label, label)) return &r->rows[i];
  fail_msg("no row '%s'", label);
  return NULL;
}

/*
 * The classic example (docs/calibrate.md, "A worked example").
 * An intent classifier scores 92% on a balanced benchmark: 8 intents, 125 examples each
 * (tests/data/calib/intents_benchmark.json), so p_i = 1/8 = 0.125. In a sample of 1,000
 * production requests (intents_production.jsonl) the traffic concentrates on a few:
 *   billing 400, order_status 200, refund 100, cancel 100, shipping, account,
 *   password_reset, feedback 50 each:  q = 0.40, 0.20, 0.10, 0.10, 0.05 x 4.
 * m = (p + q) / 2 = 0.2625, 0.1625, 0.1125, 0.1125, 0.0875 x 4.
 * D(p || m) = sum p log2(p / m)
 *   = 0.125 [log2(0.125/0.2625) + log2(0.125/0.1625) + 2 log2(0.125/0.1125)
 *            + 4 log2(0.125/0.0875)]
 *   = -0.133799 - 0.047314 + 2 (0.019000) + 4 (0.064322) = 0.114175
 * D(q || m) = 0.40 log2(0.40/0.2625) + 0.20 log2(0.20/0.1625) + 2 (0.10 log2(0.10/0.1125))
 *             + 4 (0.05 log2(0.05/0.0875))
 *   = 0.243073 + 0.059912 - 0.033985 - 0.161471 = 0.107529
 * JS = (0.114175 + 0.107529) / 2 = 0.110852 bits  -> moderate (0.05 <= JS < 0.15)
 * Per-label terms (D terms of p and q over 2): billing 0.054637, order_status 0.006299,
 * refund and cancel 0.001004 each, the four others 0.011977 each.
 * KL(prod || bench) = sum q log2(8 q) = 3 - H(q) = 3 - 2.521928 = 0.478072 bits
 * KL(bench || prod) = -3 - (1/8)(log2 0.4 + log2 0.2 + 2 log2 0.1 + 4 log2 0.05) = 0.446928
 * Accuracy factor (classification, s = 2.5): max(0.5, exp(-2.5 x 0.110852))
 *   = exp(-0.277130) = 0.757956, so the JS model expects 0.92 x 0.757956 = 69.73%.
 * With the per-intent accuracies measured on the benchmark (intents_accuracy.json:
 * billing 0.80, order_status 0.85, refund 0.90, cancel 0.94, shipping 0.98, account 0.97,
 * password_reset 0.96, feedback 0.96), the balanced mean is 7.36 / 8 = 0.92, and on
 * production's mix
 *   0.40 (0.80) + 0.20 (0.85) + 0.10 (0.90) + 0.10 (0.94) + 0.05 (0.98 + 0.97 + 0.96 + 0.96)
 *   = 0.32 + 0.17 + 0.09 + 0.094 + 0.1935 = 0.8675
 * so the measured data factor is 0.8675 / 0.92 = 0.942935: the weak intents are the
 * busy ones. SciPy (1.10.1, Debian python3-scipy) agrees on JS, KL and the entropies;
 * the numbers below came from `/usr/bin/python3 gen_classic.py` run in tests/data/calib:
 *   import json, numpy as np
 *   from scipy import stats
 *   from scipy.spatial import distance
 *   bench = json.load(open("intents_benchmark.json"))
 *   labels = list(bench)
 *   prod = [json.loads(l)["intent"] for l in open("intents_production.jsonl")]
 *   p = np.array([bench[l] for l in labels], float)
 *   q = np.array([prod.count(l) for l in labels], float)
 *   eps = 1e-6
 *   sm = lambda w: (w / w.sum() + eps) / (1 + len(w) * eps)
 *   print(distance.jensenshannon(p, q, base=2) ** 2)               # 0.11085192172164743
 *   print(stats.entropy(q, p, base=2), stats.entropy(p, q, base=2)) # 0.4780719051126376
 *                                                                   # 0.4469280948873624
 *   print(stats.entropy(sm(q), sm(p), base=2),                      # 0.47806450520321525
 *         stats.entropy(sm(p), sm(q), base=2))                      # 0.44692025035203026
 *   print(stats.entropy(p, base=2), stats.entropy(q, base=2))       # 3.0 2.521928094887362
 */
static void test_classic_intent_example(void **state) {
  (void)state;
  cb_calib_dist bench, prod, acc;
  cb_error err;
  cb_error_clear(&err);
  load_classic(&bench, &prod);
  assert_int_equal(cb_calib_label_values_load(&acc, data("intents_accuracy.json"), &err), CB_OK);
  assert_int_equal(bench.len, 8);
  assert_int_equal(bench.sample_size, 0);
  assert_int_equal(prod.sample_size, 1000);
  assert_true(prod.weights[cb_calib_dist_find(&prod, "billing")] == 400);

  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  p.task = CB_CALIB_TASK_CLASSIFICATION;
  p.boot.replicates = 400;
  cb_calib_drift_result r;
  assert_int_equal(cb_calib_drift_compute(&bench, &prod, &acc, &p, &r, &err), CB_OK);

  check_close("JS", r.js_bits, 0.11085192172164743, 1e-12);
  check_close("JS by hand", r.js_bits, (0.114175 + 0.107529) / 2, 1e-6);
  check_close("KL(prod||bench)", r.kl_prod_bench_raw_bits, 0.4780719051126376, 1e-12);
  check_close("KL(bench||prod)", r.kl_bench_prod_raw_bits, 0.4469280948873624, 1e-12);
  check_close("KL(prod'||bench')", r.kl_prod_bench_bits, 0.47806450520321525, 1e-12);
  check_close("KL(bench'||prod')", r.kl_bench_prod_bits, 0.44692025035203026, 1e-12);
  check_close("H(bench)", r.entropy_bench_bits, 3.0, 1e-12);
  check_close("H(prod)", r.entropy_prod_bits, 2.521928094887362, 1e-12);
  check_close("JS distance", r.js_distance, sqrt(0.11085192172164743), 1e-12);
  assert_int_equal(r.severity, CB_CALIB_DRIFT_MODERATE);
  check_close("s", r.sensitivity, 2.5, 0);
  check_close("factor", r.accuracy_factor, exp(-2.5 * 0.11085192172164743), 1e-12);
  check_close("factor by hand", r.accuracy_factor, 0.757956, 1e-6);

  /* the table: billing first (largest |difference|), its share of JS as derived */
  assert_string_equal(r.rows[0].label, "billing");
  assert_int_equal(r.dominant, 0);
  check_close("billing difference", r.rows[0].difference, 0.4 - 0.125, 1e-12);
  check_close("billing JS term", r.rows[0].js_bits, 0.054637, 1e-5);
  check_close("refund JS term", row_of(&r, "refund")->js_bits, 0.001004, 1e-5);
  check_close("feedback JS term", row_of(&r, "feedback")->js_bits, 0.011977, 1e-5);
  double sum = 0;
  for (size_t i = 0; i < r.n_rows; i++) sum += r.rows[i].js_bits;
  check_close("sum of terms", sum, r.js_bits, 1e-12);

  /* reweighting by the per-intent accuracies */
  assert_true(r.has_reweighted);
  check_close("benchmark accuracy", r.bench_accuracy, 0.92, 1e-12);
  check_close("production accuracy", r.prod_accuracy, 0.8675, 1e-12);
  check_close("reweighted factor", r.reweighted_factor, 0.8675 / 0.92, 1e-12);
  check_close("coverage", r.prod_coverage, 1.0, 1e-12);

  /* interval: production resampled (n = 1000), the benchmark distribution held fixed */
  assert_true(r.has_interval);
  assert_int_equal(r.bench_n, 0);
  assert_int_equal(r.prod_n, 1000);
  assert_true(r.interval.lo < r.js_bits && r.js_bits < r.interval.hi);
  assert_true(r.interval.hi - r.interval.lo < 0.05);
  assert_non_null(strstr(r.interval_note, "production resampled (n = 1000)"));
  assert_non_null(strstr(r.interval_note, "benchmark held fixed"));

  /* JSON and terminal output carry the numbers */
  cb_buf out = {0};
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"kind\": \"calibrate.drift\""));
  assert_non_null(strstr(out.data, "\"js_divergence\": 0.110851921721647"));
  assert_non_null(strstr(out.data, "\"class\": \"moderate\""));
  cb_buf_reset(&out);
  cb_calib_drift_format(&r, 0, &out);
  assert_non_null(
      strstr(out.data, "max(0.5, exp(-2.5 x 0.1109)) = 0.7580 (s = 2.5, classification: 2-3)"));
  assert_non_null(strstr(out.data, "'billing': 12.50% -> 40.00% (+27.50 pp"));
  assert_non_null(strstr(out.data, "92.00% -> 86.75%"));
  cb_buf_free(&out);

  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&bench);
  cb_calib_dist_free(&prod);
  cb_calib_dist_free(&acc);
}

/*
 * Labels on one side only: "refund" only in the benchmark, "chitchat" only in production.
 * SciPy on the union (benchmark, production, labels in that order):
 *   /usr/bin/python3: p = np.array([50, 30, 20, 0.]), q = np.array([60, 0, 25, 15.])
 *   (billing, refund, cancel, chitchat; sm as in test_classic_intent_example)
 *   distance.jensenshannon(p, q, base=2)**2  = 0.23029127022407395
 *   stats.entropy(q, p, base=2) = inf, stats.entropy(p, q, base=2) = inf
 *   with smoothing 1e-6: stats.entropy(sm(q), sm(p), base=2) = 2.8174822220119258
 */
static void test_one_sided_labels(void **state) {
  (void)state;
  cb_calib_dist b, q;
  cb_calib_dist_init(&b);
  cb_calib_dist_init(&q);
  assert_int_equal(cb_calib_dist_add(&b, "billing", 50, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "refund", 30, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "cancel", 20, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "chitchat", 15, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "cancel", 25, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "billing", 60, NULL), CB_OK);
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  cb_calib_drift_result r;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_drift_compute(&b, &q, NULL, &p, &r, &err), CB_OK);
  assert_int_equal(r.n_rows, 4);
  check_close("JS", r.js_bits, 0.23029127022407395, 1e-12);
  assert_true(isinf(r.kl_prod_bench_raw_bits) && isinf(r.kl_bench_prod_raw_bits));
  check_close("smoothed KL", r.kl_prod_bench_bits, 2.8174822220119258, 1e-12);
  assert_true(isfinite(r.kl_bench_prod_bits));
  assert_int_equal(r.severity, CB_CALIB_DRIFT_SIGNIFICANT);
  assert_string_equal(r.rows[r.dominant].label, "refund"); /* 30% -> 0% */
  check_close("refund prod share", row_of(&r, "refund")->prod_share, 0.0, 0);
  check_close("chitchat bench share", row_of(&r, "chitchat")->bench_share, 0.0, 0);
  /* neither side has a sample size: no interval, and it says why */
  assert_false(r.has_interval);
  assert_non_null(strstr(r.interval_note, "--bench-n"));
  cb_buf out = {0};
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"js_interval\": null"));
  assert_non_null(strstr(out.data, "\"production_benchmark\": null")); /* infinite */
  assert_non_null(strstr(out.data, "\"reweighted\": null"));
  cb_buf_free(&out);
  cb_calib_drift_result_free(&r);
  /* with sample sizes given, both sides are resampled */
  p.bench_n = 100;
  p.prod_n = 100;
  p.boot.replicates = 200;
  assert_int_equal(cb_calib_drift_compute(&b, &q, NULL, &p, &r, &err), CB_OK);
  assert_true(r.has_interval && r.interval.lo < r.js_bits && r.js_bits < r.interval.hi);
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&b);
  cb_calib_dist_free(&q);
}

/* The same weights times 2.5e306: each side sums past DBL_MAX, which gave 0% shares, JS
 * nan and a "severe" verdict. Scaled by the largest weight first, nothing changes. */
static void test_weights_near_dbl_max(void **state) {
  (void)state;
  const double x = 2.5e306;
  cb_calib_dist b, q;
  cb_calib_dist_init(&b);
  cb_calib_dist_init(&q);
  assert_int_equal(cb_calib_dist_add(&b, "billing", 50 * x, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "refund", 30 * x, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "cancel", 20 * x, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "chitchat", 15 * x, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "cancel", 25 * x, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&q, "billing", 60 * x, NULL), CB_OK);
  assert_true(isinf(cb_calib_dist_total(&b)));
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  p.bench_n = 100;
  p.prod_n = 100;
  p.boot.replicates = 200;
  cb_calib_drift_result r;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_drift_compute(&b, &q, NULL, &p, &r, &err), CB_OK);
  check_close("JS", r.js_bits, 0.23029127022407395, 1e-12);
  check_close("smoothed KL", r.kl_prod_bench_bits, 2.8174822220119258, 1e-12);
  assert_int_equal(r.severity, CB_CALIB_DRIFT_SIGNIFICANT);
  check_close("billing bench share", row_of(&r, "billing")->bench_share, 0.5, 1e-15);
  check_close("billing prod share", row_of(&r, "billing")->prod_share, 0.6, 1e-15);
  check_close("billing bench weight", row_of(&r, "billing")->bench_weight, 50 * x, 0);
  check_close("chitchat prod weight", row_of(&r, "chitchat")->prod_weight, 15 * x, 0);
  assert_true(isfinite(r.entropy_bench_bits) && isfinite(r.accuracy_factor));
  assert_true(r.has_interval && r.interval.lo < r.js_bits && r.js_bits < r.interval.hi);
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&b);
  cb_calib_dist_free(&q);
}

/*
 * Numeric samples binned on shared edges: prompt lengths, 10 quantile bins of the pooled
 * samples. SciPy/numpy (gen_classic.py, continued):
 *   a = prompt lengths of prompt_len_benchmark.jsonl, b = of prompt_len_production.jsonl
 *   edges = np.unique(np.quantile(np.concatenate([a, b]), np.arange(11) / 10))
 *     = 4, 77, 99, 131.7, 163, 202, 245.39999999999998, 315, 408.4000000000001, 605.1, 2705
 *   ca, cb = np.histogram(a, edges)[0], np.histogram(b, edges)[0]
 *     = [44, 37, 40, 38, 46, 34, 22, 26, 9, 4], [35, 38, 46, 40, 35, 47, 56, 56, 71, 76]
 *   distance.jensenshannon(ca, cb, base=2) ** 2  = 0.11472653694950145
 *   stats.entropy(sm(cb), sm(ca), base=2)        = 0.6273681964772113
 */
static void test_numeric_binned(void **state) {
  (void)state;
  double *a, *b, *edges;
  size_t na, nb, ne;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_sample_values_load(data("prompt_len_benchmark.jsonl"), "prompt_tokens",
                                               &a, &na, &err),
                   CB_OK);
  assert_int_equal(cb_calib_sample_values_load(data("prompt_len_production.jsonl"), "prompt_tokens",
                                               &b, &nb, &err),
                   CB_OK);
  assert_int_equal(na, 300);
  assert_int_equal(nb, 500);
  cb_calib_dist db, dp;
  assert_int_equal(cb_calib_dist_bin_pair(a, na, b, nb, NULL, 0, 10, &db, &dp, &edges, &ne, &err),
                   CB_OK);
  const double want_edges[] = {
      4, 77, 99, 131.7, 163, 202, 245.39999999999998, 315, 408.4000000000001, 605.1, 2705};
  assert_int_equal(ne, 11);
  for (size_t i = 0; i < ne; i++) check_close("edge", edges[i], want_edges[i], 1e-15);
  const double ca[] = {44, 37, 40, 38, 46, 34, 22, 26, 9, 4};
  const double cb[] = {35, 38, 46, 40, 35, 47, 56, 56, 71, 76};
  assert_int_equal(db.len, 10);
  for (size_t i = 0; i < 10; i++) {
    check_close("bench count", db.weights[i], ca[i], 0);
    check_close("prod count", dp.weights[i], cb[i], 0);
  }
  assert_string_equal(db.labels[0], "[4, 77)");
  assert_string_equal(db.labels[9], "[605.1, 2705]");
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  p.boot.replicates = 200;
  cb_calib_drift_result r;
  assert_int_equal(cb_calib_drift_compute(&db, &dp, NULL, &p, &r, &err), CB_OK);
  check_close("binned JS", r.js_bits, 0.11472653694950145, 1e-12);
  check_close("binned KL", r.kl_prod_bench_bits, 0.6273681964772113, 1e-12);
  assert_string_equal(r.rows[0].label, "[4, 77)"); /* bins stay in value order */
  assert_string_equal(r.rows[r.dominant].label, "[605.1, 2705]");
  assert_true(r.has_interval && r.bench_n == 300 && r.prod_n == 500);
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&db);
  cb_calib_dist_free(&dp);
  cb_free(edges);

  /* explicit edges: values outside get their own bins */
  const double e[] = {100, 200, 400};
  assert_int_equal(cb_calib_dist_bin_pair(a, na, b, nb, e, 3, 0, &db, &dp, NULL, NULL, &err),
                   CB_OK);
  assert_int_equal(db.len, 4);
  assert_string_equal(db.labels[0], "< 100");
  assert_string_equal(db.labels[1], "[100, 200)");
  assert_string_equal(db.labels[3], ">= 400");
  check_close("total", cb_calib_dist_total(&db), 300, 0);
  cb_calib_dist_free(&db);
  cb_calib_dist_free(&dp);
  const double bad[] = {100, 50};
  expect_error(cb_calib_dist_bin_pair(a, na, b, nb, bad, 2, 0, &db, &dp, NULL, NULL, &err),
               CB_ERR_INVALID, &err, "edge 2 (50) is not above edge 1 (100)");
  cb_free(a);
  cb_free(b);
}

/*
 * The sensitivity and the smoothing are stated and can be set. On the classic example
 * (JS 0.11085192172164743, test_classic_intent_example):
 *   generation (s = 1.5):  exp(-1.5 x 0.110852) = 0.846811
 *   --sensitivity 2:       exp(-2 x 0.110852)   = 0.801153, sensitivity_from "input"
 * Disjoint labels ({a: 1} vs {b: 1}): JS = 1 bit (SciPy: jensenshannon([1, 0], [0, 1],
 * base=2)**2 = 1.0), severe, retrain, factor at the floor 0.5.
 * Smoothing 1e-3 on the one-sided case of test_one_sided_labels, SciPy 1.10.1:
 *   stats.entropy(sm(q, 1e-3), sm(p, 1e-3), base=2) = 1.3177332075838268
 *   stats.entropy(sm(p, 1e-3), sm(q, 1e-3), base=2) = 2.2660582723134466
 * with sm(w, eps) = (w / w.sum() + eps) / (1 + len(w) * eps).
 * Two JSONL samples (--field on both sides): production's sample against itself is
 * JS 0, mild, and both sides are resampled (n = 1000 each).
 */
static void test_sensitivity_smoothing_samples(void **state) {
  (void)state;
  cb_calib_dist bench, prod;
  load_classic(&bench, &prod);
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  p.boot.replicates = 0;
  p.task = CB_CALIB_TASK_GENERATION;
  cb_calib_drift_result r;
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_drift_compute(&bench, &prod, NULL, &p, &r, &err), CB_OK);
  check_close("s generation", r.sensitivity, 1.5, 0);
  check_close("generation factor", r.accuracy_factor, exp(-1.5 * CLASSIC_JS), 1e-12);
  check_close("generation factor by hand", r.accuracy_factor, 0.846811, 1e-6);
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"sensitivity_from\": \"generation: 1-2\""));
  assert_non_null(strstr(out.data, "\"js_interval_note\": \"no interval: bootstrap disabled\""));
  cb_calib_drift_result_free(&r);
  p.sensitivity = 2.0; /* overrides the task's */
  assert_int_equal(cb_calib_drift_compute(&bench, &prod, NULL, &p, &r, &err), CB_OK);
  check_close("s given", r.sensitivity, 2.0, 0);
  check_close("given factor", r.accuracy_factor, 0.801153, 1e-6);
  cb_buf_reset(&out);
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"sensitivity_from\": \"input\""));
  cb_calib_drift_result_free(&r);

  /* two samples with --field: both resampled */
  cb_calib_dist prod2;
  assert_int_equal(
      cb_calib_sample_labels_load(&prod2, data("intents_production.jsonl"), "intent", &err), CB_OK);
  cb_calib_drift_default_params(&p);
  p.boot.replicates = 50;
  assert_int_equal(cb_calib_drift_compute(&prod, &prod2, NULL, &p, &r, &err), CB_OK);
  check_close("JS of a sample with itself", r.js_bits, 0.0, 0);
  assert_int_equal(r.severity, CB_CALIB_DRIFT_MILD);
  check_close("no drift, no loss", r.accuracy_factor, 1.0, 0);
  assert_true(r.has_interval && r.bench_n == 1000 && r.prod_n == 1000);
  assert_string_equal(r.interval_note,
                      "benchmark resampled (n = 1000); production resampled (n = 1000)");
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&prod2);

  /* disjoint labels: severe, retrain, the floor */
  cb_calib_dist a, b;
  cb_calib_dist_init(&a);
  cb_calib_dist_init(&b);
  assert_int_equal(cb_calib_dist_add(&a, "a", 1, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "b", 1, NULL), CB_OK);
  cb_calib_drift_default_params(&p);
  assert_int_equal(cb_calib_drift_compute(&a, &b, NULL, &p, &r, &err), CB_OK);
  check_close("disjoint JS", r.js_bits, 1.0, 1e-12);
  assert_int_equal(r.severity, CB_CALIB_DRIFT_SEVERE);
  check_close("floor", r.accuracy_factor, 0.5, 0);
  cb_buf_reset(&out);
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"retrain\": true"));
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&a);
  cb_calib_dist_free(&b);

  /* a stated smoothing */
  cb_calib_dist_init(&a);
  cb_calib_dist_init(&b);
  assert_int_equal(cb_calib_dist_add(&a, "billing", 50, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&a, "refund", 30, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&a, "cancel", 20, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "billing", 60, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "cancel", 25, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&b, "chitchat", 15, NULL), CB_OK);
  p.kl_epsilon = 1e-3;
  assert_int_equal(cb_calib_drift_compute(&a, &b, NULL, &p, &r, &err), CB_OK);
  check_close("KL(prod'||bench'), eps 1e-3", r.kl_prod_bench_bits, 1.3177332075838268, 1e-12);
  check_close("KL(bench'||prod'), eps 1e-3", r.kl_bench_prod_bits, 2.2660582723134466, 1e-12);
  cb_buf_reset(&out);
  cb_calib_drift_write_json(&r, &out);
  assert_non_null(strstr(out.data, "\"epsilon\": 0.001"));
  assert_non_null(strstr(out.data, "\"formula\": \"(share + epsilon) / (1 + labels * epsilon)\""));
  cb_buf_reset(&out);
  cb_calib_drift_format(&r, 0, &out);
  assert_non_null(strstr(out.data, "epsilon 0.001 on each of 4 shares"));
  cb_calib_drift_result_free(&r);
  p.kl_epsilon = 1.0;
  expect_error(cb_calib_drift_compute(&a, &b, NULL, &p, &r, &err), CB_ERR_INVALID, &err,
               "KL smoothing epsilon must be in [0, 1), got 1");
  cb_calib_dist_free(&a);
  cb_calib_dist_free(&b);
  cb_buf_free(&out);
  cb_calib_dist_free(&bench);
  cb_calib_dist_free(&prod);
}

static void test_rules(void **state) {
  (void)state;
  assert_int_equal(cb_calib_severity_of(0.0), CB_CALIB_DRIFT_MILD);
  assert_int_equal(cb_calib_severity_of(0.0499), CB_CALIB_DRIFT_MILD);
  assert_int_equal(cb_calib_severity_of(0.05), CB_CALIB_DRIFT_MODERATE);
  assert_int_equal(cb_calib_severity_of(0.1499), CB_CALIB_DRIFT_MODERATE);
  assert_int_equal(cb_calib_severity_of(0.15), CB_CALIB_DRIFT_SIGNIFICANT);
  assert_int_equal(cb_calib_severity_of(0.2999), CB_CALIB_DRIFT_SIGNIFICANT);
  assert_int_equal(cb_calib_severity_of(0.30), CB_CALIB_DRIFT_SEVERE);
  assert_int_equal(cb_calib_severity_of(1.0), CB_CALIB_DRIFT_SEVERE);
  assert_non_null(strstr(cb_calib_severity_advice(CB_CALIB_DRIFT_SEVERE), "retrain"));
  check_close("factor 0", cb_calib_accuracy_factor(0.0, 2.5), 1.0, 0);
  check_close("factor", cb_calib_accuracy_factor(0.1, 2.0), exp(-0.2), 1e-15);
  /* the floor: exp(-2.5 x 0.3) = 0.472 -> 0.5 */
  check_close("floor", cb_calib_accuracy_factor(0.3, 2.5), 0.5, 0);
  assert_true(isnan(cb_calib_accuracy_factor(-0.1, 2.5)));
  check_close("s classification", cb_calib_task_sensitivity(CB_CALIB_TASK_CLASSIFICATION), 2.5, 0);
  check_close("s generation", cb_calib_task_sensitivity(CB_CALIB_TASK_GENERATION), 1.5, 0);
  check_close("s default", cb_calib_task_sensitivity(CB_CALIB_TASK_UNSPECIFIED), 2.5, 0);
  cb_calib_task t;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_task_parse("generation", &t, &err), CB_OK);
  assert_int_equal(t, CB_CALIB_TASK_GENERATION);
  expect_error(cb_calib_task_parse("ranking", &t, &err), CB_ERR_INVALID, &err,
               "unknown task type 'ranking' (known: classification, generation)");
}

static void test_bad_inputs(void **state) {
  (void)state;
  cb_calib_dist d;
  cb_error err;
  cb_error_clear(&err);
  expect_error(cb_calib_dist_load(&d, data("empty.json"), &err), CB_ERR_INVALID, &err,
               "empty.json:1: the distribution is empty (no labels)");
  expect_error(cb_calib_dist_load(&d, data("negative_weight.json"), &err), CB_ERR_INVALID, &err,
               "negative_weight.json:3: label 'refund': weight -5 is negative");
  expect_error(
      cb_calib_dist_load(&d, data("string_weight.json"), &err), CB_ERR_PARSE, &err,
      "string_weight.json:3: label 'refund': expected a number (the weight), got a string 'many'");
  expect_error(cb_calib_dist_load(&d, data("repeated_label.json"), &err), CB_ERR_PARSE, &err,
               "repeated_label.json:4: key 'billing' repeated (first on line 2)");
  /* the one YAML loader's refusals (util/yaml_doc.c), and a key that is not a scalar */
  expect_error(cb_calib_dist_load(&d, data("complex_key.yaml"), &err), CB_ERR_PARSE, &err,
               "complex_key.yaml:2:18: a mapping key must be a plain value");
  expect_error(cb_calib_dist_load(&d, data("alias_weight.yaml"), &err), CB_ERR_PARSE, &err,
               "alias_weight.yaml:2: YAML aliases are not supported");
  expect_error(cb_calib_dist_load(&d, data("two_documents.yaml"), &err), CB_ERR_PARSE, &err,
               "two_documents.yaml:2: more than one YAML document");
  expect_error(cb_calib_dist_load(&d, data("zero_weights.json"), &err), CB_ERR_INVALID, &err,
               "zero_weights.json:1: every weight is 0");
  expect_error(cb_calib_dist_load(&d, data("no-such-file.json"), &err), CB_ERR_IO, &err,
               "no-such-file.json");
  expect_error(cb_calib_dist_load(&d, data("intents_production.jsonl"), &err), CB_ERR_PARSE, &err,
               "intents_production.jsonl:2");
  expect_error(cb_calib_sample_labels_load(&d, data("missing_field.jsonl"), "intent", &err),
               CB_ERR_PARSE, &err, "missing_field.jsonl:3: key 'intent' missing");
  expect_error(cb_calib_sample_labels_load(&d, data("bad_label.jsonl"), "intent", &err),
               CB_ERR_PARSE, &err,
               "bad_label.jsonl:3: key 'intent': expected a label (a string, an integer or a "
               "boolean), got an array");
  expect_error(cb_calib_sample_labels_load(&d, data("bad_json.jsonl"), "intent", &err),
               CB_ERR_PARSE, &err, "bad_json.jsonl:2:");
  expect_error(cb_calib_sample_labels_load(&d, data("empty.jsonl"), "intent", &err), CB_ERR_INVALID,
               &err, "empty.jsonl: the sample is empty");
  expect_error(cb_calib_sample_labels_load(&d, data("intents_production.jsonl"), NULL, &err),
               CB_ERR_INVALID, &err, "needs --field");
  expect_error(cb_calib_label_values_load(&d, data("accuracy_above_one.json"), &err),
               CB_ERR_INVALID, &err,
               "accuracy_above_one.json:1: label 'refund': accuracy 1.2 is above 1");
  double *v;
  size_t n;
  expect_error(
      cb_calib_sample_values_load(data("intents_production.jsonl"), "intent", &v, &n, &err),
      CB_ERR_PARSE, &err,
      "intents_production.jsonl:1: key 'intent': expected a number, got a string");
  expect_error(cb_calib_sample_values_load(data("intents_production.jsonl"), NULL, &v, &n, &err),
               CB_ERR_PARSE, &err, "expected a number (or give --field), got an object");

  /* nested fields by dotted path; integer labels */
  cb_calib_dist_init(&d);
  cb_calib_dist e;
  cb_calib_dist_init(&e);
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  cb_calib_drift_result r;
  expect_error(cb_calib_drift_compute(&d, &e, NULL, &p, &r, &err), CB_ERR_INVALID, &err,
               "the benchmark distribution is empty");
  assert_int_equal(cb_calib_dist_add(&d, "a", 1, NULL), CB_OK);
  assert_int_equal(cb_calib_dist_add(&e, "a", 0, NULL), CB_OK);
  expect_error(cb_calib_drift_compute(&d, &e, NULL, &p, &r, &err), CB_ERR_INVALID, &err,
               "every production weight is 0");
  expect_error(cb_calib_dist_add(&d, "b", -1, &err), CB_ERR_INVALID, &err, "label 'b': weight -1");
  assert_int_equal(cb_calib_dist_add(&e, "b", 1, NULL), CB_OK);
  p.sensitivity = -1;
  expect_error(cb_calib_drift_compute(&d, &e, NULL, &p, &r, &err), CB_ERR_INVALID, &err,
               "sensitivity must be > 0, got -1");
  cb_calib_dist_free(&d);
  cb_calib_dist_free(&e);
}

static void test_nested_field_and_many_labels(void **state) {
  (void)state;
  char path[] = "/tmp/cb-calib-drift-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(
      f,
      "{\"meta\": {\"intent\": 3}}\n{\"meta\": {\"intent\": 3}}\n{\"meta\": {\"intent\": true}}\n");
  fclose(f);
  cb_calib_dist d;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_sample_labels_load(&d, path, "meta.intent", &err), CB_OK);
  assert_int_equal(d.len, 2);
  assert_string_equal(d.labels[0], "3");
  assert_true(d.weights[0] == 2 && d.sample_size == 3);
  assert_string_equal(d.labels[1], "true");
  cb_calib_dist_free(&d);
  remove(path);
  /* the label table grows and finds labels by hash */
  cb_calib_dist_init(&d);
  char label[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(label, sizeof label, "l%d", i % 2500);
    assert_int_equal(cb_calib_dist_add(&d, label, 1, NULL), CB_OK);
  }
  assert_int_equal(d.len, 2500);
  assert_int_equal(cb_calib_dist_find(&d, "l1234"), 1234);
  assert_true(d.weights[1234] == 2);
  assert_int_equal(cb_calib_dist_find(&d, "nope"), -1);
  cb_calib_dist_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classic_intent_example),
      cmocka_unit_test(test_one_sided_labels),
      cmocka_unit_test(test_weights_near_dbl_max),
      cmocka_unit_test(test_numeric_binned),
      cmocka_unit_test(test_sensitivity_smoothing_samples),
      cmocka_unit_test(test_rules),
      cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_nested_field_and_many_labels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
