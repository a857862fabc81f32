/*
 * summary_internal.h - what summary.c shares with the summary's other parts.
 */
#ifndef CB_RESULTS_SUMMARY_INTERNAL_H
#define CB_RESULTS_SUMMARY_INTERNAL_H

#include "calibench/results.h"

/* Live sessions' statistics (summary_sessions.c) over the measured, valid records. */
void cb__summary_sessions(const cb_record_set *set, const unsigned char *valid,
                          const cb_summary_params *p, cb_session_stats *out);

#endif
