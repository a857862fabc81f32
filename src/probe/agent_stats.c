/*
 * agent_stats.c - probe.json of `probe agent` from its finished runs (agent_internal.h;
 * docs/probe.md, "probe agent", for every field).
 *
 * Intervals: Wilson's for shares (a path's share, success and SLO attainment, failure
 * given a tool error); a percentile bootstrap over runs (resampled with replacement,
 * seeded) for the path entropy, the mean steps, the end-to-end p95 and the per-call
 * factor p. p is the maximum-likelihood fit of success = p^calls over the runs that
 * called at least one tool: each run with c calls succeeds with probability p^c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_internal.h"
#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/probe.h"
#include "calibench/stats.h"

/* What one run contributes. */
typedef struct run_view {
  const char *path;
  size_t path_id;   /* index into the distinct paths */
  int answered;     /* success or wrong answer: it has an end-to-end latency */
  int success;
  int calls, steps, tool_errors;
  double e2e_s;
} run_view;

/* Per-run values the bootstrap recomputes from a resample. */
enum { B_ENTROPY, B_STEPS, B_P95, B_PCALL, B_N };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of the answered runs' e2e among idx[0..n) (NAN when none). */
static double e2e_quantile(const run_view *v, const size_t *idx, size_t n, double q, double *scratch) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (v[idx[i]].answered) scratch[m++] = v[idx[i]].e2e_s;
  if (!m) return NAN;
  qsort(scratch, m, sizeof *scratch, cmp_double);
  return cb_stats_quantile_sorted(scratch, m, q);
}

/* Runs and successes by number of tool calls (index: calls, 0..max). */
typedef struct by_calls {
  double *runs, *ok;
  int max;
} by_calls;

/* Log-likelihood of p: each run with c >= 1 calls succeeds with probability p^c. */
static double loglik(double p, const by_calls *b) {
  double l = 0;
  for (int c = 1; c <= b->max; c++) {
    if (!b->runs[c]) continue;
    double pc = pow(p, c);
    l += b->ok[c] * log(pc) + (b->runs[c] - b->ok[c]) * log1p(-pc);
  }
  return l;
}

/* The fitted per-call factor: NAN without runs that called a tool, 1 when every such
 * run succeeded, 0 when none did; else golden-section search of the likelihood,
 * concave in p here (a sum of c log p and log(1 - p^c) terms). */
static double fit_per_call(const run_view *v, const size_t *idx, size_t n) {
  by_calls b = {.max = 0};
  for (size_t i = 0; i < n; i++) b.max = v[idx[i]].calls > b.max ? v[idx[i]].calls : b.max;
  b.runs = cb_calloc((size_t)b.max + 1, sizeof *b.runs);
  b.ok = cb_calloc((size_t)b.max + 1, sizeof *b.ok);
  double with = 0, ok = 0;
  for (size_t i = 0; i < n; i++) {
    const run_view *r = &v[idx[i]];
    b.runs[r->calls]++;
    b.ok[r->calls] += r->success;
    with += r->calls > 0;
    ok += r->calls > 0 && r->success;
  }
  double p;
  if (!with) p = NAN;
  else if (ok == with) p = 1;
  else if (!ok) p = 0;
  else {
    const double g = 0.6180339887498949;
    double a = 1e-12, z = 1 - 1e-12;
    double x1 = z - g * (z - a), x2 = a + g * (z - a);
    double f1 = loglik(x1, &b), f2 = loglik(x2, &b);
    while (z - a > 1e-10) {
      if (f1 < f2) {
        a = x1, x1 = x2, f1 = f2;
        x2 = a + g * (z - a);
        f2 = loglik(x2, &b);
      } else {
        z = x2, x2 = x1, f2 = f1;
        x1 = z - g * (z - a);
        f1 = loglik(x1, &b);
      }
    }
    p = (a + z) / 2;
  }
  cb_free(b.runs);
  cb_free(b.ok);
  return p;
}

