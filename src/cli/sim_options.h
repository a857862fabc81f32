/*
 * sim_options.h - the simulator's deployment options: one table for the three
 * commands that run the engine. `sim serve` and `sim run` take each as --NAME, `run`
 * (the built-in simulator, no --url) as --sim-NAME; help lines, getopt entries,
 * parsing and how each changes the engine's parameters all come from the table.
 *
 * A deployment is built in one order for all three: the model and GPU presets, then
 * the --profile file, then the table's options (in table order, so --weights after
 * --dtype), then the checks sim serve makes at start-up (valid, the KV cache fits).
 */
#ifndef CALIBENCH_CLI_SIM_OPTIONS_H
#define CALIBENCH_CLI_SIM_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "calibench/sim.h"

/* SIM_OPT_FILE: a file that changes what the simulator answers, not its engine (the
 * planted behaviour): kept as a path for the server parameters, checked when the
 * deployment is built. */
typedef enum { SIM_OPT_INT, SIM_OPT_DOUBLE, SIM_OPT_DTYPE, SIM_OPT_WEIGHTS, SIM_OPT_SWITCH,
               SIM_OPT_FILE } sim_opt_kind;

typedef struct sim_option {
  const char *name;      /* "max-num-seqs" (sim serve, sim run) */
  const char *sim_name;  /* "sim-max-num-seqs" (run) */
  const char *arg;       /* "N", "F", "bf16|fp8"; NULL for a switch */
  const char *help;      /* one line, the default in brackets */
  sim_opt_kind kind;
  double lo, hi;         /* INT and DOUBLE: the accepted range */
} sim_option;

#define SIM_OPTIONS_MAX 16

/* What the command line gave: set[i] for option i, its value in num or dtype. */
typedef struct sim_option_values {
  unsigned char set[SIM_OPTIONS_MAX];
  double num[SIM_OPTIONS_MAX];
  cb_sim_dtype dtype[SIM_OPTIONS_MAX];
  const char *path[SIM_OPTIONS_MAX]; /* SIM_OPT_FILE: the argument (borrowed from argv) */
} sim_option_values;

typedef struct sim_deployment {
  const char *model, *gpu, *profile; /* NULL: the defaults */
  sim_option_values opts;
} sim_deployment;

extern const sim_option sim_options[];
extern const size_t sim_options_count;

/* getopt_long entries for the table, `sim_options_count` of them at out: the --sim-
 * spelling when prefixed, with val first_val + i for option i. */
void sim_options_getopt(struct option *out, int prefixed, int first_val);
/* Parse option i's argument (NULL for a switch) into v. On a bad value it prints
 * "calibench: --NAME: expected ..., got '...'" and returns -1. */
int sim_options_parse(sim_option_values *v, size_t i, int prefixed, const char *arg);
/* 1 when any option was given. */
int sim_options_any(const sim_option_values *v);
/* Apply the given options to p, in table order. */
void sim_options_apply(const sim_option_values *v, cb_sim_params *p);
/* The --behavior FILE given (sim_behavior.h), or NULL: the server parameters'
 * behavior_path. */
const char *sim_options_behavior(const sim_option_values *v);
/* Help lines, the description starting at column `column`. */
void sim_options_usage(FILE *out, int prefixed, int column);
/* One line per option, tab-separated: name, argument ("-" for a switch), help. */
void sim_options_list(FILE *out);

/* Presets, profile, options, checks (see above) into p, and the behaviour file read
 * once to check it. Prints the error and returns -1 when the deployment is invalid,
 * does not fit or its behaviour file is wrong. */
int sim_deployment_build(const sim_deployment *d, cb_sim_params *p);

#endif
