/*
 * cli.h - entry points of the subcommands. Each takes argv starting at its own name
 * and returns the process exit status (0 ok, 1 failure, 2 usage or input error).
 */
#ifndef CALIBENCH_CLI_H
#define CALIBENCH_CLI_H

#include <signal.h>

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
/* `probe context`, `probe perturb`, `probe dialog`, `probe agent` (argv[0] = the probe's
 * name): run's options plus the probe's own (cmd_probe_<probe>.c). */
int cli_probe_context_main(int argc, char **argv);
int cli_probe_perturb_main(int argc, char **argv);
int cli_probe_dialog_main(int argc, char **argv);
int cli_probe_agent_main(int argc, char **argv);
int cli_probe_quant_main(int argc, char **argv);
/* `probe embed` (cmd_probe_embed.c): two /v1/embeddings endpoints, not a session. */
int cli_probe_embed_main(int argc, char **argv);

/* SIGINT/SIGTERM while a measurement runs (stop_signal.c): each bumps cli_stop_signals,
 * which the session's cfg.stop points at; catch before, release after. */
extern volatile sig_atomic_t cli_stop_signals;
typedef struct cli_stop_handlers {
  struct sigaction old_int, old_term;
} cli_stop_handlers;
void cli_stop_catch(cli_stop_handlers *h);
void cli_stop_release(const cli_stop_handlers *h);

#endif
