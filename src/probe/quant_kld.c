/*
 * quant_kld.c - KL divergence, top-1 agreement and delta log-probability of one
 * position from two top-k log-probability lists, the tail as one bucket
 * (probe_quant.h says why that bounds the full-vocabulary KLD from below).
 */
#include <math.h>

#include "calibench/probe_quant.h"

/* Rounding allowed on a logprob above 0 and on a list's total mass above 1. */
#define SLACK 1e-6

static cb_status check_list(const char *what, const cb_quant_entry *e, size_t n,
                            cb_error *err) {
  if (!e || n == 0) return cb_error_set(err, CB_ERR_INVALID, "%s: expected 1 or more entries", what);
  double mass = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(e[i].logprob) || e[i].logprob > SLACK)
      return cb_error_set(err, CB_ERR_INVALID, "%s[%zu]: logprob: expected a finite number <= 0, got %g",
                          what, i, e[i].logprob);
    for (size_t j = 0; j < i; j++)
      if (e[j].id == e[i].id)
        return cb_error_set(err, CB_ERR_INVALID, "%s[%zu]: token %lld: also at [%zu]", what, i,
                            (long long)e[i].id, j);
    mass += exp(e[i].logprob);
  }
  if (mass > 1 + SLACK)
    return cb_error_set(err, CB_ERR_INVALID, "%s: probabilities sum to %.9g, expected at most 1",
                        what, mass);
  return CB_OK;
}

/* Index of the most likely entry (the first of ties). */
static size_t top1(const cb_quant_entry *e, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (e[i].logprob > e[best].logprob) best = i;
  return best;
}

static double prob(double logprob) {
  return exp(logprob < 0 ? logprob : 0);
}

cb_status cb_quant_position_score(const cb_quant_entry *ref, size_t n_ref,
                                  const cb_quant_entry *cand, size_t n_cand,
                                  cb_quant_position *out, cb_error *err) {
  cb_status st = check_list("reference", ref, n_ref, err);
  if (st == CB_OK) st = check_list("candidate", cand, n_cand, err);
  if (st != CB_OK) return st;
  /* k is small (top_logprobs allows 20): the quadratic join costs nothing. */
  double kld = 0, shared_p = 0, shared_q = 0;
  size_t shared = 0;
  for (size_t i = 0; i < n_ref; i++)
    for (size_t j = 0; j < n_cand; j++) {
      if (cand[j].id != ref[i].id) continue;
      double p = prob(ref[i].logprob), q = prob(cand[j].logprob);
      if (p > 0) kld += p * (log(p) - log(q > 0 ? q : CB_QUANT_TAIL_FLOOR));
      shared_p += p;
      shared_q += q;
      shared++;
      break;
    }
  double tail_p = fmax(1 - shared_p, 0), tail_q = fmax(1 - shared_q, 0);
  double tp = fmax(tail_p, CB_QUANT_TAIL_FLOOR), tq = fmax(tail_q, CB_QUANT_TAIL_FLOOR);
  if (tail_p > 0) kld += tail_p * (log(tp) - log(tq));
  size_t r1 = top1(ref, n_ref), c1 = top1(cand, n_cand);
  out->kld = fmax(kld, 0); /* rounding of near-equal distributions may dip below 0 */
  out->tail_ref = tail_p;
  out->tail_cand = tail_q;
  out->shared = shared;
  out->top1_same = ref[r1].id == cand[c1].id;
  out->delta_logprob = NAN;
  for (size_t j = 0; j < n_cand; j++)
    if (cand[j].id == ref[r1].id) out->delta_logprob = cand[j].logprob - ref[r1].logprob;
  return CB_OK;
}
