/*
 * live_sessions.h - `run --sessions`: each conversation of a sessions file
 * (conversations.h) sent as a live multi-turn session through the session's live
 * hook (cfg.live, session.h). Turn k+1 is sent after the model's real reply to turn
 * k plus a think time, with the whole conversation so far (real replies) as chat
 * messages. Session starts follow the run's arrival process (an open loop: --rate
 * starts sessions, the first at 0), or `users` users each run one session after
 * another (a closed loop: --concurrency). Think times are drawn from the seed's
 * stream CB_LIVE_SESSIONS_STREAM, one stream per session (its index), one draw per
 * turn after the first, so they do not depend on timing. A turn that fails ends its
 * session (its later turns are not sent).
 */
#ifndef CALIBENCH_LIVE_SESSIONS_H
#define CALIBENCH_LIVE_SESSIONS_H

#include "calibench/conversations.h"
#include "calibench/session.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_LIVE_SESSIONS_STREAM UINT64_C(0x5e55)

typedef struct cb_live_sessions cb_live_sessions;

typedef struct cb_live_sessions_params {
  const cb_conversations *convs; /* borrowed; sessions run in file order */
  cb_think think;                /* between a reply and the next turn */
  uint64_t seed;
  cb_arrival_params arrival;     /* kind CB_ARRIVAL_CLOSED: `users` users */
  uint32_t users;
  int64_t max_tokens;            /* a turn's without its own; < 0: none */
} cb_live_sessions_params;

/* CB_ERR_INVALID for an arrival the sessions cannot follow (trace). */
cb_status cb_live_sessions_new(const cb_live_sessions_params *p, cb_live_sessions **out,
                               cb_error *err);
/* Set cfg->live, live_ctx, on_record, record_ctx and max_output_text (the replies
 * are sent back whole). A caller's own on_record is called after the session's. */
void cb_live_sessions_attach(cb_live_sessions *ls, cb_session_config *cfg);
/* Turns not sent because a turn before them failed (or the run stopped). */
size_t cb_live_sessions_turns_unsent(const cb_live_sessions *ls);
void cb_live_sessions_free(cb_live_sessions *ls);

#ifdef __cplusplus
}
#endif
#endif
