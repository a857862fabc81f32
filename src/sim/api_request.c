/*
 * api_request.c - parse and validate OpenAI request bodies for the simulator.
 *
 * Validation follows what OpenAI and vLLM reject, with the field named in `param`:
 * wrong JSON types, missing messages/prompt/input, max_tokens < 1, top_logprobs
 * outside 0..20 or without logprobs, stream_options without stream, n != 1, content
 * parts that are not text. Fields the simulator does not model (temperature, top_p,
 * stop, ...) are accepted and ignored, as vLLM ignores what it does not know.
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
#include "calibench/sim.h"
#include "calibench/tok.h"
#include "sim/api.h"

#define MAX_TOP_LOGPROBS 20
#define MAX_COMPLETION_LOGPROBS 5

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

/* Message content: a string, null, or an array of {"type":"text","text":...} parts.
 * Appends the text to out. */
static cb_status append_content(json_t *content, size_t index, cb_buf *out,
                                cb__sim_api_error *e) {
  if (!content || json_is_null(content)) return CB_OK;
  if (json_is_string(content)) {
    cb_buf_append(out, json_string_value(content), json_string_length(content));
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
    if (!type || strcmp(type, "text") != 0 || !json_is_string(text))
      return bad(e, "messages",
                 "messages[%zu].content[%zu]: only {\"type\": \"text\", \"text\": ...} parts are "
                 "supported by the simulator",
                 index, i);
    cb_buf_append(out, json_string_value(text), json_string_length(text));
  }
  return CB_OK;
}

static cb_status parse_messages(json_t *root, cb__sim_api_request *r, const cb__sim_tokens *t,
                                cb__sim_api_error *e) {
  json_t *msgs = json_object_get(root, "messages");
  if (!msgs) return bad(e, "messages", "'messages' is required");
  if (!json_is_array(msgs) || json_array_size(msgs) == 0)
    return bad(e, "messages", "'messages' must be a non-empty array");
  static const char *const roles[] = {"system", "developer", "user", "assistant", "tool", NULL};
  cb_buf prompt, last_user;
  cb_buf_init(&prompt, 0);
  cb_buf_init(&last_user, 0);
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
    cb_buf_appendf(&prompt, "<|%s|>\n", role);
    size_t start = prompt.len;
    if ((st = append_content(json_object_get(m, "content"), i, &prompt, e)) != CB_OK) break;
    r->messages = cb_reallocarray(r->messages, r->num_messages + 1, sizeof *r->messages);
    cb__sim_api_message *msg = &r->messages[r->num_messages++];
    snprintf(msg->role, sizeof msg->role, "%s", role);
    msg->content_len = prompt.len - start;
    msg->content = cb_strndup(prompt.data + start, msg->content_len);
    if (!strcmp(role, "user")) {
      cb_buf_reset(&last_user);
      cb_buf_append(&last_user, prompt.data + start, prompt.len - start);
      have_user = 1;
    }
    cb_buf_append_str(&prompt, "<|end|>\n");
  }
  if (st == CB_OK) {
    cb_buf_append_str(&prompt, "<|assistant|>\n");
    tokenize_into(r, prompt.data, prompt.len, t);
    if (have_user) r->match_key = cb_strndup(last_user.data ? last_user.data : "", last_user.len);
  }
  cb_buf_free(&prompt);
  cb_buf_free(&last_user);
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

  if ((st = get_bool(root, "stream", &r->stream, e)) != CB_OK) return st;
  json_t *so = json_object_get(root, "stream_options");
  if (so && !json_is_null(so)) {
    if (!json_is_object(so)) return bad(e, "stream_options", "'stream_options' must be an object");
    if (!r->stream)
      return bad(e, "stream_options", "Stream options can only be defined when `stream=True`.");
    if ((st = get_bool(so, "include_usage", &r->include_usage, e)) != CB_OK) return st;
  }
  /* max_completion_tokens (the newer name) wins over max_tokens when both are set. */
  if ((st = get_int(root, "max_tokens", 1, INT64_MAX, &r->max_tokens, e)) != CB_OK) return st;
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
  for (size_t i = 0; i < r->num_messages; i++) cb_free(r->messages[i].content);
  cb_free(r->messages);
  for (size_t i = 0; i < r->num_inputs; i++) {
    cb_free(r->inputs[i].text);
    cb_free(r->inputs[i].ids);
  }
  cb_free(r->inputs);
  memset(r, 0, sizeof *r);
}
