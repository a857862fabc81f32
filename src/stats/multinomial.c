/*
 * multinomial.c - exact binomial draws (inversion for small means, Hormann's BTRD
 * rejection otherwise) and multinomial draws, by an alias table when the sample is
 * small against the categories (O(n)) and by conditional binomials otherwise (O(k)):
 * the resampling of the JS bootstrap.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "multinomial_internal.h"

/* log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2]: Stirling's correction. */
static double stirling_tail(double k) {
  static const double table[10] = {0.08106146679532726, 0.04134069595540929, 0.02767792568499834,
                                   0.02079067210376509, 0.01664469118982119, 0.01387612882307075,
                                   0.01189670994589177, 0.01041126526197209, 0.009255462182712733,
                                   0.008330563433362871};
  if (k <= 9.0) return table[(int)k];
  double k1 = k + 1.0, k2 = k1 * k1;
  return (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / k2) / k2) / k1;
}

/* Inversion by sequential search from 0; for n p < 10 (p <= 1/2). */
static uint64_t binomial_inversion(cb_rng *rng, uint64_t n, double p) {
  double q = 1.0 - p, s = p / q, a = ((double)n + 1.0) * s;
  for (;;) {
    double r = pow(q, (double)n), u = cb_rng_uniform(rng);
    uint64_t x = 0;
    while (u > r) {
      u -= r;
      x++;
      if (x > n) break; /* rounding ran past the support: draw again */
      r *= a / (double)x - s;
    }
    if (x <= n) return x;
  }
}

/* BTRD for n p >= 10, p <= 1/2. */
static uint64_t binomial_btrd(cb_rng *rng, uint64_t n_u, double p) {
  double n = (double)n_u;
  double m = floor((n + 1.0) * p);
  double r = p / (1.0 - p), nr = (n + 1.0) * r, npq = n * p * (1.0 - p);
  double spq = sqrt(npq);
  double b = 1.15 + 2.53 * spq;
  double a = -0.0873 + 0.0248 * b + 0.01 * p;
  double c = n * p + 0.5;
  double alpha = (2.83 + 5.1 / b) * spq;
  double vr = 0.92 - 4.2 / b;
  double urvr = 0.86 * vr;
  for (;;) {
    double v = cb_rng_uniform(rng);
    double u;
    if (v <= urvr) {
      u = v / vr - 0.43;
      return (uint64_t)floor((2.0 * a / (0.5 - fabs(u)) + b) * u + c);
    }
    if (v >= vr) {
      u = cb_rng_uniform(rng) - 0.5;
    } else {
      u = v / vr - 0.93;
      u = (u < 0 ? -0.5 : 0.5) - u;
      v = cb_rng_uniform(rng) * vr;
    }
    double us = 0.5 - fabs(u);
    double k = floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    v = v * alpha / (a / (us * us) + b);
    double km = fabs(k - m);
    if (km <= 15.0) {
      /* f(k) / f(m) by the recurrence f(i) / f(i - 1) = nr / i - r */
      double f = 1.0;
      if (m < k)
        for (double i = m + 1.0; i <= k; i += 1.0) f *= nr / i - r;
      else if (m > k)
        for (double i = k + 1.0; i <= m; i += 1.0) v *= nr / i - r;
      if (v <= f) return (uint64_t)k;
      continue;
    }
    /* squeeze on log v, then the exact test */
    v = log(v);
    double rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
    double t = -km * km / (2.0 * npq);
    if (v < t - rho) return (uint64_t)k;
    if (v > t + rho) continue;
    double nm = n - m + 1.0;
    double h = (m + 0.5) * log((m + 1.0) / (r * nm)) + stirling_tail(m) + stirling_tail(n - m);
    double nk = n - k + 1.0;
    if (v <= h + (n + 1.0) * log(nm / nk) + (k + 0.5) * log(nk * r / (k + 1.0)) - stirling_tail(k) -
                 stirling_tail(n - k))
      return (uint64_t)k;
  }
}

uint64_t cb__stats_binomial(cb_rng *rng, uint64_t n, double p) {
  if (n == 0 || !(p > 0.0)) return 0;
  if (p >= 1.0) return n;
  if (p > 0.5) return n - cb__stats_binomial(rng, n, 1.0 - p);
  if ((double)n * p < 10.0) return binomial_inversion(rng, n, p);
  return binomial_btrd(rng, n, p);
}

/* Conditional binomials: the last category with weight takes what is left. */
static void multinomial_binomials(cb_rng *rng, uint64_t n, const double *shares, size_t k,
                                  double *counts) {
  size_t last = k;
  double rest = 0.0;
  for (size_t i = 0; i < k; i++) {
    counts[i] = 0.0;
    if (shares[i] > 0.0) last = i, rest += shares[i];
  }
  for (size_t i = 0; i < last && n > 0; i++) {
    if (!(shares[i] > 0.0)) continue;
    double p = shares[i] / rest;
    uint64_t d = cb__stats_binomial(rng, n, p < 1.0 ? p : 1.0);
    counts[i] = (double)d;
    n -= d;
    rest -= shares[i];
  }
  if (last < k) counts[last] += (double)n;
}

