/*
 * cb_session_config.c - options of `calibench run`.
 */
#include "run_config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/secret.h"
#include "calibench/clock.h"
#include "calibench/limits.h"
#include "calibench/rng.h"
#include "calibench/runner.h"
#include "sim_options.h"

static void usage_shared(FILE *out, int virtual_time, int metrics_listen);

static void usage_target(FILE *out, int metrics_listen);

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench run [options]\n"
          "\n"
          "Load-test an OpenAI-compatible endpoint under production-like load and write a\n"
          "result directory (records.jsonl, summary.json, manifest.json). Without --url, the\n"
          "built-in simulator is started on 127.0.0.1 and measured.\n"
          "\n");
  usage_target(out, 1);
}

/* metrics_listen: the command takes --metrics-listen (run, eval run; not the probes). */
static void usage_target(FILE *out, int metrics_listen) {
  fprintf(out,
          "target:\n"
          "  --url BASE                 e.g. http://127.0.0.1:8000/v1 (default: the built-in simulator)\n"
          "  --api chat|completions     endpoint dialect [chat]\n"
          "  --model NAME               model to ask for [the first of GET /v1/models]\n"
          "  --header 'Name: value'     extra header on every request; repeatable; the value is\n"
          "                             redacted from what the server answers, as the key is\n"
          "  --api-key-env NAME         variable holding the API key [OPENAI_API_KEY]; the key is\n"
          "                             sent as a bearer token (unless a --header gives\n"
          "                             Authorization: that one wins) and never printed or written\n"
          "  --insecure                 do not verify TLS certificates\n"
          "  --http2                    HTTP/2, requests multiplexed on one connection (ALPN on\n"
          "                             https://, prior knowledge on http://) instead of HTTP/1.1\n"
          "  --libcurl                  libcurl for http:// too (default: calibench's own HTTP/1.1\n"
          "                             reader, fewer syscalls per token; libcurl always serves\n"
          "                             https://, --http2, and proxies in http_proxy/all_proxy)\n"
          "  --source-addrs LIST        spread new connections over these local addresses,\n"
          "                             round robin: IPs and IPv4 ranges A-B, comma-separated,\n"
          "                             e.g. 127.0.0.2-127.0.0.9; one source address has only\n"
          "                             the ephemeral port range (~28k) per target address\n"
          "                             and port (docs/run.md, \"Scale\")\n"
          "  --request-timeout DUR      give up on a request after DUR, e.g. 60s; 0: none [none]\n"
          "  --retries N                retry failed requests (connect, 429, 5xx) N times [0],\n"
          "                             on a new connection, after the server's Retry-After or\n"
          "                             a seeded jittered backoff (250 ms doubling), capped at 60 s\n"
          "  --extra-body JSON          JSON object merged into every request body\n"
          "\n");
  fprintf(out,
          "built-in simulator (no --url; presets, then --sim-profile, then the rest):\n"
          "  --sim-model NAME           [llama-3.1-8b]\n"
          "  --sim-gpu NAME             [h100-sxm]\n"
          "  --sim-profile FILE         YAML overrides (docs/simulator.md)\n"
          "  --sim-time-scale X         wall seconds per simulated second [1]\n");
  sim_options_usage(out, 1, 29);
  fprintf(out, "\n");
  usage_shared(out, 0, metrics_listen);
}

/* `sim run`: the engine in virtual time (docs/sim-run.md). */
static void usage_virtual(FILE *out) {
  fprintf(out,
          "usage: calibench sim run [options]\n"
          "\n"
          "Predict a run: the simulator engine replays the workload in virtual time, with no\n"
          "HTTP, and writes the same result directory as `calibench run` (records.jsonl,\n"
          "summary.json, manifest.json), marked \"predicted\": true.\n"
          "\n"
          "deployment (preset, then --profile, then the flags below):\n"
          "  --profile FILE             YAML engine profile (docs/simulator.md), e.g. from\n"
          "                             `calibench calibrate fit`\n"
          "  --model NAME               model preset [llama-3.1-8b]\n"
          "  --gpu NAME                 GPU preset [h100-sxm]\n"
          "  --replicas N               data-parallel engines (GPUs = replicas x tp) [1]\n");
  sim_options_usage(out, 0, 29);
  fprintf(out,
          "  --exact-prompts            render and parse every request body as sim serve would,\n"
          "                             also where token ids straight from the workload suffice\n"
          "                             (slower; docs/sim-run.md)\n"
          "\n");
  usage_shared(out, 1, 0);
}

