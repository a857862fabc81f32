/*
 * run_config.h - `calibench run`'s options: parsing and checking them, turning them
 * into the library's parameter structs, and writing them back out as the manifest's
 * resolved configuration.
 */
#ifndef CALIBENCH_CLI_RUN_CONFIG_H
#define CALIBENCH_CLI_RUN_CONFIG_H

#include "calibench/buf.h"
#include "calibench/results.h"
#include "calibench/runner.h"
#include "calibench/sim_server.h"
#include "calibench/tok.h"
#include "calibench/workload.h"

#define RUN_MAX_HEADERS 64

enum { RUN_SWEEP_NONE = 0, RUN_SWEEP_CONCURRENCY, RUN_SWEEP_RATE, RUN_SWEEP_AUTO };

typedef struct run_config {
  /* target */
  const char *url;                 /* owned: base URL ending in /v1; NULL = built-in simulator */
  int chat;                        /* --api chat (1) | completions (0) */
  const char *model;               /* NULL: the first model the server lists */
  const char *headers[RUN_MAX_HEADERS];
  size_t n_headers;
  const char *api_key_env;         /* name of the variable holding the key */
  char *api_key;                   /* owned; wiped on free; never printed or written */
  int auth_header;                 /* --header gave Authorization: it wins, the key is not read */
  int verify_tls;
  int http2;
  int libcurl;                /* --libcurl: libcurl reads http:// too */
  double request_timeout_s;
  int retries;
  const char *extra_body;          /* JSON object merged into every body */
  /* the built-in simulator (no --url) */
  cb_sim_server_params sim;
  /* `sim run`: the simulator in virtual time instead of a target (run_virtual.c) */
  int virtual_time;
  int exact_prompts;               /* render and parse every body even where ids suffice */
  /* workload */
  cb_workload_params workload;
  cb_workload_class_params cls;    /* the one class when there is no scenario */
  cb_scenario *scenario;           /* owned, or NULL */
  const char *scenario_path;
  const char *tokenizer;           /* --tokenizer FILE|NAME, or NULL */
  cb_tok *tok;                     /* owned: counts prompts and (without usage) outputs */
  int ignore_eos;
  int max_concurrency;
  double requested_rate;           /* open loop rate asked for, 0 otherwise */
  /* sweeps and baselines */
  int sweep;                       /* RUN_SWEEP_* */
  double sweep_values[64];         /* concurrency or rate values, in the order given */
  size_t n_sweep;
  int sweep_points;                /* auto: open-loop rates between the two ends (5) */
  int sweep_max_concurrency;       /* auto: the throughput point's concurrency (64) */
  double slo_attainment;           /* capacity at SLO: joint attainment needed (0.99) */
  int solo_baseline;               /* also run each scenario class alone */
  /* server telemetry */
  const char *server_metrics;      /* URL; NULL: the target's /metrics when it answers */
  int no_server_metrics;
  double scrape_interval_s;        /* 1 */
  /* measurement */
  cb_slo slos[CB_MAX_SLOS];
  size_t n_slos;
  double confidence;
  double drain_timeout_s;
  /* output */
  char out_dir[1024];
  const char *vllm_json;
  const char *label;
  int quiet;
  int no_report;                   /* --no-report: no report.html in the result directory */
  char run_id[24];
  char total_label[32];            /* "1000" or "?" for the progress line */
} run_config;

/* Parse argv (argv[0] = "run"). Returns -1 when the run should go ahead; otherwise
 * the exit status (0 after --help, 2 after a usage error, which it has printed).
 * Either way run_config_free releases what it holds. */
int run_config_parse(int argc, char **argv, run_config *cfg);
/* The same for `sim run` (argv[0] = "run"): the workload and output options of `run`,
 * the engine from --profile/--model/--gpu/--tp/--replicas, no HTTP options. */
int run_config_parse_virtual(int argc, char **argv, run_config *cfg);
void run_config_free(run_config *cfg);

void run_config_runner_params(const run_config *cfg, const char *endpoint, cb_runner_params *out);

/* The SLOs a class is judged by: its own (scenario) when it has any, else --slo. */
void run_config_class_slos(const run_config *cfg, const cb_workload_class *c, cb_slo *out,
                           size_t *n);

/* manifest.json; error: why the point failed after its directory was made, or NULL */
void run_config_write_manifest(const run_config *cfg, const cb_workload *wl,
                               const cb_schedule *schedule, const cb_runner_stats *stats,
                               uint64_t start_wall_ns, uint64_t end_wall_ns, const char *model,
                               const char *url, const cb_buf *models, const char *error,
                               cb_buf *out);

#endif
