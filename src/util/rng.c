/*
 * rng.c - xoshiro256** with SplitMix64 seeding, and the continuous draws.
 *
 * The algorithms are implemented from their published descriptions:
 *   xoshiro256**, SplitMix64: D. Blackman, S. Vigna, ACM TOMS 47(4), 2021.
 *   Polar method: G. Marsaglia, T. Bray, SIAM Review 6(3), 1964.
 *   Gamma: G. Marsaglia, W. Tsang, ACM TOMS 26(3), 2000 (with the u^(1/k) boost
 *   for shape < 1 from the same paper).
 */
#include "calibench/rng.h"

#include <math.h>

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t cb_splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

uint64_t cb_hash3_u64(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t st = a;
  uint64_t h = cb_splitmix64(&st);
  st = h ^ b;
  h = cb_splitmix64(&st);
  st = h ^ c;
  return cb_splitmix64(&st);
}

uint64_t cb_fnv1a64(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

void cb_rng_init(cb_rng *rng, uint64_t seed) {
  uint64_t st = seed;
  for (int i = 0; i < 4; i++) rng->s[i] = cb_splitmix64(&st);
  rng->spare_normal = 0.0;
  rng->has_spare = 0;
}

void cb_rng_init_stream(cb_rng *rng, uint64_t seed, uint64_t stream, uint64_t index) {
  cb_rng_init(rng, cb_hash3_u64(seed, stream, index));
}

uint64_t cb_rng_next(cb_rng *rng) {
  uint64_t *s = rng->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double cb_rng_uniform(cb_rng *rng) {
  return (double)(cb_rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t cb_rng_below(cb_rng *rng, uint64_t n) {
  /* Reject the top partial range so every residue is equally likely. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = cb_rng_next(rng);
  } while (x >= limit);
  return x % n;
}

double cb_rng_exponential(cb_rng *rng, double rate) {
  /* 1 - u lies in (0, 1], so the log is finite. */
  return -log(1.0 - cb_rng_uniform(rng)) / rate;
}

double cb_rng_normal(cb_rng *rng, double mean, double stddev) {
  if (rng->has_spare) {
    rng->has_spare = 0;
    return mean + stddev * rng->spare_normal;
  }
  double u, v, s;
  do {
    u = 2.0 * cb_rng_uniform(rng) - 1.0;
    v = 2.0 * cb_rng_uniform(rng) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  double f = sqrt(-2.0 * log(s) / s);
  rng->spare_normal = v * f;
  rng->has_spare = 1;
  return mean + stddev * u * f;
}

double cb_rng_lognormal(cb_rng *rng, double mu, double sigma) {
  return exp(cb_rng_normal(rng, mu, sigma));
}

double cb_rng_gamma(cb_rng *rng, double shape, double scale) {
  if (shape < 1.0) {
    double u = cb_rng_uniform(rng);
    /* 1 - u in (0, 1] keeps pow finite and non-zero-safe. */
    return cb_rng_gamma(rng, shape + 1.0, scale) * pow(1.0 - u, 1.0 / shape);
  }
  double d = shape - 1.0 / 3.0;
  double c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = cb_rng_normal(rng, 0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = cb_rng_uniform(rng);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v * scale;
    if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v * scale;
  }
}
