/*
 * live_sessions.c - the live source of `run --sessions` (live_sessions.h): which
 * turn of which session goes next and when, each with its conversation so far.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/live_sessions.h"

typedef enum { IDLE = 0, READY, IN_FLIGHT, DONE } slot_state;

typedef struct slot {
  slot_state state;
  size_t turn;        /* the next turn to send, or the one in flight */
  uint64_t due_ns;    /* READY: not before (the session's start, or reply end + think) */
  uint64_t index;     /* IN_FLIGHT: its request's index */
  cb_rng think_rng;   /* this session's think time draws */
  cb_buf messages;    /* "[user, assistant, ..." so far, without the closing bracket */
} slot;

struct cb_live_sessions {
  cb_live_sessions_params p;
  slot *slots;        /* one per conversation, by its index */
  size_t started;     /* sessions started (in file order) */
  size_t active;      /* started and not DONE */
  cb_arrival_gen gen; /* open loop: session starts */
  uint64_t next_start_ns;
  uint64_t next_index;
  size_t unsent;
  cb_buf body;        /* the messages handed out last */
  cb_session_record_fn user_record;
  void *user_ctx;
};

cb_status cb_live_sessions_new(const cb_live_sessions_params *p, cb_live_sessions **out,
                               cb_error *err) {
  *out = NULL;
  int closed = p->arrival.kind == CB_ARRIVAL_CLOSED;
  if (p->arrival.kind == CB_ARRIVAL_TRACE)
    return cb_error_set(err, CB_ERR_INVALID, "sessions: arrival: expected an open loop (--rate) "
                        "or users (--concurrency), not a trace's timestamps");
  if (closed && !p->users)
    return cb_error_set(err, CB_ERR_INVALID,
                        "sessions: a closed loop needs users (--concurrency >= 1)");
  cb_live_sessions *ls = cb_calloc(1, sizeof *ls);
  ls->p = *p;
  ls->slots = cb_calloc(p->convs->count, sizeof *ls->slots);
  for (size_t i = 0; i < p->convs->count; i++) {
    cb_rng_init_stream(&ls->slots[i].think_rng, p->seed, CB_LIVE_SESSIONS_STREAM, i);
    cb_buf_init(&ls->slots[i].messages, 0);
  }
  if (!closed) cb_arrival_gen_init(&ls->gen, &p->arrival, p->seed, CB_LIVE_SESSIONS_STREAM + 1, 0);
  if (!closed) ls->next_start_ns = 0; /* t_0 = 0: the first session starts at once */
  if (!closed) (void)cb_arrival_gen_next_s(&ls->gen);
  cb_buf_init(&ls->body, 0);
  *out = ls;
  return CB_OK;
}

/* Start the sessions whose time has come: an open loop's arrivals up to now, or a
 * closed loop's free users. */
static void start_due(cb_live_sessions *ls, uint64_t now) {
  size_t n = ls->p.convs->count;
  int closed = ls->p.arrival.kind == CB_ARRIVAL_CLOSED;
  while (ls->started < n && (closed ? ls->active < ls->p.users : ls->next_start_ns <= now)) {
    slot *s = &ls->slots[ls->started++];
    s->state = READY;
    s->due_ns = closed ? now : ls->next_start_ns;
    ls->active++;
    if (!closed) {
      double t = cb_arrival_gen_next_s(&ls->gen);
      ls->next_start_ns = t < 1.8e10 ? (uint64_t)(t * 1e9) : UINT64_MAX;
    }
  }
}

static void append_message(cb_buf *b, const char *role, const char *text, size_t len) {
  cb_buf_appendf(b, "%s{\"role\":\"%s\",\"content\":\"", b->len ? "," : "[", role);
  cb_buf_append_json_string(b, text, len);
  cb_buf_append_str(b, "\"}");
}

