/*
 * run_virtual.h - what `sim run` changes in a run point: the "target" is the engine
 * profile, requests go to cb_sim_run_virtual (virtual time) instead of the runner, and
 * the manifest records the engine and marks the run predicted.
 */
#ifndef CALIBENCH_CLI_RUN_VIRTUAL_H
#define CALIBENCH_CLI_RUN_VIRTUAL_H

#include "calibench/sim_run.h"
#include "run_point.h"

/* The point's target: model = the profile's model; url = "sim://virtual"; models =
 * the /v1/models answer sim serve would give (for the manifest). */
void run_virtual_target(const run_config *cfg, run_target *t);

/* 1 when the point may give the engine prompt ids straight from the workload (no
 * body): synthetic or trace datasets, the approximate tokenizer, no --extra-body, no
 * --exact-prompts. Requests are then what sim serve would see (docs/sim-run.md). */
int run_virtual_fast_ok(const run_config *cfg, const cb_workload *wl, const cb_workload_params *wp);

/* cb_sim_run_virtual with cfg's deployment and rp's load (chat, run id, concurrency,
 * max_concurrency, duration, stop). prompt may be NULL (every item has a body). */
cb_status run_virtual_run(const run_config *cfg, const cb_runner_params *rp,
                          cb_sim_vrun_prompt_fn prompt, void *prompt_ctx,
                          cb_runner_source_fn source, void *source_ctx,
                          cb_runner_record_fn on_record, void *record_ctx,
                          cb_runner_stats *stats, cb_error *err);

/* Manifest members of a predicted run (leading comma): "predicted": true, "clock":
 * "virtual", and "engine": the whole resolved profile with the replica count. */
void run_virtual_manifest(const run_config *cfg, cb_buf *out);

#endif
