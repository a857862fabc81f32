/*
 * cmd_probe_quant.c - `calibench probe quant`: quantization drift between a reference
 * and a candidate endpoint (calibench/probe_quant.h, docs/probe.md "probe quant").
 * Run's options for load and output (run_config.c) plus the probe's own; two live
 * runs, the reference's in DIR/reference/ and the candidate's in DIR, then
 * DIR/probe.json and DIR/positions.jsonl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/probe_quant.h"
#include "calibench/report.h"
#include "cli.h"
#include "run_config.h"
#include "run_output.h"

enum { O_REFERENCE = RUN_CONFIG_EXTRA_OPT, O_CANDIDATE, O_REF_MODEL, O_CAND_MODEL, O_MAX_TOKENS,
       O_TOP_K, O_NUM_PROMPTS, O_REFEED, O_SCORE_PATH };

typedef struct quant_ctx {
  const char *reference, *candidate, *reference_model, *candidate_model;
  cb_probe_quant_params p;
  char spec[1100]; /* the dataset as the workload names it */
} quant_ctx;

static const struct option OPTIONS[] = {
    {"reference", required_argument, NULL, O_REFERENCE},
    {"candidate", required_argument, NULL, O_CANDIDATE},
    {"reference-model", required_argument, NULL, O_REF_MODEL},
    {"candidate-model", required_argument, NULL, O_CAND_MODEL},
    {"max-tokens", required_argument, NULL, O_MAX_TOKENS},
    {"top-k", required_argument, NULL, O_TOP_K},
    {"num-prompts", required_argument, NULL, O_NUM_PROMPTS},
    {"refeed", required_argument, NULL, O_REFEED},
    {"score-path", required_argument, NULL, O_SCORE_PATH},
    {NULL, 0, NULL, 0},
};

static void usage(void *vctx, FILE *out) {
  (void)vctx;
  fprintf(out,
          "usage: calibench probe quant --reference URL --candidate URL --dataset FILE --out DIR\n"
          "                             [options] [run options]\n"
          "\n"
          "Quantization drift between two endpoints serving the same model (say bf16 and\n"
          "int4): the reference continues each prompt greedily with its top-k\n"
          "log-probabilities, the candidate scores the same continuation: in one request\n"
          "per prompt where it returns a prompt's log-probabilities (vLLM's prompt_logprobs,\n"
          "or echo with logprobs), else one position at a time (the prompt plus the first j\n"
          "tokens, max_tokens 1). Per position: KLD over the top-k lists with the tail as\n"
          "one bucket (a lower bound of the full KLD), top-1 agreement, delta log p of the\n"
          "reference's token; per prompt: delta perplexity and where the greedy outputs\n"
          "first diverge; overall, as llama-perplexity --kl-divergence prints them. Both are\n"
          "sent completions (/v1/completions). The reference's run goes to DIR/reference,\n"
          "the candidate's to DIR, then DIR/probe.json and DIR/positions.jsonl\n"
          "(docs/probe.md).\n"
          "\n"
          "quant:\n"
          "  --reference URL            the reference endpoint (base URL ending in /v1), or\n"
          "                             sim:PRESET[,weights=bf16|fp8|int4]: the built-in\n"
          "                             simulator (--sim-* options, --sim-behavior) serving it\n"
          "  --candidate URL            the candidate endpoint, or sim:PRESET[,weights=...]\n"
          "  --dataset FILE             prompts: jsonl (\"prompt\") or any text dataset run reads\n"
          "  --reference-model M        the reference's model [--model, else the first listed]\n"
          "  --candidate-model M        the candidate's model [--model, else the first listed]\n"
          "  --max-tokens N             continuation length, positions per prompt [32]\n"
          "  --top-k K                  log-probabilities asked of both, 1..20 [20]\n"
          "  --num-prompts N            the first N prompts of the dataset [all]\n"
          "  --refeed auto|ids|text     how the candidate gets the continuation: ids after\n"
          "                             the prompt's text in one prompt array (llama-server),\n"
          "                             or text appended; auto: ids when the reference gave\n"
          "                             token ids [auto]\n"
          "  --score-path auto|prompt-logprobs|echo|per-position\n"
          "                             how the candidate scores it: vLLM's prompt_logprobs or\n"
          "                             completions echo + logprobs (one request per prompt),\n"
          "                             or one request per position; auto: the first of those\n"
          "                             the candidate answers (one small request each), else\n"
          "                             per position (llama-server); a forced path the\n"
          "                             candidate does not answer is an error [auto]\n"
          "\n"
          "Cost: one request per prompt to the reference; to the candidate one per prompt\n"
          "(prompt_logprobs, echo) or one per position (prompts x max-tokens), each a prompt\n"
          "of the prompt plus j tokens (prefix caching makes them cheap). --concurrency\n"
          "(run's) applies to both.\n\n");
}

