/*
 * main.c - the calibench command: dispatches to one function per subcommand.
 * All work happens in libcalibench; the cli/ files only parse arguments.
 */
#include <stdio.h>
#include <string.h>

#include "cb_version.h"
#include "cli.h"
#include "command_table.h"

static const cli_command commands[] = {
    {"run", "load-test an OpenAI-compatible endpoint (or the built-in simulator)", cli_run_main},
    {"sim", "the built-in inference simulator: sim serve (OpenAI HTTP server), sim run (predict)",
     cli_sim_main},
    {"tokenize", "exact token ids and counts (tiktoken, tokenizer.json BPE)", cli_tokenize_main},
    {"merge", "combine the result directories of run --shard shards into one result", cli_merge_main},
    {"report", "terminal, HTML, Markdown and CSV reports from results, calibrate and gate files",
     cli_report_main},
    {"calibrate", "paper -> production: drift, expectation, performance, SLA, cost",
     cli_calibrate_main},
    {"store", "record result directories in the results registry (SQLite, PostgreSQL)",
     cli_store_main},
    {"history", "a metric over the runs in the registry (table, JSON, CSV)", cli_history_main},
    {"gate", "CI regression gate: judge a run by a policy; exit 1 when blocked", cli_gate_main},
    {"eval", "quality: reference metrics (BLEU, chrF, chrF++, TER) identical to sacrebleu; eval run: scored under load", cli_eval_main},
    {"probe", "robustness and root causes: context breakpoints (docs/probe.md)", cli_probe_main},
};

static const size_t N_COMMANDS = sizeof commands / sizeof commands[0];

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench <command> [options]\n"
          "\n"
          "calibench measures LLM serving under production-like load and tells whether\n"
          "a deployment meets its SLA.\n"
          "\n"
          "commands:\n");
  cli_command_list(out, commands, N_COMMANDS);
  fprintf(out,
          "\n"
          "options:\n"
          "  -h, --help     show this help\n"
          "  --version      show the version and the commit it was built from\n"
          "\n"
          "Run 'calibench <command> --help' for a command's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("calibench %s (commit %s)\n", CB_VERSION_STRING, CB_GIT_COMMIT);
    return 0;
  }
  const cli_command *c = cli_command_find(commands, N_COMMANDS, cmd);
  if (c) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "calibench: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return 2;
}
