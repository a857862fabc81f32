/*
 * holm.c - Holm's (1979) step-down adjustment: with m tests at family-wise level alpha,
 * reject H_(i) while p_(j) (m - j + 1) <= alpha for all j <= i. Adjusted p-values make
 * that a per-test comparison with alpha, so a gate with several statistical rules keeps
 * its chance of any false alarm on pure noise at or below the policy's alpha.
 */
#include <math.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

typedef struct pidx {
  double p;
  size_t i;
} pidx;

static int cmp_pidx(const void *a, const void *b) {
  const pidx *x = a, *y = b;
  if (x->p != y->p) return (x->p > y->p) - (x->p < y->p);
  return (x->i > y->i) - (x->i < y->i); /* stable: statsmodels sorts with mergesort */
}

void cb_stats_holm(const double *p, size_t m, double *adjusted) {
  pidx *v = cb_malloc((m ? m : 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < m; i++)
    if (!isnan(p[i])) v[k++] = (pidx){p[i], i};
  qsort(v, k, sizeof *v, cmp_pidx);
  for (size_t i = 0; i < m; i++)
    if (isnan(p[i])) adjusted[i] = NAN;
  double running = 0;
  for (size_t j = 0; j < k; j++) {
    double a = (double)(k - j) * v[j].p;
    if (a > 1) a = 1;
    if (a > running) running = a;
    adjusted[v[j].i] = running;
  }
  cb_free(v);
}
