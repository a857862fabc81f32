/*
 * session.h - one measured run, as `calibench run` and `calibench sim run` make it,
 * for any program that sends requests: a configuration (target, workload, load,
 * outputs, SLOs, telemetry, the built-in simulator), checked, then one load point or
 * a sweep of them, each written to a result directory (records.jsonl, summary.json,
 * manifest.json, samples.json, server_metrics.jsonl, report.html: docs/results.md).
 *
 *   cb_session_config cfg;
 *   cb_session_config_init(&cfg);            // the defaults `calibench run` has
 *   cfg.workload.num_requests = 50;          // ... set what differs
 *   snprintf(cfg.out_dir, sizeof cfg.out_dir, "results/mine");
 *   cb_session *s;
 *   cb_error err;
 *   if (cb_session_open(&cfg, &s, &err) != CB_SESSION_OK) ... err.msg says why
 *   cb_session_result r;
 *   cb_session_outcome o = cb_session_run(s, &r, &err);   // one point, cfg.out_dir
 *   ... r.all is its summary; cb_session_result_free(&r)
 *   cb_session_close(s);
 *   cb_session_config_free(&cfg);
 *
 * A whole example that compiles is in docs/library.md.
 *
 * Where the requests go: cfg.url (any OpenAI-compatible server), or, without one, a
 * built-in simulator (cfg.sim) started on 127.0.0.1 for each point and stopped after
 * it; or, with cfg.virtual_time, the simulator engine in virtual time (no HTTP, the
 * run marked predicted). The session calls nothing of the CLI and prints only to
 * cfg.log (notes, warnings, the progress line on a terminal), never when it is NULL.
 *
 * Callers with prompts of their own (`eval run`, `probe`): the prompts are the
 * workload's dataset (a jsonl: or chat: file, cfg.cls.dataset, docs/workload.md:
 * every prompt with its max_tokens, the order kept with a closed loop), and every
 * finished request comes back through cfg.on_record as well as in records.jsonl:
 * its index is the dataset item's, its output_text the model's answer (cut to
 * CB_SESSION_OUTPUT_TEXT_MAX bytes). A dataset held in memory is the next step
 * (it belongs to the workload module); the session will take it unchanged.
 *
 * Callers whose requests depend on earlier answers (a multi-turn conversation sent
 * live, each turn with the model's real replies: `probe dialog`): cfg.live instead
 * of the workload's prompts. The session asks it for each request when a slot is
 * free (a closed loop: cfg.workload.concurrency conversations at a time), hands
 * every answer to cfg.on_record before asking again, and ends the point when it
 * says there are no more (cb_session_live_fn).
 */
#ifndef CALIBENCH_SESSION_H
#define CALIBENCH_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/fdlimit.h"
#include "calibench/results.h"
#include "calibench/runner.h"
#include "calibench/sim_server.h"
#include "calibench/tok.h"
#include "calibench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_SESSION_MAX_HEADERS 64
#define CB_SESSION_MAX_SWEEP 64
/* Bytes of each answer a record keeps by default (cfg.max_output_text): a run keeps
 * enough to show; scoring (`eval`, `probe`) asks for CB_SESSION_ANSWER_MAX. */
#define CB_SESSION_OUTPUT_TEXT_MAX 4096
#define CB_SESSION_ANSWER_MAX ((size_t)1 << 20)

typedef enum {
  CB_SESSION_SWEEP_NONE = 0,
  CB_SESSION_SWEEP_CONCURRENCY, /* closed loop at each of sweep_values */
  CB_SESSION_SWEEP_RATE,        /* open loop at each of sweep_values (req/s) */
  CB_SESSION_SWEEP_AUTO         /* concurrency 1, sweep_max_concurrency, then rates between */
} cb_session_sweep_kind;

/* Each finished request, after it is written to records.jsonl; the record is the
 * session's (copy what is kept). Called on the thread that called cb_session_run*. */
typedef void (*cb_session_record_fn)(void *ctx, const cb_record *rec);

/* A request a live source built (cb_session_live_fn). Its memory is the source's
 * until its next call. The session adds the model, streaming and cfg.extra_body. */
