/*
 * cmd_sim.c - `calibench sim ...`: the built-in inference simulator.
 *   sim serve   the engine behind an OpenAI-compatible HTTP server, in real time
 *   sim run     the engine in virtual time, with run's options (cmd_run.c)
 */
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/fdlimit.h"
#include "calibench/sim.h"
#include "calibench/sim_server.h"
#include "cli.h"
#include "sim_options.h"

static void sim_usage(FILE *out) {
  fprintf(out,
          "usage: calibench sim <subcommand> [options]\n"
          "\n"
          "subcommands:\n"
          "  serve      serve the OpenAI HTTP API in real time from the simulator engine\n"
          "  run        predict a run: replay a workload through the engine in virtual time and\n"
          "             write the same results as 'calibench run', marked predicted\n"
          "  options    list the deployment options that sim serve and sim run take as --NAME\n"
          "             and run takes as --sim-NAME: name, argument, help, tab-separated\n"
          "\n"
          "Run 'calibench sim serve --help' or 'calibench sim run --help' for their options.\n");
}

static void list_names(FILE *out, const char *const *names) {
  for (int i = 0; names[i]; i++) fprintf(out, "%s%s", i ? ", " : "", names[i]);
}

static void serve_usage(FILE *out) {
  fprintf(out,
          "usage: calibench sim serve [options]\n"
          "\n"
          "Simulate an LLM inference server (vLLM-like continuous batching, paged KV cache,\n"
          "prefix caching, roofline step times) behind an OpenAI-compatible HTTP API:\n"
          "GET /health, /v1/models, /metrics; POST /v1/completions, /v1/chat/completions,\n"
          "/v1/embeddings. The first line on stdout is 'listening on HOST:PORT'.\n"
          "\n"
          "deployment (preset, then --profile, then the flags below, each overriding):\n"
          "  --model NAME              model preset, also the served model id [llama-3.1-8b]\n"
          "                            (");
  list_names(out, cb_sim_preset_model_names());
  fprintf(out,
          ")\n"
          "  --gpu NAME                GPU preset [h100-sxm] (");
  list_names(out, cb_sim_preset_gpu_names());
  fprintf(out,
          ")\n"
          "  --profile FILE            YAML file overriding any engine value (docs/simulator.md)\n"
          "  --replicas N              data-parallel engines behind the endpoint [1]\n");
  sim_options_usage(out, 0, 28);
  fprintf(out,
          "  --print-profile           print the engine profile these options resolve to (JSON,\n"
          "                            as sim run's manifest records it) and exit\n"
          "\n"
          "server:\n"
          "  --host ADDR               address to bind [127.0.0.1]\n"
          "  --port N                  port; 0 picks a free one [8000]\n"
          "  --reuse-port              let several sim serve processes listen on one --port\n"
          "                            (SO_REUSEPORT): the kernel spreads connections over\n"
          "                            them, each an independent server (docs/run.md, \"Scale\")\n"
          "  --time-scale X            wall seconds per simulated second; 0.1 runs 10x faster [1]\n"
          "  --max-body SIZE           larger request bodies get 413 (e.g. 512K, 4M) [1M]\n"
          "  --header-timeout DUR      a request must arrive whole within DUR of its first\n"
          "                            byte, else 408 and close (slow senders); 0 = none [10s]\n"
          "  --idle-timeout DUR        close a connection silent for DUR between requests,\n"
          "                            or not reading its response; 0 = none [60s]\n"
          "                            (DUR: 500ms, 2s, 1m; bare seconds; docs/durations.md)\n"
          "  --embedding-dim N         /v1/embeddings vector size [1024]\n"
          "  --responses FILE          JSONL {\"prompt\", \"response\"}: scripted answers\n"
          "  --trace-out FILE          JSONL ground truth per finished request (monotonic ns)\n"
          "  --tokenizer FILE|NAME     count prompt tokens with this tokenizer (tiktoken encoding\n"
          "                            or tokenizer.json) [an approximation, docs/simulator.md]\n"
          "  --fault SPEC              inject faults; repeatable. SPEC is KIND[:key=value,...]\n"
          "                            KIND: 429 500 503 cut malformed-sse invalid-json stall\n"
          "                            keys: p=PROB index=N every=N after=TOKENS ms=STALL\n"
          "                            retry-after=SECONDS (ms= and retry-after= take a DUR\n"
          "                            too) (e.g. --fault cut:p=0.05,after=10)\n"
          "  --seed N                  seed for output text, EOS and faults [0]\n"
          "  --quiet                   no start-up summary on stderr\n"
          "  -h, --help                show this help\n");
}

