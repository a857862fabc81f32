/*
 * sec_history.c - `calibench history --format json` (docs/gate.md): a table of the
 * stored runs, oldest first, with their tags and one column per metric, and per
 * metric Tukey's fences over the runs (k = 1.5, as the gate's adaptive rules use;
 * from 5 runs on) with the runs outside them. HTML charts each metric as a series
 * over the runs, labelled by commit (else version, else run id), the fences marked
 * and the runs outside them drawn apart.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"
#include "calibench/store.h"
#include "report_internal.h"

#define MAX_METRICS 16
#define FENCE_K 1.5
#define FENCE_MIN_RUNS 5

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_has_file(r, CB__REP_FILE_HISTORY, CB__REP_FILE_HISTORY);
}

/* One metric over the runs: values (NAN where a run lacks it) and its fences. */
typedef struct metric {
  const char *name, *unit;
  int better;                 /* cb_store_better, from the registry's catalog */
  double *v;                  /* owned, one per run */
  int fenced;
  cb_stats_fences fences;
} metric;

static void metric_load(const json_t *runs, const json_t *m, metric *out) {
  memset(out, 0, sizeof *out);
  out->name = cb__rep_json_str(m, "name") ? cb__rep_json_str(m, "name") : "?";
  out->unit = cb__rep_json_str(m, "unit") ? cb__rep_json_str(m, "unit") : "";
  const cb_store_metric *known = cb_store_metric_find(out->name);
  out->better = known ? (int)known->better : (int)CB_BETTER_NONE;
  size_t n = json_array_size(runs), finite = 0;
  out->v = cb_calloc(n ? n : 1, sizeof *out->v);
  double *scratch = cb_calloc(n ? n : 1, sizeof *scratch), *vals = cb_calloc(n ? n : 1, sizeof *vals);
  for (size_t k = 0; k < n; k++) {
    const json_t *v = json_object_get(json_object_get(json_array_get(runs, k), "values"), out->name);
    out->v[k] = json_is_number(v) ? json_number_value(v) : NAN;
    if (isfinite(out->v[k])) vals[finite++] = out->v[k];
  }
  out->fenced = finite >= FENCE_MIN_RUNS &&
                cb_stats_tukey_fences(vals, finite, FENCE_K, scratch, &out->fences, NULL) == CB_OK;
  cb_free(scratch);
  cb_free(vals);
}

/* -1 below the low fence, 1 above the high one, 0 inside (or no fences). */
static int outside(const metric *m, double v) {
  if (!m->fenced || !isfinite(v)) return 0;
  return v < m->fences.low ? -1 : v > m->fences.high ? 1 : 0;
}

static cb__rep_tone outside_tone(const metric *m, int side) {
  if (!side) return CB__REP_TONE_NONE;
  if (m->better == CB_BETTER_NONE) return CB__REP_TONE_WARN;
  int worse = m->better == CB_BETTER_LOWER ? side > 0 : side < 0;
  return worse ? CB__REP_TONE_BAD : CB__REP_TONE_GOOD;
}

/* What a run is called on the chart: its commit, else its version, else its id. */
static const char *run_label(const json_t *run) {
  const char *s = cb__rep_json_str(run, "tags.commit");
  if (!s || !s[0]) s = cb__rep_json_str(run, "tags.version");
  if (!s || !s[0]) s = cb__rep_json_str(run, "run_id");
  return s ? s : "?";
}

