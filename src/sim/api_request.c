/*
 * api_request.c - parse and validate OpenAI request bodies for the simulator.
 *
 * Validation follows what OpenAI and vLLM reject, with the field named in `param`:
 * wrong JSON types, missing messages/prompt/input, max_tokens < 1 (0 only with
 * completions' echo), prompt_logprobs in a stream or on chat, top_logprobs
 * outside 0..20 or without logprobs, stream_options without stream, n != 1, content
 * parts that are not text. Fields the simulator does not model (temperature, top_p,
 * stop, ...) are accepted and ignored, as vLLM ignores what it does not know.
 *
 * Image parts ({"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}})
 * are accepted when the model has a vision encoder (cb_sim_vision_preset): the PNG or
 * JPEG header gives the size, the processor's resize the number of vision tokens, which
 * take the image's place in the prompt (ids hashed from the image's bytes, so the same
 * image hits the prefix cache as vLLM's multimodal hashes make it), and the encoder's
 * FLOPs go with the request. Only data: URLs: the simulator fetches nothing.
 *
 * Chat prompts are rendered with a generic template before tokenizing, so prompt
 * token counts include per-message overhead as real chat templates do:
 *   for each message: "<|ROLE|>\n" + content + "<|end|>\n"; then "<|assistant|>\n".
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "calibench/tok.h"
#include "sim/api.h"
#include "util/base64.h"
#include "util/image_header.h"

#define MAX_TOP_LOGPROBS 20
/* vLLM's max_logprobs (20 by default) bounds completions' logprobs as chat's top_logprobs */
#define MAX_COMPLETION_LOGPROBS 20

cb_status cb__sim_api_fail(cb__sim_api_error *e, int status, const char *type,
                           const char *param, const char *code, const char *fmt, ...) {
  e->status = status;
  snprintf(e->type, sizeof e->type, "%s", type);
  snprintf(e->param, sizeof e->param, "%s", param ? param : "");
  snprintf(e->code, sizeof e->code, "%s", code ? code : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return CB_ERR_INVALID;
}

static cb_status bad(cb__sim_api_error *e, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cb_status bad(cb__sim_api_error *e, const char *param, const char *fmt, ...) {
  char msg[sizeof e->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cb__sim_api_fail(e, 400, "invalid_request_error", param, NULL, "%s", msg);
}

static const char *json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
  }
}

/* Optional boolean field: absent or null keeps *out. */
static cb_status get_bool(json_t *obj, const char *key, int *out, cb__sim_api_error *e) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return CB_OK;
  if (!json_is_boolean(v)) return bad(e, key, "'%s' must be a boolean, got %s", key, json_type_name(v));
  *out = json_is_true(v);
  return CB_OK;
}

/* Optional integer field within [lo, hi]: absent or null keeps *out. */
static cb_status get_int(json_t *obj, const char *key, int64_t lo, int64_t hi, int64_t *out,
                         cb__sim_api_error *e) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return CB_OK;
  if (!json_is_integer(v)) return bad(e, key, "'%s' must be an integer, got %s", key, json_type_name(v));
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    if (hi == INT64_MAX)
      return bad(e, key, "'%s' must be at least %lld, got %lld", key, (long long)lo, (long long)x);
    return bad(e, key, "'%s' must be between %lld and %lld, got %lld", key, (long long)lo,
               (long long)hi, (long long)x);
  }
  *out = x;
  return CB_OK;
}

/* Optional number fields the simulator ignores must still be numbers. */
static cb_status check_number(json_t *obj, const char *key, cb__sim_api_error *e) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v) || json_is_number(v)) return CB_OK;
  return bad(e, key, "'%s' must be a number, got %s", key, json_type_name(v));
}

void cb__sim_tokenize(const cb__sim_tokens *t, const char *text, size_t len, uint32_t **ids,
                      size_t *n) {
  if (t->tok) {
    /* Special-token text counts as text, as a server counts a user's prompt. */
    cb_tok_encode_params ep;
    cb_tok_default_encode_params(&ep);
    ep.special = CB_TOK_SPECIAL_TEXT;
    cb_tok_ids out = {0};
    cb_error err;
    if (cb_tok_encode(t->tok, text, len, &ep, &out, &err) == CB_OK) {
      *ids = out.ids ? out.ids : cb_calloc(1, sizeof **ids);
      *n = out.len;
      return;
    }
    cb_tok_ids_free(&out); /* cannot fail with special tokens as text; count approximately */
  }
  *n = cb_tok_approx_tokenize(text, len, t->vocab, NULL, 0);
  *ids = cb_reallocarray(NULL, *n ? *n : 1, sizeof **ids);
  cb_tok_approx_tokenize(text, len, t->vocab, *ids, *n);
}

