/*
 * sim_options.c - the simulator's deployment options (sim_options.h).
 */
#include "sim_options.h"

#include <string.h>

#include "args.h"
#include "calibench/sim_behavior.h"

enum {
  TP, DTYPE, WEIGHTS, MAX_NUM_SEQS, MAX_BATCHED, MAX_MODEL_LEN, GPU_MEM, NO_PREFIX,
  WARMUP_STEPS, WARMUP_FACTOR, JITTER, EOS_MEAN, BEHAVIOR, COUNT_
};

#define OPT(id, name, arg, help, kind, lo, hi) [id] = {name, "sim-" name, arg, help, kind, lo, hi}

const sim_option sim_options[] = {
    OPT(TP, "tp", "N", "tensor-parallel degree [1]", SIM_OPT_INT, 1, 64),
    OPT(DTYPE, "dtype", "bf16|fp8", "weights and KV cache data type [bf16]", SIM_OPT_DTYPE, 0, 0),
    OPT(WEIGHTS, "weights", "int4", "int4 weights (W4A16), the KV cache unchanged; noise on an lm behaviour's logits",
        SIM_OPT_WEIGHTS, 0, 0),
    OPT(MAX_NUM_SEQS, "max-num-seqs", "N", "running requests per engine [256]", SIM_OPT_INT, 1,
        1 << 20),
    OPT(MAX_BATCHED, "max-num-batched-tokens", "N", "token budget per step [8192]", SIM_OPT_INT,
        1, 1 << 24),
    OPT(MAX_MODEL_LEN, "max-model-len", "N", "context window [min(model, KV cache)]",
        SIM_OPT_INT, 2, 1 << 24),
    OPT(GPU_MEM, "gpu-memory-utilization", "F", "fraction of GPU memory to use [0.9]",
        SIM_OPT_DOUBLE, 0.01, 1),
    OPT(NO_PREFIX, "no-prefix-caching", NULL, "disable prefix caching", SIM_OPT_SWITCH, 0, 0),
    OPT(WARMUP_STEPS, "warmup-steps", "N", "make the first N steps slower (CUDA-graph capture) [0]",
        SIM_OPT_INT, 0, 1 << 30),
    OPT(WARMUP_FACTOR, "warmup-factor", "F", "how much slower the warm-up steps are [3]", SIM_OPT_DOUBLE, 1, 1000),
    OPT(JITTER, "jitter", "CV", "seeded step-time noise with this coefficient of variation [0]",
        SIM_OPT_DOUBLE, 0, 10),
    OPT(EOS_MEAN, "eos-mean", "N", "mean output length when EOS is sampled [256]",
        SIM_OPT_DOUBLE, 1, 1e7),
    OPT(BEHAVIOR, "behavior", "FILE",
        "planted behaviour (YAML): what the answers get right or wrong (docs/probe.md)",
        SIM_OPT_FILE, 0, 0),
};
const size_t sim_options_count = COUNT_;

_Static_assert(sizeof sim_options / sizeof sim_options[0] == COUNT_, "one entry per option");
_Static_assert(COUNT_ <= SIM_OPTIONS_MAX, "SIM_OPTIONS_MAX holds the table");

void sim_options_getopt(struct option *out, int prefixed, int first_val) {
  for (size_t i = 0; i < COUNT_; i++) {
    const sim_option *o = &sim_options[i];
    out[i] = (struct option){prefixed ? o->sim_name : o->name,
                             o->arg ? required_argument : no_argument, NULL, first_val + (int)i};
  }
}

int sim_options_parse(sim_option_values *v, size_t i, int prefixed, const char *arg) {
  const sim_option *o = &sim_options[i];
  char opt[64];
  snprintf(opt, sizeof opt, "--%s", prefixed ? o->sim_name : o->name);
  long long n;
  switch (o->kind) {
    case SIM_OPT_INT:
      if (cli_parse_int(opt, arg, (long long)o->lo, (long long)o->hi, &n)) return -1;
      v->num[i] = (double)n;
      break;
    case SIM_OPT_DOUBLE:
      if (cli_parse_double(opt, arg, o->lo, o->hi, &v->num[i])) return -1;
      break;
    case SIM_OPT_DTYPE:
    case SIM_OPT_WEIGHTS: {
      int int4 = o->kind == SIM_OPT_WEIGHTS;
      if (!strcmp(arg, "bf16")) v->dtype[i] = CB_SIM_DTYPE_BF16;
      else if (!strcmp(arg, "fp8")) v->dtype[i] = CB_SIM_DTYPE_FP8;
      else if (int4 && !strcmp(arg, "int4")) v->dtype[i] = CB_SIM_DTYPE_INT4;
      else {
        fprintf(stderr, "calibench: %s: expected %s, got '%s'\n", opt,
                int4 ? "bf16, fp8 or int4" : "bf16 or fp8", arg);
        return -1;
      }
      break;
    }
    case SIM_OPT_SWITCH:
      break;
    case SIM_OPT_FILE:
      v->path[i] = arg;
      break;
  }
  v->set[i] = 1;
  return 0;
}

