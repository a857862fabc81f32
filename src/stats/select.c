/*
 * select.c - order statistics without a full sort.
 *
 * A summary needs the values at a dozen ranks, not the whole order: for sim run's
 * 15 M ITL gaps a sort (and its scratch array of n) was a tenth of the command.
 * Quickselect (C. A. R. Hoare, "Algorithm 65: FIND", CACM 4(7), 1961) with a
 * three-way partition (duplicates are common: equal step times) around a median of
 * three, recursing only into parts that hold a wanted rank; a part still unsettled
 * after 2 log2 n partitions is sorted instead, which bounds the worst case
 * (introselect, D. R. Musser, Software: Practice and Experience 27(8), 1997).
 */
#include <math.h>
#include <string.h>

#include "calibench/stats.h"
#include "sort_internal.h"

enum { SMALL = 16 };

static void swap(double *a, double *b) {
  double t = *a;
  *a = *b;
  *b = t;
}

static double median3(double a, double b, double c) {
  if (a > b) swap(&a, &b);
  if (b > c) swap(&b, &c);
  return a > b ? a : b;
}

/* Ranks rk[0..nr) (ascending, all in [lo, hi)) into place within v[lo, hi). */
static void select_part(double *v, size_t lo, size_t hi, const size_t *rk, size_t nr, int depth) {
  while (nr && hi - lo > SMALL) {
    if (depth-- <= 0) {
      cb_stats_sort(v + lo, hi - lo);
      return;
    }
    double pivot = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
    size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,gt) == pivot, [gt,hi) > */
    while (i < gt) {
      if (v[i] < pivot) swap(&v[lt++], &v[i++]);
      else if (v[i] > pivot) swap(&v[i], &v[--gt]);
      else i++;
    }
    size_t nl = 0, ne;
    while (nl < nr && rk[nl] < lt) nl++;
    for (ne = nl; ne < nr && rk[ne] < gt; ne++) {}
    select_part(v, lo, lt, rk, nl, depth);
    rk += ne;
    nr -= ne;
    lo = gt;
  }
  if (nr && hi > lo) cb__stats_insertion_sort(v + lo, hi - lo);
}

void cb_stats_select(double *values, size_t n, const size_t *ranks, size_t n_ranks) {
  int depth = 0;
  for (size_t m = n; m > 1; m >>= 1) depth += 2;
  select_part(values, 0, n, ranks, n_ranks, depth);
}
