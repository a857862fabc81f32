/*
 * sec_sweep.c - a load sweep: the capacity at SLO (the highest load at which enough
 * requests met every SLO, with every lighter load meeting it too; computed by the run
 * and read from sweep.json), a table of the points, and the charts: p50/p99 TTFT and
 * TPOT against load with the SLO bound and the capacity marked, output tokens/s and
 * requests/s (with goodput) against load. Several sweeps share the charts, one colour
 * each. The load axis is the concurrency or the offered rate when every point has
 * that kind of load, else (auto sweeps mix them) the achieved rate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_has_kind(r, CB__REP_INPUT_SWEEP);
}

typedef enum { X_CONCURRENCY, X_RATE, X_ACHIEVED } xkind;

static xkind x_kind(const cb_report *r) {
  int closed = 0, open = 0;
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_SWEEP) continue;
    for (size_t k = 0; k < in->n_runs; k++) {
      if (in->load_closed[k]) closed++;
      else open++;
    }
  }
  return closed && open ? X_ACHIEVED : closed ? X_CONCURRENCY : X_RATE;
}

static double x_of(xkind xk, const cb__rep_input *in, size_t k) {
  return xk == X_ACHIEVED ? in->runs[k].all.achieved_rate : in->load[k];
}

static void x_axis(xkind xk, cb__rep_chart *c) {
  c->x.unit = CB__REP_UNIT_NONE;
  c->x.from_zero = 1;
  switch (xk) {
    case X_CONCURRENCY:
      snprintf(c->x.label, sizeof c->x.label, "concurrency");
      snprintf(c->x.unit_text, sizeof c->x.unit_text, "requests in flight");
      break;
    case X_RATE:
      snprintf(c->x.label, sizeof c->x.label, "offered rate");
      snprintf(c->x.unit_text, sizeof c->x.unit_text, "req/s");
      break;
    default:
      snprintf(c->x.label, sizeof c->x.label, "achieved rate");
      snprintf(c->x.unit_text, sizeof c->x.unit_text, "req/s");
  }
}

static void capacity_line(const cb__rep_input *in, cb__rep_doc *d) {
  const cb_summary *first = &in->runs[0].all;
  char pct[24];
  cb__rep_fmt_pct(in->slo_attainment, pct, sizeof pct);
  if (!first->n_slos) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No SLOs were given, so there is no capacity at SLO.");
  } else if (in->capacity >= 0) {
    const cb__rep_run *p = &in->runs[in->capacity];
    char req[48], tok[48];
    cb__rep_doc_para(d, CB__REP_TONE_GOOD,
                     "Capacity at SLO: %s (%s, %s): the highest load at which at least %s of "
                     "requests met every SLO, with every lighter load meeting it too.",
                     p->label, cb__rep_fmt_rate(p->all.request_throughput, "req/s", req, sizeof req),
                     cb__rep_fmt_rate(p->all.output_throughput, "tokens/s", tok, sizeof tok), pct);
  } else {
    cb__rep_doc_para(d, CB__REP_TONE_BAD,
                     "Capacity at SLO: none. Not even the lightest load kept %s of requests within "
                     "every SLO.",
                     pct);
  }
}

static void points_table(const cb__rep_input *in, cb__rep_doc *d) {
  const char *head[] = {"load",     "achieved rate",  "throughput", "output tokens", "goodput", "TTFT p50",
                        "TTFT p99", "TPOT p50", "TPOT p99",   "E2E p99",       "failed",  "met every SLO"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrrrrrrrrrr", head, sizeof head / sizeof head[0]);
  for (size_t k = 0; k < in->n_runs; k++) {
    const cb_summary *s = &in->runs[k].all;
    char b[12][48];
    int cap = (long)k == in->capacity;
    cb__rep_table_add(&t, cap ? CB__REP_TONE_GOOD : 0, "%s%s", in->runs[k].label,
                      cap ? " (capacity)" : "");
    cb__rep_fmt_rate(s->achieved_rate, "req/s", b[0], 48);
    cb__rep_fmt_rate(s->request_throughput, "req/s", b[1], 48);
    cb__rep_fmt_rate(s->output_throughput, "tokens/s", b[2], 48);
    if (s->n_slos) cb__rep_fmt_rate(s->goodput, "req/s", b[3], 48);
    else snprintf(b[3], 48, "-");
    cb__rep_fmt_ms(s->metrics[CB_METRIC_TTFT].p50 / 1e6, b[4], 48);
    cb__rep_fmt_ms(s->metrics[CB_METRIC_TTFT].p99 / 1e6, b[5], 48);
    cb__rep_fmt_ms(s->metrics[CB_METRIC_TPOT].p50 / 1e6, b[6], 48);
    cb__rep_fmt_ms(s->metrics[CB_METRIC_TPOT].p99 / 1e6, b[7], 48);
    cb__rep_fmt_ms(s->metrics[CB_METRIC_E2E].p99 / 1e6, b[8], 48);
    cb__rep_fmt_count(s->failed, b[9], 48);
    if (s->n_slos) cb__rep_fmt_pct(s->joint_attainment, b[10], 48);
    else snprintf(b[10], 48, "-");
    for (size_t c = 0; c < 11; c++) {
      cb__rep_tone tone = 0;
      if (c == 9 && s->failed) tone = CB__REP_TONE_BAD;
      if (c == 10 && s->n_slos)
        tone = s->joint_attainment >= in->slo_attainment ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD;
      cb__rep_table_add(&t, tone, "%s", b[c]);
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* TTFT or TPOT against load: p50 dashed, p99 solid, one colour per sweep. */
static void latency_chart(const cb_report *r, cb__rep_doc *d, xkind xk, cb_metric m) {
  char title[96];
  snprintf(title, sizeof title, "%s against load (p50 and p99)", cb__rep_metric_title(m));
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, m == CB_METRIC_TTFT ? "sweep-ttft" : "sweep-tpot", title);
  x_axis(xk, &c);
  cb__rep_axis_latency(&c.y, cb__rep_metric_title(m));
  int color = 0, sweeps = 0;
  for (size_t i = 0; i < r->n_inputs; i++) sweeps += r->inputs[i].kind == CB__REP_INPUT_SWEEP;
  int slo_marked = 0;
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_SWEEP) continue;
    const char *pre = sweeps > 1 ? in->path : "";
    const char *sep = sweeps > 1 ? ": " : "";
    cb__rep_series *p99 = cb__rep_chart_series(&c, CB__REP_LINE, color % CB__REP_PALETTE, "%s%sp99", pre, sep);
    p99->markers = 1;
    for (size_t k = 0; k < in->n_runs; k++)
      cb__rep_series_add(p99, x_of(xk, in, k), in->runs[k].all.metrics[m].p99 / 1e6);
    cb__rep_series *p50 = cb__rep_chart_series(&c, CB__REP_LINE, color % CB__REP_PALETTE, "%s%sp50", pre, sep);
    p50->markers = 1;
    p50->dashed = 1;
    for (size_t k = 0; k < in->n_runs; k++)
      cb__rep_series_add(p50, x_of(xk, in, k), in->runs[k].all.metrics[m].p50 / 1e6);
    const cb_slo_result *slo = cb__rep_find_slo(&in->runs[0].all, m);
    if (slo && !slo_marked) {
      char text[96];
      cb__rep_slo_text(&slo->slo, text, sizeof text);
      cb__rep_chart_mark(&c, 0, slo->slo.bound_ns / 1e6, CB__REP_TONE_BAD, "SLO %s", text);
      slo_marked = 1;
    }
    if (in->capacity >= 0)
      cb__rep_chart_mark(&c, 1, x_of(xk, in, (size_t)in->capacity), CB__REP_TONE_GOOD,
                         "capacity at SLO%s%s", sweeps > 1 ? " " : "",
                         sweeps > 1 ? in->runs[in->capacity].label : "");
    color++;
  }
  if (!cb__rep_chart_points(&c)) snprintf(c.empty, sizeof c.empty, "no successful requests at any load");
  cb__rep_doc_chart_end(d, &c, NULL);
}

