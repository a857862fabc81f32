/*
 * test_workload_ramp.c - ramped arrival rates (--ramp-up): the closed forms of r(t),
 * L(t) and L^-1 against each other and against their definitions; the schedule's
 * shape by a KS test on the time-changed arrivals (L(t_i) - L(t_(i-1)) are Exp(1) for
 * Poisson, Gamma(k, 1/k) for gamma) for linear and exponential ramps, with negative
 * controls that the same test rejects; constant ramps hit L(t_k) = k; shards, seeds and
 * the hash; the workload's offered rate; bad ramps refused with what is wrong.
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

static cb_workload_params ramp_params(cb_arrival_kind kind, cb_ramp_kind ramp, double r0,
                                      double r1, double d, uint64_t n) {
  cb_workload_params p = one_class_params(&one_class, 777, kind, r1);
  p.arrival.ramp = ramp;
  p.arrival.ramp_start = r0;
  p.arrival.ramp_duration_s = d;
  p.num_requests = n;
  return p;
}

/* The time-changed gaps L(t_i) - L(t_(i-1)) under the process `a` (n - 1 values). */
static double *unit_gaps(const cb_schedule *s, const cb_arrival_params *a) {
  double *g = malloc(s->count * sizeof *g);
  double prev = 0;
  for (size_t i = 1; i < s->count; i++) {
    double x = cb_arrival_integrated(a, (double)s->entries[i].offset_ns * 1e-9);
    g[i - 1] = x - prev;
    prev = x;
  }
  return g;
}

static double exp1_cdf(void *ctx, double x) {
  (void)ctx;
  return x <= 0 ? 0.0 : -expm1(-x);
}

/* Erlang (gamma of integer shape k) with mean 1: rate k. F(x) = 1 - e^-kx sum_{j<k} (kx)^j/j! */
static double erlang_unit_cdf(void *ctx, double x) {
  int k = *(const int *)ctx;
  if (x <= 0) return 0;
  double term = 1, sum = 1, y = k * x;
  for (int j = 1; j < k; j++) {
    term *= y / j;
    sum += term;
  }
  double f = 1 - exp(-y) * sum;
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

static cb_stats_ks_result ks(const double *g, size_t n, cb_stats_cdf_fn cdf, void *ctx) {
  cb_stats_ks_result r;
  assert_int_equal(cb_stats_ks_1samp(g, n, NULL, cdf, ctx, &r, NULL), CB_OK);
  return r;
}

static void test_closed_forms(void **state) {
  (void)state;
  cb_arrival_params lin = {.kind = CB_ARRIVAL_POISSON, .rate = 10, .burstiness = 1,
                           .ramp = CB_RAMP_LINEAR, .ramp_start = 2, .ramp_duration_s = 60};
  cb_arrival_params ex = lin;
  ex.ramp = CB_RAMP_EXPONENTIAL;
  ex.rate = 16;
  ex.ramp_start = 1;
  ex.ramp_duration_s = 40;
  /* the definitions: r(0) = R0, r(D/2) = the mean (linear) / geometric mean (exp.), R1 at
   * and after D */
  assert_float_equal(cb_arrival_rate_at(&lin, 0), 2, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&lin, 30), 6, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&lin, 60), 10, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&lin, 1000), 10, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&ex, 0), 1, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&ex, 20), 4, 1e-12);
  assert_float_equal(cb_arrival_rate_at(&ex, 40), 16, 1e-12);
  /* L(D): the trapezoid (2 + 10) / 2 * 60 = 360; (R1 - R0) / g with g = ln 16 / 40 */
  assert_float_equal(cb_arrival_integrated(&lin, 60), 360, 1e-9);
  assert_float_equal(cb_arrival_integrated(&ex, 40), 15 / (log(16.0) / 40), 1e-9);
  assert_float_equal(cb_arrival_integrated(&lin, 70), 460, 1e-9);
  const cb_arrival_params *ps[] = {&lin, &ex};
  for (int k = 0; k < 2; k++) {
    const cb_arrival_params *a = ps[k];
    for (double t = 0.01; t < 100; t *= 1.37) {
      /* L' = r (central difference), and L^-1 inverts L */
      double h = 1e-4 * t;
      double deriv = (cb_arrival_integrated(a, t + h) - cb_arrival_integrated(a, t - h)) / (2 * h);
      if (fabs(t - a->ramp_duration_s) > 2 * h && fabs(deriv / cb_arrival_rate_at(a, t) - 1) > 1e-6)
        fail_msg("%s: L'(%g) = %g, r = %g", cb_ramp_kind_name(a->ramp), t, deriv,
                 cb_arrival_rate_at(a, t));
      double back = cb_arrival_integrated_inverse(a, cb_arrival_integrated(a, t));
      if (fabs(back / t - 1) > 1e-9) fail_msg("%s: L^-1(L(%g)) = %g", cb_ramp_kind_name(a->ramp), t, back);
    }
  }
  /* a linear ramp from 0: L^-1 has no 0/0 */
  lin.ramp_start = 0;
  assert_float_equal(cb_arrival_integrated_inverse(&lin, 0), 0, 0);
  assert_float_equal(cb_arrival_integrated_inverse(&lin, 1), sqrt(2 * 60 / 10.0), 1e-9);
}

