/*
 * test_stats.c - exact quantiles and moments against numpy, and the histogram's
 * error bound, merging, range reporting and text encoding.
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

#include "calibench/rng.h"
#include "calibench/stats.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* |got - want| <= rel * |want| (so want == 0 must be hit exactly). */
static void check_rel(const char *what, double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (relative tolerance %g)", what, got, want, rel);
}

/* ---- exact quantiles and moments vs numpy ------------------------------------------ */

/*
 * Expected values from numpy 1.24.2 (Debian python3-numpy), produced by
 *   /usr/bin/python3 - <<'EOF'
 *   import numpy as np
 *   def c(xs): return ", ".join(repr(float(x)) for x in xs)
 *   for name, x, pct in [("one", [42.5], [0, 25, 50, 100]),
 *                        ("two", [3.0, 10.0], [0, 30, 50, 99, 100]),
 *                        ("ties", [1, 2, 2, 2, 3, 3, 7], [0, 10, 25, 50, 75, 90, 100]),
 *                        ("rand17", np.random.default_rng(20240601).lognormal(3.0, 1.0, 17),
 *                         [0, 50, 90, 99, 99.9, 100])]:
 *       print(name, "x:", c(x))
 *       print(name, "pct:", c(pct))
 *       print(name, "want:", c(np.percentile(x, pct)))
 *   x = np.random.default_rng(7).gamma(2.0, 150.0, 25)
 *   print("summary x:", c(x))
 *   print("summary want:", c([x.mean(), x.std(), x.std() / x.mean(), x.min(),
 *         *np.percentile(x, [50, 90, 95, 99, 99.9]), x.max()]))
 *   print("moments want:", c([x.mean(), x.var(), x.var(ddof=1), x.std(), x.std(ddof=1)]))
 *   EOF
 * Percentiles are passed to C as q = pct / 100.0, the division numpy.percentile does.
 */
typedef struct quantile_case {
  const char *name;
  double x[17];
  size_t n;
  double pct[7];
  double want[7];
  size_t n_pct;
} quantile_case;

static const quantile_case quantile_cases[] = {
    {"one", {42.5}, 1, {0, 25, 50, 100}, {42.5, 42.5, 42.5, 42.5}, 4},
    {"two", {3.0, 10.0}, 2, {0, 30, 50, 99, 100}, {3.0, 5.1, 6.5, 9.93, 10.0}, 5},
    {"ties",
     {1, 2, 2, 2, 3, 3, 7},
     7,
     {0, 10, 25, 50, 75, 90, 100},
     {1.0, 1.6, 2.0, 2.0, 3.0, 4.600000000000001, 7.0},
     7},
    {"rand17 (unsorted)",
     {38.39419223109235, 32.11492239967296, 10.559008578502326, 6.182615187733999,
      17.379817046351892, 66.91735805554923, 76.21694496983943, 49.81426572190491,
      28.40497852118236, 99.48776531425351, 68.91265381176717, 16.113903907958253,
      6.9450929427223445, 13.94932625587192, 13.196893194077665, 39.945223882812876,
      3.006822993444216},
     17,
     {0, 50, 90, 99, 99.9, 100},
     {3.006822993444216, 28.40497852118236, 71.83437027499608, 95.76443405914725,
      99.11543218874293, 99.48776531425351},
     6},
};

static void test_quantile_numpy(void **state) {
  (void)state;
  for (size_t c = 0; c < ARRAY_LEN(quantile_cases); c++) {
    const quantile_case *qc = &quantile_cases[c];
    double sorted[17];
    memcpy(sorted, qc->x, qc->n * sizeof *sorted);
    cb_stats_sort(sorted, qc->n);
    for (size_t i = 0; i < qc->n_pct; i++) {
      char what[64];
      snprintf(what, sizeof what, "%s at percentile %g", qc->name, qc->pct[i]);
      double got = cb_stats_quantile_sorted(sorted, qc->n, qc->pct[i] / 100.0);
      check_rel(what, got, qc->want[i], 1e-12);
    }
  }
}

static void test_quantile_edges(void **state) {
  (void)state;
  double x[] = {1.0, 2.0};
  assert_true(isnan(cb_stats_quantile_sorted(x, 0, 0.5)));
  assert_true(isnan(cb_stats_quantile_sorted(x, 2, -0.01)));
  assert_true(isnan(cb_stats_quantile_sorted(x, 2, 1.01)));
  assert_true(isnan(cb_stats_quantile_sorted(x, 2, NAN)));
  double with_nan[] = {3.0, NAN, -1.0, 2.0};
  cb_stats_sort(with_nan, 4);
  assert_true(with_nan[0] == -1.0 && with_nan[1] == 2.0 && with_nan[2] == 3.0);
  assert_true(isnan(with_nan[3]));
}

/* cb_stats_summarize_inplace gives cb_stats_summarize's summary bit for bit, and
 * cb_stats_select puts each asked rank where a sort would, on random, tied, sorted,
 * reversed, constant and organ-pipe inputs (the quickselect's bad cases). */
