/*
 * cmd_eval_run.c - `calibench eval run`: a measured run (every option of `run`,
 * run_config.c) whose prompts come from an evaluation dataset, each answer scored
 * against its references (eval_run.h), eval.json written beside summary.json in the
 * result directory and, for a sweep, in every point's. docs/eval.md, "eval run".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/clock.h"
#include "calibench/eval_run.h"
#include "calibench/report.h"
#include "cli.h"
#include "metric_options.h"
#include "run_config.h"
#include "run_output.h"

/* The metric table's options follow at O_METRIC_OPT + i. */
enum { O_METRICS = RUN_CONFIG_EXTRA_OPT, O_BOOTSTRAP, O_EVAL_THREADS, O_JUDGE_URL, O_JUDGE_MODEL,
       O_JUDGE_KEY_ENV,
       O_JUDGE_CONCURRENCY, O_JUDGE_REPEATS, O_JUDGE_TIMEOUT, O_JUDGE_PRICE_IN,
       O_JUDGE_PRICE_OUT, O_METRIC_OPT };

typedef struct eval_run_ctx {
  char *metrics;           /* owned: --metrics as given */
  cb_eval_run_params params;
  char spec[1100];         /* the workload dataset spec of --dataset */
  cli_metric_options metric;
  cb_eval_option *opts;    /* owned: the metric options given */
  int judge_opts;          /* a --judge-* option was given */
  struct option options[RUN_CONFIG_EXTRA_MAX + 1];
} eval_run_ctx;

static void build_options(eval_run_ctx *ctx) {
  size_t n = 0;
  ctx->options[n++] = (struct option){"metrics", required_argument, NULL, O_METRICS};
  ctx->options[n++] = (struct option){"bootstrap", required_argument, NULL, O_BOOTSTRAP};
  ctx->options[n++] = (struct option){"threads", required_argument, NULL, O_EVAL_THREADS};
  ctx->options[n++] = (struct option){"judge-url", required_argument, NULL, O_JUDGE_URL};
  ctx->options[n++] = (struct option){"judge-model", required_argument, NULL, O_JUDGE_MODEL};
  ctx->options[n++] = (struct option){"judge-api-key-env", required_argument, NULL, O_JUDGE_KEY_ENV};
  ctx->options[n++] = (struct option){"judge-concurrency", required_argument, NULL,
                                      O_JUDGE_CONCURRENCY};
  ctx->options[n++] = (struct option){"judge-repeats", required_argument, NULL, O_JUDGE_REPEATS};
  ctx->options[n++] = (struct option){"judge-request-timeout", required_argument, NULL,
                                      O_JUDGE_TIMEOUT};
  ctx->options[n++] = (struct option){"judge-price-input", required_argument, NULL,
                                      O_JUDGE_PRICE_IN};
  ctx->options[n++] = (struct option){"judge-price-output", required_argument, NULL,
                                      O_JUDGE_PRICE_OUT};
  /* the table holds at most RUN_CONFIG_EXTRA_MAX entries, its {NULL} included */
  cli_metric_options_init(&ctx->metric, RUN_CONFIG_EXTRA_MAX - n - 1, O_METRIC_OPT);
  cli_metric_options_append(&ctx->metric, ctx->options, &n);
}