static int live_next(void *ctx, cb_session_live_request *out) {
  cb_live_sessions *ls = ctx;
  uint64_t now = out->now_ns;
  start_due(ls, now);
  slot *pick = NULL;
  uint64_t later = UINT64_MAX;
  int in_flight = 0;
  for (size_t i = 0; i < ls->started; i++) {
    slot *s = &ls->slots[i];
    if (s->state == IN_FLIGHT) in_flight = 1;
    if (s->state != READY) continue;
    if (s->due_ns > now) {
      if (s->due_ns < later) later = s->due_ns;
    } else if (!pick || s->due_ns < pick->due_ns) {
      pick = s;
    }
  }
  if (!pick) {
    int open = ls->p.arrival.kind != CB_ARRIVAL_CLOSED;
    if (open && ls->started < ls->p.convs->count && ls->next_start_ns < later)
      later = ls->next_start_ns;
    if (later != UINT64_MAX) {
      out->at_ns = later;
      return CB_SESSION_LIVE_LATER;
    }
    return in_flight ? CB_SESSION_LIVE_WAIT : 0;
  }
  size_t id = (size_t)(pick - ls->slots);
  const cb_conversation *conv = &ls->p.convs->items[id];
  const cb_conv_turn *t = &conv->turns[pick->turn];
  if (pick->turn == 0 && conv->system)
    append_message(&pick->messages, "system", conv->system, conv->system_len);
  append_message(&pick->messages, "user", t->content, t->content_len);
  cb_buf_reset(&ls->body);
  cb_buf_append(&ls->body, pick->messages.data, pick->messages.len);
  cb_buf_append_char(&ls->body, ']');
  pick->state = IN_FLIGHT;
  pick->index = ls->next_index++;
  *out = (cb_session_live_request){
      .index = pick->index, .messages_json = ls->body.data, .messages_json_len = ls->body.len,
      .max_tokens = t->max_tokens >= 0 ? t->max_tokens : ls->p.max_tokens, .now_ns = now,
      .at_ns = pick->due_ns, .has_session = 1, .session = id, .turn = (uint32_t)pick->turn};
  return 1;
}

static void end_session(cb_live_sessions *ls, slot *s, size_t unsent) {
  s->state = DONE;
  ls->unsent += unsent;
  ls->active--;
  cb_buf_free(&s->messages);
}

static void on_record(void *ctx, const cb_record *r) {
  cb_live_sessions *ls = ctx;
  if (r->has_session && r->session < ls->p.convs->count) {
    slot *s = &ls->slots[r->session];
    const cb_conversation *c = &ls->p.convs->items[r->session];
    if (s->state == IN_FLIGHT && s->index == r->index) {
      size_t next = s->turn + 1;
      if (!cb_record_ok(r) || next == c->n_turns) {
        end_session(ls, s, c->n_turns - next);
      } else {
        const char *text = r->output_text ? r->output_text : "";
        append_message(&s->messages, "assistant", text, strlen(text));
        const cb_conv_turn *t = &c->turns[next];
        uint64_t think = t->think_ns >= 0 ? (uint64_t)t->think_ns
                                          : cb_think_draw(&ls->p.think, &s->think_rng);
        s->turn = next;
        s->due_ns = r->end_ns + think;
        s->state = READY;
      }
    }
  }
  if (ls->user_record) ls->user_record(ls->user_ctx, r);
}

void cb_live_sessions_attach(cb_live_sessions *ls, cb_session_config *cfg) {
  ls->user_record = cfg->on_record;
  ls->user_ctx = cfg->record_ctx;
  cfg->live = live_next;
  cfg->live_ctx = ls;
  cfg->on_record = on_record;
  cfg->record_ctx = ls;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX;
}

size_t cb_live_sessions_turns_unsent(const cb_live_sessions *ls) {
  size_t n = ls->unsent;
  for (size_t i = 0; i < ls->p.convs->count; i++) {
    const slot *s = &ls->slots[i];
    if (s->state == READY || s->state == IDLE) n += ls->p.convs->items[i].n_turns - s->turn;
  }
  return n;
}

void cb_live_sessions_free(cb_live_sessions *ls) {
  if (!ls) return;
  for (size_t i = 0; i < ls->p.convs->count; i++) cb_buf_free(&ls->slots[i].messages);
  cb_free(ls->slots);
  cb_buf_free(&ls->body);
  cb_free(ls);
}
