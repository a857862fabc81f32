/*
 * params.c - simulator parameters: the defaults, the per-GPU default efficiencies,
 * range and consistency checks, and the YAML profile loader (libyaml).
 *
 * Profile files (docs/simulator.md, "Profiles"): a mapping of the keys listed in
 * sim.h. `model:` and `gpu:` take a preset name or a mapping that either starts from
 * a preset (`preset: NAME`, then any field overrides) or describes the hardware from
 * scratch. Choosing a GPU in the profile applies that GPU's default efficiencies
 * first; mfu/mbu/step_overhead_us/allreduce_latency_us in the same file win,
 * wherever they appear. Every error names the file, the line and the key.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "calibench/clock.h"
#include "calibench/limits.h"
#include "calibench/sim.h"
#include "engine_internal.h"
#include "sim/params_keys.h"
#include "util/yaml_doc.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* The least MFU or MBU a profile may give: a step time divided by a smaller share
 * (1e-300) overflows every time that follows. 0.01% is far below any real GPU. */
#define EFFICIENCY_MIN 1e-4

/* ---- defaults ----------------------------------------------------------------------- */

void cb_sim_default_params(cb_sim_params *p) {
  memset(p, 0, sizeof *p);
  cb_sim_preset_model("llama-3.1-8b", &p->model, NULL);
  cb_sim_preset_gpu("h100-sxm", &p->gpu, NULL);
  p->tp = 1;
  p->weight_dtype = CB_SIM_DTYPE_BF16;
  p->kv_dtype = CB_SIM_DTYPE_BF16;
  cb_sim_params_apply_gpu_defaults(p);
  p->gpu_memory_utilization = 0.9;
  /* vLLM's non-KV remainder for Llama-3.1-8B on H100 (docs/simulator.md): 1.8 GiB in a
   * published V0 log, rounded up for V1's 8192-token budget. */
  p->activation_reserve_bytes = 2.0 * GIB;
  p->block_size = 16;
  p->num_gpu_blocks_override = 0;
  p->max_num_batched_tokens = 8192;
  p->max_num_seqs = 256;
  p->max_model_len = 0;
  p->enable_prefix_caching = 1;
  p->long_prefill_token_threshold = 0;
  p->warmup_steps = 0;
  p->warmup_factor = 3.0;
  p->jitter_cv = 0.0;
  p->seed = 0;
  p->eos_mean_tokens = 256.0; /* front ends: mean output length under sampled EOS */
}

void cb_sim_params_apply_gpu_defaults(cb_sim_params *p) {
  cb__sim_gpu_efficiency(p->gpu.name, &p->mfu, &p->mbu, &p->step_overhead_ns,
                         &p->allreduce_latency_ns);
}

/* ---- validation --------------------------------------------------------------------- */

