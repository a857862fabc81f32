/*
 * api.h - the simulator's OpenAI protocol layer (internal to the sim module):
 * parsing request bodies into cb__sim_api_request and rendering responses, stream
 * chunks and error bodies. Pure: no sockets, no engine, no clock.
 *
 * Formats follow OpenAI's API reference (chat.completion, chat.completion.chunk,
 * text_completion, embedding list, {"error": {...}} bodies) and vLLM's extensions
 * (ignore_eos, min_tokens); see docs/simulator.md "HTTP API".
 */
#ifndef CALIBENCH_SIM_API_H
#define CALIBENCH_SIM_API_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/sim_behavior.h"
#include "calibench/error.h"
#include "calibench/sim.h"
#include "calibench/tok.h"

typedef enum {
  CB__SIM_API_CHAT = 0,    /* POST /v1/chat/completions */
  CB__SIM_API_COMPLETIONS, /* POST /v1/completions */
  CB__SIM_API_EMBEDDINGS   /* POST /v1/embeddings */
} cb__sim_api_kind;

/* An error to send back: HTTP status and OpenAI's error object fields. */
typedef struct cb__sim_api_error {
  int status;        /* 400, 404, 413, 429, 500, 503 ... */
  char type[32];     /* "invalid_request_error", "not_found_error", ... */
  char param[64];    /* offending field, "" = null */
  char code[32];     /* "model_not_found", ..., "" = null */
  char message[512];
} cb__sim_api_error;

