/*
 * calibrate_stats.c - `calibench calibrate drift | expect | cost`: parse the options,
 * call the calib module, print the terminal report (or the JSON with --json) and write
 * the JSON with --out. Exit 0 ok, 1 when the result cannot be written, 2 for usage or
 * input errors.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "calibench/results.h"
#include "calibrate.h"

#define MAX_LIST 1024

/* ---- shared ------------------------------------------------------------------------- */

/* Parse "a,b,c" into out[] (at most max numbers, each in [lo, hi]). 0 ok, -1 printed. */
static int parse_list(const char *opt, const char *s, double lo, double hi, double *out, size_t max,
                      size_t *n) {
  *n = 0;
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || !isfinite(v) || v < lo || v > hi || (*end && *end != ',') ||
        *n == max) {
      fprintf(stderr, "calibench: %s: expected comma-separated numbers in [%g, %g], got '%s'\n",
              opt, lo, hi, s);
      return -1;
    }
    out[(*n)++] = v;
    if (!*end) return 0;
    p = end + 1;
  }
}

/* ---- drift ---------------------------------------------------------------------------- */

static void drift_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate drift [options] BENCHMARK PRODUCTION\n"
          "\n"
          "How far production's data are from the benchmark's: Jensen-Shannon divergence in\n"
          "bits (log base 2, in [0, 1]), KL both ways, the per-label table, the dominant\n"
          "shift, a bootstrap interval, the severity (mild < 0.05 <= moderate < 0.15 <=\n"
          "significant < 0.30 <= severe: retrain) and the accuracy factor\n"
          "max(0.5, exp(-s x JS)).\n"
          "\n"
          "BENCHMARK and PRODUCTION are each a label distribution, a JSON or YAML mapping\n"
          "{label: weight} (counts, shares or percentages), or a sample in JSON Lines, one\n"
          "record per line with the label at --field. Files ending in .jsonl or .ndjson are\n"
          "samples, others distributions; the prefixes dist: and jsonl: say it explicitly.\n"
          "\n"
          "  -f, --field KEY          the label's key in JSONL samples (a.b reaches nested keys)\n"
          "  --numeric                the samples are numbers (prompt lengths, say): bin both on\n"
          "                           shared edges; --field KEY, or lines that are bare numbers\n"
          "  --bins N                 quantile bins of the pooled samples [10]\n"
          "  --edges E1,E2,...        explicit bin edges instead of --bins\n"
          "  --task TYPE              classification (s = 2.5, range 2-3) or generation\n"
          "                           (s = 1.5, range 1-2) [s = 2.5]\n"
          "  --sensitivity S          the sensitivity s itself\n"
          "  --label-accuracy FILE    the benchmark's accuracy per label {label: 0.92}: also\n"
          "                           reweight it to production's label mix (measured factor)\n"
          "  --smoothing EPS          KL: additive smoothing of every share [1e-6]\n"
          "  --bench-n N              sample size behind a BENCHMARK distribution (interval)\n"
          "  --prod-n N               sample size behind a PRODUCTION distribution (interval)\n"
          "  --bootstrap B            bootstrap replicates for the JS interval; 0: none [2000]\n"
          "  --confidence C           the interval's level [0.95]\n"
          "  --seed N                 bootstrap seed [0]\n"
          "  --max-rows N             label rows in the table; 0: all [30]\n"
          "  -o, --out FILE           write the JSON result to FILE (docs/calibrate.md)\n"
          "  --json                   print the JSON instead of the table\n"
          "  -h, --help               show this help\n");
}

enum {
  D_NUMERIC = 256,
  D_BINS,
  D_EDGES,
  D_TASK,
  D_SENS,
  D_LABEL_ACC,
  D_SMOOTH,
  D_BENCH_N,
  D_PROD_N,
  D_BOOT,
  D_CONF,
  D_SEED,
  D_MAX_ROWS,
  D_JSON
};

