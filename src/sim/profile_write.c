/*
 * profile_write.c - simulator parameters written back out: as a YAML profile that
 * cb_sim_params_load_yaml reads back to the same values (calibrate fit writes its
 * result this way), and as JSON for manifests.
 *
 * Every key is written and the model and GPU are spelled out field by field, never
 * as a preset name, so the file does not depend on the presets or defaults of the
 * calibench that reads it. Numbers use %.17g (doubles round-trip exactly); the
 * microsecond keys are written from whole nanoseconds with three decimals, which
 * the loader rounds back to the same nanoseconds.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/sim.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A name as a YAML or JSON double-quoted string (names are printable ASCII in
 * practice; anything else is escaped the JSON way, which YAML also reads). */
static void quoted(cb_buf *out, const char *s) {
  cb_buf_append_char(out, '"');
  cb_buf_append_json_string(out, s, strlen(s));
  cb_buf_append_char(out, '"');
}

static void us(cb_buf *out, uint64_t ns) {
  cb_buf_appendf(out, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

void cb_sim_params_write_yaml(const cb_sim_params *p, const char *comment, cb_buf *out) {
  if (comment) {
    const char *c = comment;
    while (*c) {
      const char *nl = strchr(c, '\n');
      size_t n = nl ? (size_t)(nl - c) : strlen(c);
      cb_buf_appendf(out, "# %.*s\n", (int)n, c);
      c += n + (nl ? 1 : 0);
    }
  }
  const cb_sim_model *m = &p->model;
  const cb_sim_gpu *g = &p->gpu;
  cb_buf_append_str(out, "model:\n  name: ");
  quoted(out, m->name);
  cb_buf_appendf(out,
                 "\n  num_layers: %d\n  hidden_size: %d\n  num_heads: %d\n  num_kv_heads: %d\n"
                 "  head_dim: %d\n  intermediate_size: %d\n  vocab_size: %d\n  num_experts: %d\n"
                 "  num_experts_active: %d\n  tied_embeddings: %s\n  num_params: %.17g\n"
                 "  max_context: %d\n",
                 m->num_layers, m->hidden_size, m->num_heads, m->num_kv_heads, m->head_dim,
                 m->intermediate_size, m->vocab_size, m->num_experts, m->num_experts_active,
                 m->tied_embeddings ? "true" : "false", m->num_params, m->max_context);
  cb_buf_append_str(out, "gpu:\n  name: ");
  quoted(out, g->name);
  cb_buf_appendf(out,
                 "\n  flops_bf16: %.17g\n  flops_fp8: %.17g\n  mem_bytes: %.17g\n  mem_bw: %.17g\n"
                 "  link_bw: %.17g\n  fp8_attention: %s\n",
                 g->flops_bf16, g->flops_fp8, g->mem_bytes, g->mem_bw, g->link_bw,
                 g->fp8_attention ? "true" : "false");
  cb_buf_appendf(out, "tp: %d\nweight_dtype: %s\nkv_dtype: %s\nmfu: %.17g\nmbu: %.17g\n", p->tp,
                 cb_sim_dtype_name(p->weight_dtype), cb_sim_dtype_name(p->kv_dtype), p->mfu, p->mbu);
  cb_buf_append_str(out, "step_overhead_us: ");
  us(out, p->step_overhead_ns);
  cb_buf_append_str(out, "\nallreduce_latency_us: ");
  us(out, p->allreduce_latency_ns);
  cb_buf_appendf(out,
                 "\ngpu_memory_utilization: %.17g\nactivation_reserve_gib: %.17g\nblock_size: %d\n"
                 "num_gpu_blocks: %lld\nmax_num_batched_tokens: %d\nmax_num_seqs: %d\n"
                 "max_model_len: %d\nenable_prefix_caching: %s\nlong_prefill_token_threshold: %d\n"
                 "warmup_steps: %d\nwarmup_factor: %.17g\njitter_cv: %.17g\nseed: %llu\n"
                 "eos_mean_tokens: %.17g\n",
                 p->gpu_memory_utilization, p->activation_reserve_bytes / GIB, p->block_size,
                 (long long)p->num_gpu_blocks_override, p->max_num_batched_tokens, p->max_num_seqs,
                 p->max_model_len, p->enable_prefix_caching ? "true" : "false",
                 p->long_prefill_token_threshold, p->warmup_steps, p->warmup_factor, p->jitter_cv,
                 (unsigned long long)p->seed, p->eos_mean_tokens);
}

void cb_sim_params_write_json(const cb_sim_params *p, cb_buf *out) {
  const cb_sim_model *m = &p->model;
  const cb_sim_gpu *g = &p->gpu;
  cb_buf_append_str(out, "{\"model\":{\"name\":");
  quoted(out, m->name);
  cb_buf_appendf(out,
                 ",\"num_layers\":%d,\"hidden_size\":%d,\"num_heads\":%d,\"num_kv_heads\":%d,"
                 "\"head_dim\":%d,\"intermediate_size\":%d,\"vocab_size\":%d,\"num_experts\":%d,"
                 "\"num_experts_active\":%d,\"tied_embeddings\":%s,\"num_params\":%.17g,"
                 "\"max_context\":%d},\"gpu\":{\"name\":",
                 m->num_layers, m->hidden_size, m->num_heads, m->num_kv_heads, m->head_dim,
                 m->intermediate_size, m->vocab_size, m->num_experts, m->num_experts_active,
                 m->tied_embeddings ? "true" : "false", m->num_params, m->max_context);
  quoted(out, g->name);
  cb_buf_appendf(out,
                 ",\"flops_bf16\":%.17g,\"flops_fp8\":%.17g,\"mem_bytes\":%.17g,\"mem_bw\":%.17g,"
                 "\"link_bw\":%.17g,\"fp8_attention\":%s},\"tp\":%d,\"weight_dtype\":\"%s\","
                 "\"kv_dtype\":\"%s\",\"mfu\":%.17g,\"mbu\":%.17g,\"step_overhead_us\":",
                 g->flops_bf16, g->flops_fp8, g->mem_bytes, g->mem_bw, g->link_bw,
                 g->fp8_attention ? "true" : "false", p->tp,
                 cb_sim_dtype_name(p->weight_dtype), cb_sim_dtype_name(p->kv_dtype), p->mfu, p->mbu);
  us(out, p->step_overhead_ns);
  cb_buf_append_str(out, ",\"allreduce_latency_us\":");
  us(out, p->allreduce_latency_ns);
  cb_buf_appendf(out,
                 ",\"gpu_memory_utilization\":%.17g,\"activation_reserve_gib\":%.17g,"
                 "\"block_size\":%d,\"num_gpu_blocks\":%lld,\"max_num_batched_tokens\":%d,"
                 "\"max_num_seqs\":%d,\"max_model_len\":%d,\"enable_prefix_caching\":%s,"
                 "\"long_prefill_token_threshold\":%d,\"warmup_steps\":%d,\"warmup_factor\":%.17g,"
                 "\"jitter_cv\":%.17g,\"seed\":%llu,\"eos_mean_tokens\":%.17g}",
                 p->gpu_memory_utilization, p->activation_reserve_bytes / GIB, p->block_size,
                 (long long)p->num_gpu_blocks_override, p->max_num_batched_tokens, p->max_num_seqs,
                 p->max_model_len, p->enable_prefix_caching ? "true" : "false",
                 p->long_prefill_token_threshold, p->warmup_steps, p->warmup_factor, p->jitter_cv,
                 (unsigned long long)p->seed, p->eos_mean_tokens);
}
