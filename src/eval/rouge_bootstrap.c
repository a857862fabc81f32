/*
 * rouge_bootstrap.c - rouge-score's BootstrapAggregator (google-research
 * rouge/scoring.py, _bootstrap_resample) with numpy's draws, so that a seeded
 * Python run and calibench give the same low/mid/high.
 *
 * The draws: np.random.seed(seed) seeds the legacy RandomState's MT19937 with
 * init_genrand (numpy/random/src/mt19937: mt19937_seed); resampling n segments takes
 * n_samples x n integers in [0, n) from randint, which for the legacy generator is
 * the masked rejection method (numpy/random/src/distributions: gen_mask and
 * buffered_bounded_masked_uint32: a 32-bit draw ANDed with the smallest all-ones mask
 * covering n-1, redrawn while above n-1). MT19937 itself is Matsumoto and
 * Nishimura's generator (1998) with its published constants.
 *
 * Each resample's mean is the sum in order divided by n (np.mean over axis 1), and
 * the percentiles are numpy's default 'linear' method: virtual index (N-1)q, the
 * two neighbours interpolated as numpy's _lerp does (from the upper one when the
 * fraction is >= 0.5).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "rouge_internal.h"

typedef struct {
  uint32_t key[624];
  int pos;
} mt19937;

static void mt_seed(mt19937 *mt, uint32_t seed) {
  for (int i = 0; i < 624; i++) {
    mt->key[i] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
  }
  mt->pos = 624;
}

static void mt_refill(mt19937 *mt) {
  static const uint32_t mag01[2] = {0, 0x9908B0DFu};
  int i;
  for (i = 0; i < 624 - 397; i++) {
    uint32_t y = (mt->key[i] & 0x80000000u) | (mt->key[i + 1] & 0x7FFFFFFFu);
    mt->key[i] = mt->key[i + 397] ^ (y >> 1) ^ mag01[y & 1];
  }
  for (; i < 623; i++) {
    uint32_t y = (mt->key[i] & 0x80000000u) | (mt->key[i + 1] & 0x7FFFFFFFu);
    mt->key[i] = mt->key[i + 397 - 624] ^ (y >> 1) ^ mag01[y & 1];
  }
  uint32_t y = (mt->key[623] & 0x80000000u) | (mt->key[0] & 0x7FFFFFFFu);
  mt->key[623] = mt->key[396] ^ (y >> 1) ^ mag01[y & 1];
  mt->pos = 0;
}

static uint32_t mt_next(mt19937 *mt) {
  if (mt->pos == 624) mt_refill(mt);
  uint32_t y = mt->key[mt->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9D2C5680u;
  y ^= (y << 15) & 0xEFC60000u;
  y ^= y >> 18;
  return y;
}

/* An integer in [0, max] as numpy's legacy randint draws it (max < 2^32 - 1). */
static uint32_t bounded(mt19937 *mt, uint32_t max) {
  if (!max) return 0; /* numpy draws nothing for an empty range */
  uint32_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  uint32_t v;
  while ((v = mt_next(mt) & mask) > max) {}
  return v;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* np.percentile(sorted, 100 q), method 'linear', of n >= 1 sorted values. */
static double percentile(const double *v, size_t n, double q) {
  double idx = (double)(n - 1) * q;
  double lo = floor(idx);
  size_t i = (size_t)lo;
  if (i >= n - 1) return v[n - 1];
  double t = idx - lo, a = v[i], b = v[i + 1], d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

cb_status cb_eval_rouge_bootstrap(const cb_eval_prf *seg, size_t n, size_t n_samples,
                                  double confidence, uint32_t seed,
                                  cb_eval_rouge_interval *out, cb_error *err) {
  if (!(confidence >= 0 && confidence <= 1))
    return cb_error_set(err, CB_ERR_INVALID, "rouge bootstrap: confidence %g is not in [0, 1]",
                        confidence);
  if (!n_samples)
    return cb_error_set(err, CB_ERR_INVALID, "rouge bootstrap: the number of samples must be positive");
  if (!n)
    return cb_error_set(err, CB_ERR_INVALID, "rouge bootstrap: no segment to resample");
  if (n > UINT32_MAX)
    return cb_error_set(err, CB_ERR_RANGE, "rouge bootstrap: %zu segments is too many", n);
  double *means = cb_reallocarray(NULL, n_samples, 3 * sizeof(double));
  double *col = cb_reallocarray(NULL, n_samples, sizeof(double));
  mt19937 mt;
  mt_seed(&mt, seed);
  for (size_t s = 0; s < n_samples; s++) {
    double sum[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
      const cb_eval_prf *x = &seg[bounded(&mt, (uint32_t)(n - 1))];
      sum[0] += x->precision;
      sum[1] += x->recall;
      sum[2] += x->fmeasure;
    }
    for (int k = 0; k < 3; k++) means[s * 3 + k] = sum[k] / (double)n;
  }
  /* scoring.py: q = 100 * [delta, 0.5, 1 - delta]; numpy divides by 100 again */
  double delta = (1 - confidence) / 2;
  double q[3] = {100 * delta / 100, 100 * 0.5 / 100, 100 * (1 - delta) / 100};
  cb_eval_prf *bound[3] = {&out->low, &out->mid, &out->high};
  for (int k = 0; k < 3; k++) {
    for (size_t s = 0; s < n_samples; s++) col[s] = means[s * 3 + k];
    qsort(col, n_samples, sizeof col[0], cmp_double);
    for (int b = 0; b < 3; b++) {
      double v = percentile(col, n_samples, q[b]);
      if (k == 0) bound[b]->precision = v;
      else if (k == 1) bound[b]->recall = v;
      else bound[b]->fmeasure = v;
    }
  }
  cb_free(means);
  cb_free(col);
  return CB_OK;
}
