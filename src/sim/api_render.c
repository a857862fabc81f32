/*
 * api_render.c - render OpenAI response bodies, SSE chunks and error bodies.
 *
 * Shapes follow OpenAI's API reference; chunks carry one token each (vLLM's default
 * stream interval). Every string that came from a request or from generated text
 * goes through cb_buf_append_json_string, so any byte sequence renders as valid JSON.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "sim/api.h"
#include "sim/behavior.h"

static void append_json_str(cb_buf *out, const char *s, size_t n) {
  cb_buf_append_char(out, '"');
  cb_buf_append_json_string(out, s, n);
  cb_buf_append_char(out, '"');
}

static void append_json_cstr(cb_buf *out, const char *s) { append_json_str(out, s, strlen(s)); }

void cb__sim_api_render_error(cb_buf *out, const cb__sim_api_error *e) {
  cb_buf_append_str(out, "{\"error\":{\"message\":");
  append_json_cstr(out, e->message);
  cb_buf_append_str(out, ",\"type\":");
  append_json_cstr(out, e->type);
  cb_buf_append_str(out, ",\"param\":");
  if (e->param[0]) append_json_cstr(out, e->param);
  else cb_buf_append_str(out, "null");
  cb_buf_append_str(out, ",\"code\":");
  if (e->code[0]) append_json_cstr(out, e->code);
  else cb_buf_append_str(out, "null");
  cb_buf_append_str(out, "}}");
}

/* ---- synthetic log-probabilities ------------------------------------------------ */

#define LOGPROB_STREAM UINT64_C(0x6c6f6770726f62) /* "logprob" */

void cb__sim_api_token_logprobs(uint64_t seed, int64_t k, int n, cb__sim_api_token *t) {
  cb_rng rng;
  cb_rng_init_stream(&rng, seed, LOGPROB_STREAM, (uint64_t)k);
  /* The chosen token's probability in [0.08, 1); alternatives share what is left,
   * each strictly below the previous one. */
  double p = 0.08 + 0.92 * cb_rng_uniform(&rng);
  t->logprob = log(p);
  if (n > CB__SIM_API_MAX_ALTS) n = CB__SIM_API_MAX_ALTS;
  t->num_alts = 0;
  double rest = 1.0 - p, prev = p;
  for (int tries = 0; t->num_alts < n && tries < 8 * CB__SIM_API_MAX_ALTS; tries++) {
    char cand[CB_SIM_TOKEN_TEXT_MAX];
    cb_sim_text_token(seed ^ LOGPROB_STREAM, k * 64 + tries, 1u << 20, cand);
    int dup = t->text && strlen(cand) == t->len && !memcmp(cand, t->text, t->len);
    for (int j = 0; j < t->num_alts && !dup; j++) dup = !strcmp(cand, t->alt_text[j]);
    if (dup) continue;
    double q = rest * (0.3 + 0.4 * cb_rng_uniform(&rng));
    if (q >= prev) q = prev * 0.9;
    rest -= q;
    prev = q;
    memcpy(t->alt_text[t->num_alts], cand, sizeof cand);
    t->alt_logprob[t->num_alts] = log(q);
    t->num_alts++;
  }
}

static void append_bytes_array(cb_buf *out, const char *s, size_t n) {
  cb_buf_append_char(out, '[');
  for (size_t i = 0; i < n; i++) cb_buf_appendf(out, i ? ",%u" : "%u", (unsigned char)s[i]);
  cb_buf_append_char(out, ']');
}

/* Chat: one entry of logprobs.content. */
static void append_chat_logprob_entry(cb_buf *out, const cb__sim_api_token *t, int top) {
  cb_buf_append_str(out, "{\"token\":");
  append_json_str(out, t->text, t->len);
  cb_buf_appendf(out, ",\"logprob\":%.6f,\"bytes\":", t->logprob);
  append_bytes_array(out, t->text, t->len);
  cb_buf_append_str(out, ",\"top_logprobs\":[");
  if (top > 0) {
    cb_buf_append_str(out, "{\"token\":");
    append_json_str(out, t->text, t->len);
    cb_buf_appendf(out, ",\"logprob\":%.6f,\"bytes\":", t->logprob);
    append_bytes_array(out, t->text, t->len);
    cb_buf_append_char(out, '}');
    for (int j = 0; j < t->num_alts && j < top - 1; j++) {
      cb_buf_append_str(out, ",{\"token\":");
      append_json_cstr(out, t->alt_text[j]);
      cb_buf_appendf(out, ",\"logprob\":%.6f,\"bytes\":", t->alt_logprob[j]);
      append_bytes_array(out, t->alt_text[j], strlen(t->alt_text[j]));
      cb_buf_append_char(out, '}');
    }
  }
  cb_buf_append_str(out, "]}");
}

