/*
 * ds_sharegpt.c - ShareGPT JSON: [{"id": ..., "conversations": [{"from", "value"}, ...]}].
 *
 * The top-level array is split into its elements by a small string-aware scanner
 * that tracks line numbers, and each element is parsed on its own, so an error names
 * the line where its conversation starts (and jansson's line inside it for syntax
 * errors) and the whole file is never one DOM.
 *
 * Roles: human/user -> user; gpt/chatgpt/bing/bard/assistant/model -> assistant;
 * system -> system; anything else is an error naming the turn.
 * First-turn mode (vLLM): the first user turn is the prompt and the reply right after
 * it gives the output length (its token count; an empty reply counts as 1);
 * conversations with fewer than 2 turns or no answered user turn are skipped, as
 * vLLM skips them (vLLM takes turns 0 and 1 whatever their roles; we take the first
 * user turn and its reply, which is the same on well-formed data).
 * Turns mode: one item per assistant reply that follows a user turn, sending every
 * earlier turn as chat messages.
 * Length filters (off by default; vLLM's are 4/4/1024/2048) drop items, counted in
 * cb_dataset_skipped with the skipped conversations.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "util/json_type.h"
#include "workload_internal.h"

enum { ROLE_USER, ROLE_ASSISTANT, ROLE_SYSTEM };
static const char *const role_out[] = {"user", "assistant", "system"};

static int map_role(const char *from, int *role) {
  static const struct {
    const char *from;
    int role;
  } map[] = {{"human", ROLE_USER},          {"user", ROLE_USER},           {"gpt", ROLE_ASSISTANT},
             {"chatgpt", ROLE_ASSISTANT},   {"bing", ROLE_ASSISTANT},      {"bard", ROLE_ASSISTANT},
             {"assistant", ROLE_ASSISTANT}, {"model", ROLE_ASSISTANT},     {"system", ROLE_SYSTEM}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(from, map[i].from) == 0) return *role = map[i].role, 1;
  return 0;
}

/* ---- splitting the top-level array ------------------------------------------------- */

typedef struct scan {
  const char *d;
  size_t len, i;
  uint32_t line;
} scan;

static void skip_ws(scan *s) {
  while (s->i < s->len) {
    char c = s->d[s->i];
    if (c == '\n') s->line++;
    else if (c != ' ' && c != '\t' && c != '\r') break;
    s->i++;
  }
}

/* Advance past the JSON value at s->i (strings, nesting); 0 when it does not end. */
static int skip_value(scan *s) {
  int depth = 0, in_str = 0;
  size_t start = s->i;
  for (; s->i < s->len; s->i++) {
    char c = s->d[s->i];
    if (c == '\n') s->line++;
    if (in_str) {
      if (c == '\\') {
        if (s->i + 1 < s->len && s->d[s->i + 1] == '\n') s->line++;
        s->i++;
      } else if (c == '"') {
        in_str = 0;
        if (depth == 0) return s->i++, 1;
      }
      continue;
    }
    if (c == '"') in_str = 1;
    else if (c == '{' || c == '[') depth++;
    else if (c == '}' || c == ']') {
      if (depth == 0) return s->i > start; /* end of the enclosing array: a scalar ended */
      if (--depth == 0) return s->i++, 1;
    } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
      if (c == '\n') s->line--; /* counted again by skip_ws */
      return s->i > start;
    }
  }
  return 0;
}

/* ---- one conversation --------------------------------------------------------------- */

typedef struct turn {
  int role;
  const char *text;
  size_t len;
  size_t tokens;
} turn;

typedef struct conv_ctx {
  cb_dataset *ds;
  uint32_t line;
  size_t index; /* conversation number in the file, 0-based */
  char id[64];
  cb_error *err;
} conv_ctx;

