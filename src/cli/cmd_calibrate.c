/*
 * cmd_calibrate.c - `calibench calibrate <subcommand>`: paper -> production calibration.
 * A table of subcommands; each lives in its own file (calibrate.h) and calls the calib
 * module. docs/calibrate.md is the user's page.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "calibench/results.h"
#include "calibrate.h"
#include "cli.h"
#include "command_table.h"

static const cli_command subcommands[] = {
    /* data, environment, task and cost calibration (calibrate_stats.c) */
    {"drift", "data-distribution drift: JS divergence, severity, accuracy factor",
     cli_calibrate_drift},
    {"expect", "production = paper x data x environment x task x safety margin",
     cli_calibrate_expect},
    {"cost", "cost per 1,000 requests and the cheapest candidate within a tolerance",
     cli_calibrate_cost},
    /* performance calibration (roofline, fit, perf, sla) (calibrate_perf.c) */
    {"roofline", "physical bounds of model x GPU x TP, and a run's achieved MBU/MFU",
     cli_calibrate_roofline},
    {"fit", "fit the simulator's MFU, MBU and step overhead to measured runs",
     cli_calibrate_fit},
    {"perf", "paper throughput/latency claims vs a result: factors, production figures",
     cli_calibrate_perf},
    {"sla", "the SLA to promise from a prediction, and the load where it stops holding",
     cli_calibrate_sla},
};

static const size_t N_SUBCOMMANDS = sizeof subcommands / sizeof subcommands[0];

int cli_calibrate_emit(const char *sub, const cb_buf *table, const cb_buf *json, int json_stdout,
                       const char *out_path) {
  const cb_buf *show = json_stdout ? json : table;
  if (fwrite(show->data, 1, show->len, stdout) != show->len || fflush(stdout)) {
    fprintf(stderr, "calibench: calibrate %s: writing stdout: %s\n", sub, strerror(errno));
    return 1;
  }
  if (out_path) {
    cb_error err;
    cb_error_clear(&err);
    if (cb_results_write_file(out_path, json->data, json->len, &err) != CB_OK) {
      fprintf(stderr, "calibench: calibrate %s: %s\n", sub, err.msg);
      return 1;
    }
    if (!json_stdout) printf("\n  JSON written to %s\n", out_path);
  }
  return 0;
}

int cli_calibrate_input_error(const char *sub, const cb_error *err) {
  fprintf(stderr, "calibench: calibrate %s: %s\n", sub, err->msg);
  return 2;
}

static void calibrate_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate <subcommand> [options]\n"
          "\n"
          "Calibrate a paper's numbers to production: data drift, environment and task\n"
          "penalties, cost per quality (docs/calibrate.md); physical bounds, fitting the\n"
          "simulator, performance factors and the SLA to promise (docs/calibrate-perf.md).\n"
          "\n"
          "subcommands:\n");
  cli_command_list(out, subcommands, N_SUBCOMMANDS);
  fprintf(out,
          "\n"
          "Run 'calibench calibrate <subcommand> --help' for its options.\n");
}

int cli_calibrate_main(int argc, char **argv) {
  if (argc < 2) {
    calibrate_usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    calibrate_usage(stdout);
    return 0;
  }
  const cli_command *c = cli_command_find(subcommands, N_SUBCOMMANDS, argv[1]);
  if (c) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "calibench: calibrate: unknown subcommand '%s'\n\n", argv[1]);
  calibrate_usage(stderr);
  return 2;
}
