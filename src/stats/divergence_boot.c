/*
 * divergence_boot.c - a bootstrap confidence interval for the Jensen-Shannon divergence
 * of two distributions that were estimated from samples of known sizes.
 *
 * Parametric (multinomial) bootstrap: each replicate draws n_p observations from p and
 * n_q from q (a side with size 0 is a known population and is held fixed), recomputes JS
 * of the two empirical distributions, and the interval is the percentile interval of the
 * replicates (numpy's "linear" quantiles at (1 - level) / 2 and (1 + level) / 2).
 * Replicate r draws from cb_rng_init_stream(seed, side, r), so the result depends only on
 * the inputs and the seed. The draws are exact multinomials (multinomial.c: conditional
 * binomials, or an alias table built once here when the sample is small against k).
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"
#include "multinomial_internal.h"

#define BOOT_STREAM_P 0x6a73702dULL /* "jsp-" */
#define BOOT_STREAM_Q 0x6a73712dULL /* "jsq-" */

cb_status cb_stats_js_bootstrap(const double *p, const double *q, size_t k, uint64_t n_p,
                                uint64_t n_q, const cb_stats_js_boot_params *params,
                                cb_stats_js_interval *out, cb_error *err) {
  if (k == 0) return cb_error_set(err, CB_ERR_INVALID, "JS bootstrap: no categories");
  if (n_p == 0 && n_q == 0)
    return cb_error_set(err, CB_ERR_INVALID,
                        "JS bootstrap: neither sample size is known, so there is nothing to "
                        "resample");
  if (params->replicates < 2)
    return cb_error_set(err, CB_ERR_INVALID, "JS bootstrap: need at least 2 replicates, got %zu",
                        params->replicates);
  if (!(params->level > 0.0 && params->level < 1.0))
    return cb_error_set(err, CB_ERR_INVALID, "JS bootstrap: level must be in (0, 1), got %g",
                        params->level);
  double point = cb_stats_js(p, q, k, 2.0);
  if (isnan(point))
    return cb_error_set(err, CB_ERR_INVALID,
                        "JS bootstrap: weights must be non-negative, finite and not all zero");

  double *cp = cb_malloc(k * sizeof *cp), *cq = cb_malloc(k * sizeof *cq);
  double *reps = cb_malloc(params->replicates * sizeof *reps);
  if (!n_p) memcpy(cp, p, k * sizeof *cp);
  if (!n_q) memcpy(cq, q, k * sizeof *cq);
  double sum = 0.0;
  cb__stats_multinomial_sampler sp, sq;
  cb__stats_multinomial_init(&sp, n_p, p, k);
  cb__stats_multinomial_init(&sq, n_q, q, k);
  for (size_t r = 0; r < params->replicates; r++) {
    cb_rng rng;
    if (n_p) {
      cb_rng_init_stream(&rng, params->seed, BOOT_STREAM_P, r);
      cb__stats_multinomial_draw(&sp, &rng, cp);
    }
    if (n_q) {
      cb_rng_init_stream(&rng, params->seed, BOOT_STREAM_Q, r);
      cb__stats_multinomial_draw(&sq, &rng, cq);
    }
    reps[r] = cb_stats_js(cp, cq, k, 2.0);
    sum += reps[r];
  }
  cb_stats_sort(reps, params->replicates);
  out->estimate = point;
  out->lo = cb_stats_quantile_sorted(reps, params->replicates, (1.0 - params->level) / 2.0);
  out->hi = cb_stats_quantile_sorted(reps, params->replicates, (1.0 + params->level) / 2.0);
  out->level = params->level;
  out->replicates = params->replicates;
  out->replicate_mean = sum / (double)params->replicates;
  cb__stats_multinomial_free(&sp);
  cb__stats_multinomial_free(&sq);
  cb_free(cp);
  cb_free(cq);
  cb_free(reps);
  return CB_OK;
}

void cb_stats_js_boot_default_params(cb_stats_js_boot_params *p) {
  p->replicates = 2000;
  p->level = 0.95;
  p->seed = 0;
}
