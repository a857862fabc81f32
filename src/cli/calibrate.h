/*
 * calibrate.h - the subcommands of `calibench calibrate`, dispatched by cmd_calibrate.c.
 * Each takes argv starting at its own name ("drift", ...) and returns the process exit
 * status (0 ok, 1 failure, 2 usage or input error). One section per half of the command.
 */
#ifndef CALIBENCH_CLI_CALIBRATE_H
#define CALIBENCH_CLI_CALIBRATE_H

#include "calibench/buf.h"
#include "calibench/error.h"

/* ---- shared by every subcommand (cmd_calibrate.c) ------------------------------------ */
/* Print the table (or the JSON with json_stdout) and write the JSON to out_path when
 * given; 0, or 1 when stdout or the file cannot be written (the message says which). */
int cli_calibrate_emit(const char *sub, const cb_buf *table, const cb_buf *json, int json_stdout,
                       const char *out_path);
/* Print "calibench: calibrate SUB: MESSAGE" and return 2 (an input or usage error). */
int cli_calibrate_input_error(const char *sub, const cb_error *err);

/* ---- data, environment, task and cost calibration (calibrate_stats.c) ---------------- */
int cli_calibrate_drift(int argc, char **argv);
int cli_calibrate_expect(int argc, char **argv);
int cli_calibrate_cost(int argc, char **argv);

/* ---- performance calibration (roofline, fit, perf, sla) (calibrate_perf.c) ----------- */
int cli_calibrate_roofline(int argc, char **argv);
int cli_calibrate_fit(int argc, char **argv);
int cli_calibrate_perf(int argc, char **argv);
int cli_calibrate_sla(int argc, char **argv);

#endif
