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
/* The same definition over n ordered values not held in one array: at(ctx, k) is the
 * k-th smallest (0-based), read for the two ranks around q (n - 1). */
double cb_stats_quantile_by_rank(double (*at)(const void *ctx, uint64_t k), const void *ctx,
                                 uint64_t n, double q);

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

/* The same summary, bit for bit, without a sorted copy: `values` are reordered so that
 * each rank the percentiles read holds what a sort would put there (cb_stats_select);
 * no allocation. For large samples that need no full order. */
void cb_stats_summarize_inplace(double *values, size_t n, cb_stats_summary *out);

/* Reorder values[0..n) (no NaN) so that values[r] is what an ascending sort would
 * put at r for each r in ranks[0..n_ranks) (ascending, each < n); the rest are
 * permuted. Expected O(n), worst case O(n log n); no allocation unless it falls back
 * to cb_stats_sort. */
void cb_stats_select(double *values, size_t n, const size_t *ranks, size_t n_ranks);

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

/*
 * numpy's "linear" percentile (cb_stats_quantile_sorted's definition) over the values
 * counted: with N values and h = q (N - 1), the order statistics at ranks floor(h)
 * and floor(h) + 1 (0-based) interpolated by the fraction of h. Each order statistic
 * is taken as the highest equivalent value of its bucket, capped at the exact max;
 * rank 0 is the exact min and rank N - 1 the exact max. Every value counted at or
 * below `highest_trackable` stands for itself within its bucket, so against the exact
 * percentile v of the same values the result r satisfies v <= r < v + max(2^u, v *
 * 2^-p): with lowest_discernible 1 a relative error below 2^-p (2^-10 = 0.098% at the
 * default precision), never an underestimate. q outside [0, 1] or an empty histogram:
 * NAN.
 */
double cb_hist_quantile_linear(const cb_hist *h, double q);

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

/* The two-sample statistic D = sup |F_x - F_y| of the empirical CDFs of x and y (each
 * sorted ascending, no NaN): scipy.stats.ks_2samp(x, y).statistic. NAN when a sample
 * is empty. */
double cb_stats_ks_2samp_d(const double *x, size_t nx, const double *y, size_t ny);

/* One-sided exact tail P(D_n+ >= d) (Birnbaum & Tingey 1951): scipy.special.smirnov. */
double cb_stats_smirnov_sf(size_t n, double d);

/* The limiting Kolmogorov distribution's survival P(sqrt(n) D_n > z) as n -> inf:
 * scipy.special.kolmogorov(z) = scipy.stats.kstwobign.sf(z). 1 for z <= 0. */
double cb_stats_kolmogorov_sf(double z);

/* ==== divergences, entropy, binning and the JS bootstrap (calibrate drift) ============
 * src/stats/divergence.c, divergence_boot.c, binning.c. Self-contained section: the
 * calibration engineer's; the regression gate's tests live in their own section. */

/*
 * Discrete distributions are given as n non-negative weights; each function divides
 * them by their sum first (as SciPy does), so counts and shares give the same result.
 * `base` is the logarithm's base (2: bits, e: nats), > 0 and != 1.
 * Invalid input (n == 0, a negative / NaN / infinite weight, all weights 0, a bad base)
 * gives NAN. Sums are compensated; results agree with SciPy's to ~1e-15 relative
 * (tests/unit/test_stats_divergence.c checks 1e-12 on random distributions).
 */

/* Shannon entropy -sum p_i log p_i: scipy.stats.entropy(w, base=base). */
double cb_stats_entropy(const double *w, size_t n, double base);

/* Kullback-Leibler divergence D(p || q) = sum p_i log(p_i / q_i):
 * scipy.stats.entropy(p, q, base=base). +INFINITY when some p_i > 0 has q_i == 0
 * (smooth first with cb_stats_smooth_additive for a finite value). */
double cb_stats_kl(const double *p, const double *q, size_t n, double base);

/* Jensen-Shannon divergence (D(p || m) + D(q || m)) / 2 with m = (p + q) / 2:
 * scipy.spatial.distance.jensenshannon(p, q, base) ** 2 (SciPy returns the distance,
 * its square root). In [0, 1] for base 2. Always finite for valid input: categories
 * present on one side only are fine. */
