/*
 * itl.c - the gaps between content chunks, gathered record by record (cb_itl_stats,
 * results.h): exact count, sums, min and max, and a log-linear histogram for the
 * percentiles, so that summaries need no per-token sample.
 *
 * Sums of gaps and of their squares are integers (gaps are whole ns; a square is below
 * 2^92, so 2^36 of them fit an unsigned 128-bit sum), hence the same in any order: a
 * summary of records merged per class equals one of the records read in file order.
 * Per-token values (a gap over the tokens of its chunk) are not whole: their sums are
 * long doubles, and their histogram counts each rounded up to a whole ns.
 */
#include <math.h>
#include <string.h>

#include "calibench/results.h"

/* 2^46 ns (19.5 hours) at 2^-10: 37,888 buckets, 296 KiB a histogram. A longer gap is
 * counted at 2^46 ns, still below its true value's percentile bound only there. */
static const cb_hist_params itl_hist = {.lowest_discernible = 1,
                                        .highest_trackable = UINT64_C(1) << 46,
                                        .precision_bits = CB_ITL_PRECISION_BITS};

static uint64_t clamp(uint64_t v) {
  return v < itl_hist.highest_trackable ? v : itl_hist.highest_trackable;
}

void cb_itl_stats_init(cb_itl_stats *s) {
  memset(s, 0, sizeof *s);
  cb_hist_init(&s->gap, &itl_hist, NULL); /* the parameters are valid */
}

void cb_itl_stats_free(cb_itl_stats *s) {
  cb_hist_free(&s->gap);
  cb_hist_free(&s->per_token);
  memset(s, 0, sizeof *s);
}

/* From here on per-token values differ from gaps: the gaps so far become per-token
 * values of one token each. */
static void own_per_token(cb_itl_stats *s) {
  if (s->per_token_own) return;
  s->per_token_own = 1;
  cb_hist_init(&s->per_token, &itl_hist, NULL);
  cb_hist_merge(&s->per_token, &s->gap);
  s->token_sum = (long double)s->gap_sum_ns;
  s->token_sum_sq = (long double)s->gap_sum_sq;
  s->token_min = (double)s->gap.min_value;
  s->token_max = (double)s->gap.max_value;
}

static void add_token_values(cb_itl_stats *s, double v, uint32_t k) {
  if (s->per_token.total_count == 0 || v < s->token_min) s->token_min = v;
  if (s->per_token.total_count == 0 || v > s->token_max) s->token_max = v;
  cb_hist_record_n(&s->per_token, clamp((uint64_t)ceil(v)), k);
  s->token_sum += (long double)v * k;
  s->token_sum_sq += (long double)v * v * k;
}

void cb_itl_stats_add(cb_itl_stats *s, const cb_record *r) {
  if (!r->chunk_ns) return;
  for (size_t c = 1; c < r->n_chunks; c++) {
    uint64_t g = r->chunk_ns[c] - r->chunk_ns[c - 1];
    uint32_t k = cb_record_chunk_tokens(r, c) ? cb_record_chunk_tokens(r, c) : 1;
    if (k > 1) own_per_token(s);
    cb_hist_record(&s->gap, clamp(g));
    s->gap_sum_ns += g;
    s->gap_sum_sq += (cb_u128)g * g;
    if (s->per_token_own) add_token_values(s, (double)g / k, k);
  }
}

void cb_itl_stats_merge(cb_itl_stats *dst, const cb_itl_stats *src) {
  if (src->per_token_own) own_per_token(dst);
  if (dst->per_token_own) {
    const cb_hist *h = src->per_token_own ? &src->per_token : &src->gap;
    if (h->total_count) {
      double lo = src->per_token_own ? src->token_min : (double)h->min_value;
      double hi = src->per_token_own ? src->token_max : (double)h->max_value;
      if (dst->per_token.total_count == 0 || lo < dst->token_min) dst->token_min = lo;
      if (dst->per_token.total_count == 0 || hi > dst->token_max) dst->token_max = hi;
    }
    cb_hist_merge(&dst->per_token, h);
    dst->token_sum += src->per_token_own ? src->token_sum : (long double)src->gap_sum_ns;
    dst->token_sum_sq += src->per_token_own ? src->token_sum_sq : (long double)src->gap_sum_sq;
  }
  cb_hist_merge(&dst->gap, &src->gap);
  dst->gap_sum_ns += src->gap_sum_ns;
  dst->gap_sum_sq += src->gap_sum_sq;
}

static void percentiles(const cb_hist *h, cb_dist *d) {
  d->p50 = cb_hist_quantile_linear(h, 0.50);
  d->p90 = cb_hist_quantile_linear(h, 0.90);
  d->p95 = cb_hist_quantile_linear(h, 0.95);
  d->p99 = cb_hist_quantile_linear(h, 0.99);
  d->p999 = cb_hist_quantile_linear(h, 0.999);
}

/* Population standard deviation from the sums (as cb_stats_moments_std). */
static double std_of(long double sum, long double sum_sq, uint64_t n) {
  long double mean = sum / (long double)n, var = sum_sq / (long double)n - mean * mean;
  return var > 0 ? (double)sqrtl(var) : 0.0;
}

void cb_itl_stats_dist(const cb_itl_stats *s, cb_metric m, cb_dist *d) {
  int token = m == CB_METRIC_ITL_TOKEN && s->per_token_own;
  const cb_hist *h = token ? &s->per_token : &s->gap;
  uint64_t n = h->total_count;
  *d = (cb_dist){.count = (size_t)n, .mean = NAN, .std = NAN, .cv = NAN, .min = NAN, .p50 = NAN,
                 .p90 = NAN, .p95 = NAN, .p99 = NAN, .p999 = NAN, .max = NAN};
  if (!n) return;
  if (token) {
    d->mean = (double)(s->token_sum / (long double)n);
    d->std = std_of(s->token_sum, s->token_sum_sq, n);
    d->min = s->token_min;
    d->max = s->token_max;
  } else {
    d->mean = (double)s->gap_sum_ns / (double)n;
    d->std = std_of((long double)s->gap_sum_ns, (long double)s->gap_sum_sq, n);
    d->min = (double)h->min_value;
    d->max = (double)h->max_value;
  }
  d->cv = d->mean != 0 ? d->std / d->mean : NAN;
  percentiles(h, d);
  /* per-token values were counted rounded up: the exact max bounds them */
  double *p[] = {&d->p50, &d->p90, &d->p95, &d->p99, &d->p999};
  for (size_t i = 0; i < 5; i++)
    if (*p[i] > d->max) *p[i] = d->max;
}
