/*
 * ds_jsonl.c - the two one-object-per-line dataset formats.
 *
 *   jsonl: {"prompt": "...", "output_len": 128}   (field names configurable; the output
 *          length may be absent, or given as "max_tokens"; "images": image files sent
 *          with the prompt, ds_images.c)
 *   chat:  {"messages": [{"role": "user", "content": "..."}, ...], "max_tokens": 128}
 *          (OpenAI chat; "max_completion_tokens" is accepted too; content may be a
 *          string, an array of parts, or null for an assistant turn with tool calls)
 *
 * Blank lines are skipped, CRLF line ends accepted. Any other line that is not what
 * is expected stops the load with "FILE:LINE[:COL]: field 'x': expected ..., got ...".
 * Chat messages are kept as compact JSON (key order preserved) and sent as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "util/json_type.h"
#include "workload_internal.h"

int cb__next_line(const char *data, size_t len, size_t *pos, const char **line,
                  size_t *line_len) {
  if (*pos >= len) return 0;
  const char *s = data + *pos;
  const char *nl = memchr(s, '\n', len - *pos);
  size_t n = nl ? (size_t)(nl - s) : len - *pos;
  *pos += n + (nl ? 1 : 0);
  if (n > 0 && s[n - 1] == '\r') n--;
  *line = s;
  *line_len = n;
  return 1;
}

int cb__is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
  return 1;
}

void cb__json_brief(const json_t *v, char *buf, size_t size) {
  char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
  if (!s) {
    snprintf(buf, size, "%s", v ? "?" : "nothing");
    return;
  }
  if (strlen(s) >= size && size > 4)
    snprintf(buf, size, "%.*s...", (int)(size - 4), s);
  else
    snprintf(buf, size, "%s", s);
  free(s);
}

/* Parse one line as a JSON object, or say why not. */
static cb_status line_object(const cb_dataset *ds, const char *line, size_t n, uint32_t lineno,
                             json_t **out, cb_error *err) {
  json_error_t je;
  json_t *o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
  if (!o)
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, je.column > 0 ? je.column : 0,
                       "invalid JSON: %s", je.text);
  if (!json_is_object(o)) {
    cb_status st = cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                               "expected a JSON object per line, got %s", cb__json_type_name(o));
    json_decref(o);
    return st;
  }
  *out = o;
  return CB_OK;
}

cb_status cb__each_object_line(cb_dataset *ds, const char *data, size_t len,
                               cb__object_line_fn on_object, cb_error *err) {
  size_t pos = 0;
  const char *line;
  size_t n;
  uint32_t lineno = 0;
  while (cb__next_line(data, len, &pos, &line, &n)) {
    lineno++;
    if (cb__is_blank(line, n)) continue;
    json_t *o;
    cb_status st = line_object(ds, line, n, lineno, &o, err);
    if (st != CB_OK) return st;
    st = on_object(ds, o, lineno, err);
    json_decref(o);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

cb_status cb__json_tokens(const char *path, const json_t *v, const char *key, int64_t lo,
                         const char *expected, uint32_t lineno, int64_t *out, cb_error *err) {
  if (!cb__json_whole(v, lo, UINT32_MAX, out)) {
    char got[48];
    cb__json_brief(v, got, sizeof got);
    return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0, "field '%s': expected %s, got %s",
                       key, expected, got);
  }
  if (*out > CB_LIMIT_TOKENS)
    return cb_error_at(err, CB_ERR_RANGE, path, lineno, 0,
                       "field '%s': %lld tokens is over the limit of %u (docs/limits.md)", key,
                       (long long)*out, CB_LIMIT_TOKENS);
  return CB_OK;
}

/* An optional positive whole-number field: 0 when absent or null. */
static cb_status opt_len(const char *path, json_t *o, const char *key, uint32_t lineno,
                         uint32_t *out, cb_error *err) {
  json_t *v = json_object_get(o, key);
  *out = 0;
  if (!v || json_is_null(v)) return CB_OK;
  int64_t x;
  cb_status st = cb__json_tokens(path, v, key, 1, "a whole number >= 1", lineno, &x, err);
  if (st == CB_OK) *out = (uint32_t)x;
  return st;
}

static cb_status count_len(const cb_dataset *ds, const char *text, size_t n, uint32_t lineno,
                           const char *field, uint32_t *out, cb_error *err) {
  size_t c = cb__count(&ds->tm.counter, text, n);
  if (c > CB_LIMIT_TOKENS)
    return cb_error_at(err, CB_ERR_RANGE, ds->path, lineno, 0,
                       "field '%s': %zu tokens is over the limit of %u (docs/limits.md)", field,
                       c, CB_LIMIT_TOKENS);
  *out = (uint32_t)c;
  return CB_OK;
}

/* One prompt line: {"<prompt_field>": "...", "output_len" / "max_tokens": n, ...}. */
static cb_status prompt_item(cb_dataset *ds, json_t *o, uint32_t lineno, cb_error *err) {
  const char *pf = ds->prompt_field;
  json_t *prompt = json_object_get(o, pf);
  if (!json_is_string(prompt) || json_string_length(prompt) == 0)
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                       "field '%s': expected a non-empty string (the prompt), got %s", pf,
                       json_is_string(prompt) ? "an empty string" : cb__json_type_name(prompt));
  uint32_t out_len = 0;
  cb_status st;
  if (ds->output_field) {
    st = opt_len(ds->path, o, ds->output_field, lineno, &out_len, err);
  } else {
    st = opt_len(ds->path, o, "output_len", lineno, &out_len, err);
    if (st == CB_OK && out_len == 0) st = opt_len(ds->path, o, "max_tokens", lineno, &out_len, err);
  }
  uint32_t in_len = 0;
  const char *text = json_string_value(prompt);
  size_t tlen = json_string_length(prompt);
  if (st == CB_OK) st = count_len(ds, text, tlen, lineno, pf, &in_len, err);
  uint64_t images = 0;
  json_t *files = json_object_get(o, "images");
  if (st == CB_OK && files && !json_is_null(files))
    st = cb__dataset_images(ds, files, lineno, &images, err);
  if (st != CB_OK) return st;
  cb__item *it = cb__dataset_push_item(ds);
  it->images = images;
  it->text_off = cb__dataset_push_text(ds, text, tlen);
  it->text_len = (uint32_t)tlen;
  it->input_len = in_len;
  it->output_len = ds->params.output_len_override ? ds->params.output_len_override : out_len;
  it->line = lineno;
  return CB_OK;
}

