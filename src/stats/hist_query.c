/*
 * hist_query.c - what a histogram says: extremes, mean, std and quantiles.
 *
 * Everything here reads the buckets through the iterator, so it depends on the
 * layout only through cb_hist_iter's (lowest, highest, count).
 */
#include <math.h>

#include "calibench/stats.h"

uint64_t cb_hist_total_count(const cb_hist *h) { return h->total_count; }
uint64_t cb_hist_min(const cb_hist *h) { return h->min_value; }
uint64_t cb_hist_max(const cb_hist *h) { return h->max_value; }

static double midpoint(const cb_hist_iter *it) {
  return (double)it->lowest + (double)(it->highest - it->lowest) / 2.0;
}

double cb_hist_mean(const cb_hist *h) {
  if (h->total_count == 0) return 0.0;
  double sum = 0.0;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it)) sum += midpoint(&it) * (double)it.count;
  return sum / (double)h->total_count;
}

double cb_hist_stddev(const cb_hist *h) {
  if (h->total_count == 0) return 0.0;
  double mean = cb_hist_mean(h), sum_sq = 0.0;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it)) {
    double d = midpoint(&it) - mean;
    sum_sq += d * d * (double)it.count;
  }
  return sqrt(sum_sq / (double)h->total_count);
}

/* k = ceil(q n) in 0..n, q clamped into [0, 1]. The 1e-12 relative slack undoes
 * binary rounding of q n just above an integer (0.07 * 100 = 7.000000000000001). */
static uint64_t rank_of(double q, uint64_t n) {
  if (!(q > 0.0)) return 0;
  if (q >= 1.0) return n;
  double r = q * (double)n;
  double k = ceil(r - r * 1e-12);
  if (k < 1.0) return 1;
  if (k >= (double)n) return n;
  return (uint64_t)k;
}

uint64_t cb_hist_value_at_quantile(const cb_hist *h, double q) {
  if (h->total_count == 0) return 0;
  uint64_t k = rank_of(q, h->total_count);
  if (k == 0) return h->min_value;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it))
    if (it.cumulative_count >= k) break;
  return it.highest < h->max_value ? it.highest : h->max_value;
}

/* The value of rank k (0-based, k < total) as the histogram knows it: the exact min
 * and max at the ends, else the highest equivalent of its bucket capped at the max. */
static double order_statistic(const void *ctx, uint64_t k) {
  const cb_hist *h = ctx;
  if (k == 0) return (double)h->min_value;
  if (k + 1 >= h->total_count) return (double)h->max_value;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it))
    if (it.cumulative_count > k) break;
  return (double)(it.highest < h->max_value ? it.highest : h->max_value);
}

double cb_hist_quantile_linear(const cb_hist *h, double q) {
  return cb_stats_quantile_by_rank(order_statistic, h, h->total_count, q);
}
