/*
 * probe_session.c - the one session a `probe` command runs (probe_session.h).
 */
#include "probe_session.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "run_output.h"

cb_session_outcome probe_session_run(const char *probe, cb_session_config *cfg, cb_session **s,
                                     cb_session_result *r, cb_error *err) {
  memset(r, 0, sizeof *r);
  cfg->stop = &cli_stop_signals;
  cb_session_outcome o = cb_session_open(cfg, s, err);
  if (o != CB_SESSION_OK) {
    fprintf(stderr, "calibench: probe %s: %s\n", probe, err->msg);
    return o;
  }
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  o = cb_session_run(*s, r, err);
  cli_stop_release(&stop_handlers);
  if (o != CB_SESSION_OK) fprintf(stderr, "calibench: probe %s: %s\n", probe, err->msg);
  if ((o == CB_SESSION_OK || r->all.requests) && !cfg->quiet)
    run_print_summary(stdout, r, cb_session_target(*s), cb_session_model(*s), cfg->out_dir);
  return o;
}
