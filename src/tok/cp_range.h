/*
 * cp_range.h - a property of code points as sorted, disjoint ranges, the form of the
 * generated Unicode tables (nfc_data.c, grapheme_data.c), and its lookup.
 */
#ifndef CALIBENCH_TOK_CP_RANGE_H
#define CALIBENCH_TOK_CP_RANGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cb__cp_range {
  uint32_t first, last;
  uint32_t value;
} cb__cp_range; /* sorted, disjoint */

/* The value of the range holding cp; 0 when none does. */
static inline uint32_t cb__cp_range_value(const cb__cp_range *r, size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < r[mid].first) hi = mid;
    else if (cp > r[mid].last) lo = mid + 1;
    else return r[mid].value;
  }
  return 0;
}

#endif
