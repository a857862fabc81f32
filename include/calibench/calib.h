/*
 * calib.h - paper -> production calibration (`calibench calibrate`).
 *
 * Two halves, each in its own section below, each self-contained:
 *  - data, environment, task and cost calibration (`calibrate drift`, `expect`,
 *    `cost`): src/calib/drift*.c, expect*.c, cost*.c, cstat_*.c;
 *  - performance calibration (`calibrate roofline`, `fit`, `perf`, `sla`).
 * The user-facing page is docs/calibrate.md (and docs/calibrate-perf.md).
 */
#ifndef CALIBENCH_CALIB_H
#define CALIBENCH_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== data, environment, task and cost calibration ================================== */
/*
 * `calibrate drift`, `calibrate expect`, `calibrate cost` (docs/calibrate.md):
 *  - drift: how far production's data distribution is from the benchmark's, as the
 *    Jensen-Shannon divergence in bits, and what that does to accuracy;
 *  - expect: production = paper x data factor x environment factor x task factor x
 *    safety margin, every factor with its inputs, formula and source;
 *  - cost: cost per 1,000 requests and per unit of accuracy of candidate deployments,
 *    and the cheapest within an accuracy tolerance.
 * Files: src/calib/drift*.c, expect*.c, cost*.c, cstat_*.c; the statistics themselves
 * are in stats.h (entropy, KL, JS, binning, the JS bootstrap). Every result writes JSON
 * with "schema_version": CB_CALIB_SCHEMA_VERSION and "kind": "calibrate.<sub>", and a
 * terminal rendering. Errors name the file, the line and the key.
 */
#include "calibench/stats.h"

#define CB_CALIB_SCHEMA_VERSION 1
/* Largest input file read whole (distributions, candidates, result summaries). */
#define CB_CALIB_MAX_FILE_BYTES ((size_t)64 << 20)
/* Distinct labels a distribution or sample may have: more means the field is not a
 * label (a request id, say). */
#define CB_CALIB_MAX_LABELS 100000

/* Where a number came from: the result says which factors were measured. */
typedef enum {
  CB_CALIB_FROM_DEFAULT,   /* a stated default; nothing was given */
  CB_CALIB_FROM_INPUT,     /* a value the user stated (--js, --capacity, a price) */
  CB_CALIB_FROM_MEASURED,  /* computed from measurements (samples, a measured run) */
  CB_CALIB_FROM_SIMULATED, /* from a simulated run (`sim run`) */
} cb_calib_source;

/* "default", "input", "measured", "simulated". */
const char *cb_calib_source_name(cb_calib_source s);

/* ---- label distributions and samples ------------------------------------------------ */

typedef enum {
  CB_CALIB_DIST_WEIGHTS, /* a file of {label: weight} */
  CB_CALIB_DIST_SAMPLE,  /* counts of a JSONL sample's labels */
  CB_CALIB_DIST_BINNED,  /* counts of a numeric sample in shared bins */
} cb_calib_dist_kind;

/*
 * Weights per label: a label distribution, or a sample's label counts. Labels are
 * unique, in first-seen order. Caller-allocated: cb_calib_dist_init, then the loaders
 * or cb_calib_dist_add; cb_calib_dist_free releases everything.
 */
typedef struct cb_calib_dist {
  size_t len;           /* labels */
  char **labels;        /* owned; len NUL-terminated strings */
  double *weights;      /* owned; len weights, each >= 0 (counts for samples) */
  uint64_t sample_size; /* observations behind the weights; 0 = unknown (a distribution) */
  cb_calib_dist_kind kind;
  char path[256];       /* the file it came from ("" when built in memory) */
  char field[128];      /* the JSONL key, for samples */
  size_t cap_;          /* private: allocated labels */
  size_t *index_;       /* private: open-addressing hash of labels -> position + 1 */
  size_t index_cap_;    /* private */
} cb_calib_dist;

void cb_calib_dist_init(cb_calib_dist *d);
void cb_calib_dist_free(cb_calib_dist *d);
/* Add `weight` (>= 0, finite) to `label`, creating it at the end if new. CB_ERR_INVALID
 * for a bad weight, CB_ERR_CAPACITY past CB_CALIB_MAX_LABELS labels. */
cb_status cb_calib_dist_add(cb_calib_dist *d, const char *label, double weight, cb_error *err);
/* Position of `label`, or -1. */
long cb_calib_dist_find(const cb_calib_dist *d, const char *label);
/* Sum of the weights. */
double cb_calib_dist_total(const cb_calib_dist *d);

