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
 * counts[0..k) = one Multinomial(n, shares) draw, by conditional binomials:
 * X_i ~ Binomial(n - X_0 - ... - X_{i-1}, shares_i / (shares_i + ... + shares_{k-1})).
 * `shares` are k non-negative weights with a positive sum (any scale).
 */
void cb__stats_multinomial(cb_rng *rng, uint64_t n, const double *shares, size_t k, double *counts);

#endif
