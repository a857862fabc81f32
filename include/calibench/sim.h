/*
 * sim.h - the inference simulator's engine: presets, parameters, roofline step
 * cost, paged KV cache with prefix caching, and a vLLM-V1-like scheduler.
 *
 * The engine is pure: no I/O, no clock reads, no threads. Requests go in with the
 * caller's current time; cb_sim_engine_advance() runs every step that ends at or
 * before a given time and reports what happened through a callback. Time is virtual
 * nanoseconds chosen by the caller: the HTTP server maps it to the wall clock
 * (× time scale), `sim run` advances it as fast as it can.
 *
 * Units: times in ns, memory in bytes, rates per second, FLOPs as counts.
 * The physics and the scheduler are documented in docs/simulator.md and
 * docs/internals/sim-scheduler.md.
 */
#ifndef CALIBENCH_SIM_H
#define CALIBENCH_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Presets and parameters ---------------------------------------------------- */

typedef enum {
  CB_SIM_DTYPE_BF16 = 0, /* 2 bytes per element */
  CB_SIM_DTYPE_FP8,      /* 1 byte */
  CB_SIM_DTYPE_INT4      /* 0.5 byte (weights only; W4A16: compute in bf16) */
} cb_sim_dtype;

const char *cb_sim_dtype_name(cb_sim_dtype d);
double cb_sim_dtype_bytes(cb_sim_dtype d);
/* The standard deviation of the logit noise weights of dtype d add to the planted
 * next-token logits of a behaviour's `lm` section (docs/probe.md, "lm"): int4
 * CB_SIM_INT4_LOGIT_NOISE, others 0 (their answers unchanged). */
#define CB_SIM_INT4_LOGIT_NOISE 0.3
double cb_sim_logit_noise(cb_sim_dtype d);

/* Architecture of a transformer, as in its Hugging Face config.json. */
typedef struct cb_sim_model {
  char name[64];          /* served model id, e.g. "llama-3.1-8b" */
  int num_layers;
  int hidden_size;
  int num_heads;          /* query heads */
  int num_kv_heads;
  int head_dim;
  int intermediate_size;  /* FFN size (per expert for MoE) */
  int vocab_size;
  int num_experts;        /* 0 or 1: dense; else routed experts per MoE layer */
  int num_experts_active; /* top-k experts per token (MoE only) */
  int tied_embeddings;    /* 1 when the LM head shares the embedding matrix */
  double num_params;      /* total parameters (count), embeddings included */
  int max_context;        /* max_position_embeddings, tokens */
} cb_sim_model;

typedef struct cb_sim_gpu {
  char name[32];
  double flops_bf16; /* dense BF16 tensor FLOP/s per GPU */
  double flops_fp8;  /* dense FP8 tensor FLOP/s per GPU; 0 = none (uses bf16) */
  double mem_bytes;  /* HBM capacity per GPU, bytes */
  double mem_bw;     /* HBM bandwidth per GPU, bytes/s */
  double link_bw;    /* GPU-to-GPU bandwidth per direction for all-reduce, bytes/s */
  int fp8_attention; /* 1: with an fp8 KV cache, attention runs on the FP8 tensor cores
                        (vLLM's FlashAttention 3 on Hopper); 0: KV is dequantised to bf16 */
} cb_sim_gpu;

typedef struct cb_sim_params {
  cb_sim_model model;
  cb_sim_gpu gpu;
  int tp;                       /* tensor-parallel degree, GPUs per replica */
  cb_sim_dtype weight_dtype;    /* bf16 | fp8 | int4 */
  cb_sim_dtype kv_dtype;        /* bf16 | fp8 */

  /* Efficiency (fractions of peak) and fixed costs. */
  double mfu;                   /* achieved / peak FLOP/s in compute-bound steps */
  double mbu;                   /* achieved / peak bytes/s in memory-bound steps */
  uint64_t step_overhead_ns;    /* CPU scheduling, kernel launch, sampling per step */
  uint64_t allreduce_latency_ns;/* fixed latency of one all-reduce (TP > 1) */

  /* Memory. */
  double gpu_memory_utilization; /* fraction of HBM vLLM may use (0.9) */
  double activation_reserve_bytes; /* per GPU, peak activations + CUDA graphs etc. */
  int block_size;               /* tokens per KV block (16) */
  int64_t num_gpu_blocks_override; /* > 0: use this many blocks instead of computing */

  /* Scheduler (vLLM names). */
  int max_num_batched_tokens;   /* per-step token budget (8192) */
  int max_num_seqs;             /* running requests cap (256) */
  int max_model_len;            /* 0 = min(model max_context, KV capacity) */
  int enable_prefix_caching;    /* 1 = on (vLLM V1 default) */
  int long_prefill_token_threshold; /* > 0: cap on one request's tokens per step */

  /* Realism knobs, off by default. */
  int warmup_steps;             /* the first N steps are slower ... */
  double warmup_factor;         /* ... by this factor (CUDA-graph capture, autotune) */
  double jitter_cv;             /* > 0: step time × lognormal noise with this CV */
  uint64_t seed;                /* seeds the jitter */
  double eos_mean_tokens;       /* front ends: mean output length when EOS is sampled
                                   (256); the engine itself does not use it */
} cb_sim_params;

