/*
 * sec_latency.c - latency distributions: a table of each run's statistics (the
 * "p99 with failures" column counts every failed request as slower than any success,
 * docs/results.md), the CDFs of TTFT, TPOT, ITL and E2E with every run and sweep
 * point overlaid (log time axis when the values span more than two decades; the SLO
 * bound marked), and a histogram per metric and run with its p50, p90 and p99.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MAX_OVERLAY 10

/* HTML always (the CDFs include sweep points); elsewhere the tables of plain runs. */
static int applies(const cb_report *r, cb__rep_fmt fmt) {
  return r->n_inputs && (fmt == CB__REP_FMT_HTML || cb__rep_has_kind(r, CB__REP_INPUT_RUN));
}

static const struct {
  int which;
  cb_metric metric;
  const char *name;
  const char *id;
} dists[] = {
    {CB__REP_TTFT, CB_METRIC_TTFT, "TTFT", "ttft"},
    {CB__REP_TPOT, CB_METRIC_TPOT, "TPOT", "tpot"},
    {CB__REP_ITL, CB_METRIC_ITL, "ITL", "itl"},
    {CB__REP_E2E, CB_METRIC_E2E, "E2E", "e2e"},
};

static void stats_table(const cb__rep_run *run, cb__rep_doc *d) {
  static const cb_metric rows[] = {CB_METRIC_TTFT, CB_METRIC_TPOT,      CB_METRIC_ITL,
                                   CB_METRIC_E2E,  CB_METRIC_E2E_SCHED, CB_METRIC_LAG};
  const char *head[] = {"metric", "count", "mean", "p50", "p90", "p95", "p99", "p99.9", "max",
                        "p99 with failures"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrrrrrrrr", head, sizeof head / sizeof head[0]);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const cb_dist *x = &run->all.metrics[rows[i]];
    const cb_dist *a = &run->all.metrics_adjusted[rows[i]];
    char c[32];
    cb__rep_table_add(&t, 0, "%s", cb__rep_metric_title(rows[i]));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_count(x->count, c, sizeof c));
    const double v[] = {x->mean, x->p50, x->p90, x->p95, x->p99, x->p999, x->max};
    for (size_t k = 0; k < 7; k++) cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(v[k] / 1e6, c, sizeof c));
    int adjusted = rows[i] == CB_METRIC_TTFT || rows[i] == CB_METRIC_TPOT || rows[i] == CB_METRIC_E2E ||
                   rows[i] == CB_METRIC_E2E_SCHED;
    if (!adjusted) cb__rep_table_add(&t, 0, "-");
    else if (isinf(a->p99)) cb__rep_table_add(&t, CB__REP_TONE_BAD, "failed");
    else cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(a->p99 / 1e6, c, sizeof c));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void cdf_chart(const cb_report *r, cb__rep_doc *d, size_t m) {
  cb__rep_ref refs[MAX_OVERLAY];
  size_t total = cb__rep_all_runs(r, refs, MAX_OVERLAY);
  size_t n = total < MAX_OVERLAY ? total : MAX_OVERLAY;
  char id[48], title[96];
  cb__rep_doc_chart_id(d, "cdf", id, sizeof id);
  snprintf(id + strlen(id), sizeof id - strlen(id), "-%s", dists[m].id);
  snprintf(title, sizeof title, "%s: cumulative distribution", dists[m].name);
  cb__rep_chart c;
  cb__rep_chart_init(&c, id, title);
  snprintf(c.x.label, sizeof c.x.label, "%s", dists[m].name);
  c.x.unit = CB__REP_UNIT_MS;
  cb__rep_axis_share(&c.y, dists[m].which == CB__REP_ITL ? "gaps at or below" : "requests at or below");
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < n; i++) {
    const cb__rep_values *v = &refs[i].run->dist[dists[m].which];
    char name[512];
    cb__rep_run_name(r, refs[i].in, refs[i].run, name, sizeof name);
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, (int)i % CB__REP_PALETTE, "%s", name);
    cb__rep_cdf_series(s, v);
    for (size_t k = 0; k < v->n; k++)
      if (v->v[k] > 0) {
        lo = fmin(lo, v->v[k]);
        break;
      }
    if (v->n) hi = fmax(hi, v->v[v->n - 1]);
  }
  c.x.log = isfinite(lo) && lo > 0 && hi / lo > 100;
  if (c.x.log)
    snprintf(c.note, sizeof c.note, "Time axis logarithmic: the values span %.0fx.", hi / lo);
  cb__rep_chart_mark(&c, 0, 0.99, CB__REP_TONE_NONE, "p99");
  cb__rep_chart_mark(&c, 0, 0.5, CB__REP_TONE_NONE, "p50");
  for (size_t i = 0; i < n; i++) {
    const cb_slo_result *slo = cb__rep_find_slo(&refs[i].run->all, dists[m].metric);
    if (slo) {
      char text[96];
      cb__rep_slo_text(&slo->slo, text, sizeof text);
      cb__rep_chart_mark(&c, 1, slo->slo.bound_ns / 1e6, CB__REP_TONE_BAD, "SLO %s", text);
      break;
    }
  }
  if (total > n) {
    size_t len = strlen(c.note);
    snprintf(c.note + len, sizeof c.note - len, "%sShowing the first %zu of %zu runs.", len ? " " : "",
             n, total);
  }
  cb__rep_doc_chart_end(d, &c, "no successful requests: nothing to plot");
}