static void compute(const run_view *v, size_t n_paths, const size_t *idx, size_t n, double *out,
                    double *scratch) {
  double *counts = cb_calloc(n_paths, sizeof *counts);
  double steps = 0;
  for (size_t i = 0; i < n; i++) {
    counts[v[idx[i]].path_id]++;
    steps += v[idx[i]].steps;
  }
  out[B_ENTROPY] = n_paths > 1 ? cb_stats_entropy(counts, n_paths, 2) : 0;
  out[B_STEPS] = n ? steps / (double)n : NAN;
  out[B_P95] = e2e_quantile(v, idx, n, 0.95, scratch);
  out[B_PCALL] = fit_per_call(v, idx, n);
  cb_free(counts);
}

/* Percentile-bootstrap intervals of every compute() value (NAN-free replicates). */
static void bootstrap(const cb_probe_agent_params *p, const run_view *v, size_t n_paths, size_t n,
                      double lo[B_N], double hi[B_N]) {
  long B = p->bootstrap > 0 ? p->bootstrap : 1;
  double *reps = cb_calloc((size_t)B * B_N, sizeof *reps), *scratch = cb_calloc(n + 1, sizeof *scratch);
  size_t *idx = cb_calloc(n + 1, sizeof *idx);
  cb_rng rng;
  cb_rng_init_stream(&rng, p->seed, 0x626f6f74, 0); /* "boot" */
  for (long b = 0; b < B; b++) {
    for (size_t i = 0; i < n; i++) idx[i] = (size_t)cb_rng_below(&rng, n);
    compute(v, n_paths, idx, n, reps + b * B_N, scratch);
  }
  double *col = cb_calloc((size_t)B, sizeof *col);
  for (int k = 0; k < B_N; k++) {
    size_t m = 0;
    for (long b = 0; b < B; b++)
      if (!isnan(reps[b * B_N + k])) col[m++] = reps[b * B_N + k];
    qsort(col, m, sizeof *col, cmp_double);
    lo[k] = m ? cb_stats_quantile_sorted(col, m, (1 - p->confidence) / 2) : NAN;
    hi[k] = m ? cb_stats_quantile_sorted(col, m, (1 + p->confidence) / 2) : NAN;
  }
  cb_free(col);
  cb_free(reps);
  cb_free(scratch);
  cb_free(idx);
}

/* A number, or null when it is not one (JSON has no NaN). */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *metric(double value, double lo, double hi, int higher_is_better) {
  return json_pack("{s:o, s:o, s:o, s:b}", "value", num(value), "lo", num(lo), "hi", num(hi),
                   "higher_is_better", higher_is_better);
}

static json_t *share(size_t k, size_t n, double confidence) {
  double lo, hi;
  cb_stats_wilson(k, n, confidence, &lo, &hi);
  return json_pack("{s:I, s:I, s:o, s:o, s:o}", "k", (json_int_t)k, "n", (json_int_t)n, "rate",
                   num(n ? (double)k / (double)n : NAN), "lo", num(lo), "hi", num(hi));
}

static int by_path(const void *a, const void *b) {
  return strcmp((*(const run_view *const *)a)->path, (*(const run_view *const *)b)->path);
}

/* Distinct paths (owned array of their texts), path_id set on every run. */
static const char **distinct_paths(run_view *v, size_t n, size_t *n_paths) {
  run_view **order = cb_calloc(n + 1, sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = &v[i];
  qsort(order, n, sizeof *order, by_path);
  const char **names = cb_calloc(n + 1, sizeof *names);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!i || strcmp(order[i]->path, order[i - 1]->path)) names[k++] = order[i]->path;
    order[i]->path_id = k - 1;
  }
  cb_free(order);
  *n_paths = k;
  return names;
}

/* One row of the path table. */
static json_t *path_row(const cb_probe_agent_params *p, const run_view *v, size_t n, size_t id,
                        const char *name, double *scratch, size_t *idx) {
  size_t m = 0, ok = 0, slo = 0, answered = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].path_id != id) continue;
    idx[m++] = i;
    ok += v[i].success;
    answered += v[i].answered;
    slo += v[i].answered && p->slo_e2e_s > 0 && v[i].e2e_s <= p->slo_e2e_s;
  }
  json_t *row = json_pack("{s:s, s:I, s:o, s:o}", "path", name, "runs", (json_int_t)m, "share",
                          share(m, n, p->confidence), "success", share(ok, m, p->confidence));
  json_object_set_new(row, "e2e_s", json_pack("{s:I, s:o, s:o, s:o}", "n", (json_int_t)answered,
                                              "p50", num(e2e_quantile(v, idx, m, 0.5, scratch)),
                                              "p95", num(e2e_quantile(v, idx, m, 0.95, scratch)),
                                              "p99", num(e2e_quantile(v, idx, m, 0.99, scratch))));
  json_object_set_new(row, "slo_attainment", p->slo_e2e_s > 0 ? share(slo, m, p->confidence) : json_null());
  return row;
}

