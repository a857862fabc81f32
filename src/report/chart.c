/*
 * chart.c - building a chart: series of points, marks (labelled lines such as an SLO
 * bound or a percentile), bands (shaded spans such as the measured window) and the
 * names of a categorical x axis.
 * Drawing is chart_svg.c's job. Points with a non-finite coordinate are never
 * stored, so the drawing code only sees numbers it can place.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "report_internal.h"

#define CDF_EXACT_MAX 800

static void axis_default(cb__rep_axis_spec *a) {
  memset(a, 0, sizeof *a);
  a->min = NAN;
  a->max = NAN;
}

void cb__rep_chart_init(cb__rep_chart *c, const char *id, const char *title) {
  memset(c, 0, sizeof *c);
  snprintf(c->id, sizeof c->id, "%s", id);
  snprintf(c->title, sizeof c->title, "%s", title);
  snprintf(c->empty, sizeof c->empty, "no data");
  axis_default(&c->x);
  axis_default(&c->y);
}

void cb__rep_axis_share(cb__rep_axis_spec *a, const char *label) {
  snprintf(a->label, sizeof a->label, "%s", label);
  a->unit = CB__REP_UNIT_FRACTION;
  a->min = 0;
  a->max = 1;
}

void cb__rep_axis_latency(cb__rep_axis_spec *a, const char *label) {
  snprintf(a->label, sizeof a->label, "%s", label);
  a->unit = CB__REP_UNIT_MS;
  a->from_zero = 1;
}

void cb__rep_axis_count(cb__rep_axis_spec *a, const char *label) {
  snprintf(a->label, sizeof a->label, "%s", label);
  a->integer = 1;
}

void cb__rep_chart_free(cb__rep_chart *c) {
  for (size_t i = 0; i < c->n_series; i++) {
    cb_free(c->series[i].x);
    cb_free(c->series[i].y);
  }
  cb_free(c->series);
  for (size_t i = 0; i < c->n_cats; i++) cb_free(c->cats[i]);
  cb_free(c->cats);
  memset(c, 0, sizeof *c);
}

cb__rep_series *cb__rep_chart_series(cb__rep_chart *c, cb__rep_series_kind kind, int color,
                                     const char *fmt, ...) {
  if (c->n_series == c->alloc) {
    c->alloc = c->alloc ? 2 * c->alloc : 4;
    c->series = cb_reallocarray(c->series, c->alloc, sizeof *c->series);
  }
  cb__rep_series *s = &c->series[c->n_series++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->color = color;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->name, sizeof s->name, fmt, ap);
  va_end(ap);
  return s;
}

void cb__rep_series_add(cb__rep_series *s, double x, double y) {
  if (!isfinite(x) || !isfinite(y)) return;
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? 2 * s->alloc : 64;
    s->x = cb_reallocarray(s->x, s->alloc, sizeof *s->x);
    s->y = cb_reallocarray(s->y, s->alloc, sizeof *s->y);
  }
  s->x[s->n] = x;
  s->y[s->n] = y;
  s->n++;
}

void cb__rep_chart_category(cb__rep_chart *c, const char *name) {
  if (c->n_cats == c->cats_alloc) {
    c->cats_alloc = c->cats_alloc ? 2 * c->cats_alloc : 16;
    c->cats = cb_reallocarray(c->cats, c->cats_alloc, sizeof *c->cats);
  }
  c->cats[c->n_cats++] = cb_strdup(name);
}

void cb__rep_chart_mark(cb__rep_chart *c, int vertical, double at, cb__rep_tone tone,
                        const char *fmt, ...) {
  if (c->n_marks == CB__REP_MAX_MARKS || !isfinite(at)) return;
  cb__rep_mark *m = &c->marks[c->n_marks++];
  m->vertical = vertical;
  m->at = at;
  m->tone = tone;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->label, sizeof m->label, fmt, ap);
  va_end(ap);
}

void cb__rep_chart_band(cb__rep_chart *c, double from, double to, cb__rep_tone tone,
                        const char *label) {
  if (c->n_bands == CB__REP_MAX_BANDS || !isfinite(from) || !isfinite(to) || !(to > from)) return;
  cb__rep_band *b = &c->bands[c->n_bands++];
  b->from = from;
  b->to = to;
  b->tone = tone;
  snprintf(b->label, sizeof b->label, "%s", label);
}

size_t cb__rep_chart_points(const cb__rep_chart *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->n_series; i++) n += c->series[i].n;
  return n;
}

/* The empirical CDF: exact below CDF_EXACT_MAX values, else sampled on a grid that is
 * denser in the tail (every 0.5% to p90, 0.1% to p99, 0.01% to p99.9, then 0.001%). */
void cb__rep_cdf_series(cb__rep_series *s, const cb__rep_values *v) {
  if (!v->n) return;
  uint64_t n = cb__rep_values_total(v);
  cb__rep_series_add(s, v->v[0], 0);
  if (v->n <= CDF_EXACT_MAX) { /* each value (entry) at its cumulative fraction */
    for (size_t i = 0; i < v->n; i++)
      cb__rep_series_add(s, v->v[i], (double)(v->cum ? v->cum[i] : i + 1) / (double)n);
    return;
  }
  uint64_t last = UINT64_MAX;
  double p = 0;
  while (p < 1) {
    p += p < 0.9 ? 0.005 : p < 0.99 ? 0.001 : p < 0.999 ? 0.0001 : 0.00001;
    if (p > 1) p = 1;
    double rank = ceil(p * (double)n) - 1;
    uint64_t idx = rank < 0 ? 0 : rank >= (double)n ? n - 1 : (uint64_t)rank;
    if (idx == last) continue;
    last = idx;
    cb__rep_series_add(s, cb__rep_values_at(v, idx), (double)(idx + 1) / (double)n);
  }
}