static void histogram(const cb_report *r, const cb__rep_input *in, cb__rep_doc *d, size_t m) {
  const cb__rep_run *run = &in->runs[0];
  const cb__rep_values *v = &run->dist[dists[m].which];
  char id[48], title[600];
  cb__rep_doc_chart_id(d, "hist", id, sizeof id);
  snprintf(id + strlen(id), sizeof id - strlen(id), "-%s", dists[m].id);
  if (r->n_inputs > 1) snprintf(title, sizeof title, "%s histogram: %s", dists[m].name, in->path);
  else snprintf(title, sizeof title, "%s histogram", dists[m].name);
  cb__rep_chart c;
  cb__rep_chart_init(&c, id, title);
  snprintf(c.x.label, sizeof c.x.label, "%s", dists[m].name);
  c.x.unit = CB__REP_UNIT_MS;
  cb__rep_axis_count(&c.y, dists[m].which == CB__REP_ITL ? "gaps" : "requests");
  c.y.from_zero = 1;
  cb__rep_bins b;
  cb__rep_bins_compute(v, 32, &b);
  char width[32];
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_BARS, 0, "%s per %s bin",
                                           dists[m].which == CB__REP_ITL ? "gaps" : "requests",
                                           cb__rep_fmt_ms(b.step, width, sizeof width));
  s->bar_w = b.step;
  for (size_t k = 0; k < b.n_bins; k++) cb__rep_series_add(s, b.start + (double)k * b.step, b.counts[k]);
  if (v->n) {
    static const struct {
      double q;
      const char *name;
      cb__rep_tone tone;
    } qs[] = {{0.5, "p50", CB__REP_TONE_NONE}, {0.9, "p90", CB__REP_TONE_WARN}, {0.99, "p99", CB__REP_TONE_BAD}};
    for (size_t k = 0; k < 3; k++) {
      double x = cb__rep_values_quantile(v, qs[k].q);
      char val[32];
      cb__rep_chart_mark(&c, 1, x, qs[k].tone, "%s %s", qs[k].name, cb__rep_fmt_ms(x, val, sizeof val));
    }
  }
  if (b.overflow) {
    char edge[32];
    snprintf(c.note, sizeof c.note, "%zu values above %s (past the p99.5) are counted in the last bar.",
             b.overflow, cb__rep_fmt_ms(b.start + (double)b.n_bins * b.step, edge, sizeof edge));
  }
  cb__rep_doc_chart_end(d, &c, "no successful requests: nothing to plot");
  cb__rep_bins_free(&b);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  size_t runs = cb__rep_count_kind(r, CB__REP_INPUT_RUN);
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_RUN) continue;
    if (runs > 1) cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
    stats_table(&in->runs[0], d);
  }
  if (d->fmt != CB__REP_FMT_HTML) return;
  cb__rep_ref refs[1];
  size_t total = cb__rep_all_runs(r, refs, 0), with = 0;
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++) with += r->inputs[i].runs[k].all.succeeded > 0;
  if (!with) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED,
                     "No measured request succeeded in %s: there are no latency distributions to draw.",
                     total > 1 ? "any run" : "this run");
    return;
  }
  cb__rep_doc_heading(d, 3, NULL, "Cumulative distributions");
  cb__rep_doc_grid_begin(d);
  for (size_t m = 0; m < sizeof dists / sizeof dists[0]; m++) cdf_chart(r, d, m);
  cb__rep_doc_grid_end(d);
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_RUN) continue;
    cb__rep_doc_heading(d, 3, NULL, "Histograms%s%s", runs > 1 ? ": " : "", runs > 1 ? in->path : "");
    if (!in->runs[0].all.succeeded) {
      cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No measured request succeeded: no histogram to draw.");
      continue;
    }
    cb__rep_doc_grid_begin(d);
    for (size_t m = 0; m < sizeof dists / sizeof dists[0]; m++) histogram(r, in, d, m);
    cb__rep_doc_grid_end(d);
  }
}

const cb__rep_section cb__rep_sec_latency = {.id = "latency", .title = "Latency distributions",
                                             .applies = applies,
                                             .render = render};