/*
 * Load a label distribution: a YAML or JSON mapping {label: weight} (weights are
 * non-negative numbers; any scale: counts, shares or percentages). kind WEIGHTS,
 * sample_size 0. Errors (CB_ERR_PARSE / CB_ERR_INVALID, "FILE:LINE: label 'x': ..."):
 * not a mapping, a weight that is not a number, negative, a repeated label, no labels,
 * all weights zero. `d` is initialised here; on failure nothing is left to free.
 */
cb_status cb_calib_dist_load(cb_calib_dist *d, const char *path, cb_error *err);

/*
 * Load per-label values in [0, 1] (accuracies): a mapping {label: value}, values written
 * as 0.92 or "92%". Same errors as cb_calib_dist_load, plus values outside [0, 1].
 */
cb_status cb_calib_label_values_load(cb_calib_dist *d, const char *path, cb_error *err);

/*
 * Count the labels of a JSONL sample: one JSON object per line, the label at key
 * `field` ("a.b" also reaches {"a": {"b": ...}} when there is no key "a.b"), a string,
 * integer or boolean. Blank lines are skipped. kind SAMPLE, sample_size = lines counted.
 * Errors "FILE:LINE: ...": invalid JSON, not an object, key missing, a label of another
 * type; no lines at all; too many distinct labels. On failure nothing is left to free.
 */
cb_status cb_calib_sample_labels_load(cb_calib_dist *d, const char *path, const char *field,
                                      cb_error *err);

/*
 * Read a numeric JSONL sample: each line an object with a number at `field`, or, when
 * field is NULL, a bare JSON number. *values (owned by the caller, cb_free) gets *n
 * values. Errors as cb_calib_sample_labels_load ("FILE:LINE: key 'len': expected a
 * number, got a string").
 */
cb_status cb_calib_sample_values_load(const char *path, const char *field, double **values,
                                      size_t *n, cb_error *err);

/*
 * Bin two numeric samples on shared edges into two distributions (kind BINNED, one
 * label per bin, "[a, b)", the last "[a, b]", in value order). With `edges` (n_edges >= 2,
 * increasing) the bins are [e_i, e_i+1) and values outside get bins "< e_0" and
 * ">= e_last" (present only when one side has such values); otherwise `bins` quantile
 * bins of the pooled samples (cb_stats_quantile_edges; fewer when values repeat).
 * sample_size = na / nb. The edges used go to *edges_out (owned by the caller; cb_free)
 * when not NULL. bench and prod are initialised here.
 */
cb_status cb_calib_dist_bin_pair(const double *a, size_t na, const double *b, size_t nb,
                                 const double *edges, size_t n_edges, size_t bins,
                                 cb_calib_dist *bench, cb_calib_dist *prod,
                                 double **edges_out, size_t *n_edges_out, cb_error *err);

/* ---- drift ---------------------------------------------------------------------------- */

/* The task type sets the accuracy sensitivity s to JS: classification 2-3 (2.5),
 * generation 1-2 (1.5); unspecified: 2.5. */
typedef enum {
  CB_CALIB_TASK_UNSPECIFIED,
  CB_CALIB_TASK_CLASSIFICATION,
  CB_CALIB_TASK_GENERATION,
} cb_calib_task;

const char *cb_calib_task_name(cb_calib_task t); /* "unspecified", "classification", ... */
cb_status cb_calib_task_parse(const char *s, cb_calib_task *out, cb_error *err);
double cb_calib_task_sensitivity(cb_calib_task t);

/* Severity of a JS divergence in bits: mild < 0.05 <= moderate < 0.15 <= significant
 * < 0.30 <= severe. */
typedef enum {
  CB_CALIB_DRIFT_MILD,
  CB_CALIB_DRIFT_MODERATE,
  CB_CALIB_DRIFT_SIGNIFICANT,
  CB_CALIB_DRIFT_SEVERE,
} cb_calib_severity;

cb_calib_severity cb_calib_severity_of(double js_bits);
const char *cb_calib_severity_name(cb_calib_severity s);   /* "mild", ... "severe" */
const char *cb_calib_severity_advice(cb_calib_severity s); /* one sentence; severe: retrain */

/* The accuracy factor max(0.5, exp(-s x JS)); NAN for a negative or NaN argument. */
double cb_calib_accuracy_factor(double js_bits, double sensitivity);

