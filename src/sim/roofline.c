/*
 * roofline.c - the time one engine step takes on the GPU, from a roofline of the
 * scheduled batch (docs/simulator.md, "Step time").
 *
 * Per GPU of a TP group, for a batch of sequences i with c_i new tokens after p_i
 * cached ones, T = Σ c_i tokens and S sequences that sample a token:
 *
 *   FLOPs  = 2·N_act·T                       linear layers (incl. MoE top-k + router)
 *          + 2·V·h·S                         LM head, only for sampled positions
 *          + Σ 4·L·H·d·(c_i·p_i + c_i(c_i+1)/2)   attention, causal
 *          + Σ E_i                          vision encoder FLOPs of images encoded now
 *          all divided by TP (heads and matrices are split across the group)
 *   bytes  = weights read once per step (MoE: shared + E_eff experts per layer)
 *          + Σ p_i · kv_bytes_per_token_per_gpu    KV read of each past context
 *          + T · kv_bytes_per_token_per_gpu         KV written for the new tokens
 *   compute_ns   = linear FLOPs / (linear peak × MFU) + attention / (attention peak × MFU)
 *                + (LM head + encoder) / (bf16 peak × MFU)
 *   memory_ns    = bytes / (HBM bandwidth × MBU)
 *   allreduce_ns = 2·L · (2(n−1)/n · T·h·2 B / link_bw + allreduce_latency), TP = n > 1
 *   total_ns     = max(compute_ns, memory_ns) + allreduce_ns + step_overhead_ns
 *
 * The linear peak is the FP8 peak when the weights are FP8 and the GPU has FP8 tensor
 * cores (W8A8); otherwise bf16 (int4 is W4A16: dequantised to bf16 for the matmul).
 * The attention peak is the FP8 peak when the KV cache is FP8 and the GPU runs FP8
 * attention (vLLM quantises the query and calls FlashAttention 3's FP8 kernel when
 * flash_attn_supports_fp8(): FA3 on SM 9.x); otherwise bf16.
 */
#include <math.h>

#include "calibench/sim.h"
#include "engine_internal.h"

void cb_sim_step_cost_compute(const cb_sim_params *p, const cb_sim_batch_item *items,
                              size_t n, cb_sim_step_cost *out) {
  const cb_sim_model *m = &p->model;
  cb__sim_arch a;
  cb__sim_arch_derive(m, &a);
  double tp = p->tp;
  double L = m->num_layers, h = m->hidden_size, H = m->num_heads, d = m->head_dim;
  double wbytes = cb_sim_dtype_bytes(p->weight_dtype);
  double bf16 = cb_sim_dtype_bytes(CB_SIM_DTYPE_BF16);
  double kv_per_token_gpu = 2.0 * L * cb__sim_kv_heads_per_gpu(p) * m->head_dim *
                            cb_sim_dtype_bytes(p->kv_dtype); /* bytes */

  /* Batch totals. */
  double tokens = 0, samples = 0, context = 0, attn_pairs = 0, encoder = 0;
  for (size_t i = 0; i < n; i++) {
    double c = (double)items[i].new_tokens, past = (double)items[i].context_tokens;
    tokens += c;
    samples += items[i].samples ? 1 : 0;
    encoder += items[i].encoder_flops;
    context += past;
    attn_pairs += c * past + c * (c + 1.0) / 2.0; /* query·key pairs, causal */
  }

  /* FLOPs per GPU. */
  double linear_flops = 2.0 * a.active_nonembed * tokens / tp;
  double head_flops = 2.0 * a.lm_head * samples / tp;
  double attn_flops = 4.0 * L * H * d * attn_pairs / tp; /* QKᵀ and AV, 2 FLOPs each */
  double encoder_flops = encoder / tp; /* the encoder's weights are split like the LLM's */
  out->flops = linear_flops + head_flops + attn_flops + encoder_flops;

  /* Weight bytes read this step, per GPU. */
  double layer_weights;
  if (a.moe) {
    /* Experts touched by B tokens routed top-k over N: N·(1 − ((N−k)/N)^B). */
    double N = m->num_experts, k = m->num_experts_active;
    double e_eff = tokens > 0 ? N * (1.0 - pow((N - k) / N, tokens)) : 0.0;
    double shared = a.nonembed - a.expert_total; /* attention, router, norms */
    layer_weights = shared + L * e_eff * a.expert;
  } else {
    layer_weights = a.nonembed;
  }
  double weight_bytes = layer_weights * wbytes           /* decoder layers */
                        + (samples > 0 ? a.lm_head * bf16 : 0.0) /* LM head, bf16 */
                        + tokens * h * bf16;             /* embedding rows gathered */
  weight_bytes /= tp;
  double kv_read = context * kv_per_token_gpu;
  double kv_write = tokens * kv_per_token_gpu;
  out->bytes = weight_bytes + kv_read + kv_write;

  /* Time. */
  double bf16_peak = p->gpu.flops_bf16;
  double linear_peak = (p->weight_dtype == CB_SIM_DTYPE_FP8 && p->gpu.flops_fp8 > 0)
                           ? p->gpu.flops_fp8 : bf16_peak;
  double attn_peak = (p->kv_dtype == CB_SIM_DTYPE_FP8 && p->gpu.fp8_attention &&
                      p->gpu.flops_fp8 > 0) ? p->gpu.flops_fp8 : bf16_peak;
  out->compute_ns = (linear_flops / (linear_peak * p->mfu) + attn_flops / (attn_peak * p->mfu) +
                     (head_flops + encoder_flops) / (bf16_peak * p->mfu)) * 1e9;
  out->memory_ns = out->bytes / (p->gpu.mem_bw * p->mbu) * 1e9;
  out->allreduce_ns = 0.0;
  if (p->tp > 1 && tokens > 0) {
    double size_bytes = tokens * h * bf16; /* one activation tensor */
    double per_call_s = 2.0 * (tp - 1.0) / tp * size_bytes / p->gpu.link_bw;
    out->allreduce_ns = 2.0 * L * (per_call_s * 1e9 + (double)p->allreduce_latency_ns);
  }
  out->overhead_ns = (double)p->step_overhead_ns;
  out->memory_bound = out->memory_ns >= out->compute_ns;
  out->total_ns = (out->memory_bound ? out->memory_ns : out->compute_ns) + out->allreduce_ns +
                  out->overhead_ns;
}
