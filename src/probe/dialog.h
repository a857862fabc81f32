/*
 * dialog.h - `probe dialog` (docs/probe.md, "probe dialog"), internal to the probe
 * module: scenario files (dialog_scenario.c), the checks an answer is held to
 * (dialog_check.c), the conversations sent live through a session (dialog_live.c,
 * its state in dialog_run.h) and what they add up to (dialog_stats.c); the public
 * face is calibench/probe_dialog.h (dialog_probe.c).
 *
 * A scenario is a conversation: user turns in order, slots that turns set ("my
 * budget is 300 EUR" sets budget = 300), and checks per turn. A check that names a
 * slot is an implicit constraint: its expected value comes from an earlier turn, and
 * its recall depth is the number of turns between the turn that set the slot and
 * the turn whose answer needs it.
 */
#ifndef CALIBENCH_PROBE_DIALOG_INTERNAL_H
#define CALIBENCH_PROBE_DIALOG_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/results.h"
#include "calibench/session.h"

/* ---- scenarios (dialog_scenario.c) ------------------------------------------------- */

typedef enum {
  CB__PROBE_DIALOG_REGEX = 0,        /* the answer matches a regular expression (PCRE2) */
  CB__PROBE_DIALOG_JSON,             /* a JSON path into the answer's JSON exists / equals */
  CB__PROBE_DIALOG_MENTIONS,         /* the answer states the slot's value */
  CB__PROBE_DIALOG_NOT_CONTRADICTS,  /* no value of the slot's kind in the answer differs */
  CB__PROBE_DIALOG_CHECK_KINDS
} cb__probe_dialog_check_kind;

/* "regex", "json", "mentions", "not_contradicts" */
const char *cb__probe_dialog_check_kind_name(cb__probe_dialog_check_kind k);

typedef struct cb__probe_dialog_check {
  cb__probe_dialog_check_kind kind;
  long line;                   /* where the file states it */
  char *pattern;               /* regex: the expression */
  pcre2_code *re;              /* regex: compiled; not_contradicts: the slot's pattern */
  char *path;                  /* json: the path ("$.a.b[0]") */
  char *expected;              /* json: the value (given, or the slot's); mentions,
                                  not_contradicts: the slot's value; NULL: json path exists */
  int slot;                    /* the slot named, or -1 */
  int depth;                   /* turns since the slot was set; -1 without a slot */
} cb__probe_dialog_check;

typedef struct cb__probe_dialog_turn {
  char *user;                  /* the user message */
  long line;
  cb__probe_dialog_check *checks;
  size_t n_checks;
} cb__probe_dialog_turn;

typedef struct cb__probe_dialog_slot {
  char *name;
  char *pattern;               /* values of this kind in an answer (group 1, or the
                                  match); NULL: not_contradicts cannot name it */
  pcre2_code *re;
} cb__probe_dialog_slot;

typedef struct cb__probe_dialog_scenario {
  char *name;
  char *system;                /* system message, or NULL */
  int64_t max_tokens;          /* per answer */
  cb__probe_dialog_slot *slots;
  size_t n_slots;
  cb__probe_dialog_turn *turns;
  size_t n_turns;
} cb__probe_dialog_scenario;

typedef struct cb__probe_dialog_suite {
  char path[1024];
  cb__probe_dialog_scenario *scenarios;
  size_t n;
  pcre2_code **clarify;        /* patterns that mark a clarification question */
  size_t n_clarify;
  size_t max_turns;            /* over the scenarios */
} cb__probe_dialog_suite;

/* Load a scenario file (YAML: `scenarios:` and optional `clarification:`, docs/probe.md).
 * Errors "FILE:LINE: ...": a missing or unknown key, a check naming a slot no
 * earlier turn set, a regex that does not compile, not_contradicts on a slot
 * without a pattern. */
cb_status cb__probe_dialog_suite_load(const char *path, cb__probe_dialog_suite *out, cb_error *err);
void cb__probe_dialog_suite_free(cb__probe_dialog_suite *s);

/* ---- checks (dialog_check.c) ------------------------------------------------------- */

/* 1 when the answer satisfies the check. */
int cb__probe_dialog_check_eval(const cb__probe_dialog_check *c, const char *answer, size_t len);
/* 1 when the answer asks the user something back (a pattern matches and it holds a
 * question mark). */
int cb__probe_dialog_is_clarification(const cb__probe_dialog_suite *s, const char *answer, size_t len);
/* Compile a pattern the way every dialog pattern is (UTF, caseless when asked);
 * NULL with *why (an owned message) when it does not compile. */
pcre2_code *cb__probe_dialog_compile(const char *pattern, int caseless, char **why);
/* The answer's JSON: the whole text, a ```json fenced block, or the text from the
 * first '{' to the last '}'; NULL when none parses. */
json_t *cb__probe_dialog_answer_json(const char *answer, size_t len);

/* ---- a run (dialog_live.c, dialog_stats.c) --------------------------------------- */

typedef struct cb__probe_dialog_params {
  size_t repetitions;          /* conversations per scenario */
  uint64_t seed;               /* each conversation's request "seed" derives from it */
  int send_seed;               /* 1: send it (the simulator draws from it) */
  double level;                /* of the Wilson intervals (0.95) */
} cb__probe_dialog_params;

/* Every conversation's state and outcomes; driven by a session (cfg.live). */
typedef struct cb__probe_dialog_run cb__probe_dialog_run;

cb__probe_dialog_run *cb__probe_dialog_run_new(const cb__probe_dialog_suite *suite, const cb__probe_dialog_params *p);
void cb__probe_dialog_run_free(cb__probe_dialog_run *r);
/* Plug the run into a session configuration: cfg.live and cfg.on_record (and their
 * contexts), answers kept whole. */
void cb__probe_dialog_run_attach(cb__probe_dialog_run *r, cb_session_config *cfg);

/* Everything probe.json says of the run: "metrics" (satisfaction, by depth >= 3,
 * implicit constraints, clarification rate) and the dialog's own keys (docs/probe.md). */
json_t *cb__probe_dialog_run_json(const cb__probe_dialog_run *r);

#endif