static cb_status conv_error(const conv_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static cb_status conv_error(const conv_ctx *c, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cb_error_at(c->err, CB_ERR_PARSE, c->ds->path, c->line, 0, "conversation %zu%s: %s",
                     c->index, c->id, msg);
}

static int passes_filters(const cb_dataset_params *p, uint32_t in, uint32_t out) {
  if (in > CB_LIMIT_TOKENS || out > CB_LIMIT_TOKENS) return 0; /* docs/limits.md */
  if (p->min_prompt_len && in < p->min_prompt_len) return 0;
  if (p->min_output_len && out < p->min_output_len) return 0;
  if (p->max_prompt_len && in > p->max_prompt_len) return 0;
  if (p->max_total_len && (uint64_t)in + out > p->max_total_len) return 0;
  return 1;
}

static uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static void append_message(cb_dataset *ds, int role, const char *text, size_t len) {
  cb_buf *a = &ds->arena;
  cb_buf_appendf(a, "{\"role\":\"%s\",\"content\":\"", role_out[role]);
  cb_buf_append_json_string(a, text, len);
  cb_buf_append(a, "\"}", 2);
}

/* Items from one parsed conversation; 1 if it gave at least one item. */
static int add_items(conv_ctx *c, const turn *t, size_t nt) {
  cb_dataset *ds = c->ds;
  const cb_dataset_params *p = &ds->params;
  uint32_t override = p->output_len_override;
  int added = 0;
  if (nt < 2) return 0;
  if (p->sharegpt_mode == CB_SHAREGPT_FIRST_TURN) {
    size_t u = 0;
    while (u < nt && t[u].role != ROLE_USER) u++;
    if (u + 1 >= nt || t[u + 1].role != ROLE_ASSISTANT) return 0;
    uint32_t in = clamp32(t[u].tokens);
    uint32_t out = override ? override : clamp32(t[u + 1].tokens ? t[u + 1].tokens : 1);
    if (!passes_filters(p, in, out)) return 0;
    cb__item *it = cb__dataset_push_item(ds);
    it->text_off = cb__dataset_push_text(ds, t[u].text, t[u].len);
    it->text_len = (uint32_t)t[u].len;
    it->input_len = in;
    it->output_len = out;
    it->line = c->line;
    return 1;
  }
  /* Turns mode: the conversation's messages once, "[m0,m1,...", each item a prefix. */
  uint64_t conv_off = ds->arena.len;
  cb_buf_append(&ds->arena, "[", 1);
  size_t in_tokens = 0;
  for (size_t j = 0; j < nt; j++) {
    if (j > 0 && t[j].role == ROLE_ASSISTANT && t[j - 1].role == ROLE_USER) {
      uint32_t in = clamp32(in_tokens);
      uint32_t out = override ? override : clamp32(t[j].tokens ? t[j].tokens : 1);
      if (passes_filters(p, in, out)) {
        cb__item *it = cb__dataset_push_item(ds);
        it->text_off = conv_off;
        it->text_len = (uint32_t)(ds->arena.len - conv_off);
        it->is_messages = 2; /* append ']' when rendering */
        it->input_len = in;
        it->output_len = out;
        it->line = c->line;
        added = 1;
      }
    }
    if (j > 0) cb_buf_append(&ds->arena, ",", 1);
    append_message(ds, t[j].role, t[j].text, t[j].len);
    in_tokens += t[j].tokens;
  }
  if (!added) { /* nothing refers to it */
    ds->arena.len = conv_off;
    ds->arena.data[conv_off] = '\0';
  }
  return added;
}

static cb_status load_conversation(conv_ctx *c, json_t *o, turn **turns, size_t *cap) {
  if (!json_is_object(o))
    return conv_error(c, "expected an object {id, conversations}, got %s",
                      cb__json_type_name(o));
  json_t *id = json_object_get(o, "id");
  if (json_is_string(id)) snprintf(c->id, sizeof c->id, " (id '%s')", json_string_value(id));
  json_t *conv = json_object_get(o, "conversations");
  if (!json_is_array(conv))
    return conv_error(c, "field 'conversations': expected an array of {from, value}, got %s",
                      cb__json_type_name(conv));
  size_t nt = json_array_size(conv);
  if (nt > *cap) {
    *cap = nt;
    *turns = cb_reallocarray(*turns, nt, sizeof **turns);
  }
  size_t j;
  json_t *tv;
  json_array_foreach(conv, j, tv) {
    char field[48];
    snprintf(field, sizeof field, "conversations[%zu]", j);
    if (!json_is_object(tv))
      return conv_error(c, "field '%s': expected an object {from, value}, got %s", field,
                        cb__json_type_name(tv));
    json_t *from = json_object_get(tv, "from");
    json_t *value = json_object_get(tv, "value");
    int role;
    if (!json_is_string(from))
      return conv_error(c, "field '%s.from': expected a string, got %s", field,
                        cb__json_type_name(from));
    if (!map_role(json_string_value(from), &role)) {
      char got[64];
      snprintf(got, sizeof got, "'%.40s'", json_string_value(from));
      return conv_error(c,
                        "field '%s.from': expected human, user, gpt, assistant, chatgpt, bing, "
                        "bard, model or system, got %s",
                        field, got);
    }
    if (!json_is_string(value))
      return conv_error(c, "field '%s.value': expected a string, got %s", field,
                        cb__json_type_name(value));
    turn *t = &(*turns)[j];
    t->role = role;
    t->text = json_string_value(value);
    t->len = json_string_length(value);
    t->tokens = cb__count(&c->ds->tm.counter, t->text, t->len);
  }
  if (!add_items(c, *turns, nt)) c->ds->skipped++;
  return CB_OK;
}

cb_status cb__load_sharegpt(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  scan s = {data, len, 0, 1};
  skip_ws(&s);
  if (s.i >= len || data[s.i] != '[')
    return cb_error_at(err, CB_ERR_PARSE, ds->path, s.line, 0,
                       "expected a JSON array of conversations ('['), got %s",
                       s.i >= len ? "an empty file" : "something else");
  s.i++;
  turn *turns = NULL;
  size_t cap = 0, index = 0;
  cb_status st = CB_OK;
  skip_ws(&s);
  if (s.i < len && data[s.i] == ']') s.i++;
  else {
    for (;;) {
      skip_ws(&s);
      size_t start = s.i;
      uint32_t line = s.line;
      if (!skip_value(&s)) {
        st = cb_error_at(err, CB_ERR_PARSE, ds->path, line, 0,
                         "conversation %zu: unterminated or empty JSON value", index);
        break;
      }
      json_error_t je;
      json_t *o = json_loadb(data + start, s.i - start, JSON_REJECT_DUPLICATES, &je);
      if (!o) {
        st = cb_error_at(err, CB_ERR_PARSE, ds->path, line + (long)(je.line > 0 ? je.line - 1 : 0),
                         0, "conversation %zu: invalid JSON: %s", index, je.text);
        break;
      }
      conv_ctx c = {ds, line, index, "", err};
      st = load_conversation(&c, o, &turns, &cap);
      json_decref(o);
      if (st != CB_OK) break;
      index++;
      skip_ws(&s);
      if (s.i < len && data[s.i] == ',') {
        s.i++;
        continue;
      }
      if (s.i < len && data[s.i] == ']') {
        s.i++;
        break;
      }
      st = cb_error_at(err, CB_ERR_PARSE, ds->path, s.line, 0,
                       "after conversation %zu: expected ',' or ']'", index - 1);
      break;
    }
  }
  cb_free(turns);
  if (st != CB_OK) return st;
  skip_ws(&s);
  if (s.i < len)
    return cb_error_at(err, CB_ERR_PARSE, ds->path, s.line, 0,
                       "unexpected text after the array of conversations");
  return CB_OK;
}
