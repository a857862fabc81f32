/*
 * fds.c - whether this process may open the sockets a run's load needs.
 *
 * Every stream in flight over HTTP/1.1 is one socket, and with the built-in simulator
 * (which runs in this process) one more for the server's end. Past RLIMIT_NOFILE
 * each further connection would fail at once as a connect error: a run whose
 * concurrency is known to need more is refused before it starts, with what to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "session_internal.h"

/* Descriptors a run holds besides its sockets: stdio, the result files, the epoll
 * sets, the telemetry scraper's connection, the simulator's listener, a tokenizer. */
#define FD_RESERVE 64

/* The most streams a run of cfg holds at once; 0 when the load does not bound it (an
 * open loop without max_concurrency). */
static uint64_t streams(const cb_session_config *cfg) {
  switch (cfg->sweep) {
    case CB_SESSION_SWEEP_CONCURRENCY: return (uint64_t)cfg->sweep_values[cfg->n_sweep - 1];
    case CB_SESSION_SWEEP_AUTO: return (uint64_t)cfg->sweep_max_concurrency;
    case CB_SESSION_SWEEP_RATE: return (uint64_t)cfg->max_concurrency;
    case CB_SESSION_SWEEP_NONE: break;
  }
  if (cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED) return cfg->workload.concurrency;
  return (uint64_t)cfg->max_concurrency;
}

cb_status cb__session_fds_check(const cb_session_config *cfg, cb_error *err) {
  uint64_t n = streams(cfg);
  /* HTTP/2 multiplexes streams on one connection; in virtual time there are none. */
  if (!n || cfg->http2 || cfg->virtual_time) return CB_OK;
  int embedded = !cfg->url;
  uint64_t need = n * (embedded ? 2 : 1) + FD_RESERVE;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return cb_error_set(err, CB_ERR_IO, "session: getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
  if (rl.rlim_cur == RLIM_INFINITY || need <= (uint64_t)rl.rlim_cur) return CB_OK;
  char hard[32];
  if (rl.rlim_max == RLIM_INFINITY) snprintf(hard, sizeof hard, "unlimited");
  else snprintf(hard, sizeof hard, "%llu", (unsigned long long)rl.rlim_max);
  /* Below the hard limit the soft one can go up (calibench run raises it at start; a
   * library caller may not have); at it, only privilege helps. */
  const char *raise = rl.rlim_cur < rl.rlim_max
                          ? "raise the soft limit (ulimit -n, or cb_fdlimit_raise)"
                          : "raise the hard limit (as root: prlimit --nofile=N:N, or limits.conf)";
  return cb_error_set(err, CB_ERR_INVALID,
                      "session: %llu streams at once need about %llu file descriptors (%s%d "
                      "more for files), but this process may open %llu (RLIMIT_NOFILE soft "
                      "limit; hard limit %s): %s, lower the concurrency, or split the load "
                      "over processes (run --shard i/N; docs/run.md, \"Scale\")",
                      (unsigned long long)n, (unsigned long long)need,
                      embedded ? "a socket at each end, the built-in simulator runs in this "
                                 "process, and "
                               : "a socket each, and ",
                      FD_RESERVE, (unsigned long long)rl.rlim_cur, hard, raise);
}