static void usage_shared(FILE *out, int virtual_time, int metrics_listen) {
  fprintf(out,
          "workload (docs/workload.md):\n"
          "  --dataset SPEC             synthetic | jsonl:PATH | sharegpt:PATH | chat:PATH | trace:PATH\n"
          "                             [synthetic]\n"
          "  --input-len N              synthetic prompt tokens [1024]\n"
          "  --output-len N             output tokens asked for (max_tokens) [128]\n"
          "  --len-dist KIND            fixed | uniform | normal | lognormal [fixed]\n"
          "  --len-spread X             uniform: range ratio; normal: std; lognormal: sigma\n"
          "  --prefix-count N           shared prompt prefixes (prefix-cache workloads) [0]\n"
          "  --prefix-len N             tokens per shared prefix\n"
          "  --prompt-field NAME        jsonl: the prompt's key [prompt]; a line's \"images\":\n"
          "                             [\"a.png\", ...] sends image files (PNG, JPEG, WebP, GIF)\n"
          "  --images-per-request N     send each prompt as a chat message with N synthetic images\n"
          "                             as image_url parts (base64 data URLs; --api chat) [0]\n"
          "  --image-size WxH           the synthetic images' size, each side 1..8192 [512x512]\n"
          "  --image-format png|jpeg    their format, deterministic per --seed [png]\n"
          "  --sharegpt-mode MODE       first_turn: the first user turn of each conversation, as\n"
          "                             vLLM; turns: every assistant reply, sent with the\n"
          "                             conversation before it as messages (recorded replies);\n"
          "                             live: each conversation a live session (as --sessions):\n"
          "                             its user turns sent after the model's real replies, each\n"
          "                             asking for its recorded reply's length; also on a\n"
          "                             chat:FILE dataset, each line a session [first_turn]\n"
          "  --sessions FILE            live multi-turn sessions (JSONL, one conversation a line:\n"
          "                             {\"turns\": [\"...\", {\"content\": \"...\", \"max_tokens\": N,\n"
          "                             \"think_time\": \"2s\"}]}): each turn is sent after the\n"
          "                             model's real reply to the one before plus a think time,\n"
          "                             with the whole conversation as messages; --rate starts\n"
          "                             sessions, --concurrency is users running one session\n"
          "                             after another (chat API; sim run: on its virtual clock,\n"
          "                             replies from the simulator; docs/workload.md)\n"
          "  --think-time DIST          with sessions: const:D, exp:MEAN, uniform:LO,HI,\n"
          "                             lognormal:MEAN,SIGMA or none, drawn per session from the\n"
          "                             seed [none]\n");
  fprintf(out,
          "  --tokenizer FILE|NAME      count tokens exactly with this tokenizer (tiktoken encoding\n"
          "                             such as cl100k_base, or a tokenizer.json): synthetic\n"
          "                             prompts of exactly --input-len tokens, dataset lengths, and\n"
          "                             output tokens when the server sends no usage [the\n"
          "                             --model's tokenizer.json in the local Hugging Face cache,\n"
          "                             else an approximation: docs/tokenizers.md]\n"
          "  --concurrency N            closed loop: N requests in flight [1 when no --rate]\n"
          "  --rate R                   open loop: R requests per second\n"
          "  --arrival KIND             constant | poisson | gamma [poisson]\n"
          "  --burstiness K             gamma shape (CV = 1/sqrt(K)) [1]\n"
          "  --ramp-up KIND             linear | exponential: the rate rises from --ramp-start to\n"
          "                             --rate over --ramp-duration, then stays at --rate; records\n"
          "                             carry the rate offered at their send (target_rate) and\n"
          "                             summary.json the rate at which each SLO stopped holding\n"
          "  --ramp-start R0            the rate the ramp starts at, req/s (> 0 for exponential)\n"
          "                             [0 for linear]\n"
          "  --ramp-duration DUR        how long the ramp takes (> 0)\n"
          "  --trace-speed X            trace replay speed-up [1]\n"
          "  --max-concurrency N        open loop: cap in flight; late sends are recorded as lag\n"
          "  --num-requests N           requests to send [100 unless --duration]\n"
          "  --duration DUR             stop sending after DUR (> 0), e.g. 5m\n"
          "  --warmup N|DUR             first N requests, or those before DUR, are not measured\n"
          "  --ignore-eos               ask the server to ignore EOS (vLLM extension)\n"
          "  --seed N                   run seed; data, arrival and sampling seeds derive from it [0]\n"
          "  --shard i/N                send only shard i of N of the same schedule\n"
          "  --scenario FILE            several classes (tenants) in one run (docs/workload.md)\n"
          "\n");
  fprintf(out,
          "sweeps and baselines:\n"
          "  --sweep SPEC               concurrency=1,2,4,... | rate=1,2,4,... | auto: one full result\n"
          "                             per point, the load-latency curve and capacity at SLO in\n"
          "                             OUT/sweep.json. auto runs synchronous (concurrency 1), then\n"
          "                             throughput (--sweep-max-concurrency), then --sweep-points\n"
          "                             open-loop rates evenly between them (as guidellm)\n"
          "  --sweep-points N           auto: rates between the two ends [5]\n"
          "  --sweep-max-concurrency N  auto: concurrency of the throughput point [64]\n"
          "  --slo-attainment F         capacity at SLO: share of requests meeting every SLO [0.99]\n"
          "  --solo-baseline            with --scenario: also run each class alone (same requests,\n"
          "                             same times) and report the interference factor\n"
          "                             (class p99 in the mix / p99 alone)\n"
          "\n");
  fprintf(out,
          "measurement:\n"
          "  --slo SPEC                 e.g. ttft=500ms,tpot=50ms,itl=100ms,e2e=10s; a bare bound\n"
          "                             is ms; '@p95' after a bound sets the percentile judged [p99]\n"
          "  --confidence C             confidence of SLO verdicts [0.95]\n");
  if (!virtual_time)
    fprintf(out,
            "  --drain-timeout DUR        after the last send or a stop, wait DUR for in-flight\n"
            "                             requests [30s]\n"
            "  --server-metrics URL       scrape this Prometheus endpoint during the run (vLLM, SGLang,\n"
            "                             TGI names) [the target's /metrics, when it answers]\n"
            "  --no-server-metrics        do not scrape\n"
            "  --scrape-interval DUR      [1s]\n");
  if (metrics_listen)
    fprintf(out,
            "  --metrics-listen ADDR:PORT serve this run's own Prometheus metrics at\n"
            "                             http://ADDR:PORT/metrics while it runs: requests\n"
            "                             scheduled, sent, completed, failed and in flight per\n"
            "                             class, send lag, TTFT/TPOT/ITL/E2E histograms (vLLM's\n"
            "                             buckets), tokens, SLO attainment so far (docs/metrics.md);\n"
            "                             a numeric address, e.g. 127.0.0.1:9464; port 0: any\n"
            "                             free one, said on stderr\n"
            "  --metrics-linger DUR       keep serving the final values DUR after the run, for a\n"
            "                             last scrape (a signal ends it) [0]\n");
  fprintf(out,
          "\n"
          "output:\n"
          "  --out DIR                  result directory [results/<UTC time>-<run id>]\n"
          "  --vllm-json FILE           also write vLLM bench serve's result keys\n"
          "  --label TEXT               label for the vLLM JSON\n"
          "  --quiet                    %s\n"
          "  --no-report                do not write report.html (calibench report) into DIR\n"
          "  -h, --help                 show this help\n"
          "\n"
          "DUR: a duration such as 500ms, 2s, 1m or 1h; a bare number is seconds\n"
          "(docs/durations.md)\n",
          virtual_time ? "no summary table" : "no progress line and no summary table");
  if (!virtual_time)
    fprintf(out,
            "\n"
            "SIGINT/SIGTERM stop sending and wait --drain-timeout for requests in flight (a\n"
            "second signal cuts them); the results are written and marked interrupted, and\n"
            "the exit status is 130.\n");
}

enum {
  O_URL = 256, O_API, O_MODEL, O_HEADER, O_API_KEY_ENV, O_INSECURE, O_HTTP2, O_LIBCURL,
  O_SOURCE_ADDRS, O_REQ_TIMEOUT,
  O_RETRIES, O_EXTRA_BODY, O_SIM_MODEL, O_SIM_GPU, O_SIM_PROFILE, O_SIM_SCALE,
  O_DATASET, O_INPUT_LEN, O_OUTPUT_LEN, O_LEN_DIST, O_LEN_SPREAD, O_PREFIX_COUNT,
  O_PREFIX_LEN, O_PROMPT_FIELD, O_IMAGES, O_IMAGE_SIZE, O_IMAGE_FORMAT, O_SHAREGPT_MODE, O_SESSIONS,
  O_THINK_TIME, O_CONCURRENCY, O_RATE, O_ARRIVAL, O_BURSTINESS,
  O_TRACE_SPEED, O_MAX_CONC, O_NUM_REQ, O_DURATION, O_WARMUP, O_IGNORE_EOS, O_SEED, O_SHARD,
  O_SCENARIO, O_SLO, O_CONFIDENCE, O_DRAIN, O_OUT, O_VLLM_JSON, O_LABEL, O_QUIET, O_SWEEP,
  O_SWEEP_POINTS, O_SWEEP_MAX_CONC, O_SLO_ATTAIN, O_SOLO, O_SERVER_METRICS, O_NO_SERVER_METRICS,
  O_SCRAPE_INTERVAL, O_TOKENIZER, O_PROFILE, O_GPU, O_REPLICAS, O_EXACT_PROMPTS, O_NO_REPORT,
  O_RAMP_UP, O_RAMP_START, O_RAMP_DURATION, O_METRICS_LISTEN, O_METRICS_LINGER,
  /* the simulator's deployment options (sim_options.c): --sim-NAME at O_SIM_DEPLOY + i,
   * sim run's --NAME at O_DEPLOY + i */
  O_SIM_DEPLOY, O_DEPLOY = O_SIM_DEPLOY + SIM_OPTIONS_MAX
};

