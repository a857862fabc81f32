/*
 * session_internal.h - the session module's parts (session.h): one measured load
 * point (point.c) and several (sweep.c), the built-in simulator on a thread
 * (embedded_sim.c), the target check (target.c), server telemetry (scrape.c),
 * manifest.json (manifest.c), samples.json (samples.c), summary.json (result.c) and
 * what sim run changes (virtual.c).
 */
#ifndef CALIBENCH_SESSION_INTERNAL_H
#define CALIBENCH_SESSION_INTERNAL_H

#include "calibench/clock.h"
#include "calibench/runner.h"
#include "calibench/session.h"
#include "calibench/sim_run.h"

/* The endpoint a point measures. */
typedef struct cb__session_target {
  char url[2048];   /* base, ending in /v1 */
  char model[256];
  cb_buf models;    /* GET /v1/models answer, for manifests */
} cb__session_target;

struct cb_session {
  const cb_session_config *cfg;
  cb__session_target target; /* checked once with a url; else each point has its own */
  struct cb__live_metrics *live; /* every point's tally: with metrics_listen or a progress line */
  struct cb__metrics_listener *listener;
  char metrics_url[128];     /* "" without a listener */
};

/* Notes (not with cfg->quiet) and warnings, to cfg->log when there is one. */
void cb__session_note(const cb_session_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cb__session_warn(const cb_session_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 when a point shows a progress line: cfg->log is a terminal, not quiet, real time. */
int cb__session_progress_shown(const cb_session_config *cfg);

/* ---- a point (point.c) ------------------------------------------------------------- */

/* What a point changes from the configuration. */
typedef struct cb__session_point {
  const char *out_dir;     /* where this point writes */
  cb_arrival_kind arrival; /* the load: closed (concurrency) or an open-loop process */
  uint32_t concurrency;
  double rate;
  int class_filter;        /* -1: every class; else only this one (solo baseline) */
  int plain;               /* the configuration's own run (it alone writes --vllm-json) */
} cb__session_point;

/* The spec of a plain run (the configuration's own load, every class). */
void cb__session_point_default(const cb_session_config *cfg, cb__session_point *out);

/* Run one point and write its directory. Without a url the point starts (and stops)
 * a fresh built-in simulator; in virtual time the engine is the target. */
cb_session_outcome cb__session_point_run(const cb_session *s, const cb__session_point *spec,
                                         cb_session_result *out, cb_error *err);

/* ---- configuration (config.c) --------------------------------------------------------- */

void cb__session_runner_params(const cb_session_config *cfg, const char *endpoint,
                               cb_runner_params *out);
/* fds.c: CB_ERR_INVALID, saying what to do, when the load's known concurrency needs
 * more file descriptors than RLIMIT_NOFILE lets this process open. */
cb_status cb__session_fds_check(const cb_session_config *cfg, cb_error *err);
/* The SLOs a class is judged by: its own (scenario) when it has any, else cfg's. */
void cb__session_class_slos(const cb_session_config *cfg, const cb_workload_class *c,
                            cb_slo *out, size_t *n);

/* ---- result files ---------------------------------------------------------------------- */

/* summary.json: {"schema_version", "summary", "classes", "server"} (result.c). */
void cb__session_summary_json(const cb_session_result *r, cb_buf *out);

/* manifest.json; error: why the point failed after its directory was made, or NULL
 * (manifest.c). */
/* `,"behavior":{"path":...,"sha256":...}` for the simulator's --behavior file
 * (sim_behavior.h), or `,"behavior":null`: which planted truth answered the run. */
void cb__session_behavior_json(const cb_session_config *cfg, cb_buf *out);
void cb__session_manifest(const cb_session_config *cfg, const cb_workload *wl,
                          const cb_schedule *schedule, const cb_runner_stats *stats,
                          const cb_clock_anchor *start, const cb_clock_anchor *end,
                          const char *model,
                          const char *url, const cb_buf *models, const char *error,
                          cb_buf *out);

/* Bytes of each prompt samples.json keeps (cut on a character boundary). */
#define CB__SESSION_SAMPLE_PROMPT_MAX 4096

/* samples.json: the prompts of the requests a report shows as samples (the first
 * sent, the median and the slowest; cb_record_set_samples). records.jsonl keeps each
 * prompt's length, not its text; rendering the schedule entry again gives back the
 * exact text for the three shown. Nothing is appended when the set is empty
 * (samples.c). */
cb_status cb__session_samples_json(const cb_workload *wl, const cb_schedule *schedule,
                                   const cb_record_set *set, cb_buf *out, cb_error *err);

/* ---- the target (target.c) ------------------------------------------------------------- */

/*
 * GET BASE/models with the same headers and HTTP version the run will use. On success
 * `models` holds the answer's body (for the manifest) and *model is the requested one,
 * or the first listed when `requested` is NULL (written into model, at most
 * model_size bytes). Errors say what failed: connection ("cannot reach ..."), HTTP
 * status, a body that is not a model list, or a requested model the server does not
 * list (naming the ones it does).
 */
cb_status cb__session_target_check(const char *base_url, const char *const *headers,
                                   size_t n_headers, const char *api_key, int verify_tls,
                                   int http2, const char *requested, char *model,
                                   size_t model_size, cb_buf *models, cb_error *err);

/* ---- the built-in simulator on its own thread (embedded_sim.c) ------------------------ */

/* Its own event loop, so its work never shares the runner's loop; bound to 127.0.0.1
 * on a free port. */
typedef struct cb__session_sim cb__session_sim;

/* Start the server described by *p (port forced to 0, host to 127.0.0.1) on a new
 * thread and wait until it listens. *url gets "http://127.0.0.1:PORT/v1". */
cb_status cb__session_sim_start(const cb_sim_server_params *p, cb__session_sim **out, char *url,
                                size_t url_size, cb_error *err);
/* Stop the server, join its thread, free everything. NULL is a no-op. */
void cb__session_sim_stop(cb__session_sim *s);

/* ---- server telemetry (scrape.c) -------------------------------------------------------- */

/* A thread that GETs the server's Prometheus /metrics every interval, appends each
 * scrape to server_metrics.jsonl, and afterwards summarises the measured window
 * (gauges over time, counter deltas). */
typedef struct cb__session_scrape cb__session_scrape;

/*
 * Scrape `url` once now; when that works, keep scraping every interval_s on a thread
 * and append lines to jsonl_path. CB_ERR_NOT_FOUND when the first scrape fails or
 * the text has none of the known metric names (the caller decides whether that is an
 * error: it is for an explicit server_metrics URL, not for the default).
 */
cb_status cb__session_scrape_start(const char *url, double interval_s, const char *jsonl_path,
                                   cb__session_scrape **out, cb_error *err);
/* Take a last scrape and stop the thread. */
void cb__session_scrape_stop(cb__session_scrape *s);
/* Append `"server": {...}`: gauges over the window [start, end], counter deltas from
 * the first send to the last measured reply done_ns (monotonic ns, absolute).
 * set: NULL, or a live sessions run's records (times from origin_ns): then "turns",
 * each turn index's prefix cache counters where two scrapes isolate it. */
void cb__session_scrape_window_json(const cb__session_scrape *s, uint64_t start_ns,
                                    uint64_t end_ns, uint64_t done_ns, const cb_record_set *set,
                                    uint64_t origin_ns, cb_buf *out);
/* One line for the terminal: "KV cache mean 34% max 80%, ...". */
void cb__session_scrape_describe(const cb__session_scrape *s, uint64_t start_ns,
                                 uint64_t end_ns, uint64_t done_ns, char *out, size_t n);
void cb__session_scrape_free(cb__session_scrape *s);

/* ---- the run's own metrics, live (live_metrics.c, metrics_listen.c) --------------------- */

/* The tally of the requests of every point the session runs (docs/metrics.md). */
typedef struct cb__live_metrics cb__live_metrics;

/* A tally for these SLOs (the run's; copied). */
cb__live_metrics *cb__live_metrics_new(const cb_slo *slos, size_t n_slos);
void cb__live_metrics_free(cb__live_metrics *m);
/* cb_runner_request_fn over a tally (ctx): a request came due or was sent. */
void cb__live_metrics_request(void *ctx, cb_runner_request_step step, const char *class_name,
                              uint64_t lag_ns);
/* A request ended: its record, with its chunk times, as records.jsonl gets it. */
void cb__live_metrics_record(cb__live_metrics *m, const cb_record *r);
/* The run has ended: calibench_run_finished says 1 from now on. */
void cb__live_metrics_finish(cb__live_metrics *m);
/* Append the exposition text (Prometheus format 0.0.4) of the tally as it is now. */
void cb__live_metrics_render(cb__live_metrics *m, cb_buf *out);

/* What the progress line shows, from the same tally: sums over the classes, so that
 * a point's own figures are the difference from those at its start. */
typedef struct cb__live_totals {
  uint64_t due, sent, ok, failed;
  double ttft_sum_s;                 /* over ttft_count measured successes */
  uint64_t ttft_count;
  uint64_t judged, met[CB_MAX_SLOS]; /* measured requests, and those meeting each SLO */
  size_t n_slos;
  char slo_names[CB_MAX_SLOS][48];   /* "ttft<=0.5s" */
} cb__live_totals;
void cb__live_metrics_totals(cb__live_metrics *m, cb__live_totals *out);

/* An HTTP server on a thread of its own answering GET /metrics with the tally. */
typedef struct cb__metrics_listener cb__metrics_listener;

/* Bind spec ("ADDR:PORT", cb_session_listen_parse) and serve m from a new thread;
 * url gets "http://ADDR:PORT/metrics" with the port bound. CB_ERR_INVALID for a bad
 * spec, CB_ERR_NETWORK when the address cannot be bound (in use, not local). */
cb_status cb__metrics_listener_start(const char *spec, cb__live_metrics *m,
                                     cb__metrics_listener **out, char *url, size_t url_size,
                                     cb_error *err);
/* Close the listener and its connections, join the thread. NULL is a no-op. */
void cb__metrics_listener_stop(cb__metrics_listener *l);

/* ---- sim run: the engine in virtual time (virtual.c) ------------------------------------ */

/* The point's target: model = the profile's model; url = "sim://virtual"; models =
 * the /v1/models answer sim serve would give (for the manifest). */
void cb__session_virtual_target(const cb_session_config *cfg, cb__session_target *t);

/* 1 when the point may give the engine prompt ids straight from the workload (no
 * body): synthetic or trace datasets, the approximate tokenizer, no extra body, no
 * exact_prompts. Requests are then what sim serve would see (docs/sim-run.md). */
int cb__session_virtual_fast_ok(const cb_session_config *cfg, const cb_workload *wl,
                                const cb_workload_params *wp);

/* cb_sim_run_virtual with cfg's deployment and rp's load (chat, run id, concurrency,
 * max_concurrency, duration, stop). prompt may be NULL (every item has a body).
 * now_ns: NULL, or where the virtual clock goes before each call of the source. */
cb_status cb__session_virtual_run(const cb_session_config *cfg, const cb_runner_params *rp,
                                  cb_sim_vrun_prompt_fn prompt, void *prompt_ctx,
                                  cb_runner_source_fn source, void *source_ctx,
                                  cb_runner_record_fn on_record, void *record_ctx,
                                  uint64_t *now_ns, cb_runner_stats *stats, cb_error *err);

/* Manifest members of a predicted run (leading comma): "predicted": true, "clock":
 * "virtual", and "engine": the whole resolved profile with the replica count. */
void cb__session_virtual_manifest(const cb_session_config *cfg, cb_buf *out);

#endif
