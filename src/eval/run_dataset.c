/*
 * run_dataset.c - the evaluation dataset of `eval run` (eval_run.h): JSONL items with
 * a prompt or messages and their references, and the workload spec that sends them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "run_internal.h"

void cb__eval_items_free(cb__eval_items *it) {
  for (size_t i = 0; i < it->n; i++) cb_free(it->v[i].refs);
  cb_free(it->v);
  json_decref(it->lines);
  memset(it, 0, sizeof *it);
}

static int blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
  return 1;
}

static cb_status field_err(cb_error *err, const char *path, long line, const char *field,
                           const char *expected) {
  return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "field '%s': expected %s", field,
                     expected);
}

/* `reference`: a string or a non-empty list of strings (no NUL: the metrics take C
 * strings' lengths but tokenizers may stop at one). */
static cb_status item_refs(cb__eval_item *item, json_t *r, const char *path, cb_error *err) {
  static const char *EXPECTED = "a string or a non-empty list of strings";
  size_t n = json_is_array(r) ? json_array_size(r) : 1;
  if (!json_is_array(r) && !json_is_string(r)) return field_err(err, path, item->line, "reference", EXPECTED);
  if (!n) return field_err(err, path, item->line, "reference", EXPECTED);
  item->refs = cb_calloc(n, sizeof *item->refs);
  for (size_t k = 0; k < n; k++) {
    json_t *s = json_is_array(r) ? json_array_get(r, k) : r;
    if (!json_is_string(s)) return field_err(err, path, item->line, "reference", EXPECTED);
    item->refs[k] = (cb_eval_text){json_string_value(s), json_string_length(s)};
    if (memchr(item->refs[k].s, '\0', item->refs[k].n))
      return field_err(err, path, item->line, "reference", "text without NUL characters");
  }
  item->nrefs = n;
  return CB_OK;
}

static cb_status item_id(cb__eval_item *item, json_t *id, size_t number, const char *path,
                         cb_error *err) {
  if (!id) snprintf(item->id, sizeof item->id, "%zu", number);
  else if (json_is_string(id) && json_string_length(id) && json_string_length(id) < sizeof item->id &&
           !memchr(json_string_value(id), '\0', json_string_length(id)))
    snprintf(item->id, sizeof item->id, "%s", json_string_value(id));
  else if (json_is_integer(id))
    snprintf(item->id, sizeof item->id, "%lld", (long long)json_integer_value(id));
  else
    return field_err(err, path, item->line, "id", "a non-empty string (under 128 bytes) or an integer");
  return CB_OK;
}

