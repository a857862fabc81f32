/*
 * ramp.c - a rate that ramps up: its names, its checks, the rate r(t), its integral
 * L(t) and the inverse of that integral, which the arrival generator (arrival.c) maps
 * a unit-rate process through.
 *
 * The two shapes are vLLM bench serve's --ramp-up-strategy (vllm/benchmarks/serve.py,
 * _get_current_request_rate): linear R0 + (R1 - R0) p and exponential R0 (R1 / R0)^p,
 * where vLLM's progress p is the request's index over the count; here p = t / D is
 * time over the ramp's duration, as k6's ramping-arrival-rate stages ramp over time,
 * so a ramp means the same rates whatever the request count (docs/workload.md).
 * Closed forms, with g = ln(R1 / R0) / D:
 *   linear       L(t) = R0 t + (R1 - R0) t^2 / (2 D)
 *                L^-1(x) = 2x / (R0 + sqrt(R0^2 + 2 (R1 - R0) x / D))
 *   exponential  L(t) = R0 (e^(g t) - 1) / g
 *                L^-1(x) = ln(1 + g x / R0) / g
 * and after D the rate is R1: L(t) = L(D) + R1 (t - D). The linear inverse is the
 * quadratic's root written without the cancellation of -R0 + sqrt(...), so R0 = 0 is
 * fine.
 */
#include <math.h>
#include <strings.h>

#include "workload_internal.h"

static const char *const ramp_names[] = {"none", "linear", "exponential"};

cb_status cb_ramp_kind_parse(const char *name, cb_ramp_kind *out, cb_error *err) {
  for (int k = CB_RAMP_LINEAR; k <= CB_RAMP_EXPONENTIAL; k++)
    if (name && strcasecmp(name, ramp_names[k]) == 0) {
      *out = (cb_ramp_kind)k;
      return CB_OK;
    }
  return cb_error_set(err, CB_ERR_INVALID, "unknown ramp '%s' (known: linear, exponential)",
                      name ? name : "");
}

const char *cb_ramp_kind_name(cb_ramp_kind kind) {
  return (unsigned)kind < 3 ? ramp_names[kind] : "unknown";
}

/* The ramp's own bounds (arrival.c checks the rest of the process first). */
cb_status cb__ramp_validate(const cb_arrival_params *a, cb_error *err) {
  if (a->ramp == CB_RAMP_NONE) return CB_OK;
  if (a->ramp != CB_RAMP_LINEAR && a->ramp != CB_RAMP_EXPONENTIAL)
    return cb_error_set(err, CB_ERR_INVALID, "unknown ramp %d", (int)a->ramp);
  if (a->kind != CB_ARRIVAL_CONSTANT && a->kind != CB_ARRIVAL_POISSON && a->kind != CB_ARRIVAL_GAMMA)
    return cb_error_set(err, CB_ERR_INVALID,
                        "a ramp needs an open-loop rate (constant, poisson or gamma arrivals), "
                        "not %s arrivals", cb_arrival_kind_name(a->kind));
  if (!(a->ramp_duration_s > 0 && a->ramp_duration_s <= 1e9))
    return cb_error_set(err, CB_ERR_INVALID, "ramp duration must be in (0, 1e9] s, got %g",
                        a->ramp_duration_s);
  if (a->ramp == CB_RAMP_EXPONENTIAL && !(a->ramp_start > 0))
    return cb_error_set(err, CB_ERR_INVALID,
                        "an exponential ramp must start above 0 req/s (it multiplies the rate), "
                        "got ramp start %g", a->ramp_start);
  if (!(a->ramp_start >= 0))
    return cb_error_set(err, CB_ERR_INVALID, "ramp start must be >= 0 req/s, got %g",
                        a->ramp_start);
  if (!(a->ramp_start < a->rate))
    return cb_error_set(err, CB_ERR_INVALID,
                        "ramp start (%g req/s) must be below the rate it ramps up to (%g req/s)",
                        a->ramp_start, a->rate);
  return CB_OK;
}

static int has_rate(const cb_arrival_params *a) {
  return a->kind == CB_ARRIVAL_CONSTANT || a->kind == CB_ARRIVAL_POISSON ||
         a->kind == CB_ARRIVAL_GAMMA;
}

/* exponential: g = ln(R1 / R0) / D */
static double growth(const cb_arrival_params *a) {
  return log(a->rate / a->ramp_start) / a->ramp_duration_s;
}

double cb_arrival_rate_at(const cb_arrival_params *a, double t_s) {
  if (!has_rate(a)) return NAN;
  double d = a->ramp_duration_s;
  if (a->ramp == CB_RAMP_NONE || t_s >= d) return a->rate;
  if (t_s < 0) t_s = 0;
  if (a->ramp == CB_RAMP_LINEAR) return a->ramp_start + (a->rate - a->ramp_start) * t_s / d;
  return a->ramp_start * exp(growth(a) * t_s);
}

/* L(t) for 0 <= t <= D. */
static double ramp_integral(const cb_arrival_params *a, double t) {
  double r0 = a->ramp_start, d = a->ramp_duration_s;
  if (a->ramp == CB_RAMP_LINEAR) return r0 * t + (a->rate - r0) * t * t / (2 * d);
  double g = growth(a);
  return r0 * expm1(g * t) / g;
}

double cb_arrival_integrated(const cb_arrival_params *a, double t_s) {
  if (!has_rate(a)) return NAN;
  if (t_s <= 0) return 0;
  if (a->ramp == CB_RAMP_NONE) return a->rate * t_s;
  double d = a->ramp_duration_s;
  if (t_s <= d) return ramp_integral(a, t_s);
  return ramp_integral(a, d) + a->rate * (t_s - d);
}

double cb_arrival_integrated_inverse(const cb_arrival_params *a, double x) {
  if (!has_rate(a)) return NAN;
  if (x <= 0) return 0;
  if (a->ramp == CB_RAMP_NONE) return x / a->rate;
  double d = a->ramp_duration_s, r0 = a->ramp_start, at_d = ramp_integral(a, d);
  if (x > at_d) return d + (x - at_d) / a->rate;
  if (a->ramp == CB_RAMP_LINEAR)
    return 2 * x / (r0 + sqrt(r0 * r0 + 2 * (a->rate - r0) * x / d));
  double g = growth(a);
  return log1p(g * x / r0) / g;
}
