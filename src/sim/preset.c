/*
 * preset.c - the simulator's built-in models and GPUs, and each GPU's default
 * efficiencies (MFU, MBU, per-step overhead, all-reduce latency).
 *
 * Every value is documented with its source in docs/simulator.md ("Presets" and
 * "Default efficiencies"): model fields come from the Hugging Face config.json of
 * each model, GPU figures from the vendor datasheets (dense tensor FLOP/s, i.e. half
 * the starred sparse figures), and the efficiencies from published measurements of
 * vLLM deployments. Parameter counts are exact element counts derived from the
 * config fields (they match the published sizes), which is what weights in memory
 * are computed from.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "calibench/sim.h"
#include "engine_internal.h"

/* ---- dtypes ------------------------------------------------------------------------ */

const char *cb_sim_dtype_name(cb_sim_dtype d) {
  switch (d) {
  case CB_SIM_DTYPE_BF16: return "bf16";
  case CB_SIM_DTYPE_FP8: return "fp8";
  case CB_SIM_DTYPE_INT4: return "int4";
  }
  return "unknown";
}

double cb_sim_dtype_bytes(cb_sim_dtype d) {
  switch (d) {
  case CB_SIM_DTYPE_BF16: return 2.0;
  case CB_SIM_DTYPE_FP8: return 1.0;
  case CB_SIM_DTYPE_INT4: return 0.5;
  }
  return 2.0;
}

double cb_sim_logit_noise(cb_sim_dtype d) { return d == CB_SIM_DTYPE_INT4 ? CB_SIM_INT4_LOGIT_NOISE : 0; }

/* ---- models (Hugging Face config.json) --------------------------------------------- */

static const cb_sim_model models[] = {
    /* meta-llama/Llama-3.1-8B-Instruct: 8,030,261,248 parameters. */
    {.name = "llama-3.1-8b", .num_layers = 32, .hidden_size = 4096, .num_heads = 32,
     .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 14336, .vocab_size = 128256,
     .num_experts = 0, .num_experts_active = 0, .tied_embeddings = 0,
     .num_params = 8030261248.0, .max_context = 131072},
    /* meta-llama/Llama-3.1-70B-Instruct: 70,553,706,496 parameters. */
    {.name = "llama-3.1-70b", .num_layers = 80, .hidden_size = 8192, .num_heads = 64,
     .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 28672, .vocab_size = 128256,
     .num_experts = 0, .num_experts_active = 0, .tied_embeddings = 0,
     .num_params = 70553706496.0, .max_context = 131072},
    /* Qwen/Qwen2.5-7B-Instruct: 7,615,616,512 parameters (QKV biases included);
     * tie_word_embeddings false (only the 0.5B-3B Qwen2.5 models tie). */
    {.name = "qwen2.5-7b", .num_layers = 28, .hidden_size = 3584, .num_heads = 28,
     .num_kv_heads = 4, .head_dim = 128, .intermediate_size = 18944, .vocab_size = 152064,
     .num_experts = 0, .num_experts_active = 0, .tied_embeddings = 0,
     .num_params = 7615616512.0, .max_context = 32768},
    /* mistralai/Mistral-7B-Instruct-v0.3: 7,248,023,552 parameters; no sliding window. */
    {.name = "mistral-7b", .num_layers = 32, .hidden_size = 4096, .num_heads = 32,
     .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 14336, .vocab_size = 32768,
     .num_experts = 0, .num_experts_active = 0, .tied_embeddings = 0,
     .num_params = 7248023552.0, .max_context = 32768},
    /* mistralai/Mixtral-8x7B-Instruct-v0.1: 46,702,792,704 parameters, 8 experts, top-2. */
    {.name = "mixtral-8x7b", .num_layers = 32, .hidden_size = 4096, .num_heads = 32,
     .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 14336, .vocab_size = 32000,
     .num_experts = 8, .num_experts_active = 2, .tied_embeddings = 0,
     .num_params = 46702792704.0, .max_context = 32768},
    /* Qwen/Qwen2-VL-7B-Instruct: its language model is Qwen2-7B's shape (the same
     * fields and 7,615,616,512 parameters as qwen2.5-7b); the 675,759,104 vision
     * encoder parameters are not counted here: they are not read by decode steps, and
     * their compute is charged per image (vision.c). */
    {.name = "qwen2-vl-7b", .num_layers = 28, .hidden_size = 3584, .num_heads = 28,
     .num_kv_heads = 4, .head_dim = 128, .intermediate_size = 18944, .vocab_size = 152064,
     .num_experts = 0, .num_experts_active = 0, .tied_embeddings = 0,
     .num_params = 7615616512.0, .max_context = 32768},
};
#define NMODELS (sizeof models / sizeof models[0])

/* ---- GPUs (vendor datasheets; memory = capacity as nvidia-smi reports it) ---------- */

#define MIB (1024.0 * 1024.0)