static cb_status tokenize_into(cb__sim_api_request *r, const char *text, size_t len,
                               const cb__sim_tokens *t) {
  cb__sim_tokenize(t, text, len, &r->prompt_ids, &r->prompt_len);
  return CB_OK;
}

/* Token-id arrays given instead of text: every element an integer in [0, vocab). */
static cb_status parse_ids(json_t *arr, const char *param, uint32_t vocab, uint32_t **ids,
                           size_t *n, cb__sim_api_error *e) {
  size_t count = json_array_size(arr);
  *ids = cb_reallocarray(NULL, count ? count : 1, sizeof **ids);
  *n = count;
  for (size_t i = 0; i < count; i++) {
    json_t *v = json_array_get(arr, i);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) >= (json_int_t)vocab) {
      cb_free(*ids);
      *ids = NULL;
      return bad(e, param, "'%s'[%zu] must be a token id in [0, %u)", param, i, vocab);
    }
    (*ids)[i] = (uint32_t)json_integer_value(v);
  }
  return CB_OK;
}

/* A chat prompt being built: text not yet tokenized, then the ids so far. */
typedef struct prompt_builder {
  cb_buf text;
  uint32_t *ids;
  size_t n, cap;
} prompt_builder;

static void pb_push_ids(prompt_builder *b, const uint32_t *ids, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->ids = cb_reallocarray(b->ids, b->cap, sizeof *b->ids);
  }
  memcpy(b->ids + b->n, ids, n * sizeof *ids);
  b->n += n;
}

static void pb_flush_text(prompt_builder *b, const cb__sim_tokens *t) {
  if (b->text.len == 0) return;
  uint32_t *ids;
  size_t n;
  cb__sim_tokenize(t, b->text.data, b->text.len, &ids, &n);
  pb_push_ids(b, ids, n);
  cb_free(ids);
  cb_buf_reset(&b->text);
}

/* Largest image side accepted (pixels): a header claiming more is refused before any
 * arithmetic on it (PNG allows 2^31-1; no processor takes that). */
#define MAX_IMAGE_SIDE 65535

/* One image_url part: decode the data URL, size the image, add its vision tokens. */
static cb_status add_image(json_t *part, size_t mi, size_t pi, cb__sim_api_request *r,
                           const cb__sim_tokens *t, prompt_builder *b, cb__sim_api_error *e) {
  if (!t->has_vision)
    return bad(e, "messages", "messages[%zu].content[%zu]: this model does not accept images "
               "(a vision-language preset such as qwen2-vl-7b does)", mi, pi);
  json_t *iu = json_object_get(part, "image_url");
  const char *url = json_string_value(json_object_get(iu, "url"));
  if (!json_is_object(iu) || !url)
    return bad(e, "messages", "messages[%zu].content[%zu].image_url must be an object with a "
               "string 'url'", mi, pi);
  const char *comma = strchr(url, ',');
  if (strncmp(url, "data:", 5) != 0 || !comma)
    return bad(e, "messages", "messages[%zu].content[%zu].image_url.url: only data: URLs "
               "(data:image/png;base64,...) are accepted by the simulator", mi, pi);
  size_t head = (size_t)(comma - url);
  if (head < 7 || strncmp(comma - 7, ";base64", 7) != 0)
    return bad(e, "messages", "messages[%zu].content[%zu].image_url.url: the data URL is not "
               "base64 (expected data:image/...;base64,...)", mi, pi);
  size_t n64 = strlen(comma + 1), nbytes = 0;
  unsigned char *bytes = cb_malloc(3 * (n64 / 4 + 1));
  cb_status st = CB_OK;
  cb__image_info info;
  char why[128];
  if (cb__base64_decode(comma + 1, n64, bytes, &nbytes) != 0) {
    st = bad(e, "messages", "messages[%zu].content[%zu].image_url.url: invalid base64", mi, pi);
  } else if (cb__image_header(bytes, nbytes, &info, why, sizeof why) != 0) {
    st = bad(e, "messages", "messages[%zu].content[%zu]: invalid image: %s", mi, pi, why);
  } else if (info.width > MAX_IMAGE_SIDE || info.height > MAX_IMAGE_SIDE) {
    st = bad(e, "messages", "messages[%zu].content[%zu]: image %ux%u: a side is above %d pixels",
             mi, pi, info.width, info.height, MAX_IMAGE_SIDE);
  }
  int64_t rh = 0, rw = 0;
  cb_error rerr;
  if (st == CB_OK && cb_sim_vision_resize(&t->vision, info.height, info.width, &rh, &rw,
                                          &rerr) != CB_OK)
    st = bad(e, "messages", "messages[%zu].content[%zu]: %s", mi, pi, rerr.msg);
  if (st == CB_OK) {
    /* The same bytes give the same ids: FNV-1a over the image, then one id per token. */
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t k = 0; k < nbytes; k++) h = (h ^ bytes[k]) * UINT64_C(1099511628211);
    int64_t ntok = cb_sim_vision_tokens(&t->vision, rh, rw);
    pb_flush_text(b, t);
    uint32_t *ids = cb_reallocarray(NULL, (size_t)ntok, sizeof *ids);
    for (int64_t k = 0; k < ntok; k++)
      ids[k] = (uint32_t)(cb_hash3_u64(h, (uint64_t)k, UINT64_C(0x696d67)) % t->vocab);
    pb_push_ids(b, ids, (size_t)ntok);
    cb_free(ids);
    r->num_images++;
    r->image_tokens += ntok;
    r->encoder_flops += cb_sim_vision_encoder_flops(&t->vision, rh, rw);
  }
  cb_free(bytes);
  return st;
}

