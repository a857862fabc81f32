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
#include <stdarg.h>
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

/* key: value, the value as printf writes it. */
static void put(writer *w, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(writer *w, const char *k, const char *fmt, ...) {
  key(w, k);
  va_list ap;
  va_start(ap, fmt);
  cb_buf_vappendf(w->out, fmt, ap);
  va_end(ap);
  end_line(w);
}

/* A keyword: quoted in JSON, bare in YAML. */
static void put_word(writer *w, const char *k, const char *s) {
  const char *q = w->json ? "\"" : "";
  put(w, k, "%s%s%s", q, s, q);
}

/* Whole nanoseconds as microseconds with three decimals. */
static void put_us(writer *w, const char *k, uint64_t ns) {
  put(w, k, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void write_params(writer *w, const cb_sim_params *p) {
  const cb_sim_model *m = &p->model;
  const cb_sim_gpu *g = &p->gpu;
  open_section(w, "model");
  put_name(w, "name", m->name);
  put(w, "num_layers", "%d", m->num_layers);
  put(w, "hidden_size", "%d", m->hidden_size);
  put(w, "num_heads", "%d", m->num_heads);
  put(w, "num_kv_heads", "%d", m->num_kv_heads);
  put(w, "head_dim", "%d", m->head_dim);
  put(w, "intermediate_size", "%d", m->intermediate_size);
  put(w, "vocab_size", "%d", m->vocab_size);
  put(w, "num_experts", "%d", m->num_experts);
  put(w, "num_experts_active", "%d", m->num_experts_active);
  put(w, "tied_embeddings", "%s", m->tied_embeddings ? "true" : "false");
  put(w, "num_params", "%.17g", m->num_params);
  put(w, "max_context", "%d", m->max_context);
  close_section(w);
  open_section(w, "gpu");
  put_name(w, "name", g->name);
  put(w, "flops_bf16", "%.17g", g->flops_bf16);
  put(w, "flops_fp8", "%.17g", g->flops_fp8);
  put(w, "mem_bytes", "%.17g", g->mem_bytes);
  put(w, "mem_bw", "%.17g", g->mem_bw);
  put(w, "link_bw", "%.17g", g->link_bw);
  put(w, "fp8_attention", "%s", g->fp8_attention ? "true" : "false");
  close_section(w);
  put(w, "tp", "%d", p->tp);
  put_word(w, "weight_dtype", cb_sim_dtype_name(p->weight_dtype));
  put_word(w, "kv_dtype", cb_sim_dtype_name(p->kv_dtype));
  put(w, "mfu", "%.17g", p->mfu);
  put(w, "mbu", "%.17g", p->mbu);
  put_us(w, "step_overhead_us", p->step_overhead_ns);
  put_us(w, "allreduce_latency_us", p->allreduce_latency_ns);
  put(w, "gpu_memory_utilization", "%.17g", p->gpu_memory_utilization);
  put(w, "activation_reserve_gib", "%.17g", p->activation_reserve_bytes / GIB);
  put(w, "block_size", "%d", p->block_size);
  put(w, "num_gpu_blocks", "%lld", (long long)p->num_gpu_blocks_override);
  put(w, "max_num_batched_tokens", "%d", p->max_num_batched_tokens);
  put(w, "max_num_seqs", "%d", p->max_num_seqs);
  put(w, "max_model_len", "%d", p->max_model_len);
  put(w, "enable_prefix_caching", "%s", p->enable_prefix_caching ? "true" : "false");
  put(w, "long_prefill_token_threshold", "%d", p->long_prefill_token_threshold);
  put(w, "warmup_steps", "%d", p->warmup_steps);
  put(w, "warmup_factor", "%.17g", p->warmup_factor);
  put(w, "jitter_cv", "%.17g", p->jitter_cv);
  put(w, "seed", "%llu", (unsigned long long)p->seed);
  put(w, "eos_mean_tokens", "%.17g", p->eos_mean_tokens);
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
