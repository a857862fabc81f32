/*
 * behavior_perturb.h - the perturb section's answer, for behavior_answer.c and the
 * tests (internal to the sim module; the model is described in behavior_answer.h).
 */
#ifndef CALIBENCH_SIM_BEHAVIOR_PERTURB_H
#define CALIBENCH_SIM_BEHAVIOR_PERTURB_H

#include "sim/behavior_answer.h"

/* Token k's logits over its p->candidates words (z has that many). */
void cb__sim_perturb_logits(const cb__sim_perturb *p, uint64_t seed, const char *prompt,
                            size_t len, int k, double *z);
/* Fill a (cb__sim_answer_ranked for p's answer_tokens and candidates): its text
 * (answer_tokens words, each the most likely of its candidates), cand and logprob. */
void cb__sim_perturb_fill(const cb__sim_perturb *p, uint64_t seed, const char *prompt, size_t len,
                          uint32_t vocab, cb__sim_answer *a);

#endif