/* Completions: the four parallel arrays: the echoed prompt's tokens (when `echo` is
 * given: the first with null log-probabilities, as OpenAI's legacy API and vLLM send
 * it), then the answer's tokens [0, n), their offsets after the echoed text. A prompt
 * position's top list is its token first, then the position's most likely tokens
 * (vLLM: completion/serving.py, _create_completion_logprobs). */
static void append_completion_logprobs(cb_buf *out, const cb__sim_api_response *r,
                                       const cb__sim_prompt *echo, int64_t n,
                                       cb__sim_api_token_fn token, void *ctx) {
  cb__sim_api_token t;
  size_t np = echo ? echo->n : 0, base = r->echo && r->prompt ? r->prompt->text_len : 0;
  cb_buf_append_str(out, "{\"tokens\":[");
  for (size_t i = 0; i < np; i++) {
    if (i) cb_buf_append_char(out, ',');
    append_json_str(out, echo->text + echo->tok[i].offset, echo->tok[i].len);
  }
  for (int64_t k = 0; k < n; k++) {
    token(ctx, k, &t);
    if (k || np) cb_buf_append_char(out, ',');
    append_json_str(out, t.text, t.len);
  }
  cb_buf_append_str(out, "],\"token_logprobs\":[");
  for (size_t i = 0; i < np; i++)
    if (i) cb_buf_appendf(out, ",%.6f", echo->tok[i].logprob);
    else cb_buf_append_str(out, "null");
  for (int64_t k = 0; k < n; k++) {
    token(ctx, k, &t);
    cb_buf_appendf(out, k || np ? ",%.6f" : "%.6f", t.logprob);
  }
  cb_buf_append_str(out, "],\"top_logprobs\":[");
  for (size_t i = 0; i < np; i++) {
    const cb__sim_prompt_token *x = &echo->tok[i];
    if (i) cb_buf_append_char(out, ',');
    if (!i) {
      cb_buf_append_str(out, "null");
      continue;
    }
    cb_buf_append_char(out, '{');
    append_json_str(out, echo->text + x->offset, x->len);
    cb_buf_appendf(out, ":%.6f", x->logprob);
    for (int j = 0; j < x->n_top && j < r->top_logprobs; j++) {
      if (x->top_id[j] == x->id) continue; /* one entry per token, as a dict */
      cb_buf_append_char(out, ',');
      append_json_cstr(out, x->top_text[j]);
      cb_buf_appendf(out, ":%.6f", x->top_logprob[j]);
    }
    cb_buf_append_char(out, '}');
  }
  for (int64_t k = 0; k < n; k++) {
    token(ctx, k, &t);
    if (k || np) cb_buf_append_char(out, ',');
    if (r->top_logprobs <= 0) {
      cb_buf_append_str(out, "null");
      continue;
    }
    cb_buf_append_char(out, '{');
    append_json_str(out, t.text, t.len);
    cb_buf_appendf(out, ":%.6f", t.logprob);
    for (int j = 0; j < t.num_alts && j < r->top_logprobs - 1; j++) {
      cb_buf_append_char(out, ',');
      append_json_cstr(out, t.alt_text[j]);
      cb_buf_appendf(out, ":%.6f", t.alt_logprob[j]);
    }
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_str(out, "],\"text_offset\":[");
  for (size_t i = 0; i < np; i++) cb_buf_appendf(out, i ? ",%zu" : "%zu", echo->tok[i].offset);
  for (int64_t k = 0; k < n; k++) {
    token(ctx, k, &t);
    cb_buf_appendf(out, k || np ? ",%zu" : "%zu", base + t.text_offset);
  }
  cb_buf_append_str(out, "]}");
}

/* vLLM's choices[0].prompt_logprobs (completion/protocol.py, CompletionResponseChoice:
 * list[dict[int, Logprob] | None]): null for the first token, then per token an object
 * keyed by token id, the prompt's token first with its own rank, then the k most
 * likely (ranks 1..k), each {"logprob", "rank", "decoded_token"} (vllm/v1/engine/
 * logprobs.py, _make_logprob_dict). */
static void append_prompt_logprobs(cb_buf *out, const cb__sim_prompt *p, int k) {
  cb_buf_append_str(out, ",\"prompt_logprobs\":[");
  for (size_t i = 0; i < p->n; i++) {
    const cb__sim_prompt_token *x = &p->tok[i];
    if (i) cb_buf_append_char(out, ',');
    if (!i) {
      cb_buf_append_str(out, "null");
      continue;
    }
    cb_buf_appendf(out, "{\"%u\":{\"logprob\":%.6f,\"rank\":%d,\"decoded_token\":", x->id,
                   x->logprob, x->rank);
    append_json_str(out, p->text + x->offset, x->len);
    cb_buf_append_char(out, '}');
    for (int j = 0; j < x->n_top && j < k; j++) {
      if (x->top_id[j] == x->id) continue;
      cb_buf_appendf(out, ",\"%u\":{\"logprob\":%.6f,\"rank\":%d,\"decoded_token\":",
                     x->top_id[j], x->top_logprob[j], j + 1);
      append_json_cstr(out, x->top_text[j]);
      cb_buf_append_char(out, '}');
    }
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_char(out, ']');
}

/* ---- streaming chunks ---------------------------------------------------------- */

static void chunk_head(cb_buf *out, const cb__sim_api_response *r) {
  int chat = r->kind == CB__SIM_API_CHAT;
  cb_buf_append_str(out, "data: {\"id\":");
  append_json_cstr(out, r->id);
  cb_buf_appendf(out, ",\"object\":\"%s\",\"created\":%llu,\"model\":",
                 chat ? "chat.completion.chunk" : "text_completion",
                 (unsigned long long)r->created);
  append_json_cstr(out, r->model);
}

void cb__sim_api_render_role_chunk(cb_buf *out, const cb__sim_api_response *r) {
  chunk_head(out, r);
  cb_buf_append_str(out, ",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                         "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
}

/* Chat: per-chunk logprobs for the one token t. */
static void append_token_logprobs(cb_buf *out, const cb__sim_api_response *r,
                                  const cb__sim_api_token *t) {
  if (!r->logprobs) {
    cb_buf_append_str(out, "null");
    return;
  }
  cb_buf_append_str(out, "{\"content\":[");
  append_chat_logprob_entry(out, t, r->top_logprobs);
  cb_buf_append_str(out, "]}");
}

/* A stream chunk's one token, for the completions arrays. */
static void chunk_token(void *ctx, int64_t k, cb__sim_api_token *t) {
  (void)k;
  *t = *(const cb__sim_api_token *)ctx;
}

/* delta.tool_calls with one piece of the call's arguments (OpenAI's
 * ChoiceDeltaToolCall); the first piece names the call. */
static void append_tool_delta(cb_buf *out, const cb__sim_api_tool_call *c,
                              const cb__sim_api_token *t) {
  cb_buf_append_str(out, "{\"tool_calls\":[{\"index\":0,");
  if (t->text_offset == 0) {
    cb_buf_append_str(out, "\"id\":");
    append_json_cstr(out, c->id);
    cb_buf_append_str(out, ",\"type\":\"function\",\"function\":{\"name\":");
    append_json_cstr(out, c->name);
    cb_buf_append_str(out, ",\"arguments\":");
  } else {
    cb_buf_append_str(out, "\"function\":{\"arguments\":");
  }
  append_json_str(out, t->text, t->len);
  cb_buf_append_str(out, "}}]}");
}

void cb__sim_api_render_token_chunk(cb_buf *out, const cb__sim_api_response *r,
                                    const cb__sim_api_token *t) {
  chunk_head(out, r);
  if (r->kind == CB__SIM_API_CHAT && r->tool_call) {
    cb_buf_append_str(out, ",\"choices\":[{\"index\":0,\"delta\":");
    append_tool_delta(out, r->tool_call, t);
    cb_buf_append_str(out, ",\"logprobs\":");
  } else if (r->kind == CB__SIM_API_CHAT) {
    cb_buf_append_str(out, r->refusal_field ? ",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":"
                                            : ",\"choices\":[{\"index\":0,\"delta\":{\"content\":");
    append_json_str(out, t->text, t->len);
    cb_buf_append_str(out, "},\"logprobs\":");
  } else {
    const cb__sim_prompt *echo = r->echo_pending ? r->prompt : NULL;
    cb_buf_append_str(out, ",\"choices\":[{\"index\":0,\"text\":\"");
    if (echo) cb_buf_append_json_string(out, echo->text, echo->text_len);
    if (t) cb_buf_append_json_string(out, t->text, t->len);
    cb_buf_append_str(out, "\",\"logprobs\":");
    if (r->logprobs) append_completion_logprobs(out, r, echo, t ? 1 : 0, chunk_token, (void *)t);
    else cb_buf_append_str(out, "null");
    cb_buf_append_str(out, ",\"finish_reason\":null}]}\n\n");
    return;
  }
  append_token_logprobs(out, r, t);
  cb_buf_append_str(out, ",\"finish_reason\":null}]}\n\n");
}

void cb__sim_api_render_finish_chunk(cb_buf *out, const cb__sim_api_response *r,
                                     const char *finish_reason) {
  chunk_head(out, r);
  if (r->kind == CB__SIM_API_CHAT)
    cb_buf_appendf(out, ",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
                        "\"finish_reason\":\"%s\"}]}\n\n", finish_reason);
  else
    cb_buf_appendf(out, ",\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,"
                        "\"finish_reason\":\"%s\"}]}\n\n", finish_reason);
}

/* A request with images also reports their tokens, as vLLM does beside cached_tokens
 * (usage.prompt_tokens_details.image_tokens: vllm-project/vllm#45458, after
 * sgl-project/sglang#27122; an extension of OpenAI's schema). */
static void append_usage(cb_buf *out, const cb__sim_api_response *r, int64_t completion) {
  cb_buf_appendf(out,
                 "\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
                 "\"total_tokens\":%lld,\"prompt_tokens_details\":{\"cached_tokens\":%lld",
                 (long long)r->prompt_tokens, (long long)completion,
                 (long long)(r->prompt_tokens + completion), (long long)r->cached_tokens);
  if (r->image_tokens >= 0) cb_buf_appendf(out, ",\"image_tokens\":%lld", (long long)r->image_tokens);
  cb_buf_append_str(out, "}}");
}

void cb__sim_api_render_usage_chunk(cb_buf *out, const cb__sim_api_response *r,
                                    int64_t completion_tokens) {
  chunk_head(out, r);
  cb_buf_append_str(out, ",\"choices\":[],");
  append_usage(out, r, completion_tokens);
  cb_buf_append_str(out, "}\n\n");
}

void cb__sim_api_render_done(cb_buf *out) { cb_buf_append_str(out, "data: [DONE]\n\n"); }

/* ---- whole responses ------------------------------------------------------------ */

void cb__sim_api_render_completion(cb_buf *out, const cb__sim_api_response *r, int64_t n,
                                   cb__sim_api_token_fn token, void *ctx,
                                   const char *finish_reason) {
  int chat = r->kind == CB__SIM_API_CHAT;
  cb_buf_append_str(out, "{\"id\":");
  append_json_cstr(out, r->id);
  cb_buf_appendf(out, ",\"object\":\"%s\",\"created\":%llu,\"model\":",
                 chat ? "chat.completion" : "text_completion", (unsigned long long)r->created);
  append_json_cstr(out, r->model);
  const cb__sim_api_tool_call *call = chat ? r->tool_call : NULL;
  if (call) {
    cb_buf_append_str(out, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                           "\"content\":null,\"tool_calls\":[{\"id\":");
    append_json_cstr(out, call->id);
    cb_buf_append_str(out, ",\"type\":\"function\",\"function\":{\"name\":");
    append_json_cstr(out, call->name);
    cb_buf_append_str(out, ",\"arguments\":\"");
  } else {
    cb_buf_append_str(out, !chat ? ",\"choices\":[{\"index\":0,\"text\":\""
                           : r->refusal_field
                               ? ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                                 "\"content\":null,\"refusal\":\""
                               : ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                                 "\"content\":\"");
  }
  const cb__sim_prompt *echo = !chat && r->echo ? r->prompt : NULL;
  if (echo) cb_buf_append_json_string(out, echo->text, echo->text_len);
  cb__sim_api_token t;
  for (int64_t k = 0; k < n; k++) {
    token(ctx, k, &t);
    cb_buf_append_json_string(out, t.text, t.len);
  }
  cb_buf_append_str(out, call ? "\"}}]},\"logprobs\":" : chat ? "\"},\"logprobs\":" : "\",\"logprobs\":");
  if (!r->logprobs) {
    cb_buf_append_str(out, "null");
  } else if (chat) {
    cb_buf_append_str(out, "{\"content\":[");
    for (int64_t k = 0; k < n; k++) {
      token(ctx, k, &t);
      if (k) cb_buf_append_char(out, ',');
      append_chat_logprob_entry(out, &t, r->top_logprobs);
    }
    cb_buf_append_str(out, "]}");
  } else {
    append_completion_logprobs(out, r, echo, n, token, ctx);
  }
  cb_buf_appendf(out, ",\"finish_reason\":\"%s\"", finish_reason);
  if (!chat && r->prompt && r->prompt_logprobs >= 0)
    append_prompt_logprobs(out, r->prompt, r->prompt_logprobs);
  cb_buf_append_str(out, "}],");
  append_usage(out, r, n);
  cb_buf_append_char(out, '}');
}

/* ---- embeddings ------------------------------------------------------------------ */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void append_base64(cb_buf *out, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    char q[4] = {b64chars[(v >> 18) & 63], b64chars[(v >> 12) & 63],
                 i + 1 < n ? b64chars[(v >> 6) & 63] : '=', i + 2 < n ? b64chars[v & 63] : '='};
    cb_buf_append(out, q, 4);
  }
}

/* A deterministic unit vector from the input's token ids: normal draws seeded by a
 * hash of the ids, then normalised, so equal inputs embed equally; then the planted
 * model's transform when the behaviour has an `embed` section. */
static void embed(const cb__sim_api_input *in, const cb_sim_behavior *behavior, int dim, float *v) {
  uint64_t h = UINT64_C(0x656d626564); /* "embed" */
  for (size_t i = 0; i < in->num_ids; i++) h = cb_hash3_u64(h, in->ids[i], i);
  cb_rng rng;
  cb_rng_init(&rng, h);
  double norm = 0;
  for (int i = 0; i < dim; i++) {
    double x = cb_rng_normal(&rng, 0, 1);
    v[i] = (float)x;
    norm += (double)v[i] * v[i];
  }
  norm = sqrt(norm);
  for (int i = 0; i < dim; i++) v[i] = (float)(v[i] / norm);
  cb__sim_behavior_embed_transform(behavior, h, v, dim);
}

void cb__sim_api_render_embeddings(cb_buf *out, const cb__sim_api_request *req,
                                   const char *model, int dim, const cb_sim_behavior *behavior) {
  float *v = cb_reallocarray(NULL, (size_t)dim, sizeof *v);
  size_t tokens = 0;
  cb_buf_append_str(out, "{\"object\":\"list\",\"data\":[");
  for (size_t i = 0; i < req->num_inputs; i++) {
    embed(&req->inputs[i], behavior, dim, v);
    tokens += req->inputs[i].num_ids;
    cb_buf_appendf(out, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":",
                   i ? "," : "", i);
    if (req->base64) {
      /* float32 little-endian, as OpenAI's base64 encoding. */
      unsigned char *bytes = cb_malloc((size_t)dim * 4);
      for (int j = 0; j < dim; j++) {
        uint32_t u;
        memcpy(&u, &v[j], 4);
        for (int b = 0; b < 4; b++) bytes[j * 4 + b] = (unsigned char)(u >> (8 * b));
      }
      cb_buf_append_char(out, '"');
      append_base64(out, bytes, (size_t)dim * 4);
      cb_buf_append_char(out, '"');
      cb_free(bytes);
    } else {
      cb_buf_append_char(out, '[');
      for (int j = 0; j < dim; j++) cb_buf_appendf(out, j ? ",%.9g" : "%.9g", (double)v[j]);
      cb_buf_append_char(out, ']');
    }
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_str(out, "],\"model\":");
  append_json_cstr(out, model);
  cb_buf_appendf(out, ",\"usage\":{\"prompt_tokens\":%zu,\"total_tokens\":%zu}}", tokens, tokens);
  cb_free(v);
}
