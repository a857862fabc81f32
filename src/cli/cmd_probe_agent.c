/*
 * cmd_probe_agent.c - `calibench probe agent`: run's target, load and output options
 * plus a workflow file; the loop and its statistics are the library's
 * (calibench/probe_agent.h). docs/probe.md, "probe agent".
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "calibench/probe_agent.h"
#include "calibench/report.h"
#include "cli.h"
#include "run_config.h"

enum { O_WORKFLOW = RUN_CONFIG_EXTRA_OPT, O_RUNS, O_MAX_STEPS, O_BOOTSTRAP, O_EXPECTED, O_VIRTUAL };

typedef struct agent_ctx {
  const char *workflow;
  cb_probe_agent_params params;
} agent_ctx;

static const struct option agent_options[] = {
    {"workflow", required_argument, NULL, O_WORKFLOW},
    {"runs", required_argument, NULL, O_RUNS},
    {"max-steps", required_argument, NULL, O_MAX_STEPS},
    {"bootstrap", required_argument, NULL, O_BOOTSTRAP},
    {"expected-paths", required_argument, NULL, O_EXPECTED},
    {"virtual-time", no_argument, NULL, O_VIRTUAL},
    {NULL, 0, NULL, 0},
};

static void agent_usage(void *vctx, FILE *out) {
  (void)vctx;
  fprintf(out,
          "usage: calibench probe agent --workflow FILE [--runs N] [--max-steps N] [run options]\n"
          "\n"
          "Run a tool-using task N times: the model's tool calls drive the loop, calibench\n"
          "simulates the tools (latency, result, error rate from the workflow file) and\n"
          "answers them, until the model answers or --max-steps requests were made. Every\n"
          "step is a run of its own in DIR/steps/NN; DIR/runs.jsonl has each run, and\n"
          "DIR/probe.json the path distribution and its entropy, steps per run, end-to-end\n"
          "latency (model + simulated tool time) and SLO attainment per path, failure\n"
          "given a tool error, and the per-call success factor p of success = p^calls\n"
          "(calibrate expect --task-factor-from DIR/probe.json takes it). docs/probe.md.\n"
          "\n"
          "agent:\n"
          "  --workflow FILE            the task, tools and success condition (YAML)\n"
          "  --runs N                   repetitions of the task [50]\n"
          "  --max-steps N              model requests per run at most [8]\n"
          "  --bootstrap N              resamples for the intervals [1000]\n"
          "  --expected-paths FILE      JSON {\"a > b\": probability, ...}: a chi-square test\n"
          "                             of the observed paths against it\n"
          "  --slo e2e<=DUR             (run's --slo) the task's end-to-end bound: SLO\n"
          "                             attainment per path and overall\n"
          "  --concurrency N            (run's) runs in flight at each step [1]\n"
          "  --virtual-time             the simulator's engine in virtual time, as `sim run`:\n"
          "                             no --url, no wall clock; its options are sim run's\n"
          "                             (--model, --gpu, --profile, --behavior FILE, ...)\n"
          "\n");
}

static int agent_option(void *vctx, int val, const char *arg) {
  agent_ctx *ctx = vctx;
  long long v;
  switch (val) {
    case O_WORKFLOW:
      ctx->workflow = arg;
      return 0;
    case O_RUNS:
      if (cli_parse_int("--runs", arg, 1, 100000, &v)) return 2;
      ctx->params.runs = (size_t)v;
      return 0;
    case O_MAX_STEPS:
      if (cli_parse_int("--max-steps", arg, 1, 1000, &v)) return 2;
      ctx->params.max_steps = (int)v;
      return 0;
    case O_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", arg, 1, 1000000, &v)) return 2;
      ctx->params.bootstrap = (long)v;
      return 0;
    case O_EXPECTED:
      ctx->params.expected_paths = arg;
      return 0;
    case O_VIRTUAL: /* seen before parsing: it decides which options there are */
      return 0;
    default:
      return 2;
  }
}

static void print_share(const char *what, json_t *s) {
  if (!json_integer_value(json_object_get(s, "n"))) {
    printf("  %-26s      -  (no runs)\n", what);
    return;
  }
  printf("  %-26s %6.1f%%  [%5.1f, %5.1f]  (%lld of %lld)\n", what,
         100 * json_number_value(json_object_get(s, "rate")),
         100 * json_number_value(json_object_get(s, "lo")), 100 * json_number_value(json_object_get(s, "hi")),
         (long long)json_integer_value(json_object_get(s, "k")),
         (long long)json_integer_value(json_object_get(s, "n")));
}

