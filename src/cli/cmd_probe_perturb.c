/*
 * cmd_probe_perturb.c - `calibench probe perturb`: robustness and safety drift under
 * perturbation (calibench/probe_perturb.h, docs/probe.md "probe perturb"). Every
 * option of `run` (target, load, output) plus the probe's own; the prompts go out as
 * one measured run, then DIR/probe.json is written beside summary.json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/eval_run.h"
#include "calibench/probe_perturb.h"
#include "calibench/report.h"
#include "cli.h"
#include "metric_options.h"
#include "probe_session.h"
#include "run_config.h"

enum { O_FAMILIES = RUN_CONFIG_EXTRA_OPT, O_RATE, O_VARIANTS, O_INDUCEMENTS, O_PATTERNS,
       O_WORDNET, O_UNIHAN, O_AGREEMENT, O_SIMILARITY, O_TOP_LOGPROBS, O_ANSWER_TOKENS,
       O_BOOTSTRAP, O_WORST, O_JUDGE_URL, O_JUDGE_MODEL, O_JUDGE_KEY_ENV, O_METRIC_OPT };

typedef struct perturb_ctx {
  cb_probe_perturb_params p;
  cli_metric_options metric;
  cb_eval_option *opts; /* the metric options given */
  struct option options[RUN_CONFIG_EXTRA_MAX + 1];
} perturb_ctx;

static void build_options(perturb_ctx *ctx) {
  static const struct option own[] = {
      {"families", required_argument, NULL, O_FAMILIES},
      {"edit-rate", required_argument, NULL, O_RATE},
      {"variants", required_argument, NULL, O_VARIANTS},
      {"inducements", required_argument, NULL, O_INDUCEMENTS},
      {"refusal-patterns", required_argument, NULL, O_PATTERNS},
      {"wordnet-dir", required_argument, NULL, O_WORDNET},
      {"unihan", required_argument, NULL, O_UNIHAN},
      {"agreement", required_argument, NULL, O_AGREEMENT},
      {"similarity", required_argument, NULL, O_SIMILARITY},
      {"top-logprobs", required_argument, NULL, O_TOP_LOGPROBS},
      {"answer-tokens", required_argument, NULL, O_ANSWER_TOKENS},
      {"bootstrap", required_argument, NULL, O_BOOTSTRAP},
      {"worst", required_argument, NULL, O_WORST},
      {"refusal-judge-url", required_argument, NULL, O_JUDGE_URL},
      {"refusal-judge-model", required_argument, NULL, O_JUDGE_MODEL},
      {"refusal-judge-api-key-env", required_argument, NULL, O_JUDGE_KEY_ENV},
  };
  size_t n = 0;
  for (; n < sizeof own / sizeof own[0]; n++) ctx->options[n] = own[n];
  /* the table holds at most RUN_CONFIG_EXTRA_MAX entries, its {NULL} included */
  cli_metric_options_init(&ctx->metric, RUN_CONFIG_EXTRA_MAX - n - 1, O_METRIC_OPT);
  cli_metric_options_append(&ctx->metric, ctx->options, &n);
}

