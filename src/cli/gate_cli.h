/*
 * gate_cli.h - what `calibench store`, `history` and `gate` share in the CLI: the
 * registry's label for messages and the test hook for transactional writes.
 */
#ifndef CALIBENCH_CLI_GATE_CLI_H
#define CALIBENCH_CLI_GATE_CLI_H

#include <stddef.h>

#include "calibench/gate.h"
#include "calibench/store.h"

/* The registry for messages: an SQLite path as given, a PostgreSQL URL without its
 * password. target NULL = the default. */
void gate_cli_registry_label(const char *target, char *out, size_t n);

/* $CALIBENCH_TEST_STORE_FAULT = "fail:N" or "crash:N" -> cb_store_inject_fault. */
void gate_cli_apply_fault_hook(cb_store *s);

/* ---- cmd_gate_load.c: the inputs of a gate ---------------------------------------- */

typedef struct gate_inputs {
  cb_run_list current;       /* one run, or a sweep's points */
  cb_run_data *baselines;    /* one per current run (run_id "" = none) */
  cb_history *histories;     /* current.count x n_tukey */
  size_t n_tukey;
  cb_gate_pair *pairs;       /* current.count */
  char baseline_kind[16];    /* dir, run, history, none */
  char baseline_label[160];
  char series[CB_TAGS_TEXT_MAX];
} gate_inputs;

typedef struct gate_load_opts {
  const char *current_dir;
  const char *baseline;      /* DIR, RUN_ID, "history" or NULL */
  const cb_tags *tags;       /* --tag (may be empty) */
  const cb_gate_policy *policy;
} gate_load_opts;

/* Load the current run(s), the baseline(s) and the Tukey histories. store may be NULL
 * when neither a run id, `history` nor a Tukey rule needs it. Errors are printed;
 * returns 0 or the exit status (2). */
int gate_cli_load(const gate_load_opts *o, cb_store *store, gate_inputs *in);
void gate_cli_inputs_free(gate_inputs *in);
/* The paired test of quality metrics for cb_gate_pair.paired (cmd_gate_quality.c): both
 * runs' eval.json, from their result directories. */
cb_status gate_cli_paired(void *ctx, const cb_run_data *current, const cb_run_data *baseline,
                          const char *metric, const char *class_name, size_t resamples,
                          double confidence, uint64_t seed, double *p_value, double *ci_low,
                          double *ci_high, size_t *n, cb_error *err);

/* ---- cmd_gate_notify.c: --notify ------------------------------------------------- */

typedef struct gate_notify_opts {
  const char *url, *format, *link, *timeout, *header_env; /* as given; NULL: not given */
} gate_notify_opts;

/* The notification's configuration from the options and the environment; c->url NULL
 * when there is none. Errors are printed (never the URL or the header); returns 0 or
 * the exit status (2). */
int gate_cli_notify_config(const gate_notify_opts *o, cb_gate_notify_config *c);
/* Post the verdict; a failure is printed on stderr and changes nothing else. */
void gate_cli_notify(const cb_gate_notify_config *c, const cb_gate_result *r, int quiet);

#endif