typedef struct cb_calib_drift_params {
  cb_calib_task task;        /* sets the sensitivity unless `sensitivity` is given */
  double sensitivity;        /* s > 0; NAN (default): from the task */
  double kl_epsilon;         /* additive smoothing of shares for KL (default 1e-6) */
  cb_stats_js_boot_params boot; /* replicates 0: no interval (default 2000, 0.95, seed 0) */
  uint64_t bench_n, prod_n;  /* sample sizes for inputs that are distributions (0: none) */
} cb_calib_drift_params;

void cb_calib_drift_default_params(cb_calib_drift_params *p);

/* One label (or bin) of the union of both sides. */
typedef struct cb_calib_drift_row {
  char *label;                      /* owned by the result */
  double bench_weight, prod_weight; /* as given (counts for samples); 0 when absent */
  double bench_share, prod_share;   /* weight / total, in [0, 1] */
  double difference;                /* prod_share - bench_share */
  double js_bits;                   /* this label's term of JS (the terms sum to JS) */
  double accuracy;                  /* benchmark accuracy on the label; NAN unknown */
} cb_calib_drift_row;

typedef struct cb_calib_drift_result {
  size_t n_rows;
  cb_calib_drift_row *rows; /* owned; WEIGHTS/SAMPLE: by |difference| descending, then
                               label; BINNED: in value order */
  cb_calib_dist_kind bench_kind, prod_kind;
  char bench_path[256], prod_path[256], bench_field[128], prod_field[128];
  uint64_t bench_n, prod_n;  /* sample sizes used for the interval; 0 = held fixed */
  double js_bits;            /* Jensen-Shannon divergence, base 2, in [0, 1] */
  double js_distance;        /* sqrt(js_bits): SciPy's jensenshannon */
  double kl_prod_bench_bits; /* D(production || benchmark), smoothed shares */
  double kl_bench_prod_bits; /* D(benchmark || production), smoothed shares */
  double kl_prod_bench_raw_bits, kl_bench_prod_raw_bits; /* unsmoothed; may be INFINITY */
  double kl_epsilon;
  double entropy_bench_bits, entropy_prod_bits;
  size_t dominant; /* row with the largest |difference| (first in row order on ties) */
  bool has_interval;
  cb_stats_js_interval interval; /* bootstrap interval for js_bits when has_interval */
  char interval_note[224];    /* what was resampled, or why there is no interval */
  cb_calib_severity severity;
  cb_calib_task task;
  double sensitivity;
  bool sensitivity_given;  /* s was set explicitly, not from the task */
  double accuracy_factor;  /* max(0.5, exp(-s x JS)) */
  /* With per-label accuracies: the benchmark's accuracy reweighted to production. */
  bool has_reweighted;
  double bench_accuracy;   /* sum bench_share x accuracy / bench coverage */
  double prod_accuracy;    /* sum prod_share x accuracy / prod coverage */
  double reweighted_factor;            /* prod_accuracy / bench_accuracy */
  double bench_coverage, prod_coverage; /* share of each side whose accuracy is known */
  char accuracy_path[256];
} cb_calib_drift_result;

/*
 * Compare bench and prod (labels matched by name; a label missing on one side has weight
 * 0 there). label_accuracy (may be NULL) maps labels to benchmark accuracies in [0, 1].
 * CB_ERR_INVALID when a side is empty or weighs 0, a parameter is out of range, or no
 * label with known accuracy has production weight. On success free with
 * cb_calib_drift_result_free; on failure nothing is left to free.
 */
cb_status cb_calib_drift_compute(const cb_calib_dist *bench, const cb_calib_dist *prod,
                                 const cb_calib_dist *label_accuracy,
                                 const cb_calib_drift_params *p, cb_calib_drift_result *out,
                                 cb_error *err);
void cb_calib_drift_result_free(cb_calib_drift_result *r);
/* The result as JSON ("kind": "calibrate.drift", docs/calibrate.md), appended to out. */
void cb_calib_drift_write_json(const cb_calib_drift_result *r, cb_buf *out);
/* The terminal rendering; at most max_rows label rows (0: all), the rest summarised. */
void cb_calib_drift_format(const cb_calib_drift_result *r, size_t max_rows, cb_buf *out);

/* ---- expectation --------------------------------------------------------------------- */

#define CB_CALIB_FACTOR_MAX_INPUTS 8

typedef struct cb_calib_factor_input {
  char name[40];  /* "js_bits", "drift_file", "capacity", ... */
  double value;   /* NAN for a text input */
  char text[256]; /* text inputs (paths, names); "" for numbers */
} cb_calib_factor_input;

