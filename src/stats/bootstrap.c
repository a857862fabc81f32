/*
 * bootstrap.c - the percentile bootstrap (Efron 1979) of the difference between two
 * samples' q-quantiles, which the gate uses to ask "did p99 TTFT really get worse?".
 *
 * Each replicate resamples x and y independently with replacement and takes
 * quantile(x*, q) - quantile(y*, q) with numpy's "linear" quantile. Both samples are
 * sorted once; a resample is a count per rank, and its order statistics are read off
 * the counts from the nearer end, so a replicate costs O(n) draws and no sorting. The
 * interval is the percentile
 * interval of the replicates (numpy.percentile of them); the one-sided p-values count
 * the replicates on the wrong side of 0 with the usual +1 smoothing, so they are never
 * 0 and are comparable across B.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"

static void swap(double *a, double *b) {
  double t = *a;
  *a = *b;
  *b = t;
}

/* Hoare-style quickselect: after it, v[k] is the k-th smallest and everything before is
 * <= it, everything after >= it. Median-of-three pivots keep it linear on sorted data. */
static void select_kth(double *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (hi > lo) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < v[lo]) swap(&v[mid], &v[lo]);
    if (v[hi] < v[lo]) swap(&v[hi], &v[lo]);
    if (v[hi] < v[mid]) swap(&v[hi], &v[mid]);
    double pivot = v[mid];
    size_t i = lo, j = hi;
    for (;;) {
      while (v[i] < pivot) i++;
      while (pivot < v[j]) j--;
      if (i >= j) break;
      swap(&v[i], &v[j]);
      i++;
      j--;
    }
    /* [lo, j] <= pivot <= [j + 1, hi] */
    if (k <= j) hi = j;
    else lo = j + 1;
  }
}

double cb_stats_quantile_select(double *v, size_t n, double q) {
  if (n == 0 || !(q >= 0 && q <= 1)) return NAN;
  /* Exactly numpy's "linear": h = (n - 1) q, lower neighbour i = floor(h). */
  double h = (double)(n - 1) * q;
  size_t i = (size_t)floor(h);
  if (i >= n - 1) {
    select_kth(v, n, n - 1);
    return v[n - 1];
  }
  select_kth(v, n, i);
  double lo = v[i];
  double hi = v[i + 1];
  for (size_t k = i + 2; k < n; k++)
    if (v[k] < hi) hi = v[k];
  double t = h - (double)i;
  if (t == 0) return lo;
  /* The same expression as cb_stats_quantile_sorted (numpy's _lerp). */
  double d = hi - lo;
  if (isinf(hi)) return hi;
  double r = lo + d * t;
  if (t >= 0.5) r = hi - d * (1 - t);
  return r;
}

/*
 * A sample prepared for resampling: its values sorted, and each original index's rank.
 * A resample is then a count per rank, and its k-th smallest value is found by walking
 * the counts from the nearer end: no copy, no selection.
 */
typedef struct prepared {
  size_t n;
  double *sorted;    /* n values, ascending */
  uint32_t *rank_of; /* n: original index -> rank in sorted */
  uint32_t *count;   /* n: scratch, draws per rank */
} prepared;

typedef struct ranked {
  double v;
  uint32_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
  return (x->i > y->i) - (x->i < y->i);
}

static void prepare(prepared *p, const double *v, size_t n) {
  p->n = n;
  p->sorted = cb_malloc(n * sizeof *p->sorted);
  p->rank_of = cb_malloc(n * sizeof *p->rank_of);
  p->count = cb_malloc(n * sizeof *p->count);
  ranked *r = cb_malloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (ranked){v[i], (uint32_t)i};
  qsort(r, n, sizeof *r, cmp_ranked);
  for (size_t k = 0; k < n; k++) {
    p->sorted[k] = r[k].v;
    p->rank_of[r[k].i] = (uint32_t)k;
  }
  cb_free(r);
}

static void unprepare(prepared *p) {
  cb_free(p->sorted);
  cb_free(p->rank_of);
  cb_free(p->count);
}

/* The k-th smallest (0-based) of the resample described by p->count. */
static double kth(const prepared *p, size_t k) {
  size_t n = p->n, seen = 0;
  if (k < n / 2) {
    for (size_t r = 0; r < n; r++) {
      seen += p->count[r];
      if (seen > k) return p->sorted[r];
    }
  } else {
    size_t above = n - 1 - k; /* values after the k-th */
    for (size_t r = n; r-- > 0;) {
      seen += p->count[r];
      if (seen > above) return p->sorted[r];
    }
  }
  return p->sorted[n - 1];
}

/* numpy's "linear" quantile of the resample in p->count. */
static double resample_quantile(const prepared *p, double q) {
  double h = (double)(p->n - 1) * q;
  size_t i = (size_t)floor(h);
  double lo = kth(p, i);
  if (i + 1 >= p->n) return lo;
  double t = h - (double)i;
  if (t == 0) return lo;
  double hi = kth(p, i + 1);
  if (isinf(hi)) return hi;
  double d = hi - lo;
  return t >= 0.5 ? hi - d * (1 - t) : lo + d * t;
}

