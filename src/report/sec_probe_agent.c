/*
 * sec_probe_agent.c - `probe agent`'s part of the probe section (docs/probe.md,
 * "probe agent"): the path table (share, end-to-end latency per path, SLO attainment
 * and success per path), success against the number of tool calls beside the fitted
 * p^calls, and how a tool error carries to task failure. Path names are the model's
 * tool calls: untrusted text, escaped by the document like every cell.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report_internal.h"

static void share_cell(cb__rep_table *t, json_t *s) {
  double rate = cb__rep_json_key_num(s, "rate");
  if (!json_is_object(s) || !isfinite(rate)) {
    cb__rep_table_add(t, CB__REP_TONE_MUTED, "-");
    return;
  }
  cb__rep_table_add(t, 0, "%.1f%% (%.1f\xE2\x80\x93%.1f)", 100 * rate, 100 * cb__rep_json_key_num(s, "lo"),
                    100 * cb__rep_json_key_num(s, "hi"));
}

static void seconds_cell(cb__rep_table *t, double v) {
  if (isfinite(v)) cb__rep_table_add(t, 0, "%.3f s", v);
  else cb__rep_table_add(t, CB__REP_TONE_MUTED, "-");
}

static void path_table(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"path", "runs", "share", "e2e p50", "e2e p95", "e2e p99", "SLO attained", "success"};
  cb__rep_table_init_head(&t, "lrrrrrrr", head, 8);
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(doc, "paths"), i, row) {
    json_t *e = json_object_get(row, "e2e_s");
    const char *path = json_string_value(json_object_get(row, "path"));
    cb__rep_table_add(&t, 0, "%s", path ? path : "?");
    cb__rep_table_add(&t, 0, "%.0f", cb__rep_json_key_num(row, "runs"));
    share_cell(&t, json_object_get(row, "share"));
    seconds_cell(&t, cb__rep_json_key_num(e, "p50"));
    seconds_cell(&t, cb__rep_json_key_num(e, "p95"));
    seconds_cell(&t, cb__rep_json_key_num(e, "p99"));
    share_cell(&t, json_object_get(row, "slo_attainment"));
    share_cell(&t, json_object_get(row, "success"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* Measured success by number of calls beside the fitted p^calls. */
static void calls_table(cb__rep_doc *d, json_t *doc) {
  json_t *svc = json_object_get(doc, "success_vs_calls");
  double p = cb__rep_json_key_num(json_object_get(svc, "per_call_success"), "value");
  cb__rep_table t;
  const char *head[] = {"tool calls", "runs", "success", "fitted p^calls"};
  cb__rep_table_init_head(&t, "rrrr", head, 4);
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(svc, "by_calls"), i, row) {
    double calls = cb__rep_json_key_num(row, "calls");
    cb__rep_table_add(&t, 0, "%.0f", calls);
    cb__rep_table_add(&t, 0, "%.0f", cb__rep_json_key_num(row, "n"));
    share_cell(&t, row);
    if (isfinite(p) && calls > 0) cb__rep_table_add(&t, 0, "%.1f%%", 100 * pow(p, calls));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  json_t *pc = json_object_get(svc, "per_call_success");
  if (isfinite(p))
    cb__rep_doc_para(d, 0, "Per-call success p = %.4f (%.4f\xE2\x80\x93%.4f): success \xE2\x89\x88 p^calls, "
                     "the measured counterpart of calibrate expect's 0.95 per call "
                     "(calibrate expect --task-factor-from takes it).",
                     p, cb__rep_json_key_num(pc, "lo"), cb__rep_json_key_num(pc, "hi"));
}

static void errors_para(cb__rep_doc *d, json_t *doc) {
  json_t *te = json_object_get(doc, "tool_errors");
  json_t *with = json_object_get(te, "failure_given_error"), *none = json_object_get(te, "failure_given_none");
  double nw = cb__rep_json_key_num(with, "n"), nn = cb__rep_json_key_num(none, "n");
  if (!(nw > 0)) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No run saw a tool error.");
    return;
  }
  double fw = cb__rep_json_key_num(with, "rate"), fn = cb__rep_json_key_num(none, "rate");
  cb__rep_doc_para(d, fw > fn ? CB__REP_TONE_WARN : 0,
                   "Tool errors: %.0f runs saw at least one and %.1f%% of them failed the task "
                   "(%.1f\xE2\x80\x93%.1f); %.1f%% of the %.0f runs without one failed.",
                   nw, 100 * fw, 100 * cb__rep_json_key_num(with, "lo"),
                   100 * cb__rep_json_key_num(with, "hi"),
                   isfinite(fn) ? 100 * fn : 0, nn);
}

