/*
 * unicode_lower.h - simple lowercase mappings of Unicode (generated into
 * unicode_lower_data.c by scripts/gen_unicode_lower.py), shared by tok's BERT
 * normalizer and eval's str.lower(): the same data in the versions each follows.
 */
#ifndef CALIBENCH_UTIL_UNICODE_LOWER_H
#define CALIBENCH_UTIL_UNICODE_LOWER_H

#include <stddef.h>
#include <stdint.h>

typedef struct cb__unicode_lower_pair {
  uint32_t cp, lower;
} cb__unicode_lower_pair; /* sorted by cp */

extern const cb__unicode_lower_pair cb__unicode_lowers[];
extern const size_t cb__unicode_lowers_len;

/* The simple lowercase of cp, or cp when it has none. U+0130 gives 'i': a caller that
 * wants the full lowercase (i U+0307) handles U+0130 first. */
uint32_t cb__unicode_lower(uint32_t cp);

#endif
