/*
 * nprng.c - numpy 1.24's SeedSequence, PCG64 and bounded draws (facts from numpy's
 * numpy/random/bit_generator.pyx (SeedSequence: hashmix, mix, generate_state),
 * numpy/random/src/pcg64/pcg64.h (PCG XSL-RR 128/64, O'Neill 2014; the 32-bit draws
 * taking the low half of a 64-bit draw, then its high half) and
 * numpy/random/src/distributions/random_uint.c-era bounded.c
 * (buffered_bounded_lemire_uint32, buffered_bounded_bool)), checked draw for draw
 * against Debian's python3-numpy 1.24.2 by tests/unit/test_eval_bootstrap.c.
 */
#include "nprng.h"

#include <stddef.h>

__extension__ typedef unsigned __int128 u128;

/* SeedSequence's constants. */
#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u
#define XSHIFT 16

static uint32_t hashmix(uint32_t v, uint32_t *hash_const) {
  v ^= *hash_const;
  *hash_const *= MULT_A;
  v *= *hash_const;
  v ^= v >> XSHIFT;
  return v;
}

static uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = MIX_MULT_L * x - MIX_MULT_R * y;
  r ^= r >> XSHIFT;
  return r;
}

/* SeedSequence(seed).generate_state(4, np.uint64). */
static void seed_sequence(uint64_t seed, uint64_t out[4]) {
  uint32_t entropy[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  size_t n_entropy = seed >> 32 ? 2 : 1;
  uint32_t pool[4], hash_const = INIT_A;
  for (size_t i = 0; i < 4; i++) pool[i] = hashmix(i < n_entropy ? entropy[i] : 0, &hash_const);
  for (size_t s = 0; s < 4; s++)
    for (size_t d = 0; d < 4; d++)
      if (s != d) pool[d] = mix(pool[d], hashmix(pool[s], &hash_const));
  uint32_t words[8], h = INIT_B;
  for (size_t i = 0; i < 8; i++) {
    uint32_t v = pool[i % 4];
    v ^= h;
    h *= MULT_B;
    v *= h;
    v ^= v >> XSHIFT;
    words[i] = v;
  }
  for (size_t i = 0; i < 4; i++) out[i] = (uint64_t)words[2 * i] | (uint64_t)words[2 * i + 1] << 32;
}

static const u128 PCG_MULT = ((u128)2549297995355413924ULL << 64) | 4865540595714422341ULL;

static u128 get(uint64_t hi, uint64_t lo) { return (u128)hi << 64 | lo; }

static void step(cb__nprng *g) {
  u128 s = get(g->state_hi, g->state_lo) * PCG_MULT + get(g->inc_hi, g->inc_lo);
  g->state_hi = (uint64_t)(s >> 64), g->state_lo = (uint64_t)s;
}

void cb__nprng_init(cb__nprng *g, uint64_t seed) {
  uint64_t v[4];
  seed_sequence(seed, v);
  /* pcg64_set_seed: state = v[0]:v[1], sequence = v[2]:v[3] (high word first), then
   * pcg_setseq_128_srandom_r. */
  u128 inc = get(v[2], v[3]) << 1 | 1;
  g->inc_hi = (uint64_t)(inc >> 64), g->inc_lo = (uint64_t)inc;
  g->state_hi = g->state_lo = 0;
  step(g);
  u128 s = get(g->state_hi, g->state_lo) + get(v[0], v[1]);
  g->state_hi = (uint64_t)(s >> 64), g->state_lo = (uint64_t)s;
  step(g);
  g->has32 = 0;
  g->buf32 = 0;
  g->nbits = 0;
  g->bits = 0;
}

uint64_t cb__nprng_next64(cb__nprng *g) {
  step(g);
  uint64_t x = g->state_hi ^ g->state_lo;
  unsigned r = (unsigned)(g->state_hi >> 58);
  return (x >> r) | (x << ((64 - r) & 63));
}

uint32_t cb__nprng_next32(cb__nprng *g) {
  if (g->has32) {
    g->has32 = 0;
    return g->buf32;
  }
  uint64_t v = cb__nprng_next64(g);
  g->has32 = 1;
  g->buf32 = (uint32_t)(v >> 32);
  return (uint32_t)v;
}

/* buffered_bounded_lemire_uint32 with rng = n - 1 (Lemire 2019, "Fast random integer
 * generation in an interval"). */
uint32_t cb__nprng_below(cb__nprng *g, uint32_t n) {
  uint32_t rng = n - 1;
  if (rng == 0) return 0;
  uint64_t m = (uint64_t)cb__nprng_next32(g) * n;
  uint32_t leftover = (uint32_t)m;
  if (leftover < n) {
    uint32_t threshold = (UINT32_MAX - rng) % n;
    while (leftover < threshold) {
      m = (uint64_t)cb__nprng_next32(g) * n;
      leftover = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

int cb__nprng_bool(cb__nprng *g) {
  if (!g->nbits) {
    g->bits = cb__nprng_next32(g);
    g->nbits = 31;
  } else {
    g->bits >>= 1;
    g->nbits--;
  }
  return (int)(g->bits & 1);
}

void cb__nprng_bool_reset(cb__nprng *g) { g->nbits = 0; }