static void usage(void *vctx, FILE *out) {
  const perturb_ctx *ctx = vctx;
  fprintf(out,
          "usage: calibench probe perturb --dataset FILE [--families LIST] [options] [run options]\n"
          "\n"
          "Send every prompt of FILE clean and perturbed by each family, as one measured\n"
          "run, and compare each perturbed answer with its clean answer: agreement,\n"
          "similarity, first-token drift from top_logprobs (1 - cos + KL), refusals and\n"
          "conflicts (complies where the clean prompt was refused). Per family: means with\n"
          "bootstrap intervals, rates with Wilson intervals, the worst pairs, in\n"
          "DIR/probe.json; every prompt sent is in DIR/prompts.jsonl (docs/probe.md).\n"
          "FILE is JSONL, one item a line: prompt (a string), optional id.\n"
          "\n"
          "perturbation:\n"
          "  --dataset FILE             the prompts (or jsonl:FILE)\n"
          "  --families LIST            typo, homophone, synonym, noise, paraphrase,\n"
          "                             inducement, comma-separated, or all [all]\n"
          "  --edit-rate R              edits per character (typo, noise) or per word\n"
          "                             (homophone, synonym), at least one [0.1]\n"
          "  --variants N               perturbed prompts per prompt and family [1]\n"
          "  --seed N                   (run's) also seeds the perturbations\n"
          "  --inducements FILE         YAML list of value-inducing suffixes [built-in]\n"
          "  --wordnet-dir DIR          WordNet's database [/usr/share/wordnet]\n"
          "  --unihan FILE              Unihan_Readings.txt.bz2\n"
          "                             [/usr/share/unicode/Unihan_Readings.txt.bz2]\n"
          "\n"
          "comparison:\n"
          "  --agreement M              exact (normalised exact match) or a metric of\n"
          "                             `eval score`, its sentence score [exact]\n"
          "  --similarity M             chrf, or embed-cosine with --embed-url [chrf]\n"
          "  --refusal-patterns FILE    YAML list of refusal phrases (case-insensitive)\n"
          "                             [built-in]; the refusal field and finish_reason\n"
          "                             content_filter count too\n"
          "  --refusal-judge-url URL    also ask an LLM judge (eval judge's run, its own\n"
          "                             result directory DIR/refusal_judge) whether each\n"
          "                             answer refuses [none]\n"
          "  --refusal-judge-model M    the judge model [the first the server lists]\n"
          "  --refusal-judge-api-key-env NAME  the judge's key, in this variable\n"
          "  --top-logprobs N           alternatives asked for the first token [5]\n"
          "  --answer-tokens N          max_tokens of each answer [64]\n"
          "  --bootstrap N              resamples of each family's means [1000]\n"
          "  --worst N                  worst pairs kept per family [5]\n"
          "\n"
          "metric options:\n");
  cli_metric_options_usage(&ctx->metric, out, 26);
  fprintf(out, "\nEach prompt is sent once, clean and perturbed (--concurrency, --rate as for run).\n\n");
}

static int option(void *vctx, int val, const char *arg) {
  perturb_ctx *ctx = vctx;
  long long v;
  double d;
  switch (val) {
    case O_FAMILIES: ctx->p.families = arg; return 0;
    case O_RATE:
      if (cli_parse_double("--edit-rate", arg, 0, 1, &d)) return 2;
      ctx->p.rate = d;
      return 0;
    case O_VARIANTS:
      if (cli_parse_int("--variants", arg, 1, 100, &v)) return 2;
      ctx->p.variants = (int)v;
      return 0;
    case O_INDUCEMENTS: ctx->p.inducements = arg; return 0;
    case O_PATTERNS: ctx->p.refusal_patterns = arg; return 0;
    case O_WORDNET: ctx->p.wordnet_dir = arg; return 0;
    case O_UNIHAN: ctx->p.unihan = arg; return 0;
    case O_AGREEMENT: ctx->p.agreement = arg; return 0;
    case O_SIMILARITY: ctx->p.similarity = arg; return 0;
    case O_TOP_LOGPROBS:
      if (cli_parse_int("--top-logprobs", arg, 1, 20, &v)) return 2;
      ctx->p.top_logprobs = (int)v;
      return 0;
    case O_ANSWER_TOKENS:
      if (cli_parse_int("--answer-tokens", arg, 1, 1 << 20, &v)) return 2;
      ctx->p.max_tokens = (int)v;
      return 0;
    case O_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", arg, 2, 1000000, &v)) return 2;
      ctx->p.bootstrap = (long)v;
      return 0;
    case O_JUDGE_URL: ctx->p.judge_url = arg; return 0;
    case O_JUDGE_MODEL: ctx->p.judge_model = arg; return 0;
    case O_JUDGE_KEY_ENV: ctx->p.judge_api_key_env = arg; return 0;
    case O_WORST:
      if (cli_parse_int("--worst", arg, 0, 1000, &v)) return 2;
      ctx->p.worst = (int)v;
      return 0;
    default:
      cli_metric_options_take(&ctx->metric, val, arg, ctx->opts, &ctx->p.n_metric_opts);
      return 0;
  }
}

