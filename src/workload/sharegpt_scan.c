/*
 * sharegpt_scan.c - a ShareGPT JSON file, [{"id": ..., "conversations": [{"from",
 * "value"}, ...]}], one conversation at a time (workload_internal.h): the dataset
 * reader (ds_sharegpt.c) and the live sessions reader (conversations_sharegpt.c) both
 * take its turns from here.
 *
 * The top-level array is split into its elements by a small string-aware scanner
 * that tracks line numbers, and each element is parsed on its own, so an error names
 * the line where its conversation starts (and jansson's line inside it for syntax
 * errors) and the whole file is never one DOM.
 *
 * Roles: human/user -> user; gpt/chatgpt/bing/bard/assistant/model -> assistant;
 * system -> system; anything else is an error naming the turn.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "util/json_type.h"
#include "workload_internal.h"

const char *const cb__sg_role_name[3] = {"user", "assistant", "system"};

static int map_role(const char *from, int *role) {
  static const struct {
    const char *from;
    int role;
  } map[] = {{"human", CB__SG_USER},          {"user", CB__SG_USER},
             {"gpt", CB__SG_ASSISTANT},       {"chatgpt", CB__SG_ASSISTANT},
             {"bing", CB__SG_ASSISTANT},      {"bard", CB__SG_ASSISTANT},
             {"assistant", CB__SG_ASSISTANT}, {"model", CB__SG_ASSISTANT},
             {"system", CB__SG_SYSTEM}};
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

cb_status cb__sg_error(const cb__sg_conv *c, cb_error *err, const char *fmt, ...) {
  char msg[256], id[64] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->id) snprintf(id, sizeof id, " (id '%s')", c->id);
  return cb_error_at(err, CB_ERR_PARSE, c->path, c->line, 0, "conversation %zu%s: %s",
                     c->index, id, msg);
}

/* Parse one conversation's turns into c (turns grown in *cap); an error names it. */
static cb_status parse_conversation(cb__sg_conv *c, json_t *o, size_t *cap, cb_error *err) {
  if (!json_is_object(o))
    return cb__sg_error(c, err, "expected an object {id, conversations}, got %s",
                        cb__json_type_name(o));
  json_t *id = json_object_get(o, "id");
  if (json_is_string(id)) c->id = json_string_value(id);
  json_t *conv = json_object_get(o, "conversations");
  if (!json_is_array(conv))
    return cb__sg_error(c, err, "field 'conversations': expected an array of {from, value}, got %s",
                        cb__json_type_name(conv));
  size_t nt = json_array_size(conv);
  if (nt > *cap) {
    *cap = nt;
    c->turns = cb_reallocarray(c->turns, nt, sizeof *c->turns);
  }
  size_t j;
  json_t *tv;
  json_array_foreach(conv, j, tv) {
    char field[48];
    snprintf(field, sizeof field, "conversations[%zu]", j);
    if (!json_is_object(tv))
      return cb__sg_error(c, err, "field '%s': expected an object {from, value}, got %s", field,
                          cb__json_type_name(tv));
    json_t *from = json_object_get(tv, "from");
    json_t *value = json_object_get(tv, "value");
    int role;
    if (!json_is_string(from))
      return cb__sg_error(c, err, "field '%s.from': expected a string, got %s", field,
                          cb__json_type_name(from));
    if (!map_role(json_string_value(from), &role)) {
      char got[64];
      snprintf(got, sizeof got, "'%.40s'", json_string_value(from));
      return cb__sg_error(c, err,
                          "field '%s.from': expected human, user, gpt, assistant, chatgpt, bing, "
                          "bard, model or system, got %s",
                          field, got);
    }
    if (!json_is_string(value))
      return cb__sg_error(c, err, "field '%s.value': expected a string, got %s", field,
                          cb__json_type_name(value));
    c->turns[j] = (cb__sg_turn){.role = role, .text = json_string_value(value),
                                .len = json_string_length(value)};
  }
  c->n_turns = nt;
  return CB_OK;
}

cb_status cb__sharegpt_walk(const char *path, const char *data, size_t len, cb__sg_fn fn,
                            void *ctx, cb_error *err) {
  scan s = {data, len, 0, 1};
  skip_ws(&s);
  if (s.i >= len || data[s.i] != '[')
    return cb_error_at(err, CB_ERR_PARSE, path, s.line, 0,
                       "expected a JSON array of conversations ('['), got %s",
                       s.i >= len ? "an empty file" : "something else");
  s.i++;
  cb__sg_turn *turns = NULL;
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
        st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                         "conversation %zu: unterminated or empty JSON value", index);
        break;
      }
      json_error_t je;
      json_t *o = json_loadb(data + start, s.i - start, JSON_REJECT_DUPLICATES, &je);
      if (!o) {
        st = cb_error_at(err, CB_ERR_PARSE, path, line + (long)(je.line > 0 ? je.line - 1 : 0),
                         0, "conversation %zu: invalid JSON: %s", index, je.text);
        break;
      }
      cb__sg_conv c = {.path = path, .line = line, .index = index, .turns = turns};
      st = parse_conversation(&c, o, &cap, err);
      turns = c.turns;
      if (st == CB_OK) st = fn(ctx, &c, err);
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
      st = cb_error_at(err, CB_ERR_PARSE, path, s.line, 0,
                       "after conversation %zu: expected ',' or ']'", index - 1);
      break;
    }
  }
  cb_free(turns);
  if (st != CB_OK) return st;
  skip_ws(&s);
  if (s.i < len)
    return cb_error_at(err, CB_ERR_PARSE, path, s.line, 0,
                       "unexpected text after the array of conversations");
  return CB_OK;
}
