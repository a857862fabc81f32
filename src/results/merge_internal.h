/*
 * merge_internal.h - what merge.c shares with the merge's other parts.
 */
#ifndef CB_RESULTS_MERGE_INTERNAL_H
#define CB_RESULTS_MERGE_INTERNAL_H

#include "calibench/results.h"

/* samples.json of the merged records `all` (merge_samples.c), from the n shards'
 * samples.json files, appended to out; nothing when no shard has one. *missing: the
 * picked requests whose prompt no shard kept (left out). A shard's file that cannot be
 * read is an error naming it. */
cb_status cb__results_merge_samples(const char *const *dirs, size_t n, const cb_record_set *all,
                                    cb_buf *out, size_t *missing, cb_error *err);

#endif
