/*
 * session.c - a session (session.h): the configuration checked, the workload opened
 * once before anything starts, the target checked; then the configuration's own
 * point. Sweeps and solo baselines are in sweep.c, a point in point.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "session_internal.h"

static void vlog(const cb_session_config *cfg, const char *fmt, va_list ap) {
  vfprintf(cfg->log, fmt, ap);
  fflush(cfg->log);
}

void cb__session_note(const cb_session_config *cfg, const char *fmt, ...) {
  if (!cfg->log || cfg->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(cfg, fmt, ap);
  va_end(ap);
}

void cb__session_warn(const cb_session_config *cfg, const char *fmt, ...) {
  if (!cfg->log) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(cfg, fmt, ap);
  va_end(ap);
}

int cb__session_progress_shown(const cb_session_config *cfg) {
  return cfg->log && isatty(fileno(cfg->log)) && !cfg->quiet && !cfg->virtual_time;
}

cb_session_outcome cb_session_open(const cb_session_config *cfg, cb_session **out,
                                   cb_error *err) {
  cb_error local;
  if (!err) err = &local;
  cb_error_clear(err);
  *out = NULL;
  if (cb_session_config_check(cfg, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  if (cb__session_fds_check(cfg, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  /* The workload is checked before anything is started: bad input fails fast. */
  cb_workload *probe = NULL;
  if (cb_workload_open(&cfg->workload, &probe, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  cb_workload_free(probe);
  cb_session *s = cb_calloc(1, sizeof *s);
  s->cfg = cfg;
  cb_buf_init(&s->target.models, 0);
  if (cfg->url) { /* without one each point checks the simulator it starts */
    snprintf(s->target.url, sizeof s->target.url, "%s", cfg->url);
    if (cb__session_target_check(s->target.url, cfg->headers, cfg->n_headers, cfg->api_key,
                                 cfg->verify_tls, cfg->http2, cfg->model, s->target.model,
                                 sizeof s->target.model, &s->target.models, err) != CB_OK) {
      cb_session_close(s);
      return CB_SESSION_FAILED;
    }
  }
  if (cb__session_progress_shown(cfg) || cfg->metrics_listen)
    s->live = cb__live_metrics_new(cfg->slos, cfg->n_slos);
  if (cfg->metrics_listen) {
    if (cb__metrics_listener_start(cfg->metrics_listen, s->live, &s->listener, s->metrics_url,
                                   sizeof s->metrics_url, err) != CB_OK) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      cb_error_set(err, CB_ERR_INVALID, "metrics_listen %s: %s", cfg->metrics_listen, why);
      cb_session_close(s);
      return CB_SESSION_BAD_INPUT;
    }
    cb__session_note(cfg, "calibench run: the run's metrics at %s\n", s->metrics_url);
  }
  *out = s;
  return CB_SESSION_OK;
}

const char *cb_session_metrics_url(const cb_session *s) { return s->metrics_url; }

const char *cb_session_target(const cb_session *s) {
  if (s->cfg->url) return s->target.url;
  return s->cfg->virtual_time ? "PREDICTED by the simulator in virtual time" : "the built-in simulator";
}

const char *cb_session_model(const cb_session *s) {
  return s->cfg->url ? s->target.model : s->cfg->sim.engine.model.name;
}

/* The final values stay up for a last scrape, unless a signal stopped the run. */
static void linger(const cb_session *s) {
  const cb_session_config *cfg = s->cfg;
  uint64_t until = cb_clock_now_ns() + (uint64_t)(cfg->metrics_linger_s * 1e9);
  if (cfg->stop && *cfg->stop) return;
  if (cfg->metrics_linger_s > 0)
    cb__session_note(cfg, "calibench run: serving the final metrics for %g s more\n",
                     cfg->metrics_linger_s);
  while (!(cfg->stop && *cfg->stop) && cb_clock_now_ns() < until) {
    struct timespec tick = {0, 20 * 1000 * 1000};
    nanosleep(&tick, NULL);
  }
}

void cb_session_close(cb_session *s) {
  if (!s) return;
  if (s->live) cb__live_metrics_finish(s->live);
  if (s->listener) linger(s);
  cb__metrics_listener_stop(s->listener);
  cb__live_metrics_free(s->live);
  cb_buf_free(&s->target.models);
  cb_free(s);
}

cb_session_outcome cb_session_run(cb_session *s, cb_session_result *out, cb_error *err) {
  cb_error local;
  if (!err) err = &local;
  cb_error_clear(err);
  cb__session_point spec;
  cb__session_point_default(s->cfg, &spec);
  return cb__session_point_run(s, &spec, out, err);
}