/* Poisson under a ramp: the time-changed gaps pass KS against Exp(1); the same times
 * read as a constant process at the ramp's mean rate, or through the other ramp
 * shape, fail it. */
static void check_poisson(cb_ramp_kind ramp, double r0, double r1, double d, size_t n,
                          cb_ramp_kind wrong) {
  cb_workload_params p = ramp_params(CB_ARRIVAL_POISSON, ramp, r0, r1, d, n);
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  assert_int_equal(s.count, n);
  assert_int_equal(s.entries[0].offset_ns, 0);
  double *g = unit_gaps(&s, &p.arrival);
  cb_stats_ks_result r = ks(g, n - 1, exp1_cdf, NULL);
  if (r.p_value < 0.01)
    fail_msg("%s ramp %g -> %g over %g s: L gaps vs Exp(1): D = %g, p = %g", cb_ramp_kind_name(ramp),
             r0, r1, d, r.d, r.p_value);
  /* arrivals during the ramp: Poisson with mean L(D), within 4 sd */
  double ld = cb_arrival_integrated(&p.arrival, d);
  size_t in_ramp = 0;
  for (size_t i = 1; i < s.count; i++) in_ramp += s.entries[i].offset_ns < (uint64_t)(d * 1e9);
  if (fabs((double)in_ramp - ld) > 4 * sqrt(ld))
    fail_msg("%zu arrivals in the ramp, want %g +- %g", in_ramp, ld, 4 * sqrt(ld));
  /* controls: the constant process of the same mean rate over the ramp, and the other
   * shape, are rejected */
  cb_arrival_params flat = p.arrival;
  flat.ramp = CB_RAMP_NONE;
  flat.rate = ld / d;
  double *gf = unit_gaps(&s, &flat);
  r = ks(gf, n - 1, exp1_cdf, NULL);
  if (r.p_value > 1e-6) fail_msg("flat control: D = %g, p = %g (want < 1e-6)", r.d, r.p_value);
  cb_arrival_params other = p.arrival;
  other.ramp = wrong;
  if (wrong == CB_RAMP_EXPONENTIAL && other.ramp_start <= 0) other.ramp_start = r1 / 64;
  double *go = unit_gaps(&s, &other);
  r = ks(go, n - 1, exp1_cdf, NULL);
  if (r.p_value > 1e-3) fail_msg("other-shape control: D = %g, p = %g (want < 1e-3)", r.d, r.p_value);
  free(g);
  free(gf);
  free(go);
  cb_schedule_free(&s);
  cb_workload_free(w);
}

