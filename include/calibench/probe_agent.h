/*
 * probe_agent.h - `calibench probe agent`: nondeterministic tool paths and SLOs per
 * path (docs/probe.md, "probe agent").
 *
 * A workflow file (YAML) gives a task prompt, tools as OpenAI `tools` definitions
 * that calibench simulates (a latency distribution, a templated result, an error
 * rate) and a success condition. Each of N runs sends the task with the tools; the
 * model's tool calls drive the loop (its calls answered with the simulated results)
 * until it answers or --max-steps requests were made. Every step is a session run of
 * the runs still going (DIR/steps/NN: records.jsonl, summary.json, manifest.json),
 * with --concurrency across runs; DIR/runs.jsonl has one line per run and
 * DIR/probe.json the statistics: the path distribution (a path is the sequence of
 * tool names) and its entropy with a bootstrap interval, steps per run, end-to-end
 * latency per path (model time + simulated tool time), SLO attainment per path and
 * overall, failure given a tool error against none, and success against the number
 * of tool calls with the fitted per-call factor p of success = p^calls, the measured
 * counterpart of `calibrate expect`'s step success.
 */
#ifndef CALIBENCH_PROBE_AGENT_H
#define CALIBENCH_PROBE_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calibench/error.h"
#include "calibench/probe.h"
#include "calibench/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_probe_agent_workflow cb_probe_agent_workflow;

/* Load and check a workflow file; errors as "path:line: key 'K': expected ...". */
cb_status cb_probe_agent_workflow_load(const char *path, cb_probe_agent_workflow **out,
                                       cb_error *err);
void cb_probe_agent_workflow_free(cb_probe_agent_workflow *w);

typedef struct cb_probe_agent_params {
  size_t runs;              /* repetitions of the task (50) */
  int max_steps;            /* model requests per run at most (8) */
  uint64_t seed;            /* the tools' draws (latency, errors) */
  long bootstrap;           /* resamples for the intervals (1000) */
  double confidence;        /* 0.95 */
  double slo_e2e_s;         /* the task's end-to-end bound, 0: none */
  const char *expected_paths; /* NULL, or a JSON file {"path": probability, ...}: a
                                 chi-square test of the paths against it */
} cb_probe_agent_params;

void cb_probe_agent_params_init(cb_probe_agent_params *p);

/*
 * Run the probe: base is the session configuration every step starts from (its
 * target, load and output options; its out_dir is the probe's directory, made here).
 * On success *doc is probe.json's document (the caller's to json_decref), also
 * written to OUT/probe.json. Outcomes as the session's.
 */
cb_session_outcome cb_probe_agent_run(const cb_probe_agent_params *p,
                                      const cb_probe_agent_workflow *w,
                                      const cb_session_config *base, json_t **doc, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
