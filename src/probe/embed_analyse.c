/*
 * embed_analyse.c - `probe embed`'s numbers from the two models' vectors
 * (probe_embed.h; docs/probe.md, "probe embed"): per model, across models, and the
 * power-norm calibration (embed_calib.c), into the probe.json document.
 *
 * Every (query, document) pair is scored by both models: the dot products are kept
 * per model, from which the cosine (dot / (|q| |d|)) and every power-norm score
 * (dot / (|q| |d|)^alpha) follow without touching the vectors again.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/stats.h"
#include "embed_internal.h"

void cb_probe_embed_params_init(cb_probe_embed_params *p) {
  memset(p, 0, sizeof *p);
  static const size_t ks[] = {1, 5, 10};
  memcpy(p->ks, ks, sizeof ks);
  p->n_ks = 3;
  for (int i = 0; i < 5; i++) p->alphas[i] = 0.5 + 0.1 * i;
  p->n_alphas = 5;
  p->objective = CB_PROBE_EMBED_KS;
  p->bins = 40;
}

json_t *cb__probe_embed_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

void cb__probe_embed_mean_interval(const double *x, size_t n, double min, double max,
                                   double *mean, double *lo, double *hi) {
  double s = 0, ss = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  *mean = n ? s / (double)n : NAN;
  for (size_t i = 0; i < n; i++) ss += (x[i] - *mean) * (x[i] - *mean);
  /* the normal interval of a mean over queries: mean +- 1.96 sd / sqrt(n) */
  double half = n > 1 ? 1.959963984540054 * sqrt(ss / (double)(n - 1)) / sqrt((double)n) : NAN;
  /* clipped to the statistic's range (a mean of recalls near 0 has no negative values) */
  *lo = fmax(*mean - half, min);
  *hi = fmin(*mean + half, max);
}

/* mean, sd and percentiles of x (sorted here, in place) */
static json_t *distribution(double *x, size_t n) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)n));
  if (!n) return o;
  qsort(x, n, sizeof *x, cb__probe_embed_double_cmp);
  double s = 0, ss = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  double mean = s / (double)n;
  for (size_t i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
  json_object_set_new(o, "mean", cb__probe_embed_num(mean));
  json_object_set_new(o, "sd", cb__probe_embed_num(n > 1 ? sqrt(ss / (double)(n - 1)) : NAN));
  static const struct { const char *name; double q; } Q[] = {
      {"min", 0}, {"p1", 0.01}, {"p5", 0.05}, {"p25", 0.25}, {"p50", 0.5},
      {"p75", 0.75}, {"p95", 0.95}, {"p99", 0.99}, {"max", 1}};
  for (size_t i = 0; i < sizeof Q / sizeof Q[0]; i++)
    json_object_set_new(o, Q[i].name, cb__probe_embed_num(cb_stats_quantile_sorted(x, n, Q[i].q)));
  return o;
}

int cb__probe_embed_double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The judged score of every (query, document) pair, 0 when unjudged. */
static long *relevance(const cb_probe_embed_set *s) {
  long *rel = cb_calloc(s->n_queries * s->n_docs, sizeof *rel);
  for (size_t i = 0; i < s->n_qrels; i++)
    rel[s->qrels[i].query * s->n_docs + s->qrels[i].doc] = s->qrels[i].score;
  return rel;
}

static double norm_of(const float *v, size_t dim) {
  double s = 0;
  for (size_t i = 0; i < dim; i++) s += (double)v[i] * v[i];
  return sqrt(s);
}

