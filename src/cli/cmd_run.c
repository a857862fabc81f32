/*
 * cmd_run.c - `calibench run`: load-test an OpenAI-compatible endpoint (or the
 * built-in simulator when no --url is given) and write result directories; and
 * `calibench sim run`, the same with the simulator engine in virtual time.
 *
 * Options are parsed and the workload checked before anything starts; then the
 * target is checked (GET /v1/models), then one point runs (run_point.c), or a sweep,
 * or the run and its solo baselines (run_sweep.c). Exit 0 when
 * the run completed, 130 when a signal stopped it (its results are written and
 * marked), 2 for bad input, 1 when the target could not be reached or written to.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "cli.h"
#include "run_config.h"
#include "run_output.h"
#include "run_point.h"
#include "run_sweep.h"
#include "run_target.h"

static volatile sig_atomic_t stop_signals;

static void on_stop_signal(int sig) {
  (void)sig;
  stop_signals++;
}

/* `run` and `sim run` (virtual_time: the engine in virtual time instead of a target,
 * run_virtual.c) share everything else: workload, points, sweeps, baselines, output. */
static int run_main(int argc, char **argv, int virtual_time) {
  run_config cfg;
  int rc = virtual_time ? run_config_parse_virtual(argc, argv, &cfg) : run_config_parse(argc, argv, &cfg);
  if (rc >= 0) { /* --help, or a usage error already printed */
    run_config_free(&cfg);
    return rc;
  }

  cb_error err;
  cb_error_clear(&err);
  run_target target = {0};
  cb_buf_init(&target.models, 0);
  run_summaries sums = {0};

  /* The workload is checked before anything is started: bad input fails fast. */
  cb_workload *probe = NULL;
  if (cb_workload_open(&cfg.workload, &probe, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    run_config_free(&cfg);
    return 2;
  }
  cb_workload_free(probe);

  rc = 1;
  if (cfg.url) { /* without --url each point checks the simulator it starts */
    snprintf(target.url, sizeof target.url, "%s", cfg.url);
    if (run_target_check(target.url, cfg.headers, cfg.n_headers, cfg.api_key, cfg.verify_tls,
                         cfg.http2, cfg.model, target.model, sizeof target.model, &target.models,
                         &err) != CB_OK)
      goto fail;
  }

  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int, old_term;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (cfg.sweep) {
    rc = run_sweep(&cfg, &target, &stop_signals);
  } else {
    run_point_spec spec;
    run_point_default(&cfg, &spec);
    rc = run_point(&cfg, &target, &spec, &stop_signals, &sums);
    if (rc == 0 || sums.all.requests) {
      if (!cfg.quiet)
        run_print_summary(stdout, &sums,
                          cfg.url ? target.url
                          : cfg.virtual_time ? "PREDICTED by the simulator in virtual time"
                                             : "the built-in simulator",
                          cfg.url ? target.model : cfg.sim.engine.model.name, cfg.out_dir);
      if (rc == 0 && sums.all.interrupted) rc = 130;
    }
    if (rc == 0 && cfg.solo_baseline) rc = run_solo_baselines(&cfg, &target, &sums, &stop_signals);
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  goto done;
fail:
  fprintf(stderr, "calibench: %s\n", err.msg);
done:
  run_summaries_free(&sums);
  cb_buf_free(&target.models);
  run_config_free(&cfg);
  return rc;
}

int cli_run_main(int argc, char **argv) { return run_main(argc, argv, 0); }

int cli_sim_run_main(int argc, char **argv) { return run_main(argc, argv, 1); }
