/*
 * dialog_live.c - `probe dialog`'s conversations sent live (dialog.h): a session's
 * live source (cfg.live) hands out each conversation's next turn once the answer to
 * the turn before is back, the messages carrying every earlier user turn and the
 * model's real replies; each answer (cfg.on_record) is held to its turn's checks.
 *
 * Conversation k is repetition k / S of scenario k % S (S scenarios), so every
 * scenario is under way early; turn t of conversation k is record index
 * k * stride + t, stride the longest scenario's turns. Conversations are started in
 * order and a conversation under way goes first, so the session's concurrency is
 * the number of conversations in flight. A failed request ends its conversation:
 * its later turns are not sent and it counts as failed, not as unsatisfied checks.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "calibench/utf8.h"
#include "probe/dialog_run.h"

static void conv_start(cb__probe_dialog_run *r, cb__probe_dialog_conv *c) {
  const cb__probe_dialog_scenario *sc = &r->suite->scenarios[c->scenario];
  cb_buf_init(&c->history, 0);
  cb_buf_append_char(&c->history, '[');
  if (sc->system) {
    cb_buf_append_str(&c->history, "{\"role\":\"system\",\"content\":\"");
    cb_buf_append_json_string(&c->history, sc->system, strlen(sc->system));
    cb_buf_append_str(&c->history, "\"}");
  }
}

static void append_message(cb_buf *b, const char *role, const char *text, size_t len) {
  if (b->len > 1) cb_buf_append_char(b, ',');
  cb_buf_appendf(b, "{\"role\":\"%s\",\"content\":\"", role);
  cb_buf_append_json_string(b, text, len);
  cb_buf_append_str(b, "\"}");
}

cb__probe_dialog_run *cb__probe_dialog_run_new(const cb__probe_dialog_suite *suite, const cb__probe_dialog_params *p) {
  cb__probe_dialog_run *r = cb_calloc(1, sizeof *r);
  r->suite = suite;
  r->p = *p;
  r->stride = suite->max_turns;
  r->n_convs = suite->n * p->repetitions;
  r->convs = cb_calloc(r->n_convs, sizeof *r->convs);
  cb_buf_init(&r->scratch, 0);
  cb_buf_init(&r->extra, 0);
  for (size_t k = 0; k < r->n_convs; k++) {
    cb__probe_dialog_conv *c = &r->convs[k];
    c->scenario = k % suite->n;
    c->rep = k / suite->n;
    const cb__probe_dialog_scenario *sc = &suite->scenarios[c->scenario];
    size_t checks = 0;
    for (size_t t = 0; t < sc->n_turns; t++) checks += sc->turns[t].n_checks;
    c->outcome = cb_malloc(checks ? checks : 1);
    memset(c->outcome, -1, checks ? checks : 1);
    c->turns = cb_calloc(sc->n_turns, sizeof *c->turns);
    for (size_t t = 0; t < sc->n_turns; t++) c->turns[t].ttft_ms = NAN;
    /* The request seed: per conversation, so repetitions differ and a rerun repeats. */
    c->seed = cb_hash3_u64(p->seed, c->scenario, c->rep) & UINT64_C(0x7fffffff);
  }
  return r;
}

void cb__probe_dialog_run_free(cb__probe_dialog_run *r) {
  if (!r) return;
  for (size_t k = 0; k < r->n_convs; k++) {
    cb_buf_free(&r->convs[k].history);
    cb_free(r->convs[k].outcome);
    cb_free(r->convs[k].turns);
  }
  for (size_t i = 0; i < r->n_failures; i++) cb_free(r->failures[i].answer);
  cb_free(r->convs);
  cb_buf_free(&r->scratch);
  cb_buf_free(&r->extra);
  cb_free(r);
}

