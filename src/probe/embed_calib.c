/*
 * embed_calib.c - `probe embed`'s calibration (docs/probe.md, "probe embed"): the
 * power-norm rescaling v / |v|^alpha of both models' vectors, swept over alpha, and
 * the alpha whose two score distributions are closest.
 *
 * Cosine ignores every norm, so a rescaling cannot change it: what alpha changes is
 * the dot product of the rescaled vectors, q.d / (|q| |d|)^alpha, which an index that
 * ranks or thresholds by inner product uses. alpha 0 is the raw dot product (no
 * rescaling: "before"), alpha 1 the cosine; both are shown beside the sweep.
 *
 * The objective, over every (query, document) pair scored by both models:
 *  - ks: the two-sample Kolmogorov-Smirnov distance between the models' score
 *    distributions (sup of the difference of their empirical CDFs): whether one
 *    threshold, or one merged list, means the same under either model;
 *  - mad: the mean |score_b - score_a| of the same pair (paired).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/stats.h"
#include "embed_internal.h"

typedef struct calib_row {
  double alpha;
  int swept;            /* in the --alpha list (a reference row otherwise) */
  double ks, mad;
  double recall_a, recall_b;
} calib_row;

static void score_row(const cb_probe_embed_set *s, const cb__probe_embed_model *a,
                      const cb__probe_embed_model *b, const long *rel, size_t k,
                      calib_row *row) {
  size_t Q = s->n_queries, D = s->n_docs, n = Q * D;
  double *x = cb_calloc(n, sizeof *x), *y = cb_calloc(n, sizeof *y), mad = 0;
  for (size_t q = 0; q < Q; q++)
    for (size_t d = 0; d < D; d++) {
      x[q * D + d] = cb__probe_embed_score(a, D, q, d, row->alpha);
      y[q * D + d] = cb__probe_embed_score(b, D, q, d, row->alpha);
      mad += fabs(y[q * D + d] - x[q * D + d]);
    }
  qsort(x, n, sizeof *x, cb__probe_embed_double_cmp);
  qsort(y, n, sizeof *y, cb__probe_embed_double_cmp);
  row->ks = cb_stats_ks_2samp_d(x, n, y, n);
  row->mad = mad / (double)n;
  double *recall = cb_calloc(Q, sizeof *recall), *ndcg = cb_calloc(Q, sizeof *ndcg), lo, hi;
  cb__probe_embed_retrieval(s, a, rel, row->alpha, k, recall, ndcg);
  cb__probe_embed_mean_interval(recall, Q, 0, 1, &row->recall_a, &lo, &hi);
  cb__probe_embed_retrieval(s, b, rel, row->alpha, k, recall, ndcg);
  cb__probe_embed_mean_interval(recall, Q, 0, 1, &row->recall_b, &lo, &hi);
  cb_free(recall);
  cb_free(ndcg);
  cb_free(x);
  cb_free(y);
}

static double objective(const calib_row *r, int which) {
  return which == CB_PROBE_EMBED_MAD ? r->mad : r->ks;
}

static json_t *row_json(const calib_row *r, int which) {
  return json_pack("{s:f, s:b, s:o, s:o, s:o, s:o, s:o}", "alpha", r->alpha, "swept", r->swept,
                   "objective", cb__probe_embed_num(objective(r, which)), "ks",
                   cb__probe_embed_num(r->ks), "mad", cb__probe_embed_num(r->mad), "recall_a",
                   cb__probe_embed_num(r->recall_a), "recall_b", cb__probe_embed_num(r->recall_b));
}

cb_status cb__probe_embed_calibrate(const cb_probe_embed_set *s, const cb_probe_embed_params *p,
                                    const cb__probe_embed_model *a,
                                    const cb__probe_embed_model *b, const long *rel,
                                    json_t *doc, cb_error *err) {
  /* the recall shown is at the largest cutoff */
  size_t k = p->ks[p->n_ks - 1];
  calib_row rows[34];
  size_t n = 0;
  rows[n++] = (calib_row){.alpha = 0};
  for (size_t i = 0; i < p->n_alphas; i++) {
    if (p->alphas[i] == 0) {
      rows[0].swept = 1;
      continue;
    }
    if (p->alphas[i] == 1) continue;
    rows[n++] = (calib_row){.alpha = p->alphas[i], .swept = 1};
  }
  rows[n++] = (calib_row){.alpha = 1};
  for (size_t i = 0; i < p->n_alphas; i++)
    if (p->alphas[i] == 1) rows[n - 1].swept = 1;
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    score_row(s, a, b, rel, k, &rows[i]);
    if (rows[i].swept && isfinite(objective(&rows[i], p->objective)) &&
        (best == SIZE_MAX || objective(&rows[i], p->objective) < objective(&rows[best], p->objective)))
      best = i;
  }
  json_t *o = json_object(), *arr = json_array();
  json_object_set_new(doc, "calibration", o);
  json_object_set_new(o, "objective", json_string(p->objective == CB_PROBE_EMBED_MAD ? "mad" : "ks"));
  json_object_set_new(o, "k", json_integer((json_int_t)k));
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, row_json(&rows[i], p->objective));
  json_object_set_new(o, "rows", arr);
  json_object_set_new(o, "before", row_json(&rows[0], p->objective));
  if (best == SIZE_MAX) {
    json_object_set_new(o, "alpha", json_null());
    json_object_set_new(o, "after", json_null());
    return CB_OK;
  }
  json_object_set_new(o, "alpha", json_real(rows[best].alpha));
  json_object_set_new(o, "after", row_json(&rows[best], p->objective));
  cb_status st = cb_probe_json_metric(doc, "align_before", objective(&rows[0], p->objective), NAN,
                                      NAN, 0, err);
  if (st == CB_OK)
    st = cb_probe_json_metric(doc, "align_after", objective(&rows[best], p->objective), NAN, NAN,
                              0, err);
  return st;
}
