/*
 * metric_options.h - the options of `eval score`'s metrics (cb_eval_option_defs: every
 * metric's, each name once) as options of a command: appended to its getopt table,
 * listed in its --help, and taken back as the cb_eval_option values the metrics read.
 * `eval score`, `eval run` and `probe perturb` take them alike.
 */
#ifndef CALIBENCH_CLI_METRIC_OPTIONS_H
#define CALIBENCH_CLI_METRIC_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "calibench/eval.h"
#include "calibench/eval_run.h" /* cb_eval_option_defs */

#define CLI_METRIC_OPTIONS_MAX 64

typedef struct cli_metric_options {
  const cb_eval_option_def *defs[CLI_METRIC_OPTIONS_MAX];
  size_t n;
  int first; /* the getopt value of defs[0]; defs[i] has first + i */
} cli_metric_options;

/* The metric options, at most `max` (and CLI_METRIC_OPTIONS_MAX), to have the getopt
 * values first, first + 1, ... */
void cli_metric_options_init(cli_metric_options *m, size_t max, int first);
/* Appends them to table[*n ..] and terminates the table with {NULL}. */
void cli_metric_options_append(const cli_metric_options *m, struct option *table, size_t *n);
/* The options' lines of --help, the name column `width` wide. */
void cli_metric_options_usage(const cli_metric_options *m, FILE *out, int width);
/* 1 when `val` is one of the metric options: its value (NULL for a flag) is appended
 * to opts[*n_opts]; else 0. */
int cli_metric_options_take(const cli_metric_options *m, int val, const char *arg,
                            cb_eval_option *opts, size_t *n_opts);

/* --threads of eval score and eval run: at most CLI_EVAL_THREADS_MAX; by default the
 * online CPUs, at most CLI_EVAL_THREADS_DEFAULT_MAX (past that, threads mostly wait on
 * memory while each costs a scorer's state). */
#define CLI_EVAL_THREADS_MAX 256
#define CLI_EVAL_THREADS_DEFAULT_MAX 32
int cli_eval_default_threads(void);

#endif