double cb_stats_js(const double *p, const double *q, size_t n, double base);

/* As cb_stats_js, and when `terms` is not NULL it receives each category's share of the
 * divergence, terms[i] = (rel_entr(p_i, m_i) + rel_entr(q_i, m_i)) / (2 log base), which
 * sum to the result (n entries; untouched on invalid input). */
double cb_stats_js_terms(const double *p, const double *q, size_t n, double base,
                         double *terms);

/* Additive smoothing of shares: out_i = (w_i / sum(w) + epsilon) / (1 + n epsilon), so
 * out sums to 1 and no share is 0 when epsilon > 0. `out` may be `w`. CB_ERR_INVALID for
 * epsilon < 0 or invalid weights (then out is untouched). */
cb_status cb_stats_smooth_additive(const double *w, size_t n, double epsilon, double *out,
                                   cb_error *err);

/*
 * Shared bin edges from a pooled sample: the quantiles at j / bins, j = 0..bins, of
 * `sorted` (ascending, n values, no NaN; cb_stats_quantile_sorted's "linear" method),
 * with repeated edges dropped, so each bin holds about n / bins pooled values (fewer
 * bins when values repeat). `edges` needs room for bins + 1 values. Returns the number
 * of edges written (>= 2), or 0 when n == 0 or bins == 0. When every value is equal the
 * two edges are equal: one closed bin [x, x].
 */
size_t cb_stats_quantile_edges(const double *sorted, size_t n, size_t bins, double *edges);

/*
 * Count x (n values, any order) into the n_edges - 1 bins [e_0, e_1), [e_1, e_2), ...,
 * the last one closed [e_{k-1}, e_k] when `last_closed`. Values below e_0 go to *below,
 * values above the last bin to *above. `counts` has n_edges - 1 entries (doubles, so they
 * feed the divergences directly). CB_ERR_INVALID when there are fewer than 2 edges, an
 * edge is not finite, edges do not increase (two equal edges are allowed only as the
 * single closed bin), or a value is NaN.
 */
cb_status cb_stats_bin_count(const double *x, size_t n, const double *edges, size_t n_edges,
                             bool last_closed, double *counts, uint64_t *below, uint64_t *above,
                             cb_error *err);

/* Bootstrap settings. */
typedef struct cb_stats_js_boot_params {
  size_t replicates; /* resamples, >= 2 (default 2000) */
  double level;      /* two-sided confidence level in (0, 1) (default 0.95) */
  uint64_t seed;     /* replicate r draws from cb_rng_init_stream(seed, side, r) (default 0) */
} cb_stats_js_boot_params;

void cb_stats_js_boot_default_params(cb_stats_js_boot_params *p);

/* A percentile bootstrap interval. */
typedef struct cb_stats_js_interval {
  double estimate;       /* the statistic on the data */
  double lo, hi;         /* the (1 - level) / 2 and (1 + level) / 2 replicate quantiles */
  double level;          /* as asked */
  size_t replicates;     /* as asked */
  double replicate_mean; /* mean of the replicates (minus estimate: the bootstrap bias) */
} cb_stats_js_interval;

/*
 * Percentile-bootstrap interval for JS in bits (base 2) of the distributions p and q
 * (k weights each), estimated from samples of n_p and n_q observations: each replicate
 * draws multinomial(n_p, p) and multinomial(n_q, q) and recomputes JS. A size of 0 means
 * that side is a known population: it is held fixed. The draws are exact (conditional
 * binomials with Hormann's BTRD, or an alias table when n <= 8 k), so a replicate
 * costs O(min(k, n)) plus the O(k) of its JS.
 * Deterministic for a seed; allocates O(k + replicates) scratch (freed here).
 * CB_ERR_INVALID when k == 0, both sizes are 0, replicates < 2, level is outside (0, 1)
 * or the weights are invalid (then *out is untouched).
 */
cb_status cb_stats_js_bootstrap(const double *p, const double *q, size_t k, uint64_t n_p,
                                uint64_t n_q, const cb_stats_js_boot_params *params,
                                cb_stats_js_interval *out, cb_error *err);