static void test_select_matches_sort(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 2, 3, 16, 17, 18, 100, 1001, 100003};
  cb_rng rng;
  cb_rng_init(&rng, 7);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int kind = 0; kind < 6; kind++) {
      size_t n = sizes[si];
      double *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w), *sorted = malloc(n * sizeof *v);
      for (size_t i = 0; i < n; i++) {
        double u = cb_rng_uniform(&rng);
        v[i] = kind == 0 ? 1e6 * u
             : kind == 1 ? (double)(cb_rng_next(&rng) % 5)
             : kind == 2 ? (double)i
             : kind == 3 ? (double)(n - i)
             : kind == 4 ? 8.0
                         : (double)(i < n / 2 ? i : n - i);
      }
      memcpy(w, v, n * sizeof *v);
      cb_stats_summary want, got;
      cb_stats_summarize(v, n, sorted, &want);
      cb_stats_summarize_inplace(w, n, &got);
      assert_memory_equal(&want, &got, sizeof want);
      size_t ranks[4] = {0, n / 3, n / 3 + (n > 1), n - 1};
      memcpy(w, v, n * sizeof *v);
      cb_stats_select(w, n, ranks, 4);
      for (int k = 0; k < 4; k++) assert_true(w[ranks[k]] == sorted[ranks[k]]);
      free(v);
      free(w);
      free(sorted);
    }
  }
}

/* Reference order for the sort test: ascending, NaNs last, -0 before +0 not required. */
static int cmp_ref(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

/* cb_stats_sort against qsort on inputs both sides of the radix threshold, with every
 * awkward value IEEE-754 has: NaNs of both signs, infinities, both zeros, subnormals,
 * negatives, ties, and latency-like values that share their high bytes. */
static void test_sort_matches_qsort(void **state) {
  (void)state;
  static const size_t sizes[] = {0, 1, 2, 7, 255, 256, 257, 1000, 65537};
  cb_rng rng;
  cb_rng_init(&rng, 42);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int kind = 0; kind < 3; kind++) {
      size_t n = sizes[si];
      double *got = malloc((n ? n : 1) * sizeof *got), *want = malloc((n ? n : 1) * sizeof *want);
      for (size_t i = 0; i < n; i++) {
        double u = cb_rng_uniform(&rng), x;
        if (kind == 0) {
          x = 5.0 + 2.0 * u; /* ms latencies: one exponent, low bytes vary */
        } else if (kind == 1) {
          x = (double)(cb_rng_next(&rng) % 5); /* ties */
        } else {
          switch (cb_rng_next(&rng) % 10) {
            case 0: x = NAN; break;
            case 1: x = -NAN; break;
            case 2: x = (u < 0.5 ? -1 : 1) * INFINITY; break;
            case 3: x = u < 0.5 ? -0.0 : 0.0; break;
            case 4: x = (u - 0.5) * 4.9e-320; break; /* subnormals */
            default: x = (u - 0.5) * 1e6; break;
          }
        }
        got[i] = want[i] = x;
      }
      cb_stats_sort(got, n);
      qsort(want, n, sizeof *want, cmp_ref);
      for (size_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
          assert_true(isnan(got[i]));
        } else {
          assert_true(got[i] == want[i]); /* -0 == +0: their relative order is free */
          assert_true(i == 0 || isnan(got[i - 1]) || got[i - 1] <= got[i]);
          if (want[i] == 0) continue;
          assert_memory_equal(&got[i], &want[i], sizeof got[i]);
        }
      }
      free(got);
      free(want);
    }
  }
}

/* The 25 gamma values of the numpy script above, unsorted. */
static const double summary_x[25] = {
    250.23829384521557, 200.5823543556461,  171.88517978800408, 261.82855741474475,
    166.28482935524357, 357.3605580890691,  270.97403055437553, 244.3780846820889,
    69.58738123838612,  36.06551765187567,  76.11930016029892,  281.5998368425955,
    240.72495842593972, 55.33949944790535,  279.51609727927615, 123.80310285386066,
    123.9610555420608,  463.3453286605698,  228.98687904428178, 262.55580979830415,
    265.03625847333313, 54.14294564110757,  273.8323935484085,  871.9103498910506,
    82.2504799590262};

static void check_summary(const cb_stats_summary *s) {
  /* mean, std, cv, min, p50, p90, p95, p99, p99.9, max */
  const double want[] = {228.49236330170672, 166.9153771819884, 0.7305074654140165,
                         36.06551765187567,  240.72495842593972, 327.05626959047976,
                         442.14837454626934, 773.8547447957344,  862.1047893815202,
                         871.9103498910506};
  const double got[] = {s->mean, s->std, s->cv,  s->min,  s->p50,
                        s->p90,  s->p95, s->p99, s->p999, s->max};
  const char *names[] = {"mean", "std", "cv", "min", "p50", "p90", "p95", "p99", "p999", "max"};
  assert_int_equal(s->count, 25);
  for (size_t i = 0; i < ARRAY_LEN(want); i++) check_rel(names[i], got[i], want[i], 1e-12);
}

static void test_summary_numpy(void **state) {
  (void)state;
  double values[25], scratch[25];
  memcpy(values, summary_x, sizeof values);
  cb_stats_summary s;
  cb_stats_summarize(values, 25, NULL, &s);
  check_summary(&s);
  assert_memory_equal(values, summary_x, sizeof values); /* input untouched */

  cb_stats_summarize(values, 25, scratch, &s);
  check_summary(&s);
  for (size_t i = 1; i < 25; i++) assert_true(scratch[i - 1] <= scratch[i]);

  cb_stats_summarize(values, 25, values, &s); /* in place */
  check_summary(&s);

  cb_stats_summarize(NULL, 0, NULL, &s);
  assert_int_equal(s.count, 0);
  assert_true(isnan(s.mean) && isnan(s.std) && isnan(s.cv) && isnan(s.min) &&
              isnan(s.p50) && isnan(s.p999) && isnan(s.max));

  const double zero_mean[] = {-1.0, 1.0};
  cb_stats_summarize(zero_mean, 2, NULL, &s);
  assert_true(isnan(s.cv));
  check_rel("std of {-1, 1}", s.std, 1.0, 1e-15);
}

