/*
 * sort.c - cb_stats_sort: ascending, NaNs last.
 *
 * Summaries sort every latency sample (a 100,000-request prediction has 2.4 M ITL
 * gaps); qsort's comparison callback made that a fifth of `sim run`'s time. Large
 * inputs are LSD radix-sorted on the IEEE-754 bit patterns instead, mapped to
 * unsigned keys whose order is the numbers' order (negatives: all bits flipped;
 * positives and +0: sign bit set). One pass counts all eight byte digits; a byte that
 * is the same in every key is skipped. NaNs are moved to the end first: they have no
 * order, so they need none.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"

/* Below this size the O(n log n) sort's constant wins over eight counting passes. */
#define RADIX_MIN 256

static void insertion_sort(double *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    double x = v[i];
    size_t j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

static uint64_t key_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (u >> 63) ? ~u : u | UINT64_C(0x8000000000000000);
}

static double value_of(uint64_t k) {
  uint64_t u = (k >> 63) ? k & ~UINT64_C(0x8000000000000000) : ~k;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* The keys live in v's own storage (same size, copied through memcpy), so one scratch
 * array of n is the only extra memory: for 25 M ITL gaps that is 200 MB less. */
static void radix_sort(double *v, size_t n) {
  uint64_t *b = cb_malloc(n * sizeof *b);
  size_t count[8][256] = {{0}};
  for (size_t i = 0; i < n; i++) {
    uint64_t k = key_of(v[i]);
    memcpy(&v[i], &k, sizeof k);
    for (int d = 0; d < 8; d++) count[d][(k >> (8 * d)) & 0xff]++;
  }
  unsigned char *a = (unsigned char *)v, *o = (unsigned char *)b;
  for (int d = 0; d < 8; d++) {
    size_t *c = count[d];
    uint64_t k0;
    memcpy(&k0, a, sizeof k0);
    if (c[(k0 >> (8 * d)) & 0xff] == n) continue; /* one value of this digit: no-op pass */
    size_t sum = 0;
    for (int x = 0; x < 256; x++) {
      size_t t = c[x];
      c[x] = sum;
      sum += t;
    }
    for (size_t i = 0; i < n; i++) {
      uint64_t k;
      memcpy(&k, a + i * sizeof k, sizeof k);
      memcpy(o + c[(k >> (8 * d)) & 0xff]++ * sizeof k, &k, sizeof k);
    }
    unsigned char *t = a;
    a = o;
    o = t;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t k;
    memcpy(&k, a + i * sizeof k, sizeof k);
    v[i] = value_of(k);
  }
  cb_free(b);
}

void cb_stats_sort(double *values, size_t n) {
  /* NaNs to the end (swap each with the last non-NaN). */
  size_t m = n;
  for (size_t i = 0; i < m; i++) {
    if (!isnan(values[i])) continue;
    while (m > i + 1 && isnan(values[m - 1])) m--;
    double t = values[i];
    values[i] = values[--m];
    values[m] = t;
  }
  if (m < RADIX_MIN)
    insertion_sort(values, m);
  else
    radix_sort(values, m);
}
