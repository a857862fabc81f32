/*
 * calibrate_perf.c - `calibench calibrate roofline | fit | perf | sla`: parse the
 * options, call the calib module's performance half, print the terminal table (or the
 * JSON with --json) and write the JSON with --out (fit also writes the fitted profile).
 * Exit 0 ok, 1 when a result cannot be written, 2 for usage or input errors.
 * docs/calibrate-perf.md is the user's page.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/results.h"
#include "calibrate.h"

/* ---- shared ---------------------------------------------------------------------------- */

/* The deployment: presets, then the profile, then --tp (as `sim serve`). */
typedef struct deploy_opts {
  const char *model, *gpu, *profile;
  long long tp;
} deploy_opts;

/* One subcommand's output: the table for people and the JSON for tools. */
typedef struct calib_output {
  cb_buf table, js;
} calib_output;

static void output_init(calib_output *o) {
  cb_buf_init(&o->table, 0);
  cb_buf_init(&o->js, 0);
}

/* Loads DIR/records.jsonl into set (initialised here); path gets that file's
   name for later messages. */
static cb_status load_records(const char *dir, cb_record_set *set, char *path, size_t path_size,
                              cb_error *err) {
  snprintf(path, path_size, "%s/records.jsonl", dir);
  cb_record_set_init(set);
  size_t torn = 0;
  return cb_record_set_load(set, path, &torn, err);
}

static int build_params(const char *sub, const deploy_opts *d, cb_sim_params *p) {
  cb_error err;
  cb_error_clear(&err);
  cb_sim_default_params(p);
  if (d->model && cb_sim_preset_model(d->model, &p->model, &err) != CB_OK) return cli_calibrate_input_error(sub, &err);
  if (d->gpu) {
    if (cb_sim_preset_gpu(d->gpu, &p->gpu, &err) != CB_OK) return cli_calibrate_input_error(sub, &err);
    cb_sim_params_apply_gpu_defaults(p);
  }
  if (d->profile && cb_sim_params_load_yaml(p, d->profile, &err) != CB_OK) return cli_calibrate_input_error(sub, &err);
  if (d->tp) p->tp = (int)d->tp;
  if (cb_sim_params_validate(p, &err) != CB_OK) return cli_calibrate_input_error(sub, &err);
  return 0;
}

#define DEPLOY_HELP                                                                      \
  "deployment (preset, then --profile, then --tp; docs/simulator.md):\n"                 \
  "  --profile FILE       YAML engine profile\n"                                         \
  "  --model NAME         model preset [llama-3.1-8b]\n"                                 \
  "  --gpu NAME           GPU preset [h100-sxm]\n"                                       \
  "  --tp N               tensor-parallel degree [1]\n"

enum { O_PROFILE = 256, O_MODEL, O_GPU, O_TP, O_OUT, O_JSON, O_PROMPT_LEN, O_OUTPUT_LEN, O_BATCH,
       O_RUN, O_WRITE_PROFILE, O_CLAIMS, O_CLAIM, O_MARGIN, O_METRICS, O_PERCENTILES, O_AT };

/* What every subcommand's options set: the deployment (roofline and fit take it),
   --out and --json. */
typedef struct sub_opts {
  const char *sub; /* the subcommand, for messages */
  void (*usage)(FILE *out);
  deploy_opts d;
  const char *out;
  int json;
} sub_opts;

/* An option handler's answer: taken, not one of its options, or a bad value (the
   handler has said why). */
enum { OPT_TAKEN = 0, OPT_UNKNOWN = 1, OPT_BAD = 2 };

static int common_opt(int c, sub_opts *s) {
  switch (c) {
    case O_PROFILE: s->d.profile = optarg; return OPT_TAKEN;
    case O_MODEL: s->d.model = optarg; return OPT_TAKEN;
    case O_GPU: s->d.gpu = optarg; return OPT_TAKEN;
    case O_TP: return cli_parse_int("--tp", optarg, 1, 64, &s->d.tp) ? OPT_BAD : OPT_TAKEN;
    case O_OUT: s->out = optarg; return OPT_TAKEN;
    case O_JSON: s->json = 1; return OPT_TAKEN;
    default: return OPT_UNKNOWN;
  }
}

/* getopt_long over argv with `opts`: --help, the shared options, then the subcommand's
   own through `own` (an OPT_ answer). Returns -1 to go on with the operands at optind,
   else the exit status (0 after --help, 2 for a usage error). */
