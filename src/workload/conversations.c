/*
 * conversations.c - the sessions file of `run --sessions`: one conversation a line,
 * its user turns in order (conversations.h, docs/workload.md). Bad input stops the
 * load with "FILE:LINE: field 'x': expected ..., got ...".
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/conversations.h"
#include "calibench/duration.h"
#include "calibench/limits.h"
#include "util/json_type.h"
#include "workload_internal.h"

static cb_status bad(cb_error *err, const char *name, long line, const char *field,
                     const char *want, const json_t *got) {
  char brief[80];
  cb__json_brief(got, brief, sizeof brief);
  return cb_error_at(err, CB_ERR_PARSE, name, line, 0, "field '%s': expected %s, got %s", field,
                     want, brief);
}

static cb_status parse_turn(const json_t *v, size_t k, const char *name, long line,
                            cb_conv_turn *t, cb_error *err) {
  char field[64];
  *t = (cb_conv_turn){.max_tokens = -1, .think_ns = -1};
  const json_t *content = v;
  if (json_is_object(v)) {
    const char *key;
    json_t *m;
    json_object_foreach((json_t *)v, key, m) {
      if (strcmp(key, "content") && strcmp(key, "max_tokens") && strcmp(key, "think_time")) {
        snprintf(field, sizeof field, "turns[%zu].%s", k, key);
        return bad(err, name, line, field, "one of content, max_tokens, think_time", m);
      }
    }
    content = json_object_get(v, "content");
    const json_t *mt = json_object_get(v, "max_tokens");
    if (mt) {
      snprintf(field, sizeof field, "turns[%zu].max_tokens", k);
      if (!json_is_integer(mt) || json_integer_value(mt) < 1 ||
          json_integer_value(mt) > (json_int_t)CB_LIMIT_TOKENS)
        return bad(err, name, line, field, "an integer in [1, " CB_LIMIT_TOKENS_TEXT "]", mt);
      t->max_tokens = json_integer_value(mt);
    }
    const json_t *th = json_object_get(v, "think_time");
    if (th) {
      snprintf(field, sizeof field, "turns[%zu].think_time", k);
      if (k == 0)
        return bad(err, name, line, field, "none on the first turn (nothing before it)", th);
      uint64_t ns;
      cb_error ignore;
      if (!json_is_string(th) ||
          cb_duration_parse(json_string_value(th), 1000000000ull, &ns, &ignore) != CB_OK ||
          ns > (uint64_t)INT64_MAX)
        return bad(err, name, line, field, "a duration such as \"1.5s\" or \"500ms\"", th);
      t->think_ns = (int64_t)ns;
    }
  }
  snprintf(field, sizeof field, json_is_object(v) ? "turns[%zu].content" : "turns[%zu]", k);
  if (!json_is_string(content) || !json_string_length(content))
    return bad(err, name, line, field, "a non-empty string (the user's message)", content);
  t->content_len = json_string_length(content);
  t->content = cb_strndup(json_string_value(content), t->content_len);
  return CB_OK;
}

static cb_status parse_line(const json_t *o, const char *name, long line, cb_conversation *c,
                            cb_error *err) {
  const char *key;
  json_t *m;
  json_object_foreach((json_t *)o, key, m) {
    if (strcmp(key, "id") && strcmp(key, "system") && strcmp(key, "turns"))
      return bad(err, name, line, key, "id, system or turns", m);
  }
  const json_t *id = json_object_get(o, "id");
  if (id && !json_is_string(id)) return bad(err, name, line, "id", "a string", id);
  const json_t *system = json_object_get(o, "system");
  if (system && (!json_is_string(system) || !json_string_length(system)))
    return bad(err, name, line, "system", "a non-empty string (the system message)", system);
  char fallback[32];
  snprintf(fallback, sizeof fallback, "line %ld", line);
  c->id = cb_strdup(id ? json_string_value(id) : fallback);
  if (system) {
    c->system_len = json_string_length(system);
    c->system = cb_strndup(json_string_value(system), c->system_len);
  }
  const json_t *turns = json_object_get(o, "turns");
  if (!json_is_array(turns) || !json_array_size(turns))
    return bad(err, name, line, "turns", "a non-empty array of user turns", turns);
  c->turns = cb_calloc(json_array_size(turns), sizeof *c->turns);
  for (size_t k = 0; k < json_array_size(turns); k++) {
    cb_status st = parse_turn(json_array_get(turns, k), k, name, line, &c->turns[k], err);
    if (st != CB_OK) return st;
    c->n_turns++;
  }
  return CB_OK;
}

cb_status cb_conversations_parse(const char *text, size_t len, const char *name,
                                 cb_conversations *out, cb_error *err) {
  *out = (cb_conversations){.source = cb_strdup(name)};
  size_t pos = 0, cap = 0, n;
  const char *line;
  long lineno = 0;
  cb_status st = CB_OK;
  while (st == CB_OK && cb__next_line(text, len, &pos, &line, &n)) {
    lineno++;
    if (cb__is_blank(line, n)) continue;
    json_error_t je;
    json_t *o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
      st = cb_error_at(err, CB_ERR_PARSE, name, lineno, je.column > 0 ? je.column : 0,
                       "invalid JSON: %s", je.text);
      break;
    }
    if (!json_is_object(o)) {
      st = cb_error_at(err, CB_ERR_PARSE, name, lineno, 0,
                       "expected a JSON object per line (a conversation), got %s",
                       cb__json_type_name(o));
    } else {
      if (out->count == cap) {
        cap = cap ? 2 * cap : 16;
        out->items = cb_reallocarray(out->items, cap, sizeof *out->items);
      }
      cb_conversation *c = &out->items[out->count++];
      *c = (cb_conversation){0};
      st = parse_line(o, name, lineno, c, err);
    }
    json_decref(o);
  }
  if (st == CB_OK && !out->count)
    st = cb_error_at(err, CB_ERR_PARSE, name, 0, 0, "no conversations (one JSON object a line)");
  if (st != CB_OK) cb_conversations_free(out);
  return st;
}

cb_status cb_conversations_load(const char *path, cb_conversations *out, cb_error *err) {
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &text, err);
  if (st == CB_OK)
    st = cb_conversations_parse(text.data ? text.data : "", text.len, path, out, err);
  cb_buf_free(&text);
  return st;
}

void cb_conversations_free(cb_conversations *c) {
  for (size_t i = 0; i < c->count; i++) {
    for (size_t k = 0; k < c->items[i].n_turns; k++) cb_free(c->items[i].turns[k].content);
    cb_free(c->items[i].turns);
    cb_free(c->items[i].id);
    cb_free(c->items[i].system);
  }
  cb_free(c->items);
  cb_free(c->source);
  *c = (cb_conversations){0};
}