static void test_moments_numpy(void **state) {
  (void)state;
  cb_stats_moments m;
  cb_stats_moments_init(&m);
  assert_true(isnan(cb_stats_moments_mean(&m)) && isnan(cb_stats_moments_var_pop(&m)) &&
              isnan(cb_stats_moments_cv(&m)));
  cb_stats_moments_add(&m, 5.0);
  check_rel("var_pop of one value", cb_stats_moments_var_pop(&m), 0.0, 0.0);
  assert_true(isnan(cb_stats_moments_var_sample(&m)) &&
              isnan(cb_stats_moments_std_sample(&m)));

  cb_stats_moments_init(&m);
  for (size_t i = 0; i < 25; i++) cb_stats_moments_add(&m, summary_x[i]);
  assert_int_equal(m.count, 25);
  /* numpy: mean, var, var(ddof=1), std, std(ddof=1) */
  check_rel("mean", cb_stats_moments_mean(&m), 228.49236330170672, 1e-12);
  check_rel("var_pop", cb_stats_moments_var_pop(&m), 27860.74313980545, 1e-12);
  check_rel("var_sample", cb_stats_moments_var_sample(&m), 29021.60743729734, 1e-12);
  check_rel("std", cb_stats_moments_std(&m), 166.9153771819884, 1e-12);
  check_rel("std_sample", cb_stats_moments_std_sample(&m), 170.3572934666941, 1e-12);
  check_rel("cv", cb_stats_moments_cv(&m), 0.7305074654140165, 1e-12);
  check_rel("min", m.min, 36.06551765187567, 0.0);
  check_rel("max", m.max, 871.9103498910506, 0.0);
}

static void check_moments_equal(const char *what, const cb_stats_moments *got,
                                const cb_stats_moments *want) {
  char name[96];
  assert_int_equal(got->count, want->count);
  snprintf(name, sizeof name, "%s: mean", what);
  check_rel(name, got->mean, want->mean, 1e-12);
  snprintf(name, sizeof name, "%s: M2", what);
  check_rel(name, got->m2, want->m2, 1e-12);
  snprintf(name, sizeof name, "%s: min", what);
  check_rel(name, got->min, want->min, 0.0);
  snprintf(name, sizeof name, "%s: max", what);
  check_rel(name, got->max, want->max, 0.0);
}

/* Merging the moments of a[0..cut) and a[cut..n) equals the moments of a, for every
 * cut (including empty parts), on the numpy vector and on a wide lognormal sample. */
static void check_merge_all_cuts(const double *a, size_t n, size_t step) {
  cb_stats_moments whole;
  cb_stats_moments_init(&whole);
  for (size_t i = 0; i < n; i++) cb_stats_moments_add(&whole, a[i]);
  for (size_t cut = 0; cut <= n; cut += step) {
    cb_stats_moments left, right;
    cb_stats_moments_init(&left);
    cb_stats_moments_init(&right);
    for (size_t i = 0; i < cut; i++) cb_stats_moments_add(&left, a[i]);
    for (size_t i = cut; i < n; i++) cb_stats_moments_add(&right, a[i]);
    cb_stats_moments_merge(&left, &right);
    char what[64];
    snprintf(what, sizeof what, "merge at cut %zu of %zu", cut, n);
    check_moments_equal(what, &left, &whole);
  }
}

static void test_moments_merge(void **state) {
  (void)state;
  check_merge_all_cuts(summary_x, 25, 1);
  static double wide[3000];
  cb_rng r;
  cb_rng_init(&r, 99);
  for (size_t i = 0; i < ARRAY_LEN(wide); i++) wide[i] = cb_rng_lognormal(&r, 10.0, 2.0);
  check_merge_all_cuts(wide, ARRAY_LEN(wide), 250);
}

/* ---- histogram ------------------------------------------------------------------- */

static cb_hist make_hist(uint64_t lowest, uint64_t highest, int precision_bits) {
  cb_hist h;
  cb_hist_params p = {lowest, highest, precision_bits};
  cb_error err;
  cb_error_clear(&err);
  if (cb_hist_init(&h, &p, &err) != CB_OK) fail_msg("cb_hist_init: %s", err.msg);
  return h;
}

static void test_hist_params(void **state) {
  (void)state;
  cb_hist h;
  cb_error err;
  cb_hist_params bad[] = {{1, 1000, 0}, {1, 1000, 17}, {0, 1000, 7}, {501, 1000, 7}};
  const char *why[] = {"precision_bits", "precision_bits", "lowest_discernible",
                       "highest_trackable"};
  for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
    cb_error_clear(&err);
    assert_int_equal(cb_hist_init(&h, &bad[i], &err), CB_ERR_INVALID);
    if (!strstr(err.msg, why[i])) fail_msg("message '%s' does not name %s", err.msg, why[i]);
  }
  cb_hist_params edge = {500, 1000, 7};
  assert_int_equal(cb_hist_init(&h, &edge, NULL), CB_OK);
  cb_hist_free(&h);

  /* Defaults: 1 ns .. 1 h at 2^-10; the counts end at the index of 3.6e12:
   * group 41 - 10 = 31, sub-bucket 3.6e12 >> 31 = 1676, index 31 * 1024 + 1676. */
  cb_hist_params d = cb_hist_default_params();
  assert_int_equal(cb_hist_init(&h, &d, NULL), CB_OK);
  assert_int_equal(h.counts_len, 31 * 1024 + 1676 + 1);
  cb_hist_free(&h);
}

