/*
 * fuzz_common.h - what every libFuzzer driver in tests/fuzz/ uses: the entry point's
 * prototype, the selector byte that leads an input, abort on a broken invariant
 * (libFuzzer reports the input), and FNV-1a to fold a transcript into one number that
 * differently fed runs must agree on.
 */
#ifndef CALIBENCH_FUZZ_COMMON_H
#define CALIBENCH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Every driver's entry point (libFuzzer calls it, or replay_main.c). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input's first byte, which a driver spends on choosing what to run (limits, mode,
 * how to split the rest); data and size move past it. The input must not be empty. */
static inline uint8_t take_selector(const uint8_t **data, size_t *size) {
  uint8_t sel = **data;
  (*data)++;
  (*size)--;
  return sel;
}

static inline void check(int cond) {
  if (!cond) abort();
}

static inline uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * UINT64_C(0x100000001b3);
  return h;
}

#endif