/* One model's norms and dot products. */
static void model_scores(const cb_probe_embed_set *s, const cb_probe_embed_vectors *v,
                         cb__probe_embed_model *m) {
  size_t Q = s->n_queries, D = s->n_docs;
  m->qnorm = cb_calloc(Q, sizeof *m->qnorm);
  m->dnorm = cb_calloc(D, sizeof *m->dnorm);
  m->dot = cb_calloc(Q * D, sizeof *m->dot);
  for (size_t q = 0; q < Q; q++) m->qnorm[q] = norm_of(v->queries + q * v->dim, v->dim);
  for (size_t d = 0; d < D; d++) m->dnorm[d] = norm_of(v->docs + d * v->dim, v->dim);
  for (size_t q = 0; q < Q; q++)
    for (size_t d = 0; d < D; d++) {
      const float *x = v->queries + q * v->dim, *y = v->docs + d * v->dim;
      double dot = 0;
      for (size_t i = 0; i < v->dim; i++) dot += (double)x[i] * y[i];
      m->dot[q * D + d] = dot;
    }
}

double cb__probe_embed_score(const cb__probe_embed_model *m, size_t D, size_t q, size_t d,
                             double alpha) {
  double n = m->qnorm[q] * m->dnorm[d];
  return alpha == 0 ? m->dot[q * D + d] : alpha == 1 ? m->dot[q * D + d] / n
                                                     : m->dot[q * D + d] / pow(n, alpha);
}

void cb__probe_embed_retrieval(const cb_probe_embed_set *s, const cb__probe_embed_model *m,
                               const long *rel, double alpha, size_t k, double *recall,
                               double *ndcg) {
  size_t D = s->n_docs;
  double *row = cb_calloc(D, sizeof *row);
  size_t *order = cb_calloc(D, sizeof *order);
  for (size_t q = 0; q < s->n_queries; q++) {
    for (size_t d = 0; d < D; d++) row[d] = cb__probe_embed_score(m, D, q, d, alpha);
    cb_probe_embed_rank(row, s->doc_ids, D, order);
    cb_probe_embed_query_scores(order, D, rel + q * D, k, &recall[q], &ndcg[q]);
  }
  cb_free(row);
  cb_free(order);
}

/* Per model: norms, relevant vs other cosines, recall@k and nDCG@k by cosine. */
static cb_status per_model(const cb_probe_embed_set *s, const cb_probe_embed_params *p,
                           const cb__probe_embed_model *m, const long *rel, size_t dim,
                           const char *tag, json_t *doc, json_t **out, cb_error *err) {
  size_t Q = s->n_queries, D = s->n_docs;
  json_t *o = json_object();
  *out = o;
  json_object_set_new(o, "dim", json_integer((json_int_t)dim));
  double *norms = cb_calloc(Q + D, sizeof *norms);
  memcpy(norms, m->qnorm, Q * sizeof *norms);
  memcpy(norms + Q, m->dnorm, D * sizeof *norms);
  json_object_set_new(o, "norms", distribution(norms, Q + D));
  cb_free(norms);
  double rs = 0, os = 0;
  size_t rn = 0, on = 0;
  for (size_t q = 0; q < Q; q++)
    for (size_t d = 0; d < D; d++) {
      double c = cb__probe_embed_score(m, D, q, d, 1);
      if (rel[q * D + d] >= 1) rs += c, rn++;
      else os += c, on++;
    }
  double rmean = rn ? rs / (double)rn : NAN, omean = on ? os / (double)on : NAN;
  json_object_set_new(o, "cos_relevant", json_pack("{s:o, s:I}", "mean", cb__probe_embed_num(rmean), "n", (json_int_t)rn));
  json_object_set_new(o, "cos_other", json_pack("{s:o, s:I}", "mean", cb__probe_embed_num(omean), "n", (json_int_t)on));
  json_object_set_new(o, "gap", cb__probe_embed_num(rmean - omean));
  char name[64];
  cb_status st = CB_OK;
  if (isfinite(rmean - omean)) {
    snprintf(name, sizeof name, "gap_%s", tag);
    st = cb_probe_json_metric(doc, name, rmean - omean, NAN, NAN, 1, err);
  }
  json_t *ret = json_array();
  json_object_set_new(o, "retrieval", ret);
  double *recall = cb_calloc(Q, sizeof *recall), *ndcg = cb_calloc(Q, sizeof *ndcg);
  for (size_t i = 0; i < p->n_ks && st == CB_OK; i++) {
    cb__probe_embed_retrieval(s, m, rel, 1, p->ks[i], recall, ndcg);
    double rm, rlo, rhi, nm, nlo, nhi;
    cb__probe_embed_mean_interval(recall, Q, 0, 1, &rm, &rlo, &rhi);
    cb__probe_embed_mean_interval(ndcg, Q, 0, 1, &nm, &nlo, &nhi);
    json_array_append_new(ret, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "k", (json_int_t)p->ks[i],
                                         "recall", cb__probe_embed_num(rm), "recall_lo", cb__probe_embed_num(rlo),
                                         "recall_hi", cb__probe_embed_num(rhi), "ndcg", cb__probe_embed_num(nm),
                                         "ndcg_lo", cb__probe_embed_num(nlo), "ndcg_hi", cb__probe_embed_num(nhi)));
    snprintf(name, sizeof name, "recall_at_%zu_%s", p->ks[i], tag);
    st = cb_probe_json_metric(doc, name, rm, rlo, rhi, 1, err);
    snprintf(name, sizeof name, "ndcg_at_%zu_%s", p->ks[i], tag);
    if (st == CB_OK) st = cb_probe_json_metric(doc, name, nm, nlo, nhi, 1, err);
  }
  cb_free(recall);
  cb_free(ndcg);
  return st;
}