/* One factor of the expectation: its value, where it came from and how. */
typedef struct cb_calib_factor {
  const char *name;    /* "data", "environment", "task", "safety_margin" (static) */
  double value;        /* > 0 */
  cb_calib_source source;
  char rule[96];       /* the formula in symbols, "max(0.5, exp(-s * JS))" */
  char formula[256];   /* with the numbers, "max(0.5, exp(-2.5 * 0.0312)) = 0.925" */
  char note[256];      /* what the rule assumes, or "" */
  size_t n_inputs;
  cb_calib_factor_input inputs[CB_CALIB_FACTOR_MAX_INPUTS];
} cb_calib_factor;

/*
 * What the user knows. Each factor takes the first of its inputs that is given:
 *  data:        data_factor; drift_path (a `calibrate drift` JSON result: its reweighted
 *               factor when it has per-label accuracies, else its accuracy factor);
 *               js_bits (max(0.5, exp(-s JS)), s from sensitivity or task); default 1.
 *  environment: env_factor; results_dir (a result directory: env_metric measured /
 *               env_paper); concurrency and capacity (0.95 when concurrency <= capacity,
 *               else max(0.3, capacity / concurrency)); default 0.95 (assumed within
 *               capacity).
 *  task:        task_factor; steps (the product of per-step success rates);
 *               tool_calls (step_success ^ tool_calls); default 1 (single step).
 *  margin:      margin (default 0.85).
 * Unset numbers are NAN (counts: -1, strings: NULL).
 */
typedef struct cb_calib_expect_params {
  double paper;          /* the paper's figure (> 0), required */
  const char *metric;    /* its name, for display ("accuracy") */
  double data_factor;
  const char *drift_path;
  double js_bits;
  cb_calib_task task;
  double sensitivity;
  double env_factor;
  const char *results_dir;
  const char *env_metric; /* summary throughput key (default "output_tokens_per_s") */
  double env_paper;       /* the paper's figure for env_metric (NAN: paper, when metric
                             names the same key) */
  double concurrency, capacity;
  double task_factor;
  const double *steps;    /* n_steps per-step success rates in (0, 1] */
  size_t n_steps;
  long tool_calls;        /* -1: not given */
  double step_success;    /* per tool call (default 0.95) */
  double margin;          /* (0, 1] (default 0.85) */
} cb_calib_expect_params;

void cb_calib_expect_default_params(cb_calib_expect_params *p);

typedef struct cb_calib_expect_result {
  double paper;
  char metric[64];
  cb_calib_factor data, environment, task, margin;
  double expected;  /* paper x data x environment x task x margin */
  double combined;  /* the product of the four factors */
} cb_calib_expect_result;

/*
 * Compute the expectation. Reads drift_path / results_dir when given (errors name the
 * file and key: a drift file of another kind, a summary without the metric, ...).
 * CB_ERR_INVALID for out-of-range numbers ("--margin must be in (0, 1], got 1.2").
 */
cb_status cb_calib_expect_compute(const cb_calib_expect_params *p, cb_calib_expect_result *out,
                                  cb_error *err);
void cb_calib_expect_write_json(const cb_calib_expect_result *r, cb_buf *out);
void cb_calib_expect_format(const cb_calib_expect_result *r, cb_buf *out);

/*
 * The environment factor from a result directory's summary.json: the overall summary's
 * throughput.<metric> divided by paper_value. Source MEASURED, or SIMULATED when the
 * summary or manifest says "predicted": true. Errors: no summary.json, schema_version
 * other than 1, the metric missing or null, paper_value <= 0.
 */
cb_status cb_calib_env_from_results(const char *dir, const char *metric, double paper_value,
                                    cb_calib_factor *out, cb_error *err);

/* ---- cost ------------------------------------------------------------------------------ */

typedef enum { CB_CALIB_PRICE_TOKENS, CB_CALIB_PRICE_GPU_HOUR } cb_calib_pricing;

/* The largest price `calibrate cost` takes (per 1,000 tokens or per GPU-hour). */
#define CB_CALIB_PRICE_MAX 1e9

/* A per-token price as the candidates file's price_input_per_1k / price_output_per_1k
 * reads it: currency per 1,000 tokens, a plain number in [0, CB_CALIB_PRICE_MAX]. The
 * judge's prices (eval judge, eval run) are read by it. False, *out untouched, for
 * anything else. */
bool cb_calib_price_parse(const char *text, double *out);

