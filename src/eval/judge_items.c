/*
 * judge_items.c - the items a judge grades: a JSONL of single answers
 * {"prompt", "answer"} or of pairs {"prompt", "answer_a", "answer_b"}, each with an
 * optional "id", "reference" and "human" score (docs/eval-judge.md, "Input").
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/eval_judge.h"
#include "calibench/limits.h"

static cb_status field_error(cb_error *err, const char *path, long line, const char *field,
                             const char *expected) {
  return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "field '%s': expected %s", field, expected);
}

/* A string field; NULL when absent and !required. */
static cb_status get_text(json_t *o, const char *name, int required, const char *path, long line,
                          const char **out, cb_error *err) {
  json_t *v = json_object_get(o, name);
  *out = NULL;
  if (!v && !required) return CB_OK;
  if (!json_is_string(v)) return field_error(err, path, line, name, "a string");
  *out = json_string_value(v);
  return CB_OK;
}

static cb_status get_human(json_t *o, int pair, const char *path, long line, double *out,
                           cb_error *err) {
  json_t *v = json_object_get(o, "human");
  *out = NAN;
  if (!v || json_is_null(v)) return CB_OK;
  if (!pair) {
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
      return field_error(err, path, line, "human", "a number (a person's score)");
    *out = json_number_value(v);
    return CB_OK;
  }
  const char *s = json_is_string(v) ? json_string_value(v) : "";
  if (!strcmp(s, "A")) *out = 1;
  else if (!strcmp(s, "B")) *out = -1;
  else if (!strcmp(s, "C") || !strcmp(s, "tie")) *out = 0;
  else return field_error(err, path, line, "human", "\"A\", \"B\", \"C\" or \"tie\" (a person's verdict)");
  return CB_OK;
}

static cb_status parse_line(json_t *o, const char *path, long line, int *pair, cb_judge_item *it,
                            cb_error *err) {
  if (!json_is_object(o))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "expected an object with prompt and answer (or answer_a and answer_b)");
  int is_pair = json_object_get(o, "answer_a") || json_object_get(o, "answer_b");
  if (is_pair && json_object_get(o, "answer"))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "both 'answer' and 'answer_a'/'answer_b': one answer or a pair, not both");
  if (*pair < 0) *pair = is_pair;
  else if (*pair != is_pair)
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "a %s among %s: every line the same kind",
                       is_pair ? "pair (answer_a, answer_b)" : "single answer",
                       *pair ? "pairs" : "single answers");
  cb_status st = get_text(o, "prompt", 1, path, line, &it->prompt, err);
  if (st == CB_OK && is_pair) st = get_text(o, "answer_a", 1, path, line, &it->answer_a, err);
  if (st == CB_OK && is_pair) st = get_text(o, "answer_b", 1, path, line, &it->answer_b, err);
  if (st == CB_OK && !is_pair) st = get_text(o, "answer", 1, path, line, &it->answer, err);
  if (st == CB_OK) st = get_text(o, "reference", 0, path, line, &it->reference, err);
  if (st == CB_OK) st = get_text(o, "id", 0, path, line, &it->id, err);
  if (st == CB_OK) st = get_human(o, is_pair, path, line, &it->human, err);
  return st;
}

cb_status cb_judge_items_load(const char *path, cb_judge_items *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  cb_buf file;
  cb_buf_init(&file, 0);
  cb_status st = cb_file_read(path, CB_LIMIT_DATASET_BYTES, &file, err);
  if (st != CB_OK) {
    cb_buf_free(&file);
    return st;
  }
  json_t *all = json_array();
  size_t cap = 0;
  int pair = -1;
  long line = 0;
  for (char *p = file.data, *end = file.data + file.len; st == CB_OK && p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    line++;
    size_t a = 0;
    while (a < len && (p[a] == ' ' || p[a] == '\t' || p[a] == '\r')) a++;
    if (a < len) {
      json_error_t je;
      json_t *o = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
      if (!o) {
        st = cb_error_at(err, CB_ERR_PARSE, path, line, je.column, "invalid JSON: %s", je.text);
        break;
      }
      json_array_append_new(all, o);
      if (out->n == cap) {
        cap = cap ? 2 * cap : 64;
        out->v = cb_reallocarray(out->v, cap, sizeof *out->v);
      }
      cb_judge_item *it = &out->v[out->n];
      memset(it, 0, sizeof *it);
      st = parse_line(o, path, line, &pair, it, err);
      out->n++;
    }
    p = nl ? nl + 1 : end;
  }
  cb_buf_free(&file);
  out->json = all;
  out->pair = pair == 1;
  if (st == CB_OK && out->n == 0) st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no items");
  if (st != CB_OK) cb_judge_items_free(out);
  return st;
}

void cb_judge_items_free(cb_judge_items *items) {
  json_decref((json_t *)items->json);
  cb_free(items->v);
  memset(items, 0, sizeof *items);
}
