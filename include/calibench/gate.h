/*
 * gate.h - the CI regression gate: a policy of rules, each judging one metric of the
 * current run against a static bound, the baseline (relative or absolute change), the
 * per-request samples (a statistical test at the policy's alpha) or the recent history
 * of the run's series (Tukey's fences), with an action when it fails; and a contract of
 * stages, each requiring some of the rules. The verdicts come out as JSON, Markdown,
 * JUnit XML and plain text. docs/gate.md is the user's page.
 *
 * A rule fails when every condition it states, among those that could be evaluated,
 * says "regressed": `relative: 10%` with `test: auto` fails only for a change that is
 * both larger than 10% and significant. A condition that cannot be evaluated (no
 * baseline, no samples, too little history) is noted and left out; a rule none of
 * whose conditions could be evaluated is skipped. A metric missing from the current
 * run fails the rule: the benchmark did not produce what the policy asks for.
 *
 * The statistical conditions of one gate form one family: their p-values are adjusted
 * (Holm by default) so that on noise alone the chance that any of them fires is at
 * most alpha.
 */
#ifndef CALIBENCH_GATE_H
#define CALIBENCH_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CB_GATE_BLOCK = 0, CB_GATE_WARN, CB_GATE_INFO } cb_gate_action;
const char *cb_gate_action_name(cb_gate_action a); /* "block", "warn", "info" */

typedef enum {
  CB_GATE_TEST_NONE = 0,
  CB_GATE_TEST_AUTO,         /* bootstrap for a tail percentile (p90 and above, min, max),
                                Mann-Whitney U for everything else */
  CB_GATE_TEST_MANNWHITNEY,  /* one-sided U test on the per-request samples */
  CB_GATE_TEST_BOOTSTRAP,    /* one-sided percentile bootstrap of the metric's quantile */
  CB_GATE_TEST_PAIRED        /* quality.* (auto resolves to it): paired bootstrap of the
                                corpus score over the items both runs answered, through
                                the pair's `paired` (docs/eval-run.md, "Gate") */
} cb_gate_test;
/* "", "auto", "mann-whitney", "bootstrap", "paired-bootstrap" */
const char *cb_gate_test_name(cb_gate_test t);

typedef enum { CB_GATE_CORRECT_HOLM = 0, CB_GATE_CORRECT_BONFERRONI, CB_GATE_CORRECT_NONE } cb_gate_correction;

/* Defaults of the adaptive (Tukey) condition. */
#define CB_GATE_TUKEY_WINDOW 72
#define CB_GATE_TUKEY_K 1.5
#define CB_GATE_TUKEY_MIN_RUNS 5

typedef struct cb_gate_rule {
  char name[64];                 /* unique in the policy */
  const cb_store_metric *metric; /* from the catalog */
  char class_name[64];           /* "" = the whole run */
  cb_store_better direction;     /* LOWER or HIGHER is better */
  cb_gate_action action;         /* block (default), warn, info */
  /* Conditions (at least one); values in the metric's unit (ms for durations). */
  int has_static;
  double static_limit;           /* max (lower is better) or min (higher is better) */
  int has_relative;
  double relative;               /* a fraction: 0.12 = a 12% change for the worse */
  int has_absolute;
  double absolute;               /* a change for the worse, in the metric's unit */
  cb_gate_test test;             /* statistical condition (NONE = none) */
  int has_tukey;
  size_t tukey_window;           /* runs of history */
  double tukey_k;
  size_t tukey_min_runs;
  long line;                     /* where the rule starts in the policy file; 0 built in */
} cb_gate_rule;

typedef struct cb_gate_stage {
  char name[32];
  char owner[64];                /* the owning role, "" unknown */
  cb_gate_action action;         /* the action when a required item fails */
  size_t *requires;              /* owned: indices into the policy's rules */
  size_t n_requires;
  long line;
} cb_gate_stage;

typedef struct cb_gate_policy {
  char source[512];              /* the file, or "built-in default" */
  double alpha;                  /* family-wise level of the statistical conditions */
  cb_gate_correction correction;
  size_t resamples;              /* bootstrap resamples (2000) */
  uint64_t seed;                 /* bootstrap seed (0) */
  cb_gate_rule *rules;           /* owned */
  size_t n_rules;
  cb_gate_stage *stages;         /* owned; the contract (may be empty) */
  size_t n_stages;
} cb_gate_policy;

