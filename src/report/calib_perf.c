/*
 * calib_perf.c - the performance half of calibrate in a report
 * (docs/calibrate-perf.md): roofline bounds and what a run achieved, a simulator fit
 * (parameters and fit error), paper claims against a run, and an SLA with the load
 * at which each promise stops holding (HTML: each metric's percentiles against load
 * with the promises marked).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
  const char *s = cb__rep_json_str(o, key);
  return s && s[0] ? s : dflt;
}

static char *us_text(double us, char *out, size_t n) { return cb__rep_fmt_ms(us / 1000, out, n); }

/* "12.3 ms", "1.2k tokens/s", "3.4 req/s" by a summary.json key's name. */
static char *metric_value(const char *metric, double v, char *out, size_t n) {
  size_t len = strlen(metric);
  if (len > 3 && !strcmp(metric + len - 3, "_ms")) return cb__rep_fmt_ms(v, out, n);
  if (strstr(metric, "tokens_per_s")) return cb__rep_fmt_rate(v, "tokens/s", out, n);
  if (strstr(metric, "_per_s")) return cb__rep_fmt_rate(v, "req/s", out, n);
  return cb__rep_fmt_si(v, out, n);
}

/* ---- roofline ------------------------------------------------------------------------ */

static void bound_row(cb__rep_table *t, const char *what, const json_t *b, int throughput,
                      const json_t *step) {
  char lim[48], prof[48];
  cb__rep_table_add(t, 0, "%s", what);
  if (throughput) {
    cb__rep_fmt_rate(cb__rep_json_num(b, "limit_tokens_per_s"), "tokens/s", lim, sizeof lim);
    cb__rep_fmt_rate(cb__rep_json_num(b, "profile_tokens_per_s"), "tokens/s", prof, sizeof prof);
  } else {
    cb__rep_fmt_ms(cb__rep_json_num(b, "limit_ms"), lim, sizeof lim);
    cb__rep_fmt_ms(cb__rep_json_num(b, "profile_ms"), prof, sizeof prof);
  }
  cb__rep_table_add(t, 0, "%s", lim);
  cb__rep_table_add(t, 0, "%s", prof);
  cb__rep_table_add(t, 0, "%s", str_or(step, "bound_by", "-"));
  double steps = cb__rep_json_num(step, "steps");
  cb__rep_table_add(t, 0, isfinite(steps) ? "%.0f" : "-", steps);
}