/*
 * A vision-language model's image path (docs/simulator.md, "Images"): the processor
 * resizes each image (Qwen2-VL's smart_resize), cuts it into patch × patch pixels,
 * and merges merge × merge patches into one LLM token; the ViT encoder's cost is
 * charged to the step that first computes the request's prompt.
 */
typedef struct cb_sim_vision {
  int patch_size;      /* pixels per patch side (14) */
  int merge_size;      /* patches merged per token side (2) */
  int temporal_patch;  /* frames per patch; an image is repeated to fill them (2) */
  int64_t min_pixels;  /* resize bounds of the processor */
  int64_t max_pixels;
  int depth;           /* ViT blocks */
  int embed_dim;       /* ViT width */
  int mlp_dim;         /* ViT MLP width */
  int out_dim;         /* the merger's output width: the LLM's hidden size */
} cb_sim_vision;

/* The vision encoder of a model preset by name: 1 and *out, or 0 (a text-only model). */
int cb_sim_vision_preset(const char *model_name, cb_sim_vision *out);
/* The size the processor resizes a height × width image to (multiples of
 * patch·merge within [min_pixels, max_pixels]); CB_ERR_INVALID when the aspect ratio
 * is above 200 or a side is 0, as the processor refuses them. */
cb_status cb_sim_vision_resize(const cb_sim_vision *v, int64_t height, int64_t width,
                               int64_t *rh, int64_t *rw, cb_error *err);
/* LLM tokens of a resized image: (rh / (patch·merge)) · (rw / (patch·merge)). */
int64_t cb_sim_vision_tokens(const cb_sim_vision *v, int64_t rh, int64_t rw);
/* Encoder FLOPs for one resized image (patch embedding, ViT blocks with full
 * attention over its patches, merger). */
double cb_sim_vision_encoder_flops(const cb_sim_vision *v, int64_t rh, int64_t rw);

/* Defaults: llama-3.1-8b on h100-sxm, TP 1, bf16, with the documented efficiencies. */
void cb_sim_default_params(cb_sim_params *p);

/* Look up presets by name (case-insensitive). CB_ERR_NOT_FOUND lists the known names. */
cb_status cb_sim_preset_model(const char *name, cb_sim_model *out, cb_error *err);
cb_status cb_sim_preset_gpu(const char *name, cb_sim_gpu *out, cb_error *err);
/* NULL-terminated lists of preset names. */
const char *const *cb_sim_preset_model_names(void);
const char *const *cb_sim_preset_gpu_names(void);

/*
 * Apply the default efficiencies for p->gpu (MFU, MBU, overhead): used after a GPU
 * preset is chosen so the defaults match that GPU. Values set later by a profile
 * file override these.
 */
void cb_sim_params_apply_gpu_defaults(cb_sim_params *p);

/*
 * Override fields from a YAML profile file. Keys (all optional):
 *   model: NAME | {name, num_layers, hidden_size, ..., max_context}   (preset, then fields)
 *   gpu:   NAME | {name, flops_bf16, flops_fp8, mem_bytes, mem_bw, link_bw}
 *   tp, weight_dtype, kv_dtype, mfu, mbu, step_overhead_us, allreduce_latency_us,
 *   gpu_memory_utilization, activation_reserve_gib, block_size, num_gpu_blocks,
 *   max_num_batched_tokens, max_num_seqs, max_model_len, enable_prefix_caching,
 *   long_prefill_token_threshold, warmup_steps, warmup_factor, jitter_cv, seed,
 *   eos_mean_tokens
 * An unknown key, a wrong type or an out-of-range value is an error naming the file,
 * line and key. On error *p may be partly updated.
 */
cb_status cb_sim_params_load_yaml(cb_sim_params *p, const char *path, cb_error *err);

/* Check ranges and consistency (heads divisible by TP, fp8 KV etc.). */
cb_status cb_sim_params_validate(const cb_sim_params *p, cb_error *err);

