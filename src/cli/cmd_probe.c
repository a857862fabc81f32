/*
 * cmd_probe.c - `calibench probe <probe> ...`: the robustness and root-cause probes
 * (docs/probe.md). Each probe parses its own options in cmd_probe_<probe>.c (run's
 * target and load options through run_config.c, plus its own) and is listed here.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "command_table.h"

/* One row per probe. */
static const cli_command probes[] = {
    {"context", "where long context breaks: needle recall over lengths x depths, the breakpoint",
     cli_probe_context_main},
    {"perturb", "robustness and safety drift under typos, homophones, synonyms, noise, paraphrase, inducement",
     cli_probe_perturb_main},
    {"dialog", "multi-turn state and implicit constraints, live conversations", cli_probe_dialog_main},
    {"agent", "tool paths of an agent task: their distribution, latency and SLO per path, "
              "success against tool calls", cli_probe_agent_main},
    {"quant", "quantization drift between a reference and a candidate endpoint: KLD, top-1 "
              "agreement, delta perplexity per position", cli_probe_quant_main},
    {"embed", "two embedding endpoints on one retrieval set: rankings, score shifts, power-norm calibration",
     cli_probe_embed_main},
    {NULL, NULL, NULL},
};

static size_t n_probes(void) {
  size_t n = 0;
  while (probes[n].name) n++;
  return n;
}

static void probe_usage(FILE *out) {
  fprintf(out,
          "usage: calibench probe <probe> [options]\n"
          "\n"
          "Black-box probes of a model behind an OpenAI-compatible endpoint (--url) or the\n"
          "built-in simulator: each sends its prompts as a measured run (records.jsonl,\n"
          "summary.json, manifest.json in --out DIR), scores the answers and writes\n"
          "DIR/probe.json with metrics that `store` keeps and `gate` judges (docs/probe.md).\n"
          "\n"
          "probes:\n");
  cli_command_list(out, probes, n_probes());
  fprintf(out,
          "\n"
          "Run 'calibench probe <probe> --help' for a probe's options.\n");
}

int cli_probe_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    probe_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const cli_command *c = cli_command_find(probes, n_probes(), argv[1]);
  if (c) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "calibench: probe: unknown probe '%s' (known:", argv[1]);
  for (size_t i = 0; i < n_probes(); i++) fprintf(stderr, "%s %s", i ? "," : "", probes[i].name);
  fprintf(stderr, "%s)\n", n_probes() ? "" : " none yet");
  return 2;
}