int sim_options_any(const sim_option_values *v) {
  for (size_t i = 0; i < COUNT_; i++)
    if (v->set[i]) return 1;
  return 0;
}

void sim_options_apply(const sim_option_values *v, cb_sim_params *p) {
  for (size_t i = 0; i < COUNT_; i++) {
    if (!v->set[i]) continue;
    double x = v->num[i];
    switch (i) {
      case TP: p->tp = (int)x; break;
      case DTYPE: p->weight_dtype = p->kv_dtype = v->dtype[i]; break;
      case WEIGHTS: p->weight_dtype = v->dtype[i]; break;
      case MAX_NUM_SEQS: p->max_num_seqs = (int)x; break;
      case MAX_BATCHED: p->max_num_batched_tokens = (int)x; break;
      case MAX_MODEL_LEN: p->max_model_len = (int)x; break;
      case GPU_MEM: p->gpu_memory_utilization = x; break;
      case NO_PREFIX: p->enable_prefix_caching = 0; break;
      case WARMUP_STEPS: p->warmup_steps = (int)x; break;
      case WARMUP_FACTOR: p->warmup_factor = x; break;
      case JITTER: p->jitter_cv = x; break;
      case EOS_MEAN: p->eos_mean_tokens = x; break;
      case BEHAVIOR: break; /* the server's, not the engine's: sim_options_behavior */
    }
  }
}

const char *sim_options_behavior(const sim_option_values *v) {
  return v->set[BEHAVIOR] ? v->path[BEHAVIOR] : NULL;
}

void sim_options_usage(FILE *out, int prefixed, int column) {
  for (size_t i = 0; i < COUNT_; i++) {
    const sim_option *o = &sim_options[i];
    char left[96];
    snprintf(left, sizeof left, "--%s%s%s", prefixed ? o->sim_name : o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
    int pad = column - 2 - (int)strlen(left);
    fprintf(out, "  %s%*s%s\n", left, pad > 1 ? pad : 2, "", o->help);
  }
}

void sim_options_list(FILE *out) {
  for (size_t i = 0; i < COUNT_; i++)
    fprintf(out, "%s\t%s\t%s\n", sim_options[i].name, sim_options[i].arg ? sim_options[i].arg : "-",
            sim_options[i].help);
}

int sim_deployment_build(const sim_deployment *d, cb_sim_params *p) {
  cb_error err;
  cb_error_clear(&err);
  cb_sim_default_params(p);
  if (d->model && cb_sim_preset_model(d->model, &p->model, &err) != CB_OK) goto fail;
  if (d->gpu) {
    if (cb_sim_preset_gpu(d->gpu, &p->gpu, &err) != CB_OK) goto fail;
    cb_sim_params_apply_gpu_defaults(p);
  }
  if (d->profile && cb_sim_params_load_yaml(p, d->profile, &err) != CB_OK) goto fail;
  sim_options_apply(&d->opts, p);
  if (cb_sim_params_validate(p, &err) != CB_OK) goto fail;
  cb_sim_capacity cap; /* the deployment must fit, as vLLM checks at start-up */
  if (cb_sim_capacity_compute(p, &cap, &err) != CB_OK) goto fail;
  const char *behavior = sim_options_behavior(&d->opts);
  if (behavior) { /* read now, so a wrong file stops the command before anything runs */
    cb_sim_behavior *b;
    if (cb_sim_behavior_load(behavior, &b, &err) != CB_OK) goto fail;
    cb_sim_behavior_free(b);
  }
  return 0;
fail:
  fprintf(stderr, "calibench: %s\n", err.msg);
  return -1;
}
