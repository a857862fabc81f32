/*
 * hist_merge.c - adding one histogram into another (shards into a total).
 *
 * Each non-empty source bucket is re-recorded in the destination as one
 * representative, min(highest equivalent, source max): never below a value it
 * stands for, so the one-sided error bound composes. When both layouts agree
 * (same unit_shift and precision_bits) the representative falls in the bucket with
 * the same index, so counts add bucket by bucket and the merge is exact
 * (docs/internals/histogram.md).
 */
#include "calibench/stats.h"

uint64_t cb_hist_merge(cb_hist *dst, const cb_hist *src) {
  dst->out_of_range_count += src->out_of_range_count;
  uint64_t dropped = 0; /* also counted in dst's out_of_range_count by record_n */
  cb_hist_iter it;
  cb_hist_iter_init(&it, src);
  while (cb_hist_iter_next(&it)) {
    uint64_t rep = it.highest < src->max_value ? it.highest : src->max_value;
    if (!cb_hist_record_n(dst, rep, it.count)) dropped += it.count;
  }
  /* Representatives grow with the bucket, so drops take the top buckets first: if
   * anything was kept, src's lowest bucket was, and its exact min is a kept value. */
  if (dropped < src->total_count && src->min_value < dst->min_value)
    dst->min_value = src->min_value;
  return dropped;
}
