/*
 * dialog_run.h - the state of a `probe dialog` run, shared by its live driver
 * (dialog_live.c) and its statistics (dialog_stats.c). Internal to the probe module.
 */
#ifndef CALIBENCH_PROBE_DIALOG_RUN_H
#define CALIBENCH_PROBE_DIALOG_RUN_H

#include "probe/dialog.h"

/* Failing checks kept with their answers for the report, and the bytes kept of each. */
#define CB__PROBE_DIALOG_FAILURES_KEPT 20
#define CB__PROBE_DIALOG_ANSWER_KEPT 400

typedef struct cb__probe_dialog_turn_result {
  int answered;                /* its request succeeded */
  int clarification;           /* the answer asked back */
  double ttft_ms;              /* NAN when no content came */
  int64_t prompt_tokens;       /* as the server counted them; -1 unknown */
} cb__probe_dialog_turn_result;

typedef struct cb__probe_dialog_conv {
  size_t scenario, rep;
  size_t given, answered;      /* turns handed to the session / come back */
  int failed;                  /* a request failed: the conversation ended there */
  cb_buf history;              /* "[" and the messages so far, comma-separated */
  uint64_t seed;               /* the requests' "seed" */
  int8_t *outcome;             /* per check of the scenario, turn by turn: 1 satisfied,
                                  0 not, -1 not asked (the conversation ended first) */
  cb__probe_dialog_turn_result *turns;
} cb__probe_dialog_conv;

typedef struct cb__probe_dialog_failure {
  size_t conv, turn, check;
  char *answer;                /* owned: its first CB__PROBE_DIALOG_ANSWER_KEPT bytes */
  int answer_cut;
} cb__probe_dialog_failure;

struct cb__probe_dialog_run {
  const cb__probe_dialog_suite *suite;
  cb__probe_dialog_params p;
  size_t stride;               /* record index = conversation * stride + turn */
  cb__probe_dialog_conv *convs;
  size_t n_convs;
  size_t completed;            /* conversations answered to their last turn */
  cb__probe_dialog_failure failures[CB__PROBE_DIALOG_FAILURES_KEPT];
  size_t n_failures;
  size_t n_failed_checks;
  cb_buf scratch, extra;       /* the request handed out last (messages, extra body) */
};

#endif