/* ---- goodness of fit (probe agent's path distributions; src/stats/chisquare.c) ---- */

/* The regularized upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a):
 * scipy.special.gammaincc(a, x). a > 0, x >= 0, else NAN. */
double cb_stats_gamma_q(double a, double x);

/* Pearson's chi-square test of observed counts against expected ones:
 * scipy.stats.chisquare(obs, exp, ddof): stat = sum (o - e)^2 / e, p = Q((k - 1 -
 * ddof) / 2, stat / 2). exp NULL: every category expects the mean count. CB_ERR_INVALID
 * for k - 1 - ddof < 1, a negative or non-finite count, an expected count <= 0, or
 * sums of obs and exp that differ by more than 1e-8 relative (as SciPy refuses). */
cb_status cb_stats_chisquare(const double *obs, const double *exp, size_t k, int ddof,
                             double *stat, double *p, cb_error *err);

/* ==== end of divergences, entropy, binning and the JS bootstrap ======================= */

/* ==== Two-sample comparison for the regression gate ====================================
 * (src/stats/mannwhitney.c, bootstrap.c, tukey.c, holm.c; used by src/gate/)
 * Mann-Whitney U as scipy.stats.mannwhitneyu, a percentile bootstrap of a quantile's
 * difference, Tukey's fences and Holm's step-down adjustment. None of them keeps
 * state; scratch space is the caller's or allocated and freed inside.
 */

/* Which way a one-sided test looks: GREATER asks whether x tends to be larger than y. */
typedef enum {
  CB_STATS_TWO_SIDED = 0,
  CB_STATS_LESS,
  CB_STATS_GREATER
} cb_stats_alternative;

typedef enum {
  CB_STATS_MWU_AUTO = 0,   /* as SciPy: exact when n1 <= 8 or n2 <= 8 and there are no
                              ties (and n1 n2 <= CB_STATS_MWU_EXACT_MAX), else asymptotic */
  CB_STATS_MWU_EXACT,      /* the exact null distribution; CB_ERR_RANGE past the limit */
  CB_STATS_MWU_ASYMPTOTIC  /* normal approximation, tie correction, continuity correction */
} cb_stats_mwu_method;

/* Largest n1 * n2 for the exact distribution (its cost is O(min(n1,n2)^2 n1 n2)). */
#define CB_STATS_MWU_EXACT_MAX 32768

typedef struct cb_stats_mwu_result {
  size_t n1, n2;
  double u1;      /* U of x: #{(i,j): x_i > y_j} + #{ties} / 2 (SciPy's statistic) */
  double u2;      /* n1 n2 - u1 */
  double z;       /* asymptotic: (U - n1 n2 / 2 - 0.5) / sigma with SciPy's U; NAN if exact */
  double p_value; /* of the chosen alternative, clipped to [0, 1] */
  double effect;  /* u1 / (n1 n2): P(X > Y) + P(X = Y) / 2, the common-language effect */
  int exact;      /* 1: the exact distribution was used */
} cb_stats_mwu_result;

/*
 * Mann-Whitney U test of x (n1 values) against y (n2 values), as
 * scipy.stats.mannwhitneyu(x, y, use_continuity=True, alternative, method) computes
 * it: average ranks for ties, tie-corrected variance, continuity correction of 0.5,
 * p-value from the normal survival function (asymptotic) or from the exact count of
 * arrangements (exact, Mann & Whitney's recursion). +-inf are allowed (they rank
 * last/first); NaN is CB_ERR_INVALID. n1 or n2 == 0: CB_ERR_INVALID. Inputs are not
 * modified; O((n1 + n2) log(n1 + n2)) time and a temporary allocation of that size.
 */
cb_status cb_stats_mannwhitney(const double *x, size_t n1, const double *y, size_t n2,
                               cb_stats_alternative alt, cb_stats_mwu_method method,
                               cb_stats_mwu_result *out, cb_error *err);

/* Upper tail of the standard normal, P(Z > z) = erfc(z / sqrt 2) / 2 (scipy.stats.norm.sf). */
double cb_stats_norm_sf(double z);

/* ---- percentile bootstrap of a quantile's difference --------------------------------- */