cb_status cb_sim_params_validate(const cb_sim_params *p, cb_error *err) {
  const cb_sim_model *m = &p->model;
  const cb_sim_gpu *g = &p->gpu;
#define CHECK(cond, ...) \
  do {                   \
    if (!(cond)) return cb_error_set(err, CB_ERR_INVALID, __VA_ARGS__); \
  } while (0)
  CHECK(m->num_layers >= 1, "model %s: num_layers must be >= 1, got %d", m->name, m->num_layers);
  CHECK(m->hidden_size >= 1, "model %s: hidden_size must be >= 1, got %d", m->name,
        m->hidden_size);
  CHECK(m->num_heads >= 1, "model %s: num_heads must be >= 1, got %d", m->name, m->num_heads);
  CHECK(m->num_kv_heads >= 1 && m->num_heads % m->num_kv_heads == 0,
        "model %s: num_kv_heads (%d) must be >= 1 and divide num_heads (%d)", m->name,
        m->num_kv_heads, m->num_heads);
  CHECK(m->head_dim >= 1, "model %s: head_dim must be >= 1, got %d", m->name, m->head_dim);
  CHECK(m->intermediate_size >= 1, "model %s: intermediate_size must be >= 1, got %d", m->name,
        m->intermediate_size);
  CHECK(m->vocab_size >= 1, "model %s: vocab_size must be >= 1, got %d", m->name, m->vocab_size);
  CHECK(m->num_experts >= 0, "model %s: num_experts must be >= 0, got %d", m->name,
        m->num_experts);
  if (m->num_experts > 1)
    CHECK(m->num_experts_active >= 1 && m->num_experts_active <= m->num_experts,
          "model %s: num_experts_active must be in 1..num_experts (%d), got %d", m->name,
          m->num_experts, m->num_experts_active);
  CHECK(m->max_context >= 1 && (unsigned)m->max_context <= CB_LIMIT_TOKENS,
        "model %s: max_context must be in [1, %u] (docs/limits.md), got %d", m->name,
        CB_LIMIT_TOKENS, m->max_context);
  CHECK(m->num_params >= 0 && isfinite(m->num_params), "model %s: num_params must be >= 0",
        m->name);
  if (m->num_params > 0) {
    cb__sim_arch a;
    cb__sim_arch_derive(m, &a);
    CHECK(a.nonembed > 0, "model %s: num_params (%.0f) is smaller than its embeddings (%.0f)",
          m->name, m->num_params, a.embed + a.lm_head_stored);
  }

  CHECK(g->flops_bf16 > 0, "gpu %s: flops_bf16 must be > 0", g->name);
  CHECK(g->flops_fp8 >= 0, "gpu %s: flops_fp8 must be >= 0", g->name);
  CHECK(g->mem_bytes > 0, "gpu %s: mem_bytes must be > 0", g->name);
  CHECK(g->mem_bw > 0, "gpu %s: mem_bw must be > 0", g->name);
  CHECK(g->link_bw >= 0, "gpu %s: link_bw must be >= 0", g->name);

  CHECK(p->tp >= 1, "tp must be >= 1, got %d", p->tp);
  CHECK(m->num_heads % p->tp == 0, "tp %d must divide the model's %d attention heads", p->tp,
        m->num_heads);
  if (m->num_kv_heads >= p->tp)
    CHECK(m->num_kv_heads % p->tp == 0, "tp %d must divide the model's %d KV heads", p->tp,
          m->num_kv_heads);
  else
    CHECK(p->tp % m->num_kv_heads == 0,
          "tp %d must be a multiple of the model's %d KV heads to replicate them", p->tp,
          m->num_kv_heads);
  if (p->tp > 1) CHECK(g->link_bw > 0, "gpu %s: link_bw must be > 0 with tp %d", g->name, p->tp);
  CHECK(p->weight_dtype >= CB_SIM_DTYPE_BF16 && p->weight_dtype <= CB_SIM_DTYPE_INT4,
        "weight_dtype must be bf16, fp8 or int4");
  CHECK(p->kv_dtype == CB_SIM_DTYPE_BF16 || p->kv_dtype == CB_SIM_DTYPE_FP8,
        "kv_dtype must be bf16 or fp8, got %s", cb_sim_dtype_name(p->kv_dtype));

  CHECK(p->mfu >= EFFICIENCY_MIN && p->mfu <= 1, "mfu must be in [%g, 1], got %g", EFFICIENCY_MIN,
        p->mfu);
  CHECK(p->mbu >= EFFICIENCY_MIN && p->mbu <= 1, "mbu must be in [%g, 1], got %g", EFFICIENCY_MIN,
        p->mbu);
  CHECK(p->gpu_memory_utilization > 0 && p->gpu_memory_utilization <= 1,
        "gpu_memory_utilization must be in (0, 1], got %g", p->gpu_memory_utilization);
  CHECK(p->activation_reserve_bytes >= 0, "activation reserve must be >= 0");
  CHECK(p->block_size >= 1 && p->block_size <= 4096, "block_size must be in 1..4096, got %d",
        p->block_size);
  CHECK(p->num_gpu_blocks_override >= 0, "num_gpu_blocks must be >= 0");
  CHECK(p->max_num_batched_tokens >= 1, "max_num_batched_tokens must be >= 1, got %d",
        p->max_num_batched_tokens);
  CHECK(p->max_num_seqs >= 1, "max_num_seqs must be >= 1, got %d", p->max_num_seqs);
  CHECK(p->max_model_len >= 0, "max_model_len must be >= 0, got %d", p->max_model_len);
  CHECK(p->long_prefill_token_threshold >= 0, "long_prefill_token_threshold must be >= 0");
  CHECK(p->warmup_steps >= 0, "warmup_steps must be >= 0, got %d", p->warmup_steps);
  CHECK(p->warmup_factor > 0, "warmup_factor must be > 0, got %g", p->warmup_factor);
  CHECK(p->jitter_cv >= 0 && p->jitter_cv <= 10, "jitter_cv must be in [0, 10], got %g",
        p->jitter_cv);
  CHECK(p->eos_mean_tokens >= 0, "eos_mean_tokens must be >= 0, got %g", p->eos_mean_tokens);
#undef CHECK
  return CB_OK;
}