/* The documented default policy (docs/gate.md, "Default policy"). */
void cb_gate_policy_default(cb_gate_policy *p);
/* The default rules for quality (docs/eval-run.md, "Gate"): for each quality.<m> the
 * current run has (whole run; not wrong_rate), a blocking rule "quality-<m>" that fails
 * on a drop of more than 1 point (0-100 scale) that is significant by the paired
 * bootstrap. */
void cb_gate_policy_add_quality(cb_gate_policy *p, const cb_run_data *current);
/* The default rules for probes (docs/probe.md, "Store and gate"): for each
 * probe.<probe>.<metric> the current run has, a blocking rule "probe-<probe>-<metric>"
 * that fails when it is more than 10% worse than the baseline (its direction from
 * probe.json's higher_is_better). */
void cb_gate_policy_add_probe(cb_gate_policy *p, const cb_run_data *current);
/*
 * Load a policy file (YAML, docs/gate.md). Errors are CB_ERR_PARSE / CB_ERR_NOT_FOUND /
 * CB_ERR_RANGE with "FILE:LINE: key 'rules[2].direction': ..." messages (err->file and
 * err->line set). On error nothing is left to free.
 */
cb_status cb_gate_policy_load(cb_gate_policy *p, const char *path, cb_error *err);
void cb_gate_policy_free(cb_gate_policy *p);
/* 1 when some rule compares with a baseline (relative, absolute or a test). */
int cb_gate_policy_needs_baseline(const cb_gate_policy *p);
/* 1 when some rule has an adaptive (Tukey) condition, which needs the registry. */
int cb_gate_policy_needs_history(const cb_gate_policy *p);

/* ---- evaluation -------------------------------------------------------------------- */

typedef enum {
  CB_GATE_PASS = 0,
  CB_GATE_FAIL,
  CB_GATE_SKIP,  /* none of its conditions could be evaluated */
  CB_GATE_NA     /* the contract's selected stage does not require it */
} cb_gate_status;
const char *cb_gate_status_name(cb_gate_status s); /* "pass", "fail", "skip", "n/a" */

/* One rule's verdict on one run (one sweep point). NAN = not applicable. */
typedef struct cb_gate_verdict {
  const cb_gate_rule *rule;
  char point[64];           /* sweep point label, "" for a plain run */
  cb_gate_status status;
  cb_gate_action action;    /* the rule's, or its stage's when the stage requires it */
  double baseline, current; /* metric unit */
  double change;            /* current - baseline */
  double change_rel;        /* change / |baseline| */
  /* the statistical condition */
  cb_gate_test test;        /* the test used (AUTO resolved), NONE when none ran */
  double p_value, p_adjusted;
  double ci_low, ci_high;   /* bootstrap: interval of the quantile's change, metric unit */
  size_t n_current, n_baseline;
  /* the adaptive condition */
  double fence;             /* the Tukey fence the value was held to */
  double hist_q1, hist_q3;
  size_t hist_n;            /* history runs used */
  char threshold[160];      /* the conditions, for people: "<= 800 ms; +10%; p <= 0.05" */
  char note[320];           /* what decided it, for people */
} cb_gate_verdict;

/* The paired test of a quality metric (the gate scores no text; the caller can): for
 * metric ("bleu") and class ("" = whole run) of two runs, the one-sided p-value that
 * the current run is worse than the baseline, from `resamples` paired resamples with
 * `seed`, the `confidence` interval of the change (current - baseline) and the items
 * paired. Not CB_OK: err says why the condition could not be evaluated. */
typedef cb_status (*cb_gate_paired_fn)(void *ctx, const cb_run_data *current,
                                       const cb_run_data *baseline, const char *metric,
                                       const char *class_name, size_t resamples,
                                       double confidence, uint64_t seed, double *p_value,
                                       double *ci_low, double *ci_high, size_t *n,
                                       cb_error *err);

/* A current run and what it is compared with. */
typedef struct cb_gate_pair {
  const cb_run_data *current;  /* with samples for statistical rules */
  const cb_run_data *baseline; /* NULL: no baseline */
  const cb_history *history;   /* one per rule with a Tukey condition, in the order of
                                  cb_gate_history_metrics: that rule's metric (one value
                                  per row) over the series' recent runs; NULL = none */
  size_t n_history;
  cb_gate_paired_fn paired;    /* NULL: paired tests cannot be evaluated */
  void *paired_ctx;
} cb_gate_pair;

