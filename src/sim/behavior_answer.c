/*
 * behavior_answer.c - one request's planted answer (behavior_answer.h): a refusal
 * when the refusal section refuses the prompt, else the perturb section's
 * prompt-driven answer, else none (the simulator's usual seeded text).
 */
#include <string.h>

#include "calibench/alloc.h"
#include "sim/behavior_answer.h"
#include "sim/behavior_perturb.h"

/* The refusal's text as a scripted response. A content filter sends one empty token:
 * the stream still has a token chunk to time, and no content. */
static void refusal_text(const cb__sim_refusal *r, uint32_t vocab, cb__sim_response *out) {
  if (r->mode == CB__SIM_REFUSAL_FILTER) {
    out->text = cb_strdup("");
    out->num_tokens = 1;
    out->ids = cb_calloc(1, sizeof *out->ids);
    out->ends = cb_calloc(1, sizeof *out->ends);
    return;
  }
  out->text_len = strlen(r->text);
  out->text = cb_strndup(r->text, out->text_len);
  out->num_tokens = cb_sim_approx_split(out->text, out->text_len, vocab, NULL, NULL, 0);
  out->ids = cb_reallocarray(NULL, out->num_tokens, sizeof *out->ids);
  out->ends = cb_reallocarray(NULL, out->num_tokens, sizeof *out->ends);
  cb_sim_approx_split(out->text, out->text_len, vocab, out->ids, out->ends, out->num_tokens);
}

cb__sim_answer *cb__sim_answer_make(const cb__sim_refusal *refusal, const cb__sim_perturb *perturb,
                                    uint64_t seed, const char *prompt, size_t len,
                                    uint32_t vocab) {
  int refuses = cb__sim_refusal_refuses(refusal, seed, prompt, len);
  if (!refuses && !(perturb && perturb->enabled)) return NULL;
  cb__sim_answer *a = cb_calloc(1, sizeof *a);
  if (refuses) {
    a->refusal = 1;
    a->mode = refusal->mode;
    refusal_text(refusal, vocab, &a->text);
  } else {
    cb__sim_perturb_fill(perturb, seed, prompt, len, vocab, a);
  }
  return a;
}

void cb__sim_answer_free(cb__sim_answer *a) {
  if (!a) return;
  cb_free(a->text.text);
  cb_free(a->text.ids);
  cb_free(a->text.ends);
  cb_free(a->cand);
  cb_free(a->logprob);
  cb_free(a);
}
