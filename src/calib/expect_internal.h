/*
 * expect_internal.h - shared between expect.c (the model) and expect_env.c (reading
 * result directories and drift results). Library-internal.
 */
#ifndef CALIBENCH_CALIB_EXPECT_INTERNAL_H
#define CALIBENCH_CALIB_EXPECT_INTERNAL_H

#include <stdbool.h>

#include "calibench/calib.h"

/* Append a named number / text to a factor's inputs (dropped past the maximum). */
void cb__factor_num(cb_calib_factor *f, const char *name, double v);
void cb__factor_text(cb_calib_factor *f, const char *name, const char *text);

/* A summary throughput key that the environment factor can use. */
bool cb__expect_env_metric_known(const char *metric);

/*
 * Fill the data factor from a `calibrate drift` JSON result at `path`: its reweighted
 * factor when it has one, else max(0.5, exp(-s JS)) with the file's s, or with
 * `sensitivity` when `recompute` (the user set --task/--sensitivity; sensitivity_from
 * says how). Source MEASURED. Errors name the file and the key.
 */
cb_status cb__expect_data_from_drift(const char *path, bool recompute, double sensitivity,
                                     const char *sensitivity_from, cb_calib_factor *out,
                                     cb_error *err);

/*
 * The measured per-call success of a `probe agent` result (path: its probe.json or
 * the directory holding it): metrics.per_call_success.value with its interval, and
 * the runs' mean tool calls. Errors name the file and the key: not a probe agent
 * result, no runs that called a tool.
 */
cb_status cb__expect_task_from_probe(const char *path, double *per_call, double *lo, double *hi,
                                     double *mean_calls, cb_error *err);

#endif