static int option(void *vctx, int val, const char *arg) {
  quant_ctx *ctx = vctx;
  long long v;
  switch (val) {
    case O_REFERENCE: ctx->reference = arg; return 0;
    case O_CANDIDATE: ctx->candidate = arg; return 0;
    case O_REF_MODEL: ctx->reference_model = arg; return 0;
    case O_CAND_MODEL: ctx->candidate_model = arg; return 0;
    case O_MAX_TOKENS:
      if (cli_parse_int("--max-tokens", arg, 1, 4096, &v)) return 2;
      ctx->p.max_tokens = (int)v;
      return 0;
    case O_TOP_K:
      if (cli_parse_int("--top-k", arg, 1, 20, &v)) return 2;
      ctx->p.top_k = (int)v;
      return 0;
    case O_NUM_PROMPTS:
      if (cli_parse_int("--num-prompts", arg, 1, 1000000, &v)) return 2;
      ctx->p.num_prompts = (size_t)v;
      return 0;
    case O_REFEED:
      if (!strcmp(arg, "auto")) ctx->p.refeed = CB_QUANT_REFEED_AUTO;
      else if (!strcmp(arg, "ids")) ctx->p.refeed = CB_QUANT_REFEED_IDS;
      else if (!strcmp(arg, "text")) ctx->p.refeed = CB_QUANT_REFEED_TEXT;
      else {
        fprintf(stderr, "calibench: probe quant: --refeed: expected auto, ids or text, got '%s'\n", arg);
        return 2;
      }
      return 0;
    case O_SCORE_PATH: {
      int path = cb_quant_path_parse(arg);
      if (path < 0) {
        fprintf(stderr, "calibench: probe quant: --score-path: expected auto, prompt-logprobs, "
                        "echo or per-position, got '%s'\n", arg);
        return 2;
      }
      ctx->p.path = (cb_quant_path)path;
      return 0;
    }
    default: return 2;
  }
}

static void print_result(const json_t *doc, const char *dir) {
  const json_t *k = json_object_get(doc, "kld"), *ppl = json_object_get(doc, "ppl");
#define V(o, f) json_number_value(json_object_get((o), (f)))
#define E(o, f) V(json_object_get((o), (f)), "value"), V(json_object_get((o), (f)), "se")
  printf("\nquant: %lld positions (%lld with the token's log p in the candidate's list), refeed %s, "
         "scored by %s\n", (long long)json_integer_value(json_object_get(doc, "positions")),
         (long long)json_integer_value(json_object_get(doc, "positions_with_token")),
         json_string_value(json_object_get(json_object_get(doc, "settings"), "refeed")),
         json_string_value(json_object_get(doc, "score_path")));
  printf("  Mean PPL(Q)/PPL(base): %10.6f +/- %10.6f\n", E(ppl, "ratio"));
  printf("  Mean PPL(Q)-PPL(base): %10.6f +/- %10.6f\n", E(ppl, "diff"));
  printf("  Mean    KLD: %10.6f +/- %10.6f\n", V(k, "mean"), V(k, "se"));
  printf("  Maximum KLD: %10.6f\n  99.9%%   KLD: %10.6f\n  99.0%%   KLD: %10.6f\n  Median  KLD: %10.6f\n",
         V(k, "max"), V(k, "p999"), V(k, "p99"), V(k, "median"));
  printf("  RMS Dp    : %6.3f +/- %5.3f %%\n", 100 * V(json_object_get(doc, "rms_dp"), "value"),
         100 * V(json_object_get(doc, "rms_dp"), "se"));
  printf("  Same top p: %6.3f +/- %5.3f %%\n", 100 * V(json_object_get(doc, "same_top_p"), "value"),
         100 * V(json_object_get(doc, "same_top_p"), "se"));
  printf("  %s/probe.json\n", dir);
#undef E
#undef V
}

