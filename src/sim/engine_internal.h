/*
 * engine_internal.h - internals shared by the simulator engine's files (presets,
 * parameters, capacity, roofline, scheduler) and their unit tests.
 *
 * Nothing here is public API: names carry the cb__sim_ prefix and may change. The
 * architecture arithmetic (parameter counts derived from a cb_sim_model) lives in
 * capacity.c because both the memory plan and the roofline use it.
 */
#ifndef CALIBENCH_SIM_ENGINE_INTERNAL_H
#define CALIBENCH_SIM_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"
#include "calibench/sim.h"

/* ---- Architecture arithmetic (capacity.c) ---------------------------------------- */

/*
 * Parameter counts (element counts, not bytes) derived from a model's config fields.
 * Per layer: attention q,k,v,o projections; two RMSNorm vectors; a SwiGLU FFN of
 * three h×f matrices (dense), or E experts of three h×f matrices plus an h×E router
 * (MoE). Embedding and LM head are V×h each (one matrix when tied).
 */
typedef struct cb__sim_arch {
  double attn_per_layer;        /* h·H·d + 2·h·K·d + H·d·h */
  double norm_per_layer;        /* 2·h */
  double expert;                /* one expert (or the dense FFN): 3·h·f */
  double router_per_layer;      /* h·E for MoE, 0 for dense */
  int moe;                      /* 1 when num_experts > 1 */
  double embed;                 /* V·h, the input embedding table */
  double lm_head;               /* V·h, the LM head matmul (always computed) */
  double lm_head_stored;        /* V·h when untied, 0 when tied to the embedding */
  double nonembed_derived;      /* all layers + final norm, derived from the fields */
  double total_derived;         /* nonembed_derived + embed + lm_head_stored */
  double nonembed;              /* from num_params when given, else derived */
  double expert_total;          /* L·E·expert (MoE) or L·expert (dense) */
  double active_nonembed;       /* per token: L·(attn + norms + k·expert + router) + h */
} cb__sim_arch;

void cb__sim_arch_derive(const cb_sim_model *m, cb__sim_arch *a);

/* KV heads held by one GPU: K/TP when K >= TP, else 1 (replicated). */
int cb__sim_kv_heads_per_gpu(const cb_sim_params *p);

/* Weight bytes of the whole model in memory: non-embedding parameters at the weight
 * dtype, embedding and (untied) LM head at bf16, as vLLM's quantized checkpoints keep
 * them. */
double cb__sim_weight_bytes(const cb_sim_params *p, const cb__sim_arch *a);

/* Look up the default efficiencies for a GPU preset name (preset.c). Returns 0 and
 * leaves the outputs alone for an unknown name. */
int cb__sim_gpu_efficiency(const char *gpu_name, double *mfu, double *mbu,
                           uint64_t *step_overhead_ns, uint64_t *allreduce_latency_ns);

/* ---- Engine debug validation (engine.c) ------------------------------------------ */

/*
 * Check the engine's internal invariants: KV block ref counts equal the number of
 * live requests holding each block, the free queue is consistent, every running
 * request holds exactly ceil(computed / block_size) blocks, waiting requests hold
 * none, counts match the lists. O(requests + blocks): for tests only. On failure
 * writes a reason into why (NUL-terminated, at most n bytes) and returns
 * CB_ERR_STATE.
 */
cb_status cb__sim_engine_check(const cb_sim_engine *e, char *why, size_t n);

/* The step in flight, or the last one run (for tests and `sim run` diagnostics). */
typedef struct cb__sim_step_info {
  int in_flight;          /* 1 while a step has started and not yet ended */
  uint64_t start_ns;      /* start of that step */
  uint64_t end_ns;        /* its end */
  int64_t tokens;         /* tokens it computes (<= max_num_batched_tokens) */
  int64_t seqs;           /* sequences in it */
  int64_t prefill_seqs;   /* of which are computing prompt (or recompute) tokens */
  int64_t running;        /* running-set size when it was scheduled */
  cb_sim_step_cost cost;  /* its roofline, before warm-up and jitter */
} cb__sim_step_info;

void cb__sim_engine_step_info(const cb_sim_engine *e, cb__sim_step_info *out);

#endif
