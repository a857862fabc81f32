/*
 * cstat_results.c - what expect and cost read from a result directory: one throughput
 * figure of summary.json, and whether the run was measured or predicted (`sim run`).
 * The summary is read as the performance half reads it (cb__perf_summary_load).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cstat_internal.h"
#include "perf_internal.h"

cb_status cb__cstat_results_throughput(const char *dir, const char *metric, double *value,
                                       bool *predicted, long *measured_n, long *failed,
                                       cb_error *err) {
  cb__perf_summary s;
  cb_status st = cb__perf_summary_load(dir, &s, err);
  if (st != CB_OK) return st;
  json_t *tp = json_object_get(s.summary, "throughput");
  json_t *v = json_is_object(tp) ? json_object_get(tp, metric) : NULL;
  if (!json_is_object(tp))
    st = cb_error_at(err, CB_ERR_PARSE, s.path, 0, 0, "key 'summary.throughput' missing");
  else if (!v || json_is_null(v))
    st = cb_error_at(
        err, CB_ERR_INVALID, s.path, 0, 0, "key 'summary.throughput.%s' is %s%s", metric,
        v ? "null" : "missing",
        !strcmp(metric, "goodput_requests_per_s") ? " (goodput needs a run with --slo)" : "");
  else if (!json_is_number(v) || !(json_number_value(v) > 0.0))
    st = cb_error_at(err, CB_ERR_INVALID, s.path, 0, 0,
                     "key 'summary.throughput.%s': expected a positive number", metric);
  if (st == CB_OK) {
    *value = json_number_value(v);
    *predicted = s.predicted;
    if (measured_n) *measured_n = s.measured;
    if (failed) *failed = s.failed;
  }
  cb__perf_summary_free(&s);
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
