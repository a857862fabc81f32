/*
 * run_config.h - `calibench run`'s options: parsing and checking them into the
 * session's configuration (calibench/session.h), which runs them.
 */
#ifndef CALIBENCH_CLI_RUN_CONFIG_H
#define CALIBENCH_CLI_RUN_CONFIG_H

#include "calibench/session.h"

/* Parse argv (argv[0] = "run") into *cfg (cb_session_config_init first, then the
 * options; log is stderr). Returns -1 when the run should go ahead; otherwise the
 * exit status (0 after --help, 2 after a usage error, which it has printed). Either
 * way cb_session_config_free releases what it holds. *solo_baseline: 1 with
 * --solo-baseline. */
int run_config_parse(int argc, char **argv, cb_session_config *cfg, int *solo_baseline);
/* The same for `sim run` (argv[0] = "run"): the workload and output options of `run`,
 * the engine from --profile/--model/--gpu/--tp/--replicas, no HTTP options. */
int run_config_parse_virtual(int argc, char **argv, cb_session_config *cfg, int *solo_baseline);

#endif