/* The session's live source: the first conversation whose last answer is back. */
static int live_next(void *ctx, cb_session_live_request *out) {
  cb__probe_dialog_run *r = ctx;
  int waiting = 0;
  for (size_t k = 0; k < r->n_convs; k++) {
    cb__probe_dialog_conv *c = &r->convs[k];
    const cb__probe_dialog_scenario *sc = &r->suite->scenarios[c->scenario];
    if (c->failed || c->given == sc->n_turns) continue;
    if (c->answered < c->given) {
      waiting = 1;
      continue;
    }
    if (c->given == 0) conv_start(r, c);
    const cb__probe_dialog_turn *t = &sc->turns[c->given];
    cb_buf_reset(&r->scratch);
    cb_buf_append(&r->scratch, c->history.data, c->history.len);
    append_message(&r->scratch, "user", t->user, strlen(t->user));
    cb_buf_append_char(&r->scratch, ']');
    cb_buf_reset(&r->extra);
    if (r->p.send_seed) cb_buf_appendf(&r->extra, "{\"seed\":%llu}", (unsigned long long)c->seed);
    *out = (cb_session_live_request){.index = (uint64_t)(k * r->stride + c->given),
                                     .messages_json = r->scratch.data,
                                     .messages_json_len = r->scratch.len,
                                     .max_tokens = sc->max_tokens,
                                     .extra_json = r->extra.len ? r->extra.data : NULL,
                                     .extra_json_len = r->extra.len};
    c->given++;
    return 1;
  }
  return waiting ? CB_SESSION_LIVE_WAIT : 0;
}

static void keep_failure(cb__probe_dialog_run *r, size_t conv, size_t turn, size_t check,
                         const char *answer, size_t len) {
  r->n_failed_checks++;
  if (r->n_failures == CB__PROBE_DIALOG_FAILURES_KEPT) return;
  cb__probe_dialog_failure *f = &r->failures[r->n_failures++];
  *f = (cb__probe_dialog_failure){.conv = conv, .turn = turn, .check = check};
  /* model text: cut on a character boundary, controls and ill-formed bytes replaced */
  size_t n = cb_utf8_cut(answer, len, CB__PROBE_DIALOG_ANSWER_KEPT);
  cb_buf clean;
  cb_buf_init(&clean, 0);
  cb_utf8_clean(&clean, answer, n, 0);
  f->answer = cb_strndup(clean.data ? clean.data : "", clean.len);
  cb_buf_free(&clean);
  f->answer_cut = n < len;
}

/* Each answer: into the conversation, then against its turn's checks. */
static void on_record(void *ctx, const cb_record *rec) {
  cb__probe_dialog_run *r = ctx;
  size_t k = (size_t)(rec->index / r->stride), t = (size_t)(rec->index % r->stride);
  if (k >= r->n_convs) return;
  cb__probe_dialog_conv *c = &r->convs[k];
  const cb__probe_dialog_scenario *sc = &r->suite->scenarios[c->scenario];
  if (t >= sc->n_turns || t != c->answered) return; /* not a turn this run sent */
  c->answered++;
  if (!cb_record_ok(rec)) {
    c->failed = 1;
    return;
  }
  const cb__probe_dialog_turn *turn = &sc->turns[t];
  const char *answer = rec->output_text ? rec->output_text : "";
  size_t len = strlen(answer);
  append_message(&c->history, "user", turn->user, strlen(turn->user));
  append_message(&c->history, "assistant", answer, len);
  cb__probe_dialog_turn_result *tr = &c->turns[t];
  tr->answered = 1;
  tr->prompt_tokens = rec->prompt_tokens;
  if (rec->first_content_ns && rec->first_content_ns >= rec->sent_ns)
    tr->ttft_ms = cb_clock_span_ns(rec->sent_ns, rec->first_content_ns) / 1e6;
  tr->clarification = cb__probe_dialog_is_clarification(r->suite, answer, len);
  size_t base = 0;
  for (size_t u = 0; u < t; u++) base += sc->turns[u].n_checks;
  for (size_t i = 0; i < turn->n_checks; i++) {
    int ok = cb__probe_dialog_check_eval(&turn->checks[i], answer, len);
    c->outcome[base + i] = (int8_t)ok;
    if (!ok) keep_failure(r, k, t, i, answer, len);
  }
  if (c->answered == sc->n_turns) r->completed++;
}

void cb__probe_dialog_run_attach(cb__probe_dialog_run *r, cb_session_config *cfg) {
  cfg->live = live_next;
  cfg->live_ctx = r;
  cfg->on_record = on_record;
  cfg->record_ctx = r;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX; /* answers are checked and sent back whole */
}
