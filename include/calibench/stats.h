/*
 * stats.h - exact quantiles, streaming moments and a mergeable log-linear histogram.
 *
 * Three tools for turning latency samples into the numbers calibench reports:
 *
 *  - Exact quantiles and a summary (cb_stats_quantile_sorted, cb_stats_summarize)
 *    over samples kept in memory. Quantiles use linear interpolation between closest
 *    ranks, numpy.percentile's default method "linear" (Hyndman & Fan type 7), and
 *    the summary's std is numpy.std's population std (ddof=0): vLLM's benchmark
 *    computes its percentiles and std that way, so our numbers compare with its.
 *  - A streaming moments accumulator (cb_stats_moments): Welford's update, merged
 *    with Chan et al.'s parallel formula, for count/mean/variance/min/max without
 *    keeping samples.
 *  - A log-linear histogram (cb_hist) of uint64 values (calibench records
 *    nanoseconds) with a proven relative-error bound, exact merging of shards, and a
 *    one-line text encoding; modelled on HdrHistogram's API. Layout, bound and proof,
 *    merge rules and the encoding: docs/internals/histogram.md.
 *
 * Nothing here allocates except cb_hist_init/cb_hist_decode (the counts array) and
 * cb_stats_summarize without scratch; allocation goes through alloc.h (aborts on
 * out of memory). Nothing here is thread-safe: one writer per object.
 */
#ifndef CALIBENCH_STATS_H
#define CALIBENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact quantiles ------------------------------------------------------------ */

/* Sort ascending in place. NaNs (which have no order) are placed last so the sort is
 * well defined; the quantile functions below expect NaN-free input. */
void cb_stats_sort(double *values, size_t n);

/*
 * The q-quantile (q in [0, 1]) of `sorted` (ascending, n values, no NaN) by linear
 * interpolation between closest ranks: with h = (n - 1) q, i = floor(h), t = h - i,
 * the result is sorted[i] + t (sorted[i+1] - sorted[i]) -- numpy.percentile(x, 100 q)
 * with its default method "linear" (Hyndman & Fan type 7), evaluated the way numpy
 * evaluates it. q = 0 gives the minimum, q = 1 the maximum.
 * Returns NAN when n == 0, or when q is outside [0, 1] or NaN.
 */
double cb_stats_quantile_sorted(const double *sorted, size_t n, double q);

/* The summary of a sample, all in the samples' unit. Percentiles as
 * cb_stats_quantile_sorted (p999 is q = 0.999). */
typedef struct cb_stats_summary {
  size_t count;
  double mean;
  double std; /* population std (ddof = 0), as numpy.std and vLLM */
  double cv;  /* std / mean; NAN when mean == 0 */
  double min;
  double p50, p90, p95, p99, p999;
  double max;
} cb_stats_summary;

/*
 * Summarise `values` (n values, any order, no NaN); `values` is not modified.
 * The quantiles need a sorted copy: pass `scratch` (room for n doubles, owned by the
 * caller; it may be `values` itself to sort in place) and it holds the sorted values
 * on return, or pass NULL and a temporary copy is allocated and freed here.
 * n == 0: count is 0 and every other field is NAN.
 */
void cb_stats_summarize(const double *values, size_t n, double *scratch,
                        cb_stats_summary *out);

/* ---- streaming moments ------------------------------------------------------------ */

/*
 * Count, mean and sum of squared deviations (M2) by Welford's update; two
 * accumulators merge with Chan, Golub & LeVeque's pairwise formula, so per-shard
 * accumulators combine into the moments of the concatenated sample (up to rounding).
 * Caller-allocated; nothing to free. The fields may be read directly.
 */
typedef struct cb_stats_moments {
  uint64_t count;
  double mean; /* 0 while empty */
  double m2;   /* sum of (x - mean)^2 */
  double min;  /* +INFINITY while empty */
  double max;  /* -INFINITY while empty */
} cb_stats_moments;

