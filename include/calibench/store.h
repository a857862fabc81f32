/*
 * store.h - the results registry: result directories recorded with their tags, so that
 * `calibench history` can chart a metric over time and `calibench gate` can compare a
 * run with a baseline or with the recent history of its series.
 *
 * Four parts:
 *  - tags (cb_tags_): key=value labels of a run (model, version, stage, commit, branch,
 *    anything else); the series of a run is its tags without `commit` and `version`;
 *  - the metric catalog (cb_store_metric_): the names policies and `history` use, each
 *    addressing one number of summary.json (ttft.p99 -> metrics.ttft.p99_ms);
 *  - run data (cb_run_data_): what the registry and the gate know of one run: identity,
 *    metric values per class and, optionally, per-request samples; loaded from a result
 *    directory (records via cb_record_set_load) or from the registry;
 *  - the registry (cb_store_): SQLite (a file path) or PostgreSQL (a postgresql:// URL)
 *    behind one schema with versioned migrations (docs/internals/store-schema.md). Every
 *    write is one transaction: a failure or a crash part-way leaves it as it was.
 *
 * Nothing here is thread-safe: one cb_store per thread.
 */
#ifndef CALIBENCH_STORE_H
#define CALIBENCH_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tags ------------------------------------------------------------------------- */

#define CB_TAG_KEY_MAX 64
#define CB_TAG_VALUE_MAX 192
#define CB_TAGS_MAX 24
/* Room for a canonical tag string (cb_tags_format) of a full tag set. */
#define CB_TAGS_TEXT_MAX (CB_TAGS_MAX * (CB_TAG_KEY_MAX + CB_TAG_VALUE_MAX + 2))

typedef struct cb_tag {
  char key[CB_TAG_KEY_MAX];     /* [a-z0-9_.-]+, starting with a letter */
  char value[CB_TAG_VALUE_MAX]; /* non-empty; no ',' or control characters */
} cb_tag;

/* A set of tags, kept sorted by key, keys unique. Caller-allocated; zero = empty. */
typedef struct cb_tags {
  cb_tag items[CB_TAGS_MAX];
  size_t count;
} cb_tags;

/* The values the `stage` tag may take. */
#define CB_TAG_STAGES "pretrain, sft, rlhf, quantized, prod"

/*
 * Set key to value (replacing an earlier value of the key). CB_ERR_INVALID names the
 * problem: a bad key or value, a `stage` outside CB_TAG_STAGES; CB_ERR_CAPACITY past
 * CB_TAGS_MAX tags. *t is unchanged on error.
 */
cb_status cb_tags_set(cb_tags *t, const char *key, const char *value, cb_error *err);
/* Parse and set "key=value". */
cb_status cb_tags_add(cb_tags *t, const char *key_value, cb_error *err);
/* The value of key, or NULL. */
const char *cb_tags_get(const cb_tags *t, const char *key);
/* Canonical text "k1=v1,k2=v2" (sorted by key; "" for no tags), cut at n - 1 bytes. */
void cb_tags_format(const cb_tags *t, char *out, size_t n);
/* Parse canonical text back (as cb_tags_add for each item). */
cb_status cb_tags_parse(cb_tags *t, const char *text, cb_error *err);
/* The series of a run: its tags less the per-change ones, `commit` and `version`. */
void cb_tags_series(const cb_tags *t, cb_tags *series);

/* ---- the metric catalog ------------------------------------------------------------- */

typedef enum {
  CB_UNIT_MS = 0,   /* a duration in milliseconds (policy values take ns/us/ms/s units) */
  CB_UNIT_PER_S,    /* a rate per second */
  CB_UNIT_FRACTION, /* a share in [0, 1] */
  CB_UNIT_COUNT,    /* a count */
  CB_UNIT_NUMBER    /* anything else (cv, seconds of CPU, ...) */
} cb_store_unit;

const char *cb_store_unit_name(cb_store_unit u); /* "ms", "/s", "fraction", "count", "" */

/* Which way is better, as far as the catalog knows (policies state it explicitly). */
typedef enum { CB_BETTER_NONE = 0, CB_BETTER_LOWER, CB_BETTER_HIGHER } cb_store_better;

/*
 * One metric name. `path` is where its value lives inside a summary object of
 * summary.json ("summary" or an item of "classes"), dot-separated, e.g.
 * "metrics.ttft.p99_ms"; "server." paths are under summary.json's top-level "server"
 * (whole run only); error_rate is failed / measured. `sample` names the per-request
 * sample statistical tests use ("" when there is none) and `quantile` the statistic
 * of it that the metric is (q in [0, 1]; -1 for a mean; NAN when not a statistic of
 * the sample). `adjusted`: failures count as +inf in the sample.
 */
typedef struct cb_store_metric {
  char name[48];
  char path[64];
  cb_store_unit unit;
  cb_store_better better;
  char sample[40];
  double quantile;
  int adjusted;
} cb_store_metric;

