/*
 * sec_probe_perturb.c - probe perturb's part of the probe section (probe.json,
 * docs/probe.md "probe perturb"): one row per family with its means and rates and
 * their intervals, charts of drift and of the refusal and conflict rates per family
 * with their intervals (SVG), then each family's worst pairs (clean and perturbed prompt and
 * answer, cut). Prompts and answers are model and user text: the document escapes
 * every cell; they are cut here on a character boundary.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calibench/utf8.h"
#include "report_internal.h"

#define CELL_TEXT_MAX 160

/* "mean [lo, hi]" of an object with mean/rate, lo, hi; "-" when it has no value. */
static void with_interval(json_t *o, const char *key, char *out, size_t n) {
  double v = cb__rep_json_key_num(o, key), lo = cb__rep_json_key_num(o, "lo"),
         hi = cb__rep_json_key_num(o, "hi");
  if (!isfinite(v)) {
    snprintf(out, n, "-");
    return;
  }
  char a[32], b[32], c[32];
  cb__rep_probe_fmt(v, a, sizeof a);
  cb__rep_probe_fmt(lo, b, sizeof b);
  cb__rep_probe_fmt(hi, c, sizeof c);
  if (isfinite(lo) && isfinite(hi)) snprintf(out, n, "%s [%s, %s]", a, b, c);
  else snprintf(out, n, "%s", a);
}