static void test_poisson_linear_ks(void **state) {
  (void)state;
  check_poisson(CB_RAMP_LINEAR, 5, 50, 100, 4000, CB_RAMP_EXPONENTIAL); /* L(D) = 2750 */
  check_poisson(CB_RAMP_LINEAR, 0, 40, 100, 3000, CB_RAMP_EXPONENTIAL); /* from zero */
}

static void test_poisson_exponential_ks(void **state) {
  (void)state;
  check_poisson(CB_RAMP_EXPONENTIAL, 1, 64, 60, 3000, CB_RAMP_LINEAR); /* L(D) = 909 */
}

/* Gamma k = 4 (CV 0.5) under a ramp keeps its shape in the ramp's clock: the L gaps
 * are Gamma(4, 1/4), not Exp(1). */
static void test_gamma_ks(void **state) {
  (void)state;
  cb_ramp_kind ramps[] = {CB_RAMP_LINEAR, CB_RAMP_EXPONENTIAL};
  for (int i = 0; i < 2; i++) {
    cb_workload_params p = ramp_params(CB_ARRIVAL_GAMMA, ramps[i], 2, 40, 80, 4000);
    p.arrival.burstiness = 4;
    cb_workload *w;
    cb_schedule s = build(&p, &w);
    double *g = unit_gaps(&s, &p.arrival);
    int k = 4;
    cb_stats_ks_result r = ks(g, s.count - 1, erlang_unit_cdf, &k);
    if (r.p_value < 0.01)
      fail_msg("gamma %s: L gaps vs Gamma(4, 1/4): D = %g, p = %g", cb_ramp_kind_name(ramps[i]),
               r.d, r.p_value);
    r = ks(g, s.count - 1, exp1_cdf, NULL);
    if (r.p_value > 1e-6) fail_msg("gamma vs Exp(1) control: D = %g, p = %g", r.d, r.p_value);
    free(g);
    cb_schedule_free(&s);
    cb_workload_free(w);
  }
}

/* Constant arrivals under a ramp (k6's ramping arrival rate): L(t_k) = k exactly, up to
 * the ns the offsets are rounded to. */
static void test_constant_ramp(void **state) {
  (void)state;
  cb_workload_params p = ramp_params(CB_ARRIVAL_CONSTANT, CB_RAMP_EXPONENTIAL, 0.5, 32, 30, 2000);
  cb_workload *w;
  cb_schedule s = build(&p, &w);
  for (size_t i = 0; i < s.count; i++) {
    double x = cb_arrival_integrated(&p.arrival, (double)s.entries[i].offset_ns * 1e-9);
    if (fabs(x - (double)i) > 32 * 1e-9 + 1e-9) fail_msg("L(t_%zu) = %.12g", i, x);
  }
  cb_schedule_free(&s);
  cb_workload_free(w);
}

/* Shards of a ramped schedule are its partition; the seed decides it; the ramp is in the
 * hash; the offered rate is r at each offset. */