/* A timeout flag in ms: 0 is none, anything else at least 1ms (the server counts ms). */
static int timeout_ms(const char *opt, const char *s, uint64_t *out) {
  uint64_t ns;
  if (cli_parse_duration(opt, s, 1, CB_NS_PER_MS, &ns)) return -1;
  *out = ns / CB_NS_PER_MS;
  return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(evutil_socket_t sig, short what, void *arg) {
  (void)what;
  stop_signal = (sig_atomic_t)sig;
  event_base_loopbreak(arg);
}

enum {
  OPT_MODEL = 256, OPT_GPU, OPT_PROFILE, OPT_REPLICAS, OPT_PRINT_PROFILE, OPT_HOST, OPT_PORT,
  OPT_TIME_SCALE, OPT_MAX_BODY, OPT_EMBED_DIM, OPT_RESPONSES, OPT_TRACE_OUT, OPT_FAULT,
  OPT_SEED, OPT_QUIET, OPT_TOKENIZER, OPT_HEADER_TIMEOUT, OPT_IDLE_TIMEOUT, OPT_REUSE_PORT,
  OPT_DEPLOY /* the deployment options' table (sim_options.c): OPT_DEPLOY + index */
};

/* The options of sim serve not in the deployment table, which getopt sees after it. */
static const struct option serve_options[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"replicas", required_argument, NULL, OPT_REPLICAS},
    {"print-profile", no_argument, NULL, OPT_PRINT_PROFILE},
    {"host", required_argument, NULL, OPT_HOST},
    {"port", required_argument, NULL, OPT_PORT},
    {"reuse-port", no_argument, NULL, OPT_REUSE_PORT},
    {"time-scale", required_argument, NULL, OPT_TIME_SCALE},
    {"max-body", required_argument, NULL, OPT_MAX_BODY},
    {"embedding-dim", required_argument, NULL, OPT_EMBED_DIM},
    {"responses", required_argument, NULL, OPT_RESPONSES},
    {"trace-out", required_argument, NULL, OPT_TRACE_OUT},
    {"fault", required_argument, NULL, OPT_FAULT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"tokenizer", required_argument, NULL, OPT_TOKENIZER},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void print_summary(const cb_sim_server_params *sp, cb_sim_server *srv,
                          const cb_fdlimit *fl) {
  (void)srv;
  const cb_sim_params *p = &sp->engine;
  cb_sim_capacity cap;
  cb_error err;
  if (cb_sim_capacity_compute(p, &cap, &err) != CB_OK) return;
  fprintf(stderr,
          "sim serve: %s on %d x %s (tp %d, weights %s, kv %s), %d replica%s, time scale %g\n"
          "sim serve: KV cache %lld blocks of %d tokens (%lld tokens) per replica, "
          "max_model_len %d\n"
          "sim serve: max_num_seqs %d, max_num_batched_tokens %d, prefix caching %s\n",
          p->model.name, p->tp, p->gpu.name, p->tp, cb_sim_dtype_name(p->weight_dtype),
          cb_sim_dtype_name(p->kv_dtype), sp->replicas, sp->replicas == 1 ? "" : "s",
          sp->time_scale, (long long)cap.num_blocks, p->block_size, (long long)cap.max_tokens,
          cap.max_model_len, p->max_num_seqs, p->max_num_batched_tokens,
          p->enable_prefix_caching ? "on" : "off");
  if (fl->err)
    fprintf(stderr, "sim serve: open files: %llu (RLIMIT_NOFILE could not be raised: %s)\n",
            (unsigned long long)fl->soft, strerror(fl->err));
  else if (fl->soft != fl->before)
    fprintf(stderr, "sim serve: open files: %llu (RLIMIT_NOFILE soft limit raised from %llu)\n",
            (unsigned long long)fl->soft, (unsigned long long)fl->before);
  else
    fprintf(stderr, "sim serve: open files: %llu (RLIMIT_NOFILE)\n", (unsigned long long)fl->soft);
}

static int sim_serve(int argc, char **argv) {
  enum { N_SERVE = sizeof serve_options / sizeof serve_options[0] - 1 };
  struct option opts[N_SERVE + SIM_OPTIONS_MAX + 1];
  sim_options_getopt(opts, 0, OPT_DEPLOY);
  memcpy(opts + sim_options_count, serve_options, sizeof serve_options);
  sim_deployment dep = {0};
  int print_profile = 0;
  cb_sim_server_params sp;
  cb_sim_server_default_params(&sp);
  cb_sim_fault *faults = NULL;
  size_t nfaults = 0;
  int rc = 2;
  long long v;
  double d;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (c >= OPT_DEPLOY && c < OPT_DEPLOY + (int)sim_options_count) {
      if (sim_options_parse(&dep.opts, (size_t)(c - OPT_DEPLOY), 0, optarg)) goto out;
      continue;
    }
    switch (c) {
      case 'h': serve_usage(stdout); rc = 0; goto out;
      case OPT_MODEL: dep.model = optarg; break;
      case OPT_GPU: dep.gpu = optarg; break;
      case OPT_PROFILE: dep.profile = optarg; break;
      case OPT_PRINT_PROFILE: print_profile = 1; break;
      case OPT_HOST: sp.host = optarg; break;
      case OPT_PORT: if (cli_parse_int("--port", optarg, 0, 65535, &v)) goto out; sp.port = (int)v; break;
      case OPT_REUSE_PORT: sp.reuse_port = 1; break;
      case OPT_TIME_SCALE: if (cli_parse_double("--time-scale", optarg, 1e-6, 1e6, &d)) goto out; sp.time_scale = d; break;
      case OPT_REPLICAS: if (cli_parse_int("--replicas", optarg, 1, 1024, &v)) goto out; sp.replicas = (int)v; break;
      case OPT_MAX_BODY: if (cli_parse_bytes("--max-body", optarg, &sp.max_body_bytes)) goto out; break;
      case OPT_EMBED_DIM: if (cli_parse_int("--embedding-dim", optarg, 1, 65536, &v)) goto out; sp.embedding_dim = (int)v; break;
      case OPT_RESPONSES: sp.responses_path = optarg; break;
      case OPT_TRACE_OUT: sp.trace_out_path = optarg; break;
      case OPT_TOKENIZER: sp.tokenizer = optarg; break;
      case OPT_FAULT: {
        cb_error err;
        faults = cb_reallocarray(faults, nfaults + 1, sizeof *faults);
        if (cb_sim_fault_parse(optarg, &faults[nfaults], &err) != CB_OK) {
          fprintf(stderr, "calibench: %s\n", err.msg);
          goto out;
        }
        nfaults++;
        break;
      }
      case OPT_SEED: if (cli_parse_int("--seed", optarg, 0, INT64_MAX, &v)) goto out; sp.seed = (uint64_t)v; break;
      case OPT_QUIET: sp.quiet = 1; break;
      case OPT_HEADER_TIMEOUT: if (timeout_ms("--header-timeout", optarg, &sp.header_timeout_ms)) goto out; break;
      case OPT_IDLE_TIMEOUT: if (timeout_ms("--idle-timeout", optarg, &sp.idle_timeout_ms)) goto out; break;
      default: fprintf(stderr, "Run 'calibench sim serve --help' for the options.\n"); goto out;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: sim serve: unexpected argument '%s'\n", argv[optind]);
    goto out;
  }
  if (sim_deployment_build(&dep, &sp.engine)) goto out;
  sp.behavior_path = sim_options_behavior(&dep.opts);
  if (print_profile) {
    cb_buf b;
    cb_buf_init(&b, 0);
    cb_sim_params_write_json(&sp.engine, &b);
    printf("%.*s\n", (int)b.len, b.data);
    cb_buf_free(&b);
    rc = 0;
    goto out;
  }
  sp.faults = faults;
  sp.num_faults = nfaults;
  cb_fdlimit fl; /* each connection is a socket: the soft limit goes up to the hard one */
  cb_fdlimit_raise(&fl);

  struct event_base *base = cb_sim_server_event_base_new();
  cb_sim_server *srv;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_sim_server_start(base, &sp, &srv, &err);
  if (st != CB_OK) {
    fprintf(stderr, "calibench: sim serve: %s\n", err.msg);
    event_base_free(base);
    rc = st == CB_ERR_NETWORK ? 1 : 2; /* could not listen vs bad input files */
    goto out;
  }
  printf("listening on %s:%d\n", sp.host, cb_sim_server_port(srv));
  fflush(stdout);
  if (!sp.quiet) print_summary(&sp, srv, &fl);
  struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
  struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
  event_add(sigint, NULL);
  event_add(sigterm, NULL);
  event_base_dispatch(base);
  if (!sp.quiet && stop_signal)
    fprintf(stderr, "sim serve: stopping on signal %d\n", (int)stop_signal);
  event_free(sigint);
  event_free(sigterm);
  cb_sim_server_free(srv);
  event_base_free(base);
  rc = 0;
out:
  cb_free(faults);
  return rc;
}

int cli_sim_main(int argc, char **argv) {
  if (argc < 2) {
    sim_usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    sim_usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "serve")) return sim_serve(argc - 1, argv + 1);
  if (!strcmp(argv[1], "run")) return cli_sim_run_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "options")) {
    if (argc > 2) {
      fprintf(stderr, "calibench: sim options: unexpected argument '%s'\n", argv[2]);
      return 2;
    }
    sim_options_list(stdout);
    return 0;
  }
  fprintf(stderr, "calibench: sim: unknown subcommand '%s'\n\n", argv[1]);
  sim_usage(stderr);
  return 2;
}