static int parse_opts(int argc, char **argv, const struct option *opts, sub_opts *s,
                      int (*own)(int c, void *ctx), void *ctx) {
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (c == 'h') {
      s->usage(stdout);
      return 0;
    }
    int r = common_opt(c, s);
    if (r == OPT_UNKNOWN) r = own(c, ctx);
    if (r == OPT_UNKNOWN)
      fprintf(stderr, "Run 'calibench calibrate %s --help' for the options.\n", s->sub);
    if (r != OPT_TAKEN) return 2;
  }
  return -1;
}

/* Prints (and with --out writes) the output, then frees it. */
static int output_emit(const sub_opts *s, calib_output *o) {
  int rc = cli_calibrate_emit(s->sub, &o->table, &o->js, s->json, s->out);
  cb_buf_free(&o->table);
  cb_buf_free(&o->js);
  return rc;
}

#define COMMON_OPTIONS                                          \
  {"profile", required_argument, NULL, O_PROFILE},              \
      {"model", required_argument, NULL, O_MODEL},              \
      {"gpu", required_argument, NULL, O_GPU},                  \
      {"tp", required_argument, NULL, O_TP},                    \
      {"out", required_argument, NULL, O_OUT},                  \
      {"json", no_argument, NULL, O_JSON}, {"help", no_argument, NULL, 'h'}

/* ---- roofline --------------------------------------------------------------------------- */

static void roofline_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate roofline [options]\n"
          "\n"
          "The physical bounds of a model on a GPU with tensor parallelism: the minimum TTFT\n"
          "of a prompt, the minimum TPOT at a batch size, the maximum decode throughput the\n"
          "KV cache allows; each at the roofline's limit (peak FLOP/s and bandwidth) and with\n"
          "the profile's efficiencies. With --run, what a run achieved: MBU and MFU.\n"
          "\n" DEPLOY_HELP
          "\n"
          "bounds:\n"
          "  --prompt-len N       prompt tokens for the TTFT bound [1024]\n"
          "  --output-len N       output tokens per request (decode context prompt + N/2) [128]\n"
          "  --batch N            sequences decoding together for the TPOT bound [1]\n"
          "  --run DIR            a result directory: its achieved MBU and MFU\n"
          "\n"
          "output:\n"
          "  --out FILE           write the JSON result (docs/calibrate-perf.md)\n"
          "  --json               print the JSON instead of the table\n"
          "  -h, --help           show this help\n");
}

typedef struct roofline_opts {
  cb_calib_roofline_params rp;
  const char *run;
} roofline_opts;

static int roofline_opt(int c, void *ctx) {
  roofline_opts *o = ctx;
  long long v;
  switch (c) {
    case O_PROMPT_LEN: if (cli_parse_int("--prompt-len", optarg, 1, 1 << 26, &v)) return OPT_BAD; o->rp.prompt_len = v; return OPT_TAKEN;
    case O_OUTPUT_LEN: if (cli_parse_int("--output-len", optarg, 1, 1 << 26, &v)) return OPT_BAD; o->rp.output_len = v; return OPT_TAKEN;
    case O_BATCH: if (cli_parse_int("--batch", optarg, 1, 1 << 20, &v)) return OPT_BAD; o->rp.batch = v; return OPT_TAKEN;
    case O_RUN: o->run = optarg; return OPT_TAKEN;
    default: return OPT_UNKNOWN;
  }
}

