/*
 * cost.c - `calibrate cost`: the cost of 1,000 requests for each candidate deployment,
 * its accuracy per unit of cost, and the cheapest candidate whose accuracy is within a
 * tolerance of the reference (the most accurate candidate, or one named).
 *   per-token prices:  cost per 1k requests = input_tokens x price_in_per_1k
 *                                            + output_tokens x price_out_per_1k
 *   GPU-hour price:    cost per 1k requests = gpus x price_per_gpu_hour x 1000 / (3600 x rps)
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"

void cb_calib_cost_default_params(cb_calib_cost_params *p) {
  memset(p, 0, sizeof *p);
  p->tolerance = 0.05;
  p->tolerance_points = false;
  p->reference = NULL;
  p->input_tokens = NAN;
  p->output_tokens = NAN;
}

void cb_calib_cost_result_free(cb_calib_cost_result *r) {
  cb_free(r->order);
  memset(r, 0, sizeof *r);
}

/* The candidate's own value, else the command line's, else the file's. */
static double pick(double own, double param, double file) {
  return !isnan(own) ? own : !isnan(param) ? param : file;
}

static cb_status candidate_cost(const cb_calib_cost_set *set, cb_calib_candidate *c,
                                const cb_calib_cost_params *p, cb_error *err) {
  double in = pick(c->input_tokens, p->input_tokens, set->input_tokens);
  double out = pick(c->output_tokens, p->output_tokens, set->output_tokens);
  c->used_input_tokens = in;
  c->used_output_tokens = out;
  if (c->pricing == CB_CALIB_PRICE_TOKENS) {
    if (isnan(in) || isnan(out))
      return cb_error_at(err, CB_ERR_INVALID, set->path, c->line, 0,
                         "candidate '%s': per-token prices need the tokens per request: set "
                         "input_tokens and output_tokens (on the candidate, at the top of the "
                         "file, or --input-tokens/--output-tokens)",
                         c->model);
    c->cost_per_1k_requests = in * c->price_input_per_1k + out * c->price_output_per_1k;
  } else {
    if (!isnan(c->throughput_tokens_per_s)) {
      if (isnan(out) || !(out > 0.0))
        return cb_error_at(err, CB_ERR_INVALID, set->path, c->line, 0,
                           "candidate '%s': throughput_tokens_per_s needs output_tokens per "
                           "request (> 0) to become requests/s",
                           c->model);
      c->throughput_rps = c->throughput_tokens_per_s / out;
    }
    c->cost_per_1k_requests = c->gpus * c->gpu_hour_price * 1000.0 / (3600.0 * c->throughput_rps);
  }
  c->cost_per_1k_correct = c->accuracy > 0.0 ? c->cost_per_1k_requests / c->accuracy : INFINITY;
  c->accuracy_per_cost =
      c->cost_per_1k_requests > 0.0 ? c->accuracy / c->cost_per_1k_requests : INFINITY;
  return CB_OK;
}

/* x before y: cheaper, then more accurate, then by name. */
static bool before(const cb_calib_candidate *x, const cb_calib_candidate *y) {
  if (x->cost_per_1k_requests != y->cost_per_1k_requests)
    return x->cost_per_1k_requests < y->cost_per_1k_requests;
  if (x->accuracy != y->accuracy) return x->accuracy > y->accuracy;
  return strcmp(x->model, y->model) < 0;
}

cb_status cb_calib_cost_compute(cb_calib_cost_set *set, const cb_calib_cost_params *p,
                                cb_calib_cost_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  if (set->n == 0) return cb_error_set(err, CB_ERR_INVALID, "%s: no candidates", set->path);
  double tmax = p->tolerance_points ? 1.0 : 0.999999;
  if (!(p->tolerance >= 0.0 && p->tolerance <= tmax))
    return cb_error_set(err, CB_ERR_INVALID, "--tolerance must be in [0, %s], got %g",
                        p->tolerance_points ? "100pp" : "100%)", p->tolerance);
  if (!isnan(p->input_tokens) && !(p->input_tokens >= 0.0))
    return cb_error_set(err, CB_ERR_INVALID, "--input-tokens must be >= 0");
  if (!isnan(p->output_tokens) && !(p->output_tokens >= 0.0))
    return cb_error_set(err, CB_ERR_INVALID, "--output-tokens must be >= 0");
  for (size_t i = 0; i < set->n; i++) {
    cb_status st = candidate_cost(set, &set->candidates[i], p, err);
    if (st != CB_OK) return st;
  }
  size_t ref = 0;
  if (p->reference) {
    ref = set->n;
    for (size_t i = 0; i < set->n; i++)
      if (!strcmp(set->candidates[i].model, p->reference)) ref = i;
    if (ref == set->n)
      return cb_error_set(err, CB_ERR_NOT_FOUND, "--reference '%s' is not a candidate in %s",
                          p->reference, set->path);
  } else {
    for (size_t i = 1; i < set->n; i++) {
      const cb_calib_candidate *c = &set->candidates[i], *r = &set->candidates[ref];
      if (c->accuracy > r->accuracy ||
          (c->accuracy == r->accuracy && c->cost_per_1k_requests < r->cost_per_1k_requests))
        ref = i;
    }
  }
  double ra = set->candidates[ref].accuracy;
  out->reference = ref;
  out->reference_accuracy = ra;
  out->tolerance = p->tolerance;
  out->tolerance_points = p->tolerance_points;
  out->threshold = p->tolerance_points ? ra - p->tolerance : ra * (1.0 - p->tolerance);
  for (size_t i = 0; i < set->n; i++)
    set->candidates[i].within_tolerance = set->candidates[i].accuracy >= out->threshold - 1e-12;
  out->order = cb_malloc(set->n * sizeof *out->order);
  for (size_t i = 0; i < set->n; i++) out->order[i] = i;
  for (size_t i = 1; i < set->n; i++) /* insertion sort: candidates are few */
    for (size_t j = i;
         j > 0 && before(&set->candidates[out->order[j]], &set->candidates[out->order[j - 1]]);
         j--) {
      size_t t = out->order[j];
      out->order[j] = out->order[j - 1];
      out->order[j - 1] = t;
    }
  out->cheapest = ref; /* the reference is always within its own tolerance */
  for (size_t k = 0; k < set->n; k++)
    if (set->candidates[out->order[k]].within_tolerance) {
      out->cheapest = out->order[k];
      break;
    }
  out->best_value = 0;
  for (size_t i = 1; i < set->n; i++)
    if (set->candidates[i].accuracy_per_cost > set->candidates[out->best_value].accuracy_per_cost)
      out->best_value = i;
  return CB_OK;
}
