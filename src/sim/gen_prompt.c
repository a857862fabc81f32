/*
 * gen_prompt.c - a completions request's prompt with its tokens' log-probabilities
 * (gen_plan.h, cb__sim_gen_prompt), for OpenAI's legacy `echo` with `logprobs` and
 * vLLM's `prompt_logprobs`.
 *
 * Position i's distribution is what the server says of the token after the prompt's
 * first i tokens: with a behaviour's `lm` section, the section's own next-token
 * distribution of that prefix (cb__sim_behavior_lm_next, the function its answers
 * use, so the prefix sent alone with max_tokens 1 gets the same numbers); otherwise
 * synthetic log-probabilities seeded by the prefix's text, the token itself the most
 * likely. A token the lm cannot say (not one of its words) has probability 0, sent as
 * vLLM sends -inf: -9999.0 (completion/serving.py, _create_completion_logprobs).
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/tok.h"
#include "calibench/workload.h"
#include "sim/behavior.h"
#include "sim/gen_plan.h"

#define STREAM_PROMPT UINT64_C(0x70726f6d7074) /* "prompt" */
#define LOGPROB_FLOOR (-9999.0)

void cb__sim_prompt_free(cb__sim_prompt *p) {
  if (!p) return;
  cb_free(p->text);
  cb_free(p->tok);
  cb_free(p);
}

/* The prompt's text and each token's place in it: the tokenizer's pieces of each id,
 * or the approximate tokenizer's split of the text it counted. */
static cb_status split(const cb__sim_api_request *req, const cb__sim_tokens *t, cb__sim_prompt *p,
                       cb__sim_api_error *e) {
  p->n = req->prompt_len;
  p->tok = cb_calloc(p->n ? p->n : 1, sizeof *p->tok);
  if (t->tok) {
    cb_buf b;
    cb_buf_init(&b, 0);
    for (size_t i = 0; i < p->n; i++) {
      size_t before = b.len;
      cb_tok_id id = req->prompt_ids[i];
      cb_error err;
      if (cb_tok_decode(t->tok, &id, 1, &b, &err) != CB_OK) {
        cb_buf_free(&b);
        return cb__sim_api_fail(e, 400, "invalid_request_error", "prompt", NULL,
                                "prompt token %zu: %s", i, err.msg);
      }
      p->tok[i] = (cb__sim_prompt_token){.offset = before, .len = b.len - before, .id = id};
    }
    p->text_len = b.len;
    p->text = cb_strndup(b.data ? b.data : "", b.len);
    cb_buf_free(&b);
    return CB_OK;
  }
  if (!req->match_key)
    return cb__sim_api_fail(e, 400, "invalid_request_error", "prompt", NULL,
                            "echo and prompt_logprobs of a prompt given as token ids need the "
                            "server's tokenizer (sim serve --tokenizer)");
  p->text_len = strlen(req->match_key);
  p->text = cb_strndup(req->match_key, p->text_len);
  size_t *ends = cb_reallocarray(NULL, p->n ? p->n : 1, sizeof *ends);
  cb_tok_approx_split(p->text, p->text_len, t->vocab, NULL, ends, p->n);
  for (size_t i = 0; i < p->n; i++) {
    size_t start = i ? ends[i - 1] : 0;
    p->tok[i] = (cb__sim_prompt_token){.offset = start, .len = ends[i] - start,
                                       .id = req->prompt_ids[i]};
  }
  cb_free(ends);
  return CB_OK;
}

static int same_text(const char *a, size_t alen, const char *b) {
  return strlen(b) == alen && !memcmp(a, b, alen);
}

/* Position i from the lm's ranked words; 0 when there is no lm section. */
static int lm_position(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                       const cb__sim_prompt *p, cb__sim_prompt_token *x, int top) {
  if (!c->behavior) return 0;
  cb__sim_behavior_request rq;
  cb__sim_behavior_request_init(c->behavior, &rq, req, p->text, x->offset, (int64_t)req->prompt_len,
                                c->seed);
  rq.vocab = c->vocab;
  rq.logit_noise = c->logit_noise;
  cb__sim_answer *a = cb__sim_behavior_lm_next(c->behavior, &rq);
  if (!a) return 0;
  uint32_t vocab = c->vocab ? c->vocab : CB_WORKLOAD_APPROX_VOCAB;
  const char *text = p->text + x->offset;
  x->logprob = LOGPROB_FLOOR;
  x->rank = a->candidates + 1;
  for (int r = 0; r < a->candidates; r++) {
    const char *w = a->cand[r];
    int mine = same_text(text, x->len, w);
    if (mine) {
      x->logprob = a->logprob[r];
      x->rank = r + 1;
    }
    if (r >= top) continue;
    memcpy(x->top_text[r], w, CB_SIM_TOKEN_TEXT_MAX);
    /* the word the prompt holds keeps the prompt's id: one key per token */
    x->top_id[r] = mine ? x->id : cb_tok_approx_id(w, strlen(w), vocab);
    x->top_logprob[r] = a->logprob[r];
    x->n_top = r + 1;
  }
  cb__sim_answer_free(a);
  return 1;
}

/* Position i without an lm: the synthetic log-probabilities of generated tokens, seeded
 * by the prefix's text, the prompt's token first. */
static void synthetic_position(const cb__sim_gen_config *c, const cb__sim_prompt *p,
                               cb__sim_prompt_token *x, int top, uint32_t vocab) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < x->offset; i++)
    h = (h ^ (unsigned char)p->text[i]) * UINT64_C(0x100000001b3);
  cb__sim_api_token t = {.text = p->text + x->offset, .len = x->len};
  cb__sim_api_token_logprobs(cb_hash3_u64(c->seed, h, STREAM_PROMPT), 0, top - 1, &t);
  x->logprob = t.logprob;
  x->rank = 1;
  if (top < 1) return;
  size_t n = x->len < CB_SIM_TOKEN_TEXT_MAX ? x->len : CB_SIM_TOKEN_TEXT_MAX - 1;
  memcpy(x->top_text[0], t.text, n);
  x->top_text[0][n] = '\0';
  x->top_id[0] = x->id;
  x->top_logprob[0] = t.logprob;
  x->n_top = 1;
  for (int j = 0; j < t.num_alts && x->n_top < top; j++, x->n_top++) {
    memcpy(x->top_text[x->n_top], t.alt_text[j], CB_SIM_TOKEN_TEXT_MAX);
    x->top_id[x->n_top] = cb_tok_approx_id(t.alt_text[j], strlen(t.alt_text[j]), vocab);
    x->top_logprob[x->n_top] = t.alt_logprob[j];
  }
}

cb_status cb__sim_gen_prompt(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                             const cb__sim_tokens *t, int top, cb__sim_prompt **out,
                             cb__sim_api_error *e) {
  *out = NULL;
  cb__sim_prompt *p = cb_calloc(1, sizeof *p);
  cb_status st = split(req, t, p, e);
  if (st != CB_OK) {
    cb__sim_prompt_free(p);
    return st;
  }
  if (top > CB__SIM_PROMPT_MAX_TOP) top = CB__SIM_PROMPT_MAX_TOP;
  for (size_t i = 1; i < p->n; i++)
    if (!lm_position(c, req, p, &p->tok[i], top))
      synthetic_position(c, p, &p->tok[i], top, t->vocab);
  *out = p;
  return CB_OK;
}