int cli_calibrate_roofline(int argc, char **argv) {
  static const struct option opts[] = {COMMON_OPTIONS,
                                       {"prompt-len", required_argument, NULL, O_PROMPT_LEN},
                                       {"output-len", required_argument, NULL, O_OUTPUT_LEN},
                                       {"batch", required_argument, NULL, O_BATCH},
                                       {"run", required_argument, NULL, O_RUN},
                                       {NULL, 0, NULL, 0}};
  sub_opts s = {.sub = "roofline", .usage = roofline_usage};
  roofline_opts ro = {.run = NULL};
  cb_calib_roofline_default_params(&ro.rp);
  int rc = parse_opts(argc, argv, opts, &s, roofline_opt, &ro);
  if (rc >= 0) return rc;
  if (optind < argc) {
    fprintf(stderr, "calibench: calibrate roofline: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  cb_sim_params p;
  if (build_params("roofline", &s.d, &p)) return 2;
  cb_error err;
  cb_error_clear(&err);
  cb_calib_roofline r;
  if (cb_calib_roofline_compute(&p, &ro.rp, &r, &err) != CB_OK) return cli_calibrate_input_error("roofline", &err);
  if (ro.run) {
    char path[1100];
    cb_record_set set;
    cb_status st = load_records(ro.run, &set, path, sizeof path, &err);
    if (st == CB_OK) st = cb_calib_achieved_compute(&p, &set, path, &r.run, &err);
    cb_record_set_free(&set);
    if (st != CB_OK) return cli_calibrate_input_error("roofline", &err);
    r.has_run = 1;
    snprintf(r.run_dir, sizeof r.run_dir, "%s", ro.run);
  }
  calib_output o;
  output_init(&o);
  cb_calib_roofline_format(&r, &o.table);
  cb_calib_roofline_write_json(&r, &o.js);
  return output_emit(&s, &o);
}

/* ---- fit -------------------------------------------------------------------------------------- */

static void fit_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate fit [options] RESULT_DIR...\n"
          "\n"
          "Fit the simulator profile's MFU, MBU and per-step overhead to measured runs of one\n"
          "deployment: least squares on TTFT against prompt length (prefills that ran alone)\n"
          "and ITL against concurrency (pure decode steps), each step costed by the\n"
          "simulator's roofline. Reports the fit error and writes the fitted profile, which\n"
          "'calibench sim run --profile' and 'sim serve --profile' load. A directory with a\n"
          "sweep.json stands for all its points. Best input: a concurrency sweep with prompts\n"
          "of varied, long lengths (e.g. run --sweep concurrency=1,8,32 --len-dist uniform).\n"
          "\n" DEPLOY_HELP
          "                       (the deployment the runs were measured on: the base profile)\n"
          "\n"
          "output:\n"
          "  --write-profile FILE the fitted profile (YAML) [fitted-profile.yaml]\n"
          "  --out FILE           write the JSON result (docs/calibrate-perf.md)\n"
          "  --json               print the JSON instead of the table\n"
          "  -h, --help           show this help\n");
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* RESULT_DIR, or each point of DIR/sweep.json. */
static int add_dirs(const char *dir, char ***dirs, size_t *n) {
  char sweep[1100];
  snprintf(sweep, sizeof sweep, "%s/sweep.json", dir);
  if (!is_file(sweep)) {
    *dirs = cb_reallocarray(*dirs, *n + 1, sizeof **dirs);
    (*dirs)[(*n)++] = cb_strdup(dir);
    return 0;
  }
  json_t *root;
  cb_error err;
  cb_error_clear(&err);
  if (cb_json_load_file(sweep, 0, CB_LIMIT_JSON_BYTES, &root, &err) != CB_OK) {
    fprintf(stderr, "calibench: calibrate fit: %s\n", err.msg);
    return -1;
  }
  json_t *pts = json_object_get(root, "points");
  if (!json_is_array(pts)) {
    fprintf(stderr, "calibench: calibrate fit: %s: expected a sweep with 'points'\n", sweep);
    json_decref(root);
    return -1;
  }
  size_t i;
  json_t *pt;
  json_array_foreach(pts, i, pt) {
    const char *d = json_string_value(json_object_get(pt, "dir"));
    if (!d) continue;
    const char *base = strrchr(d, '/');
    char path[1200];
    snprintf(path, sizeof path, "%s/records.jsonl", d);
    if (!is_file(path)) snprintf(path, sizeof path, "%s/points/%s", dir, base ? base + 1 : d);
    else snprintf(path, sizeof path, "%s", d);
    *dirs = cb_reallocarray(*dirs, *n + 1, sizeof **dirs);
    (*dirs)[(*n)++] = cb_strdup(path);
  }
  json_decref(root);
  return 0;
}

static int fit_opt(int c, void *ctx) {
  if (c != O_WRITE_PROFILE) return OPT_UNKNOWN;
  *(const char **)ctx = optarg;
  return OPT_TAKEN;
}

int cli_calibrate_fit(int argc, char **argv) {
  static const struct option opts[] = {COMMON_OPTIONS,
                                       {"write-profile", required_argument, NULL, O_WRITE_PROFILE},
                                       {NULL, 0, NULL, 0}};
  sub_opts s = {.sub = "fit", .usage = fit_usage};
  const char *prof = "fitted-profile.yaml";
  int rc = parse_opts(argc, argv, opts, &s, fit_opt, &prof);
  if (rc >= 0) return rc;
  if (optind >= argc) {
    fprintf(stderr, "calibench: calibrate fit: give one or more result directories\n");
    return 2;
  }
  cb_sim_params base;
  if (build_params("fit", &s.d, &base)) return 2;
  char **dirs = NULL;
  size_t nd = 0;
  rc = 2;
  for (int i = optind; i < argc; i++)
    if (add_dirs(argv[i], &dirs, &nd)) goto done_dirs;
  cb_record_set *sets = cb_calloc(nd ? nd : 1, sizeof *sets);
  const cb_record_set **ptrs = cb_calloc(nd ? nd : 1, sizeof *ptrs);
  cb_error err;
  cb_error_clear(&err);
  cb_status st = CB_OK;
  for (size_t i = 0; i < nd && st == CB_OK; i++) {
    char path[1100];
    st = load_records(dirs[i], &sets[i], path, sizeof path, &err);
    if (st == CB_OK && sets[i].count == 0)
      st = cb_error_at(&err, CB_ERR_INVALID, path, 0, 0, "empty run: no records");
    ptrs[i] = &sets[i];
  }
  cb_calib_fit_result r;
  cb_calib_fit_params fp;
  cb_calib_fit_default_params(&fp);
  if (st == CB_OK) st = cb_calib_fit_compute(&base, ptrs, nd, &fp, &r, &err);
  if (st != CB_OK) {
    cli_calibrate_input_error("fit", &err);
  } else {
    cb_buf yaml;
    cb_buf_init(&yaml, 0);
    calib_output o;
    output_init(&o);
    char comment[1024];
    snprintf(comment, sizeof comment,
             "calibench calibrate fit: %s on %d x %s fitted to %zu records in %zu run%s (%s%s)\n"
             "mfu %.6g, mbu %.6g, step_overhead_us %.3f; RMS relative error TTFT %.2f%%, ITL %.2f%%",
             base.model.name, base.tp, base.gpu.name, r.records, r.runs, r.runs == 1 ? "" : "s",
             dirs[0], nd > 1 ? ", ..." : "", r.fitted.mfu, r.fitted.mbu,
             (double)r.fitted.step_overhead_ns / 1e3, 100 * r.ttft.rms_after, 100 * r.itl.rms_after);
    cb_sim_params_write_yaml(&r.fitted, comment, &yaml);
    cb_calib_fit_format(&r, &o.table);
    cb_buf_appendf(&o.table, "\n  fitted profile written to %s\n", prof);
    cb_calib_fit_write_json(&r, prof, &o.js);
    if (cb_results_write_file(prof, yaml.data, yaml.len, &err) != CB_OK) {
      fprintf(stderr, "calibench: calibrate fit: %s\n", err.msg);
      cb_buf_free(&o.table);
      cb_buf_free(&o.js);
      rc = 1;
    } else {
      rc = output_emit(&s, &o);
    }
    cb_buf_free(&yaml);
  }
  for (size_t i = 0; i < nd; i++) cb_record_set_free(&sets[i]);
  cb_free(sets);
  cb_free(ptrs);
done_dirs:
  for (size_t i = 0; i < nd; i++) cb_free(dirs[i]);
  cb_free(dirs);
  return rc;
}

/* ---- perf --------------------------------------------------------------------------------- */

static void perf_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate perf [options] RESULT_DIR\n"
          "\n"
          "A paper's throughput and latency claims against a measured (or predicted) result\n"
          "directory: per metric the calibration factor measured / paper, and the production\n"
          "figure to plan with after the safety margin (throughput x margin, latency /\n"
          "margin). Claims the run does not measure are projected with their kind's mean\n"
          "factor.\n"
          "\n"
          "claims (at least one):\n"
          "  --claims FILE        YAML/JSON: source: TEXT, claims: {metric: value, ...}\n"
          "  --claim METRIC=V     one claim; repeatable; wins over the file's\n"
          "                       metrics: requests_per_s, output_tokens_per_s,\n"
          "                       total_tokens_per_s, goodput_requests_per_s,\n"
          "                       <ttft|tpot|itl|e2e>_<mean|p50|p90|p95|p99>_ms\n"
          "                       (a _ms value may be a duration: 1.2s, 800us)\n"
          "  --margin F           safety margin in (0, 1]: plan with F of the throughput [0.85]\n"
          "\n"
          "output:\n"
          "  --out FILE           write the JSON result (docs/calibrate-perf.md)\n"
          "  --json               print the JSON instead of the table\n"
          "  -h, --help           show this help\n");
}

