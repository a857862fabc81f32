/*
 * run_output.h - what `calibench run` prints: the terminal summary of a point, the
 * load-latency curve of a sweep and the interference table of solo baselines. The
 * files are the session's (calibench/session.h).
 */
#ifndef CALIBENCH_CLI_RUN_OUTPUT_H
#define CALIBENCH_CLI_RUN_OUTPUT_H

#include <stdio.h>

#include "calibench/session.h"

/* The terminal table: throughput, latency percentiles, SLO verdicts, errors, and the
 * loud warning when the client fell behind its schedule. */
void run_print_summary(FILE *f, const cb_session_result *s, const char *target, const char *model,
                       const char *out_dir);

/* The sweep's points with the capacity at SLO marked. */
void run_print_sweep(FILE *f, const cb_session_config *cfg, const cb_session_sweep *sw);

/* Each class's p99 factors (mix / alone), for the n solo baselines that ran. */
void run_print_interference(FILE *f, const cb_session_result *mix, const cb_session_result *solo,
                            size_t n);

#endif