static const struct option drift_options[] = {
    {"field", required_argument, NULL, 'f'},
    {"numeric", no_argument, NULL, D_NUMERIC},
    {"bins", required_argument, NULL, D_BINS},
    {"edges", required_argument, NULL, D_EDGES},
    {"task", required_argument, NULL, D_TASK},
    {"sensitivity", required_argument, NULL, D_SENS},
    {"label-accuracy", required_argument, NULL, D_LABEL_ACC},
    {"smoothing", required_argument, NULL, D_SMOOTH},
    {"bench-n", required_argument, NULL, D_BENCH_N},
    {"prod-n", required_argument, NULL, D_PROD_N},
    {"bootstrap", required_argument, NULL, D_BOOT},
    {"confidence", required_argument, NULL, D_CONF},
    {"seed", required_argument, NULL, D_SEED},
    {"max-rows", required_argument, NULL, D_MAX_ROWS},
    {"out", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, D_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Is this input a JSONL sample? Strips a dist:/jsonl: prefix from *path. */
static int is_sample(const char **path) {
  if (!strncmp(*path, "jsonl:", 6)) {
    *path += 6;
    return 1;
  }
  if (!strncmp(*path, "dist:", 5)) {
    *path += 5;
    return 0;
  }
  size_t n = strlen(*path);
  return (n > 6 && !strcmp(*path + n - 6, ".jsonl")) ||
         (n > 7 && !strcmp(*path + n - 7, ".ndjson"));
}

static cb_status load_side(const char *spec, const char *field, cb_calib_dist *d, cb_error *err) {
  const char *path = spec;
  if (is_sample(&path)) return cb_calib_sample_labels_load(d, path, field, err);
  return cb_calib_dist_load(d, path, err);
}

int cli_calibrate_drift(int argc, char **argv) {
  cb_calib_drift_params p;
  cb_calib_drift_default_params(&p);
  const char *field = NULL, *label_acc = NULL, *out_path = NULL;
  int numeric = 0, json = 0;
  long long bins = 10, max_rows = 30, v;
  double edges[MAX_LIST];
  size_t n_edges = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "f:o:h", drift_options, NULL)) != -1) {
    switch (c) {
      case 'h': drift_usage(stdout); return 0;
      case 'f': field = optarg; break;
      case 'o': out_path = optarg; break;
      case D_NUMERIC: numeric = 1; break;
      case D_JSON: json = 1; break;
      case D_LABEL_ACC: label_acc = optarg; break;
      case D_BINS:
        if (cli_parse_int("--bins", optarg, 1, 10000, &bins)) return 2;
        break;
      case D_EDGES:
        if (parse_list("--edges", optarg, -1e300, 1e300, edges, MAX_LIST, &n_edges)) return 2;
        if (n_edges < 2) {
          fprintf(stderr, "calibench: --edges: give at least 2 edges, got '%s'\n", optarg);
          return 2;
        }
        break;
      case D_TASK: {
        cb_error err;
        cb_error_clear(&err);
        if (cb_calib_task_parse(optarg, &p.task, &err) != CB_OK) {
          fprintf(stderr, "calibench: --task: %s\n", err.msg);
          return 2;
        }
        break;
      }
      case D_SENS:
        if (cli_parse_double("--sensitivity", optarg, 1e-9, 1000, &p.sensitivity)) return 2;
        break;
      case D_SMOOTH:
        if (cli_parse_double("--smoothing", optarg, 0, 0.5, &p.kl_epsilon)) return 2;
        break;
      case D_BENCH_N:
        if (cli_parse_int("--bench-n", optarg, 1, 1000000000000LL, &v)) return 2;
        p.bench_n = (uint64_t)v;
        break;
      case D_PROD_N:
        if (cli_parse_int("--prod-n", optarg, 1, 1000000000000LL, &v)) return 2;
        p.prod_n = (uint64_t)v;
        break;
      case D_BOOT:
        if (cli_parse_int("--bootstrap", optarg, 0, 1000000, &v)) return 2;
        if (v == 1) {
          fprintf(stderr, "calibench: --bootstrap: use 0 (no interval) or at least 2 replicates\n");
          return 2;
        }
        p.boot.replicates = (size_t)v;
        break;
      case D_CONF:
        if (cli_parse_double("--confidence", optarg, 0.5, 0.9999, &p.boot.level)) return 2;
        break;
      case D_SEED:
        if (cli_parse_int("--seed", optarg, 0, INT64_MAX, &v)) return 2;
        p.boot.seed = (uint64_t)v;
        break;
      case D_MAX_ROWS:
        if (cli_parse_int("--max-rows", optarg, 0, 100000000, &max_rows)) return 2;
        break;
      default: drift_usage(stderr); return 2;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr,
            "calibench: calibrate drift: expected BENCHMARK and PRODUCTION, got %d argument%s\n\n",
            argc - optind, argc - optind == 1 ? "" : "s");
    drift_usage(stderr);
    return 2;
  }
  if (!numeric && (n_edges || bins != 10)) {
    fprintf(stderr, "calibench: calibrate drift: --bins and --edges need --numeric\n");
    return 2;
  }
  const char *bench_spec = argv[optind], *prod_spec = argv[optind + 1];
  cb_error err;
  cb_error_clear(&err);
  cb_calib_dist bench, prod, acc;
  cb_calib_dist_init(&bench);
  cb_calib_dist_init(&prod);
  cb_calib_dist_init(&acc);
  cb_calib_drift_result r;
  memset(&r, 0, sizeof r);
  int rc = 2;
  if (numeric) {
    double *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    const char *pa = bench_spec, *pb = prod_spec;
    is_sample(&pa);
    is_sample(&pb);
    cb_status st = cb_calib_sample_values_load(pa, field, &a, &na, &err);
    if (st == CB_OK) st = cb_calib_sample_values_load(pb, field, &b, &nb, &err);
    if (st == CB_OK)
      st = cb_calib_dist_bin_pair(a, na, b, nb, n_edges ? edges : NULL, n_edges, (size_t)bins,
                                  &bench, &prod, NULL, NULL, &err);
    cb_free(a);
    cb_free(b);
    if (st != CB_OK) goto fail;
    snprintf(bench.path, sizeof bench.path, "%s", pa);
    snprintf(prod.path, sizeof prod.path, "%s", pb);
    if (field) {
      snprintf(bench.field, sizeof bench.field, "%s", field);
      snprintf(prod.field, sizeof prod.field, "%s", field);
    }
  } else {
    if (load_side(bench_spec, field, &bench, &err) != CB_OK ||
        load_side(prod_spec, field, &prod, &err) != CB_OK)
      goto fail;
  }
  if (label_acc && cb_calib_label_values_load(&acc, label_acc, &err) != CB_OK) goto fail;
  if (cb_calib_drift_compute(&bench, &prod, label_acc ? &acc : NULL, &p, &r, &err) != CB_OK)
    goto fail;
  cb_buf table, js;
  cb_buf_init(&table, 0);
  cb_buf_init(&js, 0);
  cb_calib_drift_format(&r, (size_t)max_rows, &table);
  cb_calib_drift_write_json(&r, &js);
  rc = cli_calibrate_emit("drift", &table, &js, json, out_path);
  cb_buf_free(&table);
  cb_buf_free(&js);
  goto done;
