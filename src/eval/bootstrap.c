/*
 * bootstrap.c - sacrebleu 2.6.0's confidence intervals and paired significance tests
 * (sacrebleu/significance.py, metrics/base.py Score.estimate_ci), with numpy's
 * generator reproduced draw for draw (nprng.c), so the same seed gives the same
 * resamples, intervals and p-values.
 *
 * sacrebleu resamples statistics held as float32 (np.array(stats, dtype='float32'))
 * and sums each resample's rows in float32; the sums are done in float here too.
 * Integer statistics (BLEU, chrF) below 2^24 are exact either way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "nprng.h"

static double score_of(const cb_eval_metric *m, const void *state, const double *stats) {
  cb_eval_result r = {0};
  cb_eval_sig_info sig = {.nrefs = "1"};
  m->result(state, stats, &sig, &r);
  double s = r.score;
  cb_eval_result_free(&r);
  return s;
}

/* The score of the rows idx[0..n) summed in float32 (stats_np[idxs][i].sum(0)). */
static double resample_score(const cb_eval_metric *m, const void *state, const double *rows,
                             const uint32_t *idx, size_t n, size_t k, float *acc, double *sum) {
  for (size_t j = 0; j < k; j++) acc[j] = 0.0f;
  for (size_t i = 0; i < n; i++) {
    const double *row = rows + (size_t)idx[i] * k;
    for (size_t j = 0; j < k; j++) acc[j] += (float)row[j];
  }
  for (size_t j = 0; j < k; j++) sum[j] = acc[j];
  return score_of(m, state, sum);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Exact sum of v[0..n) rounded once (Shewchuk's partials, as Python's math.fsum):
 * statistics.mean's exact sum. */
static double exact_sum(const double *v, size_t n) {
  double *p = cb_calloc(n + 1, sizeof *p);
  size_t np = 0;
  for (size_t i = 0; i < n; i++) {
    double x = v[i];
    size_t k = 0;
    for (size_t j = 0; j < np; j++) {
      double y = p[j];
      if (fabs(x) < fabs(y)) {
        double t = x;
        x = y;
        y = t;
      }
      double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) p[k++] = lo;
      x = hi;
    }
    p[k++] = x;
    np = k;
  }
  /* Round the partials to one double, as math.fsum does. */
  double hi = 0.0;
  if (np) {
    size_t j = np;
    hi = p[--j];
    double lo = 0.0;
    while (j > 0) {
      double x = hi, y = p[--j];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0) break;
    }
    if (j > 0 && ((lo < 0 && p[j - 1] < 0) || (lo > 0 && p[j - 1] > 0))) {
      double y = lo * 2, x = hi + y, yr = x - hi;
      if (y == yr) hi = x;
    }
  }
  cb_free(p);
  return hi;
}

/* numpy's pairwise summation of a float64 array (numpy/core/src/umath/loops_utils.h
 * pairwise_sum: blocks of 128 with 8 accumulators), for ndarray.mean. */
