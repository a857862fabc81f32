/*
 * record_drop.h - what a record set keeps of the chunk times it dropped
 * (cb_record_set_drop_chunk_times), for the summary (summary.c) and the set's ITL
 * statistics and token bins (record_drop.c).
 */
#ifndef CB_RESULTS_RECORD_DROP_H
#define CB_RESULTS_RECORD_DROP_H

#include "calibench/results.h"

/* One class's dropped records: measured successes (ITL, window tokens, SLO counts). */
typedef struct cb__drop_class {
  char name[64];
  uint64_t watermark_ns;  /* the latest send of a measured record with times in order */
  cb_itl_stats itl;
  double window_tokens;   /* their chunk tokens: every one inside the summary's window */
  uint64_t *units, *over; /* per registered ITL SLO: gaps (tokens) judged, and over */
} cb__drop_class;

struct cb__record_drop {
  cb_slo *slos;           /* the ITL SLOs registered */
  size_t n_slos;
  cb__drop_class *classes;
  size_t n_classes;
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
/* Output tokens of the dropped measured successes of class_name (NULL: all). */
double cb__record_drop_window_tokens(const cb_record_set *s, const char *class_name);

#endif