/* ---- YAML profile ------------------------------------------------------------------- */

#define PF(k, t, member, lo, hi, open) \
  {k, t, offsetof(cb_sim_params, member), lo, hi, open, 0}
const cb__sim_key cb__sim_param_keys[] = {
    PF("tp", CB__SIM_KEY_INT, tp, 1, 1024, 0),
    PF("weight_dtype", CB__SIM_KEY_WDTYPE, weight_dtype, 0, 0, 0),
    PF("kv_dtype", CB__SIM_KEY_KVDTYPE, kv_dtype, 0, 0, 0),
    PF("mfu", CB__SIM_KEY_DBL, mfu, EFFICIENCY_MIN, 1, 0),
    PF("mbu", CB__SIM_KEY_DBL, mbu, EFFICIENCY_MIN, 1, 0),
    PF("step_overhead_us", CB__SIM_KEY_US_NS, step_overhead_ns, 0, 1e7, 0),
    PF("allreduce_latency_us", CB__SIM_KEY_US_NS, allreduce_latency_ns, 0, 1e6, 0),
    PF("gpu_memory_utilization", CB__SIM_KEY_DBL, gpu_memory_utilization, 0, 1, 1),
    PF("activation_reserve_gib", CB__SIM_KEY_GIB_BYTES, activation_reserve_bytes, 0, 1e5, 0),
    PF("block_size", CB__SIM_KEY_INT, block_size, 1, 4096, 0),
    PF("num_gpu_blocks", CB__SIM_KEY_I64, num_gpu_blocks_override, 0, 2147483646.0, 0),
    PF("max_num_batched_tokens", CB__SIM_KEY_INT, max_num_batched_tokens, 1, 1073741824.0, 0),
    PF("max_num_seqs", CB__SIM_KEY_INT, max_num_seqs, 1, 16777216.0, 0),
    PF("max_model_len", CB__SIM_KEY_INT, max_model_len, 0, 1073741824.0, 0),
    PF("enable_prefix_caching", CB__SIM_KEY_BOOL, enable_prefix_caching, 0, 1, 0),
    PF("long_prefill_token_threshold", CB__SIM_KEY_INT, long_prefill_token_threshold, 0, 1073741824.0, 0),
    PF("warmup_steps", CB__SIM_KEY_INT, warmup_steps, 0, 1073741824.0, 0),
    PF("warmup_factor", CB__SIM_KEY_DBL, warmup_factor, 0, 1000, 1),
    PF("jitter_cv", CB__SIM_KEY_DBL, jitter_cv, 0, 10, 0),
    PF("seed", CB__SIM_KEY_U64, seed, 0, 0, 0),
    PF("eos_mean_tokens", CB__SIM_KEY_DBL, eos_mean_tokens, 0, 1e9, 0),
};
#undef PF