static int by_runs_desc(const void *a, const void *b) {
  json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "runs"));
  json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "runs"));
  if (x != y) return x < y ? 1 : -1;
  return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
                json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

static json_t *path_table(const cb_probe_agent_params *p, const run_view *v, size_t n,
                          const char **names, size_t n_paths) {
  double *scratch = cb_calloc(n + 1, sizeof *scratch);
  size_t *idx = cb_calloc(n + 1, sizeof *idx);
  json_t **rows = cb_calloc(n_paths + 1, sizeof *rows);
  for (size_t k = 0; k < n_paths; k++) rows[k] = path_row(p, v, n, k, names[k], scratch, idx);
  qsort(rows, n_paths, sizeof *rows, by_runs_desc);
  json_t *arr = json_array();
  for (size_t k = 0; k < n_paths; k++) json_array_append_new(arr, rows[k]);
  cb_free(rows);
  cb_free(scratch);
  cb_free(idx);
  return arr;
}

static json_t *success_by_calls(const run_view *v, size_t n, double confidence) {
  int max = 0;
  for (size_t i = 0; i < n; i++) max = v[i].calls > max ? v[i].calls : max;
  json_t *arr = json_array();
  for (int c = 0; c <= max; c++) {
    size_t k = 0, m = 0;
    for (size_t i = 0; i < n; i++)
      if (v[i].calls == c) {
        m++;
        k += v[i].success;
      }
    if (!m) continue;
    json_t *row = share(k, m, confidence);
    json_object_set_new(row, "calls", json_integer(c));
    json_array_append_new(arr, row);
  }
  return arr;
}

/* --expected-paths: {"path": probability} -> a chi-square test of the observed paths;
 * categories expecting fewer than 5 runs are pooled into one (Cochran's rule). */
static cb_status reference_test(const cb_probe_agent_params *p, const run_view *v, size_t n,
                                json_t **out, cb_error *err) {
  json_t *ref;
  cb_status st = cb_json_load_file(p->expected_paths, 0, CB_LIMIT_DATASET_BYTES, &ref, err);
  if (st != CB_OK) return st;
  if (!json_is_object(ref) || !json_object_size(ref)) {
    json_decref(ref);
    return cb_error_at(err, CB_ERR_PARSE, p->expected_paths, 1, 0,
                       "expected an object {\"path\": probability, ...}");
  }
  size_t k = json_object_size(ref), cat = 0;
  double *obs = cb_calloc(k + 1, sizeof *obs), *exp = cb_calloc(k + 1, sizeof *exp), sum = 0;
  double pooled_o = 0, pooled_e = 0;
  size_t unexpected = 0, pooled = 0;
  const char *path;
  json_t *prob;
  json_object_foreach(ref, path, prob) {
    double q = json_number_value(prob);
    if (!json_is_number(prob) || !(q > 0 && q <= 1)) {
      st = cb_error_at(err, CB_ERR_PARSE, p->expected_paths, 0, 0,
                       "path '%s': expected a probability in (0, 1]", path);
      break;
    }
    sum += q;
    double o = 0;
    for (size_t i = 0; i < n; i++) o += !strcmp(v[i].path, path);
    if (q * (double)n < 5) {
      pooled_o += o, pooled_e += q * (double)n, pooled++;
    } else {
      obs[cat] = o, exp[cat++] = q * (double)n;
    }
  }
  for (size_t i = 0; st == CB_OK && i < n; i++) unexpected += !json_object_get(ref, v[i].path);
  if (st == CB_OK && fabs(sum - 1) > 1e-6)
    st = cb_error_at(err, CB_ERR_PARSE, p->expected_paths, 0, 0,
                     "the probabilities sum to %g, expected 1", sum);
  if (st == CB_OK) {
    if (pooled) obs[cat] = pooled_o + (double)unexpected, exp[cat++] = pooled_e;
    double stat = INFINITY, pv = 0;
    /* A path the reference gives no chance has no finite statistic unless pooled. */
    int possible = !unexpected || pooled;
    if (possible && cat >= 2) {
      if (cb_stats_chisquare(obs, exp, cat, 0, &stat, &pv, err) != CB_OK) st = CB_ERR_INVALID;
    } else if (possible) {
      stat = NAN, pv = NAN; /* one category: nothing to test */
    }
    *out = json_pack("{s:s, s:o, s:I, s:o, s:I, s:I}", "file", p->expected_paths, "chi2", num(stat),
                     "df", (json_int_t)(cat ? cat - 1 : 0), "p_value", num(pv), "pooled_paths",
                     (json_int_t)pooled, "unexpected_runs", (json_int_t)unexpected);
  }
  cb_free(obs);
  cb_free(exp);
  json_decref(ref);
  return st;
}

