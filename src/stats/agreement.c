/*
 * agreement.c - how well two raters agree (a judge and people, a judge and itself):
 * Pearson's r, Spearman's rho, Kendall's tau-b and Cohen's kappa, each computed the way
 * its reference computes it, so the numbers compare with SciPy 1.10 / scikit-learn 1.2:
 *   pearson    scipy.stats.pearsonr(x, y).statistic
 *   spearman   scipy.stats.spearmanr(x, y).statistic (Pearson of average ranks)
 *   kendall    scipy.stats.kendalltau(x, y).statistic (variant "b")
 *   kappa_*    sklearn.metrics.cohen_kappa_score(a, b, weights=None|"linear"|"quadratic")
 * Undefined cases give NAN where the references give nan (a constant input, n < 2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

double cb_stats_pearson(const double *x, const double *y, size_t n) {
  if (n < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  double sxx = 0, syy = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  /* SciPy: a constant input has no correlation (it warns and returns nan). */
  if (sxx == 0 || syy == 0) return NAN;
  double r = sxy / (sqrt(sxx) * sqrt(syy));
  return r > 1 ? 1 : r < -1 ? -1 : r;
}

typedef struct ranked {
  double v;
  size_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *p = a, *q = b;
  if (p->v != q->v) return (p->v > q->v) - (p->v < q->v);
  return (p->i > q->i) - (p->i < q->i);
}

void cb_stats_rank_average(const double *x, size_t n, double *ranks) {
  ranked *r = cb_malloc((n ? n : 1) * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (ranked){x[i], i};
  qsort(r, n, sizeof *r, cmp_ranked);
  for (size_t k = 0; k < n;) {
    size_t e = k + 1;
    while (e < n && r[e].v == r[k].v) e++;
    /* ranks k+1 .. e share their mean */
    double avg = ((double)(k + 1) + (double)e) / 2;
    for (size_t j = k; j < e; j++) ranks[r[j].i] = avg;
    k = e;
  }
  cb_free(r);
}

double cb_stats_spearman(const double *x, const double *y, size_t n) {
  if (n < 2) return NAN;
  double *rx = cb_malloc(2 * n * sizeof *rx);
  double *ry = rx + n;
  cb_stats_rank_average(x, n, rx);
  cb_stats_rank_average(y, n, ry);
  double rho = cb_stats_pearson(rx, ry, n);
  cb_free(rx);
  return rho;
}

typedef struct pair {
  double x, y;
} pair;

static int cmp_xy(const void *a, const void *b) {
  const pair *p = a, *q = b;
  if (p->x != q->x) return (p->x > q->x) - (p->x < q->x);
  return (p->y > q->y) - (p->y < q->y);
}

/* Sort v[0..n) by y, returning the number of inversions (pairs i < j, y_i > y_j). */
static double merge_count(pair *v, pair *tmp, size_t n) {
  if (n < 2) return 0;
  size_t h = n / 2;
  double inv = merge_count(v, tmp, h) + merge_count(v + h, tmp, n - h);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) {
    if (v[j].y < v[i].y) {
      inv += (double)(h - i);
      tmp[k++] = v[j++];
    } else {
      tmp[k++] = v[i++];
    }
  }
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
  return inv;
}

/* Pairs tied within runs: sum of t (t - 1) / 2 over runs of equal keys. */
static double tied_pairs(size_t run) { return (double)run * (double)(run - 1) / 2; }

/* Knight's O(n log n) count (Knight 1966), the one SciPy's kendalltau uses. */
double cb_stats_kendall_tau_b(const double *x, const double *y, size_t n) {
  if (n < 2) return NAN;
  pair *v = cb_malloc(2 * n * sizeof *v);
  pair *tmp = v + n;
  for (size_t i = 0; i < n; i++) v[i] = (pair){x[i], y[i]};
  qsort(v, n, sizeof *v, cmp_xy);
  double xtie = 0, ntie = 0;
  for (size_t k = 0, e; k < n; k = e) {
    for (e = k + 1; e < n && v[e].x == v[k].x; e++) {}
    xtie += tied_pairs(e - k);
    for (size_t a = k, b; a < e; a = b) {
      for (b = a + 1; b < e && v[b].y == v[a].y; b++) {}
      ntie += tied_pairs(b - a);
    }
  }
  double dis = merge_count(v, tmp, n);
  double ytie = 0;
  for (size_t k = 0, e; k < n; k = e) {
    for (e = k + 1; e < n && v[e].y == v[k].y; e++) {}
    ytie += tied_pairs(e - k);
  }
  cb_free(v);
  double tot = tied_pairs(n);
  if (xtie == tot || ytie == tot) return NAN; /* a constant input */
  double con_minus_dis = tot - xtie - ytie + ntie - 2 * dis;
  double tau = con_minus_dis / sqrt(tot - xtie) / sqrt(tot - ytie);
  return tau > 1 ? 1 : tau < -1 ? -1 : tau;
}