#define MF(k, t, member, lo, hi) {k, t, offsetof(cb_sim_model, member), lo, hi, 0, 0}
const cb__sim_key cb__sim_model_keys[] = {
    {"name", CB__SIM_KEY_STR, offsetof(cb_sim_model, name), 0, 0, 0, sizeof(((cb_sim_model *)0)->name)},
    MF("num_layers", CB__SIM_KEY_INT, num_layers, 1, 10000),
    MF("hidden_size", CB__SIM_KEY_INT, hidden_size, 1, 1048576),
    MF("num_heads", CB__SIM_KEY_INT, num_heads, 1, 65536),
    MF("num_kv_heads", CB__SIM_KEY_INT, num_kv_heads, 1, 65536),
    MF("head_dim", CB__SIM_KEY_INT, head_dim, 1, 65536),
    MF("intermediate_size", CB__SIM_KEY_INT, intermediate_size, 1, 16777216),
    MF("vocab_size", CB__SIM_KEY_INT, vocab_size, 1, 100000000),
    MF("num_experts", CB__SIM_KEY_INT, num_experts, 0, 65536),
    MF("num_experts_active", CB__SIM_KEY_INT, num_experts_active, 0, 65536),
    MF("tied_embeddings", CB__SIM_KEY_BOOL, tied_embeddings, 0, 1),
    MF("num_params", CB__SIM_KEY_DBL, num_params, 0, 1e15),
    MF("max_context", CB__SIM_KEY_INT, max_context, 1, CB_LIMIT_TOKENS),
};
#undef MF

#define GF(k, t, member, lo, hi, open) {k, t, offsetof(cb_sim_gpu, member), lo, hi, open, 0}
const cb__sim_key cb__sim_gpu_keys[] = {
    {"name", CB__SIM_KEY_STR, offsetof(cb_sim_gpu, name), 0, 0, 0, sizeof(((cb_sim_gpu *)0)->name)},
    GF("flops_bf16", CB__SIM_KEY_DBL, flops_bf16, 0, 1e18, 1),
    GF("flops_fp8", CB__SIM_KEY_DBL, flops_fp8, 0, 1e18, 0),
    GF("mem_bytes", CB__SIM_KEY_DBL, mem_bytes, 0, 1e15, 1),
    GF("mem_bw", CB__SIM_KEY_DBL, mem_bw, 0, 1e15, 1),
    GF("link_bw", CB__SIM_KEY_DBL, link_bw, 0, 1e15, 0),
    GF("fp8_attention", CB__SIM_KEY_BOOL, fp8_attention, 0, 1, 0),
};
#undef GF

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
const size_t cb__sim_param_keys_len = NFIELDS(cb__sim_param_keys);
const size_t cb__sim_model_keys_len = NFIELDS(cb__sim_model_keys);
const size_t cb__sim_gpu_keys_len = NFIELDS(cb__sim_gpu_keys);

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static const cb__sim_key *find_field(const cb__sim_key *fs, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(fs[i].key, key) == 0) return &fs[i];
  return NULL;
}

static void known_keys(char *buf, size_t n, const cb__sim_key *fs, size_t nf, const char *extra) {
  size_t off = 0;
  buf[0] = '\0';
  if (extra) {
    int w = snprintf(buf, n, "%s", extra);
    if (w > 0 && (size_t)w < n) off = (size_t)w;
  }
  for (size_t i = 0; i < nf; i++) {
    int w = snprintf(buf + off, n - off, "%s%s", off ? ", " : "", fs[i].key);
    if (w < 0 || (size_t)w >= n - off) break;
    off += (size_t)w;
  }
}

