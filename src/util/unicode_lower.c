/*
 * unicode_lower.c - a code point's simple lowercase, by binary search of the generated
 * table (unicode_lower_data.c).
 */
#include "util/unicode_lower.h"

uint32_t cb__unicode_lower(uint32_t cp) {
  size_t lo = 0, hi = cb__unicode_lowers_len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cb__unicode_lowers[mid].cp < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < cb__unicode_lowers_len && cb__unicode_lowers[lo].cp == cp ? cb__unicode_lowers[lo].lower
                                                                         : cp;
}