static void print_families(const json_t *doc) {
  const char *name;
  json_t *f;
  printf("\n%-12s %6s %10s %10s %16s %8s %9s\n", "family", "pairs", "agreement", "similarity",
         "drift [95% CI]", "refusal", "conflict");
  json_object_foreach(json_object_get(doc, "families"), name, f) {
    json_t *d = json_object_get(f, "drift");
    char drift[32] = "-";
    if (json_is_number(json_object_get(d, "mean")))
      snprintf(drift, sizeof drift, "%.3f [%.3f,%.3f]", json_number_value(json_object_get(d, "mean")),
               json_number_value(json_object_get(d, "lo")), json_number_value(json_object_get(d, "hi")));
    json_t *cr = json_object_get(f, "conflict_rate");
    char conflict[16] = "-";
    if (json_is_number(cr)) snprintf(conflict, sizeof conflict, "%.3f", json_number_value(cr));
    printf("%-12s %6lld %10.3f %10.3f %16s %8.3f %9s\n", name,
           (long long)json_integer_value(json_object_get(f, "pairs")),
           json_number_value(json_object_get(json_object_get(f, "agreement"), "mean")),
           json_number_value(json_object_get(json_object_get(f, "similarity"), "mean")), drift,
           json_number_value(json_object_get(f, "refusal_rate")), conflict);
  }
}

int cli_probe_perturb_main(int argc, char **argv) {
  perturb_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  cb_probe_perturb_params_init(&ctx.p);
  build_options(&ctx);
  ctx.opts = calloc((size_t)argc + 1, sizeof *ctx.opts);
  ctx.p.metric_opts = ctx.opts;
  run_config_extra extra = {.command = "probe perturb", .options = ctx.options, .option = option,
                            .usage = usage, .ctx = &ctx};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  cb_probe_perturb *pp = NULL;
  cb_session *s = NULL;
  int rc = run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (solo || cfg.sweep || cfg.scenario_path) {
    fprintf(stderr, "calibench: probe perturb: %s does not apply (one run of the probe's prompts)\n",
            solo ? "--solo-baseline" : cfg.sweep ? "--sweep" : "--scenario");
    goto out;
  }
  if (!cfg.cls.dataset || !strcmp(cfg.cls.dataset, "synthetic")) {
    fprintf(stderr, "calibench: probe perturb: --dataset FILE is required (JSONL: prompt, optional id)\n");
    goto out;
  }
  ctx.p.dataset = !strncmp(cfg.cls.dataset, "jsonl:", 6) ? cfg.cls.dataset + 6 : cfg.cls.dataset;
  ctx.p.seed = cfg.workload.seed;
  ctx.p.confidence = cfg.confidence;
  ctx.p.log = cfg.quiet ? NULL : stderr; /* the refusal judge's notes */
  ctx.p.stop = &cli_stop_signals;
  if (cb_probe_perturb_prepare(&ctx.p, cfg.out_dir, &pp, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe perturb: %s\n", err.msg); /* the input's fault: exit 2 */
    goto out;
  }
  cb_probe_perturb_session(pp, &cfg);
  cb_session_result r;
  rc = (int)probe_session_run("perturb", &cfg, &s, &r, &err);
  if (rc == CB_SESSION_OK) {
    json_t *doc = NULL;
    if (cb_probe_perturb_finish(pp, &cfg.workload, r.dir, &doc, &err) != CB_OK) {
      fprintf(stderr, "calibench: probe perturb: %s\n", err.msg);
      rc = err.code == CB_ERR_IO || err.code == CB_ERR_NETWORK ? 1 : 2;
    } else {
      if (!cfg.quiet) {
        print_families(doc);
        printf("\nprobe.json: %s/probe.json\n", r.dir);
      }
      if (!cfg.no_report) cb_report_write_html_file(r.dir, NULL, NULL, &err);
    }
    json_decref(doc);
  }
  cb_session_result_free(&r);
  if (rc == 0 && cli_stop_signals) rc = 130;
out:
  cb_session_close(s);
  cb_probe_perturb_free(pp);
  cb_session_config_free(&cfg);
  free(ctx.opts);
  return rc;
}
