/*
 * lendist.c - token-length distributions for synthetic requests.
 *
 * fixed, uniform (vLLM's --random-range-ratio semantics), normal and lognormal (mean
 * and sigma of the log), each draw rounded to an integer and clamped to
 * [max(1, min), max]. Clamping shifts the mean when the spread reaches below 1 token
 * or above max; docs/workload.md says so.
 */
#include <math.h>
#include <strings.h>

#include "calibench/limits.h"
#include "calibench/workload.h"

static const char *const len_names[] = {"fixed", "uniform", "normal", "lognormal"};

cb_status cb_dataset_len_kind_parse(const char *name, cb_len_kind *out, cb_error *err) {
  for (int k = 0; k < 4; k++)
    if (name && strcasecmp(name, len_names[k]) == 0) {
      *out = (cb_len_kind)k;
      return CB_OK;
    }
  return cb_error_set(err, CB_ERR_INVALID,
                      "unknown length distribution '%s' (known: fixed, uniform, normal, "
                      "lognormal)",
                      name ? name : "");
}

const char *cb_dataset_len_kind_name(cb_len_kind kind) {
  return (unsigned)kind < 4 ? len_names[kind] : "unknown";
}

cb_status cb_dataset_len_validate(const cb_dataset_len *d, const char *what, cb_error *err) {
  if ((unsigned)d->kind >= 4)
    return cb_error_set(err, CB_ERR_INVALID, "%s: unknown distribution %d", what, (int)d->kind);
  if (!(d->mean >= 1.0 && d->mean <= CB_LIMIT_TOKENS))
    return cb_error_set(err, CB_ERR_INVALID,
                        "%s: mean must be in [1, %u] tokens (docs/limits.md), got %g", what,
                        CB_LIMIT_TOKENS, d->mean);
  if (d->max > CB_LIMIT_TOKENS || d->min > CB_LIMIT_TOKENS)
    return cb_error_set(err, CB_ERR_INVALID,
                        "%s: min and max must be at most %u tokens (docs/limits.md), got %u and %u",
                        what, CB_LIMIT_TOKENS, d->min, d->max);
  if (d->max && d->min > d->max)
    return cb_error_set(err, CB_ERR_INVALID, "%s: min (%u) is above max (%u)", what, d->min,
                        d->max);
  switch (d->kind) {
  case CB_LEN_UNIFORM:
    if (!(d->spread >= 0.0 && d->spread < 1.0))
      return cb_error_set(err, CB_ERR_INVALID,
                          "%s: uniform range ratio must be in [0, 1), got %g", what, d->spread);
    break;
  case CB_LEN_NORMAL:
    if (!(d->spread >= 0.0 && isfinite(d->spread)))
      return cb_error_set(err, CB_ERR_INVALID, "%s: normal std must be >= 0 tokens, got %g",
                          what, d->spread);
    break;
  case CB_LEN_LOGNORMAL:
    if (!(d->spread >= 0.0 && d->spread <= 10.0))
      return cb_error_set(err, CB_ERR_INVALID, "%s: lognormal sigma must be in [0, 10], got %g",
                          what, d->spread);
    break;
  default:
    break;
  }
  return CB_OK;
}

static uint32_t clamp_len(const cb_dataset_len *d, double x) {
  double lo = d->min > 1 ? (double)d->min : 1.0;
  double hi = d->max ? (double)d->max : (double)CB_LIMIT_TOKENS;
  if (!(x >= lo)) x = lo; /* NaN too */
  if (x > hi) x = hi;
  return (uint32_t)x;
}

uint32_t cb_dataset_len_sample(const cb_dataset_len *d, cb_rng *rng) {
  switch (d->kind) {
  case CB_LEN_UNIFORM: {
    /* vLLM: randint(floor(L (1 - r)), ceil(L (1 + r)) + 1), both ends included. */
    double lo = floor(d->mean * (1.0 - d->spread));
    double hi = ceil(d->mean * (1.0 + d->spread));
    if (lo < 1.0) lo = 1.0;
    if (hi < lo) hi = lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return clamp_len(d, lo + (double)cb_rng_below(rng, span));
  }
  case CB_LEN_NORMAL:
    return clamp_len(d, floor(cb_rng_normal(rng, d->mean, d->spread) + 0.5));
  case CB_LEN_LOGNORMAL: {
    double mu = log(d->mean) - 0.5 * d->spread * d->spread;
    return clamp_len(d, floor(cb_rng_lognormal(rng, mu, d->spread) + 0.5));
  }
  case CB_LEN_FIXED:
  default:
    return clamp_len(d, floor(d->mean + 0.5));
  }
}