/* Number of catalog entries, and entry i (0 <= i < count). */
size_t cb_store_metric_count(void);
const cb_store_metric *cb_store_metric_at(size_t i);
/* Find a metric by name; NULL when unknown. */
const cb_store_metric *cb_store_metric_find(const char *name);
/* probe.<probe>.<metric> (a probe.json metric, docs/probe.md) with its direction:
 * entered on first use, its direction set (or changed) by each call; NULL when the
 * name is not of that form or the table of such names is full. */
const cb_store_metric *cb_store_probe_metric(const char *name, cb_store_better better);
/* As cb_store_metric_find; CB_ERR_NOT_FOUND with a message that suggests near names. */
cb_status cb_store_metric_lookup(const char *name, const cb_store_metric **out, cb_error *err);

/* ---- run data ---------------------------------------------------------------------- */

/* One point of eval metric METRIC's score (the name without "quality."): 1 on the
 * 0-100 scale of most, 0.01 for ROUGE, which keeps rouge-score's 0-1 scale, and 0.25
 * for a judge's mean grade (judge:NAME; a quarter of one step of the rubric's scale,
 * docs/gate.md says why). The gate's default quality threshold and the report's
 * "quality falls" flag count in these. */
double cb_store_quality_point(const char *metric);

/* Names of the per-request samples a run may carry (per class). */
#define CB_SAMPLE_NAMES "ttft, tpot, e2e, ttft_sched, e2e_sched, lag, error, " \
  "throughput.requests_per_s, throughput.output_tokens_per_s, throughput.total_tokens_per_s"
/* The sample of the quality.* metrics: eval.json's items, which the gate pairs between
 * two runs (a paired bootstrap of the corpus score, not a sample of values). */
#define CB_SAMPLE_EVAL_ITEMS "eval.items"
/* Equal-width bins of the measured window for the throughput samples. */
#define CB_THROUGHPUT_BINS 20

typedef struct cb_run_value {
  char class_name[64]; /* "" = the whole run */
  const cb_store_metric *metric;
  double value;        /* finite */
} cb_run_value;

typedef struct cb_run_samples {
  char class_name[64];
  char name[40];       /* one of CB_SAMPLE_NAMES */
  double *values;      /* owned; ns for durations, 0/1 for error, per-second rates */
  size_t n;
} cb_run_samples;

/*
 * One run. Every pointer is owned and released by cb_run_data_free. A sweep point is
 * a run of its own, with run_id "<sweep's run id>/<point label>" and the tag
 * point=<label>.
 */
typedef struct cb_run_data {
  char run_id[128];
  char start_utc[40], end_utc[40]; /* manifest labels ("" unknown) */
  char workload_hash[40];
  char point[64];                  /* sweep point label, "" otherwise */
  int interrupted;
  cb_tags tags;
  cb_run_value *values;
  size_t n_values, alloc_values;
  cb_run_samples *samples;
  size_t n_samples, alloc_samples;
  int has_samples;                 /* samples were loaded (a run may have none) */
  long torn_line;                  /* from a directory: records.jsonl's last line when the
                                      writer stopped mid-line (left out), else 0 */
  char *source;                    /* directory it came from; NULL from the registry */
  char *manifest_json;             /* the files' text (from a directory, or stored) */
  char *summary_json;
} cb_run_data;

typedef struct cb_run_list {
  cb_run_data *items;
  size_t count;
} cb_run_list;

void cb_run_data_init(cb_run_data *r);
void cb_run_data_free(cb_run_data *r);
void cb_run_list_free(cb_run_list *l);

/*
 * Load a result directory: DIR/manifest.json, DIR/summary.json, and with `samples`
 * DIR/records.jsonl (per-request samples for the whole run and each class). A sweep
 * directory (DIR/sweep.json) gives one run per point, read from DIR/points/<name>.
 * Every metric of the catalog present in the summary is kept, per class. Errors name
 * the file (and line and field where results.h says). On error *out is empty.
 */
cb_status cb_run_data_load(const char *dir, int samples, cb_run_list *out, cb_error *err);

/* A metric's value for a class ("" = whole run); NAN when absent. */
double cb_run_data_value(const cb_run_data *r, const char *metric, const char *class_name);
/* A per-request sample of a class; NULL when absent. */
const cb_run_samples *cb_run_data_samples(const cb_run_data *r, const char *name,
                                          const char *class_name);
/* Class names present in the run's values, "" first (pointers into r; max at most). */
size_t cb_run_data_classes(const cb_run_data *r, const char **names, size_t max);

/* Append a value / take ownership of a sample array (used by loaders). */
void cb_run_data_add_value(cb_run_data *r, const char *class_name, const cb_store_metric *m,
                           double v);
void cb_run_data_add_samples(cb_run_data *r, const char *class_name, const char *name,
                             double *values, size_t n);

/* ---- the registry ------------------------------------------------------------------ */

typedef struct cb_store cb_store;

/* The current schema version (the number of migrations). */
#define CB_STORE_SCHEMA_VERSION 2

