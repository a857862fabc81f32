/*
 * probe_dialog.h - `calibench probe dialog` (docs/probe.md, "probe dialog"):
 * multi-turn state and implicit constraints. Scenarios (a YAML file) are sent as
 * live conversations through a session, each turn with the model's real replies to
 * the turns before it, and every answer is held to its turn's checks:
 *
 *   cb_probe_dialog *pd;
 *   cb_probe_dialog_params p;
 *   cb_probe_dialog_params_init(&p);
 *   if (cb_probe_dialog_load("scenarios.yaml", &p, &pd, &err) != CB_OK) ... err.msg
 *   cb_probe_dialog_attach(pd, &cfg);    // cfg.live, cfg.on_record: the conversations
 *   ... cb_session_open(&cfg, ...), cb_session_run(...)   // one point
 *   cb_probe_dialog_write(pd, result.dir, &doc, &err);   // DIR/probe.json
 *   cb_probe_dialog_free(pd);
 *
 * probe.json's metrics: satisfaction (every check), implicit_satisfaction (checks
 * whose value an earlier turn set), satisfaction_depth_ge3, clarification_rate (lower
 * is better), each with its Wilson interval.
 */
#ifndef CALIBENCH_PROBE_DIALOG_H
#define CALIBENCH_PROBE_DIALOG_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "calibench/error.h"
#include "calibench/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_probe_dialog_params {
  size_t repetitions;  /* conversations per scenario (10) */
  uint64_t seed;       /* each conversation's request "seed" derives from it (1) */
  int send_seed;       /* send that "seed" with every request (1) */
  double level;        /* of the intervals (0.95) */
} cb_probe_dialog_params;

void cb_probe_dialog_params_init(cb_probe_dialog_params *p);

typedef struct cb_probe_dialog cb_probe_dialog;

/* Load the scenario file (errors "FILE:LINE: ...") and prepare the conversations. */
cb_status cb_probe_dialog_load(const char *path, const cb_probe_dialog_params *p,
                               cb_probe_dialog **out, cb_error *err);
/* Drive a session's one point with the conversations (cfg->live, cfg->on_record);
 * the probe must outlive the run. */
void cb_probe_dialog_attach(cb_probe_dialog *pd, cb_session_config *cfg);
/* Conversations planned (scenarios x repetitions) and the turns they hold. */
size_t cb_probe_dialog_conversations(const cb_probe_dialog *pd);
size_t cb_probe_dialog_turns(const cb_probe_dialog *pd);
/* After the run: DIR/probe.json; *doc (may be NULL) gets the document (json_decref). */
cb_status cb_probe_dialog_write(const cb_probe_dialog *pd, const char *dir, json_t **doc,
                                cb_error *err);
void cb_probe_dialog_free(cb_probe_dialog *pd);

#ifdef __cplusplus
}
#endif
#endif