/* Uniform on [0, m), unbiased: Lemire's multiply-and-reject ("Fast random integer
 * generation in an interval", ACM TOMACS 29(1), 2019), a division only on a rare reject. */
__extension__ typedef unsigned __int128 u128;
static size_t uniform_below(cb_rng *rng, uint64_t m) {
  u128 prod = (u128)cb_rng_next(rng) * m;
  if ((uint64_t)prod < m) {
    uint64_t floor_ = -m % m;
    while ((uint64_t)prod < floor_) prod = (u128)cb_rng_next(rng) * m;
  }
  return (size_t)(prod >> 64);
}

/* Vose's alias table over the k categories: scaled weights below 1 are topped up from
 * one above 1, which then sinks by what it gave. A category without weight keeps
 * probability 0 and gives its column to one with weight. */
static void alias_build(cb__stats_multinomial_sampler *s) {
  size_t k = s->k, n_small = 0, n_large = 0, some = 0;
  double total = 0.0, *scaled = cb_malloc(k * sizeof *scaled);
  size_t *small = cb_malloc(k * sizeof *small), *large = cb_malloc(k * sizeof *large);
  for (size_t i = 0; i < k; i++)
    if (s->shares[i] > 0.0) total += s->shares[i], some = i;
  for (size_t i = 0; i < k; i++) {
    scaled[i] = s->shares[i] > 0.0 ? s->shares[i] / total * (double)k : 0.0;
    s->table[i].prob = 0.0;
    s->table[i].alias = some;
    if (scaled[i] < 1.0) small[n_small++] = i;
    else large[n_large++] = i;
  }
  while (n_small && n_large) {
    size_t l = small[--n_small], g = large[n_large - 1];
    s->table[l].prob = scaled[l];
    s->table[l].alias = g;
    scaled[g] = (scaled[g] + scaled[l]) - 1.0;
    if (scaled[g] < 1.0) {
      n_large--;
      small[n_small++] = g;
    }
  }
  /* What is left is 1 up to rounding (0 for a category without weight). */
  while (n_large) s->table[large[--n_large]].prob = 1.0;
  while (n_small) {
    size_t l = small[--n_small];
    if (scaled[l] > 0.0) s->table[l].prob = 1.0;
  }
  cb_free(scaled);
  cb_free(small);
  cb_free(large);
}

void cb__stats_multinomial_init(cb__stats_multinomial_sampler *s, uint64_t n, const double *shares,
                                size_t k) {
  memset(s, 0, sizeof *s);
  s->n = n;
  s->shares = shares;
  s->k = k;
  for (size_t i = 0; i < k; i++) s->m += shares[i] > 0.0;
  if (!s->m || n > (uint64_t)CB__MULTINOMIAL_ALIAS_RATIO * s->m || n > UINT32_MAX) return;
  s->table = cb_malloc(k * sizeof *s->table);
  s->column_draws = cb_malloc(k * sizeof *s->column_draws);
  alias_build(s);
}

/* How many of c draws in a column keep its own category: Binomial(c, prob) by c coins
 * (c is small: n / k <= CB__MULTINOMIAL_ALIAS_RATIO on average). */
static uint32_t column_keeps(cb_rng *rng, uint32_t c, double prob) {
  if (prob >= 1.0) return c;
  if (!(prob > 0.0)) return 0;
  uint32_t kept = 0;
  for (uint32_t d = 0; d < c; d++) kept += cb_rng_uniform(rng) < prob;
  return kept;
}

void cb__stats_multinomial_draw(cb__stats_multinomial_sampler *s, cb_rng *rng, double *counts) {
  if (!s->table) {
    multinomial_binomials(rng, s->n, s->shares, s->k, counts);
    return;
  }
  /* The same n alias draws, grouped by column: first how many land in each column (the
   * only random access, into a small array), then per column, in order, how many of
   * them keep its category and how many go to its alias. */
  memset(s->column_draws, 0, s->k * sizeof *s->column_draws);
  for (uint64_t d = 0; d < s->n; d++) s->column_draws[uniform_below(rng, s->k)]++;
  for (size_t i = 0; i < s->k; i++) counts[i] = 0.0;
  for (size_t i = 0; i < s->k; i++) {
    uint32_t c = s->column_draws[i];
    if (!c) continue;
    uint32_t kept = column_keeps(rng, c, s->table[i].prob);
    counts[i] += (double)kept;
    counts[s->table[i].alias] += (double)(c - kept);
  }
}

void cb__stats_multinomial_free(cb__stats_multinomial_sampler *s) {
  cb_free(s->table);
  cb_free(s->column_draws);
  memset(s, 0, sizeof *s);
}

void cb__stats_multinomial(cb_rng *rng, uint64_t n, const double *shares, size_t k,
                           double *counts) {
  cb__stats_multinomial_sampler s;
  cb__stats_multinomial_init(&s, n, shares, k);
  cb__stats_multinomial_draw(&s, rng, counts);
  cb__stats_multinomial_free(&s);
}