static int parse_dtype(const char *s, cb_sim_dtype *out) {
  for (int d = CB_SIM_DTYPE_BF16; d <= CB_SIM_DTYPE_INT4; d++) {
    if (strcasecmp(s, cb_sim_dtype_name((cb_sim_dtype)d)) == 0) {
      *out = (cb_sim_dtype)d;
      return 1;
    }
  }
  return 0;
}

/* Store one scalar into base + f->off after type and range checks. `prefix` ("model.",
 * "gpu." or "") completes the key name in messages. */
static cb_status set_field(const cb__yaml_ctx *y, const char *prefix, const cb__sim_key *f,
                           const yaml_node_t *v, void *base) {
  char *dst = (char *)base + f->off;
  char key[96];
  snprintf(key, sizeof key, "%s%s", prefix, f->key);
  const char *s = NULL;
  cb_status st = cb__yaml_scalar(y->path, v, key, &s, y->err);
  if (st != CB_OK) return st;
  switch (f->type) {
  case CB__SIM_KEY_STR:
    if (strlen(s) == 0 || strlen(s) >= f->size)
      return cb__yaml_fail(y->err, CB_ERR_RANGE, y->path, v, key,
                           "must be 1..%zu characters, got '%s'", f->size - 1, s);
    memcpy(dst, s, strlen(s) + 1);
    return CB_OK;
  case CB__SIM_KEY_BOOL:
    return cb__yaml_bool(y->path, v, key, (int *)dst, y->err);
  case CB__SIM_KEY_WDTYPE:
  case CB__SIM_KEY_KVDTYPE: {
    cb_sim_dtype d;
    if (!parse_dtype(s, &d) || (f->type == CB__SIM_KEY_KVDTYPE && d == CB_SIM_DTYPE_INT4))
      return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, v, key, "expected %s, got '%s'",
                           f->type == CB__SIM_KEY_KVDTYPE ? "bf16 or fp8" : "bf16, fp8 or int4", s);
    *(cb_sim_dtype *)dst = d;
    return CB_OK;
  }
  case CB__SIM_KEY_US_NS: {
    /* the one duration syntax; a bare number is us, as the key's name says */
    uint64_t ns;
    st = cb__yaml_duration(y->path, v, key, CB_NS_PER_US, &ns, y->err);
    if (st != CB_OK) return st;
    double us = (double)ns / 1e3;
    if (us < f->min || (f->min_open && us == f->min) || us > f->max)
      return cb__yaml_fail(y->err, CB_ERR_RANGE, y->path, v, key,
                           "must be in %s%gus, %gus], got %s", f->min_open ? "(" : "[", f->min, f->max, s);
    *(uint64_t *)dst = ns;
    return CB_OK;
  }
  case CB__SIM_KEY_U64: {
    char *end;
    errno = 0;
    if (s[0] == '-' || s[0] == '\0') goto not_int;
    unsigned long long u = strtoull(s, &end, 0);
    if (*end != '\0' || errno == ERANGE) goto not_int;
    *(uint64_t *)dst = (uint64_t)u;
    return CB_OK;
  }
  default:
    break;
  }
  /* Numbers. */
  double x;
  st = cb__yaml_number(y->path, v, key, f->min, f->min_open, f->max, &x, y->err);
  if (st != CB_OK) return st;
  if ((f->type == CB__SIM_KEY_INT || f->type == CB__SIM_KEY_I64) && x != floor(x)) goto not_int;
  switch (f->type) {
  case CB__SIM_KEY_INT: *(int *)dst = (int)x; break;
  case CB__SIM_KEY_I64: *(int64_t *)dst = (int64_t)x; break;
  case CB__SIM_KEY_DBL: *(double *)dst = x; break;
  case CB__SIM_KEY_GIB_BYTES: *(double *)dst = x * GIB; break;
  default: break;
  }
  return CB_OK;
not_int:
  return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, v, key, "expected a whole number, got '%s'",
                       s);
}

