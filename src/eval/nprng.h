/*
 * nprng.h - numpy's default random generator, draw for draw: np.random.default_rng(seed)
 * (SeedSequence -> PCG64) and the two ways sacrebleu draws from it (significance.py):
 * Generator.choice(n, replace=True) (Lemire's bounded integers on 32-bit draws) and
 * Generator.integers(2, dtype=bool) (one bit of a 32-bit draw at a time). So
 * calibench's bootstrap resamples and randomisations are sacrebleu's.
 */
#ifndef CALIBENCH_EVAL_NPRNG_H
#define CALIBENCH_EVAL_NPRNG_H

#include <stdint.h>

typedef struct cb__nprng {
  uint64_t state_hi, state_lo, inc_hi, inc_lo; /* the 128-bit LCG */
  uint32_t buf32;                              /* the upper half of the last 64-bit draw */
  int has32;
  uint32_t bits;                               /* integers(2, dtype=bool)'s buffer */
  int nbits;
} cb__nprng;

/* np.random.default_rng(seed) for a seed < 2^64. */
void cb__nprng_init(cb__nprng *g, uint64_t seed);
uint64_t cb__nprng_next64(cb__nprng *g);
uint32_t cb__nprng_next32(cb__nprng *g);
/* One draw of Generator.choice(n) / integers(0, n) for 1 <= n <= 2^32 - 1. */
uint32_t cb__nprng_below(cb__nprng *g, uint32_t n);
/* One element of Generator.integers(2, size=..., dtype=bool); the bit buffer lives
 * for one call of integers, so cb__nprng_bool_reset starts a new one. */
int cb__nprng_bool(cb__nprng *g);
void cb__nprng_bool_reset(cb__nprng *g);

#endif
