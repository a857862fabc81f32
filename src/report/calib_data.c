/*
 * calib_data.c - the data half of calibrate in a report (docs/calibrate.md): a drift
 * (divergences, severity, accuracy factor, the labels' shares; HTML: benchmark and
 * production shares as bars), an expectation (the four factors, their sources and
 * formulas) and a cost comparison (every candidate, the choice within the tolerance;
 * HTML: accuracy against cost).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MAX_LABEL_ROWS 50
#define MAX_LABEL_BARS 40

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
  const char *s = cb__rep_json_str(o, key);
  return s && s[0] ? s : dflt;
}

/* ---- drift --------------------------------------------------------------------------- */

/* "PATH (sample of 1,000, field intent)" */
static void side_text(const json_t *side, char *out, size_t n) {
  const char *kind = str_or(side, "kind", "?"), *field = str_or(side, "field", NULL);
  double size = cb__rep_json_num(side, "sample_size");
  char count[32] = "";
  if (size >= 0) cb__rep_fmt_count((size_t)size, count, sizeof count);
  snprintf(out, n, "%s (%s%s%s%s%s)", str_or(side, "path", "-"), kind, count[0] ? " of " : "", count,
           field ? ", field " : "", field ? field : "");
}

/* A KL divergence in bits: null in the JSON is infinite. */
static char *kl_text(const json_t *o, const char *key, char *out, size_t n) {
  const json_t *v = json_object_get(o, key);
  if (json_is_null(v)) snprintf(out, n, "\xE2\x88\x9E");
  else cb__rep_fmt_fixed(json_is_number(v) ? json_number_value(v) : NAN, 4, out, n);
  return out;
}

static cb__rep_tone severity_tone(const char *cls) {
  if (!strcmp(cls, "mild")) return CB__REP_TONE_GOOD;
  if (!strcmp(cls, "moderate")) return CB__REP_TONE_WARN;
  return CB__REP_TONE_BAD;
}

static void drift_tiles(const json_t *j, cb__rep_doc *d) {
  cb__rep_tile t[5];
  size_t n = 0;
  char a[32], b[32];
  memset(t, 0, sizeof t);
  t[n].label = "JS divergence";
  snprintf(t[n].value, sizeof t[n].value, "%s bits", cb__rep_fmt_fixed(cb__rep_json_num(j, "js_divergence"), 4, a, sizeof a));
  if (json_is_object(json_object_get(j, "js_interval")))
    snprintf(t[n].sub, sizeof t[n].sub, "%.0f%% interval [%s, %s]", 100 * cb__rep_json_num(j, "js_interval.level"),
             cb__rep_fmt_fixed(cb__rep_json_num(j, "js_interval.lo"), 4, a, sizeof a),
             cb__rep_fmt_fixed(cb__rep_json_num(j, "js_interval.hi"), 4, b, sizeof b));
  else snprintf(t[n].sub, sizeof t[n].sub, "no interval");
  n++;
  const char *cls = str_or(j, "severity.class", "?");
  t[n].label = "severity";
  snprintf(t[n].value, sizeof t[n].value, "%s", cls);
  snprintf(t[n].sub, sizeof t[n].sub, "%s",
           json_is_true(json_object_get(json_object_get(j, "severity"), "retrain")) ? "retrain"
                                                                                  : "no retraining");
  t[n++].tone = severity_tone(cls);
  t[n].label = "accuracy factor (JS model)";
  cb__rep_fmt_fixed(cb__rep_json_num(j, "accuracy_factor.value"), 4, t[n].value, sizeof t[n].value);
  snprintf(t[n].sub, sizeof t[n].sub, "s = %s, %s", cb__rep_fmt_fixed(cb__rep_json_num(j, "accuracy_factor.sensitivity"), 2, a, sizeof a),
           str_or(j, "accuracy_factor.sensitivity_from", "-"));
  n++;
  if (json_is_object(json_object_get(j, "reweighted"))) {
    t[n].label = "reweighted factor (measured)";
    cb__rep_fmt_fixed(cb__rep_json_num(j, "reweighted.factor"), 4, t[n].value, sizeof t[n].value);
    snprintf(t[n].sub, sizeof t[n].sub, "accuracy %s on the benchmark, %s on production's mix",
             cb__rep_fmt_pct(cb__rep_json_num(j, "reweighted.benchmark_accuracy"), a, sizeof a),
             cb__rep_fmt_pct(cb__rep_json_num(j, "reweighted.production_accuracy"), b, sizeof b));
    n++;
  }
  t[n].label = "dominant shift";
  snprintf(t[n].value, sizeof t[n].value, "%s", str_or(j, "dominant_shift.label", "-"));
  snprintf(t[n].sub, sizeof t[n].sub, "%s -> %s (%+.2f pp)",
           cb__rep_fmt_pct(cb__rep_json_num(j, "dominant_shift.benchmark_share"), a, sizeof a),
           cb__rep_fmt_pct(cb__rep_json_num(j, "dominant_shift.production_share"), b, sizeof b),
           100 * cb__rep_json_num(j, "dominant_shift.difference"));
  n++;
  cb__rep_doc_tiles(d, t, n);
}