static void eval_run_usage(void *vctx, FILE *out) {
  const eval_run_ctx *ctx = vctx;
  fprintf(out,
          "usage: calibench eval run --dataset FILE [--metrics M[,M...]] [run options]\n"
          "\n"
          "Measure a run whose prompts come from an evaluation dataset and score every\n"
          "answer against the item's references: eval.json beside summary.json in the\n"
          "result directory (every point's, with --sweep). FILE is JSONL, one item a line:\n"
          "id, prompt or messages, reference (a string or a list), optional max_tokens.\n"
          "With --scenario, each class whose jsonl:/chat: dataset has references is\n"
          "scored. A failed or timed-out request scores as an empty answer (wrong, and\n"
          "counted); an answer cut by max_tokens is scored as it came (docs/eval.md).\n"
          "\n"
          "evaluation:\n"
          "  --dataset FILE             the evaluation dataset (or jsonl:FILE / chat:FILE)\n"
          "  --metrics LIST             metrics of `calibench eval score`, comma-separated\n"
          "                             [bleu]; judge:RUBRIC (a rubric YAML) adds an LLM\n"
          "                             judge's grade of every answer (docs/eval-run.md)\n"
          "  --bootstrap N              95%% interval of each corpus score from N resamples\n"
          "                             of the requests (as sacrebleu's --confidence) [none]\n"
          "  --threads N                score the answers on N threads, 1 to %d; eval.json\n"
          "                             is the same whatever N [online CPUs, at most %d]\n"
          "\n"
          "judge (with judge:RUBRIC; as eval judge's options, docs/eval-judge.md): the\n"
          "answered items go to the judge after the run, its own run in DIR/judge; a\n"
          "failed request is not judged and scores the scale's minimum; an item's `human`\n"
          "(a number) is a person's score, and the judge's agreement with it is reported.\n"
          "  --judge-url URL            the judge's base URL, ending in /v1 (required)\n"
          "  --judge-model M            the judge model [the first the server lists]\n"
          "  --judge-api-key-env NAME   send the key in this variable as a bearer token\n"
          "  --judge-concurrency N      judge requests in flight [4]\n"
          "  --judge-repeats K          ask the judge K times per item (mean) [1]\n"
          "  --judge-request-timeout DUR  per judge request (e.g. 60s) [none]\n"
          "  --judge-price-input X      currency per 1,000 judge input tokens (calibrate\n"
          "                             cost's price_input_per_1k); with the output price,\n"
          "                             eval.json's judge cost = tokens x prices / 1000\n"
          "  --judge-price-output X     currency per 1,000 judge output tokens [no cost]\n"
          "\n"
          "metric options:\n",
          CLI_EVAL_THREADS_MAX, CLI_EVAL_THREADS_DEFAULT_MAX);
  cli_metric_options_usage(&ctx->metric, out, 26);
  fprintf(out,
          "\n"
          "Each request is one item: without --num-requests or --duration, every item is\n"
          "sent once (in a seeded order; --concurrency, --rate as for run).\n"
          "\n");
}

static int eval_run_option(void *vctx, int val, const char *arg) {
  eval_run_ctx *ctx = vctx;
  long long v;
  uint64_t ns;
  if (val >= O_JUDGE_URL && val < O_METRIC_OPT) ctx->judge_opts = 1;
  switch (val) {
    case O_JUDGE_URL:
      ctx->params.judge.url = arg;
      return 0;
    case O_JUDGE_MODEL:
      ctx->params.judge.model = arg;
      return 0;
    case O_JUDGE_KEY_ENV:
      ctx->params.judge.api_key_env = arg;
      return 0;
    case O_JUDGE_CONCURRENCY:
      if (cli_parse_int("--judge-concurrency", arg, 1, 4096, &v)) return 2;
      ctx->params.judge.concurrency = (uint32_t)v;
      return 0;
    case O_JUDGE_REPEATS:
      if (cli_parse_int("--judge-repeats", arg, 1, 100, &v)) return 2;
      ctx->params.judge.repeats = (size_t)v;
      return 0;
    case O_JUDGE_TIMEOUT:
      if (cli_parse_duration("--judge-request-timeout", arg, 1, CB_NS_PER_MS, &ns)) return 2;
      ctx->params.judge.request_timeout_s = (double)ns / 1e9;
      return 0;
    case O_JUDGE_PRICE_IN:
      if (cli_parse_price("--judge-price-input", arg, &ctx->params.judge.price_input_per_1k))
        return 2;
      return 0;
    case O_JUDGE_PRICE_OUT:
      if (cli_parse_price("--judge-price-output", arg, &ctx->params.judge.price_output_per_1k))
        return 2;
      return 0;
    case O_METRICS:
      free(ctx->metrics);
      ctx->metrics = strdup(arg);
      return 0;
    case O_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", arg, 1, 1000000, &v)) return 2;
      ctx->params.bootstrap = (long)v;
      return 0;
    case O_EVAL_THREADS:
      if (cli_parse_int("--threads", arg, 1, CLI_EVAL_THREADS_MAX, &v)) return 2;
      ctx->params.threads = (int)v;
      return 0;
    default:
      cli_metric_options_take(&ctx->metric, val, arg, ctx->opts, &ctx->params.n_opts);
      return 0;
  }
}