typedef struct perf_opts {
  const char *file;
  const char *specs[CB_CALIB_MAX_CLAIMS];
  size_t nspec;
  double margin;
} perf_opts;

static int perf_opt(int c, void *ctx) {
  perf_opts *o = ctx;
  switch (c) {
    case O_CLAIMS: o->file = optarg; return OPT_TAKEN;
    case O_CLAIM:
      if (o->nspec == CB_CALIB_MAX_CLAIMS) {
        fprintf(stderr, "calibench: calibrate perf: at most %d --claim\n", CB_CALIB_MAX_CLAIMS);
        return OPT_BAD;
      }
      o->specs[o->nspec++] = optarg;
      return OPT_TAKEN;
    case O_MARGIN: return cli_parse_double("--margin", optarg, 1e-6, 1, &o->margin) ? OPT_BAD : OPT_TAKEN;
    default: return OPT_UNKNOWN;
  }
}

int cli_calibrate_perf(int argc, char **argv) {
  static const struct option opts[] = {{"claims", required_argument, NULL, O_CLAIMS},
                                       {"claim", required_argument, NULL, O_CLAIM},
                                       {"margin", required_argument, NULL, O_MARGIN},
                                       {"out", required_argument, NULL, O_OUT},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  sub_opts s = {.sub = "perf", .usage = perf_usage};
  perf_opts po = {.file = NULL, .nspec = 0, .margin = 0.85};
  int rc = parse_opts(argc, argv, opts, &s, perf_opt, &po);
  if (rc >= 0) return rc;
  if (optind + 1 != argc) {
    fprintf(stderr, "calibench: calibrate perf: give exactly one result directory\n");
    return 2;
  }
  if (!po.file && !po.nspec) {
    fprintf(stderr, "calibench: calibrate perf: give the paper's claims (--claims FILE or --claim METRIC=VALUE)\n");
    return 2;
  }
  cb_error err;
  cb_error_clear(&err);
  cb_calib_claims claims;
  memset(&claims, 0, sizeof claims);
  if (po.file && cb_calib_claims_load(po.file, &claims, &err) != CB_OK) return cli_calibrate_input_error("perf", &err);
  for (size_t i = 0; i < po.nspec; i++)
    if (cb_calib_claims_add(&claims, po.specs[i], &err) != CB_OK) return cli_calibrate_input_error("perf", &err);
  cb_calib_perf_result r;
  if (cb_calib_perf_compute(&claims, argv[optind], po.margin, &r, &err) != CB_OK)
    return cli_calibrate_input_error("perf", &err);
  calib_output o;
  output_init(&o);
  cb_calib_perf_format(&r, &o.table);
  cb_calib_perf_write_json(&r, &o.js);
  return output_emit(&s, &o);
}

/* ---- sla ----------------------------------------------------------------------------------- */

static void sla_usage(FILE *out) {
  fprintf(out,
          "usage: calibench calibrate sla [options] RESULT_OR_SWEEP_DIR\n"
          "\n"
          "The SLA to promise from a prediction (best: 'calibench sim run --sweep' with a\n"
          "fitted profile): each percentile at the operating point plus a safety margin, and\n"
          "along the sweep the load at which each promise, and the SLA as a whole, stops\n"
          "holding (interpolated between the last point that holds and the first that breaks).\n"
          "\n"
          "options:\n"
          "  --margin F           added to each predicted percentile, in [0, 1) [0.15]\n"
          "                       (0.10-0.15 is the usual band)\n"
          "  --metrics LIST       of ttft, tpot, itl, e2e, ttft_sched, e2e_sched [ttft,tpot,e2e]\n"
          "  --percentiles LIST   of 50, 90, 95, 99, 99.9 [50,90,99]\n"
          "  --at POINT           the operating point: a sweep point's index (0-based, among\n"
          "                       the points of the sweep's load kind) or label [0: the lightest]\n"
          "  --out FILE           write the JSON result (docs/calibrate-perf.md)\n"
          "  --json               print the JSON instead of the table\n"
          "  -h, --help           show this help\n");
}

/* The index of the point labelled `s` (or an index), after the sweep is read. */
static long point_index(const cb_calib_sla_result *r, const char *s) {
  for (size_t i = 0; i < r->n_points; i++)
    if (!strcmp(r->points[i].label, s)) return (long)i;
  char *end;
  long v = strtol(s, &end, 10);
  return *s && !*end && v >= 0 ? v : -2;
}

typedef struct sla_opts {
  cb_calib_sla_params p;
  const char *at;
} sla_opts;

/* Calls item(ctx, t, i) on each item t of the comma list given to `flag`, at most 8 of
   them, and sets *n to how many it has seen; OPT_BAD (said) on a ninth or when item
   refuses one. */
static int each_list_item(const char *flag, const char *list, size_t *n,
                          int (*item)(void *ctx, const char *t, size_t i), void *ctx) {
  char buf[256], *save = NULL;
  snprintf(buf, sizeof buf, "%s", list);
  *n = 0;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (*n == 8) {
      fprintf(stderr, "calibench: calibrate sla: %s: at most 8\n", flag);
      return OPT_BAD;
    }
    if (item(ctx, t, (*n)++)) return OPT_BAD;
  }
  return OPT_TAKEN;
}