cb_status cb__eval_items_load(const char *path, int need_refs, cb__eval_items *out,
                              cb_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  out->lines = json_array();
  cb_buf buf = {0};
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &buf, err);
  size_t cap = 0, with_refs = 0;
  long line = 0, first_without = 0;
  for (size_t pos = 0; !st && pos < buf.len;) {
    const char *nl = memchr(buf.data + pos, '\n', buf.len - pos);
    size_t end = nl ? (size_t)(nl - buf.data) : buf.len;
    const char *s = buf.data + pos;
    size_t len = end - pos;
    line++;
    pos = end + 1;
    if (blank(s, len)) continue;
    json_error_t je;
    json_t *obj = json_loadb(s, len, 0, &je);
    if (!obj) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, je.column, "invalid JSON: %s", je.text);
      break;
    }
    json_array_append_new(out->lines, obj);
    if (!json_is_object(obj)) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected a JSON object");
      break;
    }
    json_t *prompt = json_object_get(obj, "prompt"), *msgs = json_object_get(obj, "messages");
    if (!prompt == !msgs) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "expected one of the fields 'prompt' (a string) or 'messages' (a chat "
                       "array), got %s", prompt ? "both" : "neither");
      break;
    }
    if (prompt && !json_is_string(prompt)) {
      st = field_err(err, path, line, "prompt", "a string");
      break;
    }
    if (msgs && !json_is_array(msgs)) {
      st = field_err(err, path, line, "messages", "an array of chat messages");
      break;
    }
    if (out->n && out->chat != !!msgs) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "field '%s': the items before it have '%s': one dataset sends either "
                       "prompts or chat messages", msgs ? "messages" : "prompt",
                       msgs ? "prompt" : "messages");
      break;
    }
    out->chat = !!msgs;
    if (out->n == cap) {
      cap = cap ? cap * 2 : 256;
      out->v = cb_reallocarray(out->v, cap, sizeof *out->v);
    }
    cb__eval_item *item = &out->v[out->n++];
    memset(item, 0, sizeof *item);
    item->line = line;
    item->obj = obj;
    st = item_id(item, json_object_get(obj, "id"), out->n, path, err);
    json_t *human = json_object_get(obj, "human");
    item->human = NAN;
    if (!st && human && !json_is_null(human)) {
      if (json_is_number(human) && isfinite(json_number_value(human)))
        item->human = json_number_value(human);
      else
        st = field_err(err, path, line, "human", "a number (a person's score of the answer)");
    }
    json_t *ref = json_object_get(obj, "reference");
    if (!st && ref) {
      st = item_refs(item, ref, path, err);
      with_refs++;
    } else if (!st && !first_without) {
      first_without = line;
    }
  }
  cb_buf_free(&buf);
  if (!st && !out->n)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no items: the file has no JSON lines");
  if (!st && with_refs && first_without) need_refs = 1; /* some have: all must */
  if (!st && need_refs && first_without)
    st = field_err(err, path, first_without, "reference", "a string or a non-empty list of strings");
  out->has_refs = with_refs > 0;
  if (st) cb__eval_items_free(out);
  return st;
}

static int item_line_cmp(const void *key, const void *elem) {
  long line = *(const long *)key, l = ((const cb__eval_item *)elem)->line;
  return (line > l) - (line < l);
}

const cb__eval_item *cb__eval_items_at_line(const cb__eval_items *it, long line) {
  if (!it->n) return NULL; /* v may be NULL, which bsearch must not be given */
  return bsearch(&line, it->v, it->n, sizeof *it->v, item_line_cmp);
}

const char *cb__eval_item_prompt(const cb__eval_item *item) {
  json_t *p = json_object_get(item->obj, "prompt");
  if (json_is_string(p)) return json_string_value(p);
  json_t *msgs = json_object_get(item->obj, "messages");
  for (size_t i = json_array_size(msgs); i-- > 0;) {
    json_t *m = json_array_get(msgs, i);
    const char *role = json_string_value(json_object_get(m, "role"));
    json_t *content = json_object_get(m, "content");
    if (role && !strcmp(role, "user") && json_is_string(content)) return json_string_value(content);
  }
  return "";
}

cb_status cb_eval_dataset_spec(const char *file, char *spec, size_t n, size_t *items,
                               cb_error *err) {
  const char *path = file;
  if (!strncmp(file, "jsonl:", 6) || !strncmp(file, "chat:", 5)) path = strchr(file, ':') + 1;
  cb__eval_items it;
  cb_status st = cb__eval_items_load(path, 1, &it, err);
  if (st) return st;
  if (path != file && it.chat != !strncmp(file, "chat:", 5))
    st = cb_error_at(err, CB_ERR_PARSE, path, it.v[0].line, 0,
                     "field '%s': a %s dataset has '%s' on every line", it.chat ? "messages" : "prompt",
                     it.chat ? "jsonl:" : "chat:", it.chat ? "prompt" : "messages");
  else if ((size_t)snprintf(spec, n, "%s:%s", it.chat ? "chat" : "jsonl", path) >= n)
    st = cb_error_set(err, CB_ERR_RANGE, "--dataset: the path is longer than %zu bytes", n - 8);
  *items = it.n;
  cb__eval_items_free(&it);
  return st;
}