/* The registry used when none is named: $CALIBENCH_REGISTRY, else "calibench.db". */
const char *cb_store_default_target(void);

/*
 * Open a registry: "postgresql://..." or "postgres://..." (any libpq connection URI)
 * for PostgreSQL, anything else is an SQLite file path. NULL = cb_store_default_target().
 * create = 0: a missing SQLite file is CB_ERR_NOT_FOUND (commands that only read never
 * create one). The schema is created or migrated to CB_STORE_SCHEMA_VERSION in one
 * transaction; a registry from a newer calibench is CB_ERR_UNSUPPORTED. On error
 * nothing is left to close. Errors never print a password from the URL.
 */
cb_status cb_store_open(const char *target, int create, cb_store **out, cb_error *err);
void cb_store_close(cb_store *s);
const char *cb_store_backend(const cb_store *s); /* "sqlite" or "postgresql" */
int cb_store_schema_version(const cb_store *s);  /* as found after migrating */

typedef enum {
  CB_STORE_ADDED = 0,   /* a new run id */
  CB_STORE_UNCHANGED,   /* stored before with the same content and tags: nothing done */
  CB_STORE_REPLACED     /* stored before with other content or tags: replaced, keeping
                           its place in the order of stores */
} cb_store_outcome;

const char *cb_store_outcome_name(cb_store_outcome o); /* "added", "unchanged", ... */

/*
 * Record runs (with their tags and, where r->has_samples, samples) in one
 * transaction: all or nothing. Idempotent by run id (see cb_store_outcome).
 * outcomes: n entries, or NULL.
 */
cb_status cb_store_put(cb_store *s, const cb_run_data *runs, size_t n,
                       cb_store_outcome *outcomes, cb_error *err);

/* Load a stored run into *out (initialised here): identity, tags, values, and with
 * `samples` its samples if it has them. CB_ERR_NOT_FOUND names the run id. */
cb_status cb_store_get(cb_store *s, const char *run_id, int samples, cb_run_data *out,
                       cb_error *err);

/* Which runs a query covers. */
typedef struct cb_store_filter {
  const cb_tags *where;      /* every tag must match (NULL = any) */
  const char *series;        /* exact series (cb_tags_format of cb_tags_series), or NULL */
  const char *exclude_run;   /* leave this run id out, or NULL */
  size_t last;               /* the newest N (by start time, then store order); 0 = all */
} cb_store_filter;

/* One run of a history. */
typedef struct cb_history_row {
  char run_id[128];
  char start_utc[40];
  char tags[CB_TAGS_TEXT_MAX];
  double *values; /* owned: one per metric asked for, NAN where the run lacks it */
} cb_history_row;

typedef struct cb_history {
  cb_history_row *rows; /* oldest first */
  size_t count;
} cb_history;

/*
 * The values of `metrics` (catalog names, n_metrics of them) for class `class_name`
 * ("" or NULL = whole run) over the runs the filter selects, oldest first. Unknown
 * metric names are CB_ERR_NOT_FOUND. *out is filled (free with cb_history_free).
 */
cb_status cb_store_history(cb_store *s, const char *const *metrics, size_t n_metrics,
                           const char *class_name, const cb_store_filter *f,
                           cb_history *out, cb_error *err);
void cb_history_free(cb_history *h);

/* ---- gate snapshots ------------------------------------------------------------------ */

/* How many gate snapshots a series keeps. */
#define CB_STORE_SNAPSHOTS_KEPT 3

typedef struct cb_store_snapshot {
  char series[CB_TAGS_TEXT_MAX];
  char run_id[128];
  char baseline[160];
  char created_utc[40];
  char status[16];   /* "pass", "warn", "blocked" */
  char *result_json; /* owned: the gate's JSON verdict */
} cb_store_snapshot;

/*
 * Record a gate's verdict for a series and keep only the newest `keep` (0 =
 * CB_STORE_SNAPSHOTS_KEPT) of that series, in one transaction.
 */
cb_status cb_store_snapshot_put(cb_store *s, const cb_store_snapshot *snap, size_t keep,
                                cb_error *err);
/* The snapshots of a series, newest first (at most max); *n set. Free each with
 * cb_store_snapshot_free. */
cb_status cb_store_snapshots(cb_store *s, const char *series, cb_store_snapshot *out,
                             size_t max, size_t *n, cb_error *err);
void cb_store_snapshot_free(cb_store_snapshot *snap);

/* ---- test hook ---------------------------------------------------------------------- */

/*
 * Make the write statement after the next `n` fail inside cb_store_put /
 * cb_store_snapshot_put: with crash = 0 it returns CB_ERR_IO ("injected failure"); with
 * crash = 1 the process kills itself with SIGKILL there, mid-transaction, as a power
 * cut would. n < 0 disables it. For the tests of transactional writes; the CLI sets it
 * from $CALIBENCH_TEST_STORE_FAULT ("fail:N" or "crash:N").
 */
void cb_store_inject_fault(cb_store *s, long n, int crash);

#ifdef __cplusplus
}
#endif
#endif
