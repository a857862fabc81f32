/*
 * conversations_sharegpt.c - a ShareGPT file as live sessions (`--sharegpt-mode live`,
 * conversations.h, docs/workload.md "sharegpt"). Each conversation's user turns are
 * sent live in order; the recorded assistant replies are not sent (the model's own
 * replies take their place) but size the turns: the reply right after a user turn
 * gives that turn's max_tokens, its token count under the counter (an empty reply 1),
 * as the first-turn mode takes its output length.
 */
#include <stdio.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/conversations.h"
#include "calibench/limits.h"
#include "workload_internal.h"

typedef struct build {
  cb_conversations *out;
  size_t cap;
  cb_token_counter counter;
  uint32_t override;
  size_t skipped;
} build;

static int64_t reply_tokens(const build *b, const cb__sg_turn *reply) {
  if (b->override) return b->override;
  size_t n = cb__count(&b->counter, reply->text, reply->len);
  if (!n) n = 1; /* an empty reply asks for one token, as the dataset's modes */
  return n > CB_LIMIT_TOKENS ? (int64_t)CB_LIMIT_TOKENS : (int64_t)n;
}

static cb_status add_conversation(void *ctx, cb__sg_conv *c, cb_error *err) {
  (void)err;
  build *b = ctx;
  size_t users = 0;
  for (size_t j = 0; j < c->n_turns; j++) users += c->turns[j].role == CB__SG_USER;
  if (!users) { /* nothing to send */
    b->skipped++;
    return CB_OK;
  }
  if (b->out->count == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 16;
    b->out->items = cb_reallocarray(b->out->items, b->cap, sizeof *b->out->items);
  }
  cb_conversation *conv = &b->out->items[b->out->count++];
  *conv = (cb_conversation){.turns = cb_calloc(users, sizeof *conv->turns)};
  if (c->id) {
    conv->id = cb_strdup(c->id);
  } else {
    char fallback[48];
    snprintf(fallback, sizeof fallback, "conversation %zu", c->index);
    conv->id = cb_strdup(fallback);
  }
  for (size_t j = 0; j < c->n_turns; j++) {
    const cb__sg_turn *t = &c->turns[j];
    if (t->role == CB__SG_SYSTEM && !conv->n_turns && !conv->system) {
      /* the system prompt the conversation opens with; later ones are not sent */
      conv->system = cb_strndup(t->text, t->len);
      conv->system_len = t->len;
    }
    if (t->role != CB__SG_USER) continue;
    const cb__sg_turn *next = j + 1 < c->n_turns ? &c->turns[j + 1] : NULL;
    conv->turns[conv->n_turns++] = (cb_conv_turn){
        .content = cb_strndup(t->text, t->len), .content_len = t->len, .think_ns = -1,
        .max_tokens = next && next->role == CB__SG_ASSISTANT ? reply_tokens(b, next) : -1};
  }
  return CB_OK;
}

cb_status cb_conversations_load_sharegpt(const char *path, const cb_token_counter *counter,
                                         uint32_t output_len_override, cb_conversations *out,
                                         size_t *skipped, cb_error *err) {
  *out = (cb_conversations){.source = cb_strdup(path)};
  build b = {.out = out, .override = output_len_override};
  cb__counter_resolve(counter, &b.counter);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, 0, &text, err);
  if (st == CB_OK)
    st = cb__sharegpt_walk(path, text.data ? text.data : "", text.len, add_conversation, &b, err);
  cb_buf_free(&text);
  if (st == CB_OK && !out->count)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "no conversation with a user turn (%zu skipped)", b.skipped);
  if (st != CB_OK) cb_conversations_free(out);
  if (skipped) *skipped = st == CB_OK ? b.skipped : 0;
  return st;
}
