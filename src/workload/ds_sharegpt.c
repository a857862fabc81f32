/*
 * ds_sharegpt.c - ShareGPT JSON as a dataset of items: [{"id": ..., "conversations":
 * [{"from", "value"}, ...]}], read a conversation at a time by sharegpt_scan.c.
 *
 * First-turn mode (vLLM): the first user turn is the prompt and the reply right after
 * it gives the output length (its token count; an empty reply counts as 1);
 * conversations with fewer than 2 turns or no answered user turn are skipped, as
 * vLLM skips them (vLLM takes turns 0 and 1 whatever their roles; we take the first
 * user turn and its reply, which is the same on well-formed data).
 * Turns mode: one item per assistant reply that follows a user turn, sending every
 * earlier turn as chat messages.
 * Length filters (off by default; vLLM's are 4/4/1024/2048) drop items, counted in
 * cb_dataset_skipped with the skipped conversations.
 */
#include "workload_internal.h"

static int passes_filters(const cb_dataset_params *p, uint32_t in, uint32_t out) {
  if (in > CB_LIMIT_TOKENS || out > CB_LIMIT_TOKENS) return 0; /* docs/limits.md */
  if (p->min_prompt_len && in < p->min_prompt_len) return 0;
  if (p->min_output_len && out < p->min_output_len) return 0;
  if (p->max_prompt_len && in > p->max_prompt_len) return 0;
  if (p->max_total_len && (uint64_t)in + out > p->max_total_len) return 0;
  return 1;
}

static uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static void append_message(cb_dataset *ds, int role, const char *text, size_t len) {
  cb_buf *a = &ds->arena;
  cb_buf_appendf(a, "{\"role\":\"%s\",\"content\":\"", cb__sg_role_name[role]);
  cb_buf_append_json_string(a, text, len);
  cb_buf_append(a, "\"}", 2);
}

/* Items from one parsed conversation; 1 if it gave at least one item. */
static int add_items(cb_dataset *ds, const cb__sg_conv *c) {
  const cb__sg_turn *t = c->turns;
  size_t nt = c->n_turns;
  const cb_dataset_params *p = &ds->params;
  uint32_t override = p->output_len_override;
  int added = 0;
  if (nt < 2) return 0;
  if (p->sharegpt_mode == CB_SHAREGPT_FIRST_TURN) {
    size_t u = 0;
    while (u < nt && t[u].role != CB__SG_USER) u++;
    if (u + 1 >= nt || t[u + 1].role != CB__SG_ASSISTANT) return 0;
    uint32_t in = clamp32(t[u].tokens);
    uint32_t out = override ? override : clamp32(t[u + 1].tokens ? t[u + 1].tokens : 1);
    if (!passes_filters(p, in, out)) return 0;
    cb__item *it = cb__dataset_push_item(ds);
    it->text_off = cb__dataset_push_text(ds, t[u].text, t[u].len);
    it->text_len = (uint32_t)t[u].len;
    it->input_len = in;
    it->output_len = out;
    it->line = c->line;
    return 1;
  }
  /* Turns mode: the conversation's messages once, "[m0,m1,...", each item a prefix. */
  uint64_t conv_off = ds->arena.len;
  cb_buf_append(&ds->arena, "[", 1);
  size_t in_tokens = 0;
  for (size_t j = 0; j < nt; j++) {
    if (j > 0 && t[j].role == CB__SG_ASSISTANT && t[j - 1].role == CB__SG_USER) {
      uint32_t in = clamp32(in_tokens);
      uint32_t out = override ? override : clamp32(t[j].tokens ? t[j].tokens : 1);
      if (passes_filters(p, in, out)) {
        cb__item *it = cb__dataset_push_item(ds);
        it->text_off = conv_off;
        it->text_len = (uint32_t)(ds->arena.len - conv_off);
        it->is_messages = 2; /* append ']' when rendering */
        it->input_len = in;
        it->output_len = out;
        it->line = c->line;
        added = 1;
      }
    }
    if (j > 0) cb_buf_append(&ds->arena, ",", 1);
    append_message(ds, t[j].role, t[j].text, t[j].len);
    in_tokens += t[j].tokens;
  }
  if (!added) { /* nothing refers to it */
    ds->arena.len = conv_off;
    ds->arena.data[conv_off] = '\0';
  }
  return added;
}

static cb_status add_conversation(void *ctx, cb__sg_conv *c, cb_error *err) {
  (void)err;
  cb_dataset *ds = ctx;
  for (size_t j = 0; j < c->n_turns; j++)
    c->turns[j].tokens = cb__count(&ds->tm.counter, c->turns[j].text, c->turns[j].len);
  if (!add_items(ds, c)) ds->skipped++;
  return CB_OK;
}

cb_status cb__load_sharegpt(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  return cb__sharegpt_walk(ds->path, data, len, add_conversation, ds, err);
}
