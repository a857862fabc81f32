/*
 * quant_logprobs.c - the generated tokens and their top_logprobs lists in a response's
 * events (probe_quant.h, cb_quant_parse_events), in the two shapes servers send.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe_quant.h"

int64_t cb_quant_text_id(const char *text, size_t len) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * UINT64_C(0x100000001b3);
  return (int64_t)(h & INT64_MAX);
}

void cb_quant_tokens_free(cb_quant_token *t, size_t n) {
  for (size_t i = 0; t && i < n; i++) {
    cb_free(t[i].text);
    cb_free(t[i].top);
  }
  cb_free(t);
}

typedef struct acc {
  cb_quant_token *t;
  size_t n, cap;
  int has_ids;
} acc;

static cb_quant_token *push(acc *a) {
  if (a->n == a->cap) a->t = cb_reallocarray(a->t, a->cap = a->cap ? 2 * a->cap : 32, sizeof *a->t);
  cb_quant_token *t = &a->t[a->n++];
  memset(t, 0, sizeof *t);
  t->id = -1;
  return t;
}

/* The id of an entry: the server's "id", else its text's. */
static int64_t entry_id(acc *a, json_t *id, const char *text, size_t len) {
  if (json_is_integer(id)) return (int64_t)json_integer_value(id);
  a->has_ids = 0;
  return cb_quant_text_id(text, len);
}

static cb_status bad(cb_error *err, long line, const char *field) {
  return cb_error_set(err, CB_ERR_PARSE, "response event %ld: %s: expected a number", line, field);
}

/* logprobs.content[]: entries with token, logprob, top_logprobs (and llama-server's id). */
static cb_status read_content(acc *a, json_t *content, long line, cb_error *err) {
  size_t i;
  json_t *e;
  json_array_foreach(content, i, e) {
    json_t *tok = json_object_get(e, "token"), *lp = json_object_get(e, "logprob");
    if (!json_is_number(lp)) return bad(err, line, "logprobs.content[].logprob");
    cb_quant_token *t = push(a);
    const char *s = json_is_string(tok) ? json_string_value(tok) : "";
    size_t n = json_is_string(tok) ? json_string_length(tok) : 0;
    t->text = cb_strndup(s, n);
    t->text_len = n;
    t->logprob = json_number_value(lp);
    t->id = entry_id(a, json_object_get(e, "id"), s, n);
    json_t *top = json_object_get(e, "top_logprobs");
    t->top = cb_calloc(json_array_size(top) + 1, sizeof *t->top);
    size_t j;
    json_t *x;
    json_array_foreach(top, j, x) {
      json_t *xt = json_object_get(x, "token"), *xl = json_object_get(x, "logprob");
      if (!json_is_number(xl)) return bad(err, line, "logprobs.content[].top_logprobs[].logprob");
      t->top[t->n_top++] = (cb_quant_entry){
          entry_id(a, json_object_get(x, "id"), json_is_string(xt) ? json_string_value(xt) : "",
                   json_is_string(xt) ? json_string_length(xt) : 0),
          json_number_value(xl)};
    }
  }
  return CB_OK;
}

/* OpenAI's legacy completions logprobs: parallel arrays, top lists as {text: logprob}. */
static cb_status read_arrays(acc *a, json_t *lp, long line, cb_error *err) {
  json_t *toks = json_object_get(lp, "tokens"), *lps = json_object_get(lp, "token_logprobs"),
         *tops = json_object_get(lp, "top_logprobs");
  a->has_ids = 0;
  size_t i;
  json_t *tok;
  json_array_foreach(toks, i, tok) {
    json_t *l = json_array_get(lps, i);
    if (!json_is_number(l)) return bad(err, line, "logprobs.token_logprobs[]");
    cb_quant_token *t = push(a);
    const char *s = json_is_string(tok) ? json_string_value(tok) : "";
    size_t n = json_is_string(tok) ? json_string_length(tok) : 0;
    t->text = cb_strndup(s, n);
    t->text_len = n;
    t->logprob = json_number_value(l);
    t->id = cb_quant_text_id(s, n);
    json_t *top = json_array_get(tops, i);
    t->top = cb_calloc(json_object_size(top) + 1, sizeof *t->top);
    const char *key;
    json_t *v;
    json_object_foreach(top, key, v) {
      if (!json_is_number(v)) return bad(err, line, "logprobs.top_logprobs[]");
      t->top[t->n_top++] = (cb_quant_entry){cb_quant_text_id(key, strlen(key)), json_number_value(v)};
    }
  }
  return CB_OK;
}

cb_status cb_quant_parse_events(const char *events, cb_quant_token **out, size_t *n,
                                int *has_ids, cb_error *err) {
  acc a = {.has_ids = 1};
  cb_status st = CB_OK;
  long line = 0;
  for (const char *p = events ? events : ""; *p && st == CB_OK;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    json_t *root = json_loadb(p, len, 0, NULL);
    p += len + (nl != NULL);
    line++;
    json_t *lp = json_object_get(json_array_get(json_object_get(root, "choices"), 0), "logprobs");
    if (json_is_array(json_object_get(lp, "content"))) st = read_content(&a, json_object_get(lp, "content"), line, err);
    else if (json_is_array(json_object_get(lp, "tokens"))) st = read_arrays(&a, lp, line, err);
    json_decref(root);
  }
  if (st != CB_OK) {
    cb_quant_tokens_free(a.t, a.n);
    return st;
  }
  *out = a.t;
  *n = a.n;
  *has_ids = a.n > 0 && a.has_ids;
  return CB_OK;
}