/* Message content: a string, null, or an array of text and image_url parts. Text goes
 * to b->text, images as vision tokens; the text is also copied to text_out (the message's
 * own, which the behaviours read). */
static cb_status append_content(json_t *content, size_t index, cb__sim_api_request *r,
                                const cb__sim_tokens *t, prompt_builder *b, cb_buf *text_out,
                                cb__sim_api_error *e) {
  if (!content || json_is_null(content)) return CB_OK;
  if (json_is_string(content)) {
    cb_buf_append(&b->text, json_string_value(content), json_string_length(content));
    cb_buf_append(text_out, json_string_value(content), json_string_length(content));
    return CB_OK;
  }
  if (!json_is_array(content))
    return bad(e, "messages", "messages[%zu].content must be a string or an array of parts, got %s",
               index, json_type_name(content));
  size_t i;
  json_t *part;
  json_array_foreach(content, i, part) {
    const char *type = json_string_value(json_object_get(part, "type"));
    json_t *text = json_object_get(part, "text");
    if (type && strcmp(type, "image_url") == 0) {
      cb_status st = add_image(part, index, i, r, t, b, e);
      if (st != CB_OK) return st;
      continue;
    }
    if (!type || strcmp(type, "text") != 0 || !json_is_string(text))
      return bad(e, "messages",
                 "messages[%zu].content[%zu]: only {\"type\": \"text\", \"text\": ...} and "
                 "{\"type\": \"image_url\", ...} parts are supported by the simulator",
                 index, i);
    cb_buf_append(&b->text, json_string_value(text), json_string_length(text));
    cb_buf_append(text_out, json_string_value(text), json_string_length(text));
  }
  return CB_OK;
}

/* An assistant message's tool calls: counted, the last one's name kept, their names
 * and arguments part of the prompt as a chat template would render them. */
static void read_tool_calls(json_t *m, cb__sim_api_request *r, cb_buf *prompt, cb_buf *content) {
  json_t *calls = json_object_get(m, "tool_calls");
  if (!json_is_array(calls)) return;
  size_t i;
  json_t *c;
  json_array_foreach(calls, i, c) {
    json_t *f = json_object_get(c, "function");
    const char *name = json_string_value(json_object_get(f, "name"));
    const char *args = json_string_value(json_object_get(f, "arguments"));
    r->tool_calls_made++;
    cb_free(r->last_tool);
    r->last_tool = cb_strdup(name ? name : "");
    cb_buf_appendf(prompt, "<|call|>%s %s", name ? name : "", args ? args : "");
    cb_buf_appendf(content, "<|call|>%s %s", name ? name : "", args ? args : "");
  }
}

/* A tool result reports an error when its content is a JSON object with "error". */
static int tool_error(json_t *m) {
  const char *text = json_string_value(json_object_get(m, "content"));
  if (!text) return 0;
  json_t *v = json_loads(text, 0, NULL);
  int err = json_is_object(v) && json_object_get(v, "error") != NULL;
  json_decref(v);
  return err;
}

