/*
 * record_drop.h - what a record set keeps of the chunk times it dropped
 * (cb_record_set_drop_chunk_times), for the summary (summary.c) and the set's ITL
 * statistics and token bins (record_drop.c).
 */
#ifndef CB_RESULTS_RECORD_DROP_H
#define CB_RESULTS_RECORD_DROP_H

#include "calibench/results.h"

/* One class's dropped measured successes: their ITL statistics and SLO gap counts. */
typedef struct cb__drop_class {
  char name[64];
  uint64_t watermark_ns;  /* the latest send of a measured record with times in order */
  cb_itl_stats itl;
  uint64_t *units, *over; /* per registered ITL SLO: gaps (tokens) judged, and over */
} cb__drop_class;

struct cb__record_drop {
  cb_slo *slos;           /* the ITL SLOs registered */
  size_t n_slos;
  cb__drop_class *classes;
  size_t n_classes;
  cb_record_reread_fn reread; /* NULL: keep the times of records that may straddle */
  void *reread_ctx;
  size_t *pending;        /* positions of successes still holding their times */
  size_t n_pending, alloc_pending, prune_at;
  cb_token_bins bins;     /* dropped successes' tokens, warm-up included */
};

/* A pushed record (items[i]): drop its times now, later, or never. */
void cb__record_drop_pushed(cb_record_set *s, size_t i);
void cb__record_drop_free(struct cb__record_drop *d);

/* Gaps judged and over `slo` among the dropped records of class_name (NULL: all);
 * returns 0 when none were dropped. */
int cb__record_drop_slo_counts(const cb_record_set *s, const char *class_name, const cb_slo *slo,
                               size_t *units, size_t *over);
/* Output tokens whose content chunk came at or before b, of the record at position i
 * whose chunk times were dropped (its first chunk at or after the window's start). */
double cb__record_drop_tokens_by(const cb_record_set *s, size_t i, uint64_t b);

#endif
