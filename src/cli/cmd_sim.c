/*
 * cmd_sim.c - `calibench sim ...`: the built-in inference simulator.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void sim_usage(FILE *out) {
  fprintf(out,
          "usage: calibench sim <subcommand> [options]\n"
          "\n"
          "subcommands:\n"
          "  serve      serve the OpenAI HTTP API in real time from the simulator engine\n");
}

int cli_sim_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    sim_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  fprintf(stderr, "calibench sim: unknown subcommand '%s'\n", argv[1]);
  sim_usage(stderr);
  return 2;
}
