/*
 * request.c - JSON request bodies for /v1/chat/completions and /v1/completions.
 *
 * Our members are written by hand (strings through cb_buf_append_json_string, so any
 * prompt bytes give valid JSON: invalid UTF-8 becomes U+FFFD). User-given JSON
 * (messages, extra body) is validated with jansson and then copied byte for byte,
 * so numbers such as 0.7 reach the server exactly as the user wrote them; only an
 * extra body the scanner cannot slice (huge numbers, nesting deeper than 64) is
 * re-serialised by jansson instead.
 */
#include <jansson.h>
#include <string.h>

#include "calibench/client.h"
#include "client/json_scan.h"

void cb_client_request_init(cb_client_request *r) {
  memset(r, 0, sizeof *r);
  r->api = CB_CLIENT_API_CHAT;
  r->max_tokens = -1;
  r->min_tokens = -1;
  r->stream = 1;
  r->include_usage = 1;
}

typedef struct enc {
  cb_buf *out;
  cb_status st;  /* first append failure */
  int members;   /* members written so far (for commas) */
  json_t *extra; /* the extra body, parsed; NULL when none */
} enc;

static void put(enc *e, const char *s, size_t n) {
  if (e->st == CB_OK) e->st = cb_buf_append(e->out, s, n);
}

static void put_str(enc *e, const char *s) { put(e, s, strlen(s)); }

static void put_json_string(enc *e, const char *s, size_t n) {
  put(e, "\"", 1);
  if (e->st == CB_OK) e->st = cb_buf_append_json_string(e->out, s, n);
  put(e, "\"", 1);
}

/* Start member `name` unless the extra body supplies it. Returns 1 to write it. */
static int member(enc *e, const char *name) {
  if (e->extra && json_object_get(e->extra, name)) return 0;
  if (e->members++) put(e, ",", 1);
  put_json_string(e, name, strlen(name));
  put(e, ":", 1);
  return 1;
}

static void put_int(enc *e, int64_t v) {
  if (e->st == CB_OK) e->st = cb_buf_appendf(e->out, "%lld", (long long)v);
}

static int dump_cb(const char *buffer, size_t size, void *data) {
  enc *e = data;
  put(e, buffer, size);
  return e->st == CB_OK ? 0 : -1;
}

/* The extra body's members, each copied as written. Returns 0, or -1 when the
 * scanner declines the document (the caller then lets jansson write it). */
static int put_extra_raw(enc *e, const char *json, size_t len) {
  cb__json_scan s;
  memset(&s, 0, sizeof s);
  s.p = (const unsigned char *)json;
  s.end = s.p + len;
  int first = 1, r;
  if (cb__json_enter(&s, '{')) return -1;
  while ((r = cb__json_next(&s, '}', &first)) == 1) {
    cb__json_peek(&s);
    const char *k0 = (const char *)s.p;
    if (cb__json_string(&s, 0, NULL, NULL)) return -1;
    const char *k1 = (const char *)s.p;
    if (cb__json_expect(&s, ':')) return -1;
    cb__json_peek(&s);
    const char *v0 = (const char *)s.p;
    if (cb__json_skip(&s)) return -1;
    const char *v1 = (const char *)s.p;
    if (e->members++) put(e, ",", 1);
    put(e, k0, (size_t)(k1 - k0));
    put(e, ":", 1);
    put(e, v0, (size_t)(v1 - v0));
  }
  return r < 0 ? -1 : 0;
}

