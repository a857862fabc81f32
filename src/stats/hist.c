/*
 * hist.c - the log-linear histogram's layout, recording and iteration.
 *
 * Layout (docs/internals/histogram.md has the proof of the error bound): a value v
 * is first scaled to x = v >> u, u = floor(log2(lowest_discernible)). With
 * p = precision_bits, x < 2^(p+1) is counted exactly (bucket group b = 0, width 1);
 * otherwise b = floor(log2 x) - p >= 1 and x is counted with its low b bits dropped,
 * in a group of 2^p sub-buckets of width 2^b covering [2^(p+b), 2^(p+b+1)). The
 * counts index is (b << p) + (x >> b): group 0 fills indexes [0, 2^(p+1)), group b
 * >= 1 fills [(b+1) 2^p, (b+2) 2^p), so the indexes are dense and ordered by value.
 * The array ends at the index of highest_trackable.
 */
#include <inttypes.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

/* floor(log2 x) for x > 0. */
static int log2_floor(uint64_t x) { return 63 - __builtin_clzll(x); }

static size_t index_of(const cb_hist *h, uint64_t value) {
  int p = h->params.precision_bits;
  uint64_t x = value >> h->unit_shift;
  int b = x ? log2_floor(x) - p : 0;
  if (b < 0) b = 0;
  return ((size_t)b << p) + (size_t)(x >> b);
}

/* The bucket group of a counts index: 0 below 2^(p+1), else (index >> p) - 1. */
static int group_of_index(const cb_hist *h, size_t index) {
  size_t hi = index >> h->params.precision_bits;
  return hi ? (int)hi - 1 : 0;
}

static uint64_t lowest_of_index(const cb_hist *h, size_t index) {
  int b = group_of_index(h, index);
  uint64_t sub = index - ((size_t)b << h->params.precision_bits);
  return sub << (b + h->unit_shift);
}

/* Largest value of the bucket; lowest + (width - 1) cannot overflow because the
 * lowest value is a multiple of the power-of-two width. */
static uint64_t highest_of_index(const cb_hist *h, size_t index) {
  int shift = group_of_index(h, index) + h->unit_shift;
  return lowest_of_index(h, index) + ((UINT64_C(1) << shift) - 1);
}

cb_hist_params cb_hist_default_params(void) {
  cb_hist_params p = {.lowest_discernible = 1,
                      .highest_trackable = UINT64_C(3600) * UINT64_C(1000000000),
                      .precision_bits = 10};
  return p;
}

static cb_status check_params(const cb_hist_params *p, cb_error *err) {
  if (p->precision_bits < CB_HIST_PRECISION_BITS_MIN ||
      p->precision_bits > CB_HIST_PRECISION_BITS_MAX)
    return cb_error_set(err, CB_ERR_INVALID,
                        "histogram precision_bits must be in %d..%d, got %d",
                        CB_HIST_PRECISION_BITS_MIN, CB_HIST_PRECISION_BITS_MAX,
                        p->precision_bits);
  if (p->lowest_discernible < 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "histogram lowest_discernible must be >= 1, got 0");
  if (p->lowest_discernible > p->highest_trackable / 2)
    return cb_error_set(err, CB_ERR_INVALID,
                        "histogram highest_trackable (%" PRIu64
                        ") must be >= 2 * lowest_discernible (%" PRIu64 ")",
                        p->highest_trackable, p->lowest_discernible);
  return CB_OK;
}

cb_status cb_hist_init(cb_hist *h, const cb_hist_params *params, cb_error *err) {
  cb_status st = check_params(params, err);
  if (st != CB_OK) return st;
  memset(h, 0, sizeof *h);
  h->params = *params;
  h->unit_shift = log2_floor(params->lowest_discernible);
  h->counts_len = index_of(h, params->highest_trackable) + 1;
  h->counts = cb_calloc(h->counts_len, sizeof *h->counts);
  return CB_OK;
}

void cb_hist_free(cb_hist *h) {
  cb_free(h->counts);
  h->counts = NULL;
  h->counts_len = 0;
}

void cb_hist_reset(cb_hist *h) {
  memset(h->counts, 0, h->counts_len * sizeof *h->counts);
  h->total_count = 0;
  h->min_value = 0;
  h->max_value = 0;
  h->out_of_range_count = 0;
}

bool cb_hist_record(cb_hist *h, uint64_t value) { return cb_hist_record_n(h, value, 1); }

bool cb_hist_record_n(cb_hist *h, uint64_t value, uint64_t count) {
  if (value > h->params.highest_trackable) {
    h->out_of_range_count += count;
    return false;
  }
  if (count == 0) return true;
  h->counts[index_of(h, value)] += count;
  if (h->total_count == 0 || value < h->min_value) h->min_value = value;
  if (value > h->max_value) h->max_value = value;
  h->total_count += count;
  return true;
}

uint64_t cb_hist_lowest_equivalent(const cb_hist *h, uint64_t value) {
  return lowest_of_index(h, index_of(h, value));
}

uint64_t cb_hist_highest_equivalent(const cb_hist *h, uint64_t value) {
  return highest_of_index(h, index_of(h, value));
}

void cb_hist_iter_init(cb_hist_iter *it, const cb_hist *h) {
  memset(it, 0, sizeof *it);
  it->h = h;
}

bool cb_hist_iter_next(cb_hist_iter *it) {
  const cb_hist *h = it->h;
  for (size_t i = it->next_index; i < h->counts_len; i++) {
    if (!h->counts[i]) continue;
    it->index = i;
    it->lowest = lowest_of_index(h, i);
    it->highest = highest_of_index(h, i);
    it->count = h->counts[i];
    it->cumulative_count += it->count;
    it->next_index = i + 1;
    return true;
  }
  it->next_index = h->counts_len;
  return false;
}
