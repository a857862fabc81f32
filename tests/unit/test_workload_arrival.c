/*
 * test_workload_arrival.c - the arrival processes as the schedule produces them:
 * Poisson gaps pass a KS test against the exponential of the asked rate and fail it at
 * a wrong rate; gamma gaps have the asked mean and CV; constant gaps are constant with
 * no drift; durations, counts, warm-up, trace timestamps and speed; closed loop.
 * All with fixed seeds, so every number here is reproducible.
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

#include "calibench/stats.h"
#include "calibench/workload.h"
#include "test_workload_common.h"

static cb_workload_class_params one_class;

/* One small class, seeded, `kind` arrivals at `rate`; n requests (0: the default). */
static cb_workload_params base_params(cb_arrival_kind kind, double rate, uint64_t n) {
  cb_workload_params p = one_class_params(&one_class, 20240917, kind, rate);
  if (n) p.num_requests = n;
  return p;
}

/* Gaps between consecutive entries, in seconds (n - 1 values). */
static double *gaps_s(const cb_schedule *s) {
  double *g = malloc(s->count * sizeof *g);
  for (size_t i = 1; i < s->count; i++)
    g[i - 1] = (double)(s->entries[i].offset_ns - s->entries[i - 1].offset_ns) * 1e-9;
  return g;
}

static double expon_cdf(void *ctx, double x) {
  double rate = *(const double *)ctx;
  return x <= 0 ? 0.0 : -expm1(-rate * x);
}

