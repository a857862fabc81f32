/*
 * sort.c - cb_stats_sort: ascending, NaNs last.
 *
 * Summaries sort every latency sample (a 100,000-request prediction has 2.4 M ITL
 * gaps); qsort's comparison callback made that a fifth of `sim run`'s time. Large
 * inputs are radix-sorted on the IEEE-754 bit patterns instead, mapped to unsigned
 * keys whose order is the numbers' order (negatives: all bits flipped; positives and
 * +0: sign bit set), most significant byte first and in place (no scratch array: a
 * 256-token trace has 15 M gaps); a byte that is the same in every key of a bucket
 * costs one counting pass. NaNs are moved to the end first: they have no order, so
 * they need none.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "calibench/stats.h"
#include "sort_internal.h"

/* Below this size the O(n log n) sort's constant wins over the radix passes. */
#define RADIX_MIN 256

void cb__stats_insertion_sort(double *v, size_t n) {
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

static uint64_t load(const unsigned char *p) {
  uint64_t k;
  memcpy(&k, p, sizeof k);
  return k;
}
static void store(unsigned char *p, uint64_t k) { memcpy(p, &k, sizeof k); }

enum { FLAG_SMALL = 32 };

/* Keys base[0..n) (8 bytes each) ordered on their bytes shift/8 and below: American
 * flag sort (P. M. McIlroy, K. Bostic, M. D. McIlroy, "Engineering radix sort",
 * Computing Systems 6(1), 1993): count a byte, move each key to its bucket by
 * following permutation cycles in place, recurse into each bucket on the next byte. */
static void flag_sort(unsigned char *base, size_t n, int shift) {
  if (n <= FLAG_SMALL) {
    for (size_t i = 1; i < n; i++) {
      uint64_t x = load(base + i * 8);
      size_t j = i;
      for (; j > 0 && load(base + (j - 1) * 8) > x; j--) store(base + j * 8, load(base + (j - 1) * 8));
      store(base + j * 8, x);
    }
    return;
  }
  size_t count[256] = {0};
  for (size_t i = 0; i < n; i++) count[(load(base + i * 8) >> shift) & 0xff]++;
  if (count[(load(base) >> shift) & 0xff] == n) { /* one value of this byte: next byte */
    if (shift) flag_sort(base, n, shift - 8);
    return;
  }
  size_t next[256], end[256], sum = 0;
  for (int b = 0; b < 256; b++) {
    next[b] = sum;
    sum += count[b];
    end[b] = sum;
  }
  for (int b = 0; b < 256; b++)
    while (next[b] < end[b]) {
      uint64_t k = load(base + next[b] * 8);
      int d = (int)((k >> shift) & 0xff);
      while (d != b) { /* k goes to bucket d; carry on with the key it displaces */
        size_t at = next[d]++;
        uint64_t t = load(base + at * 8);
        store(base + at * 8, k);
        k = t;
        d = (int)((k >> shift) & 0xff);
      }
      store(base + next[b]++ * 8, k);
    }
  if (!shift) return;
  size_t at = 0;
  for (int b = 0; b < 256; b++) {
    if (count[b] > 1) flag_sort(base + at * 8, count[b], shift - 8);
    at += count[b];
  }
}

/* In place: the keys replace the values in their own storage (same size, through
 * memcpy) and are ordered there, so sorting 15 M ITL gaps needs no second array. */
static void radix_sort(double *v, size_t n) {
  unsigned char *base = (unsigned char *)v;
  for (size_t i = 0; i < n; i++) store(base + i * 8, key_of(v[i]));
  flag_sort(base, n, 56);
  for (size_t i = 0; i < n; i++) v[i] = value_of(load(base + i * 8));
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
    cb__stats_insertion_sort(values, m);
  else
    radix_sort(values, m);
}
