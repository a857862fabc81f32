/*
 * sec_timeline.c - what happened over the run (HTML only): requests in flight (the
 * client's count, with the server's running and waiting gauges from
 * server_metrics.jsonl when it was scraped), output tokens per second, the TTFT of
 * every request as a scatter (failures as crosses at their time to the error), and
 * the server's KV-cache usage. Each chart shades the warm-up and the measured window
 * (docs/results.md: first measured send to last measured send), so the drain tail
 * after it is visibly outside the statistics. Time is seconds since the run origin.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "report_internal.h"

#define MAX_STEP_EVENTS 6000
#define STEP_BINS 600

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  return fmt == CB__REP_FMT_HTML && cb__rep_has_kind(r, CB__REP_INPUT_RUN);
}

static double sec(uint64_t ns) { return (double)ns / 1e9; }

static void shade(const cb__rep_run *run, cb__rep_chart *c) {
  uint64_t warm_from = UINT64_MAX;
  for (size_t i = 0; i < run->records.count; i++)
    if (run->records.items[i].warmup && run->records.items[i].sent_ns < warm_from)
      warm_from = run->records.items[i].sent_ns;
  const cb_summary *s = &run->all;
  if (warm_from != UINT64_MAX && s->measured)
    cb__rep_chart_band(c, sec(warm_from), sec(s->window_start_ns), CB__REP_TONE_WARN, "warm-up");
  if (s->measured)
    cb__rep_chart_band(c, sec(s->window_start_ns), sec(s->window_end_ns), CB__REP_TONE_GOOD,
                       "measured window");
}

/* A chart over the run's time: seconds since start across, y_label up from
   zero, the warm-up and the measured window shaded. */
static void time_chart(const cb__rep_run *run, cb__rep_doc *d, cb__rep_chart *c, const char *prefix,
                       const char *title, const char *y_label) {
  cb__rep_doc_chart_begin(d, c, prefix, title);
  snprintf(c->x.label, sizeof c->x.label, "time since start");
  c->x.unit = CB__REP_UNIT_S;
  c->x.from_zero = 1;
  snprintf(c->y.label, sizeof c->y.label, "%s", y_label);
  c->y.from_zero = 1;
  shade(run, c);
}

/* ---- requests in flight --------------------------------------------------------------- */

typedef struct event {
  uint64_t t;
  int delta;
} event;

static int cmp_event(const void *a, const void *b) {
  const event *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->delta - y->delta; /* ends before starts at the same instant */
}

static void in_flight(const cb__rep_run *run, cb__rep_doc *d) {
  cb__rep_chart c;
  time_chart(run, d, &c, "inflight", "Requests in flight", "requests");
  c.y.integer = 1;
  size_t n = run->records.count * 2;
  event *ev = cb_calloc(n ? n : 1, sizeof *ev);
  for (size_t i = 0; i < run->records.count; i++) {
    const cb_record *r = &run->records.items[i];
    ev[2 * i] = (event){r->sent_ns, +1};
    ev[2 * i + 1] = (event){r->end_ns >= r->sent_ns ? r->end_ns : r->sent_ns, -1};
  }
  qsort(ev, n, sizeof *ev, cmp_event);
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, 0, "in flight (client)");
  if (n) {
    long count = 0;
    if (n <= MAX_STEP_EVENTS) {
      cb__rep_series_add(s, 0, 0);
      for (size_t i = 0; i < n; i++) {
        count += ev[i].delta;
        if (i + 1 < n && ev[i + 1].t == ev[i].t) continue;
        cb__rep_series_add(s, sec(ev[i].t), (double)count);
      }
    } else {
      /* the most in flight during each of STEP_BINS equal bins */
      double t1 = sec(ev[n - 1].t), bw = t1 / STEP_BINS;
      double *peak = cb_calloc(STEP_BINS, sizeof *peak);
      for (size_t i = 0; i < n; i++) {
        count += ev[i].delta;
        size_t b = bw > 0 ? (size_t)(sec(ev[i].t) / bw) : 0;
        if (b >= STEP_BINS) b = STEP_BINS - 1;
        if ((double)count > peak[b]) peak[b] = (double)count;
      }
      for (size_t b = 0; b < STEP_BINS; b++) cb__rep_series_add(s, (double)b * bw, peak[b]);
      cb_free(peak);
      snprintf(c.note, sizeof c.note, "The most in flight during each %.3g s.", bw);
    }
  }
  cb_free(ev);
  if (run->n_gauges) {
    cb__rep_series *g = cb__rep_chart_series(&c, CB__REP_LINE, 1, "running (server)");
    cb__rep_series *w = cb__rep_chart_series(&c, CB__REP_LINE, 3, "waiting (server)");
    w->dashed = 1;
    for (size_t i = 0; i < run->n_gauges; i++) {
      cb__rep_series_add(g, run->gauge_t[i], run->gauge_running[i]);
      cb__rep_series_add(w, run->gauge_t[i], run->gauge_waiting[i]);
    }
  }
  cb__rep_doc_chart_end(d, &c, "no requests");
}

/* ---- output tokens per second ---------------------------------------------------------- */

