/*
 * embed_internal.h - what the files of `probe embed` share (embed_analyse.c,
 * embed_calib.c): one model's norms and dot products over every (query, document)
 * pair, and the scores derived from them.
 */
#ifndef CALIBENCH_PROBE_EMBED_INTERNAL_H
#define CALIBENCH_PROBE_EMBED_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "calibench/probe_embed.h"

typedef struct cb__probe_embed_model {
  double *qnorm, *dnorm; /* |q| per query, |d| per document */
  double *dot;           /* q . d, n_queries x n_docs */
} cb__probe_embed_model;

void cb__probe_embed_model_free(cb__probe_embed_model *m);

/* The power-norm score dot(q / |q|^alpha, d / |d|^alpha) = q.d / (|q| |d|)^alpha:
 * alpha 0 the raw dot product, 1 the cosine. */
double cb__probe_embed_score(const cb__probe_embed_model *m, size_t n_docs, size_t q, size_t d,
                             double alpha);

/* recall@k and nDCG@k of every query (arrays of n_queries) ranked by that score. */
void cb__probe_embed_retrieval(const cb_probe_embed_set *s, const cb__probe_embed_model *m,
                               const long *rel, double alpha, size_t k, double *recall,
                               double *ndcg);

/* The alpha sweep into doc's "calibration" and its metrics (embed_calib.c). */
cb_status cb__probe_embed_calibrate(const cb_probe_embed_set *s, const cb_probe_embed_params *p,
                                    const cb__probe_embed_model *a,
                                    const cb__probe_embed_model *b, const long *rel,
                                    json_t *doc, cb_error *err);

/* A number, or null when it is not finite. */
json_t *cb__probe_embed_num(double x);
/* The mean of x[0..n) and its normal 95% interval, mean +- 1.96 sd / sqrt(n), clipped
 * to [min, max] (NAN bounds when n < 2). */
void cb__probe_embed_mean_interval(const double *x, size_t n, double min, double max,
                                   double *mean, double *lo, double *hi);
int cb__probe_embed_double_cmp(const void *a, const void *b);

#endif
