/*
 * agent_internal.h - the pieces of `probe agent` (internal to the probe module): the
 * workflow file (agent_workflow.c), the simulated tools (agent_tools.c), one run's
 * state through the loop (agent_run.c) and the statistics over the runs
 * (agent_stats.c). probe_agent.h is the public side.
 */
#ifndef CALIBENCH_PROBE_AGENT_INTERNAL_H
#define CALIBENCH_PROBE_AGENT_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/probe_agent.h"
#include "calibench/rng.h"

#define CB__AGENT_MAX_TOOLS 64

typedef enum {
  CB__AGENT_LAT_FIXED = 0,
  CB__AGENT_LAT_UNIFORM,   /* min..max */
  CB__AGENT_LAT_NORMAL,    /* mean, sd; draws below 0 are 0 */
  CB__AGENT_LAT_LOGNORMAL  /* mean (of the draws), sigma of the log */
} cb__agent_lat_kind;

typedef struct cb__agent_latency {
  cb__agent_lat_kind kind;
  double a_s, b_s;         /* fixed: a; uniform: min a, max b; normal: mean a, sd b */
  double sigma;            /* lognormal (mean a) */
} cb__agent_latency;

typedef struct cb__agent_tool {
  char *name;
  json_t *definition;      /* owned: {"type":"function","function":{name, description, parameters}} */
  cb__agent_latency latency;
  char *result;            /* template: {{args.KEY}}, {{tool}}, {{call}} */
  double error_rate;
  char *error;             /* the error's message */
} cb__agent_tool;

struct cb_probe_agent_workflow {
  char *path;
  char *system;            /* NULL: no system message */
  char *task;
  int64_t max_tokens;      /* per request; 0: the dataset default */
  cb__agent_tool tools[CB__AGENT_MAX_TOOLS];
  size_t n_tools;
  char *answer_regex;      /* NULL: any answer */
  void *answer_code;       /* pcre2_code * */
  int required[CB__AGENT_MAX_TOOLS]; /* tool indices every successful run called */
  size_t n_required;
};

/* The tool named name (len bytes), or NULL. */
const cb__agent_tool *cb__agent_tool_find(const cb_probe_agent_workflow *w, const char *name);
/* The `tools` request member: {"tools": [definitions]} as compact JSON (owned). */
char *cb__agent_tools_body(const cb_probe_agent_workflow *w);
/* 1 when answer (len bytes) matches the success regex (always without one). */
int cb__agent_answer_ok(const cb_probe_agent_workflow *w, const char *answer, size_t len);

/* One simulated call: its latency draw, whether it failed, and the tool message's
 * content (owned): the result template filled from the call's arguments, or
 * {"error": "..."} (also for a tool the workflow does not have, or arguments that
 * are not a JSON object). */
typedef struct cb__agent_call_result {
  double latency_s;
  int error;
  char *content;
} cb__agent_call_result;

void cb__agent_tool_call(const cb_probe_agent_workflow *w, const char *name, const char *arguments,
                         uint64_t seed, uint64_t run, uint64_t call, cb__agent_call_result *out);

/* ---- runs and their statistics ------------------------------------------------------ */

typedef enum {
  CB__AGENT_RUNNING = 0,
  CB__AGENT_SUCCESS,       /* answered, the answer and the required tools as asked */
  CB__AGENT_WRONG,         /* answered, but not as the success condition asks */
  CB__AGENT_MAX_STEPS,     /* still calling tools after --max-steps requests */
  CB__AGENT_REQUEST_FAILED, /* a model request failed (error class in the step's records) */
  CB__AGENT_INTERRUPTED    /* still going when the probe was stopped (a signal) */
} cb__agent_outcome;

const char *cb__agent_outcome_name(cb__agent_outcome o);

typedef struct cb__agent_run {
  json_t *messages;        /* owned: the conversation so far */
  cb__agent_outcome outcome;
  int steps;               /* model requests made */
  int calls;               /* tool calls made */
  int tool_errors;         /* of them, failed */
  int *path;               /* tool index per call (-1: a tool the workflow lacks) */
  char **path_names;       /* owned names, one per call */
  size_t path_alloc;
  double model_s, tool_s;  /* end-to-end: model requests' E2E + simulated tool time */
  char *answer;            /* owned, the final answer (NULL: none) */
} cb__agent_run;

void cb__agent_run_free(cb__agent_run *r);
/* The path as text: tool names joined by " > ", "(answer)" for no call. Owned. */
char *cb__agent_path_text(const cb__agent_run *r);

/* DIR/records.jsonl, summary.json and manifest.json from the n_steps steps' result
 * directories DIR/steps/NN (agent_result.c). */
cb_status cb__agent_combine(const char *dir, int n_steps, int virtual_time, cb_error *err);

/* --expected-paths read and checked before anything runs (the file, its probabilities). */
cb_status cb__agent_expected_check(const cb_probe_agent_params *p, cb_error *err);

/* probe.json's document from the finished runs. *err for a bad --expected-paths. */
cb_status cb__agent_stats(const cb_probe_agent_params *p, const cb_probe_agent_workflow *w,
                          const cb__agent_run *runs, size_t n, json_t **out, cb_error *err);

#endif
