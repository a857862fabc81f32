/*
 * probe_session.h - the one session a `probe` command runs (dialog, perturb): opened,
 * run under the stop signals, its failure and its terminal summary printed.
 */
#ifndef CALIBENCH_CLI_PROBE_SESSION_H
#define CALIBENCH_CLI_PROBE_SESSION_H

#include "calibench/session.h"

/* Opens a session of cfg (stopped by cli_stop_signals) into *s and runs it into *r
 * with SIGINT/SIGTERM caught. A failure is printed as "calibench: probe PROBE: ...";
 * the summary (unless cfg->quiet) when the run sent anything. *r is zeroed first, so
 * it may be freed (cb_session_result_free) and *s closed whatever the outcome. */
cb_session_outcome probe_session_run(const char *probe, cb_session_config *cfg, cb_session **s,
                                     cb_session_result *r, cb_error *err);

#endif
