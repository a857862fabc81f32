/*
 * chart_svg.c - a chart drawn as inline SVG inside an HTML <figure>: frame, grid,
 * ticks with labels (numbers, or the names of a categorical x axis), axis labels with
 * their unit, shaded bands, series, labelled marks, and a legend under it.
 *
 * Geometry is a fixed 560 x 300 viewBox scaled to the page's width by CSS, down but
 * never up (html_page.c caps a chart at 560 px, W below), so the same drawing serves
 * a desktop, a phone and paper with its text at one size. Colours are CSS classes (c0..c9,
 * c10 for failures; t-good, t-bad, ... for tones) defined by html_page.c, so the page
 * owns its palette. Every piece of text is escaped. A chart with no points is drawn
 * as an empty frame with its `empty` text: no axis is ever computed from nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/utf8.h"
#include "report_internal.h"

#define W 560.0
#define H 300.0
#define PX0 64.0
#define PX1 (W - 18.0)
#define PY0 14.0
#define PY1 (H - 46.0)
#define VROWS 6 /* rows of vertical mark labels */

static const char *tone_class(cb__rep_tone t) {
  switch (t) {
    case CB__REP_TONE_GOOD: return "t-good";
    case CB__REP_TONE_BAD: return "t-bad";
    case CB__REP_TONE_WARN: return "t-warn";
    case CB__REP_TONE_MUTED: return "t-muted";
    default: return "t-none";
  }
}

/* ---- ranges ------------------------------------------------------------------------- */

typedef struct range {
  double lo, hi;
  int any;
} range;

static void take(range *r, double v, int log) {
  if (!isfinite(v) || (log && !(v > 0))) return;
  if (!r->any || v < r->lo) r->lo = v;
  if (!r->any || v > r->hi) r->hi = v;
  r->any = 1;
}

/* Categories 0..n-1 on [-0.5, n - 0.5], a tick on each (every k-th beyond the most
 * ticks an axis holds). */
static void category_ticks(size_t n, cb__rep_ticks *t) {
  memset(t, 0, sizeof *t);
  size_t every = (n + CB__REP_MAX_TICKS - 1) / CB__REP_MAX_TICKS;
  for (size_t k = 0; k < n; k += every) t->v[t->n++] = (double)k;
  t->lo = -0.5;
  t->hi = (double)n - 0.5;
  t->step = (double)every;
}

static void axis_range(const cb__rep_chart *c, int is_x, cb__rep_ticks *t) {
  if (is_x && c->n_cats) {
    category_ticks(c->n_cats, t);
    return;
  }
  const cb__rep_axis_spec *a = is_x ? &c->x : &c->y;
  range r = {0};
  for (size_t i = 0; i < c->n_series; i++) {
    const cb__rep_series *s = &c->series[i];
    for (size_t k = 0; k < s->n; k++) {
      if (is_x) {
        take(&r, s->x[k], a->log);
        if (s->kind == CB__REP_BARS) take(&r, s->x[k] + s->bar_w, a->log);
      } else {
        take(&r, s->y[k], a->log);
      }
    }
    if (!is_x && s->kind == CB__REP_BARS) take(&r, 0, a->log);
  }
  for (size_t i = 0; i < c->n_marks; i++)
    if (c->marks[i].vertical == is_x) take(&r, c->marks[i].at, a->log);
  if (is_x)
    for (size_t i = 0; i < c->n_bands; i++) {
      take(&r, c->bands[i].from, a->log);
      take(&r, c->bands[i].to, a->log);
    }
  if (a->from_zero && !a->log) take(&r, 0, 0);
  double lo = isfinite(a->min) ? a->min : r.any ? r.lo : NAN;
  double hi = isfinite(a->max) ? a->max : r.any ? r.hi : NAN;
  /* headroom above the highest value so a line or label at the top stays readable */
  if (!is_x && !a->log && !isfinite(a->max) && hi > lo) hi += (hi - lo) * 0.06;
  if (a->log) cb__rep_axis_log_ticks(lo, hi, t);
  else cb__rep_axis_ticks(lo, hi, is_x ? 8 : 5, t);
  if (a->integer && !a->log && t->step < 1 && t->hi - t->lo <= 10) {
    /* a count axis never shows 0.5 of a request: whole numbers, one apart */
    double l = floor(t->lo), h = ceil(t->hi);
    if (h < l + 1) h = l + 1;
    t->n = 0;
    for (double v = l; v <= h && t->n < CB__REP_MAX_TICKS; v += 1) t->v[t->n++] = v;
    t->lo = l;
    t->hi = t->v[t->n - 1];
    t->step = 1;
    t->decimals = 0;
  }
}

