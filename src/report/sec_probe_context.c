/*
 * sec_probe_context.c - `probe context`'s part of the Probes section (probe.json,
 * docs/probe.md): the breakpoint with its interval, the accuracy heatmap over lengths
 * x depths, the decay curve over every tested length with the breakpoint and the
 * tolerance line, accuracy under pressure, TTFT and E2E per length, the optional judge
 * beside the string match, and the wrong answers of the shortest prompts (model text:
 * cut, one line, escaped).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "report_internal.h"

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static void heatmap(cb__rep_doc *d, json_t *doc) {
  json_t *depths = json_object_get(doc, "depths"), *grid = json_object_get(doc, "grid");
  size_t nd = json_array_size(depths), nl = 0;
  char (*lnames)[24] = cb_calloc(json_array_size(grid) + 1, sizeof *lnames);
  double *lens = cb_calloc(json_array_size(grid) + 1, sizeof *lens);
  size_t i;
  json_t *c;
  json_array_foreach(grid, i, c) {
    double L = num(c, "length");
    size_t k = 0;
    while (k < nl && lens[k] != L) k++;
    if (k == nl) {
      lens[nl] = L;
      snprintf(lnames[nl], sizeof lnames[nl], "%.0f", L);
      nl++;
    }
  }
  if (!nd || !nl) {
    cb_free(lnames);
    cb_free(lens);
    return;
  }
  double *vals = cb_calloc(nd * nl, sizeof *vals);
  for (size_t k = 0; k < nd * nl; k++) vals[k] = NAN;
  char (*dnames)[16] = cb_calloc(nd, sizeof *dnames);
  for (size_t y = 0; y < nd; y++)
    snprintf(dnames[y], sizeof dnames[y], "%.0f%%", 100 * json_number_value(json_array_get(depths, y)));
  json_array_foreach(grid, i, c) {
    double L = num(c, "length"), dep = num(c, "depth");
    size_t x = 0, y = 0;
    while (x < nl && lens[x] != L) x++;
    while (y < nd && json_number_value(json_array_get(depths, y)) != dep) y++;
    if (x < nl && y < nd) vals[y * nl + x] = num(c, "accuracy");
  }
  const char **xn = cb_calloc(nl, sizeof *xn), **yn = cb_calloc(nd, sizeof *yn);
  for (size_t x = 0; x < nl; x++) xn[x] = lnames[x];
  for (size_t y = 0; y < nd; y++) yn[y] = dnames[y];
  cb__rep_heatmap h = {.x_names = xn, .nx = nl, .y_names = yn, .ny = nd, .values = vals};
  cb__rep_doc_chart_id(d, "probe-heatmap", h.id, sizeof h.id);
  snprintf(h.title, sizeof h.title, "Needle accuracy by context length and depth");
  snprintf(h.x_label, sizeof h.x_label, "prompt tokens");
  snprintf(h.y_label, sizeof h.y_label, "depth");
  snprintf(h.note, sizeof h.note, "RULER's string match per cell (%lld trials each); depth 0%% "
           "is the start of the haystack", (long long)json_integer_value(json_object_get(doc, "trials")));
  cb__rep_doc_heatmap(d, &h);
  cb_free(xn);
  cb_free(yn);
  cb_free(dnames);
  cb_free(vals);
  cb_free(lnames);
  cb_free(lens);
}

/* A chart against the tested lengths (x: prompt tokens, log scale); returns them. */
static json_t *lengths_chart(cb__rep_doc *d, cb__rep_chart *c, json_t *doc, const char *id, const char *title) {
  cb__rep_doc_chart_begin(d, c, id, title);
  snprintf(c->x.label, sizeof c->x.label, "prompt tokens");
  c->x.log = 1;
  return json_object_get(doc, "lengths");
}