static void families_table(cb__rep_doc *d, json_t *families) {
  cb__rep_table t;
  const char *head[] = {"family", "pairs", "agreement", "similarity", "drift", "refusal", "conflict"};
  cb__rep_table_init_head(&t, "lrrrrrr", head, 7);
  const char *name;
  json_t *f;
  json_object_foreach(families, name, f) {
    char cell[128];
    cb__rep_table_add(&t, 0, "%s", name);
    long long unchanged = (long long)json_integer_value(json_object_get(f, "unchanged"));
    long long failed = (long long)json_integer_value(json_object_get(f, "failed"));
    if (unchanged || failed)
      cb__rep_table_add(&t, 0, "%lld (%lld unchanged, %lld failed)",
                        (long long)json_integer_value(json_object_get(f, "pairs")), unchanged, failed);
    else
      cb__rep_table_add(&t, 0, "%lld", (long long)json_integer_value(json_object_get(f, "pairs")));
    with_interval(json_object_get(f, "agreement"), "mean", cell, sizeof cell);
    cb__rep_table_add(&t, 0, "%s", cell);
    with_interval(json_object_get(f, "similarity"), "mean", cell, sizeof cell);
    cb__rep_table_add(&t, 0, "%s", cell);
    with_interval(json_object_get(f, "drift"), "mean", cell, sizeof cell);
    cb__rep_table_add(&t, 0, "%s", cell);
    with_interval(json_object_get(f, "refusal"), "rate", cell, sizeof cell);
    cb__rep_table_add(&t, 0, "%s", cell);
    json_t *c = json_object_get(f, "conflict");
    with_interval(c, "rate", cell, sizeof cell);
    double k = cb__rep_json_key_num(c, "k"), n = cb__rep_json_key_num(c, "n");
    if (isfinite(n) && n > 0)
      cb__rep_table_add(&t, k > 0 ? CB__REP_TONE_BAD : 0, "%s of %.0f refused clean", cell, n);
    else
      cb__rep_table_add(&t, CB__REP_TONE_MUTED, "none refused clean");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* One family's value as a point at x = k (+ offset), a POINTS series of its own named
 * LEGEND ("" after the first family: one key per chart), and its interval as a
 * vertical segment through it (a two-point line of its own, no legend key). */
static void point_with_interval(cb__rep_chart *c, int color, const char *legend, double x, json_t *o,
                                const char *key) {
  cb__rep_series *pts = cb__rep_chart_series(c, CB__REP_POINTS, color, "%s", legend);
  double v = cb__rep_json_key_num(o, key), lo = cb__rep_json_key_num(o, "lo"),
         hi = cb__rep_json_key_num(o, "hi");
  if (!isfinite(v)) return;
  cb__rep_series_add(pts, x, v); /* before the segment is made: series pointers move */
  if (!isfinite(lo) || !isfinite(hi)) return;
  cb__rep_series *seg = cb__rep_chart_series(c, CB__REP_LINE, color, "%s", "");
  cb__rep_series_add(seg, x, lo);
  cb__rep_series_add(seg, x, hi);
}

/* A chart with the families as its x categories, in probe.json's order. */
static void family_chart(cb__rep_doc *d, cb__rep_chart *c, json_t *families, const char *id,
                         const char *title) {
  cb__rep_doc_chart_begin(d, c, id, title);
  snprintf(c->x.label, sizeof c->x.label, "family");
  const char *name;
  json_t *f;
  json_object_foreach(families, name, f) cb__rep_chart_category(c, name);
}

/* Drift per family with its bootstrap interval. */
static void drift_chart(cb__rep_doc *d, json_t *families, double confidence) {
  cb__rep_chart c;
  family_chart(d, &c, families, "probe-perturb-drift", "First-token drift by family");
  snprintf(c.y.label, sizeof c.y.label, "drift (1 - cos + KL)");
  c.y.from_zero = 1;
  size_t k = 0;
  const char *name;
  json_t *f;
  json_object_foreach(families, name, f) {
    point_with_interval(&c, 0, k ? "" : "mean drift", (double)k, json_object_get(f, "drift"), "mean");
    k++;
  }
  snprintf(c.note, sizeof c.note, "Mean drift of each family's pairs with its %.0f%% bootstrap interval; "
           "0 is the clean answer's own distribution", 100 * confidence);
  cb__rep_doc_chart_end(d, &c, "no pair had top_logprobs on both sides");
}

/* Refusal and conflict rates per family with their Wilson intervals, side by side. */
static void rates_chart(cb__rep_doc *d, json_t *families, double confidence) {
  cb__rep_chart c;
  family_chart(d, &c, families, "probe-perturb-rates", "Refusal and conflict rates by family");
  cb__rep_axis_share(&c.y, "rate");
  size_t k = 0;
  const char *name;
  json_t *f;
  json_object_foreach(families, name, f) {
    point_with_interval(&c, 0, k ? "" : "refusal rate", (double)k - 0.15,
                        json_object_get(f, "refusal"), "rate");
    point_with_interval(&c, CB__REP_COLOR_BAD, k ? "" : "conflict rate", (double)k + 0.15,
                        json_object_get(f, "conflict"), "rate");
    k++;
  }
  snprintf(c.note, sizeof c.note, "%.0f%% Wilson intervals; conflict: complied where the clean prompt was "
           "refused (no point when no clean prompt was refused)", 100 * confidence);
  cb__rep_doc_chart_end(d, &c, NULL);
}

/* A text member, cut to CELL_TEXT_MAX bytes on a character boundary ("..." after). */
static void cut_cell(cb__rep_table *t, json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  if (!s) s = "";
  size_t n = strlen(s), keep = cb_utf8_cut(s, n, CELL_TEXT_MAX);
  cb__rep_table_add(t, 0, "%.*s%s", (int)keep, s, keep < n ? "..." : "");
}

static void worst_table(cb__rep_doc *d, json_t *families) {
  cb__rep_table t;
  const char *head[] = {"family", "id", "perturbed prompt", "clean answer", "perturbed answer",
                        "drift", "refusal (clean / perturbed)"};
  cb__rep_table_init_head(&t, "llllrrl", head, 7);
  size_t rows = 0;
  const char *name;
  json_t *f;
  json_object_foreach(families, name, f) {
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(f, "worst"), i, w) {
      char drift[32];
      cb__rep_probe_fmt(cb__rep_json_key_num(w, "drift"), drift, sizeof drift);
      cb__rep_table_add(&t, 0, "%s", name);
      cut_cell(&t, w, "id");
      cut_cell(&t, w, "perturbed_prompt");
      cut_cell(&t, w, "clean_answer");
      cut_cell(&t, w, "perturbed_answer");
      cb__rep_table_add(&t, 0, "%s", isfinite(cb__rep_json_key_num(w, "drift")) ? drift : "-");
      const char *cr = json_string_value(json_object_get(w, "clean_refusal"));
      const char *pr = json_string_value(json_object_get(w, "perturbed_refusal"));
      int conflict = cr && pr && strcmp(cr, "none") && !strcmp(pr, "none");
      cb__rep_table_add(&t, conflict ? CB__REP_TONE_BAD : 0, "%s / %s%s", cr ? cr : "?", pr ? pr : "?",
                        conflict ? " (conflict)" : "");
      rows++;
    }
  }
  if (rows) {
    cb__rep_doc_para(d, CB__REP_TONE_NONE, "Worst pairs per family (highest drift first; the "
                                           "prompts sent are in prompts.jsonl):");
    cb__rep_doc_table(d, &t);
  }
  cb__rep_table_free(&t);
}

void cb__rep_probe_perturb(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)r;
  (void)run;
  json_t *families = json_object_get(doc, "families");
  if (!json_is_object(families)) return;
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "Each perturbed answer against its clean answer: agreement, similarity, "
                   "first-token drift (1 - cos + KL), refusal rate; conflict: complied where the "
                   "clean prompt was refused. Means with bootstrap intervals, rates with Wilson "
                   "intervals.");
  families_table(d, families);
  double confidence = cb__rep_json_key_num(json_object_get(doc, "settings"), "confidence");
  if (!isfinite(confidence)) confidence = 0.95;
  cb__rep_doc_grid_begin(d);
  drift_chart(d, families, confidence);
  rates_chart(d, families, confidence);
  cb__rep_doc_grid_end(d);
  worst_table(d, families);
}