cb_status cb__load_jsonl(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  return cb__each_object_line(ds, data, len, prompt_item, err);
}

/* Sum of the token counts of a message's text content (string, or parts with "text"). */
size_t cb__chat_content_tokens(const cb_token_counter *counter, const json_t *content) {
  if (json_is_string(content))
    return cb__count(counter, json_string_value(content), json_string_length(content));
  size_t total = 0, i;
  json_t *part;
  if (json_is_array(content)) json_array_foreach((json_t *)content, i, part) {
      json_t *t = json_object_get(part, "text");
      if (json_is_string(t))
        total += cb__count(counter, json_string_value(t), json_string_length(t));
    }
  return total;
}

cb_status cb__chat_check_messages(const char *path, const json_t *msgs, uint32_t lineno,
                                  cb_error *err) {
  if (!json_is_array(msgs) || json_array_size(msgs) == 0)
    return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                       "field 'messages': expected a non-empty array of {role, content}, got %s",
                       json_is_array(msgs) ? "an empty array" : cb__json_type_name(msgs));
  size_t i;
  json_t *m;
  json_array_foreach((json_t *)msgs, i, m) {
    if (!json_is_object(m))
      return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                         "field 'messages[%zu]': expected an object {role, content}, got %s", i,
                         cb__json_type_name(m));
    json_t *role = json_object_get(m, "role");
    if (!json_is_string(role) || json_string_length(role) == 0)
      return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                         "field 'messages[%zu].role': expected a non-empty string, got %s", i,
                         cb__json_type_name(role));
    json_t *content = json_object_get(m, "content");
    int ok = json_is_string(content) || json_is_array(content) ||
             (json_is_null(content) && json_object_get(m, "tool_calls"));
    if (!ok)
      return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                         "field 'messages[%zu].content': expected a string or an array of "
                         "parts, got %s",
                         i, cb__json_type_name(content));
  }
  return CB_OK;
}

cb_status cb__chat_max_tokens(const char *path, json_t *o, uint32_t lineno, uint32_t *out,
                              cb_error *err) {
  cb_status st = opt_len(path, o, "max_tokens", lineno, out, err);
  if (st == CB_OK && *out == 0) st = opt_len(path, o, "max_completion_tokens", lineno, out, err);
  return st;
}

/* One chat line: {"messages": [...], "max_tokens" / "max_completion_tokens": n}. */
static cb_status chat_item(cb_dataset *ds, json_t *o, uint32_t lineno, cb_error *err) {
  json_t *msgs = json_object_get(o, "messages");
  cb_status st = cb__chat_check_messages(ds->path, msgs, lineno, err);
  uint32_t out_len = 0;
  if (st == CB_OK) st = cb__chat_max_tokens(ds->path, o, lineno, &out_len, err);
  if (st == CB_OK) {
    size_t tokens = 0, i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
      tokens += cb__chat_content_tokens(&ds->tm.counter, json_object_get(m, "content"));
    }
    char *text = json_dumps(msgs, JSON_COMPACT);
    if (!text || tokens > CB_LIMIT_TOKENS) {
      st = cb_error_at(err, text ? CB_ERR_RANGE : CB_ERR_NOMEM, ds->path, lineno, 0,
                       "field 'messages': %s", text ? "over the limit of " CB_LIMIT_TOKENS_TEXT
                                                      " tokens (docs/limits.md)"
                                                    : "cannot serialise");
    } else {
      size_t tlen = strlen(text);
      cb__item *it = cb__dataset_push_item(ds);
      it->text_off = cb__dataset_push_text(ds, text, tlen);
      it->text_len = (uint32_t)tlen;
      it->is_messages = 1;
      it->input_len = (uint32_t)tokens;
      it->output_len = ds->params.output_len_override ? ds->params.output_len_override : out_len;
      it->line = lineno;
    }
    free(text);
  }
  return st;
}

cb_status cb__load_chat(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  return cb__each_object_line(ds, data, len, chat_item, err);
}