/* ---- units and tick labels ---------------------------------------------------------- */

void cb__rep_axis_unit(const cb__rep_axis_spec *a, const cb__rep_ticks *t, double *scale,
                       const char **suffix) {
  double m = fmax(fabs(t->lo), fabs(t->hi));
  *scale = 1;
  *suffix = "";
  switch (a->unit) {
    case CB__REP_UNIT_MS:
      if (m >= 10000) *scale = 1e-3, *suffix = "s";
      else if (m < 1) *scale = 1e3, *suffix = "\xC2\xB5s";
      else *suffix = "ms";
      break;
    case CB__REP_UNIT_S:
      if (m < 1) *scale = 1e3, *suffix = "ms";
      else *suffix = "s";
      break;
    case CB__REP_UNIT_FRACTION: *scale = 100; break;
    default: *suffix = a->unit_text; break;
  }
}

char *cb__rep_tick_label(const cb__rep_axis_spec *a, const cb__rep_ticks *t, double v,
                         char *out, size_t n) {
  double scale;
  const char *suffix;
  cb__rep_axis_unit(a, t, &scale, &suffix);
  double x = v * scale;
  if (fabs(x) < 1e-300) x = 0;
  if (t->log) {
    cb__rep_fmt_si(x, out, n);
  } else if (a->unit == CB__REP_UNIT_NONE && fmax(fabs(t->lo), fabs(t->hi)) * scale >= 1e4) {
    /* SI suffix, with as many decimals as the step needs at that suffix */
    static const char *const sfx[] = {"k", "M", "G", "T", "P"};
    double m = fmax(fabs(t->lo), fabs(t->hi)) * scale, div = 1e3;
    size_t k = 0;
    while (m / div >= 1e3 && k + 1 < sizeof sfx / sizeof sfx[0]) div *= 1e3, k++;
    double d = -floor(log10(t->step * scale / div) + 1e-9);
    int dec = d > 0 ? (int)(d > 6 ? 6 : d) : 0;
    if (x == 0) snprintf(out, n, "0");
    else snprintf(out, n, "%.*f%s", dec, x / div, sfx[k]);
  } else {
    double d = -floor(log10(t->step * scale) + 1e-9);
    int dec = d > 0 ? (int)(d > 12 ? 12 : d) : 0;
    snprintf(out, n, "%.*f", dec, x);
  }
  if (a->unit == CB__REP_UNIT_FRACTION) {
    size_t len = strlen(out);
    if (len + 2 <= n) memcpy(out + len, "%", 2);
  }
  return out;
}

/* ---- drawing ------------------------------------------------------------------------- */

typedef struct frame {
  cb__rep_ticks tx, ty;
} frame;

static double map(const cb__rep_ticks *t, double v, double p0, double p1) {
  double f;
  if (t->log) f = v > 0 ? (log10(v) - log10(t->lo)) / (log10(t->hi) - log10(t->lo)) : 0;
  else f = (v - t->lo) / (t->hi - t->lo);
  if (!isfinite(f)) f = 0;
  if (f < -0.01) f = -0.01;
  if (f > 1.01) f = 1.01;
  return p0 + f * (p1 - p0);
}

static double X(const frame *f, double v) { return map(&f->tx, v, PX0, PX1); }
static double Y(const frame *f, double v) { return map(&f->ty, v, PY1, PY0); }

static void text(cb_buf *out, double x, double y, const char *anchor, const char *cls,
                 const char *s) {
  cb_buf_appendf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor,
                 cls);
  cb__rep_html_escape(out, s, strlen(s));
  cb_buf_append_str(out, "</text>");
}