/* Small layout by hand: lowest 1, p = 2 -> 0..7 exact, then 4 sub-buckets per
 * power of two: [8,9] [10,11] [12,13] [14,15], [16,19] .. [28,31], [32,39] ... */
static void test_hist_layout(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 2);
  const uint64_t v[] = {0, 7, 8, 9, 15, 16, 19, 31, 32, 39, 1000};
  const uint64_t lo[] = {0, 7, 8, 8, 14, 16, 16, 28, 32, 32, 896};
  const uint64_t hi[] = {0, 7, 9, 9, 15, 19, 19, 31, 39, 39, 1023};
  for (size_t i = 0; i < ARRAY_LEN(v); i++) {
    assert_int_equal(cb_hist_lowest_equivalent(&h, v[i]), lo[i]);
    assert_int_equal(cb_hist_highest_equivalent(&h, v[i]), hi[i]);
  }
  /* Buckets tile the values: each one starts right after the previous one ends. */
  for (uint64_t x = 0; x < 5000; x = cb_hist_highest_equivalent(&h, x) + 1)
    assert_int_equal(cb_hist_lowest_equivalent(&h, x), x);
  cb_hist_free(&h);

  /* lowest 1000 -> unit 2^9: everything below 512 is one bucket. */
  h = make_hist(1000, 1000000, 2);
  assert_int_equal(cb_hist_lowest_equivalent(&h, 511), 0);
  assert_int_equal(cb_hist_highest_equivalent(&h, 0), 511);
  assert_int_equal(cb_hist_lowest_equivalent(&h, 512), 512);
  assert_int_equal(cb_hist_highest_equivalent(&h, 512), 1023);
  cb_hist_free(&h);

  /* The top of the uint64 range stays representable. */
  h = make_hist(1, UINT64_MAX, 4);
  assert_int_equal(cb_hist_highest_equivalent(&h, UINT64_MAX), UINT64_MAX);
  assert_true(cb_hist_record(&h, UINT64_MAX));
  assert_int_equal(cb_hist_value_at_quantile(&h, 1.0), UINT64_MAX);
  cb_hist_free(&h);
}

/* 1e5 lognormal values, spanning about 1e3 .. 1e10 (mu = ln 10^6.5, sigma = 1.87). */
#define N_SAMPLE 100000
static uint64_t sample[N_SAMPLE];
static uint64_t sorted_sample[N_SAMPLE];

static int compare_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return (a > b) - (a < b);
}

static void make_sample(void) {
  cb_rng r;
  cb_rng_init(&r, 20240601);
  for (size_t i = 0; i < N_SAMPLE; i++)
    sample[i] = (uint64_t)cb_rng_lognormal(&r, 14.97, 1.87);
  memcpy(sorted_sample, sample, sizeof sample);
  qsort(sorted_sample, N_SAMPLE, sizeof *sorted_sample, compare_u64);
}

/* r within the stated bound of x: x <= r < x + max(2^u, x * 2^-p) * slack. */
static void check_bound(const char *what, uint64_t x, uint64_t r, double unit, double rel) {
  double allowed = fmax(unit, (double)x * rel);
  if (r < x || (double)(r - x) >= allowed)
    fail_msg("%s: value %llu reported as %llu, allowed [x, x + %.6g)", what,
             (unsigned long long)x, (unsigned long long)r, allowed);
}

/* The exact quantile of the bound's definition: the ceil(q N)-th smallest value,
 * with q = num / den computed in integers; rank 0 is the minimum. */
static uint64_t exact_quantile(const uint64_t *sorted, uint64_t n, uint64_t num,
                               uint64_t den) {
  uint64_t k = (num * n + den - 1) / den;
  return sorted[k ? k - 1 : 0];
}

/* Every q = j/2000 and, for the tail, q = j/100000 above 0.99. */
static void check_quantile_grid(const char *what, const cb_hist *h, const uint64_t *sorted,
                                uint64_t n, double unit, double rel) {
  const uint64_t grids[2][3] = {{2000, 0, 2000}, {100000, 99000, 100000}};
  for (size_t g = 0; g < 2; g++) {
    uint64_t den = grids[g][0];
    for (uint64_t j = grids[g][1]; j <= grids[g][2]; j++) {
      uint64_t x = exact_quantile(sorted, n, j, den);
      uint64_t r = cb_hist_value_at_quantile(h, (double)j / (double)den);
      char name[96];
      snprintf(name, sizeof name, "%s: quantile %llu/%llu", what, (unsigned long long)j,
               (unsigned long long)den);
      check_bound(name, x, r, unit, rel);
    }
  }
}