void cb_stats_bootstrap_replicates(const double *x, size_t nx, const double *y, size_t ny,
                                   double q, const uint32_t *ix, const uint32_t *iy, size_t B,
                                   double *reps) {
  prepared px, py;
  prepare(&px, x, nx);
  prepare(&py, y, ny);
  for (size_t b = 0; b < B; b++) {
    memset(px.count, 0, nx * sizeof *px.count);
    for (size_t i = 0; i < nx; i++) px.count[px.rank_of[ix[b * nx + i]]]++;
    memset(py.count, 0, ny * sizeof *py.count);
    for (size_t j = 0; j < ny; j++) py.count[py.rank_of[iy[b * ny + j]]]++;
    reps[b] = resample_quantile(&px, q) - resample_quantile(&py, q);
  }
  unprepare(&px);
  unprepare(&py);
}

/* Uniform on [0, n) from 32 random bits (Lemire's multiply-shift with rejection:
 * unbiased, no division in the common case). *buf holds the spare 32 bits. */
static uint32_t draw_below(cb_rng *rng, uint32_t n, uint64_t *buf, int *have) {
  for (;;) {
    uint32_t x;
    if (*have) {
      x = (uint32_t)(*buf >> 32);
      *have = 0;
    } else {
      *buf = cb_rng_next(rng);
      x = (uint32_t)*buf;
      *have = 1;
    }
    uint64_t m = (uint64_t)x * n;
    uint32_t low = (uint32_t)m;
    if (low >= n || low >= (uint32_t)(-n) % n) return (uint32_t)(m >> 32);
  }
}

void cb_stats_bootstrap_summarize(double *reps, size_t B, double confidence,
                                  cb_stats_boot_result *out) {
  size_t le = 0, ge = 0;
  for (size_t b = 0; b < B; b++) {
    le += reps[b] <= 0;
    ge += reps[b] >= 0;
  }
  cb_stats_sort(reps, B);
  out->ci_low = cb_stats_quantile_sorted(reps, B, (1 - confidence) / 2);
  out->ci_high = cb_stats_quantile_sorted(reps, B, (1 + confidence) / 2);
  out->p_greater = (1.0 + (double)le) / ((double)B + 1);
  out->p_less = (1.0 + (double)ge) / ((double)B + 1);
  out->resamples = B;
}

cb_status cb_stats_bootstrap_quantile_diff(const double *x, size_t nx, const double *y,
                                           size_t ny, double q, size_t resamples,
                                           double confidence, uint64_t seed,
                                           cb_stats_boot_result *out, cb_error *err) {
  if (nx == 0 || ny == 0)
    return cb_error_set(err, CB_ERR_INVALID, "bootstrap needs two non-empty samples (got %zu and %zu)", nx, ny);
  if (!(q >= 0 && q <= 1)) return cb_error_set(err, CB_ERR_INVALID, "bootstrap: quantile %g is outside [0, 1]", q);
  if (!(confidence > 0 && confidence < 1))
    return cb_error_set(err, CB_ERR_INVALID, "bootstrap: confidence %g is outside (0, 1)", confidence);
  if (resamples == 0) return cb_error_set(err, CB_ERR_INVALID, "bootstrap: resamples must be >= 1");
  if (nx > UINT32_MAX || ny > UINT32_MAX)
    return cb_error_set(err, CB_ERR_RANGE, "bootstrap: samples are limited to 2^32 values");
  for (size_t i = 0; i < nx; i++)
    if (isnan(x[i])) return cb_error_set(err, CB_ERR_INVALID, "bootstrap: x[%zu] is NaN", i);
  for (size_t i = 0; i < ny; i++)
    if (isnan(y[i])) return cb_error_set(err, CB_ERR_INVALID, "bootstrap: y[%zu] is NaN", i);

  double *reps = cb_malloc(resamples * sizeof *reps);
  prepared px, py;
  prepare(&px, x, nx);
  prepare(&py, y, ny);
  cb_rng rng;
  cb_rng_init(&rng, seed);
  uint64_t buf = 0;
  int have = 0;
  for (size_t b = 0; b < resamples; b++) {
    memset(px.count, 0, nx * sizeof *px.count);
    for (size_t i = 0; i < nx; i++) px.count[draw_below(&rng, (uint32_t)nx, &buf, &have)]++;
    memset(py.count, 0, ny * sizeof *py.count);
    for (size_t j = 0; j < ny; j++) py.count[draw_below(&rng, (uint32_t)ny, &buf, &have)]++;
    reps[b] = resample_quantile(&px, q) - resample_quantile(&py, q);
  }
  memset(out, 0, sizeof *out);
  out->estimate = cb_stats_quantile_sorted(px.sorted, nx, q) - cb_stats_quantile_sorted(py.sorted, ny, q);
  cb_stats_bootstrap_summarize(reps, resamples, confidence, out);
  unprepare(&px);
  unprepare(&py);
  cb_free(reps);
  return CB_OK;
}