/* model: / gpu: as a preset name or a mapping. */
typedef struct hw_kind {
  const char *what;             /* "model" or "gpu" */
  const cb__sim_key *fields;
  size_t nfields;
  size_t size;                  /* sizeof the target struct */
  cb_status (*preset)(const char *, void *, cb_error *);
} hw_kind;

static cb_status model_preset(const char *n, void *o, cb_error *e) {
  return cb_sim_preset_model(n, (cb_sim_model *)o, e);
}
static cb_status gpu_preset(const char *n, void *o, cb_error *e) {
  return cb_sim_preset_gpu(n, (cb_sim_gpu *)o, e);
}

static cb_status load_preset(const cb__yaml_ctx *y, const hw_kind *k, const yaml_node_t *v, void *out) {
  cb_error perr;
  cb_error_clear(&perr);
  if (k->preset(scalar(v), out, &perr) != CB_OK)
    return cb_error_at(y->err, CB_ERR_NOT_FOUND, y->path, cb__yaml_line(v), 0, "key '%s': %s",
                       k->what, perr.msg);
  return CB_OK;
}

static cb_status load_hw(const cb__yaml_ctx *y, const hw_kind *k, const yaml_node_t *v, void *out) {
  if (v->type == YAML_SCALAR_NODE) return load_preset(y, k, v, out);
  if (v->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, k->what, "expected a preset name or a mapping");

  /* `preset:` first, wherever it is written. */
  int from_preset = 0;
  yaml_node_pair_t *pr;
  for (pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
    yaml_node_t *key = yaml_document_get_node(y->doc, pr->key);
    yaml_node_t *val = yaml_document_get_node(y->doc, pr->value);
    if (key->type == YAML_SCALAR_NODE && strcmp(scalar(key), "preset") == 0) {
      if (val->type != YAML_SCALAR_NODE)
        return cb__yaml_at(y, val, CB_ERR_PARSE, "key '%s.preset': expected a preset name", k->what);
      cb_status st = load_preset(y, k, val, out);
      if (st != CB_OK) return st;
      from_preset = 1;
    }
  }
  if (!from_preset) {
    memset(out, 0, k->size);
    memcpy(out, "custom", 7); /* name is the first member of both structs */
  }

  int arch_changed = 0, params_given = 0;
  unsigned long long seen = 0; /* bit per cb__sim_key */
  for (pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
    yaml_node_t *key = yaml_document_get_node(y->doc, pr->key);
    yaml_node_t *val = yaml_document_get_node(y->doc, pr->value);
    if (key->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(y, key, CB_ERR_PARSE, k->what, "keys must be plain names");
    const char *name = scalar(key);
    if (strcmp(name, "preset") == 0) continue;
    const cb__sim_key *f = find_field(k->fields, k->nfields, name);
    if (!f) {
      char known[512], full[96];
      known_keys(known, sizeof known, k->fields, k->nfields, "preset");
      snprintf(full, sizeof full, "%s.%s", k->what, name);
      return cb_error_at(y->err, CB_ERR_PARSE, y->path, cb__yaml_line(key), 0,
                         "unknown key '%s' (known: %s)", full, known);
    }
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%s.", k->what);
    cb_status st = set_field(y, prefix, f, val, out);
    if (st != CB_OK) return st;
    seen |= 1ull << (f - k->fields);
    if (k->fields == cb__sim_model_keys) {
      if (strcmp(name, "num_params") == 0)
        params_given = 1;
      else if (strcmp(name, "name") != 0 && strcmp(name, "max_context") != 0)
        arch_changed = 1;
    }
  }

  if (k->fields == cb__sim_model_keys) {
    cb_sim_model *m = out;
    /* A changed architecture makes a preset's parameter count stale: derive it. */
    if (arch_changed && !params_given) m->num_params = 0;
    if (!from_preset && m->head_dim == 0 && m->num_heads > 0)
      m->head_dim = m->hidden_size / m->num_heads;
    if (!from_preset) {
      static const char *const req[] = {"num_layers", "hidden_size", "num_heads",
                                        "num_kv_heads", "intermediate_size", "vocab_size",
                                        "max_context"};
      for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        const cb__sim_key *f = find_field(cb__sim_model_keys, NFIELDS(cb__sim_model_keys), req[i]);
        if (!(seen & (1ull << (f - cb__sim_model_keys))))
          return cb__yaml_at(y, v, CB_ERR_PARSE,
                    "key 'model': '%s' is required when the model has no 'preset'", req[i]);
      }
    }
  } else if (!from_preset) {
    static const char *const req[] = {"flops_bf16", "mem_bytes", "mem_bw"};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
      const cb__sim_key *f = find_field(cb__sim_gpu_keys, NFIELDS(cb__sim_gpu_keys), req[i]);
      if (!(seen & (1ull << (f - cb__sim_gpu_keys))))
        return cb__yaml_at(y, v, CB_ERR_PARSE,
                  "key 'gpu': '%s' is required when the GPU has no 'preset'", req[i]);
    }
  }
  return CB_OK;
}