typedef struct cb_gate_result {
  cb_gate_verdict *verdicts;   /* owned; rules x pairs, rule-major per pair */
  size_t n_verdicts;
  const cb_gate_policy *policy;
  int stage;                   /* index of the selected stage, -1 none */
  int blocked;                 /* a rule with action block failed */
  int warned;                  /* a rule with action warn failed */
  char current_id[128];
  char baseline_kind[16];      /* "dir", "run", "history", "none" */
  char baseline_id[160];
  char series[CB_TAGS_TEXT_MAX];
} cb_gate_result;

/*
 * The history queries the Tukey conditions need, in the order a pair's histories must
 * follow: one per rule with a Tukey condition, its metric name, class and window
 * (names and classes point into the policy). Returns the count (<= max).
 */
size_t cb_gate_history_metrics(const cb_gate_policy *p, const char **names,
                               const char **classes, size_t *windows, size_t max);

/*
 * Judge n pairs (a plain run is one pair; a sweep one per point) by the policy. `stage`
 * names the contract stage to check (NULL = none: every rule with its own action);
 * an unknown stage is CB_ERR_NOT_FOUND. *out is filled (free with cb_gate_result_free);
 * its identity fields are left for the caller.
 */
cb_status cb_gate_evaluate(const cb_gate_policy *p, const cb_gate_pair *pairs, size_t n,
                           const char *stage, cb_gate_result *out, cb_error *err);
void cb_gate_result_free(cb_gate_result *r);
/* "pass", "warn" or "blocked". */
const char *cb_gate_result_status(const cb_gate_result *r);

/* ---- output ------------------------------------------------------------------------ */

/* The verdicts as JSON (docs/gate.md, "JSON"); one object, no newline. */
void cb_gate_write_json(const cb_gate_result *r, cb_buf *out);
/* Markdown for a CI job summary: the status, the verdict table, the contract's
 * traceability matrix, and the series' previous snapshots side by side (snaps: newest
 * first, may be NULL). */
void cb_gate_write_markdown(const cb_gate_result *r, const cb_store_snapshot *snaps,
                            size_t n_snaps, cb_buf *out);
/* JUnit XML: one test case per verdict; block failures are <failure>, skipped and n/a
 * are <skipped>, warn and info failures pass with the note in <system-out>. */
void cb_gate_write_junit(const cb_gate_result *r, cb_buf *out);
/* A terminal table. */
void cb_gate_write_text(const cb_gate_result *r, cb_buf *out);

/* ---- notification ------------------------------------------------------------------ */

/* docs/gate.md, "Notifications": the generic schema or a Slack-compatible message. */
typedef enum { CB_GATE_NOTIFY_GENERIC = 0, CB_GATE_NOTIFY_SLACK } cb_gate_notify_format;

/* The documented defaults: 3 attempts, 1 s before the second and 2 s before the third,
 * 10 s for each. */
#define CB_GATE_NOTIFY_ATTEMPTS 3
#define CB_GATE_NOTIFY_BACKOFF_S 1.0
#define CB_GATE_NOTIFY_TIMEOUT_S 10.0

/* The body a notification posts, as one JSON object; link NULL or "" for none. */
void cb_gate_notify_payload(const cb_gate_result *r, cb_gate_notify_format f, const char *link,
                            cb_buf *out);

typedef struct cb_gate_notify_config {
  const char *url;              /* may hold a token (a Slack webhook's path): never shown */
  cb_gate_notify_format format;
  const char *link;             /* NULL: none */
  double timeout_s;             /* each attempt */
  const char *header;           /* one "Name: value" line sent with it (a secret), or NULL */
  unsigned attempts;            /* in all, >= 1 */
  double backoff_s;             /* the pause before the second attempt; it doubles after */
} cb_gate_notify_config;

typedef struct cb_gate_notify_outcome {
  unsigned attempts;            /* made */
  long status;                  /* the last HTTP status, 0 when no answer came */
} cb_gate_notify_outcome;

/*
 * Post r's verdict. An attempt is retried when no answer came, it timed out, or the
 * receiver answered 429 or 5xx; a 2xx is success, any other answer is final.
 * CB_ERR_NETWORK when no attempt succeeded: err names the URL as
 * cb_gate_notify_shown_url does and says what each attempt got, with what the receiver
 * said redacted of the URL's path and query and the header's value.
 */
cb_status cb_gate_notify(const cb_gate_notify_config *c, const cb_gate_result *r,
                         cb_gate_notify_outcome *out, cb_error *err);
/* The URL for messages: its scheme and host only ("https://hooks.slack.com/…"). */
void cb_gate_notify_shown_url(const char *url, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