/* HTML: the path shares as bars (paths as categories, their names escaped by the
 * chart), and success by number of calls beside the fitted p^calls curve. */
static void charts(cb__rep_doc *d, json_t *doc) {
  cb__rep_chart paths;
  cb__rep_chart_init(&paths, "", "Path distribution");
  snprintf(paths.id, sizeof paths.id, "probe-agent-paths-%u", d->seq++);
  snprintf(paths.y.label, sizeof paths.y.label, "share of runs");
  paths.y.unit = CB__REP_UNIT_FRACTION;
  paths.y.from_zero = 1;
  cb__rep_series *bars = cb__rep_chart_series(&paths, CB__REP_BARS, 0, "share");
  bars->bar_w = 0.8;
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(doc, "paths"), i, row) {
    const char *name = json_string_value(json_object_get(row, "path"));
    cb__rep_chart_category(&paths, name ? name : "?");
    cb__rep_series_add(bars, (double)i - 0.4, cb__rep_json_key_num(json_object_get(row, "share"), "rate"));
  }
  cb__rep_chart calls;
  cb__rep_chart_init(&calls, "", "Success against tool calls");
  snprintf(calls.id, sizeof calls.id, "probe-agent-calls-%u", d->seq++);
  cb__rep_axis_count(&calls.x, "tool calls");
  calls.x.from_zero = 1;
  snprintf(calls.y.label, sizeof calls.y.label, "success");
  calls.y.unit = CB__REP_UNIT_FRACTION;
  calls.y.from_zero = 1;
  calls.y.max = 1;
  json_t *svc = json_object_get(doc, "success_vs_calls");
  double p = cb__rep_json_key_num(json_object_get(svc, "per_call_success"), "value");
  cb__rep_series *measured = cb__rep_chart_series(&calls, CB__REP_POINTS, 0, "measured");
  double max_calls = 0;
  json_array_foreach(json_object_get(svc, "by_calls"), i, row) {
    double c = cb__rep_json_key_num(row, "calls");
    cb__rep_series_add(measured, c, cb__rep_json_key_num(row, "rate"));
    if (c > max_calls) max_calls = c;
  }
  if (isfinite(p)) {
    cb__rep_series *fit = cb__rep_chart_series(&calls, CB__REP_LINE, 1, "fitted p^calls, p = %.3f", p);
    fit->dashed = 1;
    for (int c = 0; c <= (int)max_calls; c++) cb__rep_series_add(fit, c, pow(p, c));
  }
  cb__rep_doc_grid_begin(d);
  cb__rep_doc_chart(d, &paths);
  cb__rep_doc_chart(d, &calls);
  cb__rep_doc_grid_end(d);
  cb__rep_chart_free(&paths);
  cb__rep_chart_free(&calls);
}

void cb__rep_probe_agent(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)r;
  (void)run;
  json_t *slo = json_object_get(doc, "slo_e2e_s");
  cb__rep_doc_para(d, 0, "%.0f runs of the task, at most %.0f steps each; end-to-end latency is the "
                   "model's time plus the simulated tools'%s.",
                   cb__rep_json_key_num(doc, "runs"), cb__rep_json_key_num(doc, "max_steps"),
                   json_is_number(slo) ? "; SLO attainment against the task's e2e bound" : "");
  charts(d, doc);
  path_table(d, doc);
  calls_table(d, doc);
  errors_para(d, doc);
  json_t *ref = json_object_get(doc, "reference");
  if (json_is_object(ref))
    cb__rep_doc_para(d, cb__rep_json_key_num(ref, "p_value") < 0.05 ? CB__REP_TONE_WARN : 0,
                     "Against the expected paths: chi-square %.3f with %.0f degrees of freedom, "
                     "p = %.4g.", cb__rep_json_key_num(ref, "chi2"), cb__rep_json_key_num(ref, "df"),
                     cb__rep_json_key_num(ref, "p_value"));
}