static void axis_label(const cb__rep_axis_spec *a, const cb__rep_ticks *t, char *out, size_t n) {
  double scale;
  const char *suffix;
  cb__rep_axis_unit(a, t, &scale, &suffix);
  if (suffix && suffix[0]) snprintf(out, n, "%s (%s)", a->label, suffix);
  else snprintf(out, n, "%s", a->label);
}

/* An x tick's label: the category's name (cut to 24 bytes) or the number. */
static void x_label(const cb__rep_chart *c, const frame *f, double v, char *out, size_t n) {
  if (!c->n_cats) {
    cb__rep_tick_label(&c->x, &f->tx, v, out, n);
    return;
  }
  const char *name = c->cats[(size_t)v];
  size_t len = strlen(name), cut = cb_utf8_cut(name, len, 24);
  snprintf(out, n, "%.*s%s", (int)cut, name, cut < len ? "\xE2\x80\xA6" : "");
}

static void draw_axes(const cb__rep_chart *c, const frame *f, cb_buf *out) {
  /* grid */
  cb_buf_append_str(out, "<path class=\"gl\" d=\"");
  for (size_t i = 0; i < f->ty.n; i++) cb_buf_appendf(out, "M%.1f %.1fH%.1f", PX0, Y(f, f->ty.v[i]), PX1);
  for (size_t i = 0; i < f->tx.n; i++) cb_buf_appendf(out, "M%.1f %.1fV%.1f", X(f, f->tx.v[i]), PY0, PY1);
  cb_buf_append_str(out, "\"/>");
  cb_buf_appendf(out, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>", PX0, PY0, PY1, PX1);
  /* tick marks */
  cb_buf_append_str(out, "<path class=\"axis\" d=\"");
  for (size_t i = 0; i < f->ty.n; i++) cb_buf_appendf(out, "M%.1f %.1fh-4", PX0, Y(f, f->ty.v[i]));
  for (size_t i = 0; i < f->tx.n; i++) cb_buf_appendf(out, "M%.1f %.1fv4", X(f, f->tx.v[i]), PY1);
  cb_buf_append_str(out, "\"/>");
  /* labels: thin the x ones when they would collide */
  char lab[64];
  size_t widest = 0;
  for (size_t i = 0; i < f->tx.n; i++) {
    x_label(c, f, f->tx.v[i], lab, sizeof lab);
    size_t w = cb__rep_utf8_width(lab, strlen(lab));
    if (w > widest) widest = w;
  }
  double room = (PX1 - PX0) / (double)(f->tx.n > 1 ? f->tx.n - 1 : 1);
  size_t every = 1;
  while (every < f->tx.n && room * (double)every < (double)widest * 7.0 + 14) every++;
  for (size_t i = 0; i < f->tx.n; i += every) {
    x_label(c, f, f->tx.v[i], lab, sizeof lab);
    text(out, X(f, f->tx.v[i]), PY1 + 17, "middle", "tick", lab);
  }
  for (size_t i = 0; i < f->ty.n; i++) {
    cb__rep_tick_label(&c->y, &f->ty, f->ty.v[i], lab, sizeof lab);
    text(out, PX0 - 7, Y(f, f->ty.v[i]) + 4, "end", "tick", lab);
  }
  char name[128];
  axis_label(&c->x, &f->tx, name, sizeof name);
  text(out, (PX0 + PX1) / 2, H - 8, "middle", "axl", name);
  axis_label(&c->y, &f->ty, name, sizeof name);
  cb_buf_appendf(out, "<text transform=\"translate(15 %.1f) rotate(-90)\" text-anchor=\"middle\" class=\"axl\">",
                 (PY0 + PY1) / 2);
  cb__rep_html_escape(out, name, strlen(name));
  cb_buf_append_str(out, "</text>");
}

static void draw_bands(const cb__rep_chart *c, const frame *f, cb_buf *out) {
  for (size_t i = 0; i < c->n_bands; i++) {
    const cb__rep_band *b = &c->bands[i];
    double x0 = X(f, b->from), x1 = X(f, b->to);
    cb_buf_appendf(out, "<rect class=\"band %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
                   tone_class(b->tone), x0, PY0, x1 - x0 > 0.5 ? x1 - x0 : 0.5, PY1 - PY0);
    cb__rep_html_escape(out, b->label, strlen(b->label));
    cb_buf_append_str(out, "</title></rect>");
    if (x1 - x0 > 60) text(out, x0 + 4, PY1 - 6, "start", "bandl", b->label);
  }
}

static void series_path(const cb__rep_series *s, const frame *f, cb_buf *out) {
  for (size_t k = 0; k < s->n; k++) {
    double x = X(f, s->x[k]), y = Y(f, s->y[k]);
    switch (s->kind) {
      case CB__REP_LINE: cb_buf_appendf(out, "%s%.1f %.1f", k ? "L" : "M", x, y); break;
      case CB__REP_STEP:
        if (k == 0) cb_buf_appendf(out, "M%.1f %.1f", x, y);
        else cb_buf_appendf(out, "H%.1fV%.1f", x, y);
        break;
      case CB__REP_POINTS: cb_buf_appendf(out, "M%.1f %.1fh3v3h-3z", x - 1.5, y - 1.5); break;
      case CB__REP_CROSSES:
        cb_buf_appendf(out, "M%.1f %.1fl6 6M%.1f %.1fl-6 6", x - 3, y - 3, x + 3, y - 3);
        break;
      case CB__REP_BARS: {
        double x1 = X(f, s->x[k] + s->bar_w), y0 = Y(f, 0);
        if (x1 - x < 1) x1 = x + 1;
        cb_buf_appendf(out, "M%.1f %.1fV%.1fH%.1fV%.1fZ", x, y0, y, x1, y0);
        break;
      }
    }
  }
}

static const char *kind_class(cb__rep_series_kind k) {
  switch (k) {
    case CB__REP_POINTS: return "pt";
    case CB__REP_BARS: return "bar";
    case CB__REP_CROSSES: return "ln x";
    default: return "ln";
  }
}

static void draw_series(const cb__rep_chart *c, const frame *f, cb_buf *out) {
  for (size_t i = 0; i < c->n_series; i++) {
    const cb__rep_series *s = &c->series[i];
    if (!s->n) continue;
    cb_buf_appendf(out, "<path class=\"series %s c%d%s\" d=\"", kind_class(s->kind), s->color,
                   s->dashed ? " dash" : "");
    series_path(s, f, out);
    cb_buf_append_str(out, "\"><title>");
    cb__rep_html_escape(out, s->name, strlen(s->name));
    cb_buf_append_str(out, "</title></path>");
    if (s->kind == CB__REP_LINE && s->markers) {
      cb_buf_appendf(out, "<path class=\"series pt c%d\" d=\"", s->color);
      for (size_t k = 0; k < s->n; k++)
        cb_buf_appendf(out, "M%.1f %.1fm-3 0a3 3 0 1 0 6 0a3 3 0 1 0 -6 0", X(f, s->x[k]),
                       Y(f, s->y[k]));
      cb_buf_append_str(out, "\"/>");
    }
  }
}

/* The baseline of a horizontal mark's label: above its line, below it at the top. */
static double hlabel_y(const frame *f, const cb__rep_mark *m) {
  double y = Y(f, m->at);
  return y < PY0 + 14 ? y + 13 : y - 5;
}

/* The baseline of the next vertical mark's label: stacked rows from the top (so close
 * marks do not write over each other), skipping rows a horizontal label is on. */
static double vlabel_y(const cb__rep_chart *c, const frame *f, size_t *row) {
  for (int tries = 0; tries < VROWS; tries++) {
    double y = PY0 + 11 + 13 * (double)((*row)++ % VROWS);
    int clear = 1;
    for (size_t i = 0; i < c->n_marks; i++)
      if (!c->marks[i].vertical && fabs(hlabel_y(f, &c->marks[i]) - y) < 13) clear = 0;
    if (clear) return y;
  }
  return PY0 + 11;
}

static void draw_marks(const cb__rep_chart *c, const frame *f, cb_buf *out) {
  size_t row = 0;
  for (size_t i = 0; i < c->n_marks; i++) {
    const cb__rep_mark *m = &c->marks[i];
    if (m->vertical) {
      double x = X(f, m->at);
      cb_buf_appendf(out, "<path class=\"mk %s\" d=\"M%.1f %.1fV%.1f\"/>", tone_class(m->tone), x,
                     PY0, PY1);
      double y = vlabel_y(c, f, &row);
      int right = x > PX1 - 150;
      text(out, right ? x - 4 : x + 4, y, right ? "end" : "start", "mkl", m->label);
    } else {
      cb_buf_appendf(out, "<path class=\"mk %s\" d=\"M%.1f %.1fH%.1f\"/>", tone_class(m->tone), PX0,
                     Y(f, m->at), PX1);
      text(out, PX1 - 4, hlabel_y(f, m), "end", "mkl", m->label);
    }
  }
}

static void legend(const cb__rep_chart *c, cb_buf *out) {
  size_t items = c->n_bands;
  for (size_t i = 0; i < c->n_series; i++) items += c->series[i].name[0] != '\0';
  if (!items) return;
  cb_buf_append_str(out, "<div class=\"legend\">");
  for (size_t i = 0; i < c->n_series; i++) {
    const cb__rep_series *s = &c->series[i];
    if (!s->name[0]) continue;
    cb_buf_append_str(out, "<span class=\"key\"><svg viewBox=\"0 0 18 10\" class=\"sw\">");
    switch (s->kind) {
      case CB__REP_POINTS:
      case CB__REP_BARS:
        cb_buf_appendf(out, "<path class=\"%s c%d\" d=\"M5 1h8v8h-8z\"/>", kind_class(s->kind), s->color);
        break;
      case CB__REP_CROSSES:
        cb_buf_appendf(out, "<path class=\"ln x c%d\" d=\"M5 1l8 8M13 1l-8 8\"/>", s->color);
        break;
      default:
        cb_buf_appendf(out, "<path class=\"ln c%d%s\" d=\"M1 5H17\"/>", s->color, s->dashed ? " dash" : "");
    }
    cb_buf_append_str(out, "</svg>");
    cb__rep_html_escape(out, s->name, strlen(s->name));
    cb_buf_append_str(out, "</span>");
  }
  for (size_t i = 0; i < c->n_bands; i++) {
    cb_buf_appendf(out, "<span class=\"key\"><svg viewBox=\"0 0 18 10\" class=\"sw\"><rect class=\"band %s\" x=\"1\" y=\"0\" width=\"16\" height=\"10\"/></svg>",
                   tone_class(c->bands[i].tone));
    cb__rep_html_escape(out, c->bands[i].label, strlen(c->bands[i].label));
    cb_buf_append_str(out, "</span>");
  }
  cb_buf_append_str(out, "</div>");
}

void cb__rep_chart_svg(const cb__rep_chart *c, cb_buf *out) {
  size_t points = cb__rep_chart_points(c);
  cb_buf_append_str(out, "<figure class=\"chart\" data-chart=\"");
  cb__rep_html_escape(out, c->id, strlen(c->id));
  cb_buf_appendf(out, "\" data-points=\"%zu\"><figcaption>", points);
  cb__rep_html_escape(out, c->title, strlen(c->title));
  cb_buf_appendf(out, "</figcaption><svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", W, H);
  cb__rep_html_escape(out, c->title, strlen(c->title));
  cb_buf_append_str(out, "\">");
  if (!points) {
    cb_buf_appendf(out, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>", PX0, PY0, PY1, PX1);
    text(out, (PX0 + PX1) / 2, (PY0 + PY1) / 2, "middle", "empty", c->empty);
    cb_buf_append_str(out, "</svg>");
  } else {
    frame f;
    axis_range(c, 1, &f.tx);
    axis_range(c, 0, &f.ty);
    draw_bands(c, &f, out);
    draw_axes(c, &f, out);
    draw_series(c, &f, out);
    draw_marks(c, &f, out);
    cb_buf_append_str(out, "</svg>");
    legend(c, out);
  }
  if (c->note[0]) {
    cb_buf_append_str(out, "<p class=\"note\">");
    cb__rep_html_escape(out, c->note, strlen(c->note));
    cb_buf_append_str(out, "</p>");
  }
  cb_buf_append_str(out, "</figure>\n");
}
