/*
 * sec_probe_embed.c - `probe embed`'s part of the Probes section (sec_probe.c): the two
 * models side by side (norms, relevant vs other cosines, recall@k and nDCG@k), the
 * agreement of their rankings, the histogram of the score shifts cos_b - cos_a with its
 * mean, and the power-norm sweep with the chosen alpha. The endpoints' URLs come from
 * the file (passwords already masked there); the document escapes every cell.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report_internal.h"

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static void models_part(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"model", "endpoint", "dim", "norm mean", "norm p5 / p50 / p95",
                        "cos relevant", "cos other", "gap"};
  cb__rep_table_init_head(&t, "llrrrrrr", head, 8);
  const char *tags[] = {"a", "b"};
  for (int i = 0; i < 2; i++) {
    json_t *m = json_object_get(doc, tags[i]), *n = json_object_get(m, "norms");
    const char *url = json_string_value(json_object_get(m, "url"));
    const char *model = json_string_value(json_object_get(m, "model"));
    cb__rep_table_add(&t, 0, "%s", tags[i]);
    cb__rep_table_add(&t, 0, "%s%s%s", url ? url : "?", model ? " " : "", model ? model : "");
    cb__rep_table_add(&t, 0, "%.0f", num(m, "dim"));
    cb__rep_table_add(&t, 0, "%.4g", num(n, "mean"));
    cb__rep_table_add(&t, 0, "%.4g / %.4g / %.4g", num(n, "p5"), num(n, "p50"), num(n, "p95"));
    cb__rep_table_add(&t, 0, "%.4f", num(json_object_get(m, "cos_relevant"), "mean"));
    cb__rep_table_add(&t, 0, "%.4f", num(json_object_get(m, "cos_other"), "mean"));
    cb__rep_table_add(&t, 0, "%.4f", num(m, "gap"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);

  const char *rhead[] = {"k", "recall a", "recall b", "nDCG a", "nDCG b"};
  cb__rep_table_init_head(&t, "rrrrr", rhead, 5);
  json_t *ra = json_object_get(json_object_get(doc, "a"), "retrieval");
  json_t *rb = json_object_get(json_object_get(doc, "b"), "retrieval");
  for (size_t i = 0; i < json_array_size(ra) && i < json_array_size(rb); i++) {
    json_t *x = json_array_get(ra, i), *y = json_array_get(rb, i);
    cb__rep_table_add(&t, 0, "%.0f", num(x, "k"));
    cb__rep_table_add(&t, 0, "%.4f", num(x, "recall"));
    cb__rep_table_add(&t, 0, "%.4f", num(y, "recall"));
    cb__rep_table_add(&t, 0, "%.4f", num(x, "ndcg"));
    cb__rep_table_add(&t, 0, "%.4f", num(y, "ndcg"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void shift_part(cb__rep_doc *d, json_t *doc) {
  json_t *sh = json_object_get(doc, "shift"), *h = json_object_get(sh, "histogram");
  json_t *counts = json_object_get(h, "counts");
  double lo = num(h, "lo"), hi = num(h, "hi");
  size_t n = json_array_size(counts);
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "embed-shift", "Score shift per (query, document) pair: cos_b - cos_a");
  snprintf(c.x.label, sizeof c.x.label, "cos_b - cos_a");
  snprintf(c.y.label, sizeof c.y.label, "pairs");
  c.y.from_zero = 1;
  if (n && isfinite(lo) && isfinite(hi) && hi > lo) {
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_BARS, 0, "pairs");
    s->bar_w = (hi - lo) / (double)n;
    for (size_t i = 0; i < n; i++)
      cb__rep_series_add(s, lo + (double)i * s->bar_w, (double)json_integer_value(json_array_get(counts, i)));
    cb__rep_chart_mark(&c, 1, num(sh, "mean"), CB__REP_TONE_WARN, "mean %.4g", num(sh, "mean"));
    cb__rep_chart_mark(&c, 1, 0, CB__REP_TONE_MUTED, "no shift");
  }
  cb__rep_doc_chart_end(d, &c, "no pair was scored");
  json_t *ag = json_object_get(doc, "agreement"), *tau = json_object_get(ag, "kendall_tau_b"),
         *rho = json_object_get(ag, "spearman");
  cb__rep_doc_para(d, 0,
                   "Shift over %.0f pairs: mean %.4g, sd %.4g, p5 %.4g, p50 %.4g, p95 %.4g. Rankings per "
                   "query (%.0f queries): Kendall tau-b %.4f (%.4f \xE2\x80\x93 %.4f), Spearman %.4f "
                   "(%.4f \xE2\x80\x93 %.4f).",
                   num(sh, "n"), num(sh, "mean"), num(sh, "sd"), num(sh, "p5"), num(sh, "p50"),
                   num(sh, "p95"), num(ag, "queries"), num(tau, "mean"), num(tau, "lo"), num(tau, "hi"),
                   num(rho, "mean"), num(rho, "lo"), num(rho, "hi"));
}

static void calibration_part(cb__rep_doc *d, json_t *doc) {
  json_t *cal = json_object_get(doc, "calibration"), *rows = json_object_get(cal, "rows");
  if (!json_array_size(rows)) return;
  const char *obj = json_string_value(json_object_get(cal, "objective"));
  double best = num(cal, "alpha");
  cb__rep_doc_para(d, 0,
                   "Power-norm calibration: scores q.d / (|q| |d|)^alpha (alpha 0: the raw dot "
                   "product, 1: the cosine, which no rescaling changes); the alpha of the sweep "
                   "with the smallest %s is chosen%s.",
                   obj && !strcmp(obj, "mad") ? "mean |score_b - score_a|"
                                              : "KS distance between the two score distributions",
                   isfinite(best) ? "" : " (none could be)");
  cb__rep_table t;
  char rk[32], rkb[32];
  snprintf(rk, sizeof rk, "recall@%.0f a", num(cal, "k"));
  snprintf(rkb, sizeof rkb, "recall@%.0f b", num(cal, "k"));
  const char *head[] = {"alpha", "", "KS", "mean |delta|", rk, rkb};
  cb__rep_table_init_head(&t, "rlrrrr", head, 6);
  size_t i;
  json_t *row;
  json_array_foreach(rows, i, row) {
    double a = num(row, "alpha");
    int swept = json_is_true(json_object_get(row, "swept"));
    cb__rep_table_add(&t, 0, "%.3g", a);
    cb__rep_table_add(&t, a == best ? CB__REP_TONE_GOOD : CB__REP_TONE_MUTED, "%s",
                      a == best ? "chosen" : a == 0 ? "before (raw dot)" : a == 1 && !swept ? "cosine"
                                                                                          : "");
    cb__rep_table_add(&t, 0, "%.4f", num(row, "ks"));
    cb__rep_table_add(&t, 0, "%.4g", num(row, "mad"));
    cb__rep_table_add(&t, 0, "%.4f", num(row, "recall_a"));
    cb__rep_table_add(&t, 0, "%.4f", num(row, "recall_b"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_probe_embed(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)r;
  (void)run;
  json_t *ds = json_object_get(doc, "dataset");
  cb__rep_doc_para(d, 0, "%.0f queries x %.0f documents (%.0f judgments, %.0f relevant).",
                   num(ds, "queries"), num(ds, "documents"), num(ds, "judgments"), num(ds, "relevant"));
  models_part(d, doc);
  shift_part(d, doc);
  calibration_part(d, doc);
}
