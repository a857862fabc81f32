/*
 * cstat_results.c - what expect and cost read from a result directory: one throughput
 * figure of summary.json, and whether the run was measured or predicted (`sim run`).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cstat_internal.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"

static bool is_predicted(json_t *o) { return o && json_is_true(json_object_get(o, "predicted")); }

cb_status cb__cstat_results_throughput(const char *dir, const char *metric, double *value,
                                       bool *predicted, long *measured_n, long *failed,
                                       cb_error *err) {
  char path[1100];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_t *root;
  cb_status st = cb_json_load_file(path, JSON_REJECT_DUPLICATES, CB_LIMIT_JSON_BYTES, &root, err);
  if (st != CB_OK) return st;
  json_t *ver = json_object_get(root, "schema_version");
  json_t *sum = json_object_get(root, "summary");
  json_t *tp = json_is_object(sum) ? json_object_get(sum, "throughput") : NULL;
  json_t *v = json_is_object(tp) ? json_object_get(tp, metric) : NULL;
  if (!json_is_integer(ver) || json_integer_value(ver) != 1)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "key 'schema_version': expected 1 (a calibench result summary)");
  else if (!json_is_object(tp))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "key 'summary.throughput' missing");
  else if (!v || json_is_null(v))
    st = cb_error_at(
        err, CB_ERR_INVALID, path, 0, 0, "key 'summary.throughput.%s' is %s%s", metric,
        v ? "null" : "missing",
        !strcmp(metric, "goodput_requests_per_s") ? " (goodput needs a run with --slo)" : "");
  else if (!json_is_number(v) || !(json_number_value(v) > 0.0))
    st = cb_error_at(err, CB_ERR_INVALID, path, 0, 0,
                     "key 'summary.throughput.%s': expected a positive number", metric);
  if (st == CB_OK) {
    *value = json_number_value(v);
    *predicted = is_predicted(sum);
    if (!*predicted) {
      char mpath[1100];
      snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
      json_t *man = NULL; /* a manifest that cannot be read only leaves 'predicted' unknown */
      cb_json_load_file(mpath, 0, CB_LIMIT_JSON_BYTES, &man, NULL);
      *predicted = is_predicted(man);
      json_decref(man);
    }
    json_t *m = json_object_get(sum, "measured"), *f = json_object_get(sum, "failed");
    if (measured_n) *measured_n = json_is_integer(m) ? (long)json_integer_value(m) : -1;
    if (failed) *failed = json_is_integer(f) ? (long)json_integer_value(f) : -1;
  }
  json_decref(root);
  return st;
}

void cb__cstat_resolve_path(const char *base_file, const char *rel, char *out, size_t n) {
  const char *slash = base_file ? strrchr(base_file, '/') : NULL;
  if (rel[0] == '/' || !slash) {
    snprintf(out, n, "%s", rel);
    return;
  }
  snprintf(out, n, "%.*s/%s", (int)(slash - base_file), base_file, rel);
}
