/*
 * conversations_chat.c - a chat: dataset (OpenAI chat JSONL, docs/workload.md "chat")
 * as live sessions (`--sharegpt-mode live` on a chat: dataset, conversations.h). Each
 * line's messages are one session: a system message before the first user message is
 * its system message, its user messages are the turns in order; recorded assistant
 * messages are not sent (the model's replies take their place) but size the turns: the
 * assistant message right after a user message gives its max_tokens (its text's token
 * count under the counter, an empty one 1), as the ShareGPT live mode does. The last
 * user message without a recorded reply asks for the line's max_tokens.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/conversations.h"
#include "calibench/limits.h"
#include "util/json_type.h"
#include "workload_internal.h"

static int role_is(const json_t *m, const char *role) {
  return !strcmp(json_string_value(json_object_get(m, "role")), role);
}

static int64_t reply_tokens(const cb_token_counter *counter, uint32_t override,
                            const json_t *reply) {
  if (override) return override;
  size_t n = cb__chat_content_tokens(counter, json_object_get(reply, "content"));
  if (!n) n = 1; /* an empty reply (or tool calls alone) asks for one token */
  return n > CB_LIMIT_TOKENS ? (int64_t)CB_LIMIT_TOKENS : (int64_t)n;
}

/* A sent message's text: live turns thread plain strings (live_sessions.c), so parts
 * (images, audio) cannot be sent and are refused rather than dropped. */
static cb_status sent_text(const char *path, uint32_t lineno, const json_t *msgs, size_t i,
                           cb_error *err) {
  const json_t *content = json_object_get(json_array_get(msgs, i), "content");
  if (json_is_string(content) && json_string_length(content)) return CB_OK;
  char got[80];
  cb__json_brief(content, got, sizeof got);
  return cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                     "field 'messages[%zu].content': expected a non-empty string (live sessions "
                     "send text turns), got %s",
                     i, got);
}

/* One line: its session, or *users 0 when it has no user message (skipped). */
static cb_status line_session(const char *path, json_t *o, uint32_t lineno,
                              const cb_token_counter *counter, uint32_t override,
                              cb_conversation *conv, size_t *users, cb_error *err) {
  json_t *msgs = json_object_get(o, "messages");
  uint32_t line_max = 0;
  cb_status st = cb__chat_check_messages(path, msgs, lineno, err);
  if (st == CB_OK) st = cb__chat_max_tokens(path, o, lineno, &line_max, err);
  if (st != CB_OK) return st;
  size_t n = json_array_size(msgs), last_user = 0;
  *users = 0;
  for (size_t i = 0; i < n; i++) {
    if (!role_is(json_array_get(msgs, i), "user")) continue;
    (*users)++;
    last_user = i;
  }
  if (!*users) return CB_OK;
  char id[32];
  snprintf(id, sizeof id, "line %u", lineno);
  *conv = (cb_conversation){.id = cb_strdup(id), .turns = cb_calloc(*users, sizeof *conv->turns)};
  for (size_t i = 0; i < n && st == CB_OK; i++) {
    const json_t *m = json_array_get(msgs, i);
    if (role_is(m, "system") && !conv->n_turns && !conv->system) {
      /* the system prompt the conversation opens with; later ones are not sent */
      if ((st = sent_text(path, lineno, msgs, i, err)) != CB_OK) break;
      const json_t *c = json_object_get(m, "content");
      conv->system_len = json_string_length(c);
      conv->system = cb_strndup(json_string_value(c), conv->system_len);
    }
    if (!role_is(m, "user")) continue;
    if ((st = sent_text(path, lineno, msgs, i, err)) != CB_OK) break;
    const json_t *c = json_object_get(m, "content"), *next = json_array_get(msgs, i + 1);
    int64_t max_tokens = -1; /* the run's --output-len */
    if (next && role_is(next, "assistant")) max_tokens = reply_tokens(counter, override, next);
    else if (i == last_user && (override || line_max)) max_tokens = override ? override : line_max;
    conv->turns[conv->n_turns++] = (cb_conv_turn){
        .content = cb_strndup(json_string_value(c), json_string_length(c)),
        .content_len = json_string_length(c), .think_ns = -1, .max_tokens = max_tokens};
  }
  return st;
}

cb_status cb_conversations_load_chat(const char *path, const cb_token_counter *counter,
                                     uint32_t output_len_override, cb_conversations *out,
                                     size_t *skipped, cb_error *err) {
  *out = (cb_conversations){.source = cb_strdup(path)};
  cb_token_counter resolved;
  cb__counter_resolve(counter, &resolved);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &text, err);
  size_t pos = 0, cap = 0, n, none = 0;
  const char *line;
  uint32_t lineno = 0;
  while (st == CB_OK && cb__next_line(text.data ? text.data : "", text.len, &pos, &line, &n)) {
    lineno++;
    if (cb__is_blank(line, n)) continue;
    json_error_t je;
    json_t *o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
      st = cb_error_at(err, CB_ERR_PARSE, path, lineno, je.column > 0 ? je.column : 0,
                       "invalid JSON: %s", je.text);
      break;
    }
    if (!json_is_object(o)) {
      st = cb_error_at(err, CB_ERR_PARSE, path, lineno, 0,
                       "expected a JSON object per line, got %s", cb__json_type_name(o));
    } else {
      if (out->count == cap) {
        cap = cap ? 2 * cap : 16;
        out->items = cb_reallocarray(out->items, cap, sizeof *out->items);
      }
      size_t users = 0;
      cb_conversation *conv = &out->items[out->count];
      *conv = (cb_conversation){0};
      st = line_session(path, o, lineno, &resolved, output_len_override, conv, &users, err);
      if (users) out->count++; /* kept on error too, so that free releases it */
      else none++;
    }
    json_decref(o);
  }
  cb_buf_free(&text);
  if (st == CB_OK && !out->count)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no line with a user message (%zu skipped)",
                     none);
  if (st != CB_OK) cb_conversations_free(out);
  if (skipped) *skipped = st == CB_OK ? none : 0;
  return st;
}
