/*
 * cli.h - entry points of the subcommands. Each takes argv starting at its own name
 * and returns the process exit status (0 ok, 1 failure, 2 usage or input error).
 */
#ifndef CALIBENCH_CLI_H
#define CALIBENCH_CLI_H

int cli_sim_main(int argc, char **argv);
int cli_run_main(int argc, char **argv);
/* `sim run` (argv[0] = "run"): run's machinery in virtual time (cmd_run.c). */
int cli_sim_run_main(int argc, char **argv);
int cli_tokenize_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_merge_main(int argc, char **argv);
int cli_calibrate_main(int argc, char **argv);
int cli_store_main(int argc, char **argv);
int cli_history_main(int argc, char **argv);
int cli_gate_main(int argc, char **argv);
int cli_eval_main(int argc, char **argv);
int cli_eval_judge_main(int argc, char **argv);
/* `eval run` (argv[0] = "run"): run's options plus an evaluation dataset (cmd_eval_run.c). */
int cli_eval_run_main(int argc, char **argv);
/* `probe <probe> ...` (cmd_probe.c), each probe in cmd_probe_<probe>.c. */
int cli_probe_main(int argc, char **argv);
/* `probe perturb` (cmd_probe_perturb.c). */
int cli_probe_perturb_main(int argc, char **argv);

#endif
