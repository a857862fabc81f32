/*
 * run_output.h - what `calibench run` writes at the end: summary.json (all classes
 * and each class), manifest.json, the optional vLLM JSON, and the terminal summary.
 */
#ifndef CALIBENCH_CLI_RUN_OUTPUT_H
#define CALIBENCH_CLI_RUN_OUTPUT_H

#include <stdio.h>

#include "calibench/results.h"

/* Summaries of one run: [0] every class, then one per class (when more than one). */
typedef struct run_summaries {
  cb_summary all;
  cb_summary *classes;
  size_t n_classes;
  cb_buf server_json;   /* `"server": {...}` from the telemetry, empty without it */
  char server_line[512];/* its one-line description for the terminal, "" without */
} run_summaries;

void run_summaries_free(run_summaries *s);

/* summary.json: {"schema_version", "summary", "classes"}. */
void run_write_summary_json(const run_summaries *s, cb_buf *out);

/* The terminal table: throughput, latency percentiles, SLO verdicts, errors, and the
 * loud warning when the client fell behind its schedule. */
void run_print_summary(FILE *f, const run_summaries *s, const char *target, const char *model,
                       const char *out_dir);

#endif