typedef struct cb_stats_boot_result {
  double estimate;  /* quantile(x, q) - quantile(y, q) on the samples themselves */
  double ci_low;    /* percentile interval of the replicates at `confidence`:       */
  double ci_high;   /*   numpy.percentile(reps, [50 (1 - c), 50 (1 + c)])            */
  double p_greater; /* (1 + #{rep <= 0}) / (B + 1): one-sided p for "x's quantile is
                       larger"; p_less likewise with rep >= 0 */
  double p_less;
  size_t resamples; /* B */
} cb_stats_boot_result;

/*
 * Bootstrap replicates of quantile(x*, q) - quantile(y*, q) (numpy's "linear"
 * quantile) for B given resamples: resample b takes x[ix[b nx + i]], i < nx, and
 * y[iy[b ny + j]], j < ny. Writes B values to reps. Indices must be in range (not
 * checked). This is the arithmetic of cb_stats_bootstrap_quantile_diff with the draws
 * given, exposed so it can be compared with numpy on the same index sets.
 */
void cb_stats_bootstrap_replicates(const double *x, size_t nx, const double *y, size_t ny,
                                   double q, const uint32_t *ix, const uint32_t *iy, size_t B,
                                   double *reps);

/*
 * Summarise replicates (B values, reordered in place) into *out: interval, p-values;
 * `estimate` is left to the caller.
 */
void cb_stats_bootstrap_summarize(double *reps, size_t B, double confidence,
                                  cb_stats_boot_result *out);

/*
 * Percentile bootstrap (Efron) of quantile(x, q) - quantile(y, q): x and y are
 * resampled independently with replacement, `resamples` times, with draws from cb_rng
 * seeded by `seed` (x's then y's, per resample; Lemire's unbiased multiply-shift on 32
 * bits of each half of an output), so results are reproducible. n >= 1 each (< 2^32), no
 * NaN (+inf allowed), q in [0, 1], confidence in (0, 1), resamples >= 1 (2000 is the
 * gate's default); else CB_ERR_INVALID. O((nx + ny) log) once, then O(nx + ny) per
 * resample.
 */
cb_status cb_stats_bootstrap_quantile_diff(const double *x, size_t nx, const double *y,
                                           size_t ny, double q, size_t resamples,
                                           double confidence, uint64_t seed,
                                           cb_stats_boot_result *out, cb_error *err);

/* The q-quantile (numpy "linear") of v[0..n) by selection: reorders v, O(n) expected.
 * NAN when n == 0. */
double cb_stats_quantile_select(double *v, size_t n, double q);

/* ---- the bootstrap interval of a mean (src/stats/interval.c) -------------------------- */

/* Percentile bootstrap interval of the mean of x[0..n): `resamples` means of n draws
 * with replacement (draw b from cb_rng_init_stream(seed, "mean", b)), their (1 - c) / 2
 * and (1 + c) / 2 quantiles (numpy "linear"). NaN when n is 0; the mean itself when n
 * is 1 or resamples < 2. */
void cb_stats_bootstrap_mean(const double *x, size_t n, size_t resamples, double confidence,
                             uint64_t seed, double *lo, double *hi);

/* ---- Tukey's fences -------------------------------------------------------------------- */

typedef struct cb_stats_fences {
  size_t n;
  double q1, q3; /* numpy "linear" quartiles */
  double iqr;    /* q3 - q1 */
  double low;    /* q1 - k iqr */
  double high;   /* q3 + k iqr */
} cb_stats_fences;

/*
 * Tukey's fences over values (n >= 1, no NaN; not modified) with multiplier k >= 0
 * (1.5 is Tukey's "outlier", 3 "far out"). scratch: room for n doubles or NULL.
 * CB_ERR_INVALID when n == 0, k < 0 or a value is NaN.
 */
cb_status cb_stats_tukey_fences(const double *values, size_t n, double k, double *scratch,
                                cb_stats_fences *out, cb_error *err);

/* ---- multiple comparisons -------------------------------------------------------------- */

/*
 * Holm's step-down adjusted p-values (as statsmodels' multipletests(method="holm")):
 * sort ascending, adj_(i) = max over j <= i of min(1, (m - j + 1) p_(j)), back in the
 * input order. NaN p-values are skipped (left NaN) and do not count in m. p and adjusted
 * may be the same array.
 */
