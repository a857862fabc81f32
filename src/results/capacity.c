/*
 * capacity.c - capacity at SLO over a load sweep.
 */
#include <math.h>

#include "calibench/results.h"

long cb_capacity_at_slo(const double *attainment, size_t n, double threshold) {
  long last = -1;
  for (size_t i = 0; i < n; i++) {
    if (!(attainment[i] >= threshold)) break; /* NaN fails this too */
    last = (long)i;
  }
  return last;
}