static void test_shards_seed_hash_rate(void **state) {
  (void)state;
  cb_workload_params p = ramp_params(CB_ARRIVAL_POISSON, CB_RAMP_LINEAR, 1, 30, 20, 600);
  cb_workload *w;
  cb_schedule whole = build(&p, &w);
  assert_true(cb_workload_ramps(w));
  assert_float_equal(cb_workload_offered_rate(w, 0), 1, 1e-12);
  assert_float_equal(cb_workload_offered_rate(w, UINT64_C(10000000000)), 15.5, 1e-9);
  assert_float_equal(cb_workload_offered_rate(w, UINT64_C(99000000000)), 30, 1e-12);
  size_t seen = 0;
  for (uint32_t k = 0; k < 3; k++) {
    cb_workload_params q = p;
    q.shard_index = k;
    q.shard_count = 3;
    cb_workload *ws;
    cb_schedule part = build(&q, &ws);
    assert_true(part.hash == whole.hash);
    for (size_t i = 0; i < part.count; i++) {
      const cb_schedule_entry *e = &part.entries[i];
      assert_true(e->index < whole.count);
      assert_memory_equal(e, &whole.entries[e->index], sizeof *e);
    }
    seen += part.count;
    cb_schedule_free(&part);
    cb_workload_free(ws);
  }
  assert_int_equal(seen, whole.count);
  cb_workload *w2;
  cb_schedule again = build(&p, &w2);
  assert_int_equal(again.count, whole.count);
  assert_memory_equal(again.entries, whole.entries, whole.count * sizeof *whole.entries);
  cb_schedule_free(&again);
  cb_workload_free(w2);
  cb_workload_params flat = p;
  flat.arrival.ramp = CB_RAMP_NONE;
  cb_workload *wf;
  assert_int_equal(cb_workload_open(&flat, &wf, NULL), CB_OK);
  assert_false(cb_workload_ramps(wf));
  assert_true(cb_workload_hash(wf) != cb_workload_hash(w));
  cb_workload_free(wf);
  /* a ramp on the common process that no class shares would ramp nothing: refused */
  cb_workload_class_params own = one_class;
  own.share = 0;
  own.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 5, .burstiness = 1};
  cb_workload_params lone = p;
  lone.classes = &own;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_workload_open(&lone, &wf, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "it would ramp nothing"));
  /* an own process may ramp; its rate is the workload's offered rate */
  lone.arrival.ramp = CB_RAMP_NONE;
  own.arrival.ramp = CB_RAMP_EXPONENTIAL;
  own.arrival.ramp_start = 0.5;
  own.arrival.ramp_duration_s = 10;
  assert_int_equal(cb_workload_open(&lone, &wf, &err), CB_OK);
  assert_true(cb_workload_ramps(wf));
  assert_float_equal(cb_workload_offered_rate(wf, UINT64_C(5000000000)), sqrt(0.5 * 5), 1e-9);
  cb_workload_free(wf);
  cb_schedule_free(&whole);
  cb_workload_free(w);
}

static void expect_invalid(const cb_arrival_params *a, const char *needle) {
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_arrival_validate(a, &err), CB_ERR_INVALID);
  if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_validation(void **state) {
  (void)state;
  cb_arrival_params a = {.kind = CB_ARRIVAL_POISSON, .rate = 10, .burstiness = 1, .trace_speed = 1,
                         .ramp = CB_RAMP_EXPONENTIAL, .ramp_start = 0, .ramp_duration_s = 10};
  expect_invalid(&a, "exponential ramp must start above 0");
  a.ramp = CB_RAMP_LINEAR;
  assert_int_equal(cb_arrival_validate(&a, NULL), CB_OK); /* linear may start at 0 */
  a.ramp_start = 10;
  expect_invalid(&a, "must be below the rate it ramps up to");
  a.ramp_start = -1;
  expect_invalid(&a, "ramp start must be >= 0");
  a.ramp_start = 1;
  a.ramp_duration_s = 0;
  expect_invalid(&a, "ramp duration must be in (0, 1e9]");
  a.ramp_duration_s = 5;
  a.kind = CB_ARRIVAL_CLOSED;
  expect_invalid(&a, "a ramp needs an open-loop rate");
  a.kind = CB_ARRIVAL_TRACE;
  expect_invalid(&a, "not trace arrivals");
  cb_ramp_kind k;
  cb_error err;
  assert_int_equal(cb_ramp_kind_parse("Exponential", &k, NULL), CB_OK);
  assert_int_equal(k, CB_RAMP_EXPONENTIAL);
  assert_int_equal(cb_ramp_kind_parse("none", &k, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "known: linear, exponential"));
  assert_string_equal(cb_ramp_kind_name(CB_RAMP_LINEAR), "linear");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_closed_forms),
      cmocka_unit_test(test_poisson_linear_ks),
      cmocka_unit_test(test_poisson_exponential_ks),
      cmocka_unit_test(test_gamma_ks),
      cmocka_unit_test(test_constant_ramp),
      cmocka_unit_test(test_shards_seed_hash_rate),
      cmocka_unit_test(test_validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
