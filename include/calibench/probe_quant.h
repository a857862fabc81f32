/*
 * probe_quant.h - `probe quant`'s per-position estimators (docs/probe.md, issue 16):
 * how far a candidate endpoint's next-token distribution is from a reference's, when
 * each endpoint shows only its top-k log-probabilities (OpenAI's top_logprobs).
 *
 * The full distributions are unknown past the top k, so both are coarsened onto the
 * same buckets: one per token that appears in both lists, and one tail bucket holding
 * the rest of each distribution's mass (1 minus its listed shared mass). KL(P || Q) of
 * the coarsened pair never exceeds the full-vocabulary KL(P || Q) (the data-processing
 * inequality: merging outcomes cannot increase a KL divergence), so the estimate is a
 * lower bound that tightens as k grows, and is exact when the lists cover all mass.
 */
#ifndef CALIBENCH_PROBE_QUANT_H
#define CALIBENCH_PROBE_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of a top_logprobs list: the caller's id for the token (equal ids: the same
 * token string) and its natural-log probability. */
typedef struct {
  int64_t id;
  double logprob;
} cb_quant_entry;

typedef struct {
  double kld;           /* KL(reference || candidate) over the buckets, nats, >= 0 */
  double tail_ref;      /* reference mass outside the shared tokens */
  double tail_cand;     /* candidate mass outside the shared tokens */
  size_t shared;        /* tokens in both lists */
  int top1_same;        /* the two lists' most likely tokens are the same */
  /* candidate log p - reference log p of the reference's top token; NAN when the
   * candidate's list does not hold it */
  double delta_logprob;
} cb_quant_position;

/* Tail masses below this count as this much: a tail of exactly 0 in the candidate
 * against a positive one in the reference would make the divergence infinite, which
 * only rounding of near-complete lists produces. */
#define CB_QUANT_TAIL_FLOOR 1e-10

/*
 * Score one position. Each list: 1 or more entries, ids distinct, every logprob
 * finite and <= 0, probabilities summing to at most 1 (1e-6 of rounding allowed).
 * CB_ERR_INVALID naming the list and entry otherwise.
 */
cb_status cb_quant_position_score(const cb_quant_entry *ref, size_t n_ref,
                                  const cb_quant_entry *cand, size_t n_cand,
                                  cb_quant_position *out, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