/* One deployment option. Read the fields; computed ones are set by cb_calib_cost_compute. */
typedef struct cb_calib_candidate {
  char *model;                 /* owned; unique */
  long line;                   /* where it starts in the file */
  double accuracy;             /* in [0, 1] */
  char *accuracy_from;         /* owned; "input" or "FILE:KEY" for an eval result */
  cb_calib_pricing pricing;
  double price_input_per_1k;   /* TOKENS: currency per 1,000 input tokens */
  double price_output_per_1k;  /* TOKENS: ... output tokens */
  double gpu_hour_price;       /* GPU_HOUR: currency per GPU-hour */
  double gpus;                 /* GPU_HOUR: GPUs in the deployment (default 1) */
  double throughput_rps;       /* GPU_HOUR: sustained requests/s (NAN until resolved) */
  double throughput_tokens_per_s; /* GPU_HOUR: output tokens/s alternative (NAN: unset) */
  char *throughput_from;       /* owned; "input" or the result directory */
  cb_calib_source throughput_source;
  double input_tokens, output_tokens; /* per request, as the candidate says (NAN: unset) */
  /* computed */
  double used_input_tokens, used_output_tokens; /* the candidate's, else the params', else
                                                   the file's (NAN: none) */
  double cost_per_1k_requests;
  double cost_per_1k_correct;  /* cost_per_1k_requests / accuracy */
  double accuracy_per_cost;    /* accuracy / cost_per_1k_requests */
  bool within_tolerance;
} cb_calib_candidate;

typedef struct cb_calib_cost_set {
  size_t n;
  cb_calib_candidate *candidates; /* owned */
  char currency[16];              /* label only (default "USD") */
  double input_tokens, output_tokens; /* file-wide per-request tokens (NAN: unset) */
  char path[256];
} cb_calib_cost_set;

/*
 * Load candidates from YAML or JSON: either a list of candidates or a mapping with
 * `candidates:` and optional `currency`, `input_tokens`, `output_tokens`. Candidate keys:
 * model; accuracy (0.92 or "92%") or eval (a JSON file) with eval_key (dotted path,
 * default "accuracy"); price_input_per_1k and price_output_per_1k, or gpu_hour_price with
 * gpus and one of throughput_rps, throughput_tokens_per_s or results (a result
 * directory: its summary's requests_per_s); input_tokens, output_tokens. Relative paths
 * are relative to the candidates file. Unknown keys, missing or conflicting keys and
 * out-of-range values are errors naming FILE:LINE and the key.
 */
cb_status cb_calib_cost_load(const char *path, cb_calib_cost_set *out, cb_error *err);
void cb_calib_cost_set_free(cb_calib_cost_set *s);

typedef struct cb_calib_cost_params {
  double tolerance;       /* >= 0 (default 0.05) */
  bool tolerance_points;  /* tolerance in accuracy points (0.05 = 5 pp), not relative */
  const char *reference;  /* model whose accuracy the tolerance is from (NULL: the best) */
  double input_tokens, output_tokens; /* per request: used when a candidate has none of its
                                         own, before the file's (NAN: unset) */
} cb_calib_cost_params;

void cb_calib_cost_default_params(cb_calib_cost_params *p);

typedef struct cb_calib_cost_result {
  size_t reference;          /* candidate index */
  double reference_accuracy;
  double threshold;          /* accuracy a candidate needs to be within tolerance */
  double tolerance;
  bool tolerance_points;
  size_t cheapest;           /* cheapest within tolerance (the reference qualifies) */
  size_t best_value;         /* highest accuracy per unit cost */
  size_t *order;             /* owned; candidate indices by cost_per_1k_requests ascending */
} cb_calib_cost_result;

/* Compute costs (filling each candidate's computed fields) and the choice. Errors name the
 * candidate: per-token prices without token counts, an unknown reference, a result
 * directory without throughput. Free with cb_calib_cost_result_free. */
cb_status cb_calib_cost_compute(cb_calib_cost_set *set, const cb_calib_cost_params *p,
                                cb_calib_cost_result *out, cb_error *err);
void cb_calib_cost_result_free(cb_calib_cost_result *r);
void cb_calib_cost_write_json(const cb_calib_cost_set *set, const cb_calib_cost_result *r,
                              cb_buf *out);
void cb_calib_cost_format(const cb_calib_cost_set *set, const cb_calib_cost_result *r,
                          cb_buf *out);

/* ==== end of data, environment, task and cost calibration =========================== */

