/*
 * multinomial_internal.h - exact binomial and multinomial draws, for the JS bootstrap
 * (divergence_boot.c). Library-internal; tests/unit/test_stats_divergence.c checks the
 * draws against the exact distribution.
 */
#ifndef CALIBENCH_STATS_MULTINOMIAL_INTERNAL_H
#define CALIBENCH_STATS_MULTINOMIAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/rng.h"

/*
 * One Binomial(n, p) draw, exact: inversion when min(p, 1 - p) n < 10, else Hormann's
 * BTRD rejection ("The generation of binomial random variates", J. Statist. Comput.
 * Simul. 46, 1993), O(1) expected time for any n. p outside (0, 1) gives 0 or n.
 */
uint64_t cb__stats_binomial(cb_rng *rng, uint64_t n, double p);

/*
 * Multinomial(n, shares) draws, exact, for many draws of one law (the bootstrap's
 * replicates). `shares` are k non-negative weights with a positive sum (any scale),
 * kept by pointer. Two ways, whichever is cheaper for n against the m categories with
 * weight:
 * - n <= CB__MULTINOMIAL_ALIAS_RATIO m (and < 2^32): n categorical draws from Walker's
 *   alias table
 *   (Vose's construction, "A linear algorithm for generating random numbers with a
 *   given distribution", IEEE TSE 17(9), 1991), O(n) per draw and no libm call; the
 *   sum of n independent categorical draws is Multinomial(n, shares) by definition.
 *   With 100 000 labels and samples of 100 000 this is what keeps a 2 000-replicate
 *   bootstrap from costing a pow() per label per replicate.
 * - else conditional binomials, O(m) per draw whatever n:
 *   X_i ~ Binomial(n - X_0 - ... - X_{i-1}, shares_i / (shares_i + ... + shares_{k-1})).
 */
#define CB__MULTINOMIAL_ALIAS_RATIO 8
typedef struct cb__stats_multinomial_sampler {
  uint64_t n;
  const double *shares;
  size_t k;
  size_t m; /* categories with weight */
  /* The alias table (NULL: conditional binomials), one column per category: column i
   * gives i with probability prob, else alias. */
  struct cb__stats_alias_column {
    double prob;
    size_t alias;
  } *table;
  uint32_t *column_draws; /* scratch: a draw's count per column */
} cb__stats_multinomial_sampler;

void cb__stats_multinomial_init(cb__stats_multinomial_sampler *s, uint64_t n, const double *shares,
                                size_t k);
/* counts[0..k) = one draw. */
void cb__stats_multinomial_draw(cb__stats_multinomial_sampler *s, cb_rng *rng, double *counts);
void cb__stats_multinomial_free(cb__stats_multinomial_sampler *s);

/* counts[0..k) = one Multinomial(n, shares) draw (init, draw, free). */
void cb__stats_multinomial(cb_rng *rng, uint64_t n, const double *shares, size_t k, double *counts);

#endif