static void check_error_bound(uint64_t lowest, int p) {
  cb_hist h = make_hist(lowest, UINT64_C(1000000000000), p);
  double unit = ldexp(1.0, h.unit_shift), rel = ldexp(1.0, -p);
  double worst = 0.0; /* largest (highest_equivalent - v) / v where the bound is relative */
  for (size_t i = 0; i < N_SAMPLE; i++) {
    uint64_t v = sample[i];
    assert_true(cb_hist_record(&h, v));
    uint64_t lo = cb_hist_lowest_equivalent(&h, v), hi = cb_hist_highest_equivalent(&h, v);
    if (lo > v || hi < v) fail_msg("bucket [%llu, %llu] misses %llu", (unsigned long long)lo,
                                   (unsigned long long)hi, (unsigned long long)v);
    check_bound("highest equivalent", v, hi, unit, rel);
    if ((double)v >= unit / rel) worst = fmax(worst, (double)(hi - v) / (double)v);
  }
  /* The bound is tight, so it says something: some value gets close to it. */
  if (worst < 0.75 * rel)
    fail_msg("worst relative error %g, bound %g: layout finer than stated", worst, rel);
  assert_int_equal(cb_hist_total_count(&h), N_SAMPLE);
  assert_int_equal(cb_hist_min(&h), sorted_sample[0]);
  assert_int_equal(cb_hist_max(&h), sorted_sample[N_SAMPLE - 1]);
  char what[64];
  snprintf(what, sizeof what, "lowest %llu, p %d", (unsigned long long)lowest, p);
  check_quantile_grid(what, &h, sorted_sample, N_SAMPLE, unit, rel);

  /* Mean from bucket midpoints: each midpoint is within half a bucket of its value. */
  cb_stats_moments m;
  cb_stats_moments_init(&m);
  for (size_t i = 0; i < N_SAMPLE; i++) cb_stats_moments_add(&m, (double)sample[i]);
  check_rel("histogram mean", cb_hist_mean(&h), m.mean, rel / 2 + unit / m.mean);
  check_rel("histogram stddev", cb_hist_stddev(&h), cb_stats_moments_std(&m), rel);
  cb_hist_free(&h);
}

static void test_hist_error_bound(void **state) {
  (void)state;
  check_error_bound(1, 7);    /* relative 2^-7 for every value */
  check_error_bound(1000, 10); /* unit 512: absolute below 2^19, relative 2^-10 above */
}

/* numpy's "linear" percentile from the histogram against the exact one over the same
 * seeded sample: never below it, and less than 2^-p above it (stats.h,
 * docs/results.md). The worst error seen must be above zero, so this really is the
 * histogram's estimate, and near the bound, so the bound is not loose. */
static void test_hist_quantile_linear(void **state) {
  (void)state;
  cb_hist_params dp = cb_hist_default_params();
  cb_hist h = make_hist(1, UINT64_C(1000000000000), dp.precision_bits);
  static double exact[N_SAMPLE];
  for (size_t i = 0; i < N_SAMPLE; i++) {
    assert_true(cb_hist_record(&h, sample[i]));
    exact[i] = (double)sorted_sample[i];
  }
  double bound = ldexp(1.0, -dp.precision_bits), worst = 0.0;
  for (int j = 0; j <= 1000; j++) {
    double q = j == 1000 ? 1.0 : j / 1000.0;
    const double tail[] = {0.95, 0.99, 0.999, 0.9999};
    for (int k = 0; k < (j == 0 ? 5 : 1); k++) {
      if (k) q = tail[k - 1];
      double v = cb_stats_quantile_sorted(exact, N_SAMPLE, q);
      double r = cb_hist_quantile_linear(&h, q);
      double rel = (r - v) / v;
      if (!(rel >= -1e-15 && rel < bound))
        fail_msg("q %.4f: exact %.17g, histogram %.17g: relative error %.3g outside [0, %.3g)", q,
                 v, r, rel, bound);
      worst = fmax(worst, rel);
    }
  }
  if (!(worst > bound / 4))
    fail_msg("worst relative error %.3g: not the histogram's estimate, or far inside the bound %.3g",
             worst, bound);
  assert_true(cb_hist_quantile_linear(&h, 0.0) == exact[0]);
  assert_true(cb_hist_quantile_linear(&h, 1.0) == exact[N_SAMPLE - 1]);
  assert_true(isnan(cb_hist_quantile_linear(&h, 1.5)));
  cb_hist_reset(&h);
  assert_true(isnan(cb_hist_quantile_linear(&h, 0.5)));
  cb_hist_free(&h);
}

static void test_hist_quantile_definition(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 7); /* values below 256 are exact */
  for (uint64_t v = 1; v <= 100; v++) cb_hist_record(&h, v);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.0), 1);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.005), 1);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.07), 7); /* 0.07 * 100 rounds above 7 */
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.071), 8);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.5), 50);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.99), 99);
  assert_int_equal(cb_hist_value_at_quantile(&h, 1.0), 100);
  assert_int_equal(cb_hist_value_at_quantile(&h, -3.0), 1);
  assert_int_equal(cb_hist_value_at_quantile(&h, NAN), 1);
  assert_int_equal(cb_hist_value_at_quantile(&h, 7.0), 100);
  cb_hist_free(&h);

  /* The top bucket's highest equivalent is capped at the exact max. */
  h = make_hist(1, 100000, 2);
  cb_hist_record(&h, 1000); /* bucket [896, 1023] */
  cb_hist_record(&h, 10);
  assert_int_equal(cb_hist_value_at_quantile(&h, 1.0), 1000);
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.5), 11); /* bucket [10, 11] */
  assert_int_equal(cb_hist_value_at_quantile(&h, 0.0), 10);
  cb_hist_free(&h);
}

/* Mean and std are those of the bucket midpoints: 8 is counted in [8, 9] and 16 in
 * [16, 19] (p = 2), so the midpoints are 8.5 and 17.5. */
static void test_hist_mean_stddev(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 2);
  cb_hist_record(&h, 8);
  cb_hist_record(&h, 16);
  check_rel("mean", cb_hist_mean(&h), 13.0, 1e-15);
  check_rel("stddev", cb_hist_stddev(&h), 4.5, 1e-15);
  cb_hist_record_n(&h, 3, 2); /* exact bucket [3, 3] */
  check_rel("mean", cb_hist_mean(&h), 8.0, 1e-15);
  check_rel("stddev", cb_hist_stddev(&h), sqrt(35.125), 1e-15);
  cb_hist_free(&h);
}

