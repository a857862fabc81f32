/*
 * capacity.c - what a deployment can hold: parameter counts derived from the
 * architecture, weight bytes, KV bytes per token, and the KV block count and
 * effective max_model_len (vLLM's start-up memory plan).
 *
 * The memory plan, per GPU (docs/simulator.md, "Memory and KV capacity"):
 *   budget_bytes    = gpu.mem_bytes × gpu_memory_utilization
 *   kv_avail_bytes  = budget_bytes − weight_bytes / TP − activation_reserve_bytes
 *   block_bytes     = block_size × kv_bytes_per_token_per_gpu
 *   num_blocks      = floor(kv_avail_bytes / block_bytes)
 * which is vLLM's get_num_blocks (available memory // page size // layers, where a
 * page is one layer's block) with the profiler's measurement replaced by the
 * activation reserve parameter.
 */
#include <math.h>

#include "calibench/sim.h"
#include "engine_internal.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void cb__sim_arch_derive(const cb_sim_model *m, cb__sim_arch *a) {
  double L = m->num_layers, h = m->hidden_size, H = m->num_heads, K = m->num_kv_heads;
  double d = m->head_dim, f = m->intermediate_size, V = m->vocab_size;
  a->moe = m->num_experts > 1;
  double E = a->moe ? m->num_experts : 1;
  double k = a->moe ? m->num_experts_active : 1;

  a->attn_per_layer = h * (H * d) + 2.0 * h * (K * d) + (H * d) * h; /* q, k+v, o */
  a->norm_per_layer = 2.0 * h;                                       /* two RMSNorms */
  a->expert = 3.0 * h * f;                         /* SwiGLU: gate, up, down */
  a->router_per_layer = a->moe ? h * E : 0.0;      /* gate: h → E logits */
  a->embed = V * h;
  a->lm_head = V * h;
  a->lm_head_stored = m->tied_embeddings ? 0.0 : V * h;

  double per_layer = a->attn_per_layer + a->norm_per_layer + E * a->expert + a->router_per_layer;
  a->nonembed_derived = L * per_layer + h; /* + final norm */
  a->total_derived = a->nonembed_derived + a->embed + a->lm_head_stored;
  a->expert_total = L * E * a->expert;

  /* Weights in memory follow the published count when there is one (it includes what
   * the fields do not describe, such as Qwen2's QKV biases). */
  a->nonembed = m->num_params > 0 ? m->num_params - a->embed - a->lm_head_stored
                                  : a->nonembed_derived;

  double active_layer = a->attn_per_layer + a->norm_per_layer + k * a->expert + a->router_per_layer;
  a->active_nonembed = L * active_layer + h;
}

int cb__sim_kv_heads_per_gpu(const cb_sim_params *p) {
  int K = p->model.num_kv_heads, tp = p->tp;
  return K >= tp ? K / tp : 1;
}

double cb__sim_weight_bytes(const cb_sim_params *p, const cb__sim_arch *a) {
  double wbytes = cb_sim_dtype_bytes(p->weight_dtype);
  double bf16 = cb_sim_dtype_bytes(CB_SIM_DTYPE_BF16);
  return a->nonembed * wbytes + (a->embed + a->lm_head_stored) * bf16;
}

cb_status cb_sim_capacity_compute(const cb_sim_params *p, cb_sim_capacity *out,
                                  cb_error *err) {
  cb_status st = cb_sim_params_validate(p, err);
  if (st != CB_OK) return st;

  cb__sim_arch a;
  cb__sim_arch_derive(&p->model, &a);
  const cb_sim_model *m = &p->model;
  double kv_elem_bytes = cb_sim_dtype_bytes(p->kv_dtype);

  /* KV per token: K and V, every layer, every KV head, head_dim elements each. */
  out->weight_bytes = cb__sim_weight_bytes(p, &a);
  out->weight_bytes_per_gpu = out->weight_bytes / p->tp;
  out->kv_bytes_per_token = 2.0 * m->num_layers * m->num_kv_heads * m->head_dim * kv_elem_bytes;
  out->kv_bytes_per_token_per_gpu =
      2.0 * m->num_layers * cb__sim_kv_heads_per_gpu(p) * m->head_dim * kv_elem_bytes;

  double budget_bytes = p->gpu.mem_bytes * p->gpu_memory_utilization;
  out->kv_bytes_available = budget_bytes - out->weight_bytes_per_gpu - p->activation_reserve_bytes;
  double block_bytes = p->block_size * out->kv_bytes_per_token_per_gpu;

  if (p->num_gpu_blocks_override > 0) {
    out->num_blocks = p->num_gpu_blocks_override;
  } else {
    if (out->kv_bytes_available < block_bytes) {
      return cb_error_set(
          err, CB_ERR_CAPACITY,
          "model weights take %.2f GiB per GPU (%s %s, TP %d); with gpu_memory_utilization "
          "%.2f of %.2f GiB and an activation reserve of %.2f GiB, %.2f GiB is left for the "
          "KV cache, less than one block (%.2f MiB). Use more GPUs (--tp), smaller weights "
          "(fp8/int4) or a larger gpu_memory_utilization",
          out->weight_bytes_per_gpu / GIB, m->name, cb_sim_dtype_name(p->weight_dtype), p->tp,
          p->gpu_memory_utilization, p->gpu.mem_bytes / GIB, p->activation_reserve_bytes / GIB,
          out->kv_bytes_available / GIB, block_bytes / (1024.0 * 1024.0));
    }
    out->num_blocks = (int64_t)floor(out->kv_bytes_available / block_bytes);
  }
  if (out->num_blocks > INT32_MAX - 1)
    return cb_error_set(err, CB_ERR_RANGE, "%lld KV blocks is more than the simulator supports",
                        (long long)out->num_blocks);
  out->max_tokens = out->num_blocks * p->block_size;

  if (p->max_model_len == 0) {
    int64_t len = m->max_context;
    if (out->max_tokens < len) len = out->max_tokens;
    out->max_model_len = (int)len;
  } else {
    if (p->max_model_len > m->max_context)
      return cb_error_set(err, CB_ERR_CAPACITY,
                          "User-specified max_model_len (%d) is greater than the derived "
                          "max_model_len (max_position_embeddings=%d of model %s)",
                          p->max_model_len, m->max_context, m->name);
    if ((int64_t)p->max_model_len > out->max_tokens)
      return cb_error_set(err, CB_ERR_CAPACITY,
                          "The model's max seq len (%d) is larger than the maximum number of "
                          "tokens that can be stored in KV cache (%lld). Try increasing "
                          "`gpu_memory_utilization` or decreasing `max_model_len` when "
                          "initializing the engine.",
                          p->max_model_len, (long long)out->max_tokens);
    out->max_model_len = p->max_model_len;
  }
  return CB_OK;
}
