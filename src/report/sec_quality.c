/*
 * sec_quality.c - answer quality (`eval run`'s eval.json beside a run's summary.json,
 * docs/eval-run.md): each metric's corpus score with its interval and signature, the
 * requests counted as wrong, per class quality next to the class's latency, the worst
 * items with their prompt, answer and references (model and dataset text: cut, made
 * one line, and escaped by the renderer like every cell), and across a sweep the score
 * at each load, flagged when it falls as load rises. A judge:NAME metric adds its
 * grading and agreement with people (quality_judge.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/store.h"
#include "report_internal.h"

/* Items shown as the worst of a run. */
#define WORST_ITEMS 5
/* A drop that the sweep flags, in points of the metric's scale (the gate's default:
 * cb_store_quality_point). */
#define FALL_POINTS 1.0

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_any_run_has(r, "eval.json");
}

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static long count(json_t *doc, const char *status) {
  json_t *v = json_object_get(json_object_get(doc, "status"), status);
  return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

static void scores_table(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"metric", "score", "95% interval", "signature"};
  cb__rep_table_init_head(&t, "lrll", head, 4);
  const char *name;
  json_t *m;
  json_object_foreach(json_object_get(doc, "metrics"), name, m) {
    json_t *iv = json_object_get(m, "interval");
    cb__rep_table_add(&t, 0, "%s", name);
    if (isfinite(num(m, "score"))) cb__rep_table_add(&t, 0, "%.2f", num(m, "score"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "no grade"); /* a judge that graded nothing */
    if (iv) cb__rep_table_add(&t, 0, "%.2f \xE2\x80\x93 %.2f", num(iv, "low"), num(iv, "high"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "(--bootstrap N)");
    const char *sig = json_string_value(json_object_get(m, "signature"));
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%s", sig ? sig : "");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static const cb_summary *class_summary(const cb__rep_run *run, const char *name) {
  for (size_t c = 0; c < run->n_classes; c++)
    if (!strcmp(run->classes[c].class_name, name)) return &run->classes[c];
  return NULL;
}

/* Quality and latency side by side, one row per scored class. */
static void classes_table(cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  json_t *classes = json_object_get(doc, "classes");
  if (json_object_size(classes) < 2) return;
  json_t *metrics = json_object_get(doc, "metrics");
  char align[33] = "lrr";
  size_t nm = json_object_size(metrics);
  if (nm > 24) nm = 24;
  for (size_t i = 0; i < nm; i++) strcat(align, "r");
  strcat(align, "rr");
  cb__rep_table t;
  cb__rep_table_init(&t, align);
  cb__rep_table_add(&t, 0, "class");
  cb__rep_table_add(&t, 0, "requests");
  cb__rep_table_add(&t, 0, "wrong");
  const char *name;
  json_t *m;
  size_t k = 0;
  json_object_foreach(metrics, name, m) {
    if (k++ < nm) cb__rep_table_add(&t, 0, "%s", name);
  }
  cb__rep_table_add(&t, 0, "TTFT p50");
  cb__rep_table_add(&t, 0, "E2E p50");
  const char *cname;
  json_t *c;
  json_object_foreach(classes, cname, c) {
    cb__rep_table_add(&t, 0, "%s", cname);
    int scored = json_is_true(json_object_get(c, "scored"));
    cb__rep_table_add(&t, 0, "%.0f", scored ? num(c, "requests") : 0);
    cb__rep_table_add(&t, count(c, "wrong") ? CB__REP_TONE_BAD : 0, "%ld", count(c, "wrong"));
    k = 0;
    json_object_foreach(metrics, name, m) {
      if (k++ >= nm) break;
      json_t *cm = json_object_get(json_object_get(c, "metrics"), name);
      if (scored && cm) cb__rep_table_add(&t, 0, "%.2f", num(cm, "score"));
      else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "not scored");
    }
    const cb_summary *s = class_summary(run, cname);
    char a[32], b[32];
    cb__rep_table_add(&t, 0, "%s", s ? cb__rep_fmt_ms(s->metrics[CB_METRIC_TTFT].p50 / 1e6, a, sizeof a) : "-");
    cb__rep_table_add(&t, 0, "%s", s ? cb__rep_fmt_ms(s->metrics[CB_METRIC_E2E].p50 / 1e6, b, sizeof b) : "-");
  }
  cb__rep_doc_heading(d, 3, NULL, "Quality and latency per class");
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

typedef struct ranked {
  json_t *item;
  double score;
} ranked;

static int by_score(const void *a, const void *b) {
  double x = ((const ranked *)a)->score, y = ((const ranked *)b)->score;
  return x < y ? -1 : x > y;
}

/* The items the first metric scores worst, with their texts. */
static void worst_items(const cb_report *r, cb__rep_doc *d, json_t *doc) {
  const char *metric = NULL;
  json_t *m;
  json_object_foreach(json_object_get(doc, "metrics"), metric, m) break;
  json_t *items = json_object_get(doc, "items");
  size_t n = json_array_size(items);
  if (!metric || !n) return;
  int higher = !json_is_false(json_object_get(m, "higher_is_better"));
  ranked *v = cb_calloc(n, sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    json_t *it = json_array_get(items, i);
    double s = num(json_object_get(it, "scores"), metric);
    if (isfinite(s)) v[k++] = (ranked){it, higher ? s : -s};
  }
  qsort(v, k, sizeof *v, by_score);
  cb__rep_table t;
  const size_t max = r->params.max_message;
  const char *head[] = {"item", "status", metric, "prompt", "answer", "reference"};
  cb__rep_table_init_head(&t, "llrlll", head, 6);
  for (size_t i = 0; i < k && i < WORST_ITEMS; i++) {
    json_t *it = v[i].item;
    const char *st = json_string_value(json_object_get(it, "status"));
    cb__rep_table_add_text(&t, json_string_value(json_object_get(it, "id")), max, 0);
    cb__rep_table_add(&t, st && strcmp(st, "ok") ? CB__REP_TONE_BAD : 0, "%s", st ? st : "?");
    cb__rep_table_add(&t, 0, "%.2f", higher ? v[i].score : -v[i].score);
    cb__rep_table_add_text(&t, json_string_value(json_object_get(it, "prompt")), max, 0);
    cb__rep_table_add_text(&t, json_string_value(json_object_get(it, "hypothesis")), max, 0);
    json_t *ref = json_array_get(json_object_get(it, "references"), 0);
    cb__rep_table_add_text(&t, json_string_value(ref), max, 0);
  }
  cb__rep_doc_heading(d, 3, NULL, "Worst items by %s", metric);
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  cb_free(v);
}

static void run_quality(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc,
                        const char *name) {
  if (name) cb__rep_doc_heading(d, 3, NULL, "%s", name);
  long wrong = count(doc, "wrong");
  cb__rep_doc_para(d, wrong ? CB__REP_TONE_WARN : CB__REP_TONE_NONE,
                   "%.0f requests scored: %ld ok, %ld truncated (finish_reason length), %ld "
                   "error, %ld timeout; %ld counted as wrong (scored as an empty answer).",
                   num(doc, "requests"), count(doc, "ok"), count(doc, "truncated"),
                   count(doc, "error"), count(doc, "timeout"), wrong);
  if (json_is_true(json_object_get(doc, "interrupted")))
    cb__rep_doc_para(d, CB__REP_TONE_BAD,
                     "The run was interrupted: the scores cover only the %.0f requests that "
                     "came back; the items never sent are in no score.",
                     num(doc, "requests"));
  scores_table(d, doc);
  cb__rep_quality_judge(d, doc);
  classes_table(d, run, doc);
  worst_items(r, d, doc);
}

/* HTML: each metric's score at each sweep point (the points as categories, so any
 * sweep draws the same way), and the share of requests counted as wrong. */
static void quality_chart(cb__rep_doc *d, const cb__rep_input *in, json_t **docs) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "quality-load", "Quality against load");
  snprintf(c.y.label, sizeof c.y.label, "score");
  c.y.from_zero = 1;
  c.y.min = 0;
  c.y.max = 100;
  snprintf(c.x.label, sizeof c.x.label, "sweep point");
  size_t pos = 0;
  for (size_t k = 0; k < in->n_runs; k++)
    if (docs[k]) cb__rep_chart_category(&c, in->runs[k].label);
  json_t *metrics = NULL;
  for (size_t k = 0; k < in->n_runs && !metrics; k++)
    if (docs[k]) metrics = json_object_get(docs[k], "metrics");
  const char *name;
  json_t *m;
  int color = 0;
  json_object_foreach(metrics, name, m) {
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_LINE, color++ % CB__REP_PALETTE, "%s", name);
    s->markers = 1;
    pos = 0;
    for (size_t k = 0; k < in->n_runs; k++)
      if (docs[k]) cb__rep_series_add(s, (double)pos++, num(json_object_get(json_object_get(docs[k], "metrics"), name), "score"));
  }
  cb__rep_series *w = cb__rep_chart_series(&c, CB__REP_BARS, CB__REP_COLOR_BAD, "wrong (%% of requests)");
  w->bar_w = 0.3;
  pos = 0;
  for (size_t k = 0; k < in->n_runs; k++)
    if (docs[k]) {
      double req = num(docs[k], "requests");
      cb__rep_series_add(w, (double)pos++ - 0.15, req > 0 ? 100.0 * (double)count(docs[k], "wrong") / req : 0);
    }
  cb__rep_doc_chart_end(d, &c, NULL);
}

