/*
 * sec_ramp.c - a ramped run (records with target_rate, `run --ramp-up`): where each
 * SLO stopped holding as the offered rate rose (the summary's break rate: the lower
 * edge of the lowest offered-rate bin in which the SLO is violated, docs/results.md),
 * a table of the bins, and the charts: TTFT and E2E (p50, p99 per bin) against the
 * offered rate with the SLO bound and the break rate marked, and each SLO's attainment
 * per bin against its target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define MAX_RUNS 8

static int ramped(const cb__rep_run *run) { return run->all.ramp.n_bins > 0; }

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  cb__rep_ref refs[MAX_RUNS];
  size_t n = cb__rep_all_runs(r, refs, MAX_RUNS);
  for (size_t i = 0; i < n && i < MAX_RUNS; i++)
    if (ramped(refs[i].run)) return 1;
  return 0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* p50 and p99 (numpy "linear", as the summary) of a metric over each bin's measured
 * successes; NAN where a bin has none. */
static void bin_quantiles(const cb__rep_run *run, double (*value_ms)(const cb_record *),
                          double p50[CB_RAMP_BINS], double p99[CB_RAMP_BINS]) {
  const cb_ramp_bins *b = &run->all.ramp;
  const cb_record_set *set = &run->records;
  double *v = malloc((set->count ? set->count : 1) * sizeof *v);
  for (size_t bin = 0; bin < b->n_bins; bin++) {
    cb__rep_values vals = {.v = v};
    for (size_t i = 0; i < set->count; i++) {
      const cb_record *r = &set->items[i];
      if (!cb__rep_record_measured_ok(r) || !r->has_target_rate ||
          cb_ramp_bin_of(b, r->target_rate) != (int)bin || cb_record_times_invalid(r))
        continue;
      double x = value_ms(r);
      if (!isnan(x)) v[vals.n++] = x;
    }
    qsort(v, vals.n, sizeof *v, by_value);
    p50[bin] = cb__rep_values_quantile(&vals, 0.5);
    p99[bin] = cb__rep_values_quantile(&vals, 0.99);
  }
  free(v);
}

static double bin_mid(const cb_ramp_bins *b, size_t bin) {
  return b->lo + ((double)bin + 0.5) * b->width;
}

static void break_lines(const cb__rep_run *run, cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  const cb_ramp_bins *b = &s->ramp;
  char top[48];
  cb__rep_fmt_rate(b->lo + (double)b->n_bins * b->width, "req/s", top, sizeof top);
  if (!s->n_slos)
    cb__rep_doc_para(d, CB__REP_TONE_MUTED,
                     "No SLOs were given, so no rate at which one stopped holding (the offered "
                     "rate went up to %s).", top);
  for (size_t k = 0; k < s->n_slos; k++) {
    const cb_slo_result *res = &s->slos[k];
    char slo[96], at[48], hi[48], met[24];
    cb__rep_slo_text(&res->slo, slo, sizeof slo);
    if (res->break_bin < 0) {
      cb__rep_doc_para(d, CB__REP_TONE_GOOD, "%s was not violated at any offered rate up to %s.",
                       slo, top);
      continue;
    }
    size_t bin = (size_t)res->break_bin;
    cb__rep_fmt_rate(res->break_rate, "req/s", at, sizeof at);
    cb__rep_fmt_rate(res->break_rate + b->width, "req/s", hi, sizeof hi);
    cb__rep_fmt_pct((double)b->met[k][bin] / (double)b->count[bin], met, sizeof met);
    cb__rep_doc_para(d, CB__REP_TONE_BAD,
                     "%s stopped holding at %s offered: violated in the bin %s to %s (%s of "
                     "%zu requests met it).", slo, at, at, hi, met, b->count[bin]);
  }
}