static cb_status parse_messages(json_t *root, cb__sim_api_request *r, const cb__sim_tokens *t,
                                cb__sim_api_error *e) {
  json_t *msgs = json_object_get(root, "messages");
  if (!msgs) return bad(e, "messages", "'messages' is required");
  if (!json_is_array(msgs) || json_array_size(msgs) == 0)
    return bad(e, "messages", "'messages' must be a non-empty array");
  static const char *const roles[] = {"system", "developer", "user", "assistant", "tool", NULL};
  prompt_builder b = {0};
  cb_buf last_user, content; /* the last user message's text; this message's text */
  cb_buf_init(&b.text, 0);
  cb_buf_init(&last_user, 0);
  cb_buf_init(&content, 0);
  int have_user = 0;
  cb_status st = CB_OK;
  size_t i;
  json_t *m;
  json_array_foreach(msgs, i, m) {
    const char *role = json_is_object(m) ? json_string_value(json_object_get(m, "role")) : NULL;
    if (!role) {
      st = bad(e, "messages", "messages[%zu] must be an object with a string 'role'", i);
      break;
    }
    int known = 0;
    for (int k = 0; roles[k]; k++) known |= !strcmp(role, roles[k]);
    if (!known) {
      st = bad(e, "messages", "messages[%zu].role '%s' is not one of system, developer, user, "
               "assistant, tool", i, role);
      break;
    }
    cb_buf_appendf(&b.text, "<|%s|>\n", role);
    cb_buf_reset(&content);
    if ((st = append_content(json_object_get(m, "content"), i, r, t, &b, &content, e)) != CB_OK)
      break;
    if (!strcmp(role, "assistant")) read_tool_calls(m, r, &b.text, &content);
    r->last_tool_error = !strcmp(role, "tool") && tool_error(m);
    r->messages = cb_reallocarray(r->messages, r->num_messages + 1, sizeof *r->messages);
    cb__sim_api_message *msg = &r->messages[r->num_messages++];
    snprintf(msg->role, sizeof msg->role, "%s", role);
    msg->content_len = content.len;
    msg->content = cb_strndup(content.data ? content.data : "", content.len);
    if (!strcmp(role, "user")) {
      cb_buf_reset(&last_user);
      cb_buf_append(&last_user, content.data ? content.data : "", content.len);
      have_user = 1;
    }
    cb_buf_append_str(&b.text, "<|end|>\n");
  }
  if (st == CB_OK) {
    cb_buf_append_str(&b.text, "<|assistant|>\n");
    pb_flush_text(&b, t);
    r->prompt_ids = b.ids;
    r->prompt_len = b.n;
    b.ids = NULL;
    if (have_user) r->match_key = cb_strndup(last_user.data ? last_user.data : "", last_user.len);
  }
  cb_free(b.ids);
  cb_buf_free(&b.text);
  cb_buf_free(&last_user);
  cb_buf_free(&content);
  return st;
}

static cb_status parse_prompt(json_t *root, cb__sim_api_request *r, const cb__sim_tokens *t,
                              cb__sim_api_error *e) {
  json_t *p = json_object_get(root, "prompt");
  if (!p) return bad(e, "prompt", "'prompt' is required");
  /* A one-element batch is the same as its element. */
  if (json_is_array(p) && json_array_size(p) == 1 &&
      (json_is_string(json_array_get(p, 0)) || json_is_array(json_array_get(p, 0))))
    p = json_array_get(p, 0);
  if (json_is_string(p)) {
    if (json_string_length(p) == 0) return bad(e, "prompt", "'prompt' must not be empty");
    r->match_key = cb_strndup(json_string_value(p), json_string_length(p));
    return tokenize_into(r, json_string_value(p), json_string_length(p), t);
  }
  if (json_is_array(p) && json_array_size(p) > 0 && json_is_integer(json_array_get(p, 0)))
    return parse_ids(p, "prompt", t->vocab, &r->prompt_ids, &r->prompt_len, e);
  if (json_is_array(p) && json_array_size(p) > 1)
    return bad(e, "prompt", "batched prompts (%zu) are not supported by the simulator; send one "
               "request per prompt", json_array_size(p));
  return bad(e, "prompt", "'prompt' must be a non-empty string or an array of token ids, got %s",
             json_type_name(p));
}