/* ==== performance calibration ======================================================= */
/*
 * `calibrate roofline`, `calibrate fit`, `calibrate perf`, `calibrate sla`
 * (docs/calibrate-perf.md):
 *  - roofline: the physical bounds of a model x GPU x TP deployment (minimum TTFT for a
 *    prompt, minimum TPOT for a batch, maximum decode throughput within the KV cache)
 *    and, given a measured run, the MBU / MFU it achieved;
 *  - fit: the simulator profile's MFU, MBU and per-step overhead fitted to measured
 *    runs by least squares on TTFT against prompt length and ITL against concurrency,
 *    with the fit error, written as a profile that --profile loads;
 *  - perf: paper throughput/latency claims against a result directory: the
 *    calibration factor per metric and the production figures with a safety margin;
 *  - sla: from a (calibrated) prediction, percentile values with a 10-15% margin and
 *    the load at which each stops holding (from a sweep).
 * Files: src/calib/perf_*.c. The step costs are the simulator's roofline
 * (cb_sim_step_cost_compute, docs/simulator.md section 4), so a fitted profile means the
 * same thing in `sim run` as here. Results write JSON with "schema_version":
 * CB_CALIB_SCHEMA_VERSION and "kind": "calibrate.<sub>", and a terminal rendering.
 */
#include "calibench/results.h"
#include "calibench/sim.h"

/* ---- roofline ------------------------------------------------------------------------ */

typedef struct cb_calib_roofline_params {
  int64_t prompt_len; /* tokens of the prompt whose TTFT is bounded (1024) */
  int64_t output_len; /* tokens generated per request (128): decode context is
                         prompt + output/2, a sequence holds prompt + output in KV */
  int64_t batch;      /* sequences decoding together for the TPOT bound (1) */
} cb_calib_roofline_params;

void cb_calib_roofline_default_params(cb_calib_roofline_params *p);

/* The time of some steps two ways. Per GPU of the TP group. */
typedef struct cb_calib_bound {
  double limit_ns;   /* the physical bound: max(FLOPs / peak, bytes / bandwidth) per step,
                        MFU = MBU = 1, no overhead, no all-reduce */
  double profile_ns; /* the simulator's floor: the profile's MFU, MBU, step overhead and
                        all-reduce, nothing else running (no queueing, no jitter) */
  double flops;      /* FLOPs per GPU, all steps */
  double bytes;      /* HBM bytes per GPU, all steps */
  int64_t steps;
  int memory_bound;  /* the last step's dominant term at the profile's efficiencies */
} cb_calib_bound;

/* What a measured (or predicted) run achieved against the roofline. */
typedef struct cb_calib_achieved {
  size_t requests;          /* successful records used */
  double window_s;          /* first send to last end */
  double decode_batch;      /* mean sequences decoding per step (time-weighted) */
  double decode_context;    /* mean context tokens per decoding sequence */
  double itl_mean_ns;       /* mean gap between tokens of a request */
  double mbu;               /* decode: HBM bytes one step at decode_batch x decode_context
                               must move / (itl_mean x peak bandwidth): the Databricks MBU */
  double decode_tokens_per_s;
  double mfu;               /* all FLOPs of the run (prefill + decode) / (window x peak x TP) */
  double prefill_mfu;       /* prefill FLOPs / time spent before the first token (sum of
                               TTFTs, queueing included: a lower bound) / peak */
} cb_calib_achieved;

typedef struct cb_calib_roofline {
  cb_sim_params params;           /* the deployment */
  cb_calib_roofline_params in;
  cb_sim_capacity cap;
  double peak_flops;              /* per GPU: the weights' dtype peak (fp8 when fp8 W8A8) */
  double ridge_flop_per_byte;     /* peak_flops / HBM bandwidth */
  double decode_context;          /* prompt + output/2 */
  cb_calib_bound ttft;            /* min TTFT of one prompt: its prefill chunks */
  cb_calib_bound tpot;            /* min TPOT at `batch`: one decode step */
  int64_t max_batch;              /* sequences of prompt + output tokens the KV cache and
                                     max_num_seqs allow */
  const char *max_batch_limit;    /* "kv_cache" or "max_num_seqs" */
  cb_calib_bound tpot_at_max;     /* one decode step at max_batch */
  double max_decode_tokens_per_s_limit;   /* max_batch / tpot_at_max.limit_ns */
  double max_decode_tokens_per_s_profile; /* max_batch / tpot_at_max.profile_ns */
  int has_run;
  char run_dir[512];
  cb_calib_achieved run;
} cb_calib_roofline;

/* The bounds (capacity errors as cb_sim_capacity_compute; params validated). */
cb_status cb_calib_roofline_compute(const cb_sim_params *p, const cb_calib_roofline_params *rp,
                                    cb_calib_roofline *out, cb_error *err);
/* What the records of a run achieved on deployment p. CB_ERR_INVALID when no request
 * succeeded with at least two tokens (nothing to measure), naming `what`. */