static cb_status load_root(const cb__yaml_ctx *y, const yaml_node_t *root, cb_sim_params *p) {
  static const hw_kind model_kind = {"model", cb__sim_model_keys, NFIELDS(cb__sim_model_keys),
                                     sizeof(cb_sim_model), model_preset};
  static const hw_kind gpu_kind = {"gpu", cb__sim_gpu_keys, NFIELDS(cb__sim_gpu_keys), sizeof(cb_sim_gpu),
                                   gpu_preset};
  if (root->type == YAML_SCALAR_NODE && scalar(root)[0] == '\0') return CB_OK; /* empty */
  if (root->type != YAML_MAPPING_NODE)
    return cb_error_at(y->err, CB_ERR_PARSE, y->path, cb__yaml_line(root), 0,
                       "a profile must be a mapping of keys");
  /* Pass 0: model and gpu; pass 1: efficiencies and everything else. */
  for (int pass = 0; pass < 2; pass++) {
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
      yaml_node_t *key = yaml_document_get_node(y->doc, pr->key);
      yaml_node_t *val = yaml_document_get_node(y->doc, pr->value);
      if (key->type != YAML_SCALAR_NODE)
        return cb_error_at(y->err, CB_ERR_PARSE, y->path, cb__yaml_line(key), 0,
                           "keys must be plain names");
      const char *name = scalar(key);
      int hw = strcmp(name, "model") == 0 || strcmp(name, "gpu") == 0;
      if (pass == 0 && hw) {
        cb_status st = strcmp(name, "model") == 0 ? load_hw(y, &model_kind, val, &p->model)
                                                  : load_hw(y, &gpu_kind, val, &p->gpu);
        if (st != CB_OK) return st;
        if (strcmp(name, "gpu") == 0) cb_sim_params_apply_gpu_defaults(p);
      } else if (pass == 1 && !hw) {
        const cb__sim_key *f = find_field(cb__sim_param_keys, NFIELDS(cb__sim_param_keys), name);
        if (!f) {
          char known[768];
          known_keys(known, sizeof known, cb__sim_param_keys, NFIELDS(cb__sim_param_keys), "model, gpu");
          return cb_error_at(y->err, CB_ERR_PARSE, y->path, cb__yaml_line(key), 0,
                             "unknown key '%s' (known: %s)", name, known);
        }
        cb_status st = set_field(y, "", f, val, p);
        if (st != CB_OK) return st;
      }
    }
  }
  return CB_OK;
}

cb_status cb_sim_params_load_yaml(cb_sim_params *p, const char *path, cb_error *err) {
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (root) {
    cb__yaml_ctx y = {path, &doc, err};
    st = load_root(&y, root, p);
  }
  yaml_document_delete(&doc);
  return st;
}