/* Across a sweep: the score at each load, and the fall from the lightest load to the
 * heaviest flagged. */
static void sweep_quality(cb__rep_doc *d, const cb__rep_input *in, json_t **docs) {
  size_t first = in->n_runs, last = 0;
  for (size_t k = 0; k < in->n_runs; k++)
    if (docs[k]) {
      if (first == in->n_runs) first = k;
      last = k;
    }
  json_t *metrics = json_object_get(docs[last], "metrics");
  char align[33] = "lrrr";
  size_t nm = json_object_size(metrics);
  if (nm > 24) nm = 24;
  for (size_t i = 0; i < nm; i++) strcat(align, "r");
  cb__rep_table t;
  const char *head[] = {"load", "wrong", "truncated", "requests"};
  cb__rep_table_init_head(&t, align, head, 4); /* the metrics' names follow in this row */
  const char *name;
  json_t *m;
  size_t k;
  json_object_foreach(metrics, name, m) cb__rep_table_add(&t, 0, "%s", name);
  for (k = 0; k < in->n_runs; k++) {
    if (!docs[k]) continue;
    cb__rep_table_add(&t, 0, "%s", in->runs[k].label);
    cb__rep_table_add(&t, count(docs[k], "wrong") ? CB__REP_TONE_BAD : 0, "%ld", count(docs[k], "wrong"));
    cb__rep_table_add(&t, count(docs[k], "truncated") ? CB__REP_TONE_WARN : 0, "%ld",
                      count(docs[k], "truncated"));
    cb__rep_table_add(&t, 0, "%.0f", num(docs[k], "requests"));
    json_object_foreach(metrics, name, m) {
      json_t *pm = json_object_get(json_object_get(docs[k], "metrics"), name);
      cb__rep_table_add(&t, 0, "%.2f", num(pm, "score"));
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  quality_chart(d, in, docs);
  if (first == last) return;
  json_object_foreach(metrics, name, m) {
    double lo = num(json_object_get(json_object_get(docs[first], "metrics"), name), "score");
    double hi = num(m, "score");
    int higher = !json_is_false(json_object_get(m, "higher_is_better"));
    double fall = higher ? lo - hi : hi - lo;
    if (!(fall > FALL_POINTS * cb_store_quality_point(name))) continue;
    cb__rep_doc_para(d, CB__REP_TONE_BAD,
                     "Quality falls as load rises: %s %.2f at %s, %.2f at %s (%.2f points worse); "
                     "at %s %ld requests failed or timed out (scored as wrong) and %ld were "
                     "truncated.",
                     name, lo, in->runs[first].label, hi, in->runs[last].label, fall,
                     in->runs[last].label, count(docs[last], "wrong"),
                     count(docs[last], "truncated"));
  }
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    json_t **docs = cb_calloc(in->n_runs ? in->n_runs : 1, sizeof *docs);
    size_t have = 0, last = 0;
    for (size_t k = 0; k < in->n_runs; k++)
      if ((docs[k] = cb__rep_run_metrics_doc(&in->runs[k], "eval.json"))) {
        have++;
        last = k;
      }
    if (have && in->kind == CB__REP_INPUT_SWEEP) {
      cb__rep_doc_heading(d, 3, NULL, "%s: quality at each load", in->path);
      sweep_quality(d, in, docs);
      char name[512];
      snprintf(name, sizeof name, "%s: %s (the heaviest load scored)", in->path, in->runs[last].label);
      run_quality(r, d, &in->runs[last], docs[last], name);
    } else if (have) {
      char name[512];
      cb__rep_run_name(r, in, &in->runs[0], name, sizeof name);
      run_quality(r, d, &in->runs[0], docs[0], r->n_inputs > 1 ? name : NULL);
    }
    for (size_t k = 0; k < in->n_runs; k++) json_decref(docs[k]);
    cb_free(docs);
  }
}

const cb__rep_section cb__rep_sec_quality = {"quality", "Quality", applies, render};
