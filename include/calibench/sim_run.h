/*
 * sim_run.h - `calibench sim run`: the simulator engine driven in virtual time, with
 * no HTTP and no wall clock, behind the same interface as the load generator
 * (runner.h): requests come from a cb_runner_source_fn, and one cb_record per request
 * goes to a cb_runner_record_fn as it completes. A measured run and a predicted one
 * therefore produce the same records, summaries and reports.
 *
 * What the engine sees is what `sim serve` would see: each request body is parsed by
 * the simulator's OpenAI layer (same tokenizer, same chat template), checked against
 * the model and the context window, and given its output length and text seed by the
 * same code (src/sim/gen_plan.c). Record times are virtual nanoseconds from the start
 * of the simulation (virtual time 0); `manifest.json` marks such runs as predicted.
 * Docs: docs/sim-run.md.
 */
#ifndef CALIBENCH_SIM_RUN_H
#define CALIBENCH_SIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"
#include "calibench/runner.h"
#include "calibench/sim.h"
#include "calibench/sim_server.h"
#include "calibench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record times are CB_SIM_VRUN_T0_NS + virtual ns (so no event of a run that starts
 * at 0 lands on 0, which records reserve for "did not happen"); items' at_ns are
 * virtual ns. */
#define CB_SIM_VRUN_T0_NS UINT64_C(1000)

/*
 * A generation request given without a body (the fast path): what the simulator's
 * OpenAI layer would have parsed from it. prompt_ids is the prompt as the server
 * tokenizes it (chat template applied); borrowed until the source is called again.
 */
typedef struct cb_sim_vrun_request {
  const uint32_t *prompt_ids;
  size_t prompt_len;     /* >= 1 */
  int64_t max_tokens;    /* -1: not given (the rest of the context window) */
  int64_t min_tokens;    /* 0: none */
  int ignore_eos;
  int has_seed;          /* 1: `seed` was sent */
  uint64_t seed;
} cb_sim_vrun_request;

/* Fill *out for an item the source gave with body == NULL. */
typedef cb_status (*cb_sim_vrun_prompt_fn)(void *ctx, const cb_runner_item *item,
                                           cb_sim_vrun_request *out, cb_error *err);

typedef struct cb_sim_vrun_params {
  /* The deployment, as for `sim serve`: engine, replicas, seed (output text and EOS),
   * tokenizer (spec, loaded once), responses_path. Not used: host, port, time_scale,
   * max_body_bytes, embedding_dim, trace_out_path, faults, quiet. */
  cb_sim_server_params sim;
  /* The load, as for the runner: chat, run_id, concurrency (> 0: closed loop),
   * max_concurrency, duration_s (closed loop: no send after it), max_output_text,
   * stop. Not used: url, api_key, headers, TLS, HTTP version, timeouts, retries,
   * count_tokens, drain_timeout_s, progress. */
  cb_runner_params runner;
  /* Items with body == NULL are described by this callback (NULL: such items are an
   * error). Called for an item before the source is called again. */
  cb_sim_vrun_prompt_fn prompt;
  void *prompt_ctx;
  /* Optional output: the replicas' engine statistics, summed, at the end. */
  cb_sim_engine_stats *engine_stats;
  /* NULL, or where the virtual time now (ns, the items' base) is stored before every
   * call of the source: a live source's clock. */
  uint64_t *now_ns;
} cb_sim_vrun_params;

/* sim: cb_sim_server_default_params; runner: CB_RUNNER_PARAMS_DEFAULT; no prompt
 * callback, no engine statistics. */
void cb_sim_vrun_default_params(cb_sim_vrun_params *p);

/*
 * Run the workload in virtual time: open loop (items at their at_ns; with
 * max_concurrency, late items wait for a slot and their wait is recorded as lag) or
 * closed loop (runner.concurrency users, each sending its next item when its previous
 * reply ends). A live source (runner.h) may answer CB_RUNNER_SOURCE_WAIT (asked again
 * after the next record; done when nothing is in flight) or CB_RUNNER_SOURCE_LATER
 * (asked again at its at_ns in virtual time, or after the next record), as the
 * runner asks it; its clock is now_ns. Every request runs to completion; nothing is dropped. Records: times in
 * virtual ns from 0, one chunk per token (chunk_tokens all 1), prompt and output
 * counts and cached tokens from the simulated `usage`, the server's request id equal
 * to the sent one ("<run_id>-<index>"), output text (first max_output_text bytes).
 * A request the server would refuse (context window, unknown model, bad body) gets an
 * error record with the HTTP status and message sim serve would send. stats: origin 0,
 * counts, last_end_ns (virtual), cpu_s (CPU time of the call). Deterministic: the same
 * parameters and items give the same records, byte for byte.
 * Fails only when it cannot start (bad parameters, tokenizer or responses file) or
 * when the prompt callback fails (the records so far are delivered; err says why).
 * *stop (runner.stop) set: no further sends, requests in flight complete, interrupted.
 */
cb_status cb_sim_run_virtual(const cb_sim_vrun_params *p, cb_runner_source_fn source,
                             void *source_ctx, cb_runner_record_fn on_record, void *record_ctx,
                             cb_runner_stats *stats, cb_error *err);

/* ---- Prompts straight from a workload (the fast path) ---------------------------- */

/*
 * Rendering each prompt's text, wrapping it in a JSON body and tokenizing it again
 * costs ~100 ns per prompt token; a one-hour trace has 10^8 of them. For synthetic
 * and trace datasets counted with the approximate tokenizer, cb_sim_prompt_ids gives
 * the engine the prompt without the text: the same length and the same sharing
 * structure (which requests share which leading blocks, hence which prefix-cache
 * hits), with ids derived from the same keys the text is derived from:
 *   template ids: the approximate tokenizer's ids of the chat template around the
 *     content ("<|user|>\n" ... "<|end|>\n<|assistant|>\n"), none for completions;
 *   synthetic: the shared prefix's ids from (class, prefix id), the rest from the
 *     request's seed;
 *   trace: block b's ids from (class, hash_ids[b]); past the last full block, the
 *     next hash id's block cut short, or the request's seed.
 * Known difference (docs/sim-run.md): sim serve merges a prompt's final punctuation
 * with the template's "<|end|>" into one token, so for the ~8% of chat prompts whose
 * text ends in punctuation the fast path counts one prompt token more.
 */
typedef struct cb_sim_prompt_ids cb_sim_prompt_ids;

/* 1 when every class of the workload can use the fast path: synthetic or trace
 * datasets and the approximate counter (no tokenizer). */
int cb_sim_prompt_ids_supported(const cb_workload *wl, const cb_workload_params *wp);

/* chat: apply the chat template; vocab: the model's vocabulary (ids are < vocab).
 * wl and wp must outlive the object. */
cb_status cb_sim_prompt_ids_new(const cb_workload *wl, const cb_workload_params *wp, int chat,
                                uint32_t vocab, cb_sim_prompt_ids **out, cb_error *err);
void cb_sim_prompt_ids_free(cb_sim_prompt_ids *p);

/* The prompt ids of entry e (valid until the next call). CB_ERR_RANGE for an entry
 * whose class or item is out of range. */
cb_status cb_sim_prompt_ids_of(cb_sim_prompt_ids *p, const cb_schedule_entry *e,
                               const uint32_t **ids, size_t *n, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