static void test_poisson_ks(void **state) {
  (void)state;
  cb_workload_params p = base_params(CB_ARRIVAL_POISSON, 50.0, 5001);
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  assert_int_equal(s.count, 5001);
  assert_int_equal(s.entries[0].offset_ns, 0); /* the run starts with a request */
  double *g = gaps_s(&s);
  size_t n = s.count - 1;
  cb_stats_ks_result r;
  double rate = 50.0;
  assert_int_equal(cb_stats_ks_1samp(g, n, NULL, expon_cdf, &rate, &r, NULL), CB_OK);
  if (r.p_value < 0.01)
    fail_msg("Poisson(50) gaps vs Exp(50): D = %g, p = %g (want p >= 0.01)", r.d, r.p_value);
  /* 10% and 20% off: D ~ 0.039 and ~0.08 with n = 5000, far beyond chance. */
  rate = 45.0;
  assert_int_equal(cb_stats_ks_1samp(g, n, NULL, expon_cdf, &rate, &r, NULL), CB_OK);
  if (r.p_value > 1e-3) fail_msg("vs Exp(45): D = %g, p = %g (want p < 1e-3)", r.d, r.p_value);
  rate = 40.0;
  assert_int_equal(cb_stats_ks_1samp(g, n, NULL, expon_cdf, &rate, &r, NULL), CB_OK);
  if (r.p_value > 1e-10) fail_msg("vs Exp(40): D = %g, p = %g (want p < 1e-10)", r.d, r.p_value);
  /* The true process: the last arrival is where the gaps put it (mean gap 1/50 s within
   * 4 standard errors, 4/sqrt(5000) = 5.7%), not rescaled to exactly 100 s. */
  double last = (double)s.entries[n].offset_ns * 1e-9;
  if (fabs(last / n - 0.02) > 0.02 * 4 / sqrt((double)n))
    fail_msg("mean gap %g s, want 0.02 s", last / n);
  assert_true(s.entries[n].offset_ns != UINT64_C(100000000000));
  free(g);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

/*
 * Gamma gaps, shape k, scale 1/(R k): mean 1/R, CV c = 1/sqrt(k). By the delta method
 * the sample CV of n gamma values has variance c^2 (1/2 + 1/(2k)) / n (from the gamma's
 * skewness 2/sqrt(k) and excess kurtosis 6/k); the test allows 4 standard errors, and
 * 4 c / sqrt(n) relative for the mean.
 */
static void check_gamma(double k) {
  enum { N = 20001 };
  cb_workload_params p = base_params(CB_ARRIVAL_GAMMA, 10.0, N);
  p.arrival.burstiness = k;
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  double *g = gaps_s(&s);
  cb_stats_moments m;
  cb_stats_moments_init(&m);
  for (size_t i = 0; i < N - 1; i++) cb_stats_moments_add(&m, g[i]);
  double c = 1.0 / sqrt(k), n = N - 1;
  double cv = cb_stats_moments_std_sample(&m) / cb_stats_moments_mean(&m);
  double cv_tol = 4 * sqrt(c * c * (0.5 + 0.5 / k) / n);
  if (fabs(cv - c) > cv_tol) fail_msg("gamma k=%g: CV %g, want %g +- %g", k, cv, c, cv_tol);
  double mean_tol = 0.1 * 4 * c / sqrt(n);
  if (fabs(cb_stats_moments_mean(&m) - 0.1) > mean_tol)
    fail_msg("gamma k=%g: mean gap %g, want 0.1 +- %g", k, cb_stats_moments_mean(&m), mean_tol);
  free(g);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

static void test_gamma_cv(void **state) {
  (void)state;
  check_gamma(0.25); /* CV 2: bursty */
  check_gamma(1.0);  /* CV 1 */
  check_gamma(4.0);  /* CV 0.5: smoother than Poisson */
}

static void test_constant(void **state) {
  (void)state;
  cb_workload_params p = base_params(CB_ARRIVAL_CONSTANT, 3.0, 100000);
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  /* Times are k / rate rounded to the ns: gaps within 1 ns of 1/3 s, no drift. */
  for (size_t i = 0; i < s.count; i++) {
    assert_int_equal(s.entries[i].offset_ns, (uint64_t)llround((double)i / 3.0 * 1e9));
    if (i) {
      uint64_t gap = s.entries[i].offset_ns - s.entries[i - 1].offset_ns;
      assert_true(gap == 333333333 || gap == 333333334);
    }
  }
  assert_int_equal(s.entries[99999].offset_ns, UINT64_C(33333000000000));
  cb_schedule_free(&s);
  cb_workload_free(w);
}

static void test_duration_count_warmup(void **state) {
  (void)state;
  cb_workload_params p = base_params(CB_ARRIVAL_POISSON, 100.0, 0);
  p.duration_ns = UINT64_C(10000000000); /* 10 s */
  p.warmup_ns = UINT64_C(2000000000);
  p.warmup_requests = 10;
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  /* All arrivals with t < 10 s: about 1 + 1000 (Poisson: +-4 sqrt(1000) = 126). */
  if (fabs((double)s.count - 1001) > 126) fail_msg("%zu arrivals in 10 s at 100/s", s.count);
  assert_int_equal(s.total_count, s.count);
  uint64_t warm = 0;
  for (size_t i = 0; i < s.count; i++) {
    const cb_schedule_entry *e = &s.entries[i];
    assert_true(e->offset_ns < p.duration_ns);
    assert_int_equal(e->index, i);
    int want = i < 10 || e->offset_ns < p.warmup_ns;
    assert_int_equal(e->warmup, want);
    warm += e->warmup;
  }
  assert_int_equal(s.warmup_count, warm);
  assert_true(s.entries[s.count - 1].offset_ns > UINT64_C(9900000000)); /* ran to the end */
  cb_schedule_free(&s);
  cb_workload_free(w);

  /* Both bounds: whichever comes first. */
  p.num_requests = 50;
  s = build(&p, &w);
  assert_int_equal(s.count, 50);
  cb_schedule_free(&s);
  cb_workload_free(w);

  /* No bound: the schedule refuses, the iterator streams. */
  p.num_requests = 0;
  p.duration_ns = 0;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_workload_open(&p, &w, &err), CB_OK);
  assert_int_equal(cb_workload_schedule(w, &s, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "no end"));
  cb_workload_free(w);
}

static void test_closed_loop(void **state) {
  (void)state;
  cb_workload_params p = base_params(CB_ARRIVAL_CLOSED, 0, 0);
  p.concurrency = 8;
  cb_workload *w;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_workload_open(&p, &w, &err), CB_OK);
  assert_true(cb_workload_is_closed_loop(w));
  cb_workload_iter *it;
  assert_int_equal(cb_workload_iter_new(w, &it, &err), CB_OK);
  cb_schedule_entry e;
  for (uint64_t i = 0; i < 3000; i++) {
    assert_int_equal(cb_workload_iter_next(it, &e), 1);
    assert_int_equal(e.index, i);
    assert_int_equal(e.offset_ns, 0);
  }
  cb_workload_iter_free(it);
  cb_workload_free(w);
}

