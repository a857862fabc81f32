/*
 * arrival.c - arrival processes: names, validation and the gap generator.
 *
 * One process gives request k the time t_k: t_0 = 0 (the run starts with a request),
 * then constant gaps 1/rate (computed as k / rate, so no rounding accumulates),
 * Exponential(rate) gaps (Poisson), or Gamma(k, 1/(rate k)) gaps (vLLM's
 * --burstiness k: mean 1/rate, CV 1/sqrt(k)). Poisson is drawn as an exponential,
 * not as a gamma with shape 1, so its stream is the textbook one. The times are the
 * process itself, never rescaled (docs/workload.md, "Why times are not rescaled").
 * With a ramp (ramp.c) the same draws at unit rate are the points S_k of a unit-rate
 * renewal process, and t_k = L^-1(S_k): a time change, which keeps the gaps' shape
 * (a gamma process stays gamma in the ramp's own clock) where thinning would not.
 */
#include <math.h>
#include <strings.h>

#include "workload_internal.h"

static const char *const arrival_names[] = {"closed", "constant", "poisson", "gamma", "trace"};

cb_status cb_arrival_kind_parse(const char *name, cb_arrival_kind *out, cb_error *err) {
  for (int k = 0; k < 5; k++)
    if (name && strcasecmp(name, arrival_names[k]) == 0) {
      *out = (cb_arrival_kind)k;
      return CB_OK;
    }
  return cb_error_set(err, CB_ERR_INVALID,
                      "unknown arrival process '%s' (known: closed, constant, poisson, gamma, "
                      "trace)",
                      name ? name : "");
}

const char *cb_arrival_kind_name(cb_arrival_kind kind) {
  return (unsigned)kind < 5 ? arrival_names[kind] : "unknown";
}

cb_status cb_arrival_validate(const cb_arrival_params *a, cb_error *err) {
  switch (a->kind) {
  case CB_ARRIVAL_CLOSED:
    return cb__ramp_validate(a, err);
  case CB_ARRIVAL_CONSTANT:
  case CB_ARRIVAL_POISSON:
  case CB_ARRIVAL_GAMMA:
    if (!(a->rate > 0.0 && a->rate <= 1e9))
      return cb_error_set(err, CB_ERR_INVALID,
                          "rate must be in (0, 1e9] requests/s for %s arrivals, got %g",
                          arrival_names[a->kind], a->rate);
    if (a->kind == CB_ARRIVAL_GAMMA && !(a->burstiness > 0.0 && a->burstiness <= 1e6))
      return cb_error_set(err, CB_ERR_INVALID,
                          "burstiness (gamma shape) must be in (0, 1e6], got %g", a->burstiness);
    return cb__ramp_validate(a, err);
  case CB_ARRIVAL_TRACE:
    if (!(a->trace_speed > 0.0 && a->trace_speed <= 1e9))
      return cb_error_set(err, CB_ERR_INVALID, "trace speed must be in (0, 1e9], got %g",
                          a->trace_speed);
    return cb__ramp_validate(a, err);
  default:
    return cb_error_set(err, CB_ERR_INVALID, "unknown arrival process %d", (int)a->kind);
  }
}

void cb_arrival_gen_init(cb_arrival_gen *g, const cb_arrival_params *p, uint64_t seed,
                         uint64_t stream, uint64_t index) {
  g->params = *p;
  cb_rng_init_stream(&g->rng, seed, stream, index);
  g->count = 0;
  g->t_s = 0.0;
  g->unit_s = 0.0;
}

/* The next point of the unit-rate process that a ramp maps through L^-1. */
static double next_unit(cb_arrival_gen *g, uint64_t k) {
  const cb_arrival_params *p = &g->params;
  switch (p->kind) {
  case CB_ARRIVAL_POISSON:
    return g->unit_s += cb_rng_exponential(&g->rng, 1.0);
  case CB_ARRIVAL_GAMMA:
    return g->unit_s += cb_rng_gamma(&g->rng, p->burstiness, 1.0 / p->burstiness);
  case CB_ARRIVAL_CONSTANT:
  default:
    return g->unit_s = (double)k;
  }
}

double cb_arrival_gen_next_s(cb_arrival_gen *g) {
  uint64_t k = g->count++;
  if (k == 0) return g->t_s = 0.0;
  const cb_arrival_params *p = &g->params;
  if (p->ramp != CB_RAMP_NONE) return g->t_s = cb_arrival_integrated_inverse(p, next_unit(g, k));
  switch (p->kind) {
  case CB_ARRIVAL_POISSON:
    g->t_s += cb_rng_exponential(&g->rng, p->rate);
    break;
  case CB_ARRIVAL_GAMMA:
    g->t_s += cb_rng_gamma(&g->rng, p->burstiness, 1.0 / (p->rate * p->burstiness));
    break;
  case CB_ARRIVAL_CONSTANT:
  default:
    g->t_s = (double)k / p->rate;
    break;
  }
  return g->t_s;
}
