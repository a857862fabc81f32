/*
 * cmd_probe_dialog.c - `calibench probe dialog`: scenarios sent as live multi-turn
 * conversations (every option of `run` for target, load and output, run_config.c),
 * each answer held to its turn's checks, DIR/probe.json beside the run's files
 * (calibench/probe_dialog.h, docs/probe.md "probe dialog").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/probe_dialog.h"
#include "calibench/report.h"
#include "args.h"
#include "cli.h"
#include "probe_session.h"
#include "run_config.h"

enum { O_SCENARIOS = RUN_CONFIG_EXTRA_OPT, O_REPETITIONS, O_NO_SEED };

typedef struct dialog_ctx {
  const char *scenarios;
  cb_probe_dialog_params params;
} dialog_ctx;

static const struct option OPTIONS[] = {
    {"scenarios", required_argument, NULL, O_SCENARIOS},
    {"repetitions", required_argument, NULL, O_REPETITIONS},
    {"no-seed", no_argument, NULL, O_NO_SEED},
    {NULL, 0, NULL, 0},
};

static void usage(void *vctx, FILE *out) {
  (void)vctx;
  fprintf(out,
          "usage: calibench probe dialog --scenarios FILE [--repetitions N] [run options]\n"
          "\n"
          "Multi-turn state and implicit constraints: every scenario of FILE (YAML: turns,\n"
          "the slots they set, checks per turn) is sent as a live conversation, each turn\n"
          "with the model's real replies to the turns before it, N times; every answer is\n"
          "held to its turn's checks (regex, json path, mentions SLOT, not_contradicts\n"
          "SLOT). DIR/probe.json: satisfaction per check and turn and by recall depth (turns\n"
          "between setting a slot and needing it) with Wilson intervals, clarification\n"
          "questions, TTFT and prompt tokens per turn (docs/probe.md).\n"
          "\n"
          "--concurrency is the number of conversations in flight (a closed loop: --rate\n"
          "does not apply); --seed seeds each conversation's request \"seed\". A failed\n"
          "request ends its conversation (counted as failed, not as unsatisfied checks).\n"
          "\n"
          "dialog:\n"
          "  --scenarios FILE           the scenario file (required)\n"
          "  --repetitions N            conversations per scenario [10]\n"
          "  --no-seed                  send no \"seed\" member with the requests\n"
          "\n");
}

static int option(void *vctx, int val, const char *arg) {
  dialog_ctx *ctx = vctx;
  long long v;
  switch (val) {
    case O_SCENARIOS:
      ctx->scenarios = arg;
      return 0;
    case O_REPETITIONS:
      if (cli_parse_int("--repetitions", arg, 1, 100000, &v)) return 2;
      ctx->params.repetitions = (size_t)v;
      return 0;
    case O_NO_SEED:
      ctx->params.send_seed = 0;
      return 0;
    default:
      return 2;
  }
}

static void print_result(json_t *doc, const char *dir) {
  json_t *metrics = json_object_get(doc, "metrics");
  const char *name;
  json_t *m;
  json_t *conv = json_object_get(doc, "conversations");
  printf("dialog: %lld conversations: %lld completed, %lld failed\n",
         (long long)json_integer_value(json_object_get(conv, "planned")),
         (long long)json_integer_value(json_object_get(conv, "completed")),
         (long long)json_integer_value(json_object_get(conv, "failed")));
  json_object_foreach(metrics, name, m) {
    printf("  %-24s %6.3f  [%.3f, %.3f]\n", name, json_number_value(json_object_get(m, "value")),
           json_number_value(json_object_get(m, "lo")), json_number_value(json_object_get(m, "hi")));
  }
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(doc, "by_depth"), i, d) {
    printf("  depth %-3lld %5lld checks  satisfied %6.3f  [%.3f, %.3f]\n",
           (long long)json_integer_value(json_object_get(d, "depth")),
           (long long)json_integer_value(json_object_get(d, "n")),
           json_number_value(json_object_get(d, "rate")), json_number_value(json_object_get(d, "lo")),
           json_number_value(json_object_get(d, "hi")));
  }
  printf("  %s/probe.json\n", dir);
}

int cli_probe_dialog_main(int argc, char **argv) {
  dialog_ctx ctx = {0};
  cb_probe_dialog_params_init(&ctx.params);
  run_config_extra extra = {.command = "probe dialog", .options = OPTIONS, .option = option,
                            .usage = usage, .ctx = &ctx};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  cb_probe_dialog *pd = NULL;
  int rc = run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (solo || cfg.sweep || cfg.virtual_time) {
    fprintf(stderr, "calibench: probe dialog: conversations run as one live point: --solo-baseline "
                    "and --sweep do not apply\n");
    goto out;
  }
  if (cfg.workload.arrival.kind != CB_ARRIVAL_CLOSED) {
    /* a turn is ready when its answer before it is: an arrival process has no say */
    fprintf(stderr, "calibench: probe dialog: conversations run in a closed loop: give "
                    "--concurrency (conversations in flight), not --rate\n");
    goto out;
  }
  if (!cfg.chat) {
    fprintf(stderr, "calibench: probe dialog: conversations are chat messages: --api chat\n");
    goto out;
  }
  if (!ctx.scenarios) {
    fprintf(stderr, "calibench: probe dialog: --scenarios FILE is required (docs/probe.md)\n");
    goto out;
  }
  if (extra.load_count_given) {
    fprintf(stderr, "calibench: probe dialog: --num-requests and --duration do not apply: the "
                    "scenarios and --repetitions say what is sent\n");
    goto out;
  }
  ctx.params.seed = cfg.workload.seed;
  ctx.params.level = cfg.confidence;
  if (cb_probe_dialog_load(ctx.scenarios, &ctx.params, &pd, &err) != CB_OK) {
    fprintf(stderr, "calibench: probe dialog: %s\n", err.msg);
    goto out;
  }
  if (!cfg.quiet)
    fprintf(stderr, "calibench probe dialog: %zu conversations, %zu turns, %u at a time\n",
            cb_probe_dialog_conversations(pd), cb_probe_dialog_turns(pd), cfg.workload.concurrency);
  cb_probe_dialog_attach(pd, &cfg);
  cb_session *s = NULL;
  cb_session_result r;
  rc = (int)probe_session_run("dialog", &cfg, &s, &r, &err);
  if (r.ran) {
    json_t *doc = NULL;
    if (cb_probe_dialog_write(pd, r.dir, &doc, &err) != CB_OK) {
      fprintf(stderr, "calibench: probe dialog: %s\n", err.msg);
      if (!rc) rc = 1;
    } else {
      if (!cfg.quiet) print_result(doc, r.dir);
      json_decref(doc);
      /* The session wrote report.html before the answers were checked: again, with them. */
      if (!cfg.no_report && cb_report_write_html_file(r.dir, NULL, NULL, &err) != CB_OK)
        fprintf(stderr, "calibench: probe dialog: report.html not rewritten: %s\n", err.msg);
    }
  }
  cb_session_result_free(&r);
  cb_session_close(s);
  if (rc == 0 && cli_stop_signals) rc = 130;
out:
  cb_probe_dialog_free(pd);
  cb_session_config_free(&cfg);
  return rc;
}
