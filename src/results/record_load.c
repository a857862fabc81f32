/*
 * record_load.c - read records.jsonl back into records. Strict about what is there
 * (a wrong type names the line and field) and tolerant of one thing: a torn last
 * line, which an interrupted writer can leave, is counted and skipped.
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "calibench/results.h"


typedef struct ctx {
  const char *path;
  long line;
  cb_error *err;
} ctx;

static cb_status bad(const ctx *c, const char *field, const char *what) {
  return cb_error_at(c->err, CB_ERR_PARSE, c->path, c->line, 0, "field '%s': expected %s", field,
                     what);
}

static cb_status get_u64(const ctx *c, json_t *o, const char *key, uint64_t *out) {
  json_t *v = json_object_get(o, key);
  if (!v) return CB_OK;
  if (!json_is_integer(v) || json_integer_value(v) < 0) return bad(c, key, "a non-negative integer");
  *out = (uint64_t)json_integer_value(v);
  return CB_OK;
}

static cb_status get_i64(const ctx *c, json_t *o, const char *key, int64_t *out) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return CB_OK;
  if (!json_is_integer(v)) return bad(c, key, "an integer or null");
  *out = json_integer_value(v);
  return CB_OK;
}

static cb_status get_str(const ctx *c, json_t *o, const char *key, char *out, size_t n) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return CB_OK;
  if (!json_is_string(v)) return bad(c, key, "a string");
  snprintf(out, n, "%s", json_string_value(v));
  return CB_OK;
}

static cb_status get_source(const ctx *c, json_t *o, const char *key, cb_token_source *out) {
  char name[32] = "";
  cb_status st = get_str(c, o, key, name, sizeof name);
  if (st != CB_OK || !name[0]) return st;
  for (int s = CB_TOKENS_UNKNOWN; s <= CB_TOKENS_DATASET; s++)
    if (!strcmp(name, cb_token_source_name((cb_token_source)s))) {
      *out = (cb_token_source)s;
      return CB_OK;
    }
  return bad(c, key, "unknown, usage, tokenizer, chunks or dataset");
}

static cb_status parse_record(const ctx *c, json_t *o, cb_record *r) {
  cb_status st = CB_OK;
  if (!json_is_object(o)) return cb_error_at(c->err, CB_ERR_PARSE, c->path, c->line, 0, "expected a JSON object");
  if (!json_object_get(o, "index") || !json_object_get(o, "sent_ns"))
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, c->line, 0,
                       "not a calibench record (no 'index' or 'sent_ns')");
  json_t *w = json_object_get(o, "warmup");
  r->warmup = json_is_true(w);
  static const struct {
    const char *key;
    size_t off;
  } u64s[] = {
      {"index", offsetof(cb_record, index)},
      {"scheduled_ns", offsetof(cb_record, scheduled_ns)},
      {"sent_ns", offsetof(cb_record, sent_ns)},
      {"first_byte_ns", offsetof(cb_record, first_byte_ns)},
      {"first_chunk_ns", offsetof(cb_record, first_chunk_ns)},
      {"first_choices_ns", offsetof(cb_record, first_choices_ns)},
      {"first_content_ns", offsetof(cb_record, first_content_ns)},
      {"last_content_ns", offsetof(cb_record, last_content_ns)},
      {"end_ns", offsetof(cb_record, end_ns)},
  };
  for (size_t i = 0; i < sizeof u64s / sizeof u64s[0] && st == CB_OK; i++)
    st = get_u64(c, o, u64s[i].key, (uint64_t *)((char *)r + u64s[i].off));
  if (st == CB_OK) st = get_str(c, o, "request_id", r->request_id, sizeof r->request_id);
  if (st == CB_OK) st = get_str(c, o, "server_request_id", r->server_request_id, sizeof r->server_request_id);
  if (st == CB_OK) st = get_str(c, o, "class", r->class_name, sizeof r->class_name);
  if (st == CB_OK) st = get_i64(c, o, "prompt_tokens", &r->prompt_tokens);
  if (st == CB_OK) st = get_i64(c, o, "output_tokens", &r->output_tokens);
  if (st == CB_OK) st = get_i64(c, o, "cached_tokens", &r->cached_tokens);
  if (st == CB_OK) st = get_source(c, o, "prompt_source", &r->prompt_source);
  if (st == CB_OK) st = get_source(c, o, "output_source", &r->output_source);
  if (st == CB_OK) st = get_str(c, o, "finish_reason", r->finish_reason, sizeof r->finish_reason);
  int64_t x = 0;
  if (st == CB_OK && (st = get_i64(c, o, "http_status", &x)) == CB_OK) r->http_status = (int)x;
  x = 0;
  if (st == CB_OK && (st = get_i64(c, o, "retries", &x)) == CB_OK) r->retries = (int)x;
  if (st == CB_OK) st = get_u64(c, o, "chunk_ns_dropped", &r->chunks_dropped);
  if (st == CB_OK) st = get_u64(c, o, "image_bytes", &r->image_bytes);
  if (st == CB_OK) st = get_i64(c, o, "image_tokens", &r->image_tokens);
  if (st != CB_OK) return st;
  json_t *rate = json_object_get(o, "target_rate");
  if (rate && !json_is_null(rate)) {
    double v = json_number_value(rate);
    if (!json_is_number(rate) || !(v >= 0) || !isfinite(v))
      return bad(c, "target_rate", "a number of requests per second >= 0");
    r->target_rate = v;
    r->has_target_rate = 1;
  }
  if (json_object_get(o, "session")) { /* a live session's turn: both or neither */
    uint64_t turn = UINT32_MAX + UINT64_C(1);
    if ((st = get_u64(c, o, "session", &r->session)) != CB_OK) return st;
    if ((st = get_u64(c, o, "turn", &turn)) != CB_OK) return st;
    if (turn > UINT32_MAX) return bad(c, "turn", "the turn's index in its session (with session)");
    r->turn = (uint32_t)turn;
    r->has_session = 1;
  }

  json_t *e = json_object_get(o, "error");
  if (e && !json_is_null(e)) {
    if (!json_is_object(e) || !json_is_string(json_object_get(e, "class")))
      return bad(c, "error", "null or {\"class\": ..., \"message\": ...}");
    snprintf(r->error_class, sizeof r->error_class, "%s", json_string_value(json_object_get(e, "class")));
    if ((st = get_str(c, e, "message", r->error_message, sizeof r->error_message)) != CB_OK) return st;
  }
  json_t *chunks = json_object_get(o, "chunk_ns");
  json_t *tokens = json_object_get(o, "chunk_tokens");
  if (chunks && !json_is_array(chunks)) return bad(c, "chunk_ns", "an array");
  if (tokens && (!json_is_array(tokens) || json_array_size(tokens) != json_array_size(chunks)))
    return bad(c, "chunk_tokens", "an array as long as chunk_ns");
  r->n_chunks = json_array_size(chunks);
  if (r->n_chunks) {
    r->chunk_ns = cb_reallocarray(NULL, r->n_chunks, sizeof *r->chunk_ns);
    /* no chunk_tokens in the file: one token per chunk, kept as NULL */
    if (tokens) r->chunk_tokens = cb_reallocarray(NULL, r->n_chunks, sizeof *r->chunk_tokens);
    for (size_t i = 0; i < r->n_chunks; i++) {
      json_t *v = json_array_get(chunks, i);
      json_t *t = tokens ? json_array_get(tokens, i) : NULL;
      if (!json_is_integer(v) || json_integer_value(v) < 0) return bad(c, "chunk_ns", "non-negative integers");
      if (t && (!json_is_integer(t) || json_integer_value(t) < 0)) return bad(c, "chunk_tokens", "non-negative integers");
      r->chunk_ns[i] = r->sent_ns + (uint64_t)json_integer_value(v);
      if (t) r->chunk_tokens[i] = (uint32_t)json_integer_value(t);
    }
  }
  json_t *att = json_object_get(o, "attempts");
  if (att && !json_is_array(att)) return bad(c, "attempts", "an array");
  r->n_attempts = json_array_size(att);
  if (r->n_attempts) {
    r->attempts = cb_reallocarray(NULL, r->n_attempts, sizeof *r->attempts);
    for (size_t i = 0; i < r->n_attempts; i++) {
      json_t *a = json_array_get(att, i);
      json_t *hs = json_object_get(a, "http_status"), *wait = json_object_get(a, "wait_ms");
      if (!json_is_object(a) || !json_is_integer(hs) || !json_is_number(wait) ||
          json_number_value(wait) < 0 || !json_is_string(json_object_get(a, "error")))
        return bad(c, "attempts", "{\"http_status\": N, \"error\": CLASS, \"wait_ms\": MS >= 0} items");
      r->attempts[i] = (cb_record_attempt){.http_status = (int)json_integer_value(hs),
                                           .wait_ns = (uint64_t)(json_number_value(wait) * 1e6 + 0.5)};
      snprintf(r->attempts[i].error_class, sizeof r->attempts[i].error_class, "%s",
               json_string_value(json_object_get(a, "error")));
    }
  }
  json_t *text = json_object_get(o, "output_text");
  if (json_is_string(text)) r->output_text = cb_strndup(json_string_value(text), json_string_length(text));
  r->output_text_cut = json_is_true(json_object_get(o, "output_text_cut"));
  json_t *calls = json_object_get(o, "tool_calls");
  if (json_is_array(calls)) {
    char *dumped = json_dumps(calls, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (dumped) r->tool_calls = cb_strdup(dumped);
    free(dumped); /* jansson's allocator */
  }
  return CB_OK;
}

