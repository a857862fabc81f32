/*
 * drift_bins.c - two numeric samples (benchmark and production prompt lengths, say)
 * binned on shared edges, so drift compares them as distributions over the same bins.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "cstat_internal.h"

static void edge_text(double e, char *out, size_t n) {
  if (e == floor(e) && fabs(e) < 1e15)
    snprintf(out, n, "%.0f", e);
  else
    snprintf(out, n, "%.6g", e);
}

static void bin_label(const double *edges, size_t i, bool closed, char *out, size_t n) {
  char a[32], b[32];
  edge_text(edges[i], a, sizeof a);
  edge_text(edges[i + 1], b, sizeof b);
  snprintf(out, n, "[%s, %s%c", a, b, closed ? ']' : ')');
}

cb_status cb_calib_dist_bin_pair(const double *a, size_t na, const double *b, size_t nb,
                                 const double *edges, size_t n_edges, size_t bins,
                                 cb_calib_dist *bench, cb_calib_dist *prod, double **edges_out,
                                 size_t *n_edges_out, cb_error *err) {
  cb_calib_dist_init(bench);
  cb_calib_dist_init(prod);
  if (na == 0 || nb == 0)
    return cb_error_set(err, CB_ERR_INVALID, "binning: the %s sample is empty",
                        na == 0 ? "benchmark" : "production");
  double *e;
  size_t ne;
  bool auto_edges = !edges;
  if (auto_edges) {
    if (bins < 1 || bins > 10000)
      return cb_error_set(err, CB_ERR_INVALID, "binning: bins must be in [1, 10000], got %zu",
                          bins);
    double *pooled = cb_malloc((na + nb) * sizeof *pooled);
    memcpy(pooled, a, na * sizeof *a);
    memcpy(pooled + na, b, nb * sizeof *b);
    for (size_t i = 0; i < na + nb; i++)
      if (!isfinite(pooled[i])) {
        cb_free(pooled);
        return cb_error_set(err, CB_ERR_INVALID, "binning: %s value %zu is not finite",
                            i < na ? "benchmark" : "production", i < na ? i + 1 : i - na + 1);
      }
    cb_stats_sort(pooled, na + nb);
    e = cb_malloc((bins + 1) * sizeof *e);
    ne = cb_stats_quantile_edges(pooled, na + nb, bins, e);
    cb_free(pooled);
  } else {
    e = cb_malloc(n_edges * sizeof *e);
    memcpy(e, edges, n_edges * sizeof *e);
    ne = n_edges;
  }
  size_t nbins = ne > 1 ? ne - 1 : 1;
  double *ca = cb_calloc(nbins, sizeof *ca), *cb = cb_calloc(nbins, sizeof *cb);
  uint64_t below_a = 0, above_a = 0, below_b = 0, above_b = 0;
  cb_status st = cb_stats_bin_count(a, na, e, ne, auto_edges, ca, &below_a, &above_a, err);
  if (st == CB_OK) st = cb_stats_bin_count(b, nb, e, ne, auto_edges, cb, &below_b, &above_b, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "binning");
    goto out;
  }
  char label[80], t[32];
  if (below_a || below_b) {
    edge_text(e[0], t, sizeof t);
    snprintf(label, sizeof label, "< %s", t);
    cb_calib_dist_add(bench, label, (double)below_a, NULL);
    cb_calib_dist_add(prod, label, (double)below_b, NULL);
  }
  for (size_t i = 0; i < nbins; i++) {
    bin_label(e, i, auto_edges && i + 1 == nbins, label, sizeof label);
    cb_calib_dist_add(bench, label, ca[i], NULL);
    cb_calib_dist_add(prod, label, cb[i], NULL);
  }
  if (above_a || above_b) {
    edge_text(e[ne - 1], t, sizeof t);
    snprintf(label, sizeof label, ">= %s", t);
    cb_calib_dist_add(bench, label, (double)above_a, NULL);
    cb_calib_dist_add(prod, label, (double)above_b, NULL);
  }
  if (bench->len != prod->len || bench->len < nbins) {
    /* two bins printed alike (edges closer than the label's 6 digits) */
    st = cb_error_set(err, CB_ERR_INVALID, "binning: bin edges too close to tell apart");
    goto out;
  }
  bench->kind = prod->kind = CB_CALIB_DIST_BINNED;
  bench->sample_size = na;
  prod->sample_size = nb;
  if (edges_out) {
    *edges_out = e;
    *n_edges_out = ne;
    e = NULL;
  }
out:
  cb_free(e);
  cb_free(ca);
  cb_free(cb);
  if (st != CB_OK) {
    cb_calib_dist_free(bench);
    cb_calib_dist_free(prod);
  }
  return st;
}