/* Score one result directory and print its corpus scores. */
static int score_dir(const eval_run_ctx *ctx, const cb_session_config *cfg, const char *dir,
                     const char *label) {
  cb_error err;
  json_t *doc = NULL;
  cb_status st = cb_eval_run_score(&ctx->params, &cfg->workload, dir, &doc, &err);
  int rc = 0;
  if (st != CB_OK) {
    fprintf(stderr, "calibench: eval run: %s: %s\n", dir, err.msg);
    if (st != CB_ERR_IO && st != CB_ERR_NETWORK) {
      json_decref(doc);
      return 2;
    }
    rc = 1; /* the judge failed (eval.json has the other metrics, doc says them) or the disk */
  }
  /* The session wrote report.html before the answers were scored: again, with them. */
  if (!cfg->no_report && cb_report_write_html_file(dir, NULL, NULL, &err) != CB_OK)
    fprintf(stderr, "calibench: eval run: report.html not rewritten with the quality section: %s\n",
            err.msg);
  if (!cfg->quiet && doc) {
    json_t *status = json_object_get(doc, "status");
    printf("quality%s%s: %lld requests: %lld ok, %lld truncated, %lld error, %lld timeout\n",
           label[0] ? " " : "", label, (long long)json_integer_value(json_object_get(doc, "requests")),
           (long long)json_integer_value(json_object_get(status, "ok")),
           (long long)json_integer_value(json_object_get(status, "truncated")),
           (long long)json_integer_value(json_object_get(status, "error")),
           (long long)json_integer_value(json_object_get(status, "timeout")));
    if (json_is_true(json_object_get(doc, "interrupted")))
      printf("  interrupted: the scores cover only these requests; the items never sent are in "
             "no score\n");
    const char *name;
    json_t *m;
    json_object_foreach(json_object_get(doc, "metrics"), name, m) {
      json_t *score = json_object_get(m, "score");
      if (json_is_number(score))
        printf("  %-8s %8.2f  %s\n", name, json_number_value(score),
               json_string_value(json_object_get(m, "signature")));
      else
        printf("  %-8s %8s  %s\n", name, "none", json_string_value(json_object_get(m, "signature")));
      json_t *unscored = json_object_get(m, "unscored");
      if (json_integer_value(unscored))
        printf("  %-8s %lld items without a grade (%lld judge answers did not parse, %lld judge "
               "requests failed)\n",
               name, (long long)json_integer_value(unscored),
               (long long)json_integer_value(json_object_get(m, "parse_failures")),
               (long long)json_integer_value(json_object_get(m, "request_failures")));
      json_t *cost = json_object_get(m, "cost");
      if (json_object_get(m, "prompt_tokens")) {
        printf("  %-8s the judge's tokens: %lld in, %lld out", name,
               (long long)json_integer_value(json_object_get(m, "prompt_tokens")),
               (long long)json_integer_value(json_object_get(m, "output_tokens")));
        if (json_is_number(cost)) printf("; cost %.6f", json_number_value(cost));
        printf("\n");
      }
    }
    json_t *classes = json_object_get(doc, "classes"), *c;
    const char *cname;
    if (json_object_size(classes) > 1) json_object_foreach(classes, cname, c) {
        if (!json_is_true(json_object_get(c, "scored"))) {
          printf("  class %s: not scored (no references)\n", cname);
          continue;
        }
        printf("  class %s: %lld requests, %lld wrong:", cname,
               (long long)json_integer_value(json_object_get(c, "requests")),
               (long long)json_integer_value(json_object_get(json_object_get(c, "status"), "wrong")));
        json_object_foreach(json_object_get(c, "metrics"), name, m) {
          printf(" %s %.2f", name, json_number_value(json_object_get(m, "score")));
        }
        printf("\n");
      }
    printf("  %s/eval.json\n", dir);
  }
  json_decref(doc);
  return rc;
}