/* Kendall's tau-b and Spearman's rho of the two models' cosines, query by query. */
static cb_status agreement(const cb_probe_embed_set *s, const cb__probe_embed_model *a,
                           const cb__probe_embed_model *b, json_t *doc, cb_error *err) {
  size_t Q = s->n_queries, D = s->n_docs, n = 0;
  double *x = cb_calloc(D, sizeof *x), *y = cb_calloc(D, sizeof *y);
  double *tau = cb_calloc(Q, sizeof *tau), *rho = cb_calloc(Q, sizeof *rho);
  for (size_t q = 0; q < Q; q++) {
    for (size_t d = 0; d < D; d++) {
      x[d] = cb__probe_embed_score(a, D, q, d, 1);
      y[d] = cb__probe_embed_score(b, D, q, d, 1);
    }
    double t = cb_stats_kendall_tau_b(x, y, D), r = cb_stats_spearman(x, y, D);
    /* undefined when a model gives every document the same score */
    if (!isfinite(t) || !isfinite(r)) continue;
    tau[n] = t;
    rho[n++] = r;
  }
  json_t *o = json_object();
  json_object_set_new(doc, "agreement", o);
  json_object_set_new(o, "queries", json_integer((json_int_t)n));
  json_object_set_new(o, "undefined", json_integer((json_int_t)(Q - n)));
  cb_status st = CB_OK;
  static const char *const names[] = {"kendall_tau_b", "spearman"};
  static const char *const metric[] = {"tau_mean", "spearman_mean"};
  double *v[] = {tau, rho};
  for (int i = 0; i < 2; i++) {
    double m, lo, hi;
    cb__probe_embed_mean_interval(v[i], n, -1, 1, &m, &lo, &hi);
    json_t *dist = distribution(v[i], n);
    json_object_set_new(dist, "lo", cb__probe_embed_num(lo));
    json_object_set_new(dist, "hi", cb__probe_embed_num(hi));
    json_object_set_new(o, names[i], dist);
    if (n && st == CB_OK) st = cb_probe_json_metric(doc, metric[i], m, lo, hi, 1, err);
  }
  cb_free(x);
  cb_free(y);
  cb_free(tau);
  cb_free(rho);
  return st;
}

