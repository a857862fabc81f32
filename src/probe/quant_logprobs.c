/*
 * quant_logprobs.c - the generated tokens and their top_logprobs lists in a response's
 * events (probe_quant.h, cb_quant_parse_events), in the two shapes servers send, and a
 * prompt's scored tokens (cb_quant_parse_prompt): echoed with logprobs, or vLLM's
 * prompt_logprobs.
 */
#include <math.h>
#include <stdlib.h>
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
  int echo; /* the first token may come without log-probabilities (an echoed prompt's) */
} acc;

/* A new token of text tok (a JSON string, else "") with log-probability lp. */
static cb_quant_token *push(acc *a, json_t *tok, double lp) {
  if (a->n == a->cap) a->t = cb_reallocarray(a->t, a->cap = a->cap ? 2 * a->cap : 32, sizeof *a->t);
  cb_quant_token *t = &a->t[a->n++];
  memset(t, 0, sizeof *t);
  const char *s = json_is_string(tok) ? json_string_value(tok) : "";
  t->text_len = json_is_string(tok) ? json_string_length(tok) : 0;
  t->text = cb_strndup(s, t->text_len);
  t->logprob = lp;
  t->id = cb_quant_text_id(s, t->text_len);
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
    cb_quant_token *t = push(a, tok, json_number_value(lp));
    t->id = entry_id(a, json_object_get(e, "id"), t->text, t->text_len);
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

/* OpenAI's legacy completions logprobs: parallel arrays, top lists as {text: logprob}.
 * An echoed prompt's first token has null in both (no context to predict it from). */
static cb_status read_arrays(acc *a, json_t *lp, long line, cb_error *err) {
  json_t *toks = json_object_get(lp, "tokens"), *lps = json_object_get(lp, "token_logprobs"),
         *tops = json_object_get(lp, "top_logprobs");
  a->has_ids = 0;
  size_t n = json_array_size(toks);
  if (!json_is_array(lps) || json_array_size(lps) != n || (tops && !json_is_null(tops) &&
                                                           json_array_size(tops) != n))
    return cb_error_set(err, CB_ERR_PARSE,
                        "response event %ld: logprobs: %zu tokens, %zu token_logprobs and %zu "
                        "top_logprobs: expected as many of each", line, n, json_array_size(lps),
                        json_array_size(tops));
  size_t i;
  json_t *tok;
  json_array_foreach(toks, i, tok) {
    json_t *l = json_array_get(lps, i);
    int first_echoed = a->echo && a->n == 0 && json_is_null(l);
    if (!json_is_number(l) && !first_echoed) return bad(err, line, "logprobs.token_logprobs[]");
    cb_quant_token *t = push(a, tok, first_echoed ? NAN : json_number_value(l));
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

/* Each event line's choices[0], in order, to fn. */
typedef cb_status (*choice_fn)(acc *a, json_t *choice, long line, cb_error *err);

static cb_status each_choice(const char *events, acc *a, choice_fn fn, cb_error *err) {
  cb_status st = CB_OK;
  long line = 0;
  for (const char *p = events ? events : ""; *p && st == CB_OK;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    json_t *root = json_loadb(p, len, 0, NULL);
    p += len + (nl != NULL);
    line++;
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    if (choice) st = fn(a, choice, line, err);
    json_decref(root);
  }
  if (st != CB_OK) {
    cb_quant_tokens_free(a->t, a->n);
    *a = (acc){0};
  }
  return st;
}

static cb_status read_logprobs(acc *a, json_t *choice, long line, cb_error *err) {
  json_t *lp = json_object_get(choice, "logprobs");
  json_t *content = json_object_get(lp, "content");
  if (json_is_array(content)) return read_content(a, content, line, err);
  if (json_is_array(json_object_get(lp, "tokens"))) return read_arrays(a, lp, line, err);
  return CB_OK;
}

cb_status cb_quant_parse_events(const char *events, cb_quant_token **out, size_t *n,
                                int *has_ids, cb_error *err) {
  acc a = {.has_ids = 1};
  cb_status st = each_choice(events, &a, read_logprobs, err);
  if (st != CB_OK) return st;
  *out = a.t;
  *n = a.n;
  *has_ids = a.n > 0 && a.has_ids;
  return CB_OK;
}

/* ---- a scored prompt ------------------------------------------------------------- */

/* vLLM's choices[0].prompt_logprobs: null, then per prompt token an object keyed by
 * token id, the prompt's own token first, each {"logprob", "rank", "decoded_token"}
 * (vllm/entrypoints/openai/completion/protocol.py, CompletionResponseChoice;
 * vllm/v1/engine/logprobs.py, _make_logprob_dict). Entry ids: the key (by_id, kept in
 * a->has_ids) or the decoded token's text. */
static cb_status read_prompt_logprobs(acc *a, json_t *choice, long line, cb_error *err) {
  json_t *plp = json_object_get(choice, "prompt_logprobs");
  if (!json_is_array(plp))
    return cb_error_set(err, CB_ERR_PARSE, "response event %ld: choices[0].prompt_logprobs: expected "
                        "an array, got %s", line, plp ? "null" : "none");
  size_t i;
  json_t *pos;
  json_array_foreach(plp, i, pos) {
    if (!i && json_is_null(pos)) continue; /* the first token: nothing before it */
    if (!json_is_object(pos) || !json_object_size(pos))
      return cb_error_set(err, CB_ERR_PARSE, "response event %ld: prompt_logprobs[%zu]: expected an "
                          "object of token id: {logprob, rank, decoded_token}", line, i);
    cb_quant_token *t = NULL;
    const char *key;
    json_t *v;
    json_object_foreach(pos, key, v) {
      json_t *lp = json_object_get(v, "logprob"), *dt = json_object_get(v, "decoded_token");
      char *end;
      long long id = strtoll(key, &end, 10);
      if (!json_is_number(lp) || (a->has_ids && (*end || end == key || id < 0)))
        return cb_error_set(err, CB_ERR_PARSE, "response event %ld: prompt_logprobs[%zu][\"%.40s\"]: "
                            "expected a token id key and a numeric logprob", line, i, key);
      if (!t) {
        t = push(a, dt, json_number_value(lp));
        t->top = cb_calloc(json_object_size(pos), sizeof *t->top);
        if (a->has_ids) t->id = id;
      }
      t->top[t->n_top++] = (cb_quant_entry){
          a->has_ids ? (int64_t)id
                     : cb_quant_text_id(json_is_string(dt) ? json_string_value(dt) : "",
                                        json_is_string(dt) ? json_string_length(dt) : 0),
          json_number_value(lp)};
    }
  }
  return CB_OK;
}

cb_status cb_quant_parse_prompt(const char *events, cb_quant_path path, size_t n, size_t generated,
                                int by_id, cb_quant_token **out, cb_error *err) {
  *out = NULL;
  acc a = {.has_ids = by_id, .echo = 1};
  int echo = path == CB_QUANT_PATH_ECHO;
  cb_status st = each_choice(events, &a, echo ? read_logprobs : read_prompt_logprobs, err);
  if (st != CB_OK) return st;
  /* echoed: prompt + answer; prompt_logprobs: the prompt from its second token */
  size_t have = a.n - (echo && a.n ? 1 : 0), need = n + generated;
  if (a.n < (echo ? 1 : 0) + need || have < need) {
    cb_quant_tokens_free(a.t, a.n);
    return cb_error_set(err, CB_ERR_PARSE, "%s: %zu scored prompt tokens, expected at least %zu (the "
                        "continuation's %zu%s)", echo ? "echo: logprobs" : "prompt_logprobs", have,
                        need, n, generated ? " and the answer's" : "");
  }
  size_t first = a.n - generated - n;
  for (size_t i = 0; i < a.n; i++)
    if (i < first || i >= first + n) {
      cb_free(a.t[i].text);
      cb_free(a.t[i].top);
    }
  memmove(a.t, a.t + first, n * sizeof *a.t);
  *out = a.t;
  return CB_OK;
}