static void decay_curve(cb__rep_doc *d, json_t *doc) {
  cb__rep_chart c;
  json_t *lengths = lengths_chart(d, &c, doc, "probe-decay", "Accuracy by context length");
  cb__rep_axis_share(&c.y, "accuracy");
  /* one line through every tested length; the bisection's midpoints marked on it */
  cb__rep_probe_line(&c, 0, "accuracy", lengths, "length", "accuracy")->markers = 1;
  cb__rep_series *b = cb__rep_chart_series(&c, CB__REP_POINTS, 1, "bisection midpoint");
  size_t i;
  json_t *l;
  json_array_foreach(lengths, i, l) {
    const char *phase = json_string_value(json_object_get(l, "phase"));
    if (phase && strcmp(phase, "grid")) /* a length of no known phase is left unmarked */
      cb__rep_series_add(b, num(l, "length"), num(l, "accuracy"));
  }
  char interval[sizeof b->name];
  snprintf(interval, sizeof interval, "%.0f%% interval", 100 * num(doc, "confidence"));
  cb__rep_probe_line(&c, 0, interval, lengths, "length", "lo")->dashed = 1;
  cb__rep_probe_line(&c, 0, "", lengths, "length", "hi")->dashed = 1; /* no second key */
  json_t *first = json_array_get(lengths, 0);
  double floor_acc = num(first, "accuracy") - num(doc, "tolerance");
  cb__rep_chart_mark(&c, 0, floor_acc, CB__REP_TONE_WARN, "tolerance");
  if (isfinite(num(doc, "breakpoint_tokens"))) /* a mark at NaN is dropped anyway */
    cb__rep_chart_mark(&c, 1, num(doc, "breakpoint_tokens"), CB__REP_TONE_BAD, "breakpoint %.0f",
                       num(doc, "breakpoint_tokens"));
  snprintf(c.note, sizeof c.note, "Each length's accuracy with its Wilson interval; the breakpoint is "
           "the longest length within the tolerance of the shortest's");
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void pressure_curve(cb__rep_doc *d, json_t *doc) {
  json_t *pr = json_object_get(doc, "pressure");
  if (!json_is_object(pr)) return;
  cb__rep_chart c;
  char title[128];
  snprintf(title, sizeof title, "Accuracy under distractors at %.0f tokens", num(pr, "length"));
  cb__rep_doc_chart_begin(d, &c, "probe-pressure", title);
  snprintf(c.x.label, sizeof c.x.label, "distractors per 1k tokens");
  c.x.from_zero = 1;
  cb__rep_axis_share(&c.y, "accuracy");
  json_t *points = json_object_get(pr, "points");
  cb__rep_probe_line(&c, 2, "accuracy", points, "density", "accuracy")->markers = 1;
  cb__rep_probe_line(&c, 2, "Wilson interval", points, "density", "lo")->dashed = 1;
  cb__rep_probe_line(&c, 2, "", points, "density", "hi")->dashed = 1;
  snprintf(c.note, sizeof c.note, "Distractor needles of other keys, their distance from the needle "
           "exponential with mean %.0f%% of the length", 100 * num(pr, "scale"));
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void latency_curve(cb__rep_doc *d, json_t *doc) {
  cb__rep_chart c;
  json_t *lengths = lengths_chart(d, &c, doc, "probe-latency", "TTFT and E2E by context length (p50)");
  cb__rep_axis_latency(&c.y, "latency");
  cb__rep_probe_line(&c, 0, "TTFT p50", lengths, "length", "ttft_ms_p50")->markers = 1;
  cb__rep_probe_line(&c, 1, "E2E p50", lengths, "length", "e2e_ms_p50")->markers = 1;
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void lengths_table(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"length", "phase", "requests", "failed", "accuracy", "interval", "TTFT p50",
                        "E2E p50"};
  cb__rep_table_init_head(&t, "llrrrrrr", head, 8);
  double floor_acc = num(json_array_get(json_object_get(doc, "lengths"), 0), "accuracy") - num(doc, "tolerance");
  size_t i;
  json_t *l;
  json_array_foreach(json_object_get(doc, "lengths"), i, l) {
    double acc = num(l, "accuracy");
    const char *phase = json_string_value(json_object_get(l, "phase"));
    cb__rep_table_add(&t, 0, "%.0f", num(l, "length"));
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%s", phase ? phase : "?");
    cb__rep_table_add(&t, 0, "%.0f", num(l, "requests"));
    cb__rep_table_add(&t, num(l, "failed") > 0 ? CB__REP_TONE_BAD : 0, "%.0f", num(l, "failed"));
    cb__rep_table_add(&t, acc >= floor_acc - 1e-12 ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD, "%.3f", acc);
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%.3f \xE2\x80\x93 %.3f", num(l, "lo"), num(l, "hi"));
    cb__rep_table_add(&t, 0, "%.1f ms", num(l, "ttft_ms_p50"));
    cb__rep_table_add(&t, 0, "%.1f ms", num(l, "e2e_ms_p50"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* The optional judge beside the string match: its accuracy and their agreement, then
 * the judge's accuracy per grid length. */
static void judge_table(cb__rep_doc *d, json_t *doc) {
  json_t *j = json_object_get(doc, "judge");
  if (!json_is_object(j)) return;
  cb__rep_doc_heading(d, 3, NULL, "Judge beside the string match");
  json_t *a = json_object_get(j, "accuracy"), *sm = json_object_get(j, "string_match"),
         *ag = json_object_get(j, "agreement"), *v = json_object_get(j, "verdicts");
  const char *rubric = json_string_value(json_object_get(j, "rubric"));
  if (!num(j, "scored")) {
    cb__rep_doc_para(d, CB__REP_TONE_BAD, "The judge (rubric %s) graded none of the %.0f answers: "
                     "%.0f parse failures, %.0f request failures (its run: judge/).",
                     rubric ? rubric : "?", num(j, "items"), num(j, "parse_failures"),
                     num(j, "request_failures"));
    return;
  }
  cb__rep_doc_para(d, 0,
                   "The judge (rubric %s) graded %.0f of %.0f grid answers: accuracy %.3f "
                   "(%.3f \xE2\x80\x93 %.3f) against the string match's %.3f on the same answers; "
                   "their verdicts agree on %.3f (%.3f \xE2\x80\x93 %.3f): both pass %.0f, string "
                   "match only %.0f, judge only %.0f, both fail %.0f.",
                   rubric ? rubric : "?", num(j, "scored"), num(j, "items"), num(a, "accuracy"),
                   num(a, "lo"), num(a, "hi"), num(sm, "accuracy"), num(ag, "accuracy"), num(ag, "lo"),
                   num(ag, "hi"), num(v, "both_pass"), num(v, "string_match_only"), num(v, "judge_only"),
                   num(v, "both_fail"));
  cb__rep_table t;
  const char *head[] = {"length", "graded", "judge accuracy", "interval"};
  cb__rep_table_init_head(&t, "rrrr", head, 4);
  size_t i;
  json_t *l;
  json_array_foreach(json_object_get(j, "lengths"), i, l) {
    cb__rep_table_add(&t, 0, "%.0f", num(l, "length"));
    cb__rep_table_add(&t, 0, "%.0f", num(l, "n"));
    if (num(l, "n") > 0) cb__rep_table_add(&t, 0, "%.3f", num(l, "accuracy"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%.3f \xE2\x80\x93 %.3f", num(l, "lo"), num(l, "hi"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void worst_table(const cb_report *r, cb__rep_doc *d, json_t *doc) {
  json_t *worst = json_object_get(doc, "worst");
  if (!json_array_size(worst)) return;
  cb__rep_doc_heading(d, 3, NULL, "Wrong answers, shortest prompts first");
  cb__rep_table t;
  const size_t max = r->params.max_message;
  size_t i, k;
  json_t *w, *v;
  int judged = 0; /* a judge column when the judge graded one of them */
  json_array_foreach(worst, i, w) judged |= json_is_number(json_object_get(w, "judge"));
  const char *head[] = {"length", "depth", "key", "expected", "score", "judge", "answer"};
  const char *no_judge[] = {"length", "depth", "key", "expected", "score", "answer"};
  if (judged) cb__rep_table_init_head(&t, "rrllrrl", head, 7);
  else cb__rep_table_init_head(&t, "rrllrl", no_judge, 6);
  json_array_foreach(worst, i, w) {
    cb__rep_table_add(&t, 0, "%.0f", num(w, "length"));
    cb__rep_table_add(&t, 0, "%.0f%%", 100 * num(w, "depth"));
    cb__rep_table_add_text(&t, json_string_value(json_object_get(w, "key")), max, 0);
    cb_buf e = {0};
    json_array_foreach(json_object_get(w, "expected"), k, v) {
      cb_buf_appendf(&e, "%s%s", k ? ", " : "", json_string_value(v) ? json_string_value(v) : "");
    }
    cb__rep_table_add_text(&t, e.data, max, 0);
    cb_buf_free(&e);
    cb__rep_table_add(&t, CB__REP_TONE_BAD, "%.2f", num(w, "score"));
    if (judged && json_is_number(json_object_get(w, "judge")))
      cb__rep_table_add(&t, num(w, "judge") >= 0.5 ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD, "%.2f", num(w, "judge"));
    else if (judged) cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    if (json_is_false(json_object_get(w, "ok"))) cb__rep_table_add(&t, CB__REP_TONE_BAD, "(the request failed)");
    else cb__rep_table_add_text(&t, json_string_value(json_object_get(w, "answer")), max, 0);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_probe_context(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)run;
  json_t *iv = json_object_get(doc, "breakpoint_interval");
  if (json_is_null(json_object_get(doc, "breakpoint_tokens")))
    cb__rep_doc_para(d, CB__REP_TONE_BAD, "No breakpoint: %s.",
                     json_string_value(json_object_get(doc, "no_breakpoint"))
                         ? json_string_value(json_object_get(doc, "no_breakpoint")) : "?");
  else cb__rep_doc_para(d, 0,
                   "Breakpoint %.0f tokens%s: %.0f%% interval %.0f \xE2\x80\x93 %.0f (%.0f%% of "
                   "bootstrap resamples agree), tolerance %.2f below the shortest length's "
                   "accuracy; %s needles, tokens counted by %s.",
                   num(doc, "breakpoint_tokens"),
                   json_is_true(json_object_get(doc, "censored")) ? " or more (no tested length fell)" : "",
                   100 * num(doc, "confidence"), json_number_value(json_array_get(iv, 0)),
                   json_number_value(json_array_get(iv, 1)), 100 * num(doc, "breakpoint_confidence"),
                   num(doc, "tolerance"),
                   json_string_value(json_object_get(doc, "needle")) ? json_string_value(json_object_get(doc, "needle")) : "?",
                   json_string_value(json_object_get(doc, "tokenizer")) ? json_string_value(json_object_get(doc, "tokenizer")) : "?");
  heatmap(d, doc);
  cb__rep_doc_grid_begin(d);
  decay_curve(d, doc);
  pressure_curve(d, doc);
  latency_curve(d, doc);
  cb__rep_doc_grid_end(d);
  lengths_table(d, doc);
  judge_table(d, doc);
  worst_table(r, d, doc);
}
