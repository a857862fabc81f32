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

/* One field list for both formats: YAML "key: value" lines (indented two spaces
 * inside model: and gpu:) or compact JSON. */
typedef struct writer {
  cb_buf *out;
  int json;
  int first;  /* JSON: nothing written yet in this object, so no comma */
  int nested; /* YAML: inside model: or gpu: */
} writer;

static void key(writer *w, const char *k) {
  if (w->json) {
    if (!w->first) cb_buf_append_char(w->out, ',');
    w->first = 0;
    cb_buf_appendf(w->out, "\"%s\":", k);
  } else {
    cb_buf_appendf(w->out, "%s%s: ", w->nested ? "  " : "", k);
  }
}

static void end_line(writer *w) {
  if (!w->json) cb_buf_append_char(w->out, '\n');
}

static void open_section(writer *w, const char *k) {
  if (w->json) {
    key(w, k);
    cb_buf_append_char(w->out, '{');
    w->first = 1;
  } else {
    cb_buf_appendf(w->out, "%s:\n", k);
    w->nested = 1;
  }
}

static void close_section(writer *w) {
  if (w->json) cb_buf_append_char(w->out, '}');
  w->nested = 0;
}

static void put_name(writer *w, const char *k, const char *s) {
  key(w, k);
  quoted(w->out, s);
  end_line(w);
}

/* A keyword: quoted in JSON, bare in YAML. */
static void put_word(writer *w, const char *k, const char *s) {
  key(w, k);
  cb_buf_appendf(w->out, w->json ? "\"%s\"" : "%s", s);
  end_line(w);
}

static void put_int(writer *w, const char *k, long long v) {
  key(w, k);
  cb_buf_appendf(w->out, "%lld", v);
  end_line(w);
}

static void put_u64(writer *w, const char *k, uint64_t v) {
  key(w, k);
  cb_buf_appendf(w->out, "%llu", (unsigned long long)v);
  end_line(w);
}

static void put_dbl(writer *w, const char *k, double v) {
  key(w, k);
  cb_buf_appendf(w->out, "%.17g", v);
  end_line(w);
}

static void put_bool(writer *w, const char *k, int v) {
  key(w, k);
  cb_buf_append_str(w->out, v ? "true" : "false");
  end_line(w);
}

/* Whole nanoseconds as microseconds with three decimals. */
static void put_us(writer *w, const char *k, uint64_t ns) {
  key(w, k);
  cb_buf_appendf(w->out, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  end_line(w);
}

static void write_params(writer *w, const cb_sim_params *p) {
  const cb_sim_model *m = &p->model;
  const cb_sim_gpu *g = &p->gpu;
  open_section(w, "model");
  put_name(w, "name", m->name);
  put_int(w, "num_layers", m->num_layers);
  put_int(w, "hidden_size", m->hidden_size);
  put_int(w, "num_heads", m->num_heads);
  put_int(w, "num_kv_heads", m->num_kv_heads);
  put_int(w, "head_dim", m->head_dim);
  put_int(w, "intermediate_size", m->intermediate_size);
  put_int(w, "vocab_size", m->vocab_size);
  put_int(w, "num_experts", m->num_experts);
  put_int(w, "num_experts_active", m->num_experts_active);
  put_bool(w, "tied_embeddings", m->tied_embeddings);
  put_dbl(w, "num_params", m->num_params);
  put_int(w, "max_context", m->max_context);
  close_section(w);
  open_section(w, "gpu");
  put_name(w, "name", g->name);
  put_dbl(w, "flops_bf16", g->flops_bf16);
  put_dbl(w, "flops_fp8", g->flops_fp8);
  put_dbl(w, "mem_bytes", g->mem_bytes);
  put_dbl(w, "mem_bw", g->mem_bw);
  put_dbl(w, "link_bw", g->link_bw);
  put_bool(w, "fp8_attention", g->fp8_attention);
  close_section(w);
  put_int(w, "tp", p->tp);
  put_word(w, "weight_dtype", cb_sim_dtype_name(p->weight_dtype));
  put_word(w, "kv_dtype", cb_sim_dtype_name(p->kv_dtype));
  put_dbl(w, "mfu", p->mfu);
  put_dbl(w, "mbu", p->mbu);
  put_us(w, "step_overhead_us", p->step_overhead_ns);
  put_us(w, "allreduce_latency_us", p->allreduce_latency_ns);
  put_dbl(w, "gpu_memory_utilization", p->gpu_memory_utilization);
  put_dbl(w, "activation_reserve_gib", p->activation_reserve_bytes / GIB);
  put_int(w, "block_size", p->block_size);
  put_int(w, "num_gpu_blocks", (long long)p->num_gpu_blocks_override);
  put_int(w, "max_num_batched_tokens", p->max_num_batched_tokens);
  put_int(w, "max_num_seqs", p->max_num_seqs);
  put_int(w, "max_model_len", p->max_model_len);
  put_bool(w, "enable_prefix_caching", p->enable_prefix_caching);
  put_int(w, "long_prefill_token_threshold", p->long_prefill_token_threshold);
  put_int(w, "warmup_steps", p->warmup_steps);
  put_dbl(w, "warmup_factor", p->warmup_factor);
  put_dbl(w, "jitter_cv", p->jitter_cv);
  put_u64(w, "seed", p->seed);
  put_dbl(w, "eos_mean_tokens", p->eos_mean_tokens);
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
  writer w = {out, 0, 1, 0};
  write_params(&w, p);
}

void cb_sim_params_write_json(const cb_sim_params *p, cb_buf *out) {
  writer w = {out, 1, 1, 0};
  cb_buf_append_char(out, '{');
  write_params(&w, p);
  cb_buf_append_char(out, '}');
}
