/*
 * run_config.h - `calibench run`'s options: parsing and checking them into the
 * session's configuration (calibench/session.h), which runs them.
 */
#ifndef CALIBENCH_CLI_RUN_CONFIG_H
#define CALIBENCH_CLI_RUN_CONFIG_H

#include <getopt.h>
#include <stdio.h>

#include "calibench/session.h"

/* A command built on `run` (`eval run`): run's options for target, load and output,
 * plus its own. Their values start at RUN_CONFIG_EXTRA_OPT. */
#define RUN_CONFIG_EXTRA_OPT 5000
#define RUN_CONFIG_EXTRA_MAX 64
typedef struct run_config_extra {
  const char *command;          /* "eval run": in messages */
  const struct option *options; /* {NULL} last, at most RUN_CONFIG_EXTRA_MAX */
  /* One of its options: 0, or the exit status after printing why. */
  int (*option)(void *ctx, int val, const char *arg);
  /* Its usage line, what it does and its own options; run's follow. */
  void (*usage)(void *ctx, FILE *out);
  void *ctx;
  int metrics_listen;           /* 1: --metrics-listen and --metrics-linger apply (the command
                                   runs one session); 0: refused (a session per step would
                                   restart the listener and its counts) */
  int load_count_given;         /* out: --num-requests or --duration was given */
} run_config_extra;

/* Parse argv (argv[0] = "run") into *cfg (cb_session_config_init first, then the
 * options; log is stderr). Returns -1 when the run should go ahead; otherwise the
 * exit status (0 after --help, 2 after a usage error, which it has printed). Either
 * way cb_session_config_free releases what it holds. *solo_baseline: 1 with
 * --solo-baseline. */
int run_config_parse(int argc, char **argv, cb_session_config *cfg, int *solo_baseline);
/* The same for `sim run` (argv[0] = "run"): the workload and output options of `run`,
 * the engine from --profile/--model/--gpu/--tp/--replicas, no HTTP options. */
int run_config_parse_virtual(int argc, char **argv, cb_session_config *cfg, int *solo_baseline);
/* run_config_parse with the command's own options beside run's. */
int run_config_parse_extra(int argc, char **argv, cb_session_config *cfg, int *solo_baseline,
                           run_config_extra *extra);
/* The same in virtual time: sim run's options beside the command's. */
int run_config_parse_extra_virtual(int argc, char **argv, cb_session_config *cfg, int *solo_baseline,
                                   run_config_extra *extra);

#endif