static void achieved(const json_t *a, cb__rep_doc *d) {
  if (!json_is_object(a)) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No run was given (--run): nothing achieved to compare.");
    return;
  }
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Achieved by %s:", str_or(a, "dir", "-"));
  char v[9][48];
  cb__rep_fmt_si(cb__rep_json_num(a, "requests"), v[0], 48);
  cb__rep_fmt_fixed(cb__rep_json_num(a, "window_s"), 3, v[1], 48);
  cb__rep_fmt_fixed(cb__rep_json_num(a, "decode_batch"), 2, v[2], 48);
  cb__rep_fmt_si(cb__rep_json_num(a, "decode_context"), v[3], 48);
  cb__rep_fmt_ms(cb__rep_json_num(a, "itl_mean_ms"), v[4], 48);
  cb__rep_fmt_rate(cb__rep_json_num(a, "decode_tokens_per_s"), "tokens/s", v[5], 48);
  cb__rep_fmt_pct(cb__rep_json_num(a, "mbu"), v[6], 48);
  cb__rep_fmt_pct(cb__rep_json_num(a, "mfu"), v[7], 48);
  cb__rep_fmt_pct(cb__rep_json_num(a, "prefill_mfu_lower_bound"), v[8], 48);
  const char *what[] = {"requests",    "window (s)",           "mean decode batch", "mean decode context",
                        "mean ITL",    "decode tokens/s",      "MBU",               "MFU",
                        "prefill MFU (lower bound)"};
  cb__rep_table t;
  cb__rep_table_init(&t, "lr");
  cb__rep_table_add(&t, 0, "achieved");
  cb__rep_table_add(&t, 0, "value");
  for (size_t k = 0; k < 9; k++) {
    cb__rep_table_add(&t, 0, "%s", what[k]);
    cb__rep_table_add(&t, 0, "%s", v[k]);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_calib_roofline(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root, *dep = json_object_get(j, "deployment");
  char peak[48], bw[48], ridge[48], w[48], kv[48], mfu[32], mbu[32], ov[32];
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "%s on %s, TP %.0f (weights %s, KV cache %s): peak %sFLOP/s and %sB/s per GPU, "
                   "ridge point %s FLOP/byte; weights %sB per GPU, KV cache %s tokens.",
                   str_or(dep, "model", "-"), str_or(dep, "gpu", "-"), cb__rep_json_num(dep, "tp"),
                   str_or(dep, "weight_dtype", "-"), str_or(dep, "kv_dtype", "-"),
                   cb__rep_fmt_si(cb__rep_json_num(dep, "peak_flops_per_gpu"), peak, sizeof peak),
                   cb__rep_fmt_si(cb__rep_json_num(dep, "mem_bw_per_gpu"), bw, sizeof bw),
                   cb__rep_fmt_si(cb__rep_json_num(dep, "ridge_flop_per_byte"), ridge, sizeof ridge),
                   cb__rep_fmt_si(cb__rep_json_num(dep, "weight_bytes_per_gpu"), w, sizeof w),
                   cb__rep_fmt_si(cb__rep_json_num(dep, "kv_cache_tokens"), kv, sizeof kv));
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "The profile: MFU %s, MBU %s, step overhead %s.",
                   cb__rep_fmt_fixed(cb__rep_json_num(dep, "mfu"), 4, mfu, sizeof mfu),
                   cb__rep_fmt_fixed(cb__rep_json_num(dep, "mbu"), 4, mbu, sizeof mbu),
                   us_text(cb__rep_json_num(dep, "step_overhead_us"), ov, sizeof ov));
  const char *head[] = {"bound", "limit (physics)", "profile (simulator floor)", "bound by", "steps"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrlr", head, 5);
  char what[160];
  const json_t *in = json_object_get(j, "inputs");
  snprintf(what, sizeof what, "minimum TTFT, prompt of %.0f tokens", cb__rep_json_num(in, "prompt_len"));
  bound_row(&t, what, json_object_get(j, "min_ttft"), 0, json_object_get(j, "min_ttft"));
  snprintf(what, sizeof what, "minimum TPOT, batch %.0f at context %.0f", cb__rep_json_num(in, "batch"),
           cb__rep_json_num(in, "decode_context"));
  bound_row(&t, what, json_object_get(j, "min_tpot"), 0, json_object_get(j, "min_tpot"));
  const json_t *mx = json_object_get(j, "max_decode_throughput");
  snprintf(what, sizeof what, "maximum decode throughput, batch %.0f (limited by %s)",
           cb__rep_json_num(mx, "batch"), str_or(mx, "batch_limited_by", "-"));
  bound_row(&t, what, mx, 1, json_object_get(mx, "step"));
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  achieved(json_object_get(j, "achieved"), d);
}

/* ---- fit ------------------------------------------------------------------------------ */

static void error_row(cb__rep_table *t, const char *group, const json_t *e) {
  char v[5][32];
  cb__rep_table_add(t, 0, "%s", group);
  cb__rep_table_add(t, 0, "%s", cb__rep_fmt_si(cb__rep_json_num(e, "observations"), v[0], 32));
  cb__rep_table_add(t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(e, "rms_rel_before"), v[1], 32));
  cb__rep_table_add(t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(e, "rms_rel_after"), v[2], 32));
  cb__rep_table_add(t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(e, "median_abs_rel_after"), v[3], 32));
  cb__rep_table_add(t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(e, "p90_abs_rel_after"), v[4], 32));
}