static void bins_table(const cb__rep_run *run, const double *ttft50, const double *ttft99,
                       const double *e2e99, cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  const cb_ramp_bins *b = &s->ramp;
  const char *head[5 + CB_MAX_SLOS] = {"offered rate", "requests", "TTFT p50", "TTFT p99", "E2E p99"};
  char names[CB_MAX_SLOS][96];
  char align[6 + CB_MAX_SLOS] = "lrrrr";
  for (size_t k = 0; k < s->n_slos; k++) {
    cb__rep_slo_text(&s->slos[k].slo, names[k], sizeof names[k]);
    head[5 + k] = names[k];
    strcat(align, "r");
  }
  cb__rep_table t;
  cb__rep_table_init_head(&t, align, head, 5 + s->n_slos);
  for (size_t bin = 0; bin < b->n_bins; bin++) {
    char lo[48], hi[48], c[48];
    cb__rep_fmt_si(b->lo + (double)bin * b->width, lo, sizeof lo);
    cb__rep_fmt_rate(b->lo + (double)(bin + 1) * b->width, "req/s", hi, sizeof hi);
    cb__rep_table_add(&t, 0, "%s - %s", lo, hi);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_count(b->count[bin], c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(ttft50[bin], c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(ttft99[bin], c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(e2e99[bin], c, sizeof c));
    for (size_t k = 0; k < s->n_slos; k++) {
      double a = b->count[bin] ? (double)b->met[k][bin] / (double)b->count[bin] : NAN;
      cb__rep_tone tone = s->slos[k].break_bin >= 0 && bin >= (size_t)s->slos[k].break_bin
                              ? CB__REP_TONE_BAD : 0;
      cb__rep_table_add(&t, tone, "%s", cb__rep_fmt_pct(a, c, sizeof c));
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void x_axis(cb__rep_chart *c) {
  snprintf(c->x.label, sizeof c->x.label, "offered rate");
  snprintf(c->x.unit_text, sizeof c->x.unit_text, "req/s");
  c->x.from_zero = 1;
}

/* TTFT or E2E against the offered rate, the SLO on it and its break rate marked. */
static void latency_chart(const cb__rep_run *run, cb__rep_doc *d, cb_metric m, const double *p50,
                          const double *p99) {
  const cb_ramp_bins *b = &run->all.ramp;
  char title[96];
  snprintf(title, sizeof title, "%s against offered rate (p50 and p99 per bin)",
           cb__rep_metric_title(m));
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, m == CB_METRIC_TTFT ? "ramp-ttft" : "ramp-e2e", title);
  x_axis(&c);
  cb__rep_axis_latency(&c.y, cb__rep_metric_title(m));
  cb__rep_series *s99 = cb__rep_chart_series(&c, CB__REP_LINE, 0, "p99");
  s99->markers = 1;
  for (size_t bin = 0; bin < b->n_bins; bin++) cb__rep_series_add(s99, bin_mid(b, bin), p99[bin]);
  cb__rep_series *s50 = cb__rep_chart_series(&c, CB__REP_LINE, 0, "p50");
  s50->markers = 1;
  s50->dashed = 1;
  for (size_t bin = 0; bin < b->n_bins; bin++) cb__rep_series_add(s50, bin_mid(b, bin), p50[bin]);
  const cb_slo_result *slo = cb__rep_find_slo(&run->all, m);
  if (slo) {
    char text[96];
    cb__rep_slo_text(&slo->slo, text, sizeof text);
    cb__rep_chart_mark(&c, 0, slo->slo.bound_ns / 1e6, CB__REP_TONE_BAD, "SLO %s", text);
    if (slo->break_bin >= 0)
      cb__rep_chart_mark(&c, 1, slo->break_rate, CB__REP_TONE_BAD, "stopped holding");
  }
  cb__rep_doc_chart_end(d, &c, "no successful requests at any offered rate");
}

/* Each SLO's attainment per bin, its target (the percentile) as a line. */
static void attainment_chart(const cb__rep_run *run, cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  const cb_ramp_bins *b = &s->ramp;
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "ramp-attainment", "SLO attainment against offered rate");
  x_axis(&c);
  cb__rep_axis_share(&c.y, "met the SLO");
  for (size_t k = 0; k < s->n_slos; k++) {
    char text[96];
    cb__rep_slo_text(&s->slos[k].slo, text, sizeof text);
    cb__rep_series *ser =
        cb__rep_chart_series(&c, CB__REP_LINE, (int)k % CB__REP_PALETTE, "%s", text);
    ser->markers = 1;
    for (size_t bin = 0; bin < b->n_bins; bin++)
      if (b->count[bin])
        cb__rep_series_add(ser, bin_mid(b, bin), (double)b->met[k][bin] / (double)b->count[bin]);
    if (!k || s->slos[k].slo.percentile != s->slos[k - 1].slo.percentile)
      cb__rep_chart_mark(&c, 0, s->slos[k].slo.percentile / 100, CB__REP_TONE_MUTED, "target p%g",
                         s->slos[k].slo.percentile);
  }
  cb__rep_doc_chart_end(d, &c, "no SLOs given");
}

static void render(const cb_report *r, cb__rep_doc *d) {
  cb__rep_ref refs[MAX_RUNS];
  size_t n = cb__rep_all_runs(r, refs, MAX_RUNS);
  for (size_t i = 0; i < n && i < MAX_RUNS; i++) {
    const cb__rep_run *run = refs[i].run;
    if (!ramped(run)) continue;
    char name[256];
    cb__rep_run_name(r, refs[i].in, run, name, sizeof name);
    cb__rep_doc_heading(d, 3, NULL, "%s", name);
    double ttft50[CB_RAMP_BINS], ttft99[CB_RAMP_BINS], e2e50[CB_RAMP_BINS], e2e99[CB_RAMP_BINS];
    bin_quantiles(run, cb__rep_ttft_ms, ttft50, ttft99);
    bin_quantiles(run, cb__rep_e2e_ms, e2e50, e2e99);
    break_lines(run, d);
    bins_table(run, ttft50, ttft99, e2e99, d);
    cb__rep_doc_grid_begin(d);
    latency_chart(run, d, CB_METRIC_TTFT, ttft50, ttft99);
    latency_chart(run, d, CB_METRIC_E2E, e2e50, e2e99);
    if (run->all.n_slos) attainment_chart(run, d);
    cb__rep_doc_grid_end(d);
  }
}

const cb__rep_section cb__rep_sec_ramp = {.id = "ramp", .title = "Ramp: latency against offered rate",
                                          .applies = applies, .render = render};