fail:
  rc = cli_calibrate_input_error("drift", &err);
done:
  cb_calib_drift_result_free(&r);
  cb_calib_dist_free(&bench);
  cb_calib_dist_free(&prod);
  cb_calib_dist_free(&acc);
  return rc;
}

/* ---- expect --------------------------------------------------------------------------- */

static void expect_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate expect --paper VALUE [options]\n"
          "\n"
          "What to expect in production from a paper's figure:\n"
          "  production = paper x data factor x environment factor x task factor x safety margin\n"
          "Each factor comes from the first of its inputs given, else its default; the\n"
          "report shows each one's inputs and formula and whether it was measured.\n"
          "\n"
          "  --paper VALUE            the paper's figure (required)\n"
          "  --metric NAME            what the figure is, for the report [accuracy]\n"
          "data factor [1: no drift information]:\n"
          "  --drift FILE             a 'calibrate drift --out' result: its reweighted factor\n"
          "                           (with --label-accuracy), else max(0.5, exp(-s x JS))\n"
          "  --js BITS                a JS divergence in bits: max(0.5, exp(-s x JS))\n"
          "  --data-factor F          the factor itself\n"
          "  --task TYPE              s from the task: classification 2.5, generation 1.5\n"
          "  --sensitivity S          s itself\n"
          "environment factor [0.95: assumed within capacity]:\n"
          "  --results DIR            a result directory (run or sim run) at the production\n"
          "                           load: its throughput / the paper's (best)\n"
          "  --env-metric KEY         the summary throughput to compare: output_tokens_per_s,\n"
          "                           requests_per_s, total_tokens_per_s,\n"
          "                           goodput_requests_per_s [output_tokens_per_s]\n"
          "  --env-paper VALUE        the paper's figure for --env-metric [--paper when\n"
          "                           --metric names the same key]\n"
          "  --concurrency N          production load (concurrent requests) ...\n"
          "  --capacity N             ... and the deployment's capacity: 0.95 within capacity,\n"
          "                           max(0.3, capacity / concurrency) beyond\n"
          "  --env-factor F           the factor itself\n"
          "task factor [1: a single step]:\n"
          "  --tool-calls N           a multi-step agent: step-success ^ N\n"
          "  --step-success P         success rate of one tool call [0.95]\n"
          "  --task-factor-from PATH  a probe agent result (DIR or DIR/probe.json): its\n"
          "                           measured per-call success instead of --step-success,\n"
          "                           ^ --tool-calls (default: its runs' mean tool calls)\n"
          "  --steps P1,P2,...        per-step success rates: their product\n"
          "  --task-factor F          the factor itself\n"
          "safety margin:\n"
          "  --margin M               in (0, 1] [0.85]\n"
          "output:\n"
          "  -o, --out FILE           write the JSON result to FILE (docs/calibrate.md)\n"
          "  --json                   print the JSON instead of the table\n"
          "  -h, --help               show this help\n");
}

