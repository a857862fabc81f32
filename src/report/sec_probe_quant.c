/*
 * sec_probe_quant.c - probe quant's part of the probe section (probe.json,
 * docs/probe.md "probe quant"): the aggregates as llama-perplexity --kl-divergence
 * prints them, the KLD distribution (a histogram over half-decades), mean KLD and
 * top-1 agreement by position in the continuation, and the prompts whose greedy
 * outputs diverged first. Token text in probe.json is the model's: only numbers are
 * drawn from it here, and the document escapes every cell.
 */
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "report_internal.h"

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static void stats_table(cb__rep_doc *d, json_t *doc) {
  json_t *k = json_object_get(doc, "kld"), *ppl = json_object_get(doc, "ppl");
  cb__rep_table t;
  const char *head[] = {"statistic", "value", "\xC2\xB1"};
  cb__rep_table_init_head(&t, "lrr", head, 3);
  struct {
    const char *name;
    json_t *o;
    const char *key, *se;
    double scale;
  } rows[] = {
      {"Mean PPL(Q)", json_object_get(ppl, "candidate"), "value", "se", 1},
      {"Mean PPL(base)", json_object_get(ppl, "reference"), "value", "se", 1},
      {"Mean PPL(Q)/PPL(base)", json_object_get(ppl, "ratio"), "value", "se", 1},
      {"Mean PPL(Q)-PPL(base)", json_object_get(ppl, "diff"), "value", "se", 1},
      {"Mean KLD", k, "mean", "se", 1},
      {"Maximum KLD", k, "max", NULL, 1},
      {"99.9% KLD", k, "p999", NULL, 1},
      {"99.0% KLD", k, "p99", NULL, 1},
      {"95.0% KLD", k, "p95", NULL, 1},
      {"Median KLD", k, "median", NULL, 1},
      {"Minimum KLD", k, "min", NULL, 1},
      {"Mean \xCE\x94p (%)", json_object_get(doc, "delta_p"), "value", "se", 100},
      {"RMS \xCE\x94p (%)", json_object_get(doc, "rms_dp"), "value", "se", 100},
      {"Same top p (%)", json_object_get(doc, "same_top_p"), "value", "se", 100},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    double v = num(rows[i].o, rows[i].key) * rows[i].scale;
    double se = rows[i].se ? num(rows[i].o, rows[i].se) * rows[i].scale : NAN;
    cb__rep_table_add(&t, 0, "%s", rows[i].name);
    if (isfinite(v)) cb__rep_table_add(&t, 0, "%.6f", v);
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    if (isfinite(se)) cb__rep_table_add(&t, 0, "%.6f", se);
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%s", "");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void histogram(cb__rep_doc *d, json_t *doc) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "probe-kld", "KLD per position (nats)");
  snprintf(c.x.label, sizeof c.x.label, "KLD");
  c.x.log = 1;
  cb__rep_axis_count(&c.y, "positions");
  c.y.from_zero = 1;
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, 0, "positions per half-decade");
  size_t i;
  json_t *b;
  json_array_foreach(json_object_get(doc, "kld_histogram"), i, b) {
    cb__rep_series_add(s, num(b, "lo"), num(b, "n"));
  }
  json_t *k = json_object_get(doc, "kld");
  if (num(k, "mean") > 0) cb__rep_chart_mark(&c, 1, num(k, "mean"), CB__REP_TONE_WARN, "mean %.4g", num(k, "mean"));
  if (num(k, "p99") > 0) cb__rep_chart_mark(&c, 1, num(k, "p99"), CB__REP_TONE_BAD, "99%% %.4g", num(k, "p99"));
  snprintf(c.note, sizeof c.note, "KLD(reference || candidate) over the top-k lists with the tail "
           "as one bucket: a lower bound of the full-vocabulary KLD");
  cb__rep_doc_chart_end(d, &c, "no position with a positive KLD");
}

static void by_position(cb__rep_doc *d, json_t *doc) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "probe-kld-pos", "Mean KLD by position in the continuation");
  cb__rep_axis_count(&c.x, "position");
  snprintf(c.y.label, sizeof c.y.label, "mean KLD");
  c.y.from_zero = 1;
  json_t *positions = json_object_get(doc, "by_position");
  cb__rep_probe_line(&c, 0, "mean KLD", positions, "pos", "kld_mean")->markers = 1;
  snprintf(c.note, sizeof c.note, "Every prompt's position j is scored on the reference's first j "
           "tokens, so later positions see longer, reference-chosen contexts");
  cb__rep_doc_chart_end(d, &c, NULL);
}

static void sequences_table(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"prompt", "tokens", "first divergence", "mean KLD", "PPL(base)", "PPL(Q)"};
  cb__rep_table_init_head(&t, "rrrrrr", head, 6);
  size_t i, rows = 0;
  json_t *s;
  json_array_foreach(json_object_get(doc, "sequences"), i, s) {
    if (rows == 20) break;
    json_t *div = json_object_get(s, "first_divergence"), *e = json_object_get(s, "error");
    cb__rep_table_add(&t, 0, "%.0f", num(s, "index") + 1);
    cb__rep_table_add(&t, 0, "%.0f", num(s, "tokens"));
    if (json_is_string(e)) cb__rep_table_add(&t, CB__REP_TONE_BAD, "%s", json_string_value(e));
    else if (json_is_integer(div)) cb__rep_table_add(&t, CB__REP_TONE_WARN, "%lld", (long long)json_integer_value(div));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "none");
    cb__rep_table_add(&t, 0, "%.4g", num(s, "kld_mean"));
    cb__rep_table_add(&t, 0, "%.4g", num(s, "ppl_reference"));
    cb__rep_table_add(&t, 0, "%.4g", num(s, "ppl_candidate"));
    rows++;
  }
  cb__rep_doc_para(d, CB__REP_TONE_NONE, "Per prompt (the first 20): where the candidate's greedy "
                   "output first leaves the reference's, and the perplexity each gives the "
                   "reference's continuation; every position is in positions.jsonl.");
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_probe_quant(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)r;
  (void)run;
  if (!json_is_object(json_object_get(doc, "kld"))) return;
  json_t *set = json_object_get(doc, "settings");
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "Candidate against reference on the reference's greedy continuations: %.0f "
                   "positions, top-%.0f lists, the continuation re-fed as %s (docs/probe.md).",
                   num(doc, "positions"), num(set, "top_k"),
                   json_is_string(json_object_get(set, "refeed")) &&
                           json_string_value(json_object_get(set, "refeed"))[0] == 'i'
                       ? "token ids"
                       : "text");
  stats_table(d, doc);
  histogram(d, doc);
  by_position(d, doc);
  sequences_table(d, doc);
}