/* Throughput against load: output tokens/s, or requests/s with goodput. */
static void throughput_chart(const cb_report *r, cb__rep_doc *d, xkind xk, int tokens) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, tokens ? "sweep-tokens" : "sweep-requests",
                     tokens ? (xk == X_CONCURRENCY ? "Output throughput against concurrency"
                                                   : "Output throughput against load")
                            : "Requests completed and goodput against load");
  x_axis(xk, &c);
  snprintf(c.y.label, sizeof c.y.label, "%s", tokens ? "output" : "completed");
  snprintf(c.y.unit_text, sizeof c.y.unit_text, "%s", tokens ? "tokens/s" : "req/s");
  c.y.from_zero = 1;
  int color = 0, sweeps = 0;
  for (size_t i = 0; i < r->n_inputs; i++) sweeps += r->inputs[i].kind == CB__REP_INPUT_SWEEP;
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_SWEEP) continue;
    const char *pre = sweeps > 1 ? in->path : "";
    const char *sep = sweeps > 1 ? ": " : "";
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_LINE, color % CB__REP_PALETTE, "%s%s%s", pre,
                                             sep, tokens ? "output tokens/s" : "requests/s");
    s->markers = 1;
    for (size_t k = 0; k < in->n_runs; k++)
      cb__rep_series_add(s, x_of(xk, in, k),
                         tokens ? in->runs[k].all.output_throughput : in->runs[k].all.request_throughput);
    if (!tokens && in->runs[0].all.n_slos) {
      cb__rep_series *g = cb__rep_chart_series(&c, CB__REP_LINE, color % CB__REP_PALETTE, "%s%sgoodput",
                                               pre, sep);
      g->markers = 1;
      g->dashed = 1;
      for (size_t k = 0; k < in->n_runs; k++)
        cb__rep_series_add(g, x_of(xk, in, k), in->runs[k].all.goodput);
    }
    if (in->capacity >= 0)
      cb__rep_chart_mark(&c, 1, x_of(xk, in, (size_t)in->capacity), CB__REP_TONE_GOOD,
                         "capacity at SLO");
    color++;
  }
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  xkind xk = x_kind(r);
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_SWEEP) continue;
    cb__rep_doc_heading(d, 3, NULL, "%s (%s sweep)", in->path, in->sweep_kind);
    capacity_line(in, d);
    points_table(in, d);
  }
  cb__rep_doc_grid_begin(d);
  latency_chart(r, d, xk, CB_METRIC_TTFT);
  latency_chart(r, d, xk, CB_METRIC_TPOT);
  throughput_chart(r, d, xk, 1);
  throughput_chart(r, d, xk, 0);
  cb__rep_doc_grid_end(d);
}

const cb__rep_section cb__rep_sec_sweep = {.id = "sweep", .title = "Sweep: load against latency",
                                           .applies = applies,
                                           .render = render};