typedef struct cb_session_live_request {
  uint64_t index;              /* the record's index: unique in the run, the caller's key */
  const char *messages_json;   /* chat: a JSON array of message objects ... */
  size_t messages_json_len;
  const char *prompt;          /* ... or one prompt (chat: one user message) */
  size_t prompt_len;
  int64_t max_tokens;          /* < 0: none */
  const char *extra_json;      /* NULL, or a JSON object of members for this body (a
                                  "seed"); cfg.extra_body's members win over these */
  size_t extra_json_len;
  uint64_t now_ns;             /* in: the time of this call, ns after the run start (the
                                  records' offsets count from the same start) */
  uint64_t at_ns;              /* planned send, ns after the run start (<= now_ns: sent at
                                  once; 0 for "now"); with CB_SESSION_LIVE_LATER, when to
                                  ask again */
  int has_session;             /* 1: a turn of a multi-turn session: the record says so */
  uint64_t session;            /* its session's id */
  uint32_t turn;               /* its index in the session */
} cb_session_live_request;

/* Returned by a live source when no request is ready until an answer in flight
 * comes back (CB_RUNNER_SOURCE_WAIT, runner.h). */
#define CB_SESSION_LIVE_WAIT CB_RUNNER_SOURCE_WAIT
/* Returned by a live source when its next request is not ready before out->at_ns
 * (a think time), unless an answer comes first: the session asks again then and
 * does not end the point meanwhile (CB_RUNNER_SOURCE_LATER). */
#define CB_SESSION_LIVE_LATER CB_RUNNER_SOURCE_LATER

/* Fill *out and return 1; return 0 when there are no more requests; or return
 * CB_SESSION_LIVE_WAIT when the next one needs an answer still in flight: the
 * session asks again after the next cfg.on_record. Waiting while nothing is in
 * flight ends the point (nothing could wake the source). Called on the thread that
 * called cb_session_run. */
typedef int (*cb_session_live_fn)(void *ctx, cb_session_live_request *out);

/*
 * What to run. Strings are borrowed (they must outlive the session) except those
 * marked owned: those are freed by cb_session_config_free (allocate them with
 * cb_strdup, or load them with cb_scenario_load / cb_tok_load).
 */