/* Fill *e and return CB_ERR_INVALID (for one-line error returns). */
cb_status cb__sim_api_fail(cb__sim_api_error *e, int status, const char *type,
                           const char *param, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* One embedding input: text, or token ids. */
typedef struct cb__sim_api_input {
  char *text;    /* owned; NULL when ids were given */
  size_t text_len;
  uint32_t *ids; /* owned; ids of the input (tokenized text or given ids) */
  size_t num_ids;
} cb__sim_api_input;

/* One chat message as sent: its role and its content's text (parts joined). */
typedef struct cb__sim_api_message {
  char role[16];           /* system, developer, user, assistant, tool */
  char *content;           /* owned, NUL-terminated */
  size_t content_len;
} cb__sim_api_message;

typedef struct cb__sim_api_request {
  cb__sim_api_kind kind;
  char *model;             /* owned; NULL when the request named none */
  /* Generation (chat, completions). */
  uint32_t *prompt_ids;    /* owned: prompt tokens (chat template applied) */
  size_t prompt_len;
  char *match_key;         /* owned: last user message (chat) or the prompt text
                              (completions) for scripted responses; NULL if none */
  cb__sim_api_message *messages; /* owned: chat: every message in order (a behaviour
                              reads the conversation: dialog slot recall) */
  size_t num_messages;
  int stream;
  int include_usage;       /* stream_options.include_usage */
  int64_t max_tokens;      /* max_tokens / max_completion_tokens; -1 = not given */
  int64_t min_tokens;      /* vLLM extension; 0 = none */
  int ignore_eos;          /* vLLM extension */
  int logprobs;            /* chat: logprobs true; completions: logprobs given */
  int top_logprobs;        /* alternatives per token (chat top_logprobs, completions
                              logprobs=N) */
  int echo;                /* completions: the prompt's tokens come back before the answer's
                              (OpenAI's legacy `echo`; max_tokens 0: the prompt alone) */
  int prompt_logprobs;     /* completions: vLLM's `prompt_logprobs` (entries per prompt
                              position); -1 when not asked */
  int has_seed;
  uint64_t seed;
  /* Chat with tools: where the conversation is, for the `agent` behaviour. */
  int has_tools;           /* a non-empty `tools` array was sent */
  int64_t tool_calls_made; /* tool calls in the conversation's assistant messages */
  char *last_tool;         /* owned: the name of the last of them, NULL when none */
  int last_tool_error;     /* the last message is a tool result reporting an error
                              (its content a JSON object with an "error" member) */
  /* Images (chat image_url parts), counted into prompt_ids as vision tokens. */
  int num_images;
  int64_t image_tokens;    /* vision tokens among prompt_ids */
  double encoder_flops;    /* the vision encoder's FLOPs for all of them */
  /* Embeddings. */
  cb__sim_api_input *inputs; /* owned array */
  size_t num_inputs;
  int base64;              /* encoding_format "base64" */
  int dimensions;          /* 0 = the server's default */
} cb__sim_api_request;

/* How prompt text becomes token ids: a real tokenizer when the server has one
 * (`sim serve --tokenizer`), else the approximate tokenizer over `vocab` ids. */
typedef struct cb__sim_tokens {
  const cb_tok *tok; /* NULL: approximate */
  uint32_t vocab;    /* ids accepted in token-id prompts (the tokenizer's when set) */
  int has_vision;    /* 1: the model takes images, through `vision` */
  cb_sim_vision vision;
} cb__sim_tokens;

/* Tokenize text into a new array (*ids, owned, *n ids). */
void cb__sim_tokenize(const cb__sim_tokens *t, const char *text, size_t len, uint32_t **ids,
                      size_t *n);

/*
 * Parse and validate a request body of the given kind, tokenizing prompt text with
 * `t`. On failure *e says what is wrong (status 400, the field in param) and *out
 * holds nothing to free. On success release *out with cb__sim_api_request_free.
 */
cb_status cb__sim_api_parse(cb__sim_api_kind kind, const char *body, size_t len,
                            const cb__sim_tokens *t, cb__sim_api_request *out,
                            cb__sim_api_error *e);
void cb__sim_api_request_free(cb__sim_api_request *r);

/* Error body {"error": {"message", "type", "param", "code"}}. */
void cb__sim_api_render_error(cb_buf *out, const cb__sim_api_error *e);

/* ---- Rendering generation responses ------------------------------------------- */

/* A response that is one tool call (the `agent` behaviour): its output tokens are
 * the pieces of the call's arguments string. */
typedef struct cb__sim_api_tool_call {
  const char *id;          /* "call_..." */
  const char *name;
} cb__sim_api_tool_call;

/* Everything a response needs to know about its request. */
typedef struct cb__sim_api_response {
  cb__sim_api_kind kind;
  const char *id;          /* "chatcmpl-..." / "cmpl-..." */
  const char *model;
  uint64_t created;        /* Unix seconds */
  int logprobs;
  int top_logprobs;
  int64_t prompt_tokens;
  int64_t cached_tokens;   /* prompt tokens served from the prefix cache */
  int64_t image_tokens;    /* vision tokens among prompt_tokens; -1: no images (not
                              reported) */
  int refusal_field;       /* chat: the text goes in OpenAI's `refusal` (delta.refusal,
                              message.refusal), content null (a behaviour's refusal) */
  const cb__sim_api_tool_call *tool_call; /* chat: the answer is this call, or NULL */
  /* Completions: the prompt's tokens and their log-probabilities (NULL unless echo or
   * prompt_logprobs was asked). */
  const struct cb__sim_prompt *prompt;
  int echo;                /* the text and logprobs start with the prompt's (its offsets
                              shift the answer's) */
  int echo_pending;        /* stream: the next token chunk carries the prompt */
  int prompt_logprobs;     /* entries per position in choices[0].prompt_logprobs; -1 none */
} cb__sim_api_response;

/* A prompt as the server tokenized it, each token with its log-probability given those
 * before it and its position's most likely tokens (gen_prompt.c). */
#define CB__SIM_PROMPT_MAX_TOP 20
typedef struct cb__sim_prompt_token {
  size_t offset, len;      /* its text: the prompt's text [offset, offset + len) */
  uint32_t id;
  double logprob;          /* log p given the tokens before it (not for the first) */
  int rank;                /* 1: the position's most likely token */
  int n_top;               /* the position's most likely tokens, most likely first */
  char top_text[CB__SIM_PROMPT_MAX_TOP][CB_SIM_TOKEN_TEXT_MAX];
  uint32_t top_id[CB__SIM_PROMPT_MAX_TOP];
  double top_logprob[CB__SIM_PROMPT_MAX_TOP];
} cb__sim_prompt_token;

typedef struct cb__sim_prompt {
  char *text;              /* owned: the prompt's text, its tokens' texts joined */
  size_t text_len;
  cb__sim_prompt_token *tok; /* owned */
  size_t n;
} cb__sim_prompt;

void cb__sim_prompt_free(cb__sim_prompt *p);

/* One generated token and its synthetic log-probabilities. */
#define CB__SIM_API_MAX_ALTS 19
typedef struct cb__sim_api_token {
  const char *text;   /* not owned */
  size_t len;
  size_t text_offset; /* completions logprobs: offset of this token in the output */
  double logprob;
  int num_alts;       /* alternatives listed after the token in top_logprobs */
  char alt_text[CB__SIM_API_MAX_ALTS][16];
  double alt_logprob[CB__SIM_API_MAX_ALTS];
} cb__sim_api_token;

/* Synthetic, deterministic log-probabilities for token k of a stream seeded by
 * `seed`: the token gets a logprob in (-2.5, 0], and n alternatives (n <= 19),
 * distinct from it and from each other, get strictly smaller ones. Sets everything
 * but text, len and text_offset. */
void cb__sim_api_token_logprobs(uint64_t seed, int64_t k, int n, cb__sim_api_token *t);

/* SSE: the first chat chunk (role only, empty content), as OpenAI and vLLM send. */
void cb__sim_api_render_role_chunk(cb_buf *out, const cb__sim_api_response *r);
/* SSE: one chunk carrying one token (with r->tool_call: the next piece of the call's
 * arguments in delta.tool_calls, the first piece with index, id, type and name, as
 * OpenAI streams a call). Completions with r->echo_pending: the prompt's text and
 * logprobs come first, in the same chunk, as vLLM's first echoed chunk; t NULL: the
 * prompt alone (echo with max_tokens 0). */
void cb__sim_api_render_token_chunk(cb_buf *out, const cb__sim_api_response *r,
                                    const cb__sim_api_token *t);
/* SSE: the closing chunk with empty delta/text and finish_reason ("stop"|"length"). */
void cb__sim_api_render_finish_chunk(cb_buf *out, const cb__sim_api_response *r,
                                     const char *finish_reason);
/* SSE: the usage chunk (choices: []) sent when include_usage is set. */
void cb__sim_api_render_usage_chunk(cb_buf *out, const cb__sim_api_response *r,
                                    int64_t completion_tokens);
/* SSE: "data: [DONE]". */
void cb__sim_api_render_done(cb_buf *out);

/*
 * Non-streaming body. The tokens are produced by calling token(ctx, k, &t) for
 * k = 0..n-1 (the text is rendered once; logprobs arrays when asked). With
 * r->tool_call the message has content null and the tokens are the arguments of its
 * one tool call. Completions with r->echo: the prompt's text and tokens first; with
 * r->prompt_logprobs >= 0: choices[0].prompt_logprobs.
 */
typedef void (*cb__sim_api_token_fn)(void *ctx, int64_t k, cb__sim_api_token *t);
void cb__sim_api_render_completion(cb_buf *out, const cb__sim_api_response *r,
                                   int64_t n, cb__sim_api_token_fn token, void *ctx,
                                   const char *finish_reason);

/* Embeddings list response: one unit vector of `dim` floats per input, or the
 * behaviour's planted model's vector (its `embed` section; behavior may be NULL). */
void cb__sim_api_render_embeddings(cb_buf *out, const cb__sim_api_request *req,
                                   const char *model, int dim, const cb_sim_behavior *behavior);

#endif