static void test_hist_iterator(void **state) {
  (void)state;
  cb_hist h = make_hist(1, UINT64_C(1000000000000), 7);
  for (size_t i = 0; i < 5000; i++) cb_hist_record(&h, sample[i]);
  cb_hist_iter it;
  cb_hist_iter_init(&it, &h);
  uint64_t sum = 0, prev_highest = 0;
  size_t buckets = 0;
  while (cb_hist_iter_next(&it)) {
    assert_true(it.count > 0);
    assert_true(it.lowest <= it.highest);
    if (buckets++ > 0) assert_true(it.lowest > prev_highest);
    assert_int_equal(cb_hist_lowest_equivalent(&h, it.lowest), it.lowest);
    assert_int_equal(cb_hist_highest_equivalent(&h, it.lowest), it.highest);
    sum += it.count;
    assert_int_equal(it.cumulative_count, sum);
    prev_highest = it.highest;
  }
  assert_int_equal(sum, 5000);
  assert_false(cb_hist_iter_next(&it)); /* stays at the end */
  cb_hist_free(&h);
}

static void test_hist_out_of_range(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 3);
  assert_true(cb_hist_record(&h, 1000));
  assert_false(cb_hist_record(&h, 1001));
  assert_int_equal(h.out_of_range_count, 1);
  assert_false(cb_hist_record_n(&h, 5000, 3));
  assert_int_equal(h.out_of_range_count, 4);
  assert_true(cb_hist_record_n(&h, 7, 0));
  assert_int_equal(cb_hist_total_count(&h), 1);
  assert_int_equal(cb_hist_max(&h), 1000); /* never clamped to the limit */
  assert_int_equal(cb_hist_min(&h), 1000);
  assert_true(cb_hist_record_n(&h, 0, 2));
  assert_int_equal(cb_hist_min(&h), 0);
  assert_int_equal(cb_hist_total_count(&h), 3);
  cb_hist_free(&h);
}

static void check_empty(const cb_hist *h) {
  assert_int_equal(cb_hist_total_count(h), 0);
  assert_int_equal(cb_hist_min(h), 0);
  assert_int_equal(cb_hist_max(h), 0);
  assert_true(cb_hist_mean(h) == 0.0 && cb_hist_stddev(h) == 0.0);
  assert_int_equal(cb_hist_value_at_quantile(h, 0.0), 0);
  assert_int_equal(cb_hist_value_at_quantile(h, 0.5), 0);
  assert_int_equal(cb_hist_value_at_quantile(h, 1.0), 0);
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  assert_false(cb_hist_iter_next(&it));
}

static void test_hist_empty_and_reset(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 3);
  check_empty(&h);
  assert_int_equal(h.out_of_range_count, 0);
  cb_hist_record(&h, 500);
  cb_hist_record(&h, 5000);
  cb_hist_reset(&h);
  check_empty(&h);
  assert_int_equal(h.out_of_range_count, 0);
  for (size_t i = 0; i < h.counts_len; i++) assert_int_equal(h.counts[i], 0);
  cb_hist_free(&h);
}

static void encode(const cb_hist *h, cb_buf *out) {
  cb_buf_init(out, 0);
  assert_int_equal(cb_hist_encode(h, out), CB_OK);
}

static cb_hist decode_ok(const char *text, size_t len) {
  cb_hist h;
  cb_error err;
  cb_error_clear(&err);
  if (cb_hist_decode(&h, text, len, &err) != CB_OK) fail_msg("decode '%s': %s", text, err.msg);
  return h;
}

static void check_same_buckets(const cb_hist *got, const cb_hist *want) {
  assert_int_equal(got->counts_len, want->counts_len);
  for (size_t i = 0; i < want->counts_len; i++)
    if (got->counts[i] != want->counts[i])
      fail_msg("bucket %zu: got count %llu, want %llu", i, (unsigned long long)got->counts[i],
               (unsigned long long)want->counts[i]);
  assert_int_equal(got->total_count, want->total_count);
  assert_int_equal(got->min_value, want->min_value);
  assert_int_equal(got->max_value, want->max_value);
  assert_int_equal(got->out_of_range_count, want->out_of_range_count);
}

static void test_hist_merge_exact(void **state) {
  (void)state;
  const uint64_t highest = UINT64_C(1000000000000);
  cb_hist whole = make_hist(1, highest, 7), a = make_hist(1, highest, 7),
          b = make_hist(1, highest, 7);
  for (size_t i = 0; i < N_SAMPLE; i++) {
    cb_hist_record(&whole, sample[i]);
    cb_hist_record(i % 3 ? &a : &b, sample[i]);
  }
  assert_int_equal(cb_hist_merge(&a, &b), 0);
  check_same_buckets(&a, &whole);

  /* Merging into an empty histogram copies; merging an empty one changes nothing. */
  cb_hist empty = make_hist(1, highest, 7);
  assert_int_equal(cb_hist_merge(&empty, &whole), 0);
  check_same_buckets(&empty, &whole);
  cb_hist_reset(&b);
  assert_int_equal(cb_hist_merge(&a, &b), 0);
  check_same_buckets(&a, &whole);
  cb_hist_free(&empty);
  cb_hist_free(&whole);
  cb_hist_free(&a);
  cb_hist_free(&b);
}

/* Different layouts: a src value v is reported r with v <= r <= v (1 + 2^-7)(1 + 2^-9)
 * (both lowest 1, so both layouts are relative everywhere). */