cb_status cb__agent_expected_check(const cb_probe_agent_params *p, cb_error *err) {
  json_t *ref = NULL;
  cb_status st = reference_test(p, NULL, 0, &ref, err);
  json_decref(ref);
  return st;
}

cb_status cb__agent_stats(const cb_probe_agent_params *p, const cb_probe_agent_workflow *w,
                          const cb__agent_run *runs, size_t n, json_t **out, cb_error *err) {
  *out = NULL;
  run_view *v = cb_calloc(n + 1, sizeof *v);
  char **texts = cb_calloc(n + 1, sizeof *texts);
  size_t ok = 0, answered = 0, slo = 0, with_err = 0, fail_err = 0, fail_none = 0, outcomes[CB__AGENT_INTERRUPTED + 1] = {0};
  for (size_t i = 0; i < n; i++) {
    const cb__agent_run *r = &runs[i];
    texts[i] = cb__agent_path_text(r);
    v[i] = (run_view){.path = texts[i], .answered = r->outcome == CB__AGENT_SUCCESS || r->outcome == CB__AGENT_WRONG,
                      .success = r->outcome == CB__AGENT_SUCCESS, .calls = r->calls, .steps = r->steps,
                      .tool_errors = r->tool_errors, .e2e_s = r->model_s + r->tool_s};
    ok += v[i].success;
    answered += v[i].answered;
    slo += v[i].answered && p->slo_e2e_s > 0 && v[i].e2e_s <= p->slo_e2e_s;
    with_err += r->tool_errors > 0;
    fail_err += r->tool_errors > 0 && !v[i].success;
    fail_none += !r->tool_errors && !v[i].success;
    outcomes[r->outcome]++;
  }
  size_t n_paths;
  const char **names = distinct_paths(v, n, &n_paths);
  size_t *all = cb_calloc(n + 1, sizeof *all);
  double *scratch = cb_calloc(n + 1, sizeof *scratch), est[B_N], lo[B_N], hi[B_N];
  for (size_t i = 0; i < n; i++) all[i] = i;
  compute(v, n_paths, all, n, est, scratch);
  bootstrap(p, v, n_paths, n, lo, hi);

  double s_lo, s_hi, a_lo, a_hi, f_lo, f_hi;
  cb_stats_wilson(ok, n, p->confidence, &s_lo, &s_hi);
  cb_stats_wilson(slo, n, p->confidence, &a_lo, &a_hi);
  cb_stats_wilson(fail_err, with_err, p->confidence, &f_lo, &f_hi);
  /* The gateable metrics (probe.h's frame); one without a value (no run called a
   * tool, none answered) is left out rather than written as a number it is not. */
  json_t *doc = cb_probe_json_new("agent");
  const struct { const char *name; double v, lo, hi; int up; } ms[] = {
      {"success_rate", n ? (double)ok / (double)n : NAN, s_lo, s_hi, 1},
      {"path_entropy_bits", est[B_ENTROPY], lo[B_ENTROPY], hi[B_ENTROPY], 0},
      {"steps_mean", est[B_STEPS], lo[B_STEPS], hi[B_STEPS], 0},
      {"e2e_p95_s", est[B_P95], lo[B_P95], hi[B_P95], 0},
      {"per_call_success", est[B_PCALL], lo[B_PCALL], hi[B_PCALL], 1},
      {"failure_given_tool_error", with_err ? (double)fail_err / (double)with_err : NAN, f_lo, f_hi, 0},
      {"slo_attainment", p->slo_e2e_s > 0 && n ? (double)slo / (double)n : NAN, a_lo, a_hi, 1},
  };
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    if (isfinite(ms[i].v)) cb_probe_json_metric(doc, ms[i].name, ms[i].v, ms[i].lo, ms[i].hi, ms[i].up, NULL);
  json_object_set_new(doc, "workflow", json_string(w->path));
  json_object_set_new(doc, "runs", json_integer((json_int_t)n));
  json_object_set_new(doc, "max_steps", json_integer(p->max_steps));
  json_object_set_new(doc, "confidence", json_real(p->confidence));
  json_object_set_new(doc, "slo_e2e_s", p->slo_e2e_s > 0 ? json_real(p->slo_e2e_s) : json_null());
  json_t *oc = json_object();
  for (int k = CB__AGENT_SUCCESS; k <= CB__AGENT_INTERRUPTED; k++)
    json_object_set_new(oc, cb__agent_outcome_name((cb__agent_outcome)k), json_integer((json_int_t)outcomes[k]));
  json_object_set_new(doc, "outcomes", oc);
  json_object_set_new(doc, "paths", path_table(p, v, n, names, n_paths));
  json_object_set_new(doc, "path_entropy_bits", metric(est[B_ENTROPY], lo[B_ENTROPY], hi[B_ENTROPY], 0));
  json_t *steps = json_object();
  double steps_max = 0;
  for (size_t i = 0; i < n; i++) {
    scratch[i] = v[i].steps;
    steps_max = fmax(steps_max, v[i].steps);
  }
  qsort(scratch, n, sizeof *scratch, cmp_double);
  json_object_set_new(steps, "mean", num(est[B_STEPS]));
  json_object_set_new(steps, "p50", num(n ? cb_stats_quantile_sorted(scratch, n, 0.5) : NAN));
  json_object_set_new(steps, "p95", num(n ? cb_stats_quantile_sorted(scratch, n, 0.95) : NAN));
  json_object_set_new(steps, "max", num(steps_max));
  json_object_set_new(doc, "steps", steps);
  double calls = 0;
  for (size_t i = 0; i < n; i++) calls += v[i].calls;
  json_object_set_new(doc, "tool_calls", json_pack("{s:o}", "mean", num(n ? calls / (double)n : NAN)));
  json_object_set_new(doc, "e2e_s", json_pack("{s:I, s:o, s:o, s:o}", "n", (json_int_t)answered,
                                              "p50", num(e2e_quantile(v, all, n, 0.5, scratch)),
                                              "p95", num(e2e_quantile(v, all, n, 0.95, scratch)),
                                              "p99", num(e2e_quantile(v, all, n, 0.99, scratch))));
  json_object_set_new(doc, "success", share(ok, n, p->confidence));
  json_object_set_new(doc, "slo_attainment", p->slo_e2e_s > 0 ? share(slo, n, p->confidence) : json_null());
  json_object_set_new(doc, "tool_errors", json_pack("{s:o, s:o}", "failure_given_error",
                                                    share(fail_err, with_err, p->confidence),
                                                    "failure_given_none",
                                                    share(fail_none, n - with_err, p->confidence)));
  json_object_set_new(doc, "success_vs_calls",
                      json_pack("{s:o, s:o}", "by_calls", success_by_calls(v, n, p->confidence),
                                "per_call_success", metric(est[B_PCALL], lo[B_PCALL], hi[B_PCALL], 1)));
  cb_status st = CB_OK;
  if (p->expected_paths) {
    json_t *ref = NULL;
    st = reference_test(p, v, n, &ref, err);
    if (st == CB_OK) json_object_set_new(doc, "reference", ref);
  }
  for (size_t i = 0; i < n; i++) cb_free(texts[i]);
  cb_free(texts);
  cb_free((void *)names);
  cb_free(v);
  cb_free(all);
  cb_free(scratch);
  if (st != CB_OK) {
    json_decref(doc);
    return st;
  }
  *out = doc;
  return CB_OK;
}
