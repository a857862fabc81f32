/*
 * behavior_answer.c - the answers the refusal and perturb sections plant
 * (behavior_answer.h): a refusal in its form, the perturb section's prompt-driven
 * answer with its candidates, and the ranking of a token's candidates by their logits
 * that the perturb and lm sections share.
 */
#include <math.h>
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
  cb__sim_answer *a = cb__sim_answer_ranked(p->answer_tokens, p->candidates);
  cb__sim_perturb_fill(p, seed, prompt, len, vocab, a);
  return a;
}

cb__sim_answer *cb__sim_answer_ranked(int tokens, int candidates) {
  cb__sim_answer *a = cb_calloc(1, sizeof *a);
  a->text = cb_calloc(1, sizeof *a->text);
  a->candidates = candidates;
  a->cand = cb_reallocarray(NULL, (size_t)tokens * (size_t)candidates, sizeof *a->cand);
  a->logprob = cb_reallocarray(NULL, (size_t)tokens * (size_t)candidates, sizeof *a->logprob);
  a->text->ids = cb_reallocarray(NULL, (size_t)tokens, sizeof *a->text->ids);
  a->text->ends = cb_reallocarray(NULL, (size_t)tokens, sizeof *a->text->ends);
  a->text->text = cb_strndup("", 0);
  return a;
}

int cb__sim_answer_token(cb__sim_answer *a, int k, const double *z,
                         const char (*words)[CB_SIM_TOKEN_TEXT_MAX], const uint32_t *ids) {
  int n = a->candidates, order[CB__SIM_PERTURB_MAX_CANDIDATES];
  double mx = z[0], sum = 0;
  for (int v = 1; v < n; v++) mx = z[v] > mx ? z[v] : mx;
  for (int v = 0; v < n; v++) sum += exp(z[v] - mx);
  for (int v = 0; v < n; v++) { /* insertion sort by decreasing logit; ties by index */
    int j = v;
    while (j > 0 && z[order[j - 1]] < z[v]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  double log_sum = log(sum);
  for (int r = 0; r < n; r++) {
    memcpy(a->cand[(size_t)k * (size_t)n + (size_t)r], words[order[r]], CB_SIM_TOKEN_TEXT_MAX);
    a->logprob[(size_t)k * (size_t)n + (size_t)r] = z[order[r]] - mx - log_sum;
  }
  cb__sim_response *t = a->text;
  const char *w = words[order[0]];
  size_t wl = strlen(w);
  t->text = cb_realloc(t->text, t->text_len + wl + 1);
  memcpy(t->text + t->text_len, w, wl + 1);
  t->text_len += wl;
  t->ids[k] = ids[order[0]];
  t->ends[k] = t->text_len;
  t->num_tokens = (size_t)k + 1;
  return order[0];
}

void cb__sim_answer_free(cb__sim_answer *a) {
  if (!a) return;
  cb__sim_response_free(a->text);
  cb_free(a->cand);
  cb_free(a->logprob);
  cb_free(a);
}