static const struct option options[] = {
    {"url", required_argument, NULL, O_URL},
    {"api", required_argument, NULL, O_API},
    {"model", required_argument, NULL, O_MODEL},
    {"header", required_argument, NULL, O_HEADER},
    {"api-key-env", required_argument, NULL, O_API_KEY_ENV},
    {"insecure", no_argument, NULL, O_INSECURE},
    {"http2", no_argument, NULL, O_HTTP2},
    {"libcurl", no_argument, NULL, O_LIBCURL},
    {"source-addrs", required_argument, NULL, O_SOURCE_ADDRS},
    {"request-timeout", required_argument, NULL, O_REQ_TIMEOUT},
    {"retries", required_argument, NULL, O_RETRIES},
    {"extra-body", required_argument, NULL, O_EXTRA_BODY},
    {"sim-model", required_argument, NULL, O_SIM_MODEL},
    {"sim-gpu", required_argument, NULL, O_SIM_GPU},
    {"sim-profile", required_argument, NULL, O_SIM_PROFILE},
    {"sim-time-scale", required_argument, NULL, O_SIM_SCALE},
    {"dataset", required_argument, NULL, O_DATASET},
    {"input-len", required_argument, NULL, O_INPUT_LEN},
    {"output-len", required_argument, NULL, O_OUTPUT_LEN},
    {"len-dist", required_argument, NULL, O_LEN_DIST},
    {"len-spread", required_argument, NULL, O_LEN_SPREAD},
    {"prefix-count", required_argument, NULL, O_PREFIX_COUNT},
    {"prefix-len", required_argument, NULL, O_PREFIX_LEN},
    {"prompt-field", required_argument, NULL, O_PROMPT_FIELD},
    {"images-per-request", required_argument, NULL, O_IMAGES},
    {"image-size", required_argument, NULL, O_IMAGE_SIZE},
    {"image-format", required_argument, NULL, O_IMAGE_FORMAT},
    {"sharegpt-mode", required_argument, NULL, O_SHAREGPT_MODE},
    {"sessions", required_argument, NULL, O_SESSIONS},
    {"think-time", required_argument, NULL, O_THINK_TIME},
    {"concurrency", required_argument, NULL, O_CONCURRENCY},
    {"rate", required_argument, NULL, O_RATE},
    {"arrival", required_argument, NULL, O_ARRIVAL},
    {"burstiness", required_argument, NULL, O_BURSTINESS},
    {"trace-speed", required_argument, NULL, O_TRACE_SPEED},
    {"ramp-up", required_argument, NULL, O_RAMP_UP},
    {"ramp-start", required_argument, NULL, O_RAMP_START},
    {"ramp-duration", required_argument, NULL, O_RAMP_DURATION},
    {"max-concurrency", required_argument, NULL, O_MAX_CONC},
    {"num-requests", required_argument, NULL, O_NUM_REQ},
    {"duration", required_argument, NULL, O_DURATION},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"ignore-eos", no_argument, NULL, O_IGNORE_EOS},
    {"seed", required_argument, NULL, O_SEED},
    {"shard", required_argument, NULL, O_SHARD},
    {"scenario", required_argument, NULL, O_SCENARIO},
    {"slo", required_argument, NULL, O_SLO},
    {"confidence", required_argument, NULL, O_CONFIDENCE},
    {"drain-timeout", required_argument, NULL, O_DRAIN},
    {"out", required_argument, NULL, O_OUT},
    {"vllm-json", required_argument, NULL, O_VLLM_JSON},
    {"label", required_argument, NULL, O_LABEL},
    {"quiet", no_argument, NULL, O_QUIET},
    {"sweep", required_argument, NULL, O_SWEEP},
    {"sweep-points", required_argument, NULL, O_SWEEP_POINTS},
    {"sweep-max-concurrency", required_argument, NULL, O_SWEEP_MAX_CONC},
    {"slo-attainment", required_argument, NULL, O_SLO_ATTAIN},
    {"solo-baseline", no_argument, NULL, O_SOLO},
    {"server-metrics", required_argument, NULL, O_SERVER_METRICS},
    {"no-server-metrics", no_argument, NULL, O_NO_SERVER_METRICS},
    {"scrape-interval", required_argument, NULL, O_SCRAPE_INTERVAL},
    {"metrics-listen", required_argument, NULL, O_METRICS_LISTEN},
    {"metrics-linger", required_argument, NULL, O_METRICS_LINGER},
    {"tokenizer", required_argument, NULL, O_TOKENIZER},
    {"no-report", no_argument, NULL, O_NO_REPORT},
    /* sim run only */
    {"profile", required_argument, NULL, O_PROFILE},
    {"gpu", required_argument, NULL, O_GPU},
    {"replicas", required_argument, NULL, O_REPLICAS},
    {"exact-prompts", no_argument, NULL, O_EXACT_PROMPTS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Which load options the command line gave (they win over a scenario file). */
typedef struct given {
  int concurrency, rate, arrival, burstiness, trace_speed, num_requests, duration, warmup, seed;
  int len_spread;
  int ramp, ramp_start, ramp_duration; /* --ramp-up, --ramp-start, --ramp-duration */
  const char *image_opt;      /* --image-size or --image-format, which need images */
  const char *class_opt;      /* an option of the single class (--dataset, ...), or NULL */
  const char *not_turn_opt;   /* ... other than --output-len (sessions refuse it) */
  const char *not_live_dataset_opt; /* ... other than --output-len, --dataset, --sharegpt-mode */
  int sharegpt_live;          /* --sharegpt-mode live */
  sim_deployment sim;
  long long replicas;
  double sim_scale;
  const char *virtual_only;   /* a sim run option given to run */
  const char *http_only;      /* an option with no meaning in virtual time, given to sim run */
  int out_given;
  const char *tokenizer;      /* --tokenizer FILE|NAME */
  int solo_baseline;
} given;

static int fail_err(const cb_error *err) {
  fprintf(stderr, "calibench: %s\n", err->msg);
  return 2;
}

static int build_sim(const given *g, cb_session_config *cfg) {
  cb_sim_server_default_params(&cfg->sim);
  if (sim_deployment_build(&g->sim, &cfg->sim.engine)) return 2;
  cfg->sim.behavior_path = sim_options_behavior(&g->sim.opts);
  if (g->replicas) cfg->sim.replicas = (int)g->replicas;
  if (g->sim_scale > 0) cfg->sim.time_scale = g->sim_scale;
  cfg->sim.seed = cfg->workload.seed;
  cfg->sim.tokenizer = cfg->tok_source.path; /* the simulator counts as the client does */
  return -1;
}

/* Top-level load options given on the command line override the scenario's. */
static void apply_given(const given *g, const cb_workload_params *cli, cb_workload_params *w) {
  if (g->seed) w->seed = cli->seed;
  if (g->concurrency) {
    w->arrival.kind = CB_ARRIVAL_CLOSED;
    w->concurrency = cli->concurrency;
  }
  if (g->rate) {
    w->arrival.rate = cli->arrival.rate;
    if (w->arrival.kind == CB_ARRIVAL_CLOSED) w->arrival.kind = CB_ARRIVAL_POISSON;
  }
  if (g->arrival) w->arrival.kind = cli->arrival.kind;
  if (g->burstiness) w->arrival.burstiness = cli->arrival.burstiness;
  if (g->trace_speed) w->arrival.trace_speed = cli->arrival.trace_speed;
  if (g->ramp) {
    w->arrival.ramp = cli->arrival.ramp;
    w->arrival.ramp_start = cli->arrival.ramp_start;
    w->arrival.ramp_duration_s = cli->arrival.ramp_duration_s;
  }
  if (g->num_requests) w->num_requests = cli->num_requests;
  if (g->duration) w->duration_ns = cli->duration_ns;
  if (g->warmup) {
    w->warmup_requests = cli->warmup_requests;
    w->warmup_ns = cli->warmup_ns;
  }
  w->shard_index = cli->shard_index;
  w->shard_count = cli->shard_count;
}

/* --sweep concurrency=1,2,4 | rate=0.5,1,2 | auto */
static int parse_sweep(const char *spec, cb_session_config *cfg) {
  if (!strcmp(spec, "auto")) {
    cfg->sweep = CB_SESSION_SWEEP_AUTO;
    return 0;
  }
  const char *eq = strchr(spec, '=');
  if (eq && !strncmp(spec, "concurrency=", 12)) cfg->sweep = CB_SESSION_SWEEP_CONCURRENCY;
  else if (eq && !strncmp(spec, "rate=", 5)) cfg->sweep = CB_SESSION_SWEEP_RATE;
  else {
    fprintf(stderr, "calibench: --sweep: expected concurrency=N,N,..., rate=R,R,... or auto, got '%s'\n", spec);
    return -1;
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", eq + 1);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    double v;
    if (cfg->n_sweep == sizeof cfg->sweep_values / sizeof cfg->sweep_values[0]) {
      fprintf(stderr, "calibench: --sweep: at most %zu points\n", sizeof cfg->sweep_values / sizeof cfg->sweep_values[0]);
      return -1;
    }
    if (cfg->sweep == CB_SESSION_SWEEP_CONCURRENCY) {
      long long c;
      if (cli_parse_int("--sweep concurrency", tok, 1, 1 << 20, &c)) return -1;
      v = (double)c;
    } else if (cli_parse_double("--sweep rate", tok, 1e-9, 1e9, &v)) {
      return -1;
    }
    if (cfg->n_sweep && v <= cfg->sweep_values[cfg->n_sweep - 1]) {
      fprintf(stderr, "calibench: --sweep: values must increase, got %s after %g\n", tok,
              cfg->sweep_values[cfg->n_sweep - 1]);
      return -1;
    }
    cfg->sweep_values[cfg->n_sweep++] = v;
  }
  if (!cfg->n_sweep) {
    fprintf(stderr, "calibench: --sweep: no values in '%s'\n", spec);
    return -1;
  }
  return 0;
}

static int parse(int argc, char **argv, cb_session_config *cfg, int virtual_time, int *solo,
                 run_config_extra *x);

/* --metrics-listen ADDR:PORT and --metrics-linger DUR; 0, or -1 after saying why. */
static int metrics_option(int c, const char *arg, const run_config_extra *extra,
                          cb_session_config *cfg) {
  if (extra && !extra->metrics_listen) {
    fprintf(stderr, "calibench: %s: --metrics-listen and --metrics-linger are for run and eval "
                    "run: %s runs a session per step (docs/metrics.md)\n",
            extra->command, extra->command);
    return -1;
  }
  if (c == O_METRICS_LINGER) {
    uint64_t ns;
    if (cli_parse_duration("--metrics-linger", arg, 1, 0, &ns)) return -1;
    if (ns > 86400 * CB_NS_PER_S) {
      fprintf(stderr, "calibench: --metrics-linger: expected at most 24h, got '%s'\n", arg);
      return -1;
    }
    cfg->metrics_linger_s = (double)ns / 1e9;
    return 0;
  }
  char host[64];
  uint16_t port;
  cb_error err;
  if (cb_session_listen_parse(arg, host, &port, &err) != CB_OK) {
    fprintf(stderr, "calibench: --metrics-listen: %s\n", err.msg);
    return -1;
  }
  cfg->metrics_listen = arg;
  return 0;
}

int run_config_parse(int argc, char **argv, cb_session_config *cfg, int *solo_baseline) {
  return parse(argc, argv, cfg, 0, solo_baseline, NULL);
}

int run_config_parse_virtual(int argc, char **argv, cb_session_config *cfg, int *solo_baseline) {
  return parse(argc, argv, cfg, 1, solo_baseline, NULL);
}

int run_config_parse_extra(int argc, char **argv, cb_session_config *cfg, int *solo_baseline,
                           run_config_extra *extra) {
  return parse(argc, argv, cfg, 0, solo_baseline, extra);
}

int run_config_parse_extra_virtual(int argc, char **argv, cb_session_config *cfg, int *solo_baseline,
                                   run_config_extra *extra) {
  return parse(argc, argv, cfg, 1, solo_baseline, extra);
}

/* Options of a run against HTTP targets, meaningless in virtual time: their names. */
static const char *http_only_name(int c) {
  switch (c) {
    case O_URL: return "--url";
    case O_HEADER: return "--header";
    case O_API_KEY_ENV: return "--api-key-env";
    case O_INSECURE: return "--insecure";
    case O_HTTP2: return "--http2";
    case O_LIBCURL: return "--libcurl";
    case O_SOURCE_ADDRS: return "--source-addrs";
    case O_REQ_TIMEOUT: return "--request-timeout";
    case O_RETRIES: return "--retries";
    case O_SIM_SCALE: return "--sim-time-scale";
    case O_DRAIN: return "--drain-timeout";
    case O_SERVER_METRICS: return "--server-metrics";
    case O_SCRAPE_INTERVAL: return "--scrape-interval";
    case O_METRICS_LISTEN: return "--metrics-listen";
    case O_METRICS_LINGER: return "--metrics-linger";
    default: return NULL;
  }
}

/* Options that shape the one class of a run without a scenario: their names. A
 * scenario's classes say all of it in the file. */
static const char *class_option_name(int c) {
  switch (c) {
    case O_DATASET: return "--dataset";
    case O_INPUT_LEN: return "--input-len";
    case O_OUTPUT_LEN: return "--output-len";
    case O_LEN_DIST: return "--len-dist";
    case O_LEN_SPREAD: return "--len-spread";
    case O_PREFIX_COUNT: return "--prefix-count";
    case O_PREFIX_LEN: return "--prefix-len";
    case O_PROMPT_FIELD: return "--prompt-field";
    case O_IMAGES: return "--images-per-request";
    case O_IMAGE_SIZE: return "--image-size";
    case O_IMAGE_FORMAT: return "--image-format";
    case O_SHAREGPT_MODE: return "--sharegpt-mode";
    default: return NULL;
  }
}

/* Options given where they do nothing are refused, each with why. After the scenario
 * (if any) is merged: the load is then final. */
static int check_applies(const given *g, const cb_session_config *cfg) {
  const cb_workload_params *w = &cfg->workload;
  const char *arrival = cb_arrival_kind_name(w->arrival.kind);
  if (cfg->scenario_path && g->class_opt) {
    fprintf(stderr, "calibench: %s does not apply with --scenario: each class of the scenario "
                    "file gives its own dataset and lengths\n", g->class_opt);
    return 2;
  }
  if (cfg->sessions_path) { /* the sessions file says what is sent, and how much */
    int dataset = cfg->sessions_format != NULL; /* --sharegpt-mode live */
    const char *what = cfg->scenario_path ? "--scenario" : g->num_requests ? "--num-requests"
                       : g->warmup ? "--warmup"
                       : dataset ? g->not_live_dataset_opt : g->not_turn_opt;
    if (what) {
      fprintf(stderr, "calibench: %s does not apply with %s: the %s gives the turns "
                      "(--output-len is a turn's default max_tokens, --duration a limit)\n",
              what, dataset ? "--sharegpt-mode live" : "--sessions",
              dataset ? "dataset" : "sessions file");
      return 2;
    }
  }
  if (g->burstiness && w->arrival.kind != CB_ARRIVAL_GAMMA) {
    fprintf(stderr, "calibench: --burstiness does not apply: it is the shape of gamma arrivals "
                    "(--arrival gamma --rate R), and this run's arrival is %s\n", arrival);
    return 2;
  }
  if (g->trace_speed && w->arrival.kind != CB_ARRIVAL_TRACE) {
    fprintf(stderr, "calibench: --trace-speed does not apply: it speeds up a trace's replay "
                    "(--dataset trace:FILE), and this run's arrival is %s\n", arrival);
    return 2;
  }
  if (w->arrival.ramp != CB_RAMP_NONE) { /* --ramp-up, or the scenario's ramp_up */
    /* the ramp ends at the open-loop rate: the process must have one */
    if (w->arrival.kind == CB_ARRIVAL_CLOSED || w->arrival.kind == CB_ARRIVAL_TRACE) {
      fprintf(stderr, "calibench: --ramp-up needs --rate R (the rate the ramp ends at) with "
                      "constant, poisson or gamma arrivals; this run's arrival is %s\n", arrival);
      return 2;
    }
    cb_error err;
    cb_error_clear(&err);
    if (cb_arrival_validate(&w->arrival, &err) != CB_OK) {
      fprintf(stderr, "calibench: --ramp-up %s --ramp-start %g --ramp-duration %g --rate %g: %s\n",
              cb_ramp_kind_name(w->arrival.ramp), w->arrival.ramp_start, w->arrival.ramp_duration_s,
              w->arrival.rate, err.msg);
      return 2;
    }
  }
  if (g->image_opt && cfg->cls.data.images_per_request == 0) {
    fprintf(stderr, "calibench: %s does not apply: it shapes the images of "
                    "--images-per-request N, and this run sends none\n", g->image_opt);
    return 2;
  }
  if (cfg->cls.data.images_per_request > 0 && !cfg->chat) {
    fprintf(stderr, "calibench: --images-per-request: images are sent as chat image_url "
                    "parts; use --api chat\n");
    return 2;
  }
  if (g->len_spread && cfg->cls.data.input_len.kind == CB_LEN_FIXED) {
    fprintf(stderr, "calibench: --len-spread does not apply: it shapes --len-dist "
                    "uniform|normal|lognormal, and lengths are fixed without one\n");
    return 2;
  }
  if (w->warmup_requests && w->num_requests && w->warmup_requests >= w->num_requests) {
    fprintf(stderr, "calibench: --warmup %llu leaves nothing to measure of --num-requests %llu: "
                    "the warm-up must be fewer requests than the run\n",
            (unsigned long long)w->warmup_requests, (unsigned long long)w->num_requests);
    return 2;
  }
  if (w->warmup_ns && w->duration_ns && w->warmup_ns >= w->duration_ns) {
    fprintf(stderr, "calibench: a warm-up of %g s leaves nothing to measure of a %g s run: the "
                    "warm-up must be shorter than --duration\n",
            (double)w->warmup_ns / 1e9, (double)w->duration_ns / 1e9);
    return 2;
  }
  return -1;
}

static int parse(int argc, char **argv, cb_session_config *cfg, int virtual_time, int *solo,
                 run_config_extra *extra) {
  const char *command = extra ? extra->command : virtual_time ? "sim run" : "run";
  cb_session_config_init(cfg);
  cfg->virtual_time = virtual_time;
  cfg->log = stderr;
  cfg->workload.num_requests = 0; /* 100 unless --duration or a trace: decided below */
  cb_workload_params *w = &cfg->workload;
  cb_dataset_params *d = &cfg->cls.data;
  given g = {0};
  long long v;
  double x;
  cb_error err;
  cb_error_clear(&err);
  *solo = 0;
  enum { N_BASE = sizeof options / sizeof options[0] - 1 };
  struct option opts[RUN_CONFIG_EXTRA_MAX + N_BASE + 2 * SIM_OPTIONS_MAX + 1];
  size_t n_extra = 0;
  while (extra && extra->options[n_extra].name && n_extra < RUN_CONFIG_EXTRA_MAX) {
    opts[n_extra] = extra->options[n_extra];
    n_extra++;
  }
  sim_options_getopt(opts + n_extra, 1, O_SIM_DEPLOY);
  sim_options_getopt(opts + n_extra + sim_options_count, 0, O_DEPLOY);
  memcpy(opts + n_extra + 2 * sim_options_count, options, sizeof options);
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (virtual_time && !g.http_only) g.http_only = http_only_name(c);
    if (!g.class_opt) g.class_opt = class_option_name(c);
    if (!g.not_turn_opt && c != O_OUTPUT_LEN) g.not_turn_opt = class_option_name(c);
    if (!g.not_live_dataset_opt && c != O_OUTPUT_LEN && c != O_DATASET && c != O_SHAREGPT_MODE)
      g.not_live_dataset_opt = class_option_name(c);
    int deploy = c >= O_DEPLOY && c < O_DEPLOY + (int)sim_options_count;
    if (deploy || (c >= O_SIM_DEPLOY && c < O_SIM_DEPLOY + (int)sim_options_count)) {
      size_t i = (size_t)(c - (deploy ? O_DEPLOY : O_SIM_DEPLOY));
      if (sim_options_parse(&g.sim.opts, i, !deploy, optarg)) return 2;
      if (deploy && !g.virtual_only) g.virtual_only = sim_options[i].name;
      continue;
    }
    if (extra && c >= RUN_CONFIG_EXTRA_OPT) {
      int rc = extra->option(extra->ctx, c, optarg);
      if (rc) return rc;
      continue;
    }
    switch (c) {
      case 'h':
        if (extra) {
          extra->usage(extra->ctx, stdout);
          usage_target(stdout, extra->metrics_listen);
        } else {
          virtual_time ? usage_virtual(stdout) : usage(stdout);
        }
        return 0;
      case O_URL: /* owned from the start: run_config_free frees it on every path */
        cb_free((char *)cfg->url);
        cfg->url = cb_strdup(optarg);
        break;
      case O_API:
        if (!strcmp(optarg, "chat")) cfg->chat = 1;
        else if (!strcmp(optarg, "completions")) cfg->chat = 0;
        else {
          fprintf(stderr, "calibench: --api: expected chat or completions, got '%s'\n", optarg);
          return 2;
        }
        break;
      case O_MODEL:
        if (virtual_time) g.sim.model = optarg; /* sim run: the model preset */
        else cfg->model = optarg;
        break;
      case O_PROFILE: g.sim.profile = optarg; g.virtual_only = "profile"; break;
      case O_GPU: g.sim.gpu = optarg; g.virtual_only = "gpu"; break;
      case O_REPLICAS: if (cli_parse_int("--replicas", optarg, 1, 1024, &g.replicas)) return 2; g.virtual_only = "replicas"; break;
      case O_EXACT_PROMPTS: cfg->exact_prompts = 1; g.virtual_only = "exact-prompts"; break;
      case O_HEADER:
        if (!strchr(optarg, ':') || optarg[0] == ':' || strpbrk(optarg, "\r\n")) {
          fprintf(stderr, "calibench: --header: expected 'Name: value', got '%s'\n", optarg);
          return 2;
        }
        if (cfg->n_headers == CB_SESSION_MAX_HEADERS) {
          fprintf(stderr, "calibench: --header: at most %d\n", CB_SESSION_MAX_HEADERS);
          return 2;
        }
        cfg->headers[cfg->n_headers++] = optarg;
        break;
      case O_API_KEY_ENV: cfg->api_key_env = optarg; break;
      case O_INSECURE: cfg->verify_tls = 0; break;
      case O_HTTP2: cfg->http2 = 1; break;
      case O_LIBCURL: cfg->libcurl = 1; break;
      case O_SOURCE_ADDRS: {
        size_t n;
        if (cb_runner_source_addrs_parse(optarg, NULL, &n, &err) != CB_OK) return fail_err(&err);
        cfg->source_addrs = optarg;
        break;
      }
      case O_REQ_TIMEOUT: {
        uint64_t ns;
        /* 0: none; libcurl counts the timeout in ms */
        if (cli_parse_duration("--request-timeout", optarg, 1, CB_NS_PER_MS, &ns)) return 2;
        cfg->request_timeout_s = (double)ns / 1e9;
        break;
      }
      case O_RETRIES: if (cli_parse_int("--retries", optarg, 0, 100, &v)) return 2; cfg->retries = (int)v; break;
      case O_EXTRA_BODY: cfg->extra_body = optarg; break;
      case O_SESSIONS: cfg->sessions_path = optarg; break;
      case O_THINK_TIME: cfg->think_time = optarg; break;
      case O_SIM_MODEL: g.sim.model = optarg; break;
      case O_SIM_GPU: g.sim.gpu = optarg; break;
      case O_SIM_PROFILE: g.sim.profile = optarg; break;
      case O_SIM_SCALE: if (cli_parse_double("--sim-time-scale", optarg, 1e-6, 1e6, &g.sim_scale)) return 2; break;
      case O_DATASET: cfg->cls.dataset = optarg; break;
      case O_INPUT_LEN: if (cli_parse_int("--input-len", optarg, 1, CB_LIMIT_TOKENS, &v)) return 2; d->input_len.mean = (double)v; break;
      case O_OUTPUT_LEN: if (cli_parse_int("--output-len", optarg, 1, CB_LIMIT_TOKENS, &v)) return 2; d->output_len.mean = (double)v; break;
      case O_LEN_DIST: {
        cb_len_kind k;
        if (cb_dataset_len_kind_parse(optarg, &k, &err) != CB_OK) {
          fprintf(stderr, "calibench: --len-dist: %s\n", err.msg);
          return 2;
        }
        d->input_len.kind = d->output_len.kind = k;
        break;
      }
      case O_LEN_SPREAD:
        if (cli_parse_double("--len-spread", optarg, 0, 1e6, &x)) return 2;
        d->input_len.spread = d->output_len.spread = x;
        g.len_spread = 1;
        break;
      case O_PREFIX_COUNT: if (cli_parse_int("--prefix-count", optarg, 0, 1 << 20, &v)) return 2; d->prefix_count = (uint32_t)v; break;
      case O_PREFIX_LEN: if (cli_parse_int("--prefix-len", optarg, 1, CB_LIMIT_TOKENS, &v)) return 2; d->prefix_len = (uint32_t)v; break;
      case O_PROMPT_FIELD: d->prompt_field = optarg; break;
      case O_IMAGES:
        if (cli_parse_int("--images-per-request", optarg, 0, CB_IMAGE_MAX_PER_REQUEST, &v)) return 2;
        d->images_per_request = (uint32_t)v;
        break;
      case O_IMAGE_SIZE:
        if (cb_image_size_parse(optarg, &d->image_width, &d->image_height, &err) != CB_OK) {
          fprintf(stderr, "calibench: --image-size: %s\n", err.msg);
          return 2;
        }
        g.image_opt = "--image-size";
        break;
      case O_IMAGE_FORMAT:
        if (cb_image_format_parse(optarg, &d->image_format, &err) != CB_OK) {
          fprintf(stderr, "calibench: --image-format: %s\n", err.msg);
          return 2;
        }
        g.image_opt = "--image-format";
        break;
      case O_SHAREGPT_MODE:
        g.sharegpt_live = !strcmp(optarg, "live");
        if (!strcmp(optarg, "first_turn")) d->sharegpt_mode = CB_SHAREGPT_FIRST_TURN;
        else if (!strcmp(optarg, "turns")) d->sharegpt_mode = CB_SHAREGPT_TURNS;
        else if (!g.sharegpt_live) {
          fprintf(stderr, "calibench: --sharegpt-mode: expected first_turn, turns or live, got '%s'\n", optarg);
          return 2;
        }
        break;
      case O_CONCURRENCY:
        if (cli_parse_int("--concurrency", optarg, 1, 1 << 20, &v)) return 2;
        w->concurrency = (uint32_t)v;
        g.concurrency = 1;
        break;
      case O_RATE:
        if (cli_parse_double("--rate", optarg, 1e-9, 1e9, &w->arrival.rate)) return 2;
        g.rate = 1;
        break;
      case O_ARRIVAL:
        if (cb_arrival_kind_parse(optarg, &w->arrival.kind, &err) != CB_OK) {
          fprintf(stderr, "calibench: --arrival: %s\n", err.msg);
          return 2;
        }
        g.arrival = 1;
        break;
      case O_BURSTINESS: if (cli_parse_double("--burstiness", optarg, 1e-6, 1e6, &w->arrival.burstiness)) return 2; g.burstiness = 1; break;
      case O_RAMP_UP:
        if (cb_ramp_kind_parse(optarg, &w->arrival.ramp, &err) != CB_OK) {
          fprintf(stderr, "calibench: --ramp-up: %s\n", err.msg);
          return 2;
        }
        g.ramp = 1;
        break;
      case O_RAMP_START:
        if (cli_parse_double("--ramp-start", optarg, 0, 1e9, &w->arrival.ramp_start)) return 2;
        g.ramp_start = 1;
        break;
      case O_RAMP_DURATION: {
        uint64_t ns;
        if (cli_parse_duration("--ramp-duration", optarg, 0, CB_NS_PER_MS, &ns)) return 2;
        w->arrival.ramp_duration_s = (double)ns / 1e9;
        g.ramp_duration = 1;
        break;
      }
      case O_TRACE_SPEED: if (cli_parse_double("--trace-speed", optarg, 1e-6, 1e6, &w->arrival.trace_speed)) return 2; g.trace_speed = 1; break;
      case O_MAX_CONC: if (cli_parse_int("--max-concurrency", optarg, 1, 1 << 20, &v)) return 2; cfg->max_concurrency = (int)v; break;
      case O_NUM_REQ: if (cli_parse_int("--num-requests", optarg, 1, 1LL << 40, &v)) return 2; w->num_requests = (uint64_t)v; g.num_requests = 1; break;
      case O_DURATION:
        if (cb_workload_parse_run_duration(optarg, &w->duration_ns, &err) != CB_OK) {
          fprintf(stderr, "calibench: --duration: %s\n", err.msg);
          return 2;
        }
        g.duration = 1;
        break;
      case O_WARMUP:
        if (cb_workload_parse_warmup(optarg, &w->warmup_requests, &w->warmup_ns, &err) != CB_OK) {
          fprintf(stderr, "calibench: --warmup: %s\n", err.msg);
          return 2;
        }
        g.warmup = 1;
        break;
      case O_IGNORE_EOS: cfg->ignore_eos = 1; break;
      case O_SEED: if (cli_parse_int("--seed", optarg, 0, INT64_MAX, &v)) return 2; w->seed = (uint64_t)v; g.seed = 1; break;
      case O_SHARD:
        if (cb_workload_parse_shard(optarg, &w->shard_index, &w->shard_count, &err) != CB_OK) {
          fprintf(stderr, "calibench: --shard: %s\n", err.msg);
          return 2;
        }
        break;
      case O_SCENARIO: cfg->scenario_path = optarg; break;
      case O_SLO:
        if (cb_slo_parse(optarg, cfg->slos, &cfg->n_slos, &err) != CB_OK) return fail_err(&err);
        break;
      case O_CONFIDENCE: if (cli_parse_double("--confidence", optarg, 0.5, 0.999999, &cfg->confidence)) return 2; break;
      case O_DRAIN: {
        uint64_t ns;
        /* 0: cut what is in flight at once */
        if (cli_parse_duration("--drain-timeout", optarg, 1, 0, &ns)) return 2;
        cfg->drain_timeout_s = (double)ns / 1e9;
        break;
      }
      case O_OUT: snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s", optarg); g.out_given = 1; break;
      case O_VLLM_JSON: cfg->vllm_json = optarg; break;
      case O_LABEL: cfg->label = optarg; break;
      case O_QUIET: cfg->quiet = 1; break;
      case O_NO_REPORT: cfg->no_report = 1; break;
      case O_SWEEP: if (parse_sweep(optarg, cfg)) return 2; break;
      case O_SWEEP_POINTS: if (cli_parse_int("--sweep-points", optarg, 1, 50, &v)) return 2; cfg->sweep_points = (int)v; break;
      case O_SWEEP_MAX_CONC: if (cli_parse_int("--sweep-max-concurrency", optarg, 1, 1 << 20, &v)) return 2; cfg->sweep_max_concurrency = (int)v; break;
      case O_SLO_ATTAIN: if (cli_parse_double("--slo-attainment", optarg, 0.01, 1, &cfg->slo_attainment)) return 2; break;
      case O_SOLO: g.solo_baseline = 1; break;
      case O_SERVER_METRICS:
        if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8)) {
          fprintf(stderr, "calibench: --server-metrics: expected an http(s):// URL, got '%s'\n", optarg);
          return 2;
        }
        cfg->server_metrics = optarg;
        break;
      case O_NO_SERVER_METRICS: cfg->no_server_metrics = 1; break;
      case O_TOKENIZER: g.tokenizer = optarg; break;
      case O_SCRAPE_INTERVAL: {
        uint64_t ns;
        if (cli_parse_duration("--scrape-interval", optarg, 0, 10 * CB_NS_PER_MS, &ns)) return 2;
        cfg->scrape_interval_s = (double)ns / 1e9;
        break;
      }
      case O_METRICS_LISTEN:
      case O_METRICS_LINGER:
        if (metrics_option(c, optarg, extra, cfg)) return 2;
        break;
      default:
        fprintf(stderr, "Run 'calibench %s --help' for the options.\n", command);
        return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: %s: unexpected argument '%s'\n", command, argv[optind]);
    return 2;
  }
  if (cfg->metrics_linger_s > 0 && !cfg->metrics_listen) {
    fprintf(stderr, "calibench: --metrics-linger: only with --metrics-listen (how long the final "
                    "metrics stay up)\n");
    return 2;
  }
  if (virtual_time && g.http_only) {
    fprintf(stderr, "calibench: %s: %s has no meaning in virtual time (no HTTP, no wall "
                    "clock); see 'calibench sim run --help'\n", command, g.http_only);
    return 2;
  }
  if (!virtual_time && g.virtual_only) {
    if (!strcmp(g.virtual_only, "exact-prompts") || !strcmp(g.virtual_only, "replicas"))
      fprintf(stderr, "calibench: run: --%s is an option of 'calibench sim run'\n", g.virtual_only);
    else
      fprintf(stderr, "calibench: run: --%s is an option of 'calibench sim run'; the built-in "
                      "simulator here takes it as --sim-%s\n", g.virtual_only, g.virtual_only);
    return 2;
  }
  if (cfg->url) {
    size_t n = strlen(cfg->url);
    if (strncmp(cfg->url, "http://", 7) && strncmp(cfg->url, "https://", 8)) {
      char shown[2048];
      cb_secret_mask_url(cfg->url, shown, sizeof shown);
      fprintf(stderr, "calibench: --url: expected http://HOST[:PORT]/v1 or https://..., got '%s'\n", shown);
      return 2;
    }
    while (n > 8 && cfg->url[n - 1] == '/') n--;
    ((char *)cfg->url)[n] = '\0';
  }
  if (cfg->url && (g.sim.model || g.sim.gpu || g.sim.profile || sim_options_any(&g.sim.opts) ||
                   g.sim_scale > 0)) {
    fprintf(stderr, "calibench: the --sim-* options apply only without --url\n");
    return 2;
  }
  /* Load: a rate means open loop (poisson unless --arrival); a trace dataset
   * replays its own times unless a load is given; otherwise closed loop. */
  int trace = cfg->cls.dataset && !strncmp(cfg->cls.dataset, "trace:", 6);
  if (g.rate && g.concurrency) {
    fprintf(stderr, "calibench: --rate (open loop) and --concurrency (closed loop) exclude each other\n");
    return 2;
  }
  if (g.rate && !g.arrival) w->arrival.kind = CB_ARRIVAL_POISSON;
  if (!g.rate && !g.concurrency && !g.arrival && trace) w->arrival.kind = CB_ARRIVAL_TRACE;
  if (g.arrival && w->arrival.kind != CB_ARRIVAL_CLOSED && w->arrival.kind != CB_ARRIVAL_TRACE && !g.rate && !cfg->scenario_path) {
    fprintf(stderr, "calibench: --arrival %s needs --rate\n", cb_arrival_kind_name(w->arrival.kind));
    return 2;
  }
  if (extra) extra->load_count_given = g.num_requests || g.duration;
  if (!g.num_requests && !g.duration && !trace) w->num_requests = 100;
  w->classes = &cfg->cls;
  w->num_classes = 1;
  if (cfg->scenario_path) {
    if (cb_scenario_load(cfg->scenario_path, &cfg->scenario, &err) != CB_OK) return fail_err(&err);
    cb_workload_params sw = *cb_scenario_params(cfg->scenario);
    apply_given(&g, w, &sw);
    unsigned set = cb_scenario_keys_set(cfg->scenario);
    if (!g.num_requests && !g.duration && !(set & (CB_SCENARIO_SET_NUM_REQUESTS | CB_SCENARIO_SET_DURATION)))
      sw.num_requests = 100;
    *w = sw;
  }
  cfg->requested_rate = w->arrival.kind != CB_ARRIVAL_CLOSED && w->arrival.kind != CB_ARRIVAL_TRACE
                            ? w->arrival.rate : 0;
  if ((g.ramp_start || g.ramp_duration) && !g.ramp) {
    fprintf(stderr, "calibench: %s shapes a ramp: give --ramp-up linear|exponential too\n",
            g.ramp_start ? "--ramp-start" : "--ramp-duration");
    return 2;
  }
  if (g.ramp && !g.ramp_duration) {
    fprintf(stderr, "calibench: --ramp-up needs --ramp-duration DUR: how long the rate takes to "
                    "rise from --ramp-start to --rate\n");
    return 2;
  }
  if (cfg->sweep && w->arrival.ramp != CB_RAMP_NONE) {
    fprintf(stderr, "calibench: --ramp-up does not combine with --sweep: one ramped run already "
                    "covers the rates from --ramp-start to --rate (its report plots latency "
                    "against them); drop one of the two\n");
    return 2;
  }
  if (g.sharegpt_live) { /* a conversation dataset's conversations as live sessions */
    const char *ds = cfg->cls.dataset;
    if (cfg->sessions_path) {
      fprintf(stderr, "calibench: --sharegpt-mode live sends the --dataset's conversations as "
                      "sessions: drop --sessions or the dataset\n");
      return 2;
    }
    /* chat: lines are conversations too (docs/workload.md, "chat"): one mode for both */
    if (ds && !strncmp(ds, "sharegpt:", 9) && ds[9]) {
      cfg->sessions_path = ds + 9;
      cfg->sessions_format = "sharegpt";
    } else if (ds && !strncmp(ds, "chat:", 5) && ds[5]) {
      cfg->sessions_path = ds + 5;
      cfg->sessions_format = "chat";
    } else {
      fprintf(stderr, "calibench: --sharegpt-mode live: expected --dataset sharegpt:FILE or "
                      "chat:FILE, got %s\n",
              ds ? ds : "no --dataset");
      return 2;
    }
    cfg->cls.dataset = NULL; /* the requests come from the sessions, not the dataset's items */
  }
  int applies = check_applies(&g, cfg);
  if (applies >= 0) return applies;
  if (w->arrival.kind == CB_ARRIVAL_CLOSED && cfg->max_concurrency) {
    fprintf(stderr, "calibench: --max-concurrency applies to open-loop runs (--rate); closed loop uses --concurrency\n");
    return 2;
  }
  if (cfg->sweep && (g.rate || g.concurrency)) {
    fprintf(stderr, "calibench: --sweep sets the load itself: drop --rate/--concurrency\n");
    return 2;
  }
  if (cfg->sweep && cfg->vllm_json) {
    fprintf(stderr, "calibench: --vllm-json writes one run; with --sweep each point's directory has its summary\n");
    return 2;
  }
  if (g.solo_baseline && !cfg->scenario_path) {
    fprintf(stderr, "calibench: --solo-baseline needs a --scenario with several classes\n");
    return 2;
  }
  *solo = g.solo_baseline;
  /* --tokenizer, else the --model's tokenizer.json from the local Hugging Face cache;
   * a model's that is not there leaves the approximate count, and the manifest says why. */
  if (g.tokenizer || cfg->model) {
    if (cb_tok_resolve(g.tokenizer, cfg->model, &cfg->tok_source, &err) != CB_OK) {
      if (g.tokenizer) return fail_err(&err);
      cfg->tok_source.how = cb_strdup(err.msg);
      cb_error_clear(&err);
    } else {
      if (cb_tok_load(cfg->tok_source.path, &cfg->tok, &err) != CB_OK) return fail_err(&err);
      cb_token_counter counter = {.count = cb_tok_count, .ctx = cfg->tok, .name = cb_tok_name(cfg->tok)};
      w->counter = counter;
    }
  }
  /* A user's Authorization header wins over the key in the environment: one is sent. */
  cfg->auth_header = cb_runner_has_header(cfg->headers, cfg->n_headers, "Authorization");
  const char *key = cfg->auth_header ? NULL : getenv(cfg->api_key_env);
  if (key && *key) cfg->api_key = cb_strdup(key);
  if (!cfg->url) {
    int rc = build_sim(&g, cfg);
    if (rc >= 0) return rc;
  }
  if (virtual_time) {
    /* A prediction is a function of its inputs: so is its run id (records compare
     * byte for byte between two runs of the same prediction). */
    cb_buf b;
    cb_buf_init(&b, 0);
    cb_sim_params_write_json(&cfg->sim.engine, &b);
    uint64_t h = cb_hash3_u64(cfg->workload.seed, (uint64_t)cfg->sim.replicas, (uint64_t)cfg->exact_prompts);
    for (size_t i = 0; i < b.len; i++) h = cb_hash3_u64(h, (unsigned char)b.data[i], i);
    cb_buf_free(&b);
    snprintf(cfg->run_id, sizeof cfg->run_id, "sim%08llx", (unsigned long long)(h & 0xffffffffu));
    if (!g.out_given) cb_session_config_default_out_dir(cfg);
  }
  return -1;
}
