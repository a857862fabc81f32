/*
 * judge_internal.h - what judge_run.c hands to judge_out.c, and the prices' JSON that
 * run_judge.c writes into eval.json too (internal).
 */
#ifndef CALIBENCH_EVAL_JUDGE_INTERNAL_H
#define CALIBENCH_EVAL_JUDGE_INTERNAL_H

#include <jansson.h>

#include "calibench/eval_judge.h"

/* One judge request's outcome. */
typedef struct cb__judge_answer {
  int returned;          /* its record came back */
  int request_failed;    /* HTTP error, timeout, cut stream: no answer to parse */
  char error[300];       /* then: "class: message" */
  cb_judge_answer parsed;
} cb__judge_answer;

/* The judge's prices as judge.json and eval.json give them: {"input_per_1k",
 * "output_per_1k"}, or null when none were given. */
json_t *cb__judge_prices_json(const cb_judge_params *p);

/* judge.json: the parameters, the summary and every item with its answers. */
cb_status cb__judge_write_json(const char *path, const cb_judge_items *items,
                               const cb_judge_params *p, const char *model,
                               const cb__judge_answer *answers,
                               const cb_judge_result *r, cb_error *err);

#endif
