/*
 * conversations.h - multi-turn conversations for live sessions (`run --sessions`),
 * and the think time drawn between a reply and the next user turn.
 *
 * A sessions file is JSONL, one conversation per line (docs/workload.md):
 *   {"id": "c1", "system": "Be brief.", "turns": ["first user turn", {"content":
 *    "second", "max_tokens": 64, "think_time": "1.5s"}]}
 * Turns are the user's, in order; the model's real replies are threaded in between
 * when the session runs, after the system message if there is one. ShareGPT and chat:
 * datasets give sessions too (cb_conversations_load_sharegpt, cb_conversations_load_chat:
 * `--sharegpt-mode live`). A turn's think_time (the wait after the reply before it)
 * replaces the --think-time draw for that turn; the first turn has none.
 * Part of the workload module: no I/O beyond reading the file.
 */
#ifndef CALIBENCH_CONVERSATIONS_H
#define CALIBENCH_CONVERSATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"
#include "calibench/rng.h"
#include "calibench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_conv_turn {
  char *content;        /* the user's message (UTF-8) */
  size_t content_len;
  int64_t max_tokens;   /* < 0: the run's (--max-tokens or none) */
  int64_t think_ns;     /* < 0: drawn from --think-time; else this wait */
} cb_conv_turn;

typedef struct cb_conversation {
  char *id;             /* the line's "id", or "line N" */
  char *system;         /* the system message sent before the turns, or NULL */
  size_t system_len;
  cb_conv_turn *turns;
  size_t n_turns;
} cb_conversation;

typedef struct cb_conversations {
  cb_conversation *items;
  size_t count;
  char *source;         /* where they came from (the path) */
} cb_conversations;

/* Load a sessions file. Bad input: CB_ERR_PARSE "FILE:LINE: field 'x': expected ...". */
cb_status cb_conversations_load(const char *path, cb_conversations *out, cb_error *err);
/* Parse the file's text (name is the path in messages). */
cb_status cb_conversations_parse(const char *text, size_t len, const char *name,
                                 cb_conversations *out, cb_error *err);
void cb_conversations_free(cb_conversations *c);

/* A ShareGPT file (docs/workload.md, "sharegpt") as sessions, in file order: each
 * conversation's user turns; a turn's max_tokens is the recorded reply right after
 * it, counted by counter (NULL: the approximation; an empty reply 1), or
 * output_len_override when > 0; a user turn with no reply after it has none (the
 * run's). A system turn before the first user turn is the system message; other
 * system and assistant turns are not sent. Conversations without a user turn are
 * skipped (*skipped, may be NULL). Errors as the ShareGPT dataset's:
 * CB_ERR_PARSE "FILE:LINE: conversation N (id 'x'): field ...". */
cb_status cb_conversations_load_sharegpt(const char *path, const cb_token_counter *counter,
                                         uint32_t output_len_override, cb_conversations *out,
                                         size_t *skipped, cb_error *err);

/* A chat: dataset (OpenAI chat JSONL, docs/workload.md "chat") as sessions, one a line
 * in file order (id "line N"): the line's user messages are the turns; a system
 * message before the first user message is the system message; other messages are
 * not sent. A turn's max_tokens is the assistant message right after it, counted by
 * counter (NULL: the approximation; an empty one 1), or output_len_override when > 0;
 * the last user message without one takes the line's max_tokens (or
 * max_completion_tokens), other turns none (the run's). Sent contents must be
 * non-empty strings. Lines without a user message are skipped (*skipped, may be NULL).
 * Bad input: CB_ERR_PARSE "FILE:LINE: field 'messages[i]...': expected ...". */
cb_status cb_conversations_load_chat(const char *path, const cb_token_counter *counter,
                                     uint32_t output_len_override, cb_conversations *out,
                                     size_t *skipped, cb_error *err);

/* A think time distribution (--think-time): const:D, exp:MEAN, uniform:LO,HI or
 * lognormal:MEAN,SIGMA, durations as cb_duration_parse takes them (a bare number is
 * seconds); "0" or "none" for no think time. */
typedef enum {
  CB_THINK_CONST = 0,
  CB_THINK_EXP,
  CB_THINK_UNIFORM,
  CB_THINK_LOGNORMAL
} cb_think_kind;

typedef struct cb_think {
  cb_think_kind kind;
  uint64_t a_ns;  /* const: the time; exp, lognormal: the mean; uniform: the low end */
  uint64_t b_ns;  /* uniform: the high end */
  double sigma;   /* lognormal: the std of the log */
} cb_think;

/* CB_ERR_PARSE naming what was expected; the caller adds the flag. */
cb_status cb_think_parse(const char *s, cb_think *out, cb_error *err);
/* The canonical text, in seconds ("exp:2s", "uniform:0.5s,1.5s"). */
void cb_think_describe(const cb_think *t, char *buf, size_t size);
/* One draw in ns; consumes rng draws only for the random kinds. */
uint64_t cb_think_draw(const cb_think *t, cb_rng *rng);

#ifdef __cplusplus
}
#endif
#endif