void cb__rep_calib_fit(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root;
  char share[32], a[32], b[32];
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "%s on %s, TP %.0f, fitted to %.0f runs (%.0f records) in %.0f evaluations; %s "
                   "of the decode steps were compute-bound. The fitted profile: %s.",
                   str_or(j, "deployment.model", "-"), str_or(j, "deployment.gpu", "-"),
                   cb__rep_json_num(j, "deployment.tp"), cb__rep_json_num(j, "runs"),
                   cb__rep_json_num(j, "records"), cb__rep_json_num(j, "evaluations"),
                   cb__rep_fmt_pct(cb__rep_json_num(j, "compute_bound_share"), share, sizeof share),
                   str_or(j, "profile", "-"));
  const char *head[] = {"parameter", "base", "fitted", "identified"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrl", head, 4);
  static const char *const keys[][3] = {{"MFU", "mfu", "mfu"}, {"MBU", "mbu", "mbu"},
                                        {"step overhead", "step_overhead_us", "step_overhead"}};
  for (size_t k = 0; k < 3; k++) {
    char bk[64], fk[64];
    snprintf(bk, sizeof bk, "base.%s", keys[k][1]);
    snprintf(fk, sizeof fk, "fitted.%s", keys[k][1]);
    int id = json_is_true(json_object_get(json_object_get(j, "identified"), keys[k][2]));
    cb__rep_table_add(&t, 0, "%s", keys[k][0]);
    if (k == 2) {
      cb__rep_table_add(&t, 0, "%s", us_text(cb__rep_json_num(j, bk), a, sizeof a));
      cb__rep_table_add(&t, 0, "%s", us_text(cb__rep_json_num(j, fk), b, sizeof b));
    } else {
      cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_fixed(cb__rep_json_num(j, bk), 4, a, sizeof a));
      cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_fixed(cb__rep_json_num(j, fk), 4, b, sizeof b));
    }
    cb__rep_table_add(&t, id ? CB__REP_TONE_NONE : CB__REP_TONE_WARN, "%s",
                      id ? "yes" : "no: no step was bound by it, kept from the base");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  const char *ehead[] = {"observations of", "count", "RMS error before", "RMS error after",
                         "median |error| after", "p90 |error| after"};
  cb__rep_table_init_head(&t, "lrrrrr", ehead, 6);
  const json_t *e = json_object_get(j, "error");
  error_row(&t, "TTFT against prompt length", json_object_get(e, "ttft"));
  error_row(&t, "ITL against batch and context", json_object_get(e, "itl"));
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Loss (mean squared log error): %s before, %s after.",
                   cb__rep_fmt_fixed(cb__rep_json_num(e, "loss_before"), 4, a, sizeof a),
                   cb__rep_fmt_fixed(cb__rep_json_num(e, "loss_after"), 4, b, sizeof b));
}

/* ---- perf ---------------------------------------------------------------------------- */