/*
 * Write *p as a complete profile: every key, the model and the GPU as mappings with
 * every field (no preset), so cb_sim_params_load_yaml on the result gives back *p
 * exactly, whatever the defaults are then. `comment` (may be NULL) becomes leading
 * "# " lines. Appended to out. (profile_write.c)
 */
void cb_sim_params_write_yaml(const cb_sim_params *p, const char *comment, cb_buf *out);
/* The same keys as one JSON object (for manifests and calibration results). */
void cb_sim_params_write_json(const cb_sim_params *p, cb_buf *out);

/* ---- Derived quantities ------------------------------------------------------- */

typedef struct cb_sim_capacity {
  double weight_bytes;          /* all weights of the model, bytes */
  double weight_bytes_per_gpu;  /* weight_bytes / TP */
  double kv_bytes_per_token;    /* whole model: 2 × L × KV heads × head dim × dtype */
  double kv_bytes_per_token_per_gpu; /* KV heads split over TP (replicated when < TP) */
  double kv_bytes_available;    /* per GPU, for the KV cache */
  int64_t num_blocks;           /* KV blocks of block_size tokens */
  int64_t max_tokens;           /* num_blocks × block_size */
  int max_model_len;            /* effective max_model_len */
} cb_sim_capacity;

/* CB_ERR_CAPACITY when the weights do not fit or max_model_len exceeds the cache
 * (the message gives the numbers, as vLLM's start-up check does). */
cb_status cb_sim_capacity_compute(const cb_sim_params *p, cb_sim_capacity *out,
                                  cb_error *err);

/* One sequence's share of a step. */
typedef struct cb_sim_batch_item {
  int64_t new_tokens;     /* tokens computed in this step (1 for decode) */
  int64_t context_tokens; /* tokens already in the KV cache before this step */
  int samples;            /* 1 when this step produces a token (LM head runs) */
  double encoder_flops;   /* vision encoder FLOPs run in this step (whole TP group) */
} cb_sim_batch_item;

/* Roofline cost of one step, per GPU. */
typedef struct cb_sim_step_cost {
  double flops;        /* FLOPs per GPU */
  double bytes;        /* HBM bytes per GPU (weights + KV read + KV write) */
  double compute_ns;   /* flops / (peak × MFU) */
  double memory_ns;    /* bytes / (bandwidth × MBU) */
  double allreduce_ns; /* TP all-reduce term (0 when TP = 1) */
  double overhead_ns;  /* fixed per-step overhead */
  double total_ns;     /* max(compute, memory) + allreduce + overhead */
  int memory_bound;    /* 1 when memory_ns >= compute_ns */
} cb_sim_step_cost;

void cb_sim_step_cost_compute(const cb_sim_params *p, const cb_sim_batch_item *items,
                              size_t n, cb_sim_step_cost *out);

/* ---- The engine ---------------------------------------------------------------- */

typedef struct cb_sim_engine cb_sim_engine;

typedef struct cb_sim_request {
  uint64_t id;               /* caller's handle; unique among live requests */
  const uint32_t *prompt_ids;/* prompt token ids (copied by add) */
  size_t prompt_len;         /* >= 1 */
  int64_t output_len;        /* tokens to generate, >= 1 (front end applies
                                max_tokens, min_tokens and EOS) */
  const uint32_t *output_ids;/* NULL: ids from cb_sim_text_token(output_seed, k);
                                else output_len ids (copied) */
  uint64_t output_seed;
  double encoder_flops;      /* vision encoder FLOPs of its images (cb_sim_vision_*),
                                charged in the first step that computes its prompt;
                                0 = text only */
} cb_sim_request;

typedef enum {
  CB_SIM_EV_SCHEDULED = 0, /* request entered the running set (also after preemption) */
  CB_SIM_EV_TOKEN,         /* one output token was produced */
  CB_SIM_EV_FINISHED,      /* all output tokens produced; request removed */
  CB_SIM_EV_PREEMPTED      /* KV blocks ran out; request back to waiting (recompute) */
} cb_sim_event_kind;

typedef struct cb_sim_event {
  cb_sim_event_kind kind;
  uint64_t request_id;
  uint64_t time_ns;          /* SCHEDULED/PREEMPTED: step start; TOKEN/FINISHED: step end */
  int64_t token_index;       /* TOKEN: 0-based output index */
  uint32_t token_id;         /* TOKEN: the token's id */
  int64_t prefix_hit_tokens; /* SCHEDULED: tokens served from the prefix cache (prompt,
                                plus the generated tokens when resuming a preempted
                                request); a multiple of block_size */
} cb_sim_event;

typedef void (*cb_sim_event_fn)(void *ctx, const cb_sim_event *ev);

