/*
 * chunk_jansson.c - the reference reading of a chunk: parse with jansson, walk the
 * tree by the same rules as the fast scanner in chunk.c. It runs when the scanner
 * declines a document (escaped or duplicate keys, huge numbers, deep nesting), and
 * the tests and the fuzzer run both on the same inputs and require equal results.
 *
 * Keys are visited in document order (jansson keeps insertion order), so "first
 * non-empty wins" and the tool-span order agree with the scanner. Strings are
 * copied into the output area; their total never exceeds the input length.
 */
#include <jansson.h>
#include <string.h>

#include "client/chunk_internal.h"

typedef struct jwalk {
  char *out;
  size_t out_len;
  cb_client_chunk *c;
} jwalk;

static int key_is(const char *k, const char *lit) { return strcmp(k, lit) == 0; }

static cb_client_str put(jwalk *w, json_t *v) {
  cb_client_str s;
  s.len = json_string_length(v);
  s.ptr = w->out + w->out_len;
  memcpy(w->out + w->out_len, json_string_value(v), s.len);
  w->out_len += s.len;
  return s;
}

static void first_nonempty(jwalk *w, json_t *v, cb_client_str *dst) {
  if (!json_is_string(v) || dst->len || json_string_length(v) == 0) return;
  *dst = put(w, v);
}

static void append_span(jwalk *w, json_t *v, cb_client_str *dst, int decode) {
  if (!json_is_string(v) || !decode) return;
  cb_client_str s = put(w, v);
  if (!dst->ptr) dst->ptr = s.ptr;
  dst->len += s.len;
}

static void integer(json_t *v, int64_t *dst) {
  if (json_is_integer(v)) *dst = (int64_t)json_integer_value(v);
}

static void walk_function(jwalk *w, json_t *f, cb_client_choice *ch, int decode) {
  const char *k;
  json_t *v;
  json_object_foreach(f, k, v) {
    if (key_is(k, "name") || key_is(k, "arguments")) append_span(w, v, &ch->tool, decode);
  }
}

static void walk_delta(jwalk *w, json_t *d, cb_client_choice *ch) {
  const char *k;
  json_t *v;
  int tool_locked = 0, has_fc = 0;
  json_object_foreach(d, k, v) {
    if (key_is(k, "content")) {
      first_nonempty(w, v, &ch->content);
    } else if (key_is(k, "reasoning_content") || key_is(k, "reasoning") ||
               key_is(k, "thinking")) {
      first_nonempty(w, v, &ch->reasoning);
    } else if (key_is(k, "tool_calls") && json_is_array(v)) {
      size_t i, n = json_array_size(v);
      ch->tool_calls += (uint32_t)n;
      for (i = 0; i < n; i++) {
        json_t *f = json_object_get(json_array_get(v, i), "function");
        if (json_is_object(f)) walk_function(w, f, ch, !tool_locked);
      }
      if (n) tool_locked = 1;
    } else if (key_is(k, "function_call") && json_is_object(v)) {
      walk_function(w, v, ch, !tool_locked);
      tool_locked = 1;
      has_fc = 1;
    } else if (key_is(k, "role")) {
      if (json_is_string(v)) ch->has_role = 1;
    }
  }
  if (has_fc) ch->has_content = 1;
}

static void walk_choice(jwalk *w, json_t *o, cb_client_choice *ch) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    if (key_is(k, "index")) integer(v, &ch->index);
    else if (key_is(k, "delta") && json_is_object(v)) walk_delta(w, v, ch);
    else if (key_is(k, "text")) first_nonempty(w, v, &ch->content);
    else if (key_is(k, "finish_reason") && json_is_string(v)) ch->finish_reason = put(w, v);
    else if (key_is(k, "logprobs") && !json_is_null(v)) ch->has_logprobs = 1;
  }
  cb__client_choice_settle(ch);
}

static void walk_choices(jwalk *w, json_t *arr) {
  cb_client_chunk *c = w->c;
  size_t i, n = json_array_size(arr);
  for (i = 0; i < n; i++) {
    cb_client_choice spare, *ch = cb__client_chunk_add_choice(c, &spare);
    json_t *o = json_array_get(arr, i);
    if (json_is_object(o)) walk_choice(w, o, ch);
    cb__client_chunk_count_choice(c, ch);
  }
}

static void walk_usage(jwalk *w, json_t *u) {
  w->c->has_usage = 1;
  cb__client_usage_from_json(u, &w->c->usage);
}