void cb__rep_calib_perf(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root;
  char m[32], tf[32], lf[32];
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "%s (%s) against the claims of %s; plan with a margin of %s. Throughput factor "
                   "%s, latency factor %s (measured / paper: below 1 and above 1 fall short).",
                   str_or(j, "results", "-"),
                   json_is_true(json_object_get(j, "predicted")) ? "simulated" : "measured",
                   str_or(j, "claims_source", "-"),
                   cb__rep_fmt_fixed(cb__rep_json_num(j, "margin"), 2, m, sizeof m),
                   cb__rep_fmt_factor(cb__rep_json_num(j, "throughput_factor"), tf, sizeof tf),
                   cb__rep_fmt_factor(cb__rep_json_num(j, "latency_factor"), lf, sizeof lf));
  const char *head[] = {"metric", "better", "paper", "measured", "factor", "plan with", "source"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "llrrrrl", head, 7);
  size_t i;
  const json_t *x;
  json_array_foreach(json_object_get(j, "metrics"), i, x) {
    const char *name = str_or(x, "metric", "?"), *better = str_or(x, "better", "-"),
               *src = str_or(x, "source", "-");
    double fac = cb__rep_json_num(x, "factor");
    int short_of = !strcmp(better, "higher") ? fac < 1 : fac > 1;
    char p[48], me[48], fa[32], pr[48];
    cb__rep_table_add(&t, 0, "%s", name);
    cb__rep_table_add(&t, 0, "%s", better);
    cb__rep_table_add(&t, 0, "%s", metric_value(name, cb__rep_json_num(x, "paper"), p, sizeof p));
    cb__rep_table_add(&t, 0, "%s", metric_value(name, cb__rep_json_num(x, "measured"), me, sizeof me));
    cb__rep_table_add(&t, short_of ? CB__REP_TONE_WARN : CB__REP_TONE_GOOD, "%s",
                      cb__rep_fmt_factor(fac, fa, sizeof fa));
    cb__rep_table_add(&t, 0, "%s", metric_value(name, cb__rep_json_num(x, "production"), pr, sizeof pr));
    cb__rep_table_add(&t, !strcmp(src, "projected") ? CB__REP_TONE_MUTED : CB__REP_TONE_NONE, "%s", src);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* ---- sla ------------------------------------------------------------------------------ */

/* "concurrency 1.17", "rate 2.25", "-" */
static char *load_text(const char *kind, double v, char *out, size_t n) {
  if (!isfinite(v)) snprintf(out, n, "-");
  else snprintf(out, n, "%s %.3g", kind ? kind : "load", v);
  return out;
}

static void sla_chart(const json_t *j, const char *metric, cb__rep_doc *d) {
  const char *kind = cb__rep_json_str(j, "load_kind");
  const json_t *points = json_object_get(j, "points");
  char title[160];
  snprintf(title, sizeof title, "%s percentiles against load, with the promises", metric);
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "sla", title);
  int numeric = kind && (!strcmp(kind, "concurrency") || !strcmp(kind, "rate"));
  snprintf(c.x.label, sizeof c.x.label, "%s", numeric && !strcmp(kind, "rate") ? "offered rate" : numeric ? "concurrency" : "point");
  snprintf(c.x.unit_text, sizeof c.x.unit_text, "%s", numeric && !strcmp(kind, "rate") ? "req/s" : numeric ? "requests in flight" : "");
  c.x.from_zero = numeric;
  if (!numeric)
    for (size_t k = 0; k < json_array_size(points); k++)
      cb__rep_chart_category(&c, str_or(json_array_get(points, k), "label", "?"));
  cb__rep_axis_latency(&c.y, metric);
  double stops = INFINITY;
  int color = 0;
  char promises[200] = "";
  const json_t *top = NULL;
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(j, "sla"), i, s) {
    if (strcmp(str_or(s, "metric", ""), metric)) continue;
    double pct = cb__rep_json_num(s, "percentile"), at = cb__rep_json_num(s, "stops_holding_at_load");
    cb__rep_series *line = cb__rep_chart_series(&c, CB__REP_LINE, color % CB__REP_PALETTE, "p%g", pct);
    line->markers = 1;
    const json_t *values = json_object_get(s, "values_ms");
    for (size_t k = 0; k < json_array_size(values) && k < json_array_size(points); k++) {
      const json_t *v = json_array_get(values, k);
      double x = numeric ? cb__rep_json_num(json_array_get(points, k), "load") : (double)k;
      cb__rep_series_add(line, x, json_is_number(v) ? json_number_value(v) : NAN);
    }
    char b[48];
    cb__rep_fmt_ms(cb__rep_json_num(s, "sla_ms"), b, sizeof b);
    snprintf(promises + strlen(promises), sizeof promises - strlen(promises), "%sp%g %s",
             promises[0] ? ", " : "", pct, b);
    if (!top || pct > cb__rep_json_num(top, "percentile")) top = s;
    if (at < stops) stops = at;
    color++;
  }
  /* one line, the highest percentile's promise (they are often too close to label apart) */
  if (top) {
    char b[48];
    cb__rep_chart_mark(&c, 0, cb__rep_json_num(top, "sla_ms"), CB__REP_TONE_WARN, "p%g promise %s",
                       cb__rep_json_num(top, "percentile"),
                       cb__rep_fmt_ms(cb__rep_json_num(top, "sla_ms"), b, sizeof b));
    snprintf(c.note, sizeof c.note, "Promises: %s.", promises);
  }
  if (numeric && isfinite(stops)) cb__rep_chart_mark(&c, 1, stops, CB__REP_TONE_BAD, "stops holding");
  if (!cb__rep_chart_points(&c)) snprintf(c.empty, sizeof c.empty, "no percentile of %s along the load", metric);
  cb__rep_doc_chart_end(d, &c, NULL);
}