static void runs_table(const json_t *runs, const metric *ms, size_t nm, cb__rep_doc *d) {
  char align[MAX_METRICS + 5] = "rlll";
  for (size_t k = 0; k < nm; k++) strcat(align, "r");
  cb__rep_table t;
  cb__rep_table_init(&t, align);
  cb__rep_table_add(&t, 0, "#");
  cb__rep_table_add(&t, 0, "run");
  cb__rep_table_add(&t, 0, "start (UTC)");
  cb__rep_table_add(&t, 0, "tags");
  for (size_t k = 0; k < nm; k++) cb__rep_table_add(&t, 0, "%s", ms[k].name);
  size_t i;
  const json_t *run;
  json_array_foreach(runs, i, run) {
    cb__rep_table_add(&t, 0, "%zu", i + 1);
    const char *id = cb__rep_json_str(run, "run_id"), *start = cb__rep_json_str(run, "start_utc");
    cb__rep_table_add(&t, 0, "%s", id ? id : "-");
    cb__rep_table_add(&t, 0, "%s", start && start[0] ? start : "-");
    cb_buf tags;
    cb_buf_init(&tags, 0);
    const char *key;
    const json_t *val;
    json_object_foreach(json_object_get(run, "tags"), key, val)
      if (json_is_string(val)) cb_buf_appendf(&tags, "%s%s=%s", tags.len ? ", " : "", key, json_string_value(val));
    cb__rep_table_add(&t, 0, "%s", tags.data ? tags.data : "");
    cb_buf_free(&tags);
    for (size_t k = 0; k < nm; k++) {
      char b[48];
      int side = outside(&ms[k], ms[k].v[i]);
      cb__rep_table_add(&t, outside_tone(&ms[k], side), "%s%s", cb__rep_fmt_unit(ms[k].v[i], ms[k].unit, b, sizeof b),
                        side > 0 ? " (above)" : side < 0 ? " (below)" : "");
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void fences_para(const json_t *runs, const metric *m, cb__rep_doc *d) {
  if (!m->fenced) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "%s: fewer than %d runs with a value, so no fences.", m->name,
                     FENCE_MIN_RUNS);
    return;
  }
  char q1[48], q3[48], lo[48], hi[48];
  cb_buf out;
  cb_buf_init(&out, 0);
  for (size_t k = 0; k < json_array_size(runs); k++) {
    int side = outside(m, m->v[k]);
    if (side)
      cb_buf_appendf(&out, "%s#%zu %s (%s)", out.len ? ", " : "", k + 1, run_label(json_array_get(runs, k)),
                     side > 0 ? "above" : "below");
  }
  cb__rep_doc_para(d, out.len ? CB__REP_TONE_WARN : CB__REP_TONE_NONE,
                   "%s: Tukey's fences over %zu runs (k = %.1f): Q1 %s, Q3 %s, fences [%s, %s]. %s%s.",
                   m->name, m->fences.n, FENCE_K, cb__rep_fmt_unit(m->fences.q1, m->unit, q1, sizeof q1),
                   cb__rep_fmt_unit(m->fences.q3, m->unit, q3, sizeof q3),
                   cb__rep_fmt_unit(m->fences.low, m->unit, lo, sizeof lo),
                   cb__rep_fmt_unit(m->fences.high, m->unit, hi, sizeof hi),
                   out.len ? "Outside: " : "No run is outside them", out.len ? out.data : "");
  cb_buf_free(&out);
}

static void chart(const json_t *runs, const metric *m, cb__rep_doc *d) {
  char title[160], v[48];
  snprintf(title, sizeof title, "%s over the stored runs, oldest first", m->name);
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "history", title);
  snprintf(c.x.label, sizeof c.x.label, "run (commit, else version, else id)");
  snprintf(c.y.label, sizeof c.y.label, "%s", m->name);
  c.y.unit = !strcmp(m->unit, "ms") ? CB__REP_UNIT_MS
             : !strcmp(m->unit, "fraction") ? CB__REP_UNIT_FRACTION
                                            : CB__REP_UNIT_NONE;
  if (c.y.unit == CB__REP_UNIT_NONE && strcmp(m->unit, "count")) snprintf(c.y.unit_text, sizeof c.y.unit_text, "%s", m->unit);
  size_t n = json_array_size(runs);
  for (size_t k = 0; k < n; k++) cb__rep_chart_category(&c, run_label(json_array_get(runs, k)));
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_LINE, 0, "%s", m->name);
  s->markers = 1;
  for (size_t k = 0; k < n; k++) cb__rep_series_add(s, (double)k, m->v[k]);
  if (m->fenced) {
    cb__rep_series *o = NULL;
    for (size_t k = 0; k < n; k++) {
      if (!outside(m, m->v[k])) continue;
      if (!o) o = cb__rep_chart_series(&c, CB__REP_POINTS, CB__REP_COLOR_BAD, "outside the fences");
      cb__rep_series_add(o, (double)k, m->v[k]);
    }
    cb__rep_chart_mark(&c, 0, m->fences.high, CB__REP_TONE_WARN, "Q3 + %.1f IQR = %s", FENCE_K,
                       cb__rep_fmt_unit(m->fences.high, m->unit, v, sizeof v));
    if (m->fences.low > 0)
      cb__rep_chart_mark(&c, 0, m->fences.low, CB__REP_TONE_WARN, "Q1 - %.1f IQR = %s", FENCE_K,
                         cb__rep_fmt_unit(m->fences.low, m->unit, v, sizeof v));
  }
  if (!cb__rep_chart_points(&c)) snprintf(c.empty, sizeof c.empty, "no run has a value of %s", m->name);
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void render_one(const cb__rep_file *f, cb__rep_doc *d) {
  const char *cls = cb__rep_json_str(f->root, "class");
  cb__rep_doc_heading(d, 3, NULL, "%s%s%s%s", f->path, cls && cls[0] ? " (class " : "",
                      cls && cls[0] ? cls : "", cls && cls[0] ? ")" : "");
  const json_t *runs = json_object_get(f->root, "runs"), *mj = json_object_get(f->root, "metrics");
  if (!json_array_size(runs)) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No stored run matched.");
    return;
  }
  size_t nm = json_array_size(mj) < MAX_METRICS ? json_array_size(mj) : MAX_METRICS;
  metric ms[MAX_METRICS];
  for (size_t k = 0; k < nm; k++) metric_load(runs, json_array_get(mj, k), &ms[k]);
  runs_table(runs, ms, nm, d);
  for (size_t k = 0; k < nm; k++) fences_para(runs, &ms[k], d);
  cb__rep_doc_grid_begin(d);
  for (size_t k = 0; k < nm; k++) chart(runs, &ms[k], d);
  cb__rep_doc_grid_end(d);
  for (size_t k = 0; k < nm; k++) cb_free(ms[k].v);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_files; i++)
    if (r->files[i].kind == CB__REP_FILE_HISTORY) render_one(&r->files[i], d);
}

const cb__rep_section cb__rep_sec_history = {
    .id = "history", .title = "History", .applies = applies, .render = render};