static void test_hist_merge_cross_config(void **state) {
  (void)state;
  const uint64_t highest = UINT64_C(1000000000000);
  cb_hist dst = make_hist(1, highest, 9), src = make_hist(1, highest, 7);
  for (size_t i = 0; i < N_SAMPLE; i++) cb_hist_record(i % 2 ? &dst : &src, sample[i]);
  assert_int_equal(cb_hist_merge(&dst, &src), 0);
  assert_int_equal(cb_hist_total_count(&dst), N_SAMPLE);
  assert_int_equal(cb_hist_min(&dst), sorted_sample[0]);
  assert_int_equal(cb_hist_max(&dst), sorted_sample[N_SAMPLE - 1]);
  double rel = (1 + ldexp(1.0, -7)) * (1 + ldexp(1.0, -9)) - 1;
  check_quantile_grid("cross-config merge", &dst, sorted_sample, N_SAMPLE, 1.0, rel);
  cb_hist_free(&dst);
  cb_hist_free(&src);

  /* 1000 is in coarse [896, 1023] and is re-recorded as 1023, exact in the fine
   * layout: the exact min lies below the lowest non-empty bucket, and the text form
   * still round-trips. */
  cb_hist coarse = make_hist(1, 100000, 2), fine = make_hist(1, 100000, 9);
  cb_hist_record(&coarse, 1000);
  cb_hist_record(&coarse, 1500);
  assert_int_equal(cb_hist_merge(&fine, &coarse), 0);
  assert_int_equal(cb_hist_min(&fine), 1000);
  assert_int_equal(cb_hist_value_at_quantile(&fine, 0.5), 1023);
  assert_int_equal(cb_hist_max(&fine), 1500);
  cb_buf text;
  encode(&fine, &text);
  cb_hist back = decode_ok(text.data, text.len);
  check_same_buckets(&back, &fine);
  cb_hist_free(&back);
  cb_buf_free(&text);
  cb_hist_free(&coarse);
  cb_hist_free(&fine);
}

static void test_hist_merge_drops(void **state) {
  (void)state;
  /* dst's limit 2^20 - 1 is a bucket boundary of src's layout, so exactly the
   * values above it are dropped. */
  const uint64_t limit = (UINT64_C(1) << 20) - 1;
  cb_hist src = make_hist(1, UINT64_C(1000000000000), 7), dst = make_hist(1, limit, 7);
  uint64_t above = 0;
  for (size_t i = 0; i < N_SAMPLE; i++) {
    cb_hist_record(&src, sample[i]);
    above += sample[i] > limit;
  }
  assert_false(cb_hist_record(&src, UINT64_C(2000000000000))); /* src's own reject */
  assert_true(above > 0 && above < N_SAMPLE);
  assert_int_equal(cb_hist_merge(&dst, &src), above);
  assert_int_equal(cb_hist_total_count(&dst), N_SAMPLE - above);
  assert_int_equal(dst.out_of_range_count, above + 1);
  assert_int_equal(cb_hist_min(&dst), sorted_sample[0]);
  assert_true(cb_hist_max(&dst) <= limit);
  uint64_t largest_kept = sorted_sample[N_SAMPLE - above - 1];
  assert_int_equal(cb_hist_max(&dst), cb_hist_highest_equivalent(&src, largest_kept));
  check_quantile_grid("kept after drops", &dst, sorted_sample, N_SAMPLE - above, 1.0,
                      ldexp(1.0, -7));
  cb_hist_free(&src);
  cb_hist_free(&dst);

  /* Every value dropped: dst stays empty but counts them. */
  cb_hist small = make_hist(1, 100, 3), big = make_hist(1, 100000, 3);
  cb_hist_record(&big, 5000);
  cb_hist_record(&big, 6000);
  assert_int_equal(cb_hist_merge(&small, &big), 2);
  check_empty(&small);
  assert_int_equal(small.out_of_range_count, 2);
  cb_hist_free(&small);
  cb_hist_free(&big);
}

/* ---- text encoding ------------------------------------------------------------------ */

static void test_hist_encoding_known(void **state) {
  (void)state;
  cb_hist h = make_hist(1, 1000, 3);
  cb_hist_record(&h, 5);
  cb_hist_record(&h, 0);
  cb_hist_record(&h, 17); /* group 1, index 8 + (17 >> 1) = 16 */
  cb_hist_record(&h, 5);
  cb_hist_record(&h, 2000);
  cb_buf b;
  encode(&h, &b);
  assert_string_equal(b.data, "cbhist1 1 1000 3 4 0 17 1 0:1 4:2 10:1");
  cb_buf_append_char(&b, '\n');
  cb_hist back = decode_ok(b.data, b.len);
  check_same_buckets(&back, &h);
  cb_hist_free(&back);
  cb_buf_free(&b);
  cb_hist_free(&h);

  h = make_hist(1, 1000, 3);
  encode(&h, &b);
  assert_string_equal(b.data, "cbhist1 1 1000 3 0 0 0 0");
  back = decode_ok(b.data, b.len);
  check_empty(&back);
  cb_hist_free(&back);
  cb_buf_free(&b);
  cb_hist_free(&h);
}

