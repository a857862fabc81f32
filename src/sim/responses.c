/*
 * responses.c - load scripted answers and look them up by prompt (open addressing
 * on the FNV-1a hash of the prompt, table at most half full).
 */
#include "sim/responses.h"

#include <jansson.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/limits.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "calibench/tok.h"

struct cb__sim_responses {
  cb__sim_response *items;
  size_t count;
  size_t *slots; /* index+1 into items; 0 = empty */
  size_t nslots; /* power of two */
};

static size_t *find_slot(const cb__sim_responses *r, const char *prompt, size_t len) {
  size_t mask = r->nslots - 1;
  for (size_t i = cb_fnv1a64(prompt, len) & mask;; i = (i + 1) & mask) {
    size_t *slot = &r->slots[i];
    if (!*slot) return slot;
    const cb__sim_response *it = &r->items[*slot - 1];
    if (it->prompt_len == len && !memcmp(it->prompt, prompt, len)) return slot;
  }
}

static void set_text(cb__sim_response *out, const char *text, size_t len, uint32_t vocab) {
  out->text_len = len;
  out->text = cb_strndup(text, len);
  out->num_tokens = cb_tok_approx_split(out->text, out->text_len, vocab, NULL, NULL, 0);
  out->ids = cb_reallocarray(NULL, out->num_tokens, sizeof *out->ids);
  out->ends = cb_reallocarray(NULL, out->num_tokens, sizeof *out->ends);
  cb_tok_approx_split(out->text, out->text_len, vocab, out->ids, out->ends, out->num_tokens);
}

static cb_status parse_line(const char *path, long lineno, const char *line, size_t len,
                            uint32_t vocab, cb__sim_response *out, cb_error *err) {
  json_error_t jerr;
  json_t *root = json_loadb(line, len, 0, &jerr);
  if (!root)
    return cb_error_at(err, CB_ERR_PARSE, path, lineno, jerr.column, "not valid JSON: %s",
                       jerr.text);
  cb_status st = CB_OK;
  json_t *prompt = json_object_get(root, "prompt");
  json_t *response = json_object_get(root, "response");
  if (!json_is_object(root)) {
    st = cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                     "expected an object {\"prompt\": ..., \"response\": ...}");
  } else if (!json_is_string(prompt)) {
    st = cb_error_at(err, CB_ERR_PARSE, path, lineno, 0, "field 'prompt': expected a string");
  } else if (!json_is_string(response) || json_string_length(response) == 0) {
    st = cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                     "field 'response': expected a non-empty string");
  } else {
    out->prompt_len = json_string_length(prompt);
    out->prompt = cb_strndup(json_string_value(prompt), out->prompt_len);
    set_text(out, json_string_value(response), json_string_length(response), vocab);
  }
  json_decref(root);
  return st;
}

static void free_item(cb__sim_response *it) {
  cb_free(it->prompt);
  cb_free(it->text);
  cb_free(it->ids);
  cb_free(it->ends);
}

cb__sim_response *cb__sim_response_new(const char *text, size_t len, uint32_t vocab) {
  cb__sim_response *r = cb_calloc(1, sizeof *r);
  set_text(r, text, len, vocab);
  return r;
}

void cb__sim_response_free(cb__sim_response *r) {
  if (!r) return;
  free_item(r);
  cb_free(r);
}

void cb__sim_responses_free(cb__sim_responses *r) {
  if (!r) return;
  for (size_t i = 0; i < r->count; i++) free_item(&r->items[i]);
  cb_free(r->items);
  cb_free(r->slots);
  cb_free(r);
}

cb_status cb__sim_responses_load(const char *path, uint32_t vocab, cb__sim_responses **out,
                                 cb_error *err) {
  *out = NULL;
  cb_buf file;
  cb_buf_init(&file, 0);
  cb_status st = cb_file_read(path, CB_LIMIT_RESPONSES_BYTES, &file, err);
  if (st != CB_OK) return st; /* cb_file_read keeps nothing of a file that failed */
  size_t lines = 1;
  for (size_t i = 0; i < file.len; i++) lines += file.data[i] == '\n';
  cb__sim_responses *r = cb_calloc(1, sizeof *r);
  r->items = cb_calloc(lines, sizeof *r->items);
  r->nslots = 16;
  while (r->nslots < 2 * lines) r->nslots *= 2;
  r->slots = cb_calloc(r->nslots, sizeof *r->slots);
  long lineno = 0;
  for (char *p = file.data, *end = file.data + file.len; p < end && st == CB_OK;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    lineno++;
    if (len && p[len - 1] == '\r') len--;
    size_t blank = 0;
    while (blank < len && (p[blank] == ' ' || p[blank] == '\t')) blank++;
    if (blank < len) {
      cb__sim_response *it = &r->items[r->count];
      st = parse_line(path, lineno, p, len, vocab, it, err);
      if (st == CB_OK) {
        size_t *slot = find_slot(r, it->prompt, it->prompt_len);
        if (*slot) {
          st = cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                           "duplicate prompt (already given on an earlier line)");
          free_item(it);
        } else {
          *slot = ++r->count;
        }
      }
    }
    p = nl ? nl + 1 : end;
  }
  cb_buf_free(&file);
  if (st == CB_OK && r->count == 0)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no responses in the file");
  if (st != CB_OK) {
    cb__sim_responses_free(r);
    return st;
  }
  *out = r;
  return CB_OK;
}

const cb__sim_response *cb__sim_responses_find(const cb__sim_responses *r, const char *prompt,
                                               size_t len) {
  if (!r || !prompt) return NULL;
  size_t *slot = find_slot(r, prompt, len);
  return *slot ? &r->items[*slot - 1] : NULL;
}

size_t cb__sim_responses_count(const cb__sim_responses *r) { return r ? r->count : 0; }