void cb_stats_holm(const double *p, size_t m, double *adjusted);


/* ==== agreement between two raters (src/stats/agreement.c, agreement_boot.c) ==========
 * A judge against people, or against itself. Each equals its reference's definition
 * (tests/unit/test_stats_agreement.c, vectors from SciPy 1.10.1 / scikit-learn 1.2.1);
 * NAN where the reference gives nan (n < 2, or an input whose values are all equal). */

/* scipy.stats.pearsonr(x, y).statistic */
double cb_stats_pearson(const double *x, const double *y, size_t n);
/* scipy.stats.spearmanr(x, y).statistic: Pearson's r of the average ranks */
double cb_stats_spearman(const double *x, const double *y, size_t n);
/* scipy.stats.kendalltau(x, y).statistic, tau-b (ties in x and y corrected); O(n log n) */
double cb_stats_kendall_tau_b(const double *x, const double *y, size_t n);
/* 1-based ranks, ties given their average (scipy.stats.rankdata's "average") */
void cb_stats_rank_average(const double *x, size_t n, double *ranks);

typedef enum {
  CB_STATS_KAPPA_UNWEIGHTED = 0,
  CB_STATS_KAPPA_LINEAR,
  CB_STATS_KAPPA_QUADRATIC
} cb_stats_kappa_weights;
/* sklearn.metrics.cohen_kappa_score(a, b, weights=None|"linear"|"quadratic"): labels
 * are the sorted distinct values of a and b; weights are distances between label
 * indices. NAN when n == 0, a value is not a whole number (NaN included: sklearn
 * refuses those), or every value is one label. */
double cb_stats_cohen_kappa(const double *a, const double *b, size_t n,
                            cb_stats_kappa_weights weights);

typedef enum {
  CB_STATS_AGREE_PEARSON = 0,
  CB_STATS_AGREE_SPEARMAN,
  CB_STATS_AGREE_KENDALL_TAU_B,
  CB_STATS_AGREE_KAPPA,
  CB_STATS_AGREE_KAPPA_LINEAR,
  CB_STATS_AGREE_KAPPA_QUADRATIC,
  CB_STATS_AGREE_COUNT
} cb_stats_agreement_kind;

/* "pearson", "spearman", "kendall_tau_b", "kappa", "kappa_linear", "kappa_quadratic" */
const char *cb_stats_agreement_name(cb_stats_agreement_kind kind);
/* The statistic `kind` of (x, y). */
double cb_stats_agreement(cb_stats_agreement_kind kind, const double *x, const double *y,
                          size_t n);

typedef struct cb_stats_agreement_interval {
  double estimate;   /* on the data */
  double lo, hi;     /* percentile interval; NAN when no replicate is defined */
  double level;
  size_t replicates;
  size_t undefined;  /* replicates left out: the statistic is undefined on them */
} cb_stats_agreement_interval;

/* Percentile bootstrap: `replicates` resamples of the n pairs with replacement
 * (replicate r draws from cb_rng_init_stream(seed, kind, r)), the (1 -+ level) / 2
 * quantiles of the defined replicates. CB_ERR_INVALID for replicates < 2 or level
 * outside (0, 1). */
cb_status cb_stats_agreement_bootstrap(cb_stats_agreement_kind kind, const double *x,
                                       const double *y, size_t n, size_t replicates,
                                       double level, uint64_t seed,
                                       cb_stats_agreement_interval *out, cb_error *err);

/* ---- proportions ---------------------------------------------------------------- */

/* The standard normal quantile: x with P(Z <= x) = p, p in (0, 1) (NAN outside).
 * Acklam's rational approximation refined by one Halley step on erfc: |error| < 1e-13. */
double cb_stats_normal_quantile(double p);
/* Wilson's score interval (Wilson 1927, as statsmodels' proportion_confint
 * method="wilson") for k successes in n trials at `level` (e.g. 0.95): *lo, *hi in
 * [0, 1]. k may be fractional (scores that count part of a trial). n = 0: [0, 1]. */
void cb_stats_wilson(double k, double n, double level, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