static void print_doc(json_t *doc, const char *dir) {
  json_t *m = json_object_get(doc, "metrics");
  printf("probe agent: %lld runs\n", (long long)json_integer_value(json_object_get(doc, "runs")));
  printf("  %-40s %6s %7s %9s %9s %9s %8s\n", "path", "runs", "share", "p50 s", "p95 s", "p99 s", "SLO");
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(doc, "paths"), i, row) {
    json_t *e = json_object_get(row, "e2e_s"), *slo = json_object_get(row, "slo_attainment");
    char att[16] = "-";
    if (json_is_object(slo)) snprintf(att, sizeof att, "%.1f%%", 100 * json_number_value(json_object_get(slo, "rate")));
    printf("  %-40.40s %6lld %6.1f%% %9.3f %9.3f %9.3f %8s\n", json_string_value(json_object_get(row, "path")),
           (long long)json_integer_value(json_object_get(row, "runs")),
           100 * json_number_value(json_object_get(json_object_get(row, "share"), "rate")),
           json_number_value(json_object_get(e, "p50")), json_number_value(json_object_get(e, "p95")),
           json_number_value(json_object_get(e, "p99")), att);
  }
  json_t *ent = json_object_get(m, "path_entropy_bits"), *pc = json_object_get(m, "per_call_success");
  printf("  path entropy               %.3f bits [%.3f, %.3f]\n", json_number_value(json_object_get(ent, "value")),
         json_number_value(json_object_get(ent, "lo")), json_number_value(json_object_get(ent, "hi")));
  printf("  steps per run              mean %.2f\n", json_number_value(json_object_get(json_object_get(m, "steps_mean"), "value")));
  print_share("success", json_object_get(doc, "success"));
  if (json_is_object(json_object_get(doc, "slo_attainment"))) print_share("SLO attainment", json_object_get(doc, "slo_attainment"));
  json_t *te = json_object_get(doc, "tool_errors");
  print_share("failure | tool error", json_object_get(te, "failure_given_error"));
  print_share("failure | no tool error", json_object_get(te, "failure_given_none"));
  if (json_is_number(json_object_get(pc, "value")))
    printf("  per-call success p         %.4f [%.4f, %.4f]  (success = p^calls)\n",
           json_number_value(json_object_get(pc, "value")), json_number_value(json_object_get(pc, "lo")),
           json_number_value(json_object_get(pc, "hi")));
  json_t *ref = json_object_get(doc, "reference");
  if (ref)
    printf("  expected paths             chi2 %.3f, df %lld, p %.4g\n", json_number_value(json_object_get(ref, "chi2")),
           (long long)json_integer_value(json_object_get(ref, "df")), json_number_value(json_object_get(ref, "p_value")));
  printf("  %s/probe.json\n", dir);
}

int cli_probe_agent_main(int argc, char **argv) {
  agent_ctx ctx = {0};
  cb_probe_agent_params_init(&ctx.params);
  run_config_extra extra = {.command = "probe agent", .options = agent_options, .option = agent_option,
                            .usage = agent_usage, .ctx = &ctx};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  cb_probe_agent_workflow *w = NULL;
  /* Each step is a run over a dataset of the runs' conversations, which `sim run`'s
   * virtual-time runner takes as it takes any dataset: the step after starts where it
   * ended (docs/probe.md, "probe agent"). */
  int virtual_time = 0;
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) virtual_time |= !strcmp(argv[i], "--virtual-time");
  int rc = virtual_time ? run_config_parse_extra_virtual(argc, argv, &cfg, &solo, &extra)
                        : run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (solo || cfg.sweep || cfg.scenario_path) {
    fprintf(stderr, "calibench: probe agent: --solo-baseline, --sweep and --scenario do not apply "
                    "(the workflow is the workload)\n");
    goto out;
  }
  if (!ctx.workflow) {
    fprintf(stderr, "calibench: probe agent: --workflow FILE is required (the task, tools and success "
                    "condition; docs/probe.md)\n");
    goto out;
  }
  if (cb_probe_agent_workflow_load(ctx.workflow, &w, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe agent: %s\n", err.msg);
    goto out;
  }
  for (size_t i = 0; i < cfg.n_slos; i++)
    if (cfg.slos[i].metric == CB_METRIC_E2E) ctx.params.slo_e2e_s = cfg.slos[i].bound_ns / 1e9;
  ctx.params.seed = cfg.workload.seed;
  ctx.params.confidence = cfg.confidence;
  cfg.stop = &cli_stop_signals;
  int quiet = cfg.quiet;
  cfg.quiet = 1; /* one line per step would bury the result */
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  json_t *doc = NULL;
  cb_session_outcome o = cb_probe_agent_run(&ctx.params, w, &cfg, &doc, &err);
  cli_stop_release(&stop_handlers);
  rc = (int)o;
  if (o != CB_SESSION_OK) fprintf(stderr, "calibench: probe agent: %s\n", err.msg);
  if (doc && !cfg.no_report && cb_report_write_html_file(cfg.out_dir, NULL, NULL, &err) != CB_OK)
    fprintf(stderr, "calibench: probe agent: report.html not written: %s\n", err.msg);
  if (doc && !quiet) print_doc(doc, cfg.out_dir);
  json_decref(doc);
  if (rc == 0 && cli_stop_signals) rc = 130;
out:
  cb_probe_agent_workflow_free(w);
  cb_session_config_free(&cfg);
  return rc;
}