cb_status cb_calib_achieved_compute(const cb_sim_params *p, const cb_record_set *set,
                                    const char *what, cb_calib_achieved *out, cb_error *err);
void cb_calib_roofline_write_json(const cb_calib_roofline *r, cb_buf *out);
void cb_calib_roofline_format(const cb_calib_roofline *r, cb_buf *out);

/* ---- fit ------------------------------------------------------------------------------- */

typedef struct cb_calib_fit_params {
  size_t max_itl_obs;    /* decode steps used at most, evenly spaced (20000) */
  size_t max_ttft_obs;   /* prefills used at most (20000) */
  int iterations;        /* Nelder-Mead iterations per start (600) */
} cb_calib_fit_params;

void cb_calib_fit_default_params(cb_calib_fit_params *p);

/* Errors of one group of observations, relative: (model - observed) / observed. */
typedef struct cb_calib_fit_error {
  size_t n;
  double rms_before;      /* with the base profile */
  double rms_after;       /* with the fitted one */
  double median_abs_after;
  double p90_abs_after;
} cb_calib_fit_error;

typedef struct cb_calib_fit_result {
  cb_sim_params base;     /* the profile the fit started from */
  cb_sim_params fitted;   /* base with mfu, mbu and step_overhead fitted */
  size_t runs, records;   /* inputs */
  cb_calib_fit_error ttft;/* TTFT of prefills that ran alone, from their first step */
  cb_calib_fit_error itl; /* token gaps of pure decode steps */
  double loss_before, loss_after; /* mean squared log ratio, the two groups averaged */
  int mfu_identified;     /* 1: compute-bound steps constrain MFU; 0: kept from the base */
  int mbu_identified;     /* 1: memory-bound steps constrain MBU; 0: kept from the base */
  double compute_bound_share; /* of observations, at the fitted values */
  int evaluations;
} cb_calib_fit_result;

/*
 * Fit base's mfu, mbu and step_overhead_ns to the records of one or more runs made on
 * that deployment (same model, GPU, TP, scheduler limits). Observations: every gap
 * between two tokens of a request that falls in a step with no prefill (the step is
 * rebuilt from the requests decoding then and their contexts), and the TTFT of every
 * request whose prefill ran with no other prefill, from the end of the step in flight
 * when it arrived. Loss: mean squared log(model / observed) of each group (relative
 * errors, unbiased under multiplicative noise), the two averaged;
 * minimised by Nelder-Mead over (log MFU, log MBU, overhead) from several starts.
 * CB_ERR_INVALID when there is nothing to fit (no such observations), naming why.
 */
cb_status cb_calib_fit_compute(const cb_sim_params *base, const cb_record_set *const *runs,
                               size_t n_runs, const cb_calib_fit_params *p,
                               cb_calib_fit_result *out, cb_error *err);
void cb_calib_fit_write_json(const cb_calib_fit_result *r, const char *profile_path, cb_buf *out);
void cb_calib_fit_format(const cb_calib_fit_result *r, cb_buf *out);

/* ---- perf: paper claims against a result directory ---------------------------------- */

/*
 * Metric keys (from summary.json, docs/results.md): higher is better for
 * requests_per_s, output_tokens_per_s, total_tokens_per_s, goodput_requests_per_s;
 * lower is better for <m>_<s>_ms with m in ttft, tpot, itl, e2e and s in mean, p50,
 * p90, p95, p99.
 */
#define CB_CALIB_MAX_CLAIMS 64

typedef struct cb_calib_claim {
  char metric[48];
  double paper;
  long line;              /* in the claims file, 0 from the command line */
} cb_calib_claim;

typedef struct cb_calib_claims {
  char source[256];       /* `source:` of the file (the paper, table...), "" if none */
  char path[512];         /* the file, "" when none */
  cb_calib_claim items[CB_CALIB_MAX_CLAIMS];
  size_t n;
} cb_calib_claims;

/* 1 for a known metric key (*higher_better set), 0 otherwise. */
int cb_calib_metric_key(const char *key, int *higher_better);
/* A YAML or JSON claims file: `source: TEXT` (optional) and `claims: {metric: value}`.
 * Errors name the file, the line and the key (unknown metric, not a positive number,
 * a metric given twice). */
cb_status cb_calib_claims_load(const char *path, cb_calib_claims *out, cb_error *err);
/* One "metric=value" from the command line (added or replacing the file's). */
cb_status cb_calib_claims_add(cb_calib_claims *c, const char *spec, cb_error *err);