typedef struct id_line {
  const char *id;
  long line;
} id_line;

static int by_id(const void *a, const void *b) {
  const id_line *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* request_ids (the non-empty ones) distinct, checked by sorting: O(n log n). */
static cb_status unique_ids(const cb_record_set *s, const long *lines, const char *path,
                            cb_error *err) {
  id_line *ids = cb_malloc((s->count ? s->count : 1) * sizeof *ids);
  size_t n = 0;
  for (size_t i = 0; i < s->count; i++)
    if (s->items[i].request_id[0]) ids[n++] = (id_line){s->items[i].request_id, lines[i]};
  qsort(ids, n, sizeof *ids, by_id);
  long dup = 0, first = 0;
  const char *which = NULL;
  for (size_t i = 1; i < n; i++)
    if (!strcmp(ids[i - 1].id, ids[i].id) && (!dup || ids[i].line < dup)) {
      dup = ids[i].line;
      first = ids[i - 1].line;
      which = ids[i].id;
    }
  cb_status st = CB_OK;
  if (dup)
    st = cb_error_at(err, CB_ERR_PARSE, path, dup, 0,
                     "request_id '%s' repeats line %ld: a record counted twice (docs/results.md)",
                     which, first);
  cb_free(ids);
  return st;
}

cb_status cb_record_set_load(cb_record_set *s, const char *path, size_t *torn_lines,
                             cb_error *err) {
  cb_buf file;
  cb_buf_init(&file, 0);
  *torn_lines = 0;
  cb_status st = cb_file_read_lines(path, CB_LIMIT_RECORDS_BYTES, CB_LIMIT_LINE_BYTES, &file, err);
  ctx c = {.path = path, .err = err};
  size_t first = s->count, alloc = 0;
  long *lines = NULL; /* the line of each record read here */
  char *end = file.data ? file.data + file.len : NULL; /* no data when the read failed */
  for (char *p = file.data; st == CB_OK && p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    c.line++;
    if (len > 0) {
      json_error_t je;
      json_t *o = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
      if (!o) {
        if (!nl) {
          (*torn_lines)++; /* the writer stopped mid-line */
        } else {
          st = cb_error_at(err, CB_ERR_PARSE, path, c.line, je.column, "not valid JSON: %s", je.text);
        }
      } else {
        cb_record r;
        cb_record_init(&r);
        st = parse_record(&c, o, &r);
        json_decref(o);
        if (st == CB_OK) {
          cb_record_set_push(s, &r);
          if (s->count - first > alloc) {
            alloc = alloc ? 2 * alloc : 256;
            lines = cb_reallocarray(lines, alloc, sizeof *lines);
          }
          lines[s->count - first - 1] = c.line;
        } else {
          cb_record_free(&r);
        }
      }
    }
    p = nl ? nl + 1 : end;
  }
  if (st == CB_OK && s->count > first) {
    cb_record_set part = {.items = s->items + first, .count = s->count - first};
    st = unique_ids(&part, lines, path, err);
  }
  cb_free(lines);
  cb_buf_free(&file);
  return st;
}

long cb_record_file_torn_line(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char chunk[65536];
  size_t n;
  long line = 1;
  char last = '\n';
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    for (const char *p = chunk; (p = memchr(p, '\n', (size_t)(chunk + n - p))); p++) line++;
    last = chunk[n - 1];
  }
  int failed = ferror(f);
  fclose(f);
  return !failed && last != '\n' ? line : 0;
}