static void drift_labels(const json_t *labels, cb__rep_doc *d) {
  int acc = 0;
  size_t i;
  const json_t *l;
  json_array_foreach(labels, i, l) acc |= json_object_get(l, "accuracy") != NULL;
  const char *head[] = {"label", "benchmark", "production", "difference", "JS (bits)", "accuracy"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, acc ? "lrrrrr" : "lrrrr", head, acc ? 6u : 5u);
  json_array_foreach(labels, i, l) {
    if (i == MAX_LABEL_ROWS) break;
    char a[32], b[32], c[32];
    double diff = cb__rep_json_num(l, "difference");
    cb__rep_table_add(&t, 0, "%s", str_or(l, "label", "?"));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(l, "benchmark_share"), a, sizeof a));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(l, "production_share"), b, sizeof b));
    cb__rep_table_add(&t, 0, isfinite(diff) ? "%+.2f pp" : "-", 100 * diff);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_fixed(cb__rep_json_num(l, "js_contribution"), 4, c, sizeof c));
    if (acc) cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(l, "accuracy"), a, sizeof a));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  if (json_array_size(labels) > MAX_LABEL_ROWS)
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "... %zu more labels (all of them are in the JSON).",
                     json_array_size(labels) - MAX_LABEL_ROWS);
}

static void drift_chart(const json_t *labels, cb__rep_doc *d) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "drift", "Share of each label: benchmark and production");
  snprintf(c.x.label, sizeof c.x.label, "label (largest shift first)");
  snprintf(c.y.label, sizeof c.y.label, "share");
  c.y.unit = CB__REP_UNIT_FRACTION;
  cb__rep_series *b = cb__rep_chart_series(&c, CB__REP_BARS, 0, "benchmark");
  b->bar_w = 0.4;
  size_t n = json_array_size(labels) < MAX_LABEL_BARS ? json_array_size(labels) : MAX_LABEL_BARS;
  for (size_t k = 0; k < n; k++) {
    const json_t *l = json_array_get(labels, k);
    cb__rep_chart_category(&c, str_or(l, "label", "?"));
    cb__rep_series_add(b, (double)k - 0.4, cb__rep_json_num(l, "benchmark_share"));
  }
  cb__rep_series *p = cb__rep_chart_series(&c, CB__REP_BARS, 1, "production");
  p->bar_w = 0.4;
  for (size_t k = 0; k < n; k++)
    cb__rep_series_add(p, (double)k, cb__rep_json_num(json_array_get(labels, k), "production_share"));
  if (json_array_size(labels) > n)
    snprintf(c.note, sizeof c.note, "The %zu labels of %zu that shifted most.", n, json_array_size(labels));
  cb__rep_doc_chart_end(d, &c, NULL);
}