static cb_status parse_generation(json_t *root, cb__sim_api_request *r, const cb__sim_tokens *t,
                                  cb__sim_api_error *e) {
  cb_status st = r->kind == CB__SIM_API_CHAT ? parse_messages(root, r, t, e)
                                             : parse_prompt(root, r, t, e);
  if (st != CB_OK) return st;
  if (r->prompt_len == 0) return bad(e, r->kind == CB__SIM_API_CHAT ? "messages" : "prompt", "the prompt has no tokens");
  json_t *tools = json_object_get(root, "tools");
  r->has_tools = r->kind == CB__SIM_API_CHAT && json_is_array(tools) && json_array_size(tools) > 0;

  if ((st = get_bool(root, "stream", &r->stream, e)) != CB_OK) return st;
  json_t *so = json_object_get(root, "stream_options");
  if (so && !json_is_null(so)) {
    if (!json_is_object(so)) return bad(e, "stream_options", "'stream_options' must be an object");
    if (!r->stream)
      return bad(e, "stream_options", "Stream options can only be defined when `stream=True`.");
    if ((st = get_bool(so, "include_usage", &r->include_usage, e)) != CB_OK) return st;
  }
  r->prompt_logprobs = -1;
  if (r->kind == CB__SIM_API_CHAT) {
    static const char *const completions_only[] = {"echo", "prompt_logprobs", NULL};
    for (int i = 0; completions_only[i]; i++) {
      json_t *v = json_object_get(root, completions_only[i]);
      if (v && !json_is_null(v) && !json_is_false(v))
        return bad(e, completions_only[i], "'%s': the simulator returns a prompt's "
                   "log-probabilities on /v1/completions only", completions_only[i]);
    }
  } else {
    int64_t plp = -1;
    if ((st = get_bool(root, "echo", &r->echo, e)) != CB_OK) return st;
    if ((st = get_int(root, "prompt_logprobs", 0, MAX_COMPLETION_LOGPROBS, &plp, e)) != CB_OK)
      return st;
    /* vLLM refuses them in a stream (completion/protocol.py, check_logprobs) */
    if (plp > 0 && r->stream)
      return bad(e, "prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.");
    r->prompt_logprobs = (int)plp;
  }
  /* max_completion_tokens (the newer name) wins over max_tokens when both are set. */
  if ((st = get_int(root, "max_tokens", 0, INT64_MAX, &r->max_tokens, e)) != CB_OK) return st;
  /* max_tokens 0 asks for the echoed prompt alone (vLLM: completion/protocol.py,
   * echo_without_generation); without echo vLLM's SamplingParams refuse it */
  if (r->max_tokens == 0 && !r->echo)
    return bad(e, "max_tokens", "max_tokens must be at least 1, got 0.");
  if ((st = get_int(root, "max_completion_tokens", 1, INT64_MAX, &r->max_tokens, e)) != CB_OK)
    return st;
  if ((st = get_int(root, "min_tokens", 0, INT64_MAX, &r->min_tokens, e)) != CB_OK) return st;
  if (r->max_tokens >= 0 && r->min_tokens > r->max_tokens)
    return bad(e, "min_tokens", "min_tokens must be less than or equal to max_tokens=%lld, got %lld",
               (long long)r->max_tokens, (long long)r->min_tokens);
  if ((st = get_bool(root, "ignore_eos", &r->ignore_eos, e)) != CB_OK) return st;

  int64_t n = 1;
  if ((st = get_int(root, "n", 1, INT64_MAX, &n, e)) != CB_OK) return st;
  if (n != 1) return bad(e, "n", "n=%lld: only n=1 is supported by the simulator", (long long)n);

  if (r->kind == CB__SIM_API_CHAT) {
    if ((st = get_bool(root, "logprobs", &r->logprobs, e)) != CB_OK) return st;
    int64_t top = 0;
    if ((st = get_int(root, "top_logprobs", 0, MAX_TOP_LOGPROBS, &top, e)) != CB_OK) return st;
    if (json_object_get(root, "top_logprobs") && !json_is_null(json_object_get(root, "top_logprobs")) &&
        !r->logprobs)
      return bad(e, "top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.");
    r->top_logprobs = (int)top;
  } else {
    int64_t lp = -1;
    if ((st = get_int(root, "logprobs", 0, MAX_COMPLETION_LOGPROBS, &lp, e)) != CB_OK) return st;
    r->logprobs = lp >= 0;
    r->top_logprobs = lp > 0 ? (int)lp : 0;
  }
  int64_t seed = 0;
  if (json_object_get(root, "seed") && !json_is_null(json_object_get(root, "seed"))) {
    if ((st = get_int(root, "seed", INT64_MIN, INT64_MAX, &seed, e)) != CB_OK) return st;
    r->has_seed = 1;
    r->seed = (uint64_t)seed;
  }
  static const char *const numbers[] = {"temperature", "top_p", "presence_penalty",
                                        "frequency_penalty", "top_k", "repetition_penalty", NULL};
  for (int i = 0; numbers[i]; i++)
    if ((st = check_number(root, numbers[i], e)) != CB_OK) return st;
  return CB_OK;
}

