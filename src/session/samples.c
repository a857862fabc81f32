/*
 * samples.c - samples.json (session_internal.h).
 */
#include "session_internal.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"

static int entry_cmp(const void *key, const void *elem) {
  uint64_t index = *(const uint64_t *)key, e = ((const cb_schedule_entry *)elem)->index;
  return (index > e) - (index < e);
}

/* The schedule entry with this index (entries are in index order, one an index), or NULL. */
static const cb_schedule_entry *entry_of(const cb_schedule *s, uint64_t index) {
  if (!s->count) return NULL; /* entries may be NULL, which bsearch must not be given */
  return bsearch(&index, s->entries, s->count, sizeof *s->entries, entry_cmp);
}

/* Chat messages as a reader sees them: "role: content" paragraphs (text parts only). */
static void messages_text(const cb_buf *messages, cb_buf *out) {
  json_t *a = json_loadb(messages->data, messages->len, 0, NULL);
  size_t i;
  json_t *m;
  json_array_foreach(a, i, m) {
    const char *role = json_string_value(json_object_get(m, "role"));
    json_t *c = json_object_get(m, "content");
    if (i) cb_buf_append(out, "\n\n", 2);
    cb_buf_appendf(out, "%s: ", role ? role : "?");
    if (json_is_string(c)) {
      cb_buf_append(out, json_string_value(c), json_string_length(c));
    } else {
      size_t k;
      json_t *part;
      json_array_foreach(c, k, part) {
        json_t *t = json_object_get(part, "text");
        if (json_is_string(t)) cb_buf_append(out, json_string_value(t), json_string_length(t));
      }
    }
  }
  json_decref(a);
}

static cb_status add_sample(const cb_workload *wl, const cb_schedule *schedule, const cb_record *rec,
                            cb_workload_prompt *prompt, json_t *list, cb_error *err) {
  const cb_schedule_entry *e = entry_of(schedule, rec->index);
  if (!e) return CB_OK; /* not this point's (cannot happen for records it ran) */
  cb_status st = cb_workload_render(wl, e, prompt, err);
  if (st != CB_OK) return st;
  cb_buf text;
  cb_buf_init(&text, 0);
  if (prompt->messages.len) messages_text(&prompt->messages, &text);
  else if (prompt->text.len) cb_buf_append(&text, prompt->text.data, prompt->text.len);
  size_t keep = cb_utf8_cut(text.data ? text.data : "", text.len, CB__SESSION_SAMPLE_PROMPT_MAX);
  json_t *p = json_stringn(text.data ? text.data : "", keep);
  if (p) /* text that is not UTF-8 cannot go into JSON: that sample has no prompt */
    json_array_append_new(list, json_pack("{s:I, s:s, s:I, s:o}", "index", (json_int_t)rec->index,
                                          "request_id", rec->request_id, "prompt_bytes",
                                          (json_int_t)text.len, "prompt", p));
  cb_buf_free(&text);
  return CB_OK;
}

cb_status cb__session_samples_json(const cb_workload *wl, const cb_schedule *schedule,
                           const cb_record_set *set, cb_buf *out, cb_error *err) {
  cb_record_samples pick;
  cb_record_set_samples(set, &pick);
  if (pick.first == SIZE_MAX) return CB_OK;
  const size_t pos[3] = {pick.first, pick.median, pick.slowest};
  json_t *list = json_array();
  cb_workload_prompt prompt;
  cb_workload_prompt_init(&prompt);
  cb_status st = CB_OK;
  for (size_t k = 0; k < 3 && st == CB_OK; k++) {
    if (pos[k] == SIZE_MAX || (k && pos[k] == pos[0]) || (k == 2 && pos[2] == pos[1])) continue;
    st = add_sample(wl, schedule, &set->items[pos[k]], &prompt, list, err);
  }
  cb_workload_prompt_free(&prompt);
  if (st == CB_OK) {
    json_t *doc = json_pack("{s:i, s:i, s:o}", "schema_version", 1, "prompt_bytes_max",
                            CB__SESSION_SAMPLE_PROMPT_MAX, "samples", list);
    char *s = json_dumps(doc, JSON_INDENT(2));
    cb_buf_append(out, s, strlen(s));
    cb_buf_append(out, "\n", 1);
    free(s);
    json_decref(doc);
  } else {
    json_decref(list);
  }
  return st;
}