static int cmp_double(const void *a, const void *b) {
  double p = *(const double *)a, q = *(const double *)b;
  return (p > q) - (p < q);
}

static size_t label_index(const double *labels, size_t k, double v) {
  const double *hit = bsearch(&v, labels, k, sizeof *labels, cmp_double);
  return (size_t)(hit - labels);
}

double cb_stats_cohen_kappa(const double *a, const double *b, size_t n,
                            cb_stats_kappa_weights weights) {
  if (n == 0) return NAN;
  /* sklearn takes whole-number labels only ("continuous is not supported") */
  for (size_t i = 0; i < n; i++)
    if (a[i] != floor(a[i]) || b[i] != floor(b[i])) return NAN;
  /* sklearn: the labels are the sorted union of both raters' values; the weights
   * are distances between label indices, not between the values. */
  double *labels = cb_malloc(2 * n * sizeof *labels);
  memcpy(labels, a, n * sizeof *labels);
  memcpy(labels + n, b, n * sizeof *labels);
  qsort(labels, 2 * n, sizeof *labels, cmp_double);
  size_t k = 0;
  for (size_t i = 0; i < 2 * n; i++)
    if (i == 0 || labels[i] != labels[k - 1]) labels[k++] = labels[i];
  double *cm = cb_calloc(k * k + 2 * k, sizeof *cm);
  double *rows = cm + k * k, *cols = rows + k;
  for (size_t i = 0; i < n; i++) {
    size_t r = label_index(labels, k, a[i]), c = label_index(labels, k, b[i]);
    cm[r * k + c] += 1;
    rows[r] += 1;
    cols[c] += 1;
  }
  double observed = 0, expected = 0;
  for (size_t r = 0; r < k; r++)
    for (size_t c = 0; c < k; c++) {
      double d = r > c ? (double)(r - c) : (double)(c - r);
      double w = weights == CB_STATS_KAPPA_LINEAR      ? d
                 : weights == CB_STATS_KAPPA_QUADRATIC ? d * d
                                                       : (r != c);
      observed += w * cm[r * k + c];
      expected += w * rows[r] * cols[c] / (double)n;
    }
  cb_free(cm);
  cb_free(labels);
  /* sklearn divides 0 by 0 (every value one label) into nan */
  if (expected == 0) return NAN;
  return 1 - observed / expected;
}

const char *cb_stats_agreement_name(cb_stats_agreement_kind kind) {
  static const char *const names[CB_STATS_AGREE_COUNT] = {
      "pearson", "spearman", "kendall_tau_b", "kappa", "kappa_linear", "kappa_quadratic"};
  return (unsigned)kind < CB_STATS_AGREE_COUNT ? names[kind] : "?";
}

double cb_stats_agreement(cb_stats_agreement_kind kind, const double *x, const double *y,
                          size_t n) {
  switch (kind) {
  case CB_STATS_AGREE_PEARSON: return cb_stats_pearson(x, y, n);
  case CB_STATS_AGREE_SPEARMAN: return cb_stats_spearman(x, y, n);
  case CB_STATS_AGREE_KENDALL_TAU_B: return cb_stats_kendall_tau_b(x, y, n);
  case CB_STATS_AGREE_KAPPA: return cb_stats_cohen_kappa(x, y, n, CB_STATS_KAPPA_UNWEIGHTED);
  case CB_STATS_AGREE_KAPPA_LINEAR: return cb_stats_cohen_kappa(x, y, n, CB_STATS_KAPPA_LINEAR);
  case CB_STATS_AGREE_KAPPA_QUADRATIC:
    return cb_stats_cohen_kappa(x, y, n, CB_STATS_KAPPA_QUADRATIC);
  case CB_STATS_AGREE_COUNT: break;
  }
  return NAN;
}
