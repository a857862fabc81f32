/*
 * run_probe.c - the probe metrics of a result directory: `probe`'s probe.json
 * (docs/probe.md) gives probe.<probe>.<metric> = metrics.<metric>.value, each with the
 * direction its higher_is_better states. The frame is checked as the probe module's
 * reader checks it (calibrench/probe.h); the store reads the file itself, being below
 * the probes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "store_internal.h"

cb_status cb__run_probe_load(cb_run_data *r, const char *dir, cb_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/probe.json", dir);
  struct stat sb;
  if (stat(path, &sb)) return CB_OK; /* a run without a probe */
  json_t *doc;
  cb_status st = cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, &doc, err);
  if (st) return st;
  const char *probe = json_string_value(json_object_get(doc, "probe"));
  json_t *metrics = json_object_get(doc, "metrics");
  if (!probe || !json_is_object(metrics)) {
    json_decref(doc);
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                       "fields 'probe' and 'metrics': expected a name and an object (probe.json)");
  }
  const char *name;
  json_t *m;
  json_object_foreach(metrics, name, m) {
    char full[96];
    snprintf(full, sizeof full, "probe.%s.%s", probe, name);
    json_t *v = json_object_get(m, "value"), *hib = json_object_get(m, "higher_is_better");
    const cb_store_metric *cm =
        json_is_boolean(hib) ? cb_store_probe_metric(full, json_is_true(hib) ? CB_BETTER_HIGHER
                                                                             : CB_BETTER_LOWER)
                             : NULL;
    if (!cm || !json_is_number(v) || !isfinite(json_number_value(v))) {
      json_decref(doc);
      return cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                         "field 'metrics.%.60s': expected {value: a finite number, "
                         "higher_is_better: a boolean} named [a-z0-9_] (probe.%s.<metric> "
                         "within 47 bytes)", name, probe);
    }
    cb_run_data_add_value(r, "", cm, json_number_value(v));
  }
  json_decref(doc);
  return CB_OK;
}
