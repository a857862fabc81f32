/*
 * gen_plan.h - from a parsed generation request to what the engine will do with it:
 * the served-model and context-window checks, the output seed, and the output length
 * (scripted, max_tokens with ignore_eos, or a seeded geometric EOS). Internal to the
 * sim module.
 *
 * Both front ends call these two functions, so `sim serve` (HTTP, wall clock) and
 * `sim run` (virtual time) turn the same request into the same engine request: same
 * prompt ids, same output length, same finish reason, same output text seed.
 */
#ifndef CALIBENCH_SIM_GEN_PLAN_H
#define CALIBENCH_SIM_GEN_PLAN_H

#include <stdint.h>

#include "calibench/sim_behavior.h"
#include "sim/api.h"
#include "sim/behavior_answer.h"
#include "sim/responses.h"

/* What a front end serves. Borrowed pointers, alive while plans are made. */
typedef struct cb__sim_gen_config {
  const char *model;                   /* served model id; a request naming another gets 404 */
  int max_model_len;                   /* the engine's effective context window */
  uint64_t seed;                       /* the server seed (--seed) */
  double eos_mean_tokens;              /* mean output length under sampled EOS */
  const cb__sim_responses *responses;  /* scripted answers, or NULL */
  const cb_sim_behavior *behavior;     /* planted behaviour (--behavior), or NULL */
  uint32_t vocab;                      /* output token ids (a behaviour's answers) */
  double logit_noise;                  /* the weights' logit noise (cb_sim_logit_noise) */
} cb__sim_gen_config;

/* The engine request's parameters, decided at admission. */
typedef struct cb__sim_gen_plan {
  int64_t prompt_tokens;               /* = the request's prompt_len */
  int64_t asked;                       /* max_tokens, or the rest of the context window */
  int64_t output_len;                  /* tokens the engine will produce, >= 1 */
  const char *finish_reason;           /* "stop" (EOS or scripted end) or "length" (cap) */
  uint64_t seed;                       /* output text and logprobs stream */
  const cb__sim_response *scripted;    /* the scripted answer, or NULL */
  cb__sim_response *behaved;           /* owned: the behaviour's answer (then also
                                          `scripted`), or NULL; the front end frees it
                                          with cb__sim_response_free when the request ends */
  struct cb__sim_answer *answer;       /* owned: a behaviour's answer split into tokens with
                                          what goes beside its text (a refusal's form,
                                          planted top_logprobs: behavior_answer.h), then
                                          `scripted` is its text; the front end frees it
                                          with cb__sim_answer_free */
  char tool_name[64];                  /* the behaved answer is a call of this tool ("": not) */
  char call_id[32];                    /* ... with this id; finish_reason "tool_calls" */
} cb__sim_gen_plan;

/*
 * Check a parsed generation request as vLLM does before admission: a `model` other
 * than the served one is 404 model_not_found; prompt + requested completion beyond
 * max_model_len is 400 context_length_exceeded with vLLM's message. On success
 * *asked is the output cap: max_tokens, or the rest of the context window.
 */
cb_status cb__sim_gen_check(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                            int64_t *asked, cb__sim_api_error *e);

/*
 * Decide the output of an accepted request. `index` is the request's position among
 * the accepted generation requests (0-based, arrival order): it seeds the output
 * text unless the request carries its own `seed`. The answer: the scripted one for
 * the prompt, else the behaviour's when it decides one (sim_behavior.h), else
 * synthetic text. Length: the scripted or behaved answer's (cut at the cap), the cap
 * with ignore_eos, else a seeded geometric EOS position with mean eos_mean_tokens and
 * at least min_tokens, cut at the cap.
 */
void cb__sim_gen_plan_make(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                           int64_t asked, uint64_t index, cb__sim_gen_plan *out);

/*
 * The prompt of an accepted completions request that asked for `echo` or
 * `prompt_logprobs` (gen_prompt.c): its text and tokens as the server counted them,
 * each token after the first with its log-probability and its position's `top` most
 * likely tokens (at most CB__SIM_PROMPT_MAX_TOP). t is how the server tokenizes. 400
 * (param prompt) when the text cannot be had: a prompt of token ids without the
 * server's tokenizer. Free *out with cb__sim_prompt_free.
 */
cb_status cb__sim_gen_prompt(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                             const cb__sim_tokens *t, int top, cb__sim_prompt **out,
                             cb__sim_api_error *e);

#endif