static cb_status parse_embeddings(json_t *root, cb__sim_api_request *r, const cb__sim_tokens *t,
                                  cb__sim_api_error *e) {
  json_t *in = json_object_get(root, "input");
  if (!in) return bad(e, "input", "'input' is required");
  /* Normalise to a list of items, each a string or an array of ids. */
  json_t *list;
  if (json_is_string(in) || (json_is_array(in) && json_array_size(in) > 0 &&
                             json_is_integer(json_array_get(in, 0)))) {
    list = json_pack("[O]", in);
  } else if (json_is_array(in) && json_array_size(in) > 0) {
    list = json_incref(in);
  } else {
    return bad(e, "input", "'input' must be a string, an array of strings, or token ids");
  }
  size_t count = json_array_size(list);
  r->inputs = cb_calloc(count, sizeof *r->inputs);
  r->num_inputs = count;
  cb_status st = CB_OK;
  for (size_t i = 0; i < count && st == CB_OK; i++) {
    json_t *item = json_array_get(list, i);
    cb__sim_api_input *x = &r->inputs[i];
    if (json_is_string(item)) {
      if (json_string_length(item) == 0) {
        st = bad(e, "input", "input[%zu] must not be empty", i);
        break;
      }
      x->text = cb_strndup(json_string_value(item), json_string_length(item));
      x->text_len = json_string_length(item);
      cb__sim_tokenize(t, x->text, x->text_len, &x->ids, &x->num_ids);
    } else if (json_is_array(item) && json_array_size(item) > 0) {
      st = parse_ids(item, "input", t->vocab, &x->ids, &x->num_ids, e);
    } else {
      st = bad(e, "input", "input[%zu] must be a non-empty string or array of token ids, got %s",
               i, json_type_name(item));
    }
  }
  json_decref(list);
  if (st != CB_OK) return st;

  json_t *fmtv = json_object_get(root, "encoding_format");
  const char *fmt = json_string_value(fmtv);
  if (fmtv && !json_is_null(fmtv)) {
    if (!fmt || (strcmp(fmt, "float") && strcmp(fmt, "base64")))
      return bad(e, "encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    r->base64 = !strcmp(fmt, "base64");
  }
  int64_t dims = 0;
  if ((st = get_int(root, "dimensions", 1, 65536, &dims, e)) != CB_OK) return st;
  r->dimensions = (int)dims;
  return CB_OK;
}

cb_status cb__sim_api_parse(cb__sim_api_kind kind, const char *body, size_t len,
                            const cb__sim_tokens *t, cb__sim_api_request *out,
                            cb__sim_api_error *e) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  out->max_tokens = -1;
  json_error_t jerr;
  json_t *root = json_loadb(body, len, 0, &jerr);
  if (!root)
    return bad(e, NULL, "request body is not valid JSON: %s (line %d, column %d)", jerr.text,
               jerr.line, jerr.column);
  cb_status st = CB_OK;
  if (!json_is_object(root)) {
    st = bad(e, NULL, "request body must be a JSON object, got %s", json_type_name(root));
    goto done;
  }
  json_t *model = json_object_get(root, "model");
  if (model && !json_is_null(model)) {
    if (!json_is_string(model)) {
      st = bad(e, "model", "'model' must be a string, got %s", json_type_name(model));
      goto done;
    }
    out->model = cb_strdup(json_string_value(model));
  }
  st = kind == CB__SIM_API_EMBEDDINGS ? parse_embeddings(root, out, t, e)
                                      : parse_generation(root, out, t, e);
done:
  json_decref(root);
  if (st != CB_OK) cb__sim_api_request_free(out);
  return st;
}

void cb__sim_api_request_free(cb__sim_api_request *r) {
  cb_free(r->model);
  cb_free(r->prompt_ids);
  cb_free(r->match_key);
  cb_free(r->last_tool);
  for (size_t i = 0; i < r->num_messages; i++) cb_free(r->messages[i].content);
  cb_free(r->messages);
  for (size_t i = 0; i < r->num_inputs; i++) {
    cb_free(r->inputs[i].text);
    cb_free(r->inputs[i].ids);
  }
  cb_free(r->inputs);
  memset(r, 0, sizeof *r);
}