typedef struct cb_session_config {
  /* target */
  const char *url;                 /* owned: base URL ending in /v1; NULL = built-in simulator */
  int chat;                        /* 1: /chat/completions (default); 0: /completions */
  const char *model;               /* NULL: the first model the server lists */
  const char *headers[CB_SESSION_MAX_HEADERS]; /* "Name: value" on every request */
  size_t n_headers;
  const char *api_key_env;         /* name of the variable the key came from (manifest) */
  char *api_key;                   /* owned; wiped on free; never printed or written */
  int auth_header;                 /* a header gives Authorization: it wins, no key sent */
  int verify_tls;                  /* 1 */
  int http2;
  int libcurl;                     /* libcurl reads http:// too */
  double request_timeout_s;        /* 0: none */
  const char *source_addrs;        /* NULL: the kernel picks; else local addresses new
                                      connections are spread over (runner.h,
                                      cb_runner_source_addrs_parse) */
  cb_fdlimit fd_limit;             /* what the caller did to RLIMIT_NOFILE
                                      (cb_fdlimit_raise), for the manifest; zero: nothing */
  size_t max_output_text;          /* bytes of each answer a record keeps
                                      (CB_SESSION_OUTPUT_TEXT_MAX); past it the record
                                      says output_text_cut */
  size_t max_choice_events;        /* bytes of raw response events each record keeps for
                                      on_record (cb_record.choice_events: top_logprobs,
                                      refusal); 0 (default): none */
  int retries;
  const char *extra_body;          /* JSON object merged into every body */
  /* the built-in simulator (url NULL): cb_sim_server_default_params, seed = workload's */
  cb_sim_server_params sim;
  /* sim run: the simulator engine in virtual time instead of a target */
  int virtual_time;
  int exact_prompts;               /* render and parse every body even where ids suffice */
  /* workload: `workload.classes` points at `cls` unless a scenario gives the classes */
  cb_workload_params workload;
  cb_workload_class_params cls;    /* the one class when there is no scenario */
  cb_scenario *scenario;           /* owned, or NULL */
  const char *scenario_path;       /* for the manifest */
  cb_tok *tok;                     /* owned, or NULL: counts prompts and (without usage) outputs */
  cb_tok_source tok_source;        /* owned: where tok came from (path, how), or, when the
                                      model's tokenizer was looked for and not found, why
                                      (how; path NULL): the manifest's tokenizer_source */
  int ignore_eos;
  int max_concurrency;             /* open loop: cap in flight (0: none) */
  double requested_rate;           /* open loop: the rate asked for (manifest), 0 otherwise */
  /* sweeps and baselines */
  cb_session_sweep_kind sweep;
  double sweep_values[CB_SESSION_MAX_SWEEP]; /* increasing */
  size_t n_sweep;
  int sweep_points;                /* auto: open-loop rates between the two ends (5) */
  int sweep_max_concurrency;       /* auto: the throughput point's concurrency (64) */
  double slo_attainment;           /* capacity at SLO: joint attainment needed (0.99) */
  /* server telemetry */
  const char *server_metrics;      /* URL; NULL: the target's /metrics when it answers */
  int no_server_metrics;
  double scrape_interval_s;        /* 1 */
  /* the run's own metrics, live (real time only: docs/metrics.md) */
  const char *metrics_listen;      /* "ADDR:PORT" (a numeric IPv4 address, or [IPv6]; port 0:
                                      any free one, said in a note) to serve the run's own
                                      Prometheus metrics on, from cb_session_open to
                                      cb_session_close; NULL: none */
  double metrics_linger_s;         /* cb_session_close keeps serving the final values this
                                      long (0), unless *stop was set */
  /* measurement */
  cb_slo slos[CB_MAX_SLOS];
  size_t n_slos;
  double confidence;               /* 0.95 */
  double drain_timeout_s;          /* 30 */
  volatile sig_atomic_t *stop;     /* NULL, or signals seen: 1 drains, 2 cuts (runner.h) */
  /* output */
  char out_dir[1024];              /* the result directory (a sweep: its points below) */
  const char *vllm_json;           /* also vLLM's result keys here (one point only) */
  const char *label;               /* for the vLLM JSON */
  int no_report;                   /* no report.html in the result directory */
  char run_id[24];                 /* X-Request-Id prefix; init: from the time and pid */
  /* what the caller sees */
  FILE *log;                       /* notes, warnings, progress; NULL: nothing printed */
  int quiet;                       /* notes and progress off (warnings still go to log) */
  cb_session_record_fn on_record; /* NULL: none */
  void *record_ctx;
  /* live requests (NULL: the workload's prompts): one point, no sweep; in real time,
   * or with virtual_time on the simulator's virtual clock (now_ns and at_ns then in
   * the records' virtual time); the workload is then only described in the
   * manifest, which says "live": true, and samples.json is not written */
  cb_session_live_fn live;
  void *live_ctx;
  /* live sessions (run --sessions, live_sessions.h): what the manifest says of them */
  const char *sessions_path;       /* NULL: none */
  const char *sessions_format;     /* what sessions_path is: NULL a sessions file; "sharegpt"
                                    * or "chat" a dataset (--sharegpt-mode live) */
  const char *think_time;          /* the think time's text (cb_think_describe) */
} cb_session_config;

/* The defaults of `calibench run`: the built-in simulator (llama-3.1-8b on one
 * h100-sxm), chat, a synthetic workload of 100 requests at concurrency 1, out_dir
 * results/<UTC time>-<run id>, log NULL. */
void cb_session_config_init(cb_session_config *cfg);
/* out_dir = results/<UTC time>-<run_id> (init sets it; again after a new run_id). */
void cb_session_config_default_out_dir(cb_session_config *cfg);
/* Free what the config owns (url, api_key wiped first, scenario, tok) and zero it. */
void cb_session_config_free(cb_session_config *cfg);
/* CB_ERR_INVALID with "session: FIELD: expected ..." (and ", got VALUE" for numbers)
 * for the first field out of range or fields that exclude each other; CB_OK
 * otherwise. What the fields refer to (the dataset, the scenario, the target) is
 * checked by cb_session_open. */
cb_status cb_session_config_check(const cb_session_config *cfg, cb_error *err);