void cb__rep_calib_drift(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root;
  char bench[512], prod[512], a[32], b[32], ra[32], rb[32], eb[32], ep[32];
  side_text(json_object_get(json_object_get(j, "inputs"), "benchmark"), bench, sizeof bench);
  side_text(json_object_get(json_object_get(j, "inputs"), "production"), prod, sizeof prod);
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Benchmark %s against production %s.", bench, prod);
  drift_tiles(j, d);
  const json_t *kl = json_object_get(j, "kl"), *raw = json_object_get(kl, "unsmoothed");
  cb__rep_doc_para(d, severity_tone(str_or(j, "severity.class", "?")), "%s: %s.",
                   str_or(j, "severity.class", "?"), str_or(j, "severity.advice", "-"));
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "KL(production || benchmark) %s bits (unsmoothed %s), KL(benchmark || production) "
                   "%s bits (unsmoothed %s); entropy: benchmark %s bits, production %s bits. %s",
                   kl_text(kl, "production_benchmark", a, sizeof a), kl_text(raw, "production_benchmark", ra, sizeof ra),
                   kl_text(kl, "benchmark_production", b, sizeof b), kl_text(raw, "benchmark_production", rb, sizeof rb),
                   cb__rep_fmt_fixed(cb__rep_json_num(j, "entropy.benchmark"), 4, eb, sizeof eb),
                   cb__rep_fmt_fixed(cb__rep_json_num(j, "entropy.production"), 4, ep, sizeof ep),
                   str_or(j, "js_interval_note", ""));
  const json_t *labels = json_object_get(j, "labels");
  drift_labels(labels, d);
  drift_chart(labels, d);
}

/* ---- expect -------------------------------------------------------------------------- */

static void names(const json_t *arr, cb_buf *out) {
  for (size_t k = 0; k < json_array_size(arr); k++) {
    const char *s = json_string_value(json_array_get(arr, k));
    cb_buf_appendf(out, "%s%s", k ? ", " : "", s ? s : "?");
  }
  if (!json_array_size(arr)) cb_buf_append_str(out, "none");
}

void cb__rep_calib_expect(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root;
  char paper[32], exp[32], comb[32], pct[32];
  cb__rep_fmt_fixed(cb__rep_json_num(j, "paper"), 4, paper, sizeof paper);
  cb__rep_fmt_fixed(cb__rep_json_num(j, "expected"), 4, exp, sizeof exp);
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "%s", str_or(j, "model", "-"));
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Production %s: %s (the paper's %s x %s, %s of it).",
                   str_or(j, "metric", "-"), exp, paper,
                   cb__rep_fmt_fixed(cb__rep_json_num(j, "combined_factor"), 4, comb, sizeof comb),
                   cb__rep_fmt_pct(cb__rep_json_num(j, "combined_factor"), pct, sizeof pct));
  const char *head[] = {"factor", "value", "source", "rule", "formula", "note"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrllll", head, 6);
  size_t i;
  const json_t *fa;
  json_array_foreach(json_object_get(j, "factors"), i, fa) {
    char v[32];
    const char *src = str_or(fa, "source", "-");
    cb__rep_table_add(&t, 0, "%s", str_or(fa, "name", "?"));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_fixed(cb__rep_json_num(fa, "value"), 4, v, sizeof v));
    cb__rep_table_add(&t, !strcmp(src, "default") ? CB__REP_TONE_MUTED : CB__REP_TONE_NONE, "%s", src);
    cb__rep_table_add(&t, 0, "%s", str_or(fa, "rule", "-"));
    cb__rep_table_add(&t, 0, "%s", str_or(fa, "formula", "-"));
    cb__rep_table_add(&t, 0, "%s", str_or(fa, "note", ""));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  cb_buf m, s, df;
  cb_buf_init(&m, 0);
  cb_buf_init(&s, 0);
  cb_buf_init(&df, 0);
  names(json_object_get(j, "measured"), &m);
  names(json_object_get(j, "stated"), &s);
  names(json_object_get(j, "defaults"), &df);
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Measured (or simulated): %s. Stated: %s. Defaults: %s.", m.data,
                   s.data, df.data);
  cb_buf_free(&m);
  cb_buf_free(&s);
  cb_buf_free(&df);
}

/* ---- cost ---------------------------------------------------------------------------- */

