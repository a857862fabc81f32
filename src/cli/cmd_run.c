/*
 * cmd_run.c - `calibench run`: load-test an OpenAI-compatible endpoint (or the
 * built-in simulator when no --url is given) and write result directories; and
 * `calibench sim run`, the same with the simulator engine in virtual time.
 *
 * Options are parsed into a session's configuration (run_config.c); the session
 * (calibench/session.h) checks the workload and the target (GET /v1/models) before
 * anything starts, then runs one point, or a sweep, or the run and its solo
 * baselines; this file prints what they came to. Exit 0 when
 * the run completed, 130 when a signal stopped it (its results are written and
 * marked), 2 for bad input, 1 when the target could not be reached or written to.
 */
#include <signal.h>
#include <stdio.h>

#include "calibench/alloc.h"
#include "cli.h"
#include "run_config.h"
#include "run_output.h"

static volatile sig_atomic_t stop_signals;

static void on_stop_signal(int sig) {
  (void)sig;
  stop_signals++;
}

/* The session's errors are printed here; a point that ran but was stopped is 130. */
static int failed(cb_session_outcome o, const cb_error *err) {
  if (o != CB_SESSION_OK) fprintf(stderr, "calibench: %s\n", err->msg);
  return (int)o;
}

/* The run and, with --solo-baseline, each class alone; the summaries printed. */
static int run_plain(cb_session *s, const cb_session_config *cfg, int solo_baseline) {
  cb_error err;
  cb_session_result mix;
  cb_session_outcome o = cb_session_run(s, &mix, &err);
  int rc = failed(o, &err);
  if (o == CB_SESSION_OK || mix.all.requests) {
    if (!cfg->quiet)
      run_print_summary(stdout, &mix, cb_session_target(s), cb_session_model(s), cfg->out_dir);
    if (o == CB_SESSION_OK && mix.all.interrupted) rc = 130;
  }
  if (rc == 0 && solo_baseline) {
    cb_session_result *solo = cb_calloc(mix.n_classes ? mix.n_classes : 1, sizeof *solo);
    size_t n = 0;
    o = cb_session_run_solo(s, &mix, solo, &n, &err);
    rc = failed(o, &err);
    if (!cfg->quiet) run_print_interference(stdout, &mix, solo, n);
    for (size_t i = 0; i < n; i++) cb_session_result_free(&solo[i]);
    cb_free(solo);
    if (rc == 0 && stop_signals) rc = 130;
  }
  cb_session_result_free(&mix);
  return rc;
}

static int run_sweep(cb_session *s, const cb_session_config *cfg) {
  cb_error err;
  cb_session_sweep sw;
  cb_session_outcome o = cb_session_run_sweep(s, &sw, &err);
  size_t ran = 0;
  for (size_t i = 0; i < sw.n_points; i++) ran += sw.points[i].ran;
  if (ran && !cfg->quiet) run_print_sweep(stdout, cfg, &sw);
  int rc = failed(o, &err);
  cb_session_sweep_free(&sw);
  return rc == 0 && stop_signals ? 130 : rc;
}

/* `run` and `sim run` (virtual_time: the engine in virtual time instead of a target)
 * share everything else: workload, points, sweeps, baselines, output. */
static int run_main(int argc, char **argv, int virtual_time) {
  cb_session_config cfg;
  int solo_baseline = 0;
  int rc = virtual_time ? run_config_parse_virtual(argc, argv, &cfg, &solo_baseline)
                        : run_config_parse(argc, argv, &cfg, &solo_baseline);
  if (rc >= 0) { /* --help, or a usage error already printed */
    cb_session_config_free(&cfg);
    return rc;
  }
  cfg.stop = &stop_signals;
  cb_error err;
  cb_session *s = NULL;
  rc = failed(cb_session_open(&cfg, &s, &err), &err);
  if (rc == 0) {
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = cfg.sweep ? run_sweep(s, &cfg) : run_plain(s, &cfg, solo_baseline);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  cb_session_close(s);
  cb_session_config_free(&cfg);
  return rc;
}

int cli_run_main(int argc, char **argv) { return run_main(argc, argv, 0); }

int cli_sim_run_main(int argc, char **argv) { return run_main(argc, argv, 1); }