enum {
  E_PAPER = 256,
  E_METRIC,
  E_DRIFT,
  E_JS,
  E_DATA_F,
  E_TASK,
  E_SENS,
  E_RESULTS,
  E_ENV_METRIC,
  E_ENV_PAPER,
  E_CONC,
  E_CAP,
  E_ENV_F,
  E_TOOLS,
  E_STEP_S,
  E_TASK_FROM,
  E_STEPS,
  E_TASK_F,
  E_MARGIN,
  E_JSON
};

static const struct option expect_options[] = {
    {"paper", required_argument, NULL, E_PAPER},
    {"metric", required_argument, NULL, E_METRIC},
    {"drift", required_argument, NULL, E_DRIFT},
    {"js", required_argument, NULL, E_JS},
    {"data-factor", required_argument, NULL, E_DATA_F},
    {"task", required_argument, NULL, E_TASK},
    {"sensitivity", required_argument, NULL, E_SENS},
    {"results", required_argument, NULL, E_RESULTS},
    {"env-metric", required_argument, NULL, E_ENV_METRIC},
    {"env-paper", required_argument, NULL, E_ENV_PAPER},
    {"concurrency", required_argument, NULL, E_CONC},
    {"capacity", required_argument, NULL, E_CAP},
    {"env-factor", required_argument, NULL, E_ENV_F},
    {"tool-calls", required_argument, NULL, E_TOOLS},
    {"step-success", required_argument, NULL, E_STEP_S},
    {"task-factor-from", required_argument, NULL, E_TASK_FROM},
    {"steps", required_argument, NULL, E_STEPS},
    {"task-factor", required_argument, NULL, E_TASK_F},
    {"margin", required_argument, NULL, E_MARGIN},
    {"out", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, E_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cli_calibrate_expect(int argc, char **argv) {
  cb_calib_expect_params p;
  cb_calib_expect_default_params(&p);
  const char *out_path = NULL;
  int json = 0;
  double steps[MAX_LIST];
  long long v;
  cb_error err;
  cb_error_clear(&err);
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:h", expect_options, NULL)) != -1) {
    switch (c) {
      case 'h': expect_usage(stdout); return 0;
      case 'o': out_path = optarg; break;
      case E_JSON: json = 1; break;
      case E_PAPER:
        if (cli_parse_double("--paper", optarg, 1e-300, 1e300, &p.paper)) return 2;
        break;
      case E_METRIC: p.metric = optarg; break;
      case E_DRIFT: p.drift_path = optarg; break;
      case E_JS:
        if (cli_parse_double("--js", optarg, 0, 1, &p.js_bits)) return 2;
        break;
      case E_DATA_F:
        if (cli_parse_double("--data-factor", optarg, 1e-9, 10, &p.data_factor)) return 2;
        break;
      case E_TASK:
        if (cb_calib_task_parse(optarg, &p.task, &err) != CB_OK) {
          fprintf(stderr, "calibench: --task: %s\n", err.msg);
          return 2;
        }
        break;
      case E_SENS:
        if (cli_parse_double("--sensitivity", optarg, 1e-9, 1000, &p.sensitivity)) return 2;
        break;
      case E_RESULTS: p.results_dir = optarg; break;
      case E_ENV_METRIC: p.env_metric = optarg; break;
      case E_ENV_PAPER:
        if (cli_parse_double("--env-paper", optarg, 1e-300, 1e300, &p.env_paper)) return 2;
        break;
      case E_CONC:
        if (cli_parse_double("--concurrency", optarg, 1e-9, 1e12, &p.concurrency)) return 2;
        break;
      case E_CAP:
        if (cli_parse_double("--capacity", optarg, 1e-9, 1e12, &p.capacity)) return 2;
        break;
      case E_ENV_F:
        if (cli_parse_double("--env-factor", optarg, 1e-9, 10, &p.env_factor)) return 2;
        break;
      case E_TOOLS:
        if (cli_parse_int("--tool-calls", optarg, 0, 100000, &v)) return 2;
        p.tool_calls = (long)v;
        break;
      case E_STEP_S:
        if (cli_parse_double("--step-success", optarg, 1e-9, 1, &p.step_success)) return 2;
        break;
      case E_TASK_FROM: p.task_factor_from = optarg; break;
      case E_STEPS:
        if (parse_list("--steps", optarg, 1e-9, 1, steps, MAX_LIST, &p.n_steps)) return 2;
        p.steps = steps;
        break;
      case E_TASK_F:
        if (cli_parse_double("--task-factor", optarg, 1e-9, 10, &p.task_factor)) return 2;
        break;
      case E_MARGIN:
        if (cli_parse_double("--margin", optarg, 1e-9, 1, &p.margin)) return 2;
        break;
      default: expect_usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: calibrate expect: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (isnan(p.paper)) {
    fprintf(stderr,
            "calibench: calibrate expect: --paper VALUE is required (the paper's figure)\n");
    return 2;
  }
  cb_calib_expect_result r;
  if (cb_calib_expect_compute(&p, &r, &err) != CB_OK) return cli_calibrate_input_error("expect", &err);
  cb_buf table, js;
  cb_buf_init(&table, 0);
  cb_buf_init(&js, 0);
  cb_calib_expect_format(&r, &table);
  cb_calib_expect_write_json(&r, &js);
  int rc = cli_calibrate_emit("expect", &table, &js, json, out_path);
  cb_buf_free(&table);
  cb_buf_free(&js);
  return rc;
}

/* ---- cost ------------------------------------------------------------------------------ */

static void cost_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate cost [options] CANDIDATES\n"
          "\n"
          "Cost per 1,000 requests and accuracy per unit of cost of each candidate, and the\n"
          "cheapest whose accuracy is within the tolerance of the reference. CANDIDATES is a\n"
          "YAML or JSON file (docs/calibrate.md): each candidate has a model, an accuracy (or\n"
          "an eval result file) and prices per 1k input/output tokens, or a GPU-hour price\n"
          "with a throughput (stated, or measured in a result directory).\n"
          "\n"
          "  --tolerance T            how far below the reference's accuracy a candidate may\n"
          "                           be: 5%% (relative) or 2pp (accuracy points) [5%%]\n"
          "  --reference MODEL        the candidate to compare with [the most accurate]\n"
          "  --input-tokens N         input tokens per request (for per-token prices)\n"
          "  --output-tokens N        output tokens per request\n"
          "  -o, --out FILE           write the JSON result to FILE (docs/calibrate.md)\n"
          "  --json                   print the JSON instead of the table\n"
          "  -h, --help               show this help\n");
}

enum { C_TOL = 256, C_REF, C_IN, C_OUT_TOK, C_JSON };

static const struct option cost_options[] = {
    {"tolerance", required_argument, NULL, C_TOL},
    {"reference", required_argument, NULL, C_REF},
    {"input-tokens", required_argument, NULL, C_IN},
    {"output-tokens", required_argument, NULL, C_OUT_TOK},
    {"out", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, C_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* "5%" (relative), "2pp" (points); a bare number is a fraction (0.05 = 5%). */
static int parse_tolerance(const char *s, double *tol, bool *points) {
  char buf[64];
  size_t n = strlen(s);
  *points = false;
  double scale = 1.0;
  if (n >= 2 && !strcmp(s + n - 2, "pp"))
    *points = true, scale = 0.01, n -= 2;
  else if (n >= 1 && s[n - 1] == '%')
    scale = 0.01, n -= 1;
  if (n == 0 || n >= sizeof buf) goto bad;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (end == buf || *end || errno || !isfinite(v) || v < 0) goto bad;
  *tol = v * scale;
  if (*tol > (*points ? 1.0 : 0.999999)) goto bad;
  return 0;
bad:
  fprintf(stderr,
          "calibench: --tolerance: expected a relative tolerance such as 5%% or accuracy points "
          "such as 2pp, got '%s'\n",
          s);
  return -1;
}

int cli_calibrate_cost(int argc, char **argv) {
  cb_calib_cost_params p;
  cb_calib_cost_default_params(&p);
  const char *out_path = NULL;
  int json = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:h", cost_options, NULL)) != -1) {
    switch (c) {
      case 'h': cost_usage(stdout); return 0;
      case 'o': out_path = optarg; break;
      case C_JSON: json = 1; break;
      case C_TOL:
        if (parse_tolerance(optarg, &p.tolerance, &p.tolerance_points)) return 2;
        break;
      case C_REF: p.reference = optarg; break;
      case C_IN:
        if (cli_parse_double("--input-tokens", optarg, 0, 1e9, &p.input_tokens)) return 2;
        break;
      case C_OUT_TOK:
        if (cli_parse_double("--output-tokens", optarg, 0, 1e9, &p.output_tokens)) return 2;
        break;
      default: cost_usage(stderr); return 2;
    }
  }
  if (argc - optind != 1) {
    fprintf(stderr, "calibench: calibrate cost: expected one CANDIDATES file, got %d arguments\n\n",
            argc - optind);
    cost_usage(stderr);
    return 2;
  }
  cb_error err;
  cb_error_clear(&err);
  cb_calib_cost_set set;
  if (cb_calib_cost_load(argv[optind], &set, &err) != CB_OK) return cli_calibrate_input_error("cost", &err);
  cb_calib_cost_result r;
  if (cb_calib_cost_compute(&set, &p, &r, &err) != CB_OK) {
    cb_calib_cost_set_free(&set);
    return cli_calibrate_input_error("cost", &err);
  }
  cb_buf table, js;
  cb_buf_init(&table, 0);
  cb_buf_init(&js, 0);
  cb_calib_cost_format(&set, &r, &table);
  cb_calib_cost_write_json(&set, &r, &js);
  int rc = cli_calibrate_emit("cost", &table, &js, json, out_path);
  cb_buf_free(&table);
  cb_buf_free(&js);
  cb_calib_cost_result_free(&r);
  cb_calib_cost_set_free(&set);
  return rc;
}