static void cost_chart(const json_t *j, const char *currency, cb__rep_doc *d) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "cost", "Accuracy against cost per 1,000 requests");
  snprintf(c.x.label, sizeof c.x.label, "cost per 1k requests");
  snprintf(c.x.unit_text, sizeof c.x.unit_text, "%s", currency);
  snprintf(c.y.label, sizeof c.y.label, "accuracy");
  c.y.unit = CB__REP_UNIT_FRACTION;
  double lo = INFINITY, hi = 0;
  size_t i;
  const json_t *cand;
  json_array_foreach(json_object_get(j, "candidates"), i, cand) {
    double cost = cb__rep_json_num(cand, "cost_per_1k_requests");
    if (cost > 0 && cost < lo) lo = cost;
    if (cost > hi) hi = cost;
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_POINTS, (int)(i % CB__REP_PALETTE), "%s",
                                             str_or(cand, "model", "?"));
    cb__rep_series_add(s, cost, cb__rep_json_num(cand, "accuracy"));
  }
  c.x.log = hi > 100 * lo;
  c.x.from_zero = !c.x.log;
  char th[32];
  cb__rep_chart_mark(&c, 0, cb__rep_json_num(j, "tolerance.threshold"), CB__REP_TONE_WARN,
                     "within tolerance from %s", cb__rep_fmt_pct(cb__rep_json_num(j, "tolerance.threshold"), th, sizeof th));
  cb__rep_doc_chart_end(d, &c, NULL);
}

void cb__rep_calib_cost(const cb__rep_file *f, cb__rep_doc *d) {
  const json_t *j = f->root;
  const char *cur = str_or(j, "currency", "");
  char a[48], b[48], c[48];
  double tol = cb__rep_json_num(j, "tolerance.value");
  int points = !strcmp(str_or(j, "tolerance.kind", ""), "points");
  if (points) snprintf(c, sizeof c, "%.4g pp", 100 * tol);
  else cb__rep_fmt_pct(tol, c, sizeof c);
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "Candidates from %s. Reference %s (accuracy %s); within a tolerance of %s, "
                   "candidates from %s accuracy qualify.",
                   str_or(j, "candidates_file", "-"), str_or(j, "tolerance.reference", "-"),
                   cb__rep_fmt_pct(cb__rep_json_num(j, "tolerance.reference_accuracy"), a, sizeof a), c,
                   cb__rep_fmt_pct(cb__rep_json_num(j, "tolerance.threshold"), b, sizeof b));
  const json_t *best = json_object_get(j, "cheapest_within_tolerance");
  if (json_is_object(best)) {
    char cost[48], save[32], acc[32];
    cb__rep_doc_para(d, CB__REP_TONE_GOOD,
                     "Cheapest within the tolerance: %s, %s %s per 1k requests at %s accuracy (%s "
                     "cheaper than the reference, %+.2f pp of accuracy).",
                     str_or(best, "model", "?"), cb__rep_fmt_si(cb__rep_json_num(best, "cost_per_1k_requests"), cost, sizeof cost),
                     cur, cb__rep_fmt_pct(cb__rep_json_num(best, "accuracy"), acc, sizeof acc),
                     cb__rep_fmt_pct(cb__rep_json_num(best, "saving_vs_reference"), save, sizeof save),
                     100 * cb__rep_json_num(best, "accuracy_change_vs_reference"));
  }
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Most accuracy per unit cost: %s.", str_or(j, "best_accuracy_per_cost", "-"));
  const char *head[] = {"model", "accuracy", "accuracy from", "pricing", "per 1k requests",
                        "per 1k correct", "accuracy per cost", "within tolerance"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrllrrrl", head, 8);
  size_t i;
  const json_t *cand;
  json_array_foreach(json_object_get(j, "candidates"), i, cand) {
    int within = json_is_true(json_object_get(cand, "within_tolerance"));
    cb__rep_table_add(&t, 0, "%s", str_or(cand, "model", "?"));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(cb__rep_json_num(cand, "accuracy"), a, sizeof a));
    cb__rep_table_add(&t, 0, "%s", str_or(cand, "accuracy_from", "-"));
    cb__rep_table_add(&t, 0, "%s", str_or(cand, "cost_formula", str_or(cand, "pricing", "-")));
    cb__rep_table_add(&t, 0, "%s %s", cb__rep_fmt_si(cb__rep_json_num(cand, "cost_per_1k_requests"), a, sizeof a), cur);
    cb__rep_table_add(&t, 0, "%s %s", cb__rep_fmt_si(cb__rep_json_num(cand, "cost_per_1k_correct"), b, sizeof b), cur);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_si(cb__rep_json_num(cand, "accuracy_per_cost"), c, sizeof c));
    cb__rep_table_add(&t, within ? CB__REP_TONE_GOOD : CB__REP_TONE_MUTED, "%s", within ? "yes" : "no");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  cost_chart(j, cur, d);
}