static void put_extra_jansson(enc *e) {
  const char *k;
  json_t *v;
  json_object_foreach(e->extra, k, v) {
    if (e->members++) put(e, ",", 1);
    put_json_string(e, k, strlen(k));
    put(e, ":", 1);
    if (e->st == CB_OK)
      json_dump_callback(v, dump_cb, e, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
  }
}

static cb_status check_messages(const cb_client_request *r, cb_error *err) {
  if (memchr(r->messages_json, '\0', r->messages_json_len))
    return cb_error_set(err, CB_ERR_INVALID, "messages: invalid JSON: NUL byte");
  json_error_t je;
  json_t *m = json_loadb(r->messages_json, r->messages_json_len, JSON_ALLOW_NUL, &je);
  if (!m) return cb_error_set(err, CB_ERR_INVALID, "messages: invalid JSON: %s (line %d, column %d)",
                              je.text, je.line, je.column);
  cb_status st = CB_OK;
  if (!json_is_array(m) || json_array_size(m) == 0) {
    st = cb_error_set(err, CB_ERR_INVALID, "messages: expected a non-empty JSON array");
  } else {
    for (size_t i = 0; i < json_array_size(m); i++) {
      if (!json_is_object(json_array_get(m, i))) {
        st = cb_error_set(err, CB_ERR_INVALID, "messages[%zu]: expected an object", i);
        break;
      }
    }
  }
  json_decref(m);
  return st;
}

static size_t trim(const char **p, size_t n) {
  while (n && ((*p)[0] == ' ' || (*p)[0] == '\t' || (*p)[0] == '\r' || (*p)[0] == '\n')) {
    (*p)++;
    n--;
  }
  while (n && ((*p)[n - 1] == ' ' || (*p)[n - 1] == '\t' || (*p)[n - 1] == '\r' ||
               (*p)[n - 1] == '\n'))
    n--;
  return n;
}

cb_status cb_client_request_encode(const cb_client_request *r, cb_buf *out, cb_error *err) {
  int chat = r->api == CB_CLIENT_API_CHAT;
  if (r->api != CB_CLIENT_API_CHAT && r->api != CB_CLIENT_API_COMPLETIONS)
    return cb_error_set(err, CB_ERR_UNSUPPORTED, "request bodies are encoded for chat and "
                                                 "completions only, not %s",
                        cb_client_api_name(r->api));
  if (!r->model || !r->model[0]) return cb_error_set(err, CB_ERR_INVALID, "no model given");
  int sources = (r->prompt != NULL) + (r->messages_json != NULL) + (r->prompt_token_ids != NULL);
  if (sources == 0) return cb_error_set(err, CB_ERR_INVALID, "no prompt given");
  if (sources > 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "give one of prompt, messages and prompt token ids, not %d", sources);
  if (chat && r->prompt_token_ids)
    return cb_error_set(err, CB_ERR_INVALID, "chat requests take text, not prompt token ids");
  if (!chat && r->messages_json)
    return cb_error_set(err, CB_ERR_INVALID, "completions requests take a prompt, not messages");
  if (r->messages_json) {
    cb_status st = check_messages(r, err);
    if (st != CB_OK) return st;
  }

  enc e = {out, CB_OK, 0, NULL};
  if (r->extra_json) {
    /* A raw NUL is never JSON (jansson would drop one after a number). */
    if (memchr(r->extra_json, '\0', r->extra_json_len))
      return cb_error_set(err, CB_ERR_INVALID, "extra body: invalid JSON: NUL byte");
    json_error_t je;
    e.extra = json_loadb(r->extra_json, r->extra_json_len, JSON_ALLOW_NUL, &je);
    if (!e.extra)
      return cb_error_set(err, CB_ERR_INVALID, "extra body: invalid JSON: %s (line %d, column %d)",
                          je.text, je.line, je.column);
    if (!json_is_object(e.extra)) {
      json_decref(e.extra);
      return cb_error_set(err, CB_ERR_INVALID, "extra body: expected a JSON object");
    }
  }

  size_t start = out->len;
  put(&e, "{", 1);
  if (member(&e, "model")) put_json_string(&e, r->model, strlen(r->model));
  if (chat && member(&e, "messages")) {
    if (r->messages_json) {
      const char *m = r->messages_json;
      size_t n = trim(&m, r->messages_json_len);
      put(&e, m, n);
    } else {
      put_str(&e, "[{\"role\":\"user\",\"content\":");
      put_json_string(&e, r->prompt, r->prompt_len);
      put_str(&e, "}]");
    }
  }
  if (!chat && member(&e, "prompt")) {
    if (r->prompt) {
      put_json_string(&e, r->prompt, r->prompt_len);
    } else {
      put(&e, "[", 1);
      for (size_t i = 0; i < r->n_prompt_token_ids; i++) {
        if (i) put(&e, ",", 1);
        put_int(&e, r->prompt_token_ids[i]);
      }
      put(&e, "]", 1);
    }
  }
  if (r->max_tokens >= 0 &&
      member(&e, chat && r->use_max_completion_tokens ? "max_completion_tokens" : "max_tokens"))
    put_int(&e, r->max_tokens);
  if (r->min_tokens >= 0 && member(&e, "min_tokens")) put_int(&e, r->min_tokens);
  if (r->ignore_eos && member(&e, "ignore_eos")) put_str(&e, "true");
  if (r->stream && member(&e, "stream")) put_str(&e, "true");
  if (r->stream && (r->include_usage || r->continuous_usage) && member(&e, "stream_options")) {
    put_str(&e, "{");
    if (r->include_usage) put_str(&e, "\"include_usage\":true");
    if (r->continuous_usage)
      put_str(&e, r->include_usage ? ",\"continuous_usage_stats\":true"
                                   : "\"continuous_usage_stats\":true");
    put_str(&e, "}");
  }
  if (e.extra) {
    size_t mark = out->len;
    int members = e.members;
    if (e.st == CB_OK && put_extra_raw(&e, r->extra_json, r->extra_json_len) != 0) {
      /* The scanner declined (e.g. a 20-digit integer): jansson writes it. */
      out->len = mark;
      if (out->data) out->data[mark] = '\0';
      e.members = members;
      put_extra_jansson(&e);
    }
    json_decref(e.extra);
  }
  put(&e, "}", 1);
  if (e.st != CB_OK) {
    out->len = start;
    if (out->data) out->data[start] = '\0';
    return cb_error_set(err, e.st, "request body larger than the buffer's limit of %zu bytes",
                        out->cap);
  }
  return CB_OK;
}