static int sla_metric(void *ctx, const char *t, size_t i) {
  cb_calib_sla_params *p = ctx;
  cb_error err;
  cb_error_clear(&err);
  if (cb_metric_parse(t, &p->metrics[i], &err) == CB_OK) return 0;
  fprintf(stderr, "calibench: calibrate sla: --metrics: %s\n", err.msg);
  return 1;
}

static int sla_percentile(void *ctx, const char *t, size_t i) {
  cb_calib_sla_params *p = ctx;
  return cli_parse_double("--percentiles", t, 0, 100, &p->percentiles[i]);
}

static int sla_opt(int c, void *ctx) {
  sla_opts *o = ctx;
  switch (c) {
    case O_MARGIN: return cli_parse_double("--margin", optarg, 0, 0.999999, &o->p.margin) ? OPT_BAD : OPT_TAKEN;
    case O_METRICS: return each_list_item("--metrics", optarg, &o->p.n_metrics, sla_metric, &o->p);
    case O_PERCENTILES:
      return each_list_item("--percentiles", optarg, &o->p.n_percentiles, sla_percentile, &o->p);
    case O_AT: o->at = optarg; return OPT_TAKEN;
    default: return OPT_UNKNOWN;
  }
}

int cli_calibrate_sla(int argc, char **argv) {
  static const struct option opts[] = {{"margin", required_argument, NULL, O_MARGIN},
                                       {"metrics", required_argument, NULL, O_METRICS},
                                       {"percentiles", required_argument, NULL, O_PERCENTILES},
                                       {"at", required_argument, NULL, O_AT},
                                       {"out", required_argument, NULL, O_OUT},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  sub_opts s = {.sub = "sla", .usage = sla_usage};
  sla_opts so = {.at = NULL};
  cb_calib_sla_default_params(&so.p);
  int rc = parse_opts(argc, argv, opts, &s, sla_opt, &so);
  if (rc >= 0) return rc;
  cb_error err;
  cb_error_clear(&err);
  if (optind + 1 != argc) {
    fprintf(stderr, "calibench: calibrate sla: give exactly one result or sweep directory\n");
    return 2;
  }
  cb_calib_sla_result r;
  if (cb_calib_sla_compute(argv[optind], &so.p, &r, &err) != CB_OK) return cli_calibrate_input_error("sla", &err);
  if (so.at) {
    so.p.at = point_index(&r, so.at);
    if (so.p.at < 0 || (size_t)so.p.at >= r.n_points) {
      fprintf(stderr, "calibench: calibrate sla: --at %s: no such point (%zu points of kind %s)\n",
              so.at, r.n_points, r.load_kind[0] ? r.load_kind : "run");
      return 2;
    }
    if (cb_calib_sla_compute(argv[optind], &so.p, &r, &err) != CB_OK) return cli_calibrate_input_error("sla", &err);
  }
  calib_output o;
  output_init(&o);
  cb_calib_sla_format(&r, &o.table);
  cb_calib_sla_write_json(&r, &o.js);
  return output_emit(&s, &o);
}
