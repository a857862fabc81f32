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
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/live_sessions.h"
#include "cli.h"
#include "run_config.h"
#include "run_output.h"

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
    if (rc == 0 && cli_stop_signals) rc = 130;
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
  return rc == 0 && cli_stop_signals ? 130 : rc;
}

/* run --sessions: the conversations of the file as the run's live source. 0, or 2
 * after saying why. */
static int sessions_attach(cb_session_config *cfg, cb_conversations *convs, cb_live_sessions **ls,
                           char *think_text, size_t size) {
  cb_error err;
  cb_live_sessions_params p = {.convs = convs, .seed = cfg->workload.seed,
                               .arrival = cfg->workload.arrival,
                               .users = cfg->workload.concurrency,
                               /* a turn without its own max_tokens: --output-len */
                               .max_tokens = (int64_t)cfg->cls.data.output_len.mean};
  if (cfg->think_time && cb_think_parse(cfg->think_time, &p.think, &err) != CB_OK) {
    fprintf(stderr, "calibench: --think-time: %s\n", err.msg);
    return 2;
  }
  const char *format = cfg->sessions_format;
  const char *flag = format ? "--sharegpt-mode live" : "--sessions";
  if (!cfg->chat) {
    fprintf(stderr, "calibench: %s: sessions are chat conversations: use --api chat\n", flag);
    return 2;
  }
  if (cfg->sweep) {
    fprintf(stderr, "calibench: %s: sessions run as one point: --sweep does not apply\n", flag);
    return 2;
  }
  const cb_token_counter *counter = &cfg->workload.counter;
  uint32_t override = cfg->cls.data.output_len_override;
  cb_status st =
      !format ? cb_conversations_load(cfg->sessions_path, convs, &err)
      : !strcmp(format, "chat")
          ? cb_conversations_load_chat(cfg->sessions_path, counter, override, convs, NULL, &err)
          : cb_conversations_load_sharegpt(cfg->sessions_path, counter, override, convs, NULL,
                                           &err);
  if (st != CB_OK || cb_live_sessions_new(&p, ls, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s: %s\n", flag, err.msg);
    return 2;
  }
  cb_think_describe(&p.think, think_text, size);
  cfg->think_time = think_text;
  cb_live_sessions_attach(*ls, cfg);
  return 0;
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
  cfg.stop = &cli_stop_signals;
  /* Each stream is a socket: the soft limit (often 1024) goes up to the hard one. */
  if (!virtual_time) cb_fdlimit_raise(&cfg.fd_limit);
  cb_error err;
  cb_session *s = NULL;
  cb_conversations convs = {0};
  cb_live_sessions *ls = NULL;
  char think_text[96];
  if (cfg.think_time && !cfg.sessions_path) {
    fprintf(stderr, "calibench: --think-time: only with --sessions or --sharegpt-mode live (the "
                    "wait between a reply and the next turn of a session)\n");
    rc = 2;
    goto out;
  }
  if (cfg.sessions_path) {
    rc = sessions_attach(&cfg, &convs, &ls, think_text, sizeof think_text);
    if (rc) goto out;
  }
  rc = failed(cb_session_open(&cfg, &s, &err), &err);
  if (rc == 0) {
    cli_stop_handlers stop_handlers;
    cli_stop_catch(&stop_handlers);
    rc = cfg.sweep ? run_sweep(s, &cfg) : run_plain(s, &cfg, solo_baseline);
    cb_session_close(s); /* --metrics-linger waits in it: a signal cuts it short */
    s = NULL;
    cli_stop_release(&stop_handlers);
  }
out:
  cb_session_close(s);
  cb_session_config_free(&cfg);
  cb_live_sessions_free(ls);
  cb_conversations_free(&convs);
  return rc;
}

int cli_run_main(int argc, char **argv) { return run_main(argc, argv, 0); }

int cli_sim_run_main(int argc, char **argv) { return run_main(argc, argv, 1); }