typedef struct cb_calib_perf_row {
  char metric[48];
  int higher_better;
  double paper;
  double measured;        /* NAN when the run does not have it */
  double factor;          /* measured / paper; NAN when not measured */
  double production;      /* measured x margin (higher better) or measured / margin;
                             unmeasured: paper x the kind's mean factor, with the margin */
  cb_calib_source source; /* MEASURED, SIMULATED (a sim run), or DEFAULT (projected from
                             the kind's mean factor; NAN when there is none) */
} cb_calib_perf_row;

typedef struct cb_calib_perf_result {
  char dir[512];
  char claims_source[256];
  int predicted;          /* the result directory is a prediction (sim run) */
  double margin;          /* safety margin, (0, 1]: 0.85 promises 85% of throughput */
  double throughput_factor; /* geometric mean of the measured throughput factors, NAN */
  double latency_factor;    /* ... of the latency factors, NAN */
  cb_calib_perf_row rows[CB_CALIB_MAX_CLAIMS];
  size_t n;
} cb_calib_perf_result;

/* Compare the claims with DIR/summary.json. Errors: no summary, an empty run (no
 * successful request), a claim that is neither measured nor projectable is not an
 * error (its row says so). */
cb_status cb_calib_perf_compute(const cb_calib_claims *c, const char *dir, double margin,
                                cb_calib_perf_result *out, cb_error *err);
void cb_calib_perf_write_json(const cb_calib_perf_result *r, cb_buf *out);
void cb_calib_perf_format(const cb_calib_perf_result *r, cb_buf *out);

/* ---- sla: what to promise, and up to which load ------------------------------------ */

#define CB_CALIB_SLA_MAX_POINTS 64
#define CB_CALIB_SLA_MAX_LINES 32

typedef struct cb_calib_sla_params {
  double margin;          /* added to the predicted percentile: SLA = value x (1 + margin);
                             0.15 (the 10-15% band the issue asks for; any [0, 1) allowed) */
  cb_metric metrics[8];   /* ttft, tpot, e2e by default */
  size_t n_metrics;
  double percentiles[8];  /* of 50, 90, 95, 99, 99.9; default 50, 90, 99 */
  size_t n_percentiles;
  long at;                /* the operating point: index into the sweep's points of the
                             operating kind (-1: the first, the lightest load) */
} cb_calib_sla_params;

void cb_calib_sla_default_params(cb_calib_sla_params *p);

typedef struct cb_calib_sla_point {
  char label[64];         /* "rate=4", "concurrency=8", or "run" */
  char dir[512];
  double load;            /* NAN for a single run */
  int predicted;
  size_t measured, failed;
} cb_calib_sla_point;

typedef struct cb_calib_sla_line {
  cb_metric metric;
  double percentile;
  double value_ms;        /* at the operating point */
  double sla_ms;          /* value_ms x (1 + margin): the number to promise */
  int breaks;             /* 1: a heavier point exceeds sla_ms */
  long last_ok;           /* last point (index) at or under sla_ms, before the first break */
  long first_break;       /* first heavier point over sla_ms, -1 */
  double break_load;      /* load where the line crosses sla_ms, interpolated linearly
                             between last_ok and first_break; NAN when it never breaks */
  double values_ms[CB_CALIB_SLA_MAX_POINTS]; /* the percentile at every point */
} cb_calib_sla_line;

typedef struct cb_calib_sla_result {
  char path[512];
  char load_kind[16];     /* "rate", "concurrency", "" for a single run */
  double margin;
  long at;                /* operating point */
  cb_calib_sla_point points[CB_CALIB_SLA_MAX_POINTS];
  size_t n_points;
  cb_calib_sla_line lines[CB_CALIB_SLA_MAX_LINES];
  size_t n_lines;
  double break_load;      /* the lowest break load over the lines: where the SLA as a
                             whole stops holding; NAN when none breaks (or one run) */
  int predicted;          /* every point is a prediction */
} cb_calib_sla_result;

/*
 * path: a result directory (summary.json) or a sweep directory (sweep.json, as
 * `run --sweep` and `sim run --sweep` write; points of one load kind are used, in
 * increasing load). Errors: missing or malformed files (named), an empty run, an
 * unknown percentile, `at` out of range.
 */
cb_status cb_calib_sla_compute(const char *path, const cb_calib_sla_params *p,
                               cb_calib_sla_result *out, cb_error *err);
void cb_calib_sla_write_json(const cb_calib_sla_result *r, cb_buf *out);
void cb_calib_sla_format(const cb_calib_sla_result *r, cb_buf *out);

/* ==== end of performance calibration ================================================ */

#ifdef __cplusplus
}
#endif
#endif