/* Create an engine. Copies *p. On failure *out is NULL and nothing is allocated. */
cb_status cb_sim_engine_new(const cb_sim_params *p, cb_sim_engine **out, cb_error *err);
void cb_sim_engine_free(cb_sim_engine *e);

/*
 * Queue a request that arrived at now_ns. CB_ERR_RANGE when prompt_len + output_len
 * exceeds max_model_len (vLLM's 400, with vLLM's message); CB_ERR_INVALID for a
 * duplicate live id, an empty prompt or output_len < 1. The request is considered by
 * the first step that starts at or after now_ns and after this call (a step that
 * advance() already started at now_ns does not include it: add all requests of one
 * instant before advancing to it); waiting requests are admitted in the order they
 * were added (FIFO). Call cb_sim_engine_advance(e, now_ns, ...) first so earlier steps
 * are reported. Ids of finished or aborted requests may be reused. CB_ERR_STATE from
 * inside the event callback.
 */
cb_status cb_sim_engine_add(cb_sim_engine *e, const cb_sim_request *r, uint64_t now_ns,
                            cb_error *err);

/* Remove a request (client went away) and free its blocks; no further event is
 * reported for it. Unknown ids are ignored. May be called from the event callback. */
void cb_sim_engine_abort(cb_sim_engine *e, uint64_t id);

/* Time at which the next step ends (or a step should start), UINT64_MAX when idle. */
uint64_t cb_sim_engine_next_event_ns(const cb_sim_engine *e);

/*
 * Run every step that ends at or before now_ns, and start the step that begins at or
 * before now_ns, calling fn (may be NULL) for each event in time order. A step's
 * PREEMPTED and SCHEDULED events (time = its start) are reported when it starts; at its
 * end, for each request of the step in admission order, TOKEN and, after the request's
 * last token, FINISHED (time = its end). fn may call cb_sim_engine_abort but not add or
 * advance (advance from fn returns at once).
 */
void cb_sim_engine_advance(cb_sim_engine *e, uint64_t now_ns, cb_sim_event_fn fn,
                           void *ctx);

typedef struct cb_sim_engine_stats {
  int64_t running;           /* requests in the running set */
  int64_t waiting;           /* requests waiting (new or preempted) */
  double kv_usage;           /* fraction of blocks in use, 0..1 */
  int64_t kv_blocks_total;
  int64_t kv_blocks_used;
  uint64_t prefix_queries;   /* tokens looked up in the prefix cache (at admission) */
  uint64_t prefix_hits;      /* of which found cached */
  uint64_t preemptions;
  uint64_t prompt_tokens;    /* prompt tokens computed (prefill, incl. recompute) */
  uint64_t generation_tokens;/* output tokens produced */
  uint64_t steps;
  uint64_t finished;
} cb_sim_engine_stats;

void cb_sim_engine_get_stats(const cb_sim_engine *e, cb_sim_engine_stats *out);
const cb_sim_params *cb_sim_engine_params(const cb_sim_engine *e);
const cb_sim_capacity *cb_sim_engine_capacity(const cb_sim_engine *e);

/* ---- Synthetic text ------------------------------------------------------------ */

/*
 * Output token k (0-based) of the deterministic text stream seeded by `seed`:
 * writes its text (NUL-terminated, at most CB_SIM_TOKEN_TEXT_MAX bytes with the NUL)
 * into out and returns its id in [0, vocab). Stateless: any k can be asked in any
 * order. The pieces are readable English-like words and punctuation, and each piece
 * re-tokenizes to exactly itself under cb_tok_approx_tokenize (calibench/tok.h).
 */
#define CB_SIM_TOKEN_TEXT_MAX 16
uint32_t cb_sim_text_token(uint64_t seed, int64_t k, uint32_t vocab, char *out);

/* The same tokens in order from k: each position's hash is computed once instead of
 * three times (the engine samples every output token, sim run keeps their text). */
typedef struct cb_sim_text_cursor {
  uint64_t seed;
  int64_t k;      /* the token next() gives */
  uint64_t h1, h2; /* hashes of positions k - 1 and k - 2 */
} cb_sim_text_cursor;
void cb_sim_text_cursor_init(cb_sim_text_cursor *c, uint64_t seed, int64_t k);
uint32_t cb_sim_text_cursor_next(cb_sim_text_cursor *c, uint32_t vocab, char *out);
/* The id alone, from a table of every piece's id in one vocabulary
 * (cb_sim_text_ids_new, freed with cb_free): no text, no hashing of it. */
uint32_t *cb_sim_text_ids_new(uint32_t vocab);
uint32_t cb_sim_text_cursor_next_id(cb_sim_text_cursor *c, const uint32_t *ids);

#ifdef __cplusplus
}
#endif
#endif