/* The shift cos_b - cos_a of every pair: its distribution and histogram. */
static cb_status shifts(const cb_probe_embed_set *s, const cb_probe_embed_params *p,
                        const cb__probe_embed_model *a, const cb__probe_embed_model *b,
                        json_t *doc, cb_error *err) {
  size_t Q = s->n_queries, D = s->n_docs, n = Q * D;
  double *x = cb_calloc(n, sizeof *x), abs_sum = 0;
  for (size_t q = 0; q < Q; q++)
    for (size_t d = 0; d < D; d++) {
      x[q * D + d] = cb__probe_embed_score(b, D, q, d, 1) - cb__probe_embed_score(a, D, q, d, 1);
      abs_sum += fabs(x[q * D + d]);
    }
  json_t *o = distribution(x, n); /* sorts x */
  json_object_set_new(o, "abs_mean", cb__probe_embed_num(abs_sum / (double)n));
  /* the histogram over [min, max] (a single value: one bin around it) */
  double lo = x[0], hi = x[n - 1];
  if (hi - lo < 1e-12) lo -= 0.5e-3, hi += 0.5e-3;
  json_t *counts = json_array();
  size_t bin = 0, c = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = (size_t)((x[i] - lo) / (hi - lo) * (double)p->bins);
    if (k >= p->bins) k = p->bins - 1;
    while (bin < k) {
      json_array_append_new(counts, json_integer((json_int_t)c));
      c = 0;
      bin++;
    }
    c++;
  }
  for (; bin < p->bins; bin++, c = 0) json_array_append_new(counts, json_integer((json_int_t)c));
  json_object_set_new(o, "histogram", json_pack("{s:f, s:f, s:o}", "lo", lo, "hi", hi, "counts", counts));
  json_object_set_new(doc, "shift", o);
  cb_status st = cb_probe_json_metric(doc, "shift_abs_mean", abs_sum / (double)n, NAN, NAN, 0, err);
  double sd = json_real_value(json_object_get(o, "sd"));
  if (st == CB_OK && isfinite(sd)) st = cb_probe_json_metric(doc, "shift_sd", sd, NAN, NAN, 0, err);
  cb_free(x);
  return st;
}

cb_status cb_probe_embed_analyse(const cb_probe_embed_set *set, const cb_probe_embed_params *p,
                                 const cb_probe_embed_vectors *a,
                                 const cb_probe_embed_vectors *b, json_t *doc, cb_error *err) {
  if (!set->n_queries || !set->n_docs)
    return cb_error_set(err, CB_ERR_INVALID, "probe embed: no query or no document to score");
  if (set->n_queries > CB_PROBE_EMBED_MAX_PAIRS / set->n_docs)
    return cb_error_set(err, CB_ERR_CAPACITY,
                        "probe embed: %zu queries x %zu documents is over %zu pairs",
                        set->n_queries, set->n_docs, CB_PROBE_EMBED_MAX_PAIRS);
  cb__probe_embed_model ma = {0}, mb = {0};
  model_scores(set, a, &ma);
  model_scores(set, b, &mb);
  long *rel = relevance(set);
  json_t *ja = NULL, *jb = NULL;
  cb_status st = per_model(set, p, &ma, rel, a->dim, "a", doc, &ja, err);
  if (st == CB_OK) st = per_model(set, p, &mb, rel, b->dim, "b", doc, &jb, err);
  json_object_set_new(doc, "a", ja ? ja : json_object());
  json_object_set_new(doc, "b", jb ? jb : json_object());
  if (st == CB_OK) st = agreement(set, &ma, &mb, doc, err);
  if (st == CB_OK) st = shifts(set, p, &ma, &mb, doc, err);
  if (st == CB_OK) st = cb__probe_embed_calibrate(set, p, &ma, &mb, rel, doc, err);
  cb_free(rel);
  cb__probe_embed_model_free(&ma);
  cb__probe_embed_model_free(&mb);
  return st;
}

void cb__probe_embed_model_free(cb__probe_embed_model *m) {
  cb_free(m->qnorm);
  cb_free(m->dnorm);
  cb_free(m->dot);
}
