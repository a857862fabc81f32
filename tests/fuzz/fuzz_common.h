/*
 * fuzz_common.h - what every libFuzzer driver in tests/fuzz/ uses: abort on a broken
 * invariant (libFuzzer reports the input), and FNV-1a to fold a transcript into one
 * number that differently fed runs must agree on.
 */
#ifndef CALIBENCH_FUZZ_COMMON_H
#define CALIBENCH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void check(int cond) {
  if (!cond) abort();
}

static inline uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * UINT64_C(0x100000001b3);
  return h;
}

#endif