void cb_stats_moments_init(cb_stats_moments *m);
/* Add one value (not NaN). */
void cb_stats_moments_add(cb_stats_moments *m, double x);
/* dst becomes the moments of dst's values followed by src's. src is unchanged. */
void cb_stats_moments_merge(cb_stats_moments *dst, const cb_stats_moments *src);
/* Mean; NAN when empty. */
double cb_stats_moments_mean(const cb_stats_moments *m);
/* Population variance M2 / n (ddof = 0, numpy.var's default); NAN when empty. */
double cb_stats_moments_var_pop(const cb_stats_moments *m);
/* Sample variance M2 / (n - 1) (ddof = 1, unbiased); NAN when count < 2. */
double cb_stats_moments_var_sample(const cb_stats_moments *m);
/* Population std, sqrt(var_pop) (numpy.std's default, what vLLM reports). */
double cb_stats_moments_std(const cb_stats_moments *m);
/* Sample std, sqrt(var_sample); NAN when count < 2. */
double cb_stats_moments_std_sample(const cb_stats_moments *m);
/* Coefficient of variation: population std / mean; NAN when empty or mean == 0. */
double cb_stats_moments_cv(const cb_stats_moments *m);

/* ---- log-linear histogram --------------------------------------------------------- */

#define CB_HIST_PRECISION_BITS_MIN 1
#define CB_HIST_PRECISION_BITS_MAX 16

/*
 * Configuration. With u = floor(log2(lowest_discernible)) and p = precision_bits,
 * every value v in [0, highest_trackable] is counted in a bucket
 * [lowest_equivalent(v), highest_equivalent(v)] whose width is at most
 * max(2^u, v * 2^-p). Hence the value reported for v, r, satisfies
 *     v <= r < v + max(2^u, v * 2^-p),
 * so for v >= 2^(u+p) -- and for every v when lowest_discernible is 1, since then
 * the values below 2^(p+1) are counted exactly -- the relative error is below 2^-p.
 * Memory: 8 bytes per bucket, up to the bucket of highest_trackable: at most
 * (max(0, floor(log2(highest_trackable >> u)) - p) + 2) * 2^p buckets.
 */
typedef struct cb_hist_params {
  uint64_t lowest_discernible; /* >= 1; values below 2^u are indistinguishable from 0 */
  uint64_t highest_trackable;  /* >= 2 * lowest_discernible; larger values are rejected */
  int precision_bits;          /* CB_HIST_PRECISION_BITS_MIN..MAX */
} cb_hist_params;

/* Defaults for latencies in nanoseconds: 1 ns .. 1 hour, precision_bits 10
 * (relative error below 2^-10 < 0.1%, like HdrHistogram's 3 significant digits;
 * 33421 buckets, 261 KiB). */
cb_hist_params cb_hist_default_params(void);

/*
 * A histogram. Caller-allocated; cb_hist_init fills it and allocates `counts`,
 * cb_hist_free releases it. Read the fields, but change them only through the
 * functions here. Values are in the caller's unit (calibench records nanoseconds).
 */
typedef struct cb_hist {
  cb_hist_params params;       /* as given to init */
  int unit_shift;              /* u = floor(log2(lowest_discernible)) */
  size_t counts_len;           /* number of buckets */
  uint64_t *counts;            /* owned; counts_len entries, indexed by bucket */
  uint64_t total_count;        /* values counted (in range) */
  uint64_t min_value;          /* exact smallest value counted; 0 while empty */
  uint64_t max_value;          /* exact largest value counted; 0 while empty */
  uint64_t out_of_range_count; /* values rejected by record or dropped by merge */
} cb_hist;

/*
 * Initialise an empty histogram. CB_ERR_INVALID (naming the parameter and its value)
 * when a parameter is out of range; then nothing was allocated and nothing needs
 * freeing.
 */
cb_status cb_hist_init(cb_hist *h, const cb_hist_params *params, cb_error *err);
/* Release the counts; h may then be initialised again. */
void cb_hist_free(cb_hist *h);
/* Empty the histogram (counts, total, min, max, out_of_range_count), keeping its
 * configuration and storage. */
void cb_hist_reset(cb_hist *h);

/*
 * Count `value` once / `count` times. A value above params.highest_trackable is not
 * counted: out_of_range_count grows by `count` and the result is false (never
 * clamped). true otherwise (count == 0 counts nothing).
 */