static void test_trace_times_and_speed(void **state) {
  (void)state;
  char spec[1100];
  snprintf(spec, sizeof spec, "trace:%s", fixture("mooncake_conversation_first200.jsonl"));
  cb_workload_params p = base_params(CB_ARRIVAL_TRACE, 0, 0);
  one_class.dataset = spec;
  p.arrival.trace_speed = 2.0;
  cb_workload *w;
  cb_schedule s = build(&p, &w); /* bounded by the trace itself */
  assert_int_equal(s.count, 200);
  assert_int_equal(s.entries[0].offset_ns, 0);
  assert_int_equal(s.entries[199].offset_ns, UINT64_C(36000000000)); /* 72 s / 2 */
  assert_int_equal(s.entries[199].input_len, 19978);
  assert_int_equal(s.entries[199].output_len, 448);
  for (size_t i = 0; i < 200; i++) assert_int_equal(s.entries[i].item, i);
  cb_schedule_free(&s);
  cb_workload_free(w);

  p.arrival.trace_speed = 1.0;
  p.duration_ns = UINT64_C(30000000000);
  s = build(&p, &w);
  for (size_t i = 0; i < s.count; i++) assert_true(s.entries[i].offset_ns < p.duration_ns);
  assert_true(s.count > 0 && s.count < 200);
  cb_schedule_free(&s);
  cb_workload_free(w);

  /* Azure: 7-digit fractions to the ns. */
  snprintf(spec, sizeof spec, "trace:%s", fixture("azure_code_2023_first200.csv"));
  p.duration_ns = 0;
  s = build(&p, &w);
  assert_int_equal(s.count, 200);
  assert_int_equal(s.entries[1].offset_ns, 52000000);
  assert_int_equal(s.entries[199].offset_ns, UINT64_C(199089585000));
  cb_schedule_free(&s);
  cb_workload_free(w);

  /* Trace arrivals need a trace. */
  one_class.dataset = "synthetic";
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_workload_open(&p, &w, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "trace arrivals need a trace dataset"));
}

static void test_arrival_names_and_validation(void **state) {
  (void)state;
  cb_arrival_kind k;
  assert_int_equal(cb_arrival_kind_parse("Gamma", &k, NULL), CB_OK);
  assert_int_equal(k, CB_ARRIVAL_GAMMA);
  assert_string_equal(cb_arrival_kind_name(CB_ARRIVAL_POISSON), "poisson");
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_arrival_kind_parse("bursty", &k, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "known: closed, constant, poisson, gamma, trace"));
  cb_arrival_params a = {.kind = CB_ARRIVAL_POISSON, .rate = 0.0,
                         .burstiness = 1.0, .trace_speed = 1.0};
  assert_int_equal(cb_arrival_validate(&a, &err), CB_ERR_INVALID);
  a = (cb_arrival_params){.kind = CB_ARRIVAL_GAMMA, .rate = 5.0, .burstiness = -1.0,
                          .trace_speed = 1.0};
  assert_int_equal(cb_arrival_validate(&a, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "burstiness"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_poisson_ks),
      cmocka_unit_test(test_gamma_cv),
      cmocka_unit_test(test_constant),
      cmocka_unit_test(test_duration_count_warmup),
      cmocka_unit_test(test_closed_loop),
      cmocka_unit_test(test_trace_times_and_speed),
      cmocka_unit_test(test_arrival_names_and_validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