void cb__rep_calib_sla(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root, *points = json_object_get(j, "points"), *slas = json_object_get(j, "sla");
  const char *kind = cb__rep_json_str(j, "load_kind");
  double op = cb__rep_json_num(j, "operating_point"), stops = cb__rep_json_num(j, "stops_holding_at_load");
  const json_t *at = op >= 0 ? json_array_get(points, (size_t)op) : NULL;
  char margin[32], where[64];
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "%s (%s, %zu points): each promise is the percentile at the operating point %s "
                   "plus a margin of %s.",
                   str_or(j, "results", "-"), json_is_true(json_object_get(j, "predicted")) ? "predicted" : "measured",
                   json_array_size(points), str_or(at, "label", "-"),
                   cb__rep_fmt_pct(cb__rep_json_num(j, "margin"), margin, sizeof margin));
  if (isfinite(stops))
    cb__rep_doc_para(d, CB__REP_TONE_WARN, "The SLA as a whole stops holding at %s.",
                     load_text(kind, stops, where, sizeof where));
  else if (json_array_size(points) > 1)
    cb__rep_doc_para(d, CB__REP_TONE_GOOD, "Every promise holds at every load tried.");
  const char *head[] = {"metric", "percentile", "at the operating point", "promise", "holds through", "stops holding at"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrrll", head, 6);
  size_t i;
  const json_t *s;
  json_array_foreach(slas, i, s) {
    char p[48], pr[48], h[64], st[64];
    int breaks = json_is_true(json_object_get(s, "breaks"));
    cb__rep_table_add(&t, 0, "%s", str_or(s, "metric", "?"));
    cb__rep_table_add(&t, 0, "p%g", cb__rep_json_num(s, "percentile"));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(cb__rep_json_num(s, "predicted_ms"), p, sizeof p));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(cb__rep_json_num(s, "sla_ms"), pr, sizeof pr));
    cb__rep_table_add(&t, 0, "%s", load_text(kind, cb__rep_json_num(s, "holds_through_load"), h, sizeof h));
    cb__rep_table_add(&t, breaks ? CB__REP_TONE_WARN : CB__REP_TONE_GOOD, "%s",
                      breaks ? load_text(kind, cb__rep_json_num(s, "stops_holding_at_load"), st, sizeof st)
                             : "holds at every load tried");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  /* one chart per metric, in the order the promises name them */
  cb__rep_doc_grid_begin(d);
  json_array_foreach(slas, i, s) {
    const char *metric = str_or(s, "metric", "?");
    int seen = 0;
    for (size_t k = 0; k < i; k++) seen |= !strcmp(str_or(json_array_get(slas, k), "metric", "?"), metric);
    if (!seen) sla_chart(j, metric, d);
  }
  cb__rep_doc_grid_end(d);
}