static void tokens(const cb__rep_run *run, cb__rep_doc *d) {
  cb__rep_chart c;
  time_chart(run, d, &c, "tokens", "Output tokens per second", "output");
  snprintf(c.y.unit_text, sizeof c.y.unit_text, "tokens/s");
  uint64_t end = 0;
  for (size_t i = 0; i < run->records.count; i++)
    if (run->records.items[i].end_ns > end) end = run->records.items[i].end_ns;
  double t1 = sec(end);
  double bw = cb__rep_nice((t1 > 0 ? t1 : 1) / 60, 1); /* about 60 bins */
  size_t nb = (size_t)ceil(t1 / bw) + 1;
  if (nb > 2000) nb = 2000;
  double *tok = cb_calloc(nb, sizeof *tok);
  double total = 0;
  /* The set's fine bins (a run's records keep no chunk times), each counted in the
   * chart's bin of its start: at most CB_TOKEN_BINS_MAX of them over the run, so a
   * chart bin's edge is off by at most one fine bin (1/1000 of the run at most). */
  cb_token_bins fine;
  cb_record_set_token_bins(&run->records, &fine);
  for (size_t j = 0; j < fine.n; j++) {
    size_t b = (size_t)(sec((uint64_t)j * fine.width_ns) / bw);
    tok[b < nb ? b : nb - 1] += fine.tokens[j];
    total += fine.tokens[j];
  }
  cb_token_bins_free(&fine);
  if (total > 0) {
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, 2, "output tokens/s (%.3g s bins)", bw);
    for (size_t b = 0; b < nb; b++) cb__rep_series_add(s, (double)b * bw, tok[b] / bw);
    cb__rep_series_add(s, (double)nb * bw, tok[nb - 1] / bw);
  }
  cb_free(tok);
  cb__rep_doc_chart_end(d, &c, "no output tokens");
}

/* ---- TTFT of each request ---------------------------------------------------------------- */

static void ttft_scatter(const cb_report *r, const cb__rep_run *run, cb__rep_doc *d) {
  cb__rep_chart c;
  time_chart(run, d, &c, "ttft-scatter", "TTFT of each request, by send time", "TTFT");
  snprintf(c.x.label, sizeof c.x.label, "sent at");
  c.y.unit = CB__REP_UNIT_MS;
  size_t n = run->records.count, max = r->params.max_scatter_points;
  size_t stride = n > max ? (n + max - 1) / max : 1;
  cb__rep_series *ok = cb__rep_chart_series(&c, CB__REP_POINTS, 0, "TTFT of a request");
  size_t failures = 0;
  for (size_t i = 0; i < n; i++) {
    const cb_record *rec = &run->records.items[i];
    if (!cb_record_ok(rec)) failures++;
    else if (i % stride == 0) cb__rep_series_add(ok, sec(rec->sent_ns), cb__rep_ttft_ms(rec));
  }
  if (failures) {
    cb__rep_series *bad = cb__rep_chart_series(&c, CB__REP_CROSSES, CB__REP_COLOR_BAD,
                                               "failed (time to the error)");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      const cb_record *rec = &run->records.items[i];
      if (!cb_record_ok(rec) && k++ % stride == 0)
        cb__rep_series_add(bad, sec(rec->sent_ns), cb__rep_e2e_ms(rec));
    }
  }
  const cb_slo_result *slo = cb__rep_find_slo(&run->all, CB_METRIC_TTFT);
  if (slo) {
    char text[96];
    cb__rep_slo_text(&slo->slo, text, sizeof text);
    cb__rep_chart_mark(&c, 0, slo->slo.bound_ns / 1e6, CB__REP_TONE_BAD, "SLO %s", text);
  }
  if (stride > 1)
    snprintf(c.note, sizeof c.note, "One request in %zu drawn (%zu in all).", stride, n);
  cb__rep_doc_chart_end(d, &c, "no requests");
}

/* ---- the server's KV cache ------------------------------------------------------------------ */

static void kv_cache(const cb__rep_run *run, cb__rep_doc *d) {
  cb__rep_chart c;
  time_chart(run, d, &c, "kv", "Server KV-cache usage", "KV cache used");
  c.y.unit = CB__REP_UNIT_FRACTION;
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_LINE, 4, "KV-cache usage (server)");
  s->markers = run->n_gauges < 40;
  for (size_t i = 0; i < run->n_gauges; i++) cb__rep_series_add(s, run->gauge_t[i], run->gauge_kv[i]);
  const char *dialect = cb__rep_json_str(run->server, "dialect");
  snprintf(c.note, sizeof c.note, "Scraped from the server's /metrics%s%s%s.", dialect ? " (" : "",
           dialect ? dialect : "", dialect ? " names)" : "");
  cb__rep_doc_chart_end(d, &c, "the server reported no KV-cache usage");
}

static void render(const cb_report *r, cb__rep_doc *d) {
  size_t runs = cb__rep_count_kind(r, CB__REP_INPUT_RUN);
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_RUN) continue;
    const cb__rep_run *run = &in->runs[0];
    if (runs > 1) cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
    cb__rep_doc_grid_begin(d);
    in_flight(run, d);
    tokens(run, d);
    ttft_scatter(r, run, d);
    if (run->n_gauges) kv_cache(run, d);
    cb__rep_doc_grid_end(d);
  }
}

const cb__rep_section cb__rep_sec_timeline = {.id = "timeline", .title = "Over time",
                                              .applies = applies, .render = render};
