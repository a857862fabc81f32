/*
 * tool_calls.c - choice 0's tool calls, put together from OpenAI's streamed pieces or
 * read from a whole message (client.h, "Tool calls").
 *
 * The streamed format (OpenAI's chat.completion.chunk reference, ChoiceDeltaToolCall):
 * delta.tool_calls is an array of {index, id?, type?, function: {name?, arguments?}};
 * a call's first piece names it, later pieces with the same index carry the next
 * part of its arguments string. Only chunks that the fast chunk scanner saw tool
 * calls in come here, so jansson reads just those.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/client.h"

void cb_client_tool_calls_init(cb_client_tool_calls *t, size_t max_bytes) {
  memset(t, 0, sizeof *t);
  t->max_bytes = max_bytes;
}

void cb_client_tool_calls_reset(cb_client_tool_calls *t) {
  for (size_t i = 0; i < t->n; i++) {
    cb_buf_free(&t->items[i].id);
    cb_buf_free(&t->items[i].name);
    cb_buf_free(&t->items[i].arguments);
  }
  t->n = 0;
  t->bytes = 0;
  t->truncated = 0;
}

void cb_client_tool_calls_free(cb_client_tool_calls *t) {
  cb_client_tool_calls_reset(t);
  cb_free(t->items);
  t->items = NULL;
  t->alloc = 0;
}

static cb_client_tool_call *call_at(cb_client_tool_calls *t, int64_t index) {
  for (size_t i = 0; i < t->n; i++)
    if (t->items[i].index == index) return &t->items[i];
  if (t->n == t->alloc) {
    t->alloc = t->alloc ? 2 * t->alloc : 4;
    t->items = cb_reallocarray(t->items, t->alloc, sizeof *t->items);
  }
  cb_client_tool_call *c = &t->items[t->n++];
  c->index = index;
  cb_buf_init(&c->id, 0);
  cb_buf_init(&c->name, 0);
  cb_buf_init(&c->arguments, 0);
  return c;
}

static void append(cb_client_tool_calls *t, cb_buf *b, json_t *v) {
  if (!json_is_string(v)) return;
  size_t n = json_string_length(v);
  if (t->max_bytes && t->bytes + n > t->max_bytes) {
    t->truncated = 1;
    return;
  }
  cb_buf_append(b, json_string_value(v), n);
  t->bytes += n;
}

/* One element of a tool_calls array; `pos` stands in for a missing index. */
static void add_piece(cb_client_tool_calls *t, json_t *piece, size_t pos) {
  if (!json_is_object(piece)) return;
  json_t *ix = json_object_get(piece, "index");
  int64_t index = json_is_integer(ix) ? (int64_t)json_integer_value(ix) : (int64_t)pos;
  cb_client_tool_call *c = call_at(t, index);
  append(t, &c->id, json_object_get(piece, "id"));
  json_t *f = json_object_get(piece, "function");
  if (!json_is_object(f)) return;
  append(t, &c->name, json_object_get(f, "name"));
  append(t, &c->arguments, json_object_get(f, "arguments"));
}

/* choices[] element with index 0 (or the first, when none says its index). */
static json_t *choice0(json_t *root) {
  json_t *choices = json_object_get(root, "choices");
  if (!json_is_array(choices)) return NULL;
  size_t i;
  json_t *c;
  json_array_foreach(choices, i, c) {
    json_t *ix = json_object_get(c, "index");
    if (!ix || (json_is_integer(ix) && json_integer_value(ix) == 0)) return c;
  }
  return NULL;
}

static void add_from(cb_client_tool_calls *t, const char *data, size_t len, const char *member) {
  json_t *root = json_loadb(data, len, 0, NULL);
  json_t *c = root ? choice0(root) : NULL;
  json_t *calls = c ? json_object_get(json_object_get(c, member), "tool_calls") : NULL;
  if (json_is_array(calls)) {
    size_t i;
    json_t *piece;
    json_array_foreach(calls, i, piece) add_piece(t, piece, i);
  }
  json_decref(root);
}

void cb_client_tool_calls_add_chunk(cb_client_tool_calls *t, const char *data, size_t len) {
  add_from(t, data, len, "delta");
}

void cb_client_tool_calls_add_body(cb_client_tool_calls *t, const char *body, size_t len) {
  add_from(t, body, len, "message");
}

static int by_index(const void *a, const void *b) {
  int64_t x = (*(const cb_client_tool_call *const *)a)->index;
  int64_t y = (*(const cb_client_tool_call *const *)b)->index;
  return (x > y) - (x < y);
}

static void str_member(cb_buf *out, const char *key, const cb_buf *v) {
  cb_buf_appendf(out, "\"%s\":\"", key);
  cb_buf_append_json_string(out, v->data ? v->data : "", v->len);
  cb_buf_append_char(out, '"');
}

void cb_client_tool_calls_json(const cb_client_tool_calls *t, cb_buf *out) {
  const cb_client_tool_call **order = cb_reallocarray(NULL, t->n ? t->n : 1, sizeof *order);
  for (size_t i = 0; i < t->n; i++) order[i] = &t->items[i];
  qsort(order, t->n, sizeof *order, by_index);
  cb_buf_append_char(out, '[');
  for (size_t i = 0; i < t->n; i++) {
    cb_buf_append_str(out, i ? ",{" : "{");
    str_member(out, "id", &order[i]->id);
    cb_buf_append_str(out, ",\"type\":\"function\",\"function\":{");
    str_member(out, "name", &order[i]->name);
    cb_buf_append_char(out, ',');
    str_member(out, "arguments", &order[i]->arguments);
    cb_buf_append_str(out, "}}");
  }
  cb_buf_append_char(out, ']');
  cb_free(order);
}