void cb__client_usage_from_json(json_t *u, cb_client_usage *us) {
  int64_t details_cached = -1, hit = -1;
  integer(json_object_get(u, "prompt_tokens"), &us->prompt_tokens);
  integer(json_object_get(u, "completion_tokens"), &us->completion_tokens);
  integer(json_object_get(u, "total_tokens"), &us->total_tokens);
  json_t *d = json_object_get(u, "prompt_tokens_details");
  if (json_is_object(d)) {
    integer(json_object_get(d, "cached_tokens"), &details_cached);
    integer(json_object_get(d, "image_tokens"), &us->image_tokens);
  }
  d = json_object_get(u, "completion_tokens_details");
  if (json_is_object(d)) integer(json_object_get(d, "reasoning_tokens"), &us->reasoning_tokens);
  integer(json_object_get(u, "prompt_cache_hit_tokens"), &hit);
  if (details_cached >= 0 || hit >= 0)
    us->cached_tokens = details_cached >= 0 ? details_cached : hit;
}

/* The error keys of a top-level object; see settle_error in chunk.c. */
static void walk_error(jwalk *w, json_t *top, int openai) {
  cb_client_chunk *c = w->c;
  json_t *err = json_object_get(top, "error");
  int is_error = 0, obj_error = 0, has_msg = 0;
  int64_t code = -1, top_code = -1;
  cb_client_str msg = {NULL, 0};
  if (json_is_string(err)) {
    is_error = has_msg = 1;
    msg = put(w, err);
  } else if (json_is_object(err)) {
    is_error = 1;
    json_t *m = json_object_get(err, "message");
    if (json_is_string(m)) {
      has_msg = 1;
      msg = put(w, m);
    }
    integer(json_object_get(err, "code"), &code);
  }
  json_t *m = NULL;
  if (openai) {
    json_t *o = json_object_get(top, "object");
    obj_error = json_is_string(o) && json_string_length(o) == 5 &&
                memcmp(json_string_value(o), "error", 5) == 0;
    m = json_object_get(top, "message");
    integer(json_object_get(top, "code"), &top_code);
  }
  if (!is_error && !obj_error) return;
  c->kind = CB_CLIENT_CHUNK_ERROR;
  if (has_msg) c->error_message = msg;
  else if (obj_error && json_is_string(m)) c->error_message = put(w, m);
  c->error_code = is_error && code >= 0 ? code : top_code >= 0 ? top_code : 0;
}

static void walk_ollama(jwalk *w, json_t *top) {
  cb_client_chunk *c = w->c;
  cb_client_choice *ch = &c->choice[0];
  cb__client_choice_clear(ch);
  int has_choice = 0;
  const char *k;
  json_t *v;
  json_object_foreach(top, k, v) {
    if (key_is(k, "response")) {
      if (json_is_string(v)) has_choice = 1;
      first_nonempty(w, v, &ch->content);
    } else if (key_is(k, "thinking")) {
      first_nonempty(w, v, &ch->reasoning);
    } else if (key_is(k, "message") && json_is_object(v)) {
      has_choice = 1;
      walk_delta(w, v, ch);
    } else if (key_is(k, "done")) {
      if (json_is_true(v)) c->final = 1;
    } else if (key_is(k, "done_reason") && json_is_string(v)) {
      ch->finish_reason = put(w, v);
    } else if (key_is(k, "prompt_eval_count")) {
      integer(v, &c->usage.prompt_tokens);
    } else if (key_is(k, "eval_count")) {
      integer(v, &c->usage.completion_tokens);
    }
  }
  cb__client_ollama_settle(c, has_choice);
  walk_error(w, top, 0);
}

void cb__client_chunk_jansson(cb_client_api api, const char *data, size_t len,
                              char *out_area, cb_client_chunk *out) {
  jwalk w = {out_area, 0, out};
  cb__client_chunk_clear(out);
  json_error_t e;
  /* A raw NUL byte is never valid JSON, but jansson 2.14 drops one that directly
   * follows a number or a literal ("0\0," parses): its one-byte push-back buffer
   * takes NUL for "empty". Found by fuzz_client_sse; rejected here, as the scanner
   * does. */
  json_t *root = memchr(data, '\0', len) ? NULL
                                         : json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
  if (!root || !json_is_object(root)) {
    const char *why = root ? "JSON value is not an object"
                           : memchr(data, '\0', len) ? "NUL byte in JSON text" : e.text;
    size_t n = strlen(why);
    if (n > CB__CLIENT_CHUNK_SLACK - 1) n = CB__CLIENT_CHUNK_SLACK - 1;
    memcpy(out_area, why, n);
    out->kind = CB_CLIENT_CHUNK_INVALID_JSON;
    out->detail.ptr = out_area;
    out->detail.len = n;
    json_decref(root);
    return;
  }
  if (api == CB_CLIENT_API_OLLAMA_GENERATE) {
    walk_ollama(&w, root);
  } else {
    json_t *ch = json_object_get(root, "choices");
    if (json_is_array(ch)) walk_choices(&w, ch);
    json_t *u = json_object_get(root, "usage");
    if (json_is_object(u)) walk_usage(&w, u);
    walk_error(&w, root, 1);
  }
  json_decref(root);
}