static double pairwise_sum(const double *a, size_t n) {
  if (n < 8) {
    double r = 0.;
    for (size_t i = 0; i < n; i++) r += a[i];
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; j++) r[j] = a[j];
    size_t i;
    for (i = 8; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; j++) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* 95% bounds of the sorted scores: 1/40 from each end (estimate_ci). */
static double half_width(double *sorted, size_t n) {
  size_t lower = n / 40, upper = n - lower - 1;
  return 0.5 * (sorted[upper] - sorted[lower]);
}

/* Score.estimate_ci (base.py): statistics.mean of the scores. */
static cb_eval_interval estimate_ci_statistics(double *scores, size_t n) {
  qsort(scores, n, sizeof *scores, cmp_double);
  cb_eval_interval iv = {exact_sum(scores, n) / (double)n, half_width(scores, n)};
  return iv;
}

/* significance.py estimate_ci: numpy's mean of the sorted scores. */
static cb_eval_interval estimate_ci_numpy(double *scores, size_t n) {
  qsort(scores, n, sizeof *scores, cmp_double);
  cb_eval_interval iv = {pairwise_sum(scores, n) / (double)n, half_width(scores, n)};
  return iv;
}

/* rng.choice(n, size=(samples, n), replace=True), row by row. */
static uint32_t *draw_indices(uint64_t seed, size_t n, long samples) {
  cb__nprng g;
  cb__nprng_init(&g, seed);
  uint32_t *idx = cb_reallocarray(NULL, (size_t)samples * n, sizeof *idx);
  for (size_t i = 0; i < (size_t)samples * n; i++) idx[i] = cb__nprng_below(&g, (uint32_t)n);
  return idx;
}

static double *resample_scores(const cb_eval_metric *m, const void *state, const double *rows,
                               size_t n, size_t k, long samples, const uint32_t *idx) {
  float *acc = cb_calloc(k, sizeof *acc);
  double *sum = cb_calloc(k, sizeof *sum), *scores = cb_calloc((size_t)samples, sizeof *scores);
  for (long s = 0; s < samples; s++)
    scores[s] = resample_score(m, state, rows, idx + (size_t)s * n, n, k, acc, sum);
  cb_free(acc);
  cb_free(sum);
  return scores;
}

cb_eval_interval cb_eval_bootstrap(const cb_eval_metric *m, const void *state, const double *rows,
                                   size_t n, size_t k, long samples, uint64_t seed) {
  uint32_t *idx = draw_indices(seed, n, samples);
  double *scores = resample_scores(m, state, rows, n, k, samples, idx);
  cb_eval_interval iv = estimate_ci_statistics(scores, (size_t)samples);
  cb_free(scores);
  cb_free(idx);
  return iv;
}

static double corpus_score(const cb_eval_metric *m, const void *state, const double *rows, size_t n,
                           size_t k) {
  double *sum = cb_calloc(k, sizeof *sum);
  cb_eval_sum_stats(rows, n, k, sum);
  double s = score_of(m, state, sum);
  cb_free(sum);
  return s;
}

/* A paired test's result before the test: the baseline's and the system's corpus scores. */
static cb_eval_paired both_scores(const cb_eval_metric *m, const void *state, const double *bl_rows,
                                  const double *sys_rows, size_t n, size_t k) {
  cb_eval_paired r = {0};
  r.baseline = corpus_score(m, state, bl_rows, n, k);
  r.system = corpus_score(m, state, sys_rows, n, k);
  return r;
}

/* _compute_p_value (after multeval): (#{x > observed} + 1) / (count + 1). */
static double p_value(const double *x, size_t count, double observed) {
  size_t c = 0;
  for (size_t i = 0; i < count; i++) c += x[i] > observed;
  return (double)(c + 1) / (double)(count + 1);
}

cb_eval_paired cb_eval_paired_bs(const cb_eval_metric *m, const void *state, const double *bl_rows,
                                 const double *sys_rows, size_t n, size_t k, long samples,
                                 uint64_t seed) {
  cb_eval_paired r = both_scores(m, state, bl_rows, sys_rows, n, k);
  r.has_interval = 1;
  /* The baseline's interval comes from its own _bootstrap_resample with a new
   * generator of the same seed, so from the same resamples. */
  uint32_t *idx = draw_indices(seed, n, samples);
  double *bl = resample_scores(m, state, bl_rows, n, k, samples, idx);
  double *sys = resample_scores(m, state, sys_rows, n, k, samples, idx);
  double *diffs = cb_calloc((size_t)samples, sizeof *diffs);
  for (long s = 0; s < samples; s++) diffs[s] = fabs(sys[s] - bl[s]);
  double mean = pairwise_sum(diffs, (size_t)samples) / (double)samples;
  for (long s = 0; s < samples; s++) diffs[s] -= mean;
  r.p_value = p_value(diffs, (size_t)samples, fabs(r.baseline - r.system));
  double *bl_copy = cb_calloc((size_t)samples, sizeof *bl_copy);
  memcpy(bl_copy, bl, (size_t)samples * sizeof *bl);
  r.baseline_ci = estimate_ci_numpy(bl_copy, (size_t)samples);
  r.system_ci = estimate_ci_numpy(sys, (size_t)samples);
  cb_free(bl_copy);
  cb_free(diffs);
  cb_free(bl);
  cb_free(sys);
  cb_free(idx);
  return r;
}

cb_eval_paired cb_eval_paired_ar(const cb_eval_metric *m, const void *state, const double *bl_rows,
                                 const double *sys_rows, size_t n, size_t k, long trials,
                                 uint64_t seed) {
  cb_eval_paired r = both_scores(m, state, bl_rows, sys_rows, n, k);
  cb__nprng g;
  cb__nprng_init(&g, seed);
  cb__nprng_bool_reset(&g);
  double *a = cb_calloc(k, sizeof *a), *b = cb_calloc(k, sizeof *b);
  double *diffs = cb_calloc((size_t)trials, sizeof *diffs);
  for (long t = 0; t < trials; t++) {
    /* pos_sel @ bl + neg_sel @ sys and the other way round: each segment's rows go to
     * one pseudo-system or the other. Sums in segment order, as an exact integer
     * product is (BLEU, chrF); TER's fractional lengths may round differently from
     * numpy's matrix product. */
    for (size_t j = 0; j < k; j++) a[j] = b[j] = 0;
    for (size_t i = 0; i < n; i++) {
      int pos = cb__nprng_bool(&g);
      const double *x = (pos ? bl_rows : sys_rows) + i * k, *y = (pos ? sys_rows : bl_rows) + i * k;
      for (size_t j = 0; j < k; j++) a[j] += x[j], b[j] += y[j];
    }
    diffs[t] = fabs(score_of(m, state, a) - score_of(m, state, b));
  }
  r.p_value = p_value(diffs, (size_t)trials, fabs(r.baseline - r.system));
  cb_free(a);
  cb_free(b);
  cb_free(diffs);
  return r;
}