bool cb_hist_record(cb_hist *h, uint64_t value);
bool cb_hist_record_n(cb_hist *h, uint64_t value, uint64_t count);

/*
 * Add src's values to dst; src is unchanged; dst and src must be distinct.
 * Each non-empty src bucket is re-recorded in dst as its representative
 * min(highest equivalent, src max), which is never below a value it stands for.
 *  - Same unit_shift and precision_bits (e.g. equal params): the representative
 *    falls in the bucket of the same index, so counts add bucket by bucket, exactly.
 *  - Otherwise a src value v is reported within both bounds composed: with lowest 1
 *    on both sides, v <= r <= v (1 + 2^-p_src)(1 + 2^-p_dst).
 * Representatives above dst's highest_trackable are dropped (a src whose max fits
 * drops nothing). dst's min/max stay the exact extremes of the values kept, except
 * that after drops max is the largest kept representative. dst's out_of_range_count
 * grows by src's and by the values dropped. Returns the number of values dropped.
 */
uint64_t cb_hist_merge(cb_hist *dst, const cb_hist *src);

/* Values counted; 0 when empty. */
uint64_t cb_hist_total_count(const cb_hist *h);
/* Exact smallest / largest value counted; 0 when empty. */
uint64_t cb_hist_min(const cb_hist *h);
uint64_t cb_hist_max(const cb_hist *h);
/* Mean and population std (ddof = 0) of the bucket midpoints weighted by their
 * counts; 0 when empty. */
double cb_hist_mean(const cb_hist *h);
double cb_hist_stddev(const cb_hist *h);

/*
 * The value at quantile q (clamped into [0, 1]; NaN counts as 0): with N values and
 * rank k = ceil(q N) (computed with a 1e-12 relative tolerance, so q = 0.07, N = 100
 * is rank 7 despite binary rounding), the highest equivalent value of the bucket
 * where the cumulative count first reaches k, capped at the exact max.
 * q = 0 (k = 0) gives the exact min. If the k-th smallest value counted is x, the
 * result r satisfies x <= r < x + max(2^u, x * 2^-p). Empty histogram: 0.
 */
uint64_t cb_hist_value_at_quantile(const cb_hist *h, double q);

/* The smallest / largest value counted in the same bucket as `value` (defined for
 * any value, also above highest_trackable). */
uint64_t cb_hist_lowest_equivalent(const cb_hist *h, uint64_t value);
uint64_t cb_hist_highest_equivalent(const cb_hist *h, uint64_t value);

/*
 * Iterator over the non-empty buckets in ascending value order:
 *   cb_hist_iter it;
 *   cb_hist_iter_init(&it, h);
 *   while (cb_hist_iter_next(&it)) use(it.lowest, it.highest, it.count);
 * The histogram must not change while it is iterated. Nothing to free.
 */
typedef struct cb_hist_iter {
  const cb_hist *h;
  size_t next_index;         /* where the search for the next bucket starts */
  size_t index;              /* the current bucket's index into h->counts */
  uint64_t lowest;           /* the current bucket's smallest value */
  uint64_t highest;          /* ... its largest value (inclusive) */
  uint64_t count;            /* ... its count (> 0) */
  uint64_t cumulative_count; /* counts of all buckets up to and including it */
} cb_hist_iter;

void cb_hist_iter_init(cb_hist_iter *it, const cb_hist *h);
/* Advance to the next non-empty bucket; false when there is none. */
bool cb_hist_iter_next(cb_hist_iter *it);

/*
 * Append the one-line text encoding of h to `out` (no newline):
 *   cbhist1 <lowest> <highest> <precision_bits> <total> <min> <max> <out_of_range>
 *           {<gap>:<count>}
 * one space between fields, one <gap>:<count> per non-empty bucket in index order,
 * <gap> being the number of empty buckets skipped since the previous non-empty one
 * (or since index 0). CB_ERR_CAPACITY when `out` is capped too small (out may then
 * hold part of the line).
 */
cb_status cb_hist_encode(const cb_hist *h, cb_buf *out);

