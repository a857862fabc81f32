/*
 * behavior_answer.c - the answers the refusal and perturb sections plant
 * (behavior_answer.h): a refusal in its form, the perturb section's prompt-driven
 * answer with its candidates.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "sim/behavior_answer.h"
#include "sim/behavior_perturb.h"

cb__sim_answer *cb__sim_refusal_answer(const cb__sim_refusal *r, uint32_t vocab) {
  cb__sim_answer *a = cb_calloc(1, sizeof *a);
  a->refusal = 1;
  a->mode = r->mode;
  if (r->mode == CB__SIM_REFUSAL_FILTER) {
    /* A content filter sends one empty token: the stream still has a token chunk to
     * time, and no content. */
    a->text = cb_calloc(1, sizeof *a->text);
    a->text->text = cb_strdup("");
    a->text->num_tokens = 1;
    a->text->ids = cb_calloc(1, sizeof *a->text->ids);
    a->text->ends = cb_calloc(1, sizeof *a->text->ends);
  } else {
    a->text = cb__sim_response_new(r->text, strlen(r->text), vocab);
  }
  return a;
}

cb__sim_answer *cb__sim_perturb_answer(const cb__sim_perturb *p, uint64_t seed, const char *prompt,
                                       size_t len, uint32_t vocab) {
  cb__sim_answer *a = cb_calloc(1, sizeof *a);
  a->text = cb_calloc(1, sizeof *a->text);
  cb__sim_perturb_fill(p, seed, prompt, len, vocab, a);
  return a;
}

void cb__sim_answer_free(cb__sim_answer *a) {
  if (!a) return;
  cb__sim_response_free(a->text);
  cb_free(a->cand);
  cb_free(a->logprob);
  cb_free(a);
}