/* Shards ship text; the decoded shards merge into the histogram of the whole. */
static void test_hist_encoding_roundtrip(void **state) {
  (void)state;
  const uint64_t highest = UINT64_C(1000000000000);
  cb_hist whole = make_hist(1000, highest, 10), merged = make_hist(1000, highest, 10);
  cb_hist shard[3] = {make_hist(1000, highest, 10), make_hist(1000, highest, 10),
                      make_hist(1000, highest, 10)};
  for (size_t i = 0; i < N_SAMPLE; i++) {
    cb_hist_record(&whole, sample[i]);
    cb_hist_record(&shard[i % 3], sample[i]);
  }
  for (size_t s = 0; s < 3; s++) {
    cb_buf text, again;
    encode(&shard[s], &text);
    cb_hist back = decode_ok(text.data, text.len);
    check_same_buckets(&back, &shard[s]);
    assert_int_equal(back.params.lowest_discernible, 1000);
    encode(&back, &again);
    assert_string_equal(again.data, text.data);
    assert_int_equal(cb_hist_merge(&merged, &back), 0);
    cb_buf_free(&text);
    cb_buf_free(&again);
    cb_hist_free(&back);
    cb_hist_free(&shard[s]);
  }
  check_same_buckets(&merged, &whole);
  cb_hist_free(&whole);
  cb_hist_free(&merged);

  /* A capped buffer reports that the line does not fit. */
  cb_hist h = make_hist(1, 1000, 3);
  cb_buf small;
  cb_buf_init(&small, 10);
  assert_int_equal(cb_hist_encode(&h, &small), CB_ERR_CAPACITY);
  cb_buf_free(&small);
  cb_hist_free(&h);
}

typedef struct bad_text {
  const char *text;
  size_t offset;     /* where the error is reported */
  const char *about; /* a word the message must contain */
} bad_text;

static void test_hist_decode_malformed(void **state) {
  (void)state;
  static const bad_text cases[] = {
      {"", 0, "magic"},
      {"cbhist2 1 1000 3 0 0 0 0", 6, "magic"},
      {"cbhist1 1 1000 3 0 0 0", 22, "' '"},
      {"cbhist1 x 1000 3 0 0 0 0", 8, "<lowest>"},
      {"cbhist1 -1 1000 3 0 0 0 0", 8, "<lowest>"},
      {"cbhist1  1 1000 3 0 0 0 0", 8, "<lowest>"},
      {"cbhist1 1 99999999999999999999 3 0 0 0 0", 10, "64 bits"},
      {"cbhist1 1 1000 0 0 0 0 0", 8, "precision_bits"},
      {"cbhist1 1 1000 99 0 0 0 0", 15, "precision_bits"},
      {"cbhist1 600 1000 3 0 0 0 0", 8, "highest_trackable"},
      {"cbhist1 1 1000 3 1 5 5 0 5:0", 27, "must not be 0"},
      {"cbhist1 1 1000 3 1 5 5 0 999:1", 25, "past the last bucket"},
      {"cbhist1 1 1000 3 2 5 5 0 5:1", 17, "buckets hold 1"},
      {"cbhist1 1 1000 3 1 5 5 0 5:2", 27, "exceed <total>"},
      {"cbhist1 1 1000 3 1 6 6 0 5:1", 19, "do not fit"},
      {"cbhist1 1 1000 3 1 5 3 0 5:1", 19, "do not fit"},
      {"cbhist1 1 1000 3 0 1 1 0", 19, "empty"},
      {"cbhist1 1 1000 3 1 5 5 0 5-1", 26, "':'"},
      {"cbhist1 1 1000 3 1 5 5 0 5:1 ", 29, "<gap>"},
      {"cbhist1 1 1000 3 1 5 5 0 5:1x", 28, "'x'"},
      {"cbhist1 1 1000 3 1 5 5 0 5:1\n\n", 29, "byte 0x0a"},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    cb_hist h;
    cb_error err;
    cb_error_clear(&err);
    cb_status st = cb_hist_decode(&h, cases[i].text, strlen(cases[i].text), &err);
    if (st != CB_ERR_PARSE)
      fail_msg("'%s': got status %s, want CB_ERR_PARSE", cases[i].text, cb_status_name(st));
    char at[32];
    snprintf(at, sizeof at, "offset %zu:", cases[i].offset);
    if (!strstr(err.msg, at) || !strstr(err.msg, cases[i].about) ||
        err.column != (long)cases[i].offset + 1)
      fail_msg("'%s': message '%s' (column %ld), want '%s' and '%s'", cases[i].text, err.msg,
               err.column, at, cases[i].about);
  }
}

int main(void) {
  make_sample();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantile_numpy),
      cmocka_unit_test(test_quantile_edges),
      cmocka_unit_test(test_sort_matches_qsort),
      cmocka_unit_test(test_select_matches_sort),
      cmocka_unit_test(test_summary_numpy),
      cmocka_unit_test(test_moments_numpy),
      cmocka_unit_test(test_moments_merge),
      cmocka_unit_test(test_hist_params),
      cmocka_unit_test(test_hist_layout),
      cmocka_unit_test(test_hist_error_bound),
      cmocka_unit_test(test_hist_quantile_definition),
      cmocka_unit_test(test_hist_quantile_linear),
      cmocka_unit_test(test_hist_mean_stddev),
      cmocka_unit_test(test_hist_iterator),
      cmocka_unit_test(test_hist_out_of_range),
      cmocka_unit_test(test_hist_empty_and_reset),
      cmocka_unit_test(test_hist_merge_exact),
      cmocka_unit_test(test_hist_merge_cross_config),
      cmocka_unit_test(test_hist_merge_drops),
      cmocka_unit_test(test_hist_encoding_known),
      cmocka_unit_test(test_hist_encoding_roundtrip),
      cmocka_unit_test(test_hist_decode_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