/*
 * Initialise *out from the `len` bytes of `text` (one encoding, optionally followed
 * by one '\n'). On success *out is a histogram to cb_hist_free. Malformed text
 * (syntax, numbers overflowing uint64, invalid parameters, a bucket past the end, a
 * zero count, counts not summing to <total>, min/max inconsistent with the buckets,
 * trailing bytes) gives CB_ERR_PARSE with err's message saying what was expected at
 * which 0-based character offset (err->column is that offset + 1); then nothing is
 * left to free.
 */
cb_status cb_hist_decode(cb_hist *out, const char *text, size_t len, cb_error *err);

/* ==== Kolmogorov-Smirnov goodness of fit (src/stats/ks.c) ============================== */

/*
 * A continuous CDF, F(x) in [0, 1], non-decreasing; ctx is the caller's (parameters).
 */
typedef double (*cb_stats_cdf_fn)(void *ctx, double x);

/* The one-sample, two-sided test's result. */
typedef struct cb_stats_ks_result {
  size_t n;       /* sample size */
  double d;       /* D = max(D+, D-), in [0, 1] */
  double d_plus;  /* max over i of i/n - F(x_(i)) (1-based ranks) */
  double d_minus; /* max over i of F(x_(i)) - (i-1)/n */
  double p_value; /* P(D_n >= d) under the null: cb_stats_kolmogorov_n_sf(n, d) */
} cb_stats_ks_result;

/*
 * One-sample Kolmogorov-Smirnov test of `x` (n >= 1 values, no NaN, any order; not
 * modified) against `cdf`: D+, D-, D and the exact two-sided p-value, as
 * scipy.stats.kstest(x, cdf) (method "auto" = "exact", alternative "two-sided") computes
 * them. The sorted copy goes to `scratch` (room for n doubles; may be x itself to sort in
 * place) or, when scratch is NULL, to a temporary allocation freed here.
 * CB_ERR_INVALID when n == 0, cdf is NULL, or a value or F(value) is NaN / F outside
 * [0, 1] (then *out is untouched).
 */
cb_status cb_stats_ks_1samp(const double *x, size_t n, double *scratch, cb_stats_cdf_fn cdf,
                            void *ctx, cb_stats_ks_result *out, cb_error *err);

/*
 * The distribution of the two-sided statistic D_n for a sample of n from a continuous
 * distribution: survival P(D_n > d) and CDF P(D_n <= d) (the law is continuous, so
 * P(D_n >= d) is the same number). scipy.stats.kstwo.sf(d, n) / .cdf(d, n): the same
 * algorithm as SciPy (Simard & L'Ecuyer 2011): closed forms for d <= 1/n and
 * d >= 1 - 1/n (Ruben-Gambino), 2 x the exact one-sided tail (Birnbaum-Tingey) for d >= 0.5
 * and in the far tail, the Durbin matrix (Marsaglia-Tsang-Wang 2003) where it is exact
 * and cheap, and the Pelz-Good asymptotic series for large n near the centre
 * (n > 140, n d^1.5 > 1.4, n d^2 < 18). Where SciPy uses Pomeranz's recursion (n <= 140,
 * 0.754693 < n d^2 <= 4) this uses the Durbin matrix: both are exact. Matches SciPy to
 * 1e-9 relative on the cases in tests/unit/test_stats_ks.c. n == 0 or d NaN: NAN.
 * The Durbin matrix allocates (2k-1)^2 doubles x 3, k = ceil(n d) (at most ~60 for
 * n = 100000 in its region); the tail sum costs O(n).
 */
double cb_stats_kolmogorov_n_sf(size_t n, double d);
double cb_stats_kolmogorov_n_cdf(size_t n, double d);

/* One-sided exact tail P(D_n+ >= d) (Birnbaum & Tingey 1951): scipy.special.smirnov. */
double cb_stats_smirnov_sf(size_t n, double d);

/* The limiting Kolmogorov distribution's survival P(sqrt(n) D_n > z) as n -> inf:
 * scipy.special.kolmogorov(z) = scipy.stats.kstwobign.sf(z). 1 for z <= 0. */
double cb_stats_kolmogorov_sf(double z);

#ifdef __cplusplus
}
#endif
#endif
