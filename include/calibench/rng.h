/*
 * rng.h - seeded pseudo-random numbers, the same stream on every platform.
 *
 * Generator: xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", 2021; prng.di.unimi.it), state seeded by SplitMix64. The integer
 * stream depends only on the seed. Floating-point draws use only IEEE-754 arithmetic
 * plus log/exp/sqrt, so they match across platforms with a correctly rounded libm
 * (glibc's log/exp are; sqrt always is).
 *
 * Determinism rule: every random decision takes an explicit cb_rng derived from
 * (run seed, stream, index) with cb_rng_init_stream, never a global.
 */
#ifndef CALIBENCH_RNG_H
#define CALIBENCH_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_rng {
  uint64_t s[4];
  double spare_normal; /* second value of the last polar-method pair */
  int has_spare;
} cb_rng;

/* SplitMix64 step: advances *state and returns the next output. */
uint64_t cb_splitmix64(uint64_t *state);
/* A 64-bit mix of three values (for deriving seeds and hashing ids). */
uint64_t cb_hash3_u64(uint64_t a, uint64_t b, uint64_t c);
/* FNV-1a, 64 bits, of n bytes (Fowler, Noll, Vo; the offset basis and prime of
 * www.isthe.com/chongo/tech/comp/fnv): a stable hash of text, e.g. a prompt, to key a
 * table or derive a seed from. */
uint64_t cb_fnv1a64(const void *p, size_t n);

/* Seed from one 64-bit value. */
void cb_rng_init(cb_rng *rng, uint64_t seed);
/* Independent stream for (seed, stream, index), e.g. (run seed, "arrivals", request #). */
void cb_rng_init_stream(cb_rng *rng, uint64_t seed, uint64_t stream, uint64_t index);

uint64_t cb_rng_next(cb_rng *rng);
/* Uniform on [0, 1) with 53 random bits. */
double cb_rng_uniform(cb_rng *rng);
/* Uniform integer on [0, n); n > 0. Unbiased (rejection). */
uint64_t cb_rng_below(cb_rng *rng, uint64_t n);
/* Exponential with the given rate (mean 1/rate); rate > 0. */
double cb_rng_exponential(cb_rng *rng, double rate);
/* Normal(mean, stddev) by Marsaglia's polar method. */
double cb_rng_normal(cb_rng *rng, double mean, double stddev);
/* exp(Normal(mu, sigma)): mu and sigma are of the underlying normal. */
double cb_rng_lognormal(cb_rng *rng, double mu, double sigma);
/* Gamma(shape k > 0, scale theta > 0), mean k*theta (Marsaglia & Tsang 2000). */
double cb_rng_gamma(cb_rng *rng, double shape, double scale);

#ifdef __cplusplus
}
#endif
#endif