/* An endpoint: a URL, or the built-in simulator (run's, with the --sim-* options)
 * serving `sim:PRESET[,weights=DTYPE]`. */
typedef struct quant_target {
  const char *url;       /* NULL: the built-in simulator */
  cb_sim_params engine;  /* its deployment */
} quant_target;

static int parse_target(const char *what, const char *spec, const cb_sim_params *base,
                        quant_target *t) {
  t->url = spec;
  if (strncmp(spec, "sim:", 4)) return 0;
  t->url = NULL;
  t->engine = *base;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec + 4);
  char *weights = strchr(buf, ',');
  if (weights) *weights++ = '\0';
  cb_error err;
  if (buf[0] && cb_sim_preset_model(buf, &t->engine.model, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: --%s %s: %s\n", what, spec, err.msg);
    return 2;
  }
  if (weights) {
    const char *w = !strncmp(weights, "weights=", 8) ? weights + 8 : "";
    if (!strcmp(w, "bf16")) t->engine.weight_dtype = CB_SIM_DTYPE_BF16;
    else if (!strcmp(w, "fp8")) t->engine.weight_dtype = CB_SIM_DTYPE_FP8;
    else if (!strcmp(w, "int4")) t->engine.weight_dtype = CB_SIM_DTYPE_INT4;
    else {
      fprintf(stderr, "calibench: probe quant: --%s %s: expected sim:PRESET[,weights=bf16|fp8|int4] "
                      "after the preset, got '%s'\n", what, spec, weights);
      return 2;
    }
  }
  if (cb_sim_params_validate(&t->engine, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: --%s %s: %s\n", what, spec, err.msg);
    return 2;
  }
  return 0;
}

/* One phase: a session against the target, its result in dir. */
static int run_phase(cb_session_config *cfg, cb_probe_quant *pq, int phase, const quant_target *t,
                     const char *model, const char *dir) {
  cb_free((char *)cfg->url);
  cfg->url = t->url ? cb_strdup(t->url) : NULL;
  if (!t->url) cfg->sim.engine = t->engine;
  cfg->model = model;
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s", dir);
  const char *what = phase ? "candidate" : "reference";
  cb_error err;
  cb_quant_path path;
  if (phase && cb_probe_quant_choose_path(pq, cfg, &path, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: candidate: %s\n", err.msg);
    return 2;
  }
  if (phase && !cfg->quiet)
    fprintf(stderr, "calibench probe quant: the candidate scores by %s\n", cb_quant_path_name(path));
  if (cb_probe_quant_attach(pq, phase, cfg, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: %s\n", err.msg);
    return 2;
  }
  cb_session *s = NULL;
  cb_session_outcome o = cb_session_open(cfg, &s, &err);
  if (o != CB_SESSION_OK) {
    fprintf(stderr, "calibench: probe quant: %s: %s\n", what, err.msg);
    cb_session_close(s);
    return (int)o;
  }
  if (!cfg->quiet) fprintf(stderr, "calibench probe quant: %s: %s\n", what, cb_session_target(s));
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  cb_session_result r;
  o = cb_session_run(s, &r, &err);
  cli_stop_release(&stop_handlers);
  if (o != CB_SESSION_OK) fprintf(stderr, "calibench: probe quant: %s: %s\n", what, err.msg);
  if ((o == CB_SESSION_OK || r.all.requests) && !cfg->quiet)
    run_print_summary(stdout, &r, cb_session_target(s), cb_session_model(s), cfg->out_dir);
  cb_session_result_free(&r);
  cb_session_close(s);
  return o == CB_SESSION_OK && cli_stop_signals ? 130 : (int)o;
}

int cli_probe_quant_main(int argc, char **argv) {
  quant_ctx ctx = {0};
  cb_probe_quant_params_init(&ctx.p);
  run_config_extra extra = {.command = "probe quant", .options = OPTIONS, .option = option,
                            .usage = usage, .ctx = &ctx};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  cb_probe_quant *pq = NULL;
  char dir[1024], refdir[1100];
  int rc = run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (cfg.url) {
    fprintf(stderr, "calibench: probe quant: --url does not apply: give --reference URL and --candidate URL\n");
    goto out;
  }
  if (!ctx.reference || !ctx.candidate) {
    fprintf(stderr, "calibench: probe quant: --reference URL and --candidate URL are both required\n");
    goto out;
  }
  quant_target ref, cand;
  if (parse_target("reference", ctx.reference, &cfg.sim.engine, &ref) ||
      parse_target("candidate", ctx.candidate, &cfg.sim.engine, &cand))
    goto out;
  if (solo || cfg.sweep || cfg.virtual_time || cfg.scenario_path || extra.load_count_given ||
      cfg.workload.arrival.kind != CB_ARRIVAL_CLOSED) {
    fprintf(stderr, "calibench: probe quant: the probe's requests run as one closed-loop point per "
                    "endpoint (--concurrency): --solo-baseline, --sweep, --scenario, --rate, "
                    "--num-requests and --duration do not apply\n");
    goto out;
  }
  if (!cfg.cls.dataset || !strcmp(cfg.cls.dataset, "synthetic")) {
    fprintf(stderr, "calibench: probe quant: --dataset FILE is required (JSONL: prompt)\n");
    goto out;
  }
  /* a bare path is a jsonl file, as for probe perturb */
  snprintf(ctx.spec, sizeof ctx.spec, "%s%s", strchr(cfg.cls.dataset, ':') ? "" : "jsonl:", cfg.cls.dataset);
  cfg.cls.dataset = ctx.p.dataset = ctx.spec;
  ctx.p.seed = cfg.workload.seed;
  ctx.p.confidence = cfg.confidence;
  if (cb_probe_quant_prepare(&ctx.p, &pq, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: %s\n", err.msg);
    goto out;
  }
  if (!cfg.quiet)
    fprintf(stderr, "calibench probe quant: %zu prompts, %d positions each, top-%d, %u at a time\n",
            cb_probe_quant_prompts(pq), ctx.p.max_tokens, ctx.p.top_k, cfg.workload.concurrency);
  cfg.stop = &cli_stop_signals;
  snprintf(dir, sizeof dir, "%s", cfg.out_dir);
  snprintf(refdir, sizeof refdir, "%s/reference", dir);
  const char *model = cfg.model;
  rc = run_phase(&cfg, pq, 0, &ref, ctx.reference_model ? ctx.reference_model : model, refdir);
  if (!rc)
    rc = run_phase(&cfg, pq, 1, &cand, ctx.candidate_model ? ctx.candidate_model : model, dir);
  if (rc) goto out;
  json_t *doc = NULL;
  if (cb_probe_quant_finish(pq, dir, &doc, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe quant: %s\n", err.msg);
    rc = err.code == CB_ERR_IO ? 1 : 2;
    goto out;
  }
  if (!cfg.quiet) print_result(doc, dir);
  json_decref(doc);
  /* the session wrote report.html before the positions were scored: again, with them */
  if (!cfg.no_report && cb_report_write_html_file(dir, NULL, NULL, &err) != CB_OK)
    fprintf(stderr, "calibench: probe quant: report.html not rewritten: %s\n", err.msg);
out:
  cb_probe_quant_free(pq);
  cb_session_config_free(&cfg);
  return rc;
}
