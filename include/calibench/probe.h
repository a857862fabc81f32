/*
 * probe.h - `calibench probe`: black-box probes of a model behind an OpenAI-compatible
 * endpoint, each ending in a few numbers a team can gate on (docs/probe.md). A probe
 * builds its prompts, sends them through a session (session.h: the target, the
 * built-in simulator, concurrency, records.jsonl, summary.json, manifest.json), scores
 * each answer as cfg.on_record hands it over, and writes DIR/probe.json:
 *
 *   {"probe": "context", "version": 1,
 *    "metrics": {"accuracy_short": {"value": 0.97, "lo": 0.93, "hi": 0.99,
 *                                   "higher_is_better": true}, ...},
 *    ... the probe's own fields (context: "breakpoint_tokens", grids, curves)}
 *
 * `metrics` is what the registry keeps (store: probe.<probe>.<metric>), what gate
 * rules name and what the report's probe section heads with; lo/hi are the metric's
 * interval (null when it has none), higher_is_better its direction.
 *
 * One file per probe in src/probe/ (context_*.c, perturb_*.c, dialog_*.c, agent_*.c),
 * its public declarations in calibench/probe_<probe>.h; what they share (probe.json,
 * this header, probe_internal.h) has no probe prefix.
 */
#ifndef CALIBENCH_PROBE_H
#define CALIBENCH_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_PROBE_JSON_VERSION 1
#define CB_PROBE_JSON_NAME "probe.json"
/* Probe and metric names: [a-z0-9_] only (they become store metric names
 * probe.<probe>.<metric>, at most 47 bytes). */
#define CB_PROBE_NAME_MAX 24

/* A new probe.json document: {"probe": probe, "version": 1, "metrics": {}}. */
json_t *cb_probe_json_new(const char *probe);
/* Add metrics.<name> = {value, lo, hi, higher_is_better}; NAN lo/hi are written as
 * null. CB_ERR_INVALID when the name is not [a-z0-9_]+ or makes the store name too
 * long, or the value is not finite. */
cb_status cb_probe_json_metric(json_t *doc, const char *name, double value, double lo, double hi,
                               int higher_is_better, cb_error *err);
/* Write DIR/probe.json atomically (temporary file, fsync, rename). */
cb_status cb_probe_json_write(const char *dir, const json_t *doc, cb_error *err);
/*
 * Read DIR/probe.json and check its frame: "probe" a name, "version" 1, "metrics" an
 * object of {value (a finite number), lo, hi (numbers or null), higher_is_better (a
 * boolean)}. CB_ERR_NOT_FOUND when the directory has none; errors name the file and
 * the field. *doc gets the document (json_decref it).
 */
cb_status cb_probe_json_load(const char *dir, json_t **doc, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
