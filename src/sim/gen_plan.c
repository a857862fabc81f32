/*
 * gen_plan.c - admission decisions shared by `sim serve` and `sim run` (gen_plan.h):
 * model and context-window checks, the output seed and the output length.
 */
#include "sim/gen_plan.h"

#include <math.h>
#include <string.h>

#include "calibench/rng.h"
#include "sim/behavior.h"

cb_status cb__sim_gen_check(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                            int64_t *asked, cb__sim_api_error *e) {
  if (req->model && strcmp(req->model, c->model))
    return cb__sim_api_fail(e, 404, "invalid_request_error", "model", "model_not_found",
                            "The model `%s` does not exist.", req->model);
  /* Context window, as vLLM checks it (prompt + requested completion). */
  int64_t prompt = (int64_t)req->prompt_len, limit = c->max_model_len - prompt;
  *asked = req->max_tokens >= 0 ? req->max_tokens : (limit > 0 ? limit : 0);
  /* echo with max_tokens 0: vLLM generates one token and returns the prompt alone
   * (completion/protocol.py, to_sampling_params: echo_without_generation) */
  if (req->max_tokens == 0) *asked = 1;
  if (limit < 1 || *asked > limit)
    return cb__sim_api_fail(
        e, 400, "invalid_request_error", req->kind == CB__SIM_API_CHAT ? "messages" : "prompt",
        "context_length_exceeded",
        "This model's maximum context length is %d tokens. However, you requested "
        "%lld tokens (%lld in the messages, %lld in the completion). Please reduce the "
        "length of the messages or completion.",
        c->max_model_len, (long long)(prompt + *asked), (long long)prompt, (long long)*asked);
  return CB_OK;
}

void cb__sim_gen_plan_make(const cb__sim_gen_config *c, const cb__sim_api_request *req,
                           int64_t asked, uint64_t index, cb__sim_gen_plan *out) {
  memset(out, 0, sizeof *out);
  out->prompt_tokens = (int64_t)req->prompt_len;
  out->asked = asked;
  out->seed = req->has_seed ? cb_hash3_u64(c->seed, req->seed, 1) : cb_hash3_u64(c->seed, index, 0);
  if (c->responses && req->match_key)
    out->scripted = cb__sim_responses_find(c->responses, req->match_key, strlen(req->match_key));
  if (!out->scripted && c->behavior && req->match_key) {
    cb__sim_behavior_request rq;
    cb__sim_behavior_request_init(c->behavior, &rq, req, req->match_key, strlen(req->match_key),
                                  (int64_t)req->prompt_len, c->seed);
    rq.vocab = c->vocab;
    rq.request_seed = out->seed;
    rq.logit_noise = c->logit_noise;
    cb__sim_behavior_reply reply;
    memset(&reply, 0, sizeof reply);
    cb_buf_init(&reply.text, 0);
    if (cb__sim_behavior_reply_to(c->behavior, &rq, &reply)) {
      if (reply.answer) {
        out->answer = reply.answer;
        out->scripted = reply.answer->text;
        /* Its synthetic logprobs (a refusal's) follow the answer, not the request's
         * arrival: the same answer, the same first-token distribution. */
        uint64_t h = cb_fnv1a64(reply.answer->text->text, reply.answer->text->text_len);
        out->seed = cb_hash3_u64(c->seed, h, 2);
      } else if (reply.text.len) {
        out->behaved = cb__sim_response_new(reply.text.data, reply.text.len, c->vocab);
        out->scripted = out->behaved;
        memcpy(out->tool_name, reply.tool_name, sizeof out->tool_name);
        memcpy(out->call_id, reply.call_id, sizeof out->call_id);
      }
    }
    cb_buf_free(&reply.text);
  }
  int64_t limit = asked;
  if (out->scripted) {
    int64_t n = (int64_t)out->scripted->num_tokens;
    out->output_len = n < limit ? n : limit;
    out->finish_reason = n > limit ? "length" : out->tool_name[0] ? "tool_calls" : "stop";
    if (out->answer && out->answer->refusal && out->answer->mode == CB__SIM_REFUSAL_FILTER)
      out->finish_reason = "content_filter";
    return;
  }
  if (req->ignore_eos) {
    out->output_len = limit;
    out->finish_reason = "length";
    return;
  }
  cb_rng rng;
  cb_rng_init_stream(&rng, out->seed, UINT64_C(0x656f73), 0); /* "eos" */
  double mean = c->eos_mean_tokens > 1 ? c->eos_mean_tokens : 1;
  double u = 1.0 - cb_rng_uniform(&rng); /* (0, 1] */
  int64_t eos = mean <= 1 ? 1 : 1 + (int64_t)floor(log(u) / log(1.0 - 1.0 / mean));
  if (eos < req->min_tokens) eos = req->min_tokens;
  if (eos < 1) eos = 1;
  out->output_len = eos < limit ? eos : limit;
  out->finish_reason = eos < limit ? "stop" : "length";
}
