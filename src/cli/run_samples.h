/*
 * run_samples.h - samples.json: the prompts of the requests a report shows as
 * samples (the first sent, the median and the slowest; cb_record_set_samples).
 * records.jsonl keeps each prompt's length, not its text; rendering the schedule
 * entry again gives back the exact text for the three shown.
 */
#ifndef CALIBENCH_CLI_RUN_SAMPLES_H
#define CALIBENCH_CLI_RUN_SAMPLES_H

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/results.h"
#include "calibench/workload.h"

/* Bytes of each prompt kept (cut on a character boundary). */
#define RUN_SAMPLES_PROMPT_MAX 4096

/* Append samples.json for `set`, run from `schedule` of `wl`, to out (docs/results.md).
 * Nothing is appended when the set is empty. */
cb_status run_samples_json(const cb_workload *wl, const cb_schedule *schedule,
                           const cb_record_set *set, cb_buf *out, cb_error *err);

#endif