static int run_and_score(cb_session *s, const eval_run_ctx *ctx, const cb_session_config *cfg) {
  cb_error err;
  int rc;
  if (cfg->sweep) {
    cb_session_sweep sw;
    cb_session_outcome o = cb_session_run_sweep(s, &sw, &err);
    rc = (int)o;
    if (o != CB_SESSION_OK) fprintf(stderr, "calibench: %s\n", err.msg);
    size_t ran = 0;
    for (size_t i = 0; i < sw.n_points; i++) ran += sw.points[i].ran;
    if (ran && !cfg->quiet) run_print_sweep(stdout, cfg, &sw);
    for (size_t i = 0; i < sw.n_points; i++)
      if (sw.points[i].ran) {
        int src = score_dir(ctx, cfg, sw.points[i].dir, sw.points[i].label);
        if (!rc) rc = src;
      }
    cb_session_sweep_free(&sw);
  } else {
    cb_session_result r;
    cb_session_outcome o = cb_session_run(s, &r, &err);
    rc = (int)o;
    if (o != CB_SESSION_OK) fprintf(stderr, "calibench: %s\n", err.msg);
    if ((o == CB_SESSION_OK || r.all.requests) && !cfg->quiet)
      run_print_summary(stdout, &r, cb_session_target(s), cb_session_model(s), cfg->out_dir);
    if (r.ran) {
      int src = score_dir(ctx, cfg, r.dir, "");
      if (!rc) rc = src;
    }
    cb_session_result_free(&r);
  }
  return rc == 0 && cli_stop_signals ? 130 : rc;
}

int cli_eval_run_main(int argc, char **argv) {
  eval_run_ctx ctx = {0};
  cb_eval_run_params_init(&ctx.params);
  ctx.params.threads = cli_eval_default_threads();
  build_options(&ctx);
  ctx.opts = calloc((size_t)argc + 1, sizeof *ctx.opts);
  ctx.params.opts = ctx.opts;
  run_config_extra extra = {.command = "eval run", .options = ctx.options,
                            .option = eval_run_option, .usage = eval_run_usage, .ctx = &ctx,
                            .metrics_listen = 1};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  int rc = run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (solo) {
    fprintf(stderr, "calibench: eval run: --solo-baseline does not apply (use calibench run)\n");
    goto out;
  }
  if (!ctx.metrics) ctx.metrics = strdup("bleu");
  if (cb_eval_run_parse_metrics(&ctx.params, ctx.metrics, &err) != CB_OK ||
      cb_eval_run_check_options(&ctx.params, &err) != CB_OK) {
    fprintf(stderr, "calibench: eval run: %s\n", err.msg);
    goto out;
  }
  if (ctx.judge_opts && !ctx.params.judge_rubric) {
    fprintf(stderr, "calibench: eval run: --judge-* options need a judge:RUBRIC in --metrics\n");
    goto out;
  }
  if (!cfg.scenario_path) {
    size_t items = 0;
    if (!cfg.cls.dataset || !strcmp(cfg.cls.dataset, "synthetic")) {
      fprintf(stderr, "calibench: eval run: --dataset FILE is required (JSONL items with id, "
                      "prompt or messages, and reference)\n");
      goto out;
    }
    if (cb_eval_dataset_spec(cfg.cls.dataset, ctx.spec, sizeof ctx.spec, &items, &err) != CB_OK) {
      fprintf(stderr, "calibench: eval run: --dataset: %s\n", err.msg);
      goto out;
    }
    cfg.cls.dataset = ctx.spec;
    if (!extra.load_count_given) cfg.workload.num_requests = items;
  }
  cfg.stop = &cli_stop_signals;
  ctx.params.judge.stop = &cli_stop_signals;
  ctx.params.judge.log = cfg.quiet ? NULL : stderr;
  cfg.max_output_text = CB_SESSION_ANSWER_MAX; /* whole answers are scored, not a preview */
  cb_session *s = NULL;
  cb_session_outcome o = cb_session_open(&cfg, &s, &err);
  rc = (int)o;
  if (o != CB_SESSION_OK) {
    fprintf(stderr, "calibench: eval run: %s\n", err.msg);
  } else {
    cli_stop_handlers stop_handlers;
    cli_stop_catch(&stop_handlers);
    rc = run_and_score(s, &ctx, &cfg);
    cli_stop_release(&stop_handlers);
  }
  cb_session_close(s);
out:
  cb_session_config_free(&cfg);
  free(ctx.metrics);
  free(ctx.opts);
  return rc;
}