/* How a call ended; the values are calibench's exit statuses. */
typedef enum {
  CB_SESSION_OK = 0,        /* it ran (maybe stopped early: result.all.interrupted) */
  CB_SESSION_FAILED = 1,    /* the target, the network or the disk failed (err says what) */
  CB_SESSION_BAD_INPUT = 2, /* the config, the workload, a result directory already
                               used, or a request that could not be prepared */
} cb_session_outcome;

typedef struct cb_session cb_session;

/*
 * Check cfg (cb_session_config_check), open its workload (a bad dataset, scenario or
 * schedule is BAD_INPUT before anything starts) and check the target: GET /v1/models
 * with the run's headers, picking cfg->model or the first listed (FAILED when it
 * does not answer). cfg is borrowed: it must outlive the session, unchanged.
 */
cb_session_outcome cb_session_open(const cb_session_config *cfg, cb_session **out,
                                   cb_error *err);
/* cfg.metrics_listen's "ADDR:PORT": a numeric IPv4 address or a bracketed IPv6 one
 * ("[::1]:9464"), and a port 0..65535. host gets the address (without brackets).
 * CB_ERR_INVALID "expected ADDR:PORT ..., got '...'" otherwise (no names: what is
 * bound is what was asked). */
cb_status cb_session_listen_parse(const char *spec, char host[64], uint16_t *port,
                                  cb_error *err);
/* Where the run's metrics are served ("http://127.0.0.1:9464/metrics", the port the
 * system gave for port 0), or "" without cfg.metrics_listen. */
const char *cb_session_metrics_url(const cb_session *s);
/* The checked target (for messages): its base URL and model, or for the built-in
 * simulator "the built-in simulator" / "PREDICTED by the simulator in virtual
 * time" and the simulated model. */
const char *cb_session_target(const cb_session *s);
const char *cb_session_model(const cb_session *s);
/* With cfg.metrics_listen: marks the run finished, serves the final values for
 * cfg.metrics_linger_s (cut short by *cfg.stop), then stops the listener. */
void cb_session_close(cb_session *s);

/* One point's result directory and its summaries. */
typedef struct cb_session_result {
  char dir[1200];            /* where it was written */
  char label[64];            /* sweeps: "concurrency=4", "rate=2.5"; "" for a plain run */
  cb_arrival_kind arrival;   /* its load */
  uint32_t concurrency;
  double rate;
  int ran;                   /* 1 when it ran to its end (interrupted or not) */
  cb_summary all;            /* every class */
  cb_summary *classes;       /* one per class when there are several, else NULL */
  size_t n_classes;
  cb_buf server_json;        /* `"server": {...}` from the telemetry, empty without */
  char server_line[512];     /* its one-line description, "" without */
} cb_session_result;

void cb_session_result_free(cb_session_result *r);

/*
 * The configuration's own run: its load, every class, written to cfg->out_dir.
 * *out is filled whenever the directory was made (free it either way). A point
 * that fails after its directory exists still writes summary.json and a manifest
 * whose "error" says what went wrong.
 */
cb_session_outcome cb_session_run(cb_session *s, cb_session_result *out, cb_error *err);

/* A sweep (cfg->sweep): every point in OUT/points/NN-<label>/, then OUT/sweep.json
 * with the load-latency curve and capacity at SLO. */
typedef struct cb_session_sweep {
  cb_session_result *points; /* n_points, in the order run */
  size_t n_points;
  long capacity_point;       /* index of the capacity at SLO, -1 when none */
} cb_session_sweep;

cb_session_outcome cb_session_run_sweep(cb_session *s, cb_session_sweep *out, cb_error *err);
void cb_session_sweep_free(cb_session_sweep *sw);

/* After the mixed run `mix` (a scenario of several classes, already run): each class
 * alone in OUT/solo/<class>/ with the same requests at the same times, then
 * OUT/interference.json. out has room for mix->n_classes results; *n_out gets how
 * many were started (free each of those; .ran says which ran to their end). */
cb_session_outcome cb_session_run_solo(cb_session *s, const cb_session_result *mix,
                                       cb_session_result *out, size_t *n_out, cb_error *err);
/* A class's p99 of metric in the mix over its p99 alone; NAN when either is missing. */
double cb_session_interference(const cb_summary *mix, const cb_summary *solo, cb_metric metric);

#ifdef __cplusplus
}
#endif
#endif