static const cb_sim_gpu gpus[] = {
    /* A100 80GB SXM: 312 TFLOP/s bf16 dense, no FP8, 81,920 MiB HBM2e at 2.039 TB/s,
     * NVLink 3: 600 GB/s bidirectional = 300 GB/s per direction. */
    {.name = "a100-80g", .flops_bf16 = 312e12, .flops_fp8 = 0.0, .mem_bytes = 81920.0 * MIB,
     .mem_bw = 2.039e12, .link_bw = 300e9},
    /* H100 SXM5 80GB: 989.4 TFLOP/s bf16 dense, 1,978.9 fp8 dense, 81,559 MiB HBM3 at
     * 3.35 TB/s, NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction. */
    {.name = "h100-sxm", .flops_bf16 = 989.4e12, .flops_fp8 = 1978.9e12,
     .mem_bytes = 81559.0 * MIB, .mem_bw = 3.35e12, .link_bw = 450e9, .fp8_attention = 1},
    /* H200 SXM 141GB: same GH100 compute as H100, 143,771 MiB HBM3e at 4.8 TB/s. */
    {.name = "h200", .flops_bf16 = 989.4e12, .flops_fp8 = 1978.9e12,
     .mem_bytes = 143771.0 * MIB, .mem_bw = 4.8e12, .link_bw = 450e9, .fp8_attention = 1},
    /* L40S: 362.05 TFLOP/s bf16 dense, 733 fp8 dense, 48 GB GDDR6 (46,068 MiB with ECC
     * on) at 864 GB/s; no NVLink: PCIe Gen4 x16, 32 GB/s per direction. FP8 GEMMs but
     * no FP8 attention: vLLM's FP8 FlashAttention is FA3, Hopper (SM 9.x) only. */
    {.name = "l40s", .flops_bf16 = 362.05e12, .flops_fp8 = 733e12, .mem_bytes = 46068.0 * MIB,
     .mem_bw = 864e9, .link_bw = 32e9},
};
#define NGPUS (sizeof gpus / sizeof gpus[0])

/*
 * Default efficiencies per GPU (docs/simulator.md, "Default efficiencies", derives each
 * one from a published vLLM measurement):
 *   MBU 0.75: H100 from Llama-3.1-8B batch-1 TPOT 6.48 ms (vLLM 0.21, H100-80GB-HBM3);
 *             A100 from Llama-3.1-8B batch-1 ~75 tok/s (vLLM 0.23, A100 40GB);
 *             L40S inherits it (no published batch-1 figure found).
 *   MBU 0.64, H200: H100's × 0.852, the H200's bandwidth efficiency relative to the
 *             A100's and H100's in vLLM's own latency benchmark (Llama-3.1-8B, batch 8,
 *             the same software on all three): its HBM3e peak is 1.43x the H100's, its
 *             decode steps only 1.20x faster.
 *   MFU: A100 0.50 from a 16k-token prefill TTFT (vLLM issue #20469); H100/H200 0.45
 *        and L40S 0.32 from BLIS's calibrated prefill MFU.
 *   step overhead 0.5 ms and all-reduce latency 20 us: BLIS hardware_config.json.
 */
static const struct gpu_eff {
  const char *name;
  double mfu, mbu;
  uint64_t step_overhead_ns, allreduce_latency_ns;
} effs[] = {
    {"a100-80g", 0.50, 0.75, 500000, 20000},
    {"h100-sxm", 0.45, 0.75, 500000, 20000},
    {"h200", 0.45, 0.64, 500000, 20000},
    {"l40s", 0.32, 0.75, 500000, 20000},
};
#define NEFFS (sizeof effs / sizeof effs[0])

/* ---- lookups ------------------------------------------------------------------------ */

static void list_names(char *buf, size_t n, const char *const *names) {
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; names[i]; i++) {
    int w = snprintf(buf + off, n - off, "%s%s", i ? ", " : "", names[i]);
    if (w < 0 || (size_t)w >= n - off) break;
    off += (size_t)w;
  }
}

const char *const *cb_sim_preset_model_names(void) {
  static const char *const names[] = {"llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b",
                                      "mistral-7b", "mixtral-8x7b", "qwen2-vl-7b", NULL};
  return names;
}

const char *const *cb_sim_preset_gpu_names(void) {
  static const char *const names[] = {"a100-80g", "h100-sxm", "h200", "l40s", NULL};
  return names;
}

cb_status cb_sim_preset_model(const char *name, cb_sim_model *out, cb_error *err) {
  for (size_t i = 0; i < NMODELS; i++) {
    if (name && strcasecmp(name, models[i].name) == 0) {
      *out = models[i];
      return CB_OK;
    }
  }
  char known[256];
  list_names(known, sizeof known, cb_sim_preset_model_names());
  return cb_error_set(err, CB_ERR_NOT_FOUND, "unknown model preset '%s' (known: %s)",
                      name ? name : "(null)", known);
}

cb_status cb_sim_preset_gpu(const char *name, cb_sim_gpu *out, cb_error *err) {
  for (size_t i = 0; i < NGPUS; i++) {
    if (name && strcasecmp(name, gpus[i].name) == 0) {
      *out = gpus[i];
      return CB_OK;
    }
  }
  char known[256];
  list_names(known, sizeof known, cb_sim_preset_gpu_names());
  return cb_error_set(err, CB_ERR_NOT_FOUND, "unknown GPU preset '%s' (known: %s)",
                      name ? name : "(null)", known);
}

int cb__sim_gpu_efficiency(const char *gpu_name, double *mfu, double *mbu,
                           uint64_t *step_overhead_ns, uint64_t *allreduce_latency_ns) {
  for (size_t i = 0; i < NEFFS; i++) {
    if (strcasecmp(gpu_name, effs[i].name) == 0) {
      *mfu = effs[i].mfu;
      *mbu = effs[i].mbu;
      *step_overhead_ns = effs[i].step_overhead_ns;
      *allreduce_latency_ns = effs[i].allreduce_latency_ns;
      return 1;
    }
  }
  return 0;
}
