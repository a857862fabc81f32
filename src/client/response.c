/*
 * response.c - a non-streamed response body (or the body of an error status): the
 * text of choice 0, its finish reason, usage, and the message of an error body.
 * Once per request, so jansson builds the tree.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/client.h"
#include "client/chunk_internal.h"

static void copy_cut(char *dst, size_t cap, const char *s, size_t n) {
  if (n > cap - 1) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

static void set_message(cb_client_response *out, json_t *v) {
  if (json_is_string(v)) {
    copy_cut(out->error_message, sizeof out->error_message, json_string_value(v),
             json_string_length(v));
  } else if (v && !json_is_null(v)) {
    /* FastAPI's validation errors: {"detail": [{...}]} - keep it as compact JSON. */
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s) {
      copy_cut(out->error_message, sizeof out->error_message, s, strlen(s));
      free(s);
    }
  }
}

static void code_of(cb_client_response *out, json_t *v) {
  if (json_is_integer(v)) out->error_code = (int64_t)json_integer_value(v);
}

/* Error bodies: {"error": {...}|"..."}, {"object": "error", "message": ...} (vLLM),
 * {"detail": ...} (FastAPI). Returns 1 when the body is one. */
static int read_error(cb_client_response *out, json_t *root) {
  json_t *e = json_object_get(root, "error");
  if (json_is_object(e)) {
    set_message(out, json_object_get(e, "message"));
    code_of(out, json_object_get(e, "code"));
    return 1;
  }
  if (json_is_string(e)) {
    set_message(out, e);
    return 1;
  }
  json_t *o = json_object_get(root, "object");
  if (json_is_string(o) && strcmp(json_string_value(o), "error") == 0) {
    set_message(out, json_object_get(root, "message"));
    code_of(out, json_object_get(root, "code"));
    return 1;
  }
  json_t *d = json_object_get(root, "detail");
  if (d && !json_is_null(d) && !json_object_get(root, "choices")) {
    set_message(out, d);
    return 1;
  }
  return 0;
}

static void add_text(cb_client_response *out, cb_buf *text, json_t *v) {
  if (!json_is_string(v)) return;
  size_t n = json_string_length(v);
  out->content_bytes += n;
  if (!text) return;
  size_t room = text->cap ? text->cap - text->len : n;
  size_t k = n < room ? n : room;
  cb_buf_append(text, json_string_value(v), k);
  if (k < n) out->text_truncated = 1;
}

static void add_reasoning(cb_client_response *out, json_t *msg) {
  json_t *r = json_object_get(msg, "reasoning_content");
  if (!json_is_string(r) || json_string_length(r) == 0) r = json_object_get(msg, "reasoning");
  if (!json_is_string(r) || json_string_length(r) == 0) r = json_object_get(msg, "thinking");
  if (json_is_string(r)) out->reasoning_bytes += json_string_length(r);
}

static void read_message(cb_client_response *out, cb_buf *text, json_t *msg) {
  if (!json_is_object(msg)) return;
  add_text(out, text, json_object_get(msg, "content"));
  add_reasoning(out, msg);
  json_t *tc = json_object_get(msg, "tool_calls");
  if (json_is_array(tc) && json_array_size(tc) > 0) out->has_tool_calls = 1;
}

static void set_finish(cb_client_response *out, json_t *v) {
  if (json_is_string(v))
    copy_cut(out->finish_reason, sizeof out->finish_reason, json_string_value(v),
             json_string_length(v));
}

cb_status cb_client_response_parse(cb_client_api api, const char *body, size_t len,
                                   cb_client_response *out, cb_buf *text) {
  memset(out, 0, sizeof *out);
  cb_client_usage_clear(&out->usage);
  json_error_t je;
  int nul = memchr(body, '\0', len) != NULL; /* never JSON; see chunk_jansson.c */
  json_t *root = nul ? NULL : json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
  if (!root || !json_is_object(root)) {
    out->error = CB_CLIENT_ERR_INVALID_JSON;
    snprintf(out->error_message, sizeof out->error_message, "%s",
             root ? "response is not a JSON object" : nul ? "NUL byte in JSON text" : je.text);
    json_decref(root);
    return CB_OK;
  }
  if (read_error(out, root)) out->error = CB_CLIENT_ERR_SERVER_ERROR_EVENT;

  if (api == CB_CLIENT_API_OLLAMA_GENERATE) {
    json_t *resp = json_object_get(root, "response"), *msg = json_object_get(root, "message");
    if (json_is_string(resp) || json_is_object(msg)) out->n_choices = 1;
    add_text(out, text, resp);
    add_reasoning(out, root);
    read_message(out, text, msg);
    set_finish(out, json_object_get(root, "done_reason"));
    json_t *p = json_object_get(root, "prompt_eval_count"), *c = json_object_get(root, "eval_count");
    if (json_is_integer(p)) out->usage.prompt_tokens = (int64_t)json_integer_value(p);
    if (json_is_integer(c)) out->usage.completion_tokens = (int64_t)json_integer_value(c);
    out->has_usage = json_is_integer(p) || json_is_integer(c);
  } else {
    json_t *choices = json_object_get(root, "choices");
    if (json_is_array(choices)) {
      out->n_choices = (uint32_t)json_array_size(choices);
      json_t *c0 = json_array_get(choices, 0);
      if (json_is_object(c0)) {
        read_message(out, text, json_object_get(c0, "message"));
        add_text(out, text, json_object_get(c0, "text"));
        set_finish(out, json_object_get(c0, "finish_reason"));
      }
    }
    json_t *u = json_object_get(root, "usage");
    if (json_is_object(u)) {
      out->has_usage = 1;
      cb__client_usage_from_json(u, &out->usage);
    }
  }
  json_decref(root);
  return CB_OK;
}
